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


def read_level_spread(out: str) -> float:
    """The largest difference between a cell's read levels, the TLC 20 %/25 % cell aside — if that is the
    one cell whose read levels differ by more than 0.01."""
    import polars as pl

    spread = _grid(out).group_by("cell", "reserve", "working_set").agg(
        (pl.col("lifetime_ratio").max() - pl.col("lifetime_ratio").min()).alias("spread"))
    wide = spread.filter(pl.col("spread") > 0.01)
    if wide.select("cell", "reserve", "working_set").rows() != [("tlc", 0.2, 0.25)]:
        raise ValueError(f"the cells whose read levels differ by more than 0.01: {wide.rows()}")
    return spread.filter(pl.col("spread") <= 0.01)["spread"].max()


def latency_above_one(out: str) -> int:
    """The cells with a working set ≤ 50 %, if exactly two are above 1 in latency: MLC 20 %/50 % low reads and
    MLC 10 %/50 % high reads."""
    import polars as pl

    small = _grid(out).filter(pl.col("working_set") <= 0.5)
    above = small.filter(pl.col("latency_ratio") > 1).select("cell", "reserve", "working_set", "read_level")
    if sorted(above.rows()) != [("mlc", 0.1, 0.5, "high"), ("mlc", 0.2, 0.5, "low")]:
        raise ValueError(f"cells above 1.0000 in latency: {above.rows()}")
    return small.height


def one(column: str, **where: Any) -> Callable[[str], float]:
    def get(out: str) -> float:
        [value] = ratios(column, **where)(out)
        return value
    return get


# ---------------------------------------------------------------- the TLC 20 %/25 % race, from the sweep's time series

RACE = {"cell": "tlc", "reserve": 0.2, "working_set": 0.25}


@functools.cache
def race(out: str) -> dict[str, Any]:
    """The TLC 20 %/25 % cell's three ZombieNAND runs (its read levels), from the grid's time series: the
    blocks they die with, the capacity arithmetic of the MLC zombies, and what happens after the zombie
    count at which Algorithm 3's element average applies."""
    import polars as pl

    import nandlab

    sweep = Path(out) / "sweep"
    results = pl.read_parquet(sweep / "results.parquet")
    for key, value in RACE.items():
        results = results.filter(pl.col(key) == value)
    runs = {row["read_level"]: row for row in results.iter_rows(named=True)}
    deaths = {}
    for level, row in runs.items():
        m = re.search(r"has (\d+) usable mapping units left, fewer than the (\d+) .* usable blocks: (\d+) SLC, "
                      r"(\d+) MLC, (\d+) TLC", row["zombie_death"])
        deaths[level] = tuple(int(x) for x in m.groups())
    if len(set(deaths.values())) != 1:
        raise ValueError(f"the three runs die differently: {deaths}")
    usable, need, slc, mlc, tlc = deaths["low"]
    device = nandlab.make_simulator({"device": {"preset": "zombienand-synthetic-tlc", "reserve": RACE["reserve"]},
                                     "phase": [{"requests": 1}]}).device
    native = device["units_per_block"]
    mlc_units = (usable - tlc * native) // mlc  # a TLC block in MLC mode, in mapping units
    if slc or mlc * mlc_units + tlc * native != usable or (mlc - 1) * mlc_units + (tlc + 1) * native < need:
        raise ValueError(f"the zombies' capacity does not add up: {deaths['low']}")
    # The working set as the engine's generator takes it: whole mapping units.
    data = int(RACE["working_set"] * device["user_capacity_bytes"]) // device["unit_size"]
    holding = next(n for n in range(1, 129) if 2 * n * mlc_units >= 3 * data)  # wear.rs: zombies_hold_data
    series = {}
    for level, row in runs.items():
        ts = pl.read_parquet(sweep / "timeseries" / f"run_id={row['run_id']}" / "part-0.parquet")
        ts = ts.filter(pl.col("side") == "zombie").sort("host_write_bytes")
        at = ts.filter(pl.col("mlc_blocks") >= holding).row(0, named=True)
        end = ts.row(-1, named=True)
        series[level] = {
            "gb_after": (end["host_write_bytes"] - at["host_write_bytes"]) / 1e9,
            "tlc_at": at["tlc_blocks"],
            "waf_after": (end["waf_cumulative"] * end["host_write_bytes"]
                          - at["waf_cumulative"] * at["host_write_bytes"])
            / (end["host_write_bytes"] - at["host_write_bytes"]),
            "wear_at": at["wear_used"], "wear_end": end["wear_used"],
        }
    if series["medium"]["tlc_at"] + holding != native:
        raise ValueError("with medium reads, a TLC block died before the zombies could hold the data")
    return {"mlc": mlc, "tlc": tlc, "capacity_holds_at": mlc - 1, "holding": holding, "mlc_units": mlc_units,
            "zombie_units": holding * mlc_units, "data": data, "series": series}


