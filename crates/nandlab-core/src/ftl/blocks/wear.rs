//! The wear side of the block table: trapped-charge stress added by each
//! erase, the bit mode a block can still hold (ZombieNAND drops a bit per
//! cell when a block dies at its mode; otherwise it is retired), the ISPP
//! loops its wear calls for, the remaining-life sums wear levelling and
//! ZombieNAND's GC compare blocks by, and the early-switch pool's state and
//! when it is in use.

use super::{BlockState, BlockTable};
use crate::media::wear::{delta_v, ERASE_LOOPS, PROGRAM_LOOPS};
use crate::media::CellMode;

/// The most mapped data the early-switch pool is used with, as a multiple of
/// what its blocks hold in SLC (see [`BlockTable::unleveling_on`]). Measured
/// on the ZombieNAND grid (`docs/zombienand`): at 50 % working set and 10–15 %
/// reserve (data 9–25 × the pool's SLC capacity) the pool cost up to 0.4 %
/// of latency; at 2–4 × (10–25 % working sets, 20–30 % reserve) it is where
/// the gains are.
pub const POOL_DATA_RATIO: u64 = 4;

/// The early-switch pool is used only once the mapped data has settled: at
/// most 1/`SETTLED_SHARE` of the host units written over the growth window
/// mapped an address not mapped before. While a working set still grows —
/// the first drive write over it, a workload that moves to more addresses,
/// or a skewed one whose cold addresses come slowly — the projection of the
/// data it will map is a guess, and a pool used on a guess that falls short
/// (a hot/cold or Zipf workload over the whole drive) wears blocks the drive
/// will need (MLC at 20 % reserve, hot/cold 80/20 over the whole drive:
/// 0.9990 of the baseline's life, 0.9997 with the bounded bet, 1.0001 with
/// this rule).
pub const SETTLED_SHARE: u64 = 32;

/// The remaining-life sums count in 2^-16 erases: whole numbers, so that
/// adding and removing a block's life is exact and the sums do not depend on
/// the order blocks came and went (a drive whose early-switch pool is not in
/// use then levels exactly as one without a pool).
const LIFE_STEPS: f64 = 65536.0;

/// Whether an early-switch block in `mode` is worn on purpose: while the
/// pool is in use (`unleveling`) and it can still switch — one in SLC has no
/// lower mode left, and is levelled by its remaining life like any other.
#[inline]
fn switches_early(mode: CellMode, unleveling: bool) -> bool {
    unleveling && mode != CellMode::Slc
}

impl BlockTable {
    /// Erases a block still has in its current mode before it fails.
    #[inline]
    pub fn remaining_life(&self, block: u32) -> f64 {
        let i = block as usize;
        ((self.model.limit(self.mode[i]) - self.stress[i]) / self.wear_per_erase[i]).max(0.0)
    }

    /// Program/erase cycles of a block for its bit errors: its stress
    /// (cycles of a nominal block at its native rating), rescaled to the
    /// mode it runs in — a block living on as SLC (a zombie, or a pSLC cache
    /// block) is as far through that mode's far longer life.
    #[inline]
    pub fn cycles(&self, block: u32) -> f64 {
        let i = block as usize;
        let rated = &self.model.rated;
        self.stress[i] * rated[self.native.index()] / rated[self.run[i].index()]
    }

    /// A block's remaining life as the sums count it (`LIFE_STEPS`).
    pub(super) fn life_steps(&self, block: u32) -> i64 {
        (self.remaining_life(block) * LIFE_STEPS).round() as i64
    }

    /// Adds a usable block's remaining life to its pool's sums, or removes
    /// it (`add` false).
    pub(super) fn count_life(&mut self, block: u32, pool: u32, add: bool) {
        let i = block as usize;
        let k = pool as usize * 8 + self.early[i] as usize * 4 + self.mode[i].index();
        let life = self.life_steps(block);
        if add {
            self.life_sum[k] += life;
            self.life_count[k] += 1;
        } else {
            self.life_sum[k] -= life;
            self.life_count[k] -= 1;
        }
    }

    /// Mean remaining life of the usable blocks of a pool in `mode` that GC
    /// levels (0 if none): all of them but the early switchers (`unleveling`:
    /// `unleveling_on()`), which are worn on purpose — so a pool not in use
    /// is levelled as if it were not there.
    pub fn average_life(&self, pool: u32, mode: CellMode, unleveling: bool) -> f64 {
        let k = pool as usize * 8 + mode.index();
        let (mut sum, mut count) = (self.life_sum[k], self.life_count[k]);
        if !switches_early(mode, unleveling) {
            sum += self.life_sum[k + 4];
            count += self.life_count[k + 4];
        }
        sum as f64 / LIFE_STEPS / count.max(1) as f64
    }

