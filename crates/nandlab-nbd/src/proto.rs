//! The NBD protocol's wire format, server side, after the NetworkBlockDevice
//! project's `doc/proto.md`: the fixed newstyle handshake with its option
//! haggling (EXPORT_NAME, GO, INFO, LIST, ABORT; everything else refused as
//! unsupported, so clients fall back to simple replies), and the
//! transmission phase's request headers and simple replies.

use std::io::{self, Read, Write};

const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
const REQUEST_MAGIC: u32 = 0x2560_9513;
const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

const FLAG_FIXED_NEWSTYLE: u16 = 1;
const FLAG_NO_ZEROES: u16 = 1 << 1;
const CLIENT_FIXED_NEWSTYLE: u32 = 1;
const CLIENT_NO_ZEROES: u32 = 1 << 1;

const OPT_EXPORT_NAME: u32 = 1;
const OPT_ABORT: u32 = 2;
const OPT_LIST: u32 = 3;
const OPT_INFO: u32 = 6;
const OPT_GO: u32 = 7;

const REP_ACK: u32 = 1;
const REP_SERVER: u32 = 2;
const REP_INFO: u32 = 3;
const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
const REP_ERR_INVALID: u32 = (1 << 31) + 3;

const INFO_EXPORT: u16 = 0;
const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flags: the commands this server takes.
pub const FLAG_HAS_FLAGS: u16 = 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Command types.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_WRITE_ZEROES: u16 = 6;

/// Command flags.
pub const CMD_FLAG_FUA: u16 = 1;
pub const CMD_FLAG_NO_HOLE: u16 = 1 << 1;

/// Error values of a reply.
pub const EIO: u32 = 5;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const ENOTSUP: u32 = 95;
pub const ESHUTDOWN: u32 = 108;

/// The longest option a client may send (an export name is at most 4 KiB).
const MAX_OPTION_BYTES: u32 = 64 << 10;
/// Options a client may send before choosing an export.
const MAX_OPTIONS: u32 = 1024;
/// The largest request the server takes (advertised as the maximum block size).
pub const MAX_REQUEST_BYTES: u32 = 32 << 20;
/// The preferred request size advertised to clients.
pub const PREFERRED_BLOCK: u32 = 4096;

/// The one export this server offers (under any name).
#[derive(Debug, Clone, Copy)]
pub struct Export {
    pub size: u64,
    /// Transmission flags.
    pub flags: u16,
}

/// How a handshake ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Handshake {
    /// The client chose this export name: the transmission phase follows.
    Export(String),
    /// The client gave up (NBD_OPT_ABORT, or closed the connection).
    Aborted,
}

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

