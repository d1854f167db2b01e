"""``nandlab sweep``: every point of a sweep file (``nandlab.sweep``), each a registered procedure
that can run from a config alone, into one Parquet dataset; and that dataset's report (heatmaps,
bar charts, time series overlays)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import files, output, plausible
from nandlab.output import number
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.report.page import Report, fmt, read_json, read_table
from nandlab.terminal import printable, safe

if TYPE_CHECKING:  # nandlab.sweep looks its procedures up in the registry, which imports this
    from nandlab import sweep

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

MAX_TABLE_ROWS = 60
"""Runs the terminal's results table shows (results.parquet has them all)."""
MAX_TABLE_FIGURES = 8
HEADLINE_FIGURES = ("waf", "iops", "mbps", "latency_us_mean", "lifetime_ratio", "latency_ratio", "uber",
                    "average_power_w")
"""The figures the table shows when the sweep has no ``record``."""
_NOT_FIGURES = {"run", "run_id", "status", "error"}

MAX_OVERLAY_RUNS = 12
"""Runs drawn in a sweep's time-series and CDF overlays (the first, in sweep order)."""


@dataclass(frozen=True)
class SweepResult(ProcedureResult):
    """A sweep that ran: its ``outcome`` (the dataset), its ``study``, where it ran and how long."""

    outcome: sweep.Outcome
    study: sweep.Sweep
    where: str
    wall_seconds: float
    kind = "sweep"

    def to_dict(self) -> dict[str, Any]:
        o = self.outcome
        return {"name": self.study.name, "procedure": self.study.procedure, "ran": o.ran, "reused": o.reused,
                "failed": o.failed, "results": o.results.to_dicts()}

    def files(self, out: Path) -> list[Path]:
        """The dataset (``sweep.run`` wrote it where it ran; copied to ``out`` if that is elsewhere)."""
        source = self.outcome.directory
        if source.resolve() != out.resolve():
            shutil.copytree(source, out, dirs_exist_ok=True)
        return sorted(p for p in out.rglob("*") if p.is_file() and p.name not in ("manifest.json", "report.html")
                      and p.parent.name != "figures")

    def print(self, console: Console) -> None:
        """The results table (each run's axes and recorded figures); how many runs ran, were reused
        and failed; the first ten failures."""
        o = self.outcome
        console.print(self.table())
        console.print(
            f"{safe(self.study.name)}: {o.results.height} runs — {o.ran} ran now on {safe(self.where)} "
            f"in {self.wall_seconds:.1f} s, {o.reused} finished earlier, {o.failed} failed. "
            f"Dataset in {safe(str(o.directory))}/",
            highlight=False, soft_wrap=True,
        )
        for row in self.failures().head(10).iter_rows(named=True):
            error = safe(printable(str(row["error"])))
            console.print(f"  failed: run {row['run']} ({row['run_id']}): {error}", highlight=False, soft_wrap=True)

    def table(self, rows: int = MAX_TABLE_ROWS) -> Table:
        """The first ``rows`` runs: their axis values, status and figures (the sweep's ``record``, or
        a few of the procedure's headline figures)."""
        results = self.outcome.results
        axes = [a.name for a in self.study.axes if a.name in results.columns]
        figures = [c for c in results.columns if c not in _NOT_FIGURES and c not in axes
                   and not c.startswith(("phase.", "device.", "ftl.", "sweep."))
                   and results.schema[c].is_numeric()]
        # A phase's figure (`trace.waf`) only where the run has none of that name.
        figures = [f for f in figures if "." not in f or f.rsplit(".", 1)[-1] not in figures]
        if self.study.record is None:
            figures = [f for f in HEADLINE_FIGURES if f in figures] or figures[:MAX_TABLE_FIGURES]
        figures = figures[:MAX_TABLE_FIGURES]
        table = Table(box=box.SIMPLE_HEAD, title=f"{safe(self.study.name)}: results", title_justify="left")
        for name in ["run", *axes, "status", *figures]:
            # Underscores as spaces: a long figure name wraps in its column instead of being cut.
            table.add_column(safe(name.replace("_", " ")),
                             justify="left" if name in axes or name == "status" else "right")
        for row in results.head(rows).iter_rows(named=True):
            table.add_row(str(row["run"]), *(safe(str(row[a])) for a in axes), row["status"],
                          *("" if row[f] is None else number(row[f]) for f in figures))
        if results.height > rows:
            table.caption = f"the first {rows} of {results.height} runs: all are in results.parquet"
        return table

    def failures(self) -> pl.DataFrame:
        """The failed runs' rows of the results."""
        return self.outcome.results.filter(pl.col("status") == "failed")

    @classmethod
    def report(cls, directory: Path) -> Report:
        return sweep_report(directory)


