//! Allocation: the stripe of (die, GC pools) targets host pages go to in
//! turn and the multi-plane page each host stream is filling, opening
//! blocks for frontiers (with foreground GC when a pool runs short) and
//! sealing full ones.

use super::frontiers::Frontier;
use super::{Ftl, NIL};
use crate::config::WriteCache;
use crate::config::{Config, StripeDim};
use crate::ftl::mapcache::MapAccess;
use crate::geometry::Geometry;
use crate::power::PageKind;
use crate::sanity::{ensure, indices, Checked};
use crate::schedule::timeline::Timeline;
use crate::{SimError, WearOut};
use serde::{Deserialize, Serialize};

/// Where host writes go: the stripe, the cursor in it and the page each
/// host stream is filling ([`Frontier::HOST`], in order; each pool's
/// frontiers are in `Ftl::frontiers`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Alloc {
    pub(super) stripe: Vec<Target>,
    /// The stripe step the next page opened takes.
    pub(super) cursor: usize,
    pub(super) open: [OpenPage; Frontier::HOST.len()],
}

impl Alloc {
    pub fn new(cfg: &Config) -> Alloc {
        let g = &cfg.geometry;
        Alloc {
            // Write-through programs each write's page at once: one plane.
            stripe: build_stripe(
                g,
                &cfg.ftl.stripe_order,
                cfg.device.multiplane && cfg.device.write_cache != WriteCache::Off,
            ),
            cursor: 0,
            open: Default::default(),
        }
    }

    /// The stripe step the next page takes (the cursor moves on).
    pub(super) fn take_step(&mut self) -> Target {
        let t = self.stripe[self.cursor];
        self.cursor += 1;
        if self.cursor == self.stripe.len() {
            self.cursor = 0;
        }
        t
    }

    /// Whether a host stream has a page open.
    pub(super) fn any_open(&self) -> bool {
        self.open.iter().any(|p| p.filled > 0)
    }

    /// Drops every open page (a power cut lost them): the stripe goes back
    /// to the step the first of them (in stream order) took, so that the
    /// pages written next take the steps the lost ones had.
    pub(super) fn drop_open_pages(&mut self) {
        if let Some(p) = self.open.iter().find(|p| p.filled > 0) {
            self.cursor = p.target as usize;
        }
        self.open.fill(OpenPage::default());
    }

    /// Checks a loaded allocation state (its frontiers are checked with the
    /// others'): the stripe cursor in range, a page for each host stream,
    /// each within its room, its stripe step and its pools, its slots
    /// inside the drive.
    pub(super) fn check_loaded(&self, g: &Geometry) -> Checked {
        ensure(self.cursor < self.stripe.len(), || {
            "the stripe cursor is out of range".into()
        })?;
        for open in &self.open {
            ensure(
                open.filled <= open.total && open.buffered <= open.filled,
                || "the open page holds more than it can".into(),
            )?;
            ensure((open.target as usize) < self.stripe.len(), || {
                "an open page's stripe step is out of range".into()
            })?;
            ensure(open.page_slot.len() as u64 <= g.pools as u64, || {
                "the open page spans more GC pools than the drive has".into()
            })?;
            indices("open page slots", &open.page_slot, g.slots, false)?;
        }
        Ok(())
    }
}

/// One step of the allocation stripe: a die and the GC pools (planes)
/// programmed together on it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Target {
    pub(super) die: u32,
    pub(super) first_pool: u32,
    pub(super) pools: u32,
}

/// The multi-plane page a host stream is filling.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpenPage {
    /// Units placed so far; 0 = no page open.
    pub(super) filled: u32,
    /// Its step of the stripe (taken when it opened).
    pub(super) target: u32,
    /// Of those, units that hold space in the DRAM write buffer (fill phases
    /// place units without it).
    pub(super) buffered: u32,
    /// Units the page holds (pools × units per page).
    pub(super) total: u32,
    /// When the last unit's data reached the buffer.
    pub(super) ready: u64,
    /// First slot of the page in each pool of the target.
    pub(super) page_slot: Vec<u32>,
}

/// A program the host write path issued: its `units` buffered units leave the write buffer at `done`.
#[derive(Debug, Clone, Copy)]
pub struct Programmed {
    pub done: u64,
    pub units: u32,
}

