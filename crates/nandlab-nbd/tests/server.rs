//! The NBD server driven by a minimal client written here from the protocol
//! document (real clients — fio, qemu-img, qemu-io, nbdcopy — are in the
//! Python tests): the handshake, every command, data read back, errors for
//! requests out of bounds, pipelined commands, hostile clients, and the
//! served phase's figures.

use nandlab_core::sim::ConfigText;
use nandlab_core::{Config, Simulator};
use nandlab_nbd::{
    saved, ClientOverhead, Listen, ServeOptions, ServeOutcome, ServedData, Server, Timing,
};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const CONFIG: &str = r#"
seed = 1
[device]
preset = "snia-mlc"
capacity = "1GiB"
[[phase]]
name = "serve"
interval = "1s"
requests = 4611686018427387904
"#;

/// The export size: the drive's user capacity.
const SIZE: u64 = 1 << 30;

const READ: u16 = 0;
const WRITE: u16 = 1;
const DISC: u16 = 2;
const FLUSH: u16 = 3;
const TRIM: u16 = 4;
const CACHE: u16 = 5;
const WRITE_ZEROES: u16 = 6;
const FUA: u16 = 1;
const NO_HOLE: u16 = 2;

fn socket(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nandlab-nbd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Stops the server when the client is done, also if it panicked (the
/// scope would otherwise wait for the server for ever).
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Serves a fresh drive at `name` while `client` runs, then stops the server.
fn with_server(name: &str, timing: Timing, client: impl FnOnce(&PathBuf)) -> ServeOutcome {
    let mut sim = Simulator::new(Config::from_toml(CONFIG, "test").unwrap());
    sim.drive_mut().enable_oracle();
    serve_session(&mut sim, name, timing, ServedData::empty(1 << 30), client)
}

/// Serves `sim` holding `data` at `name` while `client` runs, then stops the server.
fn serve_session(
    sim: &mut Simulator,
    name: &str,
    timing: Timing,
    data: ServedData,
    client: impl FnOnce(&PathBuf),
) -> ServeOutcome {
    let path = socket(name);
    let server = Server::bind(&Listen::Unix(path.clone())).unwrap();
    assert!(server.uri().starts_with("nbd+unix:///?socket="));
    let opts = ServeOptions {
        timing,
        once: false,
        store_limit: 1 << 30,
        max_connections: 8,
        client_overhead: ClientOverhead::Fixed(Duration::ZERO),
        power_cut_at: Vec::new(),
        idle_timeout: None,
    };
    let stop = AtomicBool::new(false);
    let outcome = std::thread::scope(|s| {
        let serving = s.spawn(|| server.run(sim, 0, &opts, &stop, data));
        let stopper = StopOnDrop(&stop);
        client(&path);
        drop(stopper);
        serving.join().unwrap().unwrap()
    });
    sim.drive().check_invariants().unwrap();
    drop(server);
    assert!(!path.exists(), "the socket file is removed");
    outcome
}

/// A client connection after NBD_OPT_GO.
struct Client {
    s: UnixStream,
    size: u64,
    cookie: u64,
}

impl Client {
    fn connect(path: &PathBuf) -> Client {
        let mut s = UnixStream::connect(path).unwrap();
        let mut hello = [0u8; 18];
        s.read_exact(&mut hello).unwrap();
        assert_eq!(&hello[..16], b"NBDMAGICIHAVEOPT");
        s.write_all(&3u32.to_be_bytes()).unwrap();
        let mut opt = b"IHAVEOPT".to_vec();
        opt.extend_from_slice(&7u32.to_be_bytes()); // GO
        opt.extend_from_slice(&6u32.to_be_bytes());
        opt.extend_from_slice(&0u32.to_be_bytes()); // name ""
        opt.extend_from_slice(&0u16.to_be_bytes()); // no info requests
        s.write_all(&opt).unwrap();
        let mut size = 0;
        loop {
            let mut h = [0u8; 20];
            s.read_exact(&mut h).unwrap();
            let kind = u32::from_be_bytes(h[12..16].try_into().unwrap());
            let len = u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize;
            let mut data = vec![0; len];
            s.read_exact(&mut data).unwrap();
            match kind {
                1 => break, // ACK
                3 if u16::from_be_bytes([data[0], data[1]]) == 0 => {
                    size = u64::from_be_bytes(data[2..10].try_into().unwrap());
                }
                3 => {}
                other => panic!("option reply {other:#x}"),
            }
        }
        Client { s, size, cookie: 0 }
    }

    fn send(&mut self, kind: u16, flags: u16, offset: u64, len: u32, data: &[u8]) -> u64 {
        self.cookie += 1;
        let mut m = 0x2560_9513u32.to_be_bytes().to_vec();
        m.extend_from_slice(&flags.to_be_bytes());
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&self.cookie.to_be_bytes());
        m.extend_from_slice(&offset.to_be_bytes());
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m).unwrap();
        self.cookie
    }

    /// A simple reply: (error, cookie), reading `len` bytes of data if it has no error.
    fn reply(&mut self, len: usize) -> (u32, u64, Vec<u8>) {
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h).unwrap();
        assert_eq!(&h[..4], &0x6744_6698u32.to_be_bytes());
        let error = u32::from_be_bytes(h[4..8].try_into().unwrap());
        let cookie = u64::from_be_bytes(h[8..16].try_into().unwrap());
        let mut data = vec![0; if error == 0 { len } else { 0 }];
        self.s.read_exact(&mut data).unwrap();
        (error, cookie, data)
    }

    fn call(
        &mut self,
        kind: u16,
        flags: u16,
        offset: u64,
        len: u32,
        data: &[u8],
    ) -> (u32, Vec<u8>) {
        let cookie = self.send(kind, flags, offset, len, data);
        let reply_len = if kind == READ { len as usize } else { 0 };
        let (error, c, data) = self.reply(reply_len);
        assert_eq!(c, cookie);
        (error, data)
    }

    fn read(&mut self, offset: u64, len: u32) -> Vec<u8> {
        let (error, data) = self.call(READ, 0, offset, len, &[]);
        assert_eq!(error, 0);
        data
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) | 1)
        .collect()
}

