//! A trace as the requests of a phase: device filter, addresses remapped to
//! fit the simulated drive (modulo its capacity, or compacted: distinct
//! mapping units numbered in order of first use), ZombieNAND's rule of using
//! only the first N bytes of distinct addresses, and looping for runs longer
//! than the trace. A request whose remapped units are not contiguous is
//! issued as several requests, one per contiguous run.

use super::{OnError, TraceError, TraceFormat, TraceReader, TraceRecord};
use crate::host::workload::{Op, Request};
use crate::stats::TraceSkipped;
use crate::units::MAX_DURATION_NS;
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;

/// How trace addresses become drive addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Remap {
    /// Byte offset modulo the user capacity (a request across the end wraps).
    Modulo,
    /// Distinct mapping units of (device, address), numbered in order of first use.
    Compact,
}

/// What to replay and how (a `[[phase]]` with `kind = "trace"`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayConfig {
    pub path: PathBuf,
    /// None: detected.
    #[serde(serialize_with = "format_name")]
    pub format: Option<TraceFormat>,
    pub skip_bad: bool,
    /// Open loop at the recorded timestamps (else closed loop at the queue depth).
    pub timed: bool,
    /// Recorded gaps are multiplied by this (0.5 replays twice as fast).
    pub time_scale: f64,
    /// Only these devices (volumes, ASUs); empty: all.
    pub devices: Vec<u32>,
    pub remap: Remap,
    /// ZombieNAND: the trace ends where its distinct addresses would pass this many bytes.
    pub unique_bytes: Option<u64>,
    /// Start again from the first record when the trace ends.
    pub looping: bool,
    /// The phase ends only when the drive wears out (`until = "dead"`, no
    /// other stop): a looping pass that writes nothing would never end it.
    pub ends_by_wear: bool,
}

fn format_name<S: serde::Serializer>(f: &Option<TraceFormat>, s: S) -> Result<S::Ok, S::Error> {
    match f {
        Some(f) => s.serialize_str(f.name()),
        None => s.serialize_none(),
    }
}

/// Records a looping replay keeps in memory (32 bytes each): 128 MiB.
pub const KEEP_RECORDS: usize = 4 << 20;

/// The requests of a trace, in order, with their times.
pub struct Replay {
    cfg: ReplayConfig,
    reader: TraceReader,
    capacity: u64,
    unit: u64,
    /// Compaction: drive unit of each (device, trace unit) seen.
    units: HashMap<u64, u64>,
    next_unit: u64,
    /// Pieces of a split request still to issue.
    pending: VecDeque<(u64, Request)>,
    /// The trace's first timestamp, and the time added per completed pass.
    first_time: Option<u64>,
    pass_offset: u64,
    last_time: u64,
    pass_records: u64,
    ended: bool,
    /// A looping replay keeps its first pass's records (up to [`KEEP_RECORDS`])
    /// and replays later passes from memory instead of parsing the file again.
    kept: Vec<TraceRecord>,
    keeping: bool,
    /// Where a pass from memory is.
    kept_at: Option<usize>,
    /// Write requests placed in the current pass.
    pass_writes: u64,
    /// Records read (after the device filter), and passes completed.
    pub records: u64,
    pub passes: u64,
}

impl Replay {
    /// Opens the trace for a drive of `capacity` bytes with `unit`-byte mapping units.
    pub fn open(cfg: &ReplayConfig, capacity: u64, unit: u64) -> Result<Replay, TraceError> {
        Ok(Replay {
            reader: Self::reader(cfg)?,
            cfg: cfg.clone(),
            capacity,
            unit,
            units: HashMap::new(),
            next_unit: 0,
            pending: VecDeque::new(),
            first_time: None,
            pass_offset: 0,
            last_time: 0,
            pass_records: 0,
            pass_writes: 0,
            ended: false,
            kept: Vec::new(),
            keeping: cfg.looping,
            kept_at: None,
            records: 0,
            passes: 0,
        })
    }

    fn reader(cfg: &ReplayConfig) -> Result<TraceReader, TraceError> {
        let on_error = if cfg.skip_bad {
            OnError::Skip
        } else {
            OnError::Stop
        };
        TraceReader::open(&cfg.path, cfg.format, on_error)
    }

