//! Garbage collection per GC pool: foreground once a pool runs below the
//! low watermark (`gc_start`) until it is back at it or, with `gc_until =
//! "stop"`, at the high one (`gc_stop`); background in idle time up to the
//! high watermark; a victim
//! (chosen by the [`victim`] policy, or a dynamic pSLC block given back) has
//! its valid units copied to the pool's GC frontier, then is erased.
//!
//! Foreground GC is paced against host writes, as firmware does: once a
//! pool drops below the low watermark it takes a victim and, for every host
//! page programmed into the pool, copies the next few of the victim's pages
//! — enough to finish it before the host has used the space it gives back
//! (⌈capacity / invalid units⌉ pages each time). So host programs and GC
//! copies interleave on the die instead of a whole victim's copies being
//! booked at once ahead of the host's data. Only a pool down to GC's last
//! free block (after a power cut) finishes a victim at once.

pub mod victim;

use super::{Ftl, NIL};
use crate::config::{Config, DeathRule, GcUntil};
use crate::ftl::blocks::{BlockState, BlockTable};
use crate::ftl::frontiers::Frontier;
use crate::ftl::gc::victim::{VictimIndex, WornRule};
use crate::ftl::mapcache::MapAccess;
use crate::geometry::Geometry;
use crate::media::{CellMode, ModeTiming};
use crate::power::PageKind;
use crate::sanity::{ensure, indices, len, Checked};
use crate::schedule::timeline::Timeline;
use crate::{SimError, WearOut};
use serde::{Deserialize, Serialize};

/// GC's state and settings: the victim index, the GC frontier of each pool
/// and the page it fills, the watermarks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Gc {
    pub(super) victims: VictimIndex,
    /// Units in each pool's GC frontier's open page (its block is in
    /// `Ftl::frontiers`), and when the last of them reached controller RAM.
    pub(super) fill: Vec<u32>,
    pub(super) ready: Vec<u64>,
    /// Free blocks foreground GC keeps (low watermark) and background GC
    /// reclaims up to (high watermark), per pool.
    pub(super) start: u32,
    pub(super) stop: u32,
    /// Free blocks foreground GC, once started, cleans up to: `start` or `stop`.
    pub(super) refill: u32,
    /// Who the GC frontier's pages are programmed for now (GC, folding, recovery).
    pub(super) copy_kind: PageKind,
    /// ZombieNAND's usage-table GC (wear-aware victims) and its rule.
    pub(super) wear_aware: bool,
    pub(super) worn: WornRule,
    /// Paced GC: the victim each pool is relocating beside host writes
    /// (NIL: none), its next page, and its pages to copy per host page.
    pub(super) active: Vec<u32>,
    pub(super) cursor: Vec<u32>,
    pub(super) pace: Vec<u32>,
}

impl Gc {
    pub fn new(cfg: &Config) -> Gc {
        let g = &cfg.geometry;
        Gc {
            victims: VictimIndex::new(cfg.ftl.gc.name, cfg.ftl.gc.parameter, g),
            fill: vec![0; g.pools as usize],
            ready: vec![0; g.pools as usize],
            start: cfg.ftl.gc_start,
            stop: cfg.ftl.gc_stop,
            refill: match cfg.ftl.gc_until {
                GcUntil::Start => cfg.ftl.gc_start,
                GcUntil::Stop => cfg.ftl.gc_stop,
            },
            copy_kind: PageKind::Gc,
            wear_aware: cfg.ftl.wear.wear_leveling,
            worn: WornRule {
                threshold: cfg.ftl.wear.life_threshold,
                average: cfg.ftl.wear.life_average,
                skip: cfg.ftl.wear.life_skip,
            },
            active: vec![NIL; g.pools as usize],
            cursor: vec![0; g.pools as usize],
            pace: vec![0; g.pools as usize],
        }
    }

