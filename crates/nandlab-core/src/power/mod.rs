//! Power loss: what the flash holds at the instant power fails, and what a
//! cut loses. Kept only on drives whose config schedules power cuts.
//!
//! The FTL decides every flash operation when its command arrives and books
//! it on the [`Timeline`](crate::schedule::timeline::Timeline) into the future, so at
//! a cut at time T some decided programs have not started, some are half
//! done and some erases have not begun. This module keeps what recovery
//! needs to see the flash as it physically is at T:
//!
//! - per slot, the spare-area (OOB) record a real drive writes with the
//!   data: a global write sequence number (0: the slot holds nothing
//!   readable) — the logical unit is the FTL's `p2l` — and when the data
//!   reached controller RAM;
//! - per page, when its program started and ended, and who wrote it (host,
//!   GC, folding, recovery);
//! - per unit, the sequence number of its last TRIM (journalled by the
//!   firmware when the command runs), and the TRIMs journalled later than
//!   a cut could still come (a command is decided ahead of its time: a cut
//!   before that time rolls it back);
//! - erases not yet finished, each with a copy of the block's contents
//!   before it (the block may already have been reopened and rewritten
//!   after its erase was decided, but nothing physical happens to it before
//!   the erase does: a die runs its operations in order).
//!
//! What survives follows the NAND physics in REFERENCE §5: a page whose
//! program completed is readable; a program cut short leaves its page
//! unreadable, and on a multi-bit wordline it also corrupts the lower pages
//! already programmed there (paired pages) unless the firmware backed them up;
//! a pSLC program damages nothing else. With power-loss protection the
//! drive's capacitors finish the programs under way and program what its
//! DRAM write buffer holds; without it, buffered data is gone.

mod cut_plan;

pub use cut_plan::CutPlan;

use crate::stats::power_loss::LossReason;

use crate::config::WriteCache;
use crate::geometry::Geometry;
use crate::media::CellMode;
use crate::sanity::{ensure, indices, len, Checked};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Who programmed a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum PageKind {
    Host = 0,
    Gc = 1,
    Fold = 2,
    Recovery = 3,
}

/// What a slot holds after a cut at T.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotAtCut {
    /// Nothing (never written since the erase, or its data never arrived).
    Empty,
    Readable,
    Lost(LossReason),
}

/// The contents of a block: its OOB records and page times, for the live
/// block or saved at an erase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Contents {
    pub run: CellMode,
    /// A pSLC cache block (static, or dynamic then).
    pub in_cache: bool,
    /// Slots handed to the write path, and those whose page program was issued.
    pub written: u32,
    pub programmed: u32,
    pub lpn: Vec<u32>,
    pub seq: Vec<u64>,
    pub ready: Vec<u64>,
    /// The oracle's version stamps of the slots.
    pub version: Vec<u32>,
    pub page_start: Vec<u64>,
    pub page_done: Vec<u64>,
}

/// A block's contents as recovery sees them, borrowed from the live arrays
/// or from a saved erase record.
#[derive(Debug, Clone, Copy)]
pub struct ContentsView<'a> {
    pub run: CellMode,
    pub written: u32,
    pub programmed: u32,
    pub lpn: &'a [u32],
    pub seq: &'a [u64],
    pub ready: &'a [u64],
    pub version: &'a [u32],
    pub page_start: &'a [u64],
    pub page_done: &'a [u64],
}

impl Contents {
    pub fn view(&self) -> ContentsView<'_> {
        ContentsView {
            run: self.run,
            written: self.written,
            programmed: self.programmed,
            lpn: &self.lpn,
            seq: &self.seq,
            ready: &self.ready,
            version: &self.version,
            page_start: &self.page_start,
            page_done: &self.page_done,
        }
    }
}

/// An erase decided but perhaps not yet done on the die.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EraseRecord {
    pub block: u32,
    pub start: u64,
    pub done: u64,
    /// The block before the erase (None: garbage, e.g. an erase interrupted earlier).
    pub before: Option<Contents>,
}

