//! The fill phases' fast paths: units laid out at memory speed with the
//! timeline off, whole multi-plane pages at a time, and — for a sequential
//! fill of a drive that maps nothing yet — whole stripe cycles as
//! arithmetic ([`Laid`]): the blocks it opens and seals are opened and
//! sealed in the same order as unit by unit, and the map's entries stay
//! unwritten. A fill comes in chunks of [`FILL_CHUNK`] units (the logical
//! clock moves once a chunk); the layout takes the chunks as they would be.

use super::frontiers::Frontier;
use super::{Ftl, NIL};
use crate::ftl::laid::Laid;
use crate::power::PageKind;
use crate::schedule::timeline::Timeline;
use crate::SimError;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Units a fill phase lays out per call (it reports progress and can be
/// interrupted between them).
pub const FILL_CHUNK: u64 = 1 << 20;

/// Where a pool is in a layout: its block, its place in the cycle, the
/// page of the fill it took the block at, the pages of the fill that block takes, those of them
/// counted in the block table so far.
#[derive(Debug, Clone, Copy)]
struct PoolAt {
    block: u32,
    rank: u32,
    from: u32,
    pages: u32,
    counted: u32,
}

/// What happens to a pool at its `page`-th page of the fill; ordered as
/// unit-by-unit filling meets them (page, then the pool's place in the
/// cycle, an opening before the sealing it leads to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    page: u32,
    rank: u32,
    seal: bool,
    pool: u32,
}

/// A fill that stopped (the drive wore out) after placing `placed` of its units.
#[derive(Debug)]
pub struct FillStopped {
    pub placed: u64,
    pub error: SimError,
}

impl Ftl {
    /// Writes `count` units, the i-th to `lpn_of(i)`, whole multi-plane pages
    /// at a time: the fill phases' fast path (run with the timeline disabled).
    pub fn fill(
        &mut self,
        count: u64,
        lpn_of: impl Fn(u64) -> u32,
        tl: &mut Timeline,
    ) -> Result<(), FillStopped> {
        self.with_map_untimed(|ftl| ftl.fill_units(count, lpn_of, tl, 0))
    }

    /// Runs `f` with the map cache untimed: preconditioning lays data out at
    /// memory speed, so the map cache only notes which translation pages end
    /// up linear, and stays as cold as it was.
    fn with_map_untimed<T>(&mut self, f: impl FnOnce(&mut Ftl) -> T) -> T {
        if let Some(m) = &mut self.map_cache {
            m.untimed = true;
        }
        let result = f(self);
        if let Some(m) = &mut self.map_cache {
            m.untimed = false;
        }
        result
    }

    /// [`Ftl::fill`] of one chunk; `laid` units of the chunk, before
    /// these, were laid out as arithmetic ([`Ftl::lay_out`]).
    fn fill_units(
        &mut self,
        count: u64,
        lpn_of: impl Fn(u64) -> u32,
        tl: &mut Timeline,
        laid: u64,
    ) -> Result<(), FillStopped> {
        let mut placed = 0;
        self.place_units(&mut placed, count, lpn_of, tl, laid)
            .map_err(|error| FillStopped { placed, error })
    }

    /// [`Ftl::fill_units`], counting in `i` the units placed (and every
    /// page programmed as it is: a fill the drive dies in counts what it did).
    fn place_units(
        &mut self,
        i: &mut u64,
        count: u64,
        lpn_of: impl Fn(u64) -> u32,
        tl: &mut Timeline,
        laid: u64,
    ) -> Result<(), SimError> {
        while *i < count && self.alloc.any_open() {
            self.write_unit(lpn_of(*i), 0, tl, false)?;
            *i += 1;
        }
        let upp = self.g.units_per_page;
        let stripe_units = self.stripe_units() as u64;
        let start = *i;
        // Whole pages at once place units without classifying them.
        while count - *i >= stripe_units && self.hot_cold.is_none() {
            let t = self.alloc.take_step();
            for pool in t.first_pool..t.first_pool + t.pools {
                let mut b = self.frontiers.get(Frontier::Host, pool);
                if b == NIL {
                    b = self.open_block(pool, 0, tl, false)?;
                    self.frontiers.set(Frontier::Host, pool, b);
                    // Laid out at memory speed: GC has no host pace to keep,
                    // it refills the pool at once.
                    if self.blocks.free_count(pool) < self.gc.start {
                        self.collect(pool, 0, tl, self.gc.start)?;
                    }
                }
                let bi = b as usize;
                let base = self.g.block_base(b) + self.blocks.written()[bi];
                for slot in base..base + upp {
                    let lpn = lpn_of(*i);
                    *i += 1;
                    if let Some(m) = &mut self.map_cache {
                        m.host_written(lpn);
                    }
                    if let Some(old) = self.map.place(lpn, slot) {
                        self.invalidate(old);
                    }
                    if let Some(o) = &mut self.oracle {
                        o.host_write(lpn, slot);
                    }
                    if let Some(p) = &mut self.power {
                        p.placed(slot, 0);
                    }
                }
                if let Some(p) = &mut self.power {
                    p.programmed(base / upp, 0, 0, PageKind::Host);
                }
                self.counters.flash_programs_host += 1;
                self.counters.flash_units_host += upp as u64;
                if self.blocks.fill_page(b, upp) {
                    self.sealed(b);
                }
            }
        }
        // The logical clock moves once a chunk (blocks sealed in it are
        // filed at the chunk's start).
        self.clock += *i - start + laid;
        while *i < count {
            self.write_unit(lpn_of(*i), 0, tl, false)?;
            *i += 1;
        }
        Ok(())
    }

