//! ZombieNAND's bet, bounded: how far the early-switch pool may lead the
//! normal blocks' wear, so that whatever the workload does next, the drive
//! with ZombieNAND outlives the one that retires its blocks.
//!
//! Wear-unleveling is a bet on the workload. The pool's blocks are worn on
//! purpose and switch mode (lose capacity) before the normal ones die; the
//! capacity they lose pays off while the data is small, and costs write
//! amplification for the rest of the life if the whole drive becomes live.
//! The worst next workload is uniform random writes over the whole user
//! capacity. Under it greedy GC erases every usable block at the same rate,
//! one erase per `K / WAF(K)` host units with `K` the pool's usable flash
//! (Desnoyers' analytic greedy WAF, REFERENCE §6), so in host units:
//!
//! - the drive that retires its blocks (the baseline) lives on for
//!   `r_b · K_n / WAF(K_n)`, with `r_b` its mean remaining erases — the
//!   native budget of the pool's blocks less the native-equivalent erases
//!   (erased capacity over a native block's) done so far — and `K_n` its
//!   native flash;
//! - this drive, its normal blocks `r_n` erases from death and the pool's
//!   non-SLC blocks `L` ahead of them, runs `r_n − L` erases on its flash `K`
//!   until the pool switches, then `L` on `K'` (the pool one mode down) until
//!   the normal blocks die: `(r_n − L)·K/WAF(K) + L·K'/WAF(K')`.
//!
//! The lead `L` may grow while neither what it can cost exceeds `BET` (the
//! `[ftl] unleveling_bet` share) of the baseline's whole projected life, `H
//! + r_b·K_n/WAF(K_n)` (host units written so far plus what it has left):
//!
//! - life: the baseline's remaining life less this drive's;
//! - latency: the extra flash writes the lead's last `L` erases take at
//!   `WAF(K')` instead of `WAF(K)`, `L·K'·(1/WAF(K) − 1/WAF(K'))` host units'
//!   worth (the write latency a host request pays grows with the write
//!   amplification behind it).
//!
//! and never so far that Algorithm 3's skip would freeze the pool's blocks
//! (more than `1 − life_threshold` of the normal blocks' life): a pool turned
//! off with blocks below the threshold would hold their flash idle. Once the
//! baseline would be dead (`r_b` = 0) the bet is won and the lead is free.

use super::BlockTable;
use crate::math::Deterministic;
use crate::media::CellMode;
use serde::{Deserialize, Serialize};

/// The bet's settings and per-pool books.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bet {
    /// The share of the baseline's projected life the lead may put at risk
    /// (1 or more: no bound).
    share: f64,
    /// Algorithm 3's threshold: the lead never passes `1 − threshold` of the
    /// normal blocks' remaining life.
    threshold: f64,
    /// Flash GC keeps erased (not holding data), in units.
    reserve_units: u64,
    /// Pages per block, for the greedy model's correction.
    pages_per_block: u32,
    /// Per pool: the native budget of its blocks (erases at the native
    /// rating), how many blocks that is, and the capacity erased so far
    /// (units).
    budget: Vec<f64>,
    blocks: Vec<u32>,
    erased: Vec<u64>,
    /// Per pool: the least remaining life (erases in its mode) an
    /// early-switch block may have and still be worn on purpose.
    floor: Vec<f64>,
}

impl Bet {
    pub fn new(
        share: f64,
        threshold: f64,
        reserve_units: u64,
        pages_per_block: u32,
        pools: usize,
    ) -> Bet {
        Bet {
            share,
            threshold,
            reserve_units,
            pages_per_block,
            budget: vec![0.0; pools],
            blocks: vec![0; pools],
            erased: vec![0; pools],
            floor: vec![f64::NEG_INFINITY; pools],
        }
    }

    /// A block of `pool` with `budget` erases at the native rating joins the books.
    pub(super) fn add_budget(&mut self, pool: u32, budget: f64) {
        self.budget[pool as usize] += budget;
        self.blocks[pool as usize] += 1;
    }

    /// A block of `pool` holding `units` was erased.
    #[inline]
    pub(super) fn erased(&mut self, pool: u32, units: u64) {
        self.erased[pool as usize] += units;
    }

    /// The settings and the budget, as the config gives them (a loaded
    /// table's check), and the capacity erased per pool.
    pub(super) fn settings(&self) -> (f64, f64, u64, u32, &[f64], &[u32]) {
        (
            self.share,
            self.threshold,
            self.reserve_units,
            self.pages_per_block,
            &self.budget,
            &self.blocks,
        )
    }
    pub(super) fn erased_units(&self) -> &[u64] {
        &self.erased
    }
    pub(super) fn floors(&self) -> usize {
        self.floor.len()
    }

    /// Greedy GC's write amplification under uniform random writes with
    /// `flash` units usable for `data` units of data (∞ if it cannot hold them).
    fn waf(&self, flash: u64, data: u64) -> f64 {
        let room = flash.saturating_sub(self.reserve_units) as f64;
        let alpha = room / data.max(1) as f64;
        if alpha <= 1.0 {
            return f64::INFINITY;
        }
        greedy_waf(alpha, self.pages_per_block as f64)
    }
}

