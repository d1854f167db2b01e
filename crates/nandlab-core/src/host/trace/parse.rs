//! Line parsers of the trace formats: byte slices in, one [`TraceRecord`]
//! (or nothing, for headers, comments and events that are not I/O) out,
//! without allocating. Numbers are parsed by hand: the readers must keep up
//! with millions of lines per second.

use super::{TraceFormat, TraceRecord};
use crate::host::workload::Op;

/// What a line holds: an I/O, something to pass over, or a malformed line
/// (the message says what was expected).
pub type Parsed = Result<Option<TraceRecord>, &'static str>;

/// Bytes of a 512-byte sector, the address unit of most block traces.
const SECTOR: u64 = 512;

/// Splits a line into fields at any of the separator bytes (runs of them
/// count once for whitespace-separated formats).
struct Fields<'a> {
    rest: &'a [u8],
    comma: bool,
}

impl<'a> Fields<'a> {
    fn new(line: &'a [u8], comma: bool) -> Fields<'a> {
        Fields { rest: line, comma }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.comma {
            if self.rest.is_empty() {
                return None;
            }
            let end = self.rest.iter().position(|&b| b == b',');
            let (field, rest) = match end {
                Some(i) => (&self.rest[..i], &self.rest[i + 1..]),
                None => (self.rest, &self.rest[self.rest.len()..]),
            };
            self.rest = rest;
            Some(field.trim_ascii())
        } else {
            let start = self.rest.iter().position(|b| !b.is_ascii_whitespace())?;
            let rest = &self.rest[start..];
            let end = rest
                .iter()
                .position(|b| b.is_ascii_whitespace())
                .unwrap_or(rest.len());
            self.rest = &rest[end..];
            Some(&rest[..end])
        }
    }
}

/// A whole unsigned decimal number.
#[inline]
fn int(field: &[u8]) -> Option<u64> {
    if field.is_empty() || field.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &b in field {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

/// Whether a line whose first field is not a number is a header: only the
/// first line, and only with words there (a first line of digits too long
/// for a number is a broken record, never passed over as a header).
fn is_header(first_field: &[u8], first_line: bool) -> bool {
    first_line && !first_field.iter().all(u8::is_ascii_digit)
}

/// A non-negative decimal with an optional fraction, scaled by 10^`exp`
/// and truncated to an integer (seconds with `exp` 9 give nanoseconds),
/// exactly: no floating point.
#[inline]
fn scaled(field: &[u8], exp: u32) -> Option<u64> {
    let (whole, frac) = match field.iter().position(|&b| b == b'.') {
        Some(i) => (&field[..i], &field[i + 1..]),
        None => (field, &field[field.len()..]),
    };
    let whole = if whole.is_empty() && !frac.is_empty() {
        0
    } else {
        int(whole)?
    };
    let mut v = whole.checked_mul(10u64.pow(exp))?;
    let mut scale = 10u64.pow(exp);
    for &b in frac {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        scale /= 10;
        v = v.checked_add(d as u64 * scale)?;
    }
    Some(v)
}

/// The largest request a trace may hold: far above any real block request
/// (Linux and NVMe cap them at a few MiB), so a larger one is a broken line.
pub const MAX_REQUEST_BYTES: u64 = 1 << 30;

/// The largest end offset a request may reach (8 EiB).
const MAX_END_BYTES: u64 = 1 << 63;

/// What a request's place and size must be.
const REQUEST_RANGE: &str = "a request of at most 1 GiB, ending below 8 EiB";

/// What a timestamp must be: nanoseconds count in 64 bits.
pub const TIME_RANGE: &str = "a timestamp below 2^64 ns (584 years)";

/// What a device (disk, volume, ASU) number must be.
const DEVICE_RANGE: &str = "a device number below 2^32";

/// What a Linux device's numbers must be (a 12-bit major, a 20-bit minor).
const DEV_T_RANGE: &str = "a device major below 4096 and minor below 2^20";

/// A device number as a record keeps it; past 32 bits is a broken line (it
/// was cut to 32 bits, and `--devices` then chose the wrong records).
fn device(id: u64) -> Result<u32, &'static str> {
    u32::try_from(id).map_err(|_| DEVICE_RANGE)
}

/// A Linux device `major,minor` as one number (its `dev_t`).
fn dev_t(major: u64, minor: u64) -> Result<u32, &'static str> {
    if major < 1 << 12 && minor < 1 << 20 {
        Ok(((major as u32) << 20) | minor as u32)
    } else {
        Err(DEV_T_RANGE)
    }
}

/// `n` sectors in bytes; a number past 64 bits is a broken line.
fn sectors(n: u64) -> Result<u64, &'static str> {
    n.checked_mul(SECTOR).ok_or(REQUEST_RANGE)
}

