//! The request loops of a phase: laying data out (fill, trim), a closed or
//! open loop or a timed trace of one workload, and `[[phase.job]]`s run
//! together; and where each loop's requests come from.

use super::progress::{Progress, ProgressFn, Stop, Tally, PROGRESS_EVERY};
use super::{Flow, PhaseRun, Simulator};
use crate::config::{Arrival, PhaseConfig, PhaseKind};
use crate::drive::FILL_CHUNK;
use crate::host::trace::replay::Replay;
use crate::host::workload::{Generator, Op, Pattern, Request, Scatter};
use crate::math::Deterministic;
use crate::memory;
use crate::seed::derive_seed;
use crate::stats::{Counters, Latency};
use crate::SimError;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Where a phase's request loop is.
#[derive(Serialize, Deserialize)]
pub(super) enum Work {
    /// Fill or trim: units laid out so far; when the laying out started.
    LayOut {
        done: u64,
        end: u64,
    },
    Io(Box<IoState>),
}

/// The state of an io phase's request loop between two requests.
#[derive(Serialize, Deserialize)]
pub(super) struct IoState {
    pub(super) issued: u64,
    pub(super) issued_bytes: u64,
    pub(super) end: u64,
    pub(super) jobs_fraction: f64,
    pub(super) source: Source,
    /// The next request, and the one after it: drawn ahead so that what they
    /// touch is in the CPU's cache by the time they are simulated (the map
    /// entry of the one after, prefetched when it is drawn; the bit-error
    /// model's block record of the next, found through that entry then).
    pub(super) next: Option<(Option<u64>, Request)>,
    pub(super) after: Option<(Option<u64>, Request)>,
    pub(super) next_idle: u64,
    /// Simulated time of the loop.
    pub(super) t: u64,
    /// Closed loop: completion times of the requests in flight.
    pub(super) queue: BinaryHeap<Reverse<u64>>,
    /// Open loop: the inter-arrival draws and the next arrival.
    pub(super) arrivals: Xoshiro256PlusPlus,
    pub(super) arrival: f64,
    /// `[[phase.job]]`s, and each free queue slot of a job by the time it frees.
    pub(super) jobs: Vec<JobRun>,
    pub(super) slots: BinaryHeap<Reverse<(u64, usize)>>,
}

/// The request loop's state while it runs, moved out of its [`IoState`]
/// (and back when it stops) so that the loop works on locals.
struct Cursor {
    src: Source,
    next: Option<(Option<u64>, Request)>,
    after: Option<(Option<u64>, Request)>,
    t: u64,
    queue: BinaryHeap<Reverse<u64>>,
    next_idle: u64,
    arrival: f64,
}

impl Cursor {
    fn take(st: &mut IoState) -> Cursor {
        Cursor {
            src: std::mem::replace(&mut st.source, Source::Jobs),
            next: st.next,
            after: st.after,
            t: st.t,
            queue: std::mem::take(&mut st.queue),
            next_idle: st.next_idle,
            arrival: st.arrival,
        }
    }

    fn put_back(self, st: &mut IoState) {
        st.source = self.src;
        st.next = self.next;
        st.after = self.after;
        st.t = self.t;
        st.queue = self.queue;
        st.next_idle = self.next_idle;
        st.arrival = self.arrival;
    }

    /// Whether the phase is over at `t`: a stop condition, the trace has ended, or no request
    /// fits in what the byte stop leaves (as fio, a phase never moves more than its volume).
    #[inline]
    fn over(&self, tally: &Tally, t: u64) -> bool {
        match &self.next {
            None => true,
            Some((_, req)) => {
                tally.over(t)
                    || tally
                        .stop
                        .left(tally.issued_bytes)
                        .is_some_and(|left| self.src.fitting(req, left).is_none())
            }
        }
    }
}

/// One `[[phase.job]]` of a phase being run: its workload, stop and results.
#[derive(Serialize, Deserialize)]
pub(super) struct JobRun {
    pub(super) source: Generator,
    pub(super) stop: Stop,
    pub(super) queue_depth: u32,
    pub(super) issued: u64,
    pub(super) issued_bytes: u64,
    pub(super) counters: Counters,
    pub(super) reads: Latency,
    pub(super) writes: Latency,
    pub(super) end: u64,
}

