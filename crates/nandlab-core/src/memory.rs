//! Memory: large zeroed arrays (the mapping tables) backed by transparent huge
//! pages where the OS offers them (far fewer page faults and TLB misses when a
//! run touches hundreds of megabytes of map, which matters most in virtual
//! machines), the check that a run's state fits before it starts, how such
//! arrays go into a snapshot (as raw bytes), and the hint that fetches an
//! entry of one into the CPU's cache ahead of its use.

use crate::config::{Arrival, Config, ConfigError, Interval, PhaseConfig};
use crate::geometry::Geometry;
use crate::host::trace::replay::{Remap, KEEP_RECORDS};
use crate::host::trace::TraceRecord;
use crate::stats::{JobSummary, Latency, Row, ROWS_PER_PHASE};
use std::mem::size_of;

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

/// Bytes of RAM a run of `cfg` can take at most: the drive's state
/// ([`drive_bytes`]), the largest phase's run state ([`phase_run_bytes`]: a
/// phase's is dropped when it ends) and the results every phase leaves
/// ([`phase_result_bytes`]), and the run's two latency histograms. Jobs,
/// queues, histograms, time-series rows and trace tables all scale with the
/// config: a config asking for more than the machine has is refused before
/// anything is allocated.
pub fn state_bytes(cfg: &Config, integrity: bool) -> u64 {
    state_bytes_of(cfg, integrity, cfg.has_power_loss())
}

/// [`state_bytes`] of a drive that keeps what power cuts need whatever its
/// phases say (a served drive with cuts from outside).
pub fn state_bytes_powered(cfg: &Config, integrity: bool) -> u64 {
    state_bytes_of(cfg, integrity, true)
}

fn state_bytes_of(cfg: &Config, integrity: bool, power_loss: bool) -> u64 {
    let g = &cfg.geometry;
    let user = g.user_capacity_bytes;
    let unit = g.unit_size as u64;
    let run = cfg
        .phases
        .iter()
        .map(|p| phase_run_bytes(p, user, unit))
        .max()
        .unwrap_or(0);
    let results = cfg.phases.iter().fold(0u64, |sum, p| {
        sum.saturating_add(phase_result_bytes(p, user))
    });
    drive_bytes(g, integrity, power_loss)
        .saturating_add(run)
        .saturating_add(results)
        .saturating_add(2 * histogram_bytes(3))
}

/// Bytes of a drive's state: the two mapping tables (4 bytes per user unit,
/// 4 per physical slot), per-block state, the integrity oracle's stamps when
/// on (4 + 1 per unit, 4 per slot), what power cuts need when the config has
/// them (the oracle's acknowledgements, 24 per unit, and
/// [`PowerModel::bytes`](crate::power::PowerModel::bytes)), each die's and
/// channel's queues and books on the timeline (with room to spare), and a
/// fixed allowance for buffers and the trace reader.
fn drive_bytes(g: &Geometry, integrity: bool, power_loss: bool) -> u64 {
    const PER_BLOCK: u64 = 96;
    const PER_DIE: u64 = 1024;
    const PER_CHANNEL: u64 = 256;
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
    maps + oracle
        + power
        + PER_BLOCK * g.blocks as u64
        + FIXED
        + PER_DIE * g.dies as u64
        + PER_CHANNEL * g.channels as u64
}

/// Heap bytes of one latency histogram of `sigfig` significant digits (the
/// phase summaries' take 3, about 264 KiB; the time series' 2, about 36 KiB).
fn histogram_bytes(sigfig: u8) -> u64 {
    Latency::new(sigfig).heap_bytes()
}

/// Bytes a job's run state takes besides its histograms: its generator,
/// stop condition and counters, with room to spare.
const JOB_BYTES: u64 = 1024;

/// Bytes of a phase's run state while it runs: its latency histograms (two
/// for the phase, two for the time series' current row), its queue (a heap
/// entry per request in flight), each `[[phase.job]]`'s (two histograms, a
/// generator, a queue slot per request in flight) and a trace replay's
/// tables (compaction's unit map up to the distinct-address budget; the
/// records a looping replay keeps).
fn phase_run_bytes(p: &PhaseConfig, user: u64, unit: u64) -> u64 {
    let queue = |p: &PhaseConfig| match p.arrival {
        Arrival::Closed { queue_depth } => queue_depth as u64,
        Arrival::Open { .. } => 0,
    };
    let histograms = 2 * histogram_bytes(3) + 2 * histogram_bytes(2);
    let per_job = 2 * histogram_bytes(3) + JOB_BYTES;
    let jobs = p
        .jobs
        .iter()
        .fold(0u64, |sum, j| sum.saturating_add(per_job + 16 * queue(j)));
    let trace = p.trace.as_ref().map_or(0, |t| {
        let compact = match t.remap {
            Remap::Compact => 32 * t.unique_bytes.unwrap_or(user).min(user) / unit,
            Remap::Modulo => 0,
        };
        let kept = if t.looping {
            (KEEP_RECORDS * size_of::<TraceRecord>()) as u64
        } else {
            0
        };
        compact + kept
    });
    histograms
        .saturating_add(8 * queue(p))
        .saturating_add(jobs)
        .saturating_add(trace)
}

