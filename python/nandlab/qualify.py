"""Media qualification procedures of Swissbit's application note AN2103 ("Performance tests"): the
write test of its Fig. 1 (seven passes of the nominal capacity, each with another access pattern),
the read test of its Fig. 6 (small and large reads of randomly and of sequentially written data) and
the pSLC-cache fill of its Figs. 2–5 (one sequential write of the whole drive without a pause)::

    from nandlab import qualify

    q = qualify.write_sections("swissbit-standard", capacity="4GiB")
    [(s["name"], s["mean_mbps"], s["waf"]) for s in q.parts]   # one dict per section, in order
    q.series                                                    # polars: section, gib, mbps, ...
    q.to_dict()                                                 # the JSON document

    q = qualify.pslc_fill("tlc-dynamic-pslc", aged=True)
    [(p["name"], p["mean_mbps"]) for p in q.parts]              # "pslc", "direct", "folding", ...

Each procedure builds a nandlab config — the drive (``[device]``, ``[ftl]``) of a preset or a TOML
file, then its own ``[[phase]]`` list — runs it with ``nandlab.run``, and turns the time series into
the note's curves: speed against data moved since the procedure's start. Time-series rows come every
``ROW_STEP`` × the capacity; each plotted point is a time-weighted speed, bytes / simulated seconds
over the ``WINDOW`` × the capacity around it (garbage collection runs in bursts, so single rows
alternate between fast and slow). MB/s are 10^6 bytes per second, as the engine's ``mbps``.
"""

from __future__ import annotations

import copy
import difflib
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import numpy as np
import polars as pl

from nandlab import api, files
from nandlab._core import ConfigError, presets
from nandlab.arguments import checked, show_types

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = [
    "READ_SECTIONS",
    "WRITE_SECTIONS",
    "Qualification",
    "Section",
    "device_config",
    "user_capacity",
    "pslc_fill",
    "read_sections",
    "write_sections",
]

GIB = 2**30
MB = 1e6
ROW_STEP = 0.005
"""A time-series row every 0.5 % of the capacity."""
WINDOW = 0.02
"""Each plotted point: the speed over 2 % of the capacity around it."""
MERGE_BELOW = 0.02
"""pSLC-fill phases shorter than 2 % of the capacity join a neighbour."""
QUEUE_DEPTH = 1
"""One command at a time, as a qualification tool issues them: each request's latency (mapping
lookups, transfer, flash) shows in the speed. ``--queue-depth 32`` runs them as SATA NCQ allows."""
SEED = 1
ORDER_A, ORDER_B = 1, 2
"""The two address orders of the 4 KiB passes that visit every address once."""

DeviceSource = Union[str, os.PathLike, Mapping[str, Any]]
"""A preset name, a TOML file (its ``[device]`` and ``[ftl]``), or a config dict (the same)."""


@dataclass(frozen=True)
class Section:
    """One timed pass of a procedure: a name, what the note says it is, and its ``[[phase]]`` keys
    (without ``name``, ``queue_depth`` and ``interval``, which the procedure sets)."""

    name: str
    description: str
    phase: Mapping[str, Any]


_RANDOM_ONCE = {"pattern": "shuffle", "block_size": "4KiB", "volume": 1.0}
_SEQUENTIAL = {"pattern": "sequential", "block_size": "128KiB", "volume": 1.0}
_UNIFORM = {"pattern": "random", "block_size": "4KiB", "volume": 1.0}

WRITE_SECTIONS = (
    Section("random-4k", "4 KiB random, each address once, on the trimmed drive",
            {**_RANDOM_ONCE, "order_seed": ORDER_A}),
    Section("random-4k-same-order", "4 KiB random, the same address order again",
            {**_RANDOM_ONCE, "order_seed": ORDER_A}),
    Section("random-4k-new-order", "4 KiB random, each address once, in a new order",
            {**_RANDOM_ONCE, "order_seed": ORDER_B}),
    Section("sequential-128k", "128 KiB sequential over randomly written data", _SEQUENTIAL),
    Section("sequential-128k-again", "128 KiB sequential again, the same order", _SEQUENTIAL),
    Section("random-4k-uniform", "4 KiB uniform random over the whole drive (addresses repeat)", _UNIFORM),
    Section("random-4k-uniform-again", "4 KiB uniform random, a second pass", _UNIFORM),
)
"""The write test (AN2103 Fig. 1): after a TRIM of the whole drive, seven passes of its capacity."""

