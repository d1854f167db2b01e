//! Trace phases (`kind = "trace"`): every real sample replays on a small
//! drive and moves exactly the bytes the trace holds (as its statistics
//! count them); timed replay keeps the recorded (scaled) timing; compaction
//! with a distinct-address budget ends the trace where the budget runs out;
//! looping replays it again; the integrity oracle and the mapping invariants
//! hold throughout; bad trace keys name the key.

mod common;
use common::samples;

use nandlab_core::host::trace::stats::summarize;
use nandlab_core::host::trace::{OnError, TraceReader};
use nandlab_core::{Config, PhaseResult, Simulator};
use std::path::Path;

/// A 4 GiB DRAM-less TLC drive running `phases`, with the oracle on.
fn run(phases: &str) -> Vec<PhaseResult> {
    let text = format!(
        "seed = 5\n[device]\npreset = \"swissbit-standard\"\ncapacity = \"4GiB\"\n{phases}"
    );
    let mut sim =
        Simulator::new(Config::from_toml(&text, "test").unwrap_or_else(|e| panic!("{e}")));
    sim.drive_mut().enable_oracle();
    let r = sim.run_all(&mut |_| true).unwrap_or_else(|e| panic!("{e}"));
    sim.drive().check_invariants().unwrap();
    r
}

fn trace_phase(path: &Path, extra: &str) -> String {
    format!(
        "[[phase]]\nname = \"replay\"\nkind = \"trace\"\ntrace = \"{}\"\n{extra}\n",
        path.display()
    )
}

#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn every_sample_replays_and_moves_the_bytes_it_holds() {
    let dir = samples();
    for file in [
        "msr_rsrch_1.csv",
        "msr_hm_0_first1000.csv",
        "tencent_cbs_sample_50k.csv",
        "blkparse_ycsb_ext4_msclaudz.txt",
        "fiu_mail_cheetah_sample.clean.txt",
        "mqsim_wsrch-small.trace",
        "ssdsim_example_financial1_first10k.ascii",
        "umass_websearch1_first10.spc",
    ] {
        let path = dir.join(file);
        let stats = summarize(&mut TraceReader::open(&path, None, OnError::Stop).unwrap()).unwrap();
        let r = run(&trace_phase(&path, "queue_depth = 4"));
        let s = &r[0].summary;
        assert_eq!(
            (s.host_read_bytes, s.host_write_bytes),
            (stats.read_bytes, stats.write_bytes),
            "{file}"
        );
        // Requests wrapping the capacity's end are split: never fewer than the records.
        assert!(
            s.host_read_requests + s.host_write_requests >= stats.reads + stats.writes,
            "{file}"
        );
    }
}

#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn timed_replay_keeps_the_recorded_timing_scaled() {
    let dir = samples();
    let path = dir.join("msr_hm_0_first1000.csv");
    let stats = summarize(&mut TraceReader::open(&path, None, OnError::Stop).unwrap()).unwrap();
    let recorded = stats.duration_seconds;
    let r = run(&trace_phase(&path, "replay = \"timed\"\ntime_scale = 0.5"));
    let simulated = r[0].summary.sim_seconds;
    // The last request is issued at half the recorded span; the drive is far from saturated.
    assert!(
        simulated >= 0.5 * recorded && simulated < 0.5 * recorded + 0.1,
        "recorded {recorded} s, simulated {simulated} s"
    );
    let closed = run(&trace_phase(&path, "queue_depth = 1"));
    assert!(closed[0].summary.sim_seconds < simulated / 10.0);
}

#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn a_distinct_address_budget_ends_the_trace_and_looping_replays_it() {
    let dir = samples();
    let path = dir.join("msr_rsrch_1.csv");
    let whole = run(&trace_phase(&path, "remap = \"compact\""));
    let budget = run(&trace_phase(&path, "unique_bytes = \"16MiB\""));
    let (w, b) = (&whole[0].summary, &budget[0].summary);
    assert!(
        b.host_write_bytes < w.host_write_bytes / 2,
        "{} of {}",
        b.host_write_bytes,
        w.host_write_bytes
    );
    // Compaction keeps every distinct address: the same bytes as the trace holds.
    let stats = summarize(&mut TraceReader::open(&path, None, OnError::Stop).unwrap()).unwrap();
    assert_eq!(w.host_write_bytes, stats.write_bytes);
    let looped = run(&trace_phase(
        &path,
        "unique_bytes = \"16MiB\"\nloop = true\nvolume = \"64MiB\"",
    ));
    let l = &looped[0].summary;
    let moved = l.host_write_bytes + l.host_read_bytes;
    // The volume is a budget, as fio's size: no request goes past it, and the replay stops
    // only when the next request would (the trace's largest is 64 KiB).
    assert!(moved <= 64 << 20, "{moved}");
    assert!(moved > (64 << 20) - (64 << 10), "{moved}");
    assert!(l.host_write_bytes > 2 * b.host_write_bytes);
}

