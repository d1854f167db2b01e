//! Scanning the flash after a cut: every copy of a unit the flash (or the
//! capacitors' dump) holds, with what the cut left of it, and what was
//! under way (programs cut short or called off, erases begun, units in RAM).

use super::{AtCut, Copy, DUMP, NONE};
use crate::config::WriteCache;
use crate::ftl::blocks::BlockState;
use crate::ftl::Ftl;
use crate::media::ModeTiming;
use crate::power::{Contents, ContentsView, PageKind, PowerModel, SlotAtCut};
use crate::stats::power_loss::{InFlight, LossReason};

impl Ftl {
    /// Calls `visit(unit, copy, state)` for every copy of a unit the flash
    /// (or RAM) held at a cut at `t`: in each block's physical contents, and
    /// in what was placed in a block after its first pending erase was
    /// decided (in RAM then: the capacitors' dump with PLP, else lost).
    pub(super) fn visit_copies(
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
    pub(super) fn survey(&self, pm: &PowerModel, at_cut: &[AtCut], t: u64) -> (InFlight, u64) {
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
                    (0..c.programmed / upp).for_each(|_| in_flight.count_discarded(false));
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
    pub(super) fn count_in_flight(
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
                f.count_discarded(kind == PageKind::Host);
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
}