_READ = {"read_fraction": 1.0, "volume": 1.0}
READ_SECTIONS = (
    Section("random-4k-of-random", "4 KiB random reads, another order, of randomly written data",
            {**_READ, "pattern": "shuffle", "block_size": "4KiB", "order_seed": ORDER_B}),
    Section("sequential-128k-of-random", "128 KiB sequential reads of randomly written data",
            {**_READ, "pattern": "sequential", "block_size": "128KiB"}),
    Section("random-4k-of-sequential", "4 KiB random reads of sequentially written data",
            {**_READ, "pattern": "shuffle", "block_size": "4KiB", "order_seed": ORDER_B}),
    Section("sequential-128k-of-sequential", "128 KiB sequential reads of sequentially written data",
            {**_READ, "pattern": "sequential", "block_size": "128KiB"}),
)
"""The read test (AN2103 Fig. 6): sections 1–2 read a drive written 4 KiB at random, sections 3–4
the same drive after one 128 KiB sequential pass."""

_TRIM = {"name": "trim", "kind": "trim", "volume": 1.0}
# Preconditioning at memory speed (fills are untimed and leave the map cache cold).
_WRITE_RANDOM = {"name": "write-random-4k", "kind": "fill", "pattern": "shuffle", "volume": 1.0}
_WRITE_SEQUENTIAL = {"name": "write-sequential", "kind": "fill", "pattern": "sequential", "volume": 1.0}
_FILL = Section("sequential-fill", "128 KiB sequential writes of the whole capacity, no pause", _SEQUENTIAL)


