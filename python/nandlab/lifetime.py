"""Whole-lifetime studies: run a drive from pristine to dead, compare ZombieNAND with the baseline
(the same config with blocks retired at death) as the ZombieNAND paper's Fig. 6 does, and run the
paper's synthetic grid (its Fig. 3)::

    from nandlab import lifetime

    report = lifetime.compare("my-lifetime.toml")       # needs a phase with until = "dead"
    report["lifetime_ratio"], report["latency_ratio"]

    report = lifetime.compare(lifetime.synthetic("zombienand-synthetic-tlc", reserve=0.3, working_set=0.1))
    table = lifetime.grid(workers=2)                     # polars DataFrame, one row per cell (a sweep)
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from nandlab import api, slicing
from nandlab._core import ConfigError, SimulationError
from nandlab.arguments import checked

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["GRID_READ_LEVELS", "compare", "grid", "grid_sweep", "run", "synthetic"]

GRID_CELLS = ("tlc", "mlc")
GRID_RESERVES = (0.05, 0.10, 0.15, 0.20, 0.25, 0.30)
GRID_WORKING_SETS = (0.1, 0.25, 0.5, 1.0)
GRID_READ_LEVELS = {"low": 0.25, "medium": 0.5, "high": 0.75}
"""The paper's read/write ratios are "low", "medium" and "high" without numbers; these are the read
fractions nandlab uses for them."""
COMPARISON_COLUMNS = ("lifetime_ratio", "latency_ratio", "latency_ratio_after", *(
    f"{side}_{key}" for side in ("zombie", "baseline")
    for key in ("host_write_bytes", "drive_writes", "death", "capacity_at_death")
))
"""A comparison's figures in a study's table (a ``lifetime-compare`` sweep's columns)."""


@checked
def synthetic(
    preset: str,
    reserve: float = 0.3,
    working_set: float = 0.5,
    read_fraction: float = 0.0,
    seed: int = 1,
    death: str | None = None,
    capacity: str | int | None = None,
) -> dict[str, Any]:
    """The ZombieNAND paper's synthetic generator on a device preset: uniform random requests of one
    page over the first ``working_set`` of the drive, reads with probability ``read_fraction``,
    issued as fast as the drive accepts (queue depth 1) on a pristine drive until it dies; ``death``
    sets ``[ftl] death`` (``"capacity"``, the default, or the paper's ``"dead-blocks"``), ``capacity``
    the drive's ``[device] capacity`` (``"4GiB"``: the preset with more blocks per plane)."""
    config = _synthetic_config(preset, reserve, working_set, read_fraction, seed, death, capacity)
    api.check_config(config)  # a nan or 200 % is refused here, not when the run starts
    return config


def _synthetic_config(
    preset: str, reserve: float, working_set: float, read_fraction: float, seed: int, death: str | None,
    capacity: str | int | None,
) -> dict[str, Any]:
    """``synthetic``'s config, unchecked."""
    page = _page(preset)
    config = {
        "seed": seed,
        "description": f"ZombieNAND synthetic workload: {preset}, reserve {reserve:.0%}, "
        f"working set {working_set:.0%}, {read_fraction:.0%} reads",
        "device": {"preset": preset, "reserve": reserve, **({} if capacity is None else {"capacity": capacity})},
        "phase": [
            {
                "name": "life",
                "working_set": working_set,
                "read_fraction": read_fraction,
                "block_size": page,
                "queue_depth": 1,
                "until": "dead",
            }
        ],
    }
    if death is not None:
        config["ftl"] = {"death": death}
    return config


@checked
def changing(
    preset: str,
    reserve: float,
    steps: Sequence[tuple[float, float | None]],
    seed: int = 1,
    distribution: str | None = None,
) -> dict[str, Any]:
    """``synthetic``'s generator with a working set that changes during the life: one phase per
    ``(working_set, drive_writes)`` step, ``drive_writes`` in user capacities (``None``: until the drive
    dies), addresses uniform or as ``distribution`` says (``"zipf:0.9"``, ``"hotcold:0.8:0.2"``)."""
    phases = []
    for i, (working_set, drive_writes) in enumerate(steps):
        if drive_writes is None and i < len(steps) - 1:
            raise ValueError(f"step {i + 1} runs until the drive dies, so the {len(steps) - i - 1} after it would "
                             "never run: only the last step may have drive_writes None")
        phase: dict[str, Any] = {"name": f"step-{i}", "working_set": working_set, "queue_depth": 1,
                                 "block_size": _page(preset)}
        if distribution:
            phase["distribution"] = distribution
        phase.update({"until": "dead"} if drive_writes is None else {"volume": float(drive_writes)})
        phases.append(phase)
    config = {"seed": seed, "device": {"preset": preset, "reserve": reserve}, "phase": phases}
    api.check_config(config)
    return config


def _page(preset: str) -> str:
    """The page (one request) of a ZombieNAND preset: 4 KiB MLC, 8 KiB TLC."""
    return {"zombienand-synthetic-mlc": "4KiB", "zombienand-trace-mlc": "4KiB"}.get(preset, "8KiB")


def _as_dict(config: api.ConfigSource) -> dict[str, Any]:
    """A config as a dict (to set keys in it), from any form ``nandlab.run`` takes."""
    text, fmt, source = api._config_text(config)
    if fmt == "json":
        return json.loads(text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: TOML syntax error: {error}") from None


@checked
def run(
    config: api.ConfigSource,
    zombie: bool | None = None,
    seed: int | None = None,
    progress: api.Progress = "auto",
    slice_by: int | str | None = None,
    **snapshots: Any,
) -> dict[str, Any]:
    """Run a config until the drive dies; ``zombie`` overrides ``[ftl] zombie`` (``False`` also
    turns wear-unleveling off: the baseline, blocks retired at death under plain wear levelling);
    ``progress`` as ``nandlab.run`` takes it (by default a bar in a Jupyter notebook).
    ``snapshot``, ``snapshot_every``, ``overwrite_snapshot`` and ``notes`` go to ``nandlab.run`` (a
    run that can stop and go on; ``of_result`` of the resumed Result is what this returns).
    ``slice_by`` (a whole number, or ``"auto"``) runs the approximate mode: the drive cut to that
    share of its blocks (``nandlab.slicing``), its bytes and time scaled back to the whole drive.

    Returns ``host_write_bytes`` (written until death), ``drive_writes`` (that over the user
    capacity), ``death`` (why, or None if a phase ended first), ``capacity_short_since_bytes`` (host
    bytes written when the drive stopped holding its advertised capacity, under ``death =
    "dead-blocks"``; None if it never did), ``capacity_at_death`` (the share of its advertised capacity
    its usable flash still held when it died, 1 at most; None if it did not die), ``sim_seconds``, ``wall_seconds``
    and the ``result`` (a ``nandlab.Result``).
    """
    cfg = _as_dict(config)
    if not any(phase.get("until") == "dead" for phase in cfg.get("phase", [])):
        raise ConfigError('[[phase]]: a lifetime run needs a phase with until = "dead"')
    # A drive may die before the plan's last phase (a baseline worn out by a heavy first step): every I/O
    # phase ends at its own stop or at the death, which ends the lifetime.
    for phase in cfg["phase"]:
        if isinstance(phase, dict) and phase.get("kind", "io") in ("io", "trace") and "until" not in phase:
            phase["until"] = "dead"
    if zombie is not None:
        ftl = cfg.setdefault("ftl", {})
        ftl["zombie"] = zombie
        if not zombie:
            ftl["wear_unleveling"] = False
    if slice_by is None:
        return of_result(api.run(cfg, seed=seed, progress=progress, **snapshots))
    part = slicing.cut(cfg, slice_by)
    sliced = part.describe()
    notes = {**(snapshots.pop("notes", None) or {}), "slice": sliced}
    return of_result(api.run(part.config, seed=seed, progress=progress, notes=notes, **snapshots), sliced)


@checked
def of_result(result: api.Result, sliced: dict[str, Any] | None = None) -> dict[str, Any]:
    """A lifetime run's figures (see ``run``) from its Result; from a slice of the drive
    (``slicing.Slice.describe()``), as the whole drive's, with what the slice was under ``slice``."""
    if sliced is not None:
        return {**slicing.scaled(of_result(result), sliced), "slice": sliced}
    summary = result.summary
    return {
        "host_write_bytes": summary["host_write_bytes"],
        "drive_writes": summary["host_write_bytes"] / result.device["user_capacity_bytes"],
        "death": summary["death"],
        "death_cause": summary["death_cause"],
        "capacity_short_since_bytes": summary.get("capacity_short_since_bytes"),
        "capacity_at_death": summary.get("capacity_at_death"),
        "sim_seconds": summary["sim_seconds"],
        "wall_seconds": summary["wall_seconds"],
        "result": result,
    }


def _mean_latency(ts: pl.DataFrame, upto_bytes: float | None = None, after_bytes: float | None = None) -> float | None:
    """Request-weighted mean latency (µs) of the time-series rows in a range of host bytes written (None
    without a request there)."""
    ts = ts.with_columns(
        requests=(pl.col("iops") * pl.col("sim_seconds").diff().over("phase").fill_null(0.0)).clip(lower_bound=0.0)
    )
    if upto_bytes is not None:
        ts = ts.filter(pl.col("host_write_bytes") <= upto_bytes)
    if after_bytes is not None:
        ts = ts.filter(pl.col("host_write_bytes") > after_bytes)
    weight = ts["requests"].sum()
    if not weight:
        return None
    return float((ts["latency_mean_us"] * ts["requests"]).sum() / weight)


def _ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None where either has no meaning (no request, no byte written)."""
    return a / b if a is not None and b else None


@checked
def compare(
    config: api.ConfigSource, seed: int | None = None, progress: api.Progress = "auto", timeseries: bool = False,
    slice_by: int | str | None = None,
) -> dict[str, Any]:
    """Run ZombieNAND and the baseline from the same config, each until death (``progress`` as
    ``nandlab.run`` takes it: a bar for each run; ``slice_by`` as ``run`` takes it, for both).

    Returns ``lifetime_ratio`` (host bytes written until death, ZombieNAND / baseline),
    ``latency_ratio`` (mean request latency over the baseline's life, ZombieNAND / baseline),
    ``latency_ratio_after`` (ZombieNAND's mean after the baseline died / the baseline's mean), and
    ``zombie`` and ``baseline`` (each as ``run`` returns it, without ``result``); with
    ``timeseries``, also ``zombie_timeseries`` and ``baseline_timeseries`` (each run's whole time series).
    """
    # Both drives level wear the same way (ZombieNAND's usage-table GC), so
    # only the bit-mode switch and the early-switch pool differ.
    cfg = _with_wear_leveling(config)
    zombie = run(cfg, zombie=True, seed=seed, progress=progress, slice_by=slice_by)
    baseline = run(cfg, zombie=False, seed=seed, progress=progress, slice_by=slice_by)
    report = _report(_slim(zombie), _slim(baseline))
    if "slice" in zombie:
        report["slice"] = zombie["slice"]
    if timeseries:
        report.update(zombie_timeseries=zombie["result"].timeseries, baseline_timeseries=baseline["result"].timeseries)
    return report


def _with_wear_leveling(config: api.ConfigSource) -> dict[str, Any]:
    """The config as a dict, with ZombieNAND's usage-table GC unless it says otherwise."""
    cfg = _as_dict(config)
    cfg.setdefault("ftl", {}).setdefault("wear_leveling", True)
    return cfg


def _slim(outcome: dict[str, Any]) -> dict[str, Any]:
    """``run``'s result with only the time-series columns the latency ratios need (a grid keeps
    hundreds of runs)."""
    slim = {k: v for k, v in outcome.items() if k != "result"}
    series = outcome["result"].timeseries.select("phase", "sim_seconds", "host_write_bytes", "iops", "latency_mean_us")
    # A slice's bytes as the whole drive's, as its figures are.
    sliced = outcome.get("slice")
    if sliced is not None:
        series = series.with_columns(pl.col("host_write_bytes") * slicing.scale(sliced))
    slim["series"] = series
    return slim


def _report(zombie: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    """The lifetime and latency ratios of two runs (``_slim``'s results)."""
    base_ts = baseline["series"]
    zombie_ts = zombie["series"]
    base_latency = _mean_latency(base_ts)
    life = baseline["host_write_bytes"]
    return {
        "lifetime_ratio": _ratio(zombie["host_write_bytes"], life),
        "latency_ratio": _ratio(_mean_latency(zombie_ts, upto_bytes=life), base_latency),
        # None when ZombieNAND died first: it wrote nothing after the baseline's death.
        "latency_ratio_after": _ratio(_mean_latency(zombie_ts, after_bytes=life), base_latency),
        "zombie": {k: v for k, v in zombie.items() if k != "series"},
        "baseline": {k: v for k, v in baseline.items() if k != "series"},
    }


@checked
def grid(
    cells: Sequence[str] = GRID_CELLS,
    reserves: Sequence[float] = GRID_RESERVES,
    working_sets: Sequence[float] = GRID_WORKING_SETS,
    read_levels: dict[str, float] | None = None,
    workers: int | None = None,
    seed: int = 1,
    on_run: Callable[[int, int], None] | None = None,
    out: str | os.PathLike[str] | None = None,
    death: str | None = None,
) -> pl.DataFrame:
    """The paper's synthetic grid (Fig. 3): for each cell type (``tlc``, ``mlc``: the
    ``zombienand-synthetic-*`` presets), reserve, working set and read level, ZombieNAND and the
    baseline run until death — a ``lifetime-compare`` sweep (``grid_sweep``) on ``workers``
    processes, its dataset in ``out`` (resumable; a temporary directory without one).
    ``on_run(done, total)`` is called as grid cells finish. One row per grid cell, with
    ``lifetime_ratio``, ``latency_ratio``, ``latency_ratio_after`` and both runs' host bytes, drive
    writes and causes of death; ``death`` sets ``[ftl] death`` for every run. Raises SimulationError
    if a run failed."""
    from nandlab import sweep

    study = grid_sweep(cells, reserves, working_sets, read_levels, seed, death)
    progress = None if on_run is None else (lambda done, total, _failed: on_run(done, total))
    with tempfile.TemporaryDirectory(prefix="nandlab-grid-") as scratch:
        table = sweep.run(study, out if out is not None else scratch, workers=workers, progress=progress).results
    failed = table.filter(pl.col("status") == "failed")
    if failed.height:
        raise SimulationError(f"{failed.height} grid runs failed; the first: {failed['error'][0]}")
    return table.select(
        "cell", "reserve", "working_set", "read_level", pl.col("phase.0.read_fraction").alias("read_fraction"),
        *COMPARISON_COLUMNS,
    )


@checked
def grid_sweep(
    cells: Sequence[str] = GRID_CELLS,
    reserves: Sequence[float] = GRID_RESERVES,
    working_sets: Sequence[float] = GRID_WORKING_SETS,
    read_levels: dict[str, float] | None = None,
    seed: int = 1,
    death: str | None = None,
) -> Any:
    """The grid as a ``nandlab.sweep.Sweep`` (``examples/zombienand-grid.toml`` is the same, as a file)."""
    from nandlab import sweep

    levels = GRID_READ_LEVELS if read_levels is None else read_levels
    presets = [f"zombienand-synthetic-{cell}" for cell in cells]
    for name, values in (("cells", cells), ("reserves", reserves), ("working_sets", working_sets),
                         ("read_levels", levels)):
        if not values:
            raise ConfigError(f"lifetime.grid_sweep(): {name}: expected at least one, found none")
    for preset, reserve, working_set, read_fraction in itertools.zip_longest(
            presets, reserves, working_sets, levels.values()):
        # Each value is checked once (with the first of the others), not every cell of the grid.
        config = _synthetic_config(
            preset or presets[0], reserves[0] if reserve is None else reserve,
            working_sets[0] if working_set is None else working_set, read_fraction or 0.0, seed, death, None)
        try:
            api.check_config(config)
        except ConfigError as error:
            raise ConfigError(f"lifetime.grid_sweep(): {error}") from None
    base = _with_wear_leveling(synthetic(presets[0], seed=seed, death=death))
    base["description"] = "ZombieNAND synthetic workload (the paper's Fig. 3 grid)"
    axes = (
        sweep.Axis("cell", ("device.preset", "phase.0.block_size"),
                   tuple((preset, _page(preset)) for preset in presets), tuple(cells)),
        sweep.Axis("reserve", ("device.reserve",), tuple((r,) for r in reserves)),
        sweep.Axis("working_set", ("phase.0.working_set",), tuple((w,) for w in working_sets)),
        sweep.Axis("read_level", ("phase.0.read_fraction",), tuple((f,) for f in levels.values()), tuple(levels)),
    )
    return sweep.Sweep(name="zombienand-synthetic-grid", procedure="lifetime-compare", base=base, axes=axes)