    /// Checks a loaded GC state (its frontiers are checked with the
    /// others'): a figure per pool, each paced victim a victim of its pool.
    pub(super) fn check_loaded(&self, g: &Geometry, blocks: &BlockTable) -> Checked {
        let pools = g.pools as u64;
        len("gc_fill", self.fill.len(), pools)?;
        len("gc_ready", self.ready.len(), pools)?;
        len("gc_active", self.active.len(), pools)?;
        len("gc_cursor", self.cursor.len(), pools)?;
        len("gc_pace", self.pace.len(), pools)?;
        indices("gc_active", &self.active, g.blocks as u64, true)?;
        for (p, &v) in self.active.iter().enumerate() {
            ensure(
                v == NIL
                    || (g.pool_of_block(v) == p as u32
                        && blocks.state()[v as usize] == BlockState::Victim
                        && self.cursor[p] <= blocks.capacity()[v as usize]),
                || format!("GC pool {p}'s paced victim is not a victim of that pool"),
            )?;
        }
        Ok(())
    }
}

impl Ftl {
    /// Foreground/background GC on `pool` until it has `target` free blocks.
    pub(super) fn collect(
        &mut self,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
        target: u32,
    ) -> Result<(), SimError> {
        let mut fruitless = 0;
        while self.blocks.free_count(pool) < target {
            let before = self.blocks.free_count(pool);
            self.collect_one(pool, now, tl)?;
            if self.blocks.free_count(pool) <= before {
                fruitless += 1;
                if fruitless > self.g.blocks_per_pool {
                    return Err(WearOut::NoReclaimableSpace { pool }.into());
                }
            }
        }
        Ok(())
    }

    /// Frees a block of `pool` for native use: finishes its paced victim if
    /// it has one; else folds its oldest dynamic cache block if it has one
    /// (a dynamic cache gives its blocks back first), else cleans a GC victim.
    pub(super) fn collect_one(
        &mut self,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        if self.gc.active[pool as usize] == NIL {
            let v = self.next_victim(pool)?;
            self.begin_victim(v, pool);
        }
        self.relocate_pages(pool, now, tl, u32::MAX).map(|_| ())
    }

    /// The block `pool` cleans next: its oldest dynamic cache block, else the
    /// victim policy's choice.
    fn next_victim(&mut self, pool: u32) -> Result<u32, SimError> {
        match self.pslc.take_oldest_dynamic(pool) {
            Some(v) => Ok(v),
            // Wear-aware at every victim. A pool down to the erased blocks
            // GC keeps for itself takes one whose valid units fit in what
            // GC can still write (`gc_room`): a victim that did not would
            // leave GC no erased block to finish it in (a native victim
            // copied into a zombie's smaller block). Taking the fewest valid
            // units there instead made a low watermark of the reserve + 1,
            // where every GC run starts at the reserve, choose one victim in
            // five by valid count alone: the usage table's skip undone.
            None => if self.gc.wear_aware {
                self.blocks.prepare_victim_choice(pool, self.clock);
                let room = if self.blocks.free_count(pool) <= self.gc_reserve() {
                    self.gc_room(pool)
                } else {
                    u32::MAX
                };
                self.gc.victims.take_wear_aware(
                    pool,
                    &self.blocks,
                    &self.gc.worn,
                    room,
                    self.clock,
                    &mut self.rng,
                )
            } else {
                self.gc
                    .victims
                    .take(pool, &self.blocks, self.clock, &mut self.rng)
            }
            .ok_or(WearOut::NoReclaimableSpace { pool }.into()),
        }
    }

    /// Units GC can still write in `pool` without another erase: what its
    /// frontier has left and the capacity of the pool's erased blocks.
    fn gc_room(&self, pool: u32) -> u32 {
        let f = self.frontiers.get(Frontier::Gc, pool);
        let left = if f == NIL {
            0
        } else {
            self.blocks.capacity()[f as usize] - self.blocks.written()[f as usize]
        };
        left + self.blocks.free_capacity(pool)
    }

    /// A host page was programmed into `pool` from `now`: paced GC copies
    /// the next pages of the pool's victim (taking one while the pool is
    /// below the low watermark).
    #[inline]
    pub(super) fn paced_gc(
        &mut self,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        let p = pool as usize;
        if self.gc.active[p] == NIL && self.blocks.free_count(pool) >= self.gc.start {
            return Ok(());
        }
        self.paced_gc_steps(pool, now, tl)
    }

