//! The media model on a whole drive: latency moves with wear (program time
//! falls, erase time rises, in quantized steps), worn blocks are retired with
//! no data lost, and a block without variation dies at its rated cycles.

use nandlab_core::ftl::blocks::BlockState;
use nandlab_core::{Config, SimError, Simulator};

/// A small MLC drive rated for `rated` cycles, with more `[device.wear]` lines, filled and
/// then written with `volume` capacities of random writes.
fn drive(rated: u32, wear: &str, volume: f64) -> Simulator {
    let text = format!(
        r#"
seed = 9
[device]
cell = "mlc"
channels = 2
planes_per_die = 2
blocks_per_plane = 48
pages_per_block = 32
page_size = "8KiB"
over_provisioning = "30 %"
[device.timing.mlc]
read_us = [50]
program_us = [600]
erase_us = 3000
[device.wear]
rated = {{ mlc = {rated} }}
{wear}
[ftl]
gc_start = 3
gc_stop = 4
[[phase]]
kind = "fill"
[[phase]]
queue_depth = 16
volume = {volume:.1}
interval = "8MiB"
"#
    );
    Simulator::new(Config::from_toml(&text, "test").unwrap())
}

#[test]
fn programs_get_faster_and_erases_slower_as_the_drive_ages() {
    let mut sim = drive(400, "spread = \"none\"", 60.0);
    let phases = sim.run_all(&mut |_| true).unwrap();
    let rows = &phases[1].rows;
    let early = &rows[2];
    let late = &rows[rows.len() - 2];
    assert!(
        late.program_us_mean < 0.8 * early.program_us_mean,
        "{} -> {}",
        early.program_us_mean,
        late.program_us_mean
    );
    assert!(
        late.erase_us_mean > 1.5 * early.erase_us_mean,
        "{} -> {}",
        early.erase_us_mean,
        late.erase_us_mean
    );
    // The program and erase steps are 1/10 and 1/4 of the fresh times (60 and 750 µs).
    let blocks = &sim.drive().ftl.blocks();
    assert!(blocks
        .program_loops()
        .iter()
        .all(|&l| (4..=10).contains(&l)));
    assert_eq!(blocks.bad_blocks(), 0);
}

#[test]
fn without_timing_drift_each_mode_keeps_its_times_for_life() {
    let mut sim = drive(400, "spread = \"none\"\ntiming_drift = false", 60.0);
    let phases = sim.run_all(&mut |_| true).unwrap();
    let rows = &phases[1].rows;
    let (early, late) = (&rows[2], &rows[rows.len() - 2]);
    // The same wear as with drift (the same erases), at the configured times throughout.
    assert!(late.erases > early.erases);
    for row in [early, late] {
        assert_eq!((row.program_us_mean, row.erase_us_mean), (600.0, 3000.0));
    }
    assert!(sim
        .drive()
        .ftl
        .blocks()
        .program_loops()
        .iter()
        .all(|&l| l == 10));
}

#[test]
fn worn_blocks_are_retired_and_no_data_is_lost() {
    let mut sim = drive(200, "spread = \"lognormal:0.8\"", 20.0);
    let r = sim.run_all(&mut |_| true).unwrap().pop().unwrap();
    let ftl = &sim.drive().ftl;
    assert!(r.summary.bad_blocks > 0, "no block wore out");
    assert_eq!(
        r.summary.bad_blocks,
        ftl.blocks()
            .state()
            .iter()
            .filter(|&&s| s == BlockState::Bad)
            .count() as u64
    );
    ftl.check_invariants().unwrap();
    // Every unit is still mapped (written by the fill, rewritten since, never trimmed).
    assert_eq!(ftl.mapped_units(), ftl.geometry().user_units);
}

