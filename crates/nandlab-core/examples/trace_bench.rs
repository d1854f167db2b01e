//! Trace reader benchmark: parses a trace file (any format nandlab reads,
//! compressed or not) and prints records per wall-second, reading only and
//! reading with the full statistics pass. Usage:
//! `cargo run --release -p nandlab-core --example trace_bench FILE [FORMAT]`

use nandlab_core::host::trace::stats::summarize;
use nandlab_core::host::trace::{OnError, TraceFormat, TraceReader};
use std::path::Path;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: trace_bench FILE [FORMAT]");
    let format = args
        .next()
        .map(|f| TraceFormat::parse(&f).expect("a format name"));
    let path = Path::new(&path);
    let wall = Instant::now();
    let reader = TraceReader::open(path, format, OnError::Stop).unwrap_or_else(|e| panic!("{e}"));
    let name = reader.format.name();
    let mut records = 0u64;
    for r in reader {
        r.unwrap_or_else(|e| panic!("{e}"));
        records += 1;
    }
    let read = wall.elapsed().as_secs_f64();
    println!(
        "{name}: {records} records read in {read:.3} s: {:.2} M records per wall-second",
        records as f64 / read / 1e6
    );
    let wall = Instant::now();
    let mut reader = TraceReader::open(path, format, OnError::Stop).unwrap();
    let s = summarize(&mut reader).unwrap_or_else(|e| panic!("{e}"));
    let secs = wall.elapsed().as_secs_f64();
    println!(
        "with statistics: {secs:.3} s, {:.2} M records per wall-second, footprint {} MiB",
        s.records as f64 / secs / 1e6,
        s.footprint_bytes >> 20
    );
}
