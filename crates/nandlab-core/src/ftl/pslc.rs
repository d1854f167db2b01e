//! The pSLC cache: host writes land in blocks run as SLC (static blocks set
//! aside for life, or native blocks borrowed while the drive has room —
//! dynamic, until it has used a share of its rated cycles); folding copies a
//! cache block's valid data into native blocks (oldest first: in idle time,
//! when the cache is full, or when GC needs a dynamic cache's blocks back);
//! direct-write sends a long sequential stream past a full cache straight to
//! native blocks. Its state lives here.

use super::{Ftl, NIL};
use crate::config::{Config, PslcConfig, PslcKind};
use crate::ftl::blocks::{BlockState, BlockTable};
use crate::geometry::Geometry;
use crate::sanity::{ensure, indices, len, Checked};
use crate::schedule::timeline::Timeline;
use crate::SimError;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The cache's settings and state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pslc {
    pub(super) cfg: PslcConfig,
    /// The cache frontier block of each pool.
    pub(super) frontier: Vec<u32>,
    /// Sealed static and dynamic cache blocks per pool, oldest first (the fold order).
    pub(super) static_fifo: Vec<VecDeque<u32>>,
    pub(super) dynamic_fifo: Vec<VecDeque<u32>>,
    /// Native blocks per pool now run as dynamic cache (open or sealed).
    pub(super) dynamic_in_use: Vec<u32>,
    /// The dynamic cache is on (until the drive has used `static_after` of its rated cycles).
    pub(super) dynamic_active: bool,
    /// Sequential-stream detection for direct-write: the unit after the last
    /// one written, and how many units the current stream has.
    pub(super) next_lpn: u32,
    pub(super) stream_units: u64,
    pub(super) direct_after_units: u64,
}

impl Pslc {
    pub fn new(cfg: &Config) -> Pslc {
        let g = &cfg.geometry;
        let p = &cfg.ftl.pslc;
        Pslc {
            cfg: p.clone(),
            frontier: vec![NIL; g.pools as usize],
            static_fifo: vec![VecDeque::new(); g.pools as usize],
            dynamic_fifo: vec![VecDeque::new(); g.pools as usize],
            dynamic_in_use: vec![0; g.pools as usize],
            dynamic_active: p.kind == PslcKind::Dynamic,
            next_lpn: NIL,
            stream_units: 0,
            direct_after_units: p.direct_write_after.div_ceil(g.unit_size as u64),
        }
    }

    /// Checks a loaded cache state (its frontier is checked with the
    /// others'): its queues hold exactly the sealed cache blocks of their
    /// pools, each once; the dynamic cache's counts add up; the stream
    /// detector points inside the drive.
    pub(super) fn check_loaded(&self, g: &Geometry, t: &BlockTable) -> Checked {
        let pools = g.pools as u64;
        len("dynamic_in_use", self.dynamic_in_use.len(), pools)?;
        for (name, fifos) in [
            ("static cache queue", &self.static_fifo),
            ("dynamic cache queue", &self.dynamic_fifo),
        ] {
            len(name, fifos.len(), pools)?;
            for (p, fifo) in fifos.iter().enumerate() {
                indices(name, fifo, g.blocks as u64, false)?;
                ensure(fifo.iter().all(|&b| g.pool_of_block(b) == p as u32), || {
                    format!("a {name} holds a block of another GC pool")
                })?;
            }
        }
        // The cache queues hold exactly the sealed cache blocks, each once
        // (as the victim index holds the sealed native ones).
        let mut queued = vec![false; g.blocks as usize];
        for (fifos, statics) in [(&self.static_fifo, true), (&self.dynamic_fifo, false)] {
            for &b in fifos.iter().flatten() {
                let i = b as usize;
                let cached = t.in_cache()[i] && t.static_cache()[i] == statics;
                ensure(
                    !std::mem::replace(&mut queued[i], true)
                        && cached
                        && t.state()[i] == BlockState::Sealed,
                    || format!("block {b} should not be in a cache queue"),
                )?;
            }
        }
        let sealed_cache = |b: usize| t.in_cache()[b] && t.state()[b] == BlockState::Sealed;
        ensure(
            (0..g.blocks as usize).all(|b| queued[b] == sealed_cache(b)),
            || "a sealed cache block is in no cache queue".into(),
        )?;
        // A dynamic block counts from its opening to its erase: a fold under
        // way (a victim) still holds it.
        let mut dynamic = vec![0u32; g.pools as usize];
        for b in 0..g.blocks as usize {
            let in_use = matches!(
                t.state()[b],
                BlockState::Open | BlockState::Sealed | BlockState::Victim
            );
            dynamic[g.pool_of_block(b as u32) as usize] +=
                (t.in_cache()[b] && !t.static_cache()[b] && in_use) as u32;
        }
        ensure(dynamic == self.dynamic_in_use, || {
            "the dynamic cache's block counts do not add up".into()
        })?;
        ensure(
            self.next_lpn == NIL || (self.next_lpn as u64) <= g.user_units,
            || "the sequential-stream detector points past the drive".into(),
        )
    }
}

