//! A phase whose requests come from outside the simulator (a server in
//! front of the drive, such as nandlab's NBD server): each request is run
//! when it arrives, at the simulated time the caller gives, and counted as a
//! phase's requests are — latencies, time-series rows, the summary.

use super::progress::{Progress, Stop, Tally};
use super::{PhaseResult, PhaseRun, Simulator};
use crate::host::workload::Request;
use crate::stats::power_loss::PowerLossEvent;
use crate::stats::Counters;
use crate::SimError;
use std::time::Instant;

/// A served phase under way (from [`Simulator::serve_begin`] to
/// [`Simulator::serve_end`]).
pub struct Served {
    index: usize,
    run: PhaseRun,
    issued: u64,
    issued_bytes: u64,
    /// The latest completion so far.
    end: u64,
    last_report: Instant,
    began: Instant,
}

impl Served {
    /// Simulated time at which the phase started (ns).
    pub fn start(&self) -> u64 {
        self.run.start
    }

    /// The latest completion so far (ns of simulated time).
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Requests run so far.
    pub fn requests(&self) -> u64 {
        self.issued
    }
}

impl Simulator {
    /// Starts the config's phase `index` as a served phase: its name,
    /// time-series interval, temperature and data pattern apply; its
    /// workload and stop conditions do not (requests come from the caller
    /// until [`Simulator::serve_end`]).
    pub fn serve_begin(&mut self, index: usize) -> Result<Served, SimError> {
        let p = self.phase(index)?;
        if self.pending.is_some() {
            return Err(SimError::Unsupported(
                "a phase is paused: go on with it before serving".into(),
            ));
        }
        let run = self.begin(Some(index), &p)?;
        Ok(Served {
            index,
            issued: 0,
            issued_bytes: 0,
            end: run.start,
            run,
            last_report: Instant::now(),
            began: Instant::now(),
        })
    }

    /// Runs `req`, arriving at simulated time `t` (ns; not before the
    /// previous request's arrival), and returns when it completes.
    pub fn serve_request(&mut self, s: &mut Served, req: Request, t: u64) -> Result<u64, SimError> {
        let t = t.max(self.last_issue).max(s.run.start);
        self.last_issue = t;
        let done = self.drive.submit(req, t)?;
        self.count_served(s, &req, t, done)?;
        Ok(done)
    }

    /// Programs what the write buffer holds (a host FLUSH arriving at `t`);
    /// returns when it is on flash.
    pub fn serve_flush(&mut self, s: &mut Served, t: u64) -> u64 {
        let done = self.drive.flush_all().max(t);
        s.end = s.end.max(done);
        done
    }

    /// Keeps what power cuts need from now on (the power model and the
    /// integrity oracle with acknowledgements): on a drive nothing has been
    /// written to yet.
    pub fn enable_power_model(&mut self) -> Result<(), SimError> {
        if !self.drive.has_power_model() {
            if self.drive.counters() != Counters::default() {
                return Err(SimError::Unsupported(
                    "power cuts need the power model from the start: enable it before anything \
                     is written"
                        .into(),
                ));
            }
            // Its tables (a few tens of bytes a unit) are committed as units are
            // written: checked against the memory left now, as a new drive's are.
            let integrity = self.drive.has_oracle();
            let needed = crate::sim::footprint::state_bytes_powered(&self.cfg, integrity);
            if let Some(available) = crate::sim::footprint::available_bytes()? {
                if needed > available {
                    return Err(SimError::OutOfMemory { needed, available });
                }
            }
            self.drive.enable_power_model(&self.cfg);
        }
        Ok(())
    }

    /// Cuts the power of a served drive at `t` (not before the last
    /// command's arrival): what was not safe on flash is lost as the
    /// physics says, and the drive recovers; commands wait until it is back.
    pub fn serve_power_cut(&mut self, s: &mut Served, t: u64) -> Result<PowerLossEvent, SimError> {
        if !self.drive.has_power_model() {
            return Err(SimError::Unsupported(
                "this drive was built without the power model: power cuts need it from the start"
                    .into(),
            ));
        }
        let t = t.max(self.last_issue).max(s.run.start);
        self.last_issue = t;
        s.run.cuts = true;
        let event = self.drive.cut_power(t)?.clone();
        s.end = s.end.max(self.drive.back_at());
        Ok(event)
    }

    fn count_served(
        &mut self,
        s: &mut Served,
        req: &Request,
        t: u64,
        done: u64,
    ) -> Result<(), SimError> {
        let mut tally = Tally {
            start: s.run.start,
            stop: Stop {
                bytes: None,
                requests: None,
                until: None,
            },
            until_dead: false,
            issued: s.issued,
            issued_bytes: s.issued_bytes,
            end: s.end,
            last_report: s.last_report,
            run_start: Counters::default(),
            jobs_fraction: 0.0,
            rec: &mut s.run.rec,
            reads: &mut s.run.reads,
            writes: &mut s.run.writes,
            snapshot_due: None,
            can_pause: false,
            pause: false,
        };
        let outcome = self.tally(&mut tally, req, t, done, &mut |_: &Progress| true);
        s.issued = tally.issued;
        s.issued_bytes = tally.issued_bytes;
        s.end = tally.end;
        s.last_report = tally.last_report;
        outcome
    }

    /// Ends a served phase at simulated time `t` (or its last completion,
    /// if later): its summary (kind `serve`) and time series.
    pub fn serve_end(&mut self, s: Served, t: u64) -> Result<PhaseResult, SimError> {
        let p = self.phase(s.index)?;
        let mut run = s.run;
        run.wall_seconds = s.began.elapsed().as_secs_f64();
        let end = s.end.max(t);
        let mut result = self.finish(&p, run, Ok(end))?;
        result.summary.kind = "serve".into();
        Ok(result)
    }
}
