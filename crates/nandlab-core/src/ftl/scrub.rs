//! Firmware that lives with bit errors (`[device.errors]` `read_reclaim`,
//! `refresh_at`): read reclaim relocates a block once it has been read
//! `read_reclaim` times since its erase (read disturb: Cai et al., the
//! seeds' "read disturb after 10⁵–10⁶ reads"), right after the read that
//! crossed it; patrol refresh walks the blocks in idle time and relocates
//! those whose retention and read disturb have used `refresh_at` of the
//! headroom their wear leaves below the hard decode's limit (on their worst
//! page type; the headroom is at least a tenth of the limit, so that a worn
//! block is not rewritten over and over) — Cai et al., ICCD 2012, "flash
//! correct-and-refresh". Both copy the block's valid data as GC
//! does and erase it: the writes count in WAF, the programs in
//! `reclaim_programs` / `refresh_programs`.

use super::blocks::BlockState;
use super::frontiers::Frontier;
use super::Ftl;
use crate::schedule::timeline::Timeline;
use crate::SimError;

/// Blocks patrol checks in one idle window at most (it goes on in the next).
const PATROL_CHECKS: u32 = 256;

/// Why a block is relocated.
#[derive(Clone, Copy)]
enum Why {
    Reclaim,
    Refresh,
}

impl Ftl {
    /// Relocates the blocks read past `read_reclaim`, from `t`.
    pub(crate) fn reclaim_due(&mut self, t: u64, tl: &mut Timeline) -> Result<(), SimError> {
        let Some(e) = self.errors.as_deref_mut() else {
            return Ok(());
        };
        if e.reclaim_due.is_empty() {
            return Ok(());
        }
        let due = std::mem::take(&mut e.reclaim_due);
        for &b in &due {
            self.scrub(b, Why::Reclaim, t, tl)?;
        }
        Ok(())
    }

    /// Patrol refresh in an idle window ending at `until`: the next blocks
    /// in turn, each relocated if its predicted RBER has reached the refresh
    /// point and its die is idle before `until`.
    pub(crate) fn patrol(&mut self, until: u64, tl: &mut Timeline) -> Result<(), SimError> {
        let Some((limit, share)) = self.errors.as_deref().and_then(|e| e.settings.refresh) else {
            return Ok(());
        };
        let blocks = self.g.blocks;
        for _ in 0..PATROL_CHECKS.min(blocks) {
            let e = self.errors.as_deref_mut().expect("checked above");
            let b = e.patrol_at;
            e.patrol_at = (b + 1) % blocks;
            let die = self.g.die_of_pool(self.g.pool_of_block(b));
            let start = tl.die_free_at(die);
            if start >= until {
                continue;
            }
            let due = self.relocatable(b)
                && self.errors.as_deref().is_some_and(|e| {
                    let (now, rewritten) = e.worst_rber(b, start);
                    now - rewritten >= share * (limit - rewritten).max(0.1 * limit)
                });
            if due {
                self.scrub(b, Why::Refresh, start, tl)?;
            }
        }
        Ok(())
    }

    /// Whether block `b` holds data the firmware can relocate now: a native
    /// block (a pSLC cache block is folded soon anyway) with valid data,
    /// sealed, or a frontier with nothing waiting in RAM for it (it is
    /// closed first).
    fn relocatable(&self, b: u32) -> bool {
        let i = b as usize;
        if self.blocks.in_cache()[i] || self.blocks.valid()[i] == 0 {
            return false;
        }
        match self.blocks.state()[i] {
            BlockState::Sealed => true,
            BlockState::Open => {
                let pool = self.g.pool_of_block(b);
                let settled = self.blocks.written()[i] == self.blocks.programmed()[i];
                let host = Frontier::HOST
                    .iter()
                    .any(|&s| self.frontiers.get(s, pool) == b);
                let gc =
                    self.frontiers.get(Frontier::Gc, pool) == b && self.gc.fill[pool as usize] == 0;
                settled && (host || gc)
            }
            _ => false,
        }
    }

    /// Relocates block `b` from `t` (if it can be now) and counts it.
    fn scrub(&mut self, b: u32, why: Why, t: u64, tl: &mut Timeline) -> Result<(), SimError> {
        let relocatable = self.relocatable(b);
        if let Some(e) = self.errors.as_deref_mut() {
            e.dequeued(b);
        }
        if !relocatable {
            return Ok(());
        }
        let pool = self.g.pool_of_block(b);
        if self.blocks.state()[b as usize] == BlockState::Sealed {
            self.gc.victims.remove(b, &self.blocks);
        } else {
            // An open block here is a host stream's or GC's frontier.
            self.frontiers.left(pool, b);
        }
        let before = self.counters.flash_programs_gc;
        self.relocate(b, pool, t, tl)?;
        let programs = self.counters.flash_programs_gc - before;
        let tally = &mut self
            .errors
            .as_deref_mut()
            .expect("scrubs need the model")
            .tally;
        match why {
            Why::Reclaim => {
                tally.reclaims += 1;
                tally.reclaim_programs += programs;
            }
            Why::Refresh => {
                tally.refreshes += 1;
                tally.refresh_programs += programs;
            }
        }
        Ok(())
    }
}
