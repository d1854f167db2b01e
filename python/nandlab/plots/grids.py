"""Figures of a grid of runs: heatmaps over two axes (the ZombieNAND lifetime grid among them) and bar charts."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from nandlab import output

REPORT_WIDTH = 10.3
"""Inches (at the 110 dpi figures are saved at) a report shows a figure across at its own size: its
page's 1,180 px less padding. A heatmap stays within it, so its numbers show at the size drawn."""
MAP_WIDTH, MAP_HEIGHT = 4.2, 3.2
"""Inches of a heatmap at most across (fewer when several share the width), and at least high."""
MAP_MARGIN = 0.9
"""Inches of a heatmap's width its y tick labels and axis label take."""
COLOUR_BAR = 1.2
"""Inches of a heatmap figure's width its colour bar takes."""
CELL_FONT = (9.0, 12.0)
"""Points: the smallest and the largest font of a heatmap square's number."""
CHAR_WIDTH = 0.62
"""A digit's width in DejaVu Sans, in ems."""


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
) -> Figure:
    """Save a PNG of ``value`` over two columns (``x`` across, ``y`` up, each in the order the table
    first has its values: a sweep's order), one heatmap per combination of the facet columns
    ``rows`` (a row of maps per combination) and ``cols`` (across, wrapped onto more rows where they
    would not fit ``REPORT_WIDTH``), each square labelled with its value ("—": none) in a font sized
    to the square, at least ``CELL_FONT[0]`` points (with two significant digits instead of three
    where three would not fit). Lighter is better (``better`` = "higher" or "lower"); with a ``reference``
    (1.0 for ratios) the colours are centred on it. Returns the figure. ValueError if two rows of a
    map have the same square (a column that varies is missing from the facets)."""
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
    # The squares' labels, and the maps' layout: as many maps across as fit the report's width with
    # squares wide enough for their labels at the smallest font.
    room = REPORT_WIDTH - COLOUR_BAR
    digits = 3 if MAP_MARGIN + len(xs) * _square_width(finite, 3) <= room else 2
    across = max(1, min(len(col_keys), int(room // (MAP_MARGIN + len(xs) * _square_width(finite, digits)))))
    chunks = math.ceil(len(col_keys) / across)
    width = min(MAP_WIDTH, room / across)
    height = max(MAP_HEIGHT, 0.8 + 0.25 * len(ys))
    square_width, square_height = (width - MAP_MARGIN) * 72 / len(xs), (height - 0.8) * 72 / len(ys)
    fitting = min(0.85 * square_width / (CHAR_WIDTH * _longest_label(finite, digits)), 0.45 * square_height)
    font = min(max(fitting, CELL_FONT[0]), CELL_FONT[1])
    fig = Figure(figsize=(width * across + COLOUR_BAR, height * len(row_keys) * chunks + 0.6), layout="constrained")
    grid = fig.subplots(len(row_keys) * chunks, across, squeeze=False)
    used = []
    image = None
    for i, row_key in enumerate(row_keys):
        for j, col_key in enumerate(col_keys):
            axes = grid[i * chunks + j // across, j % across]
            used.append(axes)
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
                    axes.text(b, a, _cell_label(v, digits), ha="center", va="center", fontsize=font,
                              color="white" if dark else "black")
                else:
                    axes.text(b, a, output.NONE, ha="center", va="center", fontsize=font, color="grey")
            ticks = [_tick(v) for v in xs]
            crowded = len(xs) * max(map(len, ticks)) * CHAR_WIDTH * 10 > (width - MAP_MARGIN) * 72
            axes.set_xticks(range(len(xs)), ticks, rotation=45 if crowded else 0, ha="right" if crowded else "center")
            axes.set_yticks(range(len(ys)), [_tick(v) for v in ys])
            axes.set_xlabel(x)
            axes.set_ylabel(y)
            axes.set_title(", ".join(f"{name}={_tick(key)}" for name, key in facets), fontsize="medium")
    for axes in grid.flat:
        axes.set_visible(axes in used)
    if image is not None:
        fig.colorbar(image, ax=used, label=label or value, shrink=0.8)
    fig.suptitle(title or f"{value} over {x} and {y}", fontsize="medium")
    fig.savefig(path, dpi=110)
    return fig


def _cell_label(value: float, digits: int) -> str:
    """A heatmap square's number: ``digits`` significant digits, thousands and up as k, M, G, T (13.6k)."""
    rounded = float(f"{value:.{digits}g}")
    for scale, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(rounded) >= scale:
            return f"{rounded / scale:.{digits}g}{unit}"
    return f"{rounded:.{digits}g}"


def _longest_label(values: Sequence[float], digits: int) -> int:
    """Characters of the longest of ``values``' square labels."""
    return max((len(_cell_label(v, digits)) for v in values), default=1)


def _square_width(values: Sequence[float], digits: int) -> float:
    """Inches a heatmap square needs across for the longest of ``values``' labels at the smallest font."""
    return _longest_label(values, digits) * CHAR_WIDTH * CELL_FONT[0] / 72 + 0.1


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
        bar_axes(axes, labels, {value: table[value].cast(pl.Float64).to_list()}, color="tab:blue", annotate=True,
                  rotation=30)
        axes.set_xlabel(x)
        axes.set_ylabel(value)
    fig.suptitle(title or f"by {x}", fontsize="medium")
    fig.savefig(path, dpi=110)


def bar_axes(
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