/// The allocation stripe: every (die, pool set) in `order`, first dimension fastest.
fn build_stripe(g: &Geometry, order: &[StripeDim], multiplane: bool) -> Vec<Target> {
    let pools_per_die = g.planes_per_die / g.planes_per_pool;
    let size = |d: StripeDim| match d {
        StripeDim::Channel => g.channels,
        StripeDim::Chip => g.chips_per_channel,
        StripeDim::Die => g.dies_per_chip,
        StripeDim::Plane => {
            if multiplane {
                1
            } else {
                pools_per_die
            }
        }
    };
    let total: u32 = order.iter().map(|&d| size(d)).product();
    (0..total)
        .map(|mut i| {
            let (mut ch, mut chip, mut die, mut plane) = (0, 0, 0, 0);
            for &d in order {
                let digit = i % size(d);
                i /= size(d);
                match d {
                    StripeDim::Channel => ch = digit,
                    StripeDim::Chip => chip = digit,
                    StripeDim::Die => die = digit,
                    StripeDim::Plane => plane = digit,
                }
            }
            let die = (ch * g.chips_per_channel + chip) * g.dies_per_chip + die;
            if multiplane {
                Target {
                    die,
                    first_pool: die * pools_per_die,
                    pools: pools_per_die,
                }
            } else {
                Target {
                    die,
                    first_pool: die * pools_per_die + plane,
                    pools: 1,
                }
            }
        })
        .collect()
}

impl Ftl {
    /// Free blocks per pool the host never takes: GC copies a victim's
    /// valid units into one before the victim's erase gives a block back;
    /// on a drive whose power may be cut, a second, as a cut may call off
    /// an erase booked but not begun (recovery then moves that block's units
    /// again).
    pub(super) fn gc_reserve(&self) -> u32 {
        1 + self.power.is_some() as u32
    }

    /// Units the host write frontier fills before one program (pools × page).
    pub fn stripe_units(&self) -> u32 {
        let t = self.alloc.stripe[0];
        t.pools * self.g.units_per_page
    }

    /// Opens a fresh block in `pool` for a frontier (foreground GC then
    /// keeps pace with the host's programs: [`Ftl::paced_gc`]).
    pub(super) fn open_block(
        &mut self,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
        for_gc: bool,
    ) -> Result<u32, SimError> {
        let reserve = self.gc_reserve();
        if !for_gc && self.blocks.free_count(pool) <= reserve {
            // Only after a power cut (recovery rolls back erases that had not
            // begun): GC refills first, so that the host never takes the
            // block GC copies into.
            self.collect(pool, now, tl, reserve + 1)?;
        }
        let b = self
            .blocks
            .open(pool)
            .ok_or(WearOut::NoFreeBlock { pool })?;
        self.opened(b, now);
        Ok(b)
    }

    /// A page of `units` units of block `b` was programmed: a block that
    /// fills leaves its frontier and becomes a GC candidate.
    pub(super) fn programmed_page(&mut self, b: u32, units: u32) {
        if self.blocks.program_page(b, units) {
            self.sealed(b);
        }
    }

    /// Block `b` was sealed: it leaves its frontier and is filed.
    pub(super) fn sealed(&mut self, b: u32) {
        self.file_sealed(b, false);
        self.frontiers.left(self.g.pool_of_block(b), b);
    }

    /// Files sealed block `b` where blocks of its kind wait: a native block
    /// in the GC victim index, a cache block in its cache's fold queue — as
    /// the newest, or as the oldest (`oldest`: a block recovery gives back).
    pub(super) fn file_sealed(&mut self, b: u32, oldest: bool) {
        let bi = b as usize;
        if self.blocks.in_cache()[bi] {
            let pool = self.g.pool_of_block(b);
            let statics = self.blocks.static_cache()[bi];
            self.pslc.file_sealed(pool, b, statics, oldest);
        } else {
            let (valid, capacity) = (self.blocks.valid()[bi], self.blocks.capacity()[bi]);
            self.gc
                .victims
                .insert(b, valid, capacity, self.clock, &self.blocks);
        }
    }

    /// Places one host mapping unit whose data is ready at `ready` (in the
    /// write buffer if `buffered`). Returns the program it completed, if any,
    /// with the buffered units it frees.
    #[inline]
    pub fn write_unit(
        &mut self,
        lpn: u32,
        ready: u64,
        tl: &mut Timeline,
        buffered: bool,
    ) -> Result<Option<Programmed>, SimError> {
        self.pslc.note_host_unit(lpn);
        let s = self.host_stream(lpn).host_index();
        if self.alloc.open[s].filled == 0 {
            self.open_page(s, ready, tl)?;
        }
        let upp = self.g.units_per_page;
        let open = &self.alloc.open[s];
        let k = open.filled;
        let plane_i = self.g.fast.units_per_page.quotient(k);
        let slot = open.page_slot[plane_i as usize] + (k - plane_i * upp);
        self.map_access(lpn, MapAccess::HostWrite, ready, tl);
        self.map(lpn, slot);
        if let Some(o) = &mut self.oracle {
            match self.replay_version {
                None => o.host_write(lpn, slot),
                Some(v) => o.restored(slot, v),
            }
        }
        if let Some(p) = &mut self.power {
            p.placed(slot, ready);
        }
        self.clock += 1;
        let open = &mut self.alloc.open[s];
        open.filled += 1;
        open.buffered += buffered as u32;
        open.ready = open.ready.max(ready);
        if open.filled < open.total {
            return Ok(None);
        }
        let t = self.alloc.stripe[open.target as usize];
        let programmed = self.program_open_page(s, tl);
        for pool in t.first_pool..t.first_pool + t.pools {
            self.paced_gc(pool, ready, tl)?;
        }
        Ok(Some(programmed))
    }

