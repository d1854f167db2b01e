//! The pSLC cache: host writes land in blocks run as SLC (static blocks set
//! aside for life, or native blocks borrowed while the drive has room —
//! dynamic, until it has used a share of its rated cycles); folding copies a
//! cache block's valid data into native blocks (oldest first: in idle time,
//! when the cache is full, or when GC needs a dynamic cache's blocks back);
//! direct-write sends a long sequential stream past a full cache straight to
//! native blocks. Its state lives here.

use super::frontiers::Frontier;
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
    cfg: PslcConfig,
    /// Sealed static and dynamic cache blocks per pool, oldest first (the fold order).
    static_fifo: Vec<VecDeque<u32>>,
    dynamic_fifo: Vec<VecDeque<u32>>,
    /// Native blocks per pool now run as dynamic cache (open or sealed).
    dynamic_in_use: Vec<u32>,
    /// The dynamic cache is on (until the drive has used `static_after` of its rated cycles).
    dynamic_active: bool,
    /// Sequential-stream detection for direct-write: the unit after the last
    /// one written, and how many units the current stream has.
    next_lpn: u32,
    stream_units: u64,
    direct_after_units: u64,
}

impl Pslc {
    pub fn new(cfg: &Config) -> Pslc {
        let g = &cfg.geometry;
        let p = &cfg.ftl.pslc;
        Pslc {
            cfg: p.clone(),
            static_fifo: vec![VecDeque::new(); g.pools as usize],
            dynamic_fifo: vec![VecDeque::new(); g.pools as usize],
            dynamic_in_use: vec![0; g.pools as usize],
            dynamic_active: p.kind == PslcKind::Dynamic,
            next_lpn: NIL,
            stream_units: 0,
            direct_after_units: p.direct_write_after.div_ceil(g.unit_size as u64),
        }
    }

    /// Whether the drive has a pSLC cache.
    #[inline]
    pub(super) fn is_on(&self) -> bool {
        self.cfg.kind != PslcKind::Off
    }

    /// Direct-write's stream detector sees host unit `lpn` written.
    #[inline]
    pub(super) fn note_host_unit(&mut self, lpn: u32) {
        if self.cfg.direct_write {
            self.stream_units = if lpn == self.next_lpn {
                self.stream_units + 1
            } else {
                1
            };
            self.next_lpn = lpn.wrapping_add(1);
        }
    }

    /// Whether host writes are a sequential stream long enough to skip a
    /// cache with no room (direct-write).
    pub(super) fn in_long_stream(&self) -> bool {
        self.cfg.direct_write && self.stream_units >= self.direct_after_units
    }

    /// Files sealed cache block `b` of `pool` in its cache's fold queue: as
    /// the newest, or as the oldest (a block recovery gives back).
    pub(super) fn file_sealed(&mut self, pool: u32, b: u32, statics: bool, oldest: bool) {
        let fifos = if statics {
            &mut self.static_fifo
        } else {
            &mut self.dynamic_fifo
        };
        let queue = &mut fifos[pool as usize];
        if oldest {
            queue.push_front(b);
        } else {
            queue.push_back(b);
        }
    }

    /// `pool`'s oldest sealed dynamic cache block, taken off its queue (GC
    /// empties the dynamic cache before any native victim).
    pub(super) fn take_oldest_dynamic(&mut self, pool: u32) -> Option<u32> {
        self.dynamic_fifo[pool as usize].pop_front()
    }

    /// `pool`'s oldest sealed cache block, static first, taken off its
    /// queue to fold while the die idles (None: no idle folding).
    pub(super) fn take_to_fold_idle(&mut self, pool: u32) -> Option<u32> {
        let p = pool as usize;
        if !self.cfg.fold_idle {
            return None;
        }
        self.static_fifo[p]
            .pop_front()
            .or_else(|| self.dynamic_fifo[p].pop_front())
    }

    /// Whether the cache folds while dies idle.
    pub(super) fn folds_idle(&self) -> bool {
        self.cfg.fold_idle
    }

    /// A native block of `pool` run as dynamic cache was erased (`-1`) or
    /// found by recovery holding data (`+1`).
    pub(super) fn count_dynamic(&mut self, pool: u32, change: i32) {
        let n = &mut self.dynamic_in_use[pool as usize];
        if change < 0 {
            *n -= change.unsigned_abs();
        } else {
            *n += change as u32;
        }
    }

    /// After a power cut: no stream, empty queues and counts, for recovery to
    /// refill from what the flash holds.
    pub(super) fn power_lost(&mut self) {
        self.next_lpn = NIL;
        self.stream_units = 0;
        for fifo in self
            .static_fifo
            .iter_mut()
            .chain(self.dynamic_fifo.iter_mut())
        {
            fifo.clear();
        }
        self.dynamic_in_use.fill(0);
    }

    /// Its settings, as a snapshot check compares them with the config's.
    pub(super) fn settings(&self) -> (&PslcConfig, u64) {
        (&self.cfg, self.direct_after_units)
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
        self.frontiers.get(Frontier::Cache, pool) != NIL
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
        while self.frontiers.get(Frontier::Cache, pool) == NIL {
            if let Some(b) = self.blocks.open_static(pool) {
                self.opened(b, now);
                self.frontiers.set(Frontier::Cache, pool, b);
            } else if self.dynamic_may_open(pool) {
                let b = self
                    .blocks
                    .open_dynamic(pool)
                    .expect("free native blocks counted");
                self.pslc.dynamic_in_use[p] += 1;
                self.opened(b, now);
                self.frontiers.set(Frontier::Cache, pool, b);
            } else if let Some(v) = self.pslc.static_fifo[p].pop_front() {
                self.fold(v, pool, now, tl)?;
            } else {
                return Ok(NIL);
            }
        }
        Ok(self.frontiers.get(Frontier::Cache, pool))
    }

    /// Takes `pool`'s partly written cache frontier off the write path, for
    /// folding, if it holds data and nothing waits in RAM for it.
    pub(super) fn take_idle_cache_frontier(&mut self, pool: u32) -> Option<u32> {
        let b = self.frontiers.get(Frontier::Cache, pool);
        let bi = b as usize;
        let idle = b != NIL
            && self.blocks.written()[bi] > 0
            && self.blocks.written()[bi] == self.blocks.programmed()[bi];
        idle.then(|| self.frontiers.take(Frontier::Cache, pool))
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