#[test]
fn every_command_does_what_the_protocol_says() {
    let outcome = with_server("commands.sock", Timing::Fast, |path| {
        let mut c = Client::connect(path);
        assert_eq!(c.size, SIZE);
        // Never written: zeroes. A write that straddles units reads back.
        assert!(c.read(0, 8192).iter().all(|&b| b == 0));
        let data = pattern(8192, 7);
        assert_eq!(c.call(WRITE, 0, 4096 + 100, 8192, &data).0, 0);
        assert_eq!(c.read(4096 + 100, 8192), data);
        assert!(c.read(0, 4196).iter().all(|&b| b == 0));
        // FUA and FLUSH.
        assert_eq!(c.call(WRITE, FUA, 1 << 20, 4096, &pattern(4096, 9)).0, 0);
        assert_eq!(c.call(FLUSH, 0, 0, 0, &[]).0, 0);
        // TRIM and WRITE_ZEROES (punched, and written as zeroes) read back as zeroes.
        assert_eq!(c.call(TRIM, 0, 0, 64 << 10, &[]).0, 0);
        assert!(c.read(0, 64 << 10).iter().all(|&b| b == 0));
        c.call(WRITE, 0, 2 << 20, 16384, &pattern(16384, 3));
        assert_eq!(c.call(WRITE_ZEROES, 0, 2 << 20, 8192, &[]).0, 0);
        assert_eq!(
            c.call(WRITE_ZEROES, NO_HOLE, (2 << 20) + 8192, 100, &[]).0,
            0
        );
        let back = c.read(2 << 20, 16384);
        assert!(back[..8292].iter().all(|&b| b == 0));
        assert_eq!(&back[8292..], &pattern(16384, 3)[8292..]);
        // Out of bounds: EINVAL for reads and trims, ENOSPC for writes; unknown commands EINVAL.
        assert_eq!(c.call(READ, 0, SIZE - 10, 20, &[]).0, 22);
        assert_eq!(c.call(READ, 0, u64::MAX - 5, 20, &[]).0, 22);
        assert_eq!(c.call(TRIM, 0, SIZE, 4096, &[]).0, 22);
        assert_eq!(c.call(WRITE, 0, SIZE - 10, 20, &[1; 20]).0, 28);
        assert_eq!(c.call(CACHE, 0, 0, 4096, &[]).0, 22);
        // Pipelined: many commands in flight, each reply names its own.
        let data = pattern(4096, 5);
        let mut cookies: Vec<u64> = (0..32u64)
            .map(|i| c.send(WRITE, 0, (8 << 20) + i * 4096, 4096, &data))
            .collect();
        let mut got: Vec<u64> = (0..32).map(|_| c.reply(0).1).collect();
        got.sort_unstable();
        cookies.sort_unstable();
        assert_eq!(got, cookies);
        assert_eq!(c.read((8 << 20) + 31 * 4096, 4096), data);
        // DISC: the server closes the connection.
        c.send(DISC, 0, 0, 0, &[]);
        let mut rest = Vec::new();
        c.s.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
    });
    let conn = &outcome.connections[0];
    assert_eq!(conn.end, "disconnect");
    assert_eq!(
        (conn.writes, conn.trims, conn.write_zeroes, conn.flushes),
        (36, 2, 2, 1)
    );
    assert_eq!(conn.errors, 5);
    let summary = &outcome.phase.summary;
    assert_eq!(summary.kind, "serve");
    // Every read and write the drive took is in the phase (the refused ones are
    // not): 35 writes and the written zeroes.
    assert_eq!(summary.host_write_requests, 35 + 1);
    assert_eq!(summary.host_read_requests, 6);
    assert!(outcome.failure.is_none());
}