    /// Fills units `first` .. `first + count` in order as [`Ftl::fill`]
    /// would in chunks of [`FILL_CHUNK`], its whole stripe cycles as
    /// arithmetic ([`Ftl::lay_out`]), if the drive maps nothing yet (and
    /// nothing must see each unit placed); else does nothing and returns false.
    pub fn fill_in_order(
        &mut self,
        first: u32,
        count: u64,
        tl: &mut Timeline,
    ) -> Result<bool, SimError> {
        if count < self.cycle_units() as u64 || !self.can_lay_out() {
            return Ok(false);
        }
        self.with_map_untimed(|ftl| {
            let laid = ftl.lay_out(first, count, tl)?;
            // The rest (under a cycle) lies in the last chunk: the units
            // laid out in that chunk count with it.
            let lpn_of = |i: u64| (first as u64 + laid + i) as u32;
            ftl.fill_units(count - laid, lpn_of, tl, laid % FILL_CHUNK)
                .map_err(|stopped| stopped.error)
        })?;
        Ok(true)
    }

    /// The stripe's steps' first pools, and the pools a step has (the
    /// same for every step).
    pub(super) fn stripe_pools(&self) -> (Vec<u32>, u32) {
        let pools = self.alloc.stripe.iter().map(|t| t.first_pool).collect();
        (pools, self.alloc.stripe[0].pools)
    }

    /// Units a whole stripe cycle lays (a page in every pool).
    fn cycle_units(&self) -> u32 {
        self.stripe_units() * self.alloc.stripe.len() as u32
    }

    /// Whether a fill from here may be laid out as arithmetic: nothing
    /// mapped (so no entry is written), no page open, every host frontier
    /// at a page boundary, stripe cycles that fill whole chunks, and no
    /// part that must see each unit placed (power cuts' records).
    fn can_lay_out(&self) -> bool {
        let upp = self.g.units_per_page;
        self.power.is_none()
            && self.hot_cold.is_none()
            && !self.map.has_layout()
            && self.blocks.valid_total() == 0
            && !self.alloc.any_open()
            && FILL_CHUNK.is_multiple_of(self.cycle_units() as u64)
            && self
                .alloc
                .stripe
                .iter()
                .all(|t| t.pools == self.alloc.stripe[0].pools)
            && (0..self.g.pools).all(|pool| {
                let b = self.frontiers.get(Frontier::Host, pool);
                b == NIL || self.blocks.written()[b as usize].is_multiple_of(upp)
            })
    }

