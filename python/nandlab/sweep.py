"""Parameter sweeps: a base config and axes, described once in a TOML file, run as one task per
grid point on a local process pool or a dask.distributed cluster, into one Parquet dataset that a
killed sweep resumes without losing anything finished::

    from nandlab import sweep

    s = sweep.load("examples/zombienand-grid.toml")
    s.only(cell=["tlc"], reserve=[0.3])                   # a smaller grid of the same file
    outcome = sweep.run(s, "results/grid", workers=2)     # or scheduler="tcp://host:8786", local_cluster=2
    outcome.results                                        # polars: one row per run

The sweep file::

    [sweep]
    name = "my-study"
    procedure = "run"               # or "lifetime-compare" (ZombieNAND and the baseline until death)
    base = "steady-state.toml"      # or an inline [base] table: the config every run starts from
    record = ["waf", "iops"]        # figures to keep (default: all); "timeseries = false" drops those

    [[axis]]                        # a list of values ...
    name = "op"
    key = "device.over_provisioning"
    values = ["7 %", "15 %", "28 %"]
    labels = ["7", "15", "28"]      # optional: names for the values in the results

    [[axis]]                        # ... a range (stop included) or a linspace ...
    key = "phase.1.read_fraction"   # list items by index; "phase.*.x" sets x in every phase
    range = { start = 0.0, stop = 0.5, step = 0.25 }

    [[axis]]                        # ... or several keys that move together (zipped)
    name = "cell"
    zip = [ { key = "device.preset", values = ["zombienand-synthetic-tlc", "zombienand-synthetic-mlc"] },
            { key = "phase.0.block_size", values = ["8KiB", "4KiB"] } ]
    labels = ["tlc", "mlc"]

The points are the axes' product, the first axis varying slowest. Each run is keyed by a hash of its
resolved config (presets applied, seed included) and the procedure, so a restarted or extended sweep
skips every run already finished. The output directory (``run``'s ``out``)::

    sweep.toml, sweep.json       the file as given; the resolved axes, procedure and base
    runs/<run_id>.parquet        one finished run's figures, all of them (written last: the run's
                                 commit mark; ``record`` selects from them for results.parquet)
    timeseries/run_id=<run_id>/part-0.parquet    its time series (hive-partitioned dataset)
    failures/<run_id>.json       a failed run's error and traceback
    results.parquet              one row per point, in sweep order: run, run_id, status, error,
                                 each axis (label or value) and key (value), then the figures
    wall.parquet                 run_id, wall_seconds (kept apart: results.parquet is deterministic)
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import io
import itertools
import json
import math
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl

from nandlab import api, files, pool, progress_bars
from nandlab._core import ConfigError
from nandlab.arguments import checked, show_types
from nandlab.procedures.base import write_manifest
from nandlab.terminal import shown

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["Axis", "Outcome", "Point", "Sweep", "load", "parse", "points", "run", "sweepable"]

DATASET = ("sweep.toml", "sweep.json", "results.parquet", "wall.parquet", "runs", "timeseries", "failures")
"""What a sweep's directory holds (see the module); its manifest names them."""
_SWEEP_KEYS = {"name", "procedure", "base", "record", "timeseries", "seed"}
_AXIS_KEYS = {"name", "key", "values", "range", "linspace", "zip", "labels"}

MAX_RUNS = 100_000
"""The most runs (grid points) a sweep has, and so values an axis has: each is checked before any runs."""

ProgressCallback = Callable[[int, int, int], None]
"""``progress(done, total, failed)``: called once before the first run and after each run."""


