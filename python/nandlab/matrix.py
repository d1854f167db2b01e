"""SNIA-style performance matrices (issue 6; the SNIA tutorial "NAND Flash Solid State Storage
Performance and Capability", REFERENCE.md §2): IOPS and bandwidth over read/write mix × block size,
in two states, beside the tutorial's theoretical "bandwidth only" maximum, and bandwidth against
die count::

    from nandlab import matrix

    m = matrix.run("snia-slc", capacity="1GiB", block_sizes=[4096, 131072], states=["steady"])
    m.cells("steady")          # one dict per (mix, block size): iops, mbps, theoretical_mbps, ...
    m.scaling                  # reads and writes vs die count, simulated and theoretical
    m.table()                  # polars: one row per cell, with a ``state`` column
    m.to_dict()                # the JSON document

The states, each cell on a new drive with the same seed:

- **burst**: the user capacity written once sequentially at memory speed (``kind = "fill"``: reads
  find data on flash, the reserve is free, nothing has been overwritten), then random I/O of the
  cell's mix and block size at ``queue_depth`` for ``burst_volume``. (A trimmed drive would read
  never-written data from RAM as zeroes, and measure only the host link.)
- **steady** (SNIA PTS): precondition with two capacities of 128 KiB sequential writes, both at
  memory speed (a ``kind = "fill"`` pass, then an ``io`` pass with ``timed = false``, which makes the
  same flash decisions as a timed one), then rounds of the cell's workload, each writing
  ``round_volume`` (see ``ROUND_VOLUME``), on the same drive, until the last ``WINDOW`` rounds pass
  ``is_steady`` or ``max_rounds`` have run.
  The cell's figures are the averages over those last rounds; ``steady`` says whether the rule held.

The theoretical bandwidth is the tutorial's model (``theoretical_mbps``): every die streams pages
at ``page / (tR + transfer)`` for reads and ``page / (tPROG + transfer)`` for writes, a read/write
mix in proportion to the time each byte takes, summed over the dies, capped by each channel's rate
and by the host link. It ignores block size, command overhead, queueing and garbage collection:
simulated MB/s as a percentage of it shows what those cost, as the tutorial's "measured vs
theoretical max" chart. MB/s are 10^6 bytes per simulated second, as the engine's ``mbps``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from nandlab import api, qualify
from nandlab._core import ConfigError, parse_size
from nandlab.arguments import checked, show_types

__all__ = [
    "BLOCK_SIZES",
    "MIXES",
    "STATES",
    "Matrix",
    "block_label",
    "is_steady",
    "parse_block_sizes",
    "parse_mixes",
    "parse_states",
    "run",
    "steady_round",
    "theoretical_mbps",
]

KIB, MIB = 2**10, 2**20
MB = 1e6
MIXES = ((100, 0), (75, 25), (50, 50), (25, 75), (0, 100))
"""The tutorial's read/write ratios: (read %, write %) of the bytes moved."""
BLOCK_SIZES = (512, 4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB, 64 * KIB, 128 * KIB, 256 * KIB, 512 * KIB, MIB)
STATES = ("burst", "steady")
MAX_CELLS = 10_000
"""The most cells (mixes × block sizes) a matrix has per state: 200 times the tutorial's."""
QUEUE_DEPTH = 32
"""SATA NCQ's depth: enough requests in flight to keep every die busy."""
BURST_VOLUME = 0.05
"""Host data per burst cell, × the capacity: at 7 % over-provisioning, about the free reserve above
garbage collection's watermark, so a burst of writes ends about where GC would start."""
ROUND_VOLUME = 0.25
"""Host data *written* per steady-state round, × the capacity (reads-only cells: data read): a round
of a mix moves ``ROUND_VOLUME / write share``, so every mix rewrites the drive at the same pace and
its window measures a drive whose garbage collection has settled, not one still living off the
sequential preconditioning."""
MAX_ROUNDS = 25
"""The PTS's limit: a cell not steady after 25 rounds is reported as such."""
MAX_WINDOW = 1000
"""The most rounds a steady-state window may span (a slip beyond it would take hours to fill)."""
WINDOW = 5
"""The PTS's measurement window: the last five rounds."""
TOLERANCE = 0.10
"""Every round of the window within ±10 % of the window's mean (so max − min ≤ 20 % of it), and the
least-squares slope × ``WINDOW`` rounds within ±10 % of it."""
PRECONDITION = (
    {"name": "precondition-1", "kind": "fill", "pattern": "sequential", "volume": 1.0},
    {"name": "precondition-2", "pattern": "sequential", "block_size": "128KiB", "volume": 1.0, "timed": False},
)
"""Two capacities of 128 KiB sequential writes, at memory speed."""
SCALING_BLOCK_SIZE = MIB
SCALING_VOLUME = 0.25
"""Host data per scaling point, × the capacity (after a warm-up of the write buffer for writes)."""
SCALING_MIXES = ((100, 0), (0, 100))
SEED = 1
_FILL = {"name": "fill", "kind": "fill", "pattern": "sequential", "volume": 1.0}
_MODES = ("slc", "mlc", "tlc", "qlc")
"""The order of ``device.timing`` in a resolved config."""