/// Where a phase's requests come from. A trace is stored as how far it has
/// been read: a run resumed from a snapshot reads it again to there.
// One per phase, in the state of the request loop: size does not matter,
// an indirection on the per-request path would.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, Deserialize)]
pub(super) enum Source {
    Synthetic(Generator),
    Trace {
        /// Requests drawn so far.
        drawn: u64,
        #[serde(skip)]
        replay: Option<Replay>,
    },
    /// A phase of `[[phase.job]]`s: each job has its own generator.
    Jobs,
}

impl Source {
    /// The next request (with its recorded time from a trace), or None when a trace has ended.
    #[inline]
    pub(super) fn next(&mut self) -> Result<Option<(Option<u64>, Request)>, SimError> {
        match self {
            Source::Synthetic(g) => Ok(Some((None, g.next_request()))),
            Source::Trace { drawn, replay } => {
                let replay = replay.as_mut().expect("opened before the loop");
                let next = replay.next_request()?;
                *drawn += next.is_some() as u64;
                Ok(next.map(|(t, req)| (Some(t), req)))
            }
            Source::Jobs => Ok(None),
        }
    }

    /// The length `req` is issued with when `left` bytes remain of the phase's volume: its own
    /// if it fits, else the largest of a synthetic workload's sizes that does (a trace's
    /// requests keep theirs); None if nothing fits.
    #[inline]
    pub(super) fn fitting(&self, req: &Request, left: u64) -> Option<u32> {
        if req.len as u64 <= left {
            return Some(req.len);
        }
        match self {
            Source::Synthetic(g) => g.fitting(left),
            _ => None,
        }
    }

    /// Opens a trace read back from a snapshot again, at the request it had got to.
    pub(super) fn reopen(&mut self, p: &PhaseConfig, user: u64, unit: u64) -> Result<(), SimError> {
        let Source::Trace { drawn, replay } = self else {
            return Ok(());
        };
        if replay.is_some() {
            return Ok(());
        }
        let cfg = p.trace.as_ref().expect("a trace phase has a trace");
        let mut r = Replay::open(cfg, user, unit)?;
        for _ in 0..*drawn {
            if r.next_request()?.is_none() {
                return Err(SimError::Unsupported(format!(
                    "trace {} has fewer requests than when the snapshot was taken: \
                     it changed since",
                    cfg.path.display()
                )));
            }
        }
        *replay = Some(r);
        Ok(())
    }
}

/// About 200 rows per phase, on the axis of its first stop condition; a run
/// until death takes a row every drive write (the user capacity moved).
impl IoState {
    /// The loop of an io or trace phase before its first request.
    pub(super) fn new(
        p: &PhaseConfig,
        user: u64,
        unit: u64,
        seed: u64,
        start: u64,
    ) -> Result<IoState, SimError> {
        let jobs: Vec<JobRun> = p
            .jobs
            .iter()
            .enumerate()
            .map(|(j, job)| JobRun {
                source: Generator::new(&job.stream(), user, unit, job_seed(seed, j)),
                stop: Stop::of(job, start, user),
                queue_depth: match job.arrival {
                    Arrival::Closed { queue_depth } => queue_depth,
                    Arrival::Open { .. } => unreachable!("validated: jobs run closed loop"),
                },
                issued: 0,
                issued_bytes: 0,
                counters: Counters::default(),
                reads: Latency::new(3),
                writes: Latency::new(3),
                end: start,
            })
            .collect();
        let slots = jobs
            .iter()
            .enumerate()
            .flat_map(|(j, job)| (0..job.queue_depth).map(move |_| Reverse((start, j))))
            .collect();
        let mut source = match &p.trace {
            _ if !p.jobs.is_empty() => Source::Jobs,
            Some(t) => Source::Trace {
                drawn: 0,
                replay: Some(Replay::open(t, user, unit)?),
            },
            None => Source::Synthetic(Generator::new(&p.stream(), user, unit, seed)),
        };
        let next = source.next()?;
        let after = match next {
            Some(_) => source.next()?,
            None => None,
        };
        Ok(IoState {
            issued: 0,
            issued_bytes: 0,
            end: start,
            jobs_fraction: 0.0,
            source,
            next,
            after,
            next_idle: p.idle_every.map_or(u64::MAX, |v| v.bytes(user).max(1)),
            t: start,
            queue: BinaryHeap::new(),
            arrivals: Xoshiro256PlusPlus::seed_from_u64(derive_seed(seed, "arrivals", 0)),
            arrival: start as f64,
            jobs,
            slots,
        })
    }
}