/// `t` in units of `unit_ns` as nanoseconds; past 64 bits is a broken line.
pub fn ns(t: u64, unit_ns: u64) -> Result<u64, &'static str> {
    t.checked_mul(unit_ns).ok_or(TIME_RANGE)
}

/// A record of a request of `len` bytes at `offset`, if it moves data and fits.
pub fn record(time_ns: u64, op: Op, offset: u64, len: u64, device: u32) -> Parsed {
    if len == 0 {
        // Zero-length requests move no data (flushes, barriers).
        return Ok(None);
    }
    if len > MAX_REQUEST_BYTES || offset >= MAX_END_BYTES - len {
        return Err(REQUEST_RANGE);
    }
    Ok(Some(TraceRecord {
        time_ns,
        op,
        offset,
        len,
        device,
        clock: 0,
    }))
}

/// Parses one line of `format`. `first` is true for the file's first line
/// (where headers may stand).
#[inline]
pub fn line(format: TraceFormat, line: &[u8], first: bool) -> Parsed {
    let line = line.trim_ascii();
    if line.is_empty() || line[0] == b'#' {
        return Ok(None);
    }
    match format {
        TraceFormat::Msr => msr(line, first),
        TraceFormat::Umass => umass(line),
        TraceFormat::Blkparse => blkparse(line),
        TraceFormat::FioV2 | TraceFormat::FioV3 => Err("fio iologs are read by their own reader"),
        TraceFormat::Mqsim | TraceFormat::Ssdsim => ascii(line, 1),
        TraceFormat::Disksim => ascii(line, 1_000_000),
        TraceFormat::Fiu => fiu(line),
        TraceFormat::Alibaba => alibaba(line),
        TraceFormat::Tencent => tencent(line, first),
    }
}

const MSR: &str =
    "Timestamp(100 ns ticks),Hostname,DiskNumber,Read|Write,Offset(bytes),Size(bytes),ResponseTime";

/// MSR Cambridge: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`,
/// the timestamp in Windows FILETIME ticks of 100 ns.
fn msr(line: &[u8], first: bool) -> Parsed {
    let mut f = Fields::new(line, true);
    let field = f.next().ok_or(MSR)?;
    let Some(ticks) = int(field) else {
        return if is_header(field, first) {
            Ok(None)
        } else {
            Err(MSR)
        };
    };
    let _host = f.next().ok_or(MSR)?;
    let disk = f.next().and_then(int).ok_or(MSR)?;
    let kind = f.next().ok_or(MSR)?;
    let op = if kind.eq_ignore_ascii_case(b"read") {
        Op::Read
    } else if kind.eq_ignore_ascii_case(b"write") {
        Op::Write
    } else {
        return Err(MSR);
    };
    let offset = f.next().and_then(int).ok_or(MSR)?;
    let size = f.next().and_then(int).ok_or(MSR)?;
    record(ns(ticks, 100)?, op, offset, size, device(disk)?)
}

const UMASS: &str = "ASU,LBA(512 B sectors),Size(bytes),r|w,Timestamp(s)";

