//! Randomised operation sequences (writes of any size and alignment, TRIMs,
//! reads, idle gaps for background GC) on small drives under every GC policy,
//! per-plane and per-die GC pools, wear levelling, ZombieNAND (ratings so
//! low that blocks switch mode and retire within a sequence) and a DRAM-less
//! map cache,
//! checked against a plain dictionary model (unit → how many times the host
//! wrote it since its last TRIM): every valid logical unit maps to exactly one
//! physical slot that maps back, valid counts match, exactly the units in the
//! dictionary are mapped, and every read finds the slot stamped with the
//! dictionary's version of the unit (the oracle carries stamps through GC,
//! folds and moves; the dictionary is kept by this test alone).

use nandlab_core::drive::Drive;
use nandlab_core::workload::{Op, Request};
use nandlab_core::Config;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// GC set-ups under test: `[ftl]` lines, and `[device.wear]` ratings.
const FTLS: [(&str, &str); 12] = [
    ("gc = \"greedy\"", ""),
    ("gc = \"fifo\"", ""),
    ("gc = \"cost-benefit\"", ""),
    ("gc = \"random\"", ""),
    ("gc = \"d-choices:3\"", ""),
    ("gc = \"greedy\"\nwear_leveling = true", ""),
    (
        "gc = \"greedy\"\ngc_scope = \"die\"\nzombie = true",
        "rated = { slc = 6, mlc = 2, tlc = 1 }",
    ),
    (
        "gc = \"greedy\"\nzombie = true\nwear_unleveling = false\nwear_leveling = true",
        "rated = { slc = 3, mlc = 2, tlc = 1 }",
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
];

fn drive(ftl: usize, multiplane: bool) -> (Drive, u64) {
    let (ftl, wear) = FTLS[ftl];
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
[device.wear]
{wear}
[ftl]
{ftl}
gc_start = 2
gc_stop = 4
[[phase]]
requests = 1
"#
    );
    let cfg = Config::from_toml(&text, "test").unwrap();
    let user = cfg.geometry.user_capacity_bytes;
    (Drive::new(&cfg, 5), user)
}

#[derive(Debug, Clone)]
enum Step {
    Write { offset: u64, len: u32 },
    Trim { offset: u64, len: u32 },
    Read { offset: u64, len: u32 },
    Idle,
}

fn step(user: u64) -> impl Strategy<Value = Step> {
    let range = (0..user - 512, 1u32..64).prop_map(move |(o, sectors)| {
        let o = o / 512 * 512;
        let len = (sectors * 512).min((user - o) as u32);
        (o, len)
    });
    prop_oneof![
        6 => range.clone().prop_map(|(offset, len)| Step::Write { offset, len }),
        1 => range.clone().prop_map(|(offset, len)| Step::Trim { offset, len }),
        2 => range.prop_map(|(offset, len)| Step::Read { offset, len }),
        1 => Just(Step::Idle),
    ]
}

fn check(ftl: usize, multiplane: bool, steps: &[Step]) -> Result<(), TestCaseError> {
    let (mut d, _) = drive(ftl, multiplane);
    d.ftl.enable_oracle();
    // Unit → the version of its last write (writes of the unit so far).
    let mut model: BTreeMap<u64, u32> = BTreeMap::new();
    let mut writes: BTreeMap<u64, u32> = BTreeMap::new();
    // Units of a write the drive refused when it wore out: never acknowledged,
    // so they may or may not have reached the map.
    let mut unacknowledged = 0..0;
    let mut t = 0u64;
    for s in steps {
        match *s {
            Step::Write { offset, len } => {
                match d.submit(
                    Request {
                        op: Op::Write,
                        offset,
                        len,
                    },
                    t,
                ) {
                    Ok(done) => t = done,
                    // Worn out: the drive refuses the write (which was never
                    // acknowledged); everything written before must be intact.
                    Err(e) if e.is_wear_out() => {
                        prop_assert!(!FTLS[ftl].1.is_empty(), "{}", e);
                        unacknowledged = offset / 4096..(offset + len as u64 - 1) / 4096 + 1;
                        break;
                    }
                    Err(e) => return Err(TestCaseError::fail(e.to_string())),
                }
                for lpn in offset / 4096..=(offset + len as u64 - 1) / 4096 {
                    let n = writes.entry(lpn).or_insert(0);
                    *n += 1;
                    model.insert(lpn, *n);
                }
            }
            Step::Trim { offset, len } => {
                t = d
                    .submit(
                        Request {
                            op: Op::Trim,
                            offset,
                            len,
                        },
                        t,
                    )
                    .unwrap();
                for lpn in offset.div_ceil(4096)..(offset + len as u64) / 4096 {
                    model.remove(&lpn);
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
                    .unwrap();
                prop_assert!(done >= t);
                for lpn in offset / 4096..=(offset + len as u64 - 1) / 4096 {
                    d.ftl.check_read(lpn as u32).map_err(TestCaseError::fail)?;
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
        }
    }
    d.ftl.check_invariants().map_err(TestCaseError::fail)?;
    for lpn in (0..d.ftl.g.user_units).filter(|l| !unacknowledged.contains(l)) {
        d.ftl.check_read(lpn as u32).map_err(TestCaseError::fail)?;
        agrees(&d, &model, lpn)?;
    }
    Ok(())
}

/// The drive maps `lpn` exactly when the dictionary has it, to a slot holding
/// the dictionary's version.
fn agrees(d: &Drive, model: &BTreeMap<u64, u32>, lpn: u64) -> Result<(), TestCaseError> {
    let oracle = d
        .ftl
        .oracle
        .as_ref()
        .expect("the test switches the oracle on");
    match (d.ftl.lookup(lpn as u32), model.get(&lpn)) {
        (Some(slot), Some(&version)) => {
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mapping_stays_consistent(
        ftl in 0..FTLS.len(),
        multiplane in any::<bool>(),
        steps in prop::collection::vec(step(drive(0, true).1), 1..1500),
    ) {
        check(ftl, multiplane, &steps)?;
    }
}
