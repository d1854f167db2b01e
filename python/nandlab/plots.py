"""Every figure nandlab draws (the one plotting module): a run's time series and drive state, chip
tests, qualification procedures, SNIA-style matrices, trace statistics, and the generic heatmaps, bar
charts and overlays of sweeps and reports; matplotlib's off-screen Agg canvas (no display needed)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

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
    starts = []
    start = 0.0
    for index, phase in enumerate(result.phases):
        starts.append((start, phase["name"]))
        start = ends.get(index, start)
    _mark_starts(starts, top, bottom)


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


def lifetime_heatmaps(table: pl.DataFrame, metric: str, path: str | os.PathLike[str]) -> None:
    """Save a PNG of the ZombieNAND synthetic grid (the paper's Fig. 3): one heatmap of ``metric``
    (``lifetime_ratio`` or ``latency_ratio``) per cell type (columns) and read level (rows), working
    set across, reserve down, each square labelled with its value; 1.0 = the baseline."""
    title = "lifetime" if metric == "lifetime_ratio" else "mean latency over the baseline's life"
    heatmaps(
        table, metric, x="working_set", y="reserve", path=path, rows="read_level", cols="cell",
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
    rows: str | None = None,
    cols: str | None = None,
    title: str = "",
    label: str | None = None,
    better: str = "higher",
    reference: float | None = None,
) -> None:
    """Save a PNG of ``value`` over two axes (``x`` across, ``y`` up), one heatmap per combination of
    the facet columns ``rows`` and ``cols``, each square labelled with its value. Lighter is better
    (``better`` = "higher" or "lower"); with a ``reference`` (1.0 for ratios) the colours are
    centred on it."""
    import numpy as np
    from matplotlib.colors import Normalize, TwoSlopeNorm

    row_keys = list(dict.fromkeys(table[rows])) if rows else [None]
    col_keys = list(dict.fromkeys(table[cols])) if cols else [None]
    xs, ys = sorted(set(table[x])), sorted(set(table[y]))
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
            part = table
            if rows:
                part = part.filter(pl.col(rows) == row_key)
            if cols:
                part = part.filter(pl.col(cols) == col_key)
            z = np.full((len(ys), len(xs)), np.nan)
            for r in part.iter_rows(named=True):
                if r[value] is not None:
                    z[ys.index(r[y]), xs.index(r[x])] = r[value]
            image = axes.imshow(np.clip(z, norm.vmin, norm.vmax), norm=norm, cmap=cmap, origin="lower", aspect="auto")
            for (a, b), v in np.ndenumerate(z):
                if np.isfinite(v):
                    # Dark squares (the low end of viridis) get white labels.
                    position = float(norm(np.clip(v, norm.vmin, norm.vmax)))
                    dark = position < 0.5 if cmap == "viridis" else position > 0.5
                    axes.text(b, a, f"{v:.3g}", ha="center", va="center", fontsize=7, color="white" if dark else "black")
            axes.set_xticks(range(len(xs)), [_tick(v) for v in xs])
            axes.set_yticks(range(len(ys)), [_tick(v) for v in ys])
            axes.set_xlabel(x)
            axes.set_ylabel(y)
            facets = [f"{name} {key}" for name, key in ((cols, col_key), (rows, row_key)) if name]
            axes.set_title(", ".join(facets), fontsize="medium")
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
    """Save a PNG of one bar chart per column of ``values`` against the categories of ``x``."""
    fig = Figure(figsize=(4.0 * len(values) + 0.6, 3.6), layout="constrained")
    panels = fig.subplots(1, len(values), squeeze=False)[0]
    labels = [_tick(v) for v in table[x]]
    for axes, value in zip(panels, values):
        axes.bar(labels, table[value].cast(pl.Float64).fill_null(float("nan")).to_list(), color="tab:blue")
        axes.set_xlabel(x)
        axes.set_ylabel(value)
        axes.grid(True, axis="y", alpha=0.3)
        axes.tick_params(axis="x", labelrotation=30)
    fig.suptitle(title or f"by {x}", fontsize="medium")
    fig.savefig(path, dpi=110)


def overlay(
    series: pl.DataFrame, by: str, columns: Sequence[str], path: str | os.PathLike[str], title: str = ""
) -> None:
    """Save a PNG of time-series ``columns`` (one panel each) against host data written, one line per
    value of ``by`` (a run), for comparing runs."""
    fig = Figure(figsize=(10, 2.8 * len(columns) + 0.6), layout="constrained")
    panels = fig.subplots(len(columns), 1, sharex=True, squeeze=False)[:, 0]
    for key in dict.fromkeys(series[by]):
        part = series.filter(pl.col(by) == key)
        for axes, column in zip(panels, columns):
            axes.plot(part["host_write_bytes"] / GIB, part[column], drawstyle="steps-pre", linewidth=1, label=str(key))
    for axes, column in zip(panels, columns):
        axes.set_ylabel(column)
        axes.grid(True, alpha=0.3)
    panels[-1].set_xlabel("host data written (GiB)")
    if len(set(series[by])) <= 12:
        panels[0].legend(fontsize="x-small", ncol=3)
    fig.suptitle(title, fontsize="medium")
    fig.savefig(path, dpi=110)


def drive_state(ts: pl.DataFrame, erase_histogram: Sequence[Sequence[int]], path: str | os.PathLike[str]) -> None:
    """Save a PNG of a run's drive over its life: WAF (interval and cumulative), free blocks, the
    blocks in each bit mode (ZombieNAND's switches), and the erase-count distribution with its CDF."""
    import numpy as np

    fig = Figure(figsize=(11, 7), layout="constrained")
    (waf, free), (modes, erases) = fig.subplots(2, 2)
    gib = ts["host_write_bytes"] / GIB
    waf.plot(gib, ts["waf"], drawstyle="steps-pre", linewidth=1, label="interval")
    waf.plot(gib, ts["waf_cumulative"], linewidth=1.5, label="cumulative")
    waf.set_ylabel("WAF")
    waf.legend(fontsize="small")
    free.plot(gib, ts["free_blocks"], drawstyle="steps-pre", linewidth=1, color="tab:green")
    free.set_ylabel("free blocks")
    mode_columns = [c for c in ("slc_blocks", "mlc_blocks", "tlc_blocks", "qlc_blocks") if ts[c].max()]
    if mode_columns:
        modes.stackplot(gib, *[ts[c] for c in mode_columns], labels=[c.split("_")[0].upper() for c in mode_columns])
        modes.legend(fontsize="small", loc="lower left")
    modes.set_ylabel("blocks by bit mode")
    for axes in (waf, free, modes):
        axes.set_xlabel("host data written (GiB)")
        axes.grid(True, alpha=0.3)
    if erase_histogram:
        counts = np.array([c for c, _ in erase_histogram], dtype=float)
        blocks = np.array([n for _, n in erase_histogram], dtype=float)
        erases.bar(counts, blocks, width=max(1.0, (counts.max() - counts.min()) / 60 or 1.0), color="tab:purple")
        cdf = erases.twinx()
        cdf.plot(counts, np.cumsum(blocks) / blocks.sum(), color="black", linewidth=1)
        cdf.set_ylabel("share of blocks (CDF)")
        cdf.set_ylim(0, 1.02)
    erases.set_xlabel("erase count")
    erases.set_ylabel("blocks")
    fig.suptitle("the drive over the run", fontsize="medium")
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
    for key, label in (("reuse_cdf", "all accesses"), ("write_reuse_cdf", "writes")):
        points = summary[key]
        if points:
            reuse.plot([100 * x for x, _ in points], [100 * y for _, y in points], label=label)
    reuse.set(xlabel="most used 4 KiB blocks (% of the footprint)", ylabel="accesses (%)", xlim=(0, 100), ylim=(0, 101))
    reuse.grid(alpha=0.3)
    reuse.legend()
    reuse.set_title("address reuse")
    rows = summary["size_histogram"]
    labels = [_size_label(row[0]) for row in rows]
    positions = range(len(rows))
    sizes.bar([p - 0.2 for p in positions], [row[2] for row in rows], width=0.4, label="reads")
    sizes.bar([p + 0.2 for p in positions], [row[3] for row in rows], width=0.4, label="writes")
    sizes.set_xticks(list(positions), labels, rotation=45, ha="right")
    sizes.set(xlabel="request size (at least)", ylabel="requests")
    sizes.grid(alpha=0.3, axis="y")
    sizes.legend()
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
        for name, summary in summaries.items():
            points = summary[key]
            if points:
                axes.plot([100 * x for x, _ in points], [100 * y for _, y in points], label=name)
        axes.set(xlabel="most used 4 KiB blocks (% of the footprint)", xlim=(0, 100), ylim=(0, 101), title=title)
        axes.grid(alpha=0.3)
    panels[0].set_ylabel("accesses (%)")
    panels[1].legend(fontsize="small")
    fig.suptitle("address reuse")
    fig.savefig(path, dpi=110)


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
