//! Hostile input, fuzzed: config files built from the real keys with hostile
//! values, and trace files of every format (`TraceFormat::ALL`, each from
//! its `example()` line) built from valid lines with
//! fields replaced, dropped or garbled (plain, or behind a compression magic
//! number). The loader and the readers must never panic nor hang: each input
//! gives a config or records, or a clear error naming where. A trace that
//! reads is also replayed on a small drive, through remapping and request
//! splitting. Bounded for CI (`PROPTEST_CASES` runs longer).

use nandlab_core::host::trace::stats::summarize;
use nandlab_core::host::trace::{OnError, TraceFormat, TraceReader};
use nandlab_core::sim::footprint;
use nandlab_core::{Config, Simulator};
use proptest::prelude::*;
use std::io::Write;

/// Values that break naive parsers.
const NASTY: [&str; 18] = [
    "",
    "-1",
    "0",
    "1",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "1e308",
    "-0.0",
    "NaN",
    "inf",
    "0x10",
    "Ｗ",
    "\t",
    ",,,",
    " ",
    "R",
    "4294967296",
];

#[derive(Debug, Clone)]
enum Edit {
    Replace(usize, usize),
    Drop(usize),
    Repeat(usize),
    Truncate(usize),
    Garbage(Vec<u8>),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (0..12usize, 0..NASTY.len()).prop_map(|(f, v)| Edit::Replace(f, v)),
        1 => (0..12usize).prop_map(Edit::Drop),
        1 => (0..12usize).prop_map(Edit::Repeat),
        1 => (0..80usize).prop_map(Edit::Truncate),
        1 => prop::collection::vec(any::<u8>(), 0..40).prop_map(Edit::Garbage),
    ]
}

/// A sample line with one edit applied (fields split at commas or spaces).
fn edited(line: &str, e: &Edit) -> Vec<u8> {
    let sep = if line.contains(',') { "," } else { " " };
    let mut fields: Vec<String> = line.split(sep).map(str::to_string).collect();
    let n = fields.len();
    match e {
        Edit::Replace(f, v) => fields[f % n] = NASTY[*v].to_string(),
        Edit::Drop(f) => {
            fields.remove(f % n);
        }
        Edit::Repeat(f) => fields.insert(f % n, fields[f % n].clone()),
        Edit::Truncate(k) => return line.as_bytes()[..(*k).min(line.len())].to_vec(),
        Edit::Garbage(bytes) => return bytes.clone(),
    }
    fields.join(sep).into_bytes()
}

/// Magic numbers of gzip, bzip2 and zstd: a file that claims a compression.
const MAGIC: [&[u8]; 4] = [b"", b"\x1f\x8b", b"BZh9", b"\x28\xb5\x2f\xfd"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn trace_readers_never_panic(
        format in 0..TraceFormat::ALL.len(),
        lines in prop::collection::vec(prop::option::weighted(0.6, edit()), 0..60),
        magic in 0..MAGIC.len(),
        detect in any::<bool>(),
        skip_bad in any::<bool>(),
    ) {
        let fmt = TraceFormat::ALL[format];
        let (header, sample) = fmt.example();
        let mut text = MAGIC[magic].to_vec();
        text.extend_from_slice(header.as_bytes());
        for line in &lines {
            match line {
                None => text.extend_from_slice(sample.as_bytes()),
                Some(e) => text.extend(edited(sample, e)),
            }
            text.push(b'\n');
        }
        let mut file = tempfile();
        file.as_file_mut().write_all(&text).unwrap();
        let on_error = if skip_bad { OnError::Skip } else { OnError::Stop };
        let chosen = if detect { None } else { Some(fmt) };
        // Open and summarise: records or an error with the file (and line), never a panic.
        if let Ok(mut reader) = TraceReader::open(file.path(), chosen, on_error) {
            match summarize(&mut reader) {
                Ok(_) => {}
                Err(e) => prop_assert!(e.to_string().contains(&file.path().display().to_string()), "{}", e),
            }
        }
        // Replay it on a small drive, remapped both ways.
        for remap in ["modulo", "compact"] {
            let config = format!(
                "[device]\npreset = \"snia-slc\"\ncapacity = \"1GiB\"\n[[phase]]\nkind = \"trace\"\ntrace = {:?}\nformat = {:?}\nskip_bad = {skip_bad}\nremap = {remap:?}\nrequests = 400\n",
                file.path().display().to_string(),
                fmt.name(),
            );
            if let Ok(cfg) = Config::from_toml(&config, "fuzz") {
                let _ = Simulator::new(cfg).run_all(&mut |_| true);
            }
        }
    }
}

