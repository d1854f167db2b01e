//! The mapping-table cache of a DRAM-less drive (DFTL-style): the
//! logical→physical table lives on flash in translation pages of
//! `page_size / 4` entries, and only `[ftl] map_cache` bytes of them are in
//! controller RAM. A lookup or update of an uncached entry first reads its
//! translation page from flash; evicting a page whose entries changed writes
//! it back (a page program, counted in write amplification). Random access
//! then pays for lookups; sequential access hits the page it just loaded.
//!
//! Sequentially written data has simple lookups (a hybrid map): a
//! translation page whose entries the host wrote in order, first to last,
//! and nothing has moved since, is one extent kept in RAM (a few bytes per
//! page), so looking its entries up, or rewriting them in order, reads no
//! translation page. An out-of-order write, a GC move or a TRIM breaks the
//! extent (a move of an entry an in-order rewrite has yet to reach only the
//! old one); the page then goes through the cache again.
//!
//! Replacement is CLOCK (second chance), O(1) amortised. Translation pages
//! sit in a reserved map area spread over the dies (page `k` on die
//! `k mod dies`), outside the data blocks GC manages.

use crate::geometry::FastDiv;
use crate::media::ModeTiming;
use crate::sanity::{ensure, indices, len, same, Checked};
use crate::schedule::timeline::Timeline;
use crate::stats::Counters;
use serde::{Deserialize, Serialize};

const NIL: u32 = u32::MAX;
/// Bytes of one mapping entry.
const ENTRY_BYTES: u32 = 4;

/// Why a mapping entry is accessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapAccess {
    /// A lookup (host read, read-ahead).
    Lookup,
    /// The host wrote the unit.
    HostWrite,
    /// The firmware moved the unit (GC, folding) or the host trimmed it.
    Update,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Slot {
    tpage: u32,
    referenced: bool,
    dirty: bool,
}

/// Cached translation pages and where each translation page is cached.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MapCache {
    entries_per_page: FastDiv,
    slots: Vec<Slot>,
    /// Translation pages the cache holds at most.
    room: usize,
    /// Slot of each translation page, or NIL.
    slot_of: Vec<u32>,
    hand: usize,
    dies: FastDiv,
    read_ns: u64,
    program_ns: u64,
    /// Mapping units of one translation page on the channel.
    page_units: u32,
    /// Per translation page: entries the host has written in order from
    /// the first in the current run (0: none, or the run broke), and
    /// whether the page is one linear extent.
    in_order: Vec<u32>,
    linear: Vec<bool>,
    /// Entries per translation page, and logical units in all.
    entries: u32,
    user_units: u64,
    /// Preconditioning: accesses only track extents (no flash, no cache).
    pub untimed: bool,
    /// Pages written in order become extents (`[ftl] map_extents`).
    extents: bool,
}

impl MapCache {
    /// A cache of `bytes` of translation pages for `user_units` logical units.
    pub fn new(
        bytes: u64,
        page_size: u32,
        units_per_page: u32,
        user_units: u64,
        dies: u32,
        timing: &ModeTiming,
        extents: bool,
    ) -> MapCache {
        let entries = page_size / ENTRY_BYTES;
        let tpages = user_units.div_ceil(entries as u64) as usize;
        let capacity = ((bytes / page_size as u64) as usize).clamp(1, tpages.max(1));
        MapCache {
            entries_per_page: FastDiv::new(entries),
            slots: Vec::with_capacity(capacity),
            room: capacity,
            slot_of: vec![NIL; tpages],
            hand: 0,
            dies: FastDiv::new(dies),
            read_ns: timing.read_ns[0],
            program_ns: timing.program_ns[0],
            page_units: units_per_page,
            in_order: vec![0; tpages],
            linear: vec![false; tpages],
            entries,
            user_units,
            untimed: false,
            extents,
        }
    }

    /// Checks this (loaded) cache against `fresh`, one its config builds:
    /// settings, array lengths, and cached pages and slots that point at
    /// each other.
    pub fn check_loaded(&self, fresh: &MapCache) -> Checked {
        let settings = |m: &MapCache| {
            let fixed = (m.entries_per_page, m.dies, m.read_ns, m.program_ns);
            (
                fixed,
                m.page_units,
                m.entries,
                m.user_units,
                m.room,
                m.extents,
            )
        };
        same(
            "the map cache's settings",
            &settings(self),
            &settings(fresh),
        )?;
        let tpages = fresh.slot_of.len() as u64;
        len("map cache pages", self.slot_of.len(), tpages)?;
        len("map cache in_order", self.in_order.len(), tpages)?;
        len("map cache linear", self.linear.len(), tpages)?;
        ensure(self.slots.len() <= self.room, || {
            "the map cache holds more pages than it has room for".into()
        })?;
        ensure(self.hand <= self.slots.len(), || {
            "the map cache's clock hand is past its pages".into()
        })?;
        indices(
            "map cache slots",
            &self.slot_of,
            self.slots.len() as u64,
            true,
        )?;
        let agree = self
            .slots
            .iter()
            .enumerate()
            .all(|(i, s)| self.slot_of.get(s.tpage as usize) == Some(&(i as u32)));
        ensure(agree, || "the map cache's pages and slots disagree".into())?;
        ensure(self.in_order.iter().all(|&e| e <= self.entries), || {
            "a map cache extent is longer than its page".into()
        })
    }