impl Ftl {
    /// Whether the dynamic cache may run one more of `pool`'s native blocks
    /// as SLC: it is still on, under its limit, and free native blocks stay
    /// above the high watermark (so the cache shrinks as the drive fills).
    pub(super) fn dynamic_may_open(&mut self, pool: u32) -> bool {
        if self.pslc.dynamic_active && self.blocks.wear_used() + 1e-9 >= self.pslc.cfg.static_after
        {
            // Worn past the share of rated cycles a dynamic cache may use: static from now on.
            self.pslc.dynamic_active = false;
        }
        self.pslc.dynamic_active
            && self.pslc.dynamic_in_use[pool as usize] < self.pslc.cfg.dynamic_blocks
            && self.blocks.free_count(pool) > self.gc.stop
    }

    /// Whether `pool`'s cache can take a page without folding first.
    pub(super) fn cache_has_room(&mut self, pool: u32) -> bool {
        let p = pool as usize;
        self.pslc.frontier[p] != NIL
            || !self.blocks.cache_free()[p].is_empty()
            || self.dynamic_may_open(pool)
    }

    /// The pool's pSLC frontier block, opened if needed: a free static cache
    /// block, else a native block run as SLC (dynamic cache), else room made
    /// by folding the oldest static cache block. NIL when the cache cannot
    /// take data (no static blocks, dynamic cache at its limit): the page
    /// goes to a native block.
    pub(super) fn cache_frontier(
        &mut self,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
    ) -> Result<u32, SimError> {
        let p = pool as usize;
        while self.pslc.frontier[p] == NIL {
            if let Some(b) = self.blocks.open_static(pool) {
                self.opened(b, now);
                self.pslc.frontier[p] = b;
            } else if self.dynamic_may_open(pool) {
                let b = self
                    .blocks
                    .open_dynamic(pool)
                    .expect("free native blocks counted");
                self.pslc.dynamic_in_use[p] += 1;
                self.opened(b, now);
                self.pslc.frontier[p] = b;
            } else if let Some(v) = self.pslc.static_fifo[p].pop_front() {
                self.fold(v, pool, now, tl)?;
            } else {
                return Ok(NIL);
            }
        }
        Ok(self.pslc.frontier[p])
    }

    /// Takes `pool`'s partly written cache frontier off the write path, for
    /// folding, if it holds data and nothing waits in RAM for it.
    pub(super) fn take_idle_cache_frontier(&mut self, pool: u32) -> Option<u32> {
        let b = self.pslc.frontier[pool as usize];
        let bi = b as usize;
        let idle = b != NIL
            && self.blocks.written()[bi] > 0
            && self.blocks.written()[bi] == self.blocks.programmed()[bi];
        idle.then(|| std::mem::replace(&mut self.pslc.frontier[pool as usize], NIL))
    }

    /// Folds cache block `v` into native blocks, first making sure GC has
    /// the free native blocks the copies need.
    pub(super) fn fold(
        &mut self,
        v: u32,
        pool: u32,
        now: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        if self.blocks.free_count(pool) < self.gc.start {
            self.collect(pool, now, tl, self.gc.start)?;
        }
        self.relocate(v, pool, now, tl)
    }

    /// Valid units held in pSLC cache blocks.
    pub fn cache_units(&self) -> u64 {
        if self.pslc.cfg.kind == PslcKind::Off {
            return 0;
        }
        let cached = |(&v, &c): (&u32, &bool)| if c { v as u64 } else { 0 };
        self.blocks
            .valid()
            .iter()
            .zip(self.blocks.in_cache())
            .map(cached)
            .sum()
    }
}
