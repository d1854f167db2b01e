//! Block I/O traces recorded on real systems: streaming readers for the
//! formats of `traces/SOURCES.md` (MSR Cambridge, UMass/SPC, blkparse, fio
//! iolog v2 and v3, DiskSim, MQSim and SSDsim ASCII, FIU, Alibaba 2020,
//! Tencent CBS), gzip/bzip2/zstd input, format detection, and errors that
//! name the file, the line and the format expected.
//!
//! A reader holds one line at a time, of at most [`MAX_LINE_BYTES`]: memory
//! stays constant on traces of any size, and on files that are not traces.

mod parse;
pub mod replay;
pub mod stats;

use crate::host::workload::Op;
use crate::units::BadValue;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// One I/O of a trace: `len` bytes at byte `offset` of `device`, issued at
/// `time_ns` (in the trace's own clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    pub time_ns: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub device: u32,
    /// The clock its timestamp was read from, whose records are in time
    /// order: blkparse's CPU (blkparse interleaves the CPUs' batches of
    /// events, so time goes back between CPUs); 0 in the other formats.
    pub clock: u16,
}

/// Declares [`TraceFormat`] from its variants and names: the enum,
/// [`TraceFormat::ALL`] and [`TraceFormat::name`] from one list, so a new
/// format is everywhere its name is (`format = "..."`, `--format`, the
/// tests that run every format) once it is here.
macro_rules! trace_formats {
    ($($variant:ident = $name:literal,)*) => {
        /// The trace formats nandlab reads.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum TraceFormat {
            $($variant,)*
        }

        impl TraceFormat {
            pub const ALL: [TraceFormat; [$($name,)*].len()] = [$(TraceFormat::$variant,)*];

            pub fn name(self) -> &'static str {
                match self {
                    $(TraceFormat::$variant => $name,)*
                }
            }
        }
    };
}

trace_formats! {
    Msr = "msr",
    Umass = "umass",
    Blkparse = "blkparse",
    FioV2 = "fio-v2",
    FioV3 = "fio-v3",
    Disksim = "disksim",
    Mqsim = "mqsim",
    Ssdsim = "ssdsim",
    Fiu = "fiu",
    Alibaba = "alibaba",
    Tencent = "tencent",
}

impl TraceFormat {
    /// One valid record of the format, and the header lines a file needs
    /// before it ("" for none): what the tests that run every format build
    /// their files from.
    pub fn example(self) -> (&'static str, &'static str) {
        match self {
            TraceFormat::Msr => ("", "128166385295514663,hm,0,Write,9056014336,2048,2833"),
            TraceFormat::Umass => ("", "1,31244784,32768,R,0.011565"),
            TraceFormat::Blkparse => (
                "",
                "  8,16   3        5     0.000026421  3645  D   R 4938888 + 256 [java]",
            ),
            TraceFormat::FioV2 => (
                "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n",
                "/dev/sdb write 8192 4096",
            ),
            TraceFormat::FioV3 => (
                "fio version 3 iolog\n0 /dev/sdb add\n10 /dev/sdb open\n",
                "250 /dev/sdb read 8192 4096",
            ),
            TraceFormat::Disksim => ("", "0.5 0 1024 8 1"),
            TraceFormat::Mqsim => ("", "11565000 1 31244784 64 1"),
            TraceFormat::Ssdsim => ("", "26214000 0 303574 7 0"),
            TraceFormat::Fiu => (
                "",
                "89966527950584 4253 nfsd 508516672 8 W 6 0 88b93b628d84082186026d9da044f173",
            ),
            TraceFormat::Alibaba => ("", "3,W,8192,4096,1577808000000"),
            TraceFormat::Tencent => ("", "1538323200,4247200,128,1,1058"),
        }
    }

    pub fn parse(name: &str) -> Option<TraceFormat> {
        TraceFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// One tick of the format's timestamps, ns: what a record may trail the
    /// latest of its clock by (see [`TraceReader`]'s order check).
    pub fn tick_ns(self) -> u64 {
        match self {
            TraceFormat::Msr => 100,
            TraceFormat::FioV2 | TraceFormat::FioV3 | TraceFormat::Alibaba => 1_000,
            TraceFormat::Tencent => 1_000_000_000,
            TraceFormat::Umass
            | TraceFormat::Blkparse
            | TraceFormat::Disksim
            | TraceFormat::Mqsim
            | TraceFormat::Ssdsim
            | TraceFormat::Fiu => 1,
        }
    }

    /// The names, for messages.
    pub fn names() -> Vec<&'static str> {
        TraceFormat::ALL.iter().map(|f| f.name()).collect()
    }
}

/// What to do with a malformed line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// Stop with an error naming the line (the default).
    Stop,
    /// Pass over it and count it.
    Skip,
}

