//! The time series of a phase: a row per interval (simulated time, bytes
//! moved or requests), with the interval's throughput, latencies, WAF and
//! the drive's state at its end.

use crate::config::{Interval, PhaseConfig};
use crate::drive::Drive;
use crate::media::errors::RBER_MAX;
use crate::stats::energy::EnergyConfig;
use crate::stats::{Activity, Counters, Latency, Row, ROWS_PER_PHASE};
use serde::{Deserialize, Serialize};

/// Per-phase bookkeeping of the time series.
#[derive(Serialize, Deserialize)]
pub(super) struct Recorder {
    pub(super) phase: u32,
    pub(super) interval: Interval,
    pub(super) next_mark: u64,
    pub(super) last_t: u64,
    pub(super) last: Counters,
    /// The drive's activity and error tallies (page reads, RBER sum, retry
    /// steps) at the last row, and how activity is priced.
    last_activity: Activity,
    last_errors: ErrorTallies,
    /// The last row's interval: expected uncorrectable codewords per bit
    /// read (None: no page read in it, or no error model).
    pub(super) interval_uber: Option<f64>,
    energy: EnergyConfig,
    pub(super) reads: Latency,
    pub(super) writes: Latency,
    pub(super) rows: Vec<Row>,
}

impl Recorder {
    pub(super) fn new(
        phase: u32,
        interval: Interval,
        start_t: u64,
        c: Counters,
        drive: &Drive,
        energy: EnergyConfig,
    ) -> Recorder {
        let step = match interval {
            Interval::Time(x) | Interval::Bytes(x) | Interval::Requests(x) => x,
        };
        Recorder {
            phase,
            interval,
            next_mark: step,
            last_t: start_t,
            last: c,
            last_activity: drive.activity(),
            last_errors: error_tallies(drive),
            interval_uber: None,
            energy,
            reads: Latency::new(2),
            writes: Latency::new(2),
            rows: Vec::new(),
        }
    }

    /// Where the phase is on the interval's axis.
    #[inline]
    pub(super) fn position(&self, elapsed_ns: u64, bytes: u64, requests: u64) -> u64 {
        match self.interval {
            Interval::Time(_) => elapsed_ns,
            Interval::Bytes(_) => bytes,
            Interval::Requests(_) => requests,
        }
    }

    pub(super) fn row(&mut self, t: u64, c: Counters, run_start: &Counters, drive: &Drive) {
        let free_blocks = drive.free_blocks();
        let by_mode = drive.blocks_by_mode();
        let d = c - self.last;
        let dt = t.saturating_sub(self.last_t) as f64 / 1e9;
        // A figure the interval gives no meaning (a rate over no simulated
        // time, a percentile of no reads) is NaN: null to the user.
        let rate = |x: f64| if dt > 0.0 { x / dt } else { f64::NAN };
        let of = |h: &Latency, figure: fn(&Latency) -> f64| {
            if h.count() > 0 {
                figure(h)
            } else {
                f64::NAN
            }
        };
        let unit = drive.unit_bytes();
        let activity = drive.activity();
        let power = activity
            .since(&self.last_activity)
            .summary(&self.energy, dt, d.requests());
        let errors = error_tallies(drive);
        let last = self.last_errors;
        let (pages, rber_sum, retries) = (
            errors.pages - last.pages,
            errors.rber_sum - last.rber_sum,
            errors.retries - last.retries,
        );
        let bits = errors.bits - last.bits;
        self.interval_uber =
            (bits > 0).then(|| (errors.uncorrectable - last.uncorrectable).max(0.0) / bits as f64);
        let per_page = |x: f64| {
            if pages > 0 {
                x / pages as f64
            } else {
                f64::NAN
            }
        };
        self.rows.push(Row {
            phase: self.phase,
            sim_seconds: t as f64 / 1e9,
            host_write_bytes: c.host_write_bytes - run_start.host_write_bytes,
            host_read_bytes: c.host_read_bytes - run_start.host_read_bytes,
            write_mbps: rate(d.host_write_bytes as f64 / 1e6),
            read_mbps: rate(d.host_read_bytes as f64 / 1e6),
            iops: rate(d.requests() as f64),
            read_p50_us: of(&self.reads, |h| h.quantile_us(0.5)),
            read_p99_us: of(&self.reads, |h| h.quantile_us(0.99)),
            write_p50_us: of(&self.writes, |h| h.quantile_us(0.5)),
            write_p99_us: of(&self.writes, |h| h.quantile_us(0.99)),
            waf: d.waf().unwrap_or(f64::NAN),
            waf_cumulative: (c - *run_start).waf().unwrap_or(f64::NAN),
            free_blocks,
            erases: c.erases - run_start.erases,
            bad_blocks: drive.bad_blocks(),
            program_us_mean: if d.program_ops > 0 {
                d.program_us_mean()
            } else {
                f64::NAN
            },
            erase_us_mean: if d.erases > 0 {
                d.erase_us_mean()
            } else {
                f64::NAN
            },
            latency_mean_us: {
                let n = self.reads.count() + self.writes.count();
                let sum = self.reads.mean_ns() * self.reads.count() as f64
                    + self.writes.mean_ns() * self.writes.count() as f64;
                if n == 0 {
                    f64::NAN
                } else {
                    sum / n as f64 / 1000.0
                }
            },
            slc_blocks: by_mode[0],
            mlc_blocks: by_mode[1],
            tlc_blocks: by_mode[2],
            qlc_blocks: by_mode[3],
            usable_bytes: drive.usable_units() * unit,
            wear_used: drive.wear_used(),
            reserve_used: drive.reserve_used(),
            pslc_bytes: drive.pslc_units() * unit,
            folded_bytes: d.folded_units * unit,
            direct_bytes: d.direct_units * unit,
            read_max_us: of(&self.reads, Latency::max_us),
            write_max_us: of(&self.writes, Latency::max_us),
            buffer_dirty_bytes: drive.buffer_dirty_units(t) * unit,
            die_backlog_ms: drive.die_backlog_ns(t) as f64 / 1e6,
            power_w: power.average_power_w.unwrap_or(f64::NAN),
            // NaN without pages (f64::min would make it the bound).
            rber_mean: per_page(rber_sum.min(RBER_MAX * pages as f64)),
            retries_per_read: per_page(retries as f64),
        });
        self.reads.reset();
        self.writes.reset();
        self.last = c;
        self.last_t = t;
        self.last_activity = activity;
        self.last_errors = errors;
    }
}

