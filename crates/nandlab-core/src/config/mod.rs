//! Experiment configs: load TOML or JSON text, apply the device preset, check
//! every key, and produce a [`Config`] whose values are all in range and
//! mutually consistent — or one [`ConfigError`] naming the key at fault.

mod error;
mod keyword;
pub mod presets;
mod raw;
mod tree;

pub use error::{did_you_mean, ConfigError};
pub use raw::CountOrFraction;

use crate::geometry::{Dividers, Geometry};
use crate::interface::{self, Interface};
use crate::media::{CellMode, ModeTiming};
use crate::units::{MAX_BYTES, MAX_DURATION_NS};
use crate::wear::{Conditions, CyclePattern, DEFAULT_RATED};
use error::{polish_serde_message, toml_location};
use keyword::{FormWord, Keywords, Meaning::*};
use raw::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// How spare flash is set.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Capacity {
    /// Spare as a fraction of the user capacity.
    OverProvisioning(f64),
    /// Fraction of the raw flash hidden from the host.
    Reserve(f64),
}

#[derive(Debug, Clone, Serialize)]
pub struct DeviceConfig {
    pub preset: Option<String>,
    pub capacity: Capacity,
    pub interface: Interface,
    /// Flash channel bus rate, bytes per second.
    pub channel_rate: u64,
    /// Program (and read) all planes of a die in one operation.
    pub multiplane: bool,
    /// DRAM write buffer in bytes: writes are acknowledged once buffered
    /// (unless `write_cache` is off).
    pub write_buffer: u64,
    /// Whether the write buffer is protected by capacitors, volatile, or
    /// bypassed (write-through): what a power cut does to it.
    pub write_cache: WriteCache,
    /// Latencies per bit mode, indexed by `CellMode::index()`.
    pub timing: Vec<ModeTiming>,
    pub wear: WearConfig,
}

/// `[device] write_cache`: when a write is acknowledged and what a cut does
/// to the DRAM write buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteCache {
    /// Acknowledged once buffered; power-loss protection capacitors finish
    /// programs in flight and program the buffer at a cut (enterprise drives).
    Plp,
    /// Acknowledged once buffered, no capacitors: a cut loses what the buffer
    /// holds and interrupts programs. Unsafe without host flushes.
    Volatile,
    /// Write-through: acknowledged once programmed (the open page is padded
    /// and programmed for every write), no capacitors.
    Off,
}

/// `[device.wear]`: rated endurance per mode, its spread over blocks, and the
/// conditions that scale it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WearConfig {
    /// Rated program/erase cycles per mode (SLC, MLC, TLC, QLC).
    pub rated: [f64; 4],
    pub spread: Spread,
    pub conditions: Conditions,
    /// Share of its native rated cycles every block has used before the run
    /// (an aged drive; 0 = pristine).
    pub initial: f64,
}

/// `[device.wear] spread`: how block endurance varies around the rating
/// (also a chip preset's spread; its factors are drawn by [`Spread::sample`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spread {
    /// Every block lasts exactly the rated cycles.
    Rated,
    /// Log-normal factor on the rating: median, σ of its logarithm, and a
    /// share of outliers lasting 0.5–3× the rating.
    LogNormal {
        median: f64,
        sigma: f64,
        outliers: f64,
    },
}

/// Desnoyers measured block lifetimes "often as much as 100× higher than
/// manufacturer specifications", widely spread, "with a small number of outliers"
/// (`spread = "desnoyers"`, and the spread of the chip bench's measured chips).
pub const MEASURED: Spread = Spread::LogNormal {
    median: 40.0,
    sigma: 0.6,
    outliers: 0.03,
};

/// GC victim selection.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    Greedy,
    Fifo,
    CostBenefit,
    Random,
    DChoices(u32),
}

/// A dimension of the allocation stripe: channel, way (chip), die, plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum StripeDim {
    Channel,
    Chip,
    Die,
    Plane,
}

