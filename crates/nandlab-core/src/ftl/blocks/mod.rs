//! Per-block state as flat arrays (valid count, write and program pointers,
//! erase count, bit mode, life-cycle state, wear) plus each GC pool's
//! free-block queue. Wear: each erase adds trapped-charge stress (in cycles at
//! the rating, scaled by the block's own endurance factor and the
//! conditions); a block whose stress passes its mode's rating fails its erase
//! and is retired (or, with ZombieNAND, drops a bit per cell), and its program
//! and erase times move in ISPP steps.
//!
//! Which free block a frontier opens: the oldest (FIFO), or with wear
//! levelling the one with the most life left (the oldest of those tied),
//! each in O(log n) (`free`).
//!
//! pSLC caches: a block's `mode` is what its cells can store (its wear
//! limit); `run` is the mode it is programmed in now. Static cache blocks
//! are SLC for life and have their own free queue; a dynamic cache block is
//! a native block opened in SLC mode, native again once erased.

mod bet;
mod free;
mod growth;
mod loaded;
mod wear;

use crate::config::{EarlySwitch, FtlConfig, WearConfig};
use crate::geometry::Geometry;
use crate::media::wear::{WearModel, ERASE_LOOPS, PROGRAM_LOOPS};
use crate::media::CellMode;
pub use bet::greedy_waf;
use bet::Bet;
pub use free::{total_order_key, FreeQueue};
use growth::DataGrowth;
use serde::{Deserialize, Serialize};

/// Where a block is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum BlockState {
    /// Erased, in its plane's free queue.
    Free,
    /// Being written (a host or GC frontier).
    Open,
    /// Fully programmed; a GC candidate.
    Sealed,
    /// Chosen by GC: its valid data is being copied out before the erase.
    Victim,
    /// Worn out: an erase failed; never used again.
    Bad,
}

/// A block's counts no longer fit what it holds: a bug, stopped where it
/// happens (out of line, so the checks cost a compare on the hot paths).
#[cold]
#[inline(never)]
fn broken(b: u32, what: &str) -> ! {
    panic!("block {b}: {what}")
}

/// All blocks of the drive, struct-of-arrays.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockTable {
    /// Valid mapping units in the block.
    valid: Vec<u32>,
    /// Units allocated (handed to the write path).
    written: Vec<u32>,
    /// Units programmed on flash (≤ written; the rest wait in controller RAM).
    programmed: Vec<u32>,
    erase_count: Vec<u32>,
    state: Vec<BlockState>,
    /// The bit mode the block's cells can store (its wear limit).
    mode: Vec<CellMode>,
    /// The mode the block is programmed in now: SLC while it is a pSLC
    /// cache block, else `mode`.
    run: Vec<CellMode>,
    /// Holds pSLC cache data (a static cache block, or a dynamic one now).
    in_cache: Vec<bool>,
    /// Static pSLC cache block: SLC for life, outside the native free queue.
    static_cache: Vec<bool>,
    /// Erased native blocks per GC pool, oldest first.
    free: Vec<FreeQueue>,
    /// Erased static cache blocks per GC pool.
    cache_free: Vec<FreeQueue>,
    /// ZombieNAND's early-switch pool: worn on purpose so it switches mode first.
    early: Vec<bool>,
    /// Per pool: its early-switch blocks, and the most it may have (a
    /// rolling pool grows to it).
    early_count: Vec<u32>,
    early_cap: u32,
    /// A rolling pool: a normal block joins when it switches mode.
    rolling: bool,
    /// Mapped units (valid units of all blocks), the user capacity, and the
    /// data the workload will map, projected from its growth: the
    /// early-switch pool is used only while the flash it will lose comes out
    /// of addresses never written (`unleveling_on`).
    valid_total: u64,
    user_units: u64,
    growth: DataGrowth,
    /// How far the early-switch pool may lead the normal blocks' wear.
    bet: Bet,
    /// Trapped-charge stress, in program/erase cycles at the rating.
    stress: Vec<f64>,
    /// Stress one erase adds: 1 / (endurance factor × conditions).
    wear_per_erase: Vec<f64>,
    /// ISPP program-verify loops and erase pulses the block needs now.
    program_loops: Vec<u8>,
    erase_loops: Vec<u8>,
    /// Whether the loops follow wear (`[device.wear] timing_drift`); else
    /// they stay a fresh block's.
    timing_drift: bool,
    bad_blocks: u64,
    /// Mapping units each block holds in the mode it runs in.
    capacity: Vec<u32>,
    /// Blocks switched to a lower bit mode at death (ZombieNAND), all told.
    mode_switches: u64,
    /// Usable blocks per bit mode, and the sum of all blocks' stress (kept
    /// as blocks change, for time-series rows on large drives).
    by_mode: [u64; 4],
    stress_sum: f64,
    /// Mapping units the usable blocks of each pool hold in their modes
    /// (`mode`, not a dynamic cache's temporary SLC).
    pool_capacity: Vec<u64>,
    /// Sum and count of the remaining lives of each pool's usable blocks,
    /// by early-switch or not and bit mode, for the wear-levelling averages
    /// (`average_life`, `element_life`). Indexed `pool * 8 + early * 4 + mode`.
    life_sum: Vec<i64>,
    life_count: Vec<u32>,
    /// ZombieNAND: a block dead at its mode drops one bit per cell instead of retiring.
    zombie: bool,
    /// Open the free block with the most life left (else the oldest).
    wear_leveling: bool,
    native: CellMode,
    native_capacity: u32,
    units_per_page: u32,
    model: WearModel,
}

