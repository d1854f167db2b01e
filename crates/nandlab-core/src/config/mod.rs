//! Experiment configs: load TOML or JSON text, apply the device preset, check
//! every key, and produce a [`Config`] whose values are all in range and
//! mutually consistent — or one [`ConfigError`] naming the key at fault.

mod device;
mod error;
mod ftl;
mod keyword;
pub mod presets;
mod pslc;
mod raw;
mod shape;
mod tree;
mod values;

pub use device::{Capacity, DeviceConfig, Spread, WearConfig, WriteCache, MEASURED};
pub use error::{did_you_mean, ConfigError};
pub use ftl::{early_switch_pool, CommandOrder, FtlConfig, GcPolicy, GcScope, StripeDim};
pub use pslc::{PslcConfig, PslcKind};
pub use raw::CountOrFraction;
pub use values::Volume;

use crate::geometry::Geometry;
use crate::units::MAX_DURATION_NS;
use error::{polish_serde_message, toml_location};
use keyword::{FormWord, Keywords, Meaning::*};
use raw::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use values::{err, fraction_in, shown, volume, SECTOR};

/// A complete, checked experiment.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub seed: u64,
    pub description: Option<String>,
    pub device: DeviceConfig,
    pub ftl: FtlConfig,
    pub phases: Vec<PhaseConfig>,
    /// Derived from device + ftl: the drive's shape and capacities.
    pub geometry: Geometry,
    pub checks: Checks,
}

/// `[checks]`: self-checks a run can make at some cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Checks {
    /// The integrity oracle: every read must get the latest acknowledged
    /// write (also on with the environment variable `NANDLAB_INTEGRITY=1`).
    pub integrity: bool,
}

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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Sequential,
    /// Uniformly random positions (they may repeat).
    Random,
    /// Every position of the working set exactly once per pass, in a seeded
    /// random order (Swissbit's "each address once").
    Shuffle,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    /// Fraction `r` of accesses go to fraction `f` of the working set.
    HotCold {
        r: f64,
        f: f64,
    },
    Zipf {
        theta: f64,
    },
    /// fio's `pareto:h`: rank = (N − 1) · u^(ln h / ln(1 − h)), scattered.
    Pareto {
        h: f64,
    },
    /// fio's `normal:dev`: a Gaussian around the middle with a standard
    /// deviation of `dev` % of the positions, scattered.
    Normal {
        dev: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Keep `queue_depth` requests outstanding, as fast as the drive accepts.
    Closed { queue_depth: u32 },
    /// Requests arrive at `rate` per second (Poisson or evenly spaced).
    Open { rate: f64, poisson: bool },
}

/// When the time series takes a row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    Time(u64),
    Bytes(u64),
    Requests(u64),
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
    /// Program-time factor of the data written (1 = random data).
    pub data_factor: f64,
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
    pub trace: Option<crate::trace::replay::ReplayConfig>,
    /// `[[phase.job]]`: workloads that run together, each with its own queue
    /// depth, stop condition and results (empty: the phase is one workload).
    pub jobs: Vec<PhaseConfig>,
}

impl PhaseConfig {
    /// Whether the phase stops by itself (else a trace's end or its phase stops it).
    pub fn has_stop(&self) -> bool {
        self.volume.is_some()
            || self.requests.is_some()
            || self.duration_ns.is_some()
            || self.until_dead
    }
}

