//! Built-in drive presets, shipped as TOML fragments (`presets/*.toml` in this
//! crate) so that they read like user configs. A config selects one with
//! `[device] preset = "NAME"`; its own keys then override the preset's.

use super::keyword::{Keywords, Meaning::Is};
use super::ConfigError;
use serde_json::Value;

/// (name, TOML text) of every built-in preset.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "mqsim-default",
        include_str!("../../presets/mqsim-default.toml"),
    ),
    (
        "zombienand-synthetic-tlc",
        include_str!("../../presets/zombienand-synthetic-tlc.toml"),
    ),
    (
        "zombienand-synthetic-mlc",
        include_str!("../../presets/zombienand-synthetic-mlc.toml"),
    ),
    (
        "zombienand-trace-tlc",
        include_str!("../../presets/zombienand-trace-tlc.toml"),
    ),
    (
        "zombienand-trace-mlc",
        include_str!("../../presets/zombienand-trace-mlc.toml"),
    ),
    (
        "swissbit-standard",
        include_str!("../../presets/swissbit-standard.toml"),
    ),
    (
        "tlc-static-pslc",
        include_str!("../../presets/tlc-static-pslc.toml"),
    ),
    (
        "tlc-dynamic-pslc",
        include_str!("../../presets/tlc-dynamic-pslc.toml"),
    ),
    (
        "tlc-3d-errors",
        include_str!("../../presets/tlc-3d-errors.toml"),
    ),
    ("snia-slc", include_str!("../../presets/snia-slc.toml")),
    ("snia-mlc", include_str!("../../presets/snia-mlc.toml")),
];

/// The TOML text of a preset.
pub fn preset_toml(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Names of all presets, in listing order.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// (name, one-line description) of every preset.
pub fn preset_descriptions() -> Vec<(&'static str, String)> {
    PRESETS
        .iter()
        .map(|(n, t)| {
            let v: toml::Table = toml::from_str(t).expect("built-in presets are valid TOML");
            let d = v
                .get("description")
                .and_then(|d| d.as_str())
                .unwrap_or("")
                .to_string();
            (*n, d)
        })
        .collect()
}

/// Merges `[device] preset`'s tables under the user's own keys. A preset
/// may itself build on another (its own `[device] preset`).
pub(super) fn apply(value: &mut Value) -> Result<(), ConfigError> {
    let Some(name) = value.get("device").and_then(|d| d.get("preset")).cloned() else {
        return Ok(());
    };
    let name = name
        .as_str()
        .filter(|_| super::tree::non_finite(&name).is_none())
        .ok_or_else(|| ConfigError::new("[device] preset", "expected a preset name in quotes"))?;
    let table: Vec<_> = PRESETS.iter().map(|&(n, t)| (n, Is(t))).collect();
    let text = Keywords::new("preset", &table).parse("[device] preset", name)?;
    let mut base: Value = toml::from_str(text).expect("built-in presets are valid TOML");
    base.as_object_mut().unwrap().remove("description");
    apply(&mut base)?;
    // The spare space is one setting under two names: the user's replaces the preset's.
    let user = value.get("device").cloned().unwrap_or(Value::Null);
    if let Some(device) = base.get_mut("device").and_then(Value::as_object_mut) {
        for (given, other) in [
            ("reserve", "over_provisioning"),
            ("over_provisioning", "reserve"),
        ] {
            if user.get(given).is_some() && user.get(other).is_none() {
                device.remove(other);
            }
        }
    }
    deep_merge(&mut base, value.take());
    *value = base;
    Ok(())
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

/// The experiment `nandlab run` runs when given no config: MQSim's default drive
/// made small enough to finish in seconds, pre-filled, then aged by random writes.
pub const DEFAULT_CONFIG: &str = r#"# nandlab's built-in default experiment.
description = "MQSim's default drive scaled to 16 GiB of flash (15 GiB user capacity): filled, aged by 4 KiB random writes at QD 32 into GC steady state, then a 70/30 read/write mix"
seed = 42

[device]
preset = "mqsim-default"
# MQSim's default drive with 4 of its 8 channels, 2 of its 4 chips per channel
# and 256 of its 2048 blocks per plane: 16 GiB raw.
channels = 4
chips_per_channel = 2
blocks_per_plane = 256

[ftl]
# MQSim keeps 5 % of each plane free, which leaves little of the 7 % spare
# for GC to work with; keep 3 blocks instead (6 when idle).
gc_start = 3
gc_stop = 6

[[phase]]
name = "precondition"
kind = "fill"
volume = 1.0

[[phase]]
name = "random-write"
pattern = "random"
block_size = "4KiB"
queue_depth = 32
volume = 2.0

[[phase]]
name = "mixed-70r30w"
pattern = "random"
read_fraction = 0.7
block_size = "4KiB"
queue_depth = 32
volume = 0.5
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_a_description() {
        for (name, d) in preset_descriptions() {
            assert!(!d.is_empty(), "{name}");
        }
    }
}