fn option_reply(w: &mut impl Write, option: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(20 + data.len());
    m.extend_from_slice(&OPTION_REPLY_MAGIC.to_be_bytes());
    m.extend_from_slice(&option.to_be_bytes());
    m.extend_from_slice(&kind.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    w.write_all(&m)
}

/// The export name and requested infos of an NBD_OPT_INFO / NBD_OPT_GO.
fn parse_info_request(data: &[u8]) -> Option<(String, Vec<u16>)> {
    let name_len = u32::from_be_bytes(data.get(..4)?.try_into().ok()?) as usize;
    let name = data.get(4..4 + name_len)?;
    let rest = &data[4 + name_len..];
    let count = u16::from_be_bytes(rest.get(..2)?.try_into().ok()?) as usize;
    let infos = rest.get(2..)?;
    if infos.len() != 2 * count {
        return None;
    }
    let infos = infos
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    Some((String::from_utf8_lossy(name).into_owned(), infos))
}

/// Runs the server's side of the fixed newstyle handshake on `s`.
pub fn handshake<S: Read + Write>(s: &mut S, export: &Export) -> io::Result<Handshake> {
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&NBDMAGIC.to_be_bytes());
    hello.extend_from_slice(&IHAVEOPT.to_be_bytes());
    hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&hello)?;
    s.flush()?;
    let client = match read_u32(s) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Handshake::Aborted),
        Err(e) => return Err(e),
    };
    if client & !(CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES) != 0 {
        return Err(invalid(format!("unknown client flags {client:#x}")));
    }
    let no_zeroes = client & CLIENT_NO_ZEROES != 0;
    for _ in 0..MAX_OPTIONS {
        if read_u64(s)? != IHAVEOPT {
            return Err(invalid("an option without the IHAVEOPT magic"));
        }
        let option = read_u32(s)?;
        let len = read_u32(s)?;
        if len > MAX_OPTION_BYTES {
            return Err(invalid(format!("an option of {len} bytes")));
        }
        let mut data = vec![0; len as usize];
        s.read_exact(&mut data)?;
        match option {
            OPT_EXPORT_NAME => {
                let mut m = Vec::with_capacity(10 + 124);
                m.extend_from_slice(&export.size.to_be_bytes());
                m.extend_from_slice(&export.flags.to_be_bytes());
                if !no_zeroes {
                    m.extend_from_slice(&[0; 124]);
                }
                s.write_all(&m)?;
                s.flush()?;
                return Ok(Handshake::Export(
                    String::from_utf8_lossy(&data).into_owned(),
                ));
            }
            OPT_ABORT => {
                // The client may already have closed: an ack it does not read is fine.
                let _ = option_reply(s, option, REP_ACK, &[]).and_then(|_| s.flush());
                return Ok(Handshake::Aborted);
            }
            OPT_LIST if data.is_empty() => {
                // One export, named "" (any name is taken).
                option_reply(s, option, REP_SERVER, &0u32.to_be_bytes())?;
                option_reply(s, option, REP_ACK, &[])?;
            }
            OPT_INFO | OPT_GO => match parse_info_request(&data) {
                Some((name, infos)) => {
                    let mut info = Vec::with_capacity(12);
                    info.extend_from_slice(&INFO_EXPORT.to_be_bytes());
                    info.extend_from_slice(&export.size.to_be_bytes());
                    info.extend_from_slice(&export.flags.to_be_bytes());
                    option_reply(s, option, REP_INFO, &info)?;
                    if infos.contains(&INFO_BLOCK_SIZE) {
                        let mut sizes = Vec::with_capacity(14);
                        sizes.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
                        sizes.extend_from_slice(&1u32.to_be_bytes());
                        sizes.extend_from_slice(&PREFERRED_BLOCK.to_be_bytes());
                        sizes.extend_from_slice(&MAX_REQUEST_BYTES.to_be_bytes());
                        option_reply(s, option, REP_INFO, &sizes)?;
                    }
                    option_reply(s, option, REP_ACK, &[])?;
                    if option == OPT_GO {
                        s.flush()?;
                        return Ok(Handshake::Export(name));
                    }
                }
                None => option_reply(s, option, REP_ERR_INVALID, &[])?,
            },
            OPT_LIST => option_reply(s, option, REP_ERR_INVALID, &[])?,
            // STARTTLS, STRUCTURED_REPLY, meta contexts, extended headers...
            _ => option_reply(s, option, REP_ERR_UNSUP, &[])?,
        }
        s.flush()?;
    }
    Err(invalid(format!(
        "more than {MAX_OPTIONS} options without choosing an export"
    )))
}

/// A request header of the transmission phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub flags: u16,
    pub kind: u16,
    pub cookie: u64,
    pub offset: u64,
    pub len: u32,
}

/// Reads the next request header; None when the client closed the connection
/// between requests.
pub fn read_request(r: &mut impl Read) -> io::Result<Option<Request>> {
    let mut b = [0u8; 28];
    match r.read_exact(&mut b[..4]) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    r.read_exact(&mut b[4..])?;
    let magic = u32::from_be_bytes(b[0..4].try_into().unwrap());
    if magic != REQUEST_MAGIC {
        return Err(invalid(format!("a request with magic {magic:#010x}")));
    }
    Ok(Some(Request {
        flags: u16::from_be_bytes(b[4..6].try_into().unwrap()),
        kind: u16::from_be_bytes(b[6..8].try_into().unwrap()),
        cookie: u64::from_be_bytes(b[8..16].try_into().unwrap()),
        offset: u64::from_be_bytes(b[16..24].try_into().unwrap()),
        len: u32::from_be_bytes(b[24..28].try_into().unwrap()),
    }))
}

