//! Engine benchmark: runs a config file (default: the MQSim reference
//! workload) and prints wall time, simulated requests and flash programs per
//! wall-second, and peak memory. Usage:
//! `cargo run --release -p nandlab-core --example bench [CONFIG.toml ...]`

use nandlab_core::{Config, Simulator};
use std::time::Instant;

fn main() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/");
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        paths = vec![
            format!("{root}mqsim-reference.toml"),
            format!("{root}gc-steady-state.toml"),
        ];
    }
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let cfg = Config::from_toml(&text, &path).unwrap_or_else(|e| panic!("{e}"));
        let wall = Instant::now();
        let mut sim = Simulator::new(cfg);
        let phases = sim.run_all(&mut |_| true).unwrap_or_else(|e| panic!("{e}"));
        let secs = wall.elapsed().as_secs_f64();
        let run = sim.run_summary();
        println!("{path}");
        for p in &phases {
            let s = &p.summary;
            let programs = s.flash_programs as f64;
            println!(
                "  {:<14} wall {:>7.3} s  requests {:>9}  {:>6.2} M req/s  {:>6.2} M programs/s  WAF {:.3}  IOPS {:>9.0}  write p99 {:.0} us  read p99/p99.9/max {:.0}/{:.0}/{:.0} us",
                s.name,
                s.wall_seconds,
                s.host_requests,
                s.requests_per_wall_second / 1e6,
                programs / s.wall_seconds.max(1e-9) / 1e6,
                s.waf.unwrap_or(f64::NAN),
                s.rates.iops.unwrap_or(f64::NAN),
                s.write_latency_us.p99,
                s.read_latency_us.p99,
                s.read_latency_us.p999,
                s.read_latency_us.max
            );
        }
        println!(
            "  total: wall {secs:.3} s (setup included), {:.2} M requests per wall-second, peak RSS {:.0} MiB",
            run.host_requests as f64 / secs / 1e6,
            nandlab_core::sim::footprint::peak_rss_mib().unwrap_or(f64::NAN)
        );
    }
}