    /// Paced GC's work after a host page: the victim's next pages, and
    /// further victims while one finishes with the pool still short of
    /// what foreground GC refills to (`[ftl] gc_until`: the low watermark,
    /// or the high one, as the ZombieNAND paper's GC does).
    #[inline(never)]
    fn paced_gc_steps(&mut self, pool: u32, now: u64, tl: &mut Timeline) -> Result<(), SimError> {
        let p = pool as usize;
        loop {
            if self.gc.active[p] == NIL {
                let free = self.blocks.free_count(pool);
                if free >= self.gc.refill {
                    return Ok(());
                }
                let v = match self.next_victim(pool) {
                    Ok(v) => v,
                    // Above the low watermark, nothing to clean is no emergency.
                    Err(_) if free >= self.gc.start => return Ok(()),
                    Err(e) => return Err(e),
                };
                self.begin_victim(v, pool);
            }
            if !self.relocate_pages(pool, now, tl, self.gc.pace[p])? {
                return Ok(());
            }
        }
    }

    /// Copies block `v`'s valid units to the pool's GC frontier (native
    /// mode; for a cache block this is folding), then erases it.
    pub(super) fn relocate(
        &mut self,
        v: u32,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        if self.gc.active[pool as usize] != NIL {
            // The paced victim first: one relocation at a time per pool.
            let was = self.blocks.state()[v as usize];
            self.relocate_pages(pool, now, tl, u32::MAX)?;
            if self.blocks.state()[v as usize] != was {
                // The GC that copy needed has cleaned `v` meanwhile.
                return Ok(());
            }
        }
        self.begin_victim(v, pool);
        self.relocate_pages(pool, now, tl, u32::MAX).map(|_| ())
    }

    /// Makes `v` the victim `pool` relocates, from its first page.
    fn begin_victim(&mut self, v: u32, pool: u32) {
        let (p, vi) = (pool as usize, v as usize);
        self.blocks.make_victim(v);
        let valid = self.blocks.valid()[vi];
        if self.blocks.in_cache()[vi] {
            self.counters.folded_units += valid as u64;
        }
        let capacity = self.blocks.capacity()[vi];
        self.gc.active[p] = v;
        self.gc.cursor[p] = 0;
        self.gc.pace[p] = capacity.div_ceil(capacity.saturating_sub(valid).max(1));
    }

    /// Copies the valid units of the next `pages` pages (at most) of
    /// `pool`'s victim, and erases it once nothing valid is left. Returns
    /// whether the victim is done.
    fn relocate_pages(
        &mut self,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
        pages: u32,
    ) -> Result<bool, SimError> {
        let p = pool as usize;
        let v = self.gc.active[p];
        let vi = v as usize;
        let die = self.g.die_of_pool(pool);
        let upp = self.g.units_per_page;
        let base = self.g.block_base(v);
        let run = self.blocks.run()[vi];
        self.gc.copy_kind = if self.blocks.in_cache()[vi] {
            PageKind::Fold
        } else {
            PageKind::Gc
        };
        let mut lpns = [0u32; 64];
        let last = self.blocks.capacity()[vi] / upp;
        let mut copied = 0;
        while self.blocks.valid()[vi] > 0 && self.gc.cursor[p] < last && copied < pages {
            let page = self.gc.cursor[p];
            self.gc.cursor[p] += 1;
            let first = base + page * upp;
            let mut n = 0usize;
            for s in first..first + upp {
                if let Some(lpn) = self.map.holder(s) {
                    if n == lpns.len() {
                        self.copy_units(pool, die, page, run, &lpns[..n], now, tl)?;
                        n = 0;
                    }
                    lpns[n] = lpn;
                    n += 1;
                }
            }
            if n > 0 {
                self.copy_units(pool, die, page, run, &lpns[..n], now, tl)?;
                copied += 1;
            }
        }
        if self.blocks.valid()[vi] > 0 {
            return Ok(false);
        }
        self.gc.active[p] = NIL;
        self.erase_victim(v, pool, now, tl)?;
        Ok(true)
    }

