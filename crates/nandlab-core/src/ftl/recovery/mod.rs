//! Recovery after a power cut, as firmware does it: read every block's spare
//! area (OOB), keep for each logical unit its copy with the highest write
//! sequence number that is physically readable and newer than the unit's
//! last journalled TRIM, rebuild the map, and let the blocks being written go
//! on after their last programmed page (past the wordline of a program cut
//! short). A block whose erase was decided but had not begun still holds
//! its data: recovery redoes the GC that chose it, in the order GC did —
//! moves out what it keeps there, erases it, returns it to the free queue —
//! so it needs no more free blocks than GC did (with no room at all, the
//! erase is called off, staying counted in the block's wear). An erase the
//! cut stopped half way is done again. The program counters keep counting
//! programs as booked: those a cut called off are reported apart.
//! The oracle then judges the result: every acknowledged write must be
//! there, unless the configuration is documented as unsafe.

mod judge;
mod rebuild;
mod scan;

use super::{Ftl, NIL};
use crate::config::WriteCache;
use crate::ftl::blocks::BlockState;
use crate::ftl::frontiers::Frontier;
use crate::power::{
    Contents, ContentsView, EraseRecord, PageKind, PhysicalAtCut, PowerModel, SlotAtCut,
};
use crate::schedule::timeline::Timeline;
use crate::stats::power_loss::{PowerLossEvent, LOST_LISTED};
use crate::SimError;

/// A copy in the live block (not in an erase record).
const NONE: u32 = u32::MAX;
/// A copy in the power-loss dump: data in RAM at the cut, meant for a block
/// whose erase had not happened, saved by the capacitors to a dump area and
/// written again through the host write path after recovery.
const DUMP: u32 = u32::MAX - 1;

/// Where the copy recovery keeps for a unit is.
#[derive(Debug, Clone, Copy)]
struct Copy {
    seq: u64,
    block: u32,
    index: u32,
    /// The pending erase record holding it (NONE: the live block).
    record: u32,
    version: u32,
}

/// A block's physical state at the cut, per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtCut {
    Live,
    /// Its erase was decided but had not begun: contents in this record.
    Saved(u32),
    /// Its erase had begun.
    Erasing(u32),
}

impl Ftl {
    /// Keeps what a power cut needs (before anything is written): the
    /// integrity oracle with acknowledgements, and the [`PowerModel`].
    pub fn enable_power_model(&mut self, cache: WriteCache, paired_page_backup: bool) {
        if self.oracle.is_none() {
            self.enable_oracle();
        }
        if let Some(o) = &mut self.oracle {
            o.track_acks();
        }
        self.power = Some(Box::new(PowerModel::new(
            &self.g,
            cache,
            paired_page_backup,
        )));
    }

    /// Block `b`'s contents as the live arrays hold them.
    fn live_view<'a>(&'a self, pm: &'a PowerModel, b: u32) -> ContentsView<'a> {
        let bi = b as usize;
        let upp = self.g.units_per_page as usize;
        let base = self.g.block_base(b) as usize;
        let cap = self.blocks.capacity()[bi] as usize;
        let version = self.oracle.as_ref().expect("power cuts keep the oracle");
        ContentsView {
            run: self.blocks.run()[bi],
            written: self.blocks.written()[bi],
            programmed: self.blocks.programmed()[bi],
            lpn: self.map.lpns(base..base + cap),
            seq: &pm.seq[base..base + cap],
            ready: &pm.ready[base..base + cap],
            version: version.versions(base..base + cap),
            page_start: &pm.page_start[base / upp..(base + cap) / upp],
            page_done: &pm.page_done[base / upp..(base + cap) / upp],
        }
    }

    /// Notes the erase of block `v`, decided now and booked on its die over
    /// [start, done): its contents are saved (they stay on the flash until
    /// the erase begins), and its spare area reads as empty from now on.
    pub(super) fn note_erase(&mut self, v: u32, start: u64, done: u64) {
        let pm = self.power.take().expect("power model on");
        let before = self.saved_contents(&pm, v);
        let mut pm = pm;
        let base = self.g.block_base(v) as usize;
        let cap = self.blocks.capacity()[v as usize] as usize;
        pm.seq[base..base + cap].fill(0);
        pm.erases.push_back(EraseRecord {
            block: v,
            start,
            done,
            before: Some(before),
        });
        self.power = Some(pm);
    }

    fn saved_contents(&self, pm: &PowerModel, b: u32) -> Contents {
        let c = self.live_view(pm, b);
        Contents {
            run: c.run,
            in_cache: self.blocks.in_cache()[b as usize],
            written: c.written,
            programmed: c.programmed,
            lpn: c.lpn.to_vec(),
            seq: c.seq.to_vec(),
            ready: c.ready.to_vec(),
            version: c.version.to_vec(),
            page_start: c.page_start.to_vec(),
            page_done: c.page_done.to_vec(),
        }
    }