StepCallback = Callable[[int, int, str], None]
"""``on_step(done, total, label)``: a run (a burst cell, a steady cell, a scaling point) finished."""


@dataclass(frozen=True, repr=False)
class Matrix:
    """What ``run`` measured.

    Attributes:
        device: the device as given (preset name, file path) or ``custom``.
        capacity_bytes: the drive's nominal (user) capacity.
        drive: the engine's device figures (geometry, interface, ...) of the whole drive.
        queue_depth: requests in flight in every cell.
        theoretical: the model's figures for the whole drive: ``dies``, ``read_mbps_per_die``,
            ``write_mbps_per_die``, ``channel_mbps`` (all channels), ``link_mbps``, ``full_duplex``.
        states: ``burst`` and/or ``steady``: each its settings, ``rms_iops`` and ``rms_mbps`` (root
            mean square over the cells, the tutorial's summary figures) and ``cells``, one dict per mix and
            block size (mixes in the order given, block sizes ascending): ``read_percent``,
            ``write_percent``, ``block_size``, ``iops``, ``mbps``, ``read_mbps``, ``write_mbps``,
            ``theoretical_mbps``, ``percent_of_theoretical``, ``waf`` (None without writes); steady
            cells also ``rounds`` (how many ran), ``steady``, ``steady_round`` (the round the rule
            first held, or None) and ``round_mbps`` (every round's MB/s).
        scaling: one dict per die count and mix of ``SCALING_MIXES``: ``dies``, ``channels``,
            ``chips_per_channel``, ``dies_per_chip``, ``read_percent``, ``write_percent``,
            ``block_size``, ``mbps``, ``theoretical_mbps``, ``percent_of_theoretical``,
            ``link_mbps``.
    """

    device: str
    capacity_bytes: int
    drive: dict[str, Any]
    queue_depth: int
    theoretical: dict[str, Any]
    states: dict[str, dict[str, Any]]
    scaling: list[dict[str, Any]]

    def cells(self, state: str) -> list[dict[str, Any]]:
        """The cells of ``state`` (``burst`` or ``steady``)."""
        return self.states[state]["cells"]

    def cell(self, state: str, read_percent: int, block_size: int) -> dict[str, Any]:
        """One cell of ``state``."""
        for cell in self.cells(state):
            if (cell["read_percent"], cell["block_size"]) == (read_percent, block_size):
                return cell
        raise KeyError((state, read_percent, block_size))

    def table(self) -> pl.DataFrame:
        """Every cell as a row, with a ``state`` column (``round_mbps`` left out)."""
        rows = [
            {"state": state, **{k: v for k, v in cell.items() if k != "round_mbps"}}
            for state, part in self.states.items()
            for cell in part["cells"]
        ]
        schema = {
            "state": pl.String, "read_percent": pl.Int64, "write_percent": pl.Int64, "block_size": pl.Int64,
            "iops": pl.Float64, "mbps": pl.Float64, "read_mbps": pl.Float64, "write_mbps": pl.Float64,
            "theoretical_mbps": pl.Float64, "percent_of_theoretical": pl.Float64, "waf": pl.Float64,
            "sim_seconds": pl.Float64, "rounds": pl.Int64, "steady": pl.Boolean, "steady_round": pl.Int64,
        }
        return pl.DataFrame([{key: row.get(key) for key in schema} for row in rows], schema=schema)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``device``, ``capacity_bytes``, ``queue_depth``, ``drive``,
        ``theoretical``, ``states`` (``burst`` / ``steady``: settings and ``cells``), ``scaling``."""
        return {
            "device": self.device,
            "capacity_bytes": self.capacity_bytes,
            "queue_depth": self.queue_depth,
            "drive": self.drive,
            "theoretical": self.theoretical,
            "states": self.states,
            "scaling": self.scaling,
        }

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> Matrix:
        """A matrix back from its JSON document (``to_dict``, ``result.json``), to plot it again."""
        return cls(**{key: document[key] for key in cls.__dataclass_fields__})

    def __repr__(self) -> str:
        counts = ", ".join(f"{state}: {len(part['cells'])} cells" for state, part in self.states.items())
        return f"Matrix({self.device}, {counts}, scaling: {len(self.scaling)} points)"


# --- the steady-state rule (SNIA PTS) -----------------------------------------------------------


@checked
def is_steady(rounds: Sequence[float], window: int = WINDOW, tolerance: float = TOLERANCE) -> bool:
    """The PTS rule on the measurement window, the last ``window`` of ``rounds`` (False if there
    are fewer): every value within ±``tolerance`` of their mean (hence max − min ≤ 2 × ``tolerance``
    of it), and the least-squares slope over the rounds, × ``window``, within ±``tolerance`` of it."""
    _check_window(window, tolerance)
    values = np.asarray(rounds[-window:] if len(rounds) >= window else [], dtype=float)
    mean = values.mean() if values.size else 0.0
    if values.size < 2 or not np.all(np.isfinite(values)) or mean <= 0:
        return False
    excursion_ok = np.all(np.abs(values - mean) <= tolerance * mean) and np.ptp(values) <= 2 * tolerance * mean
    slope = np.polyfit(np.arange(window), values, 1)[0]
    return bool(excursion_ok and abs(slope) * window <= tolerance * mean)


@checked
def steady_round(values: Sequence[float], window: int = WINDOW, tolerance: float = TOLERANCE) -> int | None:
    """The first round (counted from 1) whose window — it and the ``window - 1`` rounds before —
    passes ``is_steady``; None if none does."""
    _check_window(window, tolerance)
    for end in range(window, len(values) + 1):
        if is_steady(values[end - window : end], window, tolerance):
            return end
    return None


def _check_window(window: int, tolerance: float) -> None:
    """The PTS rule's settings: a window of 2 rounds or more, a tolerance from 0 to 1 (a share)."""
    if not 2 <= window <= MAX_WINDOW:
        raise ConfigError(f"window: expected a whole number of rounds from 2 to {MAX_WINDOW}, found {window}")
    if not 0 <= tolerance <= 1:
        raise ConfigError(f"tolerance: expected a share from 0 to 1, found {tolerance!r}")