#[test]
fn without_variation_a_block_dies_at_its_rated_cycles() {
    let mut sim = drive(40, "spread = \"none\"", 40.0);
    sim.run_all(&mut |_| true).unwrap();
    let blocks = &sim.drive().ftl.blocks();
    assert!(blocks.bad_blocks() > 0);
    for (i, s) in blocks.state().iter().enumerate() {
        if *s == BlockState::Bad {
            assert_eq!(blocks.erase_count()[i], 41, "block {i}");
        } else {
            assert!(blocks.erase_count()[i] <= 40, "block {i}");
        }
    }
}

/// Mean program time (µs) of a fresh drive's random-write phase with `wear` and `data` settings.
fn mean_program_us(wear: &str, data: &str) -> (f64, u64) {
    let text = format!(
        r#"
seed = 2
[device]
cell = "mlc"
channels = 2
blocks_per_plane = 64
pages_per_block = 32
page_size = "4KiB"
over_provisioning = "30 %"
[device.timing.mlc]
program_us = [600]
[device.wear]
spread = "none"
rated = {{ mlc = 100 }}
{wear}
[[phase]]
data = "{data}"
queue_depth = 4
volume = 0.5
"#
    );
    let mut sim = Simulator::new(Config::from_toml(&text, "test").unwrap());
    let s = sim.run_all(&mut |_| true).unwrap().pop().unwrap().summary;
    (s.program_us_mean, s.erases)
}

#[test]
fn data_and_retention_relaxation_set_program_time() {
    let (random, _) = mean_program_us("", "random");
    assert_eq!(random, 600.0);
    let (ones, _) = mean_program_us("", "ones");
    assert!((ones / random - 0.69).abs() < 1e-3, "{ones}");
    let (zeros, _) = mean_program_us("", "states:11,00");
    assert!((zeros / random - 0.69 / 0.77).abs() < 1e-3, "{zeros}");
    // 0xFF is all '11' cells; 0xF5 = 11 11 01 01 has the slowest state.
    assert_eq!(mean_program_us("", "byte:0xFF").0, ones);
    assert_eq!(mean_program_us("", "byte:0xF5").0, random);
    // The poster's "programming speed can be improved by 50 %": 1.5× as fast.
    let (relaxed, _) = mean_program_us("retention_relaxed = true", "random");
    assert_eq!(relaxed, 400.0);
}

#[test]
fn retention_relaxation_and_cold_change_endurance() {
    let lifetime = |wear: &str| {
        let mut sim = drive(100, &format!("spread = \"none\"\n{wear}"), 200.0);
        let _ = sim.run_all(&mut |_| true);
        let b = &sim.drive().ftl.blocks();
        (0..b.state().len())
            .filter(|&i| b.state()[i] == BlockState::Bad)
            .map(|i| b.erase_count()[i])
            .min()
    };
    assert_eq!(lifetime(""), Some(101));
    assert_eq!(lifetime("retention_relaxed = true"), Some(108)); // 100 × 1.071 → dies at the 108th erase
    assert_eq!(lifetime("temperature_c = 5"), Some(51));
}

#[test]
fn a_drive_that_dies_in_a_phase_without_until_dead_ends_the_run_there() {
    // Rated for 5 cycles and asked for 1,000 drive writes: it dies in the second phase, which
    // ends there with its death in its summary (an outcome, not an error); nothing runs after it.
    let mut sim = drive(5, "spread = \"none\"", 1000.0);
    let phases = sim.run_all(&mut |_| true).unwrap();
    assert_eq!(phases.len(), 2);
    assert!(phases[0].summary.death.is_none());
    let life = &phases[1].summary;
    let death = life.death.as_deref().expect("the drive wore out");
    assert!(
        death.starts_with("worn out") || death.contains("GC pool"),
        "{death}"
    );
    assert!(life.death_cause.is_some());
    let user = sim.config().geometry.user_capacity_bytes;
    assert!(life.host_write_bytes < 1000 * user);
    assert_eq!(sim.run_summary().death.as_deref(), Some(death));
    match sim.run_phase(1, &mut |_| true) {
        Err(SimError::Dead { reason }) => assert_eq!(reason, death),
        other => panic!(
            "a dead drive ran a phase: {:?}",
            other.map(|r| r.summary.name)
        ),
    }
}