impl BlockTable {
    pub fn new(g: &Geometry, wear: &WearConfig, ftl: &FtlConfig, seed: u64) -> BlockTable {
        let n = g.blocks as usize;
        let conditions = wear.conditions.endurance_factor();
        let mut early = vec![false; n];
        let mut static_cache = vec![false; n];
        let rolling = ftl.wear.early_switch == EarlySwitch::Rolling;
        let early_at_start = if rolling {
            0
        } else {
            ftl.wear.early_switch_blocks
        };
        for pool in 0..g.pools {
            for i in 0..early_at_start {
                early[g.block_in_pool(pool, i) as usize] = true;
            }
            for i in 0..ftl.pslc.static_blocks {
                static_cache[g.block_in_pool(pool, g.blocks_per_pool - 1 - i) as usize] = true;
            }
        }
        let mut t = BlockTable {
            valid: vec![0; n],
            written: vec![0; n],
            programmed: vec![0; n],
            erase_count: vec![0; n],
            state: vec![BlockState::Free; n],
            mode: vec![g.cell; n],
            run: vec![g.cell; n],
            in_cache: static_cache.clone(),
            static_cache,
            free: vec![FreeQueue::default(); g.pools as usize],
            cache_free: vec![FreeQueue::default(); g.pools as usize],
            early,
            early_count: vec![early_at_start; g.pools as usize],
            early_cap: ftl.wear.early_switch_blocks,
            rolling,
            valid_total: 0,
            user_units: g.user_units,
            growth: DataGrowth::new(g.user_units),
            bet: Bet::new(
                ftl.wear.unleveling_bet,
                ftl.wear.life_threshold,
                (ftl.gc_start as u64 + 1) * g.units_per_block as u64,
                g.pages_per_block,
                g.pools as usize,
            ),
            stress: vec![0.0; n],
            wear_per_erase: wear
                .spread
                .sample(n, seed)
                .into_iter()
                .map(|f| 1.0 / (f * conditions))
                .collect(),
            program_loops: vec![PROGRAM_LOOPS.0 as u8; n],
            erase_loops: vec![ERASE_LOOPS.0 as u8; n],
            bad_blocks: 0,
            capacity: vec![g.units_per_block; n],
            mode_switches: 0,
            by_mode: {
                let mut n = [0; 4];
                n[g.cell.index()] = g.blocks as u64;
                n
            },
            stress_sum: 0.0,
            pool_capacity: vec![
                g.blocks_per_pool as u64 * g.units_per_block as u64;
                g.pools as usize
            ],
            life_sum: vec![0; 8 * g.pools as usize],
            life_count: vec![0; 8 * g.pools as usize],
            zombie: ftl.wear.zombie,
            wear_leveling: ftl.wear.wear_leveling,
            native: g.cell,
            native_capacity: g.units_per_block,
            units_per_page: g.units_per_page,
            model: WearModel::new(wear.rated),
            timing_drift: wear.timing_drift,
        };
        let precycled = wear.initial * wear.rated[g.cell.index()];
        for pool in 0..g.pools {
            for b in g.pool_blocks(pool) {
                let i = b as usize;
                if t.static_cache[i] {
                    t.set_mode(b, pool, CellMode::Slc);
                    t.run[i] = CellMode::Slc;
                    t.capacity[i] = t.capacity_in(CellMode::Slc);
                }
                if !t.static_cache[i] {
                    let budget = t.model.limit(g.cell) / t.wear_per_erase[i];
                    t.bet.add_budget(pool, budget);
                }
                // An aged drive: every block has been cycled `precycled` times.
                let usable = precycled == 0.0 || {
                    t.erase_count[i] = precycled.round() as u32;
                    t.bet
                        .erased(pool, t.erase_count[i] as u64 * t.capacity[i] as u64);
                    t.add_stress(b, pool, precycled * t.wear_per_erase[i])
                };
                if !usable {
                    continue;
                }
                t.count_life(b, pool, true);
                t.requeue_free(b, pool);
            }
        }
        t
    }