@dataclass(frozen=True)
class Axis:
    """One dimension of the grid: ``keys`` (dotted config paths) that take ``values[i]`` together
    at its ``i``-th position, named ``labels[i]`` (or by the value itself without labels)."""

    name: str
    keys: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]
    labels: tuple[str, ...] | None = None

    def coordinate(self, i: int) -> Any:
        """What the results call position ``i``: its label, or its value (a zipped axis: the first key's)."""
        return self.labels[i] if self.labels else self.values[i][0]

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True)
class Point:
    """One run of the grid: its place (``index`` in sweep order), its ``coordinates`` (axis name →
    label or value), the ``settings`` it makes (key → value), its ``config`` and ``run_id``."""

    index: int
    coordinates: dict[str, Any]
    settings: dict[str, Any]
    config: dict[str, Any]
    run_id: str


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep file (see the module)."""

    name: str
    procedure: str
    base: dict[str, Any]
    axes: tuple[Axis, ...]
    record: tuple[str, ...] | None = None
    timeseries: bool = True
    text: str = ""
    source: str = "<sweep>"
    report: dict[str, Any] = field(default_factory=dict)

    def only(self, **selection: Sequence[Any]) -> Sweep:
        """The same sweep on part of its grid: ``only(cell=["tlc"], reserve=[0.3])`` keeps those
        positions (by label, or by value) of the named axes. ConfigError (a ValueError) for an unknown axis or
        position."""
        by_name = {axis.name: axis for axis in self.axes}
        for name in selection:
            if name not in by_name:
                raise ConfigError(f"no axis {name!r}; the axes are {', '.join(by_name)}")
        axes = []
        for axis in self.axes:
            if axis.name not in selection:
                axes.append(axis)
                continue
            wanted = list(selection[axis.name])
            keep = [i for i in range(len(axis)) if _matches(axis.coordinate(i), wanted)]
            missing = [w for w in wanted if not any(_matches(axis.coordinate(i), [w]) for i in keep)]
            if missing:
                have = ", ".join(str(axis.coordinate(i)) for i in range(len(axis)))
                raise ConfigError(f"axis {axis.name!r} has no {missing[0]!r}; it has {have}")
            axes.append(replace(
                axis,
                values=tuple(axis.values[i] for i in keep),
                labels=tuple(axis.labels[i] for i in keep) if axis.labels else None,
            ))
        return replace(self, axes=tuple(axes))

    def __len__(self) -> int:
        return math.prod(len(axis) for axis in self.axes)


@dataclass(frozen=True)
class Outcome:
    """What ``run`` did: ``results`` (results.parquet), how many runs it ``ran`` now, how many were
    ``reused`` from earlier, how many ``failed``, and the output ``directory``."""

    results: pl.DataFrame
    ran: int
    reused: int
    failed: int
    directory: Path


def sweepable() -> tuple[str, ...]:
    """The procedures a sweep runs (those registered with a ``sweep`` runner): ``run``,
    ``nandlab.run`` on the point's config (every phase), its run summary and each phase's figures;
    ``lifetime-compare``, ``lifetime.compare`` (ZombieNAND and the baseline, each until death), its
    ratios and both runs' figures."""
    from nandlab import procedures

    return tuple(name for name, procedure in procedures.PROCEDURES.items() if procedure.sweep is not None)


def __getattr__(name: str) -> Any:
    """``PROCEDURES``: ``sweepable()``, read from the registry when asked for."""
    if name == "PROCEDURES":
        return sweepable()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- the sweep file ------------------------------------------------------------------------------


MAX_NAME = 64
"""The longest axis name (it heads a column and names figures: ``heatmap-waf-X-Y.png``)."""
RESERVED_NAMES = frozenset({"run", "run_id", "status", "error", "wall_seconds"})
"""Columns every sweep's results have: an axis cannot take their names."""

MAX_DEPTH = 32
"""How deep a sweep file's tables and arrays may nest (a config's deepest is four: base, device,
errors, a value)."""
MAX_AXES = 32
"""The most ``[[axis]]`` tables (a grid of 32 axes of two values is already 4 G runs, past ``MAX_RUNS``)."""
MAX_LABEL = 256
"""The longest axis label (it is a value in results.parquet's column and on a heatmap's axis)."""
MAX_LISTED = 1_000
"""The most names ``record`` and ``[report] heatmaps`` may list."""
_FIGURE_NAME = re.compile(r"[^/\\\x00-\x1f\x7f]{1,320}")
"""A figure's name as a column of the results has it (``waf``, ``life.read_latency_us.p99``: a phase's
name, up to 256 characters, and its figure), never a path."""


