//! Windowed greedy (Hu, Eleftheriou, Haas, Iliadis & Pletka, "Write
//! amplification analysis in flash-based solid state drives", SYSTOR 2009):
//! of the W blocks sealed longest ago, the one with the fewest valid units
//! (the oldest on a tie). W = 1 is FIFO; W at least the pool's blocks is
//! greedy; in between it trades greedy's WAF for a bounded search and a
//! victim that has had time to go stale (`gc = "windowed-greedy:W"`).

use super::seal_order::SealOrder;
use super::VictimPolicy;
use crate::ftl::blocks::BlockTable;
use crate::geometry::Geometry;
use crate::sanity::Checked;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WindowedGreedy {
    sealed: SealOrder,
    window: u32,
}

impl VictimPolicy for WindowedGreedy {
    const NAME: &'static str = "windowed-greedy";
    const FORM: Option<&'static str> = Some("windowed-greedy:W");

    fn new(g: &Geometry, window: Option<u32>) -> WindowedGreedy {
        WindowedGreedy {
            sealed: SealOrder::new(g),
            window: window.expect("validated: windowed-greedy:W"),
        }
    }

    fn parameter(&self) -> Option<u32> {
        Some(self.window)
    }

    fn insert(&mut self, block: u32, _: u32, _: u32, _: u64, _: &BlockTable) {
        self.sealed.insert(block);
    }

    fn remove(&mut self, block: u32, _: &BlockTable) {
        self.sealed.remove(block);
    }

    fn take(&mut self, pool: u32, blocks: &BlockTable, _: u64, _: &mut Xoshiro256PlusPlus) -> Option<u32> {
        let q = self.sealed.of(pool);
        let valid = blocks.valid();
        let window = q.len().min(self.window as usize);
        let at = (0..window).min_by_key(|&i| (valid[q[i] as usize], i))?;
        q.remove(at)
    }

    fn check_members(
        &self,
        g: &Geometry,
        _: &BlockTable,
        _: u64,
        member: &mut dyn FnMut(u32, usize) -> Checked,
    ) -> Checked {
        self.sealed.check_members(g, member)
    }
}
