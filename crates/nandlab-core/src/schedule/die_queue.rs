//! One die's time: the operations booked on it, and how a host read gets
//! ahead of them as real firmware schedules it.
//!
//! Without read priority a die is a single "free at" time: everything runs
//! in booking order. With it, the die keeps what is booked behind the
//! operation in progress, split the way firmware holds it:
//!
//! - the first `depth` waiting operations are *issued* (in the die's command
//!   queue). A host read overtakes each of them, but only until reads have
//!   pushed it back by [`READ_PUSH_LIMIT_NS`] in all since it was issued;
//!   then it can no longer be overtaken (no write starves);
//! - the operations behind them are still in the write buffer or GC's plan:
//!   reads overtake them freely (firmware issues reads first).
//!
//! So a host read waits for the operation in progress and the issued ones
//! past their limit, never for the backlog. With `[device] suspend`, a read
//! arriving during a program or erase suspends it (at most `max_suspends`
//! times per operation): it waits the suspend latency, is served, and the
//! operation resumes after it with the resume overhead.
//!
//! Waiting operations are stored minus `delay` (how far reads have pushed
//! the backlog back), in wrapping arithmetic. Completion times already
//! handed out for them are not revised: an approximation that favours
//! writes by at most the reads' share of die time.
//!
//! The waiting operations are a [`Backlog`]: each keeps its exact interval,
//! in memory that stays small however far ahead the die is booked.

use crate::config::{Suspend, SuspendOps};
use crate::sanity::{ensure, Checked};
use serde::{Deserialize, Serialize};

pub use super::backlog::OpKind;
use super::backlog::{Backlog, Waiting, NOT_ISSUED};

/// How far host reads may push an issued operation back, in all, before
/// it can no longer be overtaken.
pub const READ_PUSH_LIMIT_NS: u64 = 2_000_000;

impl OpKind {
    fn suspendable(self, ops: SuspendOps) -> bool {
        matches!(
            (self, ops),
            (OpKind::Erase, SuspendOps::Erase | SuspendOps::ProgramErase)
                | (OpKind::Program, SuspendOps::ProgramErase)
        )
    }
}

/// The last operation reads cannot overtake (absolute times): the one in
/// progress, or the last issued one past its limit.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Fixed {
    start: u64,
    end: u64,
    kind: OpKind,
    /// Times it was suspended, and when the reads served during its current
    /// suspension end (0: not suspended now).
    suspends: u32,
    reads_end: u64,
}

impl Fixed {
    fn new(start: u64, end: u64, kind: OpKind) -> Fixed {
        Fixed {
            start,
            end,
            kind,
            suspends: 0,
            reads_end: 0,
        }
    }
}

/// What [`Die::read_start`] found: where the read goes.
#[derive(Debug, Clone, Copy)]
pub struct ReadSlot {
    pub start: u64,
    /// Some(t): the read, arriving at `t`, suspends the operation running
    /// (or joins a suspension already serving reads).
    suspends: Option<u64>,
}

/// Operations booked on a die behind the one in progress (read priority).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Queue {
    waiting: Backlog,
    /// How many of the first waiting operations are issued.
    issued: usize,
    delay: u64,
    /// Reads cannot start before this: the end of `fixed`.
    fixed: Fixed,
}

/// One die: when it is free, and — with read priority — its queue.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Die {
    pub free: u64,
    queue: Option<Box<Queue>>,
}

impl Die {
    pub fn new(read_priority: bool) -> Die {
        Die {
            free: 0,
            queue: read_priority.then(|| {
                Box::new(Queue {
                    waiting: Backlog::default(),
                    issued: 0,
                    delay: 0,
                    fixed: Fixed::new(0, 0, OpKind::Read),
                })
            }),
        }
    }

    /// A fresh die like this one, idle from `t` (power came back).
    pub fn restarted(&self, t: u64) -> Die {
        let mut d = Die::new(self.queue.is_some());
        d.free = t;
        d
    }

    pub fn has_priority(&self) -> bool {
        self.queue.is_some()
    }

    /// Checks a die read back from a snapshot: its bookkeeping adds up.
    pub fn check_loaded(&self) -> Checked {
        ensure(
            self.queue
                .as_ref()
                .is_none_or(|q| q.issued <= q.waiting.len() && q.fixed.end <= self.free),
            || "a die's booking queue is out of order".into(),
        )
    }

