//! A sequential fill of a drive that maps nothing is laid out as arithmetic
//! (whole stripe cycles, its blocks opened and sealed in order); it must
//! give what filling unit by unit gives, to the last figure, whatever comes
//! after: GC, TRIM, a second fill, reads, snapshots.

use nandlab_core::{Config, Simulator};

mod common;
use common::{outcome, Outcome, SMALL_DRIVE};

fn run(text: &str, unit_by_unit: bool) -> Outcome {
    let cfg = Config::from_toml(text, "test").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Simulator::new(cfg);
    if unit_by_unit {
        sim.fill_unit_by_unit();
    }
    let phases = sim.run_all(&mut |_| true).unwrap_or_else(|e| panic!("{e}"));
    sim.drive().check_invariants().unwrap();
    assert_eq!(
        sim.drive().fill_laid_out(),
        !unit_by_unit,
        "the layout ran or not"
    );
    outcome(&sim, phases)
}

/// `device` and `ftl` tables, then a fill of `volume` from `offset`, then
/// random writes, mixed reads and TRIMs, a second fill and a read pass.
fn config(device: &str, ftl: &str, volume: f64, offset: f64) -> String {
    format!(
        r#"seed = 5
[checks]
integrity = true
{device}
[ftl]
{ftl}
[[phase]]
kind = "fill"
volume = {volume:?}
working_set_offset = {offset:?}
working_set = {span:?}
[[phase]]
pattern = "random"
queue_depth = 4
volume = 1.5
[[phase]]
read_fraction = 0.5
trim_fraction = 0.1
distribution = "zipf:0.8"
queue_depth = 8
volume = 0.5
[[phase]]
kind = "fill"
volume = 0.3
[[phase]]
read_fraction = 1.0
queue_depth = 2
volume = 0.5
"#,
        span = 1.0 - offset,
    )
}

fn same(name: &str, text: &str) {
    let by_unit = run(text, true);
    let laid = run(text, false);
    assert!(
        laid == by_unit,
        "{name}: the layout's run differs from filling unit by unit"
    );
}

#[test]
fn a_laid_out_fill_is_the_unit_by_unit_fill() {
    let mlc_drive = SMALL_DRIVE;
    let cases = [
        ("greedy", mlc_drive, "", 0.9, 0.0),
        (
            "cost-benefit, the whole drive",
            mlc_drive,
            "gc = \"cost-benefit\"",
            1.0,
            0.0,
        ),
        (
            "an offset working set",
            mlc_drive,
            "gc = \"d-choices:4\"",
            0.5,
            0.3,
        ),
        (
            "wear levelling",
            mlc_drive,
            "gc = \"greedy\"\nwear_leveling = true",
            0.8,
            0.1,
        ),
    ];
    for (name, device, ftl, volume, offset) in cases {
        same(name, &config(device, ftl, volume, offset));
    }
}

#[test]
fn a_fill_that_needs_gc_is_laid_out_as_filled() {
    // Written over, then trimmed whole: nothing is mapped, but few blocks
    // are free, so GC reclaims the trimmed ones while the fill lays out.
    for gc in ["greedy", "cost-benefit", "fifo"] {
        let text = format!(
            r#"seed = 3
{SMALL_DRIVE}[ftl]
gc = "{gc}"
[[phase]]
pattern = "random"
queue_depth = 4
volume = 1.2
[[phase]]
kind = "trim"
volume = 1.0
[[phase]]
kind = "fill"
volume = 0.9
[[phase]]
pattern = "random"
queue_depth = 4
volume = 1.0
"#
        );
        same(gc, &text);
    }
}

#[test]
fn other_drives_lay_out_as_they_fill() {
    let tlc = r#"[device]
preset = "tlc-dynamic-pslc"
capacity = "2GiB"
"#;
    let aged = format!("{SMALL_DRIVE}[device.wear]\ninitial = 0.6\n");
    let errors = format!("{SMALL_DRIVE}[device.errors]\nmodel = \"power-law\"\n");
    let planar = SMALL_DRIVE.replace("[device]", "[device]\nmultiplane = false");
    let cases: [(&str, &str, &str); 6] = [
        ("TLC with a dynamic pSLC cache", tlc, ""),
        ("aged", &aged, ""),
        ("bit errors", &errors, ""),
        ("one plane a page", &planar, "stripe_order = \"pdcw\""),
        (
            "a DRAM-less map cache",
            SMALL_DRIVE,
            "map_cache = \"64KiB\"",
        ),
        (
            "ZombieNAND",
            "[device]\npreset = \"zombienand-synthetic-tlc\"\ncapacity = \"128MiB\"\n",
            "",
        ),
    ];
    for (name, device, ftl) in cases {
        same(name, &config(device, ftl, 0.95, 0.0));
    }
}

#[test]
fn a_fill_over_many_chunks_files_its_blocks_as_chunks_would() {
    // 5 Mi units: five chunks, the logical clock moving at each (cost-benefit reads it).
    let device = r#"[device]
preset = "mqsim-default"
capacity = "40GiB"
"#;
    let text = format!(
        r#"seed = 2
{device}
[ftl]
gc = "cost-benefit"
[[phase]]
kind = "fill"
volume = 0.5
[[phase]]
pattern = "random"
queue_depth = 16
working_set = 0.5
requests = 300_000
"#
    );
    same("16 GiB", &text);
}
