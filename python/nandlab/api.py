"""Running experiments from Python: turn a config into a Simulator, run its phases, collect a
Result; with a snapshot file, stop on a signal and go on later (``resume``)."""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np
import polars as pl

from nandlab import _core, files, plausible
from nandlab._core import ConfigError, SimulationError, Simulator, SnapshotError, default_config_toml
from nandlab.terminal import shown

ConfigSource = Union[Mapping[str, Any], str, os.PathLike, None]
"""A config: a dict, TOML text, a path to a ``.toml`` file, or None for the built-in default."""

ProgressCallback = Callable[[float, dict[str, Any]], None]
"""``progress(fraction, info)``: fraction of the current phase done (0..1), and the engine's
figures (``sim_seconds``, ``host_write_bytes``, ``wear_used``, ``reserve_used``, ...) plus ``phase``
(index), ``phase_name``, ``phases`` (how many the run has), ``until_dead`` (whether the phase runs
until the drive dies) and ``zombie`` (whether the drive's worn blocks live on at fewer bits)."""

Progress = Union[ProgressCallback, bool, str, None]
"""A run's ``progress``: ``"auto"`` (a bar in a Jupyter notebook, none elsewhere), ``True`` (a bar
anywhere), ``False``/``None`` (none), or a ``ProgressCallback`` (see ``nandlab.progress_bars``)."""


@dataclass(frozen=True, repr=False)
class Result:
    """Everything one run produced.

    Attributes:
        summary: figures for the whole run (``waf``, ``iops``, ``mbps``, ``read_latency_us``, ...).
        phases: one dict per phase, in order, with the same keys as ``summary``; a phase of
            ``[[phase.job]]``s also has ``jobs``, each job's own figures (``name``, ``iops``,
            ``mbps``, ``read_latency_us``, ...).
        timeseries: all phases' interval samples, concatenated, with a ``phase_name`` column.
        device: derived device figures (``user_capacity_bytes``, ``blocks``, ``interface``, ...).
        config: the resolved config (presets applied), as the engine ran it.
        erase_counts: erase count of every block at the end of the run.
        config_toml: the config as it was given, as TOML text with the run's seed: ``nandlab run``
            of it runs the same experiment again, from any directory (traces' paths made absolute).
    """

    summary: dict[str, Any]
    phases: list[dict[str, Any]]
    timeseries: pl.DataFrame
    device: dict[str, Any]
    config: dict[str, Any]
    erase_counts: list[int]
    config_toml: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The run as one JSON-able document: ``summary``, ``phases`` and ``device``, and for
        convenience every key of the run summary at the top level too."""
        return {**self.summary, "summary": self.summary, "phases": self.phases, "device": self.device}

    def __repr__(self) -> str:
        names = [phase["name"] for phase in self.phases]
        return (
            f"Result(phases={names}, waf={self.summary['waf']}, "
            f"iops={self.summary['iops']}, timeseries={self.timeseries.height} rows)"
        )


def make_simulator(config: ConfigSource = None, seed: int | None = None) -> Simulator:
    """Build a Simulator (a fresh drive) from a config.

    Args:
        config: a dict (same schema as the TOML file), TOML text, a path to a TOML file, or None
            for the built-in default experiment. A ``str`` containing a newline or ``=`` is TOML
            text; any other ``str`` (and any ``os.PathLike``) is a path.
        seed: overrides the config's ``seed``.

    Raises:
        ConfigError: the config is invalid, or the file cannot be read.
    """
    seed = _check_seed(seed)
    text, fmt, source = _config_text(config)
    return Simulator(text, format=fmt, source=source, seed=seed)


def check_config(config: ConfigSource = None) -> dict[str, Any]:
    """Check a config (as ``make_simulator`` takes it) as a run reads it, without building the drive:
    every key, the drive's shape and spare space. Raises ConfigError naming what is wrong; returns the
    drive's figures (``Simulator.device``: geometry, capacities, interface)."""
    text, form, source = _config_text(config)
    return _core.check_config(text, source, form)


