//! How block endurance varies around the rating (Desnoyers measured
//! lifetimes far above the specification and widely spread): the forms a
//! spread takes, and how the blocks of a drive or a chip draw their factors
//! from their seed's "endurance" stream.

use crate::math::Deterministic;
use crate::seed::derive_seed;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// How block endurance varies around the rating: `[device.wear] spread`,
/// and a chip preset's spread (its factors drawn by [`Spread::sample`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spread {
    /// Every block lasts exactly the rated cycles.
    Rated,
    /// Log-normal factor on the rating: median, σ of its logarithm, and a
    /// share of outliers lasting 0.5–3× the rating.
    LogNormal {
        median: f64,
        sigma: f64,
        outliers: f64,
    },
}

/// Desnoyers measured block lifetimes "often as much as 100× higher than
/// manufacturer specifications", widely spread, "with a small number of outliers"
/// (`spread = "desnoyers"`, and the spread of the chip bench's measured chips).
pub const MEASURED: Spread = Spread::LogNormal {
    median: 40.0,
    sigma: 0.6,
    outliers: 0.03,
};

impl Spread {
    /// Endurance factors of `n` blocks, from the seed's "endurance" stream.
    pub fn sample(&self, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(derive_seed(seed, "endurance", 0));
        match *self {
            Spread::Rated => vec![1.0; n],
            Spread::LogNormal {
                median,
                sigma,
                outliers,
            } => {
                let dist = LogNormal::new(median.ln_d(), sigma).expect("valid log-normal");
                (0..n)
                    .map(|_| {
                        let outlier = rng.random::<f64>() < outliers;
                        let f = dist.sample(&mut rng);
                        if outlier {
                            0.5 + 2.5 * rng.random::<f64>()
                        } else {
                            f
                        }
                    })
                    .collect()
            }
        }
    }
}
