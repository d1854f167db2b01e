//! One client connection: the handshake, then a single thread that reads
//! commands as they come (non-blocking), runs each through the engine and
//! sends each reply when it is due — at once in `fast` timing; in `realtime`
//! timing at the command's simulated completion on the wall clock, spinning
//! through the last stretch and, while the client is busy, polling its socket
//! instead of sleeping, so that neither a reply nor the next command waits
//! for a wake-up (tens of µs on Linux: as much as the latency measured).
//! In either timing no reply leaves for a command the drive completes after
//! a power cut that is planned or decided (`Shared::may_acknowledge`): the
//! client is never told of a write the cut then takes back.

use crate::engine::Outcome;
use crate::proto::{self, Export, Handshake};
use crate::server::{Shared, Stream, Timing};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What one connection did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConnectionStats {
    pub id: u64,
    pub client: String,
    pub export: String,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub write_zeroes: u64,
    pub flushes: u64,
    /// Commands answered with an error.
    pub errors: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Mean simulated latency of its commands (µs).
    pub sim_latency_us_mean: f64,
    /// Mean wall time from a command's arrival to its reply going out (µs).
    pub wall_latency_us_mean: f64,
    /// Realtime: mean time a reply went out after its simulated completion (µs).
    pub late_us_mean: f64,
    /// Wall seconds from the server's start to the connection's opening and closing.
    pub opened_s: f64,
    pub closed_s: f64,
    /// Why it closed: "disconnect" (NBD_CMD_DISC), "closed" (the client hung
    /// up), "stopped" (the server stopped), "idle" (no command for the idle
    /// timeout), or what went wrong.
    pub end: String,
}

/// A realtime reply due within this long is waited for by spinning.
const SPIN: Duration = Duration::from_micros(200);
/// In realtime timing, the socket is polled without sleeping this long after
/// the client's last command.
const BUSY: Duration = Duration::from_millis(2);
/// The longest sleep before the connection looks at the server's stop flag.
const NAP_MS: i32 = 50;
/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 256 << 10;
/// A connection runs no command whose reply would take the replies waiting
/// to go out past this much (unless none wait), and reads no more from its
/// socket while they hold it: a client pipelining large READs waits.
const MAX_BACKLOG: usize = 256 << 20;
/// Nor does it read while this much of its input waits to run (a whole
/// largest WRITE and then some).
const MAX_INPUT: usize = 2 * proto::MAX_REQUEST_BYTES as usize;
/// All connections together run no READ past this much of replies waiting
/// to go out, but a connection with none waiting still runs one: at most
/// this plus a largest READ per connection.
const MAX_TOTAL_BACKLOG: usize = 1 << 30;
/// A request header's size.
const HEADER: usize = 28;
/// A TRIM or WRITE_ZEROES runs in pieces of at most this many bytes.
const PIECE: u64 = 64 << 20;
/// The pause between two pieces, in which another client's command takes the engine.
const PIECE_PAUSE: Duration = Duration::from_micros(100);
/// How long a client may take over each step of its handshake.
const HANDSHAKE_WAIT: Duration = Duration::from_secs(10);
/// How long a client may take over its whole handshake (a step every 9 s
/// held a connection slot for hours).
const HANDSHAKE_TOTAL: Duration = Duration::from_secs(30);

/// A stream in its handshake: each read and write waits `HANDSHAKE_WAIT`
/// at most, and none goes on past `until`.
struct Deadline<'a> {
    stream: &'a mut Stream,
    until: Instant,
}

nandlab_core::message_error! {
    /// What a client did that the protocol does not allow (the connection
    /// closes with it as its reason).
    struct Misbehaved;
}