/// Writes a simple reply (its data only without an error).
pub fn write_reply(w: &mut impl Write, error: u32, cookie: u64, data: &[u8]) -> io::Result<()> {
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    h[4..8].copy_from_slice(&error.to_be_bytes());
    h[8..16].copy_from_slice(&cookie.to_be_bytes());
    w.write_all(&h)?;
    if error == 0 {
        w.write_all(data)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A byte stream: what the client sends, and what the server wrote.
    struct Duplex {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Duplex {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Duplex {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn option(kind: u32, data: &[u8]) -> Vec<u8> {
        let mut m = IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        m
    }

    const EXPORT: Export = Export {
        size: 1 << 30,
        flags: FLAG_HAS_FLAGS | FLAG_SEND_FLUSH,
    };

    fn run(client: Vec<u8>) -> (io::Result<Handshake>, Vec<u8>) {
        let mut d = Duplex {
            input: Cursor::new(client),
            output: Vec::new(),
        };
        let h = handshake(&mut d, &EXPORT);
        (h, d.output)
    }

    #[test]
    fn export_name_gets_size_and_flags_without_zeroes_when_asked() {
        let mut c = (CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES)
            .to_be_bytes()
            .to_vec();
        c.extend(option(OPT_EXPORT_NAME, b"disk"));
        let (h, out) = run(c);
        assert_eq!(h.unwrap(), Handshake::Export("disk".into()));
        assert_eq!(&out[..8], b"NBDMAGIC");
        assert_eq!(&out[8..16], b"IHAVEOPT");
        assert_eq!(u16::from_be_bytes([out[16], out[17]]), 3);
        assert_eq!(out.len(), 18 + 10);
        assert_eq!(u64::from_be_bytes(out[18..26].try_into().unwrap()), 1 << 30);
        // The old client's 124 zero bytes.
        let mut c = CLIENT_FIXED_NEWSTYLE.to_be_bytes().to_vec();
        c.extend(option(OPT_EXPORT_NAME, b""));
        assert_eq!(run(c).1.len(), 18 + 10 + 124);
    }

    #[test]
    fn go_answers_info_then_ack_and_refuses_what_it_does_not_do() {
        let mut c = (CLIENT_FIXED_NEWSTYLE | CLIENT_NO_ZEROES)
            .to_be_bytes()
            .to_vec();
        c.extend(option(8, b"")); // STRUCTURED_REPLY
        let mut go = 0u32.to_be_bytes().to_vec();
        go.extend_from_slice(&1u16.to_be_bytes());
        go.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        c.extend(option(OPT_GO, &go));
        let (h, out) = run(c);
        assert_eq!(h.unwrap(), Handshake::Export(String::new()));
        let mut at = 18;
        let mut replies = Vec::new();
        while at < out.len() {
            let kind = u32::from_be_bytes(out[at + 12..at + 16].try_into().unwrap());
            let len = u32::from_be_bytes(out[at + 16..at + 20].try_into().unwrap()) as usize;
            replies.push((kind, out[at + 20..at + 20 + len].to_vec()));
            at += 20 + len;
        }
        assert_eq!(replies[0].0, REP_ERR_UNSUP);
        assert_eq!(replies[1].0, REP_INFO);
        assert_eq!(&replies[1].1[2..10], &(1u64 << 30).to_be_bytes());
        assert_eq!(replies[2].0, REP_INFO);
        assert_eq!(&replies[2].1[10..14], &MAX_REQUEST_BYTES.to_be_bytes());
        assert_eq!(replies[3], (REP_ACK, vec![]));
    }

    #[test]
    fn hostile_handshakes_end_with_an_error_not_a_hang() {
        // A huge option length is refused before anything is allocated.
        let mut c = 1u32.to_be_bytes().to_vec();
        c.extend_from_slice(&IHAVEOPT.to_be_bytes());
        c.extend_from_slice(&OPT_GO.to_be_bytes());
        c.extend_from_slice(&u32::MAX.to_be_bytes());
        assert!(run(c).0.is_err());
        // Unknown client flags; a wrong magic; a truncated option.
        assert!(run(0x80u32.to_be_bytes().to_vec()).0.is_err());
        let mut c = 1u32.to_be_bytes().to_vec();
        c.extend_from_slice(&[0; 16]);
        assert!(run(c).0.is_err());
        let mut c = 1u32.to_be_bytes().to_vec();
        c.extend(option(OPT_GO, b"\0\0\0\x09abc"));
        assert!(run(c).0.is_err());
        // A client that hangs up at once.
        assert_eq!(run(Vec::new()).0.unwrap(), Handshake::Aborted);
        let mut c = 1u32.to_be_bytes().to_vec();
        c.extend(option(OPT_ABORT, b""));
        assert_eq!(run(c).0.unwrap(), Handshake::Aborted);
    }

    #[test]
    fn requests_and_replies_round_trip() {
        let mut m = REQUEST_MAGIC.to_be_bytes().to_vec();
        m.extend_from_slice(&CMD_FLAG_FUA.to_be_bytes());
        m.extend_from_slice(&CMD_WRITE.to_be_bytes());
        m.extend_from_slice(&7u64.to_be_bytes());
        m.extend_from_slice(&4096u64.to_be_bytes());
        m.extend_from_slice(&512u32.to_be_bytes());
        let r = read_request(&mut Cursor::new(m)).unwrap().unwrap();
        assert_eq!(
            r,
            Request {
                flags: CMD_FLAG_FUA,
                kind: CMD_WRITE,
                cookie: 7,
                offset: 4096,
                len: 512
            }
        );
        assert_eq!(read_request(&mut Cursor::new(Vec::new())).unwrap(), None);
        assert!(read_request(&mut Cursor::new(vec![0; 28])).is_err());
        let mut out = Vec::new();
        write_reply(&mut out, 0, 9, b"data").unwrap();
        write_reply(&mut out, EIO, 10, b"ignored").unwrap();
        assert_eq!(out.len(), 16 + 4 + 16);
        assert_eq!(&out[0..4], &SIMPLE_REPLY_MAGIC.to_be_bytes());
        assert_eq!(&out[24..28], &EIO.to_be_bytes());
    }
}