#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn same_trace_same_seed_same_results() {
    let dir = samples();
    let phase = trace_phase(
        &dir.join("fiu_mail_cheetah_sample.clean.txt"),
        "queue_depth = 16",
    );
    let (a, b) = (run(&phase), run(&phase));
    assert_eq!(a[0].summary.write_latency_us, b[0].summary.write_latency_us);
    assert_eq!(a[0].rows, b[0].rows);
}

#[test]
fn bad_trace_keys_name_the_key() {
    let bad = |phase: &str| {
        let text = format!(
            "[device]\npreset = \"swissbit-standard\"\ncapacity = \"4GiB\"\n[[phase]]\n{phase}\n"
        );
        Config::from_toml(&text, "test").unwrap_err().to_string()
    };
    let e = bad("kind = \"trace\"\ntrace = \"/no/such/trace.csv\"");
    assert!(e.contains("#1 trace") && e.contains("no such file"), "{e}");
    let e = bad("kind = \"trace\"");
    assert!(e.contains("trace = "), "{e}");
    let e = bad("requests = 10\nremap = \"modulo\"");
    assert!(
        e.contains("#1 remap") && e.contains("kind = \"trace\""),
        "{e}"
    );
    let cargo = env!("CARGO_MANIFEST_DIR");
    let e = bad(&format!(
        "kind = \"trace\"\ntrace = \"{cargo}/Cargo.toml\"\nblock_size = \"4KiB\""
    ));
    assert!(
        e.contains("block_size") && e.contains("trace's own requests"),
        "{e}"
    );
    let e = bad(&format!(
        "kind = \"trace\"\ntrace = \"{cargo}/Cargo.toml\"\nreplay = \"timed\"\nqueue_depth = 4"
    ));
    assert!(e.contains("replay") && e.contains("queue_depth"), "{e}");
    let e = bad(&format!(
        "kind = \"trace\"\ntrace = \"{cargo}/Cargo.toml\"\nformat = \"msrr\""
    ));
    assert!(e.contains("format") && e.contains("msr"), "{e}");
    let e = bad(&format!(
        "kind = \"trace\"\ntrace = \"{cargo}/Cargo.toml\"\nloop = true"
    ));
    assert!(e.contains("stop condition"), "{e}");
}

/// A time scale that puts the trace's times past what the simulated clock
/// holds is refused naming `time_scale`, at the first record it pushes
/// past; one that fits replays at the scaled times (never wrapped or
/// saturated into "every request at once").
#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn a_time_scale_the_clock_cannot_hold_is_refused() {
    let dir = samples();
    let path = dir.join("msr_hm_0_first1000.csv");
    let recorded = summarize(&mut TraceReader::open(&path, None, OnError::Stop).unwrap())
        .unwrap()
        .duration_seconds;
    let error = |scale: &str| {
        let text = format!(
            "[device]\npreset = \"swissbit-standard\"\ncapacity = \"4GiB\"\n{}",
            trace_phase(&path, &format!("replay = \"timed\"\ntime_scale = {scale}"))
        );
        let cfg = Config::from_toml(&text, "test").unwrap();
        Simulator::new(cfg)
            .run_all(&mut |_| true)
            .err()
            .map(|e| e.to_string())
    };
    // 10^30: the second record (21.5 µs in) is already 680 million years away.
    for (scale, line) in [("1e30", ":2: "), ("1e12", ": ")] {
        let e = error(scale).unwrap_or_else(|| panic!("time_scale {scale} ran"));
        assert!(
            e.contains(&format!("{line}time_scale (--time-scale) "))
                && e.contains("past the 146 years"),
            "{scale}: {e}"
        );
    }
    // 10^7 puts the recorded 0.3 s at about a month: the clock holds it.
    let r = run(&trace_phase(&path, "replay = \"timed\"\ntime_scale = 1e7"));
    let simulated = r[0].summary.sim_seconds;
    assert!(
        (simulated / (recorded * 1e7) - 1.0).abs() < 1e-3,
        "recorded {recorded} s, simulated {simulated} s"
    );
}
