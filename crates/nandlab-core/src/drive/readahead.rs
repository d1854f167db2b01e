//! Read-ahead for detected sequential reads: when a read starts where the
//! previous one ended, the controller reads the next `[ftl] read_ahead` bytes
//! from flash into RAM while the host is still busy with this one. A later
//! read wholly inside that window costs only the host transfer (once the
//! flash reads have landed); a write or TRIM into the window drops it.

use crate::sanity::{ensure, Checked};
use serde::{Deserialize, Serialize};
/// The read-ahead window: units `[start, end)` in controller RAM, each from
/// its own time (`ready`, a ring indexed by unit).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadAhead {
    /// Units to read ahead.
    pub window: u64,
    /// Where a sequential stream's next read would start.
    next: u64,
    start: u64,
    end: u64,
    ready: Vec<u64>,
}

impl ReadAhead {
    pub fn new(window_units: u64) -> ReadAhead {
        ReadAhead {
            window: window_units,
            next: u64::MAX,
            start: 0,
            end: 0,
            ready: vec![0; window_units as usize],
        }
    }

    /// Checks this (loaded) window against `fresh`, one its config builds.
    pub fn check_loaded(&self, fresh: &ReadAhead) -> Checked {
        ensure(
            self.window == fresh.window
                && self.ready.len() == fresh.ready.len()
                && self.start <= self.end,
            || "the read-ahead window differs from its config's".into(),
        )
    }

    /// Whether units `first..=last` are all in the window.
    #[inline]
    pub fn covers(&self, first: u64, last: u64) -> bool {
        first >= self.start && last < self.end
    }

    /// When unit `u` of the window is in RAM.
    #[inline]
    pub fn ready(&self, u: u64) -> u64 {
        self.ready[(u % self.window) as usize]
    }

    /// Notes a read of `first..=last`. For a sequential one whose window has
    /// less than half of itself left ahead, returns the units to read ahead.
    pub fn after_read(&mut self, first: u64, last: u64) -> Option<(u64, u64)> {
        let sequential = first == self.next;
        self.next = last + 1;
        // Units of this stream already in the window beyond this read (a
        // window left by another stream elsewhere counts for nothing).
        let ahead = if (self.start..self.end).contains(&(last + 1)) {
            self.end - (last + 1)
        } else {
            0
        };
        if !sequential || ahead >= self.window / 2 {
            return None;
        }
        let from = last + 1 + ahead;
        let to = last + 1 + self.window;
        (from < to).then_some((from, to))
    }

    /// The window now holds `from..to` (extending it if contiguous, keeping
    /// at most `window` units); `ready_of(u)` says when unit `u` is in RAM.
    pub fn fill(&mut self, from: u64, to: u64, ready_of: impl Fn(u64) -> u64) {
        if from != self.end || self.start >= self.end {
            self.start = from;
        }
        self.end = to;
        self.start = self.start.max(to.saturating_sub(self.window));
        for u in from..to {
            self.ready[(u % self.window) as usize] = ready_of(u);
        }
    }

    /// A write or TRIM of `first..=last`: overlapping data in the window is stale.
    #[inline]
    pub fn invalidate(&mut self, first: u64, last: u64) {
        if first < self.end && last >= self.start {
            self.start = 0;
            self.end = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ReadAhead;

    #[test]
    fn only_sequential_streams_read_ahead() {
        let mut ra = ReadAhead::new(8);
        assert_eq!(ra.after_read(10, 11), None);
        assert_eq!(ra.after_read(12, 13), Some((14, 22)));
        ra.fill(14, 22, |u| 100 * u);
        assert!(ra.covers(14, 15) && ra.ready(15) == 1500);
        assert!(!ra.covers(20, 22));
        // Half a window or more still ahead: nothing more to read yet.
        assert_eq!(ra.after_read(14, 15), None);
        assert_eq!(ra.after_read(16, 17), None);
        assert_eq!(ra.after_read(18, 19), Some((22, 28)));
        ra.fill(22, 28, |_| 7);
        assert!(ra.covers(20, 23) && ra.ready(21) == 2100 && ra.ready(23) == 7);
        // RAM holds the last 8 units read ahead.
        assert!(!ra.covers(19, 20));
        ra.invalidate(30, 40);
        assert!(ra.covers(20, 23));
        ra.invalidate(23, 23);
        assert!(!ra.covers(20, 21));
        assert_eq!(ra.after_read(100, 100), None);
        // A new stream behind the old window reads ahead of itself.
        assert_eq!(ra.after_read(101, 101), Some((102, 110)));
    }
}