    /// Lays out the whole stripe cycles of a fill of `count` units from
    /// `first` as arithmetic; returns the units laid. Each pool takes one
    /// page a cycle, so only the blocks' openings and sealings need doing,
    /// in the order filling unit by unit meets them; before GC (which looks
    /// at what blocks hold) the units laid so far are counted.
    fn lay_out(&mut self, first: u32, count: u64, tl: &mut Timeline) -> Result<u64, SimError> {
        let upp = self.g.units_per_page;
        let (stripe, step_pools) = self.stripe_pools();
        let steps = stripe.len();
        let cycle = self.cycle_units();
        let cycles = (count / cycle as u64) as u32;
        let c0 = self.alloc.cursor;
        let step_pool: Vec<u32> = (0..steps).map(|j| stripe[(c0 + j) % steps]).collect();
        let mut rank = vec![0u32; self.g.pools as usize];
        for (j, &p) in step_pool.iter().enumerate() {
            for q in 0..step_pools {
                rank[(p + q) as usize] = j as u32 * step_pools + q;
            }
        }
        self.map
            .lay_out(Laid::new(&self.g, first, step_pool, step_pools));
        let clock = self.clock;
        let mut at: Vec<Option<PoolAt>> = vec![None; self.g.pools as usize];
        let mut events = BinaryHeap::new();
        let event = |pool: u32, page, seal| {
            Reverse(Event {
                page,
                rank: rank[pool as usize],
                seal,
                pool,
            })
        };
        for pool in 0..self.g.pools {
            match self.frontiers.get(Frontier::Host, pool) {
                NIL => events.push(event(pool, 0, false)),
                b => {
                    if let Some(sealing) =
                        self.lay_in(&mut at, pool, rank[pool as usize], b, 0, cycles)
                    {
                        events.push(event(pool, sealing, true));
                    }
                }
            }
        }
        let mut told = 0;
        while let Some(Reverse(e)) = events.pop() {
            let unit = e.page as u64 * cycle as u64 + (e.rank * upp) as u64;
            // Blocks sealed in a chunk are filed at the chunk's start.
            self.clock = clock + unit / FILL_CHUNK * FILL_CHUNK;
            let pool = e.pool;
            if e.seal {
                let a = at[pool as usize]
                    .take()
                    .expect("a sealing follows an opening");
                let full = self.blocks.fill_page(a.block, (a.pages - a.counted) * upp);
                debug_assert!(full, "a block the layout seals is full");
                self.sealed(a.block);
                if e.page + 1 < cycles {
                    events.push(event(pool, e.page + 1, false));
                }
                continue;
            }
            if self.blocks.free_count(pool) <= self.gc_reserve() {
                told = self.count_laid(&mut at, &e, first, told);
            }
            let b = self.open_block(pool, 0, tl, false)?;
            self.frontiers.set(Frontier::Host, pool, b);
            if let Some(sealing) = self.lay_in(&mut at, pool, e.rank, b, e.page, cycles) {
                events.push(event(pool, sealing, true));
            }
            if self.blocks.free_count(pool) < self.gc.start {
                told = self.count_laid(&mut at, &e, first, told);
                self.collect(pool, 0, tl, self.gc.start)?;
            }
        }
        // The pools' last blocks stay open with their pages counted.
        for a in at.iter().flatten() {
            self.blocks.fill_page(a.block, (a.pages - a.counted) * upp);
        }
        let units = cycles as u64 * cycle as u64;
        self.tell_laid(first, told, units);
        self.clock = clock + units / FILL_CHUNK * FILL_CHUNK;
        self.counters.flash_programs_host += units / upp as u64;
        self.counters.flash_units_host += units;
        Ok(units)
    }

    /// Pool `pool` (`rank` in the cycle) takes block `b` from its `from`-th
    /// page of the fill, for as many pages as the block has room for, up
    /// to page `cycles`; returns the page of the fill that seals the
    /// block, if the fill does.
    fn lay_in(
        &mut self,
        at: &mut [Option<PoolAt>],
        pool: u32,
        rank: u32,
        b: u32,
        from: u32,
        cycles: u32,
    ) -> Option<u32> {
        let upp = self.g.units_per_page;
        let bi = b as usize;
        let room = (self.blocks.capacity()[bi] - self.blocks.written()[bi]) / upp;
        assert!(room > 0, "block {b}: a frontier with no room");
        let pages = room.min(cycles - from);
        let page = self.blocks.written()[bi] / upp;
        self.map.laid_mut().opened(pool, from, b, page, pages);
        at[pool as usize] = Some(PoolAt {
            block: b,
            rank,
            from,
            pages,
            counted: 0,
        });
        (pages == room).then_some(from + room - 1)
    }

    /// Before GC runs at event `e`: each open block's pages laid before it
    /// counted in the block table, the map's layout reaching there, and
    /// what watches each unit placed told of the units before it from unit
    /// `told` on; returns the units told.
    fn count_laid(&mut self, at: &mut [Option<PoolAt>], e: &Event, first: u32, told: u64) -> u64 {
        let upp = self.g.units_per_page;
        for a in at.iter_mut().flatten() {
            let laid = (e.page + (a.rank < e.rank) as u32 - a.from).min(a.pages);
            if laid > a.counted {
                self.blocks.fill_page(a.block, (laid - a.counted) * upp);
                a.counted = laid;
            }
        }
        let before = e.page as u64 * self.cycle_units() as u64 + (e.rank * upp) as u64;
        self.tell_laid(first, told, before);
        before
    }

    /// The layout reaches unit `to` of the fill (from `first`); the
    /// integrity oracle and the map cache's extents, which see each unit
    /// placed, are told of units `from` .. `to`.
    fn tell_laid(&mut self, first: u32, from: u64, to: u64) {
        self.map.laid_mut().laid_to(first + to as u32);
        if self.oracle.is_none() && self.map_cache.is_none() {
            return;
        }
        for i in from..to {
            let lpn = first + i as u32;
            if let Some(m) = &mut self.map_cache {
                m.host_written(lpn);
            }
            if let Some(o) = &mut self.oracle {
                o.host_write(
                    lpn,
                    self.map.slot_of(lpn).expect("a unit laid out is mapped"),
                );
            }
        }
    }
}