    // Reading the table: per-block arrays indexed by block, and totals.

    /// Valid mapping units per block.
    #[inline]
    pub fn valid(&self) -> &[u32] {
        &self.valid
    }
    /// Units allocated (handed to the write path) per block.
    #[inline]
    pub fn written(&self) -> &[u32] {
        &self.written
    }
    /// Units programmed on flash per block (≤ written; the rest wait in RAM).
    #[inline]
    pub fn programmed(&self) -> &[u32] {
        &self.programmed
    }
    /// Mapping units each block holds in the mode it runs in.
    #[inline]
    pub fn capacity(&self) -> &[u32] {
        &self.capacity
    }
    #[inline]
    pub fn state(&self) -> &[BlockState] {
        &self.state
    }
    /// The bit mode each block's cells can store (its wear limit).
    #[inline]
    pub fn mode(&self) -> &[CellMode] {
        &self.mode
    }
    /// The mode each block is programmed in now (SLC while a pSLC block).
    #[inline]
    pub fn run(&self) -> &[CellMode] {
        &self.run
    }
    /// Whether each block holds pSLC cache data now.
    #[inline]
    pub fn in_cache(&self) -> &[bool] {
        &self.in_cache
    }
    /// Whether each block is a static pSLC cache block (SLC for life).
    #[inline]
    pub fn static_cache(&self) -> &[bool] {
        &self.static_cache
    }
    /// Whether each block is in ZombieNAND's early-switch pool.
    #[inline]
    pub fn early(&self) -> &[bool] {
        &self.early
    }
    pub fn erase_count(&self) -> &[u32] {
        &self.erase_count
    }
    /// Trapped-charge stress per block, in program/erase cycles at the rating.
    pub fn stress(&self) -> &[f64] {
        &self.stress
    }
    /// ISPP program-verify loops and erase pulses each block needs now.
    #[inline]
    pub fn program_loops(&self) -> &[u8] {
        &self.program_loops
    }
    #[inline]
    pub fn erase_loops(&self) -> &[u8] {
        &self.erase_loops
    }
    /// Erased native (and static cache) blocks of each pool, oldest first.
    pub fn free(&self) -> &[FreeQueue] {
        &self.free
    }
    pub fn cache_free(&self) -> &[FreeQueue] {
        &self.cache_free
    }
    /// Mapping units the usable blocks of each pool hold in their modes.
    pub fn pool_capacity(&self) -> &[u64] {
        &self.pool_capacity
    }
    /// Mapping units the usable blocks of all pools hold in their modes.
    pub fn usable_units(&self) -> u64 {
        self.pool_capacity.iter().sum()
    }
    /// Mapped units: the valid units of all blocks.
    #[inline]
    pub fn valid_total(&self) -> u64 {
        self.valid_total
    }
    /// Blocks retired, and blocks switched to a lower bit mode (ZombieNAND).
    pub fn bad_blocks(&self) -> u64 {
        self.bad_blocks
    }
    pub fn mode_switches(&self) -> u64 {
        self.mode_switches
    }

    // Changing it: each change keeps a block's counts within what it holds
    // (valid ≤ written ≤ capacity, programmed ≤ written), checked always:
    // a compare per change is cheap next to a silent corruption.