def _check_argument(name: str, value: Any, kinds: tuple[type, ...], expected: str) -> None:
    """ConfigError naming the argument ``name`` unless ``value`` is None or of ``kinds``."""
    if value is not None and not isinstance(value, kinds):
        raise ConfigError(f"{name}: expected {expected} or None, found {type(value).__name__} {_short(value)}")


def _check_seed(seed: Any) -> int | None:
    """``seed``: None or a whole number from 0 to 2⁶⁴ − 1 (a NumPy integer too; a bool is none), as an
    int; ConfigError otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**64:
        shown = repr(seed) if not isinstance(seed, int) or seed.bit_length() < 80 else f"a {seed.bit_length()}-bit number"
        raise ConfigError(f"seed: expected a whole number from 0 to 18446744073709551615, found {shown}")
    return int(seed)


def run(
    config: ConfigSource = None,
    seed: int | None = None,
    progress: Progress = "auto",
    snapshot: str | os.PathLike[str] | None = None,
    snapshot_every: str | None = None,
    notes: Mapping[str, Any] | None = None,
    overwrite_snapshot: bool = False,
) -> Result:
    """Run every phase of an experiment, in order, on one drive. A drive that wears out ends the run
    in the phase it dies in, whatever that phase's stop: its figures carry ``death`` and
    ``death_cause``, and the phases after it are not in the Result (``every_phase`` refuses such a
    Result for code that needs them all).

    Args:
        config: see ``make_simulator``.
        seed: overrides the config's ``seed``; the same config and seed give the same results.
        progress: a progress bar: ``"auto"`` draws one in a Jupyter notebook (none elsewhere),
            ``True`` anywhere (on stderr outside a notebook), ``False`` none; or a callable, called
            about every 0.2 s of wall time as ``progress(fraction, info)`` (see ``ProgressCallback``);
            if it raises, the run stops and the exception propagates. A bar closes when the run
            ends, fails or is interrupted.
        snapshot: a file for the run's whole state. A signal (Ctrl-C, or any exception a signal
            handler raises) or ``progress`` raising then stops the run at its next sync point
            with its state written there, raising ``Interrupted`` (its ``snapshot`` is the path,
            its ``__cause__`` the exception); ``resume`` goes on, and ends exactly as the run
            would have.
        snapshot_every: also write the snapshot this often: simulated time (``"10s"``,
            ``"5min"``) or bytes the host moved (``"50GiB"``). A run killed outright goes on
            from the last one.
        notes: JSON-able values kept in the snapshot for whoever resumes it (``Paused.notes``).
        overwrite_snapshot: write over ``snapshot`` even if it holds the snapshot of another run
            (another config or seed); without it, only a snapshot of this same run is replaced.

    Raises:
        ConfigError: the config (or ``snapshot_every``) is invalid; nothing ran.
        SnapshotError: ``snapshot`` is a file that is not a snapshot (it is never overwritten),
            or the snapshot of another run (without ``overwrite_snapshot``).
        Interrupted: a signal (or ``progress``) stopped the run; its state is in ``snapshot``.
        SimulationError: the engine failed during the run.
    """
    _check_argument("snapshot", snapshot, (str, os.PathLike), "a path")
    _check_argument("snapshot_every", snapshot_every, (str,), 'text like "10s" or "50GiB"')
    if notes is not None and not isinstance(notes, Mapping):
        raise ConfigError(f"notes: expected a dict of JSON-able values, found {type(notes).__name__}")
    notes = dict(notes or {})
    try:
        size = len(json.dumps(notes))
    except (TypeError, ValueError, RecursionError) as error:
        raise ConfigError(f"notes: expected JSON-able values (dicts, lists, strings, numbers): {error}") from None
    if size > MAX_NOTES_CHARS:
        raise ConfigError(f"notes: {size:,} characters as JSON, more than the {MAX_NOTES_CHARS:,} a snapshot keeps")
    sim = make_simulator(config, seed)
    if snapshot is None and snapshot_every is not None:
        raise ConfigError("snapshot_every: needs a snapshot file to write to")
    if snapshot is not None:
        sim.snapshot_to(os.fspath(snapshot), every=snapshot_every, force=overwrite_snapshot)
    return _go_on(sim, [], [], notes, progress)


@dataclass(frozen=True)
class Paused:
    """A run read back from its snapshot, ready to go on.

    Attributes:
        simulator: the drive and the phase under way, where the snapshot was taken.
        phase: index of the phase that goes on first.
        notes: what the run's caller kept in the snapshot (``run(..., notes=...)``).
        done: the figures of the phases finished before ``phase`` (as ``Result.phases`` has them).
        series: their time series, a dict of columns each.
    """

    simulator: Simulator
    phase: int
    notes: dict[str, Any]
    done: list[dict[str, Any]]
    series: list[dict[str, list[Any]]]

    def go_on(self, progress: Progress = "auto") -> Result:
        """Run the rest of the experiment (``progress`` as ``run`` takes it); the Result is the whole
        run's, as if it never stopped."""
        return _go_on(self.simulator, list(self.done), list(self.series), self.notes, progress)