    /// Erases victim `v` of `pool`, emptied of valid units.
    fn erase_victim(
        &mut self,
        v: u32,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        let vi = v as usize;
        let die = self.g.die_of_pool(pool);
        let mode = self.blocks.mode()[vi];
        let dynamic = self.blocks.in_cache()[vi] && !self.blocks.static_cache()[vi];
        // Without power-loss protection, no copy may wait in RAM while its
        // source is erased: the GC page is programmed (padded) first; and the
        // erase waits for the programs booked so far, which hold the data
        // that made this block's stale copies stale.
        let mut erase_from = now;
        if self.volatile_ram {
            if self.gc.fill[pool as usize] > 0 {
                self.program_gc_page(pool, die, tl);
            }
            erase_from = now.max(self.flash.programs_done);
        }
        let erase_ns = self.erase_ns(v);
        self.counters.erase_ns += erase_ns;
        let erased = tl.erase(erase_from, die, erase_ns);
        if self.power.is_some() {
            self.note_erase(v, erased.saturating_sub(erase_ns), erased);
        }
        self.counters.erases += 1;
        if dynamic {
            self.pslc.count_dynamic(pool, -1);
        }
        let usable = self.blocks.erase(v, pool);
        let base = self.g.block_base(v) as usize;
        self.map
            .erased(v, base..base + self.g.units_per_block as usize);
        if let Some(e) = self.errors.as_deref_mut() {
            e.erased(v, self.blocks.erase_count()[vi]);
        }
        if !usable || self.blocks.mode()[vi] != mode {
            self.lost_flash(pool, usable)?;
        }
        Ok(())
    }

