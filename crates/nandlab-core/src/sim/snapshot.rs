//! Snapshots of a run: the whole simulator (drive, run totals, the phase
//! under way and its request loop) in one checked file, taken at the request
//! loops' sync points, so that a run resumed from one ends bit-identical to
//! a run that never stopped.
//!
//! The file: `MAGIC` (16 bytes), the format version (u32 LE), the nandlab
//! version (u32 LE length, then UTF-8), the body's length (u64 LE) and
//! CRC-32 (u32 LE), then the body (postcard). A snapshot is written next to
//! its path and renamed over it once complete: a run killed while writing
//! one leaves the previous snapshot whole.

use super::footprint;
use super::{PhaseRun, Simulator};
use crate::config::{Config, ConfigError};
use crate::drive::Drive;
use crate::stats::power_loss::PowerLossEvent;
use crate::stats::{Counters, Latency, Traffic};
use crate::units::BadValue;
use crate::{Death, SimError};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The first bytes of every snapshot.
pub const MAGIC: &[u8; 16] = b"nandlab-snapshot";
/// Bumped whenever the body's layout changes.
pub const FORMAT: u32 = 22;
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The longest version string a header may give.
const MAX_VERSION_LEN: u32 = 64;

/// How often a run writes a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Every {
    /// Every so many simulated nanoseconds.
    SimNs(u64),
    /// Every so many bytes the host moved (read and written).
    HostBytes(u64),
}

impl Every {
    /// Where a run at simulated time `t` with counters `c` is on this axis.
    pub fn position(self, t: u64, c: &Counters) -> u64 {
        match self {
            Every::SimNs(_) => t,
            Every::HostBytes(_) => c.host_write_bytes + c.host_read_bytes,
        }
    }

    /// Parses "10s", "500ms", "1h" (simulated time) or "50GiB", "1TB" (bytes
    /// the host moved); the error says what was expected.
    pub fn parse(s: &str) -> Result<Every, BadValue> {
        // A time or a size past what the clock or a drive holds says so (not that it is neither).
        let beyond = |m: &BadValue| m.0.contains("at most");
        let every = match crate::units::parse_duration_ns(s) {
            Ok(ns) => Every::SimNs(ns),
            Err(time) => match crate::units::parse_size(s) {
                Ok(bytes) => Every::HostBytes(bytes),
                Err(size) if beyond(&size) => return Err(size),
                Err(_) if beyond(&time) => return Err(time),
                Err(_) => {
                    return Err(format!(
                        "expected simulated time like \"10s\" or \"5min\" (at most 146 years), or bytes \
                         moved like \"50GiB\" (at most 4 EiB), found \"{s}\""
                    ).into())
                }
            },
        };
        if matches!(every, Every::SimNs(0) | Every::HostBytes(0)) {
            return Err(format!("expected more than zero, found \"{s}\"").into());
        }
        Ok(every)
    }

    /// The first multiple of the step past `at`: where the next snapshot is due.
    pub(super) fn next_after(self, at: u64) -> u64 {
        let step = match self {
            Every::SimNs(n) | Every::HostBytes(n) => n.max(1),
        };
        (at / step).saturating_add(1).saturating_mul(step)
    }
}

/// A config as the user gave it: a resumed run reads it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigText {
    pub text: String,
    /// JSON (else TOML).
    pub json: bool,
    /// Where it came from, for error messages.
    pub source: String,
    /// The seed the run was given, over the config's own.
    pub seed: Option<u64>,
}

impl ConfigText {
    pub fn parse(&self) -> Result<Config, ConfigError> {
        let mut cfg = if self.json {
            Config::from_json(&self.text)?
        } else {
            Config::from_toml(&self.text, &self.source)?
        };
        if let Some(seed) = self.seed {
            cfg.seed = seed;
        }
        Ok(cfg)
    }
}