/// `NANDLAB_INTEGRITY=1` (or true, yes): the integrity oracle on in every run
/// (the test suites set it).
/// The workload seed of a phase's job `j` of a phase seeded `seed` (the
/// first job draws as the phase would: one job is the plain phase).
pub(super) fn job_seed(seed: u64, j: usize) -> u64 {
    if j == 0 {
        seed
    } else {
        derive_seed(seed, "job", j as u64)
    }
}
impl Simulator {
    /// Fill and trim phases: each unit of the range once, at memory speed,
    /// in chunks (so that a long fill reports progress and can be interrupted).
    pub(super) fn lay_out(
        &mut self,
        p: &PhaseConfig,
        run: &mut PhaseRun,
        progress: ProgressFn,
    ) -> Result<Flow, SimError> {
        let can_pause = self.can_pause(run);
        let Work::LayOut { done, end } = &mut run.work else {
            unreachable!("a fill, trim or power-off phase")
        };
        if p.kind == PhaseKind::PowerOff {
            return Ok(Flow::Done(*end));
        }
        let g = &self.cfg.geometry;
        let unit = g.unit_size as u64;
        let first = (p.working_set_offset * g.user_units as f64) as u64;
        let span = ((p.working_set * g.user_units as f64) as u64).min(g.user_units - first);
        let units = (p
            .volume
            .expect("validated: fill has a volume")
            .bytes(g.user_capacity_bytes)
            / unit)
            .min(span);
        let scatter = (p.pattern != Pattern::Sequential)
            .then(|| Scatter::new(span, derive_seed(run.seed, "fill", 0)));
        let fill = p.kind == PhaseKind::Fill;
        // A sequential fill of a drive that maps nothing yet is laid out in
        // one go, in time proportional to the blocks it opens.
        if fill
            && self.layouts
            && scatter.is_none()
            && *done == 0
            && self.drive.fill_in_order(first as u32, units)?
        {
            *done = units;
            self.laid_out_so_far(1.0, progress)?;
        }
        // Otherwise, on a fresh drive, a helper thread has the OS back the
        // maps ahead of the fill (first-touch page faults cost as much as
        // the fill itself).
        let fresh = self.drive.counters() == Counters::default() && *done == 0;
        let regions = self.drive.fill_regions(first, units);
        std::thread::scope(|scope| {
            if fill && fresh && units > FILL_CHUNK {
                scope.spawn(move || memory::populate(&regions));
            }
            while *done < units {
                let n = FILL_CHUNK.min(units - *done);
                let at = *done;
                let lpn_of =
                    |i: u64| (first + scatter.as_ref().map_or(at + i, |s| s.map(at + i))) as u32;
                if fill {
                    if let Err(stopped) = self.drive.fill(n, lpn_of) {
                        // The drive died in the fill: what it placed counts.
                        self.drive.laid_out(fill, (*done + stopped.placed) * unit);
                        return Err(stopped.error);
                    }
                } else {
                    // A trim phase has no cuts: its TRIMs are for good.
                    self.drive.no_cut_before(self.now);
                    for i in 0..n {
                        self.drive.trim_unit(lpn_of(i), self.now);
                    }
                }
                *done += n;
                if can_pause && self.interrupt.load(Ordering::Relaxed) && *done < units {
                    return Ok(Flow::Paused);
                }
                self.laid_out_so_far(*done as f64 / units as f64, progress)?;
            }
            self.drive.laid_out(fill, units * unit);
            Ok(Flow::Done(*end))
        })
    }

    /// A fill or trim phase has laid out `fraction` of its units: a
    /// progress report, if one is due.
    fn laid_out_so_far(&mut self, fraction: f64, progress: ProgressFn) -> Result<(), SimError> {
        if self.last_report.elapsed().as_secs_f64() < PROGRESS_EVERY {
            return Ok(());
        }
        self.last_report = Instant::now();
        let c = self.drive.counters();
        let pr = Progress {
            fraction,
            sim_seconds: self.now as f64 / 1e9,
            host_write_bytes: c.host_write_bytes,
            host_read_bytes: c.host_read_bytes,
            requests: 0,
            wear_used: self.drive.wear_used(),
            reserve_used: self.drive.reserve_used(),
        };
        if progress(&pr) {
            Ok(())
        } else {
            Err(SimError::Aborted)
        }
    }

