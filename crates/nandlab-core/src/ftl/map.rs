//! The logical↔physical map: `l2p[lpn] = slot + 1` and `p2l[slot] = lpn`;
//! a slot is valid exactly when its unit maps to it. The map owns both
//! tables: the rest of the FTL asks it where a unit is, which unit a slot
//! holds and whether that copy is still the unit's, and tells it where a
//! unit now lives.
//!
//! An entry a sequential fill laid and nothing has written since is not
//! written: 0 reads as "where the fill laid it" ([`Laid`]) — or, for a
//! unit no fill laid, unmapped; a unit the fill laid and a TRIM unmapped
//! holds [`GONE`]. So a fill touches no memory the run will not use. (A
//! free block's reverse entries are all 0: an erase clears them.)

use crate::ftl::laid::Laid;
use crate::geometry::Geometry;
use crate::memory;
use crate::sanity::{ensure, indices, len, Checked};
use serde::{Deserialize, Serialize};

/// An `l2p` entry: a unit a fill laid that is unmapped now.
const GONE: u32 = u32::MAX;

/// The map and its reverse.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Map {
    #[serde(with = "crate::memory::flat")]
    l2p: Vec<u32>,
    #[serde(with = "crate::memory::flat")]
    p2l: Vec<u32>,
    /// Where a sequential fill laid what it laid, if one did.
    laid: Option<Box<Laid>>,
}

impl Map {
    pub fn new(g: &Geometry) -> Map {
        Map {
            // Zeroed vectors come from the OS lazily: untouched parts cost no memory.
            l2p: memory::zeroed_u32(g.user_units as usize),
            p2l: memory::zeroed_u32(g.slots as usize),
            laid: None,
        }
    }

    /// The slot of `lpn` whose entry is `entry`, if mapped.
    #[inline]
    fn entry_slot(&self, lpn: u32, entry: u32) -> Option<u32> {
        if entry.wrapping_sub(1) < GONE - 1 {
            Some(entry - 1)
        } else {
            self.unwritten_slot(lpn, entry)
        }
    }

    /// The slot of `lpn` whose entry was never written (0) or is [`GONE`].
    #[cold]
    fn unwritten_slot(&self, lpn: u32, entry: u32) -> Option<u32> {
        let laid = self
            .laid
            .as_deref()
            .filter(|l| entry == 0 && l.covers(lpn))?;
        Some(laid.slot_of(lpn))
    }

    /// The slot holding `lpn`, if mapped.
    #[inline]
    pub fn slot_of(&self, lpn: u32) -> Option<u32> {
        self.entry_slot(lpn, self.l2p[lpn as usize])
    }

    /// [`Map::slot_of`] for a read: an entry a fill laid is written where
    /// it reads (the next read of the unit finds it at once).
    #[inline]
    pub fn slot_to_read(&mut self, lpn: u32) -> Option<u32> {
        let entry = self.l2p[lpn as usize];
        if entry.wrapping_sub(1) < GONE - 1 {
            return Some(entry - 1);
        }
        let slot = self.unwritten_slot(lpn, entry)?;
        self.l2p[lpn as usize] = slot + 1;
        self.laid_mut().left();
        Some(slot)
    }

    /// [`Map::slot_of`], and None for an address past the map.
    #[inline]
    pub fn slot_of_any(&self, lpn: u32) -> Option<u32> {
        self.entry_slot(lpn, *self.l2p.get(lpn as usize)?)
    }

    /// The unit slot `slot` was last written with (whether or not that copy
    /// is still the unit's: see [`Map::holder`]).
    #[inline]
    pub fn lpn_at(&self, slot: u32) -> u32 {
        match self.p2l[slot as usize] {
            0 => self.laid_lpn(slot),
            lpn => lpn,
        }
    }

    /// The unit a fill laid in `slot` (0 if none: the entry says unit 0).
    #[cold]
    fn laid_lpn(&self, slot: u32) -> u32 {
        self.laid
            .as_deref()
            .and_then(|l| l.lpn_at(slot))
            .unwrap_or(0)
    }

    /// `lpn` now lives in `slot`; returns the slot it left, if any.
    #[inline]
    pub fn place(&mut self, lpn: u32, slot: u32) -> Option<u32> {
        let old = self.leave(lpn);
        self.l2p[lpn as usize] = slot + 1;
        self.p2l[slot as usize] = lpn;
        old
    }

    /// `lpn` is mapped no more (TRIM); returns the slot it left, if any.
    #[inline]
    pub fn unmap(&mut self, lpn: u32) -> Option<u32> {
        let old = self.leave(lpn);
        let laid = self.laid.as_deref().is_some_and(|l| l.covers(lpn));
        self.l2p[lpn as usize] = if laid { GONE } else { 0 };
        old
    }