/// Where a block's physical contents at a cut are.
pub enum PhysicalAtCut<'a> {
    /// As the live arrays say (no erase of it pending at the cut).
    Live,
    /// As saved in a pending erase's record (the erase had not begun).
    Saved(&'a EraseRecord, usize),
    /// Its erase had begun: nothing readable.
    Erasing(usize),
}

/// The power-loss bookkeeping of one drive.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PowerModel {
    pub cache: WriteCache,
    /// Lower pages of multi-bit wordlines are backed up (in SLC) until their
    /// wordline is complete, so an interrupted upper-page program loses nothing.
    pub paired_page_backup: bool,
    #[serde(with = "crate::memory::flat")]
    pub seq: Vec<u64>,
    #[serde(with = "crate::memory::flat")]
    pub ready: Vec<u64>,
    #[serde(with = "crate::memory::flat")]
    pub page_start: Vec<u64>,
    #[serde(with = "crate::memory::flat")]
    pub page_done: Vec<u64>,
    pub page_kind: Vec<PageKind>,
    #[serde(with = "crate::memory::flat")]
    pub trim_seq: Vec<u64>,
    next_seq: u64,
    /// Pending erases, in the order they were decided.
    pub erases: VecDeque<EraseRecord>,
    /// TRIMs journalled after `settled`, in the order they were decided.
    pub trims: VecDeque<TrimRecord>,
    /// No cut can come at or before this time any more (the drive has
    /// taken a command arriving then).
    pub settled: u64,
}

/// A TRIM journalled at `at`, which a cut before `at` undoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrimRecord {
    pub lpn: u32,
    pub seq: u64,
    pub at: u64,
    /// The unit's last TRIM before this one.
    pub before: u64,
}

impl PowerModel {
    pub fn new(g: &Geometry, cache: WriteCache, paired_page_backup: bool) -> PowerModel {
        let pages = (g.slots / g.units_per_page as u64) as usize;
        PowerModel {
            cache,
            paired_page_backup,
            seq: vec![0; g.slots as usize],
            ready: vec![0; g.slots as usize],
            page_start: vec![0; pages],
            page_done: vec![0; pages],
            page_kind: vec![PageKind::Host; pages],
            trim_seq: vec![0; g.user_units as usize],
            next_seq: 0,
            erases: VecDeque::new(),
            trims: VecDeque::new(),
            settled: 0,
        }
    }

    /// Checks this (loaded) bookkeeping against the geometry: array
    /// lengths, and every block, unit and page a record names in range.
    pub fn check_loaded(&self, g: &Geometry) -> Checked {
        let pages = g.slots / g.units_per_page as u64;
        len("power.seq", self.seq.len(), g.slots)?;
        len("power.ready", self.ready.len(), g.slots)?;
        len("power.page_start", self.page_start.len(), pages)?;
        len("power.page_done", self.page_done.len(), pages)?;
        len("power.page_kind", self.page_kind.len(), pages)?;
        len("power.trim_seq", self.trim_seq.len(), g.user_units)?;
        indices(
            "a TRIM record",
            self.trims.iter().map(|r| &r.lpn),
            g.user_units,
            false,
        )?;
        // No record is newer than the sequence counter: what comes next must
        // be newer than all of them.
        let saved = self
            .erases
            .iter()
            .filter_map(|e| e.before.as_ref())
            .flat_map(|c| &c.seq);
        let trims = self.trims.iter().flat_map(|r| [&r.seq, &r.before]);
        let newest = self
            .seq
            .iter()
            .chain(&self.trim_seq)
            .chain(saved)
            .chain(trims)
            .max();
        ensure(newest.is_none_or(|&s| s <= self.next_seq), || {
            "a spare-area record is newer than the drive's sequence counter".into()
        })?;
        for e in &self.erases {
            indices("an erase record", [&e.block], g.blocks as u64, false)?;
            if let Some(c) = &e.before {
                let n = c.lpn.len() as u64;
                ensure(
                    n <= g.units_per_block as u64 && n.is_multiple_of(g.units_per_page as u64),
                    || "an erase record's block is not a block".into(),
                )?;
                for (name, l) in [
                    ("seq", c.seq.len()),
                    ("ready", c.ready.len()),
                    ("version", c.version.len()),
                ] {
                    len(&format!("an erase record's {name}"), l, n)?;
                }
                len(
                    "an erase record's page times",
                    c.page_start.len(),
                    n / g.units_per_page as u64,
                )?;
                len(
                    "an erase record's page times",
                    c.page_done.len(),
                    n / g.units_per_page as u64,
                )?;
                ensure(c.programmed <= c.written && c.written as u64 <= n, || {
                    "an erase record holds more than its block".into()
                })?;
                indices("an erase record's units", &c.lpn, g.user_units, false)?;
            }
        }
        Ok(())
    }

