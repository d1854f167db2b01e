"""``nandlab serve`` with real clients from Debian's packages (``scripts/test-all`` installs them):
fio's ``nbd`` engine writing and verifying, ``qemu-img`` writing an image and comparing it byte for
byte, ``qemu-io`` reading TRIM and WRITE_ZEROES back as zeroes, ``nbdinfo`` over TCP; the server
stopped by SIGINT, SIGTERM or ``--once``, writing a run's results and its connections."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

def need(*programs: str) -> None:
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (scripts/test-all installs Debian's packages)")


DRIVE = ("snia-mlc", "--capacity", "1GiB")


@contextmanager
def serving(tmp_path: Path, *args: str, stop: int | None = signal.SIGINT,
            drive: tuple[str, ...] = DRIVE) -> Iterator[tuple[str, subprocess.Popen]]:
    """``nandlab serve snia-mlc --capacity 1GiB ARGS --out tmp/out``: yields its URI and process; then
    stops it with ``stop`` (None: waits for it to stop by itself) and checks that it exits 0."""
    command = [sys.executable, "-m", "nandlab", "serve", *drive, "--out", str(tmp_path / "out"), *args]
    if "--port" not in args and not any(a.startswith("--socket") for a in args):
        command += ["--socket", str(tmp_path / "drive.sock")]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "COLUMNS": "200"})
    try:
        line = server.stderr.readline()
        assert " at nbd" in line, line + server.stderr.read()
        yield line.split(" at ", 1)[1].split(" ", 1)[0], server
        if stop is not None:
            server.send_signal(stop)
        out, err = server.communicate(timeout=60)
        assert server.returncode == 0, err
        server.output = out  # what it printed: its table, or with --json its document
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def silent_connections(path: Path, count: int) -> list:
    """``count`` unix-socket connections to ``path`` that never send a byte (the caller closes them)."""
    import socket as sockets

    connections = []
    for _ in range(count):
        s = sockets.socket(sockets.AF_UNIX)
        s.connect(str(path))
        connections.append(s)
    return connections


def results(tmp_path: Path) -> tuple[dict, list[dict]]:
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    with (tmp_path / "out" / "connections.csv").open() as f:
        return summary, list(csv.DictReader(f))


def test_fio_writes_random_data_and_verifies_it(tmp_path: Path) -> None:
    need("fio")
    with serving(tmp_path, "--timing", "fast") as (uri, _):
        fio = subprocess.run(["fio", "--name=verify", "--ioengine=nbd", f"--uri={uri}", "--rw=randwrite",
                              "--bs=4k", "--size=32m", "--iodepth=16", "--verify=crc32c", "--do_verify=1",
                              "--output-format=json"], capture_output=True, text=True, timeout=120,
                             cwd=tmp_path)  # fio leaves its verify state in the working directory
        assert fio.returncode == 0, fio.stderr
        job = json.loads(fio.stdout[fio.stdout.index("{"):])["jobs"][0]
        assert job["error"] == 0 and job["write"]["io_bytes"] == 32 << 20 and job["read"]["io_bytes"] == 32 << 20
    summary, connections = results(tmp_path)
    served = summary["phases"][-1]
    assert served["name"] == "serve" and served["kind"] == "serve"
    assert served["host_write_bytes"] == 32 << 20 and served["host_read_bytes"] == 32 << 20
    assert served["integrity"]["checked_reads"] > 0
    assert sum(int(c["writes"]) for c in connections) == 8192
    report = (tmp_path / "out" / "report.html").read_text()
    assert "served drive" in report and "Client connections" in report


def test_qemu_img_writes_an_image_that_reads_back_byte_for_byte(tmp_path: Path) -> None:
    need("qemu-img")
    image = tmp_path / "disk.img"
    image.write_bytes(os.urandom(3 << 20) + bytes(1 << 20) + os.urandom((4 << 20) - 4096))
    with serving(tmp_path, "--timing", "fast") as (uri, _):
        for args in (["convert", "-n", "-f", "raw", "-O", "raw", str(image), uri],
                     ["compare", "-f", "raw", "-F", "raw", str(image), uri]):
            done = subprocess.run(["qemu-img", *args], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stdout + done.stderr
        # A changed byte is found.
        changed = bytearray(image.read_bytes())
        changed[12345] ^= 0xFF
        image.write_bytes(bytes(changed))
        done = subprocess.run(["qemu-img", "compare", "-f", "raw", "-F", "raw", str(image), uri],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "mismatch at offset 12288" in done.stdout, done.stdout


def test_a_snapshot_keeps_the_drive_and_its_data_between_sessions(tmp_path: Path) -> None:
    need("qemu-img")
    image, kept = tmp_path / "disk.img", tmp_path / "drive.nls"
    image.write_bytes(os.urandom(2 << 20) + bytes(1 << 20) + os.urandom(1 << 20))
    convert = ["convert", "-n", "-f", "raw", "-O", "raw", str(image)]
    compare = ["compare", "-f", "raw", "-F", "raw", str(image)]
    # The shipped volatile-cache drive, with the power model (--control) kept in the file between sessions.
    volatile = (str(Path(__file__).resolve().parents[2] / "examples" / "volatile-drive.toml"),)
    control = ("--control", str(tmp_path / "control.sock"))
    for session, (drive, args) in enumerate([(volatile, convert), ((), compare), ((), compare)], start=1):
        with serving(tmp_path, "--timing", "fast", "--snapshot", str(kept), *control, drive=drive) as (uri, server):
            done = subprocess.run(["qemu-img", *args, uri], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stdout + done.stderr
        assert f"saved to {kept} (session {session}" in server.output.replace("\n", " ")
        summary, _ = results(tmp_path)
        # The drive goes on: its host writes so far are the first session's, every time.
        assert summary["host_write_bytes"] >= 3 << 20
        assert summary["phases"][-1]["served_session"] == session
    assert (tmp_path / "out" / "report.html").exists()
    # Another drive, a file that is not a served drive, nothing to serve: one-line errors, nothing overwritten.
    (tmp_path / "notes.txt").write_text("mine")
    for args, message in [(["snia-slc", "--snapshot", str(kept)], "built from another config"),
                          (["snia-mlc", "--snapshot", "notes.txt"], "is not a served nandlab drive"),
                          (["--snapshot", "missing.nls"], "give a CONFIG or PRESET")]:
        done = subprocess.run([sys.executable, "-m", "nandlab", "serve", *args, "--socket", "x.sock"],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.startswith("nandlab: error:") and message in done.stderr, \
            done.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_trim_and_write_zeroes_read_back_as_zeroes(tmp_path: Path) -> None:
    need("qemu-io")
    with serving(tmp_path, stop=signal.SIGTERM) as (uri, _):
        commands = ["write -P 0xab 0 1M", "discard 0 256k", "write -z 512k 64k", "write -z -u 768k 4k",
                    "flush", "read -P 0 0 256k", "read -P 0xab 256k 256k", "read -P 0 512k 64k",
                    "read -P 0xab 576k 192k", "read -P 0 768k 4k", "read -P 0xab 772k 252k"]
        io = subprocess.run(["qemu-io", "-f", "raw", uri, *(a for c in commands for a in ("-c", c))],
                            capture_output=True, text=True, timeout=120)
        assert io.returncode == 0 and "fail" not in io.stdout.lower(), io.stdout + io.stderr
    _, connections = results(tmp_path)
    assert sum(int(c["trims"]) for c in connections) >= 1
    assert sum(int(c["write_zeroes"]) + int(c["trims"]) for c in connections) >= 3


def test_tcp_on_loopback_and_once(tmp_path: Path) -> None:
    need("nbdinfo")
    with serving(tmp_path, "--port", "0", "--once", "--json", stop=None) as (uri, server):
        assert uri.startswith("nbd://127.0.0.1:")
        info = subprocess.run(["nbdinfo", "--json", uri], capture_output=True, text=True, timeout=60)
        assert info.returncode == 0, info.stderr
        export = json.loads(info.stdout)["exports"][0]
        assert export["export-size"] == 1 << 30
        assert export["can_trim"] and export["can_zero"] and export["can_flush"] and export["can_fua"]
    document = json.loads(server.output)
    assert document["phases"][-1]["name"] == "serve" and document["connections"][0]["client"].startswith("127.0.0.1:")
    summary, connections = results(tmp_path)
    assert len(connections) >= 1 and summary["phases"][-1]["name"] == "serve"


@pytest.mark.parametrize("args, message", [
    (["--socket", "a.sock", "--port", "1"], "either a unix socket path or a TCP port"),
    ([], "either a unix socket path or a TCP port"),
    (["--socket", "not-a-socket.txt"], "exists and is not a socket"),
    (["--socket", "a.sock", "--client-overhead", "soon"], "--client-overhead: expected auto or a time"),
])
def test_bad_options_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "not-a-socket.txt").write_text("data")
    done = subprocess.run([sys.executable, "-m", "nandlab", "serve", "snia-mlc", "--capacity", "1GiB", *args],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("nandlab: error:") and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and (tmp_path / "not-a-socket.txt").read_text() == "data"


def test_a_power_cut_mid_stream_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    """qemu-img writes an image (acknowledged and flushed), then starts on another; a cut from the
    control socket drops it mid-stream. With the default power-loss-protected cache nothing
    acknowledged is lost: every 4 KiB unit reads as the first image's or the second's."""
    need("qemu-img")
    import socket as sockets
    import time

    block = 4096  # the drive's mapping unit: a write cut short may be torn between units, never inside one
    # The second image takes the SATA-300 drive about 1.7 s: the cut at 0.5 s comes mid-stream.
    first, second = os.urandom(16 << 20) + bytes(240 << 20), os.urandom(256 << 20)
    (tmp_path / "first.img").write_bytes(first)
    (tmp_path / "second.img").write_bytes(second)
    control = tmp_path / "control.sock"
    with serving(tmp_path, "--control", str(control)) as (uri, _):
        convert = ["qemu-img", "convert", "-n", "-f", "raw", "-O", "raw"]
        done = subprocess.run([*convert, str(tmp_path / "first.img"), uri], capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr
        writer = subprocess.Popen([*convert, str(tmp_path / "second.img"), uri], stderr=subprocess.PIPE)
        time.sleep(0.5)
        with sockets.socket(sockets.AF_UNIX) as s:
            s.connect(str(control))
            s.sendall(b"cut\n")
            answer = json.loads(s.makefile().readline())
        assert writer.wait(timeout=60) != 0, "the cut came after the second image was written"
        assert answer["acknowledged_lost_units"] == 0 and answer["unknown_units"] == 0, answer
        back = tmp_path / "back.img"
        done = subprocess.run(["qemu-img", "convert", "-f", "raw", "-O", "raw", uri, str(back)],
                              capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr
        data = back.read_bytes()[: len(first)]
        for at in range(0, len(first), block):
            got = data[at:at + block]
            assert got in (first[at:at + block], second[at:at + block]), f"unit at {at} reads neither image"
    summary, connections = results(tmp_path)
    cuts = summary["phases"][-1]["served_power_cuts"]
    assert len(cuts) == 1 and cuts[0]["connections_dropped"] >= 1
    assert any(c["end"] == "power cut" for c in connections)


def test_a_planned_power_cut_in_fast_timing_comes_at_its_simulated_time(tmp_path: Path) -> None:
    need("qemu-img")
    image = tmp_path / "disk.img"
    image.write_bytes(os.urandom(64 << 20))
    with serving(tmp_path, "--timing", "fast", "--power-cut-at", "50ms") as (uri, _):
        done = subprocess.run(["qemu-img", "convert", "-n", "-f", "raw", "-O", "raw", str(image), uri],
                              capture_output=True, timeout=120)
        assert done.returncode != 0  # 64 MiB take the SATA-300 drive longer than 50 ms: cut short
    summary, _ = results(tmp_path)
    served = summary["phases"][-1]
    (cut,) = served["served_power_cuts"]
    assert 0.05 <= cut["at_seconds"] < 0.1 and cut["acknowledged_lost_units"] == 0
    assert served["power_loss"]["cuts"] == 1


# A realtime reply may go out only for a command the drive completed before any power cut that is
# decided: each write-cache design, in both timings, with a client that records every write it was
# promised (issue 37). (design, write_cache, client options, queue depth, how a write is promised)
PROMISE_DESIGNS = [
    ("write-through", "off", (), 1, "reply"),
    ("write-through, client overhead 500us", "off", ("--client-overhead", "500us"), 1, "reply"),
    ("volatile cache, every write FUA", "volatile", (), 16, "fua"),
    ("volatile cache, FLUSH after every write", "volatile", (), 1, "flush"),
    ("power-loss protection", "plp", (), 16, "reply"),
]


def _promised_writes(path: str, first: int, promise: str, depth: int, seed: int) -> list[tuple[int, bytes]]:
    """Writes 4 KiB units at distinct random offsets from unit ``first`` on until the connection drops;
    returns every (offset, data) the drive promised to keep."""
    import random

    from nbd_client import CMD_FLAG_FUA, CMD_FLUSH, CMD_WRITE, Client, Closed

    rng = random.Random(seed)
    units = list(range(first, first + 4096))
    rng.shuffle(units)
    kept: list[tuple[int, bytes]] = []
    flying: dict[int, tuple[int, bytes]] = {}
    c = Client(path)
    try:
        for unit in units:
            data = rng.randbytes(4096)
            flags = CMD_FLAG_FUA if promise == "fua" else 0
            flying[c.send(CMD_WRITE, unit * 4096, 4096, data, flags)] = (unit * 4096, data)
            while len(flying) >= depth:
                cookie, error, _ = c.reply()
                assert error == 0, error
                written = flying.pop(cookie)
                if promise == "flush":
                    c.send(CMD_FLUSH, 0, 0)
                    _, error, _ = c.reply()
                    assert error == 0, error
                kept.append(written)
    except Closed:
        pass
    return kept


@pytest.mark.parametrize("timing", ["realtime", "fast"])
@pytest.mark.parametrize("design", PROMISE_DESIGNS, ids=[d[0] for d in PROMISE_DESIGNS])
def test_no_power_cut_loses_a_write_the_client_was_promised(tmp_path: Path, design: tuple, timing: str) -> None:
    import socket as sockets
    import threading
    import time

    from nbd_client import Client

    _, cache, options, depth, promise = design
    config = tmp_path / "drive.toml"
    config.write_text(f'[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\nwrite_cache = "{cache}"\n')
    control = tmp_path / "control.sock"
    with serving(tmp_path, "--control", str(control), "--timing", timing, *options,
                 drive=(str(config),)) as (uri, _):
        path = uri.split("socket=", 1)[1]
        for cut in range(4):
            kept: list[tuple[int, bytes]] = []
            writer = threading.Thread(target=lambda: kept.extend(
                _promised_writes(path, cut * 4096, promise, depth, seed=cut)))
            writer.start()
            time.sleep(0.15 + 0.05 * cut)
            with sockets.socket(sockets.AF_UNIX) as s:
                s.connect(str(control))
                s.sendall(b"cut\n")
                answer = json.loads(s.makefile().readline())
            writer.join(timeout=60)
            assert not writer.is_alive()
            if promise == "reply":
                # Every completion is a promise here; behind a volatile cache the drive completes writes
                # it has not promised to keep (the server counts those as acknowledged by the drive).
                assert answer["acknowledged_lost_units"] == 0, answer
            assert kept, "no write was promised before the cut"
            reader = Client(path)
            lost = [offset for offset, data in kept if reader.read(offset, 4096) != data]
            reader.close()
            assert not lost, f"cut {cut}: {len(lost)} of {len(kept)} promised writes lost, first at {lost[0]}"


def test_a_stop_ends_thousands_of_planned_cuts(tmp_path: Path) -> None:
    """25,000 cuts due at once took the server 45 s to work through after SIGTERM: a stop ends them
    (10,000 now, the most --power-cut-at takes)."""
    import time

    with serving(tmp_path, "--power-cut-at", ",".join(["0"] * 10_000), "--timing", "fast",
                 stop=None) as (_, server):
        time.sleep(0.5)
        server.send_signal(signal.SIGTERM)
        began = time.monotonic()
        server.wait(timeout=60)
        assert time.monotonic() - began < 10


def test_unknown_command_flags_are_refused(tmp_path: Path) -> None:
    """FUA goes with any command and NO_HOLE with WRITE_ZEROES; any other flag gets EINVAL."""
    from nbd_client import CMD_FLAG_FUA, CMD_READ, CMD_WRITE, Client

    with serving(tmp_path, "--timing", "fast") as (uri, _):
        c = Client(uri.split("socket=", 1)[1])
        for kind, flags, error in [(CMD_READ, 0xFFFF, 22), (CMD_READ, 2, 22), (CMD_READ, CMD_FLAG_FUA, 0),
                                   (6, 2, 0), (6, 4, 22), (CMD_WRITE, 2, 22)]:
            data = bytes(4096) if kind == CMD_WRITE else b""
            c.send(kind, 0, 4096, data, flags)
            _, got, _ = c.reply(4096 if kind == CMD_READ else 0)
            assert got == error, (kind, flags, got)
        c.close()


def test_the_server_s_files_must_be_distinct_regular_files(tmp_path: Path) -> None:
    """``--socket P --snapshot P`` saved the drive, then the socket's cleanup deleted it; a FIFO as the
    snapshot blocked the server for good, deaf to SIGINT and SIGTERM."""
    import time

    same = tmp_path / "drive"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for args in (["--socket", str(same), "--snapshot", str(same)],
                 ["--socket", str(tmp_path / "s"), "--control", str(tmp_path / "s")],
                 ["--socket", str(tmp_path / "s"), "--snapshot", str(fifo)]):
        began = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "nandlab", "serve", *DRIVE, *args], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2 and done.stderr.startswith("nandlab: error:"), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and time.monotonic() - began < 30
    assert not same.exists()


def test_control_connections_never_delay_clients_or_a_stop(tmp_path: Path) -> None:
    """20 silent control connections delayed a new client's hello by 20 s, and a control client sending a
    byte every 0.9 s delayed SIGTERM by half a minute: the control socket has a thread of its own."""
    import socket as sockets
    import time

    from nbd_client import Client

    control = tmp_path / "control.sock"
    with serving(tmp_path, "--control", str(control), stop=None) as (uri, server):
        silent = silent_connections(control, 20)
        began = time.monotonic()
        Client(uri.split("socket=", 1)[1]).close()
        assert time.monotonic() - began < 10  # not 20 s: the bound is wide for a loaded machine
        slow = sockets.socket(sockets.AF_UNIX)
        slow.connect(str(control))
        slow.sendall(b"c")
        server.send_signal(signal.SIGTERM)
        began = time.monotonic()
        server.wait(timeout=60)
        assert time.monotonic() - began < 15  # not half a minute (it took 3.04 s on a loaded CI machine)
        for s in [*silent, slow]:
            s.close()


def test_pipelined_large_reads_wait_instead_of_filling_memory(tmp_path: Path) -> None:
    """96 pipelined 32 MiB READ headers (2,688 bytes sent) took the server from 113 MiB to 3.2 GiB: a
    connection runs no READ whose reply would take its unsent replies past 256 MiB; the client waits."""
    from nbd_client import CMD_READ, Client

    def peak_mib(pid: int) -> float:
        status = Path(f"/proc/{pid}/status").read_text()
        return int(status.split("VmHWM:")[1].split()[0]) / 1024

    with serving(tmp_path, "--timing", "fast") as (uri, server):
        c = Client(uri.split("socket=", 1)[1])
        c.read(0, 4096)
        before = peak_mib(server.pid)
        reads = 96  # 3 GiB of replies asked for in one write
        c.send_bytes(b"".join(c.request(CMD_READ, i * (32 << 20) % (1 << 30), 32 << 20) for i in range(reads)))
        import time
        time.sleep(1.0)
        grown = peak_mib(server.pid) - before
        for _ in range(reads):
            _, error, data = c.reply(32 << 20)
            assert error == 0 and len(data) == 32 << 20
        # And while the client reads its replies as they come (the sent ones are let go).
        c.send_bytes(b"".join(c.request(CMD_READ, i * (32 << 20) % (1 << 30), 32 << 20) for i in range(reads)))
        for _ in range(reads):
            _, error, data = c.reply(32 << 20)
            assert error == 0 and len(data) == 32 << 20
        drained = peak_mib(server.pid) - before
        c.close()
        assert grown < 600 and drained < 600, f"the server grew by {grown:.0f} MiB, {drained:.0f} MiB read as it came"


def test_stalled_handshakes_time_out_and_idle_connections_close(tmp_path: Path) -> None:
    """Connections that never finished the handshake locked everyone else out: each step of a handshake
    has 10 s, the limit is --max-connections, and --idle-timeout closes a connection left idle."""
    import socket as sockets
    import time

    from nbd_client import Client, Closed

    with serving(tmp_path, "--max-connections", "2", "--idle-timeout", "500ms") as (uri, _):
        path = uri.split("socket=", 1)[1]
        stalled = []
        for _ in range(2):
            s = sockets.socket(sockets.AF_UNIX)
            s.connect(path)
            stalled.append(s)
        time.sleep(0.5)
        with pytest.raises(Closed):
            Client(path, timeout=5)  # over the limit: closed at once
        time.sleep(11)  # the stalled handshakes have timed out
        c = Client(path)
        c.read(0, 4096)
        time.sleep(1.5)  # idle past the timeout
        with pytest.raises(Closed):
            c.read(0, 4096)
        for s in stalled:
            s.close()
    _, connections = results(tmp_path)
    ends = [c["end"] for c in connections]
    assert ends.count("idle") == 1 and sum(e.startswith("handshake") for e in ends) == 2, ends


def test_two_servers_never_serve_the_same_snapshot(tmp_path: Path) -> None:
    """Two servers could load the same --snapshot file; the one that stopped last overwrote the other's
    session. The file is held while served: a second server is refused."""
    drive = tmp_path / "drive.nandlab"
    with serving(tmp_path, "--snapshot", str(drive)):
        done = subprocess.run([sys.executable, "-m", "nandlab", "serve", *DRIVE, "--socket", str(tmp_path / "b"),
                               "--snapshot", str(drive)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "another nandlab server is serving it" in done.stderr, done.stderr
    assert drive.exists() and not (tmp_path / ".drive.nandlab.lock").exists()


def test_late_replies_are_flagged() -> None:
    """On a loaded machine realtime replies go out late and the client measures the host: the table
    says so for a connection whose mean lateness passes a tenth of its simulated latency (and 20 µs)."""
    from nandlab.procedures.serve import late_connections

    conns = [{"id": 1, "late_us_mean": 5.0, "sim_latency_us_mean": 100.0},
             {"id": 2, "late_us_mean": 30.0, "sim_latency_us_mean": 100.0},
             {"id": 3, "late_us_mean": 30.0, "sim_latency_us_mean": 1000.0},
             {"id": 4, "late_us_mean": 15.0, "sim_latency_us_mean": 50.0}]
    assert [c["id"] for c in late_connections(conns)] == [2]


def test_a_served_drive_s_notes_are_checked_as_input() -> None:
    """Altered notes with a valid checksum reached Python as tracebacks (RecursionError, TypeError, ...), or
    served, re-saved and then failed: they are checked when the drive is opened."""
    from nandlab.procedures.serve import _notes

    good = {"phases": [{"iops": 1.0}], "timeseries": [{"phase": [0, 0], "iops": [1.0, None]}],
            "config": {"device": {}}, "session": 1}
    assert _notes(json.dumps(good))[3] == 2
    altered = [
        "[" * 100_000 + "]" * 100_000,
        json.dumps({**good, "session": 2**40}),
        json.dumps({**good, "session": True}),
        json.dumps({**good, "config": []}),
        json.dumps({**good, "phases": [1]}),
        json.dumps({**good, "timeseries": []}),
        json.dumps({**good, "timeseries": [{"phase": [0], "iops": [1.0, 2.0]}]}),
        json.dumps({**good, "timeseries": [{"phase": [0, 0], "iops": [[1], 2.0]}]}),
        json.dumps({k: v for k, v in good.items() if k != "config"}),
    ]
    for text in altered:
        with pytest.raises((ValueError, KeyError, TypeError, RecursionError)):
            _notes(text)


def test_a_snapshot_is_held_whatever_name_it_is_given(tmp_path: Path) -> None:
    """The lock was keyed to the name given: a symlink or a hard link elsewhere served the same drive from a
    second server, and serving through a symlink replaced the link instead of updating the drive."""
    drive = tmp_path / "drive.nandlab"
    with serving(tmp_path, "--snapshot", str(drive)):
        pass
    other = tmp_path / "other"
    other.mkdir()
    (other / "symlink.nandlab").symlink_to(drive)
    os.link(drive, other / "hard.nandlab")
    with serving(tmp_path, "--snapshot", str(drive)):
        for name in ("symlink.nandlab", "hard.nandlab"):
            done = subprocess.run([sys.executable, "-m", "nandlab", "serve", "--socket", str(other / "s"),
                                   "--snapshot", str(other / name)], capture_output=True, text=True, timeout=60)
            assert done.returncode == 2 and "another nandlab server is serving it" in done.stderr, done.stderr
    with serving(tmp_path, "--snapshot", str(other / "symlink.nandlab")):
        pass
    assert (other / "symlink.nandlab").is_symlink()


def test_a_data_file_holds_more_than_memory_and_a_snapshot_keeps_it(tmp_path: Path) -> None:
    """The served bytes lived in memory: under NANDLAB_MEMORY_LIMIT=256MiB writes to new places failed with
    ENOSPC. ``--data PATH`` holds them in a sparse file; ``--snapshot`` keeps that file by reference."""
    need("fio")
    data, kept = tmp_path / "data.img", tmp_path / "drive.nls"
    fio = ["fio", "--name=big", "--ioengine=nbd", "--rw=randwrite", "--bs=128k", "--size=384m", "--iodepth=8",
           "--verify=crc32c", "--output-format=json"]

    def run_fio(uri: str, *args: str) -> dict:
        done = subprocess.run([*fio, f"--uri={uri}", *args], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path)
        return json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]

    limit = {"NANDLAB_MEMORY_LIMIT": "256MiB"}
    old = dict(os.environ)
    os.environ.update(limit)
    try:
        # In memory the data does not fit.
        with serving(tmp_path, "--timing", "fast") as (uri, _):
            assert run_fio(uri, "--do_verify=0")["error"] != 0
        for args in (["--data", str(data)], []):
            with serving(tmp_path, "--timing", "fast", "--snapshot", str(kept), *args,
                         drive=DRIVE if args else ()) as (uri, server):
                job = run_fio(uri, "--do_verify=1" if args else "--verify_only=1")
                assert job["error"] == 0 and job["read"]["io_bytes"] == 384 << 20, job
            assert f"its data in {data}" in server.output.replace("\n", " ")
            # Written in place: the snapshot holds the drive's state, not its data.
            assert kept.stat().st_size < (64 << 20) < data.stat().st_blocks * 512
    finally:
        os.environ.clear()
        os.environ.update(old)
    summary, _ = results(tmp_path)
    assert summary["phases"][-1]["data_file"] == str(data)
    # A data file is never taken over, changed under its snapshot, or one of the server's other files.
    (tmp_path / "mine.img").write_text("mine")
    os.utime(data)
    for args, message in [([*DRIVE, "--data", str(tmp_path / "mine.img")], "exists"),
                          (["--snapshot", str(kept)], "changed after the drive was saved"),
                          ([*DRIVE, "--data", str(kept), "--snapshot", str(kept)], "name the same file")]:
        done = subprocess.run([sys.executable, "-m", "nandlab", "serve", *args, "--socket", "x.sock"],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.startswith("nandlab: error:") and message in done.stderr, \
            done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert (tmp_path / "mine.img").read_text() == "mine"


def test_a_silent_control_connection_never_delays_another_s_stop(tmp_path: Path) -> None:
    """Control connections were answered one at a time, each silent one holding the next for a second (15
    silent ones made a ``stop`` wait 15 s); then 16 at once refused every other. One thread polls them all."""
    import socket as sockets
    import time

    control = tmp_path / "control.sock"

    def say(line: bytes) -> bytes:
        with sockets.socket(sockets.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(str(control))
            s.sendall(line)
            return s.recv(4096)

    with serving(tmp_path, "--control", str(control), stop=None) as (_, server):
        silent = silent_connections(control, 40)
        began = time.monotonic()
        assert b"connections_dropped" in say(b"cut\n")
        assert b"stopping" in say(b"stop\n")
        assert time.monotonic() - began < 10  # 40 silent ones held it 40 s; wide for a loaded machine
        server.wait(timeout=60)
        for s in silent:
            s.close()


def test_cuts_from_outside_need_memory_for_the_power_model(tmp_path: Path) -> None:
    """With a control socket the power model's tables (some 90 bytes a unit) were committed as clients wrote,
    past NANDLAB_MEMORY_LIMIT: a 64 GiB drive grew to 1.6 GB under a 1 GiB limit. They are counted first."""
    done = subprocess.run([sys.executable, "-m", "nandlab", "serve", "snia-mlc", "--capacity", "64GiB", "--socket",
                           str(tmp_path / "s.sock"), "--control", str(tmp_path / "c.sock"), "--data",
                           str(tmp_path / "d.img")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NANDLAB_MEMORY_LIMIT": "1GiB"})
    assert done.returncode == 2 and done.stderr.startswith("nandlab: error: this run needs about"), done.stderr
    assert not (tmp_path / "d.img").exists()


def test_a_huge_write_zeroes_lets_other_clients_in(tmp_path: Path) -> None:
    """A single 4 GiB WRITE_ZEROES with NO_HOLE held the engine for 5.3 s: every other client waited. It runs
    in pieces, other clients' commands between them; the bytes read back as zeroes, the rest is untouched."""
    import threading
    import time

    from nbd_client import CMD_WRITE, Client

    write_zeroes, no_hole = 6, 2
    control = ("--control", str(tmp_path / "control.sock"))  # the power model, and the crash log with it
    with serving(tmp_path, "--timing", "fast", *control, drive=("snia-mlc", "--capacity", "4GiB")) as (uri, _):
        path = uri.split("socket=", 1)[1]
        big, other = Client(path, timeout=120), Client(path)
        big.send(CMD_WRITE, 8192, 4096, b"\x5a" * 4096)
        assert big.reply()[1] == 0
        length = (4 << 30) - 3 * 4096
        big.send(write_zeroes, 4096, length, flags=no_hole)
        answered: list[int] = []
        waiter = threading.Thread(target=lambda: answered.append(big.reply()[1]))
        waiter.start()
        time.sleep(0.2)
        slowest = 0.0
        while waiter.is_alive():
            began = time.monotonic()
            other.read(0, 4096)
            slowest = max(slowest, time.monotonic() - began)
        waiter.join()
        assert answered == [0]
        assert slowest < 0.5, slowest  # 1.3 s before, on an idle machine; a piece takes some 30 ms
        assert big.read(8192, 4096) == bytes(4096)
        other.send(CMD_WRITE, (4 << 30) - 4096, 4096, b"\x77" * 4096)
        assert other.reply()[1] == 0
        assert other.read((4 << 30) - 8192, 8192) == bytes(4096) + b"\x77" * 4096
        big.close()
        other.close()
