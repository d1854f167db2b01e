//! A served drive kept between sessions (`nandlab serve --snapshot`): one
//! file holding the simulated drive's whole state and the bytes its clients
//! wrote, so that serving it again later goes on with the same wear, mapping,
//! caches and data — a disk image of a simulated SSD.
//!
//! The file: `MAGIC` (16 bytes), the format version (u32 LE), the simulator's
//! state in a snapshot's layout (nandlab-core's header and checksummed body),
//! then the data: where it is (a byte: 0 in this file, 1 in a data file,
//! `--data`; format 1 has no such byte and keeps it in this file), for a
//! data file its path (u32 LE length and UTF-8 bytes), size (u64 LE) and
//! modified time (u64 LE, ns since the epoch) — the file is kept by
//! reference, and refused if it changed since —, the number of 4 KiB chunks
//! in this file (u64 LE) and of unreadable units (u64 LE), each unreadable
//! unit (u32 LE), each chunk (its index u64 LE and its 4,096 bytes, in
//! ascending order), and a CRC-32 of the data section (u32 LE). It is
//! written next to its path and renamed over it once complete; read back,
//! every length is checked against the file before anything is allocated,
//! and the checksum before the drive is served.

use crate::store::{Store, StoreError, CHUNK};
use nandlab_core::sim::{open_snapshot_file, ConfigText};
use nandlab_core::{SimError, Simulator};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// The first bytes of a served drive's file.
pub const MAGIC: &[u8; 16] = b"nandlab-served\0\0";
/// Bumped whenever the layout after `MAGIC` changes (format 1, before data
/// files, is still read).
pub const FORMAT: u32 = 2;
/// The longest data file path a served drive's file keeps (bytes).
const MAX_DATA_PATH: u32 = 4096;

/// The data a served drive holds: the bytes its clients wrote, and the
/// mapping units a power cut left unreadable (their surviving version had
/// left the server's log: they read as EIO until written again).
pub struct ServedData {
    pub store: Store,
    pub unreadable: Vec<u32>,
}

impl ServedData {
    /// Nothing written, in a store that may hold `limit_bytes`.
    pub fn empty(limit_bytes: u64) -> ServedData {
        ServedData {
            store: Store::new(limit_bytes),
            unreadable: Vec::new(),
        }
    }
}

/// What a served drive's file holds.
pub struct Saved {
    pub sim: Simulator,
    /// The config the drive was built from, as the user gave it.
    pub config: ConfigText,
    /// What the caller kept with it (the results of the config's phases).
    pub extra: String,
    pub data: ServedData,
}

fn failed(path: &Path, what: &str, e: impl std::fmt::Display) -> SimError {
    SimError::Snapshot(format!("{}: {what}: {e}", path.display()))
}

fn refused(path: &Path, why: &str) -> SimError {
    SimError::Snapshot(format!("{}: {why}", path.display()))
}

/// Writes the served drive (`sim` between phases, `data`) to `path`.
pub fn save(
    path: &Path,
    sim: &Simulator,
    config: &ConfigText,
    extra: &str,
    data: &ServedData,
) -> Result<(), SimError> {
    let (mut file, partial) = nandlab_core::sim::create_partial(path)
        .map_err(|e| failed(path, "cannot write the served drive", e))?;
    let written = file
        .write_all(MAGIC)
        .and_then(|()| file.write_all(&FORMAT.to_le_bytes()))
        .map_err(|e| failed(path, "cannot write the served drive", e))
        .and_then(|()| sim.write_embedded(&mut file, config, extra))
        .and_then(|()| {
            write_data(&mut file, data)
                .and_then(|()| file.sync_all())
                .and_then(|()| std::fs::rename(&partial, path))
                .map_err(|e| failed(path, "cannot write the served drive", e))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

fn write_data(file: &mut File, data: &ServedData) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut crc = crc32fast::Hasher::new();
    let mut put = |out: &mut BufWriter<_>, bytes: &[u8]| {
        crc.update(bytes);
        out.write_all(bytes)
    };
    match data.store.data_file() {
        None => put(&mut out, &[0])?,
        Some(path) => {
            data.store.sync()?;
            let meta = std::fs::metadata(path)?;
            let name = path.to_str().ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "the data file's path is not UTF-8",
                )
            })?;
            put(&mut out, &[1])?;
            put(&mut out, &(name.len() as u32).to_le_bytes())?;
            put(&mut out, name.as_bytes())?;
            put(&mut out, &meta.len().to_le_bytes())?;
            put(&mut out, &modified_ns(&meta).to_le_bytes())?;
        }
    }
    let chunks = data.store.chunks();
    put(&mut out, &(chunks.len() as u64).to_le_bytes())?;
    put(&mut out, &(data.unreadable.len() as u64).to_le_bytes())?;
    for unit in &data.unreadable {
        put(&mut out, &unit.to_le_bytes())?;
    }
    for (index, bytes) in chunks {
        put(&mut out, &index.to_le_bytes())?;
        put(&mut out, bytes)?;
    }
    let sum = crc.finalize();
    out.write_all(&sum.to_le_bytes())?;
    out.flush()
}