#[derive(Debug, Clone, Serialize)]
pub struct FtlConfig {
    pub gc: GcPolicy,
    /// Foreground GC keeps at least this many free blocks per plane.
    pub gc_start: u32,
    /// Background GC (idle time) reclaims up to this many free blocks per plane.
    pub gc_stop: u32,
    /// Fastest-varying dimension first ("cwdp": channel, then chip, die, plane).
    pub stripe_order: Vec<StripeDim>,
    /// Host idle time after which background GC may run, ns.
    pub idle_threshold_ns: u64,
    /// Host reads go ahead of programs, erases and GC waiting on a die.
    pub read_priority: bool,
    /// Whether the controller overlaps host commands or takes them one at a time.
    pub command_order: CommandOrder,
    /// The blocks that share free queue, victims, watermarks and frontiers.
    pub gc_scope: GcScope,
    /// ZombieNAND: a block dead at its bit mode drops one bit per cell (TLC →
    /// MLC → SLC) instead of being retired.
    pub zombie: bool,
    /// GC and allocation level wear by remaining life: GC skips a block whose
    /// remaining life is below `life_threshold` × its pool's average, and a
    /// frontier opens the free block with the most life left.
    pub wear_leveling: bool,
    /// ZombieNAND's wear-unleveling: an early-switch pool per GC pool
    /// (`early_switch_blocks`, Eq. 1) is preferred by GC and allocation so it
    /// wears out, and switches mode, first; it is levelled only among itself.
    pub wear_unleveling: bool,
    pub life_threshold: f64,
    /// DRAM-less drive: bytes of controller RAM caching translation pages
    /// (None: the whole mapping table is in DRAM).
    pub map_cache: Option<u64>,
    /// Bytes read ahead of a detected sequential read stream (0: off).
    pub read_ahead: u64,
    /// Early-switch blocks per GC pool: by default ⌊(R − W)·B / 2^(S−2)⌋
    /// (Eq. 1); 0 without wear-unleveling.
    pub early_switch_blocks: u32,
    pub pslc: PslcConfig,
    /// Without power-loss protection: lower pages of multi-bit wordlines are
    /// backed up in SLC until their wordline is complete (an SLC program each).
    pub paired_page_backup: bool,
}

/// Which pSLC cache the firmware runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PslcKind {
    Off,
    /// A fixed set of blocks runs as SLC for the drive's life.
    Static,
    /// The static set plus up to a share of the free native blocks, run as
    /// SLC while the drive is young.
    Dynamic,
}

/// The pSLC write cache: host writes land in blocks run as SLC (fast) and
/// are folded into native-mode blocks later (in idle time, or in the
/// foreground when the cache is full).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PslcConfig {
    pub kind: PslcKind,
    /// Blocks per GC pool permanently run as SLC (the static cache).
    pub static_blocks: u32,
    /// Dynamic cache: at most this many native blocks per pool run as SLC at once.
    pub dynamic_blocks: u32,
    /// The dynamic cache turns static once this share of the native rated
    /// cycles is used (averaged over blocks).
    pub static_after: f64,
    /// Fold the cache in idle time (else only when it is full).
    pub fold_idle: bool,
    /// Direct-write: a sequential stream at least `direct_write_after` bytes
    /// long bypasses a cache that has no room, into native blocks.
    pub direct_write: bool,
    pub direct_write_after: u64,
}

/// How the controller takes host commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommandOrder {
    /// Commands overlap freely (NCQ/NVMe queues, reordered by the firmware):
    /// each waits only for the resources it uses.
    Reordered,
    /// One command at a time, in arrival order, each once the previous one's
    /// flash operations have been issued (firmware without command
    /// reordering): a read waiting for a busy die holds up every command
    /// behind it, so reads and writes collide.
    InOrder,
}

/// What a GC pool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GcScope {
    Plane,
    Die,
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

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Volume {
    Bytes(u64),
    /// Multiples of the user capacity.
    Capacities(f64),
}

impl Volume {
    pub fn bytes(self, user_capacity: u64) -> u64 {
        match self {
            Volume::Bytes(b) => b,
            Volume::Capacities(m) => (m * user_capacity as f64).round() as u64,
        }
    }
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

const SECTOR: u64 = 512;

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

fn err<T>(key: &str, msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError::new(key, msg))
}

fn positive(key: &str, v: Option<u32>, default: Option<u32>) -> Result<u32, ConfigError> {
    match v.or(default) {
        Some(0) => err(key, "must be at least 1"),
        Some(n) => Ok(n),
        None => err(key, "missing: give a value or choose a `[device] preset`"),
    }
}

fn fraction_in(key: &str, v: f64, lo: f64, hi: f64) -> Result<f64, ConfigError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(v)
    } else {
        err(
            key,
            format!("expected a fraction between {lo} and {hi}, found {v}"),
        )
    }
}

