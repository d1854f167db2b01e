//! The simulator: owns one drive's state across phases and runs each phase's
//! workload on it — closed loop (queue depth) or open loop (arrival rate),
//! with idle gaps for background GC — collecting summaries and time series.

use crate::config::{Config, PhaseConfig, PhaseKind};
use crate::drive::Drive;
use crate::media::errors::acceleration;
use crate::power::CutPlan;
use crate::seed::derive_seed;
use crate::stats::power_loss::{PowerLossEvent, PowerLossSummary};
use crate::stats::{
    Activity, Counters, EnergySummary, ErrorSummary, ErrorTally, IntegrityCounts, JobSummary,
    Latency, LatencyBins, Rates, Row, Summary, SummaryParts, Traffic,
};
use crate::{Death, SimError};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod footprint;
mod loaded;
mod loops;
mod progress;
mod recorder;
mod served;
mod snapshot;
pub use snapshot::{
    create_partial, open_file as open_snapshot_file, writable as snapshot_writable, ConfigText,
    Every, SnapshotPlan, FORMAT as SNAPSHOT_FORMAT, MAGIC as SNAPSHOT_MAGIC,
};

pub use crate::stats::ROWS_PER_PHASE;
use progress::PROGRESS_EVERY;
pub use progress::{Progress, ProgressFn};
pub use served::Served;

use loops::{IoState, Source, Work};
use recorder::{default_interval, Recorder};

/// How far a call into a phase's loop got.
enum Flow {
    /// The phase is over; its last completion.
    Done(u64),
    /// Stopped at a sync point for a snapshot.
    Paused,
}

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
    /// Host traffic of the phases that took simulated time: what the run's
    /// rates count (a fill or an untimed phase moves data in no time).
    timed: Traffic,
    phases_run: u64,
    /// Why the drive died, once it has.
    death: Option<Death>,
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
    /// Sequential fills of a drive that maps nothing may be laid out as
    /// arithmetic (see [`Simulator::fill_unit_by_unit`]).
    layouts: bool,
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
    /// The error model's tallies at the phase's start (with `[device.errors]`).
    errors_before: Option<ErrorTally>,
    /// The drive's activity at the phase's start (energy).
    activity_before: Activity,
    rec: Recorder,
    reads: Latency,
    writes: Latency,
    /// Wall time the phase has run so far.
    wall_seconds: f64,
    cuts: bool,
    work: Work,
}

impl Simulator {
    /// A pristine drive for `cfg`, if its state fits in the memory available
    /// (else an error saying how much it needs, before anything is allocated).
    pub fn try_new(cfg: Config) -> Result<Simulator, SimError> {
        let integrity = cfg.checks.integrity || integrity_from_env();
        let needed = footprint::state_bytes(&cfg, integrity);
        match footprint::available_bytes()? {
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
            drive.enable_oracle();
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
            timed: Traffic::default(),
            phases_run: 0,
            death: None,
            last_issue: 0,
            power_losses: Vec::new(),
            snapshots: None,
            next_snapshot: 0,
            pending: None,
            interrupt: Arc::new(AtomicBool::new(false)),
            last_report: Instant::now(),
            layouts: true,
        }
    }

    /// Fills every unit one by one, as the fast layout of a sequential fill
    /// stands for (to check that it gives the same results).
    pub fn fill_unit_by_unit(&mut self) {
        self.layouts = false;
    }

    pub fn config(&self) -> &Config {
        &self.cfg
    }

    pub fn drive(&self) -> &Drive {
        &self.drive
    }

