//! The data a served drive holds, so that what a client writes it reads
//! back and a range never written, trimmed or zeroed reads as zeroes. The
//! simulator models where data lives and how long it takes; this holds the
//! bytes, in one of two places:
//!
//! - memory (the default): a sparse map of 4 KiB chunks allocated as clients
//!   write them, up to a budget;
//! - a data file (`nandlab serve --data PATH`): a sparse file of the drive's
//!   size, read and written in place (`pread`/`pwrite`), zeroed ranges
//!   punched out as holes — so a drive can hold more data than the machine
//!   has memory, and the server's memory is the simulator's state alone. A
//!   plain sparse file rather than an embedded key-value store: the data is
//!   a flat array addressed by offset, which the kernel's page cache and the
//!   file system's extents already serve at memory speed, with no second
//!   copy, no compaction and a file any tool (`qemu-img`, `cmp`) can read.
//!   The file is locked (`flock`) while it is served.

use rustc_hash::FxHashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The store's unit of allocation in memory (bytes).
pub const CHUNK: usize = 4096;

/// Why the store did not take a write.
#[derive(Debug)]
pub enum StoreError {
    /// The store is full (its memory budget, or the data file's file system).
    Full,
    /// The data file failed otherwise.
    Io(io::Error),
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> StoreError {
        match e.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => StoreError::Full,
            _ => StoreError::Io(e),
        }
    }
}

enum Backing {
    Memory {
        chunks: FxHashMap<u64, Box<[u8; CHUNK]>>,
        /// Chunks the store may hold at most.
        limit: usize,
    },
    File {
        file: File,
        path: PathBuf,
    },
}

pub struct Store {
    backing: Backing,
}

/// Bytes zeroed by writing at a time where a hole cannot be punched.
const ZEROES: usize = 1 << 20;

nandlab_core::message_error! {
    /// Why a data file cannot hold a served drive's data (the caller names the file).
    pub struct Unusable;
}

impl Store {
    /// An empty store in memory that holds at most `limit_bytes` of written data.
    pub fn new(limit_bytes: u64) -> Store {
        Store {
            backing: Backing::Memory {
                chunks: FxHashMap::default(),
                limit: (limit_bytes / CHUNK as u64).min(usize::MAX as u64) as usize,
            },
        }
    }

    /// A store in the data file at `path` for a drive of `size` bytes:
    /// created (it must not exist: a file of the user's is never taken
    /// over) if `create`, else opened (it must be a regular file of `size`
    /// bytes). The file is locked for this server. The error says why not
    /// (the caller names the file).
    pub fn file(path: &Path, size: u64, create: bool) -> Result<Store, Unusable> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).custom_flags(libc::O_CLOEXEC);
        if create {
            options.create_new(true);
        }
        let file = options.open(path).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => {
                "exists; the data file of a new drive is created by the server (name a file \
                     that does not exist, or give the --snapshot that keeps this one)"
                    .into()
            }
            _ => format!("cannot open it: {e}"),
        })?;
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot read it: {e}"))?;
        if !meta.is_file() {
            return Err("not a regular file".into());
        }
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err("another nandlab server is using it".into());
        }
        if create {
            file.set_len(size).map_err(|e| {
                let _ = std::fs::remove_file(path);
                format!("cannot size it to {size} bytes: {e}")
            })?;
        } else if meta.len() != size {
            return Err(format!("holds {} bytes where the drive has {size}", meta.len()).into());
        }
        Ok(Store {
            backing: Backing::File {
                file,
                path: path.to_path_buf(),
            },
        })
    }

    /// The data file, if the store is one.
    pub fn data_file(&self) -> Option<&Path> {
        match &self.backing {
            Backing::File { path, .. } => Some(path),
            Backing::Memory { .. } => None,
        }
    }

    /// Bytes the written data takes (memory, or the data file's allocated blocks).
    pub fn bytes(&self) -> u64 {
        match &self.backing {
            Backing::Memory { chunks, .. } => (chunks.len() * CHUNK) as u64,
            Backing::File { file, .. } => file.metadata().map_or(0, |m| m.blocks() * 512),
        }
    }

    /// Every chunk written in memory (its index and bytes), in ascending
    /// order; none for a data file.
    pub fn chunks(&self) -> Vec<(u64, &[u8])> {
        match &self.backing {
            Backing::Memory { chunks, .. } => {
                let mut all: Vec<(u64, &[u8])> = chunks.iter().map(|(&i, c)| (i, &c[..])).collect();
                all.sort_unstable_by_key(|&(i, _)| i);
                all
            }
            Backing::File { .. } => Vec::new(),
        }
    }

    /// The data file's contents made durable (nothing in memory).
    pub fn sync(&self) -> io::Result<()> {
        match &self.backing {
            Backing::File { file, .. } => file.sync_all(),
            Backing::Memory { .. } => Ok(()),
        }
    }

    /// Fills `buf` with the bytes at `offset`.
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let chunks = match &self.backing {
            Backing::File { file, .. } => return file.read_exact_at(buf, offset),
            Backing::Memory { chunks, .. } => chunks,
        };
        let mut at = 0;
        while at < buf.len() {
            let pos = offset + at as u64;
            let (chunk, within) = (pos / CHUNK as u64, (pos % CHUNK as u64) as usize);
            let n = (CHUNK - within).min(buf.len() - at);
            match chunks.get(&chunk) {
                Some(c) => buf[at..at + n].copy_from_slice(&c[within..within + n]),
                None => buf[at..at + n].fill(0),
            }
            at += n;
        }
        Ok(())
    }

    /// Writes `data` at `offset`; in memory nothing is written if the store
    /// would pass its limit.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        let (chunks, limit) = match &mut self.backing {
            Backing::File { file, .. } => return Ok(file.write_all_at(data, offset)?),
            Backing::Memory { chunks, limit } => (chunks, *limit),
        };
        let first = offset / CHUNK as u64;
        let last = (offset + data.len().max(1) as u64 - 1) / CHUNK as u64;
        let new = (first..=last).filter(|c| !chunks.contains_key(c)).count();
        if chunks.len() + new > limit {
            return Err(StoreError::Full);
        }
        let mut at = 0;
        while at < data.len() {
            let pos = offset + at as u64;
            let (chunk, within) = (pos / CHUNK as u64, (pos % CHUNK as u64) as usize);
            let n = (CHUNK - within).min(data.len() - at);
            let c = chunks.entry(chunk).or_insert_with(|| Box::new([0; CHUNK]));
            c[within..within + n].copy_from_slice(&data[at..at + n]);
            at += n;
        }
        Ok(())
    }

    /// Zeroes `len` bytes at `offset` (whole chunks are dropped; a data
    /// file's whole 4 KiB blocks are punched out).
    pub fn zero(&mut self, offset: u64, len: u64) -> Result<(), StoreError> {
        match &mut self.backing {
            Backing::File { file, .. } => zero_file(file, offset, len),
            Backing::Memory { chunks, .. } => {
                let mut at = 0;
                while at < len {
                    let pos = offset + at;
                    let (chunk, within) = (pos / CHUNK as u64, (pos % CHUNK as u64) as usize);
                    let n = ((CHUNK - within) as u64).min(len - at) as usize;
                    if n == CHUNK {
                        chunks.remove(&chunk);
                    } else if let Some(c) = chunks.get_mut(&chunk) {
                        c[within..within + n].fill(0);
                    }
                    at += n as u64;
                }
                Ok(())
            }
        }
    }
}