def _depth(value: Any) -> int:
    """How many tables and arrays ``value`` nests, looked at without recursion (stops past MAX_DEPTH)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)
    return deepest


@checked
def load(path: str | os.PathLike[str]) -> Sweep:
    """Read a sweep file; ``ConfigError`` names the file, the table and the key at fault."""
    p = Path(path)
    text = files.read_text(p, "sweep file")
    return parse(text, str(p), base_dir=p.parent)


@checked
def report_heatmaps(settings: Any, axes: Sequence[str], source: str) -> list[tuple[str, str, str]] | None:
    """A sweep file's ``[report]`` table checked against its ``axes`` (before any run: a wrong axis was
    found only once every run had run): the (value, x, y) of each heatmap it asks for, or None if it
    asks for none. Whether each value is a figure the runs give is checked on the results."""
    usage = "heatmaps = [{ x = AXIS, y = AXIS, value = FIGURE }, ...]"
    if not isinstance(settings, dict) or set(settings) - {"heatmaps"} \
            or not isinstance(settings.get("heatmaps", []), list):
        raise ConfigError(f"{source}: [report]: expected only {usage}")
    if "heatmaps" not in settings:
        return None
    if len(settings["heatmaps"]) > MAX_LISTED:
        raise ConfigError(f"{source}: [report] heatmaps: expected at most {MAX_LISTED:,}, found "
                          f"{len(settings['heatmaps']):,}")
    specs = []
    for number, spec in enumerate(settings["heatmaps"], 1):
        where = f"{source}: [report] heatmaps #{number}"
        if not isinstance(spec, dict) or set(spec) != {"x", "y", "value"} \
                or not all(isinstance(v, str) for v in spec.values()):
            raise ConfigError(f"{where}: expected {{ x = AXIS, y = AXIS, value = FIGURE }}, found {shown(repr(spec))}")
        for key in ("x", "y"):
            if spec[key] not in axes:
                raise ConfigError(f"{where}: {key} = {shown(repr(spec[key]))} is no axis; the axes are "
                                 f"{', '.join(axes)}")
        if not _FIGURE_NAME.fullmatch(spec["value"]):
            raise ConfigError(f"{where}: value = {shown(repr(spec['value']))[:100]} is no figure's name (a "
                              "figure's name has no slash or control character)")
        if spec["x"] == spec["y"]:
            raise ConfigError(f"{where}: x and y are both {shown(repr(spec['x']))}; give two axes")
        specs.append((spec["value"], spec["x"], spec["y"]))
    return specs


@checked
def parse(text: str, source: str = "<sweep>", base_dir: str | os.PathLike[str] = ".") -> Sweep:
    """A sweep from TOML text (``base = "file"`` is found relative to ``base_dir``)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: TOML syntax error: {error}") from None
    except RecursionError:
        raise ConfigError(f"{source}: tables or arrays nested thousands of levels deep") from None
    if _depth(doc) > MAX_DEPTH:
        raise ConfigError(f"{source}: tables, arrays or dotted keys nested more than {MAX_DEPTH} levels deep")
    unknown = set(doc) - {"sweep", "base", "axis", "report"}
    if unknown and "sweep" not in doc and "axis" not in doc and ({"device", "phase"} & set(doc)):
        raise ConfigError(f"{source}: this is an experiment ([device], [[phase]]), not a sweep: run it with "
                          "`nandlab run FILE`, or make it a sweep's base (see examples/zombienand-grid.toml)")
    if unknown:
        raise ConfigError(f"{source}: unknown table {sorted(unknown)[0]!r}; expected [sweep], [base], [[axis]], [report]")
    head = doc.get("sweep", {})
    if not isinstance(head, dict):
        raise ConfigError(f"{source}: [sweep] must be a table")
    for key in head:
        if key not in _SWEEP_KEYS:
            raise ConfigError(f"{source}: [sweep] unknown key {key!r}; expected one of {', '.join(sorted(_SWEEP_KEYS))}")
    procedure = head.get("procedure", "run")
    if procedure not in sweepable():
        raise ConfigError(f"{source}: [sweep] procedure: expected one of {', '.join(sweepable())}, found {procedure!r}")
    base = _base(head, doc.get("base"), source, Path(base_dir))
    if "seed" in head:
        base["seed"] = _integer(head["seed"], f"{source}: [sweep] seed")
    record = head.get("record")
    if record is not None and (not isinstance(record, list) or len(record) > MAX_LISTED
                               or not all(isinstance(r, str) and _FIGURE_NAME.fullmatch(r) for r in record)):
        raise ConfigError(f"{source}: [sweep] record: expected a list of at most {MAX_LISTED:,} figure names, "
                          "such as [\"waf\", \"iops\"] (no slash or control character)")
    timeseries = head.get("timeseries", True)
    if not isinstance(timeseries, bool):
        raise ConfigError(f"{source}: [sweep] timeseries: expected true or false")
    raw_axes = doc.get("axis", [])
    if not isinstance(raw_axes, list) or not raw_axes:
        raise ConfigError(f"{source}: expected at least one [[axis]]")
    if len(raw_axes) > MAX_AXES:
        raise ConfigError(f"{source}: expected at most {MAX_AXES} [[axis]] tables, found {len(raw_axes):,}")
    axes = tuple(_axis(raw, i, source) for i, raw in enumerate(raw_axes))
    names = [axis.name for axis in axes]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"{source}: two axes are named {name!r}; give each a distinct name")
    keys = [key for axis in axes for key in axis.keys]
    for key in keys:
        if keys.count(key) > 1:
            raise ConfigError(f"{source}: two axes set {key!r}; zip them into one axis instead")
    if "report" in doc:
        report_heatmaps(doc["report"], names, source)
    stem = re.sub(r"[^A-Za-z0-9_.+=,-]+", "-", Path(source).stem).strip("-").lstrip(".-")[:100] or "sweep"
    name = head.get("name", stem)
    # The name is the folder under results/ its dataset goes to without --out: one plain name, never a
    # path (an absolute or ../ name put results, and overwrote files, wherever the file said).
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+=,-]{0,99}", name):
        raise ConfigError(f"{source}: [sweep] name: expected a plain name (letters, digits and _ . + = , -, "
                          f"at most 100, not starting with . or -; it names the folder under results/), "
                          f"found {str(name)[:60]!r}")
    return Sweep(
        name=name,
        procedure=procedure,
        base=base,
        axes=axes,
        record=tuple(record) if record is not None else None,
        timeseries=timeseries,
        text=text,
        source=source,
        report=doc.get("report", {}),
    )


