//! What a power cut did, as a run reports it: the operations under way, the
//! acknowledged writes lost (each named, with why), the writes in flight
//! lost or kept, recovery's time and moves; and a phase's cuts added up.

use serde::{Deserialize, Serialize};

/// Why a copy of a unit could not be read after a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossReason {
    /// Its data was in the volatile DRAM write buffer (or its page's program
    /// had not started).
    WriteCache,
    /// Its page's program was cut short.
    Interrupted,
    /// An interrupted program of a higher page on the same wordline
    /// corrupted it.
    PairedPage,
    /// Its block's erase had begun.
    Erased,
}

impl LossReason {
    pub fn describe(self) -> &'static str {
        match self {
            LossReason::WriteCache => "it was still in the volatile write cache",
            LossReason::Interrupted => "its program was interrupted",
            LossReason::PairedPage => {
                "an interrupted upper-page program corrupted its lower page (paired pages)"
            }
            LossReason::Erased => "its block's erase had begun",
        }
    }
}

/// What was under way on the flash at a cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InFlight {
    /// Page programs cut short (or, with PLP, finished on the capacitors), by who issued them.
    pub host_programs: u64,
    pub gc_programs: u64,
    pub fold_programs: u64,
    pub recovery_programs: u64,
    /// Of those, programs of a wordline's upper (CSB/MSB/TSB) page.
    pub upper_page_programs: u64,
    /// Erases cut short.
    pub erases: u64,
    /// Host units waiting in the write buffer (placed, page not yet programmed).
    pub buffered_units: u64,
    /// Page programs booked but not begun, which the cut called off (the
    /// program counters, and so WAF, still count them as booked), and how
    /// many of them were the host's.
    pub discarded_programs: u64,
    pub discarded_host: u64,
}

impl InFlight {
    /// A page program the cut called off (`host`: the host's data).
    pub fn count_discarded(&mut self, host: bool) {
        self.discarded_programs += 1;
        self.discarded_host += host as u64;
    }
}

/// Acknowledged units lost, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostByReason {
    pub write_cache: u64,
    pub interrupted: u64,
    pub paired_page: u64,
    pub erased: u64,
    /// No copy of the acknowledged version was found at all.
    pub missing: u64,
}

impl LostByReason {
    pub fn add(&mut self, reason: Option<LossReason>) {
        match reason {
            Some(LossReason::WriteCache) => self.write_cache += 1,
            Some(LossReason::Interrupted) => self.interrupted += 1,
            Some(LossReason::PairedPage) => self.paired_page += 1,
            Some(LossReason::Erased) => self.erased += 1,
            None => self.missing += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.write_cache + self.interrupted + self.paired_page + self.erased + self.missing
    }

    pub fn merge(&mut self, o: &LostByReason) {
        self.write_cache += o.write_cache;
        self.interrupted += o.interrupted;
        self.paired_page += o.paired_page;
        self.erased += o.erased;
        self.missing += o.missing;
    }
}

/// One acknowledged write a cut lost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostWrite {
    /// The mapping unit (logical byte offset = unit × mapping unit).
    pub unit: u32,
    /// The version acknowledged to the host (1 = the unit's first write).
    pub acknowledged: u32,
    /// The version recovery found (None: none, the unit reads as unwritten).
    pub recovered: Option<u32>,
    pub reason: Option<LossReason>,
}

/// How many lost writes an event lists one by one.
pub const LOST_LISTED: usize = 16;

/// One power cut and the recovery after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerLossEvent {
    /// Simulated time of the cut, and when the drive was ready again, seconds.
    pub at_seconds: f64,
    pub ready_seconds: f64,
    /// Time to scan the flash and rebuild the map (and move data out of
    /// blocks whose erase was pending), µs.
    pub recovery_us: f64,
    pub in_flight: InFlight,
    /// Pages whose spare area recovery read, and units it relocated.
    pub scanned_pages: u64,
    pub relocated_units: u64,
    /// Acknowledged units lost, in all and by reason, with the first few named.
    pub acknowledged_lost_units: u64,
    pub lost_by_reason: LostByReason,
    pub lost: Vec<LostWrite>,
    /// Units with a write in flight at the cut (not acknowledged) whose new
    /// data was lost, and whose new data survived.
    pub unacknowledged_lost_units: u64,
    pub unacknowledged_survived_units: u64,
}

/// A phase's or a run's power cuts, added up.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PowerLossSummary {
    pub cuts: u64,
    pub acknowledged_lost_units: u64,
    pub lost_by_reason: LostByReason,
    pub unacknowledged_lost_units: u64,
    pub unacknowledged_survived_units: u64,
    pub relocated_units: u64,
    pub in_flight: InFlight,
    pub recovery_us_mean: f64,
    pub recovery_us_max: f64,
    /// Simulated time the drive spent recovering, in all and as a share of
    /// the phase's (or run's) time, and the mean time it was up between
    /// being back and the next cut.
    pub recovering_seconds: f64,
    pub recovering_fraction: f64,
    pub uptime_ms_mean: f64,
    /// Cuts came faster than the drive recovered (it spent at least half its
    /// time recovering): wear, WAF and speed then describe recovery more
    /// than the workload.
    pub cuts_outpace_recovery: bool,
    /// Why the configuration may lose acknowledged writes (empty: it must not).
    pub unsafe_because: Vec<String>,
    /// The WAF of the programs that reached the flash: the booked WAF less
    /// the share of booked page programs the cuts called off (recovery did
    /// their GC again). None without host writes.
    pub flash_waf: Option<f64>,
}

impl PowerLossSummary {
    /// The cuts `events` of a stretch of `sim_ns` simulated nanoseconds.
    pub fn of(
        events: &[PowerLossEvent],
        unsafe_because: &[String],
        sim_ns: u64,
    ) -> PowerLossSummary {
        let mut s = PowerLossSummary {
            cuts: events.len() as u64,
            unsafe_because: unsafe_because.to_vec(),
            ..Default::default()
        };
        for e in events {
            s.acknowledged_lost_units += e.acknowledged_lost_units;
            s.lost_by_reason.merge(&e.lost_by_reason);
            s.unacknowledged_lost_units += e.unacknowledged_lost_units;
            s.unacknowledged_survived_units += e.unacknowledged_survived_units;
            s.relocated_units += e.relocated_units;
            let (a, b) = (&mut s.in_flight, &e.in_flight);
            a.host_programs += b.host_programs;
            a.gc_programs += b.gc_programs;
            a.fold_programs += b.fold_programs;
            a.recovery_programs += b.recovery_programs;
            a.upper_page_programs += b.upper_page_programs;
            a.erases += b.erases;
            a.buffered_units += b.buffered_units;
            a.discarded_programs += b.discarded_programs;
            a.discarded_host += b.discarded_host;
            s.recovery_us_mean += e.recovery_us / events.len() as f64;
            s.recovery_us_max = s.recovery_us_max.max(e.recovery_us);
            s.recovering_seconds += e.recovery_us / 1e6;
        }
        let seconds = sim_ns as f64 / 1e9;
        if seconds > 0.0 && !events.is_empty() {
            s.recovering_fraction = (s.recovering_seconds / seconds).min(1.0);
            s.uptime_ms_mean =
                (seconds - s.recovering_seconds).max(0.0) * 1e3 / events.len() as f64;
            s.cuts_outpace_recovery = s.recovering_fraction >= 0.5;
        }
        s
    }
}
