//! The page-mapped flash translation layer: logical→physical map and its
//! reverse, allocation striped over channels/chips/dies/planes, garbage
//! collection per GC pool (a plane or a die; foreground when free blocks run
//! short, background in idle time; optionally levelling wear, or ZombieNAND's
//! wear-unleveling), and TRIM. Every flash operation it decides is timed on the
//! [`Timeline`], so GC competes with host I/O for dies and channels.
//!
//! With a pSLC cache, host writes land in blocks run as SLC; folding copies
//! a cache block's valid data into native blocks (oldest cache block first:
//! in idle time, when the cache is full, or when GC needs a dynamic cache's
//! blocks back). Direct-write sends a long sequential stream past a full
//! cache straight to native blocks.
//!
//! State is flat arrays: `l2p[lpn] = slot + 1` (0 = unmapped) and
//! `p2l[slot] = lpn`; a slot is valid exactly when `l2p[p2l[slot]] == slot + 1`.
//!
//! On a drive with power cuts every placement, page program and erase is
//! also noted in the [`PowerModel`], and [`recovery`] rebuilds the map after
//! a cut from what the flash physically holds.

use serde::{Deserialize, Serialize};
mod loaded;
mod recovery;

use crate::blocks::{BlockState, BlockTable};
use crate::config::{Config, PslcConfig, PslcKind, StripeDim, WriteCache};
use crate::geometry::Geometry;
use crate::mapcache::{MapAccess, MapCache};
use crate::media::ModeTiming;
use crate::memory;
use crate::oracle::Oracle;
use crate::power::{PageKind, PowerModel};
use crate::stats::Counters;
use crate::timeline::Timeline;
use crate::victim::VictimIndex;
use crate::wear::{ERASE_LOOPS, PROGRAM_LOOPS, RELAXED_PROGRAM_FACTOR};
use crate::SimError;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;

/// One step of the allocation stripe: a die and the GC pools (planes)
/// programmed together on it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Target {
    die: u32,
    first_pool: u32,
    pools: u32,
}

/// The multi-plane page the host write frontier is filling.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct OpenPage {
    /// Units placed so far; 0 = no page open.
    filled: u32,
    /// Of those, units that hold space in the DRAM write buffer (fill phases
    /// place units without it).
    buffered: u32,
    /// Units the page holds (pools × units per page).
    total: u32,
    /// When the last unit's data reached the buffer.
    ready: u64,
    /// First slot of the page in each pool of the target.
    page_slot: Vec<u32>,
}

/// A program the host write path issued: its `units` buffered units leave the write buffer at `done`.
#[derive(Debug, Clone, Copy)]
pub struct Programmed {
    pub done: u64,
    pub units: u32,
}

