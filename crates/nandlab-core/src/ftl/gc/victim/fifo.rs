//! FIFO: blocks are cleaned in the order they were sealed, whatever they
//! hold (a log-structured drive's cleaning; the analytic model of
//! REFERENCE §6).

use super::seal_order::SealOrder;
use super::VictimPolicy;
use crate::ftl::blocks::BlockTable;
use crate::geometry::Geometry;
use crate::sanity::Checked;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fifo(SealOrder);

impl VictimPolicy for Fifo {
    const NAME: &'static str = "fifo";

    fn new(g: &Geometry, _: Option<u32>) -> Fifo {
        Fifo(SealOrder::new(g))
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

    fn take(&mut self, pool: u32, _: &BlockTable, _: u64, _: &mut Xoshiro256PlusPlus) -> Option<u32> {
        self.0.of(pool).pop_front()
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