# --- the theoretical bandwidth (the tutorial's "bandwidth only" model) --------------------------


@checked
def theoretical(config: Mapping[str, Any]) -> dict[str, Any]:
    """The model's figures for a resolved config (``Simulator.config``): the drive's ``dies``, each
    die's read and write streaming rates (MB/s; with multi-plane operations a die moves a page per
    plane per tR or tPROG), the channels' total rate and the host link's."""
    g, d = config["geometry"], config["device"]
    timing = d["timing"][_MODES.index(str(g["cell"]).lower())]
    planes = g["planes_per_die"] if d["multiplane"] else 1
    data = g["page_size"] * planes
    transfer_s = data / d["channel_rate"]
    read_s = float(np.mean(timing["read_ns"])) * 1e-9  # mean over page types (LSB, MSB, ...)
    program_s = float(np.mean(timing["program_ns"])) * 1e-9
    return {
        "dies": g["channels"] * g["chips_per_channel"] * g["dies_per_chip"],
        "channels": g["channels"],
        "read_mbps_per_die": data / (read_s + transfer_s) / MB,
        "write_mbps_per_die": data / (program_s + transfer_s) / MB,
        "channel_mbps": g["channels"] * d["channel_rate"] / MB,
        "link_mbps": d["interface"]["link_rate"] / MB,
        "full_duplex": bool(d["interface"]["full_duplex"]),
    }