impl Deadline<'_> {
    /// The handshake's whole time is spent.
    fn spent() -> io::Error {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!("longer than {} s", HANDSHAKE_TOTAL.as_secs()),
        )
    }

    /// Sets the socket's timeouts to what is left (a step's `HANDSHAKE_WAIT` at most); whether the
    /// deadline, not the step's wait, bounds the next read or write.
    fn arm(&self) -> io::Result<bool> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Self::spent());
        }
        let wait = Some(left.min(HANDSHAKE_WAIT));
        self.stream.set_read_timeout(wait)?;
        self.stream.set_write_timeout(wait)?;
        Ok(left <= HANDSHAKE_WAIT)
    }

    /// `result` of a read or write armed with `last`: a timeout the deadline set is the
    /// handshake's (the socket says WouldBlock for it).
    fn checked(result: io::Result<usize>, last: bool) -> io::Result<usize> {
        match result {
            Err(e)
                if last
                    && matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
            {
                Err(Self::spent())
            }
            other => other,
        }
    }
}

impl io::Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let last = self.arm()?;
        Self::checked(self.stream.read(buf), last)
    }
}

impl io::Write for Deadline<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let last = self.arm()?;
        Self::checked(self.stream.write(buf), last)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

/// A reply waiting for its time (realtime timing).
struct Pending {
    due: Instant,
    seq: u64,
    received: Instant,
    /// The command's simulated completion.
    done: u64,
    reply: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.due, self.seq).cmp(&(o.due, o.seq))
    }
}

/// Running sums for the connection's means.
#[derive(Default)]
struct Sums {
    commands: u64,
    sim_ns: u64,
    wall_ns: u64,
    late_ns: u64,
}

struct Connection<'s, 'a> {
    shared: &'s Shared<'a>,
    stream: Stream,
    timing: Timing,
    input: Vec<u8>,
    /// What each read from the socket lands in first.
    scratch: Box<[u8]>,
    output: Vec<u8>,
    /// Bytes of `output` already sent.
    sent: usize,
    pending: BinaryHeap<Reverse<Pending>>,
    pending_bytes: usize,
    seq: u64,
    stats: ConnectionStats,
    sums: Sums,
    /// The client sent NBD_CMD_DISC: no more commands.
    disconnecting: bool,
    /// Since when the connection has had nothing in flight (its last reply
    /// sent), if the command that reply answered had been alone in flight.
    idle_since: Option<Instant>,
    /// Whether the last command came with nothing else in flight.
    lone: bool,
    /// When the last reply moved to the output was due.
    last_due: Option<Instant>,
    /// A due reply waits for a power cut that comes before its completion.
    held: bool,
    /// Power cuts before the connection opened (a later one ends it).
    epoch: u64,
}

/// Serves one client from its handshake to its end; returns what it did.
pub(crate) fn serve(
    shared: &Shared,
    mut stream: Stream,
    id: u64,
    client: String,
    export: Export,
    timing: Timing,
) -> ConnectionStats {
    let stats = ConnectionStats {
        id,
        client,
        opened_s: shared.started.elapsed().as_secs_f64(),
        ..ConnectionStats::default()
    };
    let mut c = Connection {
        shared,
        stream: match stream.try_clone() {
            Ok(s) => s,
            Err(e) => return closed(shared, stats, Sums::default(), e.to_string()),
        },
        timing,
        input: Vec::new(),
        scratch: vec![0; READ_CHUNK].into_boxed_slice(),
        output: Vec::new(),
        sent: 0,
        pending: BinaryHeap::new(),
        pending_bytes: 0,
        seq: 0,
        stats,
        sums: Sums::default(),
        disconnecting: false,
        idle_since: None,
        lone: false,
        last_due: None,
        held: false,
        epoch: shared.cuts.load(Ordering::Acquire),
    };
    let mut timed = Deadline {
        stream: &mut stream,
        until: Instant::now() + HANDSHAKE_TOTAL,
    };
    let end = match proto::handshake(&mut timed, &export) {
        Err(e) => format!("handshake: {e}"),
        Ok(Handshake::Aborted) => "aborted in the handshake".into(),
        Ok(Handshake::Export(name)) => {
            c.stats.export = name;
            let end = match c.stream.set_nonblocking(true) {
                Ok(()) => c.run(),
                Err(e) => e.to_string(),
            };
            // A power cut shuts the socket down: what failed then is the cut.
            if shared.cuts.load(Ordering::Acquire) != c.epoch {
                "power cut".into()
            } else {
                end
            }
        }
    };
    closed(
        shared,
        std::mem::take(&mut c.stats),
        std::mem::take(&mut c.sums),
        end,
    )
}