/// UMass / SPC: `ASU,LBA,Size,Opcode,Timestamp[,...]`.
fn umass(line: &[u8]) -> Parsed {
    let mut f = Fields::new(line, true);
    let asu = f.next().and_then(int).ok_or(UMASS)?;
    let lba = f.next().and_then(int).ok_or(UMASS)?;
    let size = f.next().and_then(int).ok_or(UMASS)?;
    let op = match f.next().ok_or(UMASS)? {
        b"r" | b"R" => Op::Read,
        b"w" | b"W" => Op::Write,
        _ => return Err(UMASS),
    };
    let time = f.next().and_then(|t| scaled(t, 9)).ok_or(UMASS)?;
    record(time, op, sectors(lba)?, size, device(asu)?)
}

const BLKPARSE: &str =
    "maj,min cpu seq time(s) pid action RWBS sector + sectors [process] (blkparse's default output)";

/// blkparse's default text output: `maj,min cpu seq time pid action RWBS
/// sector + nsectors [comm]`. Requests count when issued to the device
/// (action `D`); other events and the closing summary pass.
fn blkparse(line: &[u8]) -> Parsed {
    let mut f = Fields::new(line, false);
    let dev = f.next().ok_or(BLKPARSE)?;
    let Some(comma) = dev.iter().position(|&b| b == b',') else {
        // The summary block blkparse prints at the end ("CPU0 (8,16):", "Total ...").
        return Ok(None);
    };
    let (Some(major), Some(minor)) = (int(&dev[..comma]), int(&dev[comma + 1..])) else {
        return Ok(None);
    };
    let cpu = f.next().and_then(int).ok_or(BLKPARSE)?;
    let cpu = u16::try_from(cpu).map_err(|_| BLKPARSE)?;
    let _seq = f.next().and_then(int).ok_or(BLKPARSE)?;
    let time = f.next().and_then(|t| scaled(t, 9)).ok_or(BLKPARSE)?;
    let _pid = f.next().ok_or(BLKPARSE)?;
    let action = f.next().ok_or(BLKPARSE)?;
    if action != b"D" {
        return Ok(None);
    }
    let rwbs = f.next().ok_or(BLKPARSE)?;
    let op = if rwbs.contains(&b'D') {
        Op::Trim
    } else if rwbs.contains(&b'W') {
        Op::Write
    } else if rwbs.contains(&b'R') {
        Op::Read
    } else {
        // Flushes and other requests without data.
        return Ok(None);
    };
    let sector = match f.next() {
        // A request without an address (`D WFS [jbd2]`: a flush with FUA) moves no data.
        None => return Ok(None),
        Some(field) if field.starts_with(b"[") => return Ok(None),
        Some(field) => int(field).ok_or(BLKPARSE)?,
    };
    if f.next() != Some(b"+") {
        return Err(BLKPARSE);
    }
    let count = f.next().and_then(int).ok_or(BLKPARSE)?;
    let r = record(
        time,
        op,
        sectors(sector)?,
        sectors(count)?,
        dev_t(major, minor)?,
    )?;
    Ok(r.map(|r| TraceRecord { clock: cpu, ..r }))
}

const ASCII: &str = "time device lba(512 B sectors) size(sectors) type(0 = write, 1 = read)";

/// DiskSim / MQSim / SSDsim ASCII: `time device lba size type`, type 1 =
/// read, 0 = write; `time_unit_ns` scales the time column (1: ns; DiskSim: ms).
fn ascii(line: &[u8], time_unit_ns: u64) -> Parsed {
    let mut f = Fields::new(line, false);
    // MQSim and SSDsim count whole ns (as their readers do); DiskSim ms with a fraction.
    let time = match time_unit_ns {
        1 => f.next().and_then(int),
        _ => f.next().and_then(|t| scaled(t, 6)),
    }
    .ok_or(ASCII)?;
    let device = f.next().and_then(int).ok_or(ASCII)?;
    let lba = f.next().and_then(int).ok_or(ASCII)?;
    let size = f.next().and_then(int).ok_or(ASCII)?;
    let op = match f.next().and_then(int).ok_or(ASCII)? & 1 {
        1 => Op::Read,
        _ => Op::Write,
    };
    if f.next().is_some() {
        return Err(ASCII);
    }
    record(
        time,
        op,
        sectors(lba)?,
        sectors(size)?,
        self::device(device)?,
    )
}