/// Where and how often a run writes snapshots.
#[derive(Debug, Clone)]
pub struct SnapshotPlan {
    pub path: PathBuf,
    /// None: only when interrupted.
    pub every: Option<Every>,
    /// The simulator's config, as text.
    pub config: ConfigText,
    /// Whatever the caller needs to go on (results of finished phases, output
    /// options): stored as is, handed back on resume.
    pub extra: String,
}

/// A value written from a borrow and read back owned: one layout for both.
enum Held<'a, T> {
    Lent(&'a T),
    Owned(T),
}

impl<T> Held<'_, T> {
    fn owned(self) -> T {
        match self {
            Held::Owned(t) => t,
            Held::Lent(_) => unreachable!("a snapshot read back owns its values"),
        }
    }
}

impl<T: Serialize> Serialize for Held<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Held::Lent(t) => t.serialize(s),
            Held::Owned(t) => t.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Held<'_, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Held::Owned)
    }
}

/// The body of a snapshot.
#[derive(Serialize, Deserialize)]
struct Body<'a> {
    config: Held<'a, ConfigText>,
    extra: Held<'a, String>,
    every: Option<Every>,
    next_snapshot: u64,
    drive: Held<'a, Drive>,
    now: u64,
    run_reads: Held<'a, Latency>,
    run_writes: Held<'a, Latency>,
    run_wall: f64,
    timed: Traffic,
    phases_run: u64,
    death: Held<'a, Option<Death>>,
    last_issue: u64,
    power_losses: Held<'a, Vec<PowerLossEvent>>,
    phase: Option<Held<'a, PhaseRun>>,
}

/// Counts and checksums what goes through it.
struct Summing<W> {
    inner: W,
    crc: crc32fast::Hasher,
    len: u64,
}

impl<W: Write> Write for Summing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.crc.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn failed(path: &Path, what: &str, e: impl std::fmt::Display) -> SimError {
    SimError::Snapshot(format!("{}: {what}: {e}", path.display()))
}

impl Simulator {
    /// Writes snapshots as `plan` says, from the next phase on (or, after a
    /// resume, again to where it was resumed from).
    pub fn snapshot_to(&mut self, plan: SnapshotPlan) {
        if let Some(every) = plan.every {
            let at = every.position(self.now, &self.drive.counters());
            self.next_snapshot = every.next_after(at);
        }
        self.snapshots = Some(plan);
    }

    /// What a snapshot keeps for the caller (see [`SnapshotPlan::extra`]).
    pub fn set_snapshot_extra(&mut self, extra: String) {
        if let Some(plan) = &mut self.snapshots {
            plan.extra = extra;
        }
    }

    /// The snapshot plan, if any (after a resume: the one the run had).
    pub fn snapshot_plan(&self) -> Option<&SnapshotPlan> {
        self.snapshots.as_ref()
    }