    /// Bytes this bookkeeping takes for a geometry (for the memory check).
    pub fn bytes(g: &Geometry) -> u64 {
        g.slots * 16 + g.slots / g.units_per_page as u64 * 17 + g.user_units * 8
    }

    /// A unit was placed in `slot`, its data in controller RAM at `ready`.
    #[inline]
    pub fn placed(&mut self, slot: u32, ready: u64) {
        self.next_seq += 1;
        self.seq[slot as usize] = self.next_seq;
        self.ready[slot as usize] = ready;
    }

    /// The host's TRIM of `lpn` is journalled at `at`.
    #[inline]
    pub fn trimmed(&mut self, lpn: u32, at: u64) {
        self.next_seq += 1;
        let before = std::mem::replace(&mut self.trim_seq[lpn as usize], self.next_seq);
        if at > self.settled {
            self.trims.push_back(TrimRecord {
                lpn,
                seq: self.next_seq,
                at,
                before,
            });
        }
    }

    /// A cut at `t`: the TRIMs journalled after it never were.
    pub fn undo_trims_after(&mut self, t: u64) {
        for r in std::mem::take(&mut self.trims).into_iter().rev() {
            if r.at > t && self.trim_seq[r.lpn as usize] == r.seq {
                self.trim_seq[r.lpn as usize] = r.before;
            }
        }
    }

    /// Page `page` (global index) was programmed over [start, done).
    #[inline]
    pub fn programmed(&mut self, page: u32, start: u64, done: u64, kind: PageKind) {
        let p = page as usize;
        self.page_start[p] = start;
        self.page_done[p] = done;
        self.page_kind[p] = kind;
    }

    /// No cut can come at or before `now` any more: drops the erase and
    /// TRIM records a later cut cannot see.
    #[inline]
    pub fn forget_before(&mut self, now: u64) {
        self.settled = self.settled.max(now);
        while self.erases.front().is_some_and(|e| e.done <= now) {
            self.erases.pop_front();
        }
        while self.trims.front().is_some_and(|r| r.at <= now) {
            self.trims.pop_front();
        }
    }

