//! Same config and seed → identical summary and time series; another seed → a different run.

use nandlab_core::config::presets::DEFAULT_CONFIG;
use nandlab_core::{Config, Simulator};

mod common;
use common::{outcome, Outcome, SMALL_DRIVE};

/// `SMALL_DRIVE` through a fill, a zipf mix and an open loop with idle gaps.
fn small() -> String {
    format!(
        r#"seed = 11
{SMALL_DRIVE}[ftl]
gc = "d-choices:4"
[[phase]]
kind = "fill"
volume = 0.9
[[phase]]
distribution = "zipf:0.9"
read_fraction = 0.3
trim_fraction = 0.05
queue_depth = 8
volume = 1.5
[[phase]]
rate = 20000
idle_every = "8MiB"
idle_duration = "50ms"
distribution = "hotcold:0.8:0.2"
duration = "0.5s"
"#
    )
}

fn run(text: &str, seed: Option<u64>) -> Outcome {
    let mut cfg = Config::from_toml(text, "test").unwrap();
    if let Some(s) = seed {
        cfg.seed = s;
    }
    let mut sim = Simulator::new(cfg);
    let phases = sim.run_all(&mut |_| true).unwrap();
    sim.drive().check_invariants().unwrap();
    outcome(&sim, phases)
}

#[test]
fn same_seed_same_results() {
    let a = run(&small(), None);
    let b = run(&small(), None);
    assert_eq!(a, b);
    assert!(
        a.0[1].host_requests > 0 && a.0[2].host_requests > 0,
        "{:?}",
        a.0.iter()
            .map(|s| (s.host_requests, s.sim_seconds))
            .collect::<Vec<_>>()
    );
}

#[test]
fn another_seed_another_run() {
    let a = run(&small(), None);
    let b = run(&small(), Some(12));
    assert_ne!(a.0[1], b.0[1]);
}

#[test]
fn the_default_experiment_loads() {
    let cfg = Config::from_toml(DEFAULT_CONFIG, "default").unwrap();
    assert_eq!(cfg.phases.len(), 3);
    assert_eq!(cfg.device.preset.as_deref(), Some("mqsim-default"));
}

#[test]
fn an_untimed_phase_makes_the_same_flash_decisions_in_no_time() {
    let phases = |timed: bool| {
        format!(
            "seed = 4\n[device]\ncell = \"slc\"\nchannels = 2\nblocks_per_plane = 64\npages_per_block = 32\npage_size = \"4KiB\"\n\
             over_provisioning = \"20 %\"\n[[phase]]\nkind = \"fill\"\n[[phase]]\ntimed = {timed}\nqueue_depth = 8\nvolume = 3.0\n"
        )
    };
    let run = |timed: bool| {
        let mut sim = Simulator::new(Config::from_toml(&phases(timed), "t").unwrap());
        let r = sim.run_all(&mut |_| true).unwrap();
        (
            r[1].summary.clone(),
            sim.drive().ftl.blocks().erase_count().to_vec(),
        )
    };
    let (timed, timed_erases) = run(true);
    let (untimed, untimed_erases) = run(false);
    assert!(timed.sim_seconds > 0.0 && untimed.sim_seconds == 0.0);
    assert_eq!(timed.waf, untimed.waf);
    assert_eq!(timed.erases, untimed.erases);
    assert_eq!(timed_erases, untimed_erases);
}
