//! Memory: large zeroed arrays (the mapping tables) backed by transparent huge
//! pages where the OS offers them (far fewer page faults and TLB misses when a
//! run touches hundreds of megabytes of map, which matters most in virtual
//! machines), how such arrays go into a snapshot (as raw bytes), and the hint
//! that fetches an entry of one into the CPU's cache ahead of its use. (Whether
//! a run's state fits before it starts is `sim::footprint`'s.)

/// Starts loading `items[i]` into the CPU's cache (nothing if `i` is out
/// of range, or off x86-64): for an entry a later step will read, on
/// tables far larger than the cache.
#[inline]
pub fn prefetch<T>(items: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(item) = items.get(i) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch only hints the cache (it cannot fault or change
        // memory); SSE, which it needs, is in every x86-64 CPU.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (items, i);
}

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
