//! Event counters: monotonic counts of what the host asked and what the
//! flash did; a phase's figures are the difference of two copies.

use serde::{Deserialize, Serialize};
use std::ops::Sub;

/// Monotonic event counts. Phase figures are differences of two snapshots.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_trim_bytes: u64,
    /// Bytes laid out by fill phases (preconditioning, not host I/O).
    pub fill_bytes: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    pub trim_requests: u64,
    /// Mapping units the host wrote (the denominator of WAF).
    pub host_write_units: u64,
    pub flash_reads_host: u64,
    pub flash_reads_gc: u64,
    /// Page programs (a multi-plane program of n planes counts n).
    pub flash_programs_host: u64,
    pub flash_programs_gc: u64,
    /// Mapping units programmed.
    pub flash_units_host: u64,
    pub flash_units_gc: u64,
    pub erases: u64,
    /// Program operations (a multi-plane program counts once) and their die time.
    pub program_ops: u64,
    pub program_ns: u64,
    /// Die time of all erases.
    pub erase_ns: u64,
    /// Translation-page reads and write-backs of a DRAM-less drive's map
    /// cache, and the mapping units those write-backs programmed.
    pub map_reads: u64,
    pub map_programs: u64,
    pub flash_units_map: u64,
    /// A DRAM-less drive's map lookups (host reads), and those a linear
    /// extent answered without the cache.
    pub map_lookups: u64,
    pub map_extent_lookups: u64,
    /// Units folded out of pSLC cache blocks (part of `flash_units_gc`), and
    /// host units programmed to native blocks on a drive with a pSLC cache.
    pub folded_units: u64,
    pub direct_units: u64,
    /// Host units the hot/cold identifier found hot (`[ftl] hot_cold`).
    pub hot_units: u64,
    /// SLC programs backing up lower pages (paired-page backup, drives
    /// without power-loss protection).
    pub backup_programs: u64,
    /// Bytes of host reads of units never written (or trimmed): zeroes the
    /// controller returns without reading flash.
    pub unwritten_read_bytes: u64,
}

impl Sub for Counters {
    type Output = Counters;
    fn sub(self, o: Counters) -> Counters {
        self.checked_sub(o)
            .expect("counters only grow: an earlier copy is never ahead")
    }
}

impl Counters {
    /// `self - o`, field by field; None if `o` is ahead in any (it is not
    /// an earlier copy of these counters).
    pub fn checked_sub(self, o: Counters) -> Option<Counters> {
        Some(Counters {
            host_read_bytes: self.host_read_bytes.checked_sub(o.host_read_bytes)?,
            host_write_bytes: self.host_write_bytes.checked_sub(o.host_write_bytes)?,
            host_trim_bytes: self.host_trim_bytes.checked_sub(o.host_trim_bytes)?,
            fill_bytes: self.fill_bytes.checked_sub(o.fill_bytes)?,
            read_requests: self.read_requests.checked_sub(o.read_requests)?,
            write_requests: self.write_requests.checked_sub(o.write_requests)?,
            trim_requests: self.trim_requests.checked_sub(o.trim_requests)?,
            host_write_units: self.host_write_units.checked_sub(o.host_write_units)?,
            flash_reads_host: self.flash_reads_host.checked_sub(o.flash_reads_host)?,
            flash_reads_gc: self.flash_reads_gc.checked_sub(o.flash_reads_gc)?,
            flash_programs_host: self
                .flash_programs_host
                .checked_sub(o.flash_programs_host)?,
            flash_programs_gc: self.flash_programs_gc.checked_sub(o.flash_programs_gc)?,
            flash_units_host: self.flash_units_host.checked_sub(o.flash_units_host)?,
            flash_units_gc: self.flash_units_gc.checked_sub(o.flash_units_gc)?,
            erases: self.erases.checked_sub(o.erases)?,
            program_ops: self.program_ops.checked_sub(o.program_ops)?,
            program_ns: self.program_ns.checked_sub(o.program_ns)?,
            erase_ns: self.erase_ns.checked_sub(o.erase_ns)?,
            map_reads: self.map_reads.checked_sub(o.map_reads)?,
            map_programs: self.map_programs.checked_sub(o.map_programs)?,
            flash_units_map: self.flash_units_map.checked_sub(o.flash_units_map)?,
            map_lookups: self.map_lookups.checked_sub(o.map_lookups)?,
            map_extent_lookups: self.map_extent_lookups.checked_sub(o.map_extent_lookups)?,
            folded_units: self.folded_units.checked_sub(o.folded_units)?,
            direct_units: self.direct_units.checked_sub(o.direct_units)?,
            hot_units: self.hot_units.checked_sub(o.hot_units)?,
            backup_programs: self.backup_programs.checked_sub(o.backup_programs)?,
            unwritten_read_bytes: self
                .unwritten_read_bytes
                .checked_sub(o.unwritten_read_bytes)?,
        })
    }
}

impl Counters {
    /// Write amplification: mapping units programmed per unit the host wrote
    /// (None without host writes: undefined, not 0).
    pub fn waf(&self) -> Option<f64> {
        (self.host_write_units > 0).then(|| {
            (self.host_write_units + self.flash_units_gc + self.flash_units_map) as f64
                / self.host_write_units as f64
        })
    }

    /// Write amplification of the data alone: host units and GC copies
    /// (folding included) per host unit, without translation-page write-backs.
    pub fn data_waf(&self) -> Option<f64> {
        (self.host_write_units > 0).then(|| {
            (self.host_write_units + self.flash_units_gc) as f64 / self.host_write_units as f64
        })
    }

    /// Mean time of a program operation on a die, µs (0 without programs).
    pub fn program_us_mean(&self) -> f64 {
        if self.program_ops == 0 {
            0.0
        } else {
            self.program_ns as f64 / self.program_ops as f64 / 1000.0
        }
    }

    /// Mean time of an erase, µs (0 without erases).
    pub fn erase_us_mean(&self) -> f64 {
        if self.erases == 0 {
            0.0
        } else {
            self.erase_ns as f64 / self.erases as f64 / 1000.0
        }
    }

    pub fn requests(&self) -> u64 {
        self.read_requests + self.write_requests + self.trim_requests
    }
}