/// A trace that cannot be read: where, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub path: String,
    /// 1-based; 0 when the error is not about one line.
    pub line: u64,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.line {
            0 => write!(f, "{}: {}", self.path, self.message),
            n => write!(f, "{}:{}: {}", self.path, n, self.message),
        }
    }
}

impl std::error::Error for TraceError {}

/// Opens `path` for reading without waiting for a FIFO's writer (an open
/// that waits is deaf to Ctrl-C): a FIFO no program writes to reads as
/// empty; one being written (`<(zcat trace.gz)`) reads as a file does.
fn open_for_reading(path: &Path) -> std::io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    // Reads wait for data again, as a file's and a pipe's do.
    // SAFETY: fcntl on a descriptor this function owns.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(file)
}

/// Opens `path`, decompressing gzip, bzip2 or zstd (by their magic bytes).
fn open_decompressed(path: &Path) -> std::io::Result<Box<dyn BufRead + Send + Sync>> {
    let mut file = BufReader::with_capacity(1 << 20, open_for_reading(path)?);
    let magic = file
        .fill_buf()?
        .get(..4)
        .map(|m| m.to_vec())
        .unwrap_or_default();
    let inner: Box<dyn Read + Send + Sync> = match magic.as_slice() {
        [0x1f, 0x8b, ..] => Box::new(flate2::bufread::MultiGzDecoder::new(file)),
        [b'B', b'Z', b'h', _] => Box::new(bzip2::bufread::MultiBzDecoder::new(file)),
        [0x28, 0xb5, 0x2f, 0xfd] => Box::new(
            ruzstd::decoding::StreamingDecoder::new(file)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?,
        ),
        _ => return Ok(Box::new(file)),
    };
    Ok(Box::new(BufReader::with_capacity(1 << 20, inner)))
}

/// Lines the detector reads before deciding.
const DETECT_LINES: usize = 50;

/// The longest line a trace may have, newline not counted: room for a fio
/// iolog line naming a file by a path of Linux's longest (`PATH_MAX`, 4096
/// bytes) and 30 times the longest line of the real traces of every format
/// nandlab reads (251 bytes). A longer line is not a trace's: reading stops
/// there (at most this much of it is held), whatever `skip_bad` says.
pub const MAX_LINE_BYTES: usize = 8 << 10;

/// How reading a line went.
enum Line {
    /// A line, into the buffer (with its newline, if it had one).
    Read,
    /// The end of the input.
    End,
    /// A line longer than [`MAX_LINE_BYTES`]; not read to its end.
    TooLong,
}

/// Reads the next line of `input` into `buf` (cleared first), holding at
/// most [`MAX_LINE_BYTES`] of it.
fn read_line(input: &mut (impl BufRead + ?Sized), buf: &mut Vec<u8>) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let available = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if buf.is_empty() {
                Line::End
            } else {
                Line::Read
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.map_or(available.len(), |i| i + 1);
        let content = buf.len() + newline.unwrap_or(take);
        if content > MAX_LINE_BYTES {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(&available[..take]);
        input.consume(take);
        if newline.is_some() {
            return Ok(Line::Read);
        }
    }
}

/// `ns` for messages: "47.214 ms", "3 ns", "2.000 s".
fn duration(ns: u64) -> String {
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.3} µs", ns as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.3} ms", ns as f64 / 1e6),
        _ => format!("{:.3} s", ns as f64 / 1e9),
    }
}

/// The message of a line longer than [`MAX_LINE_BYTES`].
fn too_long() -> String {
    format!(
        "a line longer than {MAX_LINE_BYTES} bytes: not a block I/O trace (trace lines are a few \
         hundred bytes; nandlab reads lines of up to {} KiB)",
        MAX_LINE_BYTES >> 10
    )
}

