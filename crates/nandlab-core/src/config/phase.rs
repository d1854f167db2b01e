//! `[[phase]]`: one step of an experiment — synthetic I/O, a fill, a TRIM or
//! a trace replay — and what stops it, how requests arrive, idle gaps, power
//! cuts and whether simulated time passes. Its requests are `requests.rs`'s,
//! its jobs `jobs.rs`'s, its trace keys `replay.rs`'s.

use super::keyword::{Keywords, Meaning::Is};
use super::raw::{RawPhase, RawVolume};
use super::requests::{self, Requests};
use super::stats::{self, Interval};
use super::values::{err, shown, volume, Volume};
use super::{jobs, replay, ConfigError};
use crate::geometry::Geometry;
use crate::host::trace::replay::ReplayConfig;
use crate::host::workload::{Distribution, Pattern, Stream};
use crate::media::wear::DataPattern;
use crate::units::{human_bytes, MAX_DURATION_NS};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseKind {
    /// Host I/O through the whole drive model.
    Io,
    /// Lay out data directly at memory speed (MQSim-style preconditioning).
    Fill,
    /// TRIM a part of the address space at once.
    Trim,
    /// Replay a block I/O trace recorded on a real system.
    Trace,
    /// The drive sits powered off for `duration` at `temperature_c`: its
    /// data ages on the retention clock; nothing runs and no simulated time
    /// passes.
    #[serde(rename = "power-off")]
    PowerOff,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Keep `queue_depth` requests outstanding, as fast as the drive accepts.
    Closed { queue_depth: u32 },
    /// Requests arrive at `rate` per second (Poisson or evenly spaced).
    Open { rate: f64, poisson: bool },
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseConfig {
    pub name: String,
    pub kind: PhaseKind,
    pub pattern: Pattern,
    pub distribution: Distribution,
    pub read_fraction: f64,
    pub trim_fraction: f64,
    /// The largest request; with `block_sizes`, each request draws its size.
    pub block_size: u32,
    /// (bytes, weight) of each request size, fio's bssplit (empty: always `block_size`).
    pub block_sizes: Vec<(u32, u32)>,
    pub align: u32,
    pub working_set: f64,
    pub working_set_offset: f64,
    pub arrival: Arrival,
    pub idle_every: Option<Volume>,
    pub idle_duration_ns: u64,
    pub volume: Option<Volume>,
    pub requests: Option<u64>,
    pub duration_ns: Option<u64>,
    /// None: about 200 rows per phase.
    pub interval: Option<Interval>,
    /// False: run at memory speed, no simulated time passes (ageing a drive).
    pub timed: bool,
    /// The phase starts once the drive is idle: the write buffer programmed
    /// and every die, channel and the link done with what is booked.
    pub drain: bool,
    /// The summary carries the latency histograms (fio's json+ `bins`).
    pub latency_bins: bool,
    /// What the phase writes (its program-time factor and MLC state shares).
    pub data: DataPattern,
    /// Run until the drive wears out (`until = "dead"`); death ends the phase, not the run.
    pub until_dead: bool,
    /// Power cuts at these times from the phase's start, ns (sorted).
    pub power_loss_ns: Vec<u64>,
    /// Power cuts at random, this far apart on average (exponential gaps).
    pub power_loss_every_ns: Option<u64>,
    /// `pattern = "shuffle"`: phases with the same order seed visit positions
    /// in the same order (None: an order of the phase's own).
    pub order_seed: Option<u64>,
    /// `kind = "trace"`: the trace and how to replay it.
    pub trace: Option<ReplayConfig>,
    /// `[[phase.job]]`: workloads that run together, each with its own queue
    /// depth, stop condition and results (empty: the phase is one workload).
    pub jobs: Vec<PhaseConfig>,
    /// The drive's temperature in this phase, °C (None: `[device.wear]
    /// temperature_c`): retention ages on its Arrhenius clock.
    pub temperature_c: Option<f64>,
}

impl PhaseConfig {
    /// Its workload, as the request generator takes it.
    pub fn stream(&self) -> Stream<'_> {
        Stream {
            pattern: self.pattern,
            distribution: self.distribution,
            order_seed: self.order_seed,
            read_fraction: self.read_fraction,
            trim_fraction: self.trim_fraction,
            block_size: self.block_size,
            block_sizes: &self.block_sizes,
            align: self.align,
            working_set: self.working_set,
            working_set_offset: self.working_set_offset,
        }
    }

    /// Whether the phase stops by itself (else a trace's end or its phase stops it).
    pub fn has_stop(&self) -> bool {
        self.volume.is_some()
            || self.requests.is_some()
            || self.duration_ns.is_some()
            || self.until_dead
    }
}