const FIU: &str = "time(ns) pid process lba(512 B sectors) sectors W|R major minor md5";

/// FIU: `ts pid process lba nblocks W/R major minor md5`.
fn fiu(line: &[u8]) -> Parsed {
    let mut f = Fields::new(line, false);
    let time = f.next().and_then(int).ok_or(FIU)?;
    let _pid = f.next().and_then(int).ok_or(FIU)?;
    let _process = f.next().ok_or(FIU)?;
    let lba = f.next().and_then(int).ok_or(FIU)?;
    let blocks = f.next().and_then(int).ok_or(FIU)?;
    let op = match f.next().ok_or(FIU)? {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        _ => return Err(FIU),
    };
    let major = f.next().and_then(int).ok_or(FIU)?;
    let minor = f.next().and_then(int).ok_or(FIU)?;
    record(
        time,
        op,
        sectors(lba)?,
        sectors(blocks)?,
        dev_t(major, minor)?,
    )
}

const ALIBABA: &str = "device_id,R|W,offset(bytes),length(bytes),timestamp(us)";

/// Alibaba block traces 2020: `device_id,opcode,offset,length,timestamp`.
fn alibaba(line: &[u8]) -> Parsed {
    let mut f = Fields::new(line, true);
    let device = f.next().and_then(int).ok_or(ALIBABA)?;
    let op = match f.next().ok_or(ALIBABA)? {
        b"R" | b"r" => Op::Read,
        b"W" | b"w" => Op::Write,
        _ => return Err(ALIBABA),
    };
    let offset = f.next().and_then(int).ok_or(ALIBABA)?;
    let len = f.next().and_then(int).ok_or(ALIBABA)?;
    let time = f.next().and_then(int).ok_or(ALIBABA)?;
    record(ns(time, 1000)?, op, offset, len, self::device(device)?)
}

const TENCENT: &str =
    "Timestamp(unix s),Offset(512 B sectors),Size(sectors),IOType(0 = read, 1 = write),VolumeID";

/// Tencent CBS: `Timestamp,Offset,Size,IOType,VolumeID`.
fn tencent(line: &[u8], first: bool) -> Parsed {
    let mut f = Fields::new(line, true);
    let field = f.next().unwrap_or_default();
    let Some(time) = int(field) else {
        return if is_header(field, first) {
            Ok(None)
        } else {
            Err(TENCENT)
        };
    };
    let offset = f.next().and_then(int).ok_or(TENCENT)?;
    let size = f.next().and_then(int).ok_or(TENCENT)?;
    let op = match f.next().and_then(int).ok_or(TENCENT)? {
        0 => Op::Read,
        1 => Op::Write,
        _ => return Err(TENCENT),
    };
    let volume = f.next().and_then(int).ok_or(TENCENT)?;
    if f.next().is_some() {
        return Err(TENCENT);
    }
    record(
        ns(time, 1_000_000_000)?,
        op,
        sectors(offset)?,
        sectors(size)?,
        device(volume)?,
    )
}

/// The fields of one fio iolog line, v2 `file action [offset length]` or
/// v3 `time_us file action [offset length]`: the action and its numbers.
pub struct FioLine<'a> {
    pub time_us: Option<u64>,
    pub action: &'a [u8],
    pub offset: Option<u64>,
    pub length: Option<u64>,
}

pub const FIO_V2: &str = "file add|open|close, or file read|write|trim|sync|wait offset length";
pub const FIO_V3: &str =
    "time(us) file add|open|close, or time(us) file read|write|trim|sync offset length";