    /// Opens host stream `s`'s next page ([`Frontier::HOST`]`[s]`) on the
    /// stripe's next step.
    pub(super) fn open_page(
        &mut self,
        s: usize,
        now: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        let target = self.alloc.cursor;
        let t = self.alloc.take_step();
        let stream = Frontier::HOST[s];
        self.alloc.open[s].page_slot.clear();
        let pools = t.first_pool..t.first_pool + t.pools;
        // Direct-write: a long sequential stream skips a cache with no room.
        let to_cache = self.pslc.is_on()
            && !(self.pslc.in_long_stream() && pools.clone().any(|p| !self.cache_has_room(p)));
        for pool in pools {
            let mut b = NIL;
            if to_cache {
                b = self.cache_frontier(pool, now, tl)?;
            }
            if b == NIL {
                b = self.frontiers.get(stream, pool);
            }
            if b == NIL {
                b = self.open_block(pool, now, tl, false)?;
                self.frontiers.set(stream, pool, b);
            }
            let bi = b as usize;
            debug_assert!(
                self.blocks.written()[bi] < self.blocks.capacity()[bi],
                "host frontier block {b} is full"
            );
            self.alloc.open[s]
                .page_slot
                .push(self.g.block_base(b) + self.blocks.written()[bi]);
            self.blocks.allot(b, self.g.units_per_page);
        }
        let open = &mut self.alloc.open[s];
        open.target = target as u32;
        open.total = t.pools * self.g.units_per_page;
        open.ready = now;
        Ok(())
    }

    /// Programs host stream `s`'s open page (padding what is not filled).
    pub(super) fn program_open_page(&mut self, s: usize, tl: &mut Timeline) -> Programmed {
        let t = self.alloc.stripe[self.alloc.open[s].target as usize];
        let upp = self.g.units_per_page;
        let mut program_ns = 0;
        let mut lower = false;
        for i in 0..t.pools as usize {
            let slot = self.alloc.open[s].page_slot[i];
            let b = self.g.block_of_slot(slot);
            let page = self.g.page_of_offset(slot - self.g.block_base(b));
            program_ns = program_ns.max(self.program_ns(b, page));
            lower |= self.is_lower_page(b, page);
            if self.pslc.is_on() && !self.blocks.in_cache()[b as usize] {
                self.counters.direct_units += upp as u64;
            }
        }
        self.counters.program_ops += 1;
        self.counters.program_ns += program_ns;
        if lower {
            self.back_up_lower_page(
                self.alloc.open[s].ready,
                t.die,
                self.alloc.open[s].total,
                tl,
            );
        }
        let done = tl.flash_program(
            self.alloc.open[s].ready,
            t.die,
            program_ns,
            self.alloc.open[s].total,
        );
        self.flash.programs_done = self.flash.programs_done.max(done);
        for i in 0..t.pools as usize {
            let slot = self.alloc.open[s].page_slot[i];
            let b = self.g.block_of_slot(slot);
            if let Some(p) = &mut self.power {
                p.programmed(
                    slot / upp,
                    done.saturating_sub(program_ns),
                    done,
                    PageKind::Host,
                );
            }
            self.programmed_page(b, upp);
        }
        self.counters.flash_programs_host += t.pools as u64;
        self.counters.flash_units_host += self.alloc.open[s].total as u64;
        let units = self.alloc.open[s].buffered;
        self.alloc.open[s].filled = 0;
        self.alloc.open[s].buffered = 0;
        Programmed { done, units }
    }

    /// Programs every host stream's partly filled page, padding its unused
    /// units: when the last program is done, and the buffered units they free.
    pub fn flush_open_page(&mut self, tl: &mut Timeline) -> Option<Programmed> {
        let mut flushed: Option<Programmed> = None;
        for s in 0..self.alloc.open.len() {
            if self.alloc.open[s].filled > 0 {
                let p = self.program_open_page(s, tl);
                flushed = Some(match flushed {
                    None => p,
                    Some(f) => Programmed {
                        done: f.done.max(p.done),
                        units: f.units + p.units,
                    },
                });
            }
        }
        flushed
    }
}