impl Config {
    /// Loads a TOML config. `source` names it in error messages.
    pub fn from_toml(text: &str, source: &str) -> Result<Config, ConfigError> {
        let value = tree::from_toml(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
            let msg = e.message().trim().to_string();
            match line {
                Some(l) => {
                    ConfigError::new(format!("{source}:{l}"), format!("TOML syntax error: {msg}"))
                }
                None => ConfigError::new(source, format!("TOML syntax error: {msg}")),
            }
        })?;
        Self::from_value(value)
    }

    /// Loads a JSON config (for example a Python dict serialised by the bindings).
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        let value = tree::from_json(text)
            .map_err(|e| ConfigError::new("", format!("invalid JSON config: {e}")))?;
        Self::from_value(value)
    }

    /// Applies the preset, deserialises and checks a config tree.
    pub fn from_value(mut value: Value) -> Result<Config, ConfigError> {
        if !value.is_object() {
            return Err(ConfigError::new("", "a config must be a table of keys"));
        }
        apply_preset(&mut value)?;
        inherit_job_keys(&mut value);
        let raw: RawConfig = serde_path_to_error::deserialize(tree::Tree(&value)).map_err(|e| {
            let mut path = e.path().to_string();
            let msg = polish_serde_message(&e.inner().to_string());
            // An unknown key is named in the message: locate the table holding it.
            if msg.starts_with("unknown key") {
                path = path
                    .rsplit_once('.')
                    .map_or(String::new(), |(table, _)| table.to_string());
            }
            let key = if path.is_empty() || path == "." {
                String::new()
            } else {
                toml_location(&path)
            };
            ConfigError::new(key, msg)
        })?;
        validate(raw)
    }

    /// Whether any phase cuts the power (the drive then keeps what recovery needs).
    pub fn has_power_loss(&self) -> bool {
        self.phases
            .iter()
            .any(|p| !p.power_loss_ns.is_empty() || p.power_loss_every_ns.is_some())
    }

    /// Why this configuration may lose acknowledged writes at a power cut
    /// (empty: it must never lose one).
    pub fn power_loss_unsafe(&self) -> Vec<String> {
        let mut why = Vec::new();
        if self.device.write_cache == WriteCache::Volatile {
            why.push(
                "a volatile write cache without flush ([device] write_cache = \"volatile\"): \
                 acknowledged writes still in the DRAM buffer are lost"
                    .to_string(),
            );
        }
        let multi_bit = self.geometry.cell.bits() > 1;
        if self.device.write_cache != WriteCache::Plp && !self.ftl.paired_page_backup && multi_bit {
            let direct = if self.ftl.pslc.kind == PslcKind::Off || self.ftl.pslc.direct_write {
                "host data and GC copies go"
            } else {
                "folded and GC-copied data goes"
            };
            why.push(format!(
                "no paired-page backup ([ftl] paired_page_backup = false) without power-loss \
                 protection: {direct} to {}-bit wordlines, where an interrupted upper-page program \
                 corrupts the acknowledged data of the lower pages",
                self.geometry.cell.bits()
            ));
        }
        why
    }

    /// The resolved config as a JSON tree (for reports and the Python `config` property).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("config serialises")
    }
}

/// Merges `[device] preset`'s tables under the user's own keys. A preset
/// may itself build on another (its own `[device] preset`).
fn apply_preset(value: &mut Value) -> Result<(), ConfigError> {
    let Some(name) = value.get("device").and_then(|d| d.get("preset")).cloned() else {
        return Ok(());
    };
    let name = name
        .as_str()
        .filter(|_| tree::non_finite(&name).is_none())
        .ok_or_else(|| ConfigError::new("[device] preset", "expected a preset name in quotes"))?;
    let table: Vec<_> = presets::PRESETS.iter().map(|&(n, t)| (n, Is(t))).collect();
    let text = Keywords::new("preset", &table).parse("[device] preset", name)?;
    let mut base: Value = toml::from_str(text).expect("built-in presets are valid TOML");
    base.as_object_mut().unwrap().remove("description");
    apply_preset(&mut base)?;
    deep_merge(&mut base, value.take());
    *value = base;
    Ok(())
}

/// Phase keys a `[[phase.job]]` does not take from its phase: its name, the
/// phase's stop conditions (which stop all jobs together) and time series.
const PHASE_ONLY_KEYS: [&str; 8] = [
    "job",
    "name",
    "volume",
    "requests",
    "duration",
    "interval",
    "power_loss",
    "power_loss_every",
];

/// Gives each `[[phase.job]]` its phase's workload keys (as fio's `[global]`),
/// under the job's own.
fn inherit_job_keys(value: &mut Value) {
    let Some(phases) = value.get_mut("phase").and_then(Value::as_array_mut) else {
        return;
    };
    for phase in phases.iter_mut().filter_map(Value::as_object_mut) {
        let mut shared = phase.clone();
        for key in PHASE_ONLY_KEYS {
            shared.remove(key);
        }
        let Some(jobs) = phase.get_mut("job").and_then(Value::as_array_mut) else {
            continue;
        };
        for job in jobs.iter_mut() {
            if let Value::Object(own) = job.take() {
                let mut merged = shared.clone();
                merged.extend(own);
                *job = Value::Object(merged);
            }
        }
    }
}

