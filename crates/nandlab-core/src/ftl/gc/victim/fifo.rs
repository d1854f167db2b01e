//! FIFO: blocks are cleaned in the order they were sealed, whatever they
//! hold (a log-structured drive's cleaning; the analytic model of
//! REFERENCE §6).

use super::VictimPolicy;
use crate::ftl::blocks::BlockTable;
use crate::geometry::{Dividers, Geometry};
use crate::sanity::{ensure, len, Checked};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fifo {
    fast: Dividers,
    queues: Vec<VecDeque<u32>>,
}

impl VictimPolicy for Fifo {
    const NAME: &'static str = "fifo";

    fn new(g: &Geometry, _: Option<u32>) -> Fifo {
        Fifo {
            fast: g.fast,
            queues: vec![VecDeque::new(); g.pools as usize],
        }
    }

    fn insert(&mut self, block: u32, _: u32, _: u32, _: u64) {
        let plane = self.fast.planes.remainder(block);
        let pool = self.fast.planes_per_pool.quotient(plane) as usize;
        self.queues[pool].push_back(block);
    }

    fn take(&mut self, pool: u32, _: &BlockTable, _: u64, _: &mut Xoshiro256PlusPlus) -> Option<u32> {
        self.queues[pool as usize].pop_front()
    }

    fn check_members(
        &self,
        g: &Geometry,
        _: &BlockTable,
        _: u64,
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