    /// Mean remaining life of all usable blocks of a pool, whatever their
    /// mode (Algorithm 3's element average; 0 if none).
    pub fn element_life(&self, pool: u32) -> f64 {
        let k = pool as usize * 8;
        let sum: i64 = self.life_sum[k..k + 8].iter().sum();
        let count: u32 = self.life_count[k..k + 8].iter().sum();
        sum as f64 / LIFE_STEPS / count.max(1) as f64
    }

    /// Whether the blocks of `pool` living on in a lower mode (zombies) can
    /// hold the pool's share of the mapped data at most two-thirds full:
    /// only then does Algorithm 3's element average, which sends GC to the
    /// zombies (their remaining life dwarfs the native blocks'), let hot data
    /// settle there at a write amplification their faster mode pays for;
    /// fuller, GC would only clean fuller blocks (at 90 % full, WAF ≈ 6).
    pub fn zombies_hold_data(&self, pool: u32) -> bool {
        let k = pool as usize * 8 + self.native.index();
        let native_blocks = (self.life_count[k] + self.life_count[k + 4]) as u64;
        let zombie_units =
            self.pool_capacity[pool as usize] - native_blocks * self.native_capacity as u64;
        let pools = self.free.len() as u64;
        zombie_units > 0 && 2 * zombie_units >= 3 * self.valid_total.div_ceil(pools)
    }

    /// Whether block `block` lives on in a lower mode than the native one
    /// (a zombie).
    #[inline]
    pub fn is_zombie(&self, block: u32) -> bool {
        self.mode[block as usize] != self.native
    }

    /// Before a wear-aware GC victim choice in `pool`, `written` host units
    /// in: records the mapped data for the projection `unleveling_on`
    /// decides on, and works out how far the pool may lead (`lead_floor`).
    pub fn prepare_victim_choice(&mut self, pool: u32, written: u64) {
        self.growth.observe(written, self.valid_total);
        self.place_bet(pool);
    }

    /// Whether the early-switch pool is in use. Only while, with the data
    /// the workload will map (the units mapped now, or more as their growth
    /// projects: see `growth`),
    /// - the flash the pool loses once all SLC fits in the user capacity
    ///   beside that data — so its loss comes out of addresses never
    ///   written, not the spare space GC works with (on a full drive it
    ///   would raise write amplification for the rest of the drive's life;
    ///   decided on the units mapped when GC first runs, a full drive's
    ///   random writes, at ~73 % of its addresses then, would use the pool
    ///   for a while and set the drive on another course);
    /// - the mapped data has settled ([`SETTLED_SHARE`]);
    /// - the pool pays: its blocks one mode down, with the blocks already
    ///   living on in a lower mode, could hold the mapped data at most
    ///   two-thirds full (Algorithm 3's element average's own test) — else
    ///   its switch near the end of the normal blocks' life only costs
    ///   capacity (MLC at 25–50 % working set: 0.997–0.999 of the baseline's
    ///   life with the pool, 1.0001 without);
    /// - and that data is at most [`POOL_DATA_RATIO`] × what the pool holds
    ///   in SLC: with more, GC finds the pool's blocks no emptier than the
    ///   rest, so they lead the wear only by a few percent and switch just
    ///   before the normal blocks die — the capacity they lose then costs
    ///   more GC copies than their SLC speed returns.
    #[inline]
    pub fn unleveling_on(&self) -> bool {
        let blocks: u64 = self.early_count.iter().map(|&c| c as u64).sum();
        let slc = blocks * self.capacity_in(CellMode::Slc) as u64;
        let loss = blocks * self.native_capacity as u64 - slc;
        let data = self.growth.projected().max(self.valid_total);
        loss > 0
            && data.saturating_add(loss) <= self.user_units
            && data <= POOL_DATA_RATIO * slc
            && self.growth.settled(SETTLED_SHARE)
            && 2 * self.zombies_after_switch() >= 3 * self.valid_total
    }