def run(study: sweep.Sweep, out: str | os.PathLike[str], workers: int | None = None, scheduler: str | None = None,
        local_cluster: int | None = None, progress: sweep.ProgressCallback | None = None) -> SweepResult:
    """``sweep.run`` as a procedure's result (which says where it ran and for how long)."""
    from nandlab import sweep

    started = time.monotonic()
    outcome = sweep.run(study, out, workers=workers, scheduler=scheduler, local_cluster=local_cluster,
                        progress=progress)
    where = scheduler or (f"a dask LocalCluster of {local_cluster}" if local_cluster else
                          f"{workers or os.cpu_count() or 1} processes")
    return SweepResult(outcome, study, where, time.monotonic() - started)


PROCEDURE = Procedure("sweep", "nandlab sweep", SweepResult, run)


def sweep_report(d: Path) -> Report:
    """A sweep's axes, results, failures, heatmaps, bar charts, time series and erase counts."""
    from nandlab import plots

    about = read_json(d / "sweep.json")
    _check_description(about, d / "sweep.json")
    results = files.read_table(d / "results.parquet", "sweep result table")
    # The figures' columns, not the axes' and settings' (the user's values, under the user's names).
    given = {"run", "run_id", "status", "error"} | {a["name"] for a in about["axes"]} | \
        {key for a in about["axes"] for key in a.get("keys") or [] if isinstance(key, str)}
    plausible.check_table(results.select(c for c in results.columns if c not in given), d / "results.parquet")
    if (d / "wall.parquet").exists():
        results = results.join(read_table(d / "wall.parquet", "sweep wall-time table"), on="run_id", how="left")
    results = results.sort("run")
    axes = about["axes"]
    names = [a["name"] for a in axes]
    varying = [a["name"] for a in axes if len(a["values"]) > 1]
    ok = results.filter(pl.col("status") == "ok")
    failed = results.filter(pl.col("status") == "failed")
    metrics = _sweep_metrics(about["procedure"], results, names)
    r = Report(d, f"Sweep: {about['name']}", f"sweep, procedure {about['procedure']}")
    r.fact("runs", f"{results.height}: {ok.height} finished, {failed.height} failed")
    r.fact("axes", " × ".join(f"{a['name']} ({len(a['values'])})" for a in axes))
    if "wall_seconds" in results.columns and ok.height:
        r.fact("run time", f"{fmt(ok['wall_seconds'].sum())} s of wall time, all runs together")
    r.table("Axes", [{"axis": a["name"], "keys": ", ".join(a["keys"]),
                      "points": ", ".join(fmt(p) for p in _positions(a))} for a in axes])
    shown = ["run", "status", *names, *metrics, *(["wall_seconds"] if "wall_seconds" in results.columns else [])]
    r.table("Results", results.select(shown).to_dicts(),
            note=f"{ok.height} of {results.height} runs finished; every figure of every run is in results.parquet.")
    if failed.height:
        r.table("Failed runs", failed.select("run", "run_id", *names, "error").to_dicts())
        for row in failed.iter_rows(named=True):
            failure = d / "failures" / f"{row['run_id']}.json"
            if failure.exists():
                r.details("Failed runs", f"run {row['run']} ({row['run_id']}): traceback",
                          read_json(failure).get("traceback") or "(none recorded)")
    for value, x, y in _heatmap_specs(d, about, results.columns, metrics) if ok.height else []:
        facets = [a for a in varying if a not in (x, y)]  # the first across, the others down
        path = r.figure_path(f"heatmap-{value}-{x}-{y}.png")
        plots.heatmaps(ok, value, x=x, y=y, path=path, rows=facets[1:], cols=facets[:1],
                       title=f"{about['name']}: {value}", better="lower" if _lower_is_better(value) else "higher",
                       reference=1.0 if value.endswith("_ratio") else None)
        r.figure("Heatmaps", path, f"{value} over {x} and {y}" + (f", a map per {', '.join(facets)}" if facets else ""))
    if len(varying) == 1 and ok.height and metrics:
        path = r.figure_path("bars.png")
        plots.bars(ok, varying[0], metrics[:3], path, title=about["name"])
        r.figure("Bar charts", path, f"{', '.join(metrics[:3])} by {varying[0]}")
    _sweep_series(r, d, about["procedure"], ok, varying)
    if "erase_count_histogram" in ok.columns:
        curves = {_run_label(row, varying): plots.cumulative(_histogram(row["erase_count_histogram"], d))
                  for row in ok.head(MAX_OVERLAY_RUNS).iter_rows(named=True) if row["erase_count_histogram"]}
        if curves:
            path = r.figure_path("erase-count-cdf.png")
            plots.cdf(curves, path, "erase count", "share of blocks (CDF)", title=f"{about['name']}: erase counts",
                      legend_title=", ".join(varying))
            r.figure("Erase counts", path, f"erase-count CDFs at the end of the first {len(curves)} runs")
    if (d / "sweep.toml").exists():
        r.text("Sweep file", files.read_text(d / "sweep.toml", "sweep file"))
    try:
        base = output.as_toml(about["base"])
    except (TypeError, ValueError):  # what TOML cannot hold (a sweep.json not written by nandlab)
        base = json.dumps(about["base"], indent=2)
    r.text("Base config", base, "the config every run starts from, before its axes' values")
    return r