def raced(get: Callable[[dict[str, Any]], Any], fmt: Any = ",.0f", **kw: Any) -> V:
    return V("lifetime-grid", fmt=fmt, get=guarded(lambda r: get(race(r["out"]))), **kw)


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

    keys = {(cell, row): _baseline_key(cell, ftl) for cell in ("tlc", "mlc") for row, ftl in READINGS.items()}
    baselines = {key: (cell, READINGS[row], False) for (cell, row), key in reversed(list(keys.items()))}
    zombies = {(cell, row): (cell, READINGS[row], True) for cell, row in keys}
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
    return {"rows": table, "baseline_runs": len(baselines), "zombie_runs": len(zombies)}


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


def slow_run(s: dict[str, Any]) -> dict[str, float]:
    """Financial1 MLC at 10 % reserve, the run slower than the baseline for a while: its peak, where it is
    more than 2 % slower (as % of the baseline's life, widened to fives), its lowest point after."""
    import polars as pl

    top = curve_peaks(s).row(0, named=True)
    if (top["trace"], top["cell"], top["reserve"]) != (FIN, "mlc", 0.1):
        raise ValueError(f"the slowest run point by point is {top}")
    run = s["curves"].filter((pl.col("trace") == FIN) & (pl.col("cell") == "mlc") & (pl.col("reserve") == 0.1)
                             & (pl.col("life") <= 100))
    slow = run.filter(pl.col("latency") > 1.02)["life"]
    return {"peak": top["peak"], "from": 5 * math.floor(slow.min() / 5), "to": 5 * math.ceil(slow.max() / 5),
            "after": run.filter(pl.col("life") > slow.max())["latency"].min()}