/// A file's modified time in ns since the epoch (0 if the system has none).
fn modified_ns(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Whether `path` holds a served drive (it starts with `MAGIC`).
pub fn is_saved(path: &Path) -> bool {
    let mut head = [0u8; MAGIC.len()];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == MAGIC)
}

/// Reads the served drive at `path`; its data goes into a store in memory
/// that may hold `store_limit` bytes, or with `data` in that data file: the
/// one the drive keeps its data in, or for a drive whose data is in `path`,
/// a new file they are copied into.
pub fn load(path: &Path, store_limit: u64, data: Option<&Path>) -> Result<Saved, SimError> {
    let mut file = open_snapshot_file(path)?;
    let mut head = [0u8; MAGIC.len() + 4];
    file.read_exact(&mut head)
        .map_err(|_| refused(path, "not a served nandlab drive (the file is too short)"))?;
    if &head[..MAGIC.len()] != MAGIC {
        return Err(refused(path, "not a served nandlab drive"));
    }
    let format = u32::from_le_bytes(head[MAGIC.len()..].try_into().expect("4 bytes"));
    if format != FORMAT && format != 1 {
        return Err(refused(
            path,
            &format!("a served drive of format {format}; this nandlab reads format {FORMAT}"),
        ));
    }
    let (sim, config, extra) = Simulator::read_embedded(&mut file, path)?;
    let unit = sim.config().geometry.unit_size as u64;
    let units = sim.config().geometry.user_capacity_bytes / unit;
    let size = sim.config().geometry.user_capacity_bytes;
    let where_ = Where {
        store_limit,
        data,
        size,
        units,
        format,
    };
    // A data file created for the copy goes if the copy fails.
    let created = data.filter(|d| !d.exists());
    let data = read_data(&mut file, path, &where_).inspect_err(|_| {
        if let Some(d) = created {
            let _ = std::fs::remove_file(d);
        }
    })?;
    Ok(Saved {
        sim,
        config,
        extra,
        data,
    })
}

/// What the data section is read against: the store's memory budget, the
/// data file asked for, the drive's size in bytes and mapping units, and
/// the file's format.
struct Where<'a> {
    store_limit: u64,
    data: Option<&'a Path>,
    size: u64,
    units: u64,
    format: u32,
}