def open_snapshot(path: str | os.PathLike[str]) -> Paused:
    """Read a snapshot written by ``run(..., snapshot=...)``.

    Raises:
        SnapshotError: the file is missing, damaged, not a snapshot, or from another version.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise SnapshotError(f"path: expected a snapshot's path, found {type(path).__name__} {_short(path)}")
    if os.path.exists(path) and not os.path.isfile(path):
        # A FIFO or a device would block the read (deaf to Ctrl-C), or never hold a snapshot.
        raise SnapshotError(f"{path}: not a regular file")
    sim = Simulator.resume(os.fspath(path))
    try:
        kept = json.loads(sim.snapshot_extra or "{}")
        done, series, notes = kept.get("phases", []), kept.get("timeseries", []), kept.get("notes", {})
        if not (isinstance(notes, dict) and _dicts(done) and _dicts(series)) or \
                len(json.dumps(notes)) > MAX_NOTES_CHARS:
            raise TypeError
        # Each finished phase's figures as the engine gives a phase's (the run summary has the same
        # keys): altered ones would fail only when the rest of the run has been run.
        template = sim.run_summary()
        if not all(_is_phase(phase, template, sim.device) for phase in done):
            raise TypeError
        if not all(_is_timeseries(columns) for columns in series):
            raise TypeError
        rows = sum(len(columns["sim_seconds"]) for columns in series)
        if rows > MAX_KEPT_ROWS:
            raise SnapshotError(f"{path}: its finished phases keep {rows:,} time-series rows, more than the "
                                f"{MAX_KEPT_ROWS:,} nandlab takes back (a run's phases with a coarser interval "
                                "keep fewer)")
    except (ValueError, AttributeError, TypeError, RecursionError, pl.exceptions.PolarsError):
        raise SnapshotError(f"{path}: not a snapshot of `nandlab run` (what the run kept with it is not "
                            "its finished phases and notes)") from None
    except MemoryError:
        raise SnapshotError(f"{path}: what the run kept with it (its finished phases and notes) does not fit "
                            "in the memory left") from None
    phase = sim.paused_phase if sim.paused_phase is not None else len(done)
    if not (phase < len(sim.phase_names) and len(done) >= phase and len(series) >= phase):
        raise SnapshotError(f"{path}: not a snapshot of `nandlab run` (it keeps {len(done)} finished phases of "
                            f"{len(sim.phase_names)}, and goes on with phase {phase + 1})")
    return Paused(simulator=sim, phase=phase, notes=notes, done=done[:phase], series=series[:phase])


MAX_NOTES_CHARS = 1 << 20
"""The largest ``notes`` a snapshot keeps, as JSON (nandlab's own are a few hundred characters; a 50 M-item
list took 12 s and 1 GB to take back)."""
MAX_KEPT_ROWS = files.MAX_TABLE_ROWS
"""The most time-series rows the finished phases of a snapshot may keep: what ``nandlab report`` reads
of a time series (a run's default is 200 a phase; a million rows took 2.8 GB to take back and draw)."""

_OPTIONAL = {  # a phase's figures that are null or missing in some runs: what each is like when there
    "capacity_short_since_bytes": 0, "capacity_at_death": 0.0, "integrity": {"stamped": 0, "checked_reads": 0},
    "power_loss": {"cuts": 0, "acknowledged_lost_units": 0, "lost_by_reason": {}, "relocated_units": 0,
                   "in_flight": {}}, "trace_skipped": {"lines": 0}, "latency_bins": {}, "jobs": [],
    "power_losses": [], "waf": 0.0, "data_waf": 0.0, "latency_us_mean": 0.0,
    "unwritten_read_bytes": 0, "map_lookups": 0, "map_extent_lookups": 0, "hot_bytes": 0,
    # None without a request of the kind.
    "read_latency_us": {"p50": 0.0, "p99": 0.0, "p999": 0.0, "max": 0.0, "mean": 0.0, "percentiles": []},
    "write_latency_us": {"p50": 0.0, "p99": 0.0, "p999": 0.0, "max": 0.0, "mean": 0.0, "percentiles": []},
}

_LEFT_OUT = frozenset({"unwritten_read_bytes", "map_lookups", "map_extent_lookups", "hot_bytes", "latency_bins"})
"""Figures the engine leaves out of a phase that has none (its run's summary may have them)."""

MAX_HISTOGRAM = 200_000
"""The most distinct erase counts a summary's histogram holds (a block's erases stay below its rating's
few hundred thousand)."""


def _is_phase(phase: dict[str, Any], template: dict[str, Any], device: dict[str, Any]) -> bool:
    """``phase`` holds a finished phase's figures as the engine gives them: every key of
    ``template`` (the run's summary so far) with a value like it, each figure that a run may leave
    null of its kind, and jobs and power cuts as lists of figures; each figure one that can exist
    (``plausible``) on ``device`` (the simulator's)."""
    if not all(key in phase and (key in _OPTIONAL or _like(phase[key], value)) or key in _LEFT_OUT
               for key, value in template.items()):
        return False
    if not (_figures(phase) and len(phase["name"]) <= _core.MAX_NAME_CHARS):
        return False
    if phase.get("death") is not None or phase.get("death_cause") is not None:
        return False  # a drive that died ends the run: no phase after it was kept
    if len(phase["erase_count_histogram"]) > MAX_HISTOGRAM or plausible.impossible(phase) is not None:
        return False
    if plausible.blocks_problem(phase, device["blocks"]) is not None:  # no more blocks than the drive has
        return False
    for key, like in _OPTIONAL.items():
        value = phase.get(key)
        if value is not None and not _like(value, like):
            return False
    if not all(_latency_as_requests(item) for item in [phase, *(phase.get("jobs") or [])] if isinstance(item, dict)):
        return False
    job = {key: template[key] for key in _JOB_KEYS if key in template and key not in _OPTIONAL}
    jobs = phase.get("jobs") or []
    if not all(item.get(key) is None or _like(item[key], _OPTIONAL[key]) for item in jobs if isinstance(item, dict)
               for key in ("read_latency_us", "write_latency_us")):
        return False
    return all(_like(item, job) for item in jobs) and \
        all(_like(item, _CUT) for item in phase.get("power_losses") or [])


def _latency_as_requests(figures: dict[str, Any]) -> bool:
    """A direction's latencies are None only where it had no request (and its requests a count)."""
    return all(figures.get(f"{kind}_latency_us") is not None or figures.get(f"host_{kind}_requests") == 0
               for kind in ("read", "write"))


_JOB_KEYS = ("name", "host_read_bytes", "host_write_bytes", "host_requests", "host_read_requests",
             "host_write_requests", "mbps", "read_mbps", "write_mbps", "iops", "read_latency_us",
             "write_latency_us", "sim_seconds")
"""The figures of a phase's job (a ``[[phase.job]]``) that a phase has too."""

_CUT = {"at_seconds": 0.0, "ready_seconds": 0.0, "recovery_us": 0.0, "in_flight": {}, "scanned_pages": 0,
        "relocated_units": 0, "acknowledged_lost_units": 0, "lost_by_reason": {}, "lost": [],
        "unacknowledged_lost_units": 0, "unacknowledged_survived_units": 0}
"""A power cut's record as the engine gives it (its dicts and list are figures: ``_figures``)."""


def _like(value: Any, template: Any) -> bool:
    """``value`` is of ``template``'s kind, all the way down: a whole number from 0 below 2⁶⁴ for a
    whole number (the engine's counts), a number for a float (or None: NaN read back), the same
    type otherwise; a dict with each of the template's keys like it, a list whose items are each
    like the template's first. A None template is anything."""
    if template is None:
        return True
    if isinstance(template, bool):
        return type(value) is bool
    if isinstance(template, int):
        return type(value) is int and 0 <= value < 2**64
    if isinstance(template, float):
        # A number a float holds (a 401-digit integer failed only when the run's results were put
        # together), not below 0 nor infinite: no figure of the engine's is (NaN is: WAF without writes).
        return value is None or (type(value) in (float, int) and not value < 0 and value != math.inf
                                 and (type(value) is float or value < 2**1023))
    if type(value) is not type(template):
        return False
    if isinstance(template, dict):
        return all(key in value and _like(value[key], item) for key, item in template.items())
    if isinstance(template, list) and template:
        return all(_like(item, template[0]) for item in value)
    return True


def _figures(value: Any, depth: int = 0) -> bool:
    """``value`` is made of what a summary holds: numbers (whole ones within 64 bits), text that
    UTF-8 can write (no lone surrogate) of at most 64 KiB, booleans and nulls, in dicts and lists at
    most six deep."""
    if value is None or isinstance(value, (bool, float)):
        return True
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return len(value) <= 65_536
    if type(value) is int:
        return -(2**63) <= value < 2**64
    if depth < 6 and isinstance(value, dict):
        return all(_figures(item, depth + 1) for item in value.values())
    if depth < 6 and isinstance(value, list):
        return all(_figures(item, depth + 1) for item in value)
    return False


def _is_timeseries(columns: dict[str, Any]) -> bool:
    """``columns`` are a phase's time series as the engine gives it: its columns, in its order, of equal
    length, whole numbers where it has them, numbers (or null: NaN read back) elsewhere."""
    if list(columns) != list(_core.TIMESERIES_COLUMNS):
        return False
    lengths = {len(values) if isinstance(values, list) else -1 for values in columns.values()}
    if len(lengths) != 1 or -1 in lengths:
        return False
    for name, values in columns.items():
        if name in _core.TIMESERIES_INTEGER_COLUMNS:
            if not all(type(value) is int and -(2**63) <= value < 2**63 for value in values):
                return False
        elif not all(value is None or _like(value, 0.0) for value in values):
            return False
    return True


def _dicts(value: Any) -> bool:
    """``value`` is a list of dicts."""
    return isinstance(value, list) and all(isinstance(item, dict) for item in value)


def resume(path: str | os.PathLike[str], progress: Progress = "auto") -> Result:
    """Go on with a run from its snapshot (see ``run``, also for ``progress``); it keeps writing
    snapshots to ``path`` as the run did. The Result is identical to the uninterrupted run's (but for wall-clock times).

    Raises:
        SnapshotError: the file is missing, damaged, not a snapshot, or from another version.
        Interrupted: stopped again by a signal; the snapshot holds the new state.
    """
    return open_snapshot(path).go_on(progress)


PhaseRunner = Callable[[Simulator, int, Optional[ProgressCallback]], dict[str, Any]]
"""``runner(sim, index, progress)``: runs phase ``index`` and returns what ``Simulator.run_phase`` does."""


def _run_phase(sim: Simulator, index: int, progress: ProgressCallback | None) -> dict[str, Any]:
    return sim.run_phase(index, progress=progress)


def living_phase(sim: Simulator, index: int, progress: ProgressCallback | None = None) -> dict[str, Any]:
    """``sim.run_phase(index)`` for a procedure that needs the drive alive after the phase: a drive
    that wears out in it (a phase not run ``until = "dead"``) raises SimulationError saying where."""
    output = sim.run_phase(index, progress=progress)
    _refuse_death(output["summary"], sim.config["phases"][index])
    return output


def every_phase(result: Result) -> Result:
    """``result`` if the drive lived through every phase not run ``until = "dead"``; else a
    SimulationError naming the phase it died in and why (for a procedure that reads every phase's
    figures: ``run`` leaves the phases after a death out of its Result)."""
    planned = result.config.get("phases") or []
    for index, phase in enumerate(result.phases):
        _refuse_death(phase, planned[index] if index < len(planned) else {})
    return result


def _refuse_death(summary: Mapping[str, Any], phase: Mapping[str, Any]) -> None:
    if summary.get("death") and not phase.get("until_dead"):
        raise SimulationError(f"the drive died in phase `{summary['name']}`: {summary['death']}")


def _go_on(
    sim: Simulator,
    phases: list[dict[str, Any]],
    series: list[dict[str, Any]],
    notes: dict[str, Any],
    progress: Progress,
    last: PhaseRunner = _run_phase,
) -> Result:
    """``_run_phases`` under the progress bar ``progress`` asks for (as ``run`` takes it), which
    closes however the run ends."""
    from nandlab import progress_bars  # it imports nandlab.output, which imports this module

    with progress_bars.phases(progress) as callback:
        return _run_phases(sim, phases, series, notes, callback, last)


def _run_phases(
    sim: Simulator,
    phases: list[dict[str, Any]],
    series: list[dict[str, Any]],
    notes: dict[str, Any],
    progress: ProgressCallback | None,
    last: PhaseRunner,
) -> Result:
    """Runs the phases from ``len(phases)`` on, keeping the finished ones in the snapshot; the last
    one through ``last`` (``nandlab serve`` serves it). A drive that died in a phase run until it dies
    runs no more: the phases after it are left out of the Result."""
    names = sim.phase_names
    for index in range(len(phases), len(names)):
        if phases and phases[-1].get("death"):
            break
        if sim.snapshot_path is not None:
            # The finished phases' columns are NumPy arrays (or lists, read back from a snapshot).
            sim.snapshot_extra = json.dumps({"phases": phases, "timeseries": series, "notes": notes},
                                            default=lambda array: array.tolist())
        runner = last if index == len(names) - 1 else _run_phase
        config = sim.config
        until_dead = bool(config["phases"][index].get("until_dead"))
        zombie = bool(config["ftl"].get("zombie"))
        output = runner(sim, index, _phase_progress(progress, index, len(names), names[index], until_dead, zombie))
        # A phase of [[phase.job]]s also gives each job's own figures; one with power cuts, each cut.
        # A served phase also gives each client connection's figures and the data it held.
        extra = {key: output[key] for key in ("jobs", "power_losses", "connections", "failure", "served_power_cuts")
                 if output.get(key)}
        extra.update({key: output[key] for key in ("store_bytes", "data_file", "client_overhead_us", "snapshot",
                                                   "snapshot_error", "served_session") if key in output})
        phases.append({**output["summary"], **extra})
        series.append(output["timeseries"])
    # The engine marks a figure without meaning in an interval (WAF without host writes) NaN: null here.
    frames = [pl.DataFrame(columns).with_columns(pl.col(pl.Float64).fill_nan(None), phase_name=pl.lit(name))
              for columns, name in zip(series, names)]
    return Result(
        summary=sim.run_summary(),
        phases=phases,
        timeseries=pl.concat(frames, how="vertical_relaxed"),
        device=sim.device,
        config=sim.config,
        erase_counts=sim.erase_counts(),
        config_toml=given_toml(*sim.given_config),
    )


def given_toml(text: str, form: str, seed: int | None) -> str:
    """A config as ``Simulator`` was given it (``text`` in ``form``, "toml" or "json", and the seed
    given over its own) as TOML text ``nandlab run`` takes from anywhere: TOML without a seed given
    and without a relative trace path is the text as written, comments and all; otherwise the
    document with its ``seed`` set and each trace's path made absolute (a run reads it from where it
    started; nulls, "not given", left out)."""
    from nandlab import output

    document = _tomllib().loads(text) if form == "toml" else json.loads(text)
    moved = False
    phases = document.get("phase") if isinstance(document, dict) else None
    for phase in phases if isinstance(phases, list) else []:
        jobs = phase.get("job") if isinstance(phase, dict) else None
        for workload in [phase, *(jobs if isinstance(jobs, list) else [])]:
            trace = workload.get("trace") if isinstance(workload, dict) else None
            if isinstance(trace, str) and trace and not os.path.isabs(trace):
                workload["trace"] = os.path.abspath(trace)
                moved = True
    if form == "toml" and seed is None and not moved:
        return text
    if seed is not None:
        document = {"seed": seed, **{key: value for key, value in document.items() if key != "seed"}}
    return output.as_toml(document)


def _tomllib() -> Any:
    """The standard library's TOML reader (``tomli`` before Python 3.11)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    return tomllib


def _config_text(config: ConfigSource) -> tuple[str, str, str]:
    """The (text, format, source name) that ``Simulator`` takes for a config."""
    if config is None:
        return default_config_toml(), "toml", "<default config>"
    if isinstance(config, Mapping):
        try:
            return json.dumps(_plain(config, ""), allow_nan=True), "json", "<dict>"
        except RecursionError:
            raise ConfigError("<dict>: tables nested thousands of levels deep") from None
    if isinstance(config, str) and ("\n" in config or "=" in config):
        return config, "toml", "<string>"
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        return files.read_text(path, "config file"), "toml", str(path)
    raise ConfigError(f"config: expected a dict, TOML text, a path or None, found {type(config).__name__} {_short(config)}")


def _plain(value: Any, where: str) -> Any:
    """A config dict's ``value`` (at key ``where``) as JSON carries it: NumPy's numbers and arrays as
    Python's numbers and lists, tuples as lists; ConfigError naming the key of a value no setting can
    take (bytes, a set, an object, a key that is not text, a whole number past 64 bits: JSON would carry it as a float, and
    the message would show a rounded float)."""
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise ConfigError(f"{where or '<dict>'}: a key {type(key).__name__} {_short(key)}; "
                                  "keys are text")
        return {key: _plain(item, f"{where}.{key}" if where else key) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if hasattr(value, "dtype") and hasattr(value, "tolist"):  # a NumPy number, or an array as a list
        return _plain(value.tolist(), where)
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        shown = str(value) if value.bit_length() < 80 else f"a {value.bit_length()}-bit number"
        raise ConfigError(
            f"{where}: found {shown}, outside what any setting takes "
            "(whole numbers from -9,223,372,036,854,775,808 to 18,446,744,073,709,551,615)"
        )
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise ConfigError(f"{where or '<dict>'}: found {type(value).__name__} {_short(value)}, expected a number, text, "
                      "true or false, a list or a table")


def _short(value: Any) -> str:
    """``value`` as a message shows it: its repr, at most 40 characters, without control characters."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a user's object whose repr fails is still named by its type
        return "(no repr)"
    return shown(text if len(text) <= 40 else text[:40] + "…")


def _phase_progress(progress: ProgressCallback | None, index: int, count: int, name: str,
                    until_dead: bool, zombie: bool) -> ProgressCallback | None:
    """The callback for ``run_phase``: the user's, with the phase added to ``info``."""
    if progress is None:
        return None
    phase = {"phase": index, "phase_name": name, "phases": count, "until_dead": until_dead, "zombie": zombie}

    def report(fraction: float, info: dict[str, Any]) -> None:
        progress(fraction, {**info, **phase})

    return report



def _public_face() -> None:
    """``help(nandlab.run)`` shows the types, not their names as strings (this module's annotations are
    written lazily), on Python 3.9 too; Result and Paused print as ``nandlab.Result`` and
    ``nandlab.Paused``, where users find them."""
    from nandlab.arguments import show_types_of

    show_types_of([make_simulator, check_config, run, open_snapshot, resume, given_toml, Result, Paused])
    for kind in (Result, Paused):
        kind.__module__ = "nandlab"


_public_face()