def last_moments(s: dict[str, Any]) -> float:
    import polars as pl

    top = s["curves"].sort("latency", descending=True).row(0, named=True)
    if (top["trace"], top["cell"], top["reserve"]) != ("msr_rsrch_1", "tlc", 0.3):
        raise ValueError(f"the slowest point is {top}")
    life = s["curves"].filter((pl.col("trace") == "msr_rsrch_1") & (pl.col("cell") == "tlc")
                              & (pl.col("reserve") == 0.3))["life"].max()
    if top["life"] < 0.95 * life:
        raise ValueError(f"rsrch_1 TLC 30 % is slowest at {top['life']:.0f} % of the baseline's life, of {life:.0f}")
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
        Run("zombienand-trace-samples", python="claims.zombienand:trace_samples", cost=1, ci=False),
    )
    r.check(*grid_claims(), *readings_claims(), *trace_claims())


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
        Claim(GRID, "GC first runs when random writes have touched {touched} % of the addresses, just under where the "
                    "mapped data plus the pool's loss reaches the user capacity ({room} %)",
              {"touched": V("zombienand-presets", "mlc25_touched_at_first_gc", "%"),
               "room": V("zombienand-presets", "mlc25_room_beside_pool", "%.1")}),
        Claim(GRID, "all {cells} cells are ≥ {min}; at 100 % working set every cell is {lo}–{hi}.",
              {"cells": grid(lambda o: _grid(o).height, ",.0f"),
               "min": grid(lowest(), bound="at least"),
               "lo": grid(lowest(working_set=1.0)), "hi": grid(highest(working_set=1.0))}),
        Claim(GRID, "the pool is never used on a full drive: {v}.",
              {"v": grid(one("lifetime_ratio", cell="mlc", reserve=0.25, working_set=1.0, read_level="low"), ".5f")}),
        Claim(GRID, "5 % reserve {lo5}–{hi5} everywhere; 10 % reserve {lo10}–{hi10} (MLC at 10 % working set {mlc}, "
                    "TLC {tlc}).",
              {"lo5": grid(lowest(reserve=0.05)), "hi5": grid(highest(reserve=0.05)),
               "lo10": grid(lowest(reserve=0.1)), "hi10": grid(highest(reserve=0.1), ".3f"),
               "mlc": grid(highest(cell="mlc", reserve=0.1, working_set=0.1), ".3f"),
               "tlc": grid(highest(cell="tlc", reserve=0.1, working_set=0.1), ".4f")}),
        Claim(GRID, "TLC {tlo}–{thi}× and MLC {mlc}× at 30 % reserve, 10 % working set",
              {"tlo": grid(lowest(cell="tlc", reserve=0.3, working_set=0.1), ".2f"),
               "thi": grid(highest(cell="tlc", reserve=0.3, working_set=0.1), ".2f"),
               "mlc": grid(ratios(cell="mlc", reserve=0.3, working_set=0.1), same)}),
        Claim(GRID, "TLC {tlc}×, MLC {mlc}× at 25 % working set; at 50 %, every cell is within {lo}–{hi}.",
              {"tlc": grid(ratios(cell="tlc", reserve=0.3, working_set=0.25), same),
               "mlc": grid(ratios(cell="mlc", reserve=0.3, working_set=0.25), same),
               "lo": grid(lowest(working_set=0.5), ".3f"), "hi": grid(highest(working_set=0.5), ".3f")}),
        Claim(GRID, "each cell's three read levels agree within {spread}, with one exception. TLC at 20 % reserve, "
                    "25 % working set gives {low} / {medium} / {high}",
              {"spread": grid(read_level_spread, ".2f", bound="at most"),
               **{lv: grid(one("lifetime_ratio", **RACE, read_level=lv), ".2f") for lv in ("low", "medium", "high")}}),
        Claim(GRID, "All three runs die with the same blocks: {mlc} MLC zombies, {tlc} TLC. With {holds} zombies the "
                    "drive still holds its capacity; the {last}th switch ends it.",
              {"mlc": raced(lambda x: x["mlc"]), "tlc": raced(lambda x: x["tlc"]),
               "holds": raced(lambda x: x["capacity_holds_at"]), "last": raced(lambda x: x["mlc"])}),
        Claim(GRID, "{n} MLC zombies hold {units} units, just {times} × the {data} units of data.",
              {"n": raced(lambda x: x["holding"]), "units": raced(lambda x: x["zombie_units"]),
               "times": raced(lambda x: x["zombie_units"] / x["data"], ".1f"), "data": raced(lambda x: x["data"])}),
        Claim(GRID, "writes at WAF {waf} for another {gb} GB (wear used goes from {w0} to {w1} × the native rating).",
              {"waf": raced(lambda x: x["series"]["medium"]["waf_after"], ".2f"),
               "gb": raced(lambda x: x["series"]["medium"]["gb_after"], ".0f"),
               "w0": raced(lambda x: x["series"]["medium"]["wear_at"], ".1f"),
               "w1": raced(lambda x: x["series"]["medium"]["wear_end"], ".1f")}),
        Claim(GRID, "the evenly worn TLC blocks die within {gb} GB of the {n}th switch",
              {"gb": raced(lambda x: max(x["series"][lv]["gb_after"] for lv in ("low", "high")), ".1f"),
               "n": raced(lambda x: x["holding"])}),
        Claim(GRID, "The {n} zombies hold the data {full} % full",
              {"n": raced(lambda x: x["holding"]), "full": raced(lambda x: x["data"] / x["zombie_units"], "%")}),
        Claim(GRID, "**Latency before the baseline's death** is {lo}–{hi} of the baseline's",
              {"lo": grid(lowest("latency_ratio"), ".2f"), "hi": grid(highest("latency_ratio"), ".5f")}),
        Claim(GRID, "in faster modes ({tlc} TLC, {lo}–{hi} MLC at 30 %/10 %). Two of the {cells} cells with a working "
                    "set ≤ 50 % are above 1.0000: MLC 20 %/50 % low reads, {a}, and MLC 10 %/50 % high reads, {b}. "
                    "Both are {two} to the two places the paper gives.",
              {"tlc": grid(ratios("latency_ratio", cell="tlc", reserve=0.3, working_set=0.1), same),
               "lo": grid(lowest("latency_ratio", cell="mlc", reserve=0.3, working_set=0.1), ".2f"),
               "hi": grid(highest("latency_ratio", cell="mlc", reserve=0.3, working_set=0.1), ".2f"),
               "cells": grid(latency_above_one, ",.0f"),
               "a": grid(one("latency_ratio", cell="mlc", reserve=0.2, working_set=0.5, read_level="low"), ".5f"),
               "b": grid(one("latency_ratio", cell="mlc", reserve=0.1, working_set=0.5, read_level="high"), ".6f"),
               "two": grid(lambda o: [one("latency_ratio", cell="mlc", reserve=r, working_set=0.5, read_level=lv)(o)
                                      for r, lv in ((0.2, "low"), (0.1, "high"))], one_of(".2f"))}),
        Claim(GRID, "the two runs end within {pct} % of each other: {lo}–{hi} of the baseline's life.",
              {"pct": grid(lambda o: 100 * max(abs(x - 1) for x in ratios(working_set=1.0)(o)), ".2f"),
               "lo": grid(lowest(working_set=1.0)), "hi": grid(highest(working_set=1.0))}),
    ]