    /// An io or trace phase: requests until a stop condition, the trace's
    /// end, or a pause.
    pub(super) fn io(
        &mut self,
        p: &PhaseConfig,
        run: &mut PhaseRun,
        progress: ProgressFn,
    ) -> Result<Flow, SimError> {
        let user = self.cfg.geometry.user_capacity_bytes;
        let can_pause = self.can_pause(run);
        let Work::Io(st) = &mut run.work else {
            unreachable!("an io or trace phase")
        };
        let mut tally = Tally {
            start: run.start,
            stop: Stop::of(p, run.start, user),
            until_dead: p.until_dead,
            issued: st.issued,
            issued_bytes: st.issued_bytes,
            end: st.end,
            last_report: self.last_report,
            run_start: Counters::default(),
            jobs_fraction: st.jobs_fraction,
            rec: &mut run.rec,
            reads: &mut run.reads,
            writes: &mut run.writes,
            snapshot_due: self
                .snapshots
                .as_ref()
                .filter(|_| can_pause)
                .and_then(|s| s.every)
                .map(|every| (every, self.next_snapshot)),
            can_pause,
            pause: false,
        };
        let flow = if p.jobs.is_empty() {
            self.io_loop(p, st, &mut tally, progress)
        } else {
            self.io_jobs(st, &mut tally, progress)
        };
        st.issued = tally.issued;
        st.issued_bytes = tally.issued_bytes;
        st.end = tally.end;
        st.jobs_fraction = tally.jobs_fraction;
        self.last_report = tally.last_report;
        flow
    }

    /// The request loop of a one-workload phase: closed loop, open loop or a
    /// trace at its recorded times.
    pub(super) fn io_loop(
        &mut self,
        p: &PhaseConfig,
        st: &mut IoState,
        tally: &mut Tally,
        progress: ProgressFn,
    ) -> Result<Flow, SimError> {
        let user = self.cfg.geometry.user_capacity_bytes;
        let unit = self.cfg.geometry.unit_size as u64;
        st.source.reopen(p, user, unit)?;
        let mut c = Cursor::take(st);
        let flow = self.run_cursor(p, &mut c, &mut st.arrivals, tally, progress);
        c.put_back(st);
        flow
    }

    /// Issues `c`'s next request at `t`; returns its completion.
    #[inline]
    fn issue(
        &mut self,
        c: &mut Cursor,
        t: u64,
        tally: &mut Tally,
        progress: ProgressFn,
    ) -> Result<u64, SimError> {
        let (_, mut req) = c.next.expect("the loop checked Cursor::over");
        if let Some(left) = tally.stop.left(tally.issued_bytes) {
            // The last requests of a volume take the sizes that fit (Cursor::over checked one does).
            req.len = c.src.fitting(&req, left).unwrap_or(req.len);
        }
        c.next = c.after.take();
        if let Some((_, n)) = &c.next {
            c.after = c.src.next()?;
            self.drive.prefetch_decoding(n);
        }
        if let Some((_, a)) = &c.after {
            self.drive.prefetch(a);
        }
        self.last_issue = t;
        let done = self.drive.submit(req, t)?;
        self.tally(tally, &req, t, done, progress)?;
        Ok(done)
    }