def _check_description(about: dict[str, Any], path: Path) -> None:
    """sweep.json as a sweep writes it: a name and axes within the sweep file's bounds (a 100,000-character
    name took 44 s to draw into titles); ValueError naming the file otherwise."""
    from nandlab import _core, sweep

    name, axes = about.get("name"), about.get("axes")
    if not isinstance(name, str) or len(name) > _core.MAX_NAME_CHARS:
        raise ValueError(f"{path}: name: expected text of at most {_core.MAX_NAME_CHARS} characters, as a sweep's")
    if not isinstance(axes, list) or not all(isinstance(a, dict) for a in axes):
        raise ValueError(f"{path}: axes: expected a list of axes, as a sweep writes it")
    for axis in axes:
        if not isinstance(axis.get("name"), str) or len(axis["name"]) > sweep.MAX_NAME or \
                not isinstance(axis.get("values"), list) or len(axis["values"]) > sweep.MAX_RUNS:
            raise ValueError(f"{path}: an axis whose name or values no sweep file gives")


def _histogram(text: str, d: Path) -> list[list[int]]:
    """A run's erase-count histogram as results.parquet keeps it (JSON text of [erase count, blocks]
    pairs, at most ``api.MAX_HISTOGRAM`` of them); ValueError naming the file if it is not one."""
    from nandlab import api

    where = d / "results.parquet"
    if len(text) > 32 * api.MAX_HISTOGRAM:  # a pair of 64-bit counts is at most 45 characters; most far fewer
        raise ValueError(f"{where}: an erase-count histogram of {len(text):,} characters, longer than a drive's")
    try:
        pairs = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ValueError(f"{where}: an erase-count histogram that is not JSON") from None
    if not isinstance(pairs, list) or len(pairs) > api.MAX_HISTOGRAM or \
            not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise ValueError(f"{where}: an erase-count histogram that is not a drive's [erase count, blocks] pairs")
    wrong = plausible.impossible({"erase_count_histogram": pairs})
    if wrong is not None:
        raise ValueError(f"{where}: {wrong}")
    return pairs


def _sweep_series(r: Report, d: Path, procedure: str, ok: pl.DataFrame, varying: Sequence[str]) -> None:
    """The first finished runs' time series overlaid, a colour each (lifetime-compare: ZombieNAND
    solid, the baseline dotted)."""
    from nandlab import plots

    parts = d / "timeseries"
    if not ok.height or not parts.is_dir() or not any(parts.iterdir()):
        return
    runs = ok.head(MAX_OVERLAY_RUNS)
    labels = {row["run_id"]: _run_label(row, varying) for row in runs.iter_rows(named=True)}
    order = {run_id: index for index, run_id in enumerate(labels)}
    series = (
        pl.scan_parquet(parts, hive_partitioning=True, hive_schema={"run_id": pl.String}, glob=False)
        .filter(pl.col("run_id").is_in(list(labels)))
        .collect()
        .with_columns(label=pl.col("run_id").replace_strict(labels), order=pl.col("run_id").replace_strict(order))
        .sort("order", maintain_order=True)
    )
    plausible.check_table(series.drop("run_id", "label", "order"), parts)
    if not series.height:
        return
    if procedure == "lifetime-compare":
        panels = (plots.MEAN_LATENCY, plots.Panel("WAF (cumulative)", ("waf_cumulative",)),
                  plots.Panel("spare lost", ("reserve_used",)), plots.Panel("usable bytes", ("usable_bytes",)))
    else:
        panels = (plots.Panel("write MB/s", ("write_mbps",), zero_is_gap=True),
                  plots.Panel("read MB/s", ("read_mbps",), zero_is_gap=True),
                  plots.Panel("WAF (cumulative)", ("waf_cumulative",)), plots.FREE_BLOCKS)
    sides = "side" in series.columns
    path = r.figure_path("timeseries.png")
    plots.timeseries_panels(series, panels, path, by="label", style_by="side" if sides else None,
                            title="the runs over time", legend_title=", ".join(varying))
    r.figure("Time series", path, f"the first {runs.height} of {ok.height} finished runs against host data written"
             + (", ZombieNAND solid, the baseline dotted" if sides else ""))
    if series["phase"].n_unique() > 1:  # a phase that only reads is no vertical line: each the same width
        path = r.figure_path("timeseries-phases.png")
        plots.timeseries_panels(series, panels, path, by="label", style_by="side" if sides else None, x="phase",
                                title="the runs phase by phase", legend_title=", ".join(varying))
        r.figure("Time series", path, "the same with each run's phases the same width, across the data each "
                 "moved (its time if none)")


