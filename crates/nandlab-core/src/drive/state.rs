//! What the drive tells the simulator about its flash between requests:
//! blocks free, retired and by bit mode, the wear and spare flash used, the
//! error model's tally and the integrity oracle's counts — read-only views,
//! so that the simulator talks to the drive, never to the FTL inside it.

use super::Drive;
use crate::ftl::read_errors::ReadErrors;
use crate::memory::Region;
use crate::oracle::Oracle;
use crate::sanity::Broken;
use crate::stats::IntegrityCounts;

impl Drive {
    /// Bytes of a mapping unit.
    pub fn unit_bytes(&self) -> u64 {
        self.unit.size
    }

    /// Erased blocks ready to program, over all pools.
    pub fn free_blocks(&self) -> u64 {
        self.ftl.blocks().total_free()
    }

    /// Blocks retired (bad).
    pub fn bad_blocks(&self) -> u64 {
        self.ftl.blocks().bad_blocks()
    }

    /// Usable blocks per bit mode (SLC, MLC, TLC, QLC).
    pub fn blocks_by_mode(&self) -> [u64; 4] {
        self.ftl.blocks().blocks_by_mode()
    }

    /// Each block's erase count.
    pub fn erase_counts(&self) -> &[u32] {
        self.ftl.blocks().erase_count()
    }

    /// Mapping units the usable flash holds, at the modes its blocks run in.
    pub fn usable_units(&self) -> u64 {
        self.ftl.blocks().usable_units()
    }

    /// Valid units held in pSLC cache blocks.
    pub fn pslc_units(&self) -> u64 {
        self.ftl.cache_units()
    }

    /// Share of the native rated endurance used, averaged over blocks.
    pub fn wear_used(&self) -> f64 {
        self.ftl.blocks().wear_used()
    }

    /// Share of the spare flash lost to wear (the drive dies at 1).
    pub fn reserve_used(&self) -> f64 {
        self.ftl.reserve_used()
    }

    /// How far the drive is towards its death, 0 to 1 (`Ftl::life_used`).
    pub fn life_used(&self) -> f64 {
        self.ftl.life_used()
    }

    /// Host bytes written when the drive stopped holding its advertised
    /// capacity, if it has.
    pub fn capacity_short_since_bytes(&self) -> Option<u64> {
        self.ftl.capacity_short_since_bytes()
    }

    /// The bit-error model, if the drive has one.
    pub fn errors(&self) -> Option<&ReadErrors> {
        self.ftl.errors()
    }

    /// The bit-error model, to set the temperature or bake the drive.
    pub fn errors_mut(&mut self) -> Option<&mut ReadErrors> {
        self.ftl.errors_mut()
    }

    /// Switches on the integrity oracle (every read checked against the
    /// version it must return).
    pub fn enable_oracle(&mut self) {
        self.ftl.enable_oracle();
    }

    /// Whether the integrity oracle is on.
    pub fn has_oracle(&self) -> bool {
        self.ftl.oracle().is_some()
    }

    /// The integrity oracle (None when it is off): the version each unit's
    /// reads must return.
    pub fn oracle(&self) -> Option<&Oracle> {
        self.ftl.oracle()
    }

    /// Whether every valid unit maps to exactly one physical unit that maps
    /// back, and the block table's counts agree (the FTL's invariants).
    pub fn check_invariants(&self) -> Result<(), Broken> {
        self.ftl.check_invariants()
    }

    /// Whether a fill was laid out as arithmetic (see [`Drive::fill_in_order`]).
    pub fn fill_laid_out(&self) -> bool {
        self.ftl.fill_laid_out()
    }

    /// What the integrity oracle stamped and checked (None when it is off).
    pub fn integrity_counts(&self) -> Option<IntegrityCounts> {
        self.ftl.oracle().map(|o| IntegrityCounts {
            stamped: o.stamped,
            checked_reads: o.checked_reads,
        })
    }

    /// The mapping tables a fill of `count` units from `first_lpn` writes
    /// (for backing them ahead of it).
    pub fn fill_regions(&self, first_lpn: u64, count: u64) -> [Region; 2] {
        self.ftl.fill_regions(first_lpn, count)
    }
}
