//! The blocks each GC pool writes into now, one per stream of writes: the
//! host's, the pSLC cache's and GC's own (relocations, folds, recovery). A
//! block is the frontier of at most one stream, and leaves it when sealed.
//! A new stream (a second host frontier for cold data, say) is one more
//! [`Frontier`]: sealing, recovery's rebuild and the snapshot check go over
//! them all.

use super::NIL;
use crate::geometry::Geometry;
use crate::sanity::{ensure, indices, len, Checked};
use serde::{Deserialize, Serialize};

/// A stream of writes with a block of its own in each pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frontier {
    /// Host writes to native blocks.
    Host,
    /// Host writes to the pSLC cache.
    Cache,
    /// GC's copies: relocations, folds, recovery's moves.
    Gc,
    /// Host writes of data the hot/cold identifier finds hot (`hot_cold.rs`).
    Hot,
}

impl Frontier {
    pub const ALL: [Frontier; 4] = [Frontier::Host, Frontier::Cache, Frontier::Gc, Frontier::Hot];

    /// The streams host writes to native blocks go to, each with a page of
    /// its own open (`Alloc::open`, in this order).
    pub const HOST: [Frontier; 2] = [Frontier::Host, Frontier::Hot];

    /// Its place in [`Frontier::HOST`] (a host stream's).
    #[inline]
    pub fn host_index(self) -> usize {
        Frontier::HOST
            .iter()
            .position(|&s| s == self)
            .expect("a host stream")
    }

    /// What errors and snapshot checks call it.
    pub fn name(self) -> &'static str {
        match self {
            Frontier::Host => "host frontier",
            Frontier::Cache => "cache frontier",
            Frontier::Gc => "GC frontier",
            Frontier::Hot => "hot-data frontier",
        }
    }
}

/// Each stream's frontier block in each pool (NIL: none open).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Frontiers {
    blocks: [Vec<u32>; Frontier::ALL.len()],
}

impl Frontiers {
    pub fn new(g: &Geometry) -> Frontiers {
        Frontiers {
            blocks: std::array::from_fn(|_| vec![NIL; g.pools as usize]),
        }
    }

    /// `stream`'s frontier in `pool` (NIL: none).
    #[inline]
    pub fn get(&self, stream: Frontier, pool: u32) -> u32 {
        self.blocks[stream as usize][pool as usize]
    }

    #[inline]
    pub fn set(&mut self, stream: Frontier, pool: u32, b: u32) {
        self.blocks[stream as usize][pool as usize] = b;
    }

    /// `stream`'s frontier in `pool`, which no longer has one.
    pub fn take(&mut self, stream: Frontier, pool: u32) -> u32 {
        std::mem::replace(&mut self.blocks[stream as usize][pool as usize], NIL)
    }

    /// Block `b` of `pool` was sealed: no stream writes to it any more.
    pub fn left(&mut self, pool: u32, b: u32) {
        for stream in &mut self.blocks {
            if stream[pool as usize] == b {
                stream[pool as usize] = NIL;
            }
        }
    }

    /// Whether block `b` of `pool` is some stream's frontier.
    pub fn holds(&self, pool: u32, b: u32) -> bool {
        self.blocks.iter().any(|s| s[pool as usize] == b)
    }

    /// Every frontier that `keep` refuses is dropped (recovery: blocks a cut
    /// left sealed or erased).
    pub fn keep_only(&mut self, keep: impl Fn(u32) -> bool) {
        for b in self.blocks.iter_mut().flatten() {
            if *b != NIL && !keep(*b) {
                *b = NIL;
            }
        }
    }

    /// Each stream with its frontiers, pool by pool.
    pub fn streams(&self) -> impl Iterator<Item = (Frontier, &[u32])> {
        Frontier::ALL
            .into_iter()
            .map(|s| (s, self.blocks[s as usize].as_slice()))
    }

    /// Checks loaded frontiers: one per pool and stream, each a block of its
    /// own pool or none, no block two streams'.
    pub fn check_loaded(&self, g: &Geometry) -> Checked {
        for (stream, blocks) in self.streams() {
            let name = stream.name();
            len(name, blocks.len(), g.pools as u64)?;
            indices(name, blocks, g.blocks as u64, true)?;
            let misplaced = blocks
                .iter()
                .enumerate()
                .find(|&(p, &b)| b != NIL && g.pool_of_block(b) != p as u32);
            ensure(misplaced.is_none(), || {
                format!("a {name} is a block of another GC pool")
            })?;
        }
        ensure(
            (0..g.pools as usize).all(|p| {
                let open: Vec<u32> = self
                    .blocks
                    .iter()
                    .map(|s| s[p])
                    .filter(|&b| b != NIL)
                    .collect();
                open.iter().enumerate().all(|(i, b)| !open[..i].contains(b))
            }),
            || "a block is the frontier of two streams".into(),
        )
    }
}