def _sweep_metrics(procedure: str, results: pl.DataFrame, axes: Sequence[str] = ()) -> list[str]:
    """The headline figures of a sweep's results (those it has), in order; a sweep that ``record``s
    none of them: the numeric figures it kept, in their order."""
    wanted = (("lifetime_ratio", "latency_ratio", "latency_ratio_after", "zombie_drive_writes", "baseline_drive_writes")
              if procedure == "lifetime-compare"
              else ("waf", "iops", "mbps", "write_latency_us_p99", "read_latency_us_p99", "erases"))
    headline = [m for m in wanted if m in results.columns and m not in axes
                and results[m].null_count() < results.height]
    if headline:
        return headline
    return [c for c in results.columns
            if c not in _NOT_FIGURES and c not in axes and c != "wall_seconds"
            and results[c].dtype.is_numeric() and results[c].null_count() < results.height]


def _heatmap_specs(
    d: Path, about: Mapping[str, Any], columns: Sequence[str], metrics: Sequence[str]
) -> list[tuple[str, str, str]]:
    """(value, x, y) of each heatmap: the sweep file's ``[report] heatmaps``, or by default the
    headline figures over the two axes that suit a map best (``_map_axes``)."""
    source = d / "sweep.toml"
    try:
        settings = tomllib.loads(files.read_text(source, "sweep file")).get("report", {}) if source.exists() else {}
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{source}: TOML syntax error: {error}") from None
    names = [a["name"] for a in about["axes"]]
    from nandlab import sweep

    heatmaps = sweep.report_heatmaps(settings, names, str(source))
    if heatmaps is None:
        pair = _map_axes([a for a in about["axes"] if len(a["values"]) > 1])
        count = 2 if about["procedure"] == "lifetime-compare" else 3
        return [(value, *pair) for value in metrics[:count]] if pair else []
    for index, (value, _, _) in enumerate(heatmaps, 1):
        if value not in columns:
            raise ValueError(f"{source}: [report] heatmaps #{index}: value = {value!r} is not a column of "
                             f"results.parquet (its headline figures: {', '.join(metrics) or 'none'})")
    return heatmaps


def _map_axes(varying: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """The two axes a heatmap is drawn over by default: numbers (unlabelled axes) before labels, the
    most points first; x the one earlier in the sweep. The other axes facet the maps."""
    if len(varying) < 2:
        return None
    ranked = sorted(range(len(varying)), key=lambda i: (bool(varying[i].get("labels")), -len(varying[i]["values"]), i))
    first, second = sorted(ranked[:2])
    return varying[first]["name"], varying[second]["name"]


def _positions(axis: Mapping[str, Any]) -> list[Any]:
    """An axis' points as results.parquet names them: labels, or the (first key's) values."""
    return list(axis["labels"]) if axis.get("labels") else [v[0] for v in axis["values"]]


def _run_label(row: Mapping[str, Any], varying: Sequence[str]) -> str:
    """A run named in a legend by its values on the axes that vary (``0.1, tlc``: the legend's title
    names the axes), or by its number if none does."""
    return ", ".join(fmt(row[a]) for a in varying) or f"run {row['run']}"


def _lower_is_better(figure: str) -> bool:
    """Whether a smaller ``figure`` is the better (latencies, WAF, erases)."""
    return any(word in figure for word in ("latency", "waf", "_us", "erases"))