/// Guesses the format from the first lines: fio iologs by their header;
/// otherwise the format that reads every one of them, the file's name
/// deciding between the ASCII formats that read alike (`.ascii`: SSDsim).
/// With [`OnError::Skip`] a malformed line among them is passed over as the
/// reader would: the format that reads the most of them, if it reads more
/// than it cannot.
fn detect(path: &Path, head: &[Vec<u8>], on_error: OnError) -> Result<TraceFormat, BadValue> {
    let first = head
        .iter()
        .find(|l| !l.trim_ascii().is_empty())
        .map(|l| l.trim_ascii());
    match first {
        None => return Err("the file is empty".into()),
        Some(b"fio version 2 iolog") => return Ok(TraceFormat::FioV2),
        Some(b"fio version 3 iolog") => return Ok(TraceFormat::FioV3),
        _ => {}
    }
    // How many of the lines `format` reads as records, if it reads them as
    // the reader would (every one, or with Skip more than it cannot).
    let records = |format: TraceFormat| {
        let (mut records, mut bad) = (0usize, 0usize);
        for (i, l) in head.iter().enumerate() {
            match parse::line(format, l, i == 0) {
                Ok(Some(_)) => records += 1,
                Ok(None) => {}
                Err(_) => bad += 1,
            }
        }
        let readable = match on_error {
            OnError::Stop => bad == 0,
            OnError::Skip => bad < records,
        };
        (readable && records > 0).then_some(records)
    };
    let candidates = [
        TraceFormat::Msr,
        TraceFormat::Tencent,
        TraceFormat::Alibaba,
        TraceFormat::Umass,
        TraceFormat::Blkparse,
        TraceFormat::Fiu,
        TraceFormat::Mqsim,
        TraceFormat::Disksim,
    ];
    let mut best: Option<(TraceFormat, usize)> = None;
    for format in candidates {
        if let Some(n) = records(format) {
            if best.is_none_or(|(_, most)| n > most) {
                best = Some((format, n));
            }
        }
    }
    match best.map(|(format, _)| format) {
        Some(TraceFormat::Mqsim) if path.extension().is_some_and(|e| e == "ascii") => {
            Ok(TraceFormat::Ssdsim)
        }
        Some(f) => Ok(f),
        None => Err(format!(
            "not a trace format nandlab knows: tried {} on its first lines; give the format explicitly if it is one of them",
            candidates.map(|f| f.name()).join(", ")
        ).into()),
    }
}

/// A streaming trace reader: an iterator of records (or one error, after
/// which it ends).
pub struct TraceReader {
    lines: Box<dyn BufRead + Send + Sync>,
    /// Lines read for detection, replayed first.
    head: std::vec::IntoIter<Vec<u8>>,
    buf: Vec<u8>,
    pub format: TraceFormat,
    path: String,
    line: u64,
    on_error: OnError,
    /// Malformed lines passed over (with [`OnError::Skip`]).
    pub skipped: u64,
    /// Lines of the first skipped one, for the report.
    pub first_skipped: Option<u64>,
    records: u64,
    failed: bool,
    /// fio v2: time advanced by `wait` actions, µs.
    fio_clock_us: u64,
    /// The latest timestamp of each clock and its line ([`Self::check_order`]).
    latest: Vec<Option<(u64, u64)>>,
}

impl TraceReader {
    /// Opens a trace; `format` None detects it.
    pub fn open(
        path: &Path,
        format: Option<TraceFormat>,
        on_error: OnError,
    ) -> Result<TraceReader, TraceError> {
        let name = path.display().to_string();
        let err = |line: u64, message: String| TraceError {
            path: name.clone(),
            line,
            message,
        };
        let mut lines = open_decompressed(path).map_err(|e| err(0, format!("cannot read: {e}")))?;
        let mut head = Vec::new();
        for _ in 0..DETECT_LINES {
            let mut l = Vec::new();
            let at = head.len() as u64 + 1;
            match read_line(&mut *lines, &mut l) {
                Ok(Line::End) => break,
                Ok(Line::Read) => head.push(l),
                Ok(Line::TooLong) => return Err(err(at, too_long())),
                Err(e) => return Err(err(at, format!("cannot read: {e}"))),
            }
        }
        let format = match format {
            Some(f) => f,
            None => detect(path, &head, on_error).map_err(|m| err(0, m.into()))?,
        };
        Ok(TraceReader {
            lines,
            head: head.into_iter(),
            buf: Vec::with_capacity(256),
            format,
            path: name,
            line: 0,
            on_error,
            skipped: 0,
            first_skipped: None,
            records: 0,
            failed: false,
            fio_clock_us: 0,
            latest: Vec::new(),
        })
    }

    /// The next line into `buf`; false at the end.
    fn next_line(&mut self) -> Result<bool, TraceError> {
        self.line += 1;
        if let Some(l) = self.head.next() {
            self.buf = l;
            return Ok(true);
        }
        match read_line(&mut *self.lines, &mut self.buf) {
            Ok(Line::End) => Ok(false),
            Ok(Line::Read) => Ok(true),
            Ok(Line::TooLong) => Err(self.error(too_long())),
            Err(e) => Err(self.error(format!("cannot read: {e}"))),
        }
    }

    fn error(&self, message: String) -> TraceError {
        TraceError {
            path: self.path.clone(),
            line: self.line,
            message,
        }
    }

    /// A malformed line: an error, or counted and passed over.
    fn malformed(&mut self, expected: &str) -> Result<(), TraceError> {
        self.bad_line(|r| {
            let shown = String::from_utf8_lossy(r.buf.trim_ascii());
            let shown: String = shown.chars().take(120).collect();
            format!(
                "not a {} line: `{shown}`; expected `{expected}`",
                r.format.name()
            )
        })
    }

