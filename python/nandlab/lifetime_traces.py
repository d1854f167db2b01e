"""The ZombieNAND paper's trace study (its Table III and Figs. 4–6): real traces replayed in a loop
on the trace drive presets until death, ZombieNAND beside the baseline, for each cell type and
reserve — a ``lifetime-compare`` sweep whose dataset keeps every run's time series::

    from nandlab import lifetime_traces

    study = lifetime_traces.study(["../shared/traces/msr_rsrch_1.csv"], endurance_scale=10, workers=2)
    study.table        # one row per trace × cell × reserve: lifetime and latency ratios, both sides
    study.curves       # latency over life (Fig. 6): ZombieNAND's over the baseline's, per run
    study.stats        # each trace's composition and address reuse (Table III, Fig. 4)

Each trace is replayed closed-loop at queue depth 1, its addresses numbered in order of first use
(``remap = "compact"``) and cut at the paper's "first 512 MB of unique addresses" — or at what the
sample holds, when that is less. A trace that writes nothing cannot wear a drive out and is left
out (``skipped``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from nandlab import lifetime, traces
from nandlab._core import ConfigError, SimulationError
from nandlab.arguments import checked, show_types

__all__ = ["CELLS", "RESERVES", "UNIQUE_BYTES", "Study", "study", "sweep_of"]

CELLS = ("tlc", "mlc")
RESERVES = (0.10, 0.20, 0.30)
UNIQUE_BYTES = 512 << 20
"""The paper replays "the first 512MB of unique addresses from every trace"."""
RATED = {"slc": 75_000, "mlc": 6_000, "tlc": 1_000}
"""The paper's ratings (the presets'), divided by ``endurance_scale``."""


@dataclass(frozen=True)
class Study:
    """The study's ``table`` (one row per trace × cell × reserve), its ``curves`` (latency over each
    run's life, Fig. 6), each trace's ``stats`` (``traces.stats``), the traces ``skipped`` (name →
    why) and the ``endurance_scale`` it ran at."""

    table: pl.DataFrame
    curves: pl.DataFrame
    stats: dict[str, dict[str, Any]]
    skipped: dict[str, str]
    endurance_scale: float


def _usable(paths: Sequence[str | os.PathLike[str]]) -> tuple[dict[str, Path], dict[str, dict], dict[str, str]]:
    """The traces that write (name → path), every trace's statistics, and why the others are left out."""
    chosen: dict[str, Path] = {}
    stats: dict[str, dict] = {}
    skipped: dict[str, str] = {}
    for raw in paths:
        path = Path(raw)
        name = path.name.split(".")[0]
        if name in chosen or name in skipped:
            raise ConfigError(f"{path}: two traces named {name}")
        summary = traces.stats(path, skip_bad=True)
        stats[name] = summary
        if not summary["write_bytes"] or summary["write_percent"] < 1.0:
            skipped[name] = f"writes {summary['write_percent']:.2f} % of its bytes: it cannot wear a drive out"
        else:
            chosen[name] = path
    if not chosen:
        raise ConfigError("no trace given writes: a lifetime study needs writes")
    return chosen, stats, skipped


@checked
def sweep_of(
    chosen: dict[str, Path],
    stats: dict[str, dict],
    cells: Sequence[str] = CELLS,
    reserves: Sequence[float] = RESERVES,
    endurance_scale: float = 1.0,
    seed: int = 1,
) -> Any:
    """The study as a ``nandlab.sweep.Sweep``: axes trace × cell × reserve."""
    from nandlab import sweep

    if not endurance_scale >= 1.0:
        raise ConfigError(f"endurance_scale: expected a number ≥ 1 (ratings divided by it), found {endurance_scale}")
    presets = [f"zombienand-trace-{cell}" for cell in cells]
    first = next(iter(chosen.values()))
    phase = traces.replay_phase(first, queue_depth=1, remap="compact", looping=True, skip_bad=True, until="dead")
    phase["name"] = "life"
    base = lifetime._with_wear_leveling({
        "seed": seed,
        "description": "ZombieNAND trace study (the paper's Figs. 5 and 6)",
        "device": {"preset": presets[0], "wear": {"rated": {m: r / endurance_scale for m, r in RATED.items()}}},
        "phase": [phase],
    })
    trace_values = tuple(
        (str(path.resolve()), min(stats[name]["footprint_bytes"], UNIQUE_BYTES)) for name, path in chosen.items()
    )
    axes = (
        sweep.Axis("trace", ("phase.0.trace", "phase.0.unique_bytes"), trace_values, tuple(chosen)),
        sweep.Axis("cell", ("device.preset",), tuple((p,) for p in presets), tuple(cells)),
        sweep.Axis("reserve", ("device.reserve",), tuple((r,) for r in reserves)),
    )
    return sweep.Sweep(name="zombienand-trace-study", procedure="lifetime-compare", base=base, axes=axes)