/// The connection's figures once it has ended.
fn closed(shared: &Shared, mut stats: ConnectionStats, s: Sums, end: String) -> ConnectionStats {
    let n = s.commands.max(1) as f64;
    stats.sim_latency_us_mean = s.sim_ns as f64 / n / 1e3;
    stats.wall_latency_us_mean = s.wall_ns as f64 / n / 1e3;
    stats.late_us_mean = s.late_ns as f64 / n / 1e3;
    stats.closed_s = shared.started.elapsed().as_secs_f64();
    stats.end = end;
    stats
}

impl Drop for Connection<'_, '_> {
    /// Replies never sent leave the server's count with the connection.
    fn drop(&mut self) {
        self.shared
            .backlog
            .fetch_sub(self.backlog(), Ordering::Relaxed);
    }
}

impl Connection<'_, '_> {
    /// The transmission phase, until the client goes or the server stops.
    fn run(&mut self) -> String {
        let mut active = Instant::now();
        let mut eof = false;
        loop {
            if self.shared.stopping() {
                // A client that hung up before the server stopped closed the
                // connection itself, whether or not this thread had seen it.
                let hung_up =
                    matches!(self.fill(), Err(e) if e.kind() == io::ErrorKind::UnexpectedEof);
                return if hung_up { "closed" } else { "stopped" }.into();
            }
            if self.shared.cuts.load(Ordering::Acquire) != self.epoch {
                // Replies not yet out are lost with the power.
                return "power cut".into();
            }
            let mut busy = false;
            if !eof && self.wants_input() {
                match self.fill() {
                    Ok(0) => {}
                    Ok(_) => busy = true,
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => eof = true,
                    Err(e) => return e.to_string(),
                }
            }
            match self.commands() {
                Ok(n) => busy |= n > 0,
                Err(why) => return why.0,
            }
            self.due_replies();
            if let Err(e) = self.send() {
                return e.to_string();
            }
            let drained = self.pending.is_empty() && self.sent == self.output.len();
            if drained && self.input.is_empty() && self.lone {
                // A client at queue depth 1 turns round from when its reply was
                // due: the reply's write (which wakes it), its wake-up, its next command.
                self.idle_since = self.idle_since.or(self.last_due);
            }
            if drained && self.disconnecting {
                return "disconnect".into();
            }
            if drained
                && self.input.is_empty()
                && self
                    .shared
                    .idle_timeout
                    .is_some_and(|t| active.elapsed() >= t)
            {
                return "idle".into();
            }
            if eof {
                // The client hung up: replies it would not read are dropped.
                return "closed".into();
            }
            if busy {
                active = Instant::now();
            }
            self.wait(active);
        }
    }

    /// Bytes of replies the connection holds: waiting for their time, or
    /// in the output (sent ones too, until the output is compacted).
    fn backlog(&self) -> usize {
        self.pending_bytes + self.output.len()
    }

    /// Drops the first `n` bytes of the output (sent), and the memory of a
    /// large output once it is empty.
    fn compact(&mut self, n: usize) {
        self.output.drain(..n);
        self.sent -= n;
        self.shared.backlog.fetch_sub(n, Ordering::Relaxed);
        if self.output.is_empty() && self.output.capacity() > 4 * READ_CHUNK {
            self.output = Vec::new();
        }
    }

    /// Whether the connection reads its socket now (see `MAX_BACKLOG`).
    fn wants_input(&self) -> bool {
        !self.disconnecting && self.backlog() < MAX_BACKLOG && self.input.len() < MAX_INPUT
    }

