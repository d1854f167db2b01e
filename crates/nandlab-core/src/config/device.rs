//! `[device]`, `[device.timing.*]` and `[device.wear]`: the host interface,
//! the write buffer and what a power cut does to it, flash latencies per bit
//! mode, and endurance. (The keys that size the flash are the drive's shape,
//! `shape.rs`.)

use super::errors::ErrorsConfig;
use super::ftl::GcScope;
use super::keyword::{FormWord, Keywords, Meaning::*};
use super::raw::{RawDevice, RawModeTiming, RawWear};
use super::shape::Shape;
use super::values::err;
use super::ConfigError;
use crate::host::interface::{self, Interface};
use crate::media::spread::{Spread, MEASURED};
use crate::media::wear::{Conditions, CyclePattern, DEFAULT_RATED};
use crate::media::{CellMode, ModeTiming};
use crate::stats::energy::EnergyConfig;
use crate::units::BadValue;
use serde::{Deserialize, Serialize};

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
    /// Which operations a host read may suspend, and what suspending costs.
    pub suspend: Suspend,
    /// Controller DRAM rate, bytes per second, that host write data crosses
    /// into the write buffer (None: not a bottleneck).
    pub dram_rate: Option<u64>,
    /// `[device.errors]`: bit errors, ECC and read retry (None: off).
    pub errors: Option<ErrorsConfig>,
    /// `[device.energy]`: power per operation, link and controller.
    pub energy: EnergyConfig,
}

/// `[device] suspend` and its datasheet keys: a host read arriving during a
/// program or erase may suspend it (the die stops within `latency_ns`), is
/// sensed and transferred, and the operation resumes (`resume_ns` extra),
/// at most `max_per_op` times per operation so that writes never starve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suspend {
    pub ops: SuspendOps,
    pub latency_ns: u64,
    pub resume_ns: u64,
    pub max_per_op: u32,
}

/// `[device] suspend`: the operations a read may suspend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SuspendOps {
    None,
    Erase,
    ProgramErase,
}

impl Suspend {
    /// No suspension (the default).
    pub const NONE: Suspend = Suspend {
        ops: SuspendOps::None,
        latency_ns: 0,
        resume_ns: 0,
        max_per_op: 0,
    };
}

/// `[device] suspend`.
const SUSPEND: Keywords<SuspendOps> = Keywords::new(
    "suspend",
    &[
        ("none", Is(SuspendOps::None)),
        ("erase", Is(SuspendOps::Erase)),
        ("program+erase", Is(SuspendOps::ProgramErase)),
    ],
);

/// Datasheet-style defaults: ONFI parts stop an erase or program within
/// tens of µs of a suspend command; resuming re-ramps the pulse. Vendors cap
/// erase suspends per operation (about 10 on some 1x-nm TLC).
const SUSPEND_LATENCY_NS: u64 = 20_000;
const RESUME_OVERHEAD_NS: u64 = 10_000;
const MAX_SUSPENDS: u32 = 10;

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
    /// Program times fall and erase times grow as a block wears (its ISPP
    /// loops and erase pulses); false: each mode keeps its configured times
    /// for life (the ZombieNAND paper's Table I model).
    pub timing_drift: bool,
}

/// `[device] write_cache`.
pub(super) const WRITE_CACHE: Keywords<WriteCache> = Keywords::new(
    "write cache",
    &[
        ("plp", Is(WriteCache::Plp)),
        ("volatile", Is(WriteCache::Volatile)),
        ("off", Is(WriteCache::Off)),
    ],
);

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

fn log_normal_form(w: &FormWord) -> Result<Spread, BadValue> {
    match w.args.parse::<f64>() {
        Ok(sigma) if sigma.is_finite() && (0.0..=3.0).contains(&sigma) => Ok(log_normal(sigma)),
        _ => Err(format!("{} needs 0 ≤ SIGMA ≤ 3, found `{}`", w.form, w.word).into()),
    }
}

/// The `[device]` keys but the shape's, with `[device.timing.*]` and `[device.wear]`.
pub(super) fn validate(d: RawDevice, shape: &Shape) -> Result<DeviceConfig, ConfigError> {
    let interface = host_interface(&d)?;
    let multiplane = d.multiplane.unwrap_or(shape.gc_scope == GcScope::Plane);
    let write_buffer = write_buffer(&d, shape, multiplane)?;
    let write_cache = WRITE_CACHE.parse_or(
        "[device] write_cache",
        d.write_cache.as_deref(),
        WriteCache::Plp,
    )?;
    let timing = timing(&d)?;
    let wear = wear(&d.wear)?;
    let suspend = suspend(&d)?;
    let dram_rate = d.dram_rate.map(|r| r.0);
    let errors = super::errors::validate(&d.errors, shape.geometry.cell, wear.conditions.relaxed)?;
    let energy = super::energy::validate(&d.energy, &interface)?;
    Ok(DeviceConfig {
        preset: d.preset,
        capacity: shape.capacity,
        interface,
        channel_rate: d.channel_rate.map(|r| r.0).unwrap_or(400_000_000),
        multiplane,
        write_buffer,
        write_cache,
        timing,
        wear,
        suspend,
        dram_rate,
        errors,
        energy,
    })
}

