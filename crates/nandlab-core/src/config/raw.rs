//! The config file as written by a user: serde structs mirroring the TOML
//! schema one to one, every field optional, unknown keys rejected. Turning
//! these into a checked [`super::Config`] is `validate`'s job.

use crate::units::{
    parse_duration_ns, parse_fraction, parse_size, Duration, Fraction, Rate, Size, MAX_BYTES,
};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;
use std::num::NonZeroU32;

/// A number that is either a fraction (float < 1, or "5 %") or a count (integer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CountOrFraction {
    Count(u64),
    Fraction(f64),
}

/// `volume`: bytes ("10GiB" or an integer) or a float = multiples of the user capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawVolume {
    Bytes(u64),
    Multiple(f64),
}

/// `interval`: simulated time ("100ms"), data moved ("1GiB"), or a request count (integer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RawInterval {
    Requests(u64),
    Time(u64),
    Bytes(u64),
}

/// Implements `Deserialize` through a visitor taking integers, floats and strings.
macro_rules! any_number_or_text {
    ($name:ident, $what:literal, int |$u:ident| $int:expr, float |$f:ident| $float:expr, text |$s:ident| $text:expr) => {
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_u64<E: de::Error>(self, $u: u64) -> Result<$name, E> {
                        $int.map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, i: i64) -> Result<$name, E> {
                        if i < 0 {
                            return Err(E::custom(format!("expected {}, found {i}", $what)));
                        }
                        self.visit_u64(i as u64)
                    }
                    fn visit_f64<E: de::Error>(self, $f: f64) -> Result<$name, E> {
                        $float.map_err(E::custom)
                    }
                    fn visit_str<E: de::Error>(self, $s: &str) -> Result<$name, E> {
                        $text.map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

any_number_or_text!(
    CountOrFraction,
    "a block count (integer) or a fraction (0.05 or \"5 %\")",
    int | u | Ok::<_, String>(CountOrFraction::Count(u)),
    float
        | f
        | if (0.0..1.0).contains(&f) {
            Ok(CountOrFraction::Fraction(f))
        } else {
            Err(format!(
                "expected a fraction below 1 or an integer block count, found {f}"
            ))
        },
    text | s | parse_fraction(s).map(CountOrFraction::Fraction)
);

any_number_or_text!(
    RawVolume,
    "a size like \"10GiB\" or a float (multiples of the user capacity)",
    int | u
        | if u > MAX_BYTES {
            Err(format!(
                "expected a size of at most 4 EiB (2^62 bytes), found {u}"
            ))
        } else if u >= 512 {
            Ok(RawVolume::Bytes(u))
        } else {
            Err(format!("an integer volume is a byte count and {u} is too small; write {u}.0 for {u}× the user capacity"))
        },
    float
        | f
        | if f.is_finite() && f > 0.0 {
            Ok(RawVolume::Multiple(f))
        } else {
            Err(format!(
                "expected a positive multiple of the user capacity, found {f}"
            ))
        },
    text | s | parse_size(s).map(RawVolume::Bytes)
);

any_number_or_text!(
    RawInterval,
    "a time (\"100ms\"), a size (\"1GiB\") or a request count (integer)",
    int | u | Ok::<_, String>(RawInterval::Requests(u)),
    float | f | parse_duration_ns(&format!("{f}s")).map(RawInterval::Time),
    text | s
        | parse_duration_ns(s)
            .map(RawInterval::Time)
            .or_else(|_| parse_size(s).map(RawInterval::Bytes))
            .map_err(|_| format!(
                "expected a time like \"100ms\" or a size like \"1GiB\", found \"{s}\""
            ))
);

/// `working_set`, `working_set_offset`: a share of the user capacity (0.25 or
/// "25 %") or a size ("256MiB", or an integer byte count).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Extent {
    Share(f64),
    Bytes(u64),
}

any_number_or_text!(
    Extent,
    "a share of the user capacity (0.25 or \"25 %\") or a size (\"256MiB\")",
    int | u
        | Ok::<_, String>(if u <= 1 {
            Extent::Share(u as f64)
        } else {
            Extent::Bytes(u)
        }),
    float | f | Ok::<_, String>(Extent::Share(f)),
    text | s
        | parse_fraction(s)
            .map(Extent::Share)
            .or_else(|_| parse_size(s).map(Extent::Bytes))
            .map_err(|_| format!(
                "expected a share like 0.25 or \"25 %\", or a size like \"256MiB\", found \"{s}\""
            ))
);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub seed: Option<u64>,
    pub description: Option<String>,
    #[serde(default)]
    pub device: RawDevice,
    #[serde(default)]
    pub ftl: RawFtl,
    #[serde(default)]
    pub stats: RawStats,
    #[serde(default)]
    pub checks: RawChecks,
    #[serde(default, rename = "phase")]
    pub phases: Vec<RawPhase>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDevice {
    pub preset: Option<String>,
    pub cell: Option<String>,
    pub channels: Option<NonZeroU32>,
    pub chips_per_channel: Option<NonZeroU32>,
    pub dies_per_chip: Option<NonZeroU32>,
    pub planes_per_die: Option<NonZeroU32>,
    pub blocks_per_plane: Option<NonZeroU32>,
    pub pages_per_block: Option<NonZeroU32>,
    pub page_size: Option<Size>,
    /// Nominal (user) capacity: sizes `blocks_per_plane` to hold it plus the spare.
    pub capacity: Option<Size>,
    pub over_provisioning: Option<Fraction>,
    pub reserve: Option<Fraction>,
    pub interface: Option<String>,
    pub link_rate: Option<Rate>,
    pub command_overhead: Option<Duration>,
    pub channel_rate: Option<Rate>,
    pub multiplane: Option<bool>,
    pub write_buffer: Option<Size>,
    pub write_cache: Option<String>,
    pub suspend: Option<String>,
    pub suspend_latency: Option<Duration>,
    pub resume_overhead: Option<Duration>,
    pub max_suspends: Option<u32>,
    pub dram_rate: Option<Rate>,
    #[serde(default)]
    pub timing: RawTimingTable,
    #[serde(default)]
    pub wear: RawWear,
    #[serde(default)]
    pub errors: RawErrors,
    #[serde(default)]
    pub energy: RawEnergy,
}

/// `[device.energy]`: what each operation and the controller draw.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawEnergy {
    pub read_mw: Option<f64>,
    pub program_mw: Option<f64>,
    pub erase_mw: Option<f64>,
    pub channel_pj_per_byte: Option<f64>,
    pub link_w: Option<f64>,
    pub controller_active_w: Option<f64>,
    pub controller_idle_w: Option<f64>,
}

/// `[device.errors]`: bit errors, ECC and read retry.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawErrors {
    pub model: Option<String>,
    pub params: Option<String>,
    pub ecc: Option<String>,
    pub retry_steps: Option<u32>,
    pub retry_factor: Option<f64>,
    pub retry_floor: Option<f64>,
    pub decode_us: Option<f64>,
    pub soft_decode_us: Option<f64>,
    pub soft_reads: Option<u32>,
    pub activation_ev: Option<f64>,
    pub reference_c: Option<f64>,
    pub uber_target: Option<f64>,
    pub read_reclaim: Option<u32>,
    pub refresh_at: Option<f64>,
    pub relaxed_retention: Option<Duration>,
}

