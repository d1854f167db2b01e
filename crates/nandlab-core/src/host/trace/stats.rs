//! What a trace holds, in one streaming pass: its composition as the
//! ZombieNAND paper's Table III gives it (read and write shares of the bytes
//! moved, and the random and sequential shares of each), request sizes,
//! inter-arrival times, the footprint, and the address-reuse CDF of its
//! Fig. 4 (the share of accesses that the most used addresses account for).

use super::{TraceError, TraceRecord};
use crate::host::workload::Op;
use crate::stats::{Latency, LatencySummary};
use serde::Serialize;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hasher for integer keys: the statistics pass updates a
/// map per 4 KiB block of every request, and SipHash would dominate it.
#[derive(Default)]
struct IntHasher(u64);

impl Hasher for IntHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// Bytes of the blocks the footprint and the reuse CDF count.
pub const BLOCK: u64 = 4096;
/// Points of the reuse CDF.
const CDF_POINTS: usize = 100;

/// Requests and bytes of one operation.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OpStats {
    pub requests: u64,
    pub bytes: u64,
    /// Bytes of requests that start where the previous one of the same
    /// kind on the same device ended.
    pub sequential_bytes: u64,
}

impl OpStats {
    fn add(&mut self, len: u64, sequential: bool) {
        self.requests += 1;
        self.bytes += len;
        if sequential {
            self.sequential_bytes += len;
        }
    }
}

/// The summary of a trace.
#[derive(Debug, Clone, Serialize)]
pub struct TraceStats {
    pub format: String,
    pub records: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub trim_bytes: u64,
    /// Table III: shares of the bytes moved (reads + writes), in percent.
    pub read_percent: f64,
    pub write_percent: f64,
    /// Table III: shares of each kind's bytes that are random / sequential, in percent.
    pub read_random_percent: f64,
    pub read_sequential_percent: f64,
    pub write_random_percent: f64,
    pub write_sequential_percent: f64,
    pub devices: u64,
    /// First and last timestamps and their span, seconds.
    pub first_seconds: f64,
    pub last_seconds: f64,
    pub duration_seconds: f64,
    /// Gaps between consecutive records, µs (a record behind the one before,
    /// as the reader lets through: another blkparse CPU's, or within a tick
    /// of the clock, counts 0).
    pub interarrival_us: LatencySummary,
    /// Request sizes: `[bytes at least, requests, reads, writes]` per power of two.
    pub size_histogram: Vec<[u64; 4]>,
    pub mean_request_bytes: f64,
    /// Distinct 4 KiB blocks touched (all accesses, and writes), bytes.
    pub footprint_bytes: u64,
    pub write_footprint_bytes: u64,
    /// The reuse CDFs: `[share of the footprint, share of the accesses]`,
    /// blocks sorted by descending access count; 4 KiB-block accesses.
    pub reuse_cdf: Vec<[f64; 2]>,
    pub write_reuse_cdf: Vec<[f64; 2]>,
    /// Malformed lines skipped (with skip-and-count).
    pub skipped_lines: u64,
}

/// Accumulates [`TraceStats`] over records.
pub struct StatsBuilder {
    read: OpStats,
    write: OpStats,
    trim: OpStats,
    /// End of the last request per (device, op).
    last_end: IntMap<(u32, u8), u64>,
    /// Accesses per 4 KiB block, all and writes.
    blocks: IntMap<u64, (u32, u32)>,
    sizes: [[u64; 3]; 64],
    gaps: Latency,
    first: Option<u64>,
    last: u64,
    prev: Option<u64>,
}

impl Default for StatsBuilder {
    fn default() -> Self {
        StatsBuilder {
            read: OpStats::default(),
            write: OpStats::default(),
            trim: OpStats::default(),
            last_end: IntMap::default(),
            blocks: IntMap::default(),
            sizes: [[0; 3]; 64],
            gaps: Latency::new(3),
            first: None,
            last: 0,
            prev: None,
        }
    }
}

