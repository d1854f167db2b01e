//! Progress of a running phase: its stop conditions and how far it is
//! towards them, the tally of what it has issued, and the reports that
//! tally triggers now and then (time-series rows, progress callbacks,
//! periodic snapshots, interruption).

use super::recorder::Recorder;
use super::{Every, Simulator};
use crate::config::{Interval, PhaseConfig};
use crate::host::workload::{Op, Request};
use crate::stats::{Counters, Latency};
use crate::{SimError, WearOut};
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// How far a running phase has got, for progress bars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// 0..1 of the phase's stop condition (of the spare flash lost to wear
    /// for a run until death).
    pub fraction: f64,
    pub sim_seconds: f64,
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub requests: u64,
    /// Share of the native rated endurance used, averaged over blocks.
    pub wear_used: f64,
    /// Share of the spare flash lost to wear (the drive dies at 1).
    pub reserve_used: f64,
}

/// Called about every `PROGRESS_EVERY` of wall time; returning false aborts the phase.
pub type ProgressFn<'a> = &'a mut dyn FnMut(&Progress) -> bool;

pub(super) const PROGRESS_EVERY: f64 = 0.2;
/// When a phase stops issuing requests.
#[derive(Serialize, Deserialize)]
pub(super) struct Stop {
    pub(super) bytes: Option<u64>,
    pub(super) requests: Option<u64>,
    pub(super) until: Option<u64>,
}

impl Stop {
    /// The stop conditions of `p`, starting at `start`.
    pub(super) fn of(p: &PhaseConfig, start: u64, user_bytes: u64) -> Stop {
        Stop {
            bytes: p.volume.map(|v| v.bytes(user_bytes)),
            requests: p.requests,
            until: p.duration_ns.map(|d| start + d),
        }
    }

    pub(super) fn is_none(&self) -> bool {
        self.bytes.is_none() && self.requests.is_none() && self.until.is_none()
    }

    /// Bytes the byte stop leaves after `issued` (None: the phase has none).
    #[inline]
    pub(super) fn left(&self, issued: u64) -> Option<u64> {
        self.bytes.map(|b| b.saturating_sub(issued))
    }

    pub(super) fn reached(&self, t: u64, bytes: u64, requests: u64) -> bool {
        self.bytes.is_some_and(|b| bytes >= b)
            || self.requests.is_some_and(|r| requests >= r)
            || self.until.is_some_and(|u| t >= u)
    }

    pub(super) fn fraction(&self, start: u64, t: u64, bytes: u64, requests: u64) -> f64 {
        let mut f: f64 = 0.0;
        if let Some(b) = self.bytes {
            f = f.max(bytes as f64 / b as f64);
        }
        if let Some(r) = self.requests {
            f = f.max(requests as f64 / r as f64);
        }
        if let Some(u) = self.until {
            f = f.max((t - start) as f64 / (u - start).max(1) as f64);
        }
        f.min(1.0)
    }
}

/// What an io phase has issued so far, and where its results go.
pub(super) struct Tally<'a> {
    pub(super) start: u64,
    pub(super) stop: Stop,
    pub(super) until_dead: bool,
    pub(super) issued: u64,
    pub(super) issued_bytes: u64,
    /// The latest completion.
    pub(super) end: u64,
    pub(super) last_report: Instant,
    pub(super) run_start: Counters,
    /// Progress of a phase stopped only by its jobs' stop conditions.
    pub(super) jobs_fraction: f64,
    pub(super) rec: &'a mut Recorder,
    pub(super) reads: &'a mut Latency,
    pub(super) writes: &'a mut Latency,
    /// Where the next periodic snapshot is due, if this phase takes them.
    pub(super) snapshot_due: Option<(Every, u64)>,
    /// Whether the phase can pause for a snapshot (a config phase of a run with a snapshot plan).
    pub(super) can_pause: bool,
    /// Set when the request loop should stop at its next sync point.
    pub(super) pause: bool,
}

impl Tally<'_> {
    pub(super) fn over(&self, t: u64) -> bool {
        self.stop.reached(t, self.issued_bytes, self.issued)
    }
}

