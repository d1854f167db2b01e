//! The simulator: owns one drive's state across phases and runs each phase's
//! workload on it — closed loop (queue depth) or open loop (arrival rate),
//! with idle gaps for background GC — collecting summaries and time series.

use crate::config::{Arrival, Config, Interval, Pattern, PhaseConfig, PhaseKind};
use crate::drive::Drive;
use crate::ftl::Ftl;
use crate::host::trace::replay::Replay;
use crate::host::workload::{derive_seed, Generator, Op, Request, Scatter};
use crate::memory;
use crate::power::{CutPlan, PowerLossEvent, PowerLossSummary};
use crate::stats::{Counters, IntegrityCounts, JobSummary, Latency, Row, Summary, SummaryParts};
use crate::SimError;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

mod loaded;
mod snapshot;
pub use snapshot::{
    writable as snapshot_writable, ConfigText, Every, SnapshotPlan, FORMAT as SNAPSHOT_FORMAT,
    MAGIC as SNAPSHOT_MAGIC,
};

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

const PROGRESS_EVERY: f64 = 0.2;
/// Time-series rows a phase takes by default.
pub const ROWS_PER_PHASE: u64 = 200;

/// A finished phase.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub summary: Summary,
    pub rows: Vec<Row>,
    /// Each `[[phase.job]]`'s own figures (empty for a one-workload phase).
    pub jobs: Vec<JobSummary>,
    /// Each power cut of the phase and what it did.
    pub power_losses: Vec<PowerLossEvent>,
}

/// One drive and everything that has happened to it.
pub struct Simulator {
    cfg: Config,
    drive: Drive,
    /// Simulated time at the end of the last phase, ns.
    now: u64,
    run_reads: Latency,
    run_writes: Latency,
    run_wall: f64,
    phases_run: u64,
    /// Why the drive died, once it has.
    death: Option<String>,
    /// Arrival time of the last request issued (where a run that fails stopped).
    last_issue: u64,
    /// Every power cut so far.
    power_losses: Vec<PowerLossEvent>,
    /// Where and how often to write snapshots (None: never).
    snapshots: Option<SnapshotPlan>,
    /// Where the next periodic snapshot is due, on the plan's axis.
    next_snapshot: u64,
    /// A phase a snapshot paused (the state a resumed run goes on from).
    pending: Option<PhaseRun>,
    /// Set (from any thread) to stop the run at its next sync point with a snapshot.
    interrupt: Arc<AtomicBool>,
    /// When the last progress report went out (kept across pauses).
    last_report: Instant,
}

/// Per-phase bookkeeping of the time series.
#[derive(Serialize, Deserialize)]
struct Recorder {
    phase: u32,
    interval: Interval,
    next_mark: u64,
    last_t: u64,
    last: Counters,
    reads: Latency,
    writes: Latency,
    rows: Vec<Row>,
}

impl Recorder {
    fn new(phase: u32, interval: Interval, start_t: u64, c: Counters) -> Recorder {
        let step = match interval {
            Interval::Time(x) | Interval::Bytes(x) | Interval::Requests(x) => x,
        };
        Recorder {
            phase,
            interval,
            next_mark: step,
            last_t: start_t,
            last: c,
            reads: Latency::new(2),
            writes: Latency::new(2),
            rows: Vec::new(),
        }
    }

    /// Where the phase is on the interval's axis.
    #[inline]
    fn position(&self, elapsed_ns: u64, bytes: u64, requests: u64) -> u64 {
        match self.interval {
            Interval::Time(_) => elapsed_ns,
            Interval::Bytes(_) => bytes,
            Interval::Requests(_) => requests,
        }
    }

