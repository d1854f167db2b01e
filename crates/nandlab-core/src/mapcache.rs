//! The mapping-table cache of a DRAM-less drive (DFTL-style): the
//! logical→physical table lives on flash in translation pages of
//! `page_size / 4` entries, and only `[ftl] map_cache` bytes of them are in
//! controller RAM. A lookup or update of an uncached entry first reads its
//! translation page from flash; evicting a page whose entries changed writes
//! it back (a page program, counted in write amplification). Random access
//! then pays for lookups; sequential access hits the page it just loaded.
//!
//! Replacement is CLOCK (second chance), O(1) amortised. Translation pages
//! sit in a reserved map area spread over the dies (page `k` on die
//! `k mod dies`), outside the data blocks GC manages.

use crate::geometry::FastDiv;
use crate::media::ModeTiming;
use crate::stats::Counters;
use crate::timeline::Timeline;

const NIL: u32 = u32::MAX;
/// Bytes of one mapping entry.
const ENTRY_BYTES: u32 = 4;

#[derive(Debug, Clone, Copy)]
struct Slot {
    tpage: u32,
    referenced: bool,
    dirty: bool,
}

/// Cached translation pages and where each translation page is cached.
#[derive(Debug, Clone)]
pub struct MapCache {
    entries_per_page: FastDiv,
    slots: Vec<Slot>,
    /// Slot of each translation page, or NIL.
    slot_of: Vec<u32>,
    hand: usize,
    dies: FastDiv,
    read_ns: u64,
    program_ns: u64,
    /// Mapping units of one translation page on the channel.
    page_units: u32,
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
    ) -> MapCache {
        let entries = page_size / ENTRY_BYTES;
        let tpages = user_units.div_ceil(entries as u64) as usize;
        let capacity = ((bytes / page_size as u64) as usize).clamp(1, tpages.max(1));
        MapCache {
            entries_per_page: FastDiv::new(entries),
            slots: Vec::with_capacity(capacity),
            slot_of: vec![NIL; tpages],
            hand: 0,
            dies: FastDiv::new(dies),
            read_ns: timing.read_ns[0],
            program_ns: timing.program_ns[0],
            page_units: units_per_page,
        }
    }

    /// Makes the entry of `lpn` available no earlier than `t` (marking its
    /// translation page changed if `update`); returns when it is. A miss
    /// evicts a page (writing it back if changed) and reads the needed one.
    #[inline]
    pub fn access(
        &mut self,
        lpn: u32,
        update: bool,
        t: u64,
        tl: &mut Timeline,
        c: &mut Counters,
    ) -> u64 {
        let tpage = self.entries_per_page.quotient(lpn);
        let s = self.slot_of[tpage as usize];
        if s != NIL {
            let slot = &mut self.slots[s as usize];
            slot.referenced = true;
            slot.dirty |= update;
            return t;
        }
        let s = if self.slots.len() < self.slots.capacity() {
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
        tl.flash_read(t, die, self.read_ns, self.page_units)
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
        let cfg = crate::config::Config::from_toml(
            "[device]\ncell = \"slc\"\nchannels = 2\nblocks_per_plane = 1024\npages_per_block = 16\npage_size = \"4KiB\"\n[[phase]]\nrequests = 1\n",
            "test",
        )
        .unwrap();
        let g = &cfg.geometry;
        let timing = &cfg.device.timing[g.cell.index()];
        let c = MapCache::new(pages * 4096, 4096, 1, g.user_units, g.dies, timing);
        (c, Timeline::new(g, &cfg.device, true))
    }

    #[test]
    fn sequential_lookups_hit_and_random_ones_miss() {
        let (mut m, mut tl) = cache(2);
        let mut c = Counters::default();
        for lpn in 0..3000 {
            m.access(lpn, false, 0, &mut tl, &mut c);
        }
        // 1,024 entries per 4 KiB translation page: three pages loaded.
        assert_eq!((c.map_reads, c.map_programs), (3, 0));
        let mut c = Counters::default();
        for i in 0..100u32 {
            m.access(
                i.wrapping_mul(2_654_435_761) % 7000 + 3000,
                true,
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
    fn a_miss_waits_for_the_translation_page() {
        let (mut m, mut tl) = cache(4);
        let mut c = Counters::default();
        let ready = m.access(5, false, 1_000, &mut tl, &mut c);
        assert!(ready > 1_000 + m.read_ns);
        assert_eq!(m.access(6, false, 5_000_000, &mut tl, &mut c), 5_000_000);
    }
}
