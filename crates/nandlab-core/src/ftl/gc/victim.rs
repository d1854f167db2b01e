//! GC victim selection per GC pool, in O(1) amortised per operation (no scan
//! of all blocks): utilisation buckets for greedy and cost-benefit, a
//! seal-order queue for FIFO, an indexable set for random and d-choices
//! sampling; and ZombieNAND's usage-table GC (Algorithms 2 and 3), which
//! scans inside the fewest-valid bucket for the block to level wear with.
//!
//! A block's bucket is its valid units scaled to a native block
//! (`valid × units_per_block / capacity`): blocks run in a lower bit mode
//! hold fewer units, and a full small block must not look like a good victim.

use crate::config::GcPolicy;
use crate::ftl::blocks::{BlockState, BlockTable};
use crate::geometry::{Dividers, Geometry};
use crate::media::CellMode;
use crate::sanity::{ensure, len, same, Checked};
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;

/// Sealed blocks of every GC pool, organised for the configured policy.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VictimIndex {
    policy: GcPolicy,
    fast: Dividers,
    units_per_block: u32,
    kind: Kind,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum Kind {
    /// Doubly linked lists per (pool, bucket), each in order of entry,
    /// with `stamp` the logical time a block entered its bucket.
    Buckets {
        head: Vec<u32>,
        tail: Vec<u32>,
        prev: Vec<u32>,
        next: Vec<u32>,
        stamp: Vec<u64>,
        min: Vec<u32>,
    },
    /// Blocks per pool in the order they were sealed.
    Fifo(Vec<VecDeque<u32>>),
    /// Sealed blocks per pool in no order, with each block's position.
    Set {
        members: Vec<Vec<u32>>,
        pos: Vec<u32>,
    },
}

impl VictimIndex {
    pub fn new(policy: GcPolicy, g: &Geometry) -> VictimIndex {
        let (pools, blocks, units_per_block) = (g.pools, g.blocks as usize, g.units_per_block);
        let kind = match policy {
            GcPolicy::Greedy | GcPolicy::CostBenefit => {
                let nb = pools as usize * (units_per_block as usize + 1);
                Kind::Buckets {
                    head: vec![NIL; nb],
                    tail: vec![NIL; nb],
                    prev: vec![NIL; blocks],
                    next: vec![NIL; blocks],
                    stamp: vec![0; blocks],
                    min: vec![units_per_block + 1; pools as usize],
                }
            }
            GcPolicy::Fifo => Kind::Fifo(vec![VecDeque::new(); pools as usize]),
            GcPolicy::Random | GcPolicy::DChoices(_) => Kind::Set {
                members: vec![Vec::new(); pools as usize],
                pos: vec![NIL; blocks],
            },
        };
        VictimIndex {
            policy,
            fast: g.fast,
            units_per_block,
            kind,
        }
    }

    #[inline]
    fn pool_of(&self, block: u32) -> usize {
        let plane = self.fast.planes.remainder(block);
        self.fast.planes_per_pool.quotient(plane) as usize
    }

    /// The bucket of a block with `valid` units of `capacity`.
    #[inline]
    fn level(&self, valid: u32, capacity: u32) -> u32 {
        if capacity == self.units_per_block {
            valid
        } else {
            (valid as u64 * self.units_per_block as u64 / capacity as u64) as u32
        }
    }

    #[inline]
    fn bucket(&self, pool: usize, level: u32) -> usize {
        pool * (self.units_per_block as usize + 1) + level as usize
    }

    /// A block of `capacity` units became sealed with `valid` valid units at logical time `now`.
    /// The victim policy.
    pub fn policy(&self) -> GcPolicy {
        self.policy
    }

    pub fn insert(&mut self, block: u32, valid: u32, capacity: u32, now: u64) {
        let pool = self.pool_of(block);
        let level = self.level(valid, capacity);
        match &mut self.kind {
            Kind::Buckets { .. } => self.push_bucket(block, pool, level, now),
            Kind::Fifo(q) => q[pool].push_back(block),
            Kind::Set { members, pos } => {
                pos[block as usize] = members[pool].len() as u32;
                members[pool].push(block);
            }
        }
    }

    /// A sealed block's valid count dropped from `valid + 1` to `valid`.
    #[inline]
    pub fn invalidated(&mut self, block: u32, valid: u32, capacity: u32, now: u64) {
        if let Kind::Buckets { .. } = self.kind {
            let pool = self.pool_of(block);
            self.unlink(block, pool, self.level(valid + 1, capacity));
            self.push_bucket(block, pool, self.level(valid, capacity), now);
        }
    }