    /// A block of `pool` lost flash at its erase (retired, or — ZombieNAND —
    /// switched to a lower mode, `usable`): whether the drive lives on, by
    /// the death rule. Lost bits come out of the reserve; under `capacity`
    /// the pool must still hold its share of the user capacity plus the
    /// blocks GC keeps free (high watermark), under `dead-blocks` it may
    /// retire up to (R − W)% of its blocks, holding what it can.
    fn lost_flash(&mut self, pool: u32, usable: bool) -> Result<(), SimError> {
        let usable_units = self.blocks.pool_capacity()[pool as usize];
        let needed = self.guaranteed_units;
        if usable_units < needed && self.capacity_short_at.is_none() {
            self.capacity_short_at = Some(self.counters.host_write_bytes);
        }
        match self.death {
            DeathRule::Capacity if usable_units < needed => Err(WearOut::TooLittleFlash {
                pool,
                usable: usable_units,
                needed,
            }
            .into()),
            DeathRule::DeadBlocks if !usable => {
                let dead = self
                    .g
                    .pool_blocks(pool)
                    .filter(|&b| self.blocks.state()[b as usize] == BlockState::Bad)
                    .count() as u32;
                if dead > self.dead_block_limit {
                    return Err(WearOut::TooManyDeadBlocks {
                        pool,
                        dead,
                        limit: self.dead_block_limit,
                    }
                    .into());
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Reads page `page` (of a block in `mode`) on `die` from `now`; returns
    /// when its data is in the controller.
    pub(super) fn gc_read(
        &mut self,
        die: u32,
        page: u32,
        mode: CellMode,
        units: u32,
        now: u64,
        tl: &mut Timeline,
    ) -> u64 {
        let read_ns =
            self.flash.timing[mode.index()].read_ns[ModeTiming::page_type(page, mode.bits())];
        self.counters.flash_reads_gc += 1;
        tl.flash_read(now, die, read_ns, units)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn copy_units(
        &mut self,
        pool: u32,
        die: u32,
        page: u32,
        mode: CellMode,
        lpns: &[u32],
        now: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        let ready = self.gc_read(die, page, mode, lpns.len() as u32, now, tl);
        for &lpn in lpns {
            let from = self.map.slot_of(lpn).expect("a unit GC moves is mapped");
            let to = self.gc_place(pool, die, lpn, ready, tl)?;
            if let Some(o) = &mut self.oracle {
                o.moved(lpn, from, to);
            }
        }
        Ok(())
    }

    /// Places unit `lpn`, in controller RAM from `ready`, on `pool`'s GC
    /// frontier (programming the page once full); returns its new slot.
    pub(super) fn gc_place(
        &mut self,
        pool: u32,
        die: u32,
        lpn: u32,
        ready: u64,
        tl: &mut Timeline,
    ) -> Result<u32, SimError> {
        let p = pool as usize;
        let mut b = self.frontiers.get(Frontier::Gc, pool);
        if b == NIL {
            b = self.open_block(pool, ready, tl, true)?;
            self.frontiers.set(Frontier::Gc, pool, b);
        }
        let bi = b as usize;
        let slot = self.g.block_base(b) + self.blocks.written()[bi];
        self.blocks.allot(b, 1);
        self.map_access(lpn, MapAccess::Update, ready, tl);
        self.map(lpn, slot);
        if let Some(pm) = &mut self.power {
            pm.placed(slot, ready);
        }
        self.gc.fill[p] += 1;
        self.gc.ready[p] = self.gc.ready[p].max(ready);
        if self.gc.fill[p] == self.g.units_per_page {
            self.program_gc_page(pool, die, tl);
        }
        Ok(slot)
    }

    /// Programs `pool`'s GC frontier page, padding what is not filled.
    pub(super) fn program_gc_page(&mut self, pool: u32, die: u32, tl: &mut Timeline) {
        let p = pool as usize;
        let b = self.frontiers.get(Frontier::Gc, pool);
        let bi = b as usize;
        let upp = self.g.units_per_page;
        if self.gc.fill[p] < upp {
            self.blocks.allot(b, upp - self.gc.fill[p]);
        }
        let page = self.blocks.programmed()[bi] / upp;
        let program_ns = self.program_ns(b, page);
        self.counters.program_ops += 1;
        self.counters.program_ns += program_ns;
        if self.is_lower_page(b, page) {
            self.back_up_lower_page(self.gc.ready[p], die, upp, tl);
        }
        let done = tl.flash_program(self.gc.ready[p], die, program_ns, upp);
        self.flash.programs_done = self.flash.programs_done.max(done);
        if let Some(pm) = &mut self.power {
            let global = self.g.block_base(b) / upp + page;
            pm.programmed(
                global,
                done.saturating_sub(program_ns),
                done,
                self.gc.copy_kind,
            );
        }
        self.programmed_page(b, upp);
        self.counters.flash_programs_gc += 1;
        self.counters.flash_units_gc += upp as u64;
        self.gc.fill[p] = 0;
        self.gc.ready[p] = 0;
    }

    /// Background GC in an idle window ending at `until`: pools below the
    /// high watermark clean victims while their die would otherwise be idle.
    pub fn background_gc(&mut self, until: u64, tl: &mut Timeline) -> Result<(), SimError> {
        for pool in 0..self.g.pools {
            let die = self.g.die_of_pool(pool);
            // Idle folding empties the pSLC cache for the next burst, the
            // frontier block too once nothing waits in RAM for it.
            while self.pslc.folds_idle() && tl.die_free_at(die) < until {
                let Some(v) = self
                    .pslc
                    .take_to_fold_idle(pool)
                    .or_else(|| self.take_idle_cache_frontier(pool))
                else {
                    break;
                };
                let start = tl.die_free_at(die);
                self.fold(v, pool, start, tl)?;
            }
            while self.blocks.free_count(pool) < self.gc.stop {
                let start = tl.die_free_at(die);
                if start >= until {
                    break;
                }
                let before = self.blocks.free_count(pool);
                self.collect_one(pool, start, tl)?;
                if self.blocks.free_count(pool) <= before {
                    break;
                }
            }
        }
        Ok(())
    }
}