/// A phase's `kind`.
pub(super) const PHASE_KIND: Keywords<PhaseKind> = Keywords::new(
    "phase kind",
    &[
        ("io", Is(PhaseKind::Io)),
        ("fill", Is(PhaseKind::Fill)),
        ("trim", Is(PhaseKind::Trim)),
        ("trace", Is(PhaseKind::Trace)),
        ("power-off", Is(PhaseKind::PowerOff)),
    ],
);

/// A phase's `arrival` process (open loop): poisson or not.
const ARRIVAL: Keywords<bool> = Keywords::new(
    "arrival process",
    &[("poisson", Is(true)), ("fixed", Is(false))],
);

/// A phase's `until`: whether it runs until the drive dies.
const UNTIL: Keywords<bool> = Keywords::listed(true, &[("dead", Is(true))]);

/// Where a phase's (or a job's) keys are, for messages: `[[phase]] #2`,
/// `[[phase]] #2 job #1`.
#[derive(Clone, Copy)]
pub(super) struct Label<'a>(pub &'a str);

impl Label<'_> {
    /// The location of `key`.
    pub fn key(self, key: &str) -> String {
        format!("{} {key}", self.0)
    }

    /// The error at `key`.
    pub fn err<T>(self, key: &str, msg: impl Into<String>) -> Result<T, ConfigError> {
        err(&self.key(key), msg)
    }
}

/// The most characters of a phase's or a job's name: it heads tables and
/// labels figures (a 5 MB name took minutes to draw).
pub const MAX_NAME_CHARS: usize = 256;

/// A phase's or job's `name` (at `key`), or `default` without one.
pub(super) fn named(
    key: &str,
    name: Option<String>,
    default: impl FnOnce() -> String,
) -> Result<String, ConfigError> {
    match name {
        Some(n) if n.chars().count() > MAX_NAME_CHARS => err(
            key,
            format!(
                "at most {MAX_NAME_CHARS} characters (it heads tables and labels figures), found {}",
                n.chars().count()
            ),
        ),
        Some(n) => Ok(n),
        None => Ok(default()),
    }
}

