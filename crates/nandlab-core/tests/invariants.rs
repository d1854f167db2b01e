//! Randomised operation sequences (writes of any size and alignment, some
//! overlapping in flight, TRIMs, reads, idle gaps for background GC, power
//! cuts at random instants while programs, GC and erases are under way) on
//! small drives under every registered GC policy, per-plane and per-die GC pools, wear
//! levelling, ZombieNAND (ratings so low that blocks switch mode and retire
//! within a sequence), a DRAM-less map cache and pSLC caches, with every
//! write cache (capacitor-protected, volatile, write-through, with and
//! without paired-page backup),
//! checked against a plain dictionary model (unit → its version, the number
//! of times the host wrote it, or trimmed): every valid logical unit maps to
//! exactly one physical slot that maps back, valid counts match, exactly the
//! units in the dictionary are mapped, and every read finds the slot stamped
//! with the dictionary's version of the unit (the oracle carries stamps
//! through GC, folds and moves; the dictionary is kept by this test alone).
//!
//! After a cut, each unit must hold what the host was last told (the last
//! operation acknowledged by the cut) or the result of an operation still in
//! flight; on configurations documented unsafe it may instead hold an older
//! state — never one it never had, never trimmed data back — and the drive's
//! count of lost acknowledged writes must match the test's.

use nandlab_core::config::registered_policies;
use nandlab_core::drive::Drive;
use nandlab_core::host::workload::{Op, Request};
use nandlab_core::Config;
use proptest::prelude::*;
use proptest::test_runner::{contextualize_config, TestRunner};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;

/// GC set-ups under test: every registered GC policy (`registered_policies`: a policy
/// added by the recipe is covered without a line here), then the features
/// below, as `[ftl]` lines and `[device.wear]` ratings.
static FTLS: LazyLock<Vec<(String, &str)>> = LazyLock::new(|| {
    registered_policies()
        .into_iter()
        .map(|p| (format!("gc = \"{}\"", p.spelled(3)), ""))
        .chain(FEATURES.iter().map(|&(ftl, wear)| (ftl.to_string(), wear)))
        .collect()
});

/// Features under test, on the policies that run them.
const FEATURES: [(&str, &str); 13] = [
    ("gc = \"greedy\"\nwear_leveling = true", ""),
    (
        "gc = \"greedy\"\ngc_scope = \"die\"\nzombie = true",
        "rated = { slc = 6, mlc = 2, tlc = 1 }",
    ),
    (
        "gc = \"greedy\"\nzombie = true\nwear_unleveling = false\nwear_leveling = true",
        "rated = { slc = 3, mlc = 2, tlc = 1 }",
    ),
    // ZombieNAND's other readings: a rolling pool under the dead-block rule
    // (rate-limited skips, a drive that outlives its capacity); Eq. 1's pool
    // with the per-mode average and GC running to the high watermark.
    (
        "gc = \"greedy\"\nzombie = true\nearly_switch = \"rolling\"\ndeath = \"dead-blocks\"",
        "rated = { slc = 6, mlc = 2, tlc = 1 }",
    ),
    (
        "gc = \"greedy\"\nzombie = true\nearly_switch = \"eq1\"\nlife_average = \"mode\"\ngc_until = \"stop\"",
        "rated = { slc = 6, mlc = 3, tlc = 1 }",
    ),
    // A DRAM-less drive (two translation pages cached) that reads ahead.
    (
        "gc = \"greedy\"\nmap_cache = \"16KiB\"\nread_ahead = \"32KiB\"",
        "",
    ),
    // pSLC caches: static; dynamic with direct-write; dynamic on ZombieNAND
    // blocks that wear out fast (the cache turns static, blocks switch mode).
    ("gc = \"greedy\"\npslc = \"static\"\npslc_size = 0.05", ""),
    (
        "gc = \"greedy\"\npslc = \"dynamic\"\npslc_size = 0.02\ndirect_write = true\ndirect_write_after = \"16KiB\"",
        "",
    ),
    (
        "gc = \"greedy\"\npslc = \"dynamic\"\npslc_size = 0.02\nzombie = true\nwear_leveling = true",
        "rated = { slc = 8, mlc = 4, tlc = 2 }",
    ),
    // Dynamic without direct-write: the cache fills and folds into TLC.
    ("gc = \"greedy\"\npslc = \"dynamic\"\npslc_size = 0.05", ""),
    // Static with direct-write past 16 KiB of sequential data.
    (
        "gc = \"cost-benefit\"\npslc = \"static\"\npslc_size = 0.05\ndirect_write = true\ndirect_write_after = \"16KiB\"",
        "",
    ),
    // Hot/cold separation: hot units on a frontier of their own (64
    // counters, so that rewrites soon look hot on this small drive).
    ("gc = \"greedy\"\nhot_cold = \"multi-hash:64\"", ""),
    // Commands taken in order: each starts once the one before has issued
    // its flash work, so commands (TRIMs too) are decided ahead of their time.
    (
        "gc = \"greedy\"\npslc = \"dynamic\"\npslc_size = 0.02\ncommand_order = \"in-order\"",
        "",
    ),
];

