//! The data a served drive holds: a sparse store in memory, 4 KiB chunks
//! allocated as clients write them, so that what a client writes it reads
//! back and a range never written, trimmed or zeroed reads as zeroes. The
//! simulator models where data lives and how long it takes; this holds the
//! bytes.

use rustc_hash::FxHashMap;

/// The store's unit of allocation (bytes).
pub const CHUNK: usize = 4096;

/// The store is full (its memory budget is spent).
#[derive(Debug, PartialEq, Eq)]
pub struct Full;

pub struct Store {
    chunks: FxHashMap<u64, Box<[u8; CHUNK]>>,
    /// Chunks the store may hold at most.
    limit: usize,
}

impl Store {
    /// An empty store that holds at most `limit_bytes` of written data.
    pub fn new(limit_bytes: u64) -> Store {
        Store {
            chunks: FxHashMap::default(),
            limit: (limit_bytes / CHUNK as u64).min(usize::MAX as u64) as usize,
        }
    }

    /// Bytes of memory the written chunks take.
    pub fn bytes(&self) -> u64 {
        (self.chunks.len() * CHUNK) as u64
    }

    /// Every chunk written (its index and bytes), in ascending order.
    pub fn chunks(&self) -> Vec<(u64, &[u8])> {
        let mut all: Vec<(u64, &[u8])> = self.chunks.iter().map(|(&i, c)| (i, &c[..])).collect();
        all.sort_unstable_by_key(|&(i, _)| i);
        all
    }

    /// Fills `buf` with the bytes at `offset`.
    pub fn read(&self, offset: u64, buf: &mut [u8]) {
        let mut at = 0;
        while at < buf.len() {
            let pos = offset + at as u64;
            let (chunk, within) = (pos / CHUNK as u64, (pos % CHUNK as u64) as usize);
            let n = (CHUNK - within).min(buf.len() - at);
            match self.chunks.get(&chunk) {
                Some(c) => buf[at..at + n].copy_from_slice(&c[within..within + n]),
                None => buf[at..at + n].fill(0),
            }
            at += n;
        }
    }

    /// Writes `data` at `offset`; nothing is written if the store would pass
    /// its limit.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), Full> {
        let first = offset / CHUNK as u64;
        let last = (offset + data.len().max(1) as u64 - 1) / CHUNK as u64;
        let new = (first..=last)
            .filter(|c| !self.chunks.contains_key(c))
            .count();
        if self.chunks.len() + new > self.limit {
            return Err(Full);
        }
        let mut at = 0;
        while at < data.len() {
            let pos = offset + at as u64;
            let (chunk, within) = (pos / CHUNK as u64, (pos % CHUNK as u64) as usize);
            let n = (CHUNK - within).min(data.len() - at);
            let c = self
                .chunks
                .entry(chunk)
                .or_insert_with(|| Box::new([0; CHUNK]));
            c[within..within + n].copy_from_slice(&data[at..at + n]);
            at += n;
        }
        Ok(())
    }

    /// Zeroes `len` bytes at `offset` (whole chunks are dropped).
    pub fn zero(&mut self, offset: u64, len: u64) {
        let mut at = 0;
        while at < len {
            let pos = offset + at;
            let (chunk, within) = (pos / CHUNK as u64, (pos % CHUNK as u64) as usize);
            let n = ((CHUNK - within) as u64).min(len - at) as usize;
            if n == CHUNK {
                self.chunks.remove(&chunk);
            } else if let Some(c) = self.chunks.get_mut(&chunk) {
                c[within..within + n].fill(0);
            }
            at += n as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_and_the_rest_is_zero() {
        let mut s = Store::new(1 << 20);
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8 + 1).collect();
        s.write(1000, &data).unwrap();
        let mut back = vec![0xAA; 12_000];
        s.read(0, &mut back);
        assert!(back[..1000].iter().all(|&b| b == 0));
        assert_eq!(&back[1000..11_000], &data[..]);
        assert!(back[11_000..].iter().all(|&b| b == 0));
        assert_eq!(s.bytes(), 3 * 4096);
    }

    #[test]
    fn zeroing_drops_whole_chunks_and_clears_parts() {
        let mut s = Store::new(1 << 20);
        s.write(0, &[7; 3 * 4096]).unwrap();
        s.zero(100, 3 * 4096 - 200);
        assert_eq!(s.bytes(), 2 * 4096);
        let mut back = vec![0; 3 * 4096];
        s.read(0, &mut back);
        assert!(back[..100].iter().all(|&b| b == 7));
        assert!(back[100..3 * 4096 - 100].iter().all(|&b| b == 0));
        assert!(back[3 * 4096 - 100..].iter().all(|&b| b == 7));
    }

    #[test]
    fn a_full_store_refuses_the_write_whole() {
        let mut s = Store::new(2 * 4096);
        s.write(0, &[1; 4096]).unwrap();
        assert_eq!(s.write(8192, &[2; 8192]), Err(Full));
        // Overwriting what it holds needs no room.
        s.write(0, &[3; 4096]).unwrap();
        s.write(4096, &[4; 10]).unwrap();
        let mut back = [0; 4];
        s.read(8192, &mut back);
        assert_eq!(back, [0; 4]);
    }
}