    /// Power was lost: the cached translation pages and the extents kept in
    /// RAM are gone (the map is rebuilt from flash).
    pub fn power_lost(&mut self) {
        self.slots.clear();
        self.slot_of.fill(NIL);
        self.hand = 0;
        self.in_order.fill(0);
        self.linear.fill(false);
    }

    /// Notes that the host wrote `lpn` (and nothing else about it).
    #[inline]
    pub fn host_written(&mut self, lpn: u32) {
        let tpage = self.entries_per_page.quotient(lpn);
        self.track(tpage, lpn, MapAccess::HostWrite);
    }

    /// Follows a translation page's extent through an access to `lpn`;
    /// returns whether the page is a linear extent (no lookup needed).
    #[inline]
    fn track(&mut self, tpage: u32, lpn: u32, access: MapAccess) -> bool {
        let tp = tpage as usize;
        match access {
            MapAccess::Lookup => {}
            MapAccess::HostWrite => {
                let entry = lpn - tpage * self.entries;
                let next = if entry == 0 || self.in_order[tp] == entry {
                    entry + 1
                } else {
                    self.linear[tp] = false;
                    0
                };
                // The last translation page may cover fewer entries.
                let first = tpage as u64 * self.entries as u64;
                if self.extents && next as u64 == (self.user_units - first).min(self.entries as u64)
                {
                    self.linear[tp] = true;
                }
                self.in_order[tp] = next;
            }
            MapAccess::Update => {
                // Moving an entry the current in-order run has not reached
                // yet leaves the run alone: it will overwrite that entry.
                if lpn - tpage * self.entries < self.in_order[tp] {
                    self.in_order[tp] = 0;
                }
                self.linear[tp] = false;
            }
        }
        self.linear[tp]
    }

    /// Makes the entry of `lpn` available no earlier than `t` (marking its
    /// translation page changed unless a lookup); returns when it is. A miss
    /// evicts a page (writing it back if changed) and reads the needed one.
    #[inline]
    pub fn access(
        &mut self,
        lpn: u32,
        access: MapAccess,
        t: u64,
        tl: &mut Timeline,
        c: &mut Counters,
    ) -> u64 {
        let tpage = self.entries_per_page.quotient(lpn);
        let linear = self.track(tpage, lpn, access);
        if self.untimed {
            return t;
        }
        if access == MapAccess::Lookup {
            c.map_lookups += 1;
            c.map_extent_lookups += linear as u64;
        }
        if linear {
            return t;
        }
        let update = access != MapAccess::Lookup;
        let s = self.slot_of[tpage as usize];
        if s != NIL {
            let slot = &mut self.slots[s as usize];
            slot.referenced = true;
            slot.dirty |= update;
            return t;
        }
        let s = if self.slots.len() < self.room {
            self.slots.push(Slot {
                tpage,
                referenced: true,
                dirty: update,
            });
            self.slots.len() - 1
        } else {
            let s = self.victim();
            let old = self.slots[s];
            self.slot_of[old.tpage as usize] = NIL;
            if old.dirty {
                c.map_programs += 1;
                c.flash_units_map += self.page_units as u64;
                let die = self.dies.remainder(old.tpage);
                tl.flash_program(t, die, self.program_ns, self.page_units);
            }
            self.slots[s] = Slot {
                tpage,
                referenced: true,
                dirty: update,
            };
            s
        };
        self.slot_of[tpage as usize] = s as u32;
        c.map_reads += 1;
        let die = self.dies.remainder(tpage);
        // A lookup gates a host request: it goes ahead of queued programs
        // and erases, as host reads do.
        tl.host_read(t, die, self.read_ns, self.page_units).1
    }

