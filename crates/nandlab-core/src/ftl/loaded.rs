//! The FTL's check of a state read back from a snapshot: settings as its
//! config gives them; each part's own check (the map, the block table, the
//! error model, the victim index, GC, the pSLC cache, allocation, the map
//! cache, the oracle and the power-cut model each check their state beside
//! it); then what holds between parts — the frontiers, the map invariants,
//! the oracle's versions and the spare-area records — so that a snapshot
//! altered whole is refused on load rather than indexing out of bounds or
//! running on a map that does not map back.

use super::frontiers::Frontier;
use super::{Ftl, NIL};
use crate::ftl::blocks::BlockState;
use crate::sanity::{ensure, same, Checked};

impl Ftl {
    /// Checks this (loaded) FTL against `fresh`, one its config builds.
    pub fn check_loaded(&self, fresh: &Ftl) -> Checked {
        let g = &self.g;
        ensure(*g == fresh.g, || {
            "the drive's geometry differs from its config's".into()
        })?;
        same("the FTL's settings", &self.settings(), &fresh.settings())?;
        let (stripe, step_pools) = self.stripe_pools();
        self.map.check_loaded(g, &stripe, step_pools)?;
        self.blocks.check_loaded(&fresh.blocks, g)?;
        match (&self.errors, &fresh.errors) {
            (None, None) => {}
            (Some(e), Some(f)) => e.check_loaded(f, g.blocks)?,
            _ => ensure(false, || {
                "the error model is on in the snapshot or the config, not both".into()
            })?,
        }
        self.gc
            .victims
            .check_loaded(&fresh.gc.victims, g, &self.blocks, self.clock)?;
        self.check_frontiers()?;
        self.gc.check_loaded(g, &self.blocks)?;
        self.pslc.check_loaded(g, &self.blocks)?;
        self.alloc.check_loaded(g)?;
        match (&self.hot_cold, &fresh.hot_cold) {
            (None, None) => {}
            (Some(h), Some(f)) => h.check_loaded(f)?,
            _ => Err("hot/cold separation differs from its config's")?,
        }
        if let (Some(m), Some(f)) = (&self.map_cache, &fresh.map_cache) {
            m.check_loaded(f)?;
        }
        ensure(
            self.map_cache.is_some() == fresh.map_cache.is_some(),
            || "the map cache differs from its config's".into(),
        )?;
        if let Some(o) = &self.oracle {
            o.check_loaded(g)?;
        }
        if let Some(p) = &self.power {
            p.check_loaded(g)?;
            let Some(o) = &self.oracle else {
                return Err("a drive with power cuts has no integrity oracle".into());
            };
            ensure(o.acks.is_some(), || {
                "a drive with power cuts keeps no acknowledgements".into()
            })?;
        }
        self.check_invariants()?;
        if let Some(o) = &self.oracle {
            // Every unit holds its latest version (or, trimmed, nothing).
            (0..g.user_units as u32).try_for_each(|lpn| o.check(lpn, self.lookup(lpn)))?;
        }
        self.check_spare_area()?;
        Ok(())
    }

    /// Checks the frontiers of every part together: one per pool, in its
    /// pool, each a block being written with pages left to program — a
    /// host or cache frontier also with room left, or its last page still
    /// open (in RAM).
    fn check_frontiers(&self) -> Checked {
        let g = &self.g;
        self.frontiers.check_loaded(g)?;
        let t = &self.blocks;
        for (stream, f) in self.frontiers.streams() {
            let gc = stream == Frontier::Gc;
            for &b in f.iter().filter(|&&b| b != NIL) {
                let i = b as usize;
                let open_here =
                    self.alloc.open.iter().any(|p| {
                        p.filled > 0 && p.page_slot.iter().any(|&s| g.block_of_slot(s) == b)
                    });
                let room = gc || t.written()[i] < t.capacity()[i] || open_here;
                ensure(
                    t.state()[i] == BlockState::Open && t.programmed()[i] < t.capacity()[i] && room,
                    || format!("frontier block {b} is not a block being written"),
                )?;
            }
        }
        Ok(())
    }

    /// With power cuts on: the spare-area records name each mapped unit's
    /// slot as its newest copy, newer than its last TRIM (recovery would
    /// find it).
    fn check_spare_area(&self) -> Checked {
        let g = &self.g;
        if let Some(p) = &self.power {
            let mut newest = vec![(0u64, NIL); g.user_units as usize];
            for (slot, &seq) in p.seq.iter().enumerate().filter(|(_, &seq)| seq != 0) {
                let n = &mut newest[self.map.lpn_at(slot as u32) as usize];
                if seq > n.0 {
                    *n = (seq, slot as u32);
                }
            }
            for (lpn, &(seq, slot)) in newest.iter().enumerate() {
                let mapped = self.map.slot_of(lpn as u32);
                let expected = (seq > p.trim_seq[lpn]).then_some(slot);
                ensure(
                    mapped == expected
                        || mapped.is_some_and(|s| p.seq[s as usize] == 0 && seq == 0),
                    || format!("unit {lpn}'s spare-area records do not lead to its slot"),
                )?;
            }
        }
        Ok(())
    }

    /// What the config fixes, for [`Ftl::check_loaded`].
    fn settings(&self) -> impl serde::Serialize + '_ {
        (
            (
                &self.alloc.stripe,
                self.gc.start,
                self.gc.stop,
                self.gc.refill,
                &self.flash.timing,
            ),
            (
                self.guaranteed_units,
                self.gc.wear_aware,
                &self.gc.worn,
                (self.death, self.dead_block_limit),
            ),
            (
                self.flash.relaxed_factor,
                self.volatile_ram,
                self.flash.backup_lower_pages,
            ),
            self.pslc.settings(),
        )
    }
}
