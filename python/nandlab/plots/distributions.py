"""Distributions: histograms, CDFs and cumulative curves, and the trace-statistics figures built from them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from nandlab.plots.grids import bar_axes
from nandlab.plots.timeseries import MAX_LEGEND, run_colours


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
) -> Figure:
    """Save a PNG of a histogram of whole-numbered ``(value, count)`` pairs (say ``ylabel`` "blocks"
    per ``xlabel`` "erase count"), and beside it its CDF; returns the figure."""
    fig = Figure(figsize=(11, 4), layout="constrained")
    histogram, distribution_function = fig.subplots(1, 2)
    _histogram_axes(histogram, points)
    histogram.set(xlabel=xlabel, ylabel=ylabel)
    for axes in (histogram, distribution_function):  # whole-numbered values: no 27.5 erases
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    histogram.yaxis.set_major_locator(MaxNLocator(integer=True))
    _cdf_axes(distribution_function, {"": cumulative(points)}, steps=True)
    distribution_function.set(xlabel=xlabel, ylabel=f"share of the {ylabel} (CDF)", ylim=(0, 1.02))
    if title:
        fig.suptitle(title, fontsize="medium")
    fig.savefig(path, dpi=110)
    return fig


def cdf(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    path: str | os.PathLike[str],
    xlabel: str,
    ylabel: str = "share (CDF)",
    title: str = "",
    legend_title: str = "",
) -> None:
    """Save a PNG of CDFs, one line each (``label: (xs, shares)``, say ``cumulative`` of each run's
    erase-count histogram), coloured as ``timeseries_panels`` colours runs and named, as there, in a
    legend right of the panel titled ``legend_title``."""
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    axes = fig.subplots()
    _cdf_axes(axes, curves, steps=True, legend=False)
    if len(curves) > 1:
        fig.legend(loc="outside right upper", fontsize="small", title=legend_title or None, title_fontsize="small",
                   frameon=False)
    axes.set(xlabel=xlabel, ylabel=ylabel, ylim=(0, 1.02))
    if title:  # over the panel: over the whole figure it ran into the legend's title (an outside check)
        axes.set_title(title, fontsize="medium")
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
    """Cumulative curves on ``axes`` (``label: (xs, ys)``, a colour each: ``run_colours``), as steps or
    joined points; a legend when there are several (and ``legend``)."""
    for (label, (xs, ys)), colour in zip(curves.items(), run_colours(len(curves))):
        axes.plot(xs, ys, drawstyle="steps-post" if steps else "default", linewidth=1.2, label=label, color=colour)
    axes.grid(True, alpha=0.3)
    if legend and 1 < len(curves) <= MAX_LEGEND:
        axes.legend(fontsize="small")


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
    bar_axes(sizes, [size_label(row[0]) for row in rows],
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


def size_label(size: int) -> str:
    """``512 B``, ``4 KiB``, ``1 MiB``."""
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size // scale} {unit}"
    return f"{size} B"
