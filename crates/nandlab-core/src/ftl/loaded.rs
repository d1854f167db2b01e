//! The FTL's check of a state read back from a snapshot: settings as its
//! config gives them, every array as long as the geometry says, every block,
//! slot and unit index in range (and in the right GC pool), then the map
//! invariants — so that a snapshot altered whole is refused on load rather
//! than indexing out of bounds or running on a map that does not map back.

use super::{Ftl, NIL};
use crate::ftl::blocks::BlockState;
use crate::sanity::{ensure, indices, len, same, Checked};

impl Ftl {
    /// Checks this (loaded) FTL against `fresh`, one its config builds.
    pub fn check_loaded(&self, fresh: &Ftl) -> Checked {
        let g = &self.g;
        ensure(*g == fresh.g, || {
            "the drive's geometry differs from its config's".into()
        })?;
        same("the FTL's settings", &self.settings(), &fresh.settings())?;
        self.map.check_loaded(g)?;
        self.blocks.check_loaded(&fresh.blocks, g)?;
        match (&self.errors, &fresh.errors) {
            (None, None) => {}
            (Some(e), Some(f)) => {
                same("the error model's settings", &e.settings, &f.settings)?;
                ensure(e.fits(g.blocks), || {
                    "the error model's block arrays do not fit the drive".into()
                })?;
                ensure(e.same_tables(f), || {
                    "the error model's ECC tables are not the config's".into()
                })?;
            }
            _ => ensure(false, || {
                "the error model is on in the snapshot or the config, not both".into()
            })?,
        }
        self.gc
            .victims
            .check_loaded(&fresh.gc.victims, g, &self.blocks, self.clock)?;
        let pools = g.pools as u64;
        for (name, frontier) in [
            ("host frontier", &self.alloc.host_block),
            ("cache frontier", &self.pslc.frontier),
            ("GC frontier", &self.gc.frontier),
        ] {
            len(name, frontier.len(), pools)?;
            indices(name, frontier, g.blocks as u64, true)?;
            let misplaced = frontier
                .iter()
                .enumerate()
                .find(|&(p, &b)| b != NIL && g.pool_of_block(b) != p as u32);
            ensure(misplaced.is_none(), || {
                format!("a {name} is a block of another GC pool")
            })?;
        }
        // A frontier is a block being written, with pages left to program;
        // a host or cache frontier also with room left, or its last page
        // still open (in RAM).
        let t = &self.blocks;
        let frontiers = [
            (&self.alloc.host_block, false),
            (&self.pslc.frontier, false),
            (&self.gc.frontier, true),
        ];
        for (f, gc) in frontiers {
            for &b in f.iter().filter(|&&b| b != NIL) {
                let i = b as usize;
                let open_here = self.alloc.open.filled > 0
                    && self
                        .alloc
                        .open
                        .page_slot
                        .iter()
                        .any(|&s| g.block_of_slot(s) == b);
                let room = gc || t.written()[i] < t.capacity()[i] || open_here;
                ensure(
                    t.state()[i] == BlockState::Open && t.programmed()[i] < t.capacity()[i] && room,
                    || format!("frontier block {b} is not a block being written"),
                )?;
            }
        }
        len("gc_fill", self.gc.fill.len(), pools)?;
        len("gc_ready", self.gc.ready.len(), pools)?;
        len("gc_active", self.gc.active.len(), pools)?;
        len("gc_cursor", self.gc.cursor.len(), pools)?;
        len("gc_pace", self.gc.pace.len(), pools)?;
        indices("gc_active", &self.gc.active, g.blocks as u64, true)?;
        for (p, &v) in self.gc.active.iter().enumerate() {
            ensure(
                v == NIL
                    || (g.pool_of_block(v) == p as u32
                        && t.state()[v as usize] == BlockState::Victim
                        && self.gc.cursor[p] <= t.capacity()[v as usize]),
                || format!("GC pool {p}'s paced victim is not a victim of that pool"),
            )?;
        }
        len("dynamic_in_use", self.pslc.dynamic_in_use.len(), pools)?;
        for (name, fifos) in [
            ("static cache queue", &self.pslc.static_fifo),
            ("dynamic cache queue", &self.pslc.dynamic_fifo),
        ] {
            len(name, fifos.len(), pools)?;
            for (p, fifo) in fifos.iter().enumerate() {
                indices(name, fifo, g.blocks as u64, false)?;
                ensure(fifo.iter().all(|&b| g.pool_of_block(b) == p as u32), || {
                    format!("a {name} holds a block of another GC pool")
                })?;
            }
        }
        // The cache queues hold exactly the sealed cache blocks, each once
        // (as the victim index holds the sealed native ones).
        let mut queued = vec![false; g.blocks as usize];
        for (fifos, statics) in [
            (&self.pslc.static_fifo, true),
            (&self.pslc.dynamic_fifo, false),
        ] {
            for &b in fifos.iter().flatten() {
                let i = b as usize;
                let cached = t.in_cache()[i] && t.static_cache()[i] == statics;
                ensure(
                    !std::mem::replace(&mut queued[i], true)
                        && cached
                        && t.state()[i] == BlockState::Sealed,
                    || format!("block {b} should not be in a cache queue"),
                )?;
            }
        }
        let sealed_cache = |b: usize| t.in_cache()[b] && t.state()[b] == BlockState::Sealed;
        ensure(
            (0..g.blocks as usize).all(|b| queued[b] == sealed_cache(b)),
            || "a sealed cache block is in no cache queue".into(),
        )?;
        let mut dynamic = vec![0u32; g.pools as usize];
        for b in 0..g.blocks as usize {
            let in_use = matches!(t.state()[b], BlockState::Open | BlockState::Sealed);
            dynamic[g.pool_of_block(b as u32) as usize] +=
                (t.in_cache()[b] && !t.static_cache()[b] && in_use) as u32;
        }
        ensure(dynamic == self.pslc.dynamic_in_use, || {
            "the dynamic cache's block counts do not add up".into()
        })?;
        ensure(self.alloc.cursor < self.alloc.stripe.len(), || {
            "the stripe cursor is out of range".into()
        })?;
        let open = &self.alloc.open;
        ensure(
            open.filled <= open.total && open.buffered <= open.filled,
            || "the open page holds more than it can".into(),
        )?;
        ensure(open.page_slot.len() as u64 <= pools, || {
            "the open page spans more GC pools than the drive has".into()
        })?;
        indices("open page slots", &open.page_slot, g.slots, false)?;
        ensure(
            self.pslc.next_lpn == NIL || (self.pslc.next_lpn as u64) <= g.user_units,
            || "the sequential-stream detector points past the drive".into(),
        )?;
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
        // Every block a queue holds is free, once.
        let mut queued = vec![false; g.blocks as usize];
        for q in self.blocks.free().iter().chain(self.blocks.cache_free()) {
            for &b in q.iter() {
                ensure(!std::mem::replace(&mut queued[b as usize], true), || {
                    format!("block {b} is queued twice")
                })?;
                ensure(self.blocks.state()[b as usize] == BlockState::Free, || {
                    format!("block {b} is queued as free but is not")
                })?;
            }
        }
        self.check_invariants()?;
        if let Some(o) = &self.oracle {
            // Every unit holds its latest version (or, trimmed, nothing).
            (0..g.user_units as u32).try_for_each(|lpn| o.check(lpn, self.lookup(lpn)))?;
        }
        if let Some(p) = &self.power {
            // The spare-area records name each mapped unit's slot as its
            // newest copy, newer than its last TRIM: recovery would find it.
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
            (&self.pslc.cfg, self.pslc.direct_after_units),
        )
    }
}
