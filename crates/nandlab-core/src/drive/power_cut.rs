//! Power cuts at the drive: the phase's plan of cuts, a cut between two
//! commands (the FTL recovers; the write buffer and read-ahead are gone;
//! commands wait until the drive is back), and forgetting what no later cut
//! can see.

use super::{Drive, FORGET_EVERY_NS};
use crate::config::Config;
use crate::drive::readahead::ReadAhead;
use crate::power::CutPlan;
use crate::stats::power_loss::PowerLossEvent;
use crate::SimError;

impl Drive {
    /// Keeps what power cuts need (before anything is written).
    pub fn enable_power_model(&mut self, cfg: &Config) {
        self.ftl
            .enable_power_model(cfg.device.write_cache, cfg.ftl.paired_page_backup);
        self.power_check = 0;
    }

    /// When the drive is back after the last power cut (0: none yet).
    pub fn back_at(&self) -> u64 {
        self.back_at
    }

    /// Plans this phase's power cuts (None: no more cuts).
    pub fn plan_cuts(&mut self, plan: Option<CutPlan>) {
        self.cuts = plan;
    }

    /// Cuts the power at `t` (between commands); returns what it did.
    pub fn cut_power(&mut self, t: u64) -> Result<&PowerLossEvent, SimError> {
        let t = t.max(self.back_at);
        let event = self.ftl.power_loss(t, &mut self.tl, !self.power_unsafe)?;
        let back = (event.ready_seconds * 1e9).round() as u64;
        self.back_at = back.max(t);
        self.buffer.clear();
        if let Some(ra) = &mut self.read_ahead {
            *ra = ReadAhead::new(ra.window);
        }
        if let Some(free) = &mut self.dispatch_free {
            *free = self.back_at;
        }
        self.power_events.push(event);
        Ok(self.power_events.last().expect("just pushed"))
    }

    /// The power path of a command arriving at `t`: cuts due by then, and
    /// forgetting erases no later cut can see. Returns when the command
    /// can start.
    #[cold]
    pub(super) fn power_path(&mut self, t: u64) -> Result<u64, SimError> {
        while let Some(cut) = self.cuts.as_ref().map(CutPlan::next).filter(|&c| c <= t) {
            self.cut_power(cut)?;
            let back = self.back_at;
            if let Some(plan) = &mut self.cuts {
                plan.done(cut, back);
            }
        }
        let t = t.max(self.back_at);
        self.no_cut_before(t);
        let next_cut = self.cuts.as_ref().map_or(u64::MAX, CutPlan::next);
        self.power_check = next_cut.min(t + FORGET_EVERY_NS);
        Ok(t)
    }

    /// No power cut can come at or before `t` any more: forgets the erases
    /// and TRIMs only such a cut would undo.
    pub fn no_cut_before(&mut self, t: u64) {
        self.ftl.no_cut_before(t);
    }
}