def reading(row: str, cell: str, figure: str, fmt: str = ".2f") -> V:
    """A figure of the readings table (row names hold dots: no path)."""
    return V("zombienand-readings", fmt=fmt, get=lambda d: d["rows"][row][cell][figure])


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
    ]


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
                      "{mlc20}× and {mlc30}× MLC:",
              {f"{end}{r}": study(lambda s, r=r, f=f: f(run_of(s, "msr_hm_0_first1000", "tlc", r / 100),
                                                        run_of(s, FIN, "tlc", r / 100)), ".2f")
               for r in (20, 30) for end, f in (("lo", min), ("hi", max))}
              | {f"mlc{r}": study(lambda s, r=r: [run_of(s, t, "mlc", r / 100) for t in ("msr_hm_0_first1000", FIN)],
                                  one_of(".2f")) for r in (20, 30)}),
        Claim(TRACES, "rsrch_1 ({mib} MiB, nearly all random writes",
              {"mib": study(lambda s: unique_mib(s, "msr_rsrch_1"), ".0f")}),
        Claim(TRACES, "Tencent's {mib} MiB of spread-out writes",
              {"mib": study(lambda s: unique_mib(s, tencent), ".0f")}),
        Claim(TRACES, "the paper's traces used 512 MB of a 1 GB drive, ours {ulo}–{uhi} % of the TLC drive's user "
                      "capacity.", {"ulo": user, "uhi": user_max}),
        Claim(TRACES, "**MLC gains less and more evenly** ({mlo}–{mhi}× against TLC's {tlo}–{thi}×)",
              {f"{cell[0]}{end}": study(lambda s, c=cell, e=end: gains(s, c, lowest=e == "lo"))
               for cell in ("mlc", "tlc") for end in ("lo", "hi")}),
        Claim(TRACES, "the baseline's life is at most {max} of the baseline's in every run (Tencent MLC at 10 %, where "
                      "nothing changes), {lo}–{hi} wherever ZombieNAND gains more than 10 %",
              {"max": study(lambda s: argmax(s, "latency_ratio", (tencent, "mlc", 0.1)), ".5f"),
               "lo": study(lambda s: gaining_latency(s, lowest=True), ".2f"),
               "hi": study(lambda s: gaining_latency(s, lowest=False), ".2f")}),
        Claim(TRACES, "one run is more than {pct} % slower for a while before the baseline dies: Financial1 MLC at "
                      "10 % reserve, up to {peak}× around {a}–{b} % of the baseline's life, while its pool blocks are "
                      "worn on purpose, then {after}× once they live on in SLC.",
              {"pct": study(lambda s: 100 * (curve_peaks(s)["peak"][1] - 1), ".0f", bound="at most"),
               "peak": study(lambda s: slow_run(s)["peak"], ".1f"),
               "a": study(lambda s: slow_run(s)["from"], ".0f"), "b": study(lambda s: slow_run(s)["to"], ".0f"),
               "after": study(lambda s: slow_run(s)["after"], ".1f")}),
        Claim(TRACES, "(rsrch_1 TLC at 30 % reaches {x}× in its last moments)",
              {"x": study(last_moments, ".0f")}),
    ]
