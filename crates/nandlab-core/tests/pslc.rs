//! pSLC caches (Swissbit AN2103, REFERENCE §5): writes land in blocks run as
//! SLC, fast until the cache is full, then slower than native writes (data
//! must be folded first); idle time folds the cache; a dynamic cache uses
//! free native blocks and shrinks as the drive fills, and turns static once
//! the drive has used its share of the rated cycles; direct-write sends a
//! long sequential stream past a full cache. Every run checks the mapping
//! invariants and the version-stamp oracle.

use nandlab_core::{Config, PhaseResult, Simulator};

/// A 1 GiB version of a preset (1 MiB blocks, 137 per plane), `ftl` and
/// `wear` lines added, running `phases` after a TRIM of the whole drive.
fn run(preset: &str, ftl: &str, wear: &str, phases: &str) -> (Vec<PhaseResult>, Simulator) {
    let text = format!(
        r#"
seed = 3
[device]
preset = "{preset}"
capacity = "1GiB"
pages_per_block = 64
[device.wear]
{wear}
[ftl]
{ftl}
[[phase]]
name = "trim"
kind = "trim"
{phases}
"#
    );
    let mut sim = Simulator::new(Config::from_toml(&text, "test").unwrap());
    sim.drive_mut().enable_oracle();
    let phases = sim.run_all(&mut |_| true).unwrap();
    sim.drive().check_invariants().unwrap();
    (phases, sim)
}

const MIB: u64 = 1 << 20;

fn sequential(name: &str, volume: &str) -> String {
    format!(
        "[[phase]]\nname = \"{name}\"\npattern = \"sequential\"\nblock_size = \"128KiB\"\nqueue_depth = 32\nvolume = {volume}\ninterval = \"8MiB\"\n"
    )
}

/// Mean write speed between the ends of the rows at fractions `from` and
/// `to` of the phase.
fn mbps_between(p: &PhaseResult, from: f64, to: f64) -> f64 {
    let n = p.rows.len();
    let i = ((from * n as f64) as usize).min(n - 2);
    let j = ((to * n as f64) as usize).clamp(i + 1, n - 1);
    let (a, b) = (&p.rows[i], &p.rows[j]);
    (b.host_write_bytes - a.host_write_bytes) as f64 / 1e6 / (b.sim_seconds - a.sim_seconds)
}

#[test]
fn a_burst_lands_in_the_static_cache_reads_fast_and_is_folded_in_idle() {
    // 16 MiB: well inside the static cache (4 % of 1 GiB ≈ 41 MiB of SLC).
    let burst = format!("{}", 16 * MIB);
    let reads = "[[phase]]\nname = \"read\"\npattern = \"random\"\nworking_set = 0.0156\nread_fraction = 1.0\nblock_size = \"4KiB\"\nrequests = 2000\n";
    let idle = "[[phase]]\nname = \"idle\"\nread_fraction = 1.0\nworking_set = 0.0156\nblock_size = \"4KiB\"\nrequests = 4\nidle_every = \"4KiB\"\nidle_duration = \"1s\"\n";
    let phases = format!("{}{reads}{idle}{reads}", sequential("burst", &burst));
    let (cached, sim) = run("tlc-static-pslc", "", "", &phases);
    let (native, _) = run(
        "swissbit-standard",
        "",
        "",
        &format!("{}{reads}", sequential("burst", &burst)),
    );
    let (burst_c, burst_n) = (&cached[1].summary, &native[1].summary);
    assert!(
        burst_c.rates.write_mbps.unwrap() > 3.0 * burst_n.rates.write_mbps.unwrap(),
        "burst: {:.0} MB/s into pSLC, {:.0} MB/s into TLC",
        burst_c.rates.write_mbps.unwrap(),
        burst_n.rates.write_mbps.unwrap()
    );
    // Reads of pSLC data sense faster than reads of TLC pages.
    let (slc_read, tlc_read) = (
        cached[2].summary.read_latency_us.mean,
        native[2].summary.read_latency_us.mean,
    );
    assert!(
        slc_read < tlc_read,
        "read {slc_read:.1} µs from pSLC, {tlc_read:.1} µs from TLC"
    );
    // Idle time folded the whole burst into TLC; reads now take the TLC time.
    assert_eq!(sim.drive().ftl.cache_units(), 0);
    assert_eq!(cached[3].summary.folded_bytes, 16 * MIB);
    let after = cached[4].summary.read_latency_us.mean;
    assert!(
        after > slc_read,
        "after folding {after:.1} µs, before {slc_read:.1} µs"
    );
}

#[test]
fn a_full_static_cache_drops_below_native_speed_and_direct_write_avoids_the_drop() {
    let fill = sequential("fill", "1.0");
    let (cached, _) = run("tlc-static-pslc", "", "", &fill);
    let (direct, _) = run("tlc-static-pslc", "direct_write = true", "", &fill);
    let (native, _) = run("swissbit-standard", "", "", &fill);
    let (c, d, n) = (&cached[1], &direct[1], &native[1]);
    let head = mbps_between(c, 0.0, 0.02);
    let tail = mbps_between(c, 0.5, 1.0);
    let native_tail = mbps_between(n, 0.5, 1.0);
    let direct_tail = mbps_between(d, 0.5, 1.0);
    assert!(
        head > 3.0 * tail,
        "cache {head:.0} MB/s, then {tail:.0} MB/s"
    );
    assert!(
        tail < 0.8 * native_tail,
        "full cache {tail:.0} MB/s, native TLC {native_tail:.0} MB/s"
    );
    assert!(
        direct_tail > 0.95 * native_tail,
        "direct-write {direct_tail:.0} MB/s, native {native_tail:.0} MB/s"
    );
    // Folding writes the data twice; direct-write once.
    assert!(
        c.summary.waf.unwrap() > 1.8 && d.summary.waf.unwrap() < 1.1,
        "WAF {:.2} / {:.2}",
        c.summary.waf.unwrap(),
        d.summary.waf.unwrap()
    );
    assert!(d.summary.direct_bytes > 900 * MIB);
}