    /// Books [start, end) behind everything already booked, at time `now`.
    #[inline]
    pub fn book(&mut self, now: u64, start: u64, end: u64, kind: OpKind) {
        self.free = end;
        if let Some(q) = &mut self.queue {
            while q
                .waiting
                .front()
                .is_some_and(|w| w.end.wrapping_add(q.delay) <= now)
            {
                q.waiting.pop_front();
                q.issued = q.issued.saturating_sub(1);
            }
            let (start, end) = (start.wrapping_sub(q.delay), end.wrapping_sub(q.delay));
            q.waiting.push_back(Waiting {
                start,
                end,
                issued: NOT_ISSUED,
                kind,
            });
        }
    }

    /// Where a host read arriving at `t` can start: after everything booked
    /// (no read priority), or after the operations it cannot overtake — or,
    /// suspending the one in progress, after the suspend latency.
    #[inline]
    pub fn read_start(&mut self, t: u64, depth: usize, suspend: &Suspend) -> ReadSlot {
        let Some(q) = &mut self.queue else {
            return ReadSlot {
                start: t.max(self.free),
                suspends: None,
            };
        };
        // Started by `t`: in progress or done, no longer overtaken.
        while let Some(w) = q.waiting.front() {
            let start = w.start.wrapping_add(q.delay);
            if start > t {
                break;
            }
            q.fixed = Fixed::new(start, w.end.wrapping_add(q.delay), w.kind);
            q.waiting.pop_front();
            q.issued = q.issued.saturating_sub(1);
        }
        // Issued ones past their limit are no longer overtaken either.
        loop {
            while q.issued < depth.min(q.waiting.len()) {
                q.waiting.get_mut(q.issued).issued = q.delay;
                q.issued += 1;
            }
            match q.waiting.front() {
                Some(w) if q.delay - w.issued >= READ_PUSH_LIMIT_NS => {
                    q.fixed = Fixed::new(
                        w.start.wrapping_add(q.delay),
                        w.end.wrapping_add(q.delay),
                        w.kind,
                    );
                    q.waiting.pop_front();
                    q.issued -= 1;
                }
                _ => break,
            }
        }
        let f = &q.fixed;
        if f.start <= t && t < f.end && f.kind.suspendable(suspend.ops) {
            if t < f.reads_end {
                // Suspended already: served after the reads before it.
                return ReadSlot {
                    start: f.reads_end,
                    suspends: Some(t),
                };
            }
            if f.suspends < suspend.max_per_op {
                return ReadSlot {
                    start: t + suspend.latency_ns,
                    suspends: Some(t),
                };
            }
        }
        ReadSlot {
            start: t.max(f.end),
            suspends: None,
        }
    }

    /// Inserts a host read at [slot.start, end): the operations it overtakes
    /// move back by its length (and a suspended one by the suspension's).
    #[inline]
    pub fn insert_read(&mut self, slot: ReadSlot, end: u64, suspend: &Suspend) {
        let Some(q) = &mut self.queue else {
            self.free = self.free.max(end);
            return;
        };
        let f = &mut q.fixed;
        match slot.suspends {
            Some(t) => {
                // A new suspension costs its latency and the resume; a read
                // joining one already serving reads only its own length.
                let extra = if t < f.reads_end {
                    end - f.reads_end
                } else {
                    f.suspends += 1;
                    end - t + suspend.resume_ns
                };
                f.end += extra;
                f.reads_end = end;
                q.delay += extra;
                self.free += extra;
            }
            None if !q.waiting.is_empty() && slot.start < self.free => {
                // Ahead of the waiting operations.
                let len = end - slot.start;
                q.delay += len;
                self.free += len;
                q.fixed = Fixed::new(slot.start, end, OpKind::Read);
            }
            None => {
                self.free = self.free.max(end);
                q.fixed = Fixed::new(slot.start, end, OpKind::Read);
            }
        }
    }

