//! The simulator: owns one drive's state across phases and runs each phase's
//! workload on it — closed loop (queue depth) or open loop (arrival rate),
//! with idle gaps for background GC — collecting summaries and time series.

use crate::config::{Arrival, Config, Interval, Pattern, PhaseConfig, PhaseKind};
use crate::drive::Drive;
use crate::ftl::Ftl;
use crate::memory;
use crate::power::{CutPlan, PowerLossEvent, PowerLossSummary};
use crate::stats::{Counters, IntegrityCounts, JobSummary, Latency, Row, Summary, SummaryParts};
use crate::trace::replay::Replay;
use crate::workload::{derive_seed, Generator, Op, Request, Scatter};
use crate::SimError;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
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

const PROGRESS_EVERY: f64 = 0.2;
const ROWS_PER_PHASE: u64 = 200;

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
}

/// Per-phase bookkeeping of the time series.
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
            bad_blocks: blocks.bad_blocks,
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
            usable_bytes: blocks.pool_capacity.iter().sum::<u64>() * unit,
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
}

impl Tally<'_> {
    fn over(&self, t: u64) -> bool {
        self.stop.reached(t, self.issued_bytes, self.issued)
    }
}

/// One `[[phase.job]]` of a phase being run: its workload, stop and results.
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

impl Simulator {
    /// A pristine drive for `cfg`, if its state fits in the memory available
    /// (else an error saying how much it needs, before anything is allocated).
    pub fn try_new(cfg: Config) -> Result<Simulator, SimError> {
        let integrity = cfg.checks.integrity || integrity_from_env();
        let needed = memory::state_bytes(&cfg.geometry, integrity, cfg.has_power_loss());
        match memory::available_bytes() {
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

    /// Runs the config's phase `index`.
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
        self.run(&p, progress)
    }

    /// Runs every phase of the config in order.
    pub fn run_all(&mut self, progress: ProgressFn) -> Result<Vec<PhaseResult>, SimError> {
        (0..self.cfg.phases.len())
            .map(|i| self.run_phase(i, &mut *progress))
            .collect()
    }

    /// Runs any phase (for procedures that build their own) on this drive.
    pub fn run(&mut self, p: &PhaseConfig, progress: ProgressFn) -> Result<PhaseResult, SimError> {
        let wall = Instant::now();
        let index = self.phases_run;
        self.phases_run += 1;
        let seed = derive_seed(self.cfg.seed, "workload", index);
        let before = self.drive.ftl.counters;
        let start = self.now;
        let user = self.cfg.geometry.user_capacity_bytes;
        let interval = p.interval.unwrap_or_else(|| default_interval(p, user));
        let mut rec = Recorder::new(index as u32, interval, start, before);
        let mut reads = Latency::new(3);
        let mut writes = Latency::new(3);
        let mut jobs = Vec::new();
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
        let outcome = match p.kind {
            PhaseKind::Fill | PhaseKind::Trim => self.lay_out(p, seed, progress),
            PhaseKind::Io | PhaseKind::Trace if !p.timed => {
                self.drive.tl.enabled = false;
                let (mut r, mut w) = (Latency::new(2), Latency::new(2));
                let end = self.io(
                    p, seed, start, &mut rec, &mut r, &mut w, progress, &mut jobs,
                );
                self.drive.tl.enabled = true;
                end
            }
            PhaseKind::Io | PhaseKind::Trace => self.io(
                p,
                seed,
                start,
                &mut rec,
                &mut reads,
                &mut writes,
                progress,
                &mut jobs,
            ),
        };
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
                    b.bad_blocks,
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
        let wall_seconds = wall.elapsed().as_secs_f64();
        self.run_wall += wall_seconds;
        self.run_reads.add(&reads);
        self.run_writes.add(&writes);
        let kind = match p.kind {
            PhaseKind::Io => "io",
            PhaseKind::Fill => "fill",
            PhaseKind::Trim => "trim",
            PhaseKind::Trace => "trace",
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
                bad_blocks: self.drive.ftl.blocks.bad_blocks,
                erase_counts: &self.drive.ftl.blocks.erase_count,
                death: phase_death,
                unit_bytes: self.cfg.geometry.unit_size as u64,
                integrity: self.integrity_counts(),
                power_loss: cuts
                    .then(|| PowerLossSummary::of(&power_losses, &self.cfg.power_loss_unsafe())),
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
                bad_blocks: self.drive.ftl.blocks.bad_blocks,
                erase_counts: &self.drive.ftl.blocks.erase_count,
                death: self.death.clone(),
                unit_bytes: self.cfg.geometry.unit_size as u64,
                integrity: self.integrity_counts(),
                power_loss: self.drive.ftl.power.is_some().then(|| {
                    PowerLossSummary::of(&self.power_losses, &self.cfg.power_loss_unsafe())
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

    /// Fill and trim phases: each unit of the range once, at memory speed.
    fn lay_out(
        &mut self,
        p: &PhaseConfig,
        seed: u64,
        progress: ProgressFn,
    ) -> Result<u64, SimError> {
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
            .then(|| Scatter::new(span, derive_seed(seed, "fill", 0)));
        let fill = p.kind == PhaseKind::Fill;
        let mut end = self.now;
        if fill {
            end = end.max(self.drive.flush());
            self.drive.tl.enabled = false;
        }
        // On a fresh drive, a helper thread has the OS back the maps ahead of
        // the fill (first-touch page faults cost as much as the fill itself).
        let fresh = self.drive.ftl.counters == Counters::default();
        let regions = self.drive.ftl.fill_regions(first, units);
        std::thread::scope(|scope| {
            if fill && fresh && units > 1 << 20 {
                scope.spawn(move || memory::populate(&regions));
            }
            self.lay_out_units(fill, first, units, scatter.as_ref(), progress)
        })?;
        Ok(end)
    }

    fn lay_out_units(
        &mut self,
        fill: bool,
        first: u64,
        units: u64,
        scatter: Option<&Scatter>,
        progress: ProgressFn,
    ) -> Result<(), SimError> {
        let unit = self.cfg.geometry.unit_size as u64;
        // In chunks, so that a long fill reports progress and can be interrupted.
        let chunk = 1 << 20;
        let mut last_report = Instant::now();
        let mut result = Ok(());
        let mut done = 0;
        while done < units {
            let n = chunk.min(units - done);
            let lpn_of =
                |i: u64| (first + scatter.as_ref().map_or(done + i, |s| s.map(done + i))) as u32;
            if fill {
                if let Err(e) = self.drive.ftl.fill(n, lpn_of, &mut self.drive.tl) {
                    result = Err(e);
                    break;
                }
            } else {
                for i in 0..n {
                    self.drive.ftl.trim(lpn_of(i), self.now);
                }
            }
            done += n;
            if last_report.elapsed().as_secs_f64() < PROGRESS_EVERY {
                continue;
            }
            last_report = Instant::now();
            let c = self.drive.ftl.counters;
            let pr = Progress {
                fraction: done as f64 / units as f64,
                sim_seconds: self.now as f64 / 1e9,
                host_write_bytes: c.host_write_bytes,
                host_read_bytes: c.host_read_bytes,
                requests: 0,
                wear_used: self.drive.ftl.blocks.wear_used(),
                reserve_used: self.drive.ftl.reserve_used(),
            };
            if !progress(&pr) {
                result = Err(SimError::Aborted);
                break;
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
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn io(
        &mut self,
        p: &PhaseConfig,
        seed: u64,
        start: u64,
        rec: &mut Recorder,
        reads: &mut Latency,
        writes: &mut Latency,
        progress: ProgressFn,
        jobs: &mut Vec<JobSummary>,
    ) -> Result<u64, SimError> {
        let user = self.cfg.geometry.user_capacity_bytes;
        let unit = self.cfg.geometry.unit_size as u64;
        let mut tally = Tally {
            start,
            stop: Stop::of(p, start, user),
            until_dead: p.until_dead,
            issued: 0,
            issued_bytes: 0,
            end: start,
            last_report: Instant::now(),
            run_start: Counters::default(),
            jobs_fraction: 0.0,
            rec,
            reads,
            writes,
        };
        if !p.jobs.is_empty() {
            return self.io_jobs(p, seed, &mut tally, progress, jobs);
        }
        let mut src = match &p.trace {
            Some(t) => Source::Trace(Replay::open(t, user, unit)?),
            None => Source::Synthetic(Generator::new(p, user, unit, seed)),
        };
        let idle_every = p.idle_every.map(|v| v.bytes(user).max(1));
        let mut next_idle = idle_every.unwrap_or(u64::MAX);
        let mut next = src.next()?;
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
                self.tally(&mut tally, &req, t, done, &mut *progress)?;
                done
            }};
        }

        let timed_trace = p.trace.as_ref().is_some_and(|t| t.timed);
        match p.arrival {
            // Each request at its recorded time (scaled), from the phase's start.
            _ if timed_trace => {
                let idle = self.cfg.ftl.idle_threshold_ns;
                let mut t = start;
                while let Some((Some(at), _)) = next {
                    t = t.max(start + at);
                    if over!(t) {
                        break;
                    }
                    if t > tally.end + idle {
                        self.drive.ftl.background_gc(t, &mut self.drive.tl)?;
                    }
                    issue!(t);
                }
            }
            Arrival::Closed { queue_depth } => {
                let mut queue: BinaryHeap<Reverse<u64>> =
                    BinaryHeap::with_capacity(queue_depth as usize);
                let mut t = start;
                'run: loop {
                    // Fill the queue, then keep it full until a stop or an idle gap.
                    for _ in 0..queue_depth {
                        if over!(t) || tally.issued_bytes >= next_idle {
                            break;
                        }
                        let done = issue!(t);
                        queue.push(Reverse(done));
                    }
                    while let Some(Reverse(done)) = queue.pop() {
                        t = done;
                        if !over!(t) && tally.issued_bytes < next_idle {
                            let d = issue!(t);
                            queue.push(Reverse(d));
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
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(derive_seed(seed, "arrivals", 0));
                let mean_gap = 1e9 / rate;
                let mut t = start;
                let mut arrival = start as f64;
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
                        -mean_gap * (1.0 - rng.random::<f64>()).ln()
                    } else {
                        mean_gap
                    };
                    arrival += gap;
                }
            }
        }
        Ok(tally.end)
    }

    /// A phase of `[[phase.job]]`s: each job keeps its own queue full, all on
    /// the one drive, until its own stop condition or the phase's. Requests
    /// go to the drive in time order (ties: the earlier job first).
    fn io_jobs(
        &mut self,
        p: &PhaseConfig,
        seed: u64,
        tally: &mut Tally,
        progress: ProgressFn,
        summaries: &mut Vec<JobSummary>,
    ) -> Result<u64, SimError> {
        let user = self.cfg.geometry.user_capacity_bytes;
        let unit = self.cfg.geometry.unit_size as u64;
        let start = tally.start;
        // The first job draws as the phase would: one job is the plain phase.
        let job_seed = |j: u64| {
            if j == 0 {
                seed
            } else {
                derive_seed(seed, "job", j)
            }
        };
        let mut jobs: Vec<JobRun> = p
            .jobs
            .iter()
            .enumerate()
            .map(|(j, job)| JobRun {
                source: Generator::new(job, user, unit, job_seed(j as u64)),
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
        // A free queue slot of a job, by the time it frees.
        let mut slots: BinaryHeap<Reverse<(u64, usize)>> = jobs
            .iter()
            .enumerate()
            .flat_map(|(j, job)| (0..job.queue_depth).map(move |_| Reverse((start, j))))
            .collect();
        while let Some(Reverse((t, j))) = slots.pop() {
            let job = &mut jobs[j];
            if tally.over(t) {
                break;
            }
            if job.stop.reached(t, job.issued_bytes, job.issued) {
                continue;
            }
            let req = job.source.next_request();
            self.last_issue = t;
            let done = self.drive.submit(req, t)?;
            let job = &mut jobs[j];
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
            slots.push(Reverse((done, j)));
            if tally.issued & 0x3FF == 0x3FF && tally.stop.is_none() {
                // The phase ends with its last job: report the slowest one.
                let f = |job: &JobRun| job.stop.fraction(start, t, job.issued_bytes, job.issued);
                tally.jobs_fraction = jobs.iter().map(f).fold(1.0, f64::min);
            }
            self.tally(tally, &req, t, done, &mut *progress)?;
        }
        summaries.extend(p.jobs.iter().zip(&jobs).map(|(cfg, job)| {
            JobSummary::new(
                &cfg.name,
                &job.counters,
                &job.reads,
                &job.writes,
                job.end - start,
            )
        }));
        Ok(tally.end)
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

/// `NANDLAB_INTEGRITY=1` (or true, yes): the integrity oracle on in every run
/// (the test suites set it).
fn integrity_from_env() -> bool {
    std::env::var("NANDLAB_INTEGRITY").is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
}

/// Where a phase's requests come from.
// One per phase, on the stack of the request loop: size does not matter,
// an indirection on the per-request path would.
#[allow(clippy::large_enum_variant)]
enum Source {
    Synthetic(Generator),
    Trace(Replay),
}

impl Source {
    /// The next request (with its recorded time from a trace), or None when a trace has ended.
    #[inline]
    fn next(&mut self) -> Result<Option<(Option<u64>, Request)>, SimError> {
        match self {
            Source::Synthetic(g) => Ok(Some((None, g.next_request()))),
            Source::Trace(r) => Ok(r.next_request()?.map(|(t, req)| (Some(t), req))),
        }
    }
}

/// About 200 rows per phase, on the axis of its first stop condition; a run
/// until death takes a row every drive write (the user capacity moved).
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
