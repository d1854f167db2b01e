//! Random: a sealed block drawn uniformly (seeded), whatever it holds.

use super::set::Set;
use super::VictimPolicy;
use crate::ftl::blocks::BlockTable;
use crate::geometry::Geometry;
use crate::sanity::Checked;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Random(Set);

impl VictimPolicy for Random {
    const NAME: &'static str = "random";

    fn new(g: &Geometry, _: Option<u32>) -> Random {
        Random(Set::new(g))
    }

    fn parameter(&self) -> Option<u32> {
        None
    }

    fn insert(&mut self, block: u32, _: u32, _: u32, _: u64, _: &BlockTable) {
        self.0.insert(block);
    }

    fn remove(&mut self, block: u32, _: &BlockTable) {
        self.0.remove(block);
    }

    fn take(&mut self, pool: u32, blocks: &BlockTable, _: u64, rng: &mut Xoshiro256PlusPlus) -> Option<u32> {
        self.0.take_best_of(pool as usize, 1, blocks, rng)
    }

    fn check_members(
        &self,
        g: &Geometry,
        _: &BlockTable,
        _: u64,
        member: &mut dyn FnMut(u32, usize) -> Checked,
    ) -> Checked {
        self.0.check_members(g, member)
    }
}