impl Simulator {
    /// Counts a request issued at `t` and done at `done`: latencies, then
    /// (now and then) time-series rows and progress reports.
    #[inline]
    pub(super) fn tally(
        &mut self,
        tally: &mut Tally,
        req: &Request,
        t: u64,
        done: u64,
        progress: ProgressFn,
    ) -> Result<(), SimError> {
        let lat = done - t;
        match req.op {
            Op::Read => {
                tally.reads.record(lat);
                tally.rec.reads.record(lat);
            }
            Op::Write => {
                tally.writes.record(lat);
                tally.rec.writes.record(lat);
            }
            Op::Trim => {}
        }
        tally.issued += 1;
        tally.issued_bytes += req.len as u64;
        tally.end = tally.end.max(done);
        let position = tally
            .rec
            .position(t - tally.start, tally.issued_bytes, tally.issued);
        if position >= tally.rec.next_mark || tally.issued & 0x3FF == 0 {
            return self.report(tally, t, progress);
        }
        Ok(())
    }

    /// A time-series row if one is due, a progress report if one is due.
    #[cold]
    #[inline(never)]
    pub(super) fn report(
        &mut self,
        tally: &mut Tally,
        t: u64,
        progress: ProgressFn,
    ) -> Result<(), SimError> {
        let elapsed = t - tally.start;
        let rec = &mut *tally.rec;
        let position = rec.position(elapsed, tally.issued_bytes, tally.issued);
        if position >= rec.next_mark {
            let step = match rec.interval {
                Interval::Time(x) | Interval::Bytes(x) | Interval::Requests(x) => x,
            }
            .max(1);
            // The first mark past the position, in one step (a loop of steps
            // took hours on a state whose mark lay far behind).
            let behind = (position - rec.next_mark) / step + 1;
            rec.next_mark = rec.next_mark.saturating_add(behind.saturating_mul(step));
            let c = self.drive.counters();
            rec.row(t, c, &tally.run_start, &self.drive);
            // A drive run until it dies also dies of its bit errors.
            if let (true, Some(uber), Some(e)) = (
                tally.until_dead,
                rec.interval_uber,
                self.cfg.device.errors.as_ref(),
            ) {
                if uber > e.uber_target {
                    return Err(WearOut::Uncorrectable {
                        uber,
                        target: e.uber_target,
                    }
                    .into());
                }
            }
        }
        if tally.issued & 0x3FF == 0 {
            if let Some((every, due)) = tally.snapshot_due {
                // Simulated time reached: the latest completion (a trace's burst
                // of requests at one instant takes the drive a while).
                let at = every.position(t.max(tally.end), &self.drive.counters());
                if at >= due {
                    tally.pause = true;
                    self.next_snapshot = every.next_after(at);
                    tally.snapshot_due = Some((every, self.next_snapshot));
                }
            }
            if self.interrupt.load(Ordering::Relaxed) {
                if !tally.can_pause {
                    self.interrupt.store(false, Ordering::Relaxed);
                    return Err(SimError::Aborted);
                }
                tally.pause = true;
            }
        }
        if tally.issued & 0x3FF == 0 && tally.last_report.elapsed().as_secs_f64() > PROGRESS_EVERY {
            tally.last_report = Instant::now();
            let c = self.drive.counters();
            let reserve_used = self.drive.reserve_used();
            let pr = Progress {
                fraction: if tally.until_dead {
                    self.drive.life_used()
                } else if tally.stop.is_none() {
                    tally.jobs_fraction
                } else {
                    tally
                        .stop
                        .fraction(tally.start, t, tally.issued_bytes, tally.issued)
                },
                sim_seconds: t as f64 / 1e9,
                host_write_bytes: c.host_write_bytes,
                host_read_bytes: c.host_read_bytes,
                requests: tally.issued,
                wear_used: self.drive.wear_used(),
                reserve_used,
            };
            if !progress(&pr) {
                return Err(SimError::Aborted);
            }
        }
        Ok(())
    }
}
