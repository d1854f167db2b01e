//! An indexable set of sealed blocks per GC pool (each block's position
//! kept), for policies that sample victims at random.

use crate::ftl::blocks::BlockTable;
use crate::geometry::{Dividers, Geometry};
use crate::sanity::{ensure, len, Checked};
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Set {
    fast: Dividers,
    members: Vec<Vec<u32>>,
    pos: Vec<u32>,
}

impl Set {
    pub fn new(g: &Geometry) -> Set {
        Set {
            fast: g.fast,
            members: vec![Vec::new(); g.pools as usize],
            pos: vec![NIL; g.blocks as usize],
        }
    }

    pub fn insert(&mut self, block: u32) {
        let pool = self.fast.pool_of_block(block);
        self.pos[block as usize] = self.members[pool].len() as u32;
        self.members[pool].push(block);
    }

    /// Of `d` members of `pool` drawn at random, the one with the fewest
    /// valid units (the first drawn on a tie), taken out; None if empty.
    pub fn take_best_of(
        &mut self,
        pool: usize,
        d: u32,
        blocks: &BlockTable,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        let m = &self.members[pool];
        if m.is_empty() {
            return None;
        }
        let valid = &blocks.valid();
        let mut best = m[rng.random_range(0..m.len())];
        for _ in 1..d {
            let c = m[rng.random_range(0..m.len())];
            if valid[c as usize] < valid[best as usize] {
                best = c;
            }
        }
        self.remove(best);
        Some(best)
    }

    /// Takes member `block` out.
    pub fn remove(&mut self, block: u32) {
        let pool = self.fast.pool_of_block(block);
        let i = self.pos[block as usize] as usize;
        let m = &mut self.members[pool];
        let last = *m.last().expect("a member");
        m.swap_remove(i);
        if last != block {
            self.pos[last as usize] = i as u32;
        }
        self.pos[block as usize] = NIL;
    }

    /// For a loaded snapshot: the shape `g` gives, each member's position right.
    pub fn check_members(
        &self,
        g: &Geometry,
        member: &mut dyn FnMut(u32, usize) -> Checked,
    ) -> Checked {
        ensure(self.fast == g.fast, || {
            "the GC victim set differs from the drive's geometry".into()
        })?;
        len("victim sets", self.members.len(), g.pools as u64)?;
        len("victim positions", self.pos.len(), g.blocks as u64)?;
        for (p, m) in self.members.iter().enumerate() {
            for (i, &b) in m.iter().enumerate() {
                member(b, p)?;
                ensure(self.pos[b as usize] == i as u32, || {
                    format!("block {b}'s position in its victim set is wrong")
                })?;
            }
        }
        Ok(())
    }
}
