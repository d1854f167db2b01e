//! Greedy: the block with the fewest valid units (lowest bucket, oldest
//! entry first). With wear levelling on, ZombieNAND's usage-table GC
//! (Algorithms 2 and 3) chooses within the lowest buckets by remaining life.

use super::buckets::{on_buckets, Buckets};
use super::VictimPolicy;
use crate::ftl::blocks::BlockTable;
use crate::geometry::Geometry;
use crate::media::CellMode;
use crate::sanity::Checked;
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
    /// the most life left, else the normal one with the most life left; a
    /// normal block with less life left than `life_threshold` × the average
    /// of its pool's normal blocks in its mode is skipped, and so are blocks
    /// with nothing invalid. Plain greedy if every block is skipped.
    fn take_wear_aware(
        &mut self,
        pool: u32,
        blocks: &BlockTable,
        life_threshold: f64,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        let b = &self.0;
        let base = b.base(pool as usize);
        let threshold = CellMode::ALL.map(|m| life_threshold * blocks.average_life(pool, m));
        for level in b.min[pool as usize]..b.units_per_block {
            let mut best: Option<(bool, f64, u32)> = None;
            let mut block = b.head[base + level as usize];
            while block != NIL {
                let early = blocks.early()[block as usize];
                let life = blocks.remaining_life(block);
                let better = match best {
                    None => true,
                    Some((e, l, _)) => (early, life) > (e, l),
                };
                let worn = life < threshold[blocks.mode()[block as usize].index()];
                if (early || !worn) && better {
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
