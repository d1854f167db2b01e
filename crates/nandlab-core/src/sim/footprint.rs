//! What a run takes and what the machine has: the most RAM a config's run
//! can take (the drive's state, its phases' run state and results), checked
//! against what this process can still get before anything is allocated,
//! and the process's peak resident memory the benchmarks report.

use crate::config::{Arrival, Config, ConfigError, Interval, PhaseConfig};
use crate::geometry::Geometry;
use crate::host::trace::replay::{Remap, KEEP_RECORDS};
use crate::host::trace::TraceRecord;
use crate::stats::{JobSummary, Latency, Row, ROWS_PER_PHASE};
use std::mem::size_of;

/// Bytes of RAM a run of `cfg` can take at most: the drive's state
/// (`drive_bytes`), the largest phase's run state (`phase_run_bytes`: a
/// phase's is dropped when it ends) and the results every phase leaves
/// (`phase_result_bytes`), and the run's two latency histograms. Jobs,
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