def _base(head: Mapping[str, Any], inline: Any, source: str, base_dir: Path) -> dict[str, Any]:
    """The base config: ``[sweep] base = "file.toml"`` or an inline ``[base]`` (exactly one)."""
    if ("base" in head) == (inline is not None):
        raise ConfigError(f"{source}: give the base config either as [sweep] base = \"file.toml\" or as a [base] table")
    if inline is not None:
        if not isinstance(inline, dict):
            raise ConfigError(f"{source}: [base] must be a table (a nandlab config)")
        return copy.deepcopy(inline)
    path = base_dir / str(head["base"])
    try:
        return tomllib.loads(files.read_text(path, "base config file"))
    except ConfigError as error:
        raise ConfigError(f"{source}: [sweep] base: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: TOML syntax error: {error}") from None


def _axis(raw: Any, i: int, source: str) -> Axis:
    """One ``[[axis]]``: ``key`` with values, or ``zip`` of several; labels and name checked."""
    where = f"{source}: [[axis]] #{i + 1}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a table")
    unknown = set(raw) - _AXIS_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r}; expected one of {', '.join(sorted(_AXIS_KEYS))}")
    if ("key" in raw) == ("zip" in raw):
        raise ConfigError(f"{where}: give either key (with values, range or linspace) or zip, a list of such keys")
    if "zip" in raw:
        parts = raw["zip"]
        if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
            raise ConfigError(f"{where} zip: expected a list of {{ key = ..., values = [...] }} tables")
        for j, part in enumerate(parts):
            extra = set(part) - {"key", "values", "range", "linspace"}
            if extra or "key" not in part:
                raise ConfigError(f"{where} zip #{j + 1}: expected key and one of values, range, linspace")
        columns = [(_key(p["key"], f"{where} zip #{j + 1}"), _values(p, f"{where} zip #{j + 1}")) for j, p in enumerate(parts)]
        lengths = {len(values) for _, values in columns}
        if len(lengths) > 1:
            found = ", ".join(f"{key}: {len(values)}" for key, values in columns)
            raise ConfigError(f"{where} zip: zipped keys need as many values each, found {found}")
    else:
        columns = [(_key(raw["key"], where), _values(raw, where))]
    keys = tuple(key for key, _ in columns)
    values = tuple(zip(*(vals for _, vals in columns)))
    labels = raw.get("labels")
    if labels is not None:
        if not isinstance(labels, list) or len(labels) != len(values) or len(set(map(str, labels))) != len(labels) \
                or any(len(str(label)) > MAX_LABEL for label in labels):
            raise ConfigError(f"{where} labels: expected {len(values)} distinct labels of at most {MAX_LABEL} "
                              f"characters, one per value, found {shown(repr(labels))[:200]}")
        labels = tuple(str(label) for label in labels)
    name = raw.get("name", keys[0].split(".")[-1])
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where} name: expected a non-empty string")
    # Checked before anything runs: the name heads a column of results.parquet and names figures.
    if len(name) > MAX_NAME:
        raise ConfigError(f"{where} name: expected at most {MAX_NAME} characters, found {len(name):,}")
    if name in RESERVED_NAMES:
        raise ConfigError(f"{where} name: {name!r} is a column every sweep's results.parquet has "
                          f"({', '.join(sorted(RESERVED_NAMES))}): name the axis otherwise")
    return Axis(name=name, keys=keys, values=values, labels=labels)


