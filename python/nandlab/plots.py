"""Plots of a run's time series, drawn with matplotlib's off-screen Agg canvas (no display needed)."""

from __future__ import annotations

import os

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from nandlab.api import Result

GIB = 2**30

THROUGHPUT_SERIES = (
    ("write_mbps", "write", "tab:blue", "-"),
    ("read_mbps", "read", "tab:orange", "-"),
)
LATENCY_SERIES = (
    ("write_p50_us", "write p50", "tab:blue", "-"),
    ("write_p99_us", "write p99", "tab:blue", ":"),
    ("read_p50_us", "read p50", "tab:orange", "-"),
    ("read_p99_us", "read p99", "tab:orange", ":"),
)


def throughput_latency(result: Result, path: str | os.PathLike[str]) -> None:
    """Save a PNG of throughput (MB/s) and latency (p50/p99 µs, log scale) against host data written.

    Each phase starts at a dashed vertical line labelled with its name.
    """
    fig = Figure(figsize=(10, 7), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    # Samples are interval figures, drawn as steps ending at the data written by then.
    ts = result.timeseries.with_columns(gib_written=pl.col("host_write_bytes") / GIB)
    _plot_series(top, ts, THROUGHPUT_SERIES)
    _plot_series(bottom, ts, LATENCY_SERIES)
    _mark_phases(result, ts, top, bottom)
    top.set_ylabel("throughput (MB/s)")
    top.set_ylim(bottom=0)
    bottom.set_yscale("log")
    bottom.set_ylabel("latency (µs)")
    bottom.set_xlabel("host data written (GiB)")
    for axes in (top, bottom):
        axes.grid(True, alpha=0.3)
        if axes.get_legend_handles_labels()[0]:
            axes.legend(fontsize="small")
    fig.suptitle(_title(result))
    fig.savefig(path, dpi=110)


def _plot_series(axes: Axes, ts: pl.DataFrame, series: tuple) -> None:
    """Plot each (column, label, color, style) that has data; zeros (no such I/O) become gaps."""
    for column, label, color, style in series:
        values = ts.select(pl.when(pl.col(column) > 0).then(pl.col(column)).cast(pl.Float64)).to_series()
        if values.null_count() < values.len():
            axes.plot(
                ts["gib_written"].to_numpy(),
                values.to_numpy(),
                drawstyle="steps-pre",
                linewidth=0.9,
                color=color,
                linestyle=style,
                label=label,
            )


def _mark_phases(result: Result, ts: pl.DataFrame, top: Axes, bottom: Axes) -> None:
    """Draw a dashed line where each phase starts (the data written when the one before ended)."""
    ends = dict(ts.group_by("phase").agg(pl.col("gib_written").last()).iter_rows())
    start = 0.0
    for index, phase in enumerate(result.phases):
        for axes in (top, bottom):
            axes.axvline(start, color="grey", linestyle="--", linewidth=0.8)
        top.annotate(
            phase["name"],
            xy=(start, 1.0),
            xycoords=top.get_xaxis_transform(),
            xytext=(3, -3 - 11 * (index % 3)),  # staggered, so nearby phases stay legible
            textcoords="offset points",
            va="top",
            fontsize="small",
            color="dimgrey",
        )
        start = ends.get(index, start)


def _title(result: Result) -> str:
    """A one-line description of the drive for the figure title."""
    preset = result.device["preset"] or "custom drive"
    capacity = result.device["user_capacity_bytes"] / GIB
    return f"nandlab — {preset}, {str(result.device['cell']).upper()}, {capacity:.3g} GiB user capacity"


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


def chip_latency(result: dict, path: str | os.PathLike[str]) -> None:
    """Save a PNG of a chip's read, program and erase latency — worst, typical, best — beside its
    datasheet value (Desnoyers' Figs. 7–9)."""
    fig = Figure(figsize=(10, 3.8), layout="constrained")
    panels = fig.subplots(1, 3)
    kinds = ("worst", "typical", "best")
    colors = ("tab:red", "tab:blue", "tab:green", "grey")
    for axes, op in zip(panels, ("read", "program", "erase")):
        values = [result[f"{op}_us"][k] for k in kinds] + [result["datasheet"][f"{op}_us"]]
        axes.bar([*kinds, "datasheet"], values, color=colors)
        axes.set_title(op)
        axes.set_ylabel("µs")
        axes.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"nandlab chip latency — {result['chip']['name']}")
    fig.savefig(path, dpi=110)
