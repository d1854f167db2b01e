//! ZombieNAND's usage table over the utilisation buckets (Algorithms 2 and
//! 3 with the strict skip): for each bucket a wear-aware victim choice has
//! looked into, its blocks ordered by kind (early-switch pool or not, bit
//! mode) and remaining life, the oldest entry first among equals. A choice
//! then reads the longest-lived block of each of the eight kinds instead of
//! scanning the bucket: within a kind every block is judged by the same
//! limits (the mode's average, the pool's lead floor) and holds the same
//! valid count, so the longest-lived one passes if any does, and the scan's
//! winner — the most (early, life), the oldest entry on ties — is the best of
//! the eight.
//!
//! A bucket's order is built the first time it is looked into holding
//! [`INDEXED`] blocks or more (from its list, in entry order) and kept as
//! blocks enter and leave it until it holds fewer than half that; a smaller
//! bucket is scanned (as fast, and nothing to keep), and buckets never
//! looked into cost a count. A block's kind and life do not change while
//! it is sealed (wear comes with its erase). None of it is in a snapshot: a
//! loaded index rebuilds it when first asked.

use super::buckets::Buckets;
use crate::ftl::blocks::{total_order_key, BlockTable};
use std::cmp::Reverse;
use std::collections::BTreeSet;

const NIL: u32 = u32::MAX;

/// (kind, life's `total_order_key`, entry number reversed, block): the
/// last of a kind's range is its longest-lived block, the oldest among equals.
type Key = (u8, u64, Reverse<u64>, u32);

/// Blocks from which a bucket looked into is ordered rather than scanned
/// (under test, nearly every bucket: the order is what they check).
pub const INDEXED: u32 = if cfg!(test) { 2 } else { 64 };

#[derive(Debug, Clone, Default)]
pub struct LifeIndex {
    /// Per block: its kind and life as sealed (every sealed block's once
    /// `ranked`), and when it entered a bucket that has an order.
    rank: Vec<(u8, u64)>,
    entered: Vec<u64>,
    /// Per bucket, its blocks (once `ranked`), and their order if it has
    /// been looked into since it last held fewer than `INDEXED` / 2.
    count: Vec<u32>,
    order: Vec<Option<BTreeSet<Key>>>,
    next: u64,
    ranked: bool,
}

impl LifeIndex {
    /// A block's kind (early-switch pool or not, and its bit mode) and
    /// its remaining life's [`total_order_key`].
    fn rank_of(blocks: &BlockTable, block: u32) -> (u8, u64) {
        let i = block as usize;
        let kind = blocks.early()[i] as u8 * 4 + blocks.mode()[i].index() as u8;
        (kind, total_order_key(blocks.remaining_life(block)))
    }

    /// Block `block`'s key from its rank and entry (taken apart so that
    /// a bucket's order can be borrowed beside them).
    fn key(rank: &[(u8, u64)], entered: &[u64], block: u32) -> Key {
        let (kind, life) = rank[block as usize];
        (kind, life, Reverse(entered[block as usize]), block)
    }

    /// Sealed block `block` is filed in `bucket` (its entry is the newest).
    pub fn sealed(&mut self, block: u32, bucket: usize, blocks: &BlockTable) {
        if self.ranked {
            self.rank[block as usize] = Self::rank_of(blocks, block);
            self.entered_bucket(block, bucket);
        }
    }

    /// Block `block` entered `bucket`, as its newest entry.
    #[inline]
    pub fn entered_bucket(&mut self, block: u32, bucket: usize) {
        if !self.ranked {
            return;
        }
        self.count[bucket] += 1;
        if let Some(set) = &mut self.order[bucket] {
            self.entered[block as usize] = self.next;
            self.next += 1;
            set.insert(Self::key(&self.rank, &self.entered, block));
        }
    }

    /// Block `block` left `bucket`.
    #[inline]
    pub fn left_bucket(&mut self, block: u32, bucket: usize) {
        if !self.ranked {
            return;
        }
        self.count[bucket] -= 1;
        if self.count[bucket] < INDEXED / 2 {
            self.order[bucket] = None;
        } else if let Some(set) = &mut self.order[bucket] {
            set.remove(&Self::key(&self.rank, &self.entered, block));
        }
    }

    /// Whether `bucket` is read through its order (it holds `INDEXED`
    /// blocks or more), this index ranking every block first if it has not
    /// since it was built or loaded.
    pub fn ordered(&mut self, bucket: usize, lists: &Buckets, blocks: &BlockTable) -> bool {
        if !self.ranked {
            let n = blocks.valid().len();
            self.rank = (0..n as u32).map(|b| Self::rank_of(blocks, b)).collect();
            self.entered = vec![0; n];
            self.count = (0..lists.head.len())
                .map(|bucket| {
                    let (mut b, mut count) = (lists.head[bucket], 0);
                    while b != NIL {
                        count += 1;
                        b = lists.next[b as usize];
                    }
                    count
                })
                .collect();
            self.order = vec![None; lists.head.len()];
            self.ranked = true;
        }
        self.count[bucket] >= INDEXED
    }

    /// The order of `bucket` (built now if it has none; see [`Self::ordered`]).
    fn order_of(&mut self, bucket: usize, lists: &Buckets) -> &BTreeSet<Key> {
        if self.order[bucket].is_none() {
            let mut set = BTreeSet::new();
            let mut b = lists.head[bucket];
            while b != NIL {
                self.entered[b as usize] = self.next;
                self.next += 1;
                set.insert(Self::key(&self.rank, &self.entered, b));
                b = lists.next[b as usize];
            }
            self.order[bucket] = Some(set);
        }
        self.order[bucket].as_ref().expect("built above")
    }

    /// The longest-lived block of each kind in `bucket` (the oldest entry
    /// among equals) and its entry number (later entries are larger); for a
    /// bucket [`Self::ordered`] said is.
    pub fn best_of_kinds<'a>(
        &'a mut self,
        bucket: usize,
        lists: &Buckets,
    ) -> impl Iterator<Item = (u32, u64)> + 'a {
        let order = self.order_of(bucket, lists);
        (0..8u8).filter_map(move |kind| {
            let lo = (kind, 0, Reverse(u64::MAX), 0);
            let hi = (kind, u64::MAX, Reverse(0), u32::MAX);
            let &(_, _, Reverse(entered), block) = order.range(lo..=hi).next_back()?;
            Some((block, entered))
        })
    }
}