    /// CLOCK: the first slot from the hand not referenced since the hand
    /// last passed it.
    fn victim(&mut self) -> usize {
        loop {
            let i = self.hand;
            self.hand = if i + 1 == self.slots.len() { 0 } else { i + 1 };
            if !std::mem::replace(&mut self.slots[i].referenced, false) {
                return i;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(pages: u64) -> (MapCache, Timeline) {
        cache_with(pages, true)
    }

    fn cache_with(pages: u64, extents: bool) -> (MapCache, Timeline) {
        let cfg = crate::config::Config::from_toml(
            "[device]\ncell = \"slc\"\nchannels = 2\nblocks_per_plane = 1024\npages_per_block = 16\npage_size = \"4KiB\"\n[[phase]]\nrequests = 1\n",
            "test",
        )
        .unwrap();
        let g = &cfg.geometry;
        let timing = &cfg.device.timing[g.cell.index()];
        let c = MapCache::new(pages * 4096, 4096, 1, g.user_units, g.dies, timing, extents);
        (c, Timeline::new(&cfg))
    }

    #[test]
    fn sequential_lookups_hit_and_random_ones_miss() {
        let (mut m, mut tl) = cache(2);
        let mut c = Counters::default();
        for lpn in 0..3000 {
            m.access(lpn, MapAccess::Lookup, 0, &mut tl, &mut c);
        }
        // 1,024 entries per 4 KiB translation page: three pages loaded.
        assert_eq!((c.map_reads, c.map_programs), (3, 0));
        let mut c = Counters::default();
        for i in 0..100u32 {
            m.access(
                i.wrapping_mul(2_654_435_761) % 7000 + 3000,
                MapAccess::Update,
                0,
                &mut tl,
                &mut c,
            );
        }
        assert!(c.map_reads > 50, "{} misses", c.map_reads);
        assert!(c.map_programs > 0 && c.map_programs < c.map_reads);
        assert_eq!(c.flash_units_map, c.map_programs);
    }

    #[test]
    fn a_page_written_in_order_is_an_extent_until_something_moves() {
        let (mut m, mut tl) = cache(1);
        let mut c = Counters::default();
        // Page 2 (entries 2048..3072) written first to last: lookups are free.
        for lpn in 2048..3072 {
            m.access(lpn, MapAccess::HostWrite, 0, &mut tl, &mut c);
        }
        let before = c;
        m.access(10, MapAccess::Lookup, 0, &mut tl, &mut c); // evicts page 2 from the cache
        for lpn in [2050, 3000, 2048] {
            assert_eq!(m.access(lpn, MapAccess::Lookup, 7, &mut tl, &mut c), 7);
        }
        assert_eq!(c.map_reads, before.map_reads + 1);
        // Rewritten in order from the first entry: still an extent.
        for lpn in 2048..2100 {
            assert_eq!(m.access(lpn, MapAccess::HostWrite, 7, &mut tl, &mut c), 7);
        }
        // A GC move breaks it: the next lookup reads the translation page.
        m.access(2060, MapAccess::Update, 0, &mut tl, &mut c);
        m.access(10, MapAccess::Lookup, 0, &mut tl, &mut c);
        let misses = c.map_reads;
        m.access(3000, MapAccess::Lookup, 0, &mut tl, &mut c);
        assert_eq!(c.map_reads, misses + 1);
        // Out of order never becomes an extent.
        for lpn in (4096..5120).rev() {
            m.access(lpn, MapAccess::HostWrite, 0, &mut tl, &mut c);
        }
        m.access(10, MapAccess::Lookup, 0, &mut tl, &mut c);
        let misses = c.map_reads;
        m.access(4500, MapAccess::Lookup, 0, &mut tl, &mut c);
        assert_eq!(c.map_reads, misses + 1);
    }

    #[test]
    fn a_miss_waits_for_the_translation_page() {
        let (mut m, mut tl) = cache(4);
        let mut c = Counters::default();
        let ready = m.access(5, MapAccess::Lookup, 1_000, &mut tl, &mut c);
        assert!(ready > 1_000 + m.read_ns);
        assert_eq!(
            m.access(6, MapAccess::Lookup, 5_000_000, &mut tl, &mut c),
            5_000_000
        );
    }

    /// `[ftl] map_extents = false` (MQSim's page-level CMT): a page written
    /// in order is looked up through the cache like any other, and the
    /// counters say how many lookups extents answered.
    #[test]
    fn without_extents_every_lookup_goes_through_the_cache() {
        for extents in [true, false] {
            let (mut m, mut tl) = cache_with(1, extents);
            let mut c = Counters::default();
            for lpn in 2048..3072 {
                m.access(lpn, MapAccess::HostWrite, 0, &mut tl, &mut c);
            }
            m.access(10, MapAccess::Lookup, 0, &mut tl, &mut c); // evicts page 2
            let before = c;
            m.access(2050, MapAccess::Lookup, 0, &mut tl, &mut c);
            assert_eq!(c.map_reads - before.map_reads, !extents as u64);
            assert_eq!((c.map_lookups, c.map_extent_lookups), (2, extents as u64));
        }
    }
}
