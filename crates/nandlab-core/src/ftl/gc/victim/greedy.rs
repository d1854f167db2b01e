//! Greedy: the block with the fewest valid units (lowest bucket, oldest
//! entry first). With wear levelling on, ZombieNAND's usage-table GC
//! (Algorithms 2 and 3) chooses within the lowest buckets by remaining life.

use super::buckets::{on_buckets, Buckets};
use super::life_index::LifeIndex;
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

/// The buckets' lists, and the usage table's order over those a wear-aware
/// choice looked into (derived: not in a snapshot).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Greedy(Buckets, #[serde(skip)] LifeIndex);

/// What a wear-aware choice judges blocks by: the unleveling state, the
/// pool's lead floor, each mode's worn limit, the room a victim's valid
/// units must fit and whether zombies may hold data.
struct Judge<'a> {
    blocks: &'a BlockTable,
    rule: &'a WornRule,
    unleveling: bool,
    lead_floor: f64,
    limit: [f64; 4],
    room: u32,
    zombies_hold_data: bool,
}

impl Judge<'_> {
    /// Block `block` at `level` as a candidate: whether it counts as an
    /// early switcher and its life, or None if it is passed over before
    /// its worn limit is looked at.
    #[inline]
    fn candidate(&self, block: u32, level: u32) -> Option<(bool, f64)> {
        let blocks = self.blocks;
        if blocks.valid()[block as usize] > self.room
            || level > 0 && !self.zombies_hold_data && blocks.is_zombie(block)
        {
            return None;
        }
        let life = blocks.remaining_life(block);
        let early = blocks.early_switcher(block, self.unleveling) && life >= self.lead_floor;
        Some((early, life))
    }

    fn limit(&self, block: u32) -> f64 {
        self.limit[self.blocks.mode()[block as usize].index()]
    }
}

impl Greedy {
    /// Takes `victim` out of its bucket, as a victim.
    fn take_out(&mut self, victim: u32, blocks: &BlockTable) -> u32 {
        let i = victim as usize;
        let bucket = self.0.bucket_of(victim, blocks.valid()[i], blocks.capacity()[i]);
        self.0.remove(victim, blocks);
        self.1.left_bucket(victim, bucket);
        victim
    }

    /// The strict skip's choice in `level`'s bucket: the best of each
    /// kind's longest-lived block (see `life_index`).
    fn best_indexed(&mut self, bucket: usize, level: u32, judge: &Judge) -> Option<u32> {
        let mut best: Option<(bool, f64, u64, u32)> = None;
        for (block, entered) in self.1.best_of_kinds(bucket, &self.0) {
            let Some((early, life)) = judge.candidate(block, level) else {
                continue;
            };
            if !early && life < judge.limit(block) {
                continue;
            }
            let better = match best {
                None => true,
                Some((e, l, n, _)) => (early, life) > (e, l) || (early, life) == (e, l) && entered < n,
            };
            if better {
                best = Some((early, life, entered, block));
            }
        }
        best.map(|(.., block)| block)
    }

    /// The choice in `level`'s bucket by its list in entry order: with the
    /// rate-limited skip a draw for each block better than the best so far
    /// and below its limit (the draws follow the order).
    fn best_scanned(
        &self,
        bucket: usize,
        level: u32,
        judge: &Judge,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        let mut best: Option<(bool, f64, u32)> = None;
        let mut block = self.0.head[bucket];
        while block != NIL {
            if let Some((early, life)) = judge.candidate(block, level) {
                let better = match best {
                    None => true,
                    Some((e, l, _)) => (early, life) > (e, l),
                };
                if better && (early || !worn(life, judge.limit(block), judge.rule.skip, rng)) {
                    best = Some((early, life, block));
                }
            }
            block = self.0.next[block as usize];
        }
        best.map(|(.., block)| block)
    }
}

impl VictimPolicy for Greedy {
    const NAME: &'static str = "greedy";
    const WEAR_AWARE: bool = true;

    fn new(g: &Geometry, _: Option<u32>) -> Self {
        Greedy(Buckets::new(g), LifeIndex::default())
    }

    on_buckets!(shared);

    fn insert(&mut self, block: u32, valid: u32, capacity: u32, now: u64, blocks: &BlockTable) {
        self.0.insert(block, valid, capacity, now);
        let bucket = self.0.bucket_of(block, valid, capacity);
        self.1.sealed(block, bucket, blocks);
    }

