//! What a run measures: event counters, latency histograms (HdrHistogram),
//! interval time-series rows, and the summaries built from them.

use crate::power::PowerLossSummary;
use hdrhistogram::Histogram;
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
    /// Units folded out of pSLC cache blocks (part of `flash_units_gc`), and
    /// host units programmed to native blocks on a drive with a pSLC cache.
    pub folded_units: u64,
    pub direct_units: u64,
    /// SLC programs backing up lower pages (paired-page backup, drives
    /// without power-loss protection).
    pub backup_programs: u64,
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
            folded_units: self.folded_units.checked_sub(o.folded_units)?,
            direct_units: self.direct_units.checked_sub(o.direct_units)?,
            backup_programs: self.backup_programs.checked_sub(o.backup_programs)?,
        })
    }
}

impl Counters {
    /// Write amplification: mapping units programmed per unit the host wrote.
    pub fn waf(&self) -> f64 {
        if self.host_write_units == 0 {
            return 0.0;
        }
        (self.host_write_units + self.flash_units_gc + self.flash_units_map) as f64
            / self.host_write_units as f64
    }

    /// Write amplification of the data alone: host units and GC copies
    /// (folding included) per host unit, without translation-page write-backs.
    pub fn data_waf(&self) -> f64 {
        if self.host_write_units == 0 {
            return 0.0;
        }
        (self.host_write_units + self.flash_units_gc) as f64 / self.host_write_units as f64
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

/// A latency distribution in nanoseconds. Stored (in snapshots) as its
/// precision and the count of each recorded bucket.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "StoredLatency", into = "StoredLatency")]
pub struct Latency(Histogram<u64>);

/// A [`Latency`] as stored: significant digits, then (bucket value, count) pairs.
#[derive(Serialize, Deserialize)]
struct StoredLatency(u8, Vec<(u64, u64)>);

impl From<Latency> for StoredLatency {
    fn from(l: Latency) -> StoredLatency {
        let buckets = l.0.iter_recorded();
        let counts = buckets
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        StoredLatency(l.0.sigfig(), counts)
    }
}

impl TryFrom<StoredLatency> for Latency {
    type Error = String;

    fn try_from(StoredLatency(sigfig, counts): StoredLatency) -> Result<Latency, String> {
        if !(1..=5).contains(&sigfig) {
            return Err(format!(
                "a latency histogram of {sigfig} significant digits"
            ));
        }
        let mut l = Latency::new(sigfig);
        for (value, count) in counts {
            l.0.record_n(value, count)
                .map_err(|e| format!("latency bucket {value}: {e:?}"))?;
        }
        Ok(l)
    }
}

impl Latency {
    /// `sigfig` significant digits (3 for phase summaries, 2 for interval rows).
    pub fn new(sigfig: u8) -> Latency {
        // 1 ns .. 1 simulated hour; longer latencies saturate at an hour.
        Latency(
            Histogram::new_with_bounds(1, 3_600_000_000_000, sigfig)
                .expect("valid histogram bounds"),
        )
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns);
    }

    pub fn add(&mut self, other: &Latency) {
        self.0
            .add(&other.0)
            .expect("histograms with equal bounds add");
    }

    pub fn reset(&mut self) {
        self.0.reset();
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// Heap bytes of the histogram's counts.
    pub fn heap_bytes(&self) -> u64 {
        (self.0.distinct_values() * std::mem::size_of::<u64>()) as u64
    }

    /// Quantile `q` in microseconds (0 when empty).
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.0.is_empty() {
            0.0
        } else {
            self.0.value_at_quantile(q) as f64 / 1000.0
        }
    }

    /// Mean in nanoseconds (0 when empty).
    pub fn mean_ns(&self) -> f64 {
        if self.0.is_empty() {
            0.0
        } else {
            self.0.mean()
        }
    }

    pub fn summary(&self) -> LatencySummary {
        let e = self.0.is_empty();
        LatencySummary {
            p50: self.quantile_us(0.5),
            p90: self.quantile_us(0.9),
            p99: self.quantile_us(0.99),
            p999: self.quantile_us(0.999),
            max: if e { 0.0 } else { self.0.max() as f64 / 1000.0 },
            mean: if e { 0.0 } else { self.0.mean() / 1000.0 },
        }
    }
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

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
            .map(|&c| (c as f64 - mean).powi(2))
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
    pub waf: f64,
    /// WAF without the map cache's translation-page write-backs.
    pub data_waf: f64,
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
    /// pSLC: data folded into native blocks, and host data written straight to them.
    pub folded_bytes: u64,
    pub direct_bytes: u64,
    #[serde(flatten)]
    pub rates: Rates,
    pub read_latency_us: LatencySummary,
    pub write_latency_us: LatencySummary,
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
    /// Why the drive died, if it did (in this phase, or in the run).
    pub death: Option<String>,
    /// With the integrity oracle on: what it has checked so far on this drive.
    pub integrity: Option<IntegrityCounts>,
    /// SLC programs of paired-page backup.
    pub backup_programs: u64,
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
    pub death: Option<String>,
    /// Bytes of a mapping unit.
    pub unit_bytes: u64,
    pub integrity: Option<IntegrityCounts>,
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
            map_programs: c.map_programs,
            folded_bytes: c.folded_units * p.unit_bytes,
            direct_bytes: c.direct_units * p.unit_bytes,
            rates: Rates::of(c, secs),
            read_latency_us: p.reads.summary(),
            write_latency_us: p.writes.summary(),
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
            death: p.death,
            integrity: p.integrity,
            backup_programs: c.backup_programs,
            power_loss: p.power_loss,
            trace_skipped: p.trace_skipped,
        }
    }
}

