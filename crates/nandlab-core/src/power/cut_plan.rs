//! When the power fails during a phase: at given times from its start, and
//! at random — a Poisson process of a given mean gap, drawn from a seeded
//! generator, counted from when the drive is back after the last cut.

use crate::math::Deterministic;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// When the power fails during a phase: at given times, and at random
/// (exponential gaps, a Poisson process) from a seeded generator.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CutPlan {
    fixed: VecDeque<u64>,
    mean_gap_ns: Option<f64>,
    random_next: u64,
    rng: Xoshiro256PlusPlus,
}

impl CutPlan {
    /// Cuts at `start` + each of `at_ns`, and every `every_ns` on average from `start`.
    pub fn new(start: u64, at_ns: &[u64], every_ns: Option<u64>, seed: u64) -> CutPlan {
        let mut plan = CutPlan {
            fixed: at_ns.iter().map(|&t| start + t).collect(),
            mean_gap_ns: every_ns.map(|e| e as f64),
            random_next: u64::MAX,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        };
        plan.random_next = plan.draw(start);
        plan
    }

    fn draw(&mut self, from: u64) -> u64 {
        match self.mean_gap_ns {
            Some(mean) => {
                let gap = -mean * (1.0 - self.rng.random::<f64>()).ln_d();
                from.saturating_add(gap as u64)
            }
            None => u64::MAX,
        }
    }

    /// The next cut (MAX: none).
    pub fn next(&self) -> u64 {
        self.fixed
            .front()
            .copied()
            .unwrap_or(u64::MAX)
            .min(self.random_next)
    }

    /// The cut due at or before `t` has happened; the drive is back at `back`.
    pub fn done(&mut self, t: u64, back: u64) {
        while self.fixed.front().is_some_and(|&f| f <= t) {
            self.fixed.pop_front();
        }
        if self.random_next <= t {
            self.random_next = self.draw(back);
        }
    }
}
