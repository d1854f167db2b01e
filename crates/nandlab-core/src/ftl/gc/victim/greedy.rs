//! Greedy: the block with the fewest valid units (lowest bucket, oldest
//! entry first). With wear levelling on, ZombieNAND's usage-table GC
//! (Algorithms 2 and 3) chooses within the lowest buckets by remaining life.

use super::buckets::{on_buckets, Buckets};
use super::{VictimPolicy, WornRule};
use crate::config::{LifeAverage, LifeSkip};
use crate::ftl::blocks::BlockTable;
use crate::geometry::Geometry;
use crate::media::CellMode;
use crate::sanity::Checked;
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Greedy(Buckets);

impl VictimPolicy for Greedy {
    const NAME: &'static str = "greedy";
    const WEAR_AWARE: bool = true;

    on_buckets!();

    fn take(&mut self, pool: u32, blocks: &BlockTable, _: u64, _: &mut Xoshiro256PlusPlus) -> Option<u32> {
        let victim = self.0.lowest(pool as usize)?;
        Some(self.0.remove(victim, blocks))
    }

    /// In the lowest bucket with a candidate, the early-switch block with
    /// the most life left (while the pool is in use and the block within
    /// the lead the bet allows: `BlockTable::lead_floor`), else the normal one
    /// with the most life left; a normal block worn by `rule` (less life
    /// left than its threshold × the pool's average) is skipped, and so are
    /// blocks with nothing invalid. While the zombies cannot hold the
    /// element's data two-thirds full (`BlockTable::zombies_hold_data`), a
    /// zombie is taken only once it holds nothing valid: it is spare flash,
    /// as a retired block is none to the baseline, not where the data
    /// settles. A block with more than `room` valid units is skipped too;
    /// plain greedy if every block is.
    fn take_wear_aware(
        &mut self,
        pool: u32,
        blocks: &BlockTable,
        rule: &WornRule,
        room: u32,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        let b = &self.0;
        let base = b.base(pool as usize);
        let unleveling = blocks.unleveling_on();
        let zombies_hold_data = blocks.zombies_hold_data(pool);
        let limit = match rule.average {
            LifeAverage::Element if zombies_hold_data => {
                [rule.threshold * blocks.element_life(pool); 4]
            }
            _ => CellMode::ALL.map(|m| rule.threshold * blocks.average_life(pool, m, unleveling)),
        };
        let lead_floor = blocks.lead_floor(pool);
        for level in b.min[pool as usize]..b.units_per_block {
            let mut best: Option<(bool, f64, u32)> = None;
            let mut block = b.head[base + level as usize];
            while block != NIL {
                if blocks.valid()[block as usize] > room
                    || level > 0 && !zombies_hold_data && blocks.is_zombie(block)
                {
                    block = b.next[block as usize];
                    continue;
                }
                let life = blocks.remaining_life(block);
                let early = blocks.early_switcher(block, unleveling) && life >= lead_floor;
                let better = match best {
                    None => true,
                    Some((e, l, _)) => (early, life) > (e, l),
                };
                if better && (early || !worn(life, limit[blocks.mode()[block as usize].index()], rule.skip, rng)) {
                    best = Some((early, life, block));
                }
                block = b.next[block as usize];
            }
            if let Some((.., victim)) = best {
                return Some(self.0.remove(victim, blocks));
            }
        }
        self.take(pool, blocks, now, rng)
    }
}

/// Whether a normal block with `life` erases left is skipped against its
/// `limit` (threshold × average): always below it, or (rate-limited, as
/// DiskSim's `ssd_rate_limit`) taken with probability life / limit.
fn worn(life: f64, limit: f64, skip: LifeSkip, rng: &mut Xoshiro256PlusPlus) -> bool {
    if life >= limit {
        return false;
    }
    match skip {
        LifeSkip::Strict => true,
        LifeSkip::RateLimited => rng.random::<f64>() >= life / limit,
    }
}