/// What the error model has tallied so far (zeros without one).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct ErrorTallies {
    pages: u64,
    rber_sum: f64,
    retries: u64,
    bits: u64,
    uncorrectable: f64,
}

fn error_tallies(drive: &Drive) -> ErrorTallies {
    drive
        .errors()
        .map_or(ErrorTallies::default(), |e| ErrorTallies {
            pages: e.tally.page_reads,
            rber_sum: e.tally.rber_sum,
            retries: e.tally.retries,
            bits: e.tally.bits,
            uncorrectable: e.tally.expected_uncorrectable,
        })
}

/// About [`ROWS_PER_PHASE`] rows over the phase's stop: its volume, time or
/// requests — or, for a phase of jobs that run together, theirs (the
/// longest job's time, else their volumes or requests added up); else a row
/// per drive capacity moved.
pub(super) fn default_interval(p: &PhaseConfig, user: u64) -> Interval {
    if p.volume.is_none() && p.duration_ns.is_none() && p.requests.is_none() && !p.jobs.is_empty() {
        let jobs = &p.jobs;
        if let Some(d) = jobs.iter().filter_map(|j| j.duration_ns).max() {
            return Interval::Time((d / ROWS_PER_PHASE).max(1));
        }
        if jobs.iter().all(|j| j.volume.is_some()) {
            let bytes = jobs
                .iter()
                .filter_map(|j| j.volume)
                .fold(0u64, |sum, v| sum.saturating_add(v.bytes(user)));
            return Interval::Bytes((bytes / ROWS_PER_PHASE).max(1));
        }
        if jobs.iter().all(|j| j.requests.is_some()) {
            let requests = jobs
                .iter()
                .filter_map(|j| j.requests)
                .fold(0u64, |sum, r| sum.saturating_add(r));
            return Interval::Requests((requests / ROWS_PER_PHASE).max(1));
        }
    }
    if let Some(v) = p.volume {
        Interval::Bytes((v.bytes(user) / ROWS_PER_PHASE).max(1))
    } else if let Some(d) = p.duration_ns {
        Interval::Time((d / ROWS_PER_PHASE).max(1))
    } else if let Some(r) = p.requests {
        Interval::Requests((r / ROWS_PER_PHASE).max(1))
    } else if p.trace.is_some() && !p.until_dead {
        // A trace's length is known only at its end: a row per 1/200 of the drive moved.
        Interval::Bytes((user / ROWS_PER_PHASE).max(1))
    } else {
        Interval::Bytes(user.max(1))
    }
}
