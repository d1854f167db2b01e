//! Summaries of a phase or a run: rates, latencies, WAF, erase counts,
//! wear, integrity checks, bit errors and power cuts, built from counters and latency
//! distributions; and each `[[phase.job]]`'s own figures.

use super::latency::null_without_samples;
use super::power_loss::PowerLossSummary;
use super::{Counters, EnergySummary, ErrorSummary, Latency, LatencyBins, LatencySummary};
use crate::{Death, DeathCause};
use serde::{Deserialize, Serialize};

/// Erase counts across blocks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EraseStats {
    pub min: u32,
    pub max: u32,
    pub mean: f64,
    pub std: f64,
}

impl EraseStats {
    /// Statistics and a histogram `[(erase count, blocks)]` in ascending order.
    pub fn of(counts: &[u32]) -> (EraseStats, Vec<(u32, u64)>) {
        let n = counts.len().max(1) as f64;
        let mean = counts.iter().map(|&c| c as f64).sum::<f64>() / n;
        let var = counts
            .iter()
            .map(|&c| (c as f64 - mean) * (c as f64 - mean))
            .sum::<f64>()
            / n;
        let max = counts.iter().copied().max().unwrap_or(0);
        let mut hist = vec![0u64; max as usize + 1];
        for &c in counts {
            hist[c as usize] += 1;
        }
        let hist = hist
            .into_iter()
            .enumerate()
            .filter(|(_, n)| *n > 0)
            .map(|(c, n)| (c as u32, n))
            .collect();
        let stats = EraseStats {
            min: counts.iter().copied().min().unwrap_or(0),
            max,
            mean,
            std: var.sqrt(),
        };
        (stats, hist)
    }
}

/// The figures of a phase or of the whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub name: String,
    pub kind: String,
    /// None (null) without host writes: undefined, not 0.
    pub waf: Option<f64>,
    /// WAF without the map cache's translation-page write-backs.
    pub data_waf: Option<f64>,
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub host_trim_bytes: u64,
    pub fill_bytes: u64,
    pub host_requests: u64,
    pub host_read_requests: u64,
    pub host_write_requests: u64,
    pub host_trim_requests: u64,
    pub flash_programs: u64,
    pub flash_reads: u64,
    pub erases: u64,
    pub flash_programs_host: u64,
    pub flash_programs_gc: u64,
    pub flash_reads_host: u64,
    pub flash_reads_gc: u64,
    /// Map-cache misses (translation pages read) and write-backs (programmed).
    pub map_reads: u64,
    pub map_programs: u64,
    /// A DRAM-less drive's map lookups, and those its extents answered
    /// (left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub map_lookups: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub map_extent_lookups: u64,
    /// pSLC: data folded into native blocks, and host data written straight to them.
    pub folded_bytes: u64,
    pub direct_bytes: u64,
    /// Host data (the fill's included) the hot/cold identifier found hot
    /// (`[ftl] hot_cold`; left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub hot_bytes: u64,
    #[serde(flatten)]
    pub rates: Rates,
    #[serde(serialize_with = "null_without_samples")]
    pub read_latency_us: LatencySummary,
    #[serde(serialize_with = "null_without_samples")]
    pub write_latency_us: LatencySummary,
    /// Mean response time of every host read and write, µs (None without any).
    pub latency_us_mean: Option<f64>,
    /// The latency histograms, for a phase with `latency_bins = true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_bins: Option<LatencyBins>,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
    pub requests_per_wall_second: f64,
    pub free_blocks: u64,
    /// Blocks retired because an erase failed (worn out).
    pub bad_blocks: u64,
    pub program_us_mean: f64,
    pub erase_us_mean: f64,
    pub erase_count: EraseStats,
    pub erase_count_histogram: Vec<(u32, u64)>,
    /// Why the drive died, if it did (in this phase, or in the run), in
    /// words with the figures, and as a cause for programs.
    pub death: Option<String>,
    pub death_cause: Option<DeathCause>,
    /// Host bytes written when the drive stopped holding its advertised
    /// capacity (its usable flash below the user capacity plus the GC high
    /// watermark; only `death = "dead-blocks"` lives on past it), if it has.
    pub capacity_short_since_bytes: Option<u64>,
    /// If the drive died: the share of its advertised capacity its usable
    /// flash still held (1 at most; under `death = "dead-blocks"` a drive
    /// can live on with far less).
    pub capacity_at_death: Option<f64>,
    /// With the integrity oracle on: what it has checked so far on this drive.
    pub integrity: Option<IntegrityCounts>,
    /// With `[device.errors]`: RBER, read retries, uncorrectable reads, UBER.
    #[serde(flatten)]
    pub errors: Option<ErrorSummary>,
    /// What the drive drew (`[device.energy]`).
    #[serde(flatten)]
    pub energy: EnergySummary,
    /// SLC programs of paired-page backup.
    pub backup_programs: u64,
    /// Bytes the host read of addresses never written (zeroes, no flash
    /// read: a fresh drive's reads; left out when none).
    #[serde(skip_serializing_if = "is_zero")]
    pub unwritten_read_bytes: u64,
    /// Power cuts and what they did (phases with cuts, and the run of a drive with them).
    pub power_loss: Option<PowerLossSummary>,
    /// A trace phase replayed with `--skip-bad`: what it passed over.
    pub trace_skipped: Option<TraceSkipped>,
}