    /// Setting this (from any thread, a signal handler's flag) stops the run
    /// at its next sync point: with a snapshot if the run takes them
    /// ([`SimError::Interrupted`]), else [`SimError::Aborted`].
    pub fn interrupt_handle(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    /// The config phase a snapshot paused, which the next `run_phase` must go on with.
    pub fn paused_phase(&self) -> Option<usize> {
        self.pending.as_ref().and_then(|run| run.index)
    }

    /// A CRC-32 of the drive's whole state as a snapshot stores it: two runs
    /// that agree on it left their drives in the same state.
    pub fn state_fingerprint(&self) -> u32 {
        let mut summing = Summing {
            inner: std::io::sink(),
            crc: crc32fast::Hasher::new(),
            len: 0,
        };
        postcard::to_io(&self.drive, &mut summing).expect("a sink takes every byte");
        summing.crc.finalize()
    }

    /// Writes the snapshot of the run paused in `run`; returns its path.
    pub(super) fn save_snapshot(&mut self, run: &PhaseRun) -> Result<PathBuf, SimError> {
        let plan = self.snapshots.as_ref().expect("paused only with a plan");
        let body = self.body(&plan.config, &plan.extra, plan.every, Some(run));
        let path = plan.path.clone();
        write_file(&path, &body)?;
        Ok(path)
    }

    /// A simulator as a snapshot left it: the next `run_phase` goes on with
    /// the phase it paused (see [`Simulator::paused_phase`]), and it writes
    /// snapshots on the same plan, to `path`. The file's header is checked
    /// (and its declared length against the file) before anything large is
    /// allocated, its checksum before anything is decoded, and the state
    /// read back before it is used.
    pub fn resume(path: &Path) -> Result<Simulator, SimError> {
        let mut file = open_file(path)?;
        let Loaded {
            mut sim,
            every,
            config,
            extra,
        } = read_state(&mut file, path, Fit::Whole)?;
        sim.snapshots = Some(SnapshotPlan {
            path: path.to_owned(),
            every,
            config,
            extra,
        });
        Ok(sim)
    }

    /// Writes the state of a simulator between phases into `file` at its
    /// position, in a snapshot's layout (header and body), and leaves the
    /// file positioned after it: for a file that holds more than the
    /// simulator (a served drive's data). Read back with
    /// [`Simulator::read_embedded`].
    pub fn write_embedded(
        &self,
        file: &mut File,
        config: &ConfigText,
        extra: &str,
    ) -> Result<(), SimError> {
        if self.pending.is_some() {
            return Err(SimError::Unsupported(
                "a phase is paused: its snapshot is written by the run".into(),
            ));
        }
        let extra = extra.to_string();
        let body = self.body(config, &extra, None, None);
        write_into(file, &body)
            .map_err(|e| SimError::Snapshot(format!("cannot write the drive's state: {e}")))
    }

    /// A simulator written by [`Simulator::write_embedded`], read from
    /// `file` at its position (`path` names it in errors), with the config
    /// and the caller's text it was written with; the file is left
    /// positioned after it. It writes no snapshots of its own.
    pub fn read_embedded(
        file: &mut File,
        path: &Path,
    ) -> Result<(Simulator, ConfigText, String), SimError> {
        let Loaded {
            sim, config, extra, ..
        } = read_state(file, path, Fit::Within)?;
        Ok((sim, config, extra))
    }

    fn body<'a>(
        &'a self,
        config: &'a ConfigText,
        extra: &'a String,
        every: Option<Every>,
        phase: Option<&'a PhaseRun>,
    ) -> Body<'a> {
        Body {
            config: Held::Lent(config),
            extra: Held::Lent(extra),
            every,
            next_snapshot: self.next_snapshot,
            drive: Held::Lent(&self.drive),
            now: self.now,
            run_reads: Held::Lent(&self.run_reads),
            run_writes: Held::Lent(&self.run_writes),
            run_wall: self.run_wall,
            timed: self.timed,
            phases_run: self.phases_run,
            death: Held::Lent(&self.death),
            last_issue: self.last_issue,
            power_losses: Held::Lent(&self.power_losses),
            phase: phase.map(Held::Lent),
        }
    }
}

/// Whether a snapshot's state fills the rest of its file (a snapshot file)
/// or is followed by more (a served drive's file).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fit {
    Whole,
    Within,
}

/// What a snapshot's state gives back: the simulator (writing no snapshots
/// yet) and its snapshot plan's parts.
struct Loaded {
    sim: Simulator,
    every: Option<Every>,
    config: ConfigText,
    extra: String,
}