    /// Reads what the socket has; Ok(0) when nothing was waiting.
    fn fill(&mut self) -> io::Result<usize> {
        let mut total = 0;
        loop {
            // Into a buffer kept for the connection: a realtime connection
            // polls here between replies, and must not clear 256 KiB each time.
            match self.stream.read(&mut self.scratch) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    self.input.extend_from_slice(&self.scratch[..n]);
                    total += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(total),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            // Enough for now: let the commands run (a large write comes in pieces).
            if total >= READ_CHUNK {
                return Ok(total);
            }
        }
    }

    /// Runs every complete command in the input; returns how many ran.
    fn commands(&mut self) -> Result<usize, Misbehaved> {
        let mut at = 0;
        let mut ran = 0;
        let mut out = Vec::new();
        while !self.disconnecting && self.input.len() - at >= HEADER {
            let r = proto::read_request(&mut &self.input[at..at + HEADER])
                .map_err(|e| e.to_string())?
                .expect("a whole header is there");
            let payload = if r.kind == proto::CMD_WRITE {
                if r.len > proto::MAX_REQUEST_BYTES {
                    return Err(format!(
                        "a write of {} bytes (at most {} are taken)",
                        r.len,
                        proto::MAX_REQUEST_BYTES
                    )
                    .into());
                }
                r.len as usize
            } else {
                0
            };
            if self.input.len() - at < HEADER + payload {
                break;
            }
            let reply = if r.kind == proto::CMD_READ {
                r.len as usize
            } else {
                0
            };
            let total = self.shared.backlog.load(Ordering::Relaxed);
            if reply > 0
                && self.backlog() > 0
                && (self.backlog() + reply > MAX_BACKLOG || total + reply > MAX_TOTAL_BACKLOG)
            {
                // Its reply waits until those before it have gone out.
                break;
            }
            let data = at + HEADER..at + HEADER + payload;
            at += HEADER + payload;
            ran += 1;
            if !self.count(&r) {
                self.disconnecting = true;
                break;
            }
            let received = Instant::now();
            if let Some(idle) = self.idle_since.take() {
                self.shared.turnaround.observe(received - idle);
            }
            self.lone = self.pending.is_empty() && self.sent == self.output.len() && ran == 1;
            out.clear();
            let (o, due) = self.shared.run(&r, &self.input[data], &mut out, self.epoch);
            self.note(&o);
            match due {
                // Fast: the reply goes straight to the output, unless a
                // power cut decided comes before the command's completion.
                None if self.shared.may_acknowledge(o.done) => {
                    let before = self.output.len();
                    proto::write_reply(&mut self.output, o.error, r.cookie, &out)
                        .expect("to memory");
                    let added = self.output.len() - before;
                    self.shared.backlog.fetch_add(added, Ordering::Relaxed);
                    self.sums.wall_ns += received.elapsed().as_nanos() as u64;
                }
                _ => {
                    let mut reply = Vec::with_capacity(16 + out.len());
                    proto::write_reply(&mut reply, o.error, r.cookie, &out).expect("to memory");
                    self.seq += 1;
                    self.pending_bytes += reply.len();
                    self.shared
                        .backlog
                        .fetch_add(reply.len(), Ordering::Relaxed);
                    self.pending.push(Reverse(Pending {
                        due: due.unwrap_or(received).max(received),
                        seq: self.seq,
                        received,
                        done: o.done,
                        reply,
                    }));
                }
            }
        }
        self.input.drain(..at);
        Ok(ran)
    }

    /// Counts a command by kind; false for NBD_CMD_DISC.
    fn count(&mut self, r: &proto::Request) -> bool {
        let s = &mut self.stats;
        match r.kind {
            proto::CMD_READ => {
                s.reads += 1;
                s.bytes_read += r.len as u64;
            }
            proto::CMD_WRITE => {
                s.writes += 1;
                s.bytes_written += r.len as u64;
            }
            proto::CMD_TRIM => s.trims += 1,
            proto::CMD_WRITE_ZEROES => s.write_zeroes += 1,
            proto::CMD_FLUSH => s.flushes += 1,
            proto::CMD_DISC => return false,
            _ => {}
        }
        true
    }