fn validate(raw: RawConfig) -> Result<Config, ConfigError> {
    let (device, geometry, ftl) = validate_device(raw.device, raw.ftl)?;
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

fn validate_timing(raw: &RawTimingTable) -> Result<Vec<ModeTiming>, ConfigError> {
    let tables = [&raw.slc, &raw.mlc, &raw.tlc, &raw.qlc];
    CellMode::ALL
        .iter()
        .zip(tables)
        .map(|(&mode, t)| {
            let mut timing = ModeTiming::default_for(mode);
            let Some(t) = t else { return Ok(timing) };
            let table = format!("[device.timing.{}]", mode.name());
            let per_type = |key: &str, v: &Vec<f64>| -> Result<Vec<u64>, ConfigError> {
                let k = format!("{table} {key}");
                let bits = mode.bits() as usize;
                if v.len() != 1 && v.len() != bits {
                    return err(
                        &k,
                        format!(
                            "expected 1 value or {bits} (one per page type), found {}",
                            v.len()
                        ),
                    );
                }
                if let Some(bad) = v
                    .iter()
                    .find(|x| !(x.is_finite() && **x > 0.0 && **x < 1e7))
                {
                    return err(
                        &k,
                        format!("expected latencies in microseconds above 0, found {bad}"),
                    );
                }
                Ok((0..bits)
                    .map(|i| (v[i.min(v.len() - 1)] * 1000.0).round() as u64)
                    .collect())
            };
            if let Some(v) = &t.read_us {
                timing.read_ns = per_type("read_us", v)?;
            }
            if let Some(v) = &t.program_us {
                timing.program_ns = per_type("program_us", v)?;
            }
            if let Some(e) = t.erase_us {
                if !(e.is_finite() && e > 0.0 && e < 1e8) {
                    return err(
                        &format!("{table} erase_us"),
                        format!("expected microseconds above 0, found {e}"),
                    );
                }
                timing.erase_ns = (e * 1000.0).round() as u64;
            }
            Ok(timing)
        })
        .collect()
}

/// `[device.wear] spread`.
const SPREAD: Keywords<Spread> = Keywords::new(
    "spread",
    &[
        ("none", Is(Spread::Rated)),
        ("lognormal:SIGMA", Form(log_normal_form)),
        ("desnoyers", Is(MEASURED)),
    ],
);

/// The spread of a drive's blocks when `[device.wear]` gives none.
const DEFAULT_SIGMA: f64 = 0.15;

fn log_normal(sigma: f64) -> Spread {
    Spread::LogNormal {
        median: 1.0,
        sigma,
        outliers: 0.0,
    }
}

fn log_normal_form(w: &FormWord) -> Result<Spread, String> {
    match w.args.parse::<f64>() {
        Ok(sigma) if sigma.is_finite() && (0.0..=3.0).contains(&sigma) => Ok(log_normal(sigma)),
        _ => Err(format!(
            "{} needs 0 ≤ SIGMA ≤ 3, found `{}`",
            w.form, w.word
        )),
    }
}

fn validate_wear(w: &RawWear) -> Result<WearConfig, ConfigError> {
    let mut rated = DEFAULT_RATED;
    if let Some(r) = &w.rated {
        for (i, v) in [r.slc, r.mlc, r.tlc, r.qlc].into_iter().enumerate() {
            if let Some(v) = v {
                if !(1.0..=1e12).contains(&v) {
                    let key = format!("[device.wear] rated.{}", CellMode::NAMES[i]);
                    return err(
                        &key,
                        format!("expected program/erase cycles of at least 1, found {v}"),
                    );
                }
                rated[i] = v;
            }
        }
    }
    let spread = SPREAD.parse_or(
        "[device.wear] spread",
        w.spread.as_deref(),
        log_normal(DEFAULT_SIGMA),
    )?;
    let temperature_c = w.temperature_c.unwrap_or(25.0);
    if !(-40.0..=125.0).contains(&temperature_c) {
        return err(
            "[device.wear] temperature_c",
            format!("expected -40 to 125 °C, found {temperature_c}"),
        );
    }
    // The rating is what a drive's blocks reach in use: the chip bench's
    // full-block pattern is measured against single-page cycling, not drives.
    let conditions = Conditions {
        pattern: CyclePattern::SinglePage,
        temperature_c,
        relaxed: w.retention_relaxed.unwrap_or(false),
    };
    let initial = match w.initial {
        None => 0.0,
        Some(x) if (0.0..1.0).contains(&x.0) => x.0,
        Some(x) => {
            return err(
                "[device.wear] initial",
                format!(
                    "expected the share of the rated cycles already used, from 0 up to (not including) 1, found {}",
                    x.0
                ),
            )
        }
    };
    Ok(WearConfig {
        initial,
        rated,
        spread,
        conditions,
    })
}

fn validate_device(
    d: RawDevice,
    f: RawFtl,
) -> Result<(DeviceConfig, Geometry, FtlConfig), ConfigError> {
    let cells: Vec<_> = CellMode::ALL.iter().map(|&m| (m.name(), Is(m))).collect();
    let cell = Keywords::new("cell mode", &cells).parse_or(
        "[device] cell",
        d.cell.as_deref(),
        CellMode::Mlc,
    )?;
    let channels = positive("[device] channels", d.channels, None)?;
    let chips_per_channel = positive("[device] chips_per_channel", d.chips_per_channel, Some(1))?;
    let dies_per_chip = positive("[device] dies_per_chip", d.dies_per_chip, Some(1))?;
    let planes_per_die = positive("[device] planes_per_die", d.planes_per_die, Some(1))?;
    let pages_per_block = positive("[device] pages_per_block", d.pages_per_block, None)?;
    let page_size = d.page_size.map(|s| s.0).ok_or_else(|| {
        ConfigError::new(
            "[device] page_size",
            "missing: give a size like \"8KiB\" or choose a `[device] preset`",
        )
    })?;
    if !(SECTOR..=(1 << 20)).contains(&page_size) || page_size % SECTOR != 0 {
        return err(
            "[device] page_size",
            format!("expected a multiple of 512 bytes up to 1MiB, found {page_size}"),
        );
    }
    let unit_size = match f.mapping_unit {
        Some(s) => s.0,
        None => page_size.min(4096),
    };
    if unit_size < SECTOR || unit_size % SECTOR != 0 || page_size % unit_size != 0 {
        return err(
            "[ftl] mapping_unit",
            format!("expected a multiple of 512 bytes that divides the page size ({page_size}), found {unit_size}"),
        );
    }
    let units_per_page = (page_size / unit_size) as u32;
    let units_per_block = units_per_page as u64 * pages_per_block as u64;
    let dies = channels as u64 * chips_per_channel as u64 * dies_per_chip as u64;
    let planes = dies * planes_per_die as u64;
    let capacity = match (d.over_provisioning, d.reserve) {
        (Some(_), Some(_)) => {
            return err(
                "[device] reserve",
                "give either over_provisioning or reserve, not both",
            );
        }
        (Some(op), None) => {
            Capacity::OverProvisioning(fraction_in("[device] over_provisioning", op.0, 0.0, 10.0)?)
        }
        (None, Some(r)) => Capacity::Reserve(fraction_in("[device] reserve", r.0, 0.0, 0.95)?),
        (None, None) => Capacity::OverProvisioning(0.07),
    };
    // A nominal capacity sizes the planes: enough blocks for it plus the spare setting.
    let nominal_units = match d.capacity {
        None => None,
        Some(c) if c.0 >= unit_size && c.0 % unit_size == 0 => Some(c.0 / unit_size),
        Some(c) => {
            return err(
                "[device] capacity",
                format!(
                    "expected a whole number of mapping units ({unit_size} bytes), found {}",
                    c.0
                ),
            )
        }
    };
    let blocks_per_plane = match nominal_units {
        Some(user) => {
            let raw = match capacity {
                Capacity::OverProvisioning(op) => user as f64 * (1.0 + op),
                Capacity::Reserve(r) => user as f64 / (1.0 - r),
            };
            let per_plane = (raw / (units_per_block * planes) as f64).ceil();
            per_plane.clamp(1.0, u32::MAX as f64) as u32
        }
        None => positive("[device] blocks_per_plane", d.blocks_per_plane, None)?,
    };
    let blocks = planes * blocks_per_plane as u64;
    let slots = blocks * units_per_block;
    if units_per_block > 1 << 20 || slots >= u32::MAX as u64 || blocks >= 1 << 31 {
        return err(
            "[device]",
            format!(
                "impossible geometry: {slots} mapping units of {unit_size} bytes ({} GiB raw); nandlab addresses at most 4 billion units per drive",
                (slots * unit_size) >> 30
            ),
        );
    }
    let user_units = match (nominal_units, capacity) {
        (Some(user), _) => user,
        (None, Capacity::OverProvisioning(op)) => (slots as f64 / (1.0 + op)).floor() as u64,
        (None, Capacity::Reserve(r)) => (slots as f64 * (1.0 - r)).floor() as u64,
    };
    let command_order = COMMAND_ORDER.parse_or(
        "[ftl] command_order",
        f.command_order.as_deref(),
        CommandOrder::Reordered,
    )?;
    let gc_scope = GC_SCOPE.parse_or("[ftl] gc_scope", f.gc_scope.as_deref(), GcScope::Plane)?;
    let planes_per_pool = match gc_scope {
        GcScope::Plane => 1,
        GcScope::Die => planes_per_die,
    };
    if gc_scope == GcScope::Die && d.multiplane == Some(true) {
        return err(
            "[ftl] gc_scope",
            "\"die\" opens one block per die at a time, so it cannot program planes together: set [device] multiplane = false",
        );
    }
    let pools = (planes / planes_per_pool as u64) as u32;
    let mut geometry = Geometry {
        cell,
        channels,
        chips_per_channel,
        dies_per_chip,
        planes_per_die,
        blocks_per_plane,
        pages_per_block,
        planes_per_pool,
        pools,
        blocks_per_pool: blocks_per_plane * planes_per_pool,
        page_size: page_size as u32,
        unit_size: unit_size as u32,
        units_per_page,
        units_per_block: units_per_block as u32,
        dies: dies as u32,
        planes: planes as u32,
        blocks: blocks as u32,
        slots,
        user_units,
        raw_capacity_bytes: slots * unit_size,
        user_capacity_bytes: user_units * unit_size,
        fast: Dividers::new(1, 1, 1, 1, 1, 1),
    };
    geometry.fast = geometry.dividers();

    let names = interface::names();
    let table: Vec<_> = names.iter().map(|n| (n.as_str(), Is(n.as_str()))).collect();
    let name = Keywords::new("interface", &table).parse_or(
        "[device] interface",
        d.interface.as_deref(),
        "nvme-gen3-x4",
    )?;
    let mut iface = interface::lookup(name).expect("interface::names() are interfaces");
    if let Some(r) = d.link_rate {
        iface.link_rate = r.0;
    }
    if let Some(o) = d.command_overhead {
        if o.0 > 1_000_000_000 {
            return err(
                "[device] command_overhead",
                format!("expected at most 1 s (an interface's overhead per command is microseconds), found {} ns", o.0),
            );
        }
        iface.command_overhead_ns = o.0;
    }
    let write_buffer = d.write_buffer.map(|s| s.0).unwrap_or(64 << 20);
    let multiplane = d.multiplane.unwrap_or(gc_scope == GcScope::Plane);
    let stripe_bytes = page_size * if multiplane { planes_per_die as u64 } else { 1 };
    if write_buffer < stripe_bytes {
        return err(
            "[device] write_buffer",
            format!("must hold at least one page programmed at once ({stripe_bytes} bytes), found {write_buffer}"),
        );
    }
    let device = DeviceConfig {
        preset: d.preset,
        capacity,
        interface: iface,
        channel_rate: d.channel_rate.map(|r| r.0).unwrap_or(400_000_000),
        multiplane,
        write_buffer,
        write_cache: WRITE_CACHE.parse_or(
            "[device] write_cache",
            d.write_cache.as_deref(),
            WriteCache::Plp,
        )?,
        timing: validate_timing(&d.timing)?,
        wear: validate_wear(&d.wear)?,
    };

    let gc = GC_POLICY.parse_or("[ftl] gc", f.gc.as_deref(), GcPolicy::Greedy)?;
    let blocks_per_pool = geometry.blocks_per_pool;
    let watermark = |key: &str,
                     v: Option<CountOrFraction>,
                     default: f64|
     -> Result<u32, ConfigError> {
        let n = match v.unwrap_or(CountOrFraction::Fraction(default)) {
            CountOrFraction::Count(n) => n,
            CountOrFraction::Fraction(x) => (x * blocks_per_pool as f64).round().max(2.0) as u64,
        };
        if n < 2 {
            return err(
                key,
                format!("GC needs at least 2 free blocks per pool, found {n}"),
            );
        }
        Ok(n.min(u32::MAX as u64) as u32)
    };
    let gc_start = watermark("[ftl] gc_start", f.gc_start, 0.02)?;
    let gc_stop = watermark("[ftl] gc_stop", f.gc_stop, 0.05)?.max(gc_start);
    if let Some(CountOrFraction::Count(n)) = f.gc_stop {
        if (n as u32) < gc_start {
            return err(
                "[ftl] gc_stop",
                format!("must be at least gc_start ({gc_start} blocks), found {n}"),
            );
        }
    }
    let spare = geometry.spare_blocks_per_pool();
    let capacity_key = match capacity {
        Capacity::OverProvisioning(_) => "[device] over_provisioning",
        Capacity::Reserve(_) => "[device] reserve",
    };
    // Free blocks foreground GC keeps and the two open frontiers (host, GC)
    // hold no data; the rest of the spare space is what GC reclaims from. The
    // high watermark (gc_stop) is a target background GC may not reach on a
    // drive full of data; it is also what the drive must keep when blocks die.
    let needed = gc_start as f64 + 2.0;
    if spare <= needed && nominal_units.is_some() {
        // The nominal capacity sized the planes: say which capacity would do.
        let gc_start_of = |bpp: u32| match f.gc_start.unwrap_or(CountOrFraction::Fraction(0.02)) {
            CountOrFraction::Count(n) => n as f64,
            CountOrFraction::Fraction(x) => (x * (bpp * planes_per_pool) as f64).round().max(2.0),
        };
        let raw_per_user = match capacity {
            Capacity::OverProvisioning(op) => 1.0 + op,
            Capacity::Reserve(r) => 1.0 / (1.0 - r),
        };
        // Whole GiB from the present capacity up, each sizing the planes as
        // above, until GC has enough spare blocks.
        let gib_units = (1u64 << 30) / unit_size;
        let now_gib = nominal_units.unwrap_or(0).div_ceil(gib_units);
        let enough = (now_gib.max(1)..now_gib.max(1).saturating_mul(1024)).find(|&g| {
            let user = g * gib_units;
            let bpp = (user as f64 * raw_per_user / (units_per_block * planes) as f64).ceil();
            let spare =
                bpp * planes_per_pool as f64 - user as f64 / units_per_block as f64 / pools as f64;
            spare > gc_start_of(bpp as u32) + 2.0
        });
        return err(
            "[device] capacity",
            format!(
                "too small for this geometry: {blocks_per_plane} blocks per plane leave {spare:.1} spare blocks per GC pool, \
                 and GC needs more than {needed:.0} (gc_start plus 2 open blocks); give at least {} GiB, \
                 more spare space, or fewer planes",
                enough.map_or("many more".to_string(), |g| g.to_string())
            ),
        );
    }
    if spare <= needed {
        return err(
            capacity_key,
            format!(
                "spare space too small for GC: {spare:.1} spare blocks per {scope}, but gc_start ({gc_start} blocks) \
                 plus 2 open blocks leave nothing to reclaim: it needs more than {needed:.0}; raise the spare space or lower [ftl] gc_start",
                scope = if planes_per_pool == 1 { "plane" } else { "die" },
            ),
        );
    }
    let pslc = validate_pslc(&f, &geometry, gc_start)?;
    let stripe_order = match f.stripe_order.as_deref() {
        None => STRIPE_DIMS.iter().map(|&(_, dim, _)| dim).collect(),
        Some(order) => stripe_order("[ftl] stripe_order", order)?,
    };
    let zombie = f.zombie.unwrap_or(false);
    let wear_unleveling = f.wear_unleveling.unwrap_or(zombie);
    let wear_leveling = f.wear_leveling.unwrap_or(false) || wear_unleveling;
    if wear_leveling && gc != GcPolicy::Greedy {
        let key = if f.wear_leveling == Some(true) {
            "[ftl] wear_leveling"
        } else {
            "[ftl] wear_unleveling"
        };
        return err(
            key,
            format!(
                "works with gc = \"greedy\" (ZombieNAND's usage-table GC), found gc = \"{}\"",
                f.gc.as_deref().unwrap_or_default()
            ),
        );
    }
    let life_threshold = match f.life_threshold {
        None => 0.8,
        Some(x) if (0.0..=1.0).contains(&x) => x,
        Some(x) => {
            return err(
                "[ftl] life_threshold",
                format!(
                "expected a fraction of the pool's average remaining life from 0 to 1, found {x}"
            ),
            )
        }
    };
    let early_switch_blocks = match (wear_unleveling, f.early_switch_blocks) {
        (false, _) => 0,
        (true, None) => early_switch_pool(&geometry, gc_stop),
        (true, Some(n)) if n <= geometry.blocks_per_pool => n,
        (true, Some(n)) => {
            return err(
                "[ftl] early_switch_blocks",
                format!(
                    "expected at most the {} blocks of a GC pool, found {n}",
                    geometry.blocks_per_pool
                ),
            )
        }
    };
    let map_cache = match f.map_cache {
        None => None,
        Some(s) if s.0 >= page_size => Some(s.0),
        Some(s) => {
            return err(
                "[ftl] map_cache",
                format!(
                    "must hold at least one translation page ({page_size} bytes), found {}",
                    s.0
                ),
            )
        }
    };
    let ftl = FtlConfig {
        gc,
        gc_start,
        gc_stop,
        stripe_order,
        idle_threshold_ns: f.idle_threshold.map(|d| d.0).unwrap_or(1_000_000),
        read_priority: f.read_priority.unwrap_or(true),
        command_order,
        gc_scope,
        zombie,
        wear_leveling,
        wear_unleveling,
        life_threshold,
        early_switch_blocks,
        map_cache,
        read_ahead: f.read_ahead.map_or(0, |s| s.0),
        pslc,
        paired_page_backup: f.paired_page_backup.unwrap_or(true),
    };
    Ok((device, geometry, ftl))
}

/// `[ftl] pslc*`, `fold_idle`, `direct_write*`: the pSLC cache, sized per GC pool.
fn validate_pslc(f: &RawFtl, g: &Geometry, gc_start: u32) -> Result<PslcConfig, ConfigError> {
    let kind = PSLC.parse_or("[ftl] pslc", f.pslc.as_deref(), PslcKind::Off)?;
    let cache_keys = [
        ("pslc_size", f.pslc_size.is_some()),
        ("pslc_dynamic_share", f.pslc_dynamic_share.is_some()),
        ("pslc_static_after", f.pslc_static_after.is_some()),
        ("fold_idle", f.fold_idle.is_some()),
        ("direct_write", f.direct_write == Some(true)),
        ("direct_write_after", f.direct_write_after.is_some()),
    ];
    if kind == PslcKind::Off {
        if let Some((key, _)) = cache_keys.iter().find(|(_, given)| *given) {
            return err(
                &format!("[ftl] {key}"),
                "configures the pSLC cache: set [ftl] pslc = \"static\" or \"dynamic\"",
            );
        }
        return Ok(PslcConfig {
            kind,
            static_blocks: 0,
            dynamic_blocks: 0,
            static_after: 0.0,
            fold_idle: false,
            direct_write: false,
            direct_write_after: 0,
        });
    }
    if kind == PslcKind::Static {
        for key in ["pslc_dynamic_share", "pslc_static_after"] {
            if cache_keys.iter().any(|&(k, given)| k == key && given) {
                return err(
                    &format!("[ftl] {key}"),
                    "applies to a dynamic cache: set [ftl] pslc = \"dynamic\"",
                );
            }
        }
    }
    let direct_write = f.direct_write.unwrap_or(false);
    if f.direct_write_after.is_some() && !direct_write {
        return err(
            "[ftl] direct_write_after",
            "sets when direct-write starts: set [ftl] direct_write = true",
        );
    }
    if g.cell == CellMode::Slc {
        return err(
            "[ftl] pslc",
            "a pSLC cache runs multi-bit cells as SLC; this drive's cells are already SLC",
        );
    }
    let size = match f.pslc_size {
        None => Volume::Capacities(0.03),
        Some(v) => volume("[ftl] pslc_size", v, g)?,
    };
    // Blocks per pool holding that much data in SLC mode (whole pages).
    let slc_units = ((g.units_per_block / g.cell.bits()) / g.units_per_page * g.units_per_page)
        .max(g.units_per_page) as u64;
    let units = size
        .bytes(g.user_capacity_bytes)
        .div_ceil(g.unit_size as u64);
    let static_blocks = units.div_ceil(slc_units * g.pools as u64);
    let static_blocks = match (kind, static_blocks) {
        (PslcKind::Static, 0) => 1,
        (_, n) => n,
    };
    // The native blocks left must hold the pool's share of the user data
    // plus what GC needs (as the spare-space check of the whole pool).
    let native = g.blocks_per_pool as f64 - static_blocks as f64;
    let data = g.user_units_per_pool() as f64 / g.units_per_block as f64;
    if native - data <= gc_start as f64 + 2.0 {
        return err(
            "[ftl] pslc_size",
            format!(
                "the static cache takes {static_blocks} of each GC pool's {} blocks, leaving {:.1} spare native blocks; \
                 GC needs more than {}: lower pslc_size or raise the spare space",
                g.blocks_per_pool,
                native - data,
                gc_start + 2
            ),
        );
    }
    let share = match f.pslc_dynamic_share {
        None => 0.75,
        Some(x) => fraction_in("[ftl] pslc_dynamic_share", x.0, 0.0, 1.0)?,
    };
    let static_after = match f.pslc_static_after {
        None => 0.1,
        Some(x) => fraction_in("[ftl] pslc_static_after", x.0, 0.0, 1.0)?,
    };
    Ok(PslcConfig {
        kind,
        static_blocks: static_blocks as u32,
        dynamic_blocks: match kind {
            PslcKind::Dynamic => (share * native).floor() as u32,
            _ => 0,
        },
        static_after,
        fold_idle: f.fold_idle.unwrap_or(true),
        direct_write,
        direct_write_after: f.direct_write_after.map_or(4 << 20, |s| s.0),
    })
}

/// ZombieNAND's Eq. 1: early-switch blocks per pool ≤ (R − W)·B / 2^(S−2),
/// with R the reserve and W the high watermark in whole percent of the flash,
/// B the blocks per pool and S the native bits per cell (1 for SLC: no lower
/// mode to switch to).
pub fn early_switch_pool(g: &Geometry, gc_stop: u32) -> u32 {
    if g.cell.bits() < 2 {
        return 0;
    }
    let reserve = 100.0 * (1.0 - g.user_units as f64 / g.slots as f64);
    let watermark = 100.0 * gc_stop as f64 / g.blocks_per_pool as f64;
    let (r, w) = (reserve.round(), watermark.round());
    if r <= w {
        return 0;
    }
    ((r - w) * g.blocks_per_pool as f64 / 100.0 / f64::from(1u32 << (g.cell.bits() - 2))).floor()
        as u32
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

/// `x` for messages: as written, or in exponent form when very large or small.
fn shown(x: f64) -> String {
    if x == 0.0 || (1e-4..1e15).contains(&x.abs()) {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// A volume (`key`) in bytes or multiples of the user capacity, if its bytes
/// are a size a config may give.
fn volume(key: &str, v: RawVolume, g: &Geometry) -> Result<Volume, ConfigError> {
    match v {
        RawVolume::Bytes(b) => Ok(Volume::Bytes(b)),
        RawVolume::Multiple(m) if m * g.user_capacity_bytes as f64 <= MAX_BYTES as f64 => {
            Ok(Volume::Capacities(m))
        }
        RawVolume::Multiple(m) => err(
            key,
            format!(
                "expected at most 4 EiB (2^62 bytes), found {} times the user capacity",
                shown(m)
            ),
        ),
    }
}

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

/// `[device] write_cache`.
const WRITE_CACHE: Keywords<WriteCache> = Keywords::new(
    "write cache",
    &[
        ("plp", Is(WriteCache::Plp)),
        ("volatile", Is(WriteCache::Volatile)),
        ("off", Is(WriteCache::Off)),
    ],
);

/// `[ftl] gc`.
const GC_POLICY: Keywords<GcPolicy> = Keywords::new(
    "GC policy",
    &[
        ("greedy", Is(GcPolicy::Greedy)),
        ("fifo", Is(GcPolicy::Fifo)),
        ("cost-benefit", Is(GcPolicy::CostBenefit)),
        ("random", Is(GcPolicy::Random)),
        ("d-choices:N", Form(d_choices)),
    ],
);

fn d_choices(w: &FormWord) -> Result<GcPolicy, String> {
    match w.args.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(GcPolicy::DChoices(n)),
        _ => Err(format!(
            "expected {} with N a whole number ≥ 1, found `{}`",
            w.form, w.word
        )),
    }
}

/// `[ftl] command_order`.
const COMMAND_ORDER: Keywords<CommandOrder> = Keywords::new(
    "command order",
    &[
        ("reordered", Is(CommandOrder::Reordered)),
        ("in-order", Is(CommandOrder::InOrder)),
    ],
);

/// `[ftl] gc_scope`.
const GC_SCOPE: Keywords<GcScope> = Keywords::new(
    "GC scope",
    &[("plane", Is(GcScope::Plane)), ("die", Is(GcScope::Die))],
);

/// `[ftl] pslc`.
const PSLC: Keywords<PslcKind> = Keywords::new(
    "pSLC cache",
    &[
        ("off", Is(PslcKind::Off)),
        ("static", Is(PslcKind::Static)),
        ("dynamic", Is(PslcKind::Dynamic)),
    ],
);

/// `[ftl] stripe_order`'s letters: (letter, dimension, what it stands for),
/// the default order first to last.
const STRIPE_DIMS: [(char, StripeDim, &str); 4] = [
    ('c', StripeDim::Channel, "channel"),
    ('w', StripeDim::Chip, "way/chip"),
    ('d', StripeDim::Die, "die"),
    ('p', StripeDim::Plane, "plane"),
];

/// A stripe order: each letter of [`STRIPE_DIMS`] once.
fn stripe_order(key: &str, order: &str) -> Result<Vec<StripeDim>, ConfigError> {
    let letters = STRIPE_DIMS.map(|(c, _, _)| c.to_string()).join(", ");
    let mut dims = Vec::new();
    for c in order.chars() {
        let Some(&(_, dim, _)) = STRIPE_DIMS.iter().find(|(letter, _, _)| *letter == c) else {
            let words = STRIPE_DIMS.map(|(_, _, word)| word).join(", ");
            return err(
                key,
                format!(
                    "expected a permutation of the letters {letters} ({words}), found `{order}`"
                ),
            );
        };
        if dims.contains(&dim) {
            return err(
                key,
                format!("each of {letters} must appear once, found `{order}`"),
            );
        }
        dims.push(dim);
    }
    if dims.len() != STRIPE_DIMS.len() {
        return err(
            key,
            format!("expected all four letters {letters}, found `{order}`"),
        );
    }
    Ok(dims)
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
