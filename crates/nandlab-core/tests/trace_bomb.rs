//! A decompression bomb: a small zstd file that expands to gigabytes with no
//! newline is refused at its first line, naming the file and the line, after
//! reading at most [`MAX_LINE_BYTES`] of it (memory and time stay bounded).
//! Alone in its test binary, so that the peak memory it checks is its own.

use nandlab_core::host::trace::stats::summarize;
use nandlab_core::host::trace::{OnError, TraceError, TraceFormat, TraceReader, MAX_LINE_BYTES};
use nandlab_core::sim::footprint::peak_rss_mib;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A zstd frame of `blocks` RLE blocks of 128 KiB of `byte` each (4 bytes a
/// block: 1 GiB from 32 KiB), as zstd's format (RFC 8878) defines them.
fn zstd_bomb(byte: u8, blocks: u32) -> Vec<u8> {
    const BLOCK: u32 = 128 << 10;
    // Magic; frame header: no content size, no checksum; a 128 KiB window (2^(10 + 7)).
    let mut out = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3];
    for i in 0..blocks {
        let last = (i + 1 == blocks) as u32;
        let header = (BLOCK << 3) | (1 << 1) | last; // size, type RLE, last block
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(byte);
    }
    out
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nandlab-bomb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The error reading `path` ends in (at opening, where the format is detected, or later).
fn failure(path: &Path, format: Option<TraceFormat>, on_error: OnError) -> TraceError {
    match TraceReader::open(path, format, on_error) {
        Err(e) => e,
        Ok(mut r) => summarize(&mut r).expect_err("the file fails"),
    }
}

#[test]
fn a_line_longer_than_the_cap_is_refused_in_bounded_memory() {
    let before = peak_rss_mib().unwrap_or(0.0);
    // 10 GiB of '1' in 320 KiB: every format would read digits a long while.
    let bomb = write("bomb.csv.zst", &zstd_bomb(b'1', 10 * 8192));
    assert!(std::fs::metadata(&bomb).unwrap().len() < 330_000);
    let start = Instant::now();
    for format in [None, Some(TraceFormat::Msr), Some(TraceFormat::Blkparse)] {
        for on_error in [OnError::Stop, OnError::Skip] {
            let e = failure(&bomb, format, on_error);
            assert_eq!(e.line, 1, "{e}");
            let msg = e.to_string();
            assert!(
                msg.starts_with(&format!(
                    "{}:1: a line longer than {MAX_LINE_BYTES} bytes",
                    bomb.display()
                )),
                "{msg}"
            );
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    assert!(seconds < 2.0, "{seconds:.1} s");
    if let Some(after) = peak_rss_mib() {
        assert!(
            after - before < 64.0,
            "peak memory grew by {:.0} MiB",
            after - before
        );
    }
    // A line of the cap's length reads; one byte more is refused, at its own line.
    let line = |len: usize| format!("{}\n", "9".repeat(len));
    let ok = write(
        "ok.csv",
        format!("1,rsrch,1,Write,0,4096,5\n{}", line(MAX_LINE_BYTES)).as_bytes(),
    );
    let e = failure(&ok, Some(TraceFormat::Msr), OnError::Stop);
    assert!(e.to_string().contains("not a msr line"), "{e}");
    let long = write(
        "long.csv",
        format!("1,rsrch,1,Write,0,4096,5\n{}", line(MAX_LINE_BYTES + 1)).as_bytes(),
    );
    let e = failure(&long, Some(TraceFormat::Msr), OnError::Skip);
    assert_eq!(e.line, 2, "{e}");
    assert!(e.to_string().contains("a line longer than"), "{e}");
}