def _key(key: Any, where: str) -> str:
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise ConfigError(f"{where} key: expected a dotted config path such as \"device.reserve\", found {key!r}")
    if key.count(".") >= MAX_DEPTH:
        raise ConfigError(f"{where} key: expected a dotted config path of at most {MAX_DEPTH} parts, found "
                          f"{key.count('.') + 1:,}")
    return key


def _values(raw: Mapping[str, Any], where: str) -> list[Any]:
    """The values of ``values``, ``range`` {start, stop, step} (stop included) or ``linspace``
    {start, stop, num}: exactly one of them."""
    given = [k for k in ("values", "range", "linspace") if k in raw]
    if len(given) != 1:
        raise ConfigError(f"{where}: give exactly one of values, range, linspace")
    spec = raw[given[0]]
    if given[0] == "values":
        if not isinstance(spec, list) or not spec:
            raise ConfigError(f"{where} values: expected a non-empty list")
        return list(spec)
    expected = ("start", "stop", "step") if given[0] == "range" else ("start", "stop", "num")
    if not isinstance(spec, dict) or set(spec) != set(expected):
        raise ConfigError(f"{where} {given[0]}: expected {{ {', '.join(f'{k} = ...' for k in expected)} }}")
    for k in expected:
        if not isinstance(spec[k], (int, float)) or isinstance(spec[k], bool) or not math.isfinite(spec[k]):
            raise ConfigError(f"{where} {given[0]} {k}: expected a number, found {spec[k]!r}")
    start, stop = spec["start"], spec["stop"]
    integral = all(isinstance(spec[k], int) for k in expected)
    if given[0] == "range":
        step = spec["step"]
        if step == 0 or (stop - start) / step < 0:
            raise ConfigError(f"{where} range: step {step} does not lead from {start} to {stop}")
        steps = (stop - start) / step
        if not math.isfinite(steps) or steps >= MAX_RUNS:
            raise ConfigError(f"{where} range: from {start} to {stop} by {step} is more than {MAX_RUNS:,} values")
        count = int(math.floor(steps + 1e-9)) + 1
        if count > MAX_RUNS:
            raise ConfigError(f"{where} range: {count} values; expected at most {MAX_RUNS:,}")
        values = [start + k * step for k in range(count)]
    else:
        num = spec["num"]
        if not isinstance(num, int) or num < 1 or num > MAX_RUNS:
            raise ConfigError(f"{where} linspace num: expected a whole number from 1 to {MAX_RUNS:,}, found {num!r}")
        values = [start + (stop - start) * k / (num - 1) if num > 1 else start for k in range(num)]
        integral = integral and all(float(v).is_integer() for v in values)
    return [int(round(v)) if integral else round(v, 12) for v in values]


