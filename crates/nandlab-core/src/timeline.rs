//! Time on the drive's shared resources. Each resource (host link in each
//! direction, each channel bus, each die) has a "free at" time; an operation
//! starts at the latest of the times it needs and pushes them forward. All
//! times are integer nanoseconds, so runs are bit-identical everywhere.
//! Also the DRAM write buffer, whose space frees when programs complete.

use crate::config::DeviceConfig;
use crate::geometry::{FastDiv, Geometry};
use crate::units::transfer_ns;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Free-at times of every resource, and the costs of moving data.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// When false (fill phases), operations cost no time.
    pub enabled: bool,
    die_free: Vec<u64>,
    chan_free: Vec<u64>,
    /// Host link: [host→drive, drive→host]; `out` is 0 on a half-duplex link.
    link_free: [u64; 2],
    out: usize,
    pub command_ns: u64,
    link_rate: u64,
    /// Channel transfer time of k mapping units, k = 0..=units per multi-plane page.
    chan_units_ns: Vec<u64>,
    dies_per_channel: FastDiv,
}

impl Timeline {
    pub fn new(g: &Geometry, d: &DeviceConfig) -> Timeline {
        let max_units = (g.units_per_page * g.planes_per_die) as u64;
        Timeline {
            enabled: true,
            die_free: vec![0; g.dies as usize],
            chan_free: vec![0; g.channels as usize],
            link_free: [0; 2],
            out: d.interface.full_duplex as usize,
            command_ns: d.interface.command_overhead_ns,
            link_rate: d.interface.link_rate,
            chan_units_ns: (0..=max_units)
                .map(|k| transfer_ns(k * g.unit_size as u64, d.channel_rate))
                .collect(),
            dies_per_channel: g.fast.dies_per_channel,
        }
    }

    #[inline]
    fn channel(&self, die: u32) -> usize {
        self.dies_per_channel.div(die) as usize
    }

    /// A command crosses the link to the drive no earlier than `t`; returns when it has.
    #[inline]
    pub fn command(&mut self, t: u64) -> u64 {
        if !self.enabled {
            return t;
        }
        let start = t.max(self.link_free[0]);
        self.link_free[0] = start + self.command_ns;
        self.link_free[0]
    }

    /// Moves `bytes` host→drive (`to_drive`) or drive→host, starting no earlier than `t`.
    #[inline]
    pub fn link_transfer(&mut self, t: u64, bytes: u64, to_drive: bool) -> u64 {
        if !self.enabled {
            return t;
        }
        let i = if to_drive { 0 } else { self.out };
        let start = t.max(self.link_free[i]);
        self.link_free[i] = start + transfer_ns(bytes, self.link_rate);
        self.link_free[i]
    }

    /// Reads a page on `die` (sense `read_ns`), then moves `units` mapping units
    /// to the controller. Returns when the data is in the controller.
    #[inline]
    pub fn flash_read(&mut self, t: u64, die: u32, read_ns: u64, units: u32) -> u64 {
        if !self.enabled {
            return t;
        }
        let d = die as usize;
        let c = self.channel(die);
        let sensed = t.max(self.die_free[d]) + read_ns;
        let xfer_end = sensed.max(self.chan_free[c]) + self.chan_units_ns[units as usize];
        self.chan_free[c] = xfer_end;
        // The die's page register holds the data until it has crossed the bus.
        self.die_free[d] = xfer_end;
        xfer_end
    }

    /// Moves `units` mapping units to `die` once they are ready at `t`, then
    /// programs them (`program_ns`). Returns when the program completes.
    #[inline]
    pub fn flash_program(&mut self, t: u64, die: u32, program_ns: u64, units: u32) -> u64 {
        if !self.enabled {
            return t;
        }
        let d = die as usize;
        let c = self.channel(die);
        let xfer_end = t.max(self.chan_free[c]) + self.chan_units_ns[units as usize];
        self.chan_free[c] = xfer_end;
        let done = xfer_end.max(self.die_free[d]) + program_ns;
        self.die_free[d] = done;
        done
    }

    /// Erases a block on `die` no earlier than `t`; returns when done.
    #[inline]
    pub fn erase(&mut self, t: u64, die: u32, erase_ns: u64) -> u64 {
        if !self.enabled {
            return t;
        }
        let d = die as usize;
        self.die_free[d] = t.max(self.die_free[d]) + erase_ns;
        self.die_free[d]
    }

    /// When `die` finishes the work queued on it.
    #[inline]
    pub fn die_free_at(&self, die: u32) -> u64 {
        self.die_free[die as usize]
    }

    /// When every resource is idle.
    pub fn all_idle_at(&self) -> u64 {
        let m = self
            .die_free
            .iter()
            .chain(&self.chan_free)
            .chain(&self.link_free)
            .copied()
            .max()
            .unwrap_or(0);
        m
    }
}

/// The DRAM write buffer: host data waits here from its transfer until its
/// page is programmed. Counted in mapping units.
#[derive(Debug, Clone)]
pub struct WriteBuffer {
    capacity: u64,
    used: u64,
    /// (time, units) freed when a program completes.
    releases: BinaryHeap<Reverse<(u64, u64)>>,
}

impl WriteBuffer {
    pub fn new(capacity_units: u64) -> WriteBuffer {
        WriteBuffer {
            capacity: capacity_units,
            used: 0,
            releases: BinaryHeap::new(),
        }
    }

    /// Reserves `n` units at time `t` or as soon after as programs free them.
    /// Returns the time the space is available.
    #[inline]
    pub fn acquire(&mut self, n: u64, t: u64) -> u64 {
        let mut at = t;
        // Drop releases that have happened by `at`; while full, wait for the next one.
        while let Some(&Reverse((when, units))) = self.releases.peek() {
            if when > at && self.used + n <= self.capacity {
                break;
            }
            self.releases.pop();
            self.used -= units;
            at = at.max(when);
        }
        debug_assert!(
            self.used + n <= self.capacity,
            "write buffer smaller than a multi-plane page"
        );
        self.used += n;
        at
    }

    /// `n` units leave the buffer at time `t` (their program completed).
    #[inline]
    pub fn release_at(&mut self, n: u64, t: u64) {
        self.releases.push(Reverse((t, n)));
    }

    /// Units held now (including those not yet released by a completed program).
    pub fn used(&self) -> u64 {
        self.used
    }
}