fn read_data(file: &mut File, path: &Path, w: &Where) -> Result<ServedData, SimError> {
    let damaged = |why: &str| refused(path, &format!("damaged: {why}"));
    let capacity_chunks = w.size / CHUNK as u64;
    let rest = file
        .stream_position()
        .and_then(|at| file.metadata().map(|m| m.len().saturating_sub(at)))
        .map_err(|e| failed(path, "cannot read the served drive", e))?;
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut crc = crc32fast::Hasher::new();
    let mut take = |input: &mut BufReader<&mut File>, buf: &mut [u8]| -> Result<(), SimError> {
        input
            .read_exact(buf)
            .map_err(|_| damaged("the file ends inside its data"))?;
        crc.update(buf);
        Ok(())
    };
    let mut word = [0u8; 8];
    let mut four = [0u8; 4];
    // Where the data is, and the bytes that says in the file.
    let (reference, head) = if w.format == 1 {
        (None, 0)
    } else {
        let mut kind = [0u8; 1];
        take(&mut input, &mut kind)?;
        match kind[0] {
            0 => (None, 1),
            1 => {
                take(&mut input, &mut four)?;
                let len = u32::from_le_bytes(four);
                if len == 0 || len > MAX_DATA_PATH || u64::from(len) > rest {
                    return Err(damaged("a data file path of a length no file has"));
                }
                let mut name = vec![0u8; len as usize];
                take(&mut input, &mut name)?;
                let name = String::from_utf8(name)
                    .map_err(|_| damaged("a data file path that is not UTF-8"))?;
                take(&mut input, &mut word)?;
                let size = u64::from_le_bytes(word);
                take(&mut input, &mut word)?;
                let modified = u64::from_le_bytes(word);
                (
                    Some((PathBuf::from(name), size, modified)),
                    1 + 4 + u64::from(len) + 16,
                )
            }
            _ => return Err(damaged("data kept in a way this nandlab does not know")),
        }
    };
    take(&mut input, &mut word)?;
    let chunk_count = u64::from_le_bytes(word);
    take(&mut input, &mut word)?;
    let unreadable_count = u64::from_le_bytes(word);
    // Every length against the file before anything is allocated.
    let expected = chunk_count
        .checked_mul(8 + CHUNK as u64)
        .and_then(|c| unreadable_count.checked_mul(4)?.checked_add(c))
        .and_then(|n| n.checked_add(head + 16 + 4));
    if expected != Some(rest) {
        return Err(damaged(&format!(
            "its data section gives {chunk_count} chunks and {unreadable_count} unreadable units \
             in {rest} bytes"
        )));
    }
    if chunk_count > capacity_chunks || unreadable_count > w.units {
        return Err(damaged("it holds more data than its drive"));
    }
    if reference.is_some() && chunk_count > 0 {
        return Err(damaged("data both in a data file and in the file"));
    }
    let store = match (&reference, w.data) {
        (Some((kept, size, modified)), asked) => {
            if asked.is_some_and(|a| a != kept) {
                return Err(refused(
                    path,
                    &format!(
                        "keeps its data in {}: serve it with that --data, or without --data",
                        kept.display()
                    ),
                ));
            }
            if *size != w.size {
                return Err(damaged("its data file's size is not its drive's"));
            }
            let store = Store::file(kept, w.size, false)
                .map_err(|e| refused(path, &format!("its data file {}: {e}", kept.display())))?;
            let now = std::fs::metadata(kept)
                .map(|m| modified_ns(&m))
                .unwrap_or(0);
            if now != *modified {
                return Err(refused(
                    path,
                    &format!(
                        "its data file {} changed after the drive was saved (a server that did not \
                         stop cleanly, or another program): the two no longer match",
                        kept.display()
                    ),
                ));
            }
            store
        }
        (None, Some(asked)) => Store::file(asked, w.size, true)
            .map_err(|e| refused(path, &format!("--data {}: {e}", asked.display())))?,
        (None, None) => {
            if chunk_count.saturating_mul(CHUNK as u64) > w.store_limit {
                return Err(SimError::OutOfMemory {
                    needed: chunk_count * CHUNK as u64,
                    available: w.store_limit,
                });
            }
            Store::new(w.store_limit)
        }
    };
    let mut data = ServedData {
        store,
        unreadable: Vec::new(),
    };
    for _ in 0..unreadable_count {
        take(&mut input, &mut four)?;
        let unit = u32::from_le_bytes(four);
        if u64::from(unit) >= w.units {
            return Err(damaged("an unreadable unit beyond the drive"));
        }
        data.unreadable.push(unit);
    }
    let mut chunk = vec![0u8; CHUNK];
    let mut last: Option<u64> = None;
    for _ in 0..chunk_count {
        take(&mut input, &mut word)?;
        let index = u64::from_le_bytes(word);
        if index >= capacity_chunks || last.is_some_and(|l| index <= l) {
            return Err(damaged("a chunk beyond the drive or out of order"));
        }
        last = Some(index);
        take(&mut input, &mut chunk)?;
        data.store
            .write(index * CHUNK as u64, &chunk)
            .map_err(|e| match e {
                StoreError::Full => damaged("more chunks than it declared"),
                StoreError::Io(e) => failed(path, "cannot copy its data to the data file", e),
            })?;
    }
    let sum = crc.finalize();
    input
        .read_exact(&mut four)
        .map_err(|_| damaged("the file ends inside its data"))?;
    if u32::from_le_bytes(four) != sum {
        return Err(damaged("the checksum of its data does not match"));
    }
    Ok(data)
}