def _integer(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{where}: expected a whole number ≥ 0, found {value!r}")
    return value


def _matches(coordinate: Any, wanted: Sequence[Any]) -> bool:
    return any(coordinate == w or str(coordinate) == str(w) for w in wanted)


# --- the grid ------------------------------------------------------------------------------------


@checked
def points(sweep: Sweep) -> list[Point]:
    """Every run of the sweep, in order (the first axis varies slowest), each config checked by the
    engine: ``ConfigError`` names the point and the key at fault before anything runs, or says the
    grid has more than ``MAX_RUNS`` points."""
    if len(sweep) > MAX_RUNS:
        sizes = " × ".join(f"{len(axis):,} {axis.name}" for axis in sweep.axes)
        raise ConfigError(f"{sweep.source}: {len(sweep):,} runs ({sizes}); expected at most {MAX_RUNS:,}")
    out = []
    for index, positions in enumerate(itertools.product(*(range(len(axis)) for axis in sweep.axes))):
        config = copy.deepcopy(sweep.base)
        settings: dict[str, Any] = {}
        coordinates: dict[str, Any] = {}
        for axis, i in zip(sweep.axes, positions):
            coordinates[axis.name] = axis.coordinate(i)
            for key, value in zip(axis.keys, axis.values[i]):
                settings[key] = value
                _set(config, key, value, f"{sweep.source}: [[axis]] {axis.name}")
        where = ", ".join(f"{name} = {value!r}" for name, value in coordinates.items())
        try:
            resolved = api.make_simulator(config).config
        except ConfigError as error:
            raise ConfigError(f"{sweep.source}: the run at {where}: {error}") from None
        # What a finished run holds depends on these alone (``record`` only selects from it).
        key = [sweep.procedure, sweep.timeseries, resolved]
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
        out.append(Point(index, coordinates, settings, config, digest[:16]))
    return out


def _set(config: dict[str, Any], key: str, value: Any, where: str) -> None:
    """Sets a dotted ``key`` in ``config``: tables are made as needed, list items are chosen by index,
    ``*`` is every item."""
    parts = key.split(".")
    targets: list[Any] = [config]
    for depth, part in enumerate(parts[:-1]):
        following: list[Any] = []
        for node in targets:
            if isinstance(node, list):
                if part == "*":
                    following.extend(node)
                    continue
                if not part.isdigit() or int(part) >= len(node):
                    path = ".".join(parts[: depth + 1])
                    raise ConfigError(f"{where}: {key}: {path} is not an item of the base config's list of {len(node)}")
                following.append(node[int(part)])
            elif isinstance(node, dict):
                following.append(node.setdefault(part, [] if part == "phase" else {}))
            else:
                raise ConfigError(f"{where}: {key}: {'.'.join(parts[:depth])} is a value, not a table")
        targets = following
    for node in targets:
        if not isinstance(node, dict):
            raise ConfigError(f"{where}: {key}: {'.'.join(parts[:-1])} is not a table")
        node[parts[-1]] = copy.deepcopy(value)


# --- one run (in a worker process) ---------------------------------------------------------------


def _execute(procedure: str, config: dict[str, Any], timeseries: bool) -> dict[str, Any]:
    """Run one point; never raises. Returns ``figures`` (all of them, a flat dict), ``timeseries``
    (Parquet bytes, or None), ``wall_seconds``; or ``error`` and ``traceback`` if the run failed."""
    from nandlab import procedures

    started = time.perf_counter()
    try:
        figures, series = procedures.PROCEDURES[procedure].sweep(config)
    except BaseException as error:  # a failed run is recorded, never lost; Ctrl-C still stops
        if isinstance(error, KeyboardInterrupt):
            raise
        return {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
    data = None
    if timeseries:
        buffer = io.BytesIO()
        series.write_parquet(buffer)
        data = buffer.getvalue()
    return {"figures": figures, "timeseries": data, "wall_seconds": time.perf_counter() - started}


# --- running the grid ----------------------------------------------------------------------------


@checked
def run(
    sweep: Sweep,
    out: str | os.PathLike[str],
    workers: int | None = None,
    scheduler: str | None = None,
    local_cluster: int | None = None,
    progress: progress_bars.ProgressOption = "auto",
) -> Outcome:
    """Run every point not already finished in ``out`` and write the dataset (see the module).

    Args:
        workers: processes at once on this machine (default: all cores).
        scheduler: a dask.distributed scheduler's address (``tcp://host:8786``): each run is a task
            on the cluster's workers (which need nandlab installed).
        local_cluster: start a dask ``LocalCluster`` of this many worker processes instead.
        progress: a bar of the runs done: ``"auto"`` in a Jupyter notebook, ``True`` anywhere,
            ``False`` none; or a ``ProgressCallback`` (see ``nandlab.progress_bars``).

    A failed run is recorded (``failures/``, ``status = "failed"``) and does not stop the others.
    Raises ConfigError for a bad sweep or arguments (before anything runs).
    """
    pool.check_workers(workers, scheduler, local_cluster)
    problem = files.directory_problem(out)
    if problem is not None:
        raise ConfigError(f"out {shown(os.fspath(out))[:200]!r}: {problem}")
    grid = points(sweep)
    directory = Path(out)
    for sub in ("runs", "timeseries", "failures"):
        # A folder nandlab writes into is never a link: the run files would land where it points.
        files.unlink_link(directory / sub).mkdir(parents=True, exist_ok=True)
    _write_atomic(directory / "sweep.toml", sweep.text.encode())
    _write_atomic(directory / "sweep.json", json.dumps(_description(sweep, grid), indent=2, default=str).encode())
    todo = [p for p in grid if not (directory / "runs" / f"{p.run_id}.parquet").exists()]
    # Several points may share a config (an axis that changes nothing): run each config once.
    unique = list({p.run_id: p for p in todo}.values())
    total, failed = len(unique), 0
    tasks = ((p.run_id, (sweep.procedure, p.config, sweep.timeseries)) for p in unique)
    with progress_bars.runs(progress) as callback:
        if callback is not None:
            callback(0, total, 0)
        if scheduler is not None or local_cluster is not None:
            outcomes = pool.on_dask(_execute, tasks, scheduler, local_cluster)
        else:
            outcomes = pool.on_processes(_execute, tasks, workers or os.cpu_count() or 1)
        for done, (run_id, outcome) in enumerate(outcomes, 1):
            failed += not _store(directory, run_id, outcome)
            if callback is not None:
                callback(done, total, failed)
    results = _results(directory, sweep, grid)
    _write_atomic(directory / "results.parquet", _parquet(results))
    write_manifest(directory, "sweep", _dataset(directory))
    return Outcome(results=results, ran=total, reused=len(grid) - len(todo), failed=failed, directory=directory)


def _dataset(directory: Path) -> list[Path]:
    """The parts of the sweep's dataset ``directory`` holds (``DATASET``)."""
    return [directory / name for name in DATASET if (directory / name).exists()]


def _description(sweep: Sweep, grid: Sequence[Point]) -> dict[str, Any]:
    """sweep.json: what the sweep is, for reports."""
    return {
        "name": sweep.name,
        "procedure": sweep.procedure,
        "runs": len(grid),
        "axes": [{"name": a.name, "keys": list(a.keys), "labels": list(a.labels) if a.labels else None,
                  "values": [list(v) for v in a.values]} for a in sweep.axes],
        "base": sweep.base,
        "report": sweep.report,
    }


def _store(directory: Path, run_id: str, outcome: Mapping[str, Any]) -> bool:
    """Writes one outcome (time series first, then the figures as the commit mark); False if failed."""
    if "error" in outcome:
        _write_atomic(directory / "failures" / f"{run_id}.json",
                      json.dumps({"error": outcome["error"], "traceback": outcome["traceback"]}, indent=2).encode())
        return False
    if outcome["timeseries"] is not None:
        part = files.unlink_link(directory / "timeseries" / f"run_id={run_id}")
        part.mkdir(exist_ok=True)
        _write_atomic(part / "part-0.parquet", outcome["timeseries"])
    wall = pl.DataFrame({"wall_seconds": [outcome["wall_seconds"]]})
    _write_atomic(directory / "runs" / f"{run_id}.wall.parquet", _parquet(wall))
    _write_atomic(directory / "runs" / f"{run_id}.parquet", _parquet(pl.DataFrame([outcome["figures"]])))
    (directory / "failures" / f"{run_id}.json").unlink(missing_ok=True)
    return True


def _results(directory: Path, sweep: Sweep, grid: Sequence[Point]) -> pl.DataFrame:
    """results.parquet: one row per point in sweep order; and wall.parquet beside it."""
    rows, walls, names = [], [], set()
    for p in grid:
        head: dict[str, Any] = {"run": p.index, "run_id": p.run_id}
        figures = directory / "runs" / f"{p.run_id}.parquet"
        if figures.exists():
            head.update(status="ok", error=None)
            body = pl.read_parquet(figures, glob=False)  # the directory is the user's: its name may hold [ or *
            names.update(body.columns)
            if sweep.record is not None:
                body = body.select(c for c in body.columns if c in sweep.record or c.rsplit(".", 1)[-1] in sweep.record)
            walls.append(pl.read_parquet(directory / "runs" / f"{p.run_id}.wall.parquet", glob=False).with_columns(run_id=pl.lit(p.run_id)))
        else:
            failure = json.loads((directory / "failures" / f"{p.run_id}.json").read_text(encoding="utf-8"))
            head.update(status="failed", error=failure["error"])
            body = pl.DataFrame()
        head.update(p.coordinates)
        head.update({key: value for key, value in p.settings.items() if key not in p.coordinates})
        # A figure named as an axis or a setting (an axis called `waf`) keeps its value as `waf (figure)`.
        body = body.rename({c: f"{c} (figure)" for c in body.columns if c in head})
        rows.append(pl.concat([pl.DataFrame([head]), body], how="horizontal") if body.width else pl.DataFrame([head]))
    _check_record(sweep.record, names, directory)
    if walls:
        _write_atomic(directory / "wall.parquet", _parquet(pl.concat(walls).select("run_id", "wall_seconds")))
    return pl.concat(rows, how="diagonal_relaxed")


def _check_record(record: tuple[str, ...] | None, names: set[str], directory: Path) -> None:
    """A name in ``[sweep] record`` that no finished run's figures have is a mistake, said once the
    runs can show it (they stay in ``directory``: a corrected sweep reuses them)."""
    if record is None or not names:
        return
    known = names | {name.rsplit(".", 1)[-1] for name in names}
    unknown = [name for name in record if name not in known]
    if not unknown:
        return
    said = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(known), n=1)
        said.append(_quoted(name) + (f" (did you mean {_quoted(close[0])}?)" if close else ""))
    raise ConfigError(
        f"[sweep] record: no finished run has a figure named {', '.join(said)}; "
        f"their figures are listed in {directory / 'runs'}/*.parquet. The finished runs are kept: "
        "correct record and run the sweep again, which reuses them")


def _quoted(name: str) -> str:
    return f'"{shown(name[:64])}"' if len(name) <= 64 else f'"{shown(name[:64])}…"'


def _parquet(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def _write_atomic(path: Path, data: bytes) -> None:
    """Writes ``data`` so that ``path`` is either absent, its old content or all of ``data``, even
    if the process is killed at any moment."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


show_types(__name__)