    fn push_bucket(&mut self, block: u32, pool: usize, level: u32, now: u64) {
        let bi = self.bucket(pool, level);
        let Kind::Buckets {
            head,
            tail,
            prev,
            next,
            stamp,
            min,
        } = &mut self.kind
        else {
            unreachable!()
        };
        let b = block as usize;
        prev[b] = tail[bi];
        next[b] = NIL;
        if tail[bi] == NIL {
            head[bi] = block;
        } else {
            next[tail[bi] as usize] = block;
        }
        tail[bi] = block;
        stamp[b] = now;
        if level < min[pool] {
            min[pool] = level;
        }
    }

    fn unlink(&mut self, block: u32, pool: usize, level: u32) {
        let bi = self.bucket(pool, level);
        let Kind::Buckets {
            head,
            tail,
            prev,
            next,
            ..
        } = &mut self.kind
        else {
            unreachable!()
        };
        let b = block as usize;
        let (p, n) = (prev[b], next[b]);
        if p == NIL {
            head[bi] = n;
        } else {
            next[p as usize] = n;
        }
        if n == NIL {
            tail[bi] = p;
        } else {
            prev[n as usize] = p;
        }
    }

    /// ZombieNAND's GC (Algorithms 2 and 3) on greedy buckets: in the
    /// lowest bucket with a candidate, the early-switch block with the most
    /// life left, else the normal one with the most life left; a normal block
    /// with less life left than `life_threshold` × the average of its pool's
    /// normal blocks in its mode is skipped, and so are blocks with nothing
    /// invalid. Plain greedy if every block is skipped.
    pub fn take_wear_aware(
        &mut self,
        pool: u32,
        blocks: &BlockTable,
        life_threshold: f64,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        let p = pool as usize;
        let upb = self.units_per_block;
        let Kind::Buckets {
            head, next, min, ..
        } = &self.kind
        else {
            unreachable!("wear-aware GC runs on greedy buckets")
        };
        let base = p * (upb as usize + 1);
        let threshold = CellMode::ALL.map(|m| life_threshold * blocks.average_life(pool, m));
        for level in min[p]..upb {
            let mut best: Option<(bool, f64, u32)> = None;
            let mut b = head[base + level as usize];
            while b != NIL {
                let early = blocks.early[b as usize];
                let life = blocks.remaining_life(b);
                let better = match best {
                    None => true,
                    Some((e, l, _)) => (early, life) > (e, l),
                };
                let worn = life < threshold[blocks.mode[b as usize].index()];
                if (early || !worn) && better {
                    best = Some((early, life, b));
                }
                b = next[b as usize];
            }
            if let Some((.., victim)) = best {
                let (valid, capacity) = (
                    blocks.valid[victim as usize],
                    blocks.capacity[victim as usize],
                );
                self.remove(victim, self.level(valid, capacity));
                return Some(victim);
            }
        }
        self.take(pool, blocks, now, rng)
    }

    /// Chooses and removes a victim from `pool` (`blocks` gives valid
    /// counts and capacities); `now` is the logical clock for cost-benefit ages.
    pub fn take(
        &mut self,
        pool: u32,
        blocks: &BlockTable,
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        let valid = &blocks.valid;
        let p = pool as usize;
        let upb = self.units_per_block;
        let victim = match (&mut self.kind, self.policy) {
            (Kind::Buckets { head, min, .. }, GcPolicy::Greedy) => {
                let base = p * (upb as usize + 1);
                let mut v = min[p];
                while v <= upb && head[base + v as usize] == NIL {
                    v += 1;
                }
                min[p] = v;
                if v > upb {
                    return None;
                }
                head[base + v as usize]
            }
            (Kind::Buckets { head, stamp, .. }, _) => {
                // Cost-benefit (Rosenblum & Ousterhout): maximise (1 - u) / (2u) × age;
                // each bucket's head is its oldest entry, so only heads compete.
                let base = p * (upb as usize + 1);
                let mut best = NIL;
                let mut best_score = -1.0f64;
                for v in 0..=upb {
                    let h = head[base + v as usize];
                    if h == NIL {
                        continue;
                    }
                    if v == 0 {
                        best = h;
                        break;
                    }
                    let u = v as f64 / upb as f64;
                    let age = (now - stamp[h as usize]) as f64 + 1.0;
                    let score = (1.0 - u) / (2.0 * u) * age;
                    if score > best_score {
                        best_score = score;
                        best = h;
                    }
                }
                if best == NIL {
                    return None;
                }
                best
            }
            (Kind::Fifo(q), _) => return q[p].pop_front(),
            (Kind::Set { members, .. }, policy) => {
                let m = &members[p];
                if m.is_empty() {
                    return None;
                }
                let d = if let GcPolicy::DChoices(d) = policy {
                    d
                } else {
                    1
                };
                let mut best = m[rng.random_range(0..m.len())];
                for _ in 1..d {
                    let c = m[rng.random_range(0..m.len())];
                    if valid[c as usize] < valid[best as usize] {
                        best = c;
                    }
                }
                best
            }
        };
        let level = self.level(valid[victim as usize], blocks.capacity[victim as usize]);
        self.remove(victim, level);
        Some(victim)
    }