/// Write caches under test: `[device] write_cache`, `[ftl] paired_page_backup`,
/// and whether the configuration is documented safe (None: no power cuts).
const CACHES: [Option<(&str, bool, bool)>; 6] = [
    None,
    Some(("plp", true, true)),
    Some(("off", true, true)),
    Some(("plp", false, true)),
    Some(("volatile", true, false)),
    Some(("off", false, false)),
];

fn drive(ftl: usize, multiplane: bool, cache: usize) -> (Drive, u64, Config) {
    let (ftl, wear) = &FTLS[ftl];
    let multiplane = multiplane && !ftl.contains("die");
    let text = format!(
        r#"
[device]
cell = "tlc"
channels = 2
planes_per_die = 2
blocks_per_plane = 32
pages_per_block = 12
page_size = "8KiB"
over_provisioning = "40 %"
multiplane = {multiplane}
write_buffer = "64KiB"
write_cache = "{write_cache}"
[device.wear]
{wear}
[ftl]
{ftl}
paired_page_backup = {backup}
gc_start = 2
gc_stop = 4
[[phase]]
requests = 1
"#,
        write_cache = CACHES[cache].map_or("plp", |c| c.0),
        backup = CACHES[cache].is_none_or(|c| c.1),
    );
    let cfg = Config::from_toml(&text, "test").unwrap();
    let user = cfg.geometry.user_capacity_bytes;
    let mut d = Drive::new(&cfg, 5);
    if CACHES[cache].is_some() {
        d.enable_power_model(&cfg);
    }
    (d, user, cfg)
}

#[derive(Debug, Clone)]
enum Step {
    /// A write; the next operation arrives when it completes (`wait`) or at once.
    Write {
        offset: u64,
        len: u32,
        wait: bool,
    },
    /// A TRIM; the next operation arrives when it is acknowledged (`wait`)
    /// or at once (a cut may then come before the drive journals it).
    Trim {
        offset: u64,
        len: u32,
        wait: bool,
    },
    Read {
        offset: u64,
        len: u32,
    },
    Idle,
    /// A power cut `permille`/1000 of the way to when the drive would be idle.
    Cut {
        permille: u64,
    },
}

fn step(user: u64) -> impl Strategy<Value = Step> {
    let range = (0..user - 512, 1u32..64).prop_map(move |(o, sectors)| {
        let o = o / 512 * 512;
        let len = (sectors * 512).min((user - o) as u32);
        (o, len)
    });
    prop_oneof![
        6 => (range.clone(), any::<bool>()).prop_map(|((offset, len), wait)| Step::Write { offset, len, wait }),
        1 => (range.clone(), any::<bool>()).prop_map(|((offset, len), wait)| Step::Trim { offset, len, wait }),
        2 => range.prop_map(|(offset, len)| Step::Read { offset, len }),
        1 => Just(Step::Idle),
        1 => (0u64..1000).prop_map(|permille| Step::Cut { permille }),
    ]
}

/// What the test knows of one unit: its state when last settled (a version,
/// None: unwritten or trimmed), and the operations since, each with the
/// state it leaves and when it was acknowledged.
#[derive(Debug, Clone, Default)]
struct Unit {
    settled: Option<u32>,
    ops: Vec<(Option<u32>, u64)>,
}

impl Unit {
    fn now(&self) -> Option<u32> {
        self.ops.last().map_or(self.settled, |op| op.0)
    }

    /// After a cut at `t`: the state acknowledged last, and the states the
    /// operations in flight may leave.
    fn allowed(&self, t: u64) -> (Option<u32>, Vec<Option<u32>>) {
        let acked = self.ops.iter().rposition(|op| op.1 <= t);
        let floor = acked.map_or(self.settled, |i| self.ops[i].0);
        let after = acked.map_or(0, |i| i + 1);
        (floor, self.ops[after..].iter().map(|op| op.0).collect())
    }
}

