//! The server: a unix or TCP listener, a thread per connection (two in
//! `realtime` timing: one reads and simulates commands, one holds each reply
//! until its simulated completion time has come on the wall clock), and one
//! engine — the simulator's served phase and the data store, behind a lock —
//! that every command goes through in the order it arrives.

use crate::conn::{self, ConnectionStats};
use crate::crash::CrashLog;
use crate::engine::Engine;
use crate::overhead::{ClientOverhead, Turnaround};
use crate::proto::{self, Export};
use crate::saved::ServedData;
use nandlab_core::{PhaseResult, SimError, Simulator};
use serde::Serialize;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where the server listens.
#[derive(Debug, Clone)]
pub enum Listen {
    Unix(PathBuf),
    /// `host:port` (port 0: any free port).
    Tcp(String),
}

/// When a reply goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Once the command's simulated completion time has passed on the wall
    /// clock (the simulated clock runs with the wall clock): clients
    /// measure the simulated drive.
    Realtime,
    /// As soon as the command is simulated; the simulated clock moves on
    /// with the replies (a command arrives at the latest completion the
    /// server had replied with when it was read).
    Fast,
}

#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub timing: Timing,
    /// Stop once the first client has come and no client has been connected
    /// for a second since.
    pub once: bool,
    /// Bytes of written data the store may hold.
    pub store_limit: u64,
    /// Connections open at once, those still in their handshake included
    /// (more are closed at once).
    pub max_connections: usize,
    /// A connection with nothing in flight that sends no command this long
    /// is closed (None: never).
    pub idle_timeout: Option<Duration>,
    /// Realtime: how much sooner than its simulated completion a reply goes out.
    pub client_overhead: ClientOverhead,
    /// Power cuts at these times from the start of serving (wall clock in
    /// realtime timing, simulated in fast); the drive needs its power model.
    pub power_cut_at: Vec<Duration>,
}

/// What a power cut did, to the drive and to the served data.
#[derive(Debug, Clone, Serialize)]
pub struct CutReport {
    /// Simulated seconds from the start of serving.
    pub at_seconds: f64,
    /// When the drive was ready again (simulated seconds from the start of serving).
    pub ready_seconds: f64,
    pub acknowledged_lost_units: u64,
    pub unacknowledged_lost_units: u64,
    /// Units of the served data put back to an older version (or to zeroes).
    pub reverted_units: u64,
    /// Units whose surviving version the server no longer held (read as EIO).
    pub unknown_units: u64,
    /// Client connections the cut dropped.
    pub connections_dropped: u64,
}

/// What a served session produced.
pub struct ServeOutcome {
    pub phase: PhaseResult,
    pub connections: Vec<ConnectionStats>,
    /// Bytes the data store held at the end.
    pub store_bytes: u64,
    /// The simulation's error that stopped the server, if one did.
    pub failure: Option<String>,
    /// Realtime: what was taken off each reply at the end (µs).
    pub client_overhead_us: f64,
    pub power_cuts: Vec<CutReport>,
    /// What the drive holds at the end (for [`crate::saved::save`]).
    pub data: ServedData,
}

enum Listener {
    Unix(UnixListener),
    Tcp(TcpListener),
}

/// A client connection of either kind.
pub(crate) enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    pub(crate) fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tcp(s) => s.set_nonblocking(on),
        }
    }

    pub(crate) fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
        })
    }

    pub(crate) fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tcp(s) => s.set_read_timeout(t),
        }
    }

    pub(crate) fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_write_timeout(t),
            Stream::Tcp(s) => s.set_write_timeout(t),
        }
    }

    fn shutdown(&self) {
        let _ = match self {
            Stream::Unix(s) => s.shutdown(Shutdown::Both),
            Stream::Tcp(s) => s.shutdown(Shutdown::Both),
        };
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tcp(s) => s.as_raw_fd(),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.write(buf),
            Stream::Tcp(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A bound server, not yet serving.
pub struct Server {
    listener: Listener,
    uri: String,
    /// The unix socket's file, removed when the server goes.
    socket: Option<PathBuf>,
    /// A unix socket taking `cut` (a power cut now) and `stop`, a line each
    /// ([`Server::bind_control`]).
    control: Option<ControlSocket>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(p) = &self.socket {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Binds a non-blocking unix socket at `path`; a path that exists is taken
/// over only if it is a socket nobody listens on.
fn bind_unix(path: &PathBuf) -> io::Result<UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket", path.display()),
            ));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("a server already listens on {}", path.display()),
            ));
        }
        std::fs::remove_file(path)?;
    }
    let l = UnixListener::bind(path)?;
    l.set_nonblocking(true)?;
    Ok(l)
}

