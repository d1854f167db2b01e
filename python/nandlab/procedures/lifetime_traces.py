"""``nandlab lifetime-traces``: the ZombieNAND paper's trace study (its Table III and Figs. 4–6),
ZombieNAND and the baseline until death on real traces (``lifetime_traces.study``, a sweep); its
table, bars, latency curves and the traces' composition and address reuse."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console
from rich.table import Table

from nandlab import lifetime_traces, traces
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.report.page import Report, existing_figure, fmt, read_table
from nandlab.terminal import safe

FILES = ("traces.parquet", "traces.csv", "composition.csv", "curves.parquet", "study.json",
         "lifetime-ratio.png", "latency-over-life.png", "address-reuse.png")


@dataclass(frozen=True)
class TraceStudy(ProcedureResult):
    """A ``lifetime_traces.Study``."""

    study: lifetime_traces.Study
    kind = "lifetime-traces"

    def comparisons(self) -> int:
        """ZombieNAND-against-baseline pairs run (two lifetimes each)."""
        return self.study.table.height

    def to_dict(self) -> dict[str, Any]:
        s = self.study
        return {"runs": s.table.to_dicts(), "skipped": s.skipped, "endurance_scale": s.endurance_scale}

    def composition(self) -> pl.DataFrame:
        """Each trace's Table III row."""
        return pl.DataFrame([
            {"trace": name, **{c: s[c] for c in traces.COMPOSITION_COLUMNS}} for name, s in self.study.stats.items()
        ])

    def files(self, out: Path) -> list[Path]:
        """The runs (Parquet, CSV), the traces' composition, the latency curves, the study's settings
        and what was left out, and the three figures."""
        from nandlab import plots  # matplotlib only when drawing

        s = self.study
        paths = [out / name for name in FILES]
        table, csv, composition, curves, document, bars, lines, reuse = paths
        s.table.write_parquet(table)
        s.table.write_csv(csv)
        self.composition().write_csv(composition)
        s.curves.write_parquet(curves)
        document.write_text(json.dumps({"endurance_scale": s.endurance_scale, "skipped": s.skipped}, indent=2) + "\n",
                            encoding="utf-8")
        plots.trace_lifetimes(s.table, bars)
        plots.trace_latency_curves(s.curves, lines)
        plots.reuse_curves(s.stats, reuse)
        return paths

    def print(self, console: Console) -> None:
        """Per trace and cell type: the lifetime ratio at each reserve."""
        table = self.study.table
        reserves = sorted(table["reserve"].unique().to_list())
        out = Table("Trace", "Cell", *(f"{r:.0%} reserve" for r in reserves), "Latency ratio\nmin / max",
                    title="ZombieNAND on real traces: lifetime / baseline's")
        for (name, cell), part in table.group_by("trace", "cell", maintain_order=True):
            ratios = {r: part.filter(pl.col("reserve") == r)["lifetime_ratio"].max() for r in reserves}
            out.add_row(safe(str(name)), str(cell).upper(), *(f"{ratios[r]:.3f}" for r in reserves),
                        f"{part['latency_ratio'].min():.3f} / {part['latency_ratio'].max():.3f}")
        console.print(out)
        for name, why in self.study.skipped.items():
            console.print(safe(f"left out: {name} {why}"), style="yellow", highlight=False)
        if self.study.endurance_scale != 1.0:
            console.print(f"ratings divided by {self.study.endurance_scale:g} (--endurance-scale)", style="yellow")

    @classmethod
    def report(cls, directory: Path) -> Report:
        """The figures, the runs and the traces' composition."""
        d = directory
        table = read_table(d / "traces.parquet", "trace lifetime table")
        settings = json.loads((d / "study.json").read_text(encoding="utf-8"))
        r = Report(d, "ZombieNAND trace study",
                   "lifetime on real traces, the paper's Figs. 4–6 (nandlab lifetime-traces)")
        r.fact("runs", f"{table.height} comparisons: {table['trace'].n_unique()} traces × "
                       f"{table['cell'].n_unique()} cell types × {table['reserve'].n_unique()} reserves")
        r.fact("lifetime ratio", f"{fmt(table['lifetime_ratio'].min())} to {fmt(table['lifetime_ratio'].max())}")
        r.fact("endurance scale", f"ratings divided by {settings['endurance_scale']:g}")
        for name, why in settings["skipped"].items():
            r.fact(f"left out: {name}", why)
        existing_figure(r, d, "Figures", "lifetime-ratio.png", "lifetime with ZombieNAND relative to the baseline")
        existing_figure(r, d, "Figures", "latency-over-life.png", "latency over life relative to the baseline's mean")
        existing_figure(r, d, "Figures", "address-reuse.png", "the traces' address reuse (the paper's Fig. 4)")
        r.table("Runs", table.select(c for c in table.columns if not c.endswith("_death")).to_dicts(),
                note="The causes of death are in traces.parquet and traces.csv; the runs' time series in the "
                     "sweep dataset in sweep/.")
        r.table("Composition (Table III)", read_table(d / "composition.csv", "trace composition").to_dicts())
        return r


def run(*args: Any, **options: Any) -> TraceStudy:
    """``lifetime_traces.study`` (paths, cells, reserves, endurance_scale, workers, seed, on_run, out) as a
    procedure's result."""
    return TraceStudy(lifetime_traces.study(*args, **options))


PROCEDURE = Procedure("lifetime-traces", "nandlab lifetime-traces", TraceStudy, run)