    fn row(&mut self, t: u64, c: Counters, run_start: &Counters, ftl: &Ftl) {
        let blocks = &ftl.blocks;
        let free_blocks = blocks.total_free();
        let by_mode = blocks.blocks_by_mode();
        let d = c - self.last;
        let dt = t.saturating_sub(self.last_t) as f64 / 1e9;
        let rate = |x: f64| if dt > 0.0 { x / dt } else { 0.0 };
        let unit = ftl.g.unit_size as u64;
        self.rows.push(Row {
            phase: self.phase,
            sim_seconds: t as f64 / 1e9,
            host_write_bytes: c.host_write_bytes - run_start.host_write_bytes,
            host_read_bytes: c.host_read_bytes - run_start.host_read_bytes,
            write_mbps: rate(d.host_write_bytes as f64 / 1e6),
            read_mbps: rate(d.host_read_bytes as f64 / 1e6),
            iops: rate(d.requests() as f64),
            read_p50_us: self.reads.quantile_us(0.5),
            read_p99_us: self.reads.quantile_us(0.99),
            write_p50_us: self.writes.quantile_us(0.5),
            write_p99_us: self.writes.quantile_us(0.99),
            waf: d.waf(),
            waf_cumulative: (c - *run_start).waf(),
            free_blocks,
            erases: c.erases - run_start.erases,
            bad_blocks: blocks.bad_blocks(),
            program_us_mean: d.program_us_mean(),
            erase_us_mean: d.erase_us_mean(),
            latency_mean_us: {
                let n = self.reads.count() + self.writes.count();
                let sum = self.reads.mean_ns() * self.reads.count() as f64
                    + self.writes.mean_ns() * self.writes.count() as f64;
                if n == 0 {
                    0.0
                } else {
                    sum / n as f64 / 1000.0
                }
            },
            slc_blocks: by_mode[0],
            mlc_blocks: by_mode[1],
            tlc_blocks: by_mode[2],
            qlc_blocks: by_mode[3],
            usable_bytes: blocks.pool_capacity().iter().sum::<u64>() * unit,
            wear_used: blocks.wear_used(),
            reserve_used: ftl.reserve_used(),
            pslc_bytes: ftl.cache_units() * unit,
            folded_bytes: d.folded_units * unit,
            direct_bytes: d.direct_units * unit,
        });
        self.reads.reset();
        self.writes.reset();
        self.last = c;
        self.last_t = t;
    }
}

/// When a phase stops issuing requests.
#[derive(Serialize, Deserialize)]
struct Stop {
    bytes: Option<u64>,
    requests: Option<u64>,
    until: Option<u64>,
}

impl Stop {
    /// The stop conditions of `p`, starting at `start`.
    fn of(p: &PhaseConfig, start: u64, user_bytes: u64) -> Stop {
        Stop {
            bytes: p.volume.map(|v| v.bytes(user_bytes)),
            requests: p.requests,
            until: p.duration_ns.map(|d| start + d),
        }
    }

    fn is_none(&self) -> bool {
        self.bytes.is_none() && self.requests.is_none() && self.until.is_none()
    }

    fn reached(&self, t: u64, bytes: u64, requests: u64) -> bool {
        self.bytes.is_some_and(|b| bytes >= b)
            || self.requests.is_some_and(|r| requests >= r)
            || self.until.is_some_and(|u| t >= u)
    }

    fn fraction(&self, start: u64, t: u64, bytes: u64, requests: u64) -> f64 {
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
struct Tally<'a> {
    start: u64,
    stop: Stop,
    until_dead: bool,
    issued: u64,
    issued_bytes: u64,
    /// The latest completion.
    end: u64,
    last_report: Instant,
    run_start: Counters,
    /// Progress of a phase stopped only by its jobs' stop conditions.
    jobs_fraction: f64,
    rec: &'a mut Recorder,
    reads: &'a mut Latency,
    writes: &'a mut Latency,
    /// Where the next periodic snapshot is due, if this phase takes them.
    snapshot_due: Option<(Every, u64)>,
    /// Whether the phase can pause for a snapshot (a config phase of a run with a snapshot plan).
    can_pause: bool,
    /// Set when the request loop should stop at its next sync point.
    pause: bool,
}

impl Tally<'_> {
    fn over(&self, t: u64) -> bool {
        self.stop.reached(t, self.issued_bytes, self.issued)
    }
}

/// One `[[phase.job]]` of a phase being run: its workload, stop and results.
#[derive(Serialize, Deserialize)]
struct JobRun {
    source: Generator,
    stop: Stop,
    queue_depth: u32,
    issued: u64,
    issued_bytes: u64,
    counters: Counters,
    reads: Latency,
    writes: Latency,
    end: u64,
}