@checked
def study(
    paths: Sequence[str | os.PathLike[str]],
    cells: Sequence[str] = CELLS,
    reserves: Sequence[float] = RESERVES,
    endurance_scale: float = 1.0,
    workers: int | None = None,
    seed: int = 1,
    on_run: Callable[[int, int], None] | None = None,
    out: str | os.PathLike[str] | None = None,
) -> Study:
    """Run the study on the traces at ``paths`` (a sweep on ``workers`` processes, its dataset in
    ``out``: resumable; a temporary directory without one). ``endurance_scale`` divides every mode's
    rated cycles, to age the drives that many times faster (the ratios hold: see
    ``docs/zombienand/traces/README.md``). Raises SimulationError if a run failed."""
    from nandlab import sweep

    chosen, stats, skipped = _usable(paths)
    plan = sweep_of(chosen, stats, cells, reserves, endurance_scale, seed)
    progress = None if on_run is None else (lambda done, total, _failed: on_run(done, total))
    with tempfile.TemporaryDirectory(prefix="nandlab-traces-") as scratch:
        directory = Path(out if out is not None else scratch)
        results = sweep.run(plan, directory, workers=workers, progress=progress).results
        failed = results.filter(pl.col("status") == "failed")
        if failed.height:
            raise SimulationError(f"{failed.height} trace runs failed; the first: {failed['error'][0]}")
        curves = _curves(results, directory)
    table = results.select(
        "trace", "cell", "reserve", pl.col("phase.0.unique_bytes").alias("unique_bytes"), *lifetime.COMPARISON_COLUMNS
    )
    return Study(table, curves, stats, skipped, endurance_scale)


def _curves(results: pl.DataFrame, directory: Path) -> pl.DataFrame:
    """ZombieNAND's latency over life per run (Fig. 6): ``life`` is host bytes written as a
    percentage of the baseline's life (100 = the baseline dies); ``latency`` the zombie drive's mean
    latency over the baseline's at the same point of life (both drives' cells speed up as they wear),
    past the baseline's death over its mean in its last 5 % of life."""
    import numpy as np

    frames = []
    for row in results.iter_rows(named=True):
        series = pl.read_parquet(directory / "timeseries" / f"run_id={row['run_id']}" / "part-0.parquet", glob=False)
        life = row["baseline_host_write_bytes"]
        base = series.filter((pl.col("side") == "baseline") & pl.col("latency_mean_us").is_finite()).sort(
            "host_write_bytes")
        zombie = series.filter((pl.col("side") == "zombie") & pl.col("latency_mean_us").is_finite())
        if not (life and base.height and zombie.height):
            continue
        end = base.filter(pl.col("host_write_bytes") >= 0.95 * life)["latency_mean_us"].mean()
        at = np.interp(zombie["host_write_bytes"].to_numpy(), base["host_write_bytes"].to_numpy(),
                       base["latency_mean_us"].to_numpy())
        reference = np.where(zombie["host_write_bytes"].to_numpy() <= life, at, end)
        frames.append(pl.DataFrame({
            "trace": row["trace"], "cell": row["cell"], "reserve": row["reserve"],
            "life": 100 * zombie["host_write_bytes"].to_numpy() / life,
            "latency": zombie["latency_mean_us"].to_numpy() / reference,
        }))
    return pl.concat(frames) if frames else pl.DataFrame()


show_types(__name__)
