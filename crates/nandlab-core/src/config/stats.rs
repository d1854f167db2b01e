//! `[stats]`: how often the time series takes a row (the default for every
//! phase; a phase's own `interval` overrides it).

use super::raw::RawInterval;
use super::values::err;
use super::ConfigError;
use serde::{Deserialize, Serialize};

/// When the time series takes a row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    Time(u64),
    Bytes(u64),
    Requests(u64),
}

/// `[stats] interval` or a phase's `interval` (`key`).
pub(super) fn interval(key: &str, i: RawInterval) -> Result<Interval, ConfigError> {
    match i {
        RawInterval::Requests(0) | RawInterval::Time(0) | RawInterval::Bytes(0) => {
            err(key, "must be above zero")
        }
        RawInterval::Requests(n) => Ok(Interval::Requests(n)),
        RawInterval::Time(t) => Ok(Interval::Time(t)),
        RawInterval::Bytes(b) => Ok(Interval::Bytes(b)),
    }
}
