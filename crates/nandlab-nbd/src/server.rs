//! The server: a unix or TCP listener, a thread per connection (two in
//! `realtime` timing: one reads and simulates commands, one holds each reply
//! until its simulated completion time has come on the wall clock), and one
//! engine — the simulator's served phase and the data store, behind a lock —
//! that every command goes through in the order it arrives.

use crate::conn::{self, ConnectionStats};
use crate::engine::Engine;
use crate::overhead::{ClientOverhead, Turnaround};
use crate::proto::{self, Export};
use crate::store::Store;
use nandlab_core::{PhaseResult, SimError, Simulator};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
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
    /// Connections open at once (more are closed at once).
    pub max_connections: usize,
    /// Realtime: how much sooner than its simulated completion a reply goes out.
    pub client_overhead: ClientOverhead,
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
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(p) = &self.socket {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Polls for new connections and for the stop flag this often.
const POLL: Duration = Duration::from_millis(5);
/// With `once`, the server stops when no client has been connected this long.
const ONCE_GRACE: Duration = Duration::from_secs(1);

impl Server {
    /// Binds the listener. A unix socket path that exists is taken over only
    /// if it is a socket nobody listens on.
    pub fn bind(listen: &Listen) -> io::Result<Server> {
        match listen {
            Listen::Unix(path) => {
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
                let shown = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
                Ok(Server {
                    listener: Listener::Unix(l),
                    uri: format!("nbd+unix:///?socket={}", shown.display()),
                    socket: Some(path.clone()),
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

    /// Serves the config's phase `index` of `sim` until `stop` is set (or,
    /// with `once`, the last client has gone), then ends the phase.
    pub fn run(
        &self,
        sim: &mut Simulator,
        index: usize,
        opts: &ServeOptions,
        stop: &AtomicBool,
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
        let served = sim.serve_begin(index)?;
        let shared = Shared {
            engine: Mutex::new(Engine {
                t0: served.start(),
                served,
                sim,
                store: Store::new(opts.store_limit),
                size: export.size,
                unit,
                timing: opts.timing,
                w0: Instant::now(),
                failure: None,
            }),
            replied: AtomicU64::new(0),
            open: Mutex::new(Vec::new()),
            open_count: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            turnaround: Turnaround::new(opts.client_overhead),
            failed: AtomicBool::new(false),
            stats: Mutex::new(Vec::new()),
            started: Instant::now(),
        };
        let mut accepted = 0u64;
        // With `once`: since when no client has been connected.
        let mut alone_since: Option<Instant> = None;
        std::thread::scope(|scope| {
            loop {
                if stop.load(Ordering::Relaxed) || shared.failed.load(Ordering::Relaxed) {
                    break;
                }
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
        let phase = e.sim.serve_end(e.served, end)?;
        let mut connections = shared.stats.into_inner().unwrap();
        connections.sort_by_key(|c| c.id);
        Ok(ServeOutcome {
            phase,
            connections,
            store_bytes,
            failure: e.failure,
            client_overhead_us,
        })
    }
}

/// What the connections share.
pub(crate) struct Shared<'a> {
    pub(crate) engine: Mutex<Engine<'a>>,
    /// Fast timing: the latest simulated completion replied so far.
    pub(crate) replied: AtomicU64,
    /// Each open connection's stream, to shut it down when the server stops.
    open: Mutex<Vec<(u64, Stream)>>,
    open_count: AtomicUsize,
    /// Set to stop the server (a signal, `once`).
    pub(crate) stop: AtomicBool,
    /// The clients' own share of their latencies (realtime timing).
    pub(crate) turnaround: Turnaround,
    /// Set when the simulation failed: the server stops.
    pub(crate) failed: AtomicBool,
    stats: Mutex<Vec<ConnectionStats>>,
    pub(crate) started: Instant,
}
