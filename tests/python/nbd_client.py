"""A minimal NBD client for the tests (fixed newstyle handshake, NBD_OPT_EXPORT_NAME, simple replies):
enough to pipeline writes, FUA and FLUSH and to see exactly which commands were acknowledged."""

from __future__ import annotations

import socket
import struct

NBDMAGIC = b"NBDMAGIC"
IHAVEOPT = 0x49484156454F5054
OPT_EXPORT_NAME = 1
FLAG_C_FIXED_NEWSTYLE = 1
FLAG_C_NO_ZEROES = 2
REQUEST_MAGIC = 0x25609513
REPLY_MAGIC = 0x67446698
CMD_READ, CMD_WRITE, CMD_DISC, CMD_FLUSH = 0, 1, 2, 3
CMD_FLAG_FUA = 1


class Closed(Exception):
    """The server closed the connection (a power cut drops every connection)."""


class Client:
    def __init__(self, path: str, timeout: float = 30.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        magic, opt, flags = struct.unpack(">8sQH", self._exact(18))
        assert magic == NBDMAGIC and opt == IHAVEOPT, (magic, opt)
        self.sock.sendall(struct.pack(">I", FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES))
        self.sock.sendall(struct.pack(">QII", IHAVEOPT, OPT_EXPORT_NAME, 0))
        self.size, self.flags = struct.unpack(">QH", self._exact(10))
        self.cookie = 0

    def _exact(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            try:
                got = self.sock.recv(n - len(out))
            except (ConnectionError, OSError) as e:
                raise Closed(str(e)) from e
            if not got:
                raise Closed("end of stream")
            out += got
        return bytes(out)

    def request(self, kind: int, offset: int, length: int, data: bytes = b"", flags: int = 0) -> bytes:
        """A request's bytes, with the next cookie."""
        self.cookie += 1
        return struct.pack(">IHHQQI", REQUEST_MAGIC, flags, kind, self.cookie, offset, length) + data

    def send(self, kind: int, offset: int, length: int, data: bytes = b"", flags: int = 0) -> int:
        """Sends a request; returns its cookie."""
        self.send_bytes(self.request(kind, offset, length, data, flags))
        return self.cookie

    def send_bytes(self, requests: bytes) -> None:
        """Sends requests made by ``request`` (several at once: one write)."""
        try:
            self.sock.sendall(requests)
        except (ConnectionError, OSError) as e:
            raise Closed(str(e)) from e

    def reply(self, read_length: int = 0) -> tuple[int, int, bytes]:
        """The next reply: (cookie, error, data); a read's data is read_length bytes."""
        magic, error, cookie = struct.unpack(">IIQ", self._exact(16))
        assert magic == REPLY_MAGIC, hex(magic)
        data = self._exact(read_length) if read_length and not error else b""
        return cookie, error, data

    def read(self, offset: int, length: int) -> bytes:
        self.send(CMD_READ, offset, length)
        _, error, data = self.reply(length)
        assert error == 0, error
        return data

    def close(self) -> None:
        try:
            self.send(CMD_DISC, 0, 0)
        except Closed:
            pass
        self.sock.close()
