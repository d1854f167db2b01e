//! What a power cut does to the data a served drive holds. The simulated
//! drive decides which writes a cut loses (the volatile write cache, pages
//! in flight, paired pages); its integrity oracle then says which version of
//! each mapping unit survived. This log keeps the bytes of the versions the
//! store has held — each unit's version before the server first changed it,
//! and every version written since, oldest dropped first beyond a budget —
//! so that after a cut each unit is put back to the version that survived;
//! a unit whose surviving version has left the log reads as an I/O error
//! (the server no longer has those bytes), never as data the drive lost.

use crate::store::Store;
use nandlab_core::oracle::Oracle;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;

/// One version of a unit: its oracle version (None: unwritten) and bytes.
struct Entry {
    lpn: u32,
    version: Option<u32>,
    /// None for zeroes (an unwritten unit, or one written with zeroes: a
    /// WRITE_ZEROES's versions take no bytes).
    bytes: Option<Box<[u8]>>,
}

/// What an entry costs besides its bytes: its slot, and the slot's share
/// of the ring's spare capacity.
const ENTRY_COST: usize = 2 * std::mem::size_of::<Entry>();

pub(crate) struct CrashLog {
    unit: u64,
    entries: VecDeque<Entry>,
    bytes: usize,
    budget: usize,
    /// The version the store holds of every unit the server has changed
    /// (`NOT_HELD`, `UNWRITTEN`, or the version + 2): 4 bytes a unit of the
    /// drive, whatever a client does (a map grew by some 70 bytes a unit
    /// zeroed).
    held: Vec<u32>,
    /// Units changed since the last cut, a bit each: only they can differ
    /// from what the drive keeps at the next.
    dirty: Vec<u64>,
    /// Units whose surviving version the log no longer had.
    lost: FxHashSet<u32>,
}

/// What putting the store back after a cut did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reverted {
    /// Units put back to an older version (or to unwritten).
    pub units: u64,
    /// Units whose surviving version was no longer in the log (they read as EIO).
    pub unknown: u64,
}

/// `CrashLog::held` of a unit the server has not changed.
const NOT_HELD: u32 = 0;
/// `CrashLog::held` of a unit the store holds unwritten (zeroes).
const UNWRITTEN: u32 = 1;

/// A version as `CrashLog::held` keeps it (None: past what it can keep).
fn held_of(version: Option<u32>) -> Option<u32> {
    match version {
        None => Some(UNWRITTEN),
        Some(v) => v.checked_add(2),
    }
}

impl CrashLog {
    /// A log for the `units` mapping units of `unit` bytes of a drive,
    /// holding at most `budget` bytes of versions.
    pub(crate) fn new(unit: u64, units: u64, budget: usize) -> CrashLog {
        CrashLog {
            unit,
            // Its most entries at once: the ring never grows past them.
            entries: VecDeque::with_capacity(budget / ENTRY_COST),
            bytes: 0,
            budget,
            held: vec![NOT_HELD; units as usize],
            dirty: vec![0; units.div_ceil(64) as usize],
            lost: FxHashSet::default(),
        }
    }

    /// Marks unit `lpn` as holding `version` (changed since the last cut).
    fn hold(&mut self, lpn: u32, version: Option<u32>) {
        let i = lpn as usize;
        match held_of(version) {
            Some(h) => self.held[i] = h,
            // A version past what the log keeps: its bytes cannot be matched again.
            None => {
                self.held[i] = NOT_HELD;
                self.lost.insert(lpn);
            }
        }
        self.dirty[i / 64] |= 1 << (i % 64);
    }

    /// The units `[offset, offset + len)` touches.
    pub(crate) fn units(&self, offset: u64, len: u64) -> std::ops::RangeInclusive<u32> {
        (offset / self.unit) as u32..=((offset + len.max(1) - 1) / self.unit) as u32
    }

    /// Units whose surviving version the log no longer had, in ascending order.
    pub(crate) fn lost_units(&self) -> Vec<u32> {
        let mut lost: Vec<u32> = self.lost.iter().copied().collect();
        lost.sort_unstable();
        lost
    }

    /// Marks units as unreadable (as a served drive's file kept them).
    pub(crate) fn mark_lost(&mut self, units: &[u32]) {
        self.lost.extend(units);
    }

    /// Whether any unit of the range lost its bytes at a cut.
    pub(crate) fn any_lost(&self, offset: u64, len: u64) -> bool {
        !self.lost.is_empty() && self.units(offset, len).any(|l| self.lost.contains(&l))
    }

    fn push(&mut self, lpn: u32, version: Option<u32>, store: &Store) {
        let bytes = match version {
            None => None,
            Some(_) => {
                let mut b = vec![0u8; self.unit as usize].into_boxed_slice();
                if store.read(lpn as u64 * self.unit, &mut b).is_err() {
                    // A data file that cannot be read: this version is not kept
                    // (after a cut it would read as EIO).
                    return;
                }
                (!b.iter().all(|&x| x == 0)).then_some(b)
            }
        };
        let cost = |e: &Option<Box<[u8]>>| e.as_ref().map_or(0, |b| b.len()) + ENTRY_COST;
        self.bytes += cost(&bytes);
        while self.bytes > self.budget || self.entries.len() == self.entries.capacity() {
            let Some(old) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= cost(&old.bytes);
        }
        self.entries.push_back(Entry {
            lpn,
            version,
            bytes,
        });
    }