/// 64 writes of 8 KiB, 64 KiB apart, and a TRIM of the second one's unit.
fn write_64(path: &PathBuf) {
    let mut c = Client::connect(path);
    for i in 0..64u64 {
        let data = pattern(8192, i as u8);
        assert_eq!(c.call(WRITE, 0, i * 65536 + 512, 8192, &data).0, 0);
    }
    assert_eq!(c.call(TRIM, 0, 65536, 65536, &[]).0, 0);
}

/// Reads back what `write_64` left.
fn read_64(path: &PathBuf) {
    let mut c = Client::connect(path);
    for i in 0..64u64 {
        let want = if i == 1 {
            vec![0; 8192]
        } else {
            pattern(8192, i as u8)
        };
        let back = c.read(i * 65536 + 512, 8192);
        assert_eq!(back[..7680], want[..7680], "write {i}");
    }
}

fn config_text() -> ConfigText {
    ConfigText {
        text: CONFIG.into(),
        json: false,
        source: "test".into(),
        seed: None,
    }
}

#[test]
fn a_saved_drive_serves_again_with_its_data_and_state() {
    let mut sim = Simulator::new(Config::from_toml(CONFIG, "test").unwrap());
    sim.drive_mut().enable_oracle();
    let first = serve_session(
        &mut sim,
        "saved-1.sock",
        Timing::Fast,
        ServedData::empty(1 << 30),
        write_64,
    );
    let config = config_text();
    let file = socket("saved.drive");
    saved::save(&file, &sim, &config, "{\"phases\": []}", &first.data).unwrap();
    assert!(saved::is_saved(&file));
    let back = saved::load(&file, 1 << 30, None).unwrap();
    assert_eq!(back.config, config);
    assert_eq!(back.extra, "{\"phases\": []}");
    assert_eq!(back.sim.state_fingerprint(), sim.state_fingerprint());
    assert_eq!(back.data.store.bytes(), first.data.store.bytes());
    let mut again = back.sim;
    let second = serve_session(&mut again, "saved-2.sock", Timing::Fast, back.data, read_64);
    again.drive().check_invariants().unwrap();
    // The second session's reads found their data on the flash the first one wrote.
    assert_eq!(second.phase.summary.host_read_requests, 64);
    assert_eq!(
        again.drive().counters().host_write_bytes,
        sim.drive().counters().host_write_bytes
    );

    // A damaged file is refused with a reason, never served.
    let bytes = std::fs::read(&file).unwrap();
    let damaged = socket("damaged.drive");
    let refused = |what: &str, b: &[u8]| {
        std::fs::write(&damaged, b).unwrap();
        let Err(e) = saved::load(&damaged, 1 << 30, None) else {
            panic!("{what}: loaded")
        };
        e.to_string()
    };
    assert!(refused("truncated", &bytes[..bytes.len() - 10]).contains("damaged"));
    let mut flipped = bytes.clone();
    let at = flipped.len() - 100;
    flipped[at] ^= 1;
    assert!(refused("flipped", &flipped).contains("checksum"));
    assert!(refused("not one", b"hello").contains("not a served"));
    assert!(refused("a plain snapshot", &bytes[20..]).contains("not a served"));
    assert!(
        saved::load(&damaged, 4096, None).is_err(),
        "a store too small is refused"
    );
    assert!(matches!(
        saved::load(&file, 4096, None),
        Err(nandlab_core::SimError::OutOfMemory { .. })
    ));
}

