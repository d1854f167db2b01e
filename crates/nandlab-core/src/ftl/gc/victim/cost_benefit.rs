//! Cost-benefit (Rosenblum & Ousterhout): the block maximising
//! (1 − u) / 2u × age, u its utilisation and age the logical time since it
//! entered its bucket; each bucket's head is its oldest entry, so only
//! heads compete. A block with nothing valid wins at once.

use super::buckets::{on_buckets, Buckets};
use super::VictimPolicy;
use crate::ftl::blocks::BlockTable;
use crate::geometry::Geometry;
use crate::sanity::Checked;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CostBenefit(Buckets);

impl VictimPolicy for CostBenefit {
    const NAME: &'static str = "cost-benefit";

    on_buckets!();

    fn take(&mut self, pool: u32, blocks: &BlockTable, now: u64, _: &mut Xoshiro256PlusPlus) -> Option<u32> {
        let b = &self.0;
        let (base, upb) = (b.base(pool as usize), b.units_per_block);
        let mut best = NIL;
        let mut best_score = -1.0f64;
        for v in 0..=upb {
            let h = b.head[base + v as usize];
            if h == NIL {
                continue;
            }
            if v == 0 {
                best = h;
                break;
            }
            let u = v as f64 / upb as f64;
            let age = (now - b.stamp[h as usize]) as f64 + 1.0;
            let score = (1.0 - u) / (2.0 * u) * age;
            if score > best_score {
                best_score = score;
                best = h;
            }
        }
        (best != NIL).then(|| self.0.remove(best, blocks))
    }
}
