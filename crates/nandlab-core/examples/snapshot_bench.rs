//! Snapshot benchmark: runs a config file (default: the MQSim reference
//! drive aged into GC steady state, 512 GiB) up to its last phase, stops
//! that phase at its first sync point with a snapshot, reads the snapshot
//! back and checks the state came back whole. Prints the time to write and
//! to read the snapshot, its size, and the peak memory. Usage:
//! `cargo run --release -p nandlab-core --example snapshot_bench [CONFIG.toml ...]`

use nandlab_core::sim::{ConfigText, SnapshotPlan};
use nandlab_core::{SimError, Simulator};
use std::sync::atomic::Ordering;
use std::time::Instant;

fn main() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/");
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        paths = vec![format!("{root}mqsim-reference-steady.toml")];
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let config = ConfigText {
            text,
            json: false,
            source: path.clone(),
            seed: None,
        };
        let cfg = config.parse().unwrap_or_else(|e| panic!("{e}"));
        let last = cfg.phases.len() - 1;
        let snapshot =
            std::env::temp_dir().join(format!("nandlab-bench-{}.snap", std::process::id()));
        let mut sim = Simulator::new(cfg);
        for i in 0..last {
            sim.run_phase(i, &mut |_| true)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        sim.snapshot_to(SnapshotPlan {
            path: snapshot.clone(),
            every: None,
            config,
            extra: String::new(),
        });
        let wall = Instant::now();
        sim.interrupt_handle().store(true, Ordering::Relaxed);
        match sim.run_phase(last, &mut |_| true) {
            Err(SimError::Interrupted { .. }) => {}
            other => panic!("expected a pause, got {:?}", other.map(|r| r.summary.name)),
        }
        let write = wall.elapsed().as_secs_f64();
        let at_pause = sim.state_fingerprint();
        drop(sim);
        let size = std::fs::metadata(&snapshot).map(|m| m.len()).unwrap_or(0);
        let wall = Instant::now();
        let resumed = Simulator::resume(&snapshot).unwrap_or_else(|e| panic!("{e}"));
        let read = wall.elapsed().as_secs_f64();
        assert_eq!(
            resumed.state_fingerprint(),
            at_pause,
            "the state came back changed"
        );
        let _ = std::fs::remove_file(&snapshot);
        println!("{path}");
        println!(
            "  snapshot {:.1} MiB: write {write:.2} s (with the phase's first ~1,024 requests), \
             read {read:.2} s, {:.0} MiB/s; peak RSS {:.0} MiB",
            size as f64 / (1 << 20) as f64,
            size as f64 / (1 << 20) as f64 / read.max(1e-9),
            nandlab_core::sim::footprint::peak_rss_mib().unwrap_or(f64::NAN),
        );
    }
}