/// How long a control connection has to send its line.
const CONTROL_WAIT: Duration = Duration::from_secs(1);
/// Control connections open at once (past it the oldest is dropped).
const MAX_CONTROL: usize = 256;
/// Control connections accepted before those open are looked at again.
const ACCEPT_BURST: usize = 64;

/// A control connection whose line has not all come.
struct Pending {
    stream: UnixStream,
    line: Vec<u8>,
    until: Instant,
}

impl Pending {
    /// Reads what has come; whether the line is whole (a newline, 256
    /// bytes, or the end of the stream).
    fn read(&mut self) -> io::Result<bool> {
        let mut chunk = [0u8; 256];
        loop {
            let room = 256 - self.line.len();
            match (&self.stream).read(&mut chunk[..room]) {
                Ok(0) => return Ok(true),
                Ok(n) => {
                    self.line.extend_from_slice(&chunk[..n]);
                    if self.line.contains(&b'\n') || self.line.len() >= 256 {
                        return Ok(true);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads what has come if `readable`, and answers the line once it is
    /// whole (or its time is up); whether the connection is done with. One
    /// that closed without a word gets no answer.
    fn settle(&mut self, readable: bool, now: Instant, shared: &Shared) -> bool {
        let read = if readable { self.read() } else { Ok(false) };
        let line = match read {
            Ok(true) if self.line.is_empty() => return true,
            Ok(true) => Ok(self.text()),
            Ok(false) if now >= self.until => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no whole line within a second",
            )),
            Ok(false) => return false,
            Err(e) => Err(e),
        };
        if ControlSocket::answer(&self.stream, line, shared) == Control::Stop {
            shared.stop.store(true, Ordering::Relaxed);
        }
        true
    }

    /// The line, up to its newline.
    fn text(&self) -> String {
        let end = self
            .line
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(self.line.len());
        String::from_utf8_lossy(&self.line[..end]).into_owned()
    }
}
/// Polls for new connections and for the stop flag this often.
const POLL: Duration = Duration::from_millis(5);
/// With `once`, the server stops when no client has been connected this long.
const ONCE_GRACE: Duration = Duration::from_secs(1);

impl Server {
    /// Binds the listener. A unix socket path that exists is taken over only
    /// if it is a socket nobody listens on.
    /// Listens on a control socket at `path` too (before clients are told
    /// the server is ready; the drive needs its power model for `cut`).
    pub fn bind_control(&mut self, path: &Path) -> io::Result<()> {
        self.control = Some(ControlSocket::bind(&path.to_path_buf())?);
        Ok(())
    }

    pub fn bind(listen: &Listen) -> io::Result<Server> {
        match listen {
            Listen::Unix(path) => {
                let l = bind_unix(path)?;
                let shown = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
                Ok(Server {
                    listener: Listener::Unix(l),
                    uri: format!("nbd+unix:///?socket={}", shown.display()),
                    socket: Some(path.clone()),
                    control: None,
                })
            }
            Listen::Tcp(addr) => {
                let l = TcpListener::bind(addr)?;
                l.set_nonblocking(true)?;
                let a = l.local_addr()?;
                let host = match a.ip() {
                    std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                    ip => ip.to_string(),
                };
                Ok(Server {
                    listener: Listener::Tcp(l),
                    uri: format!("nbd://{host}:{}", a.port()),
                    socket: None,
                    control: None,
                })
            }
        }
    }

    /// The NBD URI clients connect to (`nbd+unix:///?socket=…` or `nbd://host:port`).
    pub fn uri(&self) -> &str {
        &self.uri
    }

    fn accept(&self) -> io::Result<Option<(Stream, String)>> {
        let got = match &self.listener {
            Listener::Unix(l) => l
                .accept()
                .map(|(s, _)| (Stream::Unix(s), "unix".to_string())),
            Listener::Tcp(l) => l.accept().map(|(s, a)| {
                let _ = s.set_nodelay(true);
                (Stream::Tcp(s), a.to_string())
            }),
        };
        match got {
            Ok((s, who)) => {
                s.set_nonblocking(false)?;
                Ok(Some((s, who)))
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Serves the config's phase `index` of `sim`, holding `data` (what an
    /// earlier session left, or [`ServedData::empty`]), until `stop` is set
    /// (or, with `once`, the last client has gone), then ends the phase.
    pub fn run(
        &self,
        sim: &mut Simulator,
        index: usize,
        opts: &ServeOptions,
        stop: &AtomicBool,
        data: ServedData,
    ) -> Result<ServeOutcome, SimError> {
        let g = &sim.config().geometry;
        let export = Export {
            size: g.user_capacity_bytes,
            flags: proto::FLAG_HAS_FLAGS
                | proto::FLAG_SEND_FLUSH
                | proto::FLAG_SEND_FUA
                | proto::FLAG_SEND_TRIM
                | proto::FLAG_SEND_WRITE_ZEROES
                | proto::FLAG_CAN_MULTI_CONN,
        };
        let unit = g.unit_size as u64;
        let cuts = !opts.power_cut_at.is_empty() || self.control.is_some();
        if cuts && !sim.drive().has_power_model() {
            return Err(SimError::Unsupported(
                "power cuts need the drive's power model from the start \
                 (Simulator::enable_power_model before anything is written)"
                    .into(),
            ));
        }
        let control = &self.control;
        let served = sim.serve_begin(index)?;
        let mut cuts_at: Vec<u64> = opts
            .power_cut_at
            .iter()
            .map(|d| served.start().saturating_add(d.as_nanos() as u64))
            .collect();
        cuts_at.sort_unstable();
        let first_cut = cuts_at.first().copied().unwrap_or(u64::MAX);
        let shared = Shared {
            engine: Mutex::new(Engine {
                t0: served.start(),
                served,
                sim,
                store: data.store,
                size: export.size,
                unit,
                timing: opts.timing,
                w0: Instant::now(),
                failure: None,
                crash: (cuts || !data.unreadable.is_empty()).then(|| {
                    let mut log =
                        CrashLog::new(unit, export.size / unit, crash_budget(opts.store_limit));
                    log.mark_lost(&data.unreadable);
                    log
                }),
                cuts_at: cuts_at.into(),
                cut_reports: Vec::new(),
            }),
            replied: AtomicU64::new(0),
            cut_at: AtomicU64::new(first_cut),
            backlog: AtomicUsize::new(0),
            idle_timeout: opts.idle_timeout,
            open: Mutex::new(Vec::new()),
            open_count: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            signal: stop,
            cuts: AtomicU64::new(0),
            turnaround: Turnaround::new(opts.client_overhead),
            failed: AtomicBool::new(false),
            stats: Mutex::new(Vec::new()),
            started: Instant::now(),
        };
        let mut accepted = 0u64;
        // With `once`: since when no client has been connected.
        let mut alone_since: Option<Instant> = None;
        std::thread::scope(|scope| {
            // The control socket has a thread of its own: a slow or silent
            // control client never delays a client's accept or a stop.
            if let Some(c) = &control {
                let shared = &shared;
                scope.spawn(move || c.serve(shared));
            }
            loop {
                if shared.stopping() {
                    break;
                }
                shared.cut_if_due(&mut shared.engine.lock().unwrap(), None);
                if opts.once && accepted > 0 && shared.open_count.load(Ordering::Acquire) == 0 {
                    // Clients such as fio probe the export on one connection, then open others.
                    let since = *alone_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= ONCE_GRACE {
                        break;
                    }
                } else {
                    alone_since = None;
                }
                match self.accept() {
                    Ok(Some((stream, client))) => {
                        if shared.open_count.load(Ordering::Acquire) >= opts.max_connections {
                            stream.shutdown();
                            continue;
                        }
                        accepted += 1;
                        let id = accepted;
                        let Ok(handle) = stream.try_clone() else {
                            continue;
                        };
                        shared.open.lock().unwrap().push((id, handle));
                        shared.open_count.fetch_add(1, Ordering::AcqRel);
                        let shared = &shared;
                        let timing = opts.timing;
                        scope.spawn(move || {
                            let stats = conn::serve(shared, stream, id, client, export, timing);
                            shared.open.lock().unwrap().retain(|(i, _)| *i != id);
                            shared.stats.lock().unwrap().push(stats);
                            shared.open_count.fetch_sub(1, Ordering::AcqRel);
                        });
                    }
                    Ok(None) => std::thread::sleep(POLL),
                    // A connection that failed before it was accepted.
                    Err(_) => std::thread::sleep(POLL),
                }
            }
            // Every connection ends (and the scope joins their threads).
            shared.stop.store(true, Ordering::Relaxed);
            for (_, s) in shared.open.lock().unwrap().iter() {
                s.shutdown();
            }
        });
        let client_overhead_us = shared.turnaround.get().as_nanos() as f64 / 1e3;
        let e = shared.engine.into_inner().unwrap();
        let end = match e.timing {
            Timing::Realtime => e.t0 + e.w0.elapsed().as_nanos() as u64,
            Timing::Fast => e.served.end(),
        };
        let store_bytes = e.store.bytes();
        let data = ServedData {
            unreadable: e.crash.as_ref().map_or_else(Vec::new, CrashLog::lost_units),
            store: e.store,
        };
        let power_cuts = e.cut_reports;
        let phase = e.sim.serve_end(e.served, end)?;
        let mut connections = shared.stats.into_inner().unwrap();
        connections.sort_by_key(|c| c.id);
        Ok(ServeOutcome {
            phase,
            connections,
            store_bytes,
            failure: e.failure,
            client_overhead_us,
            power_cuts,
            data,
        })
    }
}

/// What the connections share.
pub(crate) struct Shared<'a> {
    pub(crate) engine: Mutex<Engine<'a>>,
    /// The latest simulated completion replied so far: a power cut comes
    /// no earlier (what a client was told stays acknowledged).
    pub(crate) replied: AtomicU64,
    /// The simulated instant of the next power cut, planned or requested
    /// (`u64::MAX`: none): a realtime reply for a later completion never
    /// goes out (`Shared::may_acknowledge`).
    pub(crate) cut_at: AtomicU64,
    /// Bytes of replies not yet sent, all connections together.
    pub(crate) backlog: AtomicUsize,
    /// See [`ServeOptions::idle_timeout`].
    pub(crate) idle_timeout: Option<Duration>,
    /// Each open connection's stream, to shut it down when the server stops.
    open: Mutex<Vec<(u64, Stream)>>,
    open_count: AtomicUsize,
    /// Set to stop the server (a signal, `once`).
    pub(crate) stop: AtomicBool,
    /// The caller's stop flag (a signal), looked at between power cuts.
    pub(crate) signal: &'a AtomicBool,
    /// Power cuts so far: a connection opened before the last one has ended.
    pub(crate) cuts: AtomicU64,
    /// The clients' own share of their latencies (realtime timing).
    pub(crate) turnaround: Turnaround,
    /// Set when the simulation failed: the server stops.
    pub(crate) failed: AtomicBool,
    stats: Mutex<Vec<ConnectionStats>>,
    pub(crate) started: Instant,
}

/// The crash log's share of the memory the store may use (256 MiB at most:
/// the versions of the last 64 Ki units changed before a cut).
fn crash_budget(store_limit: u64) -> usize {
    (store_limit / 4).min(256 << 20) as usize
}

impl Shared<'_> {
    /// Cuts the power if a planned cut is due by `arrival` (a command's
    /// simulated arrival; None: now on the server's clock). Returns whether
    /// it did.
    pub(crate) fn cut_if_due(&self, e: &mut Engine, arrival: Option<u64>) -> bool {
        let now = arrival.unwrap_or_else(|| e.now());
        let mut cut = false;
        // A stop ends the cuts due too: there may be thousands.
        while let Some(&at) = e
            .cuts_at
            .front()
            .filter(|&&at| at <= now && !self.stopping())
        {
            e.cuts_at.pop_front();
            self.cut(e, at);
            cut = true;
        }
        cut
    }

    /// Cuts the power at simulated time `at` (or the last completion already
    /// replied, if later: what a client was told stays acknowledged), puts the
    /// store back, and ends every connection.
    pub(crate) fn cut(&self, e: &mut Engine, at: u64) -> Option<CutReport> {
        let t = at.max(self.replied.load(Ordering::SeqCst));
        let dropped = self.open_count.load(Ordering::Acquire) as u64;
        let report = match e.power_cut(t) {
            Ok((event, reverted)) => {
                let since = |s: f64| s - e.t0 as f64 / 1e9;
                let r = CutReport {
                    at_seconds: since(event.at_seconds),
                    ready_seconds: since(event.ready_seconds),
                    acknowledged_lost_units: event.acknowledged_lost_units,
                    unacknowledged_lost_units: event.unacknowledged_lost_units,
                    reverted_units: reverted.units,
                    unknown_units: reverted.unknown,
                    connections_dropped: dropped,
                };
                e.cut_reports.push(r.clone());
                Some(r)
            }
            Err(err) => {
                e.failure = Some(err.to_string());
                self.failed.store(true, Ordering::Relaxed);
                None
            }
        };
        self.cuts.fetch_add(1, Ordering::AcqRel);
        let next = e.cuts_at.front().copied().unwrap_or(u64::MAX);
        self.cut_at.store(next, Ordering::SeqCst);
        for (_, s) in self.open.lock().unwrap().iter() {
            s.shutdown();
        }
        report
    }
}

/// What a control command asked for.
#[derive(Debug, PartialEq, Eq)]
enum Control {
    Go,
    Stop,
}

/// The control socket: a line per connection, `cut` or `stop`; the answer is
/// a line of JSON (`cut`: what it did) or an error line.
struct ControlSocket {
    listener: UnixListener,
    path: PathBuf,
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl ControlSocket {
    fn bind(path: &PathBuf) -> io::Result<ControlSocket> {
        let listener = bind_unix(path)?;
        // A longer queue than std's 128: a loop connecting and closing must not
        // leave a `cut` unable to connect at all.
        // SAFETY: listen on the socket just bound (Linux takes a new backlog).
        unsafe { libc::listen(listener.as_raw_fd(), 4096) };
        Ok(ControlSocket {
            listener,
            path: path.clone(),
        })
    }

    /// Answers control connections until the server stops (a `stop` line
    /// sets the server's stop flag): one thread polls them all, so a silent
    /// one never delays another's `cut` or `stop`. A new connection's line
    /// is looked for as soon as it is accepted (a `cut` usually comes with
    /// it); each has `CONTROL_WAIT` to send it. Past `MAX_CONTROL` open at
    /// once, those with a whole line are answered and then the oldest is
    /// dropped: neither a flood of idle connections nor a loop connecting
    /// and closing locks out a `cut` or `stop`.
    fn serve(&self, shared: &Shared) {
        let mut open: std::collections::VecDeque<Pending> = std::collections::VecDeque::new();
        while !shared.stopping() {
            let mut accepted = 0;
            while accepted < ACCEPT_BURST {
                let Ok((s, _)) = self.listener.accept() else {
                    break;
                };
                accepted += 1;
                if s.set_nonblocking(true).is_err() {
                    continue;
                }
                let mut p = Pending {
                    stream: s,
                    line: Vec::new(),
                    until: Instant::now() + CONTROL_WAIT,
                };
                if p.settle(true, Instant::now(), shared) {
                    continue;
                }
                if open.len() >= MAX_CONTROL {
                    let now = Instant::now();
                    open.retain_mut(|q| !q.settle(true, now, shared));
                    if open.len() >= MAX_CONTROL {
                        open.pop_front();
                    }
                }
                open.push_back(p);
            }
            let mut fds: Vec<libc::pollfd> = std::iter::once(self.listener.as_raw_fd())
                .chain(open.iter().map(|p| p.stream.as_raw_fd()))
                .map(|fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            // More may be waiting to be accepted: look without sleeping.
            let wait = if accepted == ACCEPT_BURST { 0 } else { 50 };
            // SAFETY: poll on descriptors this thread holds open, for at most 50 ms.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, wait) };
            let now = Instant::now();
            let mut ready = fds[1..].iter().map(|fd| fd.revents != 0);
            open.retain_mut(|p| !p.settle(ready.next().unwrap_or(false), now, shared));
        }
    }

    /// Answers a control connection's line (or why there is none).
    fn answer(s: &UnixStream, read: io::Result<String>, shared: &Shared) -> Control {
        let line = read.as_deref().unwrap_or_default().to_string();
        let (reply, what) = match (read.as_ref().map(|_| ()), line.trim()) {
            (Ok(_), "cut") => {
                let mut e = shared.engine.lock().unwrap();
                // The cut's instant is fixed now: from here no reply for a
                // later completion leaves (a realtime reply may fall due
                // while the cut is worked out).
                let now = e.now();
                shared.cut_at.fetch_min(now, Ordering::SeqCst);
                let r = shared.cut(&mut e, now);
                let text = match r {
                    Some(r) => serde_json::to_string(&r).expect("plain numbers"),
                    None => format!("error: {}", e.failure.clone().unwrap_or_default()),
                };
                (text, Control::Go)
            }
            (Ok(_), "stop") => ("{\"stopping\": true}".to_string(), Control::Stop),
            (Ok(_), other) => (
                format!(
                    "error: expected cut or stop, found {:?}",
                    other.chars().take(40).collect::<String>()
                ),
                Control::Go,
            ),
            (Err(e), _) => (format!("error: {e}"), Control::Go),
        };
        // A short reply to a socket nothing was written to: it fits its buffer.
        let _ = s
            .set_nonblocking(false)
            .and_then(|()| s.set_write_timeout(Some(CONTROL_WAIT)))
            .and_then(|()| (&*s).write_all(format!("{reply}\n").as_bytes()));
        what
    }
}