/// The simulator whose snapshot `file` holds at its position.
fn read_state(file: &mut File, path: &Path, fit: Fit) -> Result<Loaded, SimError> {
    let header = read_header(file, path, fit)?;
    // The body is in memory until the state is built from it.
    if let Some(available) = footprint::available_bytes()? {
        if header.body_len > available {
            return Err(SimError::OutOfMemory {
                needed: header.body_len,
                available,
            });
        }
    }
    let bytes = read_body(path, file, header.body_len)?;
    if crc32fast::hash(&bytes) != header.crc {
        return Err(refused(
            path,
            "damaged: its checksum does not match its contents",
        ));
    }
    let body = &bytes[..];
    let unreadable = |e| {
        failed(
            path,
            "its state cannot be decoded (it was altered, or written by another build of nandlab)",
            e,
        )
    };
    // The config comes first: the memory check before the state is read.
    let (config, _): (ConfigText, _) = postcard::take_from_bytes(body).map_err(unreadable)?;
    let cfg = config
        .parse()
        .map_err(|e| failed(path, "the snapshot's config no longer loads", e))?;
    let integrity = cfg.checks.integrity || super::integrity_from_env();
    // The file is in memory too until the state is built from it.
    let needed = footprint::state_bytes(&cfg, integrity) + bytes.len() as u64;
    if let Some(available) = footprint::available_bytes()? {
        if needed > available {
            return Err(SimError::OutOfMemory { needed, available });
        }
    }
    let body: Body = postcard::from_bytes(body).map_err(unreadable)?;
    let broken = |why: crate::sanity::Broken| {
        refused(
            path,
            &format!("the snapshot's state does not hold together ({why}): it was altered or written by a bug"),
        )
    };
    let Held::Owned(drive) = &body.drive else {
        unreachable!("a snapshot read back owns its values")
    };
    // A served drive may have the power model without the config asking for power loss.
    if cfg.has_power_loss() && !drive.has_power_model() {
        return Err(broken(
            "its power-loss bookkeeping differs from its config's".into(),
        ));
    }
    drive.check_loaded(&cfg).map_err(broken)?;
    if !body.timed.within(&drive.counters()) {
        return Err(broken(
            "its timed phases moved more than the drive did".into(),
        ));
    }
    let phase = body.phase.map(Held::owned);
    if let Some(run) = &phase {
        run.check_loaded(&cfg, drive.counters(), body.now)
            .map_err(broken)?;
    }
    let sim = Simulator {
        snapshots: None,
        next_snapshot: body.next_snapshot,
        last_report: std::time::Instant::now(),
        drive: body.drive.owned(),
        cfg,
        now: body.now,
        run_reads: body.run_reads.owned(),
        run_writes: body.run_writes.owned(),
        run_wall: body.run_wall,
        timed: body.timed,
        phases_run: body.phases_run,
        death: body.death.owned(),
        last_issue: body.last_issue,
        power_losses: body.power_losses.owned(),
        pending: phase,
        interrupt: Arc::new(AtomicBool::new(false)),
        layouts: true,
    };
    Ok(Loaded {
        sim,
        every: body.every,
        config: body.config.owned(),
        extra: body.extra.owned(),
    })
}

/// A snapshot's file: written beside `path`, renamed over it once on disk.
fn write_file(path: &Path, body: &Body) -> Result<(), SimError> {
    let (mut file, partial) =
        create_partial(path).map_err(|e| failed(path, "cannot write the snapshot", e))?;
    let mut write = || -> std::io::Result<()> {
        write_into(&mut file, body)?;
        file.sync_all()?;
        std::fs::rename(&partial, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        failed(path, "cannot write the snapshot", e)
    })
}

/// The header, then the body through a checksum, then the body's length and
/// checksum into the header; from the file's position, which is left after
/// the body.
fn write_into(file: &mut File, body: &Body) -> std::io::Result<()> {
    let start = file.stream_position()?;
    let mut header = MAGIC.to_vec();
    header.extend(FORMAT.to_le_bytes());
    header.extend((VERSION.len() as u32).to_le_bytes());
    header.extend(VERSION.as_bytes());
    let sums_at = start + header.len() as u64;
    header.extend([0; 12]);
    file.write_all(&header)?;
    // Buffered before the checksum: it sums megabytes at a time, not
    // each of postcard's few-byte writes.
    let mut out = BufWriter::with_capacity(
        1 << 20,
        Summing {
            inner: &mut *file,
            crc: crc32fast::Hasher::new(),
            len: 0,
        },
    );
    postcard::to_io(body, &mut out).map_err(std::io::Error::other)?;
    let Summing { crc, len, .. } = out.into_inner().map_err(|e| e.into_error())?;
    file.seek(SeekFrom::Start(sums_at))?;
    file.write_all(&len.to_le_bytes())?;
    file.write_all(&crc.finalize().to_le_bytes())?;
    file.seek(SeekFrom::End(0))?;
    Ok(())
}