/// The FTL and the flash state it manages.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ftl {
    pub g: Geometry,
    #[serde(with = "crate::memory::flat")]
    l2p: Vec<u32>,
    #[serde(with = "crate::memory::flat")]
    p2l: Vec<u32>,
    pub blocks: BlockTable,
    victims: VictimIndex,
    host_block: Vec<u32>,
    /// pSLC cache frontier per pool.
    cache_block: Vec<u32>,
    gc_block: Vec<u32>,
    gc_fill: Vec<u32>,
    gc_ready: Vec<u64>,
    stripe: Vec<Target>,
    cursor: usize,
    open: OpenPage,
    gc_start: u32,
    gc_stop: u32,
    timing: Vec<ModeTiming>,
    /// Logical clock: host units written (ages for cost-benefit GC).
    clock: u64,
    rng: Xoshiro256PlusPlus,
    pub counters: Counters,
    /// Flash a pool must keep usable: its share of the user capacity plus
    /// the blocks GC keeps free (high watermark), in units.
    guaranteed_units: u64,
    wear_aware_gc: bool,
    life_threshold: f64,
    /// Program-time factor of the data being written, per mille.
    program_permille: u64,
    /// 0.5 with retention-relaxed programming, else 1.
    relaxed_factor: f64,
    /// Version stamps checking that reads get the latest write (tests, debugging).
    pub oracle: Option<Oracle>,
    /// DRAM-less drive: the cached part of the mapping table.
    map_cache: Option<MapCache>,
    /// What the flash physically holds, on a drive with power cuts.
    pub power: Option<Box<PowerModel>>,
    /// Who the GC frontier's pages are programmed for now (GC, folding, recovery).
    copy_kind: PageKind,
    /// When the last program booked so far completes.
    programs_done: u64,
    /// No power-loss protection: RAM is lost at a cut, so GC programs its
    /// copies and waits for programs under way before erasing a victim.
    volatile_ram: bool,
    /// And lower pages of multi-bit wordlines are backed up in SLC.
    backup_lower_pages: bool,
    /// Host writes replayed from the power-loss dump keep this version.
    replay_version: Option<u32>,
    pslc: PslcConfig,
    /// Sealed static and dynamic cache blocks per pool, oldest first (the fold order).
    static_fifo: Vec<VecDeque<u32>>,
    dynamic_fifo: Vec<VecDeque<u32>>,
    /// Native blocks per pool now run as dynamic cache (open or sealed).
    dynamic_in_use: Vec<u32>,
    /// The dynamic cache is on (until the drive has used `static_after` of its rated cycles).
    dynamic_active: bool,
    /// Sequential-stream detection for direct-write: the unit after the last
    /// one written, and how many units the current stream has.
    next_lpn: u32,
    stream_units: u64,
    direct_after_units: u64,
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
    pub fn new(cfg: &Config, seed: u64) -> Ftl {
        let g = cfg.geometry.clone();
        let relaxed = cfg.device.wear.conditions.relaxed;
        Ftl {
            // Zeroed vectors come from the OS lazily: untouched parts cost no memory.
            l2p: memory::zeroed_u32(g.user_units as usize),
            p2l: memory::zeroed_u32(g.slots as usize),
            blocks: BlockTable::new(&g, &cfg.device.wear, &cfg.ftl, cfg.seed),
            victims: VictimIndex::new(cfg.ftl.gc, &g),
            host_block: vec![NIL; g.pools as usize],
            cache_block: vec![NIL; g.pools as usize],
            gc_block: vec![NIL; g.pools as usize],
            gc_fill: vec![0; g.pools as usize],
            gc_ready: vec![0; g.pools as usize],
            // Write-through programs each write's page at once: one plane.
            stripe: build_stripe(
                &g,
                &cfg.ftl.stripe_order,
                cfg.device.multiplane && cfg.device.write_cache != WriteCache::Off,
            ),
            cursor: 0,
            open: OpenPage::default(),
            gc_start: cfg.ftl.gc_start,
            gc_stop: cfg.ftl.gc_stop,
            timing: cfg.device.timing.clone(),
            clock: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            counters: Counters::default(),
            guaranteed_units: g.user_units_per_pool()
                + cfg.ftl.gc_stop as u64 * g.units_per_block as u64,
            wear_aware_gc: cfg.ftl.wear_leveling,
            life_threshold: cfg.ftl.life_threshold,
            program_permille: if relaxed { 500 } else { 1000 },
            relaxed_factor: if relaxed { RELAXED_PROGRAM_FACTOR } else { 1.0 },
            oracle: None,
            map_cache: cfg.ftl.map_cache.map(|bytes| {
                MapCache::new(
                    bytes,
                    g.page_size,
                    g.units_per_page,
                    g.user_units,
                    g.dies,
                    &cfg.device.timing[g.cell.index()],
                )
            }),
            power: None,
            copy_kind: PageKind::Gc,
            programs_done: 0,
            volatile_ram: cfg.device.write_cache != WriteCache::Plp,
            backup_lower_pages: cfg.device.write_cache != WriteCache::Plp
                && cfg.ftl.paired_page_backup,
            replay_version: None,
            pslc: cfg.ftl.pslc.clone(),
            static_fifo: vec![VecDeque::new(); g.pools as usize],
            dynamic_fifo: vec![VecDeque::new(); g.pools as usize],
            dynamic_in_use: vec![0; g.pools as usize],
            dynamic_active: cfg.ftl.pslc.kind == PslcKind::Dynamic,
            next_lpn: NIL,
            stream_units: 0,
            direct_after_units: cfg.ftl.pslc.direct_write_after.div_ceil(g.unit_size as u64),
            g,
        }
    }

    /// Units the host write frontier fills before one program (pools × page).
    pub fn stripe_units(&self) -> u32 {
        let t = self.stripe[0];
        t.pools * self.g.units_per_page
    }

    /// The slot holding `lpn`, if mapped.
    #[inline]
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        match self.l2p[lpn as usize] {
            0 => None,
            s => Some(s - 1),
        }
    }

    /// Makes `lpn`'s mapping entry available no earlier than `t` for
    /// `access` (on a DRAM-less drive, reading its translation page on a
    /// miss). Returns when it is.
    #[inline]
    pub fn map_access(&mut self, lpn: u32, access: MapAccess, t: u64, tl: &mut Timeline) -> u64 {
        match &mut self.map_cache {
            Some(m) => m.access(lpn, access, t, tl, &mut self.counters),
            None => t,
        }
    }

    /// Whether a slot's data is on flash (else it still waits in controller RAM).
    #[inline]
    pub fn is_programmed(&self, slot: u32) -> bool {
        let b = self.g.block_of_slot(slot);
        slot - self.g.block_base(b) < self.blocks.programmed[b as usize]
    }

    /// Die, page-in-block and read latency of a slot.
    #[inline]
    pub fn read_target(&self, slot: u32) -> (u32, u32, u64) {
        let b = self.g.block_of_slot(slot);
        let page = self.g.page_of_offset(slot - self.g.block_base(b));
        let mode = self.blocks.run[b as usize];
        let die = self.g.die_of_plane(self.g.plane_of_block(b));
        (
            die,
            page,
            self.timing[mode.index()].read_ns[ModeTiming::page_type(page, mode.bits())],
        )
    }

    /// Hints that `lpn` will be written or read soon (its map entry is
    /// fetched into cache while the current request is simulated).
    #[inline]
    pub fn will_touch(&self, lpn: u32) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: prefetch is a hint and never faults, even for a bad address.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch(
                self.l2p.as_ptr().wrapping_add(lpn as usize) as *const i8,
                _MM_HINT_T0,
            );
        }
    }

    #[inline]
    fn invalidate(&mut self, slot: u32) {
        let b = self.g.block_of_slot(slot);
        let bi = b as usize;
        self.blocks.valid[bi] -= 1;
        if self.blocks.state[bi] == BlockState::Sealed && !self.blocks.in_cache[bi] {
            self.victims.invalidated(
                b,
                self.blocks.valid[bi],
                self.blocks.capacity[bi],
                self.clock,
            );
        }
    }

    #[inline]
    fn map(&mut self, lpn: u32, slot: u32) {
        let old = self.l2p[lpn as usize];
        if old != 0 {
            self.invalidate(old - 1);
        }
        self.l2p[lpn as usize] = slot + 1;
        self.p2l[slot as usize] = lpn;
        self.blocks.valid[self.g.block_of_slot(slot) as usize] += 1;
    }

    /// Removes `lpn`'s mapping (TRIM, acknowledged at `t`). Returns whether it was mapped.
    #[inline]
    pub fn trim(&mut self, lpn: u32, t: u64) -> bool {
        if let Some(o) = &mut self.oracle {
            o.trim(lpn, t);
        }
        if let Some(p) = &mut self.power {
            p.trimmed(lpn, t);
        }
        let old = self.l2p[lpn as usize];
        if old == 0 {
            return false;
        }
        self.invalidate(old - 1);
        self.l2p[lpn as usize] = 0;
        true
    }

    /// Opens a fresh block in `pool` for a frontier; runs foreground GC if the
    /// pool is then short of free blocks (not from inside GC itself).
    fn open_block(
        &mut self,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
        for_gc: bool,
    ) -> Result<u32, SimError> {
        if !for_gc && self.blocks.free_count(pool) == 0 {
            // Only after a power cut: GC had no time to keep its reserve.
            self.collect(pool, now, tl, 1)?;
        }
        let b = self
            .blocks
            .open(pool)
            .ok_or(SimError::NoFreeBlock { pool })?;
        if !for_gc && self.blocks.free_count(pool) < self.gc_start {
            self.collect(pool, now, tl, self.gc_start)?;
        }
        Ok(b)
    }

    /// Seals a fully programmed block: it leaves its frontier and becomes a GC candidate.
    fn seal_if_full(&mut self, b: u32) {
        let bi = b as usize;
        if self.blocks.programmed[bi] == self.blocks.capacity[bi] {
            self.blocks.state[bi] = BlockState::Sealed;
            let pool = self.g.pool_of_block(b) as usize;
            if !self.blocks.in_cache[bi] {
                self.victims.insert(
                    b,
                    self.blocks.valid[bi],
                    self.blocks.capacity[bi],
                    self.clock,
                );
            } else if self.blocks.static_cache[bi] {
                self.static_fifo[pool].push_back(b);
            } else {
                self.dynamic_fifo[pool].push_back(b);
            }
            for frontier in [
                &mut self.host_block[pool],
                &mut self.cache_block[pool],
                &mut self.gc_block[pool],
            ] {
                if *frontier == b {
                    *frontier = NIL;
                }
            }
        }
    }

    /// Program time of a page now: the mode's time for its page type, in the
    /// ISPP steps the block's wear calls for, scaled by the data written.
    fn program_ns(&self, b: u32, page: u32) -> u64 {
        let mode = self.blocks.run[b as usize];
        let fresh = self.timing[mode.index()].program_ns[ModeTiming::page_type(page, mode.bits())];
        let worn = fresh * self.blocks.program_loops[b as usize] as u64 / PROGRAM_LOOPS.0 as u64;
        worn * self.program_permille / 1000
    }

    /// Erase time of a block now (its wear sets the number of erase pulses).
    fn erase_ns(&self, b: u32) -> u64 {
        let fresh = self.timing[self.blocks.run[b as usize].index()].erase_ns;
        fresh * self.blocks.erase_loops[b as usize] as u64 / ERASE_LOOPS.0 as u64
    }

    /// Sets the program-time factor of the data being written (1 = random
    /// data), on top of retention relaxation if the device uses it.
    pub fn set_data_factor(&mut self, factor: f64) {
        self.program_permille = (factor * self.relaxed_factor * 1000.0).round() as u64;
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
        if self.pslc.direct_write {
            self.stream_units = if lpn == self.next_lpn {
                self.stream_units + 1
            } else {
                1
            };
            self.next_lpn = lpn.wrapping_add(1);
        }
        if self.open.filled == 0 {
            self.open_page(ready, tl)?;
        }
        let upp = self.g.units_per_page;
        let k = self.open.filled;
        let plane_i = self.g.fast.units_per_page.quotient(k);
        let slot = self.open.page_slot[plane_i as usize] + (k - plane_i * upp);
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
        self.open.filled += 1;
        self.open.buffered += buffered as u32;
        self.open.ready = self.open.ready.max(ready);
        if self.open.filled < self.open.total {
            return Ok(None);
        }
        Ok(Some(self.program_open_page(tl)))
    }

    /// On a drive with power cuts: the host's bytes of unit `lpn` (just
    /// placed) reached controller RAM at `at`, before a read-modify-write
    /// merge completes (recovery can finish a merge from the old data).
    pub fn note_arrival(&mut self, lpn: u32, at: u64) {
        let slot = self.lookup(lpn);
        if let (Some(pm), Some(slot)) = (&mut self.power, slot) {
            pm.ready[slot as usize] = at;
        }
    }

    /// Writes `count` units, the i-th to `lpn_of(i)`, whole multi-plane pages
    /// at a time: the fill phases' fast path (run with the timeline disabled).
    pub fn fill(
        &mut self,
        count: u64,
        lpn_of: impl Fn(u64) -> u32,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        // Preconditioning lays data out at memory speed: the map cache only
        // notes which translation pages end up linear, and stays as cold as it was.
        if let Some(m) = &mut self.map_cache {
            m.untimed = true;
        }
        let result = self.fill_units(count, lpn_of, tl);
        if let Some(m) = &mut self.map_cache {
            m.untimed = false;
        }
        result
    }

    fn fill_units(
        &mut self,
        count: u64,
        lpn_of: impl Fn(u64) -> u32,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        let mut i = 0;
        while i < count && self.open.filled != 0 {
            self.write_unit(lpn_of(i), 0, tl, false)?;
            i += 1;
        }
        let upp = self.g.units_per_page;
        let stripe_units = self.stripe_units() as u64;
        let (mut pages, start) = (0u64, i);
        while count - i >= stripe_units {
            let t = self.stripe[self.cursor];
            for pool in t.first_pool..t.first_pool + t.pools {
                let mut b = self.host_block[pool as usize];
                if b == NIL {
                    b = self.open_block(pool, 0, tl, false)?;
                    self.host_block[pool as usize] = b;
                }
                let bi = b as usize;
                let base = self.g.block_base(b) + self.blocks.written[bi];
                for slot in base..base + upp {
                    let lpn = lpn_of(i);
                    i += 1;
                    if let Some(m) = &mut self.map_cache {
                        m.host_written(lpn);
                    }
                    let old = self.l2p[lpn as usize];
                    if old != 0 {
                        self.invalidate(old - 1);
                    }
                    self.l2p[lpn as usize] = slot + 1;
                    self.p2l[slot as usize] = lpn;
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
                self.blocks.written[bi] += upp;
                self.blocks.valid[bi] += upp;
                self.blocks.programmed[bi] += upp;
                self.seal_if_full(b);
            }
            pages += t.pools as u64;
            self.cursor += 1;
            if self.cursor == self.stripe.len() {
                self.cursor = 0;
            }
        }
        self.clock += i - start;
        self.counters.flash_programs_host += pages;
        self.counters.flash_units_host += i - start;
        while i < count {
            self.write_unit(lpn_of(i), 0, tl, false)?;
            i += 1;
        }
        Ok(())
    }

    fn open_page(&mut self, now: u64, tl: &mut Timeline) -> Result<(), SimError> {
        let t = self.stripe[self.cursor];
        self.open.page_slot.clear();
        let pools = t.first_pool..t.first_pool + t.pools;
        // Direct-write: a long sequential stream skips a cache with no room.
        let to_cache = self.pslc.kind != PslcKind::Off
            && !(self.pslc.direct_write
                && self.stream_units >= self.direct_after_units
                && pools.clone().any(|p| !self.cache_has_room(p)));
        for pool in pools {
            let mut b = NIL;
            if to_cache {
                b = self.cache_frontier(pool, now, tl)?;
            }
            if b == NIL {
                b = self.host_block[pool as usize];
            }
            if b == NIL {
                b = self.open_block(pool, now, tl, false)?;
                self.host_block[pool as usize] = b;
            }
            let bi = b as usize;
            debug_assert!(
                self.blocks.written[bi] < self.blocks.capacity[bi],
                "host frontier block {b} is full"
            );
            self.open
                .page_slot
                .push(self.g.block_base(b) + self.blocks.written[bi]);
            self.blocks.written[bi] += self.g.units_per_page;
        }
        self.open.total = t.pools * self.g.units_per_page;
        self.open.ready = now;
        Ok(())
    }

    fn program_open_page(&mut self, tl: &mut Timeline) -> Programmed {
        let t = self.stripe[self.cursor];
        let upp = self.g.units_per_page;
        let mut program_ns = 0;
        let mut lower = false;
        for i in 0..t.pools as usize {
            let slot = self.open.page_slot[i];
            let b = self.g.block_of_slot(slot);
            let page = self.g.page_of_offset(slot - self.g.block_base(b));
            program_ns = program_ns.max(self.program_ns(b, page));
            lower |= self.is_lower_page(b, page);
            if self.pslc.kind != PslcKind::Off && !self.blocks.in_cache[b as usize] {
                self.counters.direct_units += upp as u64;
            }
        }
        self.counters.program_ops += 1;
        self.counters.program_ns += program_ns;
        if lower {
            self.back_up_lower_page(self.open.ready, t.die, self.open.total, tl);
        }
        let done = tl.flash_program(self.open.ready, t.die, program_ns, self.open.total);
        self.programs_done = self.programs_done.max(done);
        for i in 0..t.pools as usize {
            let slot = self.open.page_slot[i];
            let b = self.g.block_of_slot(slot);
            if let Some(p) = &mut self.power {
                p.programmed(
                    slot / upp,
                    done.saturating_sub(program_ns),
                    done,
                    PageKind::Host,
                );
            }
            self.blocks.programmed[b as usize] += upp;
            self.seal_if_full(b);
        }
        self.counters.flash_programs_host += t.pools as u64;
        self.counters.flash_units_host += self.open.total as u64;
        let units = self.open.buffered;
        self.open.filled = 0;
        self.open.buffered = 0;
        self.cursor += 1;
        if self.cursor == self.stripe.len() {
            self.cursor = 0;
        }
        Programmed { done, units }
    }

    /// Programs the partly filled frontier page, padding its unused units.
    pub fn flush_open_page(&mut self, tl: &mut Timeline) -> Option<Programmed> {
        if self.open.filled == 0 {
            return None;
        }
        Some(self.program_open_page(tl))
    }

    /// Foreground/background GC on `pool` until it has `target` free blocks.
    fn collect(
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
                    return Err(SimError::NoReclaimableSpace { pool });
                }
            }
        }
        Ok(())
    }

    /// Frees a block of `pool` for native use: folds its oldest dynamic
    /// cache block if it has one (a dynamic cache gives its blocks back
    /// first), else cleans a GC victim.
    fn collect_one(&mut self, pool: u32, now: u64, tl: &mut Timeline) -> Result<(), SimError> {
        let v = match self.dynamic_fifo[pool as usize].pop_front() {
            Some(v) => v,
            None => if self.wear_aware_gc {
                self.victims.take_wear_aware(
                    pool,
                    &self.blocks,
                    self.life_threshold,
                    self.clock,
                    &mut self.rng,
                )
            } else {
                self.victims
                    .take(pool, &self.blocks, self.clock, &mut self.rng)
            }
            .ok_or(SimError::NoReclaimableSpace { pool })?,
        };
        self.relocate(v, pool, now, tl)
    }

    /// Copies block `v`'s valid units to the pool's GC frontier (native
    /// mode; for a cache block this is folding), then erases it.
    fn relocate(&mut self, v: u32, pool: u32, now: u64, tl: &mut Timeline) -> Result<(), SimError> {
        let vi = v as usize;
        self.blocks.state[vi] = BlockState::Victim;
        let die = self.g.die_of_pool(pool);
        let upp = self.g.units_per_page;
        let base = self.g.block_base(v);
        let (mode, run) = (self.blocks.mode[vi], self.blocks.run[vi]);
        let dynamic = self.blocks.in_cache[vi] && !self.blocks.static_cache[vi];
        let mut remaining = self.blocks.valid[vi];
        if self.blocks.in_cache[vi] {
            self.counters.folded_units += remaining as u64;
        }
        self.copy_kind = if self.blocks.in_cache[vi] {
            PageKind::Fold
        } else {
            PageKind::Gc
        };
        let mut lpns = [0u32; 64];
        let pages = self.blocks.capacity[vi] / upp;
        let mut page = 0;
        while remaining > 0 && page < pages {
            let first = base + page * upp;
            let mut n = 0usize;
            for s in first..first + upp {
                let lpn = self.p2l[s as usize];
                if self.l2p[lpn as usize] == s + 1 {
                    if n == lpns.len() {
                        self.copy_units(pool, die, page, run, &lpns[..n], now, tl)?;
                        n = 0;
                    }
                    lpns[n] = lpn;
                    n += 1;
                }
            }
            if n > 0 {
                remaining -= n as u32;
                self.copy_units(pool, die, page, run, &lpns[..n], now, tl)?;
            }
            page += 1;
        }
        debug_assert_eq!(self.blocks.valid[vi], 0);
        // Without power-loss protection, no copy may wait in RAM while its
        // source is erased: the GC page is programmed (padded) first; and the
        // erase waits for the programs booked so far, which hold the data
        // that made this block's stale copies stale.
        let mut erase_from = now;
        if self.volatile_ram {
            if self.gc_fill[pool as usize] > 0 {
                self.program_gc_page(pool, die, tl);
            }
            erase_from = now.max(self.programs_done);
        }
        let erase_ns = self.erase_ns(v);
        self.counters.erase_ns += erase_ns;
        let erased = tl.erase(erase_from, die, erase_ns);
        if self.power.is_some() {
            self.note_erase(v, erased.saturating_sub(erase_ns), erased);
        }
        self.counters.erases += 1;
        if dynamic {
            self.dynamic_in_use[pool as usize] -= 1;
        }
        if !self.blocks.erase(v, pool) || self.blocks.mode[vi] != mode {
            // The pool lost flash (ZombieNAND: lost bits come out of the
            // reserve). The user capacity never shrinks: the pool must still
            // hold its share of it plus the blocks GC keeps free (high watermark).
            let usable = self.blocks.pool_capacity[pool as usize];
            let needed = self.guaranteed_units;
            if usable < needed {
                return Err(SimError::WornOut {
                    pool,
                    usable,
                    needed,
                });
            }
        }
        Ok(())
    }

    /// Whether the dynamic cache may run one more of `pool`'s native blocks
    /// as SLC: it is still on, under its limit, and free native blocks stay
    /// above the high watermark (so the cache shrinks as the drive fills).
    fn dynamic_may_open(&mut self, pool: u32) -> bool {
        if self.dynamic_active && self.blocks.wear_used() + 1e-9 >= self.pslc.static_after {
            // Worn past the share of rated cycles a dynamic cache may use: static from now on.
            self.dynamic_active = false;
        }
        self.dynamic_active
            && self.dynamic_in_use[pool as usize] < self.pslc.dynamic_blocks
            && self.blocks.free_count(pool) > self.gc_stop
    }

    /// Whether `pool`'s cache can take a page without folding first.
    fn cache_has_room(&mut self, pool: u32) -> bool {
        let p = pool as usize;
        self.cache_block[p] != NIL
            || !self.blocks.cache_free[p].is_empty()
            || self.dynamic_may_open(pool)
    }

    /// The pool's pSLC frontier block, opened if needed: a free static cache
    /// block, else a native block run as SLC (dynamic cache), else room made
    /// by folding the oldest static cache block. NIL when the cache cannot
    /// take data (no static blocks, dynamic cache at its limit): the page
    /// goes to a native block.
    fn cache_frontier(&mut self, pool: u32, now: u64, tl: &mut Timeline) -> Result<u32, SimError> {
        let p = pool as usize;
        while self.cache_block[p] == NIL {
            if let Some(b) = self.blocks.open_static(pool) {
                self.cache_block[p] = b;
            } else if self.dynamic_may_open(pool) {
                let b = self
                    .blocks
                    .open_dynamic(pool)
                    .expect("free native blocks counted");
                self.dynamic_in_use[p] += 1;
                self.cache_block[p] = b;
            } else if let Some(v) = self.static_fifo[p].pop_front() {
                self.fold(v, pool, now, tl)?;
            } else {
                return Ok(NIL);
            }
        }
        Ok(self.cache_block[p])
    }

    /// Takes `pool`'s partly written cache frontier off the write path, for
    /// folding, if it holds data and nothing waits in RAM for it.
    fn take_idle_cache_frontier(&mut self, pool: u32) -> Option<u32> {
        let b = self.cache_block[pool as usize];
        let bi = b as usize;
        let idle = b != NIL
            && self.blocks.written[bi] > 0
            && self.blocks.written[bi] == self.blocks.programmed[bi];
        idle.then(|| std::mem::replace(&mut self.cache_block[pool as usize], NIL))
    }

    /// Folds cache block `v` into native blocks, first making sure GC has
    /// the free native blocks the copies need.
    fn fold(&mut self, v: u32, pool: u32, now: u64, tl: &mut Timeline) -> Result<(), SimError> {
        if self.blocks.free_count(pool) < self.gc_start {
            self.collect(pool, now, tl, self.gc_start)?;
        }
        self.relocate(v, pool, now, tl)
    }

    /// Reads page `page` (of a block in `mode`) on `die` from `now`; returns
    /// when its data is in the controller.
    fn gc_read(
        &mut self,
        die: u32,
        page: u32,
        mode: crate::media::CellMode,
        units: u32,
        now: u64,
        tl: &mut Timeline,
    ) -> u64 {
        let read_ns = self.timing[mode.index()].read_ns[ModeTiming::page_type(page, mode.bits())];
        self.counters.flash_reads_gc += 1;
        tl.flash_read(now, die, read_ns, units)
    }

    #[allow(clippy::too_many_arguments)]
    fn copy_units(
        &mut self,
        pool: u32,
        die: u32,
        page: u32,
        mode: crate::media::CellMode,
        lpns: &[u32],
        now: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        let ready = self.gc_read(die, page, mode, lpns.len() as u32, now, tl);
        for &lpn in lpns {
            let from = self.l2p[lpn as usize] - 1;
            let to = self.gc_place(pool, die, lpn, ready, tl)?;
            if let Some(o) = &mut self.oracle {
                o.moved(lpn, from, to);
            }
        }
        Ok(())
    }

    /// Places unit `lpn`, in controller RAM from `ready`, on `pool`'s GC
    /// frontier (programming the page once full); returns its new slot.
    fn gc_place(
        &mut self,
        pool: u32,
        die: u32,
        lpn: u32,
        ready: u64,
        tl: &mut Timeline,
    ) -> Result<u32, SimError> {
        let p = pool as usize;
        let mut b = self.gc_block[p];
        if b == NIL {
            b = self.open_block(pool, ready, tl, true)?;
            self.gc_block[p] = b;
        }
        let bi = b as usize;
        let slot = self.g.block_base(b) + self.blocks.written[bi];
        self.blocks.written[bi] += 1;
        self.map_access(lpn, MapAccess::Update, ready, tl);
        self.map(lpn, slot);
        if let Some(pm) = &mut self.power {
            pm.placed(slot, ready);
        }
        self.gc_fill[p] += 1;
        self.gc_ready[p] = self.gc_ready[p].max(ready);
        if self.gc_fill[p] == self.g.units_per_page {
            self.program_gc_page(pool, die, tl);
        }
        Ok(slot)
    }

    /// Programs `pool`'s GC frontier page, padding what is not filled.
    fn program_gc_page(&mut self, pool: u32, die: u32, tl: &mut Timeline) {
        let p = pool as usize;
        let b = self.gc_block[p];
        let bi = b as usize;
        let upp = self.g.units_per_page;
        if self.gc_fill[p] < upp {
            self.blocks.written[bi] += upp - self.gc_fill[p];
        }
        let page = self.blocks.programmed[bi] / upp;
        let program_ns = self.program_ns(b, page);
        self.counters.program_ops += 1;
        self.counters.program_ns += program_ns;
        if self.is_lower_page(b, page) {
            self.back_up_lower_page(self.gc_ready[p], die, upp, tl);
        }
        let done = tl.flash_program(self.gc_ready[p], die, program_ns, upp);
        self.programs_done = self.programs_done.max(done);
        if let Some(pm) = &mut self.power {
            let global = self.g.block_base(b) / upp + page;
            pm.programmed(
                global,
                done.saturating_sub(program_ns),
                done,
                self.copy_kind,
            );
        }
        self.blocks.programmed[bi] += upp;
        self.seal_if_full(b);
        self.counters.flash_programs_gc += 1;
        self.counters.flash_units_gc += upp as u64;
        self.gc_fill[p] = 0;
        self.gc_ready[p] = 0;
    }

    /// Whether page `page` of block `b` is a lower page of a multi-bit
    /// wordline that a drive without power-loss protection backs up.
    #[inline]
    fn is_lower_page(&self, b: u32, page: u32) -> bool {
        let bits = self.blocks.run[b as usize].bits();
        self.backup_lower_pages && bits > 1 && (ModeTiming::page_type(page, bits) as u32) < bits - 1
    }

    /// Paired-page backup: a copy of a lower page's data goes to SLC on the
    /// same die before the page itself is programmed.
    fn back_up_lower_page(&mut self, ready: u64, die: u32, units: u32, tl: &mut Timeline) {
        let slc = self.timing[crate::media::CellMode::Slc.index()].program_ns[0];
        self.counters.backup_programs += 1;
        tl.flash_program(ready, die, slc, units);
    }

    /// Background GC in an idle window ending at `until`: pools below the
    /// high watermark clean victims while their die would otherwise be idle.
    pub fn background_gc(&mut self, until: u64, tl: &mut Timeline) -> Result<(), SimError> {
        for pool in 0..self.g.pools {
            let die = self.g.die_of_pool(pool);
            let p = pool as usize;
            // Idle folding empties the pSLC cache for the next burst, the
            // frontier block too once nothing waits in RAM for it.
            while self.pslc.fold_idle && tl.die_free_at(die) < until {
                let Some(v) = self.static_fifo[p]
                    .pop_front()
                    .or_else(|| self.dynamic_fifo[p].pop_front())
                    .or_else(|| self.take_idle_cache_frontier(pool))
                else {
                    break;
                };
                let start = tl.die_free_at(die);
                self.fold(v, pool, start, tl)?;
            }
            while self.blocks.free_count(pool) < self.gc_stop {
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

    /// Checks the mapping invariants (expensive: for tests and debug runs):
    /// every mapped unit's slot maps back to it, valid counts match, and the
    /// number of valid slots equals the number of mapped units.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut valid = vec![0u32; self.g.blocks as usize];
        let mut mapped = 0u64;
        for (lpn, &s) in self.l2p.iter().enumerate() {
            if s == 0 {
                continue;
            }
            let slot = s - 1;
            if self.p2l[slot as usize] != lpn as u32 {
                return Err(format!(
                    "lpn {lpn} maps to slot {slot}, which maps back to {}",
                    self.p2l[slot as usize]
                ));
            }
            let b = self.g.block_of_slot(slot);
            if slot - self.g.block_base(b) >= self.blocks.written[b as usize] {
                return Err(format!(
                    "lpn {lpn} maps to slot {slot} beyond block {b}'s write pointer"
                ));
            }
            if matches!(
                self.blocks.state[b as usize],
                BlockState::Free | BlockState::Bad
            ) {
                return Err(format!("lpn {lpn} maps into free or retired block {b}"));
            }
            valid[b as usize] += 1;
            mapped += 1;
        }
        if let Some(b) = (0..valid.len()).find(|&b| valid[b] != self.blocks.valid[b]) {
            return Err(format!(
                "block {b}: valid count {} but {} units map to it",
                self.blocks.valid[b], valid[b]
            ));
        }
        let total: u64 = self.blocks.valid.iter().map(|&v| v as u64).sum();
        if total != mapped {
            return Err(format!("{total} valid slots but {mapped} mapped units"));
        }
        Ok(())
    }

    /// The parts of the maps a fill of `count` units from `first_lpn` will
    /// write on a fresh drive (for [`memory::populate`]).
    pub fn fill_regions(&self, first_lpn: u64, count: u64) -> [memory::Region; 2] {
        let slack = (self.g.planes * self.g.units_per_block) as u64;
        [
            memory::Region::of(&self.l2p, first_lpn as usize..(first_lpn + count) as usize),
            memory::Region::of(&self.p2l, 0..(count + slack) as usize),
        ]
    }

    /// Switches on the integrity oracle (before anything is written; a
    /// second call keeps the one on).
    pub fn enable_oracle(&mut self) {
        if self.oracle.is_none() {
            self.oracle = Some(Oracle::new(self.g.user_units, self.g.slots));
        }
    }

    /// With the oracle on: checks that unit `lpn` reads its latest write.
    pub fn check_read(&self, lpn: u32) -> Result<(), String> {
        match &self.oracle {
            Some(o) => o.check(lpn, self.lookup(lpn)),
            None => Ok(()),
        }
    }

    /// How much of the spare flash wear has taken, 0 (pristine) to 1 (dead):
    /// the most of any pool, as the share of its usable flash beyond the
    /// guaranteed capacity (user share + high watermark) that retirements and
    /// mode switches have eaten.
    pub fn reserve_used(&self) -> f64 {
        let native = self.g.blocks_per_pool as u64 * self.g.units_per_block as u64;
        let budget = native.saturating_sub(self.guaranteed_units).max(1) as f64;
        let lost = self.blocks.pool_capacity.iter().map(|&c| native - c).max();
        (lost.unwrap_or(0) as f64 / budget).min(1.0)
    }

    /// Valid units held in pSLC cache blocks.
    pub fn cache_units(&self) -> u64 {
        if self.pslc.kind == PslcKind::Off {
            return 0;
        }
        let cached = |(&v, &c): (&u32, &bool)| if c { v as u64 } else { 0 };
        self.blocks
            .valid
            .iter()
            .zip(&self.blocks.in_cache)
            .map(cached)
            .sum()
    }

    /// Mapped logical units.
    pub fn mapped_units(&self) -> u64 {
        self.blocks.valid.iter().map(|&v| v as u64).sum()
    }
}
