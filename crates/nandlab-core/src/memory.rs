//! Memory: large zeroed arrays (the mapping tables) backed by transparent huge
//! pages where the OS offers them (far fewer page faults and TLB misses when a
//! run touches hundreds of megabytes of map, which matters most in virtual
//! machines), the check that a drive's state fits before a run starts, and
//! how such arrays go into a snapshot (as raw bytes).

use crate::config::ConfigError;

/// A zero-filled `Vec<u32>` of `n` entries whose pages the OS provides lazily,
/// as 2 MiB huge pages on Linux.
pub fn zeroed_u32(n: usize) -> Vec<u32> {
    let v = vec![0u32; n];
    advise_huge_pages(&v);
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(v: &[u32]) {
    const HUGE: usize = 2 << 20;
    let start = v.as_ptr() as usize;
    let end = start + std::mem::size_of_val(v);
    let aligned = start.next_multiple_of(HUGE);
    if end > aligned + HUGE {
        // SAFETY: the range lies inside `v`'s allocation; madvise only changes
        // how the kernel backs it (a hint: failure is harmless and ignored).
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                (end - aligned) / HUGE * HUGE,
                libc::MADV_HUGEPAGE,
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: &[u32]) {}

/// An address range of a large array, as plain numbers so that another
/// thread can ask the OS to back it without touching the array itself.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    addr: usize,
    len: usize,
}

impl Region {
    /// Entries `range` of `v`.
    pub fn of(v: &[u32], range: std::ops::Range<usize>) -> Region {
        let range = range.start.min(v.len())..range.end.min(v.len());
        Region {
            addr: v.as_ptr() as usize + range.start * 4,
            len: range.len() * 4,
        }
    }
}

/// Has the OS allocate (and zero) the memory of `regions` now, so that a
/// thread filling them does not pay for it; meant for a helper thread. On
/// Linux ≥ 5.14 (MADV_POPULATE_WRITE); elsewhere it does nothing.
pub fn populate(regions: &[Region]) {
    #[cfg(target_os = "linux")]
    for r in regions {
        const PAGE: usize = 4096;
        let start = r.addr.next_multiple_of(PAGE);
        let end = (r.addr + r.len) / PAGE * PAGE;
        // In 64 MiB steps, front to back, staying ahead of the filling thread.
        let mut a = start;
        while a < end {
            let len = (end - a).min(64 << 20);
            // SAFETY: the range lies inside a live allocation that outlives
            // this call (the caller joins this thread before freeing it);
            // populating pages changes no byte of their contents.
            let rc =
                unsafe { libc::madvise(a as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) };
            if rc != 0 {
                return;
            }
            a += len;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = regions;
}

/// Bytes of RAM a drive's state can take at most: the two mapping tables
/// (4 bytes per user unit, 4 per physical slot), per-block state, the
/// integrity oracle's stamps when on (4 + 1 per unit, 4 per slot), what
/// power cuts need when the config has them (the oracle's acknowledgements,
/// 24 per unit, and [`PowerModel::bytes`](crate::power::PowerModel::bytes)),
/// and a fixed allowance for histograms, buffers and trace replay.
pub fn state_bytes(g: &crate::geometry::Geometry, integrity: bool, power_loss: bool) -> u64 {
    const PER_BLOCK: u64 = 96;
    const FIXED: u64 = 64 << 20;
    let maps = 4 * g.user_units + 4 * g.slots;
    let oracle = if integrity {
        5 * g.user_units + 4 * g.slots
    } else {
        0
    };
    let power = if power_loss {
        let oracle = if integrity {
            0
        } else {
            5 * g.user_units + 4 * g.slots
        };
        oracle + 24 * g.user_units + crate::power::PowerModel::bytes(g)
    } else {
        0
    };
    maps + oracle + power + PER_BLOCK * g.blocks as u64 + FIXED
}

/// Bytes of RAM the OS can still give (`MemAvailable`), or the
/// `NANDLAB_MEMORY_LIMIT` environment variable where set and not empty;
/// None where neither is known. A limit that is not a size is an error
/// naming the variable.
pub fn available_bytes() -> Result<Option<u64>, ConfigError> {
    use std::env::VarError;
    match std::env::var("NANDLAB_MEMORY_LIMIT") {
        Ok(limit) if !limit.trim().is_empty() => memory_limit(&limit).map(Some),
        Err(VarError::NotUnicode(_)) => Err(limit_error("a value that is not text")),
        _ => Ok(mem_available()),
    }
}

/// `NANDLAB_MEMORY_LIMIT`'s value: bytes, or a size such as `512MiB`.
fn memory_limit(value: &str) -> Result<u64, ConfigError> {
    let value = value.trim();
    crate::units::parse_size(value)
        .map_err(|_| limit_error(&format!("\"{}\"", value.escape_debug())))
}

fn limit_error(found: &str) -> ConfigError {
    ConfigError::new(
        "NANDLAB_MEMORY_LIMIT",
        format!("expected a byte count or a size like \"512MiB\" or \"8GiB\", found {found}"),
    )
}

/// `MemAvailable` of `/proc/meminfo`, in bytes.
fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Peak resident memory of this process in MiB (Linux `VmHWM`), if known:
/// what the benchmarks report.
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Serde for large arrays of plain numbers (`#[serde(with = "crate::memory::flat")]`):
/// raw little-endian bytes, so that a snapshot writes and reads them at memory
/// speed; `u32` maps come back backed by huge pages, as `zeroed_u32` made them.
pub mod flat {
    use serde::de::{Error, Visitor};
    use serde::{Deserializer, Serializer};
    use std::marker::PhantomData;

    /// A number stored as its little-endian bytes.
    pub trait Plain: Copy {
        const SIZE: usize;
        fn from_le(bytes: &[u8]) -> Self;
        fn to_le(self, out: &mut Vec<u8>);
        /// `n` zeros, allocated as the engine allocates such arrays.
        fn zeros(n: usize) -> Vec<Self>;
    }

    impl Plain for u32 {
        const SIZE: usize = 4;
        fn from_le(b: &[u8]) -> u32 {
            u32::from_le_bytes(b.try_into().expect("chunks of SIZE"))
        }
        fn to_le(self, out: &mut Vec<u8>) {
            out.extend(self.to_le_bytes());
        }
        fn zeros(n: usize) -> Vec<u32> {
            super::zeroed_u32(n)
        }
    }

    impl Plain for u64 {
        const SIZE: usize = 8;
        fn from_le(b: &[u8]) -> u64 {
            u64::from_le_bytes(b.try_into().expect("chunks of SIZE"))
        }
        fn to_le(self, out: &mut Vec<u8>) {
            out.extend(self.to_le_bytes());
        }
        fn zeros(n: usize) -> Vec<u64> {
            vec![0; n]
        }
    }

    pub fn serialize<T: Plain, S: Serializer>(v: &[T], s: S) -> Result<S::Ok, S::Error> {
        if cfg!(target_endian = "little") {
            // SAFETY: `T` is u32 or u64 (no padding, every byte initialised);
            // the byte view covers exactly `v`'s memory and lives as long as it.
            let bytes = unsafe {
                std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v))
            };
            s.serialize_bytes(bytes)
        } else {
            let mut bytes = Vec::with_capacity(v.len() * T::SIZE);
            v.iter().for_each(|x| x.to_le(&mut bytes));
            s.serialize_bytes(&bytes)
        }
    }

    pub fn deserialize<'de, T: Plain, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        struct Bytes<T>(PhantomData<T>);
        impl<T: Plain> Visitor<'_> for Bytes<T> {
            type Value = Vec<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "an array of {}-byte numbers", T::SIZE)
            }
            fn visit_bytes<E: Error>(self, b: &[u8]) -> Result<Vec<T>, E> {
                if !b.len().is_multiple_of(T::SIZE) {
                    return Err(E::invalid_length(b.len(), &self));
                }
                let mut v = T::zeros(b.len() / T::SIZE);
                for (x, c) in v.iter_mut().zip(b.chunks_exact(T::SIZE)) {
                    *x = T::from_le(c);
                }
                Ok(v)
            }
        }
        d.deserialize_bytes(Bytes(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_limit_is_a_size_or_an_error_naming_the_variable() {
        assert_eq!(memory_limit("512MiB"), Ok(512 << 20));
        assert_eq!(memory_limit(" 1000000 "), Ok(1_000_000));
        for bad in ["garbage", "12 apples", "-1", "1e400", "nan"] {
            let e = memory_limit(bad).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("NANDLAB_MEMORY_LIMIT: expected a byte count or a size like \"512MiB\" or \"8GiB\", found \"{bad}\"")
            );
        }
    }
}