    /// Operations booked behind the one in progress at `t`, in ns of die
    /// time (the backlog the firmware holds for this die).
    pub fn backlog_ns(&self, t: u64) -> u64 {
        self.free.saturating_sub(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_SUSPEND: Suspend = Suspend::NONE;

    fn read(die: &mut Die, t: u64, len: u64, depth: usize, s: &Suspend) -> u64 {
        let slot = die.read_start(t, depth, s);
        die.insert_read(slot, slot.start + len, s);
        slot.start
    }

    #[test]
    fn reads_overtake_the_backlog_but_issued_operations_only_up_to_the_limit() {
        let mut die = Die::new(true);
        // A program in progress [0, 1 ms), then a backlog of 100 programs.
        for i in 0..101 {
            die.book(0, i * 1_000_000, (i + 1) * 1_000_000, OpKind::Program);
        }
        let len = 80_000;
        let jumped = READ_PUSH_LIMIT_NS / len;
        let mut starts = Vec::new();
        for t in 10..10 + jumped + 1 {
            starts.push(read(&mut die, t, len, 2, &NO_SUSPEND));
        }
        // The first reads go one after another behind the program in progress.
        for (i, &s) in starts[..jumped as usize].iter().enumerate() {
            assert_eq!(s, 1_000_000 + i as u64 * len);
        }
        // Then the two issued programs have been pushed back by the limit:
        // the next read waits for them — and only them, not the 98 behind.
        let issued_end = 3_000_000 + jumped * len;
        assert_eq!(starts[jumped as usize], issued_end);
        // The next read is ahead of the rest again (freshly issued, pushable).
        assert_eq!(read(&mut die, 20, len, 2, &NO_SUSPEND), issued_end + len);
    }

    #[test]
    fn a_backlog_of_hours_keeps_every_operation_and_reads_still_overtake_it() {
        let mut die = Die::new(true);
        // 1 million 500 µs programs booked at once: 500 s of die time.
        let op = 500_000;
        let n = 1_000_000u64;
        for i in 0..n {
            die.book(0, i * op, (i + 1) * op, OpKind::Program);
        }
        assert_eq!(die.free, n * op);
        // A read behind the first program still overtakes the rest.
        assert_eq!(read(&mut die, 10, 50_000, 2, &NO_SUSPEND), op);
        // One arriving deep in the backlog waits for the program in progress
        // there, not for a span of them.
        let t = 700_000 * op + op / 3;
        assert_eq!(
            read(&mut die, t, 50_000, 2, &NO_SUSPEND),
            700_001 * op + 50_000
        );
    }

    #[test]
    fn without_priority_a_read_waits_for_everything_booked() {
        let mut die = Die::new(false);
        die.book(0, 0, 3_000_000, OpKind::Erase);
        die.book(0, 3_000_000, 4_000_000, OpKind::Program);
        assert_eq!(read(&mut die, 10, 50_000, 4, &NO_SUSPEND), 4_000_000);
    }

    #[test]
    fn a_suspended_erase_serves_reads_then_resumes() {
        let s = Suspend {
            ops: SuspendOps::Erase,
            latency_ns: 20_000,
            resume_ns: 10_000,
            max_per_op: 2,
        };
        let mut die = Die::new(true);
        die.book(0, 0, 3_000_000, OpKind::Erase);
        die.book(0, 3_000_000, 4_000_000, OpKind::Program);
        let len = 60_000;
        // Suspends at 1 ms: starts after the suspend latency.
        assert_eq!(read(&mut die, 1_000_000, len, 4, &s), 1_020_000);
        // Another read during the suspension goes right after the first.
        assert_eq!(read(&mut die, 1_030_000, len, 4, &s), 1_080_000);
        // The erase resumes and ends late by both reads, the latency and the resume.
        let erase_end = 3_000_000 + 20_000 + 2 * len + 10_000;
        // A second suspension is allowed, a third is not: that read waits the erase out.
        assert_eq!(read(&mut die, 2_000_000, len, 4, &s), 2_020_000);
        let erase_end = erase_end + 20_000 + len + 10_000;
        assert_eq!(read(&mut die, 2_500_000, len, 4, &s), erase_end);
        // A program is not suspended with suspend = "erase".
        let mut die = Die::new(true);
        die.book(0, 0, 1_000_000, OpKind::Program);
        assert_eq!(read(&mut die, 500_000, len, 4, &s), 1_000_000);
    }
}
