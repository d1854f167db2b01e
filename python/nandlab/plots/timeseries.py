"""A run's time series as figures: stacked panels of chosen columns against host data written or
simulated time, phase starts marked, a short burst clipped (and said) rather than flattening the
rest; the run's throughput and latency figure."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import polars as pl
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, Locator, LogLocator, MaxNLocator

from nandlab._core import TIMESERIES_INTEGER_COLUMNS
from nandlab.api import Result
from nandlab.output import number
from nandlab.terminal import shown

GIB = 2**30


MAX_LEGEND = 12
"""Legends in the axes list at most this many curves; more get none."""

LEGEND_ROWS = 40
"""Entries a column of a legend beside the panels holds."""

X_AXES = ("written", "time", "phase")
"""What ``timeseries_panels`` draws against: host data written, simulated time, or each phase's share
of its simulated time (every phase the same width: a short one is no sliver)."""
X_COLUMN = "_x"  # the column of the x values while drawing

TIME_UNITS = ((2 * 86400, 86400, "days"), (2 * 3600, 3600, "h"), (120, 60, "min"), (0, 1, "s"))
"""Simulated time on an x axis: (seconds the series reaches at least, seconds per unit, unit)."""

CLIP_QUANTILE = 0.995
CLIP_FACTOR = 2.0
HEADROOM = 1.1
"""A linear panel's values beyond ``CLIP_FACTOR`` times their ``CLIP_QUANTILE`` are clipped: the panel
ends ``HEADROOM`` times that quantile high (``clip_bursts``)."""

NARROW_LOG = 5.0
"""A log axis spanning less than this factor gets plain, evenly spaced ticks (``log_y``)."""


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


POWER = Panel("power (W)", ("power_w",), zero_is_gap=True)


BIT_ERRORS = Panel("RBER of host page reads", ("rber_mean",), log=True, zero_is_gap=True)


RETRIES = Panel("read-retry steps per read", ("retries_per_read",))


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
    "power_w": ("average power", "tab:red", "-"),
    "rber_mean": ("RBER mean", "tab:purple", "-"),
    "retries_per_read": ("retries per read", "tab:purple", "-"),
}


LINE_STYLES = ("-", ":", "--", "-.")


def throughput_latency(result: Result, path: str | os.PathLike[str]) -> None:
    """Save a PNG of throughput (MB/s) and latency (p50/p99 µs, log scale) against host data written.

    Each phase starts at a dashed vertical line labelled with its name.
    """
    timeseries_panels(result.timeseries, (THROUGHPUT, LATENCY), path, title=run_title(result),
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
    x: str = "written",
    legend_title: str = "",
) -> Figure:
    """Save a PNG of time series against host data written (``x = "written"``) or simulated time
    (``"time"``): one panel per ``Panel`` with data (``with_data``), stacked over one x axis, and
    return the figure. Without ``by``, a line per column, styled as ``SERIES_STYLES`` says; with
    ``by`` (a column naming runs), a colour per run (``run_colours``) and a line style per column, or
    per value of ``style_by`` (say ZombieNAND and the baseline), named in a legend right of the panels
    (titled ``legend_title``). ``phases`` (the phase names, in order) mark where each phase starts.
    Samples are interval figures, drawn as steps ending at the data written (or the time) by then.
    A linear panel's burst does not flatten the rest: ``clip_bursts``."""
    series, thinned = _thinned(series)
    if thinned > 1:
        title = f"{title} (every {thinned:,} windows drawn as their maximum)".strip()
    # With nothing to draw (a run without requests), the panels' axes stay empty.
    shown = with_data(series, panels) or [replace(p, columns=tuple(c for c in p.columns if c in series.columns))
                                          for p in panels]
    if x == "phase" and by is not None and series.height:
        # Each run's phases placed by its own data and time (runs of other lengths share the axis).
        keys = [by] if style_by is None else [by, style_by]
        parts = [(part, _x_axis(part, x)) for part in series.partition_by(keys, maintain_order=True)]
        ts = pl.concat([part.with_columns(values.alias(X_COLUMN)) for part, (values, _) in parts])
        x_label = parts[0][1][1]
    else:
        x_values, x_label = _x_axis(series, x)
        ts = series.with_columns(x_values.alias(X_COLUMN))
    if by is None:
        groups, colours, styles = [ts], {}, {}
    else:
        groups = ts.partition_by([by] if style_by is None else [by, style_by], maintain_order=True)
        runs = ts[by].unique(maintain_order=True).to_list()
        colours = dict(zip(runs, run_colours(len(runs))))
        styles = {} if style_by is None else {
            key: LINE_STYLES[i % len(LINE_STYLES)] for i, key in enumerate(ts[style_by].unique(maintain_order=True))
        }
    fig = Figure(figsize=(10, 1.2 + 2.6 * len(shown)), layout="constrained")
    column = list(fig.subplots(len(shown), 1, sharex=True, squeeze=False)[:, 0])
    column_styles: dict[str, str] = {}  # with ``by``: a line style per column of a panel with several
    for axes, panel in zip(column, shown):
        drawn = []
        for part in groups:
            for c, name in enumerate(panel.columns):
                values = part.select(
                    pl.when(pl.col(name) > 0).then(pl.col(name)) if panel.zero_is_gap else pl.col(name)
                ).to_series().cast(pl.Float64).to_numpy()
                label, color, style = SERIES_STYLES.get(name, (name, f"C{c % 10}", "-"))
                if by is not None:
                    color = colours[part[by][0]]
                    if style_by:
                        style = styles[part[style_by][0]]
                    else:
                        style = LINE_STYLES[c % len(LINE_STYLES)]
                        if len(panel.columns) > 1:
                            column_styles[label] = style
                    label = "_run"  # the figure's legend names the runs
                xs = part[X_COLUMN].to_numpy()
                axes.plot(xs, values, drawstyle="steps-pre", linewidth=1, color=color, linestyle=style, label=label)
                drawn.append((xs, values, np.diff(part["sim_seconds"].to_numpy(), prepend=0.0), color))
        axes.set_ylabel(panel.label)
        if panel.log:
            log_y(axes)
        else:
            axes.set_ylim(bottom=0)
            clip_bursts(axes, drawn)
            if all(name in TIMESERIES_INTEGER_COLUMNS for name in panel.columns):
                axes.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no 2.5 blocks
        axes.grid(True, alpha=0.3)
        labels = axes.get_legend_handles_labels()[1]
        if by is None and labels and (len(labels) > 1 or labels[0] != panel.label):
            axes.legend(fontsize="small")
    if by is not None:
        handles = [Line2D([], [], color=colours[run], label=str(run)) for run in colours]
        handles += [Line2D([], [], color="grey", linestyle=style, label=str(key))
                    for key, style in (styles or column_styles).items()]
        fig.legend(handles=handles, loc="outside right upper", fontsize="small", title=legend_title or None,
                   title_fontsize="small", frameon=False, ncols=1 + len(handles) // LEGEND_ROWS)
    if phases and by is None:
        mark_starts(_phase_starts(ts, phases), *column)
    column[-1].set_xlabel(x_label)
    if x == "phase" and series.height:  # a tick where each phase starts and ends; the names are on top
        bounds = range(sum(span > 0 for span in _phase_widths(series)[1].values()) + 1)
        column[-1].set_xticks(list(bounds), [""] * len(bounds))
    if title:
        fig.suptitle(title, fontsize="medium")
    fig.savefig(path, dpi=110)
    return fig


def _x_axis(series: pl.DataFrame, x: str) -> tuple[pl.Expr, str]:
    """The x values of ``x`` (an expression on the time series) and the axis' label: host data written
    in GiB, or simulated time in the largest unit of ``TIME_UNITS`` the series reaches."""
    if x == "written":
        return pl.col("host_write_bytes") / GIB, "host data written (GiB)"
    if x == "time":
        end = series["sim_seconds"].max() if series.height else 0.0
        scale, unit = next((scale, unit) for least, scale, unit in TIME_UNITS if end >= least)
        return pl.col("sim_seconds") / scale, f"simulated time ({unit})"
    if x == "phase":
        # Each phase that takes simulated time spans one unit, across the data it moved (a first window
        # that stalled on a backlog left by the phase before holds little data: by time it took most of
        # the width), or across its time if it moved none; one that takes no time (a fill) is a line
        # where the next begins.
        offsets, spans, starts, by_data = _phase_widths(series)
        start = pl.col("phase").replace_strict(starts, return_dtype=pl.Float64)
        span = pl.col("phase").replace_strict(spans, return_dtype=pl.Float64)
        progress = pl.when(pl.col("phase").replace_strict(by_data, return_dtype=pl.Boolean)).then(_moved(series)) \
            .otherwise(pl.col("sim_seconds"))
        share = pl.when(span > 0).then((progress - start) / span).otherwise(0.0)
        offset = pl.col("phase").replace_strict(offsets, return_dtype=pl.Float64)
        return offset + share, "phase by phase, the same width each, across the data it moved (its time if none)"
    raise ValueError(f"x = {x!r}: expected one of {', '.join(X_AXES)}")


MAX_DRAWN_ROWS = 20_000
"""The most windows a figure draws one by one (a PNG of 1,100 pixels shows no more); a longer series
is drawn in groups of consecutive windows of a phase, each group as its maximum (``_thinned``)."""


def _thinned(series: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """``series`` with at most about ``MAX_DRAWN_ROWS`` rows, and how many windows each row stands for:
    within each phase, every k consecutive windows as one row that ends where the last of them does
    and holds each figure's largest value (a latency spike or a burst stays visible; a million rows
    took 2.8 GB to draw)."""
    k = -(-series.height // MAX_DRAWN_ROWS)
    if k <= 1:
        return series, 1
    ends = ("sim_seconds", "host_write_bytes", "host_read_bytes")
    group = pl.int_range(pl.len()).over("phase") // k
    kept = [pl.col(c).last() if c in ends or c == "phase_name" else pl.col(c).max()
            for c in series.columns if c != "phase"]
    thinned = series.with_columns(_group=group).group_by("phase", "_group", maintain_order=True).agg(kept)
    return thinned.drop("_group").select(series.columns), k


def _moved(series: pl.DataFrame) -> pl.Expr:
    """The host data moved by then (the byte columns count from the run's start; a series without
    reads' has its writes')."""
    return pl.sum_horizontal(pl.col(c).cast(pl.Float64) for c in ("host_write_bytes", "host_read_bytes")
                             if c in series.columns)


def _phase_widths(
    series: pl.DataFrame,
) -> tuple[dict[int, float], dict[int, float], dict[int, float], dict[int, bool]]:
    """Per phase of ``series``: where it starts on a phase-by-phase axis (how many phases before it took
    simulated time), how far it went, where it began (where the phase before ended), and whether that
    is in host data moved (a phase that took time and moved data) or in simulated time."""
    ends = series.group_by("phase", maintain_order=True).agg(
        pl.col("sim_seconds").max().alias("time"), _moved(series).max().alias("moved"))
    phases = ends["phase"].to_list()
    times, moved = ends["time"].to_list(), ends["moved"].to_list()
    starts, spans, offsets, by_data, before = {}, {}, {}, {}, 0
    for i, p in enumerate(phases):
        moved_from, time_from = (moved[i - 1], times[i - 1]) if i else (0.0, 0.0)
        # A phase that took no simulated time (a fill) has no width, whatever it wrote.
        by_data[p] = moved[i] > moved_from and times[i] > time_from
        starts[p] = moved_from if by_data[p] else time_from
        spans[p] = (moved[i] if by_data[p] else times[i]) - starts[p]
        offsets[p] = float(before)
        before += spans[p] > 0
    return offsets, spans, starts, by_data


def run_colours(count: int) -> list[Any]:
    """A colour for each of ``count`` runs: tab10's (C0, C1, ...), tab20's past 10 runs, evenly spaced
    on turbo past 20."""
    if count <= 10:
        return [f"C{i}" for i in range(count)]
    if count <= 20:
        return list(colormaps["tab20"].colors[:count])
    return [colormaps["turbo"](i / (count - 1)) for i in range(count)]


def clip_bursts(axes: Axes, drawn: Sequence[tuple[Any, Any, Any, Any]]) -> None:
    """Robust y limits for a linear panel whose lines are ``drawn`` (``(x, y, seconds, colour)`` each:
    y drawn as steps ending at x, each value lasting ``seconds`` of simulated time). A line's level
    is the 99.5th percentile of its values, each weighted by how long it lasted, so that a burst
    counts for as long as it lasted, against either x axis. When a value is more than ``CLIP_FACTOR``
    times the highest level, the panel ends ``HEADROOM`` times that level high, each point beyond it
    is a caret on the top edge, and a note above the panel's top right corner gives the highest value."""
    levels, peak = [0.0], 0.0
    for _, y, seconds, _ in drawn:
        finite = np.isfinite(y)
        if finite.any():
            levels.append(_quantile(y[finite], seconds[finite], CLIP_QUANTILE))
            peak = max(peak, float(y[finite].max()))
    level = max(levels)
    if level <= 0 or peak <= CLIP_FACTOR * level:
        return
    top = level * HEADROOM
    axes.set_ylim(top=top)
    for x, y, _, colour in drawn:
        over = np.nan_to_num(y, nan=-np.inf) > top
        if over.any():
            axes.plot(x[over], np.full(int(over.sum()), top), linestyle="none", marker="^", markersize=5,
                      color=colour, clip_on=False, label="_clipped")
    axes.annotate(f"▲ beyond the scale: up to {number(peak)}", xy=(1, 1), xycoords="axes fraction", xytext=(0, 3),
                  textcoords="offset points", ha="right", va="bottom", fontsize="small", color="dimgrey")


def _quantile(values: Any, weights: Any, q: float) -> float:
    """The ``q`` quantile of ``values``, each counting as much as its weight (all alike if none weighs
    anything)."""
    order = np.argsort(values)
    weights = weights[order] if weights.sum() > 0 else np.ones(values.size)
    share = np.cumsum(weights) / weights.sum()
    return float(values[order][min(int(np.searchsorted(share, q)), values.size - 1)])


def _phase_starts(ts: pl.DataFrame, names: Sequence[str]) -> list[tuple[float, str]]:
    """Where each phase starts on the x axis (where the one before ended), and its name. A phase with
    no rows starts and ends where the one before ended. The first starts at 0 — or, when the series'
    first row lies further than two of its windows from 0 (a later session of a drive served before,
    whose clock goes on from the earlier ones'), one window before that row."""
    named = "phase_name" in ts.columns
    groups = ts.group_by("phase", maintain_order=True).agg(
        (pl.col("phase_name") if named else pl.col("phase").cast(pl.String)).first().alias("name"),
        pl.col(X_COLUMN).last().alias("last"))
    ends = list(groups.iter_rows())
    xs = ts[X_COLUMN].to_numpy()
    first = float(xs[0]) if xs.size else 0.0
    window = float(xs[1] - xs[0]) if xs.size > 1 else first
    start = 0.0 if first <= 2 * window else first - window
    starts = []
    for index, name in enumerate(names):
        starts.append((start, name))
        # The next group of rows, if it is this phase's (by name; by number without names).
        if ends and (ends[0][1] == name if named else ends[0][0] == index):
            start = float(ends.pop(0)[2])
    return starts


MAX_LABEL = 48
"""The most characters of a phase's name a figure's label shows."""


def mark_starts(
    starts: Sequence[tuple[float, str]],
    labelled: Axes,
    *others: Axes,
    color: str = "grey",
    stagger: int = 0,
    levels: int = 3,
) -> None:
    """A dashed vertical line at each ``(x, label)`` on every axes, the label above ``labelled`` (over
    no data), staggered over ``levels`` lines (starting ``stagger`` lines up), so that nearby labels stay
    legible; a label near the right edge goes left of its line. Starts at one x (a fill, which takes
    no simulated time, and the phase after it) share one line and one label, "a, b"."""
    left, right = labelled.get_xlim()
    merged: list[tuple[float, list[str]]] = []
    for x, name in starts:
        label = shown(name)  # a phase's name as the user typed it: control characters escaped
        if len(label) > MAX_LABEL:  # a label above the panels cannot take the figure's whole width
            label = label[:MAX_LABEL - 1] + "…"
        if merged and abs(x - merged[-1][0]) <= 1e-3 * (right - left):
            merged[-1][1].append(label)
        else:
            merged.append((x, [label]))
    for index, (x, names) in enumerate(merged, stagger):
        for axes in (labelled, *others):
            axes.axvline(x, color=color, linestyle="--", linewidth=0.8)
        near_the_edge = x > left + 0.85 * (right - left)
        labelled.annotate(
            ", ".join(names),
            xy=(x, 1.0),
            xycoords=labelled.get_xaxis_transform(),
            xytext=(-3 if near_the_edge else 3, 2 + 11 * (index % levels)),
            textcoords="offset points",
            ha="right" if near_the_edge else "left",
            va="bottom",
            fontsize="small",
            color="dimgrey",
            annotation_clip=False,
        )


def run_title(result: Result) -> str:
    """A one-line description of the drive for the figure title."""
    return drive_title(result.device)


def drive_title(device: dict) -> str:
    """A one-line description of a drive (the engine's device figures) for a figure title."""
    preset = device["preset"] or "custom drive"
    capacity = device["user_capacity_bytes"] / GIB
    return f"nandlab — {preset}, {str(device['cell']).upper()}, {capacity:.3g} GiB user capacity"


def log_y(axes: Axes) -> None:
    """A log y axis labelled in plain numbers: 1, 2, 5, 10, 20, 50, ...; over less than a factor of
    ``NARROW_LOG``, where those would leave one label or none, evenly spaced plain ticks (``LogTicks``)."""
    axes.set_yscale("log")
    axes.yaxis.set_major_locator(LogTicks())
    axes.yaxis.set_minor_locator(LogTicks(minor=True))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.yaxis.set_minor_formatter(FuncFormatter(_two_and_five))


class LogTicks(Locator):
    """A log axis' major (or ``minor``) ticks, chosen when it is drawn: matplotlib's own, but over less
    than a factor of ``NARROW_LOG`` four or so evenly spaced major ticks and no minor ones."""

    def __init__(self, minor: bool = False) -> None:
        self.minor = minor

    def __call__(self) -> Sequence[float]:
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, vmin: float, vmax: float) -> Sequence[float]:
        low, high = sorted((vmin, vmax))
        if low > 0 and high < NARROW_LOG * low:
            return [] if self.minor else [t for t in MaxNLocator(4).tick_values(low, high) if t > 0]
        log = LogLocator(subs="auto" if self.minor else (1.0,))
        log.set_axis(self.axis)
        return log.tick_values(low, high)


def _two_and_five(value: float, _position: int) -> str:
    """Labels of a log axis' minor ticks: only 2 and 5 × a power of ten."""
    if value <= 0:
        return ""
    mantissa = value / 10 ** math.floor(math.log10(value))
    return f"{value:g}" if round(mantissa) in (2, 5) and abs(mantissa - round(mantissa)) < 1e-6 else ""
