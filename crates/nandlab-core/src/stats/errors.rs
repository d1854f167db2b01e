//! What the bit-error model did to host reads: pages checked, their RBER
//! (mean and distribution), read-retry steps, soft decodes, reads reported
//! uncorrectable, and the expected number of uncorrectable codewords (the
//! UBER the drive's model predicts, far below what a run can count).

use super::Latency;
use crate::media::errors::{sectors_per_codeword, RBER_MAX};
use serde::{Deserialize, Serialize};

/// RBER is kept in a [`Latency`] histogram in units of 10⁻¹² (3 significant digits).
const RBER_UNIT: f64 = 1e12;

/// Monotonic tallies of the error model since the drive was made; a phase's
/// figures are the difference of two copies.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorTally {
    pub page_reads: u64,
    pub codewords: u64,
    /// Data bits of the codewords read.
    pub bits: u64,
    pub retries: u64,
    pub soft_decodes: u64,
    pub uncorrectable_reads: u64,
    pub rber_sum: f64,
    /// Σ over codewords read of P(uncorrectable after the whole ladder).
    pub expected_uncorrectable: f64,
    /// Blocks relocated by read reclaim and by patrol refresh, and the page
    /// programs they cost.
    pub reclaims: u64,
    pub reclaim_programs: u64,
    pub refreshes: u64,
    pub refresh_programs: u64,
    rber: Latency,
}

impl Default for ErrorTally {
    fn default() -> Self {
        ErrorTally {
            page_reads: 0,
            codewords: 0,
            bits: 0,
            retries: 0,
            soft_decodes: 0,
            uncorrectable_reads: 0,
            rber_sum: 0.0,
            expected_uncorrectable: 0.0,
            reclaims: 0,
            reclaim_programs: 0,
            refreshes: 0,
            refresh_programs: 0,
            rber: Latency::new(3),
        }
    }
}

impl ErrorTally {
    /// A page read at `rber` of `codewords` codewords of `bits_each` data
    /// bits (its RBER goes into the histogram with [`ErrorTally::rber_reads`]).
    #[inline]
    pub fn page(&mut self, rber: f64, codewords: u32, bits_each: u32) {
        self.page_reads += 1;
        self.codewords += codewords as u64;
        self.bits += codewords as u64 * bits_each as u64;
        self.rber_sum += rber;
    }

    /// `reads` page reads at `rber` into the RBER histogram.
    pub fn rber_reads(&mut self, rber: f64, reads: u32) {
        if reads > 0 {
            let value = (rber * RBER_UNIT).max(1.0) as u64;
            self.rber.record_n(value, reads as u64);
        }
    }

    /// The RBER histogram's (value, count) bins (units of 10⁻¹²).
    #[cfg(test)]
    pub fn rber_bins(&self) -> Vec<(u64, u64)> {
        self.rber.bins()
    }

    /// What happened since `before` (an earlier copy of this tally).
    pub fn since(&self, before: &ErrorTally) -> ErrorTally {
        let mut rber = self.rber.clone();
        rber.subtract(&before.rber);
        ErrorTally {
            page_reads: self.page_reads - before.page_reads,
            codewords: self.codewords - before.codewords,
            bits: self.bits - before.bits,
            retries: self.retries - before.retries,
            soft_decodes: self.soft_decodes - before.soft_decodes,
            uncorrectable_reads: self.uncorrectable_reads - before.uncorrectable_reads,
            rber_sum: self.rber_sum - before.rber_sum,
            expected_uncorrectable: self.expected_uncorrectable - before.expected_uncorrectable,
            reclaims: self.reclaims - before.reclaims,
            reclaim_programs: self.reclaim_programs - before.reclaim_programs,
            refreshes: self.refreshes - before.refreshes,
            refresh_programs: self.refresh_programs - before.refresh_programs,
            rber,
        }
    }

    /// The RBER of a histogram figure (read as µs): the top of its bin, no
    /// more than the most any page can have.
    fn rber_at(&self, us: f64) -> f64 {
        (us * 1000.0 / RBER_UNIT).min(RBER_MAX)
    }

    pub fn summary(&self, uber_target: f64) -> ErrorSummary {
        let reads = self.page_reads.max(1) as f64;
        let (uber_codewords, uber) = if self.bits == 0 {
            (0.0, 0.0)
        } else {
            let per_codeword = self.expected_uncorrectable.max(0.0) / self.bits as f64;
            let data_bits = (self.bits / self.codewords.max(1)) as u32;
            (per_codeword, per_codeword * sectors_per_codeword(data_bits))
        };
        ErrorSummary {
            // A sum of pages at the bound can round a hair above it.
            rber_mean: (self.rber_sum / reads).min(RBER_MAX),
            rber_p99: self.rber_at(self.rber.quantile_us(0.99)),
            rber_max: self.rber_at(self.rber.max_us()),
            ecc_page_reads: self.page_reads,
            read_retries: self.retries,
            retries_per_read: self.retries as f64 / reads,
            soft_decodes: self.soft_decodes,
            uncorrectable_reads: self.uncorrectable_reads,
            uber,
            uber_codewords,
            uber_target,
            uber_pass: uber <= uber_target,
            read_reclaims: self.reclaims,
            reclaim_programs: self.reclaim_programs,
            refreshes: self.refreshes,
            refresh_programs: self.refresh_programs,
        }
    }
}

/// The error model's figures in a summary (present when `[device.errors]` is on).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ErrorSummary {
    /// Raw bit error rate of the host's page reads: mean, 99th percentile, largest.
    pub rber_mean: f64,
    pub rber_p99: f64,
    pub rber_max: f64,
    /// Page reads the model checked, the read-retry steps they took, soft
    /// decodes, and reads reported uncorrectable to the host.
    pub ecc_page_reads: u64,
    pub read_retries: u64,
    pub retries_per_read: f64,
    pub soft_decodes: u64,
    pub uncorrectable_reads: u64,
    /// JESD218's UBER: expected data errors per bit read, a data error being
    /// a 512-byte sector that does not decode (every sector of a failed
    /// codeword: 2 of a 1 KiB BCH codeword, 8 of a 4 KiB LDPC one), and the
    /// class's target it is held to.
    pub uber: f64,
    /// Expected uncorrectable codewords per data bit read.
    pub uber_codewords: f64,
    pub uber_target: f64,
    pub uber_pass: bool,
    /// Blocks relocated by read reclaim (read past `read_reclaim` since
    /// their erase) and by patrol refresh (predicted RBER at `refresh_at`),
    /// and the page programs each cost (counted in WAF too).
    pub read_reclaims: u64,
    pub reclaim_programs: u64,
    pub refreshes: u64,
    pub refresh_programs: u64,
}
