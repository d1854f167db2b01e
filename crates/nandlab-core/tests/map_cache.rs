//! DRAM-less drives (DFTL-style map cache): random reads pay for translation
//! page reads and sequential ones do not; write-backs of changed translation
//! pages count in write amplification; a whole-table cache changes nothing.

use nandlab_core::{Config, Simulator, Summary};

/// A 1 GiB MLC drive, filled in a random order, then `phase`; `map_cache` is the `[ftl]` line.
fn run(map_cache: &str, phase: &str) -> Summary {
    run_filled(map_cache, "shuffle", phase)
}

/// The drive filled with `pattern` ("shuffle" or "sequential"), then `phase`.
fn run_filled(map_cache: &str, pattern: &str, phase: &str) -> Summary {
    let text = format!(
        r#"
seed = 2
[device]
preset = "mqsim-default"
channels = 2
chips_per_channel = 2
blocks_per_plane = 128
[ftl]
{map_cache}
[[phase]]
kind = "fill"
pattern = "{pattern}"
volume = 1.0
[[phase]]
{phase}
"#
    );
    let mut sim = Simulator::new(Config::from_toml(&text, "test").unwrap());
    sim.drive_mut().enable_oracle();
    let phases = sim.run_all(&mut |_| true).unwrap();
    sim.drive().check_invariants().unwrap();
    phases[1].summary.clone()
}

const RANDOM_READS: &str =
    "pattern = \"random\"\nread_fraction = 1.0\nblock_size = \"4KiB\"\nqueue_depth = 1\nrequests = 20000";
const SEQUENTIAL_READS: &str =
    "pattern = \"sequential\"\nread_fraction = 1.0\nblock_size = \"4KiB\"\nqueue_depth = 1\nrequests = 20000";
const RANDOM_WRITES: &str =
    "pattern = \"random\"\nblock_size = \"4KiB\"\nqueue_depth = 8\nvolume = 0.5";

#[test]
fn random_reads_pay_for_translation_pages_sequential_ones_do_not() {
    let dram = run("", RANDOM_READS);
    // 64 KiB of translation pages: 8 pages of 2,048 entries (8 MiB of data each).
    let dramless = run("map_cache = \"64KiB\"", RANDOM_READS);
    assert_eq!(dram.map_reads, 0);
    assert!(dramless.map_reads > 15_000, "{} misses", dramless.map_reads);
    let (fast, slow) = (dram.read_latency_us.mean, dramless.read_latency_us.mean);
    // A miss adds a flash read of the translation page before the data read.
    assert!(
        slow > 1.7 * fast,
        "DRAM {fast:.1} µs, DRAM-less {slow:.1} µs"
    );

    let seq = run("map_cache = \"64KiB\"", SEQUENTIAL_READS);
    // 20,000 sequential 4 KiB reads (78 MiB) touch 10 translation pages.
    assert!(seq.map_reads <= 11, "{} misses", seq.map_reads);
}

#[test]
fn sequentially_written_data_has_simple_lookups() {
    // Written in order, each translation page is one extent in RAM: random
    // reads need no translation page (Swissbit's read test, section 3 > 1).
    let random = run_filled("map_cache = \"64KiB\"", "shuffle", RANDOM_READS);
    let sequential = run_filled("map_cache = \"64KiB\"", "sequential", RANDOM_READS);
    assert_eq!(sequential.map_reads, 0);
    let dram = run("", RANDOM_READS);
    let (fast, slow) = (sequential.read_latency_us.mean, random.read_latency_us.mean);
    assert!(
        slow > 1.5 * fast && (fast - dram.read_latency_us.mean).abs() < 0.05 * fast,
        "random-written {slow:.1} µs, sequentially written {fast:.1} µs, DRAM {:.1} µs",
        dram.read_latency_us.mean
    );
}

#[test]
fn write_backs_count_in_write_amplification() {
    let dram = run("", RANDOM_WRITES);
    let dramless = run("map_cache = \"64KiB\"", RANDOM_WRITES);
    assert!(dramless.map_programs > 0);
    assert!(
        dramless.waf.unwrap() > dram.waf.unwrap() + 0.5,
        "WAF {:.3} with the whole map in DRAM, {:.3} DRAM-less",
        dram.waf.unwrap(),
        dramless.waf.unwrap()
    );
    // A cache as large as the table never evicts: the same flash decisions as DRAM.
    let whole = run("map_cache = \"1GiB\"", RANDOM_WRITES);
    assert_eq!(whole.map_programs, 0);
    assert_eq!(whole.waf, dram.waf);
}

#[test]
fn a_map_cache_smaller_than_a_page_is_refused() {
    let err = Config::from_toml(
        "[device]\npreset = \"mqsim-default\"\nblocks_per_plane = 256\n[ftl]\nmap_cache = \"1KiB\"\n[[phase]]\nrequests = 1\n",
        "test",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("[ftl] map_cache: must hold at least one translation page"),
        "{err}"
    );
}
