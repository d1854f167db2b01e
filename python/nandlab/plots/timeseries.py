"""A run's time series as figures: stacked panels of chosen columns against simulated time or
data written, phase starts marked; the run's throughput and latency figure."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from nandlab.api import Result

GIB = 2**30


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
            log_y(axes)
        else:
            axes.set_ylim(bottom=0)
        axes.grid(True, alpha=0.3)
        lines = axes.get_lines()
        if by is None and lines and (len(lines) > 1 or lines[0].get_label() != panel.label):
            axes.legend(fontsize="small")
        elif by is not None and axes is column[0] and len(lines) <= MAX_LEGEND:
            axes.legend(fontsize="x-small", ncols=2)
    if phases and by is None:
        mark_starts(_phase_starts(ts, phases), *column)
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


def mark_starts(
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


def run_title(result: Result) -> str:
    """A one-line description of the drive for the figure title."""
    return drive_title(result.device)


def drive_title(device: dict) -> str:
    """A one-line description of a drive (the engine's device figures) for a figure title."""
    preset = device["preset"] or "custom drive"
    capacity = device["user_capacity_bytes"] / GIB
    return f"nandlab — {preset}, {str(device['cell']).upper()}, {capacity:.3g} GiB user capacity"

def log_y(axes: Axes) -> None:
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
