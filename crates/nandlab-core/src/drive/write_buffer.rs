//! The DRAM write buffer: where host data waits from its transfer until its
//! page is programmed, and the back-pressure it puts on host writes when full.

use crate::sanity::{ensure, Checked};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The DRAM write buffer: host data waits here from its transfer until its
/// page is programmed. Counted in mapping units; space is granted in order
/// (no request's data gets in ahead of one still waiting for room).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WriteBuffer {
    capacity: u64,
    used: u64,
    /// When the last space was granted.
    granted: u64,
    /// (time, units) freed when a program completes.
    releases: BinaryHeap<Reverse<(u64, u64)>>,
}

impl WriteBuffer {
    pub fn new(capacity_units: u64) -> WriteBuffer {
        WriteBuffer {
            capacity: capacity_units,
            used: 0,
            granted: 0,
            releases: BinaryHeap::new(),
        }
    }

    /// Checks this (loaded) buffer against `fresh`, one its config builds:
    /// the same size, holding no more than it can, releasing what it holds.
    pub fn check_loaded(&self, fresh: &WriteBuffer) -> Checked {
        ensure(
            self.capacity == fresh.capacity && self.used <= self.capacity,
            || "the write buffer holds more than its size".into(),
        )?;
        let releasing = self
            .releases
            .iter()
            .map(|r| r.0 .1)
            .try_fold(0u64, u64::checked_add);
        ensure(releasing.is_some_and(|r| r <= self.used), || {
            "the write buffer releases more than it holds".into()
        })
    }

    /// Reserves `n` units at time `t` or as soon after as programs free them.
    /// Returns the time the space is available.
    #[inline]
    pub fn acquire(&mut self, n: u64, t: u64) -> u64 {
        let mut at = t.max(self.granted);
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
        self.granted = at;
        at
    }

    /// Units still waiting for their program at `t`.
    pub fn dirty_at(&self, t: u64) -> u64 {
        let released: u64 = self
            .releases
            .iter()
            .filter(|r| r.0 .0 <= t)
            .map(|r| r.0 .1)
            .sum();
        self.used - released
    }

    /// When the last program under way completes and the buffer is empty
    /// (0: nothing waits).
    pub fn drained_at(&self) -> u64 {
        self.releases.iter().map(|r| r.0 .0).max().unwrap_or(0)
    }

    /// Power was lost: the buffer is empty.
    pub fn clear(&mut self) {
        self.used = 0;
        self.granted = 0;
        self.releases.clear();
    }

    /// `n` units leave the buffer at time `t` (their program completed).
    #[inline]
    pub fn release_at(&mut self, n: u64, t: u64) {
        self.releases.push(Reverse((t, n)));
    }
}