    /// The slot `lpn` leaves as its entry is written, if mapped.
    #[inline]
    fn leave(&mut self, lpn: u32) -> Option<u32> {
        let entry = self.l2p[lpn as usize];
        let old = self.entry_slot(lpn, entry);
        if entry == 0 && old.is_some() {
            self.laid_mut().left();
        }
        old
    }

    /// The unit `slot` holds the current copy of, if any.
    #[inline]
    pub fn holder(&self, slot: u32) -> Option<u32> {
        let lpn = self.lpn_at(slot);
        let entry = self.l2p[lpn as usize];
        (entry == slot + 1 || (entry == 0 && self.unwritten_slot(lpn, 0) == Some(slot)))
            .then_some(lpn)
    }

    /// A sequential fill begins to lay units out as `laid` (on a map with
    /// nothing mapped); the map reads them from it from now on.
    pub fn lay_out(&mut self, laid: Laid) {
        debug_assert!(self.laid.is_none() && self.l2p.iter().all(|&e| e == 0));
        self.laid = Some(Box::new(laid));
    }

    /// The layout of the fill under way (see [`Map::lay_out`]).
    pub fn laid_mut(&mut self) -> &mut Laid {
        self.laid
            .as_deref_mut()
            .expect("a fill is laying units out")
    }

    /// Whether a fill laid units out as arithmetic (a map has one at most).
    pub fn has_layout(&self) -> bool {
        self.laid.is_some()
    }

    /// Block `b`, slots `slots`, was erased: its reverse entries read as
    /// empty, as its spare area does (so a fill may lay units out there as
    /// arithmetic), and what a fill laid there is gone.
    #[inline]
    pub fn erased(&mut self, b: u32, slots: std::ops::Range<usize>) {
        self.p2l[slots].fill(0);
        if let Some(l) = self.laid.as_deref_mut() {
            l.erased(b);
        }
    }

    /// Starts loading `lpn`'s entry (and where the fill laid it) into the CPU's cache.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        memory::prefetch(&self.l2p, lpn as usize);
        if let Some(l) = self
            .laid
            .as_deref()
            .filter(|l| l.mostly_live() && l.covers(lpn))
        {
            l.prefetch(lpn);
        }
    }

    /// Every mapped unit and its slot, in unit order.
    pub fn mapped(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.l2p
            .iter()
            .enumerate()
            .filter_map(|(lpn, &e)| Some((lpn as u32, self.entry_slot(lpn as u32, e)?)))
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

    /// Recovery: the units slots `slots` were last written with. (A drive
    /// with power cuts fills unit by unit: its map has no layout.)
    pub fn lpns(&self, slots: std::ops::Range<usize>) -> &[u32] {
        assert!(self.laid.is_none(), "power cuts with a fill layout");
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
        assert!(self.laid.is_none(), "power cuts with a fill layout");
        self.l2p.fill(0);
    }

    /// Recovery: `lpn` lives in `slot`, whose reverse entry already names it.
    pub fn point(&mut self, lpn: u32, slot: u32) {
        self.l2p[lpn as usize] = slot + 1;
    }

    /// Checks a loaded map: one entry per unit and per slot, each in range
    /// (a unit a fill laid may be [`GONE`]); its fill layout, if any, fits
    /// the drive and its stripe (`stripe_pools`: each step's first pool,
    /// `step_pools` pools each). Whether each unit maps back is
    /// the FTL's invariants check.
    pub fn check_loaded(&self, g: &Geometry, stripe_pools: &[u32], step_pools: u32) -> Checked {
        len("l2p", self.l2p.len(), g.user_units)?;
        len("p2l", self.p2l.len(), g.slots)?;
        indices("p2l", &self.p2l, g.user_units, false)?;
        let Some(laid) = self.laid.as_deref() else {
            return indices("l2p", &self.l2p, g.slots + 1, false);
        };
        laid.check_loaded(g, stripe_pools, step_pools)?;
        let bad = self.l2p.iter().enumerate().position(|(lpn, &e)| {
            e == GONE && !laid.covers(lpn as u32) || e != GONE && e as u64 > g.slots
        });
        ensure(bad.is_none(), || {
            format!(
                "l2p[{}] is out of range (the drive has {})",
                bad.unwrap_or(0),
                g.slots
            )
        })?;
        let live = (laid.first()..laid.end()).filter(|&lpn| self.l2p[lpn as usize] == 0);
        ensure(live.count() == laid.live() as usize, || {
            "the fill layout's count of units where it laid them is wrong".into()
        })
    }
}
