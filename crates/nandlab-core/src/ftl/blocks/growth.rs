//! How much data the workload will map, projected from how fast the mapped
//! data still grows: ZombieNAND's early-switch pool is used only while the
//! flash it loses comes out of addresses the workload will never write, and
//! GC first runs long before random writes have touched every address they
//! will (at a full drive's first GC, about 73 % are mapped).
//!
//! Over a recent window of host writes, a share `g` of the units written
//! mapped an address not mapped before. Writes spread evenly over a working
//! set of `W` units map new ones at `g = 1 − M/W` when `M` are mapped, so the
//! working set is `M / (1 − g)`: the projection. Writes all to new addresses
//! (a sequential fill, or data laid out without host writes) project no end.
//! A skewed workload's cold addresses come slowly, so the projection can
//! fall short of them; the data mapped now still bounds it from below.

use serde::{Deserialize, Serialize};

/// The window's length, as a share of the user capacity in host units
/// written: long enough to average random writes, short enough to follow a
/// workload that changes.
const WINDOW_SHARE: u64 = 16;

/// A point in the drive's history: host units written, units mapped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Point {
    written: u64,
    mapped: u64,
}

/// The mapped data's growth over the last one to two windows of host writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DataGrowth {
    window: u64,
    /// Where the growth is measured from (the window boundary before last),
    /// the last boundary, and the latest observation.
    from: Point,
    mark: Point,
    now: Point,
}

impl DataGrowth {
    pub fn new(user_units: u64) -> DataGrowth {
        DataGrowth {
            window: (user_units / WINDOW_SHARE).max(1),
            from: Point::default(),
            mark: Point::default(),
            now: Point::default(),
        }
    }

    /// The window's length in host units (a setting the config fixes).
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Host units written at the latest observation.
    pub fn written(&self) -> u64 {
        self.now.written
    }

    /// Records that `mapped` units are mapped after `written` host units.
    pub fn observe(&mut self, written: u64, mapped: u64) {
        self.now = Point { written, mapped };
        if written.saturating_sub(self.mark.written) >= self.window {
            self.from = self.mark;
            self.mark = self.now;
        }
    }

    /// Whether the mapped data has stopped growing: at most `1/share` of
    /// the units written since `from` mapped a new address.
    pub fn settled(&self, share: u64) -> bool {
        let written = self.now.written.saturating_sub(self.from.written);
        let grown = self.now.mapped.saturating_sub(self.from.mapped);
        grown.saturating_mul(share) <= written
    }

    /// The units the workload will map, as the growth since `from` projects
    /// them (`u64::MAX` if every unit written since mapped a new address).
    pub fn projected(&self) -> u64 {
        let m = self.now.mapped;
        let written = self.now.written.saturating_sub(self.from.written);
        let grown = m.saturating_sub(self.from.mapped);
        if grown >= written {
            return if grown == 0 { m } else { u64::MAX };
        }
        let w = m as u128 * written as u128 / (written - grown) as u128;
        w.min(u64::MAX as u128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_writes_project_their_working_set() {
        // 1,600 units of user space; writes spread evenly over 1,000 map new
        // ones at 1 − M/1000.
        let mut g = DataGrowth::new(1600);
        let mut mapped = 0.0f64;
        for written in 1..=2_000u64 {
            mapped += 1.0 - mapped / 1000.0;
            g.observe(written, mapped as u64);
        }
        let p = g.projected();
        assert!((950..=1050).contains(&p), "projected {p}");
    }

    #[test]
    fn a_fill_or_a_trim_is_read_as_such() {
        let mut g = DataGrowth::new(1600);
        g.observe(100, 100);
        assert_eq!(g.projected(), u64::MAX, "a sequential fill has no end yet");
        let mut g = DataGrowth::new(1600);
        g.observe(0, 500);
        assert_eq!(g.projected(), u64::MAX, "data laid out without host writes");
        g.observe(0, 0);
        assert_eq!(g.projected(), 0);
        let mut g = DataGrowth::new(1600);
        g.observe(200, 50);
        g.observe(400, 40);
        g.observe(600, 30);
        assert_eq!(g.projected(), 30, "trims: the data mapped now");
    }
}