    fn note(&mut self, o: &Outcome) {
        if o.error != 0 {
            self.stats.errors += 1;
        }
        self.sums.commands += 1;
        self.sums.sim_ns += o.done - o.arrival;
    }

    /// Moves the replies that are due to the output — none for a
    /// command the drive completes after a power cut that is decided: those
    /// wait for the cut, which drops them.
    fn due_replies(&mut self) {
        let now = Instant::now();
        self.held = false;
        while let Some(Reverse(p)) = self.pending.peek().filter(|Reverse(p)| p.due <= now) {
            if !self.shared.may_acknowledge(p.done) {
                self.held = true;
                return;
            }
            let Reverse(p) = self.pending.pop().expect("peeked");
            self.pending_bytes -= p.reply.len();
            self.output.extend_from_slice(&p.reply);
            self.sums.late_ns += now.saturating_duration_since(p.due).as_nanos() as u64;
            self.last_due = Some(p.due);
            self.sums.wall_ns += now.saturating_duration_since(p.received).as_nanos() as u64;
        }
    }

    /// Sends what the output holds, as far as the socket takes it.
    fn send(&mut self) -> io::Result<()> {
        while self.sent < self.output.len() {
            match self.stream.write(&self.output[self.sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // Half sent: the sent half goes (a move of at most what
                    // was sent, so compacting costs O(1) a byte).
                    if 2 * self.sent >= self.output.len() {
                        self.compact(self.sent);
                    }
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.compact(self.sent);
        Ok(())
    }

    /// Waits for the next thing to do: spins while a reply is nearly due
    /// or (realtime) the client is busy; otherwise sleeps in poll(2) until
    /// the socket can be read (or written, with output left), a reply is
    /// nearly due, or it is time to look at the stop flag.
    fn wait(&self, active: Instant) {
        // A held reply is not waited for: the cut that drops it is.
        let next = match self.held {
            true => None,
            false => self.pending.peek().map(|Reverse(p)| p.due),
        };
        let now = Instant::now();
        let soon = next.is_some_and(|d| d <= now + SPIN);
        if self.timing == Timing::Realtime && (soon || now.duration_since(active) < BUSY) {
            std::hint::spin_loop();
            return;
        }
        let ms = next.map_or(NAP_MS, |d| {
            let left = d.saturating_duration_since(now + SPIN);
            (left.as_millis() as i32).clamp(0, NAP_MS)
        });
        // A connection not reading its socket does not wake for it.
        let mut events = if self.wants_input() { libc::POLLIN } else { 0 };
        if self.sent < self.output.len() {
            events |= libc::POLLOUT;
        }
        let mut fd = libc::pollfd {
            fd: self.stream.as_raw_fd(),
            events,
            revents: 0,
        };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe {
            libc::poll(&mut fd, 1, ms);
        }
    }
}

impl Shared<'_> {
    /// Whether the server is stopping (a signal, `once`, or a failure).
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.signal.load(Ordering::Relaxed)
            || self.failed.load(Ordering::Relaxed)
    }

    /// Whether the reply for a command completed at `done` may go out — not
    /// if a power cut decided or planned comes first. The
    /// completion is published before the second look, so a cut decided in
    /// between comes no earlier than it (`Shared::cut` cuts at the latest
    /// completion replied, if later): every reply that leaves is for a
    /// command the drive completed before any cut.
    fn may_acknowledge(&self, done: u64) -> bool {
        if done > self.cut_at.load(Ordering::SeqCst) {
            return false;
        }
        self.replied.fetch_max(done, Ordering::SeqCst);
        done <= self.cut_at.load(Ordering::SeqCst)
    }

    /// Runs a command through the engine (see `run_one`); a TRIM or
    /// WRITE_ZEROES larger than `PIECE` runs in pieces, the engine free for
    /// other clients' commands between them (a 4 GiB WRITE_ZEROES held
    /// every other client for 5 s). Its outcome is the first piece's
    /// arrival, the last completion and the first error (the pieces after
    /// it are not run).
    fn run(
        &self,
        r: &proto::Request,
        data: &[u8],
        out: &mut Vec<u8>,
        epoch: u64,
    ) -> (Outcome, Option<Instant>) {
        let pieces = matches!(r.kind, proto::CMD_TRIM | proto::CMD_WRITE_ZEROES)
            && u64::from(r.len) > PIECE
            // Out of bounds: refused whole, none of it done.
            && r.offset + u64::from(r.len) <= self.engine.lock().unwrap().size;
        if !pieces {
            return self.run_one(r, data, out, epoch);
        }
        let mut whole: Option<(Outcome, Option<Instant>)> = None;
        let mut at = 0u64;
        while at < u64::from(r.len) {
            let len = (u64::from(r.len) - at).min(PIECE);
            let last = at + len == u64::from(r.len);
            let piece = proto::Request {
                offset: r.offset + at,
                len: len as u32,
                // FUA once, with the last piece: everything before it is then on flash.
                flags: if last {
                    r.flags
                } else {
                    r.flags & !proto::CMD_FLAG_FUA
                },
                ..*r
            };
            let (o, due) = self.run_one(&piece, &[], out, epoch);
            let (error, done) = (o.error, o.done);
            let w = whole.get_or_insert((o, due));
            w.0.done = w.0.done.max(done);
            w.1 = w.1.max(due);
            if error != 0 {
                w.0.error = error;
                break;
            }
            at += len;
            if !last {
                // The engine's lock is not fair: without a pause this thread
                // takes it again before a waiting one wakes.
                std::thread::sleep(PIECE_PAUSE);
            }
        }
        whole.expect("a command of more than PIECE bytes has pieces")
    }

    /// Runs a command through the engine (a planned power cut due by its
    /// arrival comes first); returns its outcome and, in realtime timing,
    /// when its reply is due. A connection from before the last power cut
    /// gets ESHUTDOWN: the drive it talked to went down.
    fn run_one(
        &self,
        r: &proto::Request,
        data: &[u8],
        out: &mut Vec<u8>,
        epoch: u64,
    ) -> (Outcome, Option<Instant>) {
        let stamp = self.replied.load(Ordering::Acquire);
        let mut e = self.engine.lock().unwrap();
        let arrival = e.arrival(stamp);
        if self.cut_if_due(&mut e, Some(arrival)) || self.cuts.load(Ordering::Acquire) != epoch {
            let o = Outcome {
                error: proto::ESHUTDOWN,
                arrival,
                done: arrival,
            };
            return (o, None);
        }
        let o = e.command(r, data, stamp, out);
        let due = (e.timing == Timing::Realtime).then(|| {
            let due = e.wall(o.done);
            due.checked_sub(self.turnaround.get()).unwrap_or(due)
        });
        if e.failure.is_some() {
            self.failed.store(true, Ordering::Relaxed);
        }
        (o, due)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_handshake_dripping_a_byte_at_a_time_ends_at_its_deadline() {
        let (ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut stream = Stream::Unix(ours);
        let began = Instant::now();
        let mut timed = Deadline {
            stream: &mut stream,
            until: began + Duration::from_millis(300),
        };
        let drip = std::thread::spawn(move || {
            // Each step well within HANDSHAKE_WAIT, until the server gives up.
            while theirs.write_all(b"x").is_ok() {
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut byte = [0u8; 1];
        let e = loop {
            if let Err(e) = timed.read_exact(&mut byte) {
                break e;
            }
        };
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(began.elapsed() < Duration::from_secs(2));
        drop(stream);
        drip.join().unwrap();
    }
}
