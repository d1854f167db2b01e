//! The engine every command goes through, one at a time: the simulated
//! drive's served phase (when the command completes) and the data store
//! (what it reads back), with NBD's rules for requests out of bounds, FUA
//! writes, TRIM and WRITE_ZEROES; and power cuts, after which the store is
//! put back to what the simulated drive kept.

use crate::crash::{CrashLog, Reverted};
use crate::proto;
use crate::server::Timing;
use crate::store::{Store, StoreError};
use nandlab_core::host::workload::{Op, Request};
use nandlab_core::sim::Served;
use nandlab_core::stats::power_loss::PowerLossEvent;
use nandlab_core::{SimError, Simulator};
use std::time::{Duration, Instant};

/// The simulated drive and its data, one command at a time.
pub(crate) struct Engine<'a> {
    pub(crate) sim: &'a mut Simulator,
    pub(crate) served: Served,
    pub(crate) store: Store,
    pub(crate) size: u64,
    pub(crate) unit: u64,
    pub(crate) timing: Timing,
    /// The wall clock and the simulated clock at the start (realtime timing).
    pub(crate) w0: Instant,
    pub(crate) t0: u64,
    pub(crate) failure: Option<String>,
    /// With power cuts: the versions the store has held.
    pub(crate) crash: Option<CrashLog>,
    /// Planned power cuts still to come (simulated times), and what each one did.
    pub(crate) cuts_at: std::collections::VecDeque<u64>,
    pub(crate) cut_reports: Vec<crate::server::CutReport>,
}

/// A command's outcome: its error value and its simulated arrival and completion.
pub(crate) struct Outcome {
    pub(crate) error: u32,
    pub(crate) arrival: u64,
    pub(crate) done: u64,
}