/// Overlays `top` onto `base`, table by table.
fn deep_merge(base: &mut Value, top: Value) {
    match (base, top) {
        (Value::Object(b), Value::Object(t)) => {
            for (k, v) in t {
                match b.get_mut(&k) {
                    Some(slot) if slot.is_object() && v.is_object() => deep_merge(slot, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, t) => *b = t,
    }
}

fn validate(raw: RawConfig) -> Result<Config, ConfigError> {
    let shape = shape::shape(&raw.device, &raw.ftl)?;
    let device = device::validate(raw.device, &shape)?;
    let ftl = ftl::validate(&raw.ftl, &shape)?;
    let geometry = shape.geometry;
    if raw.phases.is_empty() {
        return err(
            "[[phase]]",
            "a config needs at least one [[phase]] table (the workload to run)",
        );
    }
    let default_interval = match raw.stats.interval {
        Some(i) => Some(validate_interval("[stats] interval", i)?),
        None => None,
    };
    let phases = raw
        .phases
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            validate_phase(
                &format!("[[phase]] #{}", i + 1),
                i + 1,
                p,
                &geometry,
                default_interval,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Config {
        seed: raw.seed.unwrap_or(0),
        description: raw.description,
        device,
        ftl,
        phases,
        geometry,
        checks: Checks {
            integrity: raw.checks.integrity.unwrap_or(false),
        },
    })
}

fn validate_interval(key: &str, i: RawInterval) -> Result<Interval, ConfigError> {
    match i {
        RawInterval::Requests(0) | RawInterval::Time(0) | RawInterval::Bytes(0) => {
            err(key, "must be above zero")
        }
        RawInterval::Requests(n) => Ok(Interval::Requests(n)),
        RawInterval::Time(t) => Ok(Interval::Time(t)),
        RawInterval::Bytes(b) => Ok(Interval::Bytes(b)),
    }
}

/// A phase (or a job of one): `label` names it in errors, `number` names it
/// by default (`phase-N`).
fn validate_phase(
    label: &str,
    number: usize,
    mut p: RawPhase,
    g: &Geometry,
    default_interval: Option<Interval>,
) -> Result<PhaseConfig, ConfigError> {
    let k = |key: &str| format!("{label} {key}");
    let kind = PHASE_KIND.parse_or(&k("kind"), p.kind.as_deref(), PhaseKind::Io)?;
    let trace = validate_trace(&p, kind, &k)?;
    if p.job.is_some() && kind != PhaseKind::Io {
        return err(
            &k("job"),
            "jobs run synthetic workloads together: their phase is kind = \"io\"",
        );
    }
    let jobs = validate_jobs(label, p.job.take(), g)?;
    let name = p.name.unwrap_or_else(|| format!("phase-{number}"));
    let pattern = PATTERN.parse_or(
        &k("pattern"),
        p.pattern.as_deref(),
        if kind == PhaseKind::Io {
            Pattern::Random
        } else {
            Pattern::Sequential
        },
    )?;
    if p.order_seed.is_some() && pattern != Pattern::Shuffle {
        return err(
            &k("order_seed"),
            "applies to pattern = \"shuffle\" (the order each position is visited in)",
        );
    }
    if p.distribution.is_some() && pattern != Pattern::Random {
        return err(&k("distribution"), "applies to pattern = \"random\"");
    }
    let distribution = DISTRIBUTION.parse_or(
        &k("distribution"),
        p.distribution.as_deref(),
        Distribution::Uniform,
    )?;
    let read_fraction = fraction_in(
        &k("read_fraction"),
        p.read_fraction.map(|f| f.0).unwrap_or(0.0),
        0.0,
        1.0,
    )?;
    let trim_fraction = fraction_in(
        &k("trim_fraction"),
        p.trim_fraction.map(|f| f.0).unwrap_or(0.0),
        0.0,
        1.0,
    )?;
    if read_fraction + trim_fraction > 1.0 + 1e-12 {
        return err(
            &k("trim_fraction"),
            "read_fraction + trim_fraction must not exceed 1",
        );
    }
    let block_sizes = match &p.block_sizes {
        None => Vec::new(),
        Some(list) => {
            if p.block_size.is_some() {
                return err(
                    &k("block_sizes"),
                    "give either block_size or block_sizes, not both",
                );
            }
            let mut out = Vec::new();
            for item in list {
                let (size, weight) = item.split_once('/').unwrap_or((item.as_str(), "1"));
                let size = crate::units::parse_size(size.trim())
                    .ok()
                    .filter(|&b| b >= SECTOR && b.is_multiple_of(SECTOR) && b <= (64 << 20));
                let weight = weight.trim().parse::<u32>().ok();
                match (size, weight) {
                    (Some(s), Some(w)) => out.push((s as u32, w)),
                    _ => {
                        return err(
                            &k("block_sizes"),
                            format!("expected sizes with weights like \"4KiB/50\" (multiples of 512 bytes up to 64MiB), found `{item}`"),
                        )
                    }
                }
            }
            if out.is_empty() || out.iter().all(|&(_, w)| w == 0) {
                return err(
                    &k("block_sizes"),
                    "needs at least one size with a weight above 0",
                );
            }
            out.retain(|&(_, w)| w > 0);
            out
        }
    };
    let block_size = match block_sizes.iter().map(|&(s, _)| s as u64).max() {
        Some(largest) => largest,
        None => p.block_size.map(|s| s.0).unwrap_or(4096),
    };
    if block_size < SECTOR || !block_size.is_multiple_of(SECTOR) || block_size > (64 << 20) {
        return err(
            &k("block_size"),
            format!("expected a multiple of 512 bytes up to 64MiB, found {block_size}"),
        );
    }
    let align = p
        .align
        .map(|s| s.0)
        .unwrap_or(block_size.min(g.unit_size as u64).max(SECTOR));
    if align < SECTOR || !align.is_multiple_of(SECTOR) {
        return err(
            &k("align"),
            format!("expected a multiple of 512 bytes, found {align}"),
        );
    }
    let share = |key: &str, extent: Option<Extent>, default: f64| match extent {
        None => Ok(default),
        Some(Extent::Share(f)) => fraction_in(&k(key), f, 0.0, 1.0),
        Some(Extent::Bytes(b)) if b > g.user_capacity_bytes => err(
            &k(key),
            format!(
                "{b} bytes is more than the drive's user capacity ({} bytes)",
                g.user_capacity_bytes
            ),
        ),
        Some(Extent::Bytes(b)) => Ok(b as f64 / g.user_capacity_bytes as f64),
    };
    let working_set = share("working_set", p.working_set, 1.0)?;
    let working_set_offset = share("working_set_offset", p.working_set_offset, 0.0)?;
    if working_set <= 0.0 {
        return err(&k("working_set"), "must be above 0");
    }
    if working_set_offset + working_set > 1.0 + 1e-12 {
        return err(
            &k("working_set_offset"),
            "working_set_offset + working_set must not exceed 1",
        );
    }
    let ws_bytes = (working_set * g.user_capacity_bytes as f64) as u64;
    if kind == PhaseKind::Io && ws_bytes < block_size {
        return err(&k("working_set"), format!("the working set ({ws_bytes} bytes) is smaller than one request ({block_size} bytes)"));
    }
    let arrival = match (p.queue_depth, p.rate) {
        (Some(_), Some(_)) => {
            return err(
                &k("rate"),
                "give either queue_depth (closed loop) or rate (open loop), not both",
            )
        }
        (Some(0), None) => return err(&k("queue_depth"), "must be at least 1"),
        (Some(q), None) => {
            if q > 65_536 {
                return err(
                    &k("queue_depth"),
                    format!("expected at most 65536, found {q}"),
                );
            }
            Arrival::Closed { queue_depth: q }
        }
        (None, Some(r)) => {
            // The mean gap between arrivals is a time the simulated clock must hold.
            if !(r.is_finite() && 1e9 / r <= MAX_DURATION_NS as f64) {
                return err(
                    &k("rate"),
                    format!(
                        "expected requests per second above 0, at least one per 146 years (2.2e-10), found {}",
                        shown(r)
                    ),
                );
            }
            let poisson = ARRIVAL.parse_or(&k("arrival"), p.arrival.as_deref(), true)?;
            Arrival::Open { rate: r, poisson }
        }
        (None, None) => Arrival::Closed { queue_depth: 1 },
    };
    let volume_of = |key: &str, v: Option<RawVolume>| v.map(|v| volume(&k(key), v, g)).transpose();
    let volume = volume_of("volume", p.volume)?;
    let idle_every = volume_of("idle_every", p.idle_every)?;
    let idle_duration_ns = p.idle_duration.map(|d| d.0).unwrap_or(0);
    if idle_every.is_some() != (idle_duration_ns > 0) {
        return err(
            &k("idle_every"),
            "idle gaps need both idle_every (a volume) and idle_duration (a time above 0)",
        );
    }
    let duration_ns = p.duration.map(|d| d.0);
    let until_dead = UNTIL.parse_or(&k("until"), p.until.as_deref(), false)?;
    if until_dead && !matches!(kind, PhaseKind::Io | PhaseKind::Trace) {
        return err(
            &k("until"),
            "only an io or trace phase can run until the drive dies",
        );
    }
    if duration_ns == Some(0)
        || p.requests == Some(0)
        || volume.map(|v| v.bytes(g.user_capacity_bytes)) == Some(0)
    {
        return err(&k("volume"), "a stop condition of zero runs nothing");
    }
    let volume = match kind {
        PhaseKind::Fill | PhaseKind::Trim => {
            let v = volume.unwrap_or(Volume::Capacities(working_set));
            if v.bytes(g.user_capacity_bytes) as f64
                > g.user_capacity_bytes as f64 * (working_set_offset + working_set) + 1.0
            {
                return err(
                    &k("volume"),
                    "a fill or trim covers at most the working set (each address once)",
                );
            }
            if p.requests.is_some() || duration_ns.is_some() {
                return err(
                    &k("volume"),
                    "fill and trim phases stop after `volume` only",
                );
            }
            Some(v)
        }
        // A trace ends by itself, unless it loops.
        PhaseKind::Trace
            if !trace.as_ref().is_some_and(|t| t.looping)
                || volume.is_some()
                || p.requests.is_some()
                || duration_ns.is_some()
                || until_dead =>
        {
            volume
        }
        PhaseKind::Io | PhaseKind::Trace => {
            let jobs_stop = !jobs.is_empty() && jobs.iter().all(PhaseConfig::has_stop);
            if volume.is_none()
                && p.requests.is_none()
                && duration_ns.is_none()
                && !until_dead
                && !jobs_stop
            {
                return err(
                    &k("volume"),
                    "the phase needs a stop condition: one of volume, requests, duration, until",
                );
            }
            volume
        }
    };
    let interval = match p.interval {
        Some(i) => Some(validate_interval(&k("interval"), i)?),
        None => default_interval,
    };
    let data_factor = DATA
        .parse_or(&k("data"), p.data.as_deref(), Data::Factor(1.0))?
        .factor();
    let timed = p.timed.unwrap_or(true);
    let mut power_loss_ns: Vec<u64> = p.power_loss.iter().flatten().map(|d| d.0).collect();
    power_loss_ns.sort_unstable();
    let power_loss_every_ns = p.power_loss_every.map(|d| d.0);
    if power_loss_every_ns == Some(0) {
        return err(&k("power_loss_every"), "must be a time above 0");
    }
    let cuts = !power_loss_ns.is_empty() || power_loss_every_ns.is_some();
    if cuts && !(timed && matches!(kind, PhaseKind::Io | PhaseKind::Trace)) {
        return err(
            &k(if p.power_loss.is_some() {
                "power_loss"
            } else {
                "power_loss_every"
            }),
            "power cuts happen in simulated time: only in a timed io or trace phase",
        );
    }
    if !timed {
        if duration_ns.is_some() || p.rate.is_some() || idle_every.is_some() {
            return err(&k("timed"), "an untimed phase passes no simulated time: stop it by volume or requests, closed loop, no idle gaps");
        }
        if matches!(interval, Some(Interval::Time(_))) {
            return err(&k("interval"), "an untimed phase passes no simulated time: give the interval as a size or a request count");
        }
    }
    Ok(PhaseConfig {
        name,
        kind,
        pattern,
        distribution,
        read_fraction,
        trim_fraction,
        block_size: block_size as u32,
        block_sizes,
        align: align as u32,
        working_set,
        working_set_offset,
        arrival,
        idle_every,
        idle_duration_ns,
        volume,
        requests: p.requests,
        duration_ns,
        interval,
        timed,
        trace,
        data_factor,
        until_dead,
        power_loss_ns,
        power_loss_every_ns,
        order_seed: p.order_seed,
        jobs,
    })
}

/// The most `[[phase.job]]`s a phase may have: fio's own limit on the jobs
/// of one run (its `REAL_MAX_JOBS`). Each job keeps two latency histograms
/// (about half a MiB) and a queue; more jobs than fio can run is a mistake,
/// not a workload.
pub const MAX_JOBS_PER_PHASE: usize = 4096;

/// `[[phase.job]]` of the phase `label`: closed-loop synthetic workloads,
/// each a phase of its own to the checks (its stop condition optional).
fn validate_jobs(
    label: &str,
    jobs: Option<Vec<RawPhase>>,
    g: &Geometry,
) -> Result<Vec<PhaseConfig>, ConfigError> {
    let jobs = jobs.unwrap_or_default();
    if jobs.len() > MAX_JOBS_PER_PHASE {
        return err(
            &format!("{label} job"),
            format!(
                "at most {MAX_JOBS_PER_PHASE} [[phase.job]] tables per phase (fio's limit on the jobs of one run), found {}",
                jobs.len()
            ),
        );
    }
    let mut out = Vec::with_capacity(jobs.len());
    for (j, mut raw) in jobs.into_iter().enumerate() {
        let job_label = format!("{label} job #{}", j + 1);
        let k = |key: &str| format!("{job_label} {key}");
        let has_stop = raw.volume.is_some() || raw.requests.is_some() || raw.duration.is_some();
        if raw.job.is_some() {
            return err(&k("job"), "a job cannot have jobs of its own");
        }
        if raw.power_loss.is_some() || raw.power_loss_every.is_some() {
            return err(
                &k(if raw.power_loss.is_some() {
                    "power_loss"
                } else {
                    "power_loss_every"
                }),
                "power cuts hit the whole drive: give them to the phase, not a job",
            );
        }
        if raw.rate.is_some() || raw.idle_every.is_some() || raw.until.is_some() {
            return err(
                &k(if raw.rate.is_some() { "rate" } else if raw.idle_every.is_some() { "idle_every" } else { "until" }),
                "jobs run closed loop (queue_depth) without idle gaps, until a volume, request count or duration",
            );
        }
        if !has_stop {
            // Checked as a phase: stopped by the phase's stop conditions.
            raw.requests = Some(u64::MAX);
        }
        let name = raw.name.take().unwrap_or_else(|| format!("job-{}", j + 1));
        let mut job = validate_phase(&job_label, j + 1, raw, g, None)?;
        if !has_stop {
            job.requests = None;
        }
        job.name = name;
        out.push(job);
    }
    Ok(out)
}

/// The keys of a `kind = "trace"` phase (and that no other kind has them).
fn validate_trace(
    p: &RawPhase,
    kind: PhaseKind,
    k: &dyn Fn(&str) -> String,
) -> Result<Option<crate::trace::replay::ReplayConfig>, ConfigError> {
    use crate::trace::replay::{Remap, ReplayConfig};
    use crate::trace::TraceFormat;
    let trace_keys = [
        ("trace", p.trace.is_some()),
        ("format", p.format.is_some()),
        ("skip_bad", p.skip_bad.is_some()),
        ("replay", p.replay.is_some()),
        ("time_scale", p.time_scale.is_some()),
        ("devices", p.devices.is_some()),
        ("remap", p.remap.is_some()),
        ("unique_bytes", p.unique_bytes.is_some()),
        ("loop", p.looping.is_some()),
    ];
    if kind != PhaseKind::Trace {
        return match trace_keys.iter().find(|(_, given)| *given) {
            Some((key, _)) => err(&k(key), "applies to a trace phase (kind = \"trace\")"),
            None => Ok(None),
        };
    }
    let synthetic = [
        ("pattern", p.pattern.is_some()),
        ("distribution", p.distribution.is_some()),
        ("read_fraction", p.read_fraction.is_some()),
        ("trim_fraction", p.trim_fraction.is_some()),
        ("block_size", p.block_size.is_some()),
        ("block_sizes", p.block_sizes.is_some()),
        ("working_set", p.working_set.is_some()),
        ("order_seed", p.order_seed.is_some()),
        ("data", p.data.is_some()),
    ];
    if let Some((key, _)) = synthetic.iter().find(|(_, given)| *given) {
        return err(
            &k(key),
            "shapes a synthetic workload; a trace phase replays the trace's own requests",
        );
    }
    let path = p.trace.as_deref().ok_or_else(|| {
        ConfigError::new(
            k("trace"),
            "a trace phase needs the trace file: trace = \"PATH\"",
        )
    })?;
    if !std::path::Path::new(path).is_file() {
        return err(&k("trace"), format!("no such file: {path}"));
    }
    let formats: Vec<_> = TraceFormat::ALL
        .iter()
        .map(|&f| (f.name(), Is(f)))
        .collect();
    let format = p
        .format
        .as_deref()
        .map(|f| Keywords::new("trace format", &formats).parse(&k("format"), f))
        .transpose()?;
    let timed = REPLAY.parse_or(&k("replay"), p.replay.as_deref(), false)?;
    if timed && (p.queue_depth.is_some() || p.rate.is_some()) {
        return err(
            &k("replay"),
            "\"timed\" issues each request at its recorded time: no queue_depth or rate",
        );
    }
    let time_scale = p.time_scale.unwrap_or(1.0);
    if !(time_scale.is_finite() && time_scale > 0.0) {
        return err(
            &k("time_scale"),
            format!("expected a factor above 0 on the recorded gaps (0.5: twice as fast), found {time_scale}"),
        );
    }
    if p.time_scale.is_some() && !timed {
        return err(&k("time_scale"), "applies to replay = \"timed\"");
    }
    let remap = REMAP.parse_or(
        &k("remap"),
        p.remap.as_deref(),
        if p.unique_bytes.is_some() {
            Remap::Compact
        } else {
            Remap::Modulo
        },
    )?;
    if p.unique_bytes.is_some() && remap != Remap::Compact {
        return err(
            &k("unique_bytes"),
            "counts distinct addresses as remap = \"compact\" numbers them",
        );
    }
    Ok(Some(ReplayConfig {
        path: path.into(),
        format,
        skip_bad: p.skip_bad.unwrap_or(false),
        timed,
        time_scale,
        devices: p.devices.clone().unwrap_or_default(),
        remap,
        unique_bytes: p.unique_bytes.map(|s| s.0),
        looping: p.looping.unwrap_or(false),
    }))
}

/// A phase's `kind`.
const PHASE_KIND: Keywords<PhaseKind> = Keywords::new(
    "phase kind",
    &[
        ("io", Is(PhaseKind::Io)),
        ("fill", Is(PhaseKind::Fill)),
        ("trim", Is(PhaseKind::Trim)),
        ("trace", Is(PhaseKind::Trace)),
    ],
);

/// A phase's `pattern` (fio's short names accepted too).
const PATTERN: Keywords<Pattern> = Keywords::new(
    "pattern",
    &[
        ("sequential", Is(Pattern::Sequential)),
        ("seq", Alias(Pattern::Sequential)),
        ("random", Is(Pattern::Random)),
        ("rand", Alias(Pattern::Random)),
        ("shuffle", Is(Pattern::Shuffle)),
    ],
);

/// A phase's `arrival` process (open loop): poisson or not.
const ARRIVAL: Keywords<bool> = Keywords::new(
    "arrival process",
    &[("poisson", Is(true)), ("fixed", Is(false))],
);

/// A phase's `until`: whether it runs until the drive dies.
const UNTIL: Keywords<bool> = Keywords::listed(true, &[("dead", Is(true))]);

/// A phase's `data`: what is written, which sets how long programs take.
const DATA: Keywords<Data> = Keywords::new(
    "data pattern",
    &[
        ("random", Is(Data::Factor(1.0))),
        ("ones", Is(Data::State("11"))),
        ("zeros", Is(Data::State("00"))),
        ("byte:0xNN", Form(data_byte)),
        ("states:11,10,...", Form(data_states)),
    ],
);

/// Written data, by its program-time factor.
#[derive(Clone, Copy)]
enum Data {
    /// Every cell in this MLC state.
    State(&'static str),
    Factor(f64),
}

impl Data {
    fn factor(self) -> f64 {
        match self {
            Data::State(s) => crate::wear::mlc_state_time(s).expect("an MLC state"),
            Data::Factor(f) => f,
        }
    }
}

fn data_states(w: &FormWord) -> Result<Data, String> {
    let states: Vec<&str> = w.args.split(',').map(str::trim).collect();
    crate::wear::data_factor(&states)
        .filter(|_| !states.is_empty())
        .map(Data::Factor)
        .ok_or_else(|| {
            format!(
                "{}:S1,S2,... takes MLC states 11, 10, 00, 01; found `{}`",
                w.name(),
                w.word
            )
        })
}

fn data_byte(w: &FormWord) -> Result<Data, String> {
    let hex = w.args.trim_start_matches("0x");
    let byte = u8::from_str_radix(hex, 16)
        .map_err(|_| format!("{} takes one byte in hex, found `{}`", w.form, w.word))?;
    // Each pair of bits is one MLC cell's target state.
    let states: Vec<String> = (0..4)
        .map(|i| format!("{:02b}", (byte >> (6 - 2 * i)) & 3))
        .collect();
    let states: Vec<&str> = states.iter().map(String::as_str).collect();
    Ok(Data::Factor(
        crate::wear::data_factor(&states).expect("two-bit strings are states"),
    ))
}

/// A trace phase's `replay`: whether requests go at their recorded times.
const REPLAY: Keywords<bool> =
    Keywords::new("replay mode", &[("closed", Is(false)), ("timed", Is(true))]);

/// A trace phase's `remap`.
const REMAP: Keywords<crate::trace::replay::Remap> = Keywords::new(
    "remap",
    &[
        ("modulo", Is(crate::trace::replay::Remap::Modulo)),
        ("compact", Is(crate::trace::replay::Remap::Compact)),
    ],
);

/// A phase's `distribution` (pattern = "random").
const DISTRIBUTION: Keywords<Distribution> = Keywords::listed(
    false,
    &[
        ("uniform", Is(Distribution::Uniform)),
        ("hotcold:R:F", Form(hot_cold)),
        ("zipf:THETA", Form(zipf)),
        ("pareto:H", Form(pareto)),
        ("normal:DEV", Form(normal)),
    ],
);

/// A distribution form's `N` arguments (else the word is unknown).
fn arguments<'w, const N: usize>(w: &FormWord<'w>) -> Result<[&'w str; N], String> {
    let args: Vec<&str> = w.args.split(':').collect();
    args.try_into().map_err(|_| DISTRIBUTION.unknown(w.word))
}

/// A distribution argument, `what` naming it in the message.
fn number(w: &FormWord, x: &str, what: &str) -> Result<f64, String> {
    x.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{}'s {what} must be a number, found `{x}`", w.form))
}

fn hot_cold(w: &FormWord) -> Result<Distribution, String> {
    let [r, f] = arguments(w)?;
    let (r, f) = (number(w, r, "R")?, number(w, f, "F")?);
    if !(r > 0.0 && r < 1.0 && f > 0.0 && f < 1.0) {
        return Err(format!(
            "{} needs 0 < R < 1 and 0 < F < 1, found `{}`",
            w.form, w.word
        ));
    }
    Ok(Distribution::HotCold { r, f })
}

fn zipf(w: &FormWord) -> Result<Distribution, String> {
    let [theta] = arguments(w)?;
    let theta = number(w, theta, "THETA")?;
    if !(theta > 0.0 && theta <= 10.0) {
        return Err(format!(
            "{} needs 0 < THETA ≤ 10, found `{}`",
            w.form, w.word
        ));
    }
    Ok(Distribution::Zipf { theta })
}

fn pareto(w: &FormWord) -> Result<Distribution, String> {
    let [h] = arguments(w)?;
    let h = number(w, h, "H")?;
    if !(h > 0.0 && h < 1.0) {
        return Err(format!("{} needs 0 < H < 1, found `{}`", w.form, w.word));
    }
    Ok(Distribution::Pareto { h })
}

fn normal(w: &FormWord) -> Result<Distribution, String> {
    let [dev] = arguments(w)?;
    let dev = number(w, dev, "DEV (percent)")?;
    if !(dev > 0.0 && dev <= 100.0) {
        return Err(format!(
            "{} needs 0 < DEV ≤ 100 (percent of the working set), found `{}`",
            w.form, w.word
        ));
    }
    Ok(Distribution::Normal { dev })
}

#[cfg(test)]
mod tests;
