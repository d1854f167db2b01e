//! Power cuts through the config: what each write cache may lose and why,
//! against the NAND physics of REFERENCE §5 (an interrupted upper-page
//! program corrupts the lower pages of its wordline; a pSLC program damages
//! nothing), that cuts land while GC, folding and multi-level programs are
//! under way, that chosen and random cuts are deterministic, and that bad
//! power-loss settings are clear errors. Every run here has the integrity
//! oracle on: on a configuration documented safe, a lost acknowledged write
//! fails the run.

use nandlab_core::stats::power_loss::{PowerLossEvent, PowerLossSummary};
use nandlab_core::{Config, Simulator};

/// A small drive with `device` and `ftl` lines added, preconditioned, then
/// random 4 KiB writes and reads (queue depth 8) with `cuts` (phase keys).
fn config(cell: &str, device: &str, ftl: &str, cuts: &str) -> String {
    format!(
        r#"
seed = 11
[device]
cell = "{cell}"
channels = 2
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = 48
pages_per_block = 24
page_size = "16KiB"
over_provisioning = "30 %"
write_buffer = "512KiB"
{device}
[ftl]
{ftl}
[[phase]]
kind = "fill"
[[phase]]
pattern = "random"
block_size = "4KiB"
queue_depth = 8
read_fraction = 0.3
volume = 1.0
{cuts}
"#
    )
}

/// Runs every phase; returns the summary of the last and its cuts.
fn run(text: &str) -> (PowerLossSummary, Vec<PowerLossEvent>, f64) {
    let cfg = Config::from_toml(text, "test").unwrap();
    let mut sim = Simulator::new(cfg);
    let results = sim.run_all(&mut |_| true).unwrap();
    let last = results.last().unwrap();
    let summary = last.summary.power_loss.clone().expect("a phase with cuts");
    (
        summary,
        last.power_losses.clone(),
        last.summary.rates.write_mbps.unwrap(),
    )
}

const EVERY: &str = "power_loss_every = \"15ms\"";

#[test]
fn safe_write_caches_lose_no_acknowledged_write() {
    let setups = [
        ("tlc", "write_cache = \"plp\"", ""),
        ("tlc", "write_cache = \"off\"", "paired_page_backup = true"),
        ("qlc", "write_cache = \"plp\"", "gc = \"cost-benefit\""),
        (
            "tlc",
            "write_cache = \"plp\"",
            "pslc = \"dynamic\"\npslc_size = 0.02",
        ),
        (
            "tlc",
            "write_cache = \"off\"",
            "pslc = \"static\"\npslc_size = 0.02",
        ),
        ("slc", "write_cache = \"off\"", "paired_page_backup = false"),
    ];
    for (cell, device, ftl) in setups {
        let (s, events, _) = run(&config(cell, device, ftl, EVERY));
        assert!(
            s.unsafe_because.is_empty(),
            "{cell} {device} {ftl}: {:?}",
            s.unsafe_because
        );
        assert!(s.cuts >= 20, "{cell} {device} {ftl}: {} cuts", s.cuts);
        assert_eq!(s.acknowledged_lost_units, 0, "{cell} {device} {ftl}");
        assert_eq!(events.len() as u64, s.cuts);
    }
}

#[test]
fn a_volatile_write_cache_loses_what_it_buffered() {
    let (s, events, _) = run(&config("tlc", "write_cache = \"volatile\"", "", EVERY));
    assert!(
        s.unsafe_because[0].contains("volatile write cache"),
        "{:?}",
        s.unsafe_because
    );
    assert!(s.lost_by_reason.write_cache > 0, "{s:?}");
    assert_eq!(s.acknowledged_lost_units, s.lost_by_reason.total());
    // Each lost write is named, with the version the host was told about.
    let lost = events
        .iter()
        .flat_map(|e| &e.lost)
        .next()
        .expect("a lost write listed");
    assert!(
        lost.recovered.is_none_or(|v| v < lost.acknowledged),
        "{lost:?}"
    );
}

#[test]
fn interrupted_upper_pages_corrupt_lower_pages_of_multi_bit_cells_only() {
    let unbacked = "paired_page_backup = false";
    let (tlc, _, _) = run(&config("tlc", "write_cache = \"off\"", unbacked, EVERY));
    assert!(
        tlc.unsafe_because[0].contains("paired-page"),
        "{:?}",
        tlc.unsafe_because
    );
    assert!(tlc.lost_by_reason.paired_page > 0, "{tlc:?}");
    assert_eq!(
        tlc.lost_by_reason.write_cache, 0,
        "write-through buffers nothing acknowledged"
    );
    // The same cuts on SLC: every page is its own wordline.
    let (slc, _, _) = run(&config("slc", "write_cache = \"off\"", unbacked, EVERY));
    assert!(
        slc.in_flight.host_programs + slc.in_flight.gc_programs > 0,
        "{slc:?}"
    );
    assert_eq!(slc.acknowledged_lost_units, 0, "{slc:?}");
}