/// What a snapshot's header says.
struct Header {
    body_len: u64,
    crc: u32,
}

fn refused(path: &Path, why: &str) -> SimError {
    SimError::Snapshot(format!("{}: {why}", path.display()))
}

/// A snapshot file opened for reading: a regular file.
pub fn open_file(path: &Path) -> Result<File, SimError> {
    let file = File::open(path).map_err(|e| failed(path, "cannot read the snapshot", e))?;
    let meta = file
        .metadata()
        .map_err(|e| failed(path, "cannot read the snapshot", e))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(refused(path, &format!("{what}, not a nandlab snapshot")));
    }
    Ok(file)
}

/// Opens a snapshot file and reads its header: the file is positioned at
/// the body.
fn open_snapshot(path: &Path) -> Result<(File, Header), SimError> {
    let mut file = open_file(path)?;
    let header = read_header(&mut file, path, Fit::Whole)?;
    Ok((file, header))
}

/// Reads a snapshot's header at the file's position (in bounded reads),
/// which is left at the body: a body whose declared length is the rest of
/// the file (`Fit::Whole`) or fits in it (`Fit::Within`).
fn read_header(file: &mut File, path: &Path, fit: Fit) -> Result<Header, SimError> {
    let rest = file
        .stream_position()
        .and_then(|at| file.metadata().map(|m| m.len().saturating_sub(at)))
        .map_err(|e| failed(path, "cannot read the snapshot", e))?;
    let mut take = |n: usize| -> Option<Vec<u8>> {
        let mut piece = vec![0; n];
        file.read_exact(&mut piece).ok().map(|_| piece)
    };
    if take(MAGIC.len()).as_deref() != Some(&MAGIC[..]) {
        return Err(refused(path, "not a nandlab snapshot"));
    }
    let damaged = || refused(path, "damaged: the file ends inside its header");
    let u32_of = |b: Vec<u8>| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let format = take(4).map(u32_of).ok_or_else(damaged)?;
    if format != FORMAT {
        return Err(refused(
            path,
            &format!(
                "a snapshot of format {format}; this nandlab ({VERSION}) reads format {FORMAT}"
            ),
        ));
    }
    let len = take(4).map(u32_of).ok_or_else(damaged)?;
    if len > MAX_VERSION_LEN {
        return Err(refused(
            path,
            &format!("damaged: its header gives a version string of {len} bytes"),
        ));
    }
    let version = take(len as usize).ok_or_else(damaged)?;
    if version != VERSION.as_bytes() {
        // Shown only if it looks like a version: never raw bytes from a file.
        let shown = std::str::from_utf8(&version)
            .ok()
            .filter(|v| {
                !v.is_empty()
                    && v.chars()
                        .all(|c| c.is_ascii_alphanumeric() || ".-+".contains(c))
            })
            .map_or("another version".to_string(), |v| v.to_string());
        return Err(refused(
            path,
            &format!(
                "written by nandlab {shown}; this is nandlab {VERSION}: resume it with the version \
                 that wrote it"
            ),
        ));
    }
    let body_len = take(8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
        .ok_or_else(damaged)?;
    let crc = take(4).map(u32_of).ok_or_else(damaged)?;
    let header_len = (MAGIC.len() + 4 + 4 + version.len() + 12) as u64;
    let body_in_file = rest.saturating_sub(header_len);
    let fits = match fit {
        Fit::Whole => body_in_file == body_len,
        Fit::Within => body_len <= body_in_file,
    };
    if !fits {
        return Err(refused(
            path,
            &format!(
                "damaged: {body_in_file} bytes of snapshot state where its header says {body_len} \
                 (a truncated or padded file)"
            ),
        ));
    }
    Ok(Header { body_len, crc })
}

/// The `len` bytes of a snapshot's body, from `file` positioned at it.
fn read_body(path: &Path, file: &mut File, len: u64) -> Result<Vec<u8>, SimError> {
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(len as usize)
        .map_err(|e| failed(path, "cannot read the snapshot", e))?;
    file.take(len)
        .read_to_end(&mut bytes)
        .map_err(|e| failed(path, "cannot read the snapshot", e))?;
    if bytes.len() as u64 != len {
        return Err(refused(path, "damaged: the file changed while it was read"));
    }
    Ok(bytes)
}

/// A new file beside `path` that a whole file is written to before it is
/// renamed over `path`: `PATH.PID-N.partial`, created (never one that is
/// there: a file of the user's named `PATH.partial` is left alone).
pub fn create_partial(path: &Path) -> std::io::Result<(File, PathBuf)> {
    let mut n = 0u32;
    loop {
        let partial = PathBuf::from(format!(
            "{}.{}-{n}.partial",
            path.display(),
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)
        {
            Ok(file) => return Ok((file, partial)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Whether a run of `config` may write snapshots to `path`: nothing is
/// there (and one can be created), or a snapshot of the same run is (same
/// config text and seed: a run started again). A file that is not a
/// snapshot is never overwritten (a typo must not destroy a user's file);
/// a snapshot of another run, or one this build cannot read, only with
/// `force`.
pub fn writable(path: &Path, config: &ConfigText, force: bool) -> Result<(), SimError> {
    match std::fs::metadata(path) {
        // A first snapshot: check now that one can be written there.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return create_partial(path)
                .and_then(|(_, partial)| std::fs::remove_file(&partial))
                .map_err(|e| failed(path, "cannot write a snapshot there", e));
        }
        Err(e) => return Err(failed(path, "cannot check the snapshot path", e)),
        Ok(meta) if !meta.is_file() => {
            return Err(refused(
                path,
                "exists and is not a snapshot file; refusing to write there",
            ))
        }
        Ok(_) => {}
    }
    let mut head = Vec::with_capacity(MAGIC.len());
    File::open(path)
        .and_then(|f| f.take(MAGIC.len() as u64).read_to_end(&mut head))
        .map_err(|e| failed(path, "cannot check the snapshot path", e))?;
    if head != MAGIC {
        return Err(refused(
            path,
            "exists and is not a nandlab snapshot; refusing to overwrite it",
        ));
    }
    if force {
        return Ok(());
    }
    let theirs = match snapshot_config(path) {
        Ok(theirs) => theirs,
        Err(e) => {
            return Err(SimError::Snapshot(format!(
                "{e}; refusing to overwrite it (remove it, or force the overwrite)"
            )))
        }
    };
    let same =
        theirs.text == config.text && theirs.json == config.json && theirs.seed == config.seed;
    if same {
        Ok(())
    } else {
        Err(refused(
            path,
            &format!(
                "holds the snapshot of another run (of {}{}); refusing to overwrite it (remove \
                 it, or force the overwrite)",
                sanitized(&theirs.source),
                theirs.seed.map_or(String::new(), |s| format!(", seed {s}"))
            ),
        ))
    }
}

/// The config of the run a snapshot holds, read from the start of its body
/// (not checksummed: enough to tell whose snapshot it is).
fn snapshot_config(path: &Path) -> Result<ConfigText, SimError> {
    let (mut file, header) = open_snapshot(path)?;
    let prefix = read_body(path, &mut file, header.body_len.min(CONFIG_PREFIX))?;
    postcard::take_from_bytes::<ConfigText>(&prefix)
        .map(|(config, _)| config)
        .map_err(|_| refused(path, "a snapshot whose config cannot be read"))
}

/// At most this much of a body is read to find its config (a config is
/// refused beyond 64 MiB).
const CONFIG_PREFIX: u64 = 65 << 20;

/// `text` with anything but printable characters replaced: file contents
/// never reach a terminal raw.
fn sanitized(text: &str) -> String {
    text.chars()
        .take(200)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}