    /// Malformed lines passed over so far, and the number of the first.
    pub fn skipped(&self) -> TraceSkipped {
        TraceSkipped {
            lines: self.reader.skipped,
            first_line: self.reader.first_skipped,
        }
    }

    /// The next request and its time since the trace's start (recorded
    /// gaps scaled), or None at the end.
    pub fn next_request(&mut self) -> Result<Option<(u64, Request)>, TraceError> {
        loop {
            if let Some(p) = self.pending.pop_front() {
                return Ok(Some(p));
            }
            if self.ended {
                return Ok(None);
            }
            let Some(r) = self.next_record()? else {
                self.ended = true;
                return Ok(None);
            };
            let first = *self.first_time.get_or_insert(r.time_ns);
            // Records behind the latest (as the reader lets through: another
            // blkparse CPU's, or within a tick of the clock) are issued at the
            // latest time: the host cannot issue back in time.
            self.last_time = self.last_time.max(
                self.pass_offset
                    .saturating_add(r.time_ns.saturating_sub(first)),
            );
            let t = self.scaled_time()?;
            if !self.place(&r, t)? {
                // The distinct-address budget ends this pass where it runs out.
                if self.cfg.looping && self.pass_records == 1 {
                    return Err(TraceError {
                        path: self.cfg.path.display().to_string(),
                        line: 0,
                        message: "unique_bytes is smaller than the trace's first request: nothing to loop over".into(),
                    });
                } else if self.cfg.looping {
                    self.restart()?;
                } else {
                    self.ended = true;
                }
            }
        }
    }

    /// The latest record's time since the trace's start, scaled by
    /// `time_scale`. A timed replay refuses a time past what the simulated
    /// clock takes ([`MAX_DURATION_NS`], about 146 years): with a large
    /// scale, or a trace spanning centuries, its requests would all be
    /// issued at once. (A closed-loop replay does not use the times.)
    fn scaled_time(&self) -> Result<u64, TraceError> {
        let scale = self.cfg.time_scale;
        let t = (self.last_time as f64 * scale).round();
        if !self.cfg.timed || t <= MAX_DURATION_NS as f64 {
            return Ok(t as u64);
        }
        let limit = MAX_DURATION_NS as f64 / self.last_time as f64;
        Err(TraceError {
            path: self.cfg.path.display().to_string(),
            // Later passes of a looping replay come from memory.
            line: if self.kept_at.is_some() { 0 } else { self.reader.line },
            message: format!(
                "time_scale (--time-scale) {scale} puts this record {:.3e} s into the replay, past the \
                 146 years (2^62 ns) the simulated clock takes: the trace has run {:.3} s by here; \
                 a time_scale of at most {limit:.3e} replays it",
                t / 1e9,
                self.last_time as f64 / 1e9,
            ),
        })
    }

    /// Starts the next pass from the trace's first record, 1 µs after this
    /// pass's last request.
    fn restart(&mut self) -> Result<(), TraceError> {
        if self.cfg.ends_by_wear && self.pass_writes == 0 {
            return Err(TraceError {
                path: self.cfg.path.display().to_string(),
                line: 0,
                message: format!(
                    "a pass of this looping replay writes nothing{}, so until = \"dead\" would never \
                     come: give a trace (or a larger unique_bytes) with writes, or a volume, \
                     duration or requests to stop at",
                    match self.cfg.unique_bytes {
                        Some(n) => format!(" within its first {n} bytes of distinct addresses (unique_bytes)"),
                        None => String::new(),
                    }
                ),
            });
        }
        self.pass_writes = 0;
        self.passes += 1;
        self.pass_records = 0;
        self.pass_offset = self.last_time.saturating_add(1_000);
        self.first_time = None;
        if self.keeping {
            // The whole pass is in memory: the next ones come from there.
            self.kept_at = Some(0);
        } else {
            self.reader = Self::reader(&self.cfg)?;
        }
        Ok(())
    }