#[test]
fn paired_page_backup_costs_an_slc_program_per_lower_page() {
    let backed = config(
        "tlc",
        "write_cache = \"off\"",
        "paired_page_backup = true",
        "",
    );
    let bare = config(
        "tlc",
        "write_cache = \"off\"",
        "paired_page_backup = false",
        "",
    );
    let mbps = |text: &str| {
        let mut sim = Simulator::new(Config::from_toml(text, "test").unwrap());
        let last = sim.run_all(&mut |_| true).unwrap().pop().unwrap();
        (
            last.summary.rates.write_mbps.unwrap(),
            last.summary.backup_programs,
            last.summary.power_loss,
        )
    };
    let (with, backups, none) = mbps(&backed);
    let (without, no_backups, _) = mbps(&bare);
    assert!(none.is_none(), "no cuts, no power-loss figures");
    assert_eq!(no_backups, 0);
    // Two of a TLC wordline's three pages are lower pages.
    assert!(
        backups > 0 && with < without,
        "{with} MB/s with backup, {without} without"
    );
}

#[test]
fn cuts_land_during_gc_folding_erases_and_upper_page_programs() {
    let ftl = "pslc = \"dynamic\"\npslc_size = 0.02";
    let (s, _, _) = run(&config("tlc", "write_cache = \"plp\"", ftl, EVERY));
    let f = s.in_flight;
    assert!(
        f.host_programs > 0 && f.gc_programs > 0 && f.fold_programs > 0,
        "{f:?}"
    );
    assert!(f.upper_page_programs > 0 && f.erases > 0, "{f:?}");
    assert_eq!(s.acknowledged_lost_units, 0);
}

#[test]
fn chosen_and_random_cuts_are_deterministic() {
    let text = config("tlc", "write_cache = \"volatile\"", "", EVERY);
    let (_, first, _) = run(&text);
    let (_, again, _) = run(&text);
    assert_eq!(first, again);
    let chosen = config("tlc", "", "", "power_loss = [\"40ms\", \"10ms\"]");
    let cfg = Config::from_toml(&chosen, "test").unwrap();
    let mut sim = Simulator::new(cfg);
    let results = sim.run_all(&mut |_| true).unwrap();
    let start = results[0].summary.sim_seconds;
    let at: Vec<f64> = results[1]
        .power_losses
        .iter()
        .map(|e| e.at_seconds - start)
        .collect();
    assert_eq!(at.len(), 2);
    assert!(
        (at[0] - 0.010).abs() < 1e-4 && (at[1] - 0.040).abs() < 1e-3,
        "{at:?}"
    );
}

#[test]
fn bad_power_loss_settings_are_clear_errors() {
    let error = |text: &str| Config::from_toml(text, "test").unwrap_err().to_string();
    let fill = config("tlc", "", "", "")
        .replace("kind = \"fill\"", "kind = \"fill\"\npower_loss = [\"1ms\"]");
    let e = error(&fill);
    assert!(
        e.contains("power_loss") && e.contains("timed io or trace phase"),
        "{e}"
    );
    let e = error(&config("tlc", "write_cache = \"maybe\"", "", ""));
    assert!(
        e.contains("[device] write_cache") && e.contains("plp"),
        "{e}"
    );
    let e = error(&config("tlc", "", "", "power_loss_every = \"0s\""));
    assert!(e.contains("power_loss_every"), "{e}");
    let job = config("tlc", "", "", "[[phase.job]]\npower_loss = [\"1ms\"]");
    let e = error(&job);
    assert!(
        e.contains("job #1 power_loss") && e.contains("phase, not a job"),
        "{e}"
    );
    let e = error(&config("tlc", "", "", "power_loss = [\"soon\"]"));
    assert!(e.contains("power_loss"), "{e}");
}

/// Issue 17: a dynamic pSLC cache with TRIMs under cuts every 10 ms lost
/// acknowledged writes on a capacitor-protected drive. A TRIM is decided
/// ahead of its time (the command waits for the link and the controller);
/// a cut before that time must undo it, not hide the data it would trim.
#[test]
fn a_trim_decided_after_a_cut_never_happened() {
    for seed in [3, 11, 12] {
        let text = format!(
            r#"
seed = {seed}
[device]
preset = "zombienand-synthetic-tlc"
capacity = "256MiB"
write_cache = "plp"
[ftl]
pslc = "dynamic"
[checks]
integrity = true
[[phase]]
kind = "fill"
volume = 0.9
[[phase]]
pattern = "random"
block_sizes = ["4KiB/70", "64KiB/30"]
queue_depth = 16
read_fraction = 0.3
trim_fraction = 0.05
volume = 0.5
power_loss_every = "10ms"
"#
        );
        let (s, _, _) = run(&text);
        assert!(s.unsafe_because.is_empty(), "{:?}", s.unsafe_because);
        assert!(s.cuts > 100, "seed {seed}: {} cuts", s.cuts);
        assert_eq!(s.acknowledged_lost_units, 0, "seed {seed}");
    }
}