/// A phase under way: everything it needs to go on besides the drive. The
/// request loops stop only at sync points where this is the whole story, so
/// a phase paused here (for a snapshot) and continued runs exactly as one
/// that never stopped.
#[derive(Serialize, Deserialize)]
pub(crate) struct PhaseRun {
    /// The config's phase (None: a phase a procedure built; never paused).
    index: Option<usize>,
    /// Phases run before this one on the drive.
    ordinal: u64,
    seed: u64,
    start: u64,
    before: Counters,
    rec: Recorder,
    reads: Latency,
    writes: Latency,
    /// Wall time the phase has run so far.
    wall_seconds: f64,
    cuts: bool,
    work: Work,
}

/// Where a phase's request loop is.
#[derive(Serialize, Deserialize)]
enum Work {
    /// Fill or trim: units laid out so far; when the laying out started.
    LayOut {
        done: u64,
        end: u64,
    },
    Io(Box<IoState>),
}

/// The state of an io phase's request loop between two requests.
#[derive(Serialize, Deserialize)]
struct IoState {
    issued: u64,
    issued_bytes: u64,
    end: u64,
    jobs_fraction: f64,
    source: Source,
    /// The next request, drawn ahead (and prefetched) when the last was issued.
    next: Option<(Option<u64>, Request)>,
    next_idle: u64,
    /// Simulated time of the loop.
    t: u64,
    /// Closed loop: completion times of the requests in flight.
    queue: BinaryHeap<Reverse<u64>>,
    /// Open loop: the inter-arrival draws and the next arrival.
    arrivals: Xoshiro256PlusPlus,
    arrival: f64,
    /// `[[phase.job]]`s, and each free queue slot of a job by the time it frees.
    jobs: Vec<JobRun>,
    slots: BinaryHeap<Reverse<(u64, usize)>>,
}

/// How far a call into a phase's loop got.
enum Flow {
    /// The phase is over; its last completion.
    Done(u64),
    /// Stopped at a sync point for a snapshot.
    Paused,
}

impl Simulator {
    /// A pristine drive for `cfg`, if its state fits in the memory available
    /// (else an error saying how much it needs, before anything is allocated).
    pub fn try_new(cfg: Config) -> Result<Simulator, SimError> {
        let integrity = cfg.checks.integrity || integrity_from_env();
        let needed = memory::state_bytes(&cfg, integrity);
        match memory::available_bytes()? {
            Some(available) if needed > available => {
                Err(SimError::OutOfMemory { needed, available })
            }
            _ => Ok(Simulator::new(cfg)),
        }
    }

