//! GC victim selection per plane, in O(1) amortised per operation (no scan of
//! all blocks): valid-count buckets for greedy and cost-benefit, a seal-order
//! queue for FIFO, an indexable set for random and d-choices sampling.

use crate::config::GcPolicy;
use crate::geometry::FastDiv;
use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;

/// Sealed blocks of every plane, organised for the configured policy.
#[derive(Debug, Clone)]
pub struct VictimIndex {
    policy: GcPolicy,
    planes: FastDiv,
    units_per_block: u32,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// Doubly linked lists per (plane, valid count), each in order of entry,
    /// with `stamp` the logical time a block entered its bucket.
    Buckets {
        head: Vec<u32>,
        tail: Vec<u32>,
        prev: Vec<u32>,
        next: Vec<u32>,
        stamp: Vec<u64>,
        min: Vec<u32>,
    },
    /// Blocks per plane in the order they were sealed.
    Fifo(Vec<VecDeque<u32>>),
    /// Sealed blocks per plane in no order, with each block's position.
    Set {
        members: Vec<Vec<u32>>,
        pos: Vec<u32>,
    },
}

impl VictimIndex {
    pub fn new(
        policy: GcPolicy,
        planes: u32,
        blocks_per_plane: u32,
        units_per_block: u32,
    ) -> VictimIndex {
        let blocks = (planes * blocks_per_plane) as usize;
        let kind = match policy {
            GcPolicy::Greedy | GcPolicy::CostBenefit => {
                let nb = planes as usize * (units_per_block as usize + 1);
                Kind::Buckets {
                    head: vec![NIL; nb],
                    tail: vec![NIL; nb],
                    prev: vec![NIL; blocks],
                    next: vec![NIL; blocks],
                    stamp: vec![0; blocks],
                    min: vec![units_per_block + 1; planes as usize],
                }
            }
            GcPolicy::Fifo => Kind::Fifo(vec![VecDeque::new(); planes as usize]),
            GcPolicy::Random | GcPolicy::DChoices(_) => Kind::Set {
                members: vec![Vec::new(); planes as usize],
                pos: vec![NIL; blocks],
            },
        };
        VictimIndex {
            policy,
            planes: FastDiv::new(planes),
            units_per_block,
            kind,
        }
    }

    #[inline]
    fn bucket(&self, plane: usize, valid: u32) -> usize {
        plane * (self.units_per_block as usize + 1) + valid as usize
    }

    /// A block became sealed with `valid` valid units at logical time `now`.
    pub fn insert(&mut self, block: u32, valid: u32, now: u64) {
        let plane = self.planes.remainder(block) as usize;
        match &mut self.kind {
            Kind::Buckets { .. } => self.push_bucket(block, plane, valid, now),
            Kind::Fifo(q) => q[plane].push_back(block),
            Kind::Set { members, pos } => {
                pos[block as usize] = members[plane].len() as u32;
                members[plane].push(block);
            }
        }
    }

    /// A sealed block's valid count dropped from `valid + 1` to `valid`.
    #[inline]
    pub fn invalidated(&mut self, block: u32, valid: u32, now: u64) {
        if let Kind::Buckets { .. } = self.kind {
            let plane = self.planes.remainder(block) as usize;
            self.unlink(block, plane, valid + 1);
            self.push_bucket(block, plane, valid, now);
        }
    }

    fn push_bucket(&mut self, block: u32, plane: usize, valid: u32, now: u64) {
        let bi = self.bucket(plane, valid);
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
        if valid < min[plane] {
            min[plane] = valid;
        }
    }

    fn unlink(&mut self, block: u32, plane: usize, valid: u32) {
        let bi = self.bucket(plane, valid);
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

    /// Chooses and removes a victim from `plane`. `valid` gives each block's
    /// valid count; `now` is the logical clock for cost-benefit ages.
    pub fn take(
        &mut self,
        plane: u32,
        valid: &[u32],
        now: u64,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Option<u32> {
        let p = plane as usize;
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
        self.remove(victim, valid[victim as usize]);
        Some(victim)
    }

    /// Removes a sealed block (about to be erased).
    fn remove(&mut self, block: u32, valid: u32) {
        let plane = self.planes.remainder(block) as usize;
        match &mut self.kind {
            Kind::Buckets { .. } => self.unlink(block, plane, valid),
            Kind::Fifo(_) => unreachable!("FIFO victims are popped"),
            Kind::Set { members, pos } => {
                let i = pos[block as usize] as usize;
                let m = &mut members[plane];
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