/// A phase (or a job of one): `label` names it in errors, `number` names it
/// by default (`phase-N`); `default_interval` is `[stats] interval`.
pub(super) fn validate(
    label: &str,
    number: usize,
    mut p: RawPhase,
    g: &Geometry,
    default_interval: Option<Interval>,
) -> Result<PhaseConfig, ConfigError> {
    let at = Label(label);
    let kind = PHASE_KIND.parse_or(&at.key("kind"), p.kind.as_deref(), PhaseKind::Io)?;
    let trace = replay::validate(&p, kind, at)?;
    let jobs = jobs::validate(at, kind, p.job.take(), g)?;
    let name = named(&at.key("name"), p.name.take(), || format!("phase-{number}"))?;
    let requests = requests::validate(&p, kind, g, at)?;
    let arrival = arrival(&p, at)?;
    let volume_of =
        |key: &str, v: Option<RawVolume>| v.map(|v| volume(&at.key(key), v, g)).transpose();
    let volume = volume_of("volume", p.volume)?;
    let idle_every = volume_of("idle_every", p.idle_every)?;
    let idle_duration_ns = p.idle_duration.map(|d| d.0).unwrap_or(0);
    if idle_every.is_some() != (idle_duration_ns > 0) {
        return at.err(
            "idle_every",
            "idle gaps need both idle_every (a volume) and idle_duration (a time above 0)",
        );
    }
    // A trace ends by itself, unless it loops; a phase of jobs when they all stop.
    let ends_by_itself = match kind {
        PhaseKind::Trace => !trace.as_ref().is_some_and(|t| t.looping),
        _ => !jobs.is_empty() && jobs.iter().all(PhaseConfig::has_stop),
    };
    let stop = stop(&p, kind, volume, &requests, ends_by_itself, g, at)?;
    let interval = match p.interval {
        Some(i) => Some(stats::interval(&at.key("interval"), i)?),
        None => default_interval,
    };
    let data = requests::data_pattern(&p, at)?;
    let timed = p.timed.unwrap_or(true);
    let (power_loss_ns, power_loss_every_ns) = power_cuts(&p, kind, timed, at)?;
    if !timed {
        untimed(&p, interval, at)?;
    }
    let temperature_c = match p.temperature_c {
        Some(t) if !(t.is_finite() && (-40.0..=125.0).contains(&t)) => {
            return at.err(
                "temperature_c",
                format!("expected -40 to 125 °C, found {}", shown(t)),
            )
        }
        t => t,
    };
    Ok(PhaseConfig {
        name,
        kind,
        pattern: requests.pattern,
        distribution: requests.distribution,
        read_fraction: requests.read_fraction,
        trim_fraction: requests.trim_fraction,
        block_size: requests.block_size as u32,
        block_sizes: requests.block_sizes,
        align: requests.align as u32,
        working_set: requests.working_set,
        working_set_offset: requests.working_set_offset,
        arrival,
        idle_every,
        idle_duration_ns,
        volume: stop.volume,
        requests: p.requests,
        duration_ns: stop.duration_ns,
        interval,
        timed,
        drain: p.drain.unwrap_or(false),
        latency_bins: p.latency_bins.unwrap_or(false),
        trace,
        data,
        until_dead: stop.until_dead,
        power_loss_ns,
        power_loss_every_ns,
        order_seed: p.order_seed,
        jobs,
        temperature_c,
    })
}

/// `queue_depth` (closed loop) or `rate` and `arrival` (open loop).
fn arrival(p: &RawPhase, at: Label) -> Result<Arrival, ConfigError> {
    Ok(match (p.queue_depth, p.rate) {
        (Some(_), Some(_)) => {
            return at.err(
                "rate",
                "give either queue_depth (closed loop) or rate (open loop), not both",
            )
        }
        (Some(0), None) => return at.err("queue_depth", "must be at least 1"),
        (Some(q), None) => {
            if q > 65_536 {
                return at.err("queue_depth", format!("expected at most 65536, found {q}"));
            }
            Arrival::Closed { queue_depth: q }
        }
        (None, Some(r)) => {
            // The mean gap between arrivals is a time the simulated clock must hold.
            if !(r.is_finite() && 1e9 / r <= MAX_DURATION_NS as f64) {
                return at.err(
                    "rate",
                    format!(
                        "expected requests per second above 0, at least one per 146 years (2.2e-10), found {}",
                        shown(r)
                    ),
                );
            }
            let poisson = ARRIVAL.parse_or(&at.key("arrival"), p.arrival.as_deref(), true)?;
            Arrival::Open { rate: r, poisson }
        }
        (None, None) => Arrival::Closed { queue_depth: 1 },
    })
}

/// What stops a phase: `volume` (a fill's or trim's by default the working
/// set), `duration`, `until` (and `requests`, as given).
struct Stop {
    volume: Option<Volume>,
    duration_ns: Option<u64>,
    until_dead: bool,
}