    /// A pristine drive for `cfg`.
    pub fn new(cfg: Config) -> Simulator {
        let mut drive = Drive::new(&cfg, derive_seed(cfg.seed, "gc", 0));
        if cfg.checks.integrity || integrity_from_env() {
            drive.ftl.enable_oracle();
        }
        if cfg.has_power_loss() {
            drive.enable_power_model(&cfg);
        }
        Simulator {
            drive,
            cfg,
            now: 0,
            run_reads: Latency::new(3),
            run_writes: Latency::new(3),
            run_wall: 0.0,
            phases_run: 0,
            death: None,
            last_issue: 0,
            power_losses: Vec::new(),
            snapshots: None,
            next_snapshot: 0,
            pending: None,
            interrupt: Arc::new(AtomicBool::new(false)),
            last_report: Instant::now(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    pub fn drive(&self) -> &Drive {
        &self.drive
    }

    /// The drive, to switch on checks (the integrity oracle) before a run.
    pub fn drive_mut(&mut self) -> &mut Drive {
        &mut self.drive
    }

    /// Runs the config's phase `index` (or goes on with it, if a snapshot
    /// paused it).
    pub fn run_phase(
        &mut self,
        index: usize,
        progress: ProgressFn,
    ) -> Result<PhaseResult, SimError> {
        let p = self
            .cfg
            .phases
            .get(index)
            .cloned()
            .ok_or(SimError::NoSuchPhase {
                index,
                phases: self.cfg.phases.len(),
            })?;
        let run = match self.pending.take() {
            Some(run) if run.index == Some(index) => run,
            Some(run) => {
                let paused = run.index.map_or(0, |i| i + 1);
                self.pending = Some(run);
                return Err(SimError::Unsupported(format!(
                    "phase #{paused} is paused: go on with it before phase #{}",
                    index + 1
                )));
            }
            None => self.begin(Some(index), &p)?,
        };
        self.go(&p, run, progress)
    }

    /// Runs every phase of the config in order.
    pub fn run_all(&mut self, progress: ProgressFn) -> Result<Vec<PhaseResult>, SimError> {
        (0..self.cfg.phases.len())
            .map(|i| self.run_phase(i, &mut *progress))
            .collect()
    }

    /// Runs any phase (for procedures that build their own) on this drive.
    pub fn run(&mut self, p: &PhaseConfig, progress: ProgressFn) -> Result<PhaseResult, SimError> {
        let run = self.begin(None, p)?;
        self.go(p, run, progress)
    }

    /// Sets a phase up to run: its seed, stop, recorder, power cuts and loop state.
    fn begin(&mut self, index: Option<usize>, p: &PhaseConfig) -> Result<PhaseRun, SimError> {
        let ordinal = self.phases_run;
        self.phases_run += 1;
        self.last_report = Instant::now();
        let seed = derive_seed(self.cfg.seed, "workload", ordinal);
        let before = self.drive.ftl.counters;
        let start = self.now;
        let user = self.cfg.geometry.user_capacity_bytes;
        let unit = self.cfg.geometry.unit_size as u64;
        let interval = p.interval.unwrap_or_else(|| default_interval(p, user));
        self.drive.ftl.set_data_factor(p.data_factor);
        if let Some(reason) = &self.death {
            return Err(SimError::Dead {
                reason: reason.clone(),
            });
        }
        let cuts = !p.power_loss_ns.is_empty() || p.power_loss_every_ns.is_some();
        if cuts && self.drive.ftl.power.is_none() {
            return Err(SimError::Unsupported(format!(
                "phase `{}` cuts the power, but the drive was built without what recovery needs: \
                 give the config's phases their power_loss keys before the run starts",
                p.name
            )));
        }
        let plan = cuts.then(|| {
            let seed = derive_seed(seed, "power-loss", 0);
            CutPlan::new(start, &p.power_loss_ns, p.power_loss_every_ns, seed)
        });
        self.drive.plan_cuts(plan);
        let work = match p.kind {
            PhaseKind::Fill | PhaseKind::Trim => {
                let mut end = self.now;
                if p.kind == PhaseKind::Fill {
                    end = end.max(self.drive.flush());
                    self.drive.tl.enabled = false;
                }
                Work::LayOut { done: 0, end }
            }
            PhaseKind::Io | PhaseKind::Trace => {
                if !p.timed {
                    self.drive.tl.enabled = false;
                }
                Work::Io(Box::new(IoState::new(p, user, unit, seed, start)?))
            }
        };
        Ok(PhaseRun {
            index,
            ordinal,
            seed,
            start,
            before,
            rec: Recorder::new(ordinal as u32, interval, start, before),
            reads: Latency::new(3),
            writes: Latency::new(3),
            wall_seconds: 0.0,
            cuts,
            work,
        })
    }

    /// Whether `run` can pause for a snapshot: a config phase (a procedure's
    /// own phases cannot be resumed) of a run with a snapshot plan.
    fn can_pause(&self, run: &PhaseRun) -> bool {
        run.index.is_some() && self.snapshots.is_some()
    }

    /// Runs a phase's loop to its end, writing snapshots where it pauses.
    fn go(
        &mut self,
        p: &PhaseConfig,
        mut run: PhaseRun,
        progress: ProgressFn,
    ) -> Result<PhaseResult, SimError> {
        loop {
            let wall = Instant::now();
            let flow = match run.work {
                Work::LayOut { .. } => self.lay_out(p, &mut run, progress),
                Work::Io(_) => self.io(p, &mut run, progress),
            };
            run.wall_seconds += wall.elapsed().as_secs_f64();
            match flow {
                Ok(Flow::Paused) => {
                    let path = self.save_snapshot(&run)?;
                    if self.interrupt.swap(false, Ordering::Relaxed) {
                        self.pending = Some(run);
                        return Err(SimError::Interrupted { snapshot: path });
                    }
                }
                Ok(Flow::Done(end)) => return self.finish(p, run, Ok(end)),
                Err(e) => return self.finish(p, run, Err(e)),
            }
        }
    }

    /// Closes a phase: the drive's death if it wore out, the summary and rows.
    fn finish(
        &mut self,
        p: &PhaseConfig,
        run: PhaseRun,
        outcome: Result<u64, SimError>,
    ) -> Result<PhaseResult, SimError> {
        let PhaseRun {
            start,
            before,
            mut rec,
            mut reads,
            mut writes,
            wall_seconds,
            cuts,
            ..
        } = run;
        if matches!(p.kind, PhaseKind::Io | PhaseKind::Trace) && !p.timed {
            // An untimed phase moves data only: it has no latencies.
            self.drive.tl.enabled = true;
            reads = Latency::new(3);
            writes = Latency::new(3);
        }
        self.drive.plan_cuts(None);
        let power_losses = std::mem::take(&mut self.drive.power_events);
        self.power_losses.extend(power_losses.iter().cloned());
        let mut phase_death = None;
        let end = match outcome {
            Ok(end) => end,
            Err(e) if p.until_dead && e.is_wear_out() => {
                let b = &self.drive.ftl.blocks;
                let m = b.blocks_by_mode();
                let reason = format!(
                    "{e} — at {:.3} TB written by the host, {} blocks retired, usable blocks: \
                     {} SLC, {} MLC, {} TLC, {} QLC",
                    self.drive.ftl.counters.host_write_bytes as f64 / 1e12,
                    b.bad_blocks(),
                    m[0],
                    m[1],
                    m[2],
                    m[3]
                );
                self.death = Some(reason.clone());
                phase_death = Some(reason);
                self.last_issue
            }
            Err(e) => return Err(e),
        };
        self.now = end.max(start);
        let after = self.drive.ftl.counters;
        let free = self.drive.ftl.blocks.total_free();
        rec.row(self.now, after, &Counters::default(), &self.drive.ftl);
        self.run_wall += wall_seconds;
        self.run_reads.add(&reads);
        self.run_writes.add(&writes);
        let kind = match p.kind {
            PhaseKind::Io => "io",
            PhaseKind::Fill => "fill",
            PhaseKind::Trim => "trim",
            PhaseKind::Trace => "trace",
        };
        let trace_skipped = match &run.work {
            Work::Io(st) => match &st.source {
                Source::Trace {
                    replay: Some(r), ..
                } => Some(r.skipped()),
                _ => None,
            },
            Work::LayOut { .. } => None,
        };
        let jobs = match run.work {
            Work::Io(st) => p
                .jobs
                .iter()
                .zip(&st.jobs)
                .map(|(cfg, job)| {
                    JobSummary::new(
                        &cfg.name,
                        &job.counters,
                        &job.reads,
                        &job.writes,
                        job.end - start,
                    )
                })
                .collect(),
            Work::LayOut { .. } => Vec::new(),
        };
        let summary = Summary::new(
            &(after - before),
            SummaryParts {
                name: &p.name,
                kind,
                reads: &reads,
                writes: &writes,
                sim_ns: self.now - start,
                wall_seconds,
                free_blocks: free,
                bad_blocks: self.drive.ftl.blocks.bad_blocks(),
                erase_counts: self.drive.ftl.blocks.erase_count(),
                death: phase_death,
                unit_bytes: self.cfg.geometry.unit_size as u64,
                integrity: self.integrity_counts(),
                trace_skipped,
                power_loss: cuts.then(|| {
                    PowerLossSummary::of(
                        &power_losses,
                        &self.cfg.power_loss_unsafe(),
                        self.now - start,
                    )
                }),
            },
        );
        Ok(PhaseResult {
            summary,
            rows: rec.rows,
            jobs,
            power_losses,
        })
    }

    /// The summary of every phase run so far.
    pub fn run_summary(&self) -> Summary {
        Summary::new(
            &self.drive.ftl.counters,
            SummaryParts {
                name: "total",
                kind: "run",
                reads: &self.run_reads,
                writes: &self.run_writes,
                sim_ns: self.now,
                wall_seconds: self.run_wall,
                free_blocks: self.drive.ftl.blocks.total_free(),
                bad_blocks: self.drive.ftl.blocks.bad_blocks(),
                erase_counts: self.drive.ftl.blocks.erase_count(),
                death: self.death.clone(),
                unit_bytes: self.cfg.geometry.unit_size as u64,
                integrity: self.integrity_counts(),
                trace_skipped: None,
                power_loss: self.drive.ftl.power.is_some().then(|| {
                    PowerLossSummary::of(
                        &self.power_losses,
                        &self.cfg.power_loss_unsafe(),
                        self.now,
                    )
                }),
            },
        )
    }

    fn integrity_counts(&self) -> Option<IntegrityCounts> {
        self.drive.ftl.oracle.as_ref().map(|o| IntegrityCounts {
            stamped: o.stamped,
            checked_reads: o.checked_reads,
        })
    }

    /// Fill and trim phases: each unit of the range once, at memory speed,
    /// in chunks (so that a long fill reports progress and can be interrupted).
    fn lay_out(
        &mut self,
        p: &PhaseConfig,
        run: &mut PhaseRun,
        progress: ProgressFn,
    ) -> Result<Flow, SimError> {
        let can_pause = self.can_pause(run);
        let Work::LayOut { done, end } = &mut run.work else {
            unreachable!("a fill or trim phase")
        };
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
        // On a fresh drive, a helper thread has the OS back the maps ahead of
        // the fill (first-touch page faults cost as much as the fill itself).
        let fresh = self.drive.ftl.counters == Counters::default() && *done == 0;
        let regions = self.drive.ftl.fill_regions(first, units);
        std::thread::scope(|scope| {
            if fill && fresh && units > 1 << 20 {
                scope.spawn(move || memory::populate(&regions));
            }
            let chunk = 1 << 20;
            while *done < units {
                let n = chunk.min(units - *done);
                let at = *done;
                let lpn_of =
                    |i: u64| (first + scatter.as_ref().map_or(at + i, |s| s.map(at + i))) as u32;
                if fill {
                    self.drive.ftl.fill(n, lpn_of, &mut self.drive.tl)?;
                } else {
                    // A trim phase has no cuts: its TRIMs are for good.
                    self.drive.no_cut_before(self.now);
                    for i in 0..n {
                        self.drive.ftl.trim(lpn_of(i), self.now);
                    }
                }
                *done += n;
                if can_pause && self.interrupt.load(Ordering::Relaxed) && *done < units {
                    return Ok(Flow::Paused);
                }
                if self.last_report.elapsed().as_secs_f64() < PROGRESS_EVERY {
                    continue;
                }
                self.last_report = Instant::now();
                let c = self.drive.ftl.counters;
                let pr = Progress {
                    fraction: *done as f64 / units as f64,
                    sim_seconds: self.now as f64 / 1e9,
                    host_write_bytes: c.host_write_bytes,
                    host_read_bytes: c.host_read_bytes,
                    requests: 0,
                    wear_used: self.drive.ftl.blocks.wear_used(),
                    reserve_used: self.drive.ftl.reserve_used(),
                };
                if !progress(&pr) {
                    return Err(SimError::Aborted);
                }
            }
            let c = &mut self.drive.ftl.counters;
            if fill {
                c.fill_bytes += units * unit;
                self.drive.flush();
                self.drive.tl.enabled = true;
            } else {
                c.host_trim_bytes += units * unit;
            }
            Ok(Flow::Done(*end))
        })
    }

    /// An io or trace phase: requests until a stop condition, the trace's
    /// end, or a pause.
    fn io(
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
    fn io_loop(
        &mut self,
        p: &PhaseConfig,
        st: &mut IoState,
        tally: &mut Tally,
        progress: ProgressFn,
    ) -> Result<Flow, SimError> {
        let user = self.cfg.geometry.user_capacity_bytes;
        let unit = self.cfg.geometry.unit_size as u64;
        st.source.reopen(p, user, unit)?;
        let idle_every = p.idle_every.map(|v| v.bytes(user).max(1));
        let start = tally.start;
        // The loop's state in locals (registers), back into `st` where it stops.
        let mut src = std::mem::replace(&mut st.source, Source::Jobs);
        let mut next = st.next;
        let mut t = st.t;
        let mut queue = std::mem::take(&mut st.queue);
        let mut next_idle = st.next_idle;
        let mut arrival = st.arrival;
        macro_rules! stop {
            ($flow:expr) => {{
                st.source = src;
                st.next = next;
                st.t = t;
                st.queue = queue;
                st.next_idle = next_idle;
                st.arrival = arrival;
                return Ok($flow);
            }};
        }
        // Whether the phase is over: a stop condition, or the trace has ended.
        macro_rules! over {
            ($t:expr) => {
                next.is_none() || tally.over($t)
            };
        }

        // Issues the next request at `t`; returns its completion.
        macro_rules! issue {
            ($t:expr) => {{
                let t: u64 = $t;
                let (_, req): (Option<u64>, Request) = next.expect("the caller checked `over!`");
                next = src.next()?;
                if let Some((_, n)) = &next {
                    self.drive.prefetch(n);
                }
                self.last_issue = t;
                let done = self.drive.submit(req, t)?;
                self.tally(tally, &req, t, done, &mut *progress)?;
                done
            }};
        }

        let timed_trace = p.trace.as_ref().is_some_and(|t| t.timed);
        match p.arrival {
            // Each request at its recorded time (scaled), from the phase's start.
            _ if timed_trace => {
                let idle = self.cfg.ftl.idle_threshold_ns;
                while let Some((Some(at), _)) = next {
                    t = t.max(start + at);
                    if over!(t) {
                        break;
                    }
                    if t > tally.end + idle {
                        self.drive.ftl.background_gc(t, &mut self.drive.tl)?;
                    }
                    issue!(t);
                    if tally.pause {
                        stop!(Flow::Paused);
                    }
                }
            }
            Arrival::Closed { queue_depth } => {
                let depth = queue_depth as usize;
                'run: loop {
                    // Fill the queue, then keep it full until a stop or an idle gap.
                    while queue.len() < depth {
                        if over!(t) || tally.issued_bytes >= next_idle {
                            break;
                        }
                        let done = issue!(t);
                        queue.push(Reverse(done));
                        if tally.pause {
                            stop!(Flow::Paused);
                        }
                    }
                    while let Some(Reverse(done)) = queue.pop() {
                        t = done;
                        if !over!(t) && tally.issued_bytes < next_idle {
                            let d = issue!(t);
                            queue.push(Reverse(d));
                            if tally.pause {
                                stop!(Flow::Paused);
                            }
                        }
                    }
                    if over!(t) {
                        break 'run;
                    }
                    // Idle gap: the host waits, background GC works.
                    let idle_start = tally.end.max(self.drive.tl.all_idle_at());
                    t = idle_start + p.idle_duration_ns;
                    self.drive.ftl.background_gc(t, &mut self.drive.tl)?;
                    tally.end = tally.end.max(t);
                    next_idle += idle_every.unwrap_or(u64::MAX);
                }
            }
            Arrival::Open { rate, poisson } => {
                let mean_gap = 1e9 / rate;
                let idle = self.cfg.ftl.idle_threshold_ns;
                while !over!(t) {
                    if tally.issued_bytes >= next_idle {
                        arrival += p.idle_duration_ns as f64;
                        next_idle += idle_every.unwrap_or(u64::MAX);
                    }
                    t = arrival as u64;
                    if t > tally.end + idle {
                        self.drive.ftl.background_gc(t, &mut self.drive.tl)?;
                    }
                    if over!(t) {
                        break;
                    }
                    issue!(t);
                    let gap = if poisson {
                        -mean_gap * (1.0 - st.arrivals.random::<f64>()).ln()
                    } else {
                        mean_gap
                    };
                    arrival += gap;
                    if tally.pause {
                        stop!(Flow::Paused);
                    }
                }
            }
        }
        stop!(Flow::Done(tally.end))
    }

    /// A phase of `[[phase.job]]`s: each job keeps its own queue full, all on
    /// the one drive, until its own stop condition or the phase's. Requests
    /// go to the drive in time order (ties: the earlier job first).
    fn io_jobs(
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
            let req = job.source.next_request();
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

    /// Counts a request issued at `t` and done at `done`: latencies, then
    /// (now and then) time-series rows and progress reports.
    #[inline]
    fn tally(
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
    fn report(&mut self, tally: &mut Tally, t: u64, progress: ProgressFn) -> Result<(), SimError> {
        let elapsed = t - tally.start;
        let rec = &mut *tally.rec;
        if rec.position(elapsed, tally.issued_bytes, tally.issued) >= rec.next_mark {
            let step = match rec.interval {
                Interval::Time(x) | Interval::Bytes(x) | Interval::Requests(x) => x,
            };
            while rec.next_mark <= rec.position(elapsed, tally.issued_bytes, tally.issued) {
                rec.next_mark += step;
            }
            let c = self.drive.ftl.counters;
            rec.row(t, c, &tally.run_start, &self.drive.ftl);
        }
        if tally.issued & 0x3FF == 0 {
            if let Some((every, due)) = tally.snapshot_due {
                // Simulated time reached: the latest completion (a trace's burst
                // of requests at one instant takes the drive a while).
                let at = every.position(t.max(tally.end), &self.drive.ftl.counters);
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
            let c = self.drive.ftl.counters;
            let reserve_used = self.drive.ftl.reserve_used();
            let pr = Progress {
                fraction: if tally.until_dead {
                    reserve_used
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
                wear_used: self.drive.ftl.blocks.wear_used(),
                reserve_used,
            };
            if !progress(&pr) {
                return Err(SimError::Aborted);
            }
        }
        Ok(())
    }
}

impl IoState {
    /// The loop of an io or trace phase before its first request.
    fn new(
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
                source: Generator::new(job, user, unit, job_seed(seed, j)),
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
            None => Source::Synthetic(Generator::new(p, user, unit, seed)),
        };
        let next = source.next()?;
        Ok(IoState {
            issued: 0,
            issued_bytes: 0,
            end: start,
            jobs_fraction: 0.0,
            source,
            next,
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
fn integrity_from_env() -> bool {
    std::env::var("NANDLAB_INTEGRITY").is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
}

/// Where a phase's requests come from. A trace is stored as how far it has
/// been read: a run resumed from a snapshot reads it again to there.
// One per phase, in the state of the request loop: size does not matter,
// an indirection on the per-request path would.
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, Deserialize)]
enum Source {
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
    fn next(&mut self) -> Result<Option<(Option<u64>, Request)>, SimError> {
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

    /// Opens a trace read back from a snapshot again, at the request it had got to.
    fn reopen(&mut self, p: &PhaseConfig, user: u64, unit: u64) -> Result<(), SimError> {
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
/// The workload seed of a phase's job `j` of a phase seeded `seed` (the
/// first job draws as the phase would: one job is the plain phase).
fn job_seed(seed: u64, j: usize) -> u64 {
    if j == 0 {
        seed
    } else {
        derive_seed(seed, "job", j as u64)
    }
}

fn default_interval(p: &PhaseConfig, user: u64) -> Interval {
    if let Some(v) = p.volume {
        Interval::Bytes((v.bytes(user) / ROWS_PER_PHASE).max(1))
    } else if let Some(d) = p.duration_ns {
        Interval::Time((d / ROWS_PER_PHASE).max(1))
    } else if let Some(r) = p.requests {
        Interval::Requests((r / ROWS_PER_PHASE).max(1))
    } else if p.trace.is_some() && !p.until_dead {
        // A trace's length is known only at its end: a row per 1/200 of the drive moved.
        Interval::Bytes((user / ROWS_PER_PHASE).max(1))
    } else {
        Interval::Bytes(user.max(1))
    }
}
