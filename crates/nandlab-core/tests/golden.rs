//! Same results across restructurings: a fixed set of configs covering every
//! feature family (fill, each GC policy, wear levelling and die-scope GC,
//! pSLC static with direct-write and dynamic with folding, a DRAM-less map
//! with read-ahead and in-order commands, `[[phase.job]]`s, open loop and
//! idle gaps, power cuts on volatile and capacitor-protected caches, timed
//! and closed-loop trace replay, a ZombieNAND drive run to death, and the
//! built-in default experiment whole) runs to
//! exactly the summaries, time series, job figures and power cuts recorded
//! in `tests/golden/expected.json` (wall-clock figures aside); the headline
//! figures, latency tails (p99, p99.9, max) of every phase among them, show
//! what moved at a glance.
//!
//! A change meant to change results re-records them with
//! `NANDLAB_BLESS=1 cargo test --test golden` and says why in its commit.

use nandlab_core::{Config, Simulator};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// `config` on the shared drive of `base.toml` (tables merged key by key),
/// unless it names a device preset of its own.
fn on_base(config: &str) -> String {
    let own: toml::Table = config.parse().expect("a golden config is TOML");
    if own.get("device").and_then(|d| d.get("preset")).is_some() {
        return config.to_string();
    }
    let base = std::fs::read_to_string(golden_dir().join("base.toml")).unwrap();
    let mut merged: toml::Table = base.parse().unwrap();
    merge(&mut merged, own);
    toml::to_string(&merged).unwrap()
}

fn merge(into: &mut toml::Table, from: toml::Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

/// A timed MSR trace of 30,000 requests: bursts, reads of what was written,
/// a hot range rewritten.
fn trace_file() -> PathBuf {
    let path = std::env::temp_dir().join(format!("nandlab-golden-{}.csv", std::process::id()));
    let mut lines = String::new();
    for i in 0..30_000u64 {
        let op = if i % 4 == 1 { "Read" } else { "Write" };
        let offset = if i % 3 == 0 {
            (i * 7919 % 4_000) * 4096
        } else {
            (i * 104_729 % 20_000) * 4096
        };
        let size = [4096, 8192, 65536][(i % 7 % 3) as usize];
        let at = 128_166_372_000_000_000 + i / 8 * 700 + i % 8;
        lines += &format!("{at},host,0,{op},{offset},{size},100\n");
    }
    std::fs::write(&path, lines).unwrap();
    path
}

/// Every golden config, by name, as the engine reads it.
fn configs() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(golden_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|e| e == "toml") && name != "base" {
            out.insert(name, on_base(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    // The built-in default experiment, whole: what `nandlab run` shows a newcomer.
    out.insert(
        "default-experiment".into(),
        nandlab_core::config::presets::DEFAULT_CONFIG.to_string(),
    );
    let trace = trace_file();
    let replay = |mode: &str, extra: &str| {
        on_base(&format!(
            "[ftl]\ngc = \"greedy\"\n[[phase]]\nkind = \"fill\"\nvolume = 0.5\n[[phase]]\n\
             kind = \"trace\"\ntrace = \"{}\"\nformat = \"msr\"\nreplay = \"{mode}\"\n{extra}",
            trace.display()
        ))
    };
    out.insert("trace-timed".into(), replay("timed", "time_scale = 0.5\n"));
    out.insert(
        "trace-closed-compact-loop".into(),
        replay(
            "closed",
            "queue_depth = 4\nremap = \"compact\"\nloop = true\nvolume = \"60MiB\"\n",
        ),
    );
    out
}

/// A JSON value with every wall-clock figure taken out, and the integrity
/// oracle's counts (present when `NANDLAB_INTEGRITY=1` turns it on: a check,
/// not a result).
fn without_wall_clock(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| !k.contains("wall") && k != "integrity")
                .map(|(k, v)| (k, without_wall_clock(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(without_wall_clock).collect()),
        v => v,
    }
}

/// What a run of `text` produced: its headline figures (to read a difference
/// at a glance) and a digest of everything (to catch any).
fn outcome(name: &str, text: &str) -> Value {
    let cfg = Config::from_toml(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut sim = Simulator::new(cfg);
    let phases = sim
        .run_all(&mut |_| true)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    sim.drive().check_invariants().unwrap();
    let everything = without_wall_clock(json!({
        "phases": phases.iter().map(|p| json!({
            "summary": p.summary,
            "rows": p.rows,
            "jobs": p.jobs,
            "power_losses": p.power_losses,
        })).collect::<Vec<_>>(),
        "run": sim.run_summary(),
        "erase_counts": sim.drive().ftl.blocks().erase_count(),
    }));
    let text = serde_json::to_string(&everything).unwrap();
    if let Some(dir) = std::env::var_os("NANDLAB_GOLDEN_DUMP") {
        std::fs::write(Path::new(&dir).join(format!("{name}.json")), &text).unwrap();
    }
    let run = sim.run_summary();
    json!({
        "digest": format!("{:08x}-{}", crc32fast::hash(text.as_bytes()), text.len()),
        "waf": run.waf,
        "host_write_bytes": run.host_write_bytes,
        "host_read_bytes": run.host_read_bytes,
        "erases": run.erases,
        "sim_seconds": run.sim_seconds,
        "read_p99_us": run.read_latency_us.p99,
        "read_p999_us": run.read_latency_us.p999,
        "read_max_us": run.read_latency_us.max,
        "write_p99_us": run.write_latency_us.p99,
        "write_p999_us": run.write_latency_us.p999,
        "write_max_us": run.write_latency_us.max,
        "phase_tails_us": phases.iter().map(|p| json!({
            "phase": p.summary.name,
            "read": [p.summary.read_latency_us.p99, p.summary.read_latency_us.p999, p.summary.read_latency_us.max],
            "write": [p.summary.write_latency_us.p99, p.summary.write_latency_us.p999, p.summary.write_latency_us.max],
        })).collect::<Vec<_>>(),
        "rows": phases.iter().map(|p| p.rows.len()).sum::<usize>(),
        "cuts": phases.iter().map(|p| p.power_losses.len()).sum::<usize>(),
    })
}

#[test]
fn every_feature_family_gives_the_recorded_results() {
    let expected_path = golden_dir().join("expected.json");
    // Through text and back, as the recorded file is read (its floats parse
    // the same way).
    let got: BTreeMap<String, Value> = configs()
        .into_iter()
        .map(|(name, text)| {
            let o = outcome(&name, &text);
            (name, serde_json::from_str(&o.to_string()).unwrap())
        })
        .collect();
    if std::env::var_os("NANDLAB_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&got).unwrap();
        std::fs::write(&expected_path, text + "\n").unwrap();
        return;
    }
    let expected: BTreeMap<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(&expected_path).expect("tests/golden/expected.json"),
    )
    .unwrap();
    let names: Vec<&String> = got.keys().collect();
    assert_eq!(
        names,
        expected.keys().collect::<Vec<_>>(),
        "the golden configs changed: re-record with NANDLAB_BLESS=1"
    );
    let differ: Vec<String> = got
        .iter()
        .filter(|(name, o)| expected[*name] != **o)
        .map(|(name, o)| format!("{name}:\n  expected {}\n  got      {o}", expected[name]))
        .collect();
    assert!(
        differ.is_empty(),
        "results differ from tests/golden/expected.json:\n{}",
        differ.join("\n")
    );
}