fn check(ftl: usize, multiplane: bool, cache: usize, steps: &[Step]) -> Result<(), TestCaseError> {
    let (mut d, _, cfg) = drive(ftl, multiplane, cache);
    d.ftl.enable_oracle();
    let cuts = CACHES[cache];
    let mut model: BTreeMap<u64, Unit> = BTreeMap::new();
    let mut writes: BTreeMap<u64, u32> = BTreeMap::new();
    // Units of a write the drive refused when it wore out: never acknowledged,
    // so they may or may not have reached the map.
    let mut unacknowledged = 0..0;
    let mut t = 0u64;
    let pslc_trims =
        FTLS[ftl].0.contains("pslc") && steps.iter().any(|s| matches!(s, Step::Trim { .. }));
    add(&TALLY.sequences, 1);
    add(&TALLY.operations, steps.len() as u64);
    for s in steps {
        match *s {
            Step::Write { offset, len, wait } => {
                let done = match d.submit(
                    Request {
                        op: Op::Write,
                        offset,
                        len,
                    },
                    t,
                ) {
                    Ok(done) => done,
                    // Worn out: the drive refuses the write (which was never
                    // acknowledged); everything written before must be intact.
                    Err(e) if e.is_wear_out() => {
                        prop_assert!(!FTLS[ftl].1.is_empty(), "{}", e);
                        unacknowledged = offset / 4096..(offset + len as u64 - 1) / 4096 + 1;
                        break;
                    }
                    Err(e) => return Err(TestCaseError::fail(e.to_string())),
                };
                if wait {
                    t = done;
                }
                for lpn in offset / 4096..=(offset + len as u64 - 1) / 4096 {
                    let n = writes.entry(lpn).or_insert(0);
                    *n += 1;
                    model.entry(lpn).or_default().ops.push((Some(*n), done));
                }
            }
            Step::Trim { offset, len, wait } => {
                let done = d
                    .submit(
                        Request {
                            op: Op::Trim,
                            offset,
                            len,
                        },
                        t,
                    )
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                if wait {
                    t = done;
                }
                for lpn in offset.div_ceil(4096)..(offset + len as u64) / 4096 {
                    model.entry(lpn).or_default().ops.push((None, done));
                }
            }
            Step::Read { offset, len } => {
                let done = d
                    .submit(
                        Request {
                            op: Op::Read,
                            offset,
                            len,
                        },
                        t,
                    )
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(done >= t);
                t = t.max(d.back_at());
                for lpn in offset / 4096..=(offset + len as u64 - 1) / 4096 {
                    d.ftl
                        .check_read(lpn as u32)
                        .map_err(|e| TestCaseError::fail(e.to_string()))?;
                    agrees(&d, &model, lpn)?;
                }
            }
            Step::Idle => {
                t = t.max(d.tl.all_idle_at()) + 100_000_000;
                match d.ftl.background_gc(t, &mut d.tl) {
                    Ok(()) => {}
                    Err(e) if e.is_wear_out() && !FTLS[ftl].1.is_empty() => break,
                    Err(e) => return Err(TestCaseError::fail(e.to_string())),
                }
            }
            Step::Cut { permille } => {
                let Some((_, _, safe)) = cuts else { continue };
                let at = t + (d.tl.all_idle_at().saturating_sub(t)) * permille / 1000;
                let lost = match d.cut_power(at) {
                    Ok(event) => event.acknowledged_lost_units,
                    Err(e) if e.is_wear_out() && !FTLS[ftl].1.is_empty() => break,
                    Err(e) => return Err(TestCaseError::fail(e.to_string())),
                };
                // What a snapshot's reader checks holds after every cut.
                d.check_loaded(&cfg)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                add(&TALLY.cuts, 1);
                add(&TALLY.safe_cuts, safe as u64);
                add(&TALLY.pslc_trim_cuts, pslc_trims as u64);
                add(&TALLY.unsafe_lost_units, lost);
                // Units read as trimmed while a TRIM was in flight, their
                // acknowledged write gone: the TRIM or a loss, the test cannot
                // tell which (the drive can: it journals TRIMs).
                let (mut lost_here, mut overlapping, mut ambiguous) = (0, false, 0);
                let oracle = d.ftl.oracle().expect("cuts keep the oracle");
                for (&lpn, unit) in model.iter_mut() {
                    let found = d.ftl.lookup(lpn as u32).map(|s| oracle.version_in(s));
                    let (floor, in_flight) = unit.allowed(at);
                    overlapping |= in_flight.len() > 1;
                    add(&TALLY.trims_in_flight, in_flight.contains(&None) as u64);
                    ambiguous +=
                        (found.is_none() && floor.is_some() && in_flight.contains(&None)) as u64;
                    if found != floor && !in_flight.contains(&found) {
                        // Only an unsafe configuration loses what was acknowledged,
                        // and only to an older state: never trimmed data back.
                        prop_assert!(
                            !safe,
                            "cut at {}: unit {} holds {:?}, acknowledged {:?}, in flight {:?}; {}",
                            at,
                            lpn,
                            found,
                            floor,
                            in_flight,
                            oracle.recent(lpn as u32)
                        );
                        prop_assert!(
                            floor.is_some() && found.is_none_or(|v| Some(v) < floor),
                            "cut at {}: unit {} holds {:?}, newer than acknowledged {:?}",
                            at,
                            lpn,
                            found,
                            floor
                        );
                        lost_here += 1;
                    }
                    *unit = Unit {
                        settled: found,
                        ops: Vec::new(),
                    };
                }
                prop_assert!(
                    lost <= lost_here + ambiguous && (overlapping || lost >= lost_here),
                    "drive says {} lost, test {} (and {} it cannot tell)",
                    lost,
                    lost_here,
                    ambiguous
                );
                t = d.back_at();
            }
        }
    }
    d.check_loaded(&cfg)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    for lpn in (0..d.ftl.geometry().user_units).filter(|l| !unacknowledged.contains(l)) {
        d.ftl
            .check_read(lpn as u32)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        agrees(&d, &model, lpn)?;
    }
    Ok(())
}