    /// Checks this (loaded) index against `fresh`, one its config builds:
    /// it holds exactly the sealed native blocks, each once, in its own
    /// pool (and, in buckets, in the bucket of its valid count, on lists
    /// whose links agree, entered no later than the logical clock `clock`).
    pub fn check_loaded(
        &self,
        fresh: &VictimIndex,
        g: &Geometry,
        blocks: &BlockTable,
        clock: u64,
    ) -> Checked {
        let settings = |v: &VictimIndex| (v.policy, v.fast, v.units_per_block);
        same(
            "the GC victim index's settings",
            &settings(self),
            &settings(fresh),
        )?;
        let n = g.blocks as usize;
        let mut seen = vec![false; n];
        let mut member = |b: u32, pool: usize| -> Checked {
            ensure((b as usize) < n, || {
                format!("the GC victim index holds block {b}, past the drive")
            })?;
            ensure(!std::mem::replace(&mut seen[b as usize], true), || {
                format!("block {b} is in the GC victim index twice")
            })?;
            ensure(g.pool_of_block(b) as usize == pool, || {
                format!("block {b} is in another GC pool's victim index")
            })
        };
        let pools = g.pools as u64;
        match (&self.kind, &fresh.kind) {
            (
                Kind::Buckets {
                    head,
                    tail,
                    prev,
                    next,
                    stamp,
                    min,
                },
                Kind::Buckets { head: h0, .. },
            ) => {
                len("victim buckets", head.len(), h0.len() as u64)?;
                len("victim bucket tails", tail.len(), h0.len() as u64)?;
                for (name, l) in [
                    ("prev", prev.len()),
                    ("next", next.len()),
                    ("stamp", stamp.len()),
                ] {
                    len(&format!("victim {name}"), l, n as u64)?;
                }
                len("victim min", min.len(), pools)?;
                let per_pool = self.units_per_block as usize + 1;
                for (bucket, &first) in head.iter().enumerate() {
                    let (pool, level) = (bucket / per_pool, (bucket % per_pool) as u32);
                    let (mut b, mut last) = (first, NIL);
                    while b != NIL {
                        member(b, pool)?;
                        let i = b as usize;
                        ensure(prev[i] == last, || {
                            format!("block {b}'s victim list links disagree")
                        })?;
                        ensure(
                            self.level(blocks.valid[i], blocks.capacity[i]) == level
                                && stamp[i] <= clock,
                            || format!("block {b} is in the wrong victim bucket"),
                        )?;
                        (last, b) = (b, next[i]);
                    }
                    ensure(tail[bucket] == last, || {
                        "a victim list's tail is not its last block".into()
                    })?;
                    ensure(first == NIL || min[pool] <= level, || {
                        "a victim bucket lies below its pool's lowest".into()
                    })?;
                }
            }
            (Kind::Fifo(queues), Kind::Fifo(_)) => {
                len("victim queues", queues.len(), pools)?;
                for (p, q) in queues.iter().enumerate() {
                    q.iter().try_for_each(|&b| member(b, p))?;
                }
            }
            (Kind::Set { members, pos }, Kind::Set { .. }) => {
                len("victim sets", members.len(), pools)?;
                len("victim positions", pos.len(), n as u64)?;
                for (p, m) in members.iter().enumerate() {
                    for (i, &b) in m.iter().enumerate() {
                        member(b, p)?;
                        ensure(pos[b as usize] == i as u32, || {
                            format!("block {b}'s position in its victim set is wrong")
                        })?;
                    }
                }
            }
            _ => return Err("the GC victim index is another policy's".into()),
        }
        let wrong = (0..n).find(|&b| {
            let sealed = blocks.state[b] == BlockState::Sealed && !blocks.in_cache[b];
            seen[b] != sealed
        });
        ensure(wrong.is_none(), || {
            format!(
                "block {} is {} the GC victim index",
                wrong.unwrap_or(0),
                if seen[wrong.unwrap_or(0)] {
                    "not sealed but in"
                } else {
                    "sealed but not in"
                }
            )
        })
    }

    /// Removes a sealed block (about to be erased) from bucket `level`.
    fn remove(&mut self, block: u32, level: u32) {
        let pool = self.pool_of(block);
        match &mut self.kind {
            Kind::Buckets { .. } => self.unlink(block, pool, level),
            Kind::Fifo(_) => unreachable!("FIFO victims are popped"),
            Kind::Set { members, pos } => {
                let i = pos[block as usize] as usize;
                let m = &mut members[pool];
                let last = *m.last().unwrap();
                m.swap_remove(i);
                if last != block {
                    pos[last as usize] = i as u32;
                }
                pos[block as usize] = NIL;
            }
        }
    }
}