@dataclass(frozen=True, repr=False)
class Qualification:
    """What a procedure measured.

    Attributes:
        procedure: ``write-sections``, ``read-sections`` or ``pslc-fill``.
        device: the device as given (preset name, file path) or ``custom``.
        capacity_bytes: the drive's nominal (user) capacity.
        parts: the sections (write-, read-sections) or phases (pslc-fill), in order: ``name``
            (sections also ``description``, ``waf`` and ``data_waf``: without the map cache's
            translation-page write-backs), ``mean_mbps`` (bytes / simulated time),
            ``min_mbps`` (of the smoothed series), ``gib_start`` and ``gib_end``.
        series: every plotted point: the part's name (column ``section`` or ``phase``), ``gib``
            (GiB written — read-sections: read — since the procedure's start), ``mbps`` (the
            smoothed speed) and ``sim_seconds``.
        result: the ``nandlab.Result`` of the run (all phases, the raw time series).
    """

    procedure: str
    device: str
    capacity_bytes: int
    parts: list[dict[str, Any]]
    series: pl.DataFrame
    result: api.Result

    @property
    def part_column(self) -> str:
        """``section`` or ``phase``: what the procedure's parts are called."""
        return "phase" if self.procedure == "pslc-fill" else "section"

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``device``, ``capacity_bytes``, then ``sections`` (each with its
        ``series`` of ``[gib, mbps]`` points) or, for pslc-fill, ``series`` and ``phases``."""
        head = {"device": self.device, "capacity_bytes": self.capacity_bytes}
        if self.part_column == "phase":
            return {**head, "series": _pairs(self.series), "phases": self.parts}
        sections = [
            {**part, "series": _pairs(self.series.filter(pl.col("section") == part["name"]))}
            for part in self.parts
        ]
        return {**head, "sections": sections}

    def __repr__(self) -> str:
        parts = ", ".join(f"{p['name']}: {p['mean_mbps']:.3g} MB/s" for p in self.parts)
        return f"Qualification({self.procedure}, {self.device}, {parts})"


@checked
def device_config(device: DeviceSource, capacity: str | int | None = None) -> dict[str, Any]:
    """The drive of a procedure as a config dict with ``device`` and ``ftl`` (no phases).

    Args:
        device: a preset name (``nandlab.presets()``), a TOML file whose ``[device]`` and ``[ftl]``
            are used (its phases are ignored), or a dict with those keys.
        capacity: sets ``[device] capacity`` (the nominal capacity, e.g. ``"4GiB"``).

    Raises:
        ConfigError: no such preset or file (with the closest preset name), or bad TOML.
    """
    if isinstance(device, Mapping):
        source: Mapping[str, Any] = device
    elif files.is_file(device):
        path = Path(device)
        try:
            source = tomllib.loads(files.read_text(path, "device file"))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: TOML syntax error: {error}") from None
    elif str(device) in presets():
        source = {"device": {"preset": str(device)}}
    elif str(device).endswith((".toml", ".json")):
        raise ConfigError(f"{device}: no such config file")
    else:
        close = difflib.get_close_matches(str(device), presets(), n=1)
        hint = f" (did you mean {close[0]}?)" if close else f"; presets: {', '.join(presets())}"
        raise ConfigError(f"{device}: neither a config file nor a device preset{hint}")
    config = {key: copy.deepcopy(dict(source.get(key, {}))) for key in ("device", "ftl")}
    if capacity is not None:
        config["device"]["capacity"] = capacity
    return config


@checked
def write_sections(
    device: DeviceSource,
    capacity: str | int | None = None,
    queue_depth: int = QUEUE_DEPTH,
    seed: int = SEED,
    progress: api.ProgressCallback | None = None,
) -> Qualification:
    """The write test (AN2103 Fig. 1): TRIM the drive, then the seven ``WRITE_SECTIONS``, each one
    pass of the capacity at ``queue_depth``; speed against GiB written."""
    config, cap = _prepare(device, capacity)
    phases = [_TRIM, *(_phase(section, cap, queue_depth) for section in WRITE_SECTIONS)]
    result = api.every_phase(api.run({**config, "phase": phases}, seed=seed, progress=progress))
    return _sections("write-sections", device, cap, result, WRITE_SECTIONS, "host_write_bytes")


@checked
def read_sections(
    device: DeviceSource,
    capacity: str | int | None = None,
    queue_depth: int = QUEUE_DEPTH,
    seed: int = SEED,
    progress: api.ProgressCallback | None = None,
) -> Qualification:
    """The read test (AN2103 Fig. 6): TRIM, write the drive 4 KiB at random (at memory speed),
    read it 4 KiB at random in another order (1) and 128 KiB sequentially (2), write it 128 KiB
    sequentially (at memory speed), read it again both ways (3, 4); speed against GiB read."""
    config, cap = _prepare(device, capacity)
    first, second, third, fourth = (_phase(section, cap, queue_depth) for section in READ_SECTIONS)
    phases = [_TRIM, _WRITE_RANDOM, first, second, _WRITE_SEQUENTIAL, third, fourth]
    result = api.every_phase(api.run({**config, "phase": phases}, seed=seed, progress=progress))
    return _sections("read-sections", device, cap, result, READ_SECTIONS, "host_read_bytes")


@checked
def pslc_fill(
    device: DeviceSource,
    capacity: str | int | None = None,
    aged: bool = False,
    direct_write: bool | None = None,
    queue_depth: int = QUEUE_DEPTH,
    seed: int = SEED,
    progress: api.ProgressCallback | None = None,
) -> Qualification:
    """The pSLC-cache test (AN2103 Figs. 2–5): TRIM, then write the whole capacity 128 KiB
    sequentially without a pause; the run splits into phases ``pslc`` (writes into the cache),
    ``direct`` (direct-write into native blocks), ``folding`` (the cache is folded into native
    blocks) — or one phase ``native`` on a drive without a cache.

    Args:
        aged: every block has used 10 % of its rated cycles (``[device.wear] initial = 0.1``): a
            dynamic cache has turned static by then (the note's Fig. 3, dashed line).
        direct_write: sets ``[ftl] direct_write``; None keeps the device's setting.
    """
    config, cap = _prepare(device, capacity, aged=aged, direct_write=direct_write)
    phases = [_TRIM, _phase(_FILL, cap, queue_depth)]
    result = api.every_phase(api.run({**config, "phase": phases}, seed=seed, progress=progress))
    rows = _rows(result.timeseries, 1, "host_write_bytes")
    gib, mbps = _smoothed(rows, cap)
    classes = _classify(rows["frame"])
    # The burst into the empty cache is a phase however short (a small static cache); merging
    # smooths only the alternating rows after it.
    lead = next((i for i, c in enumerate(classes) if c != "pslc"), len(classes)) if classes[:1] == ["pslc"] else 0
    runs = [("pslc", 1, lead)] if lead else []
    rest = _merge_runs(classes[lead:], rows["bytes"][lead:], cap * MERGE_BELOW)
    runs += [(name, first + lead, last + lead) for name, first, last in rest]
    series_parts = np.empty(len(gib), dtype=object)
    parts = []
    for name, first, last in runs:  # row indices, 1-based: row 0 is the phase's start
        series_parts[first - 1 : last] = name
        parts.append(_figures(name, rows, first - 1, last, mbps[first - 1 : last]))
    series = pl.DataFrame(
        {"phase": series_parts.tolist(), "gib": gib, "mbps": mbps, "sim_seconds": rows["t"][1:]},
        schema={"phase": pl.String, "gib": pl.Float64, "mbps": pl.Float64, "sim_seconds": pl.Float64},
    )
    return Qualification("pslc-fill", _label(device), cap, parts, series, result)


def _prepare(
    device: DeviceSource, capacity: str | int | None, aged: bool = False, direct_write: bool | None = None
) -> tuple[dict[str, Any], int]:
    """The procedure's drive config and its user capacity in bytes (checked before anything runs)."""
    config = device_config(device, capacity)
    if aged:
        config["device"].setdefault("wear", {})["initial"] = 0.1
    if direct_write is not None:
        config["ftl"]["direct_write"] = direct_write
    return config, user_capacity(config)


@checked
def user_capacity(config: Mapping[str, Any]) -> int:
    """The user capacity in bytes of a config's drive (``device`` and ``ftl``), checked by the
    engine: a bad device raises ``ConfigError`` before anything runs."""
    return int(api.make_simulator({**config, "phase": [_TRIM]}).device["user_capacity_bytes"])


def _phase(section: Section, capacity: int, queue_depth: int) -> dict[str, Any]:
    """A section's ``[[phase]]``, timed, with a time-series row every ``ROW_STEP`` of the capacity."""
    step = max(1, int(capacity * ROW_STEP))
    return {"name": section.name, **section.phase, "queue_depth": queue_depth, "interval": f"{step}B"}


def _rows(ts: pl.DataFrame, phase: int, column: str) -> dict[str, Any]:
    """A phase's rows: ``t`` (simulated s), ``bytes`` (of ``column``, cumulative since the run's
    start) and ``frame`` (the rows), with the previous phase's last row first: where it started."""
    frame = pl.concat([ts.filter(pl.col("phase") == phase - 1).tail(1), ts.filter(pl.col("phase") == phase)])
    return {"t": frame["sim_seconds"].to_numpy(), "bytes": frame[column].to_numpy().astype(float), "frame": frame}


def _smoothed(rows: dict[str, Any], capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's position (GiB since the run's start) and speed (MB/s): bytes / simulated time
    between the rows that enclose ``WINDOW`` × the capacity centred on it, inside the phase."""
    t, b = rows["t"], rows["bytes"]
    half = capacity * WINDOW / 2
    last = len(b) - 1
    lo = np.clip(np.searchsorted(b, b[1:] - half, side="right") - 1, 0, last)
    hi = np.clip(np.searchsorted(b, b[1:] + half, side="left"), 0, last)
    dt = t[hi] - t[lo]
    with np.errstate(divide="ignore", invalid="ignore"):
        mbps = np.where(dt > 0, (b[hi] - b[lo]) / dt / MB, np.nan)
    return b[1:] / GIB, mbps


def _figures(name: str, rows: dict[str, Any], start: int, end: int, mbps: np.ndarray) -> dict[str, Any]:
    """``name``, ``mean_mbps``, ``min_mbps``, ``gib_start``, ``gib_end`` of the rows ``start``
    (where the part began) to ``end``."""
    t, b = rows["t"], rows["bytes"]
    elapsed = t[end] - t[start]
    finite = mbps[np.isfinite(mbps)]
    return {
        "name": name,
        "mean_mbps": float((b[end] - b[start]) / elapsed / MB) if elapsed > 0 else float("nan"),
        "min_mbps": float(finite.min()) if finite.size else float("nan"),
        "gib_start": float(b[start] / GIB),
        "gib_end": float(b[end] / GIB),
    }


def _sections(
    procedure: str,
    device: DeviceSource,
    capacity: int,
    result: api.Result,
    sections: Sequence[Section],
    column: str,
) -> Qualification:
    """The sections' figures and series from a run whose phases include them by name."""
    index = {phase["name"]: i for i, phase in enumerate(result.phases)}
    parts = []
    frames = []
    for section in sections:
        phase = index[section.name]
        rows = _rows(result.timeseries, phase, column)
        gib, mbps = _smoothed(rows, capacity)
        figures = _figures(section.name, rows, 0, len(rows["t"]) - 1, mbps)
        parts.append(
            {
                "name": section.name,
                "description": section.description,
                "mean_mbps": figures["mean_mbps"],
                "min_mbps": figures["min_mbps"],
                "waf": result.phases[phase]["waf"],
                "data_waf": result.phases[phase]["data_waf"],
                "gib_start": figures["gib_start"],
                "gib_end": figures["gib_end"],
            }
        )
        frames.append(
            pl.DataFrame({"section": section.name, "gib": gib, "mbps": mbps, "sim_seconds": rows["t"][1:]})
        )
    return Qualification(procedure, _label(device), capacity, parts, pl.concat(frames), result)


def _classify(frame: pl.DataFrame) -> list[str]:
    """Each row of the fill but the first (where it started): ``folding`` (folding ran), ``direct``
    (host data went straight to native blocks), ``pslc`` (the cache grew), else ``native``; all
    ``native`` without the pSLC columns or with them all zero."""
    columns = ("pslc_bytes", "folded_bytes", "direct_bytes")
    if not set(columns) <= set(frame.columns) or not any(frame[c].fill_null(0).max() for c in columns):
        return ["native"] * (frame.height - 1)
    pslc, folded, direct = (frame[c].fill_null(0).to_list() for c in columns)
    return [
        "folding" if folded[i] > 0 else "direct" if direct[i] > 0 else "pslc" if pslc[i] > pslc[i - 1] else "native"
        for i in range(1, frame.height)
    ]


def _merge_runs(classes: Sequence[str], ends: np.ndarray, shortest: float) -> list[tuple[str, int, int]]:
    """Consecutive rows of one class as ``(class, first row, last row)``, rows numbered from 1
    (``classes[i - 1]`` and ``ends[i]`` are row i's; ``ends[0]`` is where the phase started, in
    bytes), without runs of fewer than ``shortest`` bytes: consecutive short runs (rows that
    alternate, as when folding runs in bursts) become one run of the class that covers most of
    their bytes, and a run still short joins its longer neighbour."""

    def size(run: tuple[str, int, int]) -> float:
        return float(ends[run[2]] - ends[run[1] - 1])

    def coalesced(runs: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
        out: list[tuple[str, int, int]] = []
        for name, first, last in runs:
            if out and out[-1][0] == name:
                out[-1] = (name, out[-1][1], last)
            else:
                out.append((name, first, last))
        return out

    runs = coalesced([(name, i, i) for i, name in enumerate(classes, 1)])
    grouped: list[tuple[str, int, int]] = []
    i = 0
    while i < len(runs):
        j = i
        while j < len(runs) and size(runs[j]) < shortest:
            j += 1
        if j == i:
            grouped.append(runs[i])
            i += 1
            continue
        totals: dict[str, float] = {}
        for run in runs[i:j]:
            totals[run[0]] = totals.get(run[0], 0.0) + size(run)
        grouped.append((max(totals.items(), key=lambda item: item[1])[0], runs[i][1], runs[j - 1][2]))
        i = j
    runs = coalesced(grouped)
    while len(runs) > 1:
        sizes = [size(run) for run in runs]
        k = sizes.index(min(sizes))
        if sizes[k] >= shortest:
            break
        into = max((j for j in (k - 1, k + 1) if 0 <= j < len(runs)), key=sizes.__getitem__)
        name = runs[into][0]
        runs[min(k, into)] = (name, runs[min(k, into)][1], runs[max(k, into)][2])
        del runs[max(k, into)]
        runs = coalesced(runs)
    return runs


def _pairs(series: pl.DataFrame) -> list[list[float]]:
    """``[[gib, mbps], ...]`` of a series."""
    return [[gib, mbps] for gib, mbps in series.select("gib", "mbps").iter_rows()]


def _label(device: DeviceSource) -> str:
    """The device as the report names it."""
    if isinstance(device, Mapping):
        return str(device.get("device", {}).get("preset") or "custom")
    return str(device)


show_types(__name__)
