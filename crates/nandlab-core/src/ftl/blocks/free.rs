//! A GC pool's erased blocks: in the order they were erased (what a FIFO
//! frontier opens, and what a snapshot holds), and — once wear levelling
//! first asks — by remaining life, so that the block with the most life
//! left (the oldest of those tied) is found in O(log n), not by a scan of
//! every erased block (a pristine drive's are all of them).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

/// A key that orders `x` as `f64::total_cmp` does.
#[inline]
pub fn total_order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

#[derive(Debug, Clone, Default)]
pub struct FreeQueue {
    /// Entry number → (block, its life's [`total_order_key`]), oldest first.
    order: BTreeMap<u64, (u32, u64)>,
    /// (life, oldest first, block) of every member, built when wear
    /// levelling first opens a block (a block's life does not change while
    /// it is erased: wear comes with the next erase).
    by_life: Option<BTreeSet<(u64, Reverse<u64>, u32)>>,
    next: u64,
}

impl FreeQueue {
    /// Block `block`, with `life` erases left, joins as the newest.
    pub fn push_back(&mut self, block: u32, life: f64) {
        let (n, key) = (self.next, total_order_key(life));
        self.next += 1;
        self.order.insert(n, (block, key));
        if let Some(by_life) = &mut self.by_life {
            by_life.insert((key, Reverse(n), block));
        }
    }

    /// Takes the oldest.
    pub fn pop_front(&mut self) -> Option<u32> {
        let (n, (block, key)) = self.order.pop_first()?;
        if let Some(by_life) = &mut self.by_life {
            by_life.remove(&(key, Reverse(n), block));
        }
        Some(block)
    }

    /// Takes the block with the most life left, the oldest of those tied;
    /// `life` gives a block's when the order by life is first built (a
    /// queue read from a snapshot holds only its blocks).
    pub fn pop_longest_lived(&mut self, life: impl Fn(u32) -> f64) -> Option<u32> {
        let order = &mut self.order;
        let by_life = self.by_life.get_or_insert_with(|| {
            order
                .iter_mut()
                .map(|(&n, (b, key))| {
                    *key = total_order_key(life(*b));
                    (*key, Reverse(n), *b)
                })
                .collect()
        });
        let (_, Reverse(n), block) = by_life.pop_last()?;
        self.order.remove(&n);
        Some(block)
    }

    /// Takes `block` out if it is here (after a power cut: O(n)).
    pub fn remove(&mut self, block: u32) {
        let Some((n, key)) = self
            .order
            .iter()
            .find_map(|(&n, &(b, key))| (b == block).then_some((n, key)))
        else {
            return;
        };
        self.order.remove(&n);
        if let Some(by_life) = &mut self.by_life {
            by_life.remove(&(key, Reverse(n), block));
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The blocks, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &u32> + '_ {
        self.order.values().map(|(b, _)| b)
    }
}

/// As the blocks, oldest first (a snapshot's free queue is a list).
impl Serialize for FreeQueue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for FreeQueue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FreeQueue, D::Error> {
        let blocks = Vec::<u32>::deserialize(d)?;
        let next = blocks.len() as u64;
        Ok(FreeQueue {
            order: (0..).zip(blocks.into_iter().map(|b| (b, 0))).collect(),
            by_life: None,
            next,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_orders_as_total_cmp() {
        let xs = [
            f64::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            1.0,
            7.5,
            f64::INFINITY,
        ];
        for a in xs {
            for b in xs {
                assert_eq!(
                    total_order_key(a).cmp(&total_order_key(b)),
                    a.total_cmp(&b),
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn the_longest_lived_is_the_scan_s_choice() {
        // Against the scan it replaces: the most life, the oldest on ties,
        // with FIFO pops and removals between.
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let life = |b: u32| (b % 5) as f64;
        let (mut q, mut scan) = (FreeQueue::default(), std::collections::VecDeque::new());
        for step in 0..5_000u32 {
            match rng.random_range(0..4) {
                0 | 1 => {
                    q.push_back(step, life(step));
                    scan.push_back(step);
                }
                2 => {
                    let at = (0..scan.len())
                        .max_by(|&i, &j| life(scan[i]).total_cmp(&life(scan[j])).then(j.cmp(&i)));
                    let want = at.and_then(|at| scan.remove(at));
                    assert_eq!(q.pop_longest_lived(life), want);
                }
                _ if step % 7 == 0 => {
                    let b = scan.get(scan.len() / 2).copied().unwrap_or(0);
                    scan.retain(|&x| x != b);
                    q.remove(b);
                }
                _ => assert_eq!(q.pop_front(), scan.pop_front()),
            }
            assert!(q.iter().eq(scan.iter()));
        }
    }

    #[test]
    fn a_snapshot_holds_the_blocks_oldest_first() {
        let mut q = FreeQueue::default();
        for b in [5, 3, 9] {
            q.push_back(b, 1.0);
        }
        let json = serde_json::to_string(&q).unwrap();
        assert_eq!(json, "[5,3,9]");
        let back: FreeQueue = serde_json::from_str(&json).unwrap();
        assert!(back.iter().eq(q.iter()));
    }
}
