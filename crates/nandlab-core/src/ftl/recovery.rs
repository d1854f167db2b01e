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

use super::{Ftl, NIL};
use crate::config::WriteCache;
use crate::drive::timeline::Timeline;
use crate::ftl::blocks::BlockState;
use crate::media::ModeTiming;
use crate::oracle::Floor;
use crate::power::{
    Contents, ContentsView, EraseRecord, InFlight, LossReason, LostByReason, LostWrite, PageKind,
    PhysicalAtCut, PowerLossEvent, PowerModel, SlotAtCut, LOST_LISTED,
};
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
            lpn: &self.map.p2l[base..base + cap],
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
        let oracle = self.oracle.as_mut().expect("power cuts keep the oracle");
        // Units whose acknowledged version was lost: (unit, version, found).
        let mut losses = Vec::new();
        let (mut unacked_lost, mut unacked_survived) = (0u64, 0u64);
        for lpn in 0..units as u32 {
            let found = best[lpn as usize].map(|c| c.version);
            let floor: Floor = oracle.floor_at(lpn, t);
            let ok = match found {
                None => floor.unmapped_ok,
                Some(v) => v >= floor.version,
            };
            if !ok {
                losses.push((lpn, floor.version, found));
            }
            let in_flight_write = oracle.is_written(lpn) && oracle.floor_at(lpn, u64::MAX) != floor;
            if in_flight_write && ok {
                if found == Some(oracle.issued(lpn)) {
                    unacked_survived += 1;
                } else {
                    unacked_lost += 1;
                }
            }
            if found != oracle.expected(lpn) || oracle.floor_at(lpn, u64::MAX) != floor {
                oracle.recovered(lpn, found, t);
            }
        }
        // Why each acknowledged version was lost.
        let mut why: std::collections::HashMap<u32, (u32, Option<LossReason>)> = losses
            .iter()
            .map(|&(lpn, version, _)| (lpn, (version, None)))
            .collect();
        if !why.is_empty() {
            self.visit_copies(&pm, &at_cut, t, |lpn, c, state| {
                // The gravest fate of a copy of it: destroyed on the flash
                // rather than never programmed.
                if let (Some(w), SlotAtCut::Lost(reason)) = (why.get_mut(&lpn), state) {
                    if c.version == w.0 && Some(reason) > w.1 {
                        w.1 = Some(reason);
                    }
                }
            });
        }
        let mut by_reason = LostByReason::default();
        let lost: Vec<LostWrite> = losses
            .iter()
            .map(|&(unit, acknowledged, recovered)| {
                let reason = why[&unit].1;
                by_reason.add(reason);
                LostWrite {
                    unit,
                    acknowledged,
                    recovered,
                    reason,
                }
            })
            .collect();
        let oracle = self.oracle.as_ref().expect("power cuts keep the oracle");
        let failures = if safe {
            &lost[..lost.len().min(8)]
        } else {
            &[]
        };
        if !failures.is_empty() {
            let list: Vec<String> = failures
                .iter()
                .map(|w| {
                    format!(
                        "unit {} acknowledged at version {}, recovered {} ({}; {})",
                        w.unit,
                        w.acknowledged,
                        w.recovered
                            .map_or("nothing".to_string(), |v| format!("version {v}")),
                        w.reason
                            .map_or("no copy of it was found", LossReason::describe),
                        oracle.recent(w.unit)
                    )
                })
                .collect();
            return Err(SimError::Integrity(format!(
                "integrity check failed: a power cut at {:.6} s lost {} acknowledged write(s) on a \
                 configuration that must not lose any: {}",
                t as f64 / 1e9,
                by_reason.total(),
                list.join("; ")
            )));
        }

        // Rebuild the map and the blocks.
        self.map.l2p.fill(0);
        let (mut relocate, mut replay) = (Vec::new(), Vec::new());
        for (lpn, c) in best.iter().enumerate() {
            let Some(c) = c else { continue };
            match c.record {
                NONE => self.map.l2p[lpn] = self.g.block_base(c.block) + c.index + 1,
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
        let mapped = self.map.l2p.iter().filter(|&&s| s != 0).map(|&s| s - 1);
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
        // In the order GC erased them.
        pending.sort_by_key(|&(_, record)| record);
        self.gc.copy_kind = PageKind::Recovery;
        for &(b, record) in &pending {
            let from = relocate.partition_point(|(_, c)| c.block < b);
            let to = relocate.partition_point(|(_, c)| c.block <= b);
            self.settle_pending(b, record, &relocate[from..to], t, ready, tl)?;
        }
        self.gc.copy_kind = PageKind::Gc;
        self.forget_undone_erases(t, &pending);
        for p in 0..self.g.pools as usize {
            // GC with no free block needs a frontier with room: the host's.
            if self.blocks.free()[p].is_empty() && self.gc.frontier[p] == NIL {
                self.gc.frontier[p] = std::mem::replace(&mut self.alloc.host_block[p], NIL);
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
            acknowledged_lost_units: by_reason.total(),
            lost_by_reason: by_reason,
            lost: lost.into_iter().take(LOST_LISTED).collect(),
            unacknowledged_lost_units: unacked_lost,
            unacknowledged_survived_units: unacked_survived,
        })
    }

    /// Calls `visit(unit, copy, state)` for every copy of a unit the flash
    /// (or RAM) held at a cut at `t`: in each block's physical contents, and
    /// in what was placed in a block after its first pending erase was
    /// decided (in RAM then: the capacitors' dump with PLP, else lost).
    fn visit_copies(
        &self,
        pm: &PowerModel,
        at_cut: &[AtCut],
        t: u64,
        mut visit: impl FnMut(u32, Copy, SlotAtCut),
    ) {
        let upp = self.g.units_per_page;
        let in_ram = if pm.cache == WriteCache::Plp {
            SlotAtCut::Readable
        } else {
            SlotAtCut::Lost(LossReason::WriteCache)
        };
        for b in 0..self.g.blocks {
            let mut each = |view: &ContentsView, record: u32, state: &dyn Fn(u32) -> SlotAtCut| {
                for i in 0..view.written.min(view.lpn.len() as u32) {
                    let k = i as usize;
                    let st = state(i);
                    if view.seq[k] == 0 || st == SlotAtCut::Empty {
                        continue;
                    }
                    let copy = Copy {
                        seq: view.seq[k],
                        block: b,
                        index: i,
                        record,
                        version: view.version[k],
                    };
                    visit(view.lpn[k], copy, st);
                }
            };
            match at_cut[b as usize] {
                AtCut::Live => {
                    let v = self.live_view(pm, b);
                    each(&v, NONE, &|i| pm.slot_at_cut(&v, i, upp, t));
                }
                AtCut::Saved(first) | AtCut::Erasing(first) => {
                    let rec = &pm.erases[first as usize];
                    if let Some(c) = &rec.before {
                        let v = c.view();
                        if matches!(at_cut[b as usize], AtCut::Saved(_)) {
                            each(&v, first, &|i| pm.slot_at_cut(&v, i, upp, t));
                        } else {
                            each(&v, first, &|_| SlotAtCut::Lost(LossReason::Erased));
                        }
                    }
                    let later = pm.erases.iter().skip(first as usize + 1);
                    let saved = later
                        .filter(|e| e.block == b)
                        .filter_map(|e| e.before.as_ref());
                    let live = self.live_view(pm, b);
                    for v in saved.map(Contents::view).chain(std::iter::once(live)) {
                        let arrived = |i: u32| {
                            if v.ready[i as usize] <= t {
                                in_ram
                            } else {
                                SlotAtCut::Empty
                            }
                        };
                        each(&v, DUMP, &arrived);
                    }
                }
            }
        }
    }

    /// What was under way at a cut at `t`, and how many pages recovery
    /// reads (a summary page per block holding data, every page of a block
    /// being written).
    fn survey(&self, pm: &PowerModel, at_cut: &[AtCut], t: u64) -> (InFlight, u64) {
        let mut in_flight = InFlight::default();
        let mut pages = 0;
        for b in 0..self.g.blocks {
            if let AtCut::Saved(first) | AtCut::Erasing(first) = at_cut[b as usize] {
                // Programmed after an erase that never happened: never were.
                let later = pm.erases.iter().skip(first as usize + 1);
                let saved = later
                    .filter(|e| e.block == b)
                    .filter_map(|e| e.before.as_ref());
                let upp = self.g.units_per_page;
                for c in saved.map(Contents::view).chain([self.live_view(pm, b)]) {
                    (0..c.programmed / upp).for_each(|_| in_flight.count_discarded(PageKind::Gc));
                }
            }
            let (view, record) = match at_cut[b as usize] {
                AtCut::Live => (self.live_view(pm, b), NONE),
                AtCut::Saved(i) => {
                    let rec = &pm.erases[i as usize];
                    (rec.before.as_ref().expect("saved").view(), i)
                }
                AtCut::Erasing(_) => {
                    in_flight.erases += 1;
                    continue;
                }
            };
            if view.written == 0 {
                continue;
            }
            pages += 1;
            if record == NONE && self.blocks.state()[b as usize] == BlockState::Open {
                pages += (view.programmed / self.g.units_per_page) as u64;
            }
            self.count_in_flight(pm, &view, b, record, t, &mut in_flight);
        }
        (in_flight, pages)
    }

    /// Counts the programs of block `b` under way at `t`, and its units in RAM.
    fn count_in_flight(
        &self,
        pm: &PowerModel,
        c: &ContentsView,
        b: u32,
        record: u32,
        t: u64,
        f: &mut InFlight,
    ) {
        let upp = self.g.units_per_page;
        let bits = c.run.bits();
        let plp = pm.cache == WriteCache::Plp;
        for page in 0..c.programmed / upp {
            let p = page as usize;
            let kind = if record == NONE {
                pm.page_kind[(self.g.block_base(b) / upp + page) as usize]
            } else {
                PageKind::Gc
            };
            let slots = p * upp as usize..(p + 1) * upp as usize;
            let saved_by_capacitors = plp && c.ready[slots].iter().any(|&r| r <= t);
            if c.page_start[p] > t && !saved_by_capacitors {
                f.count_discarded(kind);
            }
            if !(c.page_start[p] <= t && t < c.page_done[p]) {
                continue;
            }
            match kind {
                PageKind::Host => f.host_programs += 1,
                PageKind::Gc => f.gc_programs += 1,
                PageKind::Fold => f.fold_programs += 1,
                PageKind::Recovery => f.recovery_programs += 1,
            }
            if bits > 1 && ModeTiming::page_type(page, bits) > 0 {
                f.upper_page_programs += 1;
            }
        }
        if record == NONE {
            let in_ram = (c.programmed..c.written).filter(|&i| c.seq[i as usize] != 0);
            f.buffered_units += in_ram.count() as u64;
        }
    }

    /// Live block `b` after a cut at `t`: what is not readable reads as
    /// empty from now on, and the block's write pointer goes back to the
    /// first page the cut found erased (past the whole wordline of a
    /// program cut short); pages the capacitors programmed count as
    /// programmed at `t`. A block being written goes on from there.
    fn resume_after_cut(&mut self, pm: &mut PowerModel, b: u32, t: u64) {
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
    /// stays out). With no room to move to, the erase is called off.
    fn settle_pending(
        &mut self,
        b: u32,
        record: usize,
        relocate: &[(u32, Copy)],
        cut: u64,
        from: u64,
        tl: &mut Timeline,
    ) -> Result<(), SimError> {
        let pool = self.g.pool_of_block(b);
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
        let frontier = self.gc.frontier[pool as usize];
        let room = if frontier == NIL {
            0
        } else {
            self.blocks.capacity()[frontier as usize] - self.blocks.written()[frontier as usize]
        };
        let retired = self.blocks.state()[b as usize] == BlockState::Bad;
        if !retired && relocate.len() as u32 > room && self.blocks.free_count(pool) == 0 {
            // No room to move to: the erase is called off and the data
            // stays; GC will choose again.
            self.restore_contents(b, record, relocate);
            return Ok(());
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
        Ok(())
    }

    /// Calls off the pending erase of block `b` (record `record`, contents
    /// settled): it holds what it held before, sealed, a GC candidate again,
    /// with `kept` (units recovery keeps there) mapped to it. The erase
    /// stays counted in its wear.
    fn restore_contents(&mut self, b: u32, record: usize, kept: &[(u32, Copy)]) {
        let mut pm = self.power.take().expect("power model on");
        let c = pm.erases[record]
            .before
            .take()
            .expect("a block whose erase is called off has saved contents");
        let upp = self.g.units_per_page as usize;
        let base = self.g.block_base(b) as usize;
        let n = c.lpn.len();
        self.map.p2l[base..base + n].copy_from_slice(&c.lpn);
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
            self.map.l2p[*lpn as usize] = base as u32 + copy.index + 1;
        }
        self.blocks.set_valid(b, kept.len() as u32);
        let bi = b as usize;
        if self.blocks.in_cache()[bi] && !self.blocks.static_cache()[bi] {
            self.pslc.dynamic_in_use[self.g.pool_of_block(b) as usize] += 1;
        }
        self.file_sealed(b, true);
    }

    /// Rebuilds frontiers, victim index, cache queues and counts after a
    /// cut. Blocks left partly written become frontiers again (a cache
    /// block the cache frontier, others GC's first — recovery's moves need
    /// it before any block is free again — then the host's); any more than
    /// a pool has frontiers for are sealed, their rest unused.
    fn rebuild_queues(&mut self) {
        for f in [
            &mut self.alloc.host_block,
            &mut self.pslc.frontier,
            &mut self.gc.frontier,
        ] {
            for b in f.iter_mut() {
                if *b != NIL && self.blocks.state()[*b as usize] != BlockState::Open {
                    *b = NIL;
                }
            }
        }
        for b in 0..self.g.blocks {
            let bi = b as usize;
            let p = self.g.pool_of_block(b) as usize;
            let is_frontier = [
                &self.alloc.host_block,
                &self.pslc.frontier,
                &self.gc.frontier,
            ]
            .iter()
            .any(|f| f[p] == b);
            if self.blocks.state()[bi] != BlockState::Open || is_frontier {
                continue;
            }
            let slot = if self.blocks.in_cache()[bi] {
                Some(&mut self.pslc.frontier[p])
            } else if self.gc.frontier[p] == NIL {
                Some(&mut self.gc.frontier[p])
            } else if self.alloc.host_block[p] == NIL {
                Some(&mut self.alloc.host_block[p])
            } else {
                None
            };
            match slot.filter(|f| **f == NIL) {
                Some(f) => *f = b,
                None => self.blocks.seal_as_is(b),
            }
        }
        self.gc.fill.fill(0);
        self.gc.ready.fill(0);
        self.alloc.open = Default::default();
        self.pslc.next_lpn = NIL;
        self.pslc.stream_units = 0;
        if let Some(m) = &mut self.map_cache {
            m.power_lost();
        }
        self.gc.victims = self.gc.victims.emptied(&self.g);
        for fifo in self
            .pslc
            .static_fifo
            .iter_mut()
            .chain(self.pslc.dynamic_fifo.iter_mut())
        {
            fifo.clear();
        }
        self.pslc.dynamic_in_use.fill(0);
        let mut sealed = Vec::new();
        for b in 0..self.g.blocks {
            let bi = b as usize;
            if self.blocks.in_cache()[bi] && !self.blocks.static_cache()[bi] {
                let in_use = matches!(
                    self.blocks.state()[bi],
                    BlockState::Open | BlockState::Sealed
                );
                self.pslc.dynamic_in_use[self.g.pool_of_block(b) as usize] += in_use as u32;
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
    fn forget_undone_erases(&mut self, t: u64, pending: &[(u32, usize)]) {
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