/// Greedy cleaning's write amplification at α = usable flash / data
/// (Desnoyers, ACM TOS 2014, REFERENCE §6): WA_FIFO(kα)/k with k = 1 +
/// 1/(2·pages per block) and WA_FIFO(a) = a / (a + W₀(−a·e^(−a))).
pub fn greedy_waf(alpha: f64, pages_per_block: f64) -> f64 {
    let k = 1.0 + 1.0 / (2.0 * pages_per_block);
    let a = k * alpha;
    a / (a + lambert_w0(-a * (-a).exp_d())) / k
}

/// The principal branch of Lambert's W on [−1/e, 0), by Halley's method
/// from a start that converges on the whole range.
fn lambert_w0(x: f64) -> f64 {
    let mut w = if x < -0.3 { -0.5 } else { x };
    for _ in 0..64 {
        let ew = w.exp_d();
        let f = w * ew - x;
        let step = f / (ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0));
        if !step.is_finite() {
            break;
        }
        w -= step;
        if step.abs() <= 1e-15 * w.abs().max(1e-300) {
            break;
        }
    }
    w
}

impl BlockTable {
    /// The least remaining life (erases in its mode) an early-switch block
    /// of `pool` may have and still be worn on purpose (see the module).
    #[inline]
    pub fn lead_floor(&self, pool: u32) -> f64 {
        self.bet.floor[pool as usize]
    }

    /// Works out `pool`'s lead floor for the next victim choice. A bet that
    /// allows no lead wears no block on purpose: preferring the pool's
    /// blocks while they are no more worn than the rest still sent them the
    /// hot data's erases first, and the wear that concentrated cost 1.1 % of
    /// the life once the whole drive was live (TLC 20 %, a 64-block element,
    /// Zipf 1.2 over 5 % for 300 drive writes).
    pub(super) fn place_bet(&mut self, pool: u32) {
        let floor = match self.lead_allowed(pool) {
            None => f64::NEG_INFINITY,
            Some(lead) if lead > 0.0 => self.average_life(pool, self.native, true) - lead,
            Some(_) => f64::INFINITY,
        };
        self.bet.floor[pool as usize] = floor;
    }

    /// How many erases the pool's blocks may lead the normal ones by (None:
    /// any number).
    fn lead_allowed(&self, pool: u32) -> Option<f64> {
        let bet = &self.bet;
        let p = pool as usize;
        let normal_native = self.life_count[p * 8 + self.native.index()];
        if bet.share >= 1.0 || normal_native == 0 {
            return None;
        }
        let pools = self.free.len() as u64;
        let data = self.user_units / pools;
        let blocks = bet.blocks[p] as f64;
        let native_flash = self.native_capacity as u64 * bet.blocks[p] as u64;
        let native_erases = bet.erased[p] as f64 / self.native_capacity as f64;
        let baseline_left = ((bet.budget[p] - native_erases) / blocks.max(1.0)).max(0.0);
        let baseline = baseline_left * native_flash as f64 / bet.waf(native_flash, data);
        if baseline <= 0.0 {
            return None;
        }
        // The pool one mode down: each non-SLC early block loses what its
        // next mode does not hold.
        let flash = self.pool_capacity[p];
        let loss: u64 = CellMode::ALL
            .iter()
            .filter_map(|&m| m.lower().map(|lower| (m, lower)))
            .map(|(m, lower)| {
                let count = self.life_count[p * 8 + 4 + m.index()] as u64;
                count * (self.capacity_in(m) - self.capacity_in(lower)) as u64
            })
            .sum();
        let switched = flash.saturating_sub(loss);
        let (waf, waf_switched) = (bet.waf(flash, data), bet.waf(switched, data));
        let per_erase = flash as f64 / waf;
        let per_erase_switched = switched as f64 / waf_switched;
        let normal = self.average_life(pool, self.native, true);
        let written = self.growth.written() as f64 / pools as f64;
        let allowed = bet.share * (written + baseline);
        let life_cost = per_erase - per_erase_switched;
        let by_life = if life_cost > 0.0 {
            (allowed - baseline + normal * per_erase) / life_cost
        } else {
            f64::INFINITY
        };
        let latency_cost = switched as f64 * (1.0 / waf - 1.0 / waf_switched);
        let by_latency = if latency_cost > 0.0 {
            allowed / latency_cost
        } else {
            f64::INFINITY
        };
        let unfrozen = (1.0 - bet.threshold) * normal;
        Some(by_life.min(by_latency).min(unfrozen).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_waf_is_desnoyers_model() {
        // Values of the model worked out apart (Python, the same formula):
        // α 1.4 → 1.933, 1.2 → 3.119, 1.1 → 5.451 at 128 pages per block.
        for (alpha, expected) in [(1.4, 1.933), (1.2, 3.119), (1.1, 5.451)] {
            let w = greedy_waf(alpha, 128.0);
            assert!((w - expected).abs() < 1e-3, "α {alpha}: {w}");
        }
        // More spare flash, less amplification; none at all as α grows.
        assert!(greedy_waf(3.0, 64.0) < greedy_waf(1.5, 64.0));
        assert!((greedy_waf(50.0, 64.0) - 1.0).abs() < 0.05);
    }
}