/// The most data the pSLC cache held during a phase.
fn peak_cache(p: &PhaseResult) -> u64 {
    p.rows.iter().map(|r| r.pslc_bytes).max().unwrap_or(0)
}

#[test]
fn the_dynamic_cache_shrinks_as_the_drive_fills_and_turns_static_with_age() {
    let burst = sequential("burst", "0.5");
    let (fresh, _) = run("tlc-dynamic-pslc", "", "", &burst);
    // Up to 75 % of the free native blocks run as SLC: ¼ of the capacity.
    let fresh_peak = peak_cache(&fresh[1]);
    assert!(
        fresh_peak > 200 * MIB,
        "fresh peak {} MiB",
        fresh_peak / MIB
    );

    // The same burst on a drive 70 % full: fewer free blocks, a smaller cache.
    let full = format!("[[phase]]\nname = \"fill\"\nkind = \"fill\"\nvolume = 0.7\nworking_set = 0.7\nworking_set_offset = 0.3\n{burst}");
    let (filled, _) = run("tlc-dynamic-pslc", "", "", &full);
    let filled_peak = peak_cache(&filled[2]);
    assert!(
        filled_peak < fresh_peak / 2,
        "peak {} MiB on a 70 % full drive, {} MiB fresh",
        filled_peak / MIB,
        fresh_peak / MIB
    );

    // After 10 % of the rated cycles only the static part (1 % ≈ 10 MiB) is left.
    let (aged, _) = run("tlc-dynamic-pslc", "", "initial = 0.1", &burst);
    let aged_peak = peak_cache(&aged[1]);
    assert!(aged_peak <= 16 * MIB, "aged peak {} MiB", aged_peak / MIB);
    let early = |p: &PhaseResult| mbps_between(p, 0.0, 0.3);
    assert!(
        early(&aged[1]) < 0.5 * early(&fresh[1]),
        "aged {:.0} MB/s, fresh {:.0} MB/s",
        early(&aged[1]),
        early(&fresh[1])
    );
}

#[test]
fn dynamic_cache_with_direct_write_fills_in_three_ever_slower_phases() {
    let (r, _) = run(
        "tlc-dynamic-pslc",
        "direct_write = true",
        "",
        &sequential("fill", "1.0"),
    );
    let rows = &r[1].rows;
    // Each row is pSLC (nothing folded or direct), direct or folding.
    let class: Vec<u8> = rows
        .iter()
        .map(|r| {
            if r.folded_bytes > 0 {
                2
            } else if r.direct_bytes > 0 {
                1
            } else {
                0
            }
        })
        .collect();
    let first = |c: u8| class.iter().position(|&x| x == c).unwrap();
    let (d, f) = (first(1), first(2));
    assert!(0 < d && d < f, "phases out of order: {class:?}");
    let n = rows.len() as f64;
    let speed = |a: usize, b: usize| mbps_between(&r[1], a as f64 / n, b as f64 / n);
    let (fast, slow, slowest) = (speed(0, d), speed(d + 1, f), speed(f + 1, rows.len()));
    assert!(
        fast > slow && slow > slowest,
        "{fast:.0} > {slow:.0} > {slowest:.0} MB/s expected"
    );
    // The note: ¾ of the flash as pSLC holds ¼ of the capacity, and direct-write another ¼.
    let gib = |i: usize| rows[i].host_write_bytes as f64 / (1u64 << 30) as f64;
    assert!(
        (0.18..0.35).contains(&gib(d)),
        "pSLC phase ends at {:.2} GiB",
        gib(d)
    );
    assert!(
        (0.4..0.65).contains(&gib(f)),
        "direct phase ends at {:.2} GiB",
        gib(f)
    );
}

#[test]
fn bad_pslc_settings_are_refused_with_the_key() {
    let bad = |device: &str, ftl: &str| {
        let text = format!("[device]\npreset = \"swissbit-standard\"\ncapacity = \"4GiB\"\n{device}\n[ftl]\n{ftl}\n[[phase]]\nrequests = 1\n");
        Config::from_toml(&text, "test").unwrap_err().to_string()
    };
    let e = bad("", "pslc_size = 0.05");
    assert!(
        e.contains("pslc_size") && e.contains("pslc = \"static\""),
        "{e}"
    );
    let e = bad("", "pslc = \"static\"\npslc_size = 0.5");
    assert!(e.contains("pslc_size") && e.contains("spare"), "{e}");
    let e = bad("", "pslc = \"big\"");
    assert!(e.contains("[ftl] pslc") && e.contains("dynamic"), "{e}");
    let e = bad("", "pslc = \"static\"\npslc_dynamic_share = 0.5");
    assert!(
        e.contains("pslc_dynamic_share") && e.contains("dynamic"),
        "{e}"
    );
    let e = bad("", "pslc = \"static\"\ndirect_write_after = \"1MiB\"");
    assert!(e.contains("direct_write_after"), "{e}");
    let e = bad("cell = \"slc\"", "pslc = \"static\"");
    assert!(e.contains("already SLC"), "{e}");
    let e = bad("wear = { initial = 1.5 }", "");
    assert!(e.contains("[device.wear] initial"), "{e}");
}