/// Zeroes a range of a data file: its whole 4 KiB blocks punched out (a
/// hole reads as zeroes and takes no space), the rest — and everything
/// where the file system cannot punch holes — written with zeroes.
fn zero_file(file: &File, offset: u64, len: u64) -> Result<(), StoreError> {
    let end = offset + len;
    let (first, last) = (
        offset.next_multiple_of(CHUNK as u64),
        end / CHUNK as u64 * CHUNK as u64,
    );
    let punched = first < last && {
        // SAFETY: fallocate on a descriptor the store owns; offsets fit in i64
        // (the drive's size does).
        let r = unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                first as libc::off_t,
                (last - first) as libc::off_t,
            )
        };
        r == 0
    };
    let ranges = if punched {
        [(offset, first), (last, end)]
    } else {
        [(offset, end), (end, end)]
    };
    let zeroes = vec![0u8; ZEROES.min(len as usize)];
    for (mut at, to) in ranges {
        while at < to {
            let n = ((to - at) as usize).min(ZEROES);
            file.write_all_at(&zeroes[..n], at)?;
            at += n as u64;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stores(dir: &Path, size: u64) -> Vec<Store> {
        vec![
            Store::new(1 << 20),
            Store::file(&dir.join("data"), size, true).unwrap(),
        ]
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("nandlab-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn what_is_written_reads_back_and_the_rest_is_zero() {
        let dir = scratch("rw");
        for mut s in stores(&dir, 1 << 20) {
            let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8 + 1).collect();
            s.write(1000, &data).unwrap();
            let mut back = vec![0xAA; 12_000];
            s.read(0, &mut back).unwrap();
            assert!(back[..1000].iter().all(|&b| b == 0));
            assert_eq!(&back[1000..11_000], &data[..]);
            assert!(back[11_000..].iter().all(|&b| b == 0));
            assert!(s.bytes() >= 3 * 4096);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn zeroing_drops_whole_chunks_and_clears_parts() {
        let dir = scratch("zero");
        for mut s in stores(&dir, 1 << 20) {
            s.write(0, &[7; 3 * 4096]).unwrap();
            s.zero(100, 3 * 4096 - 200).unwrap();
            if s.data_file().is_none() {
                assert_eq!(s.bytes(), 2 * 4096);
            }
            let mut back = vec![0; 3 * 4096];
            s.read(0, &mut back).unwrap();
            assert!(back[..100].iter().all(|&b| b == 7));
            assert!(back[100..3 * 4096 - 100].iter().all(|&b| b == 0));
            assert!(back[3 * 4096 - 100..].iter().all(|&b| b == 7));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_full_store_refuses_the_write_whole() {
        let mut s = Store::new(2 * 4096);
        s.write(0, &[1; 4096]).unwrap();
        assert!(matches!(s.write(8192, &[2; 8192]), Err(StoreError::Full)));
        // Overwriting what it holds needs no room.
        s.write(0, &[3; 4096]).unwrap();
        s.write(4096, &[4; 10]).unwrap();
        let mut back = [0; 4];
        s.read(8192, &mut back).unwrap();
        assert_eq!(back, [0; 4]);
    }

    #[test]
    fn a_data_file_is_never_taken_over_and_served_once() {
        let dir = scratch("file");
        let path = dir.join("data");
        std::fs::write(&path, b"the user's").unwrap();
        let e = Store::file(&path, 4096, true).err().unwrap().0;
        assert!(e.contains("exists"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"the user's");
        let e = Store::file(&path, 4096, false).err().unwrap().0;
        assert!(e.contains("holds 10 bytes"), "{e}");
        std::fs::remove_file(&path).unwrap();
        let held = Store::file(&path, 1 << 30, true).unwrap();
        // Sparse: a 1 GiB drive's file takes no room until written.
        assert!(held.bytes() < 1 << 20);
        let e = Store::file(&path, 1 << 30, false).err().unwrap().0;
        assert!(e.contains("another nandlab server"), "{e}");
        drop(held);
        Store::file(&path, 1 << 30, false).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