impl StatsBuilder {
    pub fn add(&mut self, r: &TraceRecord) {
        let key = (r.device, r.op as u8);
        let sequential = self.last_end.insert(key, r.offset + r.len) == Some(r.offset);
        let stats = match r.op {
            Op::Read => &mut self.read,
            Op::Write => &mut self.write,
            Op::Trim => &mut self.trim,
        };
        stats.add(r.len, sequential);
        let bucket = 63 - r.len.leading_zeros() as usize;
        self.sizes[bucket][0] += 1;
        match r.op {
            Op::Read => self.sizes[bucket][1] += 1,
            Op::Write => self.sizes[bucket][2] += 1,
            Op::Trim => {}
        }
        if r.op != Op::Trim {
            let device = (r.device as u64) << 44;
            for b in r.offset / BLOCK..(r.offset + r.len).div_ceil(BLOCK) {
                let e = self.blocks.entry(device | b).or_insert((0, 0));
                e.0 += 1;
                e.1 += (r.op == Op::Write) as u32;
            }
        }
        if let Some(p) = self.prev {
            self.gaps.record(r.time_ns.saturating_sub(p));
        }
        self.prev = Some(r.time_ns);
        self.first = Some(self.first.map_or(r.time_ns, |f| f.min(r.time_ns)));
        self.last = self.last.max(r.time_ns);
    }

    /// The summary; `format` names the trace's format.
    pub fn finish(self, format: &str, skipped_lines: u64) -> TraceStats {
        let pct = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                100.0 * part as f64 / whole as f64
            }
        };
        let moved = self.read.bytes + self.write.bytes;
        let records = self.read.requests + self.write.requests + self.trim.requests;
        let devices = self
            .last_end
            .keys()
            .map(|&(d, _)| d)
            .collect::<std::collections::HashSet<_>>()
            .len() as u64;
        let mut all: Vec<u32> = self.blocks.values().map(|c| c.0).collect();
        let mut writes: Vec<u32> = self
            .blocks
            .values()
            .map(|c| c.1)
            .filter(|&w| w > 0)
            .collect();
        let size_histogram = self
            .sizes
            .iter()
            .enumerate()
            .filter(|(_, c)| c[0] > 0)
            .map(|(i, c)| [1u64 << i, c[0], c[1], c[2]])
            .collect();
        let first = self.first.unwrap_or(0);
        TraceStats {
            format: format.to_string(),
            records,
            reads: self.read.requests,
            writes: self.write.requests,
            trims: self.trim.requests,
            read_bytes: self.read.bytes,
            write_bytes: self.write.bytes,
            trim_bytes: self.trim.bytes,
            read_percent: pct(self.read.bytes, moved),
            write_percent: pct(self.write.bytes, moved),
            read_random_percent: pct(
                self.read.bytes - self.read.sequential_bytes,
                self.read.bytes,
            ),
            read_sequential_percent: pct(self.read.sequential_bytes, self.read.bytes),
            write_random_percent: pct(
                self.write.bytes - self.write.sequential_bytes,
                self.write.bytes,
            ),
            write_sequential_percent: pct(self.write.sequential_bytes, self.write.bytes),
            devices,
            first_seconds: first as f64 / 1e9,
            last_seconds: self.last as f64 / 1e9,
            duration_seconds: self.last.saturating_sub(first) as f64 / 1e9,
            interarrival_us: self.gaps.summary(),
            size_histogram,
            mean_request_bytes: if records == 0 {
                0.0
            } else {
                (moved + self.trim.bytes) as f64 / records as f64
            },
            footprint_bytes: all.len() as u64 * BLOCK,
            write_footprint_bytes: writes.len() as u64 * BLOCK,
            reuse_cdf: reuse_cdf(&mut all),
            write_reuse_cdf: reuse_cdf(&mut writes),
            skipped_lines,
        }
    }
}

/// `[share of the blocks, share of the accesses]` at `CDF_POINTS` points,
/// the most accessed blocks first.
fn reuse_cdf(counts: &mut [u32]) -> Vec<[f64; 2]> {
    if counts.is_empty() {
        return Vec::new();
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = counts.iter().map(|&c| c as u64).sum();
    let mut out = vec![[0.0, 0.0]];
    let mut sum = 0u64;
    let mut next = 1;
    for (i, &c) in counts.iter().enumerate() {
        sum += c as u64;
        let share = (i + 1) as f64 / counts.len() as f64;
        if share * CDF_POINTS as f64 >= next as f64 || i + 1 == counts.len() {
            out.push([share, sum as f64 / total as f64]);
            next += 1;
        }
    }
    out
}

/// Reads a whole trace into its summary.
pub fn summarize(reader: &mut super::TraceReader) -> Result<TraceStats, TraceError> {
    let mut b = StatsBuilder::default();
    for r in reader.by_ref() {
        b.add(&r?);
    }
    Ok(b.finish(reader.format.name(), reader.skipped))
}
