//! Energy: what the drive's work drew (`[device.energy]`). The timeline
//! tallies each die's sensing, programming and erasing time, the bytes on
//! the flash channels, the host link's busy time, and the time with a host
//! command in flight; a phase's energy is the difference of two tallies
//! priced by the config. Fill and untimed phases move data at memory speed
//! and draw nothing.

use serde::{Deserialize, Serialize};

/// What the drive draws: a die's power while it senses, programs and
/// erases, a byte's energy on a channel, the host link's and the
/// controller's power (`[device.energy]`, checked).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EnergyConfig {
    pub read_mw: f64,
    pub program_mw: f64,
    pub erase_mw: f64,
    pub channel_pj_per_byte: f64,
    pub link_w: f64,
    pub controller_active_w: f64,
    pub controller_idle_w: f64,
}

/// Monotonic work tallies since the drive was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    pub read_ns: u64,
    pub program_ns: u64,
    pub erase_ns: u64,
    pub channel_bytes: u64,
    pub link_ns: u64,
    /// Time with at least one host command in flight (the union of their
    /// spans, arrival to completion), and where that union ends so far.
    pub active_ns: u64,
    pub active_until: u64,
}

impl Activity {
    /// A host command in flight from `arrival` to `done` (arrivals come in
    /// time order).
    #[inline]
    pub fn command(&mut self, arrival: u64, done: u64) {
        if done > self.active_until {
            self.active_ns += done - arrival.max(self.active_until);
            self.active_until = done;
        }
    }

    /// The work done since `before` (an earlier copy).
    pub fn since(&self, before: &Activity) -> Activity {
        Activity {
            read_ns: self.read_ns - before.read_ns,
            program_ns: self.program_ns - before.program_ns,
            erase_ns: self.erase_ns - before.erase_ns,
            channel_bytes: self.channel_bytes - before.channel_bytes,
            link_ns: self.link_ns - before.link_ns,
            active_ns: self.active_ns - before.active_ns,
            active_until: self.active_until,
        }
    }

    /// What this work drew over `seconds` of simulated time in which the
    /// host completed `requests` commands (of timed phases only: untimed
    /// ones draw nothing).
    pub fn summary(&self, e: &EnergyConfig, seconds: f64, requests: u64) -> EnergySummary {
        let s = |ns: u64| ns as f64 * 1e-9;
        let flash_joules = (e.read_mw * s(self.read_ns)
            + e.program_mw * s(self.program_ns)
            + e.erase_mw * s(self.erase_ns))
            * 1e-3
            + e.channel_pj_per_byte * 1e-12 * self.channel_bytes as f64;
        let active = s(self.active_ns).min(seconds);
        let controller_joules =
            e.controller_idle_w * seconds + (e.controller_active_w - e.controller_idle_w) * active;
        let link_joules = e.link_w * s(self.link_ns);
        let energy_joules = flash_joules + controller_joules + link_joules;
        // Over no simulated time (a fill, an untimed phase) there is no power
        // and no IOPS per watt: None, never 0.
        let timed = seconds > 0.0;
        EnergySummary {
            energy_joules,
            flash_joules,
            controller_joules,
            link_joules,
            average_power_w: timed.then(|| energy_joules / seconds),
            iops_per_watt: (timed && energy_joules > 0.0).then(|| requests as f64 / energy_joules),
        }
    }
}

/// Energy figures of a summary.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EnergySummary {
    /// All the drive drew, and its parts: the flash (dies and channels), the
    /// controller, the host link.
    pub energy_joules: f64,
    pub flash_joules: f64,
    pub controller_joules: f64,
    pub link_joules: f64,
    /// Energy over simulated time, and commands completed per joule (IOPS
    /// per watt); None over no simulated time.
    pub average_power_w: Option<f64>,
    pub iops_per_watt: Option<f64>,
}
