"""``nandlab lifetime-grid``: the ZombieNAND paper's synthetic grid (its Fig. 3), ZombieNAND and the
baseline until death in every cell (``lifetime.grid``, a sweep); its table and heatmaps."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console
from rich.table import Table

from nandlab import lifetime
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.report.page import Report, existing_figure, fmt, read_table


@dataclass(frozen=True)
class Grid(ProcedureResult):
    """The grid's ``table``: one row per cell (``lifetime.grid``)."""

    table: pl.DataFrame
    kind = "lifetime-grid"

    def comparisons(self) -> int:
        """ZombieNAND-against-baseline pairs run (two lifetimes each)."""
        return self.table.height

    def to_dict(self) -> dict[str, Any]:
        return {"grid": self.table.to_dicts()}

    def files(self, out: Path) -> list[Path]:
        """grid.parquet, grid.csv and the lifetime and latency heatmaps."""
        from nandlab import plots  # matplotlib only when drawing

        paths = [out / name for name in ("grid.parquet", "grid.csv", "lifetime-ratio.png", "latency-ratio.png")]
        self.table.write_parquet(paths[0])
        self.table.write_csv(paths[1])
        plots.lifetime_heatmaps(self.table, "lifetime_ratio", paths[2])
        plots.lifetime_heatmaps(self.table, "latency_ratio", paths[3])
        return paths

    def print(self, console: Console) -> None:
        """Per cell type: the ratios' range, and how many runs."""
        summary = Table("Cell", "Lifetime ratio\nmin / max", "Latency ratio\nmin / max", "Runs",
                        title="ZombieNAND synthetic grid")
        for kind in self.table["cell"].unique(maintain_order=True):
            part = self.table.filter(pl.col("cell") == kind)
            summary.add_row(
                kind.upper(),
                f"{part['lifetime_ratio'].min():.2f} / {part['lifetime_ratio'].max():.2f}",
                f"{part['latency_ratio'].min():.2f} / {part['latency_ratio'].max():.2f}",
                str(2 * part.height),
            )
        console.print(summary)

    @classmethod
    def report(cls, directory: Path) -> Report:
        """The ratios' ranges, the heatmaps and the grid."""
        d = directory
        table = read_table(d / "grid.parquet", "lifetime grid")
        r = Report(d, "ZombieNAND synthetic grid", "lifetime grid, the paper's Fig. 3 (nandlab lifetime-grid)")
        r.fact("grid", " × ".join(f"{c} ({table[c].n_unique()})" for c in ("cell", "reserve", "working_set",
                                                                             "read_level")))
        for metric in ("lifetime_ratio", "latency_ratio"):
            r.fact(metric, f"{fmt(table[metric].min())} to {fmt(table[metric].max())}")
        existing_figure(r, d, "Heatmaps", "lifetime-ratio.png", "lifetime with ZombieNAND relative to the baseline")
        existing_figure(r, d, "Heatmaps", "latency-ratio.png",
                        "mean latency over the baseline's life with ZombieNAND, relative to the baseline")
        r.table("Grid", table.select(c for c in table.columns if not c.endswith("_death")).to_dicts(),
                note="The causes of death are in grid.parquet and grid.csv; the runs' time series in the sweep "
                     "dataset in sweep/ (nandlab report DIR/sweep).")
        return r


def run(*args: Any, **options: Any) -> Grid:
    """``lifetime.grid`` (cells, reserves, working sets, read levels, workers, seed, on_run, out) as a
    procedure's result."""
    return Grid(lifetime.grid(*args, **options))


PROCEDURE = Procedure("lifetime-grid", "nandlab lifetime-grid", Grid, run)
