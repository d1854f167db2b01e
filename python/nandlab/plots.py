"""Every figure nandlab draws (the one plotting module), on matplotlib's off-screen Agg canvas (no
display needed). Generic primitives — time-series panels, heatmap grids, bar charts, histograms and
CDFs — draw the reports and sweeps (``nandlab.report``) and are what the procedures' own figures are
made of: a run's throughput and latency, chip tests, qualification procedures, SNIA-style matrices,
trace statistics and the ZombieNAND grid."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from nandlab import output
from nandlab.api import Result
from nandlab.matrix import Matrix
from nandlab.qualify import Qualification

GIB = 2**30
CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
QUALIFY_FIGURES = {
    "write-sections": ("AN2103 write test (its Fig. 1)", "GiB written since the start"),
    "read-sections": ("AN2103 read test (its Fig. 6)", "GiB read since the start"),
    "pslc-fill": ("AN2103 sequential fill (its Figs. 2–5)", "GiB written since the start"),
}
MAX_LEGEND = 12
"""Legends list at most this many lines (runs, curves); more get none."""


@dataclass(frozen=True)
class Panel:
    """One panel of ``timeseries_panels``: its y-axis ``label``, the time-series ``columns`` drawn on
    it, a ``log`` scale or not, and whether a zero means "nothing of the kind in the interval" (a
    gap: rates, latencies) rather than a value."""

    label: str
    columns: tuple[str, ...]
    log: bool = False
    zero_is_gap: bool = False


THROUGHPUT = Panel("throughput (MB/s)", ("write_mbps", "read_mbps"), zero_is_gap=True)
LATENCY = Panel("latency (µs)", ("write_p50_us", "write_p99_us", "read_p50_us", "read_p99_us"), log=True,
                zero_is_gap=True)
MEAN_LATENCY = Panel("mean latency (µs)", ("latency_mean_us",), log=True, zero_is_gap=True)
WAF = Panel("WAF", ("waf", "waf_cumulative"), zero_is_gap=True)
FREE_BLOCKS = Panel("free blocks", ("free_blocks",))
BIT_MODES = Panel("blocks by bit mode", ("slc_blocks", "mlc_blocks", "tlc_blocks", "qlc_blocks"))
WEAR = Panel("share used", ("wear_used", "reserve_used"))
PSLC = Panel("pSLC cache (bytes)", ("pslc_bytes", "folded_bytes", "direct_bytes"))
SERIES_STYLES = {  # time-series column: (legend label, colour, line style)
    "write_mbps": ("write", "tab:blue", "-"),
    "read_mbps": ("read", "tab:orange", "-"),
    "write_p50_us": ("write p50", "tab:blue", "-"),
    "write_p99_us": ("write p99", "tab:blue", ":"),
    "read_p50_us": ("read p50", "tab:orange", "-"),
    "read_p99_us": ("read p99", "tab:orange", ":"),
    "latency_mean_us": ("mean latency", "tab:blue", "-"),
    "waf": ("interval", "tab:blue", "-"),
    "waf_cumulative": ("cumulative", "tab:red", "-"),
    "free_blocks": ("free blocks", "tab:green", "-"),
    "slc_blocks": ("SLC", "tab:blue", "-"),
    "mlc_blocks": ("MLC", "tab:orange", "-"),
    "tlc_blocks": ("TLC", "tab:green", "-"),
    "qlc_blocks": ("QLC", "tab:red", "-"),
    "wear_used": ("wear used (of the rating)", "tab:purple", "-"),
    "reserve_used": ("spare lost (of the reserve)", "tab:brown", "-"),
    "pslc_bytes": ("in the pSLC cache", "tab:blue", "-"),
    "folded_bytes": ("folded", "tab:orange", "-"),
    "direct_bytes": ("written direct", "tab:green", "-"),
}
LINE_STYLES = ("-", ":", "--", "-.")


def throughput_latency(result: Result, path: str | os.PathLike[str]) -> None:
    """Save a PNG of throughput (MB/s) and latency (p50/p99 µs, log scale) against host data written.

    Each phase starts at a dashed vertical line labelled with its name.
    """
    timeseries_panels(result.timeseries, (THROUGHPUT, LATENCY), path, title=_title(result),
                      phases=[phase["name"] for phase in result.phases])


def with_data(series: pl.DataFrame, panels: Sequence[Panel]) -> list[Panel]:
    """``panels`` with only the columns ``series`` has, each with a non-zero value somewhere (a run
    without reads has no read line, one without ZombieNAND no MLC blocks), and only the panels left
    with a column."""
    kept = []
    for panel in panels:
        columns = tuple(c for c in panel.columns if c in series.columns and bool((series[c].fill_null(0) != 0).any()))
        if columns:
            kept.append(replace(panel, columns=columns))
    return kept


def timeseries_panels(
    series: pl.DataFrame,
    panels: Sequence[Panel],
    path: str | os.PathLike[str],
    by: str | None = None,
    style_by: str | None = None,
    title: str = "",
    phases: Sequence[str] = (),
) -> None:
    """Save a PNG of time series against host data written: one panel per ``Panel`` with data
    (``with_data``), stacked over one x axis. Without ``by``, a line per column, styled as
    ``SERIES_STYLES`` says; with ``by`` (a column naming runs), a colour per run and a line style per
    column, or per value of ``style_by`` (say ZombieNAND and the baseline). ``phases`` (the phase
    names, in order) mark where each phase starts. Samples are interval figures, drawn as steps
    ending at the data written by then."""
    # With nothing to draw (a run without requests), the panels' axes stay empty.
    shown = with_data(series, panels) or [replace(p, columns=tuple(c for c in p.columns if c in series.columns))
                                          for p in panels]
    ts = series.with_columns(gib_written=pl.col("host_write_bytes") / GIB)
    if by is None:
        groups, colours, styles = [ts], {}, {}
    else:
        groups = ts.partition_by([by] if style_by is None else [by, style_by], maintain_order=True)
        colours = {key: f"C{i % 10}" for i, key in enumerate(ts[by].unique(maintain_order=True))}
        styles = {} if style_by is None else {
            key: LINE_STYLES[i % len(LINE_STYLES)] for i, key in enumerate(ts[style_by].unique(maintain_order=True))
        }
    fig = Figure(figsize=(10, 1.2 + 2.6 * len(shown)), layout="constrained")
    column = list(fig.subplots(len(shown), 1, sharex=True, squeeze=False)[:, 0])
    for axes, panel in zip(column, shown):
        for part in groups:
            for c, name in enumerate(panel.columns):
                values = part.select(
                    pl.when(pl.col(name) > 0).then(pl.col(name)) if panel.zero_is_gap else pl.col(name)
                ).to_series().cast(pl.Float64)
                label, color, style = SERIES_STYLES.get(name, (name, f"C{c % 10}", "-"))
                if by is not None:
                    run = str(part[by][0]) + (f" ({part[style_by][0]})" if style_by else "")
                    label = run if len(panel.columns) == 1 else f"{run}: {label}"
                    color = colours[part[by][0]]
                    style = styles[part[style_by][0]] if style_by else LINE_STYLES[c % len(LINE_STYLES)]
                axes.plot(part["gib_written"].to_numpy(), values.to_numpy(), drawstyle="steps-pre", linewidth=1,
                          color=color, linestyle=style, label=label)
        axes.set_ylabel(panel.label)
        if panel.log:
            _log_y(axes)
        else:
            axes.set_ylim(bottom=0)
        axes.grid(True, alpha=0.3)
        lines = axes.get_lines()
        if by is None and lines and (len(lines) > 1 or lines[0].get_label() != panel.label):
            axes.legend(fontsize="small")
        elif by is not None and axes is column[0] and len(lines) <= MAX_LEGEND:
            axes.legend(fontsize="x-small", ncols=2)
    if phases and by is None:
        _mark_starts(_phase_starts(ts, phases), *column)
    column[-1].set_xlabel("host data written (GiB)")
    if title:
        fig.suptitle(title, fontsize="medium")
    fig.savefig(path, dpi=110)


def _phase_starts(ts: pl.DataFrame, names: Sequence[str]) -> list[tuple[float, str]]:
    """Where each phase starts (the data written when the one before ended), and its name."""
    ends = dict(ts.group_by("phase").agg(pl.col("gib_written").last()).iter_rows())
    starts = []
    start = 0.0
    for index, name in enumerate(names):
        starts.append((start, name))
        start = ends.get(index, start)
    return starts


def _mark_starts(
    starts: Sequence[tuple[float, str]],
    labelled: Axes,
    *others: Axes,
    color: str = "grey",
    stagger: int = 0,
    levels: int = 3,
) -> None:
    """A dashed vertical line at each ``(x, label)`` on every axes, the label at the top of
    ``labelled``, staggered over ``levels`` lines (starting ``stagger`` lines down), so that nearby
    labels stay legible."""
    for index, (x, label) in enumerate(starts, stagger):
        for axes in (labelled, *others):
            axes.axvline(x, color=color, linestyle="--", linewidth=0.8)
        labelled.annotate(
            label,
            xy=(x, 1.0),
            xycoords=labelled.get_xaxis_transform(),
            xytext=(3, -3 - 11 * (index % levels)),
            textcoords="offset points",
            va="top",
            fontsize="small",
            color="dimgrey",
        )


def _title(result: Result) -> str:
    """A one-line description of the drive for the figure title."""
    return _drive_title(result.device)


def _drive_title(device: dict) -> str:
    """A one-line description of a drive (the engine's device figures) for a figure title."""
    preset = device["preset"] or "custom drive"
    capacity = device["user_capacity_bytes"] / GIB
    return f"nandlab — {preset}, {str(device['cell']).upper()}, {capacity:.3g} GiB user capacity"


def endurance(run: dict, path: str | os.PathLike[str]) -> None:
    """Save a PNG of an endurance run: block lifetimes against the nominal rating (Desnoyers' Fig. 5)
    and the first block's program and erase latency against cycles (his Fig. 6)."""
    import numpy as np

    fig = Figure(figsize=(10, 7), layout="constrained")
    top, bottom = fig.subplots(2, 1)
    lifetimes = np.sort(np.asarray(run["lifetimes"], dtype=float))
    nominal = run["nominal_endurance"]
    top.scatter(np.arange(len(lifetimes)), lifetimes, s=8, color="tab:blue", label="block lifetime")
    top.axhline(nominal, color="tab:red", linestyle="--", label=f"nominal {nominal:,.0f}")
    top.set_ylim(min(lifetimes[0], nominal) / 2, max(lifetimes[-1], nominal) * 2)
    top.set_yscale("log")
    top.set_xlabel("block (sorted by lifetime)")
    top.set_ylabel("program/erase cycles to failure")
    top.legend(fontsize="small")
    trace = run["trace"]
    bottom.plot(trace["cycle"], trace["program_us"], ".", markersize=2, color="tab:blue", label="program")
    bottom.plot(trace["cycle"], trace["erase_us"], ".", markersize=2, color="tab:orange", label="erase")
    bottom.set_xscale("log")
    bottom.set_xlabel("program/erase cycle (first block)")
    bottom.set_ylabel("latency (µs)")
    bottom.legend(fontsize="small")
    for axes in (top, bottom):
        axes.grid(True, alpha=0.3)
    conditions = run["conditions"]
    fig.suptitle(
        f"nandlab chip endurance — {run['chip']['name']}, {len(lifetimes)} blocks, "
        f"{conditions['pattern']}, {conditions['temperature_c']:g} °C"
    )
    fig.savefig(path, dpi=110)


def power_cuts(cuts: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    """Save a PNG of a run's power cuts (``output.power_loss_table``): each cut's recovery time, and
    the units it cost (acknowledged and unacknowledged writes lost) or recovery moved, over simulated
    time."""
    fig = Figure(figsize=(10, 6), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(cuts["at_seconds"], cuts["recovery_us"] / 1e3, ".", color="tab:blue")
    top.set_ylabel("recovery (ms)")
    for column, label, colour in (
        ("acknowledged_lost_units", "acknowledged units lost", "tab:red"),
        ("unacknowledged_lost_units", "unacknowledged units lost", "tab:orange"),
        ("relocated_units", "units moved by recovery", "tab:green"),
    ):
        if cuts[column].sum():
            bottom.plot(cuts["at_seconds"], cuts[column], ".", color=colour, label=label)
    bottom.set_yscale("symlog")
    bottom.set_ylabel("units")
    bottom.set_xlabel("simulated time of the cut (s)")
    if bottom.get_legend_handles_labels()[0]:
        bottom.legend(fontsize="small")
    for axes in (top, bottom):
        axes.grid(True, alpha=0.3)
    fig.suptitle(f"nandlab — {cuts.height:,} power cuts")
    fig.savefig(path, dpi=110)


def chip_latency(result: dict, path: str | os.PathLike[str]) -> None:
    """Save a PNG of a chip's read, program and erase latency — worst, typical, best — beside its
    datasheet value (Desnoyers' Figs. 7–9)."""
    fig = Figure(figsize=(10, 3.8), layout="constrained")
    panels = fig.subplots(1, 3)
    kinds = ("worst", "typical", "best")
    colors = ("tab:red", "tab:blue", "tab:green", "grey")
    for axes, op in zip(panels, ("read", "program", "erase")):
        values = [result[f"{op}_us"][k] for k in kinds] + [result["datasheet"][f"{op}_us"]]
        _bar_axes(axes, [*kinds, "datasheet"], {op: values}, color=colors)
        axes.set_title(op)
        axes.set_ylabel("µs")
    fig.suptitle(f"nandlab chip latency — {result['chip']['name']}")
    fig.savefig(path, dpi=110)


def lifetime_heatmaps(table: pl.DataFrame, metric: str, path: str | os.PathLike[str]) -> None:
    """Save a PNG of the ZombieNAND synthetic grid (the paper's Fig. 3): one heatmap of ``metric``
    (``lifetime_ratio`` or ``latency_ratio``) per cell type (columns) and read level (rows), working
    set across, reserve down, each square labelled with its value; 1.0 = the baseline."""
    title = "lifetime" if metric == "lifetime_ratio" else "mean latency over the baseline's life"
    heatmaps(
        table, metric, x="working_set", y="reserve", path=path, rows=("read_level",), cols=("cell",),
        title=f"ZombieNAND synthetic grid:\n{title} relative to the baseline",
        label="lifetime / baseline" if metric == "lifetime_ratio" else "latency / baseline",
        better="higher" if metric == "lifetime_ratio" else "lower", reference=1.0,
    )


def heatmaps(
    table: pl.DataFrame,
    value: str,
    x: str,
    y: str,
    path: str | os.PathLike[str],
    rows: Sequence[str] = (),
    cols: Sequence[str] = (),
    title: str = "",
    label: str | None = None,
    better: str = "higher",
    reference: float | None = None,
) -> None:
    """Save a PNG of ``value`` over two columns (``x`` across, ``y`` up, each in the order the table
    first has its values: a sweep's order), one heatmap per combination of the facet columns
    ``rows`` (a row of maps per combination) and ``cols``, each square labelled with its value ("–":
    none). Lighter is better (``better`` = "higher" or "lower"); with a ``reference`` (1.0 for
    ratios) the colours are centred on it. ValueError if two rows of a map have the same square
    (a column that varies is missing from the facets)."""
    import numpy as np
    from matplotlib.colors import Normalize, TwoSlopeNorm

    row_keys = table.select(rows).unique(maintain_order=True).rows() if rows else [()]
    col_keys = table.select(cols).unique(maintain_order=True).rows() if cols else [()]
    xs, ys = table[x].unique(maintain_order=True).to_list(), table[y].unique(maintain_order=True).to_list()
    values = table[value].cast(pl.Float64).to_numpy()
    finite = values[np.isfinite(values)]
    low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if reference is not None:
        norm = TwoSlopeNorm(reference, min(low, reference - 0.05), max(high, reference + 0.05))
    else:
        norm = Normalize(low, high if high > low else low + 1.0)
    cmap = "viridis" if better == "higher" else "viridis_r"
    fig = Figure(figsize=(4.2 * len(col_keys) + 1.2, 3.2 * len(row_keys) + 0.6), layout="constrained")
    grid = fig.subplots(len(row_keys), len(col_keys), squeeze=False)
    image = None
    for i, row_key in enumerate(row_keys):
        for j, col_key in enumerate(col_keys):
            axes = grid[i, j]
            facets = list(zip([*cols, *rows], [*col_key, *row_key]))
            part = table.filter([pl.col(name) == key for name, key in facets]) if facets else table
            z = np.full((len(ys), len(xs)), np.nan)
            filled = np.zeros(z.shape, dtype=bool)
            for r in part.iter_rows(named=True):
                square = (ys.index(r[y]), xs.index(r[x]))
                if filled[square]:
                    where = ", ".join(f"{name}={key}" for name, key in [(x, r[x]), (y, r[y]), *facets])
                    raise ValueError(
                        f"heatmap of {value}: two rows at {where}; facet by the columns that tell them apart")
                filled[square] = True
                if r[value] is not None:
                    z[square] = r[value]
            image = axes.imshow(np.clip(z, norm.vmin, norm.vmax), norm=norm, cmap=cmap, origin="lower", aspect="auto")
            for (a, b), v in np.ndenumerate(z):
                if np.isfinite(v):
                    # Dark squares (the low end of viridis) get white labels.
                    position = float(norm(np.clip(v, norm.vmin, norm.vmax)))
                    dark = position < 0.5 if cmap == "viridis" else position > 0.5
                    axes.text(b, a, f"{v:.3g}", ha="center", va="center", fontsize=7,
                              color="white" if dark else "black")
                else:
                    axes.text(b, a, "–", ha="center", va="center", fontsize=7, color="grey")
            axes.set_xticks(range(len(xs)), [_tick(v) for v in xs])
            axes.set_yticks(range(len(ys)), [_tick(v) for v in ys])
            axes.set_xlabel(x)
            axes.set_ylabel(y)
            axes.set_title(", ".join(f"{name}={_tick(key)}" for name, key in facets), fontsize="medium")
    if image is not None:
        fig.colorbar(image, ax=grid, label=label or value, shrink=0.8)
    fig.suptitle(title or f"{value} over {x} and {y}", fontsize="medium")
    fig.savefig(path, dpi=110)


def _tick(value: object) -> str:
    """A tick label: fractions as percentages, other numbers short, anything else as text."""
    if isinstance(value, float) and 0 < value <= 1:
        return f"{value:.0%}"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def bars(table: pl.DataFrame, x: str, values: Sequence[str], path: str | os.PathLike[str], title: str = "") -> None:
    """Save a PNG of one bar chart per column of ``values`` against the categories of ``x`` (a sweep
    with one axis), each bar labelled with its value."""
    fig = Figure(figsize=(4.0 * len(values) + 0.6, 3.8), layout="constrained")
    panels = fig.subplots(1, len(values), squeeze=False)[0]
    labels = [_tick(v) for v in table[x]]
    for axes, value in zip(panels, values):
        _bar_axes(axes, labels, {value: table[value].cast(pl.Float64).to_list()}, color="tab:blue", annotate=True,
                  rotation=30)
        axes.set_xlabel(x)
        axes.set_ylabel(value)
    fig.suptitle(title or f"by {x}", fontsize="medium")
    fig.savefig(path, dpi=110)


def _bar_axes(
    axes: Axes,
    categories: Sequence[object],
    series: Mapping[str, Sequence[float | None]],
    color: str | Sequence[str] | None = None,
    annotate: bool = False,
    rotation: float = 0,
) -> None:
    """Bars on ``axes``: a group per category, in it a bar per series, side by side (coloured C0, C1,
    ... or ``color``: one colour, or one per bar), named in a legend when there are several series;
    ``annotate`` labels each bar with its value."""
    width = 0.8 / len(series)
    for index, (name, values) in enumerate(series.items()):
        heights = [math.nan if v is None else float(v) for v in values]
        offset = (index - (len(series) - 1) / 2) * width
        drawn = axes.bar([p + offset for p in range(len(categories))], heights, width=width,
                         color=f"C{index % 10}" if color is None else color, label=name if len(series) > 1 else None)
        if annotate:
            labels = [output.number(h) if math.isfinite(h) else "" for h in heights]
            axes.bar_label(drawn, labels=labels, fontsize="x-small")
    axes.set_xticks(range(len(categories)), [str(c) for c in categories], rotation=rotation,
                    ha="right" if rotation else "center")
    axes.grid(True, axis="y", alpha=0.3)
    if len(series) > 1:
        axes.legend(fontsize="small")


def cumulative(points: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """A histogram's ``(value, count)`` pairs as a CDF: the values in order, and the share of all
    counts at or below each."""
    total = sum(n for _, n in points) or 1
    xs, ys, running = [], [], 0.0
    for value, n in sorted(points):
        running += n
        xs.append(value)
        ys.append(running / total)
    return xs, ys


def distribution(
    points: Sequence[Sequence[float]], path: str | os.PathLike[str], xlabel: str, ylabel: str, title: str = ""
) -> None:
    """Save a PNG of a histogram of whole-numbered ``(value, count)`` pairs (say ``ylabel`` "blocks"
    per ``xlabel`` "erase count"), and beside it its CDF."""
    fig = Figure(figsize=(11, 4), layout="constrained")
    histogram, distribution_function = fig.subplots(1, 2)
    _histogram_axes(histogram, points)
    histogram.set(xlabel=xlabel, ylabel=ylabel)
    _cdf_axes(distribution_function, {"": cumulative(points)}, steps=True)
    distribution_function.set(xlabel=xlabel, ylabel=f"share of the {ylabel} (CDF)", ylim=(0, 1.02))
    if title:
        fig.suptitle(title, fontsize="medium")
    fig.savefig(path, dpi=110)


def cdf(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    path: str | os.PathLike[str],
    xlabel: str,
    ylabel: str = "share (CDF)",
    title: str = "",
) -> None:
    """Save a PNG of CDFs, one line each (``label: (xs, shares)``, say ``cumulative`` of each run's
    erase-count histogram)."""
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    axes = fig.subplots()
    _cdf_axes(axes, curves, steps=True)
    axes.set(xlabel=xlabel, ylabel=ylabel, ylim=(0, 1.02))
    if title:
        fig.suptitle(title, fontsize="medium")
    fig.savefig(path, dpi=110)


def _histogram_axes(axes: Axes, points: Sequence[Sequence[float]], bins: int = 50) -> None:
    """A histogram of whole-numbered ``(value, count)`` pairs on ``axes``: a bar per value while the
    values span fewer than ``bins`` units, else the counts summed into ``bins`` equal bins."""
    import numpy as np

    values = np.array([v for v, _ in points], dtype=float)
    counts = np.array([n for _, n in points], dtype=float)
    if values.size and values.max() - values.min() >= bins:
        counts, edges = np.histogram(values, bins=bins, weights=counts)
        axes.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="tab:purple")
    else:
        axes.bar(values, counts, width=0.9, color="tab:purple")
    axes.grid(True, axis="y", alpha=0.3)


def _cdf_axes(
    axes: Axes, curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], steps: bool = False, legend: bool = True
) -> None:
    """Cumulative curves on ``axes`` (``label: (xs, ys)``), as steps or joined points; a legend when
    there are several (and ``legend``)."""
    for label, (xs, ys) in curves.items():
        axes.plot(xs, ys, drawstyle="steps-post" if steps else "default", linewidth=1.2, label=label)
    axes.grid(True, alpha=0.3)
    if legend and 1 < len(curves) <= MAX_LEGEND:
        axes.legend(fontsize="small")


def sections(q: Qualification, path: str | os.PathLike[str]) -> None:
    """Save a PNG of a sections procedure (write-sections, read-sections) as the note draws it
    (AN2103 Figs. 1 and 6): the smoothed speed against data moved, the sections side by side, each
    numbered at its start, its mean a dotted line; below, the same on a log scale, where the slow
    sections' shapes show."""
    fig, panels = _qualify_figure(2)
    for number, part in enumerate(q.parts, 1):
        points = q.series.filter(pl.col("section") == part["name"])
        color = f"C{(number - 1) % 10}"
        for axes in panels:
            axes.plot(points["gib"], points["mbps"], color=color, linewidth=1.1,
                      label=f"{number} {part['name']}" if axes is panels[0] else None)
            axes.hlines(part["mean_mbps"], part["gib_start"], part["gib_end"], color=color, linestyle=":",
                        linewidth=0.9)
    numbers = [CIRCLED[i] if i < len(CIRCLED) else str(i + 1) for i in range(len(q.parts))]
    _mark_starts([(part["gib_start"], number) for part, number in zip(q.parts, numbers)], *panels)
    _finish_qualify(fig, panels, q)
    fig.savefig(path, dpi=110)


def fill_curves(
    runs: Qualification | Sequence[Qualification], path: str | os.PathLike[str], labels: Sequence[str] | None = None
) -> None:
    """Save a PNG of one or more pSLC-fill runs (AN2103 Figs. 2–5): the smoothed write speed against
    data written, each run's phases (pslc, direct, folding, native) marked where they start; with
    several runs (say fresh and aged, or with and without direct-write), one line each."""
    runs = [runs] if isinstance(runs, Qualification) else list(runs)
    labels = list(labels) if labels is not None else [q.device for q in runs]
    fig, panels = _qualify_figure(1)
    stagger = 0
    levels = max(3, sum(len(q.parts) for q in runs))  # runs start at the same place: one line per label
    for index, (q, label) in enumerate(zip(runs, labels)):
        color = f"C{index % 10}"
        panels[0].plot(q.series["gib"], q.series["mbps"], color=color, linewidth=1.1, label=label)
        if len(runs) == 1:
            _mark_starts([(part["gib_start"], part["name"]) for part in q.parts], panels[0])
        else:
            starts = [(part["gib_start"], f"{label}: {part['name']}") for part in q.parts]
            _mark_starts(starts, panels[0], color=color, stagger=stagger, levels=levels)
            stagger += len(starts)
    _finish_qualify(fig, panels, runs[0])
    fig.savefig(path, dpi=110)


def _qualify_figure(rows: int) -> tuple[Figure, list[Axes]]:
    """A qualification figure: ``rows`` panels over one x axis, the first linear, the others log."""
    fig = Figure(figsize=(10, 3 + 2.5 * rows), layout="constrained")
    panels = list(fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0])
    for axes in panels[1:]:
        _log_y(axes)
    return fig, panels


def _log_y(axes: Axes) -> None:
    """A log y axis labelled in plain numbers: 1, 2, 5, 10, 20, 50, ..."""
    axes.set_yscale("log")
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.yaxis.set_minor_formatter(FuncFormatter(_two_and_five))


def _two_and_five(value: float, _position: int) -> str:
    """Labels of a log axis' minor ticks: only 2 and 5 × a power of ten."""
    if value <= 0:
        return ""
    mantissa = value / 10 ** math.floor(math.log10(value))
    return f"{value:g}" if round(mantissa) in (2, 5) and abs(mantissa - round(mantissa)) < 1e-6 else ""


def _finish_qualify(fig: Figure, panels: Sequence[Axes], q: Qualification) -> None:
    """Axes labels, grid, legend and title of a qualification figure."""
    title, xlabel = QUALIFY_FIGURES[q.procedure]
    ylabel = "read speed (MB/s)" if q.procedure == "read-sections" else "write speed (MB/s)"
    for axes in panels:
        axes.set_ylabel(ylabel + (", log scale" if axes.get_yscale() == "log" else ""))
        axes.grid(True, alpha=0.3)
    panels[0].set_ylim(0, panels[0].get_ylim()[1] * 1.2)  # room for the labels at the top
    panels[0].set_xlim(left=0)
    panels[-1].set_xlabel(xlabel)
    if panels[0].get_legend_handles_labels()[0]:
        fig.legend(fontsize="small", loc="outside lower center", ncols=4, frameon=False)
    fig.suptitle(f"{title}\n{_title(q.result)}", fontsize="medium")


def trace_stats(summary: dict, path: str | os.PathLike[str], title: str = "") -> None:
    """Save a PNG of a trace's address reuse (the ZombieNAND paper's Fig. 4: the share of accesses
    the most used 4 KiB blocks account for) and its request sizes."""
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    reuse, sizes = fig.subplots(1, 2)
    _cdf_axes(reuse, {label: _percents(summary[key])
                      for key, label in (("reuse_cdf", "all accesses"), ("write_reuse_cdf", "writes")) if summary[key]})
    reuse.set(xlabel="most used 4 KiB blocks (% of the footprint)", ylabel="accesses (%)", xlim=(0, 100), ylim=(0, 101))
    reuse.set_title("address reuse")
    rows = summary["size_histogram"]
    _bar_axes(sizes, [_size_label(row[0]) for row in rows],
              {"reads": [row[2] for row in rows], "writes": [row[3] for row in rows]}, rotation=45)
    sizes.set(xlabel="request size (at least)", ylabel="requests")
    sizes.set_title("request sizes")
    fig.suptitle(
        f"{title} — {summary['format']}, {summary['records']:,} records, "
        f"{summary['write_percent']:.0f} % of bytes written"
    )
    fig.savefig(path, dpi=110)


def reuse_curves(summaries: dict[str, dict], path: str | os.PathLike[str]) -> None:
    """Save a PNG of several traces' address reuse, all accesses and writes (the ZombieNAND
    paper's Fig. 4: steep curves = a few blocks take most accesses)."""
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    panels = fig.subplots(1, 2, sharey=True)
    for axes, key, title in zip(panels, ("reuse_cdf", "write_reuse_cdf"), ("all accesses", "writes")):
        _cdf_axes(axes, {name: _percents(s[key]) for name, s in summaries.items() if s[key]}, legend=axes is panels[1])
        axes.set(xlabel="most used 4 KiB blocks (% of the footprint)", xlim=(0, 100), ylim=(0, 101), title=title)
    panels[0].set_ylabel("accesses (%)")
    fig.suptitle("address reuse")
    fig.savefig(path, dpi=110)


def _percents(points: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """``(share, share)`` points as percentages: ``(xs, ys)``."""
    return [100 * x for x, _ in points], [100 * y for _, y in points]


def _size_label(size: int) -> str:
    """``512 B``, ``4 KiB``, ``1 MiB``."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size // scale} {unit}"
    return f"{size} B"


def matrix_block_sizes(m: Matrix, state: str, path: str | os.PathLike[str]) -> None:
    """Save a PNG of one state (``burst`` or ``steady``) of a matrix as the SNIA tutorial draws its
    measured drives ("Performance vs Block Size", "Scalability vs R/W vs Block Size"): IOPS (log
    scale) and MB/s against block size, one line per read/write mix; on the MB/s panel each mix's
    theoretical maximum, dotted in its colour. Steady cells that never became steady are hollow."""
    fig = Figure(figsize=(12, 5), layout="constrained")
    panels = fig.subplots(1, 2, sharex=True)
    cells = m.cells(state)
    mixes = list(dict.fromkeys((c["read_percent"], c["write_percent"]) for c in cells))
    sizes = sorted({c["block_size"] for c in cells})
    for index, mix in enumerate(mixes):
        color = f"C{index % 10}"
        row = [c for c in cells if (c["read_percent"], c["write_percent"]) == mix]
        row.sort(key=lambda c: c["block_size"])
        x = [c["block_size"] for c in row]
        for axes, key in zip(panels, ("iops", "mbps")):
            axes.plot(x, [c[key] for c in row], color=color, marker="o", markersize=4, linewidth=1.2,
                      label=f"{mix[0]}/{mix[1]}" if key == "iops" else None)
            unsteady = [c for c in row if c.get("steady") is False]
            if unsteady:
                axes.scatter([c["block_size"] for c in unsteady], [c[key] for c in unsteady], s=30, zorder=3,
                             facecolors="white", edgecolors=color)
        panels[1].hlines(row[0]["theoretical_mbps"], x[0], x[-1], color=color, linestyle=":", linewidth=1.0)
    panels[1].plot([], [], color="grey", linestyle=":", label="theoretical max\n(the tutorial's model)")
    if any(c.get("steady") is False for c in cells):
        panels[1].scatter([], [], s=30, facecolors="white", edgecolors="grey", label="not steady")
    _log_y(panels[0])
    panels[0].set_ylabel("IOPS, log scale")
    panels[1].set_ylabel("bandwidth (MB/s)")
    panels[1].set_ylim(bottom=0)
    for axes in panels:
        axes.set_xscale("log", base=2)
        axes.set_xticks(sizes, [_size_label(size) for size in sizes], rotation=45, ha="right")
        axes.minorticks_off()
        axes.set_xlabel("block size (random I/O)")
        axes.grid(True, alpha=0.3)
    fig.legend(title="read/write %", fontsize="small", loc="outside right center", frameon=False)
    what = {"burst": "burst (fresh drive)", "steady": "steady state (SNIA PTS rule)"}.get(state, state)
    fig.suptitle(f"{what}: IOPS and bandwidth vs block size, queue depth {m.queue_depth}\n{_drive_title(m.drive)}",
                 fontsize="medium")
    fig.savefig(path, dpi=110)


def die_scaling(matrices: Matrix | Sequence[Matrix], path: str | os.PathLike[str]) -> None:
    """Save a PNG of bandwidth against die count (the SNIA tutorial's "Theoretical BW v Number of
    Die"): reads and writes simulated (solid) and the tutorial's theoretical model (dashed), the host
    link dotted; with several matrices (say SLC and MLC), one panel each, side by side."""
    runs = [matrices] if isinstance(matrices, Matrix) else list(matrices)
    fig = Figure(figsize=(1.5 + 5.5 * len(runs), 4.8), layout="constrained")
    panels = fig.subplots(1, len(runs), sharey=True, squeeze=False)[0]
    for axes, m in zip(panels, runs):
        for read, color, name in ((100, "tab:orange", "reads"), (0, "tab:blue", "writes")):
            points = sorted((p for p in m.scaling if p["read_percent"] == read), key=lambda p: p["dies"])
            dies = [p["dies"] for p in points]
            axes.plot(dies, [p["mbps"] for p in points], color=color, marker="o", label=f"{name}, simulated")
            axes.plot(dies, [p["theoretical_mbps"] for p in points], color=color, linestyle="--", linewidth=1.0,
                      label=f"{name}, theoretical")
        link = f"host link ({m.drive['interface']})"
        axes.axhline(m.theoretical["link_mbps"], color="grey", linestyle=":", label=link)
        dies = sorted({p["dies"] for p in m.scaling})
        axes.set_xscale("log", base=2)
        axes.set_xticks(dies, [str(n) for n in dies])
        axes.minorticks_off()
        axes.set_xlabel("dies")
        axes.set_ylim(bottom=0)
        axes.grid(True, alpha=0.3)
        axes.set_title(f"{m.device}: {str(m.drive['cell']).upper()}", fontsize="medium")
    panels[0].set_ylabel("bandwidth (MB/s)")
    panels[0].legend(fontsize="small", loc="lower right")
    sizes = sorted({p["block_size"] for m in runs for p in m.scaling})
    fig.suptitle(
        f"Bandwidth vs die count: {', '.join(_size_label(s) for s in sizes)} random, queue depth "
        f"{runs[0].queue_depth}\nreads of a filled drive, writes to an empty one (no GC, as the model)",
        fontsize="medium",
    )
    fig.savefig(path, dpi=110)