    /// JESD218's UBER of reading the whole drive back after it was written
    /// and powered off `hours` at `temperature_c` (on the error model's
    /// Arrhenius clock), every block at the cycles `[device.wear] initial`
    /// gives a nominal block, expected over the blocks' endurance spread as
    /// the median drive of this size holds it (see `ReadErrors::expected_uber`);
    /// None without an error model.
    pub fn expected_uber(&self, hours: f64, temperature_c: f64) -> Option<f64> {
        let errors = self.drive.errors()?;
        let settings = self.cfg.device.errors.as_ref()?;
        let days = hours / 24.0
            * acceleration(temperature_c, settings.reference_c, settings.activation_ev);
        let wear = &self.cfg.device.wear;
        let cell = self.cfg.geometry.cell;
        Some(errors.expected_uber(
            cell.bits(),
            wear.initial * wear.rated[cell.index()],
            days,
            &wear.spread,
            wear.conditions.endurance_factor(),
            self.drive.erase_counts().len() as u32,
        ))
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
        let p = self.phase(index)?;
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

    /// The config's phase `index`.
    fn phase(&self, index: usize) -> Result<PhaseConfig, SimError> {
        self.cfg
            .phases
            .get(index)
            .cloned()
            .ok_or(SimError::NoSuchPhase {
                index,
                phases: self.cfg.phases.len(),
            })
    }

    /// Runs every phase of the config in order, up to the one the drive dies
    /// in (its summary's `death` says so; the phases after it are not run).
    pub fn run_all(&mut self, progress: ProgressFn) -> Result<Vec<PhaseResult>, SimError> {
        let mut results = Vec::new();
        for i in 0..self.cfg.phases.len() {
            let result = self.run_phase(i, &mut *progress)?;
            let died = result.summary.death.is_some();
            results.push(result);
            if died {
                break;
            }
        }
        Ok(results)
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
        // Due at once: a phase's first report comes at its first check (its first 1,024 requests or
        // fill chunk), not a wall-clock interval in, so a caller hears of every phase however fast.
        self.last_report = Instant::now()
            .checked_sub(Duration::from_secs_f64(2.0 * PROGRESS_EVERY))
            .unwrap_or_else(Instant::now);
        let seed = derive_seed(self.cfg.seed, "workload", ordinal);
        if p.drain {
            let flushed = self.drive.flush();
            self.now = self.now.max(flushed).max(self.drive.all_idle_at());
        }
        let before = self.drive.counters();
        let start = self.now;
        let user = self.cfg.geometry.user_capacity_bytes;
        let unit = self.cfg.geometry.unit_size as u64;
        let interval = p.interval.unwrap_or_else(|| default_interval(p, user));
        self.drive.set_data(&p.data);
        let temperature = p
            .temperature_c
            .unwrap_or(self.cfg.device.wear.conditions.temperature_c);
        let errors_before = self.drive.errors_mut().map(|e| {
            e.set_temperature(start, temperature);
            e.tally()
        });
        if let Some(death) = &self.death {
            return Err(SimError::Dead {
                reason: death.reason.clone(),
            });
        }
        let cuts = !p.power_loss_ns.is_empty() || p.power_loss_every_ns.is_some();
        if cuts && !self.drive.has_power_model() {
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
            PhaseKind::PowerOff => {
                let ns = p
                    .duration_ns
                    .expect("validated: a power-off phase has a duration");
                if let Some(e) = self.drive.errors_mut() {
                    e.bake(ns, temperature);
                }
                Work::LayOut {
                    done: 0,
                    end: start,
                }
            }
            PhaseKind::Fill | PhaseKind::Trim => {
                let mut end = self.now;
                if p.kind == PhaseKind::Fill {
                    end = end.max(self.drive.flush());
                    self.drive.set_timed(false);
                }
                Work::LayOut { done: 0, end }
            }
            PhaseKind::Io | PhaseKind::Trace => {
                if !p.timed {
                    self.drive.set_timed(false);
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
            errors_before,
            activity_before: self.drive.activity(),
            rec: Recorder::new(
                ordinal as u32,
                interval,
                start,
                before,
                &self.drive,
                self.cfg.device.energy,
            ),
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
            errors_before,
            activity_before,
            mut rec,
            mut reads,
            mut writes,
            wall_seconds,
            cuts,
            ..
        } = run;
        if matches!(p.kind, PhaseKind::Io | PhaseKind::Trace) && !p.timed {
            // An untimed phase moves data only: it has no latencies.
            self.drive.set_timed(true);
            reads = Latency::new(3);
            writes = Latency::new(3);
        }
        self.drive.plan_cuts(None);
        let power_losses = std::mem::take(&mut self.drive.power_events);
        self.power_losses.extend(power_losses.iter().cloned());
        let mut phase_death = None;
        let end = match outcome {
            Ok(end) => end,
            // A drive's death is the phase's outcome, whatever its stop: the
            // phase ends there, and its summary says why.
            Err(e) if e.is_wear_out() => {
                let cause = e.death_cause().expect("a wear-out has a cause");
                let m = self.drive.blocks_by_mode();
                let reason = format!(
                    "{e} — at {:.3} TB written by the host, {} blocks retired, usable blocks: \
                     {} SLC, {} MLC, {} TLC, {} QLC",
                    self.drive.counters().host_write_bytes as f64 / 1e12,
                    self.drive.bad_blocks(),
                    m[0],
                    m[1],
                    m[2],
                    m[3]
                );
                let death = Death { cause, reason };
                self.death = Some(death.clone());
                phase_death = Some(death);
                self.last_issue
            }
            Err(e) => return Err(e),
        };
        self.now = end.max(start);
        let after = self.drive.counters();
        let free = self.drive.free_blocks();
        rec.row(self.now, after, &Counters::default(), &self.drive);
        self.run_wall += wall_seconds;
        self.run_reads.add(&reads);
        self.run_writes.add(&writes);
        let kind = match p.kind {
            PhaseKind::Io => "io",
            PhaseKind::Fill => "fill",
            PhaseKind::Trim => "trim",
            PhaseKind::Trace => "trace",
            PhaseKind::PowerOff => "power-off",
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
                .map(|(cfg, job)| JobSummary {
                    latency_bins: p
                        .latency_bins
                        .then(|| LatencyBins::of(&job.reads, &job.writes)),
                    ..JobSummary::new(
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
        let counters = after - before;
        if self.now > start {
            self.timed += Traffic::of(&counters);
        }
        let energy = self.energy_summary(&activity_before, self.now - start, counters.requests());
        let summary = Summary::new(
            &counters,
            SummaryParts {
                name: &p.name,
                kind,
                reads: &reads,
                writes: &writes,
                sim_ns: self.now - start,
                wall_seconds,
                free_blocks: free,
                bad_blocks: self.drive.bad_blocks(),
                erase_counts: self.drive.erase_counts(),
                death: phase_death,
                capacity_short_since_bytes: self.drive.capacity_short_since_bytes(),
                capacity_share: self.capacity_share(),
                unit_bytes: self.cfg.geometry.unit_size as u64,
                integrity: self.integrity_counts(),
                errors: self.error_summary(errors_before.as_ref()),
                energy,
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
        let summary = Summary {
            latency_bins: p.latency_bins.then(|| LatencyBins::of(&reads, &writes)),
            ..summary
        };
        Ok(PhaseResult {
            summary,
            rows: rec.rows,
            jobs,
            power_losses,
        })
    }

    /// The drive's usable flash over its advertised capacity, 1 at most.
    fn capacity_share(&self) -> f64 {
        let usable = self.drive.usable_units();
        let bytes = usable as f64 * self.cfg.geometry.unit_size as f64;
        (bytes / self.cfg.geometry.user_capacity_bytes as f64).min(1.0)
    }

    /// The summary of every phase run so far.
    pub fn run_summary(&self) -> Summary {
        let counters = self.drive.counters();
        // Untimed phases draw nothing: IOPS per watt counts the timed requests.
        let energy = self.energy_summary(&Activity::default(), self.now, self.timed.requests);
        let summary = Summary::new(
            &counters,
            SummaryParts {
                name: "total",
                kind: "run",
                reads: &self.run_reads,
                writes: &self.run_writes,
                sim_ns: self.now,
                wall_seconds: self.run_wall,
                free_blocks: self.drive.free_blocks(),
                bad_blocks: self.drive.bad_blocks(),
                erase_counts: self.drive.erase_counts(),
                death: self.death.clone(),
                capacity_short_since_bytes: self.drive.capacity_short_since_bytes(),
                capacity_share: self.capacity_share(),
                unit_bytes: self.cfg.geometry.unit_size as u64,
                integrity: self.integrity_counts(),
                errors: self.error_summary(Some(&ErrorTally::default())),
                energy,
                trace_skipped: None,
                power_loss: self.drive.has_power_model().then(|| {
                    PowerLossSummary::of(
                        &self.power_losses,
                        &self.cfg.power_loss_unsafe(),
                        self.now,
                    )
                }),
            },
        );
        Summary {
            rates: Rates::of(self.timed, self.now as f64 / 1e9),
            ..summary
        }
    }

    /// What the drive drew since `before`, over `ns` of simulated time with
    /// `requests` host commands.
    fn energy_summary(&self, before: &Activity, ns: u64, requests: u64) -> EnergySummary {
        let since = self.drive.activity().since(before);
        since.summary(&self.cfg.device.energy, ns as f64 * 1e-9, requests)
    }

    /// The error model's figures since `before` (None without a model).
    fn error_summary(&self, before: Option<&ErrorTally>) -> Option<ErrorSummary> {
        let e = self.drive.errors()?;
        let target = self.cfg.device.errors.as_ref()?.uber_target;
        Some(e.tally().since(before?).summary(target))
    }

    fn integrity_counts(&self) -> Option<IntegrityCounts> {
        self.drive.integrity_counts()
    }
}

fn integrity_from_env() -> bool {
    std::env::var("NANDLAB_INTEGRITY").is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
}