    /// The flash (units) of every block living on in a lower mode once the
    /// early-switch pool's blocks have each gone one mode down: the blocks
    /// in a lower mode now, plus the pool's native blocks in their next mode,
    /// less what its blocks already in a lower mode lose at their next switch.
    fn zombies_after_switch(&self) -> u64 {
        let mut after = 0u64;
        for p in 0..self.early_count.len() {
            for m in CellMode::ALL {
                let normal = self.life_count[p * 8 + m.index()] as u64;
                let early = self.life_count[p * 8 + 4 + m.index()] as u64;
                let next = m
                    .lower()
                    .map_or(self.capacity_in(m), |l| self.capacity_in(l))
                    as u64;
                if m != self.native {
                    after += normal * self.capacity_in(m) as u64;
                }
                after += early * next;
            }
        }
        after
    }

    /// Whether GC prefers block `block` as an early switcher (`unleveling`:
    /// `unleveling_on()`; see `switches_early`).
    #[inline]
    pub fn early_switcher(&self, block: u32, unleveling: bool) -> bool {
        let i = block as usize;
        self.early[i] && switches_early(self.mode[i], unleveling)
    }

    /// A rolling early-switch pool takes block `block`, which has just
    /// switched mode, while it has room.
    fn join_rolling_pool(&mut self, block: u32, pool: u32) {
        let (i, p) = (block as usize, pool as usize);
        if self.rolling && !self.early[i] && self.early_count[p] < self.early_cap {
            self.early[i] = true;
            self.early_count[p] += 1;
        }
    }

    /// Adds trapped-charge stress to a block: past its mode's rating it drops
    /// bits per cell (ZombieNAND) or is retired. Updates its ISPP loops.
    /// Returns whether it is still usable.
    pub(super) fn add_stress(&mut self, block: u32, pool: u32, stress: f64) -> bool {
        let i = block as usize;
        self.stress[i] += stress;
        self.stress_sum += stress;
        let mut mode = self.mode[i];
        while self.stress[i] > self.model.limit(mode) {
            match mode.lower().filter(|_| self.zombie) {
                // Stress is the block's history: the lower mode's life is what
                // its higher threshold leaves, not a fresh count of cycles.
                Some(lower) => mode = lower,
                None => {
                    self.state[i] = BlockState::Bad;
                    self.bad_blocks += 1;
                    self.by_mode[self.mode[i].index()] -= 1;
                    self.pool_capacity[pool as usize] -= self.capacity_in(self.mode[i]) as u64;
                    return false;
                }
            }
        }
        if mode != self.mode[i] {
            self.set_mode(block, pool, mode);
            self.mode_switches += 1;
            self.join_rolling_pool(block, pool);
        }
        if self.timing_drift {
            let u = self.model.life_used(mode, delta_v(self.stress[i]));
            let between = |(fresh, worn): (u32, u32)| {
                (fresh as f64 + (worn as f64 - fresh as f64) * u).round() as u8
            };
            self.program_loops[i] = between(PROGRAM_LOOPS);
            self.erase_loops[i] = between(ERASE_LOOPS);
        }
        true
    }

    /// Sets what a block's cells can store, and its pool's usable flash with it.
    pub(super) fn set_mode(&mut self, block: u32, pool: u32, mode: CellMode) {
        let i = block as usize;
        let old = self.mode[i];
        self.by_mode[old.index()] -= 1;
        self.by_mode[mode.index()] += 1;
        self.pool_capacity[pool as usize] -=
            (self.capacity_in(old) - self.capacity_in(mode)) as u64;
        self.mode[i] = mode;
    }

    /// Units a block holds in `mode`: the native capacity scaled by bits per
    /// cell, in whole pages.
    pub fn capacity_in(&self, mode: CellMode) -> u32 {
        let units = self.native_capacity as u64 * mode.bits() as u64 / self.native.bits() as u64;
        (units as u32 / self.units_per_page * self.units_per_page).max(self.units_per_page)
    }

    /// Share of the native rated endurance used, averaged over all blocks
    /// (about 1 when a conventional drive wears out; ZombieNAND goes beyond).
    pub fn wear_used(&self) -> f64 {
        self.stress_sum / (self.stress.len() as f64 * self.model.limit(self.native))
    }

    /// Whether a block dead at its mode lives on one mode down (ZombieNAND) rather than retiring.
    pub fn zombie_on(&self) -> bool {
        self.zombie
    }

    /// Usable blocks per bit mode (SLC, MLC, TLC, QLC), retired ones left out.
    pub fn blocks_by_mode(&self) -> [u64; 4] {
        self.by_mode
    }
}
