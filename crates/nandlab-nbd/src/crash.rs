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
    /// None for an unwritten unit (zeroes).
    bytes: Option<Box<[u8]>>,
}

pub(crate) struct CrashLog {
    unit: u64,
    entries: VecDeque<Entry>,
    bytes: usize,
    budget: usize,
    /// The version the store holds of every unit the server has changed.
    held: FxHashMap<u32, Option<u32>>,
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

impl CrashLog {
    /// A log for mapping units of `unit` bytes holding at most `budget` bytes.
    pub(crate) fn new(unit: u64, budget: usize) -> CrashLog {
        CrashLog {
            unit,
            entries: VecDeque::new(),
            bytes: 0,
            budget,
            held: FxHashMap::default(),
            lost: FxHashSet::default(),
        }
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
                Some(b)
            }
        };
        self.bytes += bytes.as_ref().map_or(0, |b| b.len()) + 32;
        self.entries.push_back(Entry {
            lpn,
            version,
            bytes,
        });
        while self.bytes > self.budget {
            let Some(old) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= old.bytes.as_ref().map_or(0, |b| b.len()) + 32;
        }
    }

    /// Before the server changes the units of a range: each one's present
    /// version, the first time it is changed.
    pub(crate) fn before(&mut self, offset: u64, len: u64, oracle: &Oracle, store: &Store) {
        for lpn in self.units(offset, len) {
            if let std::collections::hash_map::Entry::Vacant(slot) = self.held.entry(lpn) {
                let v = oracle.expected(lpn);
                slot.insert(v);
                self.push(lpn, v, store);
            }
        }
    }

    /// After the simulated drive took a change of a range: each unit's new
    /// version, with the bytes the store now holds.
    pub(crate) fn after(&mut self, offset: u64, len: u64, oracle: &Oracle, store: &Store) {
        for lpn in self.units(offset, len) {
            let v = oracle.expected(lpn);
            self.held.insert(lpn, v);
            self.lost.remove(&lpn);
            self.push(lpn, v, store);
        }
    }

    /// After a cut: every changed unit back to the version that survived.
    pub(crate) fn revert(&mut self, oracle: &Oracle, store: &mut Store) -> Reverted {
        let mut r = Reverted::default();
        let mut changed: Vec<(u32, Option<u32>)> = self
            .held
            .iter()
            .filter_map(|(&lpn, &held)| {
                let now = oracle.expected(lpn);
                (now != held).then_some((lpn, now))
            })
            .collect();
        changed.sort_unstable();
        // The newest bytes of each version the log holds.
        let mut kept: FxHashMap<(u32, u32), &[u8]> = FxHashMap::default();
        for e in &self.entries {
            if let (Some(v), Some(b)) = (e.version, &e.bytes) {
                kept.insert((e.lpn, v), b);
            }
        }
        for (lpn, now) in changed {
            r.units += 1;
            self.held.insert(lpn, now);
            let at = lpn as u64 * self.unit;
            let restored = match now {
                None => store.zero(at, self.unit).is_ok(),
                Some(v) => kept
                    .get(&(lpn, v))
                    .is_some_and(|b| store.write(at, b).is_ok()),
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