@checked
def theoretical_mbps(config: Mapping[str, Any], read_percent: float) -> float:
    """The tutorial's theoretical maximum bandwidth (MB/s) of a drive at a read/write mix: each die
    spends ``r / read rate + w / write rate`` seconds per byte (``r``, ``w`` the mix's shares),
    the dies of a channel together at most the channel's rate, all channels together at most the
    host link's (a half-duplex link, as SATA, carries both directions; a full-duplex one each)."""
    t = theoretical(config)
    r = read_percent / 100
    per_die = 1.0 / (r / t["read_mbps_per_die"] + (1 - r) / t["write_mbps_per_die"])
    per_channel = min(per_die * t["dies"] / t["channels"], t["channel_mbps"] / t["channels"])
    link = t["link_mbps"] / max(r, 1 - r) if t["full_duplex"] else t["link_mbps"]
    return min(per_channel * t["channels"], link)


# --- options ------------------------------------------------------------------------------------


@checked
def parse_mixes(text: str) -> list[tuple[int, int]]:
    """``"100/0,75/25"`` → ``[(100, 0), (75, 25)]``; ValueError naming the bad item."""
    mixes = []
    for item in text.split(","):
        read, slash, write = item.strip().partition("/")
        try:
            mix = (int(read), int(write)) if slash else None
        except ValueError:
            mix = None
        if mix is None or min(mix) < 0 or sum(mix) != 100:
            raise ValueError(f"expected read/write percentages adding up to 100, such as 75/25, found {item.strip()!r}")
        mixes.append(mix)
    return _distinct(mixes)


@checked
def parse_block_sizes(text: str) -> list[int]:
    """``"512B,4KiB,1MiB"`` (or ``4k``, ``1m``, bytes: the engine's sizes, as configs read them, ``8KB``
    being 8,000 bytes) → byte counts, ascending; ValueError."""
    sizes = []
    for item in text.split(","):
        try:
            sizes.append(parse_size(item))
        except ValueError as error:
            raise ValueError(f"block size: {error}") from None
    for size in sizes:
        if size < 512 or size % 512:
            raise ValueError(f"block size: expected a multiple of 512 bytes, found {size} bytes")
    return sorted(set(sizes))


@checked
def parse_states(text: str) -> list[str]:
    """``"burst,steady"`` → ``["burst", "steady"]``; ValueError for anything else."""
    states = [item.strip() for item in text.split(",")]
    for state in states:
        if state not in STATES:
            raise ValueError(f"expected burst and/or steady, found {state!r}")
    return _distinct(states)


@checked
def block_label(size: int) -> str:
    """``512B``, ``4KiB``, ``1MiB``: how ``--block-sizes`` spells a size."""
    for unit, scale in (("MiB", MIB), ("KiB", KIB)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size}B"


