//! The block table's check of a state read back from a snapshot: settings as
//! its config gives them, array lengths, counts within each block's capacity
//! and state, totals that add up, free queues of their own pool.

use super::{BlockState, BlockTable};
use crate::geometry::Geometry;
use crate::sanity::{ensure, indices, len, same, Checked};

impl BlockTable {
    /// Checks this (loaded) table against `fresh`, one its config builds:
    /// settings, array lengths, counts within each block's capacity, free
    /// queues holding blocks of their own pool.
    pub fn check_loaded(&self, fresh: &BlockTable, g: &Geometry) -> Checked {
        let settings = |t: &BlockTable| {
            let modes = (
                t.zombie,
                t.wear_leveling,
                t.timing_drift,
                t.native,
                t.native_capacity,
            );
            let early = (t.rolling, t.early_cap, t.user_units, t.growth.window());
            (
                modes,
                early,
                t.units_per_page,
                t.model,
                t.static_cache.clone(),
                t.wear_per_erase.clone(),
                format!("{:?}", t.bet.settings()),
            )
        };
        same(
            "the block table's settings",
            &settings(self),
            &settings(fresh),
        )?;
        let n = g.blocks as u64;
        for (name, l) in [
            ("valid", self.valid.len()),
            ("written", self.written.len()),
            ("programmed", self.programmed.len()),
            ("erase_count", self.erase_count.len()),
            ("state", self.state.len()),
            ("mode", self.mode.len()),
            ("run", self.run.len()),
            ("in_cache", self.in_cache.len()),
            ("early", self.early.len()),
            ("stress", self.stress.len()),
            ("program_loops", self.program_loops.len()),
            ("erase_loops", self.erase_loops.len()),
            ("capacity", self.capacity.len()),
        ] {
            len(&format!("blocks.{name}"), l, n)?;
        }
        len("blocks.free", self.free.len(), g.pools as u64)?;
        len("blocks.cache_free", self.cache_free.len(), g.pools as u64)?;
        len(
            "blocks.pool_capacity",
            self.pool_capacity.len(),
            g.pools as u64,
        )?;
        len("blocks.life_sum", self.life_sum.len(), 8 * g.pools as u64)?;
        len(
            "blocks.life_count",
            self.life_count.len(),
            8 * g.pools as u64,
        )?;
        len("blocks.early_count", self.early_count.len(), g.pools as u64)?;
        len("blocks.bet.floor", self.bet.floors(), g.pools as u64)?;
        let mut could_erase = vec![0u64; g.pools as usize];
        for b in 0..g.blocks {
            could_erase[g.pool_of_block(b) as usize] +=
                self.erase_count[b as usize] as u64 * self.native_capacity as u64;
        }
        ensure(
            self.bet.erased_units().len() == could_erase.len()
                && self
                    .bet
                    .erased_units()
                    .iter()
                    .zip(&could_erase)
                    .all(|(e, c)| e <= c),
            || "the block table's erased capacity passes what its erases could erase".into(),
        )?;
        for b in 0..g.blocks as usize {
            let cap = self.capacity[b];
            ensure(cap <= self.native_capacity && cap > 0, || {
                format!("block {b} holds {cap} units, more than a block can")
            })?;
            ensure(
                self.programmed[b] <= self.written[b]
                    && self.written[b] <= cap
                    && self.valid[b] <= self.written[b],
                || {
                    format!(
                        "block {b}'s valid, written and programmed counts do not fit its capacity"
                    )
                },
            )?;
            let fits_state = match self.state[b] {
                BlockState::Free => self.written[b] == 0,
                BlockState::Sealed => self.programmed[b] == cap,
                BlockState::Open | BlockState::Victim | BlockState::Bad => true,
            };
            ensure(fits_state, || {
                format!("block {b} holds what its state does not allow")
            })?;
        }
        // The running totals are what the blocks add up to.
        let usable = |b: usize| self.state[b] != BlockState::Bad;
        let mut by_mode = [0u64; 4];
        let mut pool_capacity = vec![0u64; g.pools as usize];
        let mut life_count = vec![0u32; 8 * g.pools as usize];
        let mut life_sum = vec![0i64; 8 * g.pools as usize];
        let mut early_count = vec![0u32; g.pools as usize];
        for b in 0..g.blocks as usize {
            let pool = g.pool_of_block(b as u32) as usize;
            early_count[pool] += self.early[b] as u32;
            if !usable(b) {
                continue;
            }
            let mode = self.mode[b];
            by_mode[mode.index()] += 1;
            pool_capacity[pool] += self.capacity_in(mode) as u64;
            let k = pool * 8 + self.early[b] as usize * 4 + mode.index();
            life_count[k] += 1;
            life_sum[k] = life_sum[k].wrapping_add(self.life_steps(b as u32));
        }
        let bad = (0..g.blocks as usize).filter(|&b| !usable(b)).count() as u64;
        let valid_total = self.valid.iter().map(|&v| v as u64).sum::<u64>();
        ensure(
            by_mode == self.by_mode
                && pool_capacity == self.pool_capacity
                && life_count == self.life_count
                && life_sum == self.life_sum
                && early_count == self.early_count
                && early_count.iter().all(|&c| c <= self.early_cap)
                && valid_total == self.valid_total
                && bad == self.bad_blocks,
            || "the block table's totals do not add up to its blocks".into(),
        )?;
        let finite = |x: &f64| x.is_finite() && *x >= 0.0;
        ensure(
            self.stress.iter().all(finite) && finite(&self.stress_sum),
            || "a block's wear is not a number".into(),
        )?;
        for queues in [&self.free, &self.cache_free] {
            for (p, q) in queues.iter().enumerate() {
                indices("a free queue", q.iter(), n, false)?;
                ensure(q.iter().all(|&b| g.pool_of_block(b) == p as u32), || {
                    "a free queue holds a block of another GC pool".into()
                })?;
            }
        }
        // Every block a queue holds is free, once.
        let mut queued = vec![false; n as usize];
        for q in self.free.iter().chain(&self.cache_free) {
            for &b in q.iter() {
                ensure(!std::mem::replace(&mut queued[b as usize], true), || {
                    format!("block {b} is queued twice")
                })?;
                ensure(self.state[b as usize] == BlockState::Free, || {
                    format!("block {b} is queued as free but is not")
                })?;
            }
        }
        Ok(())
    }
}