/// `[device.wear]`: endurance and how it varies.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWear {
    pub rated: Option<RawRated>,
    pub spread: Option<String>,
    pub temperature_c: Option<f64>,
    pub retention_relaxed: Option<bool>,
    pub initial: Option<Fraction>,
    pub timing_drift: Option<bool>,
}

/// Rated program/erase cycles per bit mode.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRated {
    pub slc: Option<f64>,
    pub mlc: Option<f64>,
    pub tlc: Option<f64>,
    pub qlc: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTimingTable {
    pub slc: Option<RawModeTiming>,
    pub mlc: Option<RawModeTiming>,
    pub tlc: Option<RawModeTiming>,
    pub qlc: Option<RawModeTiming>,
}

/// Latencies of one bit mode in microseconds; `read_us`/`program_us` list one
/// value per page type (LSB, CSB, MSB, TSB) or a single value for all.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawModeTiming {
    pub read_us: Option<Latencies>,
    pub program_us: Option<Latencies>,
    pub erase_us: Option<f64>,
}

/// Latencies in µs: a list (one per page type) or one number for all.
#[derive(Debug, Clone, PartialEq)]
pub struct Latencies(pub Vec<f64>);

impl<'de> Deserialize<'de> for Latencies {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Latencies;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a latency in microseconds or a list of them (one per page type)")
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Latencies, E> {
                Ok(Latencies(vec![x]))
            }
            fn visit_i64<E: de::Error>(self, x: i64) -> Result<Latencies, E> {
                Ok(Latencies(vec![x as f64]))
            }
            fn visit_u64<E: de::Error>(self, x: u64) -> Result<Latencies, E> {
                Ok(Latencies(vec![x as f64]))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Latencies, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element::<f64>()? {
                    // More than any mode's page types is refused by the caller; a
                    // list this long is no one's.
                    if v.len() == 16 {
                        return Err(de::Error::custom(
                            "expected one latency per page type (at most 4), found more than 16",
                        ));
                    }
                    v.push(x);
                }
                Ok(Latencies(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFtl {
    pub mapping_unit: Option<Size>,
    pub gc: Option<String>,
    pub gc_start: Option<CountOrFraction>,
    pub gc_stop: Option<CountOrFraction>,
    pub gc_until: Option<String>,
    pub stripe_order: Option<String>,
    pub idle_threshold: Option<Duration>,
    pub read_priority: Option<bool>,
    pub die_queue_depth: Option<u32>,
    pub command_order: Option<String>,
    pub gc_scope: Option<String>,
    pub zombie: Option<bool>,
    pub wear_leveling: Option<bool>,
    pub wear_unleveling: Option<bool>,
    pub life_threshold: Option<f64>,
    pub unleveling_bet: Option<f64>,
    pub early_switch_blocks: Option<u32>,
    pub early_switch: Option<String>,
    pub life_average: Option<String>,
    pub life_skip: Option<String>,
    pub death: Option<String>,
    pub map_cache: Option<Size>,
    pub map_extents: Option<bool>,
    pub hot_cold: Option<String>,
    pub read_ahead: Option<Size>,
    pub pslc: Option<String>,
    pub pslc_size: Option<RawVolume>,
    pub pslc_dynamic_share: Option<Fraction>,
    pub pslc_static_after: Option<Fraction>,
    pub fold_idle: Option<bool>,
    pub direct_write: Option<bool>,
    pub direct_write_after: Option<Size>,
    pub paired_page_backup: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawChecks {
    pub integrity: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStats {
    pub interval: Option<RawInterval>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPhase {
    pub name: Option<String>,
    pub kind: Option<String>,
    pub pattern: Option<String>,
    pub distribution: Option<String>,
    pub read_fraction: Option<Fraction>,
    pub trim_fraction: Option<Fraction>,
    pub block_size: Option<Size>,
    pub block_sizes: Option<Vec<String>>,
    pub align: Option<Size>,
    pub working_set: Option<Extent>,
    pub working_set_offset: Option<Extent>,
    pub queue_depth: Option<u32>,
    pub rate: Option<f64>,
    pub arrival: Option<String>,
    pub idle_every: Option<RawVolume>,
    pub idle_duration: Option<Duration>,
    pub volume: Option<RawVolume>,
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    pub interval: Option<RawInterval>,
    pub timed: Option<bool>,
    pub drain: Option<bool>,
    pub latency_bins: Option<bool>,
    pub data: Option<String>,
    pub until: Option<String>,
    pub order_seed: Option<u64>,
    pub trace: Option<String>,
    pub format: Option<String>,
    pub skip_bad: Option<bool>,
    pub replay: Option<String>,
    pub time_scale: Option<f64>,
    pub devices: Option<Vec<u32>>,
    pub remap: Option<String>,
    pub unique_bytes: Option<Size>,
    #[serde(rename = "loop")]
    pub looping: Option<bool>,
    pub power_loss: Option<Vec<Duration>>,
    pub power_loss_every: Option<Duration>,
    pub temperature_c: Option<f64>,
    /// `[[phase.job]]`: workloads run together (each has inherited the
    /// phase's workload keys before deserialisation).
    pub job: Option<Vec<RawPhase>>,
}
