//! Checks of single values that several sections share: counts, fractions,
//! volumes, and how a number is shown in a message.

use super::raw::RawVolume;
use super::ConfigError;
use crate::geometry::Geometry;
use crate::units::MAX_BYTES;
use serde::Serialize;
use std::num::NonZeroU32;

/// The smallest block a host addresses, bytes: sizes are multiples of it.
pub(super) const SECTOR: u64 = 512;

/// An amount of data: `volume`, `idle_every`, `[ftl] pslc_size`.
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

/// The error at `key`.
pub(super) fn err<T>(key: &str, msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError::new(key, msg))
}

/// A count (at least 1: serde refuses 0), `default` when not given (None: the key is required).
pub(super) fn positive(
    key: &str,
    v: Option<NonZeroU32>,
    default: Option<u32>,
) -> Result<u32, ConfigError> {
    match v.map(NonZeroU32::get).or(default) {
        Some(n) => Ok(n),
        None => err(key, "missing: give a value or choose a `[device] preset`"),
    }
}

/// A number in `lo..=hi`, `default` when not given.
pub(super) fn number(
    key: &str,
    v: Option<f64>,
    default: f64,
    lo: f64,
    hi: f64,
    what: &str,
) -> Result<f64, ConfigError> {
    match v {
        None => Ok(default),
        Some(x) if x.is_finite() && (lo..=hi).contains(&x) => Ok(x),
        Some(x) => err(
            key,
            format!(
                "expected {what} from {} to {}, found {}",
                shown(lo),
                shown(hi),
                shown(x)
            ),
        ),
    }
}

/// A number from `lo` to `hi`.
pub(super) fn fraction_in(key: &str, v: f64, lo: f64, hi: f64) -> Result<f64, ConfigError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(v)
    } else {
        err(
            key,
            format!("expected a fraction between {lo} and {hi}, found {v}"),
        )
    }
}

/// A size for messages about sector multiples: its bytes, and for a decimal
/// size (`"4KB"` is 4000 bytes) the binary one it most likely meant.
pub(super) fn sector_size_shown(bytes: u64) -> String {
    size_shown(bytes, SECTOR)
}

/// A size that is not a multiple of `align`, for messages: its bytes, and
/// for a decimal size the binary one it most likely meant.
pub(super) fn size_shown(bytes: u64, align: u64) -> String {
    for (scale, unit) in [
        (1_000_000_000_000, "T"),
        (1_000_000_000, "G"),
        (1_000_000, "M"),
        (1_000, "K"),
    ] {
        if bytes >= scale && bytes.is_multiple_of(scale) && !bytes.is_multiple_of(align) {
            return format!(
                "{bytes} ({} {unit}B is decimal: did you mean \"{}{unit}iB\"?)",
                bytes / scale,
                bytes / scale
            );
        }
    }
    bytes.to_string()
}

/// `x` for messages: as written, or in exponent form when very large or small.
pub(super) fn shown(x: f64) -> String {
    if x == 0.0 || (1e-4..1e15).contains(&x.abs()) {
        x.to_string()
    } else {
        format!("{x:e}")
    }
}

/// A volume (`key`) in bytes or multiples of the user capacity, if its bytes
/// are a size a config may give.
pub(super) fn volume(key: &str, v: RawVolume, g: &Geometry) -> Result<Volume, ConfigError> {
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