    #[inline]
    fn invalidated(&mut self, block: u32, valid: u32, capacity: u32, now: u64) {
        let (from, to) = self.0.invalidated(block, valid, capacity, now);
        self.1.left_bucket(block, from);
        self.1.entered_bucket(block, to);
    }

    fn remove(&mut self, block: u32, blocks: &BlockTable) {
        self.take_out(block, blocks);
    }

    fn take(&mut self, pool: u32, blocks: &BlockTable, _: u64, _: &mut Xoshiro256PlusPlus) -> Option<u32> {
        let victim = self.0.lowest(pool as usize)?;
        Some(self.take_out(victim, blocks))
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
    /// plain greedy if every block is. Ties go to the oldest entry. With
    /// the strict skip a large bucket is read through the usage table's
    /// order (`life_index`); the rate-limited skip's draws follow the list.
    fn take_wear_aware(
        &mut self,
        pool: u32,
        blocks: &BlockTable,
        rule: &WornRule,
        room: u32,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        let unleveling = blocks.unleveling_on();
        let zombies_hold_data = blocks.zombies_hold_data(pool);
        let limit = match rule.average {
            LifeAverage::Element if zombies_hold_data => {
                [rule.threshold * blocks.element_life(pool); 4]
            }
            _ => CellMode::ALL.map(|m| rule.threshold * blocks.average_life(pool, m, unleveling)),
        };
        let judge = Judge {
            blocks,
            rule,
            unleveling,
            lead_floor: blocks.lead_floor(pool),
            limit,
            room,
            zombies_hold_data,
        };
        let base = self.0.base(pool as usize);
        for level in self.0.min[pool as usize]..self.0.units_per_block {
            let bucket = base + level as usize;
            if self.0.head[bucket] == NIL {
                continue;
            }
            let victim = match rule.skip {
                LifeSkip::Strict if self.1.ordered(bucket, &self.0, blocks) => {
                    let victim = self.best_indexed(bucket, level, &judge);
                    // The unit tests check every choice against the scan the
                    // order replaced (with the strict skip it draws nothing).
                    #[cfg(test)]
                    {
                        assert_eq!(victim, self.best_scanned(bucket, level, &judge, rng));
                        tests::CHECKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    victim
                }
                _ => self.best_scanned(bucket, level, &judge, rng),
            };
            if let Some(victim) = victim {
                return Some(self.take_out(victim, blocks));
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

#[cfg(test)]
mod tests {
    use crate::{Config, Simulator};
    use std::sync::atomic::{AtomicU64, Ordering};

    /// Choices checked against the scan.
    pub(super) static CHECKED: AtomicU64 = AtomicU64::new(0);

    /// Whole small lifetimes with ZombieNAND's usage table (spread
    /// endurance, the early-switch pool, TLC and MLC, working sets that
    /// change), every victim choice checked against the bucket scan it
    /// replaced (in `take_wear_aware`, under test).
    #[test]
    fn the_usage_table_s_order_chooses_as_the_scan() {
        for (cell, rated, reserve, steps) in [
            ("tlc", "mlc = 120, tlc = 20", 30, "0.1:3.0, 1.0"),
            ("tlc", "mlc = 120, tlc = 20", 15, "0.5"),
            ("mlc", "mlc = 40", 20, "1.0:2.0, 0.25"),
        ] {
            let mut phases = String::new();
            for step in steps.split(", ") {
                let (set, volume) = step.split_once(':').unwrap_or((step, ""));
                let until = if volume.is_empty() {
                    "until = \"dead\"".to_string()
                } else {
                    format!("volume = {volume}")
                };
                phases += &format!("[[phase]]\nworking_set = {set}\nqueue_depth = 1\n{until}\n");
            }
            let text = format!(
                "seed = 3\n[device]\ncell = \"{cell}\"\nchannels = 2\nplanes_per_die = 2\n\
                 blocks_per_plane = 48\npages_per_block = 32\npage_size = \"8KiB\"\n\
                 reserve = \"{reserve} %\"\n[device.wear]\nrated = {{ slc = 1500, {rated} }}\n\
                 spread = \"lognormal:0.1\"\n[ftl]\nzombie = true\nwear_unleveling = true\n\
                 wear_leveling = true\n{phases}"
            );
            let mut sim = Simulator::new(Config::from_toml(&text, "test").unwrap());
            let phases = sim.run_all(&mut |_| true).unwrap();
            assert!(phases.last().unwrap().summary.death.is_some(), "{cell} {steps}");
        }
        let checked = CHECKED.load(Ordering::Relaxed);
        assert!(checked > 10_000, "{checked} choices checked");
    }
}