/// The drive maps `lpn` exactly when the dictionary has it, to a slot holding
/// the dictionary's version.
fn agrees(d: &Drive, model: &BTreeMap<u64, Unit>, lpn: u64) -> Result<(), TestCaseError> {
    let oracle = d.ftl.oracle().expect("the test switches the oracle on");
    match (
        d.ftl.lookup(lpn as u32),
        model.get(&lpn).and_then(Unit::now),
    ) {
        (Some(slot), Some(version)) => {
            prop_assert_eq!(
                oracle.version_in(slot),
                version,
                "lpn {} in slot {}",
                lpn,
                slot
            )
        }
        (None, None) => {}
        (slot, version) => prop_assert!(
            false,
            "lpn {}: mapped to {:?}, the model has {:?}",
            lpn,
            slot,
            version
        ),
    }
    Ok(())
}

/// What the sequences exercised, printed at the end (`--nocapture`).
#[derive(Default)]
struct Tally {
    sequences: AtomicU64,
    operations: AtomicU64,
    cuts: AtomicU64,
    safe_cuts: AtomicU64,
    /// Cuts on a pSLC drive whose sequence has TRIMs.
    pslc_trim_cuts: AtomicU64,
    /// Units with a TRIM still in flight at a cut.
    trims_in_flight: AtomicU64,
    unsafe_lost_units: AtomicU64,
}

static TALLY: Tally = Tally {
    sequences: AtomicU64::new(0),
    operations: AtomicU64::new(0),
    cuts: AtomicU64::new(0),
    safe_cuts: AtomicU64::new(0),
    pslc_trim_cuts: AtomicU64::new(0),
    trims_in_flight: AtomicU64::new(0),
    unsafe_lost_units: AtomicU64::new(0),
};

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

#[test]
fn mapping_stays_consistent() {
    let config = contextualize_config(ProptestConfig {
        cases: 256,
        source_file: Some(file!()),
        ..ProptestConfig::default()
    });
    let user = drive(0, true, 0).1;
    let strategy = (
        0..FTLS.len(),
        any::<bool>(),
        0..CACHES.len(),
        prop::collection::vec(step(user), 1..1500),
    );
    let result = TestRunner::new(config).run(&strategy, |(ftl, multiplane, cache, steps)| {
        check(ftl, multiplane, cache, &steps)
    });
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let t = &TALLY;
    eprintln!(
        "{} sequences, {} operations, {} cuts ({} on configurations documented safe, {} on pSLC \
         drives with TRIMs, {} units with a TRIM in flight); {} units lost on unsafe ones",
        n(&t.sequences),
        n(&t.operations),
        n(&t.cuts),
        n(&t.safe_cuts),
        n(&t.pslc_trim_cuts),
        n(&t.trims_in_flight),
        n(&t.unsafe_lost_units)
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
