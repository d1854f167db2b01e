"""docs/zombienand/README.md (the synthetic grid) and docs/zombienand/traces/README.md (the trace study).

The grid's figures are worked out from the fresh ``lifetime-grid`` run's own files (``grid.csv``, and the
time series its sweep keeps in ``sweep/``), the trace study's from the fresh ``lifetime-traces`` run's
(``traces.csv``, ``composition.csv``, ``curves.parquet``); three cheaper runs of this module add the
readings of the paper (14 lifetime comparisons), the ``--endurance-scale`` check and what the engine
derives from the presets (pool sizes, watermarks)."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from check_docs.model import Cell, Claim, Registry, Run, SameFiles, Table
from check_docs.model import Value as V

GRID = "docs/zombienand/README.md"
TRACES = "docs/zombienand/traces/README.md"
SAMPLES = "{root}/../shared/traces"
STUDY_TRACES = ("msr_rsrch_1.csv", "tencent_cbs_sample_50k.csv", "msr_hm_0_first1000.csv",
                "ssdsim_example_financial1_first10k.ascii", "mqsim_wsrch-small.trace")
FIN = "ssdsim_example_financial1_first10k"


# ---------------------------------------------------------------- formats

def near_one(x: float) -> str:
    """The documents' style for a ratio: two decimals, or — within 1 % of 1 — as many as show how far from
    1 it is (1.002, 1.0002)."""
    if abs(x - 1) >= 0.01 or x == 1:
        return f"{x:.2f}"
    places = 3
    while round(abs(x - 1), places) == 0 and places < 8:
        places += 1
    return f"{x:.{places}f}"


def one_of(fmt: str) -> Callable[[Sequence[float]], str]:
    """Figures that must print the same (a cell's read levels): the one figure, or all of them if not."""
    def show(values: Sequence[float]) -> str:
        printed = sorted({format(v, fmt) for v in values})
        return printed[0] if len(printed) == 1 else "/".join(printed)
    return show


def guarded(get: Callable[..., Any]) -> Callable[..., Any]:
    """``get``, with any failure (a missing file, a polars error) as the ValueError check-docs reports as a
    figure it could not find, rather than one that stops the whole check."""
    def figure(*results: Any) -> Any:
        try:
            return get(*results)
        except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
            raise
        except Exception as error:  # noqa: BLE001
            raise ValueError(f"{type(error).__name__}: {error}") from None
    return figure


# ---------------------------------------------------------------- the grid's files

@functools.cache
def _grid(out: str):
    import polars as pl

    return pl.read_csv(Path(out) / "grid.csv").with_columns(pl.col("latency_ratio").fill_nan(None))


def _cells(out: str, **where: Any) -> Any:
    import polars as pl

    frame = _grid(out)
    for key, value in where.items():
        frame = frame.filter(pl.col(key) == value)
    return frame


def grid(get: Callable[..., Any], fmt: Any = ".4f", **kw: Any) -> V:
    """A figure of the fresh grid: ``get(frame)`` on grid.csv."""
    return V("lifetime-grid", fmt=fmt, get=guarded(lambda r: get(r["out"])), **kw)


def ratios(column: str = "lifetime_ratio", **where: Any) -> Callable[[str], list[float]]:
    return lambda out: _cells(out, **where)[column].drop_nulls().to_list()


def lowest(column: str = "lifetime_ratio", **where: Any) -> Callable[[str], float]:
    return lambda out: min(ratios(column, **where)(out))


def highest(column: str = "lifetime_ratio", **where: Any) -> Callable[[str], float]:
    return lambda out: max(ratios(column, **where)(out))


WIDE_READ_SPREAD = [("tlc", 0.15, 0.1), ("tlc", 0.25, 0.1), ("tlc", 0.25, 0.25), ("tlc", 0.3, 0.25)]
"""The cells whose read levels differ by more than 0.011 (the text names each)."""


def read_level_spread(out: str) -> float:
    """The largest difference between a cell's read levels, the ``WIDE_READ_SPREAD`` cells aside — if those
    are the cells whose read levels differ by more than 0.011."""
    import polars as pl

    spread = _grid(out).group_by("cell", "reserve", "working_set").agg(
        (pl.col("lifetime_ratio").max() - pl.col("lifetime_ratio").min()).alias("spread"))
    wide = spread.filter(pl.col("spread") > 0.011)
    if sorted(wide.select("cell", "reserve", "working_set").rows()) != WIDE_READ_SPREAD:
        raise ValueError(f"the cells whose read levels differ by more than 0.011: {wide.rows()}")
    return spread.filter(pl.col("spread") <= 0.011)["spread"].max()


def _at_least_one() -> Any:
    import polars as pl

    return pl.col("lifetime_ratio") >= 1.0


def one(column: str, **where: Any) -> Callable[[str], float]:
    def get(out: str) -> float:
        [value] = ratios(column, **where)(out)
        return value
    return get


# ---------------------------------------------------------------- runs written here

READINGS = {
    "capacity rule: capacity pool, element average (default)": {},
    "capacity rule: Eq. 1 pool": {"early_switch": "eq1"},
    "capacity rule: rolling pool": {"early_switch": "rolling"},
    "capacity rule: per-mode average": {"life_average": "mode"},
    "capacity rule: rate-limited skip": {"life_skip": "rate-limited"},
    "dead-blocks rule: Eq. 1 pool, rate-limited skip (default)": {"death": "dead-blocks"},
    "dead-blocks rule: capacity pool, strict skip": {"death": "dead-blocks", "early_switch": "capacity",
                                                     "life_skip": "strict"},
}
"""The readings table's rows: each row's ``[ftl]`` keys."""

SAME_POLICY = {
    "capacity rule: Eq. 1 pool, rate-limited skip": {"early_switch": "eq1", "life_skip": "rate-limited"},
    "capacity rule: Eq. 1 pool, rate-limited skip, unbounded bet": {"early_switch": "eq1",
                                                                    "life_skip": "rate-limited",
                                                                    "unleveling_bet": 1.0},
}
"""The dead-blocks rule's policy under the capacity rule (the text beside the table), with the bet bounded
and not."""


def _reading_config(cell: str, ftl: dict[str, str]) -> dict[str, Any]:
    from nandlab import lifetime

    config = lifetime._with_wear_leveling(lifetime.synthetic(f"zombienand-synthetic-{cell}", reserve=0.3,
                                                             working_set=0.1))
    config["ftl"].update(ftl)
    return config


def _baseline_key(cell: str, ftl: dict[str, str]) -> str:
    """What decides a row's baseline: its engine config as ``lifetime.run`` makes it (``zombie = false``, no
    wear-unleveling), less ``early_switch`` and ``life_average``, which act on nothing there (no pool: 0
    early-switch blocks, a rolling pool capped at 0; no zombies, so the element average is never the one
    used — ``zombies_hold_data`` is false)."""
    import json

    import nandlab

    config = _reading_config(cell, ftl)
    config["ftl"].update(zombie=False, wear_unleveling=False)
    resolved = nandlab.make_simulator(config).config
    for key in ("early_switch", "life_average"):
        resolved["ftl"].pop(key)
    return json.dumps(resolved, sort_keys=True)


def _life(task: tuple[str, dict[str, str], bool]) -> dict[str, Any]:
    from nandlab import lifetime

    cell, ftl, zombie = task
    outcome = lifetime.run(_reading_config(cell, ftl), zombie=zombie, progress=False)
    return lifetime._slim(outcome)


def readings(out: Path, workers: int = 2) -> dict[str, Any]:
    """The readings table: ``lifetime.compare`` on ``lifetime.synthetic(preset, reserve=0.3, working_set=0.1)``
    with each row's ``[ftl]`` keys, for TLC and MLC — each baseline run once for the rows it serves (the rows
    whose baselines are the same engine config: see ``_baseline_key``), on ``workers`` processes."""
    from nandlab import lifetime

    rows = {**READINGS, **SAME_POLICY}
    keys = {(cell, row): _baseline_key(cell, ftl) for cell in ("tlc", "mlc") for row, ftl in rows.items()}
    baselines = {key: (cell, rows[row], False) for (cell, row), key in reversed(list(keys.items()))}
    zombies = {(cell, row): (cell, rows[row], True) for cell, row in keys}
    # The longest first (two workers end together): the dead-blocks zombies, MLC's (5 × a longer life), TLC's.
    tasks = sorted([*zombies.values(), *baselines.values()],
                   key=lambda t: (not t[2], t[1].get("death") != "dead-blocks", t[0] != "mlc"))
    with ProcessPoolExecutor(workers) as pool:
        done = dict(zip(map(repr, tasks), pool.map(_life, tasks)))
    table: dict[str, Any] = {}
    for (cell, row), key in keys.items():
        report = lifetime._report(done[repr(zombies[cell, row])], done[repr(baselines[key])])
        table.setdefault(row, {})[cell] = {k: report[k] for k in ("lifetime_ratio", "latency_ratio",
                                                                   "latency_ratio_after")}
        table[row][cell]["zombie_host_write_bytes"] = report["zombie"]["host_write_bytes"]
        table[row][cell]["baseline_host_write_bytes"] = report["baseline"]["host_write_bytes"]
        table[row][cell]["capacity_at_death"] = report["zombie"]["capacity_at_death"]
        table[row][cell]["capacity_short_since_bytes"] = report["zombie"]["capacity_short_since_bytes"]
    return {"rows": table, "baseline_runs": len(baselines), "zombie_runs": len(zombies)}


CHANGING = {
    # name: (cell, reserve, [(working set, drive writes or None: until dead)], seed, distribution)
    "t50": ("tlc", 0.3, [(0.1, 50), (1.0, None)], 1, None),
    "t200": ("tlc", 0.3, [(0.1, 200), (1.0, None)], 1, None),
    **{f"t500s{seed}": ("tlc", 0.3, [(0.1, 500), (1.0, None)], seed, None) for seed in (1, 2, 3)},
    **{f"t{n}": ("tlc", 0.3, [(0.1, n), (1.0, None)], 1, None) for n in (700, 1000, 1200, 1400)},
    "tsteps": ("tlc", 0.3, [(0.1, 100), (0.25, 300), (0.5, 300), (1.0, None)], 1, None),
    "t75": ("tlc", 0.3, [(0.1, 300), (0.75, None)], 1, None),
    "t25all": ("tlc", 0.3, [(0.25, 300), (1.0, None)], 1, None),
    "t50all": ("tlc", 0.3, [(0.5, 200), (1.0, None)], 1, None),
    "t10to25": ("tlc", 0.3, [(0.1, 800), (0.25, None)], 1, None),
    "t50to10": ("tlc", 0.3, [(0.5, 300), (0.1, None)], 1, None),
    "t20r300": ("tlc", 0.2, [(0.1, 300), (1.0, None)], 1, None),
    "t20r600": ("tlc", 0.2, [(0.1, 600), (1.0, None)], 1, None),
    "t15r": ("tlc", 0.15, [(0.1, 200), (1.0, None)], 1, None),
    "t10r": ("tlc", 0.1, [(0.1, 100), (1.0, None)], 1, None),
    "tzipf": ("tlc", 0.3, [(0.1, 500), (1.0, None)], 4, "zipf:0.9"),
    "thotcold": ("tlc", 0.3, [(0.1, 500), (1.0, None)], 5, "hotcold:0.9:0.1"),
    **{f"m{n}": ("mlc", 0.3, [(0.1, n), (1.0, None)], 1, None) for n in (1000, 2500, 4000)},
    "m50": ("mlc", 0.3, [(0.1, 2000), (0.5, None)], 1, None),
    "msteps": ("mlc", 0.3, [(0.1, 500), (0.25, 1000), (0.5, 1000), (1.0, None)], 1, None),
    "m20r": ("mlc", 0.2, [(0.1, 2000), (1.0, None)], 1, None),
    "m10r": ("mlc", 0.1, [(0.1, 1000), (1.0, None)], 1, None),
    "tszipf": ("tlc", 0.3, [(1.0, None)], 1, "zipf:0.99"),
    "tshotcold": ("tlc", 0.3, [(1.0, None)], 1, "hotcold:0.8:0.2"),
    "ts20hotcold": ("tlc", 0.2, [(1.0, None)], 2, "hotcold:0.9:0.1"),
    **{f"mszipf{seed}": ("mlc", 0.2, [(1.0, None)], seed, "zipf:0.99") for seed in (1, 2)},
    "mshotcold": ("mlc", 0.2, [(1.0, None)], 1, "hotcold:0.8:0.2"),
    "tshrink": ("tlc", 0.3, [(1.0, 200), (0.1, None)], 1, None),
    "tshrink300s2": ("tlc", 0.3, [(1.0, 300), (0.1, None)], 2, None),
    "tshrink20hotcold": ("tlc", 0.2, [(1.0, 150), (0.1, None)], 3, "hotcold:0.9:0.1"),
    "tupdown": ("tlc", 0.3, [(0.1, 300), (1.0, 200), (0.1, None)], 1, None),
    "tdownup": ("tlc", 0.3, [(1.0, 100), (0.1, 500), (1.0, None)], 1, None),
    "mshrink": ("mlc", 0.3, [(1.0, 1000), (0.1, None)], 1, None),
    "mshrink20": ("mlc", 0.2, [(1.0, 500), (0.1, None)], 1, None),
}
"""The changing-workload table's runs (docs/zombienand, "Changing workloads")."""


def _changing(name: str) -> tuple[str, dict[str, float]]:
    from nandlab import lifetime

    cell, reserve, steps, seed, distribution = CHANGING[name]
    config = lifetime.changing(f"zombienand-synthetic-{cell}", reserve, steps, seed, distribution)
    r = lifetime.compare(config, progress=False)
    return name, {"life": r["lifetime_ratio"], "latency": r["latency_ratio"]}


def changing(out: Path, workers: int = 2) -> dict[str, Any]:
    """The changing-workload table: each run's lifetime and latency ratios, by its name in ``CHANGING``."""
    # The long ones first (MLC, then the lives ZombieNAND stretches).
    names = sorted(CHANGING, key=lambda n: (CHANGING[n][0] != "mlc", CHANGING[n][2][0][0] != 1.0))
    with ProcessPoolExecutor(workers) as pool:
        return dict(pool.map(_changing, names))


ELEMENTS = (8, 12, 16)
"""Blocks per plane of the element-size table (8 planes: 64, 96, 128 blocks)."""


ELEMENT_WATERMARKS = ((8, 3, 6), (12, 3, 6), (16, 2, 6))
"""(blocks per plane, gc_start, gc_stop) of the element-size table's second row: the GC low watermark of the
128-block element (3 blocks) on the smaller ones, and the smaller ones' (2) on it."""


def _element(task: tuple[int, int | None, int | None]) -> float:
    from nandlab import lifetime

    blocks_per_plane, gc_start, gc_stop = task
    config = lifetime.synthetic("zombienand-synthetic-tlc", reserve=0.3, working_set=0.1)
    config["device"]["blocks_per_plane"] = blocks_per_plane
    if gc_start is not None:
        config.setdefault("ftl", {}).update(gc_start=gc_start, gc_stop=gc_stop)
    return lifetime.compare(config, progress=False)["lifetime_ratio"]


def elements(out: Path, workers: int = 2) -> dict[str, float]:
    """The TLC 30 %/10 % lifetime ratio by blocks per element (``64``), and with the watermarks of
    ``ELEMENT_WATERMARKS`` (``64-gc3``)."""
    tasks = [(n, None, None) for n in ELEMENTS] + list(ELEMENT_WATERMARKS)
    names = [str(8 * n) if start is None else f"{8 * n}-gc{start}" for n, start, _ in tasks]
    with ProcessPoolExecutor(workers) as pool:
        return dict(zip(names, pool.map(_element, tasks)))


SCALES = (20, 50)


def _scaled(task: tuple[str, float, float]) -> float:
    from nandlab import lifetime, lifetime_traces

    cell, read_fraction, scale = task
    config = lifetime.synthetic(f"zombienand-synthetic-{cell}", reserve=0.3, working_set=0.1,
                                read_fraction=read_fraction)
    config["device"]["wear"] = {"rated": {m: r / scale for m, r in lifetime_traces.RATED.items()}}
    return lifetime.compare(config, progress=False)["lifetime_ratio"]


def endurance_scale(out: Path, workers: int = 2) -> dict[str, Any]:
    """The grid's 30 %/10 % cells (TLC, MLC × low/medium/high reads) with every rating divided by 20 and by 50,
    as ``nandlab lifetime-traces --endurance-scale`` divides them: the lifetime ratios, by scale, cell and read
    level (the unscaled ones are the grid's)."""
    from nandlab import lifetime

    tasks = [(cell, fraction, scale) for scale in SCALES for cell in ("tlc", "mlc")
             for fraction in lifetime.GRID_READ_LEVELS.values()]
    with ProcessPoolExecutor(workers) as pool:
        done = list(pool.map(_scaled, tasks))
    levels = {f: name for name, f in lifetime.GRID_READ_LEVELS.items()}
    table: dict[str, Any] = {}
    for (cell, fraction, scale), ratio in zip(tasks, done):
        table.setdefault(str(scale), {}).setdefault(cell, {})[levels[fraction]] = ratio
    return table


def presets(out: Path) -> dict[str, Any]:
    """What the engine derives from the synthetic and trace presets: early-switch pools (capacity and Eq. 1) at
    30 % and 10 % reserve, GC's low watermark, the MLC 25 % reserve drive's figures for when GC first runs, and
    the trace TLC drive's user capacity at 30 % reserve."""
    import nandlab

    def config(preset: str, reserve: float, **ftl: Any) -> dict[str, Any]:
        return nandlab.make_simulator({"device": {"preset": preset, "reserve": reserve},
                                       "ftl": {"zombie": True, **ftl}, "phase": [{"requests": 1}]}).config

    pools = {}
    for cell in ("tlc", "mlc"):
        for reserve in (0.3, 0.1):
            for rule in ("capacity", "eq1"):
                ftl = config(f"zombienand-synthetic-{cell}", reserve, early_switch=rule)["ftl"]
                pools[f"{cell}-{round(reserve * 100)}-{rule}"] = ftl["early_switch_blocks"]
    tlc = config("zombienand-synthetic-tlc", 0.3)
    # A full MLC drive at 25 % reserve: random writes until GC first runs (the free blocks down to its low
    # watermark) have touched 1 − (1 − 1/U)^w of its U addresses; the pool, all in SLC, would take its blocks'
    # lost units out of them.
    mlc = config("zombienand-synthetic-mlc", 0.25)
    g, ftl = mlc["geometry"], mlc["ftl"]
    written = (g["blocks"] - ftl["gc_start"]) * g["units_per_block"]
    touched = 1 - (1 - 1 / g["user_units"]) ** written
    slc_units = g["units_per_block"] // 2
    pool_loss = ftl["early_switch_blocks"] * (g["units_per_block"] - slc_units)
    trace = {cell: nandlab.make_simulator({"device": {"preset": f"zombienand-trace-{cell}", "reserve": 0.3},
                                           "phase": [{"requests": 1}]}).device for cell in ("tlc", "mlc")}
    return {"pools": pools, "gc_start": tlc["ftl"]["gc_start"], "mlc25_touched_at_first_gc": touched,
            "mlc25_room_beside_pool": 1 - pool_loss / g["user_units"],
            "trace_tlc_user_bytes_30": trace["tlc"]["user_capacity_bytes"],
            "trace_raw_bytes": {cell: device["raw_capacity_bytes"] for cell, device in trace.items()}}


def trace_samples(out: Path) -> dict[str, Any]:
    """The composition of the samples the trace study leaves out for cost (FIU mail), against rsrch_1's."""
    from check_docs.check import ROOT
    from nandlab import traces

    folder = ROOT.parent / "shared" / "traces"
    stats = {name: traces.stats(folder / file, skip_bad=True) for name, file in (
        ("fiu_mail", "fiu_mail_cheetah_sample.clean.txt"), ("msr_rsrch_1", "msr_rsrch_1.csv"))}
    per_byte = {name: s["records"] / s["write_bytes"] for name, s in stats.items()}
    return {"fiu_write_percent": stats["fiu_mail"]["write_percent"],
            "fiu_requests_per_written_byte_over_rsrch_1": per_byte["fiu_mail"] / per_byte["msr_rsrch_1"]}


# ---------------------------------------------------------------- the trace study's files

@functools.cache
def _study(out: str) -> dict[str, Any]:
    import polars as pl

    folder = Path(out)
    return {"runs": pl.read_csv(folder / "traces.csv"), "composition": pl.read_csv(folder / "composition.csv"),
            "curves": pl.read_parquet(folder / "curves.parquet")}


def study(get: Callable[[dict[str, Any]], Any], fmt: Any = near_one, **kw: Any) -> V:
    return V("lifetime-traces", fmt=fmt, get=guarded(lambda r: get(_study(r["out"]))), **kw)


def run_of(s: dict[str, Any], trace: str, cell: str, reserve: float, column: str = "lifetime_ratio") -> float:
    import polars as pl

    [value] = s["runs"].filter((pl.col("trace") == trace) & (pl.col("cell") == cell)
                               & (pl.col("reserve") == reserve))[column].to_list()
    return value


def composition(s: dict[str, Any], trace: str, column: str) -> float:
    import polars as pl

    [value] = s["composition"].filter(pl.col("trace") == trace)[column].to_list()
    return value


def unique_mib(s: dict[str, Any], trace: str) -> float:
    import polars as pl

    return s["runs"].filter(pl.col("trace") == trace)["unique_bytes"].unique().item() / 2**20


def argmax(s: dict[str, Any], column: str, expect: tuple[str, str, float]) -> float:
    """The largest figure of ``column``, if it is run ``expect``'s (trace, cell, reserve)."""
    top = s["runs"].sort(column, descending=True).row(0, named=True)
    if (top["trace"], top["cell"], top["reserve"]) != expect:
        raise ValueError(f"the largest {column} is {top['trace']} {top['cell']} {top['reserve']}")
    return top[column]


def curve_peaks(s: dict[str, Any]) -> Any:
    """Each run's highest latency point by point before the baseline's death (life ≤ 100 %), highest first."""
    import polars as pl

    return (s["curves"].filter(pl.col("life") <= 100).group_by("trace", "cell", "reserve")
            .agg(pl.col("latency").max().alias("peak")).sort("peak", descending=True))


def before_death(s: dict[str, Any]) -> dict[str, float]:
    """Point by point before the baseline's death (life ≤ 100 %): the slowest point, if it is MSR hm_0 MLC at
    10 %'s, and the fastest, if it is hm_0 MLC at 30 %'s in the last 0.1 % of the baseline's life."""
    top = curve_peaks(s).row(0, named=True)
    if (top["trace"], top["cell"], top["reserve"]) != ("msr_hm_0_first1000", "mlc", 0.1):
        raise ValueError(f"the slowest run point by point is {top}")
    import polars as pl

    low = s["curves"].filter(pl.col("life") <= 100).sort("latency").row(0, named=True)
    if (low["trace"], low["cell"], low["reserve"]) != ("msr_hm_0_first1000", "mlc", 0.3) or low["life"] < 99.9:
        raise ValueError(f"the fastest point is {low}")
    return {"peak": top["peak"], "low": low["latency"]}


def last_moments(s: dict[str, Any]) -> float:
    import polars as pl

    top = s["curves"].sort("latency", descending=True).row(0, named=True)
    if (top["trace"], top["cell"], top["reserve"]) != ("tencent_cbs_sample_50k", "tlc", 0.2):
        raise ValueError(f"the slowest point is {top}")
    life = s["curves"].filter((pl.col("trace") == "tencent_cbs_sample_50k") & (pl.col("cell") == "tlc")
                              & (pl.col("reserve") == 0.2))["life"].max()
    if top["life"] < 0.95 * life:
        raise ValueError(f"Tencent TLC 20 % is slowest at {top['life']:.0f} % of the baseline's life, of {life:.0f}")
    return top["latency"]


def gains(s: dict[str, Any], cell: str, *, lowest: bool) -> float:
    import polars as pl

    column = s["runs"].filter(pl.col("cell") == cell)["lifetime_ratio"]
    return column.min() if lowest else column.max()


def gaining_latency(s: dict[str, Any], *, lowest: bool) -> float:
    import polars as pl

    column = s["runs"].filter(pl.col("lifetime_ratio") > 1.1)["latency_ratio"]
    return column.min() if lowest else column.max()


def trace_row(trace: str, label: str, footprint: str, mib: str = ".0f") -> Claim:
    """A row of the trace table: writes, footprint (its MiB printed as ``mib``), the six lifetime ratios."""
    cells = {f"{cell}{int(r * 100)}": study(lambda s, c=cell, r=r: run_of(s, trace, c, r))
             for cell in ("tlc", "mlc") for r in (0.1, 0.2, 0.3)}
    values = {"writes": study(lambda s: composition(s, trace, "write_percent"), ".1f"), **cells}
    values["used"] = study(lambda s: unique_mib(s, trace), mib)
    if "{total}" in footprint:
        values["total"] = study(lambda s: composition(s, trace, "footprint_bytes") / 2**30, ".2f")
    return Claim(TRACES, f"| {label} | {{writes}} | {footprint} | {{tlc10}} | {{tlc20}} | {{tlc30}} | {{mlc10}} | "
                         f"{{mlc20}} | {{mlc30}} |", values)


# ---------------------------------------------------------------- the claims

def declare(r: Registry) -> None:
    r.run(
        Run("lifetime-grid", ["lifetime-grid", "--out", "{out}", "-q"], json=False, cost=1650, ci=False),
        Run("lifetime-traces", ["lifetime-traces", *(f"{SAMPLES}/{t}" for t in STUDY_TRACES),
                                "--endurance-scale", "20", "--out", "{out}", "-q"], json=False, cost=400, ci=False),
        Run("zombienand-readings", python="claims.zombienand:readings", cost=185, ci=False),
        Run("zombienand-endurance-scale", python="claims.zombienand:endurance_scale", cost=16, ci=False),
        Run("zombienand-presets", python="claims.zombienand:presets", cost=1),
        Run("zombienand-changing", python="claims.zombienand:changing", cost=420, ci=False),
        Run("zombienand-elements", python="claims.zombienand:elements", cost=40, ci=False),
        Run("zombienand-trace-samples", python="claims.zombienand:trace_samples", cost=1, ci=False),
    )
    r.check(*grid_claims(), *readings_claims(), *changing_claims(), *trace_claims())


def grid_claims() -> list[Any]:
    pools = lambda key: V("zombienand-presets", f"pools.{key}")  # noqa: E731
    same = one_of(".2f")
    return [
        SameFiles(GRID, "lifetime-grid", [("docs/zombienand/grid.csv", "grid.csv"),
                                          ("docs/zombienand/grid.parquet", "grid.parquet"),
                                          ("docs/zombienand/manifest.json", "manifest.json")]),
        Claim(GRID, "runs the same {cells} cells (on a", {"cells": grid(lambda o: _grid(o).height, ",.0f")}),
        Claim(GRID, "{runs} runs (TLC, MLC × reserve 5–30 %", {"runs": grid(lambda o: 2 * _grid(o).height, ",.0f")}),
        Claim(GRID, "the {low} blocks of GC's low watermark", {"low": V("zombienand-presets", "gc_start")}),
        Claim(GRID, "— {tlc30} TLC or {mlc30} MLC blocks at 30 % reserve (Eq. 1 gives {tlc30e} and {mlc30e}), "
                    "{tlc10} and {mlc10} at 10 % (Eq. 1: {tlc10e} and {mlc10e})",
              {"tlc30": pools("tlc-30-capacity"), "mlc30": pools("mlc-30-capacity"),
               "tlc30e": pools("tlc-30-eq1"), "mlc30e": pools("mlc-30-eq1"),
               "tlc10": pools("tlc-10-capacity"), "mlc10": pools("mlc-10-capacity"),
               "tlc10e": pools("tlc-10-eq1"), "mlc10e": pools("mlc-10-eq1")}),
        Claim(GRID, "touched only ~{touched} % of its addresses when GC first runs (at 25 % reserve);",
              {"touched": V("zombienand-presets", "mlc25_touched_at_first_gc", "%")}),
        Claim(GRID, "**Never shorter**: every one of the {cells} cells lives at least as long as its baseline, the "
                    "lowest {lo}; at 100 % working set every cell is {lo100}–{hi100}.",
              {"cells": grid(lambda o: _grid(o).filter(_at_least_one()).height, ",.0f"),
               "lo": grid(lowest(), ".4f"),
               "lo100": grid(lowest(working_set=1.0)), "hi100": grid(highest(working_set=1.0))}),
        Claim(GRID, "The rule costs TLC 20 %/10 % its gain: {lo}–{hi}× where it was 1.58×.",
              {"lo": grid(lowest(cell="tlc", reserve=0.2, working_set=0.1), ".2f"),
               "hi": grid(highest(cell="tlc", reserve=0.2, working_set=0.1), ".2f")}),
        Claim(GRID, "5 % reserve {lo5}–{hi5} everywhere; 10 % reserve {lo10}–{hi10}.",
              {"lo5": grid(lowest(reserve=0.05)), "hi5": grid(highest(reserve=0.05)),
               "lo10": grid(lowest(reserve=0.1)), "hi10": grid(highest(reserve=0.1))}),
        Claim(GRID, "TLC {tlc}× and MLC {mlc}× at 30 % reserve, 10 % working set",
              {"tlc": grid(ratios(cell="tlc", reserve=0.3, working_set=0.1), same),
               "mlc": grid(ratios(cell="mlc", reserve=0.3, working_set=0.1), same)}),
        Claim(GRID, "TLC {tlo}–{thi}×, MLC {mlc}× at 25 % working set; at 50 %, every cell is within {lo}–{hi}.",
              {"tlo": grid(lowest(cell="tlc", reserve=0.3, working_set=0.25), ".2f"),
               "thi": grid(highest(cell="tlc", reserve=0.3, working_set=0.25), ".2f"),
               "mlc": grid(ratios(cell="mlc", reserve=0.3, working_set=0.25), one_of(".3f")),
               "lo": grid(lowest(working_set=0.5), ".3f"), "hi": grid(highest(working_set=0.5), ".3f")}),
        Claim(GRID, "but in the TLC cells where the pool pays: 15 %/10 % ({a}–{b}× across the three levels), "
                    "25 %/10 % ({c}–{d}×), 25 %/25 % ({e}–{f}×) and 30 %/25 % ({g}–{h}×); every other cell's levels "
                    "agree within {spread}.",
              {**{k: grid(end(cell="tlc", reserve=r, working_set=w), ".2f")
                  for (_, r, w), pair in zip(WIDE_READ_SPREAD, ("ab", "cd", "ef", "gh"))
                  for k, end in zip(pair, (lowest, highest))},
               "spread": grid(read_level_spread, ".3f", bound="at most")}),
        Claim(GRID, "**Latency before the baseline's death** is {lo}–{hi} of the baseline's in every cell",
              {"lo": grid(lowest("latency_ratio"), ".4f"), "hi": grid(highest("latency_ratio"), ".4f")}),
        Claim(GRID, "no cell is slower by more than {pct} %.",
              {"pct": grid(lambda o: 100 * (max(ratios("latency_ratio")(o)) - 1), ".2f", bound="at most")}),
        Claim(GRID, "the two runs end within {pct} % of each other: {lo}–{hi} of the baseline's life.",
              {"pct": grid(lambda o: 100 * max(abs(x - 1) for x in ratios(working_set=1.0)(o)), ".2f"),
               "lo": grid(lowest(working_set=1.0)), "hi": grid(highest(working_set=1.0))}),
    ]


def reading(row: str, cell: str, figure: str, fmt: str = ".2f", scale: float = 1.0) -> V:
    """A figure of the readings table (row names hold dots: no path), times ``scale``."""
    return V("zombienand-readings", fmt=fmt, get=lambda d: d["rows"][row][cell][figure] * scale)


DEAD = "dead-blocks rule: Eq. 1 pool, rate-limited skip (default)"
SAME = "capacity rule: Eq. 1 pool, rate-limited skip"


def readings_claims() -> list[Any]:
    def life(row: str, cell: str) -> Cell:
        return Cell({"v": reading(row, cell, "lifetime_ratio")}, "{v}×")

    def latency(row: str, cell: str) -> V:
        return reading(row, cell, "latency_ratio")

    return [
        Table(GRID, ["reading", "TLC life", "TLC latency", "MLC life", "MLC latency"],
              {row: {"TLC life": life(row, "tlc"), "TLC latency": latency(row, "tlc"),
                     "MLC life": life(row, "mlc"), "MLC latency": latency(row, "mlc")} for row in READINGS}),
        Claim(GRID, "**Smaller TLC gains under the capacity rule** ({tlc}× against 16×)",
              {"tlc": reading(next(iter(READINGS)), "tlc", "lifetime_ratio", ".1f")}),
        Claim(GRID, "under the dead-blocks rule the TLC 30 %/10 % drive lives {tlc}× the baseline's life, but it "
                    "fell below its advertised capacity at {tshort} TB written and died holding {tcap} % of it",
              {"tlc": reading(DEAD, "tlc", "lifetime_ratio"),
               "tshort": reading(DEAD, "tlc", "capacity_short_since_bytes", ".3f", scale=1e-12),
               "tcap": reading(DEAD, "tlc", "capacity_at_death", "%.1")}),
        Claim(GRID, "MLC: {mlc}×, below its capacity from {mshort} TB, {mcap} % at death",
              {"mlc": reading(DEAD, "mlc", "lifetime_ratio"),
               "mshort": reading(DEAD, "mlc", "capacity_short_since_bytes", ".3f", scale=1e-12),
               "mcap": reading(DEAD, "mlc", "capacity_at_death", "%.1")}),
        Claim(GRID, "under the capacity rule dies when it stops holding its capacity: {t}× (TLC) and {m}× (MLC), with "
                    "the bet bounded; {tu}× and {mu}× with the paper's unbounded bet",
              {"t": reading(SAME, "tlc", "lifetime_ratio"), "m": reading(SAME, "mlc", "lifetime_ratio"),
               "tu": reading(f"{SAME}, unbounded bet", "tlc", "lifetime_ratio"),
               "mu": reading(f"{SAME}, unbounded bet", "mlc", "lifetime_ratio")}),
    ]


def changing_claims() -> list[Any]:
    """The changing-workload table, row by row: ``{name.figure}`` fields, four places (two above 2)."""
    def ratio(v: float) -> str:
        return f"{v:.4f}" if v < 2 else f"{v:.2f}"

    rows = [
        "| TLC 30 % | 10 % for 50 drive writes, then 100 % | {t50_life} | {t50_latency} |",
        "| TLC 30 % | 10 % for 200, then 100 % | {t200_life} | {t200_latency} |",
        "| TLC 30 % | 10 % for 500, then 100 % (seeds 1 / 2 / 3) | {t500s1_life} / {t500s2_life} / {t500s3_life} "
        "| {t500s1_latency} / {t500s2_latency} / {t500s3_latency} |",
        "| TLC 30 % | 10 % for 700 / 1,000 / 1,200 / 1,400, then 100 % | {t700_life} / {t1000_life} / {t1200_life} / "
        "{t1400_life} | {t700_latency} / {t1000_latency} / {t1200_latency} / {t1400_latency} |",
        "| TLC 30 % | 10 % → 25 % → 50 % → 100 % (100, 300, 300 drive writes) | {tsteps_life} | {tsteps_latency} |",
        "| TLC 30 % | 10 % for 300, then 75 % | {t75_life} | {t75_latency} |",
        "| TLC 30 % | 25 % for 300 / 50 % for 200, then 100 % | {t25all_life} / {t50all_life} | {t25all_latency} / "
        "{t50all_latency} |",
        "| TLC 30 % | 10 % for 800, then 25 % | {t10to25_life} | {t10to25_latency} |",
        "| TLC 30 % | 50 % for 300, then 10 % | {t50to10_life} | {t50to10_latency} |",
        "| TLC 20 % | 10 % for 300 / 600, then 100 % | {t20r300_life} / {t20r600_life} | {t20r300_latency} / "
        "{t20r600_latency} |",
        "| TLC 15 % / 10 % | 10 % for 200 / 100, then 100 % | {t15r_life} / {t10r_life} | {t15r_latency} / "
        "{t10r_latency} |",
        "| TLC 30 % | Zipf 0.9 over 10 % for 500, then over 100 % (seed 4) | {tzipf_life} | {tzipf_latency} |",
        "| TLC 30 % | hot/cold 90/10 over 10 % for 500, then 100 % (seed 5) | {thotcold_life} | {thotcold_latency} |",
        "| MLC 30 % | 10 % for 1,000 / 2,500 / 4,000, then 100 % | {m1000_life} / {m2500_life} / {m4000_life} | "
        "{m1000_latency} / {m2500_latency} / {m4000_latency} |",
        "| MLC 30 % | 10 % for 2,000, then 50 % | {m50_life} | {m50_latency} |",
        "| MLC 30 % | 10 % → 25 % → 50 % → 100 % (500, 1,000, 1,000) | {msteps_life} | {msteps_latency} |",
        "| MLC 20 % / 10 % | 10 % for 2,000 / 1,000, then 100 % | {m20r_life} / {m10r_life} | {m20r_latency} / "
        "{m10r_latency} |",
        "| TLC 30 % | Zipf 0.99 / hot/cold 80/20 over 100 %, stationary | {tszipf_life} / {tshotcold_life} | "
        "{tszipf_latency} / {tshotcold_latency} |",
        "| TLC 20 % | hot/cold 90/10 over 100 %, stationary (seed 2) | {ts20hotcold_life} | {ts20hotcold_latency} |",
        "| MLC 20 % | Zipf 0.99 (seeds 1 / 2) / hot/cold 80/20 over 100 %, stationary | {mszipf1_life} / "
        "{mszipf2_life} / {mshotcold_life} | {mszipf1_latency} / {mszipf2_latency} / {mshotcold_latency} |",
        "| TLC 30 % | 100 % for 200, then 10 % | {tshrink_life} | {tshrink_latency} |",
        "| TLC 30 % | 100 % for 300, then 10 % (seed 2) | {tshrink300s2_life} | {tshrink300s2_latency} |",
        "| TLC 20 % | 100 % for 150, then hot/cold 90/10 over 10 % (seed 3) | {tshrink20hotcold_life} | "
        "{tshrink20hotcold_latency} |",
        "| TLC 30 % | 10 % for 300, 100 % for 200, then 10 % | {tupdown_life} | {tupdown_latency} |",
        "| TLC 30 % | 100 % for 100, 10 % for 500, then 100 % | {tdownup_life} | {tdownup_latency} |",
        "| MLC 30 % / 20 % | 100 % for 1,000 / 500, then 10 % | {mshrink_life} / {mshrink20_life} | "
        "{mshrink_latency} / {mshrink20_latency} |",
    ]
    claims: list[Any] = []
    for row in rows:
        values = {}
        for field in re.findall(r"\{(\w+)\}", row):
            name, figure = field.rsplit("_", 1)
            values[field] = V("zombienand-changing", fmt=ratio, get=lambda d, n=name, f=figure: d[n][f])
        claims.append(Claim(GRID, row, values))
    claims.append(Claim(GRID, "| life, ZombieNAND / baseline | {a}× | {b}× | {c}× |",
                        {k: V("zombienand-elements", n, ".2f") for k, n in (("a", "64"), ("b", "96"), ("c", "128"))}))
    claims.append(Claim(GRID, "| the same, GC's low watermark swapped (3, 3, 2 blocks; high 6) | {a}× | {b}× | {c}× |",
                        {k: V("zombienand-elements", n, ".2f")
                         for k, n in (("a", "64-gc3"), ("b", "96-gc3"), ("c", "128-gc2"))}))
    claims.append(Claim(GRID, "The worst changing workload is {worst} of the baseline's life; the slowest, {slowest} "
                              "of its latency.",
                        {"worst": V("zombienand-changing", fmt=".4f",
                                    get=lambda d: min(d[n]["life"] for n in CHANGING)),
                         "slowest": V("zombienand-changing", fmt=".4f",
                                      get=lambda d: max(d[n]["latency"] for n in CHANGING))}))
    return claims


def trace_claims() -> list[Any]:
    def scaled(scale: int, cell: str, fmt: str, level: str = "low") -> V:
        return V("zombienand-endurance-scale", f"{scale}.{cell}.{level}", fmt)

    def deviation(scale: int, fmt: str) -> V:
        """The largest difference, in %, between a 30 %/10 % cell's ratio at ``scale`` and the grid's."""
        def get(scaled_runs: dict[str, Any], grid_run: dict[str, Any]) -> float:
            worst = 0.0
            for cell, levels in scaled_runs[str(scale)].items():
                for level, ratio in levels.items():
                    unscaled = one("lifetime_ratio", cell=cell, reserve=0.3, working_set=0.1,
                                   read_level=level)(grid_run["out"])
                    worst = max(worst, 100 * abs(ratio / unscaled - 1))
            return worst
        return V(("zombienand-endurance-scale", "lifetime-grid"), get=guarded(get), fmt=fmt, bound="at most")

    def unscaled(cell: str, fmt: str) -> V:
        return grid(one("lifetime_ratio", cell=cell, reserve=0.3, working_set=0.1, read_level="low"), fmt)

    def share(end: Callable[[Any], float]) -> Callable[[dict[str, Any], dict[str, Any]], float]:
        """A trace's footprint as a share of the TLC trace drive's user capacity at 30 % reserve, in %."""
        return guarded(lambda t, p: 100 * end(_study(t["out"])["runs"]["unique_bytes"]) / p["trace_tlc_user_bytes_30"])

    user = V(("lifetime-traces", "zombienand-presets"), fmt=".1f", get=share(lambda c: c.min()))
    user_max = V(("lifetime-traces", "zombienand-presets"), fmt=".0f", get=share(lambda c: c.max()))
    tencent = "tencent_cbs_sample_50k"
    return [
        SameFiles(TRACES, "lifetime-traces", [(f"docs/zombienand/traces/{f}", f) for f in (
            "traces.csv", "traces.parquet", "composition.csv", "curves.parquet", "study.json", "manifest.json")]),
        Claim(TRACES, "8 KiB TLC and 4 KiB MLC pages, so {tlc} GiB and {mlc} GiB raw",
              {cell: V("zombienand-presets", f"trace_raw_bytes.{cell}", get=lambda b: b / 2**30, fmt=".0f")
               for cell in ("tlc", "mlc")}),
        Claim(TRACES, "{runs} lifetime runs took", {"runs": study(lambda s: 2 * s["runs"].height, ",.0f")}),
        Claim(TRACES, "except Tencent's ({total} GiB: cut at {cut} MiB)",
              {"total": study(lambda s: composition(s, tencent, "footprint_bytes") / 2**30, ".2f"),
               "cut": study(lambda s: unique_mib(s, tencent), ".0f")}),
        Claim(TRACES, "so each trace's whole footprint is used: {lo} MiB (hm_0) to {hi} MiB (Tencent), {ulo}–{uhi} % "
                      "of the TLC drive's user capacity at 30 % reserve.",
              {"lo": study(lambda s: unique_mib(s, "msr_hm_0_first1000"), ".1f"),
               "hi": study(lambda s: unique_mib(s, tencent), ".0f"), "ulo": user, "uhi": user_max}),
        Claim(TRACES, "On the synthetic grid's 30 %/10 % cells the lifetime ratio holds within {d20} % at 20 (low "
                      "reads: TLC {tlc20}× against {tlc}× unscaled, MLC {mlc20}× against {mlc}×) and within {d50} % "
                      "at 50;",
              {"d20": deviation(20, ".0f"), "d50": deviation(50, ".1f"), "tlc20": scaled(20, "tlc", ".2f"),
               "mlc20": scaled(20, "mlc", ".3f"), "tlc": unscaled("tlc", ".2f"), "mlc": unscaled("mlc", ".3f")}),
        Claim(TRACES, "(`mqsim_wsrch-small`: {pct} % of its bytes are writes",
              {"pct": study(lambda s: composition(s, "mqsim_wsrch-small", "write_percent"), ".2f")}),
        Claim(TRACES, "FIU mail ({pct} % writes: {times} times the requests per byte written of rsrch_1",
              {"pct": V("zombienand-trace-samples", "fiu_write_percent", ".0f"),
               "times": V("zombienand-trace-samples", "fiu_requests_per_written_byte_over_rsrch_1", ".0f")}),
        Claim(TRACES, "Lifetime, ZombieNAND over the baseline (every run ≥ {min};",
              {"min": study(lambda s: s["runs"]["lifetime_ratio"].min(), ".4f", bound="at least")}),
        trace_row("msr_rsrch_1", "MSR rsrch_1", "{used} MiB"),
        trace_row(tencent, "Tencent CBS", "{used} MiB (of {total} GiB)"),
        trace_row("msr_hm_0_first1000", "MSR hm_0 (first 1,000)", "{used} MiB", ".1f"),
        trace_row(FIN, "UMass Financial1 (first 10,000)", "{used} MiB", ".1f"),
        Claim(TRACES, "come close to the drive's bound at 20 and 30 % reserve ({lo20}–{hi20}× and {lo30}–{hi30}× TLC, "
                      "{mlo20}–{mhi20}× and {mlo30}–{mhi30}× MLC:",
              {f"{m}{end}{r}": study(lambda s, r=r, f=f, c=c: f(run_of(s, "msr_hm_0_first1000", c, r / 100),
                                                                run_of(s, FIN, c, r / 100)), ".2f")
               for r in (20, 30) for end, f in (("lo", min), ("hi", max)) for m, c in (("", "tlc"), ("m", "mlc"))}),
        Claim(TRACES, "rsrch_1 ({mib} MiB, nearly all random writes",
              {"mib": study(lambda s: unique_mib(s, "msr_rsrch_1"), ".0f")}),
        Claim(TRACES, "Tencent's {mib} MiB of spread-out writes",
              {"mib": study(lambda s: unique_mib(s, tencent), ".0f")}),
        Claim(TRACES, "the paper's traces used 512 MB of a 1 GB drive, ours {ulo}–{uhi} % of the TLC drive's user "
                      "capacity.", {"ulo": user, "uhi": user_max}),
        Claim(TRACES, "**MLC gains less and more evenly** ({mlo}–{mhi}× against TLC's {tlo}–{thi}×)",
              {f"{cell[0]}{end}": study(lambda s, c=cell, e=end: gains(s, c, lowest=e == "lo"))
               for cell in ("mlc", "tlc") for end in ("lo", "hi")}),
        Claim(TRACES, "the baseline's life is at most {max} of the baseline's in every run (rsrch_1 MLC at 30 %),\n"
                      "  {lo}–{hi} wherever ZombieNAND gains more than 10 %.",
              {"max": study(lambda s: argmax(s, "latency_ratio", ("msr_rsrch_1", "mlc", 0.3)), ".5f"),
               "lo": study(lambda s: gaining_latency(s, lowest=True), ".4f"),
               "hi": study(lambda s: gaining_latency(s, lowest=False), ".4f")}),
        Claim(TRACES, "no run is more than {pct} % slower at any point before the baseline dies (MSR hm_0 MLC at "
                      "10 %), and none is faster but in the baseline's last moments (hm_0 MLC at 30 %: {low}× in the "
                      "last 0.1 % of its life)",
              {"pct": study(lambda s: 100 * (before_death(s)["peak"] - 1), ".2f", bound="at most"),
               "low": study(lambda s: before_death(s)["low"], ".2f")}),
        Claim(TRACES, "(Tencent\n  TLC at 20 % reaches {x}× in its last moments)",
              {"x": study(last_moments, ".1f")}),
    ]