/// Host requests and MB/s (10^6 bytes) per simulated second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rates {
    pub iops: f64,
    pub mbps: f64,
    pub read_mbps: f64,
    pub write_mbps: f64,
}

impl Rates {
    /// The rates of the host traffic in `c` over `secs` (zero over no time).
    pub fn of(c: &Counters, secs: f64) -> Rates {
        let per_sec = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        Rates {
            iops: per_sec(c.requests() as f64),
            mbps: per_sec((c.host_read_bytes + c.host_write_bytes) as f64 / 1e6),
            read_mbps: per_sec(c.host_read_bytes as f64 / 1e6),
            write_mbps: per_sec(c.host_write_bytes as f64 / 1e6),
        }
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
    pub read_latency_us: LatencySummary,
    pub write_latency_us: LatencySummary,
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
            rates: Rates::of(c, secs),
            read_latency_us: reads.summary(),
            write_latency_us: writes.summary(),
            sim_seconds: secs,
        }
    }
}

/// One row of the time series: the interval that ends at `sim_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub phase: u32,
    pub sim_seconds: f64,
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub write_mbps: f64,
    pub read_mbps: f64,
    pub iops: f64,
    pub read_p50_us: f64,
    pub read_p99_us: f64,
    pub write_p50_us: f64,
    pub write_p99_us: f64,
    pub waf: f64,
    pub waf_cumulative: f64,
    pub free_blocks: u64,
    pub erases: u64,
    pub bad_blocks: u64,
    pub program_us_mean: f64,
    pub erase_us_mean: f64,
    /// Mean latency of all requests in the interval, µs.
    pub latency_mean_us: f64,
    /// Usable blocks per bit mode.
    pub slc_blocks: u64,
    pub mlc_blocks: u64,
    pub tlc_blocks: u64,
    pub qlc_blocks: u64,
    /// Flash the usable blocks hold in their modes, bytes.
    pub usable_bytes: u64,
    /// Share of the native rated endurance used, averaged over blocks.
    pub wear_used: f64,
    /// Share of the spare flash lost to wear (the drive dies at 1).
    pub reserve_used: f64,
    /// Valid data in pSLC cache blocks at the row's end, bytes.
    pub pslc_bytes: u64,
    /// Data folded from pSLC into native blocks in the interval, bytes.
    pub folded_bytes: u64,
    /// Host data written straight to native blocks on a drive with a pSLC
    /// cache in the interval (direct-write, or a cache with no room), bytes.
    pub direct_bytes: u64,
}

/// Columns of [`Row`] that hold whole numbers.
pub const ROW_INTEGER_COLUMNS: [&str; 14] = [
    "phase",
    "host_write_bytes",
    "host_read_bytes",
    "free_blocks",
    "erases",
    "bad_blocks",
    "slc_blocks",
    "mlc_blocks",
    "tlc_blocks",
    "qlc_blocks",
    "usable_bytes",
    "pslc_bytes",
    "folded_bytes",
    "direct_bytes",
];

/// Column names of [`Row`], in order.
pub const ROW_COLUMNS: [&str; 29] = [
    "phase",
    "sim_seconds",
    "host_write_bytes",
    "host_read_bytes",
    "write_mbps",
    "read_mbps",
    "iops",
    "read_p50_us",
    "read_p99_us",
    "write_p50_us",
    "write_p99_us",
    "waf",
    "waf_cumulative",
    "free_blocks",
    "erases",
    "bad_blocks",
    "program_us_mean",
    "erase_us_mean",
    "latency_mean_us",
    "slc_blocks",
    "mlc_blocks",
    "tlc_blocks",
    "qlc_blocks",
    "usable_bytes",
    "wear_used",
    "reserve_used",
    "pslc_bytes",
    "folded_bytes",
    "direct_bytes",
];

impl Row {
    /// The row's values in [`ROW_COLUMNS`] order (integers exact up to 2^53).
    pub fn values(&self) -> [f64; 29] {
        [
            self.phase as f64,
            self.sim_seconds,
            self.host_write_bytes as f64,
            self.host_read_bytes as f64,
            self.write_mbps,
            self.read_mbps,
            self.iops,
            self.read_p50_us,
            self.read_p99_us,
            self.write_p50_us,
            self.write_p99_us,
            self.waf,
            self.waf_cumulative,
            self.free_blocks as f64,
            self.erases as f64,
            self.bad_blocks as f64,
            self.program_us_mean,
            self.erase_us_mean,
            self.latency_mean_us,
            self.slc_blocks as f64,
            self.mlc_blocks as f64,
            self.tlc_blocks as f64,
            self.qlc_blocks as f64,
            self.usable_bytes as f64,
            self.wear_used,
            self.reserve_used,
            self.pslc_bytes as f64,
            self.folded_bytes as f64,
            self.direct_bytes as f64,
        ]
    }
}
