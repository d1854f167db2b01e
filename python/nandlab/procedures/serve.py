"""``nandlab serve``: a simulated drive behind an NBD server, so that real programs (fio's ``nbd``
engine, ``qemu-img``, ``qemu-io``, ``nbdcopy``, the kernel's ``nbd-client``) read and write it. The
config's own phases run first (a fill, an ageing); then the drive is served as a phase named
``serve`` until a signal or, with ``once``, the last client's disconnect. Its result is a run's (the
summary, time series and report of ``nandlab run``) plus a table of the client connections."""

from __future__ import annotations

import csv
import dataclasses
import fcntl
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import api, files, qualify
from nandlab._core import ConfigError, Simulator
from nandlab.output import number
from nandlab.procedures.base import Procedure
from nandlab.procedures.run import RunResult, run_report
from nandlab.report.page import Report, read_json
from nandlab.terminal import safe

SERVE_PHASE = "serve"
TIMINGS = ("realtime", "fast")
INTERVAL = "1s"
"""The served phase's time-series interval (simulated time, which runs with the wall clock in
``realtime`` timing)."""


def config_for(device: qualify.DeviceSource, capacity: str | int | None = None) -> dict[str, Any]:
    """The config ``serve`` runs: a preset's drive, or a config file's drive and its phases (they
    run before the drive is served), with a last phase named ``serve``."""
    config = qualify.device_config(device, capacity)
    if not isinstance(device, Mapping) and Path(device).is_file():
        # device_config read the file already: it is valid TOML.
        whole = qualify.tomllib.loads(files.read_text(Path(device), "config file"))
        config = {**{k: v for k, v in whole.items() if k != "phase"}, **config}
        config["phase"] = list(whole.get("phase", []))
    else:
        config["phase"] = []
    # A served phase takes its requests from the clients: its stop condition is never reached.
    config["phase"].append({"name": SERVE_PHASE, "interval": INTERVAL, "requests": 2**62})
    return config


@dataclass(frozen=True)
class ServeResult(RunResult):
    """A served drive's run: ``result`` as ``nandlab run``'s (the last phase is ``serve``), and each
    client connection's figures (``connections``)."""

    kind: str = "serve"

    @property
    def served(self) -> dict[str, Any]:
        return self.result.phases[-1]

    @property
    def connections(self) -> list[dict[str, Any]]:
        return list(self.served.get("connections", []))

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "connections": self.connections}

    def files(self, out: Path) -> list[Path]:
        paths = super().files(out)
        path = out / "connections.csv"
        fields = list(self.connections[0]) if self.connections else ["id"]
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(self.connections)
        return [*paths, path]

    @classmethod
    def report(cls, directory: Path) -> Report:
        return run_report(directory, extra=lambda r: _served_tables(r, directory), kind="served drive")

    def print(self, console: Console) -> None:
        super().print(console)
        table = Table(box=box.SIMPLE_HEAD, title="Client connections", title_justify="left",
                      caption="other: trims, write-zeroes and flushes. sim: the simulated drive's mean latency; wall: "
                              "arrival to reply on the wall clock; late: a realtime reply after its simulated "
                              "completion.", caption_justify="left")
        for header in ("#", "client", "reads", "writes", "other", "errors", "MiB read", "MiB written", "sim µs",
                       "wall µs", "late µs", "end"):
            table.add_column(header, justify="left" if header in ("client", "end") else "right")
        for c in self.connections:
            table.add_row(str(c["id"]), safe(c["client"]), number(c["reads"]), number(c["writes"]),
                          number(c["trims"] + c["write_zeroes"] + c["flushes"]), number(c["errors"]),
                          f"{c['bytes_read'] / 2**20:.1f}", f"{c['bytes_written'] / 2**20:.1f}",
                          *(f"{c[k]:.1f}" for k in ("sim_latency_us_mean", "wall_latency_us_mean", "late_us_mean")),
                          safe(c["end"]))
        if not self.connections:
            console.print("no client connected", style="yellow")
        else:
            console.print(table)
        for c in late_connections(self.connections):
            console.print(safe(f"connection {c['id']}: its replies went out {c['late_us_mean']:.0f} µs late on "
                               f"average against {c['sim_latency_us_mean']:.0f} µs simulated: the client measured "
                               "this machine's load as much as the drive (serve on an idle machine, or read the "
                               "simulated latencies above)"), style="yellow")
        cuts = self.served.get("served_power_cuts", [])
        if cuts:
            table = Table(box=box.SIMPLE_HEAD, title="Power cuts", title_justify="left",
                          caption="s: simulated seconds from the start of serving. lost, acked: units of writes the "
                                  "client had a reply for but had neither sent with FUA nor flushed — a volatile write "
                                  "cache may lose them, as NBD allows; a FUA or flushed write is never among them. lost, "
                                  "in flight: units of writes not yet replied to. reverted: units of the served data put "
                                  "back to what the drive kept; unknown: units whose kept version the server no longer "
                                  "held (they read as EIO).", caption_justify="left")
            for header in ("at s", "ready s", "lost, acked", "lost, in flight", "reverted", "unknown", "dropped"):
                table.add_column(header, justify="right")
            for c in cuts:
                table.add_row(f"{c['at_seconds']:.3f}", f"{c['ready_seconds']:.3f}",
                              *(number(c[k]) for k in ("acknowledged_lost_units", "unacknowledged_lost_units",
                                                       "reverted_units", "unknown_units", "connections_dropped")))
            console.print(table)
        if self.served.get("failure"):
            console.print(safe(f"the simulation stopped the server: {self.served['failure']}"), style="red")
        kept = self.served.get("data_file")
        if self.served.get("snapshot") and not self.served.get("snapshot_error"):
            what = f"drive saved to {self.served['snapshot']}, its data in {kept}" if kept else \
                f"drive and data saved to {self.served['snapshot']}"
            console.print(safe(f"{what} (session {self.served['served_session']}; serve it again with --snapshot "
                               f"{self.served['snapshot']})"))
        elif kept and not self.served.get("snapshot"):
            console.print(safe(f"the data clients wrote is in {kept} (the drive's state was not kept: give --snapshot "
                               "to serve the two again; remove the file before serving a new drive there)"))


