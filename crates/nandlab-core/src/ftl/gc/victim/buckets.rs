//! Utilisation buckets: per GC pool, a doubly linked list of sealed blocks
//! per bucket (valid units scaled to a native block), each list in order of
//! entry with the logical time a block entered it, and the lowest bucket
//! that may hold a block. Greedy takes from the lowest non-empty bucket,
//! cost-benefit compares the heads (each bucket's oldest entry).

use crate::ftl::blocks::BlockTable;
use crate::geometry::{Dividers, Geometry};
use crate::sanity::{ensure, len, Checked};
use serde::{Deserialize, Serialize};

const NIL: u32 = u32::MAX;

/// The [`VictimPolicy`](super::VictimPolicy) items a policy over
/// utilisation buckets (a `Buckets` in field 0) hands to them: `new`,
/// `insert`, `invalidated`, `remove`, and (alone with `shared`, for a
/// policy that keeps more beside its buckets) `parameter`, `check_members`.
macro_rules! on_buckets {
    () => {
        fn new(g: &Geometry, _: Option<u32>) -> Self {
            Self(Buckets::new(g))
        }

        fn insert(&mut self, block: u32, valid: u32, capacity: u32, now: u64, _: &BlockTable) {
            self.0.insert(block, valid, capacity, now);
        }

        #[inline]
        fn invalidated(&mut self, block: u32, valid: u32, capacity: u32, now: u64) {
            self.0.invalidated(block, valid, capacity, now);
        }

        fn remove(&mut self, block: u32, blocks: &BlockTable) {
            self.0.remove(block, blocks);
        }

        on_buckets!(shared);
    };
    (shared) => {
        fn parameter(&self) -> Option<u32> {
            None
        }

        fn check_members(
            &self,
            g: &Geometry,
            blocks: &BlockTable,
            clock: u64,
            member: &mut dyn FnMut(u32, usize) -> Checked,
        ) -> Checked {
            self.0.check_members(g, blocks, clock, member)
        }
    };
}
pub(super) use on_buckets;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Buckets {
    fast: Dividers,
    pub(super) units_per_block: u32,
    pub(super) head: Vec<u32>,
    tail: Vec<u32>,
    prev: Vec<u32>,
    pub(super) next: Vec<u32>,
    pub(super) stamp: Vec<u64>,
    /// Per pool, no block lies in a bucket below this one.
    pub(super) min: Vec<u32>,
}

impl Buckets {
    pub fn new(g: &Geometry) -> Buckets {
        let (pools, blocks, upb) = (g.pools as usize, g.blocks as usize, g.units_per_block);
        let nb = pools * (upb as usize + 1);
        Buckets {
            fast: g.fast,
            units_per_block: upb,
            head: vec![NIL; nb],
            tail: vec![NIL; nb],
            prev: vec![NIL; blocks],
            next: vec![NIL; blocks],
            stamp: vec![0; blocks],
            min: vec![upb + 1; pools],
        }
    }

    /// The bucket level of a block with `valid` units of `capacity`.
    #[inline]
    pub(super) fn level(&self, valid: u32, capacity: u32) -> u32 {
        if capacity == self.units_per_block {
            valid
        } else {
            (valid as u64 * self.units_per_block as u64 / capacity as u64) as u32
        }
    }

    /// The first bucket of `pool`.
    #[inline]
    pub(super) fn base(&self, pool: usize) -> usize {
        pool * (self.units_per_block as usize + 1)
    }

    /// The bucket (an index into `head`) of block `block` with `valid` units of `capacity`.
    #[inline]
    pub(super) fn bucket_of(&self, block: u32, valid: u32, capacity: u32) -> usize {
        self.base(self.fast.pool_of_block(block)) + self.level(valid, capacity) as usize
    }

    pub fn insert(&mut self, block: u32, valid: u32, capacity: u32, now: u64) {
        let pool = self.fast.pool_of_block(block);
        self.push(block, pool, self.level(valid, capacity), now);
    }