    /// The loop proper, on the state `c` holds; stops at the phase's end or
    /// at a sync point where it should pause.
    fn run_cursor(
        &mut self,
        p: &PhaseConfig,
        c: &mut Cursor,
        arrivals: &mut Xoshiro256PlusPlus,
        tally: &mut Tally,
        progress: ProgressFn,
    ) -> Result<Flow, SimError> {
        let idle_every = p
            .idle_every
            .map(|v| v.bytes(self.cfg.geometry.user_capacity_bytes).max(1));
        let start = tally.start;
        let timed_trace = p.trace.as_ref().is_some_and(|t| t.timed);
        match p.arrival {
            // Each request at its recorded time (scaled), from the phase's start.
            _ if timed_trace => {
                let idle = self.cfg.ftl.idle_threshold_ns;
                while let Some((Some(at), _)) = c.next {
                    c.t = c.t.max(start + at);
                    if c.over(tally, c.t) {
                        break;
                    }
                    if c.t > tally.end + idle {
                        self.drive.idle(c.t)?;
                    }
                    self.issue(c, c.t, tally, progress)?;
                    if tally.pause {
                        return Ok(Flow::Paused);
                    }
                }
            }
            Arrival::Closed { queue_depth } => {
                let depth = queue_depth as usize;
                loop {
                    // Fill the queue, then keep it full until a stop or an idle gap.
                    while c.queue.len() < depth {
                        if c.over(tally, c.t) || tally.issued_bytes >= c.next_idle {
                            break;
                        }
                        let done = self.issue(c, c.t, tally, progress)?;
                        c.queue.push(Reverse(done));
                        if tally.pause {
                            return Ok(Flow::Paused);
                        }
                    }
                    while let Some(Reverse(done)) = c.queue.pop() {
                        c.t = done;
                        if !c.over(tally, c.t) && tally.issued_bytes < c.next_idle {
                            let d = self.issue(c, c.t, tally, progress)?;
                            c.queue.push(Reverse(d));
                            if tally.pause {
                                return Ok(Flow::Paused);
                            }
                        }
                    }
                    if c.over(tally, c.t) {
                        break;
                    }
                    // Idle gap: the host waits, background GC works.
                    let idle_start = tally.end.max(self.drive.all_idle_at());
                    c.t = idle_start + p.idle_duration_ns;
                    self.drive.idle(c.t)?;
                    tally.end = tally.end.max(c.t);
                    c.next_idle += idle_every.unwrap_or(u64::MAX);
                }
            }
            Arrival::Open { rate, poisson } => {
                let mean_gap = 1e9 / rate;
                let idle = self.cfg.ftl.idle_threshold_ns;
                while !c.over(tally, c.t) {
                    if tally.issued_bytes >= c.next_idle {
                        c.arrival += p.idle_duration_ns as f64;
                        c.next_idle += idle_every.unwrap_or(u64::MAX);
                    }
                    c.t = c.arrival as u64;
                    if c.t > tally.end + idle {
                        self.drive.idle(c.t)?;
                    }
                    if c.over(tally, c.t) {
                        break;
                    }
                    self.issue(c, c.t, tally, progress)?;
                    let gap = if poisson {
                        -mean_gap * (1.0 - arrivals.random::<f64>()).ln_d()
                    } else {
                        mean_gap
                    };
                    c.arrival += gap;
                    if tally.pause {
                        return Ok(Flow::Paused);
                    }
                }
            }
        }
        Ok(Flow::Done(tally.end))
    }

    /// A phase of `[[phase.job]]`s: each job keeps its own queue full, all on
    /// the one drive, until its own stop condition or the phase's. Requests
    /// go to the drive in time order (ties: the earlier job first).
    pub(super) fn io_jobs(
        &mut self,
        st: &mut IoState,
        tally: &mut Tally,
        progress: ProgressFn,
    ) -> Result<Flow, SimError> {
        let start = tally.start;
        while let Some(Reverse((t, j))) = st.slots.pop() {
            let job = &mut st.jobs[j];
            if tally.over(t) {
                break;
            }
            if job.stop.reached(t, job.issued_bytes, job.issued) {
                continue;
            }
            let mut req = job.source.next_request();
            // A job's (and the phase's) last requests take the sizes that fit their volume; when
            // none does, the job (or the phase) is over there, as fio ends a job at its size.
            let job_left = job.stop.left(job.issued_bytes);
            let left = job_left
                .into_iter()
                .chain(tally.stop.left(tally.issued_bytes))
                .min();
            if let Some(left) = left.filter(|&left| req.len as u64 > left) {
                match job.source.fitting(left) {
                    Some(len) => req.len = len,
                    None if job_left == Some(left) => {
                        job.stop.bytes = Some(job.issued_bytes);
                        continue;
                    }
                    None => {
                        tally.stop.bytes = Some(tally.issued_bytes);
                        break;
                    }
                }
            }
            self.last_issue = t;
            let done = self.drive.submit(req, t)?;
            let job = &mut st.jobs[j];
            job.issued += 1;
            job.issued_bytes += req.len as u64;
            job.end = job.end.max(done);
            let (c, len) = (&mut job.counters, req.len as u64);
            match req.op {
                Op::Read => {
                    c.read_requests += 1;
                    c.host_read_bytes += len;
                    job.reads.record(done - t);
                }
                Op::Write => {
                    c.write_requests += 1;
                    c.host_write_bytes += len;
                    job.writes.record(done - t);
                }
                Op::Trim => {
                    c.trim_requests += 1;
                    c.host_trim_bytes += len;
                }
            }
            st.slots.push(Reverse((done, j)));
            if tally.issued & 0x3FF == 0x3FF && tally.stop.is_none() {
                // The phase ends with its last job: report the slowest one.
                let f = |job: &JobRun| job.stop.fraction(start, t, job.issued_bytes, job.issued);
                tally.jobs_fraction = st.jobs.iter().map(f).fold(1.0, f64::min);
            }
            self.tally(tally, &req, t, done, &mut *progress)?;
            if tally.pause {
                return Ok(Flow::Paused);
            }
        }
        Ok(Flow::Done(tally.end))
    }
}