LATE_SHARE = 0.1
"""A connection whose realtime replies went out later than this share of its mean simulated latency (and
more than ``LATE_US``) is flagged: its client measured the host as well as the drive."""
LATE_US = 20.0


def late_connections(connections: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The connections whose replies were late enough to flag (see ``LATE_SHARE``)."""
    return [c for c in connections
            if c["late_us_mean"] > max(LATE_US, LATE_SHARE * c["sim_latency_us_mean"])]


def _served_tables(r: Report, d: Path) -> None:
    """A served drive's report: its client connections (connections.csv) and the power cuts the server
    made, with what they did to the served data."""
    path = d / "connections.csv"
    if path.exists():
        with path.open(newline="") as f:
            rows = list(csv.DictReader(f))
        r.table("Client connections", rows, note="other columns as connections.csv: simulated and wall-clock "
                "latency means (µs), how late realtime replies were, how each connection ended")
    served = (read_json(d / "summary.json").get("phases") or [{}])[-1]
    if served.get("served_power_cuts"):
        r.table("Power cuts from outside", served["served_power_cuts"],
                note="seconds from the start of serving; acknowledged_lost_units: units of writes the client had a "
                     "reply for but had neither sent with FUA nor flushed (a volatile write cache may lose them, as NBD "
                     "allows; never a FUA or flushed write); reverted: units of the served data put back to what the "
                     "drive kept; unknown: units whose kept version the server no longer held (read as EIO)")


def client_overhead(text: str) -> float | None:
    """``--client-overhead``: ``auto`` (None) or a time: ``40us``, ``0.05ms``, ``40`` (µs)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(us|µs|ms|ns)?\s*", text)
    if text.strip() == "auto":
        return None
    if match is None:
        raise ConfigError(f"--client-overhead: expected auto or a time such as 40us, found {text!r}")
    value = float(match.group(1)) * {"ns": 1e-3, "ms": 1e3}.get(match.group(2) or "us", 1.0)
    if value > 1e6:
        raise ConfigError(f"--client-overhead: at most a second, found {text!r}")
    return value


def _seconds(item: str, option: str, most: float = 2**32) -> float:
    """A time such as ``2s``, ``500ms`` or ``1.5`` (seconds) given to ``option``, in seconds."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(s|ms|us|µs|min)?\s*", item)
    if match is None:
        raise ConfigError(f"{option}: expected times such as 2s,500ms, found {item.strip()!r}")
    value = float(match.group(1)) * {"ms": 1e-3, "us": 1e-6, "µs": 1e-6, "min": 60.0}.get(match.group(2) or "s", 1.0)
    if value > most:
        raise ConfigError(f"{option}: at most {most:g} seconds, found {item.strip()!r}")
    return value


MAX_CUTS = 10_000
"""The most power cuts a serve takes at set times (as a config's ``power_loss`` list)."""


def seconds_list(text: str) -> list[float]:
    """``--power-cut-at``: times such as ``2s,500ms,1.5`` (seconds) as seconds, at most ``MAX_CUTS``
    of them (as a config's ``power_loss`` list)."""
    items = text.split(",")
    if not text.strip():
        raise ConfigError("--power-cut-at: expected times like 5s,12.5s, found nothing")
    if len(items) > MAX_CUTS:
        raise ConfigError(f"--power-cut-at: expected at most {MAX_CUTS:,} times, found {len(items):,}")
    return sorted(_seconds(item, "--power-cut-at") for item in items)


def idle_timeout(text: str) -> float | None:
    """``--idle-timeout``: a time such as ``10min`` in seconds; ``0`` or ``none``: None (never)."""
    if text.strip().lower() in ("0", "none"):
        return None
    value = _seconds(text, "--idle-timeout", most=1e7)
    return value if value > 0 else None


def listen_address(socket: str | os.PathLike[str] | None, port: int | None, host: str = "127.0.0.1") -> str:
    """The engine's ``listen`` for a unix socket path or a TCP port (on ``host``, loopback unless
    named)."""
    if (socket is None) == (port is None):
        raise ConfigError("serve: give either a unix socket path or a TCP port")
    if socket is not None:
        return f"unix:{os.fspath(socket)}"
    return f"tcp:{host}:{port}" if ":" not in host else f"tcp:[{host}]:{port}"


def serve(
    device: qualify.DeviceSource | None,
    listen: str,
    timing: str = "realtime",
    once: bool = False,
    capacity: str | int | None = None,
    seed: int | None = None,
    ready: Callable[[str], None] | None = None,
    progress: api.ProgressCallback | None = None,
    client_overhead_us: float | None = 0.0,
    power_cut_at: Sequence[float] = (),
    control: str | os.PathLike[str] | None = None,
    snapshot: str | os.PathLike[str] | None = None,
    max_connections: int = 64,
    idle_timeout_s: float | None = None,
    data: str | os.PathLike[str] | None = None,
) -> ServeResult:
    """Serve a drive over NBD until SIGINT (KeyboardInterrupt; SIGTERM where the caller turns it into
    an exception) or, with ``once``, until the first client and every later one have disconnected.

    Args:
        device: a preset name, a config file (its phases run first) or a config dict.
        listen: ``"unix:PATH"`` or ``"tcp:HOST:PORT"`` (see ``listen_address``).
        timing: ``"realtime"`` holds each reply until its simulated completion time has passed on the
            wall clock; ``"fast"`` replies as soon as the command is simulated.
        ready: called with the NBD URI once the server listens.
        client_overhead_us: realtime timing: each reply goes out this much before its simulated
            completion, so that a client's own wake-up and submission (tens of µs) is not counted as
            the drive's; None learns it (the median of the clients' turnarounds from a reply to their
            next command, while nothing else is in flight). 0 (the default): nothing is taken off.
        power_cut_at: power cuts at these seconds from the start of serving (wall clock in realtime
            timing, simulated in fast): what the drive had not made safe is lost as its physics says
            (the device's write cache, pages in flight), every connection drops, the drive recovers,
            and clients may connect again; the served data is put back to what the drive kept.
        control: a unix socket taking a line ``cut`` (a power cut now; answered with a line of JSON
            saying what it did) or ``stop``.
        snapshot: a file that keeps the served drive between sessions — its whole simulated state
            and the data its clients wrote. If it holds a served drive, that drive is served again
            (``device`` may then be None; given, it must be the drive's own); when serving ends, the
            drive is written there. A file that is not a served drive is never overwritten.
        max_connections: connections open at once, those still in their handshake included (a
            client has 10 s for each step of its handshake); more are closed at once.
        idle_timeout_s: a connection with nothing in flight that sends no command this long is
            closed; None (the default): never.
        data: a data file that holds the bytes clients write instead of memory (a sparse file of the
            drive's size, locked while served), so that a drive holds more data than the machine has
            memory. A new drive's file is created (it must not exist); with ``snapshot`` the drive keeps
            it by reference (serving the snapshot again opens it, and refuses it if it changed since),
            and a snapshot that holds its data itself has them copied into a new data file.
    """
    if not 1 <= max_connections <= 65536:
        raise ConfigError(f"serve: max_connections must be from 1 to 65536, not {max_connections}")
    if timing not in TIMINGS:
        raise ConfigError(f"serve: timing must be one of {', '.join(TIMINGS)}, not {timing!r}")
    _distinct_files(socket=listen[len("unix:"):] if listen.startswith("unix:") else None, control=control,
                    snapshot=snapshot, data=data)
    if data is not None:
        if os.path.islink(data) and not os.path.exists(data):
            raise ConfigError(f"--data {os.fspath(data)}: a symbolic link to nothing; name the data file itself")
        # Kept by its full name: a snapshot refers to it from wherever it is served again.
        data = os.path.realpath(data)
    config = None if device is None else config_for(device, capacity)
    if snapshot is not None:
        # The file itself, not a link to it: saved there, and held against a server given another name.
        snapshot = os.path.realpath(snapshot)
    with _served_alone(snapshot):
        return _serve(config, listen, timing, once, seed, ready, progress, client_overhead_us, power_cut_at, control,
                      snapshot, max_connections, idle_timeout_s, data)


@contextmanager
def _served_alone(snapshot: str | os.PathLike[str] | None) -> Iterator[None]:
    """Holds ``snapshot`` (a resolved path) for one server: an exclusive lock on a file beside it
    (``.NAME.lock``, removed afterwards) and on the file itself if it exists (a hard link elsewhere shares
    it), so that two servers never serve, and then overwrite, the same drive."""
    if snapshot is None:
        yield
        return
    path = Path(snapshot)
    lock = path.with_name(f".{path.name}.lock")
    held: list[int] = []
    try:
        for name in (lock, path) if path.is_file() else (lock,):
            try:
                fd = os.open(name, (os.O_RDWR | os.O_CREAT if name == lock else os.O_RDONLY) | os.O_CLOEXEC, 0o600)
            except OSError as e:
                raise ConfigError(f"--snapshot {path}: cannot lock it ({name}: {e.strerror or e})") from None
            held.append(fd)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise ConfigError(f"--snapshot {path}: another nandlab server is serving it") from None
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
    finally:
        for fd in held:
            os.close(fd)


def _serve(config: dict[str, Any] | None, listen: str, timing: str, once: bool, seed: int | None,
           ready: Callable[[str], None] | None, progress: api.ProgressCallback | None,
           client_overhead_us: float | None, power_cut_at: Sequence[float],
           control: str | os.PathLike[str] | None, snapshot: str | os.PathLike[str] | None,
           max_connections: int, idle_timeout_s: float | None, data: str | None) -> ServeResult:
    """``serve`` once its arguments are checked and the snapshot is held."""
    saved = SavedDrive.open(snapshot, config, data) if snapshot is not None else None
    if saved is not None and saved.sim is not None:
        sim, phases, series = saved.sim, saved.phases, saved.series
    elif config is None:
        raise ConfigError("serve: give a CONFIG or PRESET to serve (or --snapshot of a served drive that exists)")
    else:
        sim, phases, series = api.make_simulator(config, seed), [], []
    if power_cut_at or control is not None:
        sim.enable_power_model()

    def last(simulator: Simulator, index: int, _: api.ProgressCallback | None) -> dict[str, Any]:
        # What clients write is held in the data file, else in memory, as much as is available.
        output = simulator.serve(index, listen, timing=timing, once=once, ready=ready, data=data,
                                 client_overhead_us=client_overhead_us, power_cut_at=list(power_cut_at),
                                 max_connections=max_connections, idle_timeout_s=idle_timeout_s,
                                 control=None if control is None else os.fspath(control),
                                 snapshot=None if saved is None else os.fspath(saved.path),
                                 snapshot_extra="" if saved is None else saved.extra(phases, series))
        if saved is not None:
            output.update(snapshot=str(saved.path), served_session=saved.session)
        return output

    # Its last phase was the clients' I/O, which no config holds: no rerun.toml.
    result = api.every_phase(api._go_on(sim, phases, series, {}, progress, last=last))
    return ServeResult(dataclasses.replace(result, config_toml=""))


def _distinct_files(**paths: str | os.PathLike[str] | None) -> None:
    """The server's files (its unix socket, control socket, snapshot) are different files: the sockets are
    removed when serving ends, which would delete a drive saved under the same name."""
    seen: dict[str, str] = {}
    for name, path in paths.items():
        if path is None:
            continue
        real = os.path.realpath(path)
        if real in seen:
            raise ConfigError(f"serve: --{seen[real]} and --{name} name the same file ({os.fspath(path)}); "
                              "give each its own")
        seen[real] = name


def _notes(extra: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], int]:
    """A served drive's notes (what ``SavedDrive.extra`` wrote): the phases' results, the time-series rows,
    the config and the session; ValueError (or KeyError, TypeError, RecursionError) if they are not that:
    the notes are input, and a file may have been altered with a valid checksum."""
    kept = json.loads(extra)
    phases, series, built_from, session = kept["phases"], kept["timeseries"], kept["config"], kept["session"]
    if not (isinstance(phases, list) and all(isinstance(p, dict) for p in phases)):
        raise ValueError("phases")
    if not (isinstance(series, list) and len(series) == len(phases)):
        raise ValueError("timeseries")
    # Each phase's columns as the engine writes them: lists of one length, of numbers (or null).
    for columns in series:
        if not isinstance(columns, dict) or not all(isinstance(v, list) for v in columns.values()):
            raise ValueError("timeseries columns")
        if len({len(v) for v in columns.values()}) > 1:
            raise ValueError("timeseries column lengths")
        if not all(isinstance(x, (int, float)) or x is None for v in columns.values() for x in v):
            raise ValueError("timeseries values")
    if not isinstance(built_from, dict):
        raise ValueError("config")
    if isinstance(session, bool) or not isinstance(session, int) or not 1 <= session < 2**31:
        raise ValueError("session")
    return phases, series, built_from, session + 1


@dataclass
class SavedDrive:
    """A served drive's file (``--snapshot``): the drive read back from it (``sim``; None for a
    file still to be written) with the results of the config's phases that built it, and the
    config it was built from, which a later session's config must match."""

    path: Path
    config: dict[str, Any] | None
    sim: Simulator | None = None
    phases: list[dict[str, Any]] = field(default_factory=list)
    series: list[dict[str, Any]] = field(default_factory=list)
    session: int = 1

    @staticmethod
    def open(path: str | os.PathLike[str], config: dict[str, Any] | None,
             data: str | os.PathLike[str] | None = None) -> SavedDrive:
        """The served drive at ``path``, or a new one to be written there (checked writable); ``data``
        as ``serve`` takes it."""
        path = Path(path)
        if not path.exists():
            try:
                path.touch(exist_ok=False)
                path.unlink()
            except OSError as e:
                raise ConfigError(f"--snapshot {path}: cannot write there: {e.strerror or e}") from None
            return SavedDrive(path, config)
        if not path.is_file():
            # A FIFO or a device would block the read, or never hold a drive.
            raise ConfigError(f"--snapshot {path}: not a regular file")
        if not Simulator.is_served_drive(path):
            raise ConfigError(f"--snapshot {path}: exists and is not a served nandlab drive; refusing to overwrite "
                              "it (name another file)")
        sim, extra = Simulator.load_served(path, data=data)
        try:
            phases, series, built_from, session = _notes(extra)
        except (ValueError, KeyError, TypeError, RecursionError):
            raise ConfigError(f"--snapshot {path}: a served drive whose notes cannot be read (written by another "
                              "build of nandlab, or altered)") from None
        if config is not None and config != built_from:
            raise ConfigError(f"--snapshot {path}: holds a drive built from another config; serve it without naming "
                              "a CONFIG or PRESET, or name another file")
        return SavedDrive(path, built_from, sim, phases, series, session)

    def extra(self, phases: Sequence[dict[str, Any]], series: Sequence[dict[str, Any]]) -> str:
        """What the file keeps beside the drive: the results of the phases before serving (``phases``
        and ``series`` as the run has them when serving starts), the config, this session's number."""
        return json.dumps({"phases": list(phases), "timeseries": list(series), "config": self.config,
                           "session": self.session}, default=lambda array: array.tolist())


PROCEDURE = Procedure("serve", "nandlab serve", ServeResult, serve)