/// Keys of every table, and values that are wrong in every way.
const KEYS: [(&str, &[&str]); 4] = [
    (
        "device",
        &[
            "preset",
            "cell",
            "channels",
            "chips_per_channel",
            "dies_per_chip",
            "planes_per_die",
            "blocks_per_plane",
            "pages_per_block",
            "page_size",
            "over_provisioning",
            "reserve",
            "capacity",
            "interface",
            "channel_rate",
            "write_buffer",
            "write_cache",
            "multiplane",
            "colour",
        ],
    ),
    (
        "ftl",
        &[
            "gc",
            "gc_start",
            "gc_stop",
            "stripe_order",
            "read_priority",
            "command_order",
            "gc_scope",
            "zombie",
            "wear_leveling",
            "map_cache",
            "read_ahead",
            "pslc",
            "pslc_size",
            "direct_write",
            "mapping_unit",
            "life_threshold",
            "paired_page_backup",
        ],
    ),
    (
        "phase",
        &[
            "kind",
            "pattern",
            "distribution",
            "read_fraction",
            "trim_fraction",
            "block_size",
            "block_sizes",
            "working_set",
            "working_set_offset",
            "queue_depth",
            "rate",
            "volume",
            "requests",
            "duration",
            "until",
            "timed",
            "data",
            "idle_every",
            "idle_duration",
            "interval",
            "trace",
            "power_loss",
            "power_loss_every",
        ],
    ),
    ("checks", &["integrity", "everything"]),
];

const VALUES: [&str; 26] = [
    "0",
    "1",
    "-1",
    "3",
    "65537",
    "4294967296",
    "1e300",
    "-0.0",
    "nan",
    "0.5",
    "1.5",
    "true",
    "\"\"",
    "\"4KiB\"",
    "\"0B\"",
    "\"1PiB\"",
    "\"7 %\"",
    "\"-5 %\"",
    "\"150 %\"",
    "\"dead\"",
    "\"snia-slc\"",
    "\"zipf:1.2\"",
    "\"random\"",
    "[]",
    "[\"4KiB/60\", \"x/y\"]",
    "{ a = 1 }",
];

fn assignment(table: usize) -> impl Strategy<Value = String> {
    let keys = KEYS[table].1;
    (0..keys.len(), 0..VALUES.len())
        .prop_map(move |(k, v)| format!("{} = {}\n", keys[k], VALUES[v]))
}

fn document() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(assignment(0), 0..6),
        prop::collection::vec(assignment(1), 0..4),
        prop::collection::vec(prop::collection::vec(assignment(2), 0..5), 0..3),
        prop::collection::vec(assignment(3), 0..2),
        any::<bool>(),
    )
        .prop_map(|(device, ftl, phases, checks, jobs)| {
            // A valid small drive first; the hostile keys override it.
            let mut doc =
                String::from("seed = 1\n[device]\npreset = \"snia-slc\"\ncapacity = \"1GiB\"\n");
            doc.extend(device);
            doc.push_str("[ftl]\n");
            doc.extend(ftl);
            doc.push_str("[checks]\n");
            doc.extend(checks);
            for phase in phases {
                doc.push_str("[[phase]]\nvolume = 0.01\n");
                doc.extend(phase.iter().cloned());
                if jobs {
                    doc.push_str("[[phase.job]]\n");
                    doc.extend(phase);
                }
            }
            doc
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn the_config_loader_never_panics(doc in document(), noise in prop::collection::vec(any::<u8>(), 0..3)) {
        // Hostile keys and values, and now and then a stray byte that breaks the TOML.
        let mut text = doc.into_bytes();
        for (i, b) in noise.iter().enumerate() {
            let at = (*b as usize * 7919 + i * 104729) % (text.len() + 1);
            text.insert(at, *b);
        }
        let text = String::from_utf8_lossy(&text);
        match Config::from_toml(&text, "fuzz.toml") {
            Ok(cfg) => {
                // A config that loads has a state size we can check before allocating it.
                prop_assert!(footprint::state_bytes(&cfg, cfg.checks.integrity) > 0);
            }
            Err(e) => prop_assert!(!e.to_string().trim().is_empty()),
        }
    }
}

/// A temporary file that is removed when dropped.
fn tempfile() -> TempFile {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "nandlab-fuzz-{}-{}.trace",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    TempFile {
        file: std::fs::File::create(&path).unwrap(),
        path,
    }
}

struct TempFile {
    path: std::path::PathBuf,
    file: std::fs::File,
}

impl TempFile {
    fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn as_file_mut(&mut self) -> &mut std::fs::File {
        &mut self.file
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
