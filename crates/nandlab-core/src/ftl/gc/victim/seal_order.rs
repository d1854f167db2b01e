//! Sealed blocks per GC pool in the order they were sealed, for policies
//! that choose by age (FIFO, windowed greedy).

use crate::geometry::{Dividers, Geometry};
use crate::sanity::{ensure, len, Checked};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SealOrder {
    fast: Dividers,
    queues: Vec<VecDeque<u32>>,
}

impl SealOrder {
    pub fn new(g: &Geometry) -> SealOrder {
        SealOrder {
            fast: g.fast,
            queues: vec![VecDeque::new(); g.pools as usize],
        }
    }

    pub fn insert(&mut self, block: u32) {
        let pool = self.fast.pool_of_block(block);
        self.queues[pool].push_back(block);
    }

    /// Takes member `block` out (a search of its pool's queue: the firmware
    /// does it rarely).
    pub fn remove(&mut self, block: u32) {
        let q = &mut self.queues[self.fast.pool_of_block(block)];
        if let Some(i) = q.iter().position(|&b| b == block) {
            q.remove(i);
        }
    }

    /// `pool`'s sealed blocks, oldest first.
    pub fn of(&mut self, pool: u32) -> &mut VecDeque<u32> {
        &mut self.queues[pool as usize]
    }

    /// For a loaded snapshot: the shape `g` gives, every block a member.
    pub fn check_members(
        &self,
        g: &Geometry,
        member: &mut dyn FnMut(u32, usize) -> Checked,
    ) -> Checked {
        ensure(self.fast == g.fast, || {
            "the GC victim queues differ from the drive's geometry".into()
        })?;
        len("victim queues", self.queues.len(), g.pools as u64)?;
        for (p, q) in self.queues.iter().enumerate() {
            q.iter().try_for_each(|&b| member(b, p))?;
        }
        Ok(())
    }
}
