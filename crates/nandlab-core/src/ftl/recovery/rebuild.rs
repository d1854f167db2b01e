//! Rebuilding after a cut: blocks being written go on past what the cut
//! left of them, blocks whose erase was pending are settled (their data
//! moved out, the erase booked again, or the erase called off), and the
//! frontiers, victim index and cache queues are filed again.

use super::Copy;
use crate::config::WriteCache;
use crate::ftl::blocks::BlockState;
use crate::ftl::frontiers::Frontier;
use crate::ftl::{Ftl, NIL};
use crate::power::{PowerModel, SlotAtCut};
use crate::schedule::timeline::Timeline;
use crate::SimError;

impl Ftl {
    /// Live block `b` after a cut at `t`: what is not readable reads as
    /// empty from now on, and the block's write pointer goes back to the
    /// first page the cut found erased (past the whole wordline of a
    /// program cut short); pages the capacitors programmed count as
    /// programmed at `t`. A block being written goes on from there.
    pub(super) fn resume_after_cut(&mut self, pm: &mut PowerModel, b: u32, t: u64) {
        let bi = b as usize;
        let upp = self.g.units_per_page;
        let base = self.g.block_base(b);
        let cap = self.blocks.capacity()[bi];
        let view = self.live_view(pm, b);
        let readable: Vec<bool> = (0..view.written)
            .map(|i| pm.slot_at_cut(&view, i, upp, t) == SlotAtCut::Readable)
            .collect();
        // Pages that hold charge: readable ones, and programs begun.
        let issued_pages = view.programmed / upp;
        let begun = (0..issued_pages)
            .rev()
            .find(|&p| view.page_start[p as usize] <= t)
            .map_or(0, |p| p + 1);
        let last_readable = readable
            .iter()
            .rposition(|&r| r)
            .map_or(0, |i| i as u32 / upp + 1);
        let mut pages = begun.max(last_readable);
        let cut_short =
            begun > 0 && view.page_done[begun as usize - 1] > t && pm.cache != WriteCache::Plp;
        if cut_short {
            let bits = view.run.bits();
            pages = pages.div_ceil(bits) * bits;
        }
        let pages = pages.min(cap / upp);
        for i in 0..cap {
            if !readable.get(i as usize).copied().unwrap_or(false) {
                pm.seq[(base + i) as usize] = 0;
            }
        }
        for page in 0..pages {
            let g = (base / upp + page) as usize;
            if page >= issued_pages || pm.page_start[g] > t {
                pm.page_start[g] = t;
                pm.page_done[g] = t;
            }
        }
        let written = matches!(
            self.blocks.state()[bi],
            BlockState::Open | BlockState::Sealed
        );
        if written && pages == 0 {
            // Opened after the cut: still erased.
            let pool = self.g.pool_of_block(b);
            self.blocks.reset_erased(b, pool);
            self.blocks.requeue_free(b, pool);
        } else if written {
            // Pages the cut found erased can still be written.
            self.blocks.resume_written(b, pages * upp);
        }
    }