#[test]
fn a_data_file_holds_the_drive_and_a_saved_drive_keeps_it_by_reference() {
    let mut sim = Simulator::new(Config::from_toml(CONFIG, "test").unwrap());
    sim.drive_mut().enable_oracle();
    let size = sim.config().geometry.user_capacity_bytes;
    let data = socket("data.img");
    let _ = std::fs::remove_file(&data);
    let store = nandlab_nbd::store::Store::file(&data, size, true).unwrap();
    let served = ServedData {
        store,
        unreadable: Vec::new(),
    };
    let first = serve_session(&mut sim, "data-1.sock", Timing::Fast, served, write_64);
    // The bytes are in the file, where any program reads them.
    let image = std::fs::read(&data).unwrap();
    assert_eq!(image.len() as u64, size);
    assert_eq!(
        image[3 * 65536 + 512..3 * 65536 + 512 + 8192],
        pattern(8192, 3)[..]
    );
    assert!(image[65536..2 * 65536].iter().all(|&b| b == 0));
    let file = socket("data.drive");
    saved::save(&file, &sim, &config_text(), "{}", &first.data).unwrap();
    drop(first);
    // By reference: the drive's file holds no chunk of the data.
    assert!(std::fs::metadata(&file).unwrap().len() < image.len() as u64 / 4);
    let other = socket("other.img");
    let _ = std::fs::remove_file(&other);
    let Err(e) = saved::load(&file, 1 << 30, Some(&other)) else {
        panic!("loaded with another data file")
    };
    assert!(e.to_string().contains("keeps its data in"), "{e}");
    let back = saved::load(&file, 1 << 30, None).unwrap();
    // Served once at a time: a second server cannot take the file.
    assert!(saved::load(&file, 1 << 30, None).is_err());
    let mut again = back.sim;
    serve_session(&mut again, "data-2.sock", Timing::Fast, back.data, read_64);

    // A data file that changed after the drive was saved is refused.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let f = std::fs::OpenOptions::new().write(true).open(&data).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, b"x", 0).unwrap();
    drop(f);
    let Err(e) = saved::load(&file, 1 << 30, None) else {
        panic!("loaded a changed data file")
    };
    assert!(e.to_string().contains("changed after"), "{e}");

    // A drive whose data is in its own file moves to a new data file.
    let mut sim = Simulator::new(Config::from_toml(CONFIG, "test").unwrap());
    sim.drive_mut().enable_oracle();
    let inline = serve_session(
        &mut sim,
        "data-3.sock",
        Timing::Fast,
        ServedData::empty(1 << 30),
        write_64,
    );
    saved::save(&file, &sim, &config_text(), "{}", &inline.data).unwrap();
    let Err(e) = saved::load(&file, 1 << 30, Some(&data)) else {
        panic!("took over an existing file")
    };
    assert!(e.to_string().contains("exists"), "{e}");
    let moved = saved::load(&file, 1 << 30, Some(&other)).unwrap();
    assert!(moved.data.store.data_file().is_some());
    let mut again = moved.sim;
    serve_session(&mut again, "data-4.sock", Timing::Fast, moved.data, read_64);
    for f in [&data, &other, &file] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn hostile_clients_lose_their_connection_and_nothing_else() {
    let outcome = with_server("hostile.sock", Timing::Realtime, |path| {
        // Garbage instead of a handshake; a huge option; a bad request magic;
        // a write longer than the server takes; a client that vanishes mid-request.
        for junk in [
            vec![0xFFu8; 64],
            [
                3u32.to_be_bytes().to_vec(),
                b"IHAVEOPT".to_vec(),
                vec![0, 0, 0, 7, 0xFF, 0xFF, 0xFF, 0xFF],
            ]
            .concat(),
        ] {
            let mut s = UnixStream::connect(path).unwrap();
            s.write_all(&junk).unwrap();
            let mut rest = Vec::new();
            let _ = s.read_to_end(&mut rest);
        }
        let mut c = Client::connect(path);
        c.s.write_all(&[0xAB; 28]).unwrap();
        let mut rest = Vec::new();
        let _ = c.s.read_to_end(&mut rest);
        let mut c = Client::connect(path);
        c.send(WRITE, 0, 0, u32::MAX, &[]);
        let _ = c.s.read_to_end(&mut rest);
        let mut c = Client::connect(path);
        c.send(WRITE, 0, 0, 4096, &[1; 100]);
        drop(c);
        // The server still serves.
        let mut c = Client::connect(path);
        c.call(WRITE, 0, 0, 4096, &pattern(4096, 1));
        assert_eq!(c.read(0, 4096), pattern(4096, 1));
    });
    let ends: Vec<&str> = outcome.connections.iter().map(|c| c.end.as_str()).collect();
    assert!(ends[0].starts_with("handshake"), "{ends:?}");
    assert!(ends[1].starts_with("handshake"), "{ends:?}");
    assert!(ends[2].contains("magic"), "{ends:?}");
    assert!(ends[3].contains("at most"), "{ends:?}");
    assert_eq!(ends[4], "closed");
    assert_eq!(ends[5], "closed");
    assert_eq!(outcome.phase.summary.host_write_requests, 1);
}

/// Serves a drive with a volatile write cache and a control socket while
/// `client` runs (given the NBD and control paths).
fn with_cuts(name: &str, client: impl FnOnce(&PathBuf, &PathBuf)) -> ServeOutcome {
    let path = socket(&format!("{name}.sock"));
    let control = socket(&format!("{name}.ctl"));
    // A volatile write cache loses what it holds; paired-page backup keeps
    // what is on flash (without it, an upper page cut short takes its lower page).
    let text = CONFIG
        .replace(
            "capacity = \"1GiB\"",
            "capacity = \"1GiB\"\nwrite_cache = \"volatile\"",
        )
        .replace("[[phase]]", "[ftl]\npaired_page_backup = true\n[[phase]]");
    let mut sim = Simulator::new(Config::from_toml(&text, "test").unwrap());
    sim.enable_power_model().unwrap();
    let mut server = Server::bind(&Listen::Unix(path.clone())).unwrap();
    server.bind_control(&control).unwrap();
    let opts = ServeOptions {
        timing: Timing::Fast,
        once: false,
        store_limit: 1 << 30,
        max_connections: 8,
        client_overhead: ClientOverhead::Fixed(Duration::ZERO),
        power_cut_at: Vec::new(),
        idle_timeout: None,
    };
    let stop = AtomicBool::new(false);
    let outcome = std::thread::scope(|s| {
        let serving = s.spawn(|| server.run(&mut sim, 0, &opts, &stop, ServedData::empty(1 << 30)));
        let stopper = StopOnDrop(&stop);
        client(&path, &control);
        drop(stopper);
        serving.join().unwrap().unwrap()
    });
    sim.drive().check_invariants().unwrap();
    outcome
}

fn control(path: &PathBuf, line: &str) -> String {
    let mut s = UnixStream::connect(path).unwrap();
    s.write_all(line.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn a_power_cut_keeps_what_was_flushed_and_reverts_the_rest_to_what_the_drive_kept() {
    let units = 64u64;
    let outcome = with_cuts("cut", |path, ctl| {
        let mut c = Client::connect(path);
        for u in 0..units {
            assert_eq!(c.call(WRITE, 0, u * 4096, 4096, &pattern(4096, 1)).0, 0);
        }
        assert_eq!(c.call(FLUSH, 0, 0, 0, &[]).0, 0);
        // Acknowledged from the volatile cache, never flushed.
        for u in 0..units {
            assert_eq!(c.call(WRITE, 0, u * 4096, 4096, &pattern(4096, 2)).0, 0);
        }
        let answer = control(ctl, "cut\n");
        assert!(answer.contains("\"acknowledged_lost_units\""), "{answer}");
        // The connection from before the cut is gone.
        let mut rest = Vec::new();
        assert!(c.s.read_to_end(&mut rest).map_or(true, |n| n == 0));
        // A new one reads each unit as the flushed or the later version, nothing else.
        let mut c = Client::connect(path);
        let (mut old, mut new) = (0, 0);
        for u in 0..units {
            let got = c.read(u * 4096, 4096);
            if got == pattern(4096, 1) {
                old += 1;
            } else {
                assert!(got == pattern(4096, 2), "unit {u} reads neither version");
                new += 1;
            }
        }
        assert!(
            old > 0,
            "a volatile cache loses acknowledged writes at a cut"
        );
        assert_eq!(old + new, units);
        assert!(control(ctl, "nonsense\n").starts_with("error: expected cut or stop"));
        assert!(control(ctl, "stop\n").contains("stopping"));
    });
    let cut = &outcome.power_cuts[0];
    assert!(cut.acknowledged_lost_units > 0 && cut.reverted_units >= cut.acknowledged_lost_units);
    assert_eq!(cut.unknown_units, 0);
    assert_eq!(outcome.phase.power_losses.len(), 1);
    assert_eq!(outcome.connections[0].end, "power cut");
}