    /// A unit of block `b` became valid (mapped to it).
    #[inline]
    pub fn add_valid(&mut self, b: u32) {
        let i = b as usize;
        self.valid[i] += 1;
        self.valid_total += 1;
        if self.valid[i] > self.written[i] {
            broken(b, "more valid units than written");
        }
    }

    /// A unit of block `b` stopped being valid.
    #[inline]
    pub fn remove_valid(&mut self, b: u32) {
        self.valid[b as usize] -= 1;
        self.valid_total -= 1;
    }

    /// `units` more units of block `b` are handed to the write path.
    #[inline]
    pub fn allot(&mut self, b: u32, units: u32) {
        let i = b as usize;
        self.written[i] += units;
        if self.written[i] > self.capacity[i] {
            broken(b, "written past its capacity");
        }
    }

    /// A page of `units` units of block `b` was programmed; it is sealed
    /// (and returns true) when that fills it.
    #[inline]
    pub fn program_page(&mut self, b: u32, units: u32) -> bool {
        let i = b as usize;
        self.programmed[i] += units;
        if self.programmed[i] > self.written[i] {
            broken(b, "programmed past what was written");
        }
        let full = self.programmed[i] == self.capacity[i];
        if full {
            self.state[i] = BlockState::Sealed;
        }
        full
    }

    /// A fill laid out a whole page of `units` valid units in block `b` at
    /// memory speed; it is sealed (and returns true) when that fills it.
    /// (One check: the page is written, valid and programmed at once.)
    #[inline]
    pub fn fill_page(&mut self, b: u32, units: u32) -> bool {
        let i = b as usize;
        let written = self.written[i] + units;
        if written > self.capacity[i] {
            broken(b, "filled past its capacity");
        }
        self.written[i] = written;
        self.programmed[i] += units;
        self.valid[i] += units;
        self.valid_total += units as u64;
        let full = self.programmed[i] == self.capacity[i];
        if full {
            self.state[i] = BlockState::Sealed;
        }
        full
    }

    /// GC chose block `b` (sealed, or the idle cache frontier folding
    /// takes): its valid units are being copied out.
    pub fn make_victim(&mut self, b: u32) {
        let state = self.state[b as usize];
        assert!(
            matches!(state, BlockState::Sealed | BlockState::Open),
            "block {b}: a {state:?} victim"
        );
        self.state[b as usize] = BlockState::Victim;
    }

    /// After a power cut: valid counts as the rebuilt map gives them.
    pub fn recount_valid(
        &mut self,
        slots_of_mapped_units: impl Iterator<Item = u32>,
        g: &Geometry,
    ) {
        self.valid.fill(0);
        self.valid_total = 0;
        for s in slots_of_mapped_units {
            self.valid[g.block_of_slot(s) as usize] += 1;
            self.valid_total += 1;
        }
    }

    /// After a power cut: block `b` (being written) keeps `units` units, the
    /// rest of it still erased; sealed if that fills it.
    pub fn resume_written(&mut self, b: u32, units: u32) {
        let i = b as usize;
        assert!(
            units <= self.capacity[i],
            "block {b}: resumed past its capacity"
        );
        self.written[i] = units;
        self.programmed[i] = units;
        self.state[i] = if units == self.capacity[i] {
            BlockState::Sealed
        } else {
            BlockState::Open
        };
    }

    /// After a power cut: an open block that no frontier can take is sealed
    /// as it stands, its rest unused.
    pub fn seal_as_is(&mut self, b: u32) {
        let i = b as usize;
        self.written[i] = self.capacity[i];
        self.programmed[i] = self.capacity[i];
        self.state[i] = BlockState::Sealed;
    }

    /// After a power cut: block `b`, whose erase was called off, holds
    /// `valid` of the units recovery keeps.
    pub fn set_valid(&mut self, b: u32, valid: u32) {
        assert!(
            valid <= self.written[b as usize],
            "block {b}: more valid units than written"
        );
        self.valid_total = self.valid_total - self.valid[b as usize] as u64 + valid as u64;
        self.valid[b as usize] = valid;
    }