/// `[device] suspend`, `suspend_latency`, `resume_overhead`, `max_suspends`.
fn suspend(d: &RawDevice) -> Result<Suspend, ConfigError> {
    let ops = SUSPEND.parse_or("[device] suspend", d.suspend.as_deref(), SuspendOps::None)?;
    let given =
        d.suspend_latency.is_some() || d.resume_overhead.is_some() || d.max_suspends.is_some();
    if ops == SuspendOps::None {
        if given {
            return err(
                "[device] suspend",
                "suspend_latency, resume_overhead and max_suspends need suspend = \"erase\" or \"program+erase\"",
            );
        }
        return Ok(Suspend::NONE);
    }
    let duration = |key: &str, v: Option<crate::units::Duration>, default: u64| match v {
        Some(v) if v.0 > 100_000_000 => err(
            key,
            format!(
                "expected at most 100 ms (a datasheet gives tens of µs), found {} ns",
                v.0
            ),
        ),
        Some(v) => Ok(v.0),
        None => Ok(default),
    };
    let max_per_op = d.max_suspends.unwrap_or(MAX_SUSPENDS);
    if !(1..=1000).contains(&max_per_op) {
        return err(
            "[device] max_suspends",
            format!("expected 1 to 1000 suspends per operation, found {max_per_op}"),
        );
    }
    Ok(Suspend {
        ops,
        latency_ns: duration(
            "[device] suspend_latency",
            d.suspend_latency,
            SUSPEND_LATENCY_NS,
        )?,
        resume_ns: duration(
            "[device] resume_overhead",
            d.resume_overhead,
            RESUME_OVERHEAD_NS,
        )?,
        max_per_op,
    })
}

/// `[device] interface`, with `link_rate` and `command_overhead` overriding
/// the named link's.
fn host_interface(d: &RawDevice) -> Result<Interface, ConfigError> {
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
    Ok(iface)
}

/// `[device] write_buffer`, bytes: at least the pages programmed at once (a
/// page of every plane of a die with multiplane programs).
fn write_buffer(d: &RawDevice, shape: &Shape, multiplane: bool) -> Result<u64, ConfigError> {
    let g = &shape.geometry;
    let write_buffer = d.write_buffer.map(|s| s.0).unwrap_or(64 << 20);
    let pages = if multiplane {
        g.planes_per_die as u64
    } else {
        1
    };
    let stripe_bytes = g.page_size as u64 * pages;
    if write_buffer < stripe_bytes {
        return err(
            "[device] write_buffer",
            format!("must hold at least one page programmed at once ({stripe_bytes} bytes), found {write_buffer}"),
        );
    }
    Ok(write_buffer)
}

/// `[device.timing.MODE]` of every bit mode, over the built-in latencies.
fn timing(d: &RawDevice) -> Result<Vec<ModeTiming>, ConfigError> {
    let t = &d.timing;
    CellMode::ALL
        .iter()
        .zip([&t.slc, &t.mlc, &t.tlc, &t.qlc])
        .map(|(&mode, t)| mode_timing(mode, t.as_ref()))
        .collect()
}

fn mode_timing(mode: CellMode, t: Option<&RawModeTiming>) -> Result<ModeTiming, ConfigError> {
    let mut timing = ModeTiming::default_for(mode);
    let Some(t) = t else { return Ok(timing) };
    let table = format!("[device.timing.{}]", mode.name());
    if let Some(v) = &t.read_us {
        timing.read_ns = per_page_type(&format!("{table} read_us"), mode, &v.0)?;
    }
    if let Some(v) = &t.program_us {
        timing.program_ns = per_page_type(&format!("{table} program_us"), mode, &v.0)?;
    }
    if let Some(e) = t.erase_us {
        if !(e.is_finite() && e > 0.0 && e < 1e8) {
            return err(
                &format!("{table} erase_us"),
                format!("expected microseconds above 0 and below 100,000,000 (100 s), found {e}"),
            );
        }
        timing.erase_ns = (e * 1000.0).round() as u64;
    }
    Ok(timing)
}

/// Latencies in µs, one for every page type of `mode` or one for all, in ns.
fn per_page_type(key: &str, mode: CellMode, v: &[f64]) -> Result<Vec<u64>, ConfigError> {
    let bits = mode.bits() as usize;
    if v.len() != 1 && v.len() != bits {
        return err(
            key,
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
            key,
            format!(
                "expected latencies in microseconds above 0 and below 10,000,000 (10 s), found {bad}"
            ),
        );
    }
    Ok((0..bits)
        .map(|i| (v[i.min(v.len() - 1)] * 1000.0).round() as u64)
        .collect())
}

/// `[device.wear]`.
fn wear(w: &RawWear) -> Result<WearConfig, ConfigError> {
    let rated = rated(w)?;
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
        timing_drift: w.timing_drift.unwrap_or(true),
        rated,
        spread,
        conditions,
    })
}

/// `[device.wear] rated.MODE`, over the built-in ratings.
fn rated(w: &RawWear) -> Result<[f64; 4], ConfigError> {
    let mut rated = DEFAULT_RATED;
    let Some(r) = &w.rated else { return Ok(rated) };
    for (i, v) in [r.slc, r.mlc, r.tlc, r.qlc].into_iter().enumerate() {
        if let Some(v) = v {
            if !(1.0..=1e12).contains(&v) {
                let key = format!("[device.wear] rated.{}", CellMode::NAMES[i]);
                return err(
                    &key,
                    format!("expected program/erase cycles from 1 to 1e12, found {v}"),
                );
            }
            rated[i] = v;
        }
    }
    Ok(rated)
}
