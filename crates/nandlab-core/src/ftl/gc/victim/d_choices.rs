//! d-choices: of d sealed blocks drawn at random (seeded), the one with the
//! fewest valid units — greedy's WAF at a sample's cost (`gc = "d-choices:N"`).

use super::set::Set;
use super::VictimPolicy;
use crate::ftl::blocks::BlockTable;
use crate::geometry::Geometry;
use crate::sanity::Checked;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DChoices {
    set: Set,
    d: u32,
}

impl VictimPolicy for DChoices {
    const NAME: &'static str = "d-choices";
    const FORM: Option<&'static str> = Some("d-choices:N");

    fn new(g: &Geometry, d: Option<u32>) -> DChoices {
        DChoices {
            set: Set::new(g),
            d: d.expect("validated: d-choices:N"),
        }
    }

    fn parameter(&self) -> Option<u32> {
        Some(self.d)
    }

    fn insert(&mut self, block: u32, _: u32, _: u32, _: u64, _: &BlockTable) {
        self.set.insert(block);
    }

    fn remove(&mut self, block: u32, _: &BlockTable) {
        self.set.remove(block);
    }

    fn take(&mut self, pool: u32, blocks: &BlockTable, _: u64, rng: &mut Xoshiro256PlusPlus) -> Option<u32> {
        self.set.take_best_of(pool as usize, self.d, blocks, rng)
    }

    fn check_members(
        &self,
        g: &Geometry,
        _: &BlockTable,
        _: u64,
        member: &mut dyn FnMut(u32, usize) -> Checked,
    ) -> Checked {
        self.set.check_members(g, member)
    }
}
