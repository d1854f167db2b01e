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
