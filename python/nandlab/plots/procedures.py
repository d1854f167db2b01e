"""The procedures' own figures: chip endurance and latency, power cuts, AN2103's qualification
tests, SNIA matrices and die scaling."""

from __future__ import annotations

import os
from collections.abc import Sequence

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from nandlab.matrix import Matrix
from nandlab.plots.distributions import size_label
from nandlab.plots.grids import bar_axes
from nandlab.plots.timeseries import drive_title, log_y, mark_starts, run_title
from nandlab.qualify import Qualification

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"


QUALIFY_FIGURES = {
    "write-sections": ("AN2103 write test (its Fig. 1)", "GiB written since the start"),
    "read-sections": ("AN2103 read test (its Fig. 6)", "GiB read since the start"),
    "pslc-fill": ("AN2103 sequential fill (its Figs. 2–5)", "GiB written since the start"),
}


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


def read_disturb(curves: pl.DataFrame, result: dict, path: str | os.PathLike[str]) -> None:
    """Save a PNG of ``nandlab test read-disturb``: each pass's mean RBER (top) and read-retry steps per
    read (bottom) against the hot spot's reads."""
    fig = Figure(figsize=(10, 7), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    for (firmware,), part in curves.group_by("firmware", maintain_order=True):
        top.plot(part["reads"], part["rber_mean"], marker=".", label=firmware)
        bottom.plot(part["reads"], part["retries_per_read"], marker=".", label=firmware)
    top.set_ylabel("RBER of the interval's page reads")
    top.set_yscale("log")
    bottom.set_ylabel("read-retry steps per read")
    bottom.set_xlabel("reads of the hot spot")
    for axes in (top, bottom):
        axes.grid(True, alpha=0.3)
        axes.legend(fontsize="small")
    fig.suptitle(
        f"nandlab test read-disturb — {result['device']}: {result['hot_bytes'] >> 20} MiB read "
        f"{result['reads']:,} times; reclaim at {result['read_reclaim']:,} reads since erase"
    )
    fig.savefig(path, dpi=110)


def retention(result: dict, path: str | os.PathLike[str]) -> None:
    """Save a PNG of ``nandlab test retention``: sample reads' mean RBER (top) and predicted UBER
    against the class target (bottom) over the bake, a line per cycle count."""
    curves = pl.DataFrame(result["curves"])
    fig = Figure(figsize=(10, 7), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    for (cycles,), part in curves.group_by("cycles", maintain_order=True):
        label = f"{cycles:,.0f} cycles"
        top.plot(part["hours"], part["rber_mean"], marker="o", label=label)
        uber = part["uber"].clip(lower_bound=1e-30)
        bottom.plot(part["hours"], uber, marker="o", label=label)
    bottom.axhline(result["uber_target"], color="tab:red", linestyle="--", label="class target")
    top.set_ylabel("RBER of sample reads")
    bottom.set_ylabel("UBER (predicted)")
    bottom.set_xlabel(f"hours powered off at {result['temperature_c']:g} °C")
    for axes in (top, bottom):
        axes.set_yscale("log")
        axes.grid(True, alpha=0.3)
        axes.legend(fontsize="small")
    verdict = "PASS" if result["pass"] else "FAIL"
    fig.suptitle(
        f"nandlab test retention — {result['device']} ({result['params']}): {result['cycles']:,.0f} cycles, "
        f"{result['hours']:g} h at {result['temperature_c']:g} °C: {verdict}"
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
        bar_axes(axes, [*kinds, "datasheet"], {op: values}, color=colors)
        axes.set_title(op)
        axes.set_ylabel("µs")
    fig.suptitle(f"nandlab chip latency — {result['chip']['name']}")
    fig.savefig(path, dpi=110)


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
    mark_starts([(part["gib_start"], number) for part, number in zip(q.parts, numbers)], *panels)
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
            mark_starts([(part["gib_start"], part["name"]) for part in q.parts], panels[0])
        else:
            starts = [(part["gib_start"], f"{label}: {part['name']}") for part in q.parts]
            mark_starts(starts, panels[0], color=color, stagger=stagger, levels=levels)
            stagger += len(starts)
    _finish_qualify(fig, panels, runs[0])
    fig.savefig(path, dpi=110)


def _qualify_figure(rows: int) -> tuple[Figure, list[Axes]]:
    """A qualification figure: ``rows`` panels over one x axis, the first linear, the others log."""
    fig = Figure(figsize=(10, 3 + 2.5 * rows), layout="constrained")
    panels = list(fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0])
    for axes in panels[1:]:
        log_y(axes)
    return fig, panels




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
    fig.suptitle(f"{title}\n{run_title(q.result)}", fontsize="medium")


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
    log_y(panels[0])
    panels[0].set_ylabel("IOPS, log scale")
    panels[1].set_ylabel("bandwidth (MB/s)")
    panels[1].set_ylim(bottom=0)
    for axes in panels:
        axes.set_xscale("log", base=2)
        axes.set_xticks(sizes, [size_label(size) for size in sizes], rotation=45, ha="right")
        axes.minorticks_off()
        axes.set_xlabel("block size (random I/O)")
        axes.grid(True, alpha=0.3)
    fig.legend(title="read/write %", fontsize="small", loc="outside right center", frameon=False)
    what = {"burst": "burst (fresh drive)", "steady": "steady state (SNIA PTS rule)"}.get(state, state)
    fig.suptitle(f"{what}: IOPS and bandwidth vs block size, queue depth {m.queue_depth}\n{drive_title(m.drive)}",
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
        f"Bandwidth vs die count: {', '.join(size_label(s) for s in sizes)} random, queue depth "
        f"{runs[0].queue_depth}\nreads of a filled drive, writes to an empty one (no GC, as the model)",
        fontsize="medium",
    )
    fig.savefig(path, dpi=110)


def trace_lifetimes(table: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    """Save a PNG of the ZombieNAND trace study's lifetimes (the paper's Fig. 5): per cell type, a
    group of bars per trace, a bar per reserve, each ZombieNAND's life over the baseline's (1 = as
    long)."""
    cells = table["cell"].unique(maintain_order=True).to_list()
    fig = Figure(figsize=(11, 3.6 * len(cells)), layout="constrained")
    panels = fig.subplots(len(cells), 1, squeeze=False)[:, 0]
    for axes, cell in zip(panels, cells):
        part = table.filter(pl.col("cell") == cell)
        names = part["trace"].unique(maintain_order=True).to_list()
        series = {
            f"{reserve:.0%} reserve": [
                part.filter((pl.col("trace") == n) & (pl.col("reserve") == reserve))["lifetime_ratio"].max()
                for n in names
            ]
            for reserve in part["reserve"].unique(maintain_order=True)
        }
        bar_axes(axes, names, series, annotate=True, rotation=15)
        axes.axhline(1.0, color="black", linewidth=0.8)
        axes.set(ylabel="lifetime / baseline's", title=f"{cell.upper()}: trace drive (zombienand-trace-{cell})")
    fig.suptitle("ZombieNAND on real traces: lifetime relative to the baseline (the paper's Fig. 5)",
                 fontsize="medium")
    fig.savefig(path, dpi=110)


# Ticks of the latency-over-life axis: linear to the baseline's death (100 %), logarithmic beyond.
LIFE_TICKS = (0, 25, 50, 75, 100, 200, 500, 1000, 2000, 5000, 10000)


def trace_latency_curves(curves: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    """Save a PNG of latency over life in the trace study (the paper's Fig. 6): a panel per cell type
    and reserve, a line per trace — ZombieNAND's mean latency over the baseline's at the same point
    (past its death, over its last 5 %), against host data written as a percentage of the baseline's
    life (the baseline dies at 100)."""
    cells = curves["cell"].unique(maintain_order=True).to_list()
    reserves = sorted(curves["reserve"].unique().to_list())
    fig = Figure(figsize=(4.2 * len(reserves) + 1.5, 3.4 * len(cells)), layout="constrained")
    panels = fig.subplots(len(cells), len(reserves), squeeze=False, sharey=True)
    for row, cell in zip(panels, cells):
        for axes, reserve in zip(row, reserves):
            part = curves.filter((pl.col("cell") == cell) & (pl.col("reserve") == reserve))
            for n, name in enumerate(part["trace"].unique(maintain_order=True)):
                line = part.filter(pl.col("trace") == name).sort("life")
                axes.plot(line["life"], line["latency"], label=name, color=f"C{n}", linewidth=1.0)
            axes.axvline(100, color="black", linewidth=0.8, linestyle="--")
            axes.axhline(1.0, color="grey", linewidth=0.6)
            axes.set_xscale("symlog", linthresh=100)
            top = max(100.0, part["life"].max() or 0.0)
            axes.xaxis.set_major_locator(FixedLocator([t for t in LIFE_TICKS if t <= top * 1.05]))
            axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axes.xaxis.set_minor_locator(NullLocator())
            axes.set(title=f"{cell.upper()}, {reserve:.0%} reserve", xlabel="data written (% of baseline's life)")
        row[0].set_ylabel("latency / baseline's")
    panels[0][-1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("ZombieNAND on real traces: latency over life (the paper's Fig. 6)\n"
                 "dashed: the baseline dies", fontsize="medium")
    fig.savefig(path, dpi=110)