/// The integrity oracle's work: operations stamped (host writes, moves,
/// TRIMs) and units checked on host reads, all passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IntegrityCounts {
    pub stamped: u64,
    pub checked_reads: u64,
}

/// Inputs of a [`Summary`] besides the counters.
pub struct SummaryParts<'a> {
    pub name: &'a str,
    pub kind: &'a str,
    pub reads: &'a Latency,
    pub writes: &'a Latency,
    pub sim_ns: u64,
    pub wall_seconds: f64,
    pub free_blocks: u64,
    pub bad_blocks: u64,
    pub erase_counts: &'a [u32],
    pub death: Option<Death>,
    pub capacity_short_since_bytes: Option<u64>,
    /// The drive's usable flash over its advertised capacity, 1 at most.
    pub capacity_share: f64,
    /// Bytes of a mapping unit.
    pub unit_bytes: u64,
    pub integrity: Option<IntegrityCounts>,
    pub errors: Option<ErrorSummary>,
    pub energy: EnergySummary,
    pub power_loss: Option<PowerLossSummary>,
    pub trace_skipped: Option<TraceSkipped>,
}

/// Malformed lines a trace phase passed over (`--skip-bad`), and the number
/// of the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSkipped {
    pub lines: u64,
    pub first_line: Option<u64>,
}

/// The mean response time of the requests in `a` and `b` together, µs.
fn mean_of_both(a: &Latency, b: &Latency) -> Option<f64> {
    let n = a.count() + b.count();
    if n == 0 {
        return None;
    }
    Some((a.mean_ns() * a.count() as f64 + b.mean_ns() * b.count() as f64) / n as f64 / 1000.0)
}

impl Summary {
    pub fn new(c: &Counters, p: SummaryParts) -> Summary {
        let secs = p.sim_ns as f64 / 1e9;
        let (erase_count, erase_count_histogram) = EraseStats::of(p.erase_counts);
        let requests = c.requests();
        Summary {
            name: p.name.to_string(),
            kind: p.kind.to_string(),
            waf: c.waf(),
            data_waf: c.data_waf(),
            host_write_bytes: c.host_write_bytes,
            host_read_bytes: c.host_read_bytes,
            host_trim_bytes: c.host_trim_bytes,
            fill_bytes: c.fill_bytes,
            host_requests: requests,
            host_read_requests: c.read_requests,
            host_write_requests: c.write_requests,
            host_trim_requests: c.trim_requests,
            flash_programs: c.flash_programs_host + c.flash_programs_gc + c.map_programs,
            flash_reads: c.flash_reads_host + c.flash_reads_gc + c.map_reads,
            erases: c.erases,
            flash_programs_host: c.flash_programs_host,
            flash_programs_gc: c.flash_programs_gc,
            flash_reads_host: c.flash_reads_host,
            flash_reads_gc: c.flash_reads_gc,
            map_reads: c.map_reads,
            map_lookups: c.map_lookups,
            map_extent_lookups: c.map_extent_lookups,
            map_programs: c.map_programs,
            folded_bytes: c.folded_units * p.unit_bytes,
            direct_bytes: c.direct_units * p.unit_bytes,
            hot_bytes: c.hot_units * p.unit_bytes,
            rates: Rates::of(Traffic::of(c), secs),
            read_latency_us: p.reads.summary(),
            write_latency_us: p.writes.summary(),
            latency_us_mean: mean_of_both(p.reads, p.writes),
            latency_bins: None,
            sim_seconds: secs,
            wall_seconds: p.wall_seconds,
            requests_per_wall_second: if p.wall_seconds > 0.0 {
                requests as f64 / p.wall_seconds
            } else {
                0.0
            },
            free_blocks: p.free_blocks,
            bad_blocks: p.bad_blocks,
            program_us_mean: c.program_us_mean(),
            erase_us_mean: c.erase_us_mean(),
            erase_count,
            erase_count_histogram,
            death_cause: p.death.as_ref().map(|d| d.cause),
            capacity_at_death: p.death.is_some().then_some(p.capacity_share),
            death: p.death.map(|d| d.reason),
            capacity_short_since_bytes: p.capacity_short_since_bytes,
            integrity: p.integrity,
            errors: p.errors,
            energy: p.energy,
            backup_programs: c.backup_programs,
            unwritten_read_bytes: c.unwritten_read_bytes,
            power_loss: p.power_loss.map(|mut cuts| {
                let programs = c.flash_programs_host + c.flash_programs_gc + c.map_programs;
                let reached = match programs {
                    0 => 1.0,
                    n => 1.0 - cuts.in_flight.discarded_programs as f64 / n as f64,
                };
                cuts.flash_waf = c.waf().map(|w| w * reached);
                cuts
            }),
            trace_skipped: p.trace_skipped,
        }
    }
}