    /// A line that cannot be used: an error saying why, or (with
    /// [`OnError::Skip`]) counted and passed over.
    fn bad_line(&mut self, why: impl FnOnce(&Self) -> String) -> Result<(), TraceError> {
        match self.on_error {
            OnError::Stop => Err(self.error(why(self))),
            OnError::Skip => {
                self.skipped += 1;
                self.first_skipped.get_or_insert(self.line);
                Ok(())
            }
        }
    }

    /// The next record of a fio iolog (v2: time from `wait` actions; v3: timestamps).
    fn fio_record(&mut self) -> Result<Option<TraceRecord>, &'static str> {
        let timed = self.format == TraceFormat::FioV3;
        if self.line == 1 {
            let header = self.buf.trim_ascii();
            let expected = if timed {
                &b"fio version 3 iolog"[..]
            } else {
                b"fio version 2 iolog"
            };
            return if header == expected {
                Ok(None)
            } else {
                Err("the header `fio version 2 iolog` or `fio version 3 iolog` on the first line")
            };
        }
        let expected = if timed { parse::FIO_V3 } else { parse::FIO_V2 };
        let Some(l) = parse::fio_line(&self.buf, timed)? else {
            return Ok(None);
        };
        let op = match l.action {
            b"add" | b"open" | b"close" | b"sync" | b"datasync" => return Ok(None),
            b"wait" if !timed => {
                let wait = l.offset.ok_or(expected)?;
                self.fio_clock_us = self
                    .fio_clock_us
                    .checked_add(wait)
                    .ok_or(parse::TIME_RANGE)?;
                return Ok(None);
            }
            b"read" => Op::Read,
            b"write" => Op::Write,
            b"trim" => Op::Trim,
            _ => return Err(expected),
        };
        let (offset, len) = (l.offset.ok_or(expected)?, l.length.ok_or(expected)?);
        let time_us = l.time_us.unwrap_or(self.fio_clock_us);
        parse::record(parse::ns(time_us, 1000)?, op, offset, len, 0)
    }

    /// Checks that `r` comes no earlier than the latest record of its clock
    /// (see [`TraceRecord::clock`]) less one tick of the format's clock
    /// ([`TraceFormat::tick_ns`]), and notes its time. A clock that goes back
    /// is a broken trace (two traces joined, a damaged line): replayed, its
    /// records would all be issued at once. Within one tick, records are
    /// taken as logged in the same instant: Tencent's timestamps are whole
    /// seconds, and its traces step back one now and then (records of
    /// several hosts merged). blkparse's CPUs are separate clocks: it prints
    /// their events in batches, and time goes back between batches (by up to
    /// 47 ms in the sample trace). Such records are replayed at the latest
    /// time so far (a host cannot issue in the past) and count a gap of 0 in
    /// the inter-arrival times.
    fn check_order(&mut self, r: &TraceRecord) -> Result<(), BadValue> {
        let clock = r.clock as usize;
        if self.latest.len() <= clock {
            self.latest.resize(clock + 1, None);
        }
        if let Some((latest, line)) = self.latest[clock] {
            if r.time_ns.saturating_add(self.format.tick_ns()) < latest {
                let cpu = match self.format {
                    TraceFormat::Blkparse => format!(" on CPU {clock}"),
                    _ => String::new(),
                };
                return Err(format!(
                    "the timestamp goes back {} from line {line}'s{cpu}: a trace's records must be in time order",
                    duration(latest - r.time_ns)
                ).into());
            }
            if r.time_ns < latest {
                return Ok(());
            }
        }
        self.latest[clock] = Some((r.time_ns, self.line));
        Ok(())
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            match self.next_line() {
                Ok(true) => {}
                Ok(false) if self.records == 0 => {
                    self.failed = true;
                    let skipped = match self.skipped {
                        0 => String::new(),
                        n => format!(" ({n} malformed lines skipped)"),
                    };
                    return Some(Err(TraceError {
                        path: self.path.clone(),
                        line: 0,
                        message: format!(
                            "no I/O records in this {} trace{skipped}",
                            self.format.name()
                        ),
                    }));
                }
                Ok(false) => return None,
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
            let parsed = match self.format {
                TraceFormat::FioV2 | TraceFormat::FioV3 => self.fio_record(),
                f => parse::line(f, &self.buf, self.line == 1),
            };
            match parsed.map(|r| r.map(|r| (self.check_order(&r), r))) {
                Ok(Some((Ok(()), r))) => {
                    self.records += 1;
                    return Some(Ok(r));
                }
                Ok(Some((Err(why), _))) => {
                    if let Err(e) = self.bad_line(|_| why.into()) {
                        self.failed = true;
                        return Some(Err(e));
                    }
                }
                Ok(None) => {}
                Err(expected) => {
                    if let Err(e) = self.malformed(expected) {
                        self.failed = true;
                        return Some(Err(e));
                    }
                }
            }
        }
    }
}
