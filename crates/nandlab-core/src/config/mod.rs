//! Experiment configs: load TOML or JSON text, apply the device preset, check
//! every key, and produce a [`Config`] whose values are all in range and
//! mutually consistent — or one [`ConfigError`] naming the key at fault.
//!
//! One module per section, each checking its keys in turn: `shape.rs` (the
//! keys that size the flash, with `[ftl] mapping_unit` and `gc_scope`),
//! `device.rs`, `ftl.rs` with `pslc.rs` and `zombie.rs` (wear levelling,
//! ZombieNAND, the death rule), `phase.rs` with `requests.rs`,
//! `jobs.rs` and `replay.rs` (trace keys), `stats.rs`; `presets.rs` merges a
//! preset first. Keyword options read their names, values and messages from
//! one table each (`keyword.rs`); `raw.rs` is the file as written.

mod device;
mod energy;
mod error;
mod errors;
mod ftl;
mod jobs;
mod keyword;
mod phase;
pub mod presets;
mod pslc;
mod raw;
mod replay;
mod requests;
mod shape;
mod stats;
mod tree;
mod values;
mod zombie;

pub use device::{Capacity, DeviceConfig, Suspend, SuspendOps, WearConfig, WriteCache};
pub use error::{did_you_mean, ConfigError};
pub use errors::ErrorsConfig;
pub use ftl::{
    rank_in, registered_policies, CommandOrder, FtlConfig, GcPolicy, GcScope, GcUntil, Registered,
    StripeDim, REGISTERED_POLICIES,
};
pub use jobs::MAX_JOBS_PER_PHASE;
pub use phase::{Arrival, PhaseConfig, PhaseKind, MAX_NAME_CHARS};

/// The longest `description` a config may give.
pub const MAX_DESCRIPTION_CHARS: usize = 65_536;
pub use pslc::{PslcConfig, PslcKind};
pub use raw::CountOrFraction;
pub use stats::Interval;
pub use values::Volume;
pub use zombie::{
    early_switch_by_capacity, early_switch_pool, slc_units_per_block, DeathRule, EarlySwitch,
    LifeAverage, LifeSkip, WearRules,
};

use crate::geometry::Geometry;
use error::{polish_serde_message, toml_location};
use raw::RawConfig;
use serde::Serialize;
use serde_json::Value;
use values::err;

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

impl Config {
    /// Loads a TOML config. `source` names it in error messages.
    pub fn from_toml(text: &str, source: &str) -> Result<Config, ConfigError> {
        let value = tree::from_toml(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start].matches('\n').count() + 1);
            let msg = match e.message().trim() {
                // toml's own words for an integer past i64 (its integers are 64-bit signed).
                "u64 value was too large" | "i64 value was too large" => {
                    "an integer above 9,223,372,036,854,775,807, the largest TOML holds".to_string()
                }
                other => other.to_string(),
            };
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
        if value.get("sweep").is_some() || value.get("axis").is_some() {
            return Err(ConfigError::new(
                "",
                "this is a sweep file ([sweep], [[axis]]), not an experiment: run it with `nandlab sweep FILE`",
            ));
        }
        presets::apply(&mut value)?;
        jobs::inherit_phase_keys(&mut value);
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
            why.push(format!(
                "a volatile write cache without flush ([device] write_cache = \"{}\"): \
                 acknowledged writes still in the DRAM buffer are lost",
                device::WRITE_CACHE.name(WriteCache::Volatile)
            ));
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

/// Checks every section: the drive's shape first, which the others need.
fn validate(raw: RawConfig) -> Result<Config, ConfigError> {
    let shape = shape::shape(&raw.device, &raw.ftl)?;
    let device = device::validate(raw.device, &shape)?;
    let ftl = ftl::validate(&raw.ftl, &shape)?;
    if device.suspend.ops != SuspendOps::None && !ftl.read_priority {
        return err(
            "[device] suspend",
            "a read suspends the operation on its die only with [ftl] read_priority = true \
             (without it, reads wait for everything booked)",
        );
    }
    let geometry = shape.geometry;
    if raw.phases.is_empty() {
        return err(
            "[[phase]]",
            "a config needs at least one [[phase]] table (the workload to run)",
        );
    }
    let default_interval = match raw.stats.interval {
        Some(i) => Some(stats::interval("[stats] interval", i)?),
        None => None,
    };
    let phases = raw
        .phases
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            phase::validate(
                &format!("[[phase]] #{}", i + 1),
                i + 1,
                p,
                &geometry,
                default_interval,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(d) = &raw.description {
        let chars = d.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            return err(
                "description",
                format!(
                    "expected at most {MAX_DESCRIPTION_CHARS} characters (it heads the results \
                     and their report), found {chars}"
                ),
            );
        }
    }
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

#[cfg(test)]
mod tests;