/// Splits a fio iolog line (`timed` for v3).
pub fn fio_line(line: &[u8], timed: bool) -> Result<Option<FioLine<'_>>, &'static str> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Ok(None);
    }
    let expected = if timed { FIO_V3 } else { FIO_V2 };
    let mut f = Fields::new(line, false);
    let time_us = match timed {
        true => Some(f.next().and_then(int).ok_or(expected)?),
        false => None,
    };
    let _file = f.next().ok_or(expected)?;
    let action = f.next().ok_or(expected)?;
    let offset = f.next().map(|o| int(o).ok_or(expected)).transpose()?;
    let length = f.next().map(|l| int(l).ok_or(expected)).transpose()?;
    Ok(Some(FioLine {
        time_us,
        action,
        offset,
        length,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_sizes_and_offsets_are_broken_lines() {
        // Found by the fuzzer: one 16 EiB request made the statistics visit
        // every 4 KiB block of it (unbounded time and memory).
        let huge = b"128166385295514663,hm,0,Write,0,18446744073709551615,2833";
        assert!(line(TraceFormat::Msr, huge, false).is_err());
        let past_end = b"128166385295514663,hm,0,Write,18446744073709551000,4096,2833";
        assert!(line(TraceFormat::Msr, past_end, false).is_err());
        let gib = format!("128166385295514663,hm,0,Read,0,{},2833", MAX_REQUEST_BYTES);
        assert_eq!(
            line(TraceFormat::Msr, gib.as_bytes(), false)
                .unwrap()
                .unwrap()
                .len,
            1 << 30
        );
    }

    #[test]
    fn a_first_line_of_digits_is_a_record_never_a_header() {
        let huge = b"18446744073709551615,hm,0,Write,0,4096,10";
        assert!(line(TraceFormat::Msr, huge, true).is_err());
        let header = b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";
        assert_eq!(line(TraceFormat::Msr, header, true), Ok(None));
        assert!(line(TraceFormat::Tencent, b"99999999999999999999,0,8,1,7", true).is_err());
        assert_eq!(
            line(
                TraceFormat::Tencent,
                b"Timestamp,Offset,Size,IOType,VolumeID",
                true
            ),
            Ok(None)
        );
    }

    #[test]
    fn numbers_past_64_bits_are_broken_lines() {
        // Sectors times 512, or 20 digits: never a wrapped address, never passed over.
        let lines: [(TraceFormat, &[u8]); 9] = [
            (
                TraceFormat::Blkparse,
                b"8,16 3 5 0.000026421 3645 D W 36028797018963968 + 8 [java]",
            ),
            (
                TraceFormat::Blkparse,
                b"8,16 3 5 0.000026421 3645 D W 18446744073709551615 + 8 [java]",
            ),
            (
                TraceFormat::Blkparse,
                b"8,16 3 5 0.000026421 3645 D W 8 + 36028797018963968 [java]",
            ),
            (TraceFormat::Umass, b"1,36028797018963968,4096,W,0.5"),
            (TraceFormat::Mqsim, b"100 1 36028797018963968 8 0"),
            (TraceFormat::Fiu, b"1 2 p 36028797018963968 8 W 6 0 88b9"),
            (TraceFormat::Tencent, b"1538323200,36028797018963968,8,1,3"),
            (TraceFormat::Tencent, b"18446744074,0,8,1,3"),
            (TraceFormat::Msr, b"184467440737095517,h,0,Write,0,4096,1"),
        ];
        for (format, l) in lines {
            let parsed = line(format, l, false);
            assert!(
                parsed.is_err(),
                "{}: {parsed:?}",
                String::from_utf8_lossy(l)
            );
        }
        assert_eq!(scaled(b"18446744073.709551616", 9), None);
        // A request without an address passes: a flush with FUA.
        let flush = b"8,16 3 5 0.000026421 3645 D WFS [jbd2/sda1-8]";
        assert_eq!(line(TraceFormat::Blkparse, flush, false), Ok(None));
        let r = line(
            TraceFormat::Blkparse,
            b"8,16 7 5 0.1 3645 D W 8 + 8 [java]",
            false,
        );
        assert_eq!(
            r.unwrap().unwrap().clock,
            7,
            "the CPU is the record's clock"
        );
    }

    #[test]
    fn numbers_parse_exactly() {
        assert_eq!(int(b"128166385295514663"), Some(128166385295514663));
        assert_eq!(int(b"12a"), None);
        assert_eq!(int(b""), None);
        assert_eq!(scaled(b"0.011413", 9), Some(11_413_000));
        assert_eq!(scaled(b"0.000011950", 9), Some(11_950));
        assert_eq!(scaled(b"3", 9), Some(3_000_000_000));
        assert_eq!(scaled(b"1.5", 6), Some(1_500_000));
        assert_eq!(scaled(b"1.x", 6), None);
    }

    #[test]
    fn fields_split_on_commas_or_runs_of_blanks() {
        let v: Vec<&[u8]> = Fields::new(b"a, b,,c", true).collect();
        assert_eq!(v, [&b"a"[..], b"b", b"", b"c"]);
        let v: Vec<&[u8]> = Fields::new(b"  8,16   3  4 ", false).collect();
        assert_eq!(v, [&b"8,16"[..], b"3", b"4"]);
    }

    #[test]
    fn each_format_reads_its_sample_line() {
        let r = line(
            TraceFormat::Msr,
            b"128166385295514663,hm,0,Write,9056014336,2048,2833",
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!((r.op, r.offset, r.len), (Op::Write, 9056014336, 2048));
        assert_eq!(r.time_ns, 12816638529551466300);
        let r = line(TraceFormat::Umass, b"1,31244784,32768,R,0.011565", false)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.op, r.offset, r.len, r.time_ns, r.device),
            (Op::Read, 31244784 * 512, 32768, 11_565_000, 1)
        );
        let blk = b"  8,16   3        5     0.000026421  3645  D   R 4938888 + 256 [java]";
        let r = line(TraceFormat::Blkparse, blk, false).unwrap().unwrap();
        assert_eq!(
            (r.op, r.offset, r.len, r.time_ns),
            (Op::Read, 4938888 * 512, 256 * 512, 26_421)
        );
        let queued = b"  8,16   3        4     0.000011950  3645  I   R 4938888 + 256 [java]";
        assert_eq!(line(TraceFormat::Blkparse, queued, false), Ok(None));
        assert_eq!(
            line(TraceFormat::Blkparse, b"CPU3 (8,16):", false),
            Ok(None)
        );
        let r = line(TraceFormat::Mqsim, b"11565000 1 31244784 64 1", false)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.op, r.offset, r.len, r.time_ns),
            (Op::Read, 31244784 * 512, 64 * 512, 11_565_000)
        );
        let r = line(
            TraceFormat::Fiu,
            b"89966527950584 4253 nfsd 508516672 8 W 6 0 88b93b628d84082186026d9da044f173",
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!((r.op, r.offset, r.len), (Op::Write, 508516672 * 512, 4096));
        let r = line(
            TraceFormat::Tencent,
            b"1538323200,4247200,128,1,1058",
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (r.op, r.offset, r.len, r.device),
            (Op::Write, 4247200 * 512, 65536, 1058)
        );
        let r = line(TraceFormat::Alibaba, b"3,W,8192,4096,1577808000000", false)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.op, r.offset, r.len, r.time_ns),
            (Op::Write, 8192, 4096, 1_577_808_000_000_000)
        );
        assert_eq!(
            line(TraceFormat::Tencent, b"1538323200,x,128,1,1058", false),
            Err(TENCENT)
        );
        assert_eq!(
            line(
                TraceFormat::Msr,
                b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
                true
            ),
            Ok(None)
        );
    }
}