    /// A sealed block's valid count dropped to `valid`: it moves to the
    /// end of its new bucket. Returns the bucket it left and the one it entered.
    #[inline]
    pub fn invalidated(
        &mut self,
        block: u32,
        valid: u32,
        capacity: u32,
        now: u64,
    ) -> (usize, usize) {
        let pool = self.fast.pool_of_block(block);
        let (from, to) = (self.level(valid + 1, capacity), self.level(valid, capacity));
        self.unlink(block, pool, from);
        self.push(block, pool, to, now);
        (
            self.base(pool) + from as usize,
            self.base(pool) + to as usize,
        )
    }

    fn push(&mut self, block: u32, pool: usize, level: u32, now: u64) {
        let bi = self.base(pool) + level as usize;
        let b = block as usize;
        self.prev[b] = self.tail[bi];
        self.next[b] = NIL;
        if self.tail[bi] == NIL {
            self.head[bi] = block;
        } else {
            self.next[self.tail[bi] as usize] = block;
        }
        self.tail[bi] = block;
        self.stamp[b] = now;
        if level < self.min[pool] {
            self.min[pool] = level;
        }
    }

    fn unlink(&mut self, block: u32, pool: usize, level: u32) {
        let bi = self.base(pool) + level as usize;
        let b = block as usize;
        let (p, n) = (self.prev[b], self.next[b]);
        if p == NIL {
            self.head[bi] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail[bi] = p;
        } else {
            self.prev[n as usize] = p;
        }
    }

    /// Takes `victim` (a block of this index) out, as a victim.
    pub fn remove(&mut self, victim: u32, blocks: &BlockTable) -> u32 {
        let v = victim as usize;
        let level = self.level(blocks.valid()[v], blocks.capacity()[v]);
        self.unlink(victim, self.fast.pool_of_block(victim), level);
        victim
    }

    /// The head of `pool`'s lowest non-empty bucket (moving the pool's
    /// lowest-bucket mark up to it), or None.
    pub fn lowest(&mut self, pool: usize) -> Option<u32> {
        let (base, upb) = (self.base(pool), self.units_per_block);
        let mut v = self.min[pool];
        while v <= upb && self.head[base + v as usize] == NIL {
            v += 1;
        }
        self.min[pool] = v;
        (v <= upb).then(|| self.head[base + v as usize])
    }

    /// For a loaded snapshot: the shape `g` gives, lists whose links agree,
    /// each block in the bucket of its valid count, entered by `clock`.
    pub fn check_members(
        &self,
        g: &Geometry,
        blocks: &BlockTable,
        clock: u64,
        member: &mut dyn FnMut(u32, usize) -> Checked,
    ) -> Checked {
        ensure(
            self.fast == g.fast && self.units_per_block == g.units_per_block,
            || "the GC victim buckets differ from the drive's geometry".into(),
        )?;
        let per_pool = self.units_per_block as usize + 1;
        let nb = g.pools as u64 * per_pool as u64;
        len("victim buckets", self.head.len(), nb)?;
        len("victim bucket tails", self.tail.len(), nb)?;
        for (name, l) in [
            ("prev", self.prev.len()),
            ("next", self.next.len()),
            ("stamp", self.stamp.len()),
        ] {
            len(&format!("victim {name}"), l, g.blocks as u64)?;
        }
        len("victim min", self.min.len(), g.pools as u64)?;
        for (bucket, &first) in self.head.iter().enumerate() {
            let (pool, level) = (bucket / per_pool, (bucket % per_pool) as u32);
            let (mut b, mut last) = (first, NIL);
            while b != NIL {
                member(b, pool)?;
                let i = b as usize;
                ensure(self.prev[i] == last, || {
                    format!("block {b}'s victim list links disagree")
                })?;
                ensure(
                    self.level(blocks.valid()[i], blocks.capacity()[i]) == level
                        && self.stamp[i] <= clock,
                    || format!("block {b} is in the wrong victim bucket"),
                )?;
                (last, b) = (b, self.next[i]);
            }
            ensure(self.tail[bucket] == last, || {
                "a victim list's tail is not its last block".into()
            })?;
            ensure(first == NIL || self.min[pool] <= level, || {
                "a victim bucket lies below its pool's lowest".into()
            })?;
        }
        Ok(())
    }
}