fn stop(
    p: &RawPhase,
    kind: PhaseKind,
    volume: Option<Volume>,
    requests: &Requests,
    ends_by_itself: bool,
    g: &Geometry,
    at: Label,
) -> Result<Stop, ConfigError> {
    let duration_ns = p.duration.map(|d| d.0);
    let until_dead = UNTIL.parse_or(&at.key("until"), p.until.as_deref(), false)?;
    if until_dead && !matches!(kind, PhaseKind::Io | PhaseKind::Trace) {
        return at.err(
            "until",
            "only an io or trace phase can run until the drive dies",
        );
    }
    if duration_ns == Some(0)
        || p.requests == Some(0)
        || volume.map(|v| v.bytes(g.user_capacity_bytes)) == Some(0)
    {
        return at.err("volume", "a stop condition of zero runs nothing");
    }
    let stops = volume.is_some() || p.requests.is_some() || duration_ns.is_some() || until_dead;
    let volume = match kind {
        PhaseKind::Fill | PhaseKind::Trim => {
            let ws = requests.working_set;
            let v = volume.unwrap_or(Volume::Capacities(ws));
            let covered = g.user_capacity_bytes as f64 * ws;
            if v.bytes(g.user_capacity_bytes) as f64 > covered + 1.0 {
                return at.err(
                    "volume",
                    format!(
                        "a fill or trim covers at most the working set, each address once: {} \
                         here, found {}",
                        human_bytes(covered as u64),
                        human_bytes(v.bytes(g.user_capacity_bytes))
                    ),
                );
            }
            if p.requests.is_some() || duration_ns.is_some() {
                return at.err("volume", "fill and trim phases stop after `volume` only");
            }
            Some(v)
        }
        PhaseKind::PowerOff => {
            if volume.is_some() || p.requests.is_some() || until_dead || duration_ns.is_none() {
                return at.err(
                    "duration",
                    "a power-off phase lasts `duration` (\"500h\", \"1y\") and nothing else",
                );
            }
            None
        }
        PhaseKind::Io | PhaseKind::Trace => {
            if !stops && !ends_by_itself {
                return at.err(
                    "volume",
                    "the phase needs a stop condition: one of volume, requests, duration, until",
                );
            }
            volume
        }
    };
    Ok(Stop {
        volume,
        duration_ns,
        until_dead,
    })
}

/// The most cut times a phase's `power_loss` lists.
const MAX_LISTED_CUTS: usize = 10_000;
/// The shortest `power_loss_every`.
const MIN_CUT_EVERY_NS: u64 = 1_000_000;

/// `power_loss` (times from the phase's start, sorted) and `power_loss_every`.
fn power_cuts(
    p: &RawPhase,
    kind: PhaseKind,
    timed: bool,
    at: Label,
) -> Result<(Vec<u64>, Option<u64>), ConfigError> {
    let mut power_loss_ns: Vec<u64> = p.power_loss.iter().flatten().map(|d| d.0).collect();
    if power_loss_ns.len() > MAX_LISTED_CUTS {
        return at.err(
            "power_loss",
            format!(
                "at most {MAX_LISTED_CUTS} cut times (each cut costs a recovery: milliseconds of \
                 wall time), found {}; for many, give power_loss_every",
                power_loss_ns.len()
            ),
        );
    }
    power_loss_ns.sort_unstable();
    let power_loss_every_ns = p.power_loss_every.map(|d| d.0);
    if power_loss_every_ns.is_some_and(|every| every < MIN_CUT_EVERY_NS) {
        return at.err(
            "power_loss_every",
            "expected at least 1ms between cuts (each costs a recovery: a cut every microsecond \
             would take hours of wall time a simulated second)",
        );
    }
    let cuts = !power_loss_ns.is_empty() || power_loss_every_ns.is_some();
    if cuts && !(timed && matches!(kind, PhaseKind::Io | PhaseKind::Trace)) {
        return at.err(
            if p.power_loss.is_some() {
                "power_loss"
            } else {
                "power_loss_every"
            },
            "power cuts happen in simulated time: only in a timed io or trace phase",
        );
    }
    Ok((power_loss_ns, power_loss_every_ns))
}

/// `timed = false`: nothing may need simulated time to pass.
fn untimed(p: &RawPhase, interval: Option<Interval>, at: Label) -> Result<(), ConfigError> {
    if p.duration.is_some() || p.rate.is_some() || p.idle_every.is_some() {
        return at.err("timed", "an untimed phase passes no simulated time: stop it by volume or requests, closed loop, no idle gaps");
    }
    if matches!(interval, Some(Interval::Time(_))) {
        return at.err("interval", "an untimed phase passes no simulated time: give the interval as a size or a request count");
    }
    Ok(())
}
