//! The timing of this drive's flash operations: a page program's time by
//! its mode, page type, the block's wear (ISPP loops) and the data written;
//! an erase's by the block's erase pulses; paired-page backup of lower pages
//! on drives without power-loss protection.

use super::Ftl;
use crate::config::Config;
use crate::config::WriteCache;
use crate::media::wear::{DataPattern, ERASE_LOOPS, PROGRAM_LOOPS, RELAXED_PROGRAM_FACTOR};
use crate::media::{CellMode, ModeTiming};
use crate::schedule::timeline::Timeline;
use serde::{Deserialize, Serialize};

/// Latencies and the settings that scale them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlashOps {
    pub(super) timing: Vec<ModeTiming>,
    /// Program-time factor of the data being written, in parts per million.
    pub(super) program_ppm: u64,
    /// Two thirds with retention-relaxed programming, else 1.
    pub(super) relaxed_factor: f64,
    /// Lower pages of multi-bit wordlines are backed up in SLC (no PLP).
    pub(super) backup_lower_pages: bool,
    /// When the last program booked so far completes.
    pub(super) programs_done: u64,
}

impl FlashOps {
    pub fn new(cfg: &Config) -> FlashOps {
        let relaxed_factor = if cfg.device.wear.conditions.relaxed {
            RELAXED_PROGRAM_FACTOR
        } else {
            1.0
        };
        FlashOps {
            timing: cfg.device.timing.clone(),
            program_ppm: (relaxed_factor * 1e6).round() as u64,
            relaxed_factor,
            backup_lower_pages: cfg.device.write_cache != WriteCache::Plp
                && cfg.ftl.paired_page_backup,
            programs_done: 0,
        }
    }
}

impl Ftl {
    /// Program time of a page now: the mode's time for its page type, in the
    /// ISPP steps the block's wear calls for, scaled by the data written.
    #[inline]
    pub(super) fn program_ns(&self, b: u32, page: u32) -> u64 {
        let mode = self.blocks.run()[b as usize];
        let fresh =
            self.flash.timing[mode.index()].program_ns[ModeTiming::page_type(page, mode.bits())];
        let worn = fresh * self.blocks.program_loops()[b as usize] as u64 / PROGRAM_LOOPS.0 as u64;
        worn * self.flash.program_ppm / 1_000_000
    }

    /// Erase time of a block now (its wear sets the number of erase pulses).
    #[inline]
    pub(super) fn erase_ns(&self, b: u32) -> u64 {
        let fresh = self.flash.timing[self.blocks.run()[b as usize].index()].erase_ns;
        fresh * self.blocks.erase_loops()[b as usize] as u64 / ERASE_LOOPS.0 as u64
    }

    /// What is written from now on: its program-time factor (on top of
    /// retention relaxation if the device uses it) and, for the error
    /// model, the states its cells take.
    pub fn set_data(&mut self, data: &DataPattern) {
        self.flash.program_ppm =
            (data.program_factor * self.flash.relaxed_factor * 1e6).round() as u64;
        if let Some(e) = self.errors.as_deref_mut() {
            e.set_data(&data.mlc_shares);
        }
    }

    /// Whether page `page` of block `b` is a lower page of a multi-bit
    /// wordline that a drive without power-loss protection backs up.
    #[inline]
    pub(super) fn is_lower_page(&self, b: u32, page: u32) -> bool {
        let bits = self.blocks.run()[b as usize].bits();
        self.flash.backup_lower_pages
            && bits > 1
            && (ModeTiming::page_type(page, bits) as u32) < bits - 1
    }

    /// Paired-page backup: a copy of a lower page's data goes to SLC on the
    /// same die before the page itself is programmed.
    pub(super) fn back_up_lower_page(
        &mut self,
        ready: u64,
        die: u32,
        units: u32,
        tl: &mut Timeline,
    ) {
        let slc = self.flash.timing[CellMode::Slc.index()].program_ns[0];
        self.counters.backup_programs += 1;
        tl.flash_program(ready, die, slc, units);
    }
}
