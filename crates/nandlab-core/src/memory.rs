//! Large zeroed arrays (the mapping tables) backed by transparent huge pages
//! where the OS offers them: far fewer page faults and TLB misses when a run
//! touches hundreds of megabytes of map, which matters most in virtual machines.

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