/// Host requests and MB/s (10^6 bytes) per simulated second: None (null)
/// over no simulated time (a fill, an untimed phase), where a rate has no
/// meaning.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rates {
    pub iops: Option<f64>,
    pub mbps: Option<f64>,
    pub read_mbps: Option<f64>,
    pub write_mbps: Option<f64>,
}

impl Rates {
    /// The rates of `traffic` over `secs`.
    pub fn of(traffic: Traffic, secs: f64) -> Rates {
        let per_sec = |x: f64| (secs > 0.0).then(|| x / secs);
        Rates {
            iops: per_sec(traffic.requests as f64),
            mbps: per_sec((traffic.read_bytes + traffic.write_bytes) as f64 / 1e6),
            read_mbps: per_sec(traffic.read_bytes as f64 / 1e6),
            write_mbps: per_sec(traffic.write_bytes as f64 / 1e6),
        }
    }
}

/// The host traffic a rate counts: requests and bytes moved.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Traffic {
    pub requests: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl Traffic {
    pub fn of(c: &Counters) -> Traffic {
        Traffic {
            requests: c.requests(),
            read_bytes: c.host_read_bytes,
            write_bytes: c.host_write_bytes,
        }
    }

    /// Whether this is part of `c`'s traffic (a snapshot's check).
    pub fn within(&self, c: &Counters) -> bool {
        let all = Traffic::of(c);
        self.requests <= all.requests
            && self.read_bytes <= all.read_bytes
            && self.write_bytes <= all.write_bytes
    }
}

impl std::ops::AddAssign for Traffic {
    fn add_assign(&mut self, o: Traffic) {
        self.requests += o.requests;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
    }
}

/// One `[[phase.job]]`'s own figures, as fio reports each job of a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobSummary {
    pub name: String,
    pub host_read_bytes: u64,
    pub host_write_bytes: u64,
    pub host_requests: u64,
    pub host_read_requests: u64,
    pub host_write_requests: u64,
    #[serde(flatten)]
    pub rates: Rates,
    #[serde(serialize_with = "null_without_samples")]
    pub read_latency_us: LatencySummary,
    #[serde(serialize_with = "null_without_samples")]
    pub write_latency_us: LatencySummary,
    /// The latency histograms, for a phase with `latency_bins = true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_bins: Option<LatencyBins>,
    /// From the phase's start to the job's last completion.
    pub sim_seconds: f64,
}

impl JobSummary {
    /// `c`: the host counters of the job's own requests.
    pub fn new(name: &str, c: &Counters, reads: &Latency, writes: &Latency, ns: u64) -> JobSummary {
        let secs = ns as f64 / 1e9;
        JobSummary {
            name: name.to_string(),
            host_read_bytes: c.host_read_bytes,
            host_write_bytes: c.host_write_bytes,
            host_requests: c.requests(),
            host_read_requests: c.read_requests,
            host_write_requests: c.write_requests,
            rates: Rates::of(Traffic::of(c), secs),
            read_latency_us: reads.summary(),
            write_latency_us: writes.summary(),
            latency_bins: None,
            sim_seconds: secs,
        }
    }
}

/// Whether a count is zero (a summary leaves such a figure out).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_response_time_weighs_reads_and_writes_by_their_counts() {
        let (mut reads, mut writes) = (Latency::new(3), Latency::new(3));
        assert_eq!(mean_of_both(&reads, &writes), None);
        for _ in 0..3 {
            reads.record(100_000);
        }
        writes.record(500_000);
        // (3 × 100 µs + 500 µs) / 4 requests.
        assert!((mean_of_both(&reads, &writes).unwrap() - 200.0).abs() < 0.2);
    }
}