impl Engine<'_> {
    /// The simulated arrival time of a command read now (`stamp`: fast timing's clock).
    pub(crate) fn arrival(&self, stamp: u64) -> u64 {
        match self.timing {
            Timing::Realtime => self.t0 + self.w0.elapsed().as_nanos() as u64,
            Timing::Fast => stamp.max(self.t0),
        }
    }

    /// Now on the simulated clock: the wall clock's in realtime timing, the
    /// latest completion in fast.
    pub(crate) fn now(&self) -> u64 {
        match self.timing {
            Timing::Realtime => self.t0 + self.w0.elapsed().as_nanos() as u64,
            Timing::Fast => self.served.end(),
        }
    }

    /// The wall-clock instant of simulated time `t` (realtime timing).
    pub(crate) fn wall(&self, t: u64) -> Instant {
        self.w0 + Duration::from_nanos(t.saturating_sub(self.t0))
    }

    fn submit(&mut self, op: Op, offset: u64, len: u32, t: u64) -> Result<u64, SimError> {
        let req = Request { op, offset, len };
        self.sim.serve_request(&mut self.served, req, t)
    }

    /// With power cuts: the units of a range the server is about to change
    /// (`after`: has changed) are logged with their versions.
    fn log(&mut self, offset: u64, len: u64, after: bool) {
        if let (Some(c), Some(o)) = (&mut self.crash, self.sim.drive().oracle()) {
            if after {
                c.after(offset, len, o, &self.store);
            } else {
                c.before(offset, len, o, &self.store);
            }
        }
    }

    /// Cuts the power at simulated time `t`: the drive loses what the physics
    /// says and recovers, and the store is put back to what it kept.
    pub(crate) fn power_cut(&mut self, t: u64) -> Result<(PowerLossEvent, Reverted), SimError> {
        let event = self.sim.serve_power_cut(&mut self.served, t)?;
        let reverted = match (&mut self.crash, self.sim.drive().oracle()) {
            (Some(c), Some(o)) => c.revert(o, &mut self.store),
            _ => Reverted::default(),
        };
        Ok((event, reverted))
    }

    /// Runs one command (its payload in `data` for a write; a read's bytes go to `out`).
    pub(crate) fn command(
        &mut self,
        r: &proto::Request,
        data: &[u8],
        stamp: u64,
        out: &mut Vec<u8>,
    ) -> Outcome {
        let t = self.arrival(stamp);
        let refused = |error| Outcome {
            error,
            arrival: t,
            done: t,
        };
        if self.failure.is_some() {
            return refused(proto::ESHUTDOWN);
        }
        // FUA is taken with any command (NBD: it may have no effect), NO_HOLE
        // with WRITE_ZEROES; no other flag was negotiated.
        let allowed = proto::CMD_FLAG_FUA
            | match r.kind {
                proto::CMD_WRITE_ZEROES => proto::CMD_FLAG_NO_HOLE,
                _ => 0,
            };
        if r.flags & !allowed != 0 {
            return refused(proto::EINVAL);
        }
        let end = r.offset.checked_add(r.len as u64);
        let inside = end.is_some_and(|e| e <= self.size);
        let simulated = match r.kind {
            proto::CMD_FLUSH => Ok(self.sim.serve_flush(&mut self.served, t)),
            _ if r.len == 0 => Ok(t),
            proto::CMD_READ | proto::CMD_TRIM if !inside => return refused(proto::EINVAL),
            proto::CMD_WRITE | proto::CMD_WRITE_ZEROES if !inside => return refused(proto::ENOSPC),
            proto::CMD_READ if r.len > proto::MAX_REQUEST_BYTES => return refused(proto::EINVAL),
            proto::CMD_READ => {
                if self
                    .crash
                    .as_ref()
                    .is_some_and(|c| c.any_lost(r.offset, r.len as u64))
                {
                    // A power cut reverted a unit to bytes the server no longer has.
                    return refused(proto::EIO);
                }
                out.resize(r.len as usize, 0);
                if self.store.read(r.offset, out).is_err() {
                    out.clear();
                    return refused(proto::EIO);
                }
                self.submit(Op::Read, r.offset, r.len, t)
            }
            proto::CMD_WRITE => {
                self.log(r.offset, r.len as u64, false);
                match self.store.write(r.offset, data) {
                    Err(StoreError::Full) => return refused(proto::ENOSPC),
                    Err(StoreError::Io(_)) => return refused(proto::EIO),
                    Ok(()) => self.submit(Op::Write, r.offset, r.len, t),
                }
            }
            proto::CMD_TRIM => {
                self.log(r.offset, r.len as u64, false);
                if self.store.zero(r.offset, r.len as u64).is_err() {
                    return refused(proto::EIO);
                }
                self.submit(Op::Trim, r.offset, r.len, t)
            }
            proto::CMD_WRITE_ZEROES => {
                self.log(r.offset, r.len as u64, false);
                if self.store.zero(r.offset, r.len as u64).is_err() {
                    return refused(proto::EIO);
                }
                // Unmapped where it may punch whole units; else written.
                let aligned =
                    r.offset.is_multiple_of(self.unit) && (r.len as u64).is_multiple_of(self.unit);
                let op = if aligned && r.flags & proto::CMD_FLAG_NO_HOLE == 0 {
                    Op::Trim
                } else {
                    Op::Write
                };
                // Zeroes take no room; the simulated drive still does the work.
                self.submit(op, r.offset, r.len, t)
            }
            _ => return refused(proto::EINVAL),
        };
        // FUA: on flash before the reply.
        let simulated = simulated.map(|done| {
            if r.flags & proto::CMD_FLAG_FUA != 0 && r.kind != proto::CMD_FLUSH {
                self.sim.serve_flush(&mut self.served, done)
            } else {
                done
            }
        });
        if simulated.is_ok()
            && r.len > 0
            && matches!(
                r.kind,
                proto::CMD_WRITE | proto::CMD_TRIM | proto::CMD_WRITE_ZEROES
            )
        {
            self.log(r.offset, r.len as u64, true);
        }
        match simulated {
            Ok(done) => Outcome {
                error: 0,
                arrival: t,
                done,
            },
            Err(e) => {
                self.failure = Some(e.to_string());
                refused(proto::EIO)
            }
        }
    }
}
