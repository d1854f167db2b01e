//! Trace readers against the real samples in `../shared/traces/`: every
//! sample is detected as its format and reads with the record count and
//! read/write split that `awk` gives on the same file (counted
//! independently of nandlab's parsers); compressed copies read the same;
//! a corrupted copy fails at the corrupted line, naming the format expected;
//! skip-and-count passes over it.

mod common;
use common::samples;

use nandlab_core::host::trace::stats::summarize;
use nandlab_core::host::trace::{OnError, TraceFormat, TraceReader};
use std::io::Write;
use std::path::{Path, PathBuf};

fn sample(name: &str) -> PathBuf {
    samples().join(name)
}

/// (file, format, records, reads, writes, read bytes, write bytes), from awk.
const SAMPLES: [(&str, &str, u64, u64, u64, u64, u64); 8] = [
    (
        "msr_rsrch_1.csv",
        "msr",
        13780,
        42,
        13738,
        568320,
        171211264,
    ),
    (
        "msr_hm_0_first1000.csv",
        "msr",
        1000,
        508,
        492,
        6108672,
        3580928,
    ),
    (
        "tencent_cbs_sample_50k.csv",
        "tencent",
        50000,
        24521,
        25479,
        646755328,
        871636992,
    ),
    (
        "blkparse_ycsb_ext4_msclaudz.txt",
        "blkparse",
        9887,
        9039,
        848,
        1047625728,
        251944960,
    ),
    (
        "fiu_mail_cheetah_sample.clean.txt",
        "fiu",
        9997,
        8896,
        1101,
        36438016,
        4509696,
    ),
    (
        "mqsim_wsrch-small.trace",
        "mqsim",
        24783,
        24779,
        4,
        382085120,
        32768,
    ),
    (
        "ssdsim_example_financial1_first10k.ascii",
        "ssdsim",
        10000,
        4077,
        5923,
        25437696,
        29841408,
    ),
    (
        "umass_websearch1_first10.spc",
        "umass",
        10,
        10,
        0,
        139264,
        0,
    ),
];

#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn every_sample_is_detected_and_reads_as_awk_counts_it() {
    for (file, format, records, reads, writes, read_bytes, write_bytes) in SAMPLES {
        let mut r = TraceReader::open(&sample(file), None, OnError::Stop).unwrap();
        assert_eq!(r.format.name(), format, "{file}");
        let s = summarize(&mut r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.records, s.reads, s.writes, s.read_bytes, s.write_bytes),
            (records, reads, writes, read_bytes, write_bytes),
            "{file}"
        );
        let percent = s.read_percent + s.write_percent;
        assert!((percent - 100.0).abs() < 1e-9, "{file}: {percent}");
        assert!(
            s.footprint_bytes > 0 && s.reuse_cdf.last().unwrap()[1] > 0.999,
            "{file}"
        );
    }
}

/// A copy of a sample in a temporary directory, with `edit` applied to its lines.
fn copy(file: &str, suffix: &str, edit: impl Fn(usize, &str) -> String) -> PathBuf {
    let text = std::fs::read_to_string(sample(file)).unwrap();
    let dir = std::env::temp_dir().join(format!("nandlab-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{file}{suffix}"));
    let out: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| edit(i + 1, l))
        .collect();
    std::fs::write(&path, out.join("\n") + "\n").unwrap();
    path
}

#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn a_corrupted_line_fails_with_its_number_and_the_format_expected() {
    for (file, format, records, ..) in SAMPLES {
        // Line 7's second number becomes text (the umass sample has 10 lines).
        let corrupt = |n: usize, l: &str| {
            if n != 7 {
                return l.to_string();
            }
            let sep = if matches!(format, "msr" | "tencent" | "umass") {
                ','
            } else {
                ' '
            };
            let mut fields: Vec<String> = l.split(sep).map(String::from).collect();
            let i = fields
                .iter()
                .enumerate()
                .filter(|(_, f)| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
                .nth(1)
                .map(|(i, _)| i)
                .unwrap();
            fields[i] = "x9".into();
            fields.join(&sep.to_string())
        };
        let path = copy(file, ".bad", corrupt);
        let format = TraceFormat::parse(format).unwrap();
        let mut r = TraceReader::open(&path, Some(format), OnError::Stop).unwrap();
        let e = summarize(&mut r).unwrap_err();
        // blkparse passes over lines it does not read as events (its summary
        // block), so a corrupted event may pass too: it must not count.
        if format == TraceFormat::Blkparse && e.line == 0 {
            continue;
        }
        assert_eq!(e.line, 7, "{file}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains(":7:") && msg.contains(format.name()) && msg.contains("expected"),
            "{msg}"
        );
        // Skip-and-count reads the rest.
        let mut r = TraceReader::open(&path, Some(format), OnError::Skip).unwrap();
        let s = summarize(&mut r).unwrap();
        assert_eq!((s.records, s.skipped_lines), (records - 1, 1), "{file}");
    }
}

