//! The logical↔physical map: `l2p[lpn] = slot + 1` (0 = unmapped) and
//! `p2l[slot] = lpn`; a slot is valid exactly when `l2p[p2l[slot]] == slot + 1`.
//! The map owns both tables: the rest of the FTL asks it where a unit is,
//! which unit a slot holds and whether that copy is still the unit's, and
//! tells it where a unit now lives.

use crate::geometry::Geometry;
use crate::memory;
use crate::sanity::{indices, len, Checked};
use serde::{Deserialize, Serialize};

/// The map and its reverse.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Map {
    #[serde(with = "crate::memory::flat")]
    l2p: Vec<u32>,
    #[serde(with = "crate::memory::flat")]
    p2l: Vec<u32>,
}

impl Map {
    pub fn new(g: &Geometry) -> Map {
        Map {
            // Zeroed vectors come from the OS lazily: untouched parts cost no memory.
            l2p: memory::zeroed_u32(g.user_units as usize),
            p2l: memory::zeroed_u32(g.slots as usize),
        }
    }

    /// The slot holding `lpn`, if mapped.
    #[inline]
    pub fn slot_of(&self, lpn: u32) -> Option<u32> {
        self.l2p[lpn as usize].checked_sub(1)
    }

    /// [`Map::slot_of`], and None for an address past the map.
    #[inline]
    pub fn slot_of_any(&self, lpn: u32) -> Option<u32> {
        self.l2p.get(lpn as usize)?.checked_sub(1)
    }

    /// The unit slot `slot` was last written with (whether or not that copy
    /// is still the unit's: see [`Map::holds`]).
    #[inline]
    pub fn lpn_at(&self, slot: u32) -> u32 {
        self.p2l[slot as usize]
    }

    /// Whether `slot` holds the current copy of its unit.
    #[inline]
    pub fn holds(&self, slot: u32) -> bool {
        self.l2p[self.p2l[slot as usize] as usize] == slot + 1
    }

    /// `lpn` now lives in `slot`; returns the slot it left, if any.
    #[inline]
    pub fn place(&mut self, lpn: u32, slot: u32) -> Option<u32> {
        let old = self.slot_of(lpn);
        self.l2p[lpn as usize] = slot + 1;
        self.p2l[slot as usize] = lpn;
        old
    }

    /// `lpn` is mapped no more (TRIM); returns the slot it left, if any.
    #[inline]
    pub fn unmap(&mut self, lpn: u32) -> Option<u32> {
        let old = self.slot_of(lpn);
        self.l2p[lpn as usize] = 0;
        old
    }

    /// Starts loading `lpn`'s entry into the CPU's cache.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        memory::prefetch(&self.l2p, lpn as usize);
    }

    /// Every mapped unit and its slot, in unit order.
    pub fn mapped(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.l2p
            .iter()
            .enumerate()
            .filter(|(_, &s)| s != 0)
            .map(|(lpn, &s)| (lpn as u32, s - 1))
    }

    /// The parts of the tables a fill of `count` units from `first_lpn`
    /// writes on a fresh drive, `slack` slots past them in the reverse map
    /// (for [`memory::populate`]).
    pub fn fill_regions(&self, first_lpn: u64, count: u64, slack: u64) -> [memory::Region; 2] {
        [
            memory::Region::of(&self.l2p, first_lpn as usize..(first_lpn + count) as usize),
            memory::Region::of(&self.p2l, 0..(count + slack) as usize),
        ]
    }

    /// Recovery: the units slots `slots` were last written with.
    pub fn lpns(&self, slots: std::ops::Range<usize>) -> &[u32] {
        &self.p2l[slots]
    }

    /// Recovery: slots from `first` were last written with `lpns` (an
    /// erase called off puts a block's contents back).
    pub fn restore_lpns(&mut self, first: usize, lpns: &[u32]) {
        self.p2l[first..first + lpns.len()].copy_from_slice(lpns);
    }

    /// Recovery: every unit unmapped, before the map is rebuilt from what
    /// the flash holds (the reverse map stays: it is what the flash holds).
    pub fn forget(&mut self) {
        self.l2p.fill(0);
    }

    /// Recovery: `lpn` lives in `slot`, whose reverse entry already names it.
    pub fn point(&mut self, lpn: u32, slot: u32) {
        self.l2p[lpn as usize] = slot + 1;
    }

    /// Checks a loaded map: one entry per unit and per slot, each in range.
    pub fn check_loaded(&self, g: &Geometry) -> Checked {
        len("l2p", self.l2p.len(), g.user_units)?;
        len("p2l", self.p2l.len(), g.slots)?;
        indices("l2p", &self.l2p, g.slots + 1, false)?;
        indices("p2l", &self.p2l, g.user_units, false)
    }
}