/// Bytes of what a phase leaves once it has run: its time-series rows (as
/// many as its stop condition and interval give, where both are known
/// before the run; else about [`ROWS_PER_PHASE`]; [`ROW_COPIES`] each) and
/// its jobs' summaries.
fn phase_result_bytes(p: &PhaseConfig, user: u64) -> u64 {
    let rows = expected_rows(p, user).saturating_add(1);
    let jobs = p.jobs.iter().fold(0u64, |sum, j| {
        sum.saturating_add((size_of::<JobSummary>() + j.name.len()) as u64)
    });
    rows.saturating_mul(ROW_COPIES * size_of::<Row>() as u64)
        .saturating_add(jobs)
}

/// What a time-series row takes at the peak, in rows: the rows' vector
/// grows by doubling (its capacity up to twice its length) and is copied
/// into columns when the phase's results are handed over (a per-request
/// series of 3 M rows asked 1.2 GB for the vector alone where one row each
/// was counted).
const ROW_COPIES: u64 = 3;

/// Time-series rows of a phase: its stop condition over its interval, on
/// the interval's axis (requests bound the bytes by the largest request,
/// bytes bound the requests by the smallest); about [`ROWS_PER_PHASE`] when
/// the interval is a time and the phase does not stop after a duration (the
/// drive's speed decides), or it runs until the drive dies (a row per drive
/// write).
fn expected_rows(p: &PhaseConfig, user: u64) -> u64 {
    let smallest = p
        .block_sizes
        .iter()
        .map(|&(size, _)| size)
        .min()
        .unwrap_or(p.block_size)
        .max(1) as u64;
    let bytes = p
        .volume
        .map(|v| v.bytes(user))
        .or(p.requests.map(|r| r.saturating_mul(p.block_size as u64)));
    let requests = p
        .requests
        .or(p.volume.map(|v| v.bytes(user) / smallest + 1));
    let rows = match p.interval {
        Some(Interval::Requests(n)) => requests.map(|r| r / n),
        Some(Interval::Bytes(b)) => bytes.map(|x| x / b),
        Some(Interval::Time(t)) => p.duration_ns.map(|d| d / t),
        None => None,
    };
    rows.unwrap_or(ROWS_PER_PHASE)
}

/// Bytes of memory this process can still take: RAM the OS can still give
/// (`MemAvailable`), or the `NANDLAB_MEMORY_LIMIT` environment variable
/// where set and not empty — and no more than what is left under the
/// process's address-space limit (`ulimit -v`) and its cgroup's memory
/// limit, where either is set; None where nothing is known. A limit that is
/// not a size is an error naming the variable.
pub fn available_bytes() -> Result<Option<u64>, ConfigError> {
    use std::env::VarError;
    let ram = match std::env::var("NANDLAB_MEMORY_LIMIT") {
        Ok(limit) if !limit.trim().is_empty() => Some(memory_limit(&limit)?),
        Err(VarError::NotUnicode(_)) => return Err(limit_error("a value that is not text")),
        _ => mem_available(),
    };
    Ok([ram, address_space_left(), cgroup_left()]
        .into_iter()
        .flatten()
        .min())
}

/// What is left under `RLIMIT_AS` (the limit less this process's `VmSize`),
/// if one is set.
fn address_space_left() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = proc_kib(&status, "VmSize:")?;
    Some(limit.rlim_cur.saturating_sub(used))
}

/// What is left under this process's cgroup memory limit (v2 `memory.max`
/// less `memory.current`; v1 `memory.limit_in_bytes` less
/// `memory.usage_in_bytes`), if one is set.
fn cgroup_left() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read =
        |path: String| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let (limit, usage) = if controllers.is_empty() {
            let dir = format!("/sys/fs/cgroup{path}");
            (
                read(format!("{dir}/memory.max")),
                read(format!("{dir}/memory.current")),
            )
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = format!("/sys/fs/cgroup/memory{path}");
            (
                read(format!("{dir}/memory.limit_in_bytes")),
                read(format!("{dir}/memory.usage_in_bytes")),
            )
        } else {
            continue;
        };
        // "max" (v2) does not parse: no limit; v1 says so with a huge number.
        if let Some(limit) = limit.filter(|&l| l < 1 << 60) {
            return Some(limit.saturating_sub(usage.unwrap_or(0)));
        }
    }
    None
}

/// A `kB` figure of `/proc/self/status` or `/proc/meminfo`, in bytes.
fn proc_kib(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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
    proc_kib(
        &std::fs::read_to_string("/proc/meminfo").ok()?,
        "MemAvailable:",
    )
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