    /// The next record of the selected devices, starting a new pass at the end when looping.
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            if let Some(i) = self.kept_at {
                if let Some(&r) = self.kept.get(i) {
                    self.kept_at = Some(i + 1);
                    self.records += 1;
                    self.pass_records += 1;
                    return Ok(Some(r));
                }
                self.restart()?;
                continue;
            }
            match self.reader.next() {
                Some(r) => {
                    let r = r?;
                    if self.cfg.devices.is_empty() || self.cfg.devices.contains(&r.device) {
                        self.records += 1;
                        self.pass_records += 1;
                        if self.keeping && self.kept.len() < KEEP_RECORDS {
                            self.kept.push(r);
                        } else if self.keeping {
                            self.keeping = false;
                            self.kept = Vec::new();
                        }
                        return Ok(Some(r));
                    }
                }
                None if self.cfg.looping && self.pass_records > 0 => self.restart()?,
                None => {
                    if self.pass_records == 0 && self.passes == 0 {
                        let devices: Vec<String> =
                            self.cfg.devices.iter().map(u32::to_string).collect();
                        return Err(TraceError {
                            path: self.cfg.path.display().to_string(),
                            line: 0,
                            message: format!(
                                "no records of the selected devices ({})",
                                devices.join(", ")
                            ),
                        });
                    }
                    self.passes += 1;
                    return Ok(None);
                }
            }
        }
    }

    /// Queues the drive requests of record `r` at time `t`; false when the
    /// record would pass the distinct-address budget (the trace ends there).
    fn place(&mut self, r: &TraceRecord, t: u64) -> Result<bool, TraceError> {
        let op = r.op;
        match self.cfg.remap {
            Remap::Modulo => {
                let mut offset = r.offset % self.capacity;
                let mut left = r.len.min(self.capacity);
                while left > 0 {
                    let len = left.min(self.capacity - offset).min(u32::MAX as u64);
                    self.push(t, op, offset, len);
                    left -= len;
                    offset = (offset + len) % self.capacity;
                }
                Ok(true)
            }
            Remap::Compact => {
                let (first, last) = (r.offset / self.unit, (r.offset + r.len - 1) / self.unit);
                let key = |u: u64| ((r.device as u64) << 44) ^ u;
                let new = (first..=last)
                    .filter(|&u| !self.units.contains_key(&key(u)))
                    .count() as u64;
                let budget = self.cfg.unique_bytes.unwrap_or(self.capacity) / self.unit;
                if self.next_unit + new > budget.min(self.capacity / self.unit) {
                    if self.cfg.unique_bytes.is_none() {
                        return Err(TraceError {
                            path: self.cfg.path.display().to_string(),
                            line: 0,
                            message: format!(
                                "the trace's distinct addresses pass the drive's {} bytes after {} records: set remap = \"modulo\", or unique_bytes to use only the first part",
                                self.capacity, self.records
                            ),
                        });
                    }
                    return Ok(false);
                }
                // Contiguous runs of drive units, as byte ranges.
                let mut run: Option<(u64, u64)> = None;
                for u in first..=last {
                    let next_unit = &mut self.next_unit;
                    let d = *self.units.entry(key(u)).or_insert_with(|| {
                        *next_unit += 1;
                        *next_unit - 1
                    });
                    let lo = if u == first { r.offset % self.unit } else { 0 };
                    let hi = if u == last {
                        (r.offset + r.len - 1) % self.unit + 1
                    } else {
                        self.unit
                    };
                    let (start, end) = (d * self.unit + lo, d * self.unit + hi);
                    run = match run {
                        Some((s, e)) if e == start => Some((s, end)),
                        Some((s, e)) => {
                            self.push(t, op, s, e - s);
                            Some((start, end))
                        }
                        None => Some((start, end)),
                    };
                }
                if let Some((s, e)) = run {
                    self.push(t, op, s, e - s);
                }
                Ok(true)
            }
        }
    }

    fn push(&mut self, t: u64, op: Op, offset: u64, len: u64) {
        self.pass_writes += (op == Op::Write) as u64;
        let mut offset = offset;
        let mut left = len;
        while left > 0 {
            let n = left.min(1 << 30);
            self.pending.push_back((
                t,
                Request {
                    op,
                    offset,
                    len: n as u32,
                },
            ));
            offset += n;
            left -= n;
        }
    }
}