#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn compressed_traces_read_like_the_plain_ones() {
    let plain = sample("msr_hm_0_first1000.csv");
    let bytes = std::fs::read(&plain).unwrap();
    let dir = std::env::temp_dir().join(format!("nandlab-traces-z-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gz = dir.join("hm.csv.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&bytes).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let bz = dir.join("hm.csv.bz2");
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(&bytes).unwrap();
    std::fs::write(&bz, e.finish().unwrap()).unwrap();
    let zst = dir.join("hm.csv.zst");
    let compressed =
        ruzstd::encoding::compress_to_vec(&bytes[..], ruzstd::encoding::CompressionLevel::Fastest);
    std::fs::write(&zst, compressed).unwrap();
    let read = |p: &Path| {
        let mut r = TraceReader::open(p, None, OnError::Stop).unwrap();
        let s = summarize(&mut r).unwrap();
        (r.format, s.records, s.read_bytes, s.write_bytes)
    };
    let expected = read(&plain);
    for p in [gz, bz, zst] {
        assert_eq!(read(&p), expected, "{}", p.display());
    }
}

#[test]
fn fio_iologs_and_alibaba_read_as_documented() {
    let dir = std::env::temp_dir().join(format!("nandlab-traces-fio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let v2 = dir.join("job.iolog");
    std::fs::write(
        &v2,
        "fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb write 0 4096\n/dev/sdb wait 1500 0\n/dev/sdb read 4096 8192\n/dev/sdb trim 0 4096\n/dev/sdb close\n",
    )
    .unwrap();
    let records: Vec<_> = TraceReader::open(&v2, None, OnError::Stop)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(records.len(), 3);
    assert_eq!(
        (records[1].time_ns, records[1].offset, records[1].len),
        (1_500_000, 4096, 8192)
    );
    let v3 = dir.join("job3.iolog");
    std::fs::write(
        &v3,
        "fio version 3 iolog\n0 /dev/sdb add\n10 /dev/sdb open\n250 /dev/sdb write 8192 4096\n",
    )
    .unwrap();
    let mut r = TraceReader::open(&v3, None, OnError::Stop).unwrap();
    assert_eq!(r.format, TraceFormat::FioV3);
    let rec = r.next().unwrap().unwrap();
    assert_eq!((rec.time_ns, rec.offset), (250_000, 8192));
    let ali = dir.join("alibaba.csv");
    std::fs::write(
        &ali,
        "3,W,8192,4096,1577808000000\n3,R,0,512,1577808000100\n",
    )
    .unwrap();
    let mut r = TraceReader::open(&ali, None, OnError::Stop).unwrap();
    assert_eq!(r.format, TraceFormat::Alibaba);
    let s = summarize(&mut r).unwrap();
    assert_eq!((s.reads, s.writes, s.duration_seconds), (1, 1, 0.0001));
}

#[test]
#[ignore = "reads the real traces in ../shared/traces (not in the repo); scripts/test-all runs it where they are"]
fn an_unknown_or_empty_file_says_what_was_tried() {
    let dir = std::env::temp_dir().join(format!("nandlab-traces-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.txt");
    std::fs::write(&junk, "hello world\nthis is not a trace\n").unwrap();
    let e = TraceReader::open(&junk, None, OnError::Stop)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("tried msr") && e.contains("blkparse"), "{e}");
    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let e = TraceReader::open(&empty, None, OnError::Stop)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("empty"), "{e}");
    // A format that reads nothing from the file is an error, never an empty run.
    let blk = TraceReader::open(
        &sample("msr_hm_0_first1000.csv"),
        Some(TraceFormat::Blkparse),
        OnError::Stop,
    );
    let e = summarize(&mut blk.unwrap()).unwrap_err().to_string();
    assert!(e.contains("no I/O records"), "{e}");
}

/// A trace of `lines` in a temporary file named `name`.
fn trace_file(name: &str, lines: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nandlab-traces-order-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Each format's clock must not go back (by more than one of its ticks; a
/// blkparse CPU's own events): an error naming the line, or under
/// skip-and-count a skipped line; never a silent gap of 0.
#[test]
fn a_timestamp_that_goes_back_is_a_bad_line() {
    let blk = |cpu: u32, t: &str, sector: u64| {
        format!("  8,16  {cpu}  5  {t}  3645  D   W {sector} + 8 [java]")
    };
    // (file, lines, line that goes back, what the message says)
    let cases = [
        (
            "same-cpu.blk",
            vec![
                blk(0, "0.000100000", 0),
                blk(1, "0.000050000", 8),
                blk(0, "0.000090000", 16),
            ],
            3,
            "goes back 10.000 µs from line 1's on CPU 0",
        ),
        (
            "one.csv",
            vec![
                "128166385295514663,hm,0,Write,0,4096,1".into(),
                "128166385295514600,hm,0,Write,4096,4096,1".into(),
            ],
            2,
            "goes back 6.300 µs from line 1's",
        ),
        (
            "vol.csv",
            vec![
                "1538323200,0,8,1,3".into(),
                "1538323199,8,8,1,3".into(),
                "1538323198,16,8,1,3".into(),
            ],
            3,
            "goes back 2.000 s from line 1's",
        ),
        (
            "job.iolog",
            vec![
                "fio version 3 iolog".into(),
                "500 /dev/sdb write 0 4096".into(),
                "400 /dev/sdb write 4096 4096".into(),
            ],
            3,
            "goes back 100.000 µs from line 2's",
        ),
        (
            "ali.csv",
            vec![
                "3,W,8192,4096,1577808000100".into(),
                "3,R,0,512,1577808000000".into(),
            ],
            2,
            "goes back 100.000 µs",
        ),
    ];
    for (name, lines, at, says) in cases {
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let path = trace_file(name, &lines);
        let mut r = TraceReader::open(&path, None, OnError::Stop).unwrap();
        let e = summarize(&mut r).unwrap_err();
        assert_eq!(e.line, at, "{name}: {e}");
        assert!(
            e.to_string().contains(says) && e.to_string().contains("must be in time order"),
            "{name}: {e}"
        );
        let mut r = TraceReader::open(&path, None, OnError::Skip).unwrap();
        let s = summarize(&mut r).unwrap();
        let records = lines.iter().filter(|l| !l.starts_with("fio")).count() as u64;
        assert_eq!((s.records, s.skipped_lines), (records - 1, 1), "{name}");
    }
    // Another blkparse CPU's batch may be behind; within one tick of Tencent's whole seconds too.
    let cpus = trace_file(
        "cpus.blk",
        &[
            &blk(0, "0.000100000", 0),
            &blk(1, "0.000050000", 8),
            &blk(1, "0.000060000", 16),
        ],
    );
    let tencent = trace_file("tick.csv", &["1538323200,0,8,1,3", "1538323199,8,8,1,3"]);
    for path in [cpus, tencent] {
        let mut r = TraceReader::open(&path, None, OnError::Stop).unwrap();
        let s = summarize(&mut r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.skipped_lines, 0);
    }
}

/// Every registered format (`TraceFormat::ALL`) reads its own example line
/// as one record, given by name or — for a format `detect` can tell from
/// its first lines — found by itself.
#[test]
fn every_format_reads_its_example() {
    for fmt in TraceFormat::ALL {
        let (header, line) = fmt.example();
        // SSDsim's lines read as MQSim's: detect tells them by SSDsim's `.ascii` name.
        let ext = if fmt == TraceFormat::Ssdsim {
            "ascii"
        } else {
            fmt.name()
        };
        let mut file = tempfile_named(&format!("example.{ext}"));
        writeln!(file.1, "{header}{line}").unwrap();
        drop(file.1);
        let mut reader = TraceReader::open(&file.0, Some(fmt), OnError::Stop)
            .unwrap_or_else(|e| panic!("{}: {e}", fmt.name()));
        let stats = summarize(&mut reader).unwrap_or_else(|e| panic!("{}: {e}", fmt.name()));
        assert_eq!(stats.records, 1, "{}", fmt.name());
        if let Ok(mut found) = TraceReader::open(&file.0, None, OnError::Stop) {
            assert_eq!(summarize(&mut found).unwrap().format, fmt.name());
        }
        let _ = std::fs::remove_file(&file.0);
    }
}

fn tempfile_named(name: &str) -> (PathBuf, std::fs::File) {
    let path = std::env::temp_dir().join(format!("nandlab-{}-{name}", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    (path, file)
}

/// Skip-and-count passes over a malformed line among the first lines too:
/// the format is still detected (it read every other line), and counted.
#[test]
fn a_bad_line_among_the_first_is_skipped_when_detecting_with_skip() {
    let msr = |t: u64| {
        format!(
            "{},hm,0,Write,{},4096,100",
            128166372000000000 + t,
            t * 4096
        )
    };
    let good: Vec<String> = (0..20).map(msr).collect();
    let mut lines: Vec<&str> = good.iter().map(String::as_str).collect();
    lines.insert(3, "1,2,3");
    let path = trace_file("bad-early.csv", &lines);
    let e = TraceReader::open(&path, None, OnError::Stop).err().unwrap();
    assert!(e.to_string().contains("not a trace format"), "{e}");
    let mut r = TraceReader::open(&path, None, OnError::Skip).unwrap();
    assert_eq!(r.format, TraceFormat::Msr);
    let s = summarize(&mut r).unwrap();
    assert_eq!((s.records, s.skipped_lines), (20, 1));
    // Mostly garbage is no trace, even when skipping.
    let junk = trace_file("junk.csv", &["a", "b", &good[0], "c"]);
    assert!(TraceReader::open(&junk, None, OnError::Skip).is_err());
}