def _distinct(items: Sequence[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


# --- running ------------------------------------------------------------------------------------


@checked
def run(
    device: qualify.DeviceSource,
    capacity: str | int | None = None,
    mixes: Sequence[tuple[int, int]] = MIXES,
    block_sizes: Sequence[int] = BLOCK_SIZES,
    states: Sequence[str] = STATES,
    queue_depth: int = QUEUE_DEPTH,
    scaling: bool = True,
    burst_volume: float | str = BURST_VOLUME,
    round_volume: float | str = ROUND_VOLUME,
    max_rounds: int = MAX_ROUNDS,
    scaling_dies: Sequence[int] | None = None,
    scaling_block_size: int = SCALING_BLOCK_SIZE,
    scaling_volume: float = SCALING_VOLUME,
    seed: int = SEED,
    workers: int = 1,
    on_step: StepCallback | None = None,
) -> Matrix:
    """Measure the matrix of ``mixes`` × ``block_sizes`` in each of ``states``, and (``scaling``)
    bandwidth against die count.

    Args:
        device: a preset name, a TOML file (its ``[device]`` and ``[ftl]``) or a config dict.
        capacity: sets ``[device] capacity`` (the nominal capacity, e.g. ``"1GiB"``).
        burst_volume, round_volume: host data per burst cell, and host data written per steady
            round (read, for reads only): a multiple of the capacity, or a size string (``"256MiB"``).
        max_rounds: steady rounds per cell at most (at least ``WINDOW``).
        scaling_dies: die counts (default: 1, 2, 4, ... up to the drive's); each a drive with
            min(dies, the drive's channels) channels and the rest as chips (or dies) per channel.
        scaling_block_size, scaling_volume: the scaling points' block size and host data (×
            the capacity).
        workers: runs at once (threads: the engine releases the GIL); the results do not depend on it.
        on_step: called after each run (see ``StepCallback``).

    Raises:
        ConfigError: a bad device, capacity or block size, or more than ``MAX_CELLS`` cells; nothing ran.
        ValueError: a mix, state or die count that cannot be run.
    """
    config = qualify.device_config(device, capacity)
    mixes, states = _distinct([tuple(m) for m in mixes]), _distinct(states)
    block_sizes = sorted(set(block_sizes))
    for state in states:
        if state not in STATES:
            raise ValueError(f"unknown state {state!r}; expected {' or '.join(STATES)}")
    for mix in mixes:
        if len(mix) != 2 or min(mix) < 0 or sum(mix) != 100:
            raise ValueError(f"a mix is (read %, write %) adding up to 100, not {mix!r}")
    if max_rounds < WINDOW:
        raise ValueError(f"max_rounds must be at least {WINDOW} (the measurement window)")
    if not mixes or not block_sizes:
        raise ValueError("at least one mix and one block size")
    if not states and not scaling:
        raise ValueError("nothing to run: no state (burst, steady) and no scaling study")
    if len(mixes) * len(block_sizes) > MAX_CELLS:
        raise ConfigError(f"mixes × block sizes: {len(mixes) * len(block_sizes):,} cells ({len(mixes)} × "
                          f"{len(block_sizes):,}); expected at most {MAX_CELLS:,}")
    # Every phase the matrix will run, checked by the engine before anything runs.
    workloads = {
        (mix, size): _workload(mix, size, queue_depth) for mix, size in itertools.product(mixes, block_sizes)
    }
    probe = api.make_simulator(
        {**config, "phase": [*PRECONDITION, *({**w, "volume": burst_volume} for w in workloads.values()),
                             {**_workload((0, 100), block_sizes[0], queue_depth), "volume": round_volume}]}
    )
    resolved, drive = probe.config, probe.device
    del probe
    points = _scaling_points(config, drive, scaling_dies) if scaling else []
    # Each job on a new drive; the longest (steady state, small blocks) first, so that the pool
    # does not end on one long run.
    jobs: list[tuple[str, Any]] = [(state, key) for state in states for key in workloads]
    jobs.sort(key=lambda job: (job[0] != "steady", job[1][1]))
    jobs += [("scaling", (index, mix)) for index in range(len(points)) for mix in SCALING_MIXES]

    def work(job: tuple[str, Any]) -> dict[str, Any]:
        state, key = job
        if state == "burst":
            return _burst(config, workloads[key], burst_volume, seed)
        if state == "steady":
            return _steady(config, workloads[key], round_volume, max_rounds, seed)
        index, mix = key
        return _scaling(config, points[index], mix, scaling_block_size, queue_depth, scaling_volume, seed)

    results: dict[tuple[str, Any], dict[str, Any]] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:  # the engine releases the GIL
        futures = {pool.submit(work, job): job for job in jobs}
        try:
            for done, future in enumerate(as_completed(futures), 1):
                job = futures[future]
                results[job] = future.result()
                if on_step is not None:
                    on_step(done, len(jobs), _job_label(job, points))
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # a failed run or Ctrl-C: start no more
            raise
    document_states: dict[str, dict[str, Any]] = {}
    for state in states:
        cells = [_with_theory(mix, size, results[(state, (mix, size))], resolved) for mix, size in workloads]
        settings = (
            {"volume": burst_volume, "precondition": "fill"}
            if state == "burst"
            else {"precondition": "fill + 128KiB sequential, untimed", "round_volume": round_volume,
                  "max_rounds": max_rounds, "window": WINDOW, "tolerance": TOLERANCE}
        )
        document_states[state] = {**settings, **_rms(cells), "cells": cells}
    scaling_rows = [results[("scaling", (index, mix))] for index in range(len(points)) for mix in SCALING_MIXES]
    return Matrix(
        device=qualify._label(device),
        capacity_bytes=int(drive["user_capacity_bytes"]),
        drive=drive,
        queue_depth=queue_depth,
        theoretical=theoretical(resolved),
        states=document_states,
        scaling=scaling_rows,
    )


def _rms(cells: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """``rms_iops`` and ``rms_mbps``: the root mean square over the cells, as the tutorial sums up
    its measured drives ("K-IOPS (RMS)", "Bandwidth (RMS, MB/s)")."""
    return {
        f"rms_{key}": float(np.sqrt(np.mean(np.square([c[key] for c in cells])))) if cells else float("nan")
        for key in ("iops", "mbps")
    }


def _job_label(job: tuple[str, Any], points: Sequence[Mapping[str, int]]) -> str:
    """``steady 75/25 4KiB``, ``scaling 8 dies 0/100``: a job for ``on_step``."""
    state, key = job
    if state == "scaling":
        index, mix = key
        return f"scaling {points[index]['dies']} dies {mix[0]}/{mix[1]}"
    mix, size = key
    return f"{state} {mix[0]}/{mix[1]} {block_label(size)}"


def _workload(mix: tuple[int, int], block_size: int, queue_depth: int) -> dict[str, Any]:
    """A cell's ``[[phase]]`` without its stop condition: random I/O of the mix and block size."""
    return {
        "name": f"{mix[0]}-{mix[1]}-{block_label(block_size)}",
        "pattern": "random",
        "read_fraction": mix[0] / 100,
        "block_size": f"{block_size}B",
        "queue_depth": queue_depth,
    }


def _figures(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A phase summary's figures for a cell."""
    return {
        "iops": float(summary["iops"]),
        "mbps": float(summary["mbps"]),
        "read_mbps": float(summary["read_mbps"]),
        "write_mbps": float(summary["write_mbps"]),
        "waf": float(summary["waf"]) if summary["host_write_bytes"] else None,
        "sim_seconds": float(summary["sim_seconds"]),
    }


def _burst(config: dict[str, Any], workload: dict[str, Any], volume: float | str, seed: int) -> dict[str, Any]:
    """A burst cell: fill at memory speed, then the workload for ``volume``."""
    sim = api.make_simulator({**config, "phase": [_FILL, {**workload, "volume": volume}]}, seed=seed)
    api.living_phase(sim, 0)
    return _figures(api.living_phase(sim, 1)["summary"])


def _steady(
    config: dict[str, Any], workload: dict[str, Any], volume: float | str, max_rounds: int, seed: int
) -> dict[str, Any]:
    """A steady-state cell: precondition, then rounds of the workload until ``steady_round`` finds
    a window or ``max_rounds`` have run; the figures are the last window's means."""
    round_volume = _per_write_share(volume, 1 - workload["read_fraction"])
    sim = api.make_simulator({**config, "phase": [*PRECONDITION, {**workload, "volume": round_volume}]}, seed=seed)
    for index in range(len(PRECONDITION)):
        api.living_phase(sim, index)
    rounds: list[dict[str, Any]] = []
    found = None
    while found is None and len(rounds) < max_rounds:
        rounds.append(api.living_phase(sim, len(PRECONDITION))["summary"])
        if is_steady([r["mbps"] for r in rounds]):
            found = len(rounds)
    window = rounds[-WINDOW:]
    written = sum(r["host_write_bytes"] for r in window)
    return {
        "iops": float(np.mean([r["iops"] for r in window])),
        "mbps": float(np.mean([r["mbps"] for r in window])),
        "read_mbps": float(np.mean([r["read_mbps"] for r in window])),
        "write_mbps": float(np.mean([r["write_mbps"] for r in window])),
        "waf": float(sum(r["waf"] * r["host_write_bytes"] for r in window) / written) if written else None,
        "sim_seconds": float(sum(r["sim_seconds"] for r in rounds)),
        "rounds": len(rounds),
        "steady": found is not None,
        "steady_round": found,
        "round_mbps": [float(r["mbps"]) for r in rounds],
    }


def _per_write_share(volume: float | str, write_share: float) -> float | str:
    """A round's volume (× capacity, or a size) when ``volume`` is the host data it writes."""
    if write_share <= 0:
        return volume
    if isinstance(volume, str):
        return f"{round(parse_size(volume) / write_share)}B"
    return volume / write_share


def _with_theory(
    mix: tuple[int, int], block_size: int, figures: dict[str, Any], config: Mapping[str, Any]
) -> dict[str, Any]:
    """A cell: its mix and block size, its figures, the theoretical maximum and the share of it."""
    theory = theoretical_mbps(config, mix[0])
    return {
        "read_percent": mix[0],
        "write_percent": mix[1],
        "block_size": block_size,
        **figures,
        "theoretical_mbps": theory,
        "percent_of_theoretical": 100 * figures["mbps"] / theory,
    }


def _scaling_points(
    config: dict[str, Any], drive: Mapping[str, Any], dies: Sequence[int] | None
) -> list[dict[str, int]]:
    """The geometry of each die count: channels first (up to the drive's), then chips per channel
    (or, when a count does not divide into the drive's dies per chip, one die per chip)."""
    channels, per_chip = int(drive["channels"]), int(drive["dies_per_chip"])
    total = channels * int(drive["chips_per_channel"]) * per_chip
    counts = list(dies) if dies is not None else [2**k for k in range(total.bit_length()) if 2**k <= total]
    points = []
    for n in counts:
        used = min(n, channels)
        if n < 1 or n % used:
            raise ValueError(f"cannot spread {n} dies evenly over {used} channels")
        per_channel = n // used
        chips, on_chip = (per_channel // per_chip, per_chip) if per_channel % per_chip == 0 else (per_channel, 1)
        points.append({"dies": n, "channels": used, "chips_per_channel": chips, "dies_per_chip": on_chip})
    return points


def _scaling(
    config: dict[str, Any],
    layout: Mapping[str, int],
    mix: tuple[int, int],
    block_size: int,
    queue_depth: int,
    volume: float,
    seed: int,
) -> dict[str, Any]:
    """One scaling point, in the model's conditions (no garbage collection): reads of a filled
    drive; writes on an empty drive, after a warm-up that fills the write buffer (twice its size,
    at most a quarter of the capacity), so that flash speed, not the buffer's, is measured."""
    device = {**config["device"], **{k: layout[k] for k in ("channels", "chips_per_channel", "dies_per_chip")}}
    workload = {**_workload(mix, block_size, queue_depth), "volume": volume}
    probe = api.make_simulator({**config, "device": device, "phase": [_FILL]})
    resolved, figures = probe.config, probe.device
    del probe
    if mix[0] == 100:
        first = _FILL
    else:
        warm = min(2 * int(figures["write_buffer"]), int(figures["user_capacity_bytes"]) // 4)
        first = {**workload, "name": "warm-up", "volume": f"{warm}B"}
    sim = api.make_simulator({**config, "device": device, "phase": [first, workload]}, seed=seed)
    api.living_phase(sim, 0)
    mbps = float(api.living_phase(sim, 1)["summary"]["mbps"])
    cell = _with_theory(mix, block_size, {"mbps": mbps}, resolved)
    return {**layout, **cell, "link_mbps": theoretical(resolved)["link_mbps"]}


show_types(__name__)