    /// Before the server changes the units of a range: each one's present
    /// version, the first time it is changed.
    pub(crate) fn before(&mut self, offset: u64, len: u64, oracle: &Oracle, store: &Store) {
        for lpn in self.units(offset, len) {
            if self.held[lpn as usize] == NOT_HELD {
                let v = oracle.expected(lpn);
                self.hold(lpn, v);
                self.push(lpn, v, store);
            }
        }
    }

    /// After the simulated drive took a change of a range: each unit's new
    /// version, with the bytes the store now holds.
    pub(crate) fn after(&mut self, offset: u64, len: u64, oracle: &Oracle, store: &Store) {
        for lpn in self.units(offset, len) {
            let v = oracle.expected(lpn);
            self.lost.remove(&lpn);
            self.hold(lpn, v);
            self.push(lpn, v, store);
        }
    }

    /// After a cut: every changed unit back to the version that survived.
    pub(crate) fn revert(&mut self, oracle: &Oracle, store: &mut Store) -> Reverted {
        let mut r = Reverted::default();
        // Only units changed since the last cut can differ from what the drive kept.
        let mut changed: Vec<(u32, Option<u32>)> = Vec::new();
        for (word, bits) in std::mem::take(&mut self.dirty).into_iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let lpn = (word * 64 + bits.trailing_zeros() as usize) as u32;
                bits &= bits - 1;
                let now = oracle.expected(lpn);
                if held_of(now) != Some(self.held[lpn as usize]) {
                    changed.push((lpn, now));
                }
            }
        }
        self.dirty = vec![0; self.held.len().div_ceil(64)];
        // The newest entry of each version wanted back (newest first: a map as
        // large as the units changed, not as the log).
        let mut wanted: FxHashMap<u32, (u32, Option<usize>)> = changed
            .iter()
            .filter_map(|&(lpn, now)| now.map(|v| (lpn, (v, None))))
            .collect();
        for (i, e) in self.entries.iter().enumerate().rev() {
            if let (Some(v), Some((want, found @ None))) = (e.version, wanted.get_mut(&e.lpn)) {
                if v == *want {
                    *found = Some(i);
                }
            }
        }
        for (lpn, now) in changed {
            r.units += 1;
            // What the drive kept is what the store holds again (not a change to revert later).
            self.held[lpn as usize] = held_of(now).unwrap_or(NOT_HELD);
            let at = lpn as u64 * self.unit;
            let kept = wanted.get(&lpn).and_then(|&(_, found)| found);
            let restored = match (now, kept.map(|i| &self.entries[i].bytes)) {
                (None, _) | (Some(_), Some(None)) => store.zero(at, self.unit).is_ok(),
                (Some(_), Some(Some(b))) => store.write(at, b).is_ok(),
                (Some(_), None) => false,
            };
            if restored {
                self.lost.remove(&lpn);
            } else {
                r.unknown += 1;
                self.lost.insert(lpn);
            }
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT: u64 = 4096;

    #[test]
    fn a_write_zeroes_keeps_the_bytes_it_replaced_within_the_budget() {
        // 16 units hold data (written before the log began), then one
        // WRITE_ZEROES covers 64 units and a cut keeps none of it. Its new
        // versions are zeroes and take no bytes: the 16 old versions, all the
        // budget holds of data, stay in the log and come back.
        let mut oracle = Oracle::new(64, 64);
        let mut store = Store::new(1 << 30);
        for lpn in 0..16u32 {
            store
                .write(lpn as u64 * UNIT, &[lpn as u8 + 1; 4096])
                .unwrap();
            oracle.host_write(lpn, lpn);
        }
        let budget = 16 * (4096 + ENTRY_COST) + 128 * ENTRY_COST;
        let mut log = CrashLog::new(UNIT, 64, budget);
        log.before(0, 64 * UNIT, &oracle, &store);
        store.zero(0, 64 * UNIT).unwrap();
        for lpn in 0..64u32 {
            oracle.host_write(lpn, lpn);
        }
        log.after(0, 64 * UNIT, &oracle, &store);
        for lpn in 0..64u32 {
            oracle.recovered(lpn, (lpn < 16).then_some(1), 0);
        }
        let r = log.revert(&oracle, &mut store);
        assert_eq!((r.units, r.unknown), (64, 0));
        let mut back = vec![0u8; 4096];
        for lpn in 0..64u32 {
            store.read(lpn as u64 * UNIT, &mut back).unwrap();
            let want = if lpn < 16 { lpn as u8 + 1 } else { 0 };
            assert!(back.iter().all(|&b| b == want), "unit {lpn}");
        }
        // The log never holds more entries than its budget allows, whatever comes.
        for round in 0..10u32 {
            log.before(0, 64 * UNIT, &oracle, &store);
            log.after(0, 64 * UNIT, &oracle, &store);
            assert!(
                log.entries.len() <= log.entries.capacity() && log.bytes <= budget,
                "round {round}"
            );
        }
    }
}