    /// Takes a free block of `pool` and opens it: the oldest, or with wear
    /// levelling the one with the most life left. (Early-switch blocks are
    /// preferred by GC only, as in Algorithm 2: which block takes data next
    /// does not wear it, and a placement that follows the early-switch pool
    /// would set a drive that never uses the pool on another course.)
    pub fn open(&mut self, pool: u32) -> Option<u32> {
        let mut free = std::mem::take(&mut self.free[pool as usize]);
        let b = if self.wear_leveling {
            free.pop_longest_lived(|b| self.remaining_life(b))
        } else {
            free.pop_front()
        };
        self.free[pool as usize] = free;
        let b = b?;
        self.state[b as usize] = BlockState::Open;
        Some(b)
    }

    /// Opens a free native block of `pool` as a dynamic pSLC cache block.
    pub fn open_dynamic(&mut self, pool: u32) -> Option<u32> {
        let b = self.open(pool)?;
        let i = b as usize;
        self.run[i] = CellMode::Slc;
        self.capacity[i] = self.capacity_in(CellMode::Slc);
        self.in_cache[i] = true;
        Some(b)
    }

    /// Opens the oldest free static cache block of `pool`.
    pub fn open_static(&mut self, pool: u32) -> Option<u32> {
        let b = self.cache_free[pool as usize].pop_front()?;
        self.state[b as usize] = BlockState::Open;
        Some(b)
    }

    /// Erases a block: it returns to its pool's free queue (native or static
    /// cache), or, worn past its mode's rating, fails and is retired. Returns
    /// whether it is usable.
    pub fn erase(&mut self, block: u32, pool: u32) -> bool {
        let i = block as usize;
        debug_assert_eq!(
            self.valid[i], 0,
            "erasing a block that still holds valid data"
        );
        self.written[i] = 0;
        self.programmed[i] = 0;
        self.erase_count[i] += 1;
        self.bet.erased(pool, self.capacity[i] as u64);
        self.count_life(block, pool, false);
        if !self.add_stress(block, pool, self.wear_per_erase[i]) {
            return false;
        }
        self.count_life(block, pool, true);
        self.run[i] = self.mode[i];
        self.capacity[i] = self.capacity_in(self.mode[i]);
        self.in_cache[i] = self.static_cache[i];
        self.state[i] = BlockState::Free;
        self.requeue_free(block, pool);
        true
    }

    /// After a power cut: block `block`, whose erase was decided but not
    /// done, is taken off its free queue (if it was there) until the erase
    /// is booked again, and reads as erased (its wear was counted then).
    pub fn reset_erased(&mut self, block: u32, pool: u32) {
        let i = block as usize;
        for q in [
            &mut self.free[pool as usize],
            &mut self.cache_free[pool as usize],
        ] {
            q.remove(block);
        }
        self.written[i] = 0;
        self.programmed[i] = 0;
        self.valid_total -= self.valid[i] as u64;
        self.valid[i] = 0;
        self.run[i] = self.mode[i];
        self.capacity[i] = self.capacity_in(self.mode[i]);
        self.in_cache[i] = self.static_cache[i];
        self.state[i] = BlockState::Free;
    }

    /// After a power cut: the erase of block `block` is called off, so it
    /// holds what it held before, run in `run` (its erase stays counted).
    pub fn restore(
        &mut self,
        block: u32,
        run: CellMode,
        in_cache: bool,
        written: u32,
        programmed: u32,
    ) {
        let i = block as usize;
        self.run[i] = run;
        self.capacity[i] = self.capacity_in(run);
        self.in_cache[i] = in_cache;
        self.written[i] = written;
        self.programmed[i] = programmed;
        self.state[i] = BlockState::Sealed;
    }

    /// Puts an erased block back on its free queue.
    pub fn requeue_free(&mut self, block: u32, pool: u32) {
        let life = self.remaining_life(block);
        let queue = if self.static_cache[block as usize] {
            &mut self.cache_free
        } else {
            &mut self.free
        };
        queue[pool as usize].push_back(block, life);
    }

    /// Erased native blocks of a pool.
    pub fn free_count(&self, pool: u32) -> u32 {
        self.free[pool as usize].len() as u32
    }

    /// Units the erased native blocks of a pool hold, each in its mode.
    pub fn free_capacity(&self, pool: u32) -> u32 {
        self.free[pool as usize]
            .iter()
            .map(|&b| self.capacity[b as usize])
            .sum()
    }

    pub fn total_free(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }
}
