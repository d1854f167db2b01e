"""``nandlab matrix``: SNIA-style performance matrices (``nandlab.matrix``): IOPS and MB/s over
read/write mix × block size, burst and steady state, beside the tutorial's theoretical bandwidth;
and bandwidth against die count."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import matrix, output
from nandlab.matrix import block_label
from nandlab.output import NONE, number
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.report.page import Report, existing_figure, fmt, gib, read_json
from nandlab.terminal import safe


@dataclass(frozen=True)
class MatrixResult(ProcedureResult):
    """What ``matrix.run`` measured (a ``matrix.Matrix``)."""

    matrix: matrix.Matrix
    kind = "matrix"

    def to_dict(self) -> dict[str, Any]:
        return self.matrix.to_dict()

    def files(self, out: Path) -> list[Path]:
        """matrix.parquet, matrix.csv (one row per cell), result.json, one matrix-STATE.png per
        state; with scaling points, scaling.csv and scaling.png."""
        from nandlab import plots  # matplotlib only when drawing

        table = self.matrix.table()
        paths = [out / "matrix.parquet", out / "matrix.csv", out / "result.json"]
        table.write_parquet(paths[0])
        table.write_csv(paths[1])
        paths[2].write_text(self.to_json() + "\n", encoding="utf-8")
        for state in self.matrix.states:
            paths.append(out / f"matrix-{state}.png")
            plots.matrix_block_sizes(self.matrix, state, paths[-1])
        if self.matrix.scaling:
            paths += [out / "scaling.csv", out / "scaling.png"]
            pl.DataFrame(self.matrix.scaling).write_csv(paths[-2])
            plots.die_scaling(self.matrix, paths[-1])
        return paths

    def print(self, console: Console) -> None:
        """The device, the model's figures, then per state an IOPS grid, an MB/s grid (with % of the
        theoretical maximum) and, in steady state, the rounds; then bandwidth vs die count."""
        m = self.matrix
        for line in output.device_lines(m.drive):  # the engine's device figures, as a run's
            console.print(safe(line), highlight=False)
        t = m.theoretical
        console.print(
            f"Theory:   {number(t['read_mbps_per_die'])} MB/s reads, {number(t['write_mbps_per_die'])} MB/s writes "
            f"per die (page / (tR or tPROG + transfer)) · channels {number(t['channel_mbps'])} · "
            f"link {number(t['link_mbps'])} MB/s",
            highlight=False,
        )
        console.print("MB/s = 10^6 bytes per simulated second.", highlight=False)
        for state, part in m.states.items():
            cells = part["cells"]
            mixes = list(dict.fromkeys((c["read_percent"], c["write_percent"]) for c in cells))
            sizes = sorted({c["block_size"] for c in cells})
            by_key = {(c["read_percent"], c["block_size"]): c for c in cells}
            unsteady = state == "steady" and not all(c["steady"] for c in cells)
            if state == "burst":
                how = f"fresh drive (filled at memory speed), {number(part['volume'])} × capacity per cell"
            else:
                how = (f"SNIA PTS: 2 × capacity 128 KiB sequential, then rounds writing "
                       f"{number(part['round_volume'])} × capacity until steady (≤ {part['max_rounds']}); "
                       f"means of the last {part['window']} rounds")
            grids = [("IOPS", lambda c: number(c["iops"]) + _dagger(c), None)]
            grids.append(("MB/s", lambda c: number(c["mbps"]) + _dagger(c), "Theory\nMB/s"))
            grids.append(("% of theoretical", lambda c: _percent(c["percent_of_theoretical"]) + _dagger(c), None))
            if state == "steady":
                grids.append(("rounds", lambda c: str(c["steady_round"]) if c["steady"]
                              else f"{c['rounds']}†", None))
            note = f" † not steady within {part['max_rounds']} rounds." if unsteady else ""
            console.print(f"\n[bold]{state}[/]: {safe(how)}; random I/O, queue depth {m.queue_depth}.{note} "
                          f"RMS over the cells: {number(part['rms_iops'])} IOPS, {number(part['rms_mbps'])} MB/s.",
                          highlight=False)
            for what, show, extra in grids:
                table = Table(box=box.SIMPLE_HEAD, title=f"{state}: {what}")
                table.add_column("R/W %")
                for size in sizes:
                    table.add_column(block_label(size), justify="right")
                if extra:
                    table.add_column(extra, justify="right")
                for mix in mixes:
                    row = [f"{mix[0]}/{mix[1]}", *(show(by_key[(mix[0], size)]) for size in sizes)]
                    if extra:
                        row.append(number(by_key[(mix[0], sizes[0])]["theoretical_mbps"]))
                    table.add_row(*row)
                console.print(table)
        if m.scaling:
            console.print(
                f"\n[bold]scaling[/]: {block_label(m.scaling[0]['block_size'])} random, queue depth "
                f"{m.queue_depth}: reads of a filled drive, writes to an empty one (no garbage collection, as the "
                "model assumes).",
                highlight=False,
            )
            table = Table(
                "Dies", "Channels ×\nchips × dies", "Reads\nMB/s", "Theory", "Writes\nMB/s", "Theory",
                box=box.SIMPLE_HEAD, title="Bandwidth vs die count",
            )
            for dies in sorted({p["dies"] for p in m.scaling}):
                point = {p["read_percent"]: p for p in m.scaling if p["dies"] == dies}
                layout = point[100] if 100 in point else point[0]
                figures = [
                    (number(point[mix]["mbps"]), number(point[mix]["theoretical_mbps"])) if mix in point else (NONE, NONE)
                    for mix in (100, 0)
                ]
                table.add_row(
                    str(dies), f"{layout['channels']} × {layout['chips_per_channel']} × {layout['dies_per_chip']}",
                    *(value for pair in figures for value in pair),
                )
            console.print(table)

    @classmethod
    def report(cls, directory: Path) -> Report:
        """Per state its figure and cells; the die-count scaling; the model's and the drive's figures."""
        doc = read_json(directory / "result.json")
        r = Report(directory, f"SNIA matrix: {doc['device']}", "performance matrix (nandlab matrix)")
        r.fact("drive", f"{gib(doc['capacity_bytes'])} GiB, random I/O at queue depth {doc['queue_depth']}")
        for state, part in doc["states"].items():
            r.fact(state, f"RMS over the cells: {fmt(part['rms_iops'])} IOPS, {fmt(part['rms_mbps'])} MB/s")
        captions = {"burst": "burst (a fresh drive): IOPS and MB/s against block size, per R/W mix",
                    "steady": "steady state (SNIA PTS): IOPS and MB/s against block size, per R/W mix"}
        keys = ("read_percent", "block_size", "iops", "mbps", "theoretical_mbps", "percent_of_theoretical", "waf",
                "rounds", "steady")
        for state, part in doc["states"].items():
            existing_figure(r, directory, state, f"matrix-{state}.png", captions.get(state, state))
            r.table(state, [{k: c[k] for k in keys if k in c} for c in part["cells"]])
        if doc.get("scaling"):
            existing_figure(r, directory, "Die-count scaling", "scaling.png",
                             "bandwidth against die count, simulated and theoretical")
            r.table("Die-count scaling", doc["scaling"])
        r.pairs("Theoretical model", list(doc["theoretical"].items()))
        r.pairs("Drive", [(k, v) for k, v in doc["drive"].items() if not isinstance(v, (dict, list))])
        return r


def _dagger(cell: dict[str, Any]) -> str:
    """``†`` after the figures of a steady-state cell that never became steady."""
    return "†" if cell.get("steady") is False else ""


def _percent(value: float) -> str:
    """``75``, ``9.2``, ``0.3``: whole percents from 10 up."""
    return f"{value:.0f}" if value >= 9.95 else f"{value:.1f}"


def run(device: Any, capacity: str | int | None = None, **options: Any) -> MatrixResult:
    """``matrix.run`` (mixes, block sizes, states, ...) as a procedure's result."""
    return MatrixResult(matrix.run(device, capacity, **options))


PROCEDURE = Procedure("matrix", "nandlab matrix", MatrixResult, run)