    /// Power fails at `t`. Rebuilds the FTL from what the flash holds, books
    /// the recovery's reads, relocations and erases on `tl` (restarted at
    /// `t`), and returns what the cut did. On a configuration documented as
    /// safe (`safe`), a lost acknowledged write is an integrity error.
    pub fn power_loss(
        &mut self,
        t: u64,
        tl: &mut Timeline,
        safe: bool,
    ) -> Result<PowerLossEvent, SimError> {
        let mut pm = self.power.take().expect("power model on");
        pm.undo_trims_after(t);
        let blocks = self.g.blocks as usize;
        let units = self.g.user_units as usize;

        // Where each block's contents are at the cut.
        let mut at_cut = vec![AtCut::Live; blocks];
        for b in 0..blocks as u32 {
            at_cut[b as usize] = match pm.physical_at(b, t) {
                PhysicalAtCut::Live => AtCut::Live,
                PhysicalAtCut::Saved(_, i) => AtCut::Saved(i as u32),
                PhysicalAtCut::Erasing(i) => AtCut::Erasing(i as u32),
            };
        }

        // Scan: the newest readable copy of each unit.
        let mut best: Vec<Option<Copy>> = vec![None; units];
        self.visit_copies(&pm, &at_cut, t, |lpn, c, state| {
            let l = lpn as usize;
            if state == SlotAtCut::Readable
                && c.seq > pm.trim_seq[l]
                && best[l].is_none_or(|b| c.seq > b.seq)
            {
                best[l] = Some(c);
            }
        });
        let (in_flight, scanned_pages) = self.survey(&pm, &at_cut, t);

        // Judge each unit against what the host was told.
        let judged = self.judge(&pm, &best, &at_cut, t, safe)?;

        // Rebuild the map and the blocks.
        self.map.forget();
        let (mut relocate, mut replay) = (Vec::new(), Vec::new());
        for (lpn, c) in best.iter().enumerate() {
            let Some(c) = c else { continue };
            match c.record {
                NONE => self
                    .map
                    .point(lpn as u32, self.g.block_base(c.block) + c.index),
                DUMP => replay.push((lpn as u32, c.version)),
                _ => relocate.push((lpn as u32, *c)),
            }
        }
        // Blocks to erase again (with the record of the erase), after moving
        // out what recovery keeps in them.
        let mut pending = Vec::new();
        for b in 0..blocks as u32 {
            let bi = b as usize;
            let (base, cap) = (
                self.g.block_base(b) as usize,
                self.blocks.capacity()[bi] as usize,
            );
            match at_cut[bi] {
                AtCut::Saved(r) | AtCut::Erasing(r) => {
                    // Everything decided on it since its erase came after the cut.
                    pm.seq[base..base + cap].fill(0);
                    if self.blocks.state()[bi] != BlockState::Bad {
                        self.blocks.reset_erased(b, self.g.pool_of_block(b));
                    }
                    pending.push((b, r as usize));
                }
                AtCut::Live if self.blocks.written()[bi] > 0 => {
                    self.resume_after_cut(&mut pm, b, t);
                }
                AtCut::Live => {}
            }
        }
        let mapped = self.map.mapped().map(|(_, slot)| slot);
        self.blocks.recount_valid(mapped, &self.g);
        self.power = Some(pm);
        self.rebuild_queues();

        self.flash.programs_done = t;
        // Restart: read the spare areas; then, block by block, move out what
        // lives only in a block about to be erased, and erase it.
        tl.restart(t);
        let mut ready = t;
        let lsb_read = self.flash.timing[self.g.cell.index()].read_ns[0];
        let reads_per_die = scanned_pages.div_ceil(self.g.dies as u64);
        for die in 0..self.g.dies {
            for _ in 0..reads_per_die {
                ready = ready.max(tl.flash_read(t, die, lsb_read, 1));
            }
        }
        let relocated_before = self.counters.flash_units_gc;
        let replayed = replay.len() as u64;
        // The units to move out of each block.
        relocate.sort_by_key(|(_, c)| c.block);
        // In the order GC erased them; one that has no room to move to waits
        // for the others' erases to give blocks back, and is called off only
        // if none of those still waiting can go on.
        pending.sort_by_key(|&(_, record)| record);
        self.gc.copy_kind = PageKind::Recovery;
        let mut waiting = pending.clone();
        let mut call_off = false;
        while !waiting.is_empty() {
            let mut deferred = Vec::new();
            for &(b, record) in &waiting {
                let from = relocate.partition_point(|(_, c)| c.block < b);
                let to = relocate.partition_point(|(_, c)| c.block <= b);
                let moves = &relocate[from..to];
                if !self.settle_pending(b, record, moves, t, ready, tl, call_off)? {
                    deferred.push((b, record));
                }
            }
            call_off = deferred.len() == waiting.len();
            waiting = deferred;
        }
        self.gc.copy_kind = PageKind::Gc;
        self.forget_undone_erases(t, &pending);
        for pool in 0..self.g.pools {
            // GC with no free block needs a frontier with room: a host stream's.
            if !self.blocks.free()[pool as usize].is_empty()
                || self.frontiers.get(Frontier::Gc, pool) != NIL
            {
                continue;
            }
            let open = Frontier::HOST
                .into_iter()
                .find(|&s| self.frontiers.get(s, pool) != NIL);
            if let Some(s) = open {
                let host = self.frontiers.take(s, pool);
                self.frontiers.set(Frontier::Gc, pool, host);
            }
        }
        // The dump goes through the host write path (with its GC), at the
        // versions it holds; it has been safe since the cut.
        for &(lpn, version) in &replay {
            self.replay_version = Some(version);
            let written = self.write_unit(lpn, t, tl, false);
            self.replay_version = None;
            written?;
        }

        Ok(PowerLossEvent {
            at_seconds: t as f64 / 1e9,
            ready_seconds: ready as f64 / 1e9,
            recovery_us: (ready - t) as f64 / 1e3,
            in_flight,
            scanned_pages,
            relocated_units: self.counters.flash_units_gc - relocated_before + replayed,
            acknowledged_lost_units: judged.by_reason.total(),
            lost_by_reason: judged.by_reason,
            lost: judged.lost.into_iter().take(LOST_LISTED).collect(),
            unacknowledged_lost_units: judged.unacked_lost,
            unacknowledged_survived_units: judged.unacked_survived,
        })
    }
}