    /// Settles block `b`, whose erase (record `record`) was pending at the
    /// cut at `cut`, holding `relocate` (the units recovery keeps there):
    /// they move to the pool's GC frontier from `from`, then the erase is
    /// booked and the block goes back to its free queue (a retired block
    /// stays out). With no room to move to, it waits (returns false), or
    /// with `call_off` the erase is called off. Returns whether it settled.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn settle_pending(
        &mut self,
        b: u32,
        record: usize,
        relocate: &[(u32, Copy)],
        cut: u64,
        from: u64,
        tl: &mut Timeline,
        call_off: bool,
    ) -> Result<bool, SimError> {
        let pool = self.g.pool_of_block(b);
        let frontier = self.frontiers.get(Frontier::Gc, pool);
        let room = if frontier == NIL {
            0
        } else {
            self.blocks.capacity()[frontier as usize] - self.blocks.written()[frontier as usize]
        };
        let retired = self.blocks.state()[b as usize] == BlockState::Bad;
        let stuck = !retired && relocate.len() as u32 > room && self.blocks.free_count(pool) == 0;
        if stuck && !call_off {
            return Ok(false);
        }
        let die = self.g.die_of_pool(pool);
        let upp = self.g.units_per_page;
        let run = {
            let pm = self.power.as_mut().expect("power model on");
            let mut before = pm.erases[record].before.take();
            if let Some(c) = &mut before {
                pm.settle(c, upp, cut);
            }
            pm.erases[record].before = before;
            pm.erases[record].before.as_ref().map(|c| c.run)
        };
        if stuck {
            // No room to move to: the erase is called off and the data
            // stays; GC will choose again.
            self.restore_contents(b, record, relocate);
            return Ok(true);
        }
        for (lpn, c) in relocate {
            let run = run.expect("a copy to move comes from saved contents");
            let in_ram = self.gc_read(die, c.index / upp, run, 1, from, tl);
            let slot = self.gc_place(pool, die, *lpn, in_ram, tl)?;
            if let Some(o) = &mut self.oracle {
                o.restored(slot, c.version);
            }
        }
        if self.volatile_ram && self.gc.fill[pool as usize] > 0 {
            self.program_gc_page(pool, die, tl);
        }
        let erase_ns = self.erase_ns(b);
        let done = if retired {
            // Never erased again: its contents matter until the moves are done.
            tl.die_free_at(die).max(from)
        } else {
            tl.erase(from, die, erase_ns)
        };
        let pm = self.power.as_mut().expect("power model on");
        let rec = &mut pm.erases[record];
        rec.start = if retired { done } else { done - erase_ns };
        rec.done = done;
        if !retired {
            self.blocks.requeue_free(b, pool);
        }
        Ok(true)
    }

    /// Calls off the pending erase of block `b` (record `record`, contents
    /// settled): it holds what it held before, sealed, a GC candidate again,
    /// with `kept` (units recovery keeps there) mapped to it. The erase
    /// stays counted in its wear.
    pub(super) fn restore_contents(&mut self, b: u32, record: usize, kept: &[(u32, Copy)]) {
        let mut pm = self.power.take().expect("power model on");
        let c = pm.erases[record]
            .before
            .take()
            .expect("a block whose erase is called off has saved contents");
        let upp = self.g.units_per_page as usize;
        let base = self.g.block_base(b) as usize;
        let n = c.lpn.len();
        self.map.restore_lpns(base, &c.lpn);
        pm.seq[base..base + n].copy_from_slice(&c.seq);
        pm.ready[base..base + n].copy_from_slice(&c.ready);
        pm.page_start[base / upp..(base + n) / upp].copy_from_slice(&c.page_start);
        pm.page_done[base / upp..(base + n) / upp].copy_from_slice(&c.page_done);
        // Its erase record goes: no erase is pending on it any more.
        pm.erases[record].done = 0;
        self.power = Some(pm);
        if let Some(o) = &mut self.oracle {
            for (k, &v) in c.version.iter().enumerate() {
                o.restored((base + k) as u32, v);
            }
        }
        self.blocks
            .restore(b, c.run, c.in_cache, c.written, c.programmed);
        for (lpn, copy) in kept {
            self.map.point(*lpn, base as u32 + copy.index);
        }
        self.blocks.set_valid(b, kept.len() as u32);
        let bi = b as usize;
        if self.blocks.in_cache()[bi] && !self.blocks.static_cache()[bi] {
            self.pslc.count_dynamic(self.g.pool_of_block(b), 1);
        }
        self.file_sealed(b, true);
    }

    /// Rebuilds frontiers, victim index, cache queues and counts after a
    /// cut. Blocks left partly written become frontiers again (a cache
    /// block the cache frontier, others GC's first — recovery's moves need
    /// it before any block is free again — then the host's); any more than
    /// a pool has frontiers for are sealed, their rest unused.
    pub(super) fn rebuild_queues(&mut self) {
        // A victim paced GC was relocating is a GC candidate again, with
        // what the rebuilt map left in it.
        for p in 0..self.g.pools as usize {
            let v = std::mem::replace(&mut self.gc.active[p], NIL);
            if v != NIL && self.blocks.state()[v as usize] == BlockState::Victim {
                self.blocks.seal_as_is(v);
            }
        }
        let blocks = &self.blocks;
        self.frontiers
            .keep_only(|b| blocks.state()[b as usize] == BlockState::Open);
        for b in 0..self.g.blocks {
            let bi = b as usize;
            let pool = self.g.pool_of_block(b);
            if self.blocks.state()[bi] != BlockState::Open || self.frontiers.holds(pool, b) {
                continue;
            }
            let free = |s: Frontier| self.frontiers.get(s, pool) == NIL;
            let stream = if self.blocks.in_cache()[bi] {
                Some(Frontier::Cache)
            } else {
                std::iter::once(Frontier::Gc)
                    .chain(Frontier::HOST)
                    .find(|&s| free(s))
            };
            match stream.filter(|&s| free(s)) {
                Some(s) => self.frontiers.set(s, pool, b),
                None => self.blocks.seal_as_is(b),
            }
        }
        self.gc.fill.fill(0);
        self.gc.ready.fill(0);
        self.alloc.drop_open_pages();
        self.pslc.power_lost();
        if let Some(m) = &mut self.map_cache {
            m.power_lost();
        }
        self.gc.victims = self.gc.victims.emptied(&self.g);
        let mut sealed = Vec::new();
        for b in 0..self.g.blocks {
            let bi = b as usize;
            if self.blocks.in_cache()[bi] && !self.blocks.static_cache()[bi] {
                let in_use = matches!(
                    self.blocks.state()[bi],
                    BlockState::Open | BlockState::Sealed
                );
                self.pslc
                    .count_dynamic(self.g.pool_of_block(b), in_use as i32);
            }
            if self.blocks.state()[bi] == BlockState::Sealed {
                sealed.push(b);
            }
        }
        // In the order they were sealed, as near as the flash tells: by the
        // newest copy each holds (FIFO GC and the cache's fold order need it).
        let power = self.power.as_ref().expect("power model on");
        let newest = |b: &u32| {
            let base = self.g.block_base(*b) as usize;
            let seq = &power.seq[base..base + self.blocks.capacity()[*b as usize] as usize];
            (seq.iter().max().copied().unwrap_or(0), *b)
        };
        sealed.sort_by_cached_key(newest);
        for b in sealed {
            self.file_sealed(b, false);
        }
    }

    /// Forgets the erases decided after a cut at `t`, keeping the records
    /// rebooked for `pending` blocks.
    pub(super) fn forget_undone_erases(&mut self, t: u64, pending: &[(u32, usize)]) {
        let pm = self.power.as_mut().expect("power model on");
        let rebooked: std::collections::HashSet<usize> = pending.iter().map(|&(_, r)| r).collect();
        let records = std::mem::take(&mut pm.erases);
        pm.erases = records
            .into_iter()
            .enumerate()
            .filter(|(i, rec)| rebooked.contains(i) || rec.done <= t)
            .map(|(_, rec)| rec)
            .collect();
    }
}