    /// Where block `b`'s contents are at a cut at `t`: the first of its
    /// erases not finished by `t` decides.
    pub fn physical_at(&self, b: u32, t: u64) -> PhysicalAtCut<'_> {
        match self
            .erases
            .iter()
            .enumerate()
            .find(|(_, e)| e.block == b && e.done > t)
        {
            None => PhysicalAtCut::Live,
            Some((i, e)) if e.start > t && e.before.is_some() => PhysicalAtCut::Saved(e, i),
            Some((i, _)) => PhysicalAtCut::Erasing(i),
        }
    }

    /// Makes saved contents say what a cut at `t` left of them: slots not
    /// readable then hold nothing, and programs finished by the capacitors
    /// count as done at `t` (a later cut must not find what this one lost).
    pub fn settle(&self, c: &mut Contents, upp: u32, t: u64) {
        let dead: Vec<usize> = (0..c.written)
            .filter(|&i| self.slot_at_cut(&c.view(), i, upp, t) != SlotAtCut::Readable)
            .map(|i| i as usize)
            .collect();
        for i in dead {
            c.seq[i] = 0;
        }
        for (start, done) in c.page_start.iter_mut().zip(c.page_done.iter_mut()) {
            if *done > t {
                (*start, *done) = (t, t);
            }
        }
    }

    /// What slot `i` of a block holds after a cut at `t`.
    pub fn slot_at_cut(&self, c: &ContentsView, i: u32, upp: u32, t: u64) -> SlotAtCut {
        let k = i as usize;
        if c.seq[k] == 0 {
            return SlotAtCut::Empty;
        }
        let plp = self.cache == WriteCache::Plp;
        let arrived = c.ready[k] <= t;
        if i >= c.programmed {
            // In controller RAM, its page not yet handed to the die.
            return match (plp, arrived) {
                (true, true) => SlotAtCut::Readable,
                (true, false) => SlotAtCut::Empty,
                (false, _) => SlotAtCut::Lost(LossReason::WriteCache),
            };
        }
        let page = (i / upp) as usize;
        let (start, done) = (c.page_start[page], c.page_done[page]);
        if plp {
            // The capacitors finish programs under way and flush the buffer.
            return match (start <= t, arrived) {
                (true, _) | (false, true) => SlotAtCut::Readable,
                (false, false) => SlotAtCut::Empty,
            };
        }
        if start > t {
            return SlotAtCut::Lost(LossReason::WriteCache);
        }
        if done > t {
            return SlotAtCut::Lost(LossReason::Interrupted);
        }
        // A later page of the same wordline cut short corrupts this one.
        let bits = c.run.bits();
        if bits > 1 && !self.paired_page_backup {
            let issued_pages = c.programmed / upp;
            let wordline_end = ((page as u32 / bits + 1) * bits).min(issued_pages);
            let cut = (page as u32 + 1..wordline_end).any(|q| {
                let q = q as usize;
                c.page_start[q] <= t && t < c.page_done[q]
            });
            if cut {
                return SlotAtCut::Lost(LossReason::PairedPage);
            }
        }
        SlotAtCut::Readable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(run: CellMode, times: &[(u64, u64)]) -> Contents {
        let n = times.len();
        Contents {
            run,
            in_cache: false,
            written: n as u32,
            programmed: n as u32,
            lpn: (0..n as u32).collect(),
            seq: (1..=n as u64).collect(),
            ready: vec![0; n],
            version: vec![1; n],
            page_start: times.iter().map(|t| t.0).collect(),
            page_done: times.iter().map(|t| t.1).collect(),
        }
    }

    fn model(cache: WriteCache, backup: bool) -> PowerModel {
        PowerModel {
            cache,
            paired_page_backup: backup,
            seq: vec![],
            ready: vec![],
            page_start: vec![],
            page_done: vec![],
            page_kind: vec![],
            trim_seq: vec![],
            next_seq: 0,
            erases: VecDeque::new(),
            trims: VecDeque::new(),
            settled: 0,
        }
    }

    #[test]
    fn an_interrupted_upper_page_corrupts_its_wordline_unless_backed_up_or_slc() {
        // TLC wordline 0: LSB done, CSB done, MSB cut at t = 25.
        let times = [(0, 5), (5, 15), (20, 30), (30, 40)];
        let tlc = block(CellMode::Tlc, &times);
        let m = model(WriteCache::Off, false);
        let at = |c: &Contents, m: &PowerModel, i| m.slot_at_cut(&c.view(), i, 1, 25);
        let lost = SlotAtCut::Lost(LossReason::PairedPage);
        assert_eq!(at(&tlc, &m, 0), lost);
        assert_eq!(at(&tlc, &m, 1), lost);
        assert_eq!(at(&tlc, &m, 2), SlotAtCut::Lost(LossReason::Interrupted));
        // The next wordline's page had not started: only its data is gone.
        assert_eq!(at(&tlc, &m, 3), SlotAtCut::Lost(LossReason::WriteCache));
        let backed = model(WriteCache::Off, true);
        assert_eq!(at(&tlc, &backed, 0), SlotAtCut::Readable);
        // In pSLC mode every page is its own wordline.
        let slc = block(CellMode::Slc, &times);
        assert_eq!(at(&slc, &m, 0), SlotAtCut::Readable);
        assert_eq!(at(&slc, &m, 1), SlotAtCut::Readable);
        // Capacitors finish the program under way.
        let plp = model(WriteCache::Plp, false);
        assert_eq!(at(&tlc, &plp, 2), SlotAtCut::Readable);
        assert_eq!(at(&tlc, &plp, 0), SlotAtCut::Readable);
    }
}
