//! Latency distributions (HdrHistogram, in nanoseconds) and their
//! percentile summaries in microseconds.

use crate::sanity::Broken;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

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
    type Error = Broken;

    fn try_from(StoredLatency(sigfig, counts): StoredLatency) -> Result<Latency, Broken> {
        if !(1..=5).contains(&sigfig) {
            return Err(format!("a latency histogram of {sigfig} significant digits").into());
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

    /// `n` records of `ns`.
    pub fn record_n(&mut self, ns: u64, n: u64) {
        self.0.saturating_record_n(ns, n);
    }

    pub fn add(&mut self, other: &Latency) {
        self.0
            .add(&other.0)
            .expect("histograms with equal bounds add");
    }

    /// Removes the counts of `earlier`, an earlier copy of this histogram.
    pub fn subtract(&mut self, earlier: &Latency) {
        self.0
            .subtract(&earlier.0)
            .expect("an earlier copy holds no more than this histogram");
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

    /// The histogram itself: each recorded bucket's value (ns, the middle
    /// of the values it holds) and count, in ascending order — what fio's
    /// json+ reports as a latency's `bins`.
    pub fn bins(&self) -> Vec<(u64, u64)> {
        self.0
            .iter_recorded()
            .map(|v| {
                (
                    self.0.median_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect()
    }

    /// The largest latency in microseconds (0 when empty).
    pub fn max_us(&self) -> f64 {
        if self.0.is_empty() {
            0.0
        } else {
            self.0.max() as f64 / 1000.0
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
        let us = |x: f64| if e { 0.0 } else { x / 1000.0 };
        LatencySummary {
            samples: self.count(),
            p50: self.quantile_us(0.5),
            p90: self.quantile_us(0.9),
            p99: self.quantile_us(0.99),
            p999: self.quantile_us(0.999),
            max: self.max_us(),
            mean: us(self.0.mean()),
            min: us(self.0.min() as f64),
            stddev: us(self.0.stdev()),
            percentiles: FIO_PERCENTILES.map(|p| (p, self.quantile_us(p / 100.0))),
        }
    }
}

/// Serialises a direction's latencies as `null` when it had no request: a
/// latency without a request has no meaning, and 0 would read as a figure.
pub fn null_without_samples<S: serde::Serializer>(
    l: &LatencySummary,
    s: S,
) -> Result<S::Ok, S::Error> {
    if l.samples == 0 {
        s.serialize_none()
    } else {
        s.serialize_some(l)
    }
}

/// The percentiles fio reports by default (its `percentile_list`).
pub const FIO_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The read and write latency histograms of a phase or job ([`Latency::bins`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyBins {
    pub read: Vec<(u64, u64)>,
    pub write: Vec<(u64, u64)>,
}

impl LatencyBins {
    pub fn of(reads: &Latency, writes: &Latency) -> LatencyBins {
        LatencyBins {
            read: reads.bins(),
            write: writes.bins(),
        }
    }
}

/// Latency percentiles in microseconds (all 0 without a sample; a summary
/// gives `null` then: see [`null_without_samples`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Requests it summarises.
    #[serde(skip)]
    pub samples: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
    pub min: f64,
    pub stddev: f64,
    /// fio's default percentiles: (percentile, µs) pairs.
    pub percentiles: [(f64, f64); 17],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bins_hold_every_sample_at_its_value() {
        let mut l = Latency::new(3);
        for ns in [1_000, 1_000, 25_000, 25_013, 3_000_000] {
            l.record(ns);
        }
        let bins = l.bins();
        assert_eq!(bins.iter().map(|&(_, n)| n).sum::<u64>(), 5);
        assert!(bins.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(bins[0], (1_000, 2));
        // Each bin's value is within the histogram's precision (3 digits) of its samples.
        let (value, _) = bins[bins.len() - 1];
        assert!(value.abs_diff(3_000_000) <= 3_000, "{value}");
        assert!(Latency::new(3).bins().is_empty());
    }
}
