//! Energy (`[device.energy]`): a phase's flash energy is its dies' busy
//! time at their datasheet power plus its channel bytes, computed here from
//! the preset's own latencies; an idle drive draws its controller's idle
//! power; phases add up to the run; SNIA's 2009 SATA SLC drive (8 K-IOPS at
//! 3 K-IOPS/W) is the sanity anchor for random writes; bad keys are refused.

use nandlab_core::stats::Summary;
use nandlab_core::{Config, Simulator};

fn run(device: &str, phases: &str) -> (Vec<Summary>, Summary) {
    let text = format!(
        "seed = 1\n[device]\n{device}\n[[phase]]\nname = \"fill\"\nkind = \"fill\"\n{phases}"
    );
    let mut sim =
        Simulator::new(Config::from_toml(&text, "test").unwrap_or_else(|e| panic!("{e}")));
    let phases = sim.run_all(&mut |_| true).unwrap();
    (
        phases.into_iter().map(|p| p.summary).collect(),
        sim.run_summary(),
    )
}

const READS: &str =
    "[[phase]]\nname = \"reads\"\nread_fraction = 1.0\nqueue_depth = 8\nrequests = 20000\n";

#[test]
fn flash_energy_is_busy_time_at_datasheet_power_plus_channel_bytes() {
    // SNIA's SLC dies: tR 25 µs, one 4 KiB page per read, no multi-plane.
    let (phases, _) = run("preset = \"snia-slc\"", READS);
    let r = &phases[1];
    assert_eq!(r.flash_reads, 20_000);
    let expected = 20_000.0 * (82.5e-3 * 25e-6 + 40e-12 * 4096.0);
    assert!(
        (r.energy.flash_joules / expected - 1.0).abs() < 1e-9,
        "{} vs {expected}",
        r.energy.flash_joules
    );
    // Commands in flight all the time at QD 8: the controller is active throughout.
    let seconds = r.sim_seconds;
    assert!((r.energy.controller_joules / (1.5 * seconds) - 1.0).abs() < 0.01);
    let total = r.energy.flash_joules + r.energy.controller_joules + r.energy.link_joules;
    assert!((r.energy.energy_joules - total).abs() < 1e-12);
    assert!((r.energy.average_power_w.unwrap() - total / seconds).abs() < 1e-9);
    assert!((r.energy.iops_per_watt.unwrap() - 20_000.0 / total).abs() < 1e-6);
    // The fill moved data at memory speed: nothing drawn.
    assert_eq!(phases[0].energy.energy_joules, 0.0);
}

#[test]
fn an_idle_drive_draws_its_controller_idle_power_and_phases_add_up() {
    let sparse =
        "[[phase]]\nname = \"sparse\"\nread_fraction = 1.0\nrate = 20\nduration = \"5s\"\n";
    let (phases, total) = run(
        "preset = \"snia-slc\"\n[device.energy]\ncontroller_idle_w = 0.25",
        &format!("{READS}{sparse}"),
    );
    let s = &phases[2];
    assert!(
        (0.25..0.27).contains(&s.energy.average_power_w.unwrap()),
        "{:?}",
        s.energy
    );
    let sum: f64 = phases.iter().map(|p| p.energy.energy_joules).sum();
    assert!((total.energy.energy_joules / sum - 1.0).abs() < 1e-9);
}

#[test]
fn snias_sata_slc_drive_is_the_anchor_for_random_writes() {
    // SNIA (2009): a 32 GB SATA-II SLC drive, 8 K-IOPS at 3 K-IOPS/W; its
    // figures are in steady state, where GC works beside the host.
    let writes = "[[phase]]\nname = \"age\"\ntimed = false\nvolume = 2.0\n\
                  [[phase]]\nname = \"writes\"\nqueue_depth = 32\nrequests = 100000\n";
    let (phases, _) = run("preset = \"snia-slc\"", writes);
    let w = &phases[2];
    let kiops_per_watt = w.energy.iops_per_watt.unwrap() / 1000.0;
    assert!((2.0..6.0).contains(&kiops_per_watt), "{:?}", w.energy);
    assert!(
        (2.0..4.0).contains(&w.energy.average_power_w.unwrap()),
        "{:?}",
        w.energy
    );
}

#[test]
fn bad_energy_settings_are_refused_with_the_key() {
    let bad = |energy: &str| {
        let text = format!(
            "[device]\npreset = \"snia-slc\"\n[device.energy]\n{energy}\n[[phase]]\nrequests = 1\n"
        );
        Config::from_toml(&text, "test").unwrap_err().to_string()
    };
    let e = bad("read_mw = -1");
    assert!(e.contains("[device.energy] read_mw"), "{e}");
    let e = bad("controller_idle_w = 5");
    assert!(
        e.contains("controller_idle_w") && e.contains("active"),
        "{e}"
    );
    let e = bad("volts = 3.3");
    assert!(e.contains("volts"), "{e}");
}
