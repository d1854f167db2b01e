"""``nandlab test read-disturb``: read disturb on a simulated drive. The drive is filled, then a hot
spot of a few blocks is read ``--reads`` times at random, 4 KiB at queue depth 1 — once as the drive's
firmware stands, once with read reclaim (``[device.errors] read_reclaim``: a block read that often
since its erase is relocated). The result is RBER and read retries against reads, and what reclaim
cost in relocations and programs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import polars as pl
from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import api, qualify
from nandlab.output import number
from nandlab.procedures.base import DocumentResult, Finite, Procedure
from nandlab.procedures.retention import aged_with_errors
from nandlab.report.page import Report, existing_figure, read_json
from nandlab.terminal import safe

HOT_BLOCKS = 4
"""The hot spot: this many native blocks' worth of addresses."""
ROWS = 50
"""Time-series rows per pass: the curves' resolution."""
FIGURES = ("rber_mean", "rber_max", "retries_per_read", "uber", "uncorrectable_reads", "read_reclaims",
           "reclaim_programs")
"""Each pass's figures the result carries."""
FIGURE = "read-disturb.png"


@dataclass(frozen=True)
class ReadDisturb(DocumentResult):
    """The test's settings, each pass's figures and its curve (RBER and retries against reads)."""

    kind = "read-disturb"

    def files(self, out: Path) -> list[Path]:
        """result.json, curves.csv and the figure."""
        [path] = super().files(out)
        curves = pl.DataFrame(self.document["curves"])
        curves.write_csv(out / "curves.csv")
        from nandlab import plots  # matplotlib loads only to draw

        plots.read_disturb(curves, self.document, out / FIGURE)
        return [path, out / "curves.csv", out / FIGURE]

    def print(self, console: Console) -> None:
        d = self.document
        title = (f"nandlab test read-disturb: {safe(d['device'])} at {number(d['cycles'])} cycles, "
                 f"{number(d['reads'])} reads of {d['hot_bytes'] >> 20} MiB")
        table = Table(box=box.SIMPLE_HEAD, title=title,
                      caption="RBER of the host's page reads over the whole pass; reclaim relocates a block read "
                      f"{number(d['read_reclaim'])} times since its erase. UBER and retries follow the most worn "
                      "block the hot data sits on, which reclaim changes: compare the RBER curves, or several "
                      "seeds (docs/read-disturb).", caption_justify="left")
        for header in ("Firmware", "RBER mean", "RBER max", "Retries/read", "UBER", "Reclaims", "Reclaim programs"):
            table.add_column(header, justify="right")
        for name in ("without", "with"):
            p = d[name]
            table.add_row(f"{name} reclaim", f"{p['rber_mean']:.2e}", f"{p['rber_max']:.2e}",
                          f"{p['retries_per_read']:.3g}", f"{p['uber']:.2e}", number(p["read_reclaims"]),
                          number(p["reclaim_programs"]))
        console.print(table)

    @classmethod
    def report(cls, directory: Path) -> Report:
        d = read_json(directory / "result.json")
        r = Report(directory, f"nandlab test read-disturb: {d['device']}", "RBER and read reclaim against reads")
        for key in ("reads", "cycles", "hot_bytes", "read_reclaim", "params"):
            r.fact(key, str(d[key]))
        r.table("Passes", [{"firmware": f"{name} reclaim", **d[name]} for name in ("without", "with")])
        existing_figure(r, directory, "RBER against reads", FIGURE,
                        "Mean RBER of each interval's page reads, and read-retry steps per read, without and "
                        "with read reclaim.")
        return r


def run(
    device: qualify.DeviceSource,
    reads: int,
    cycles: float = 0.0,
    reclaim: int | None = None,
    capacity: str | int | None = None,
    seed: int = qualify.SEED,
    progress: Any = None,
) -> ReadDisturb:
    """Age the drive to ``cycles``, fill it, read a hot spot ``reads`` times without and with read
    reclaim (``reclaim``, default the device's ``read_reclaim`` or a tenth of ``reads``)."""
    config = aged_with_errors(device, capacity, cycles, "read-disturb")
    errors = config["device"]["errors"]
    threshold = reclaim or errors.get("read_reclaim") or max(1, reads // 10)
    resolved = api.make_simulator({**config, "phase": [{"kind": "trim"}]}).config
    geometry = resolved["geometry"]
    hot = HOT_BLOCKS * geometry["pages_per_block"] * geometry["page_size"]
    phases = [
        {"name": "fill", "kind": "fill"},
        {"name": "hot", "read_fraction": 1.0, "block_size": "4KiB", "working_set": hot, "requests": reads,
         "interval": max(1, reads // ROWS)},
    ]
    passes: dict[str, Any] = {}
    curves = []
    for name, setting in (("without", 0), ("with", threshold)):
        pass_config = {**config, "device": {**config["device"], "errors": {**errors, "read_reclaim": setting}}}
        result = api.every_phase(api.run({**pass_config, "phase": phases}, seed=seed, progress=progress))
        summary = result.phases[-1]
        passes[name] = {key: summary[key] for key in FIGURES}
        # Rows with no page read (the phase's closing row may be one) have no RBER.
        series = result.timeseries.filter((pl.col("phase_name") == "hot") & (pl.col("rber_mean") > 0))
        for row in series.select("sim_seconds", "rber_mean", "retries_per_read").iter_rows(named=True):
            curves.append({"firmware": f"{name} reclaim", **row})
    # Reads so far per row: rows are `interval` requests apart.
    step = max(1, reads // ROWS)
    counts: dict[str, int] = {}
    for row in curves:
        counts[row["firmware"]] = counts.get(row["firmware"], 0) + 1
        row["reads"] = min(reads, counts[row["firmware"]] * step)
        del row["sim_seconds"]
    document = {
        "device": qualify._label(device),
        "reads": reads,
        "cycles": cycles,
        "hot_bytes": hot,
        "read_reclaim": threshold,
        "params": result.config["device"]["errors"]["params_name"],
        "without": passes["without"],
        "with": passes["with"],
        "curves": curves,
    }
    return ReadDisturb(document)


PROCEDURE = Procedure(
    "read-disturb", "nandlab test read-disturb", ReadDisturb, run,
    options=[
        click.option("--reads", type=click.IntRange(1, 100_000_000), required=True, metavar="N",
                     help="Host reads of the hot spot."),
        click.option("--cycles", type=Finite(0, 1e7), default=0.0, show_default=True, metavar="N",
                     help="Program/erase cycles every block has had (read disturb grows with wear)."),
        click.option("--reclaim", type=click.IntRange(1, 4_000_000_000), default=None, metavar="N",
                     help="Reads of a block since its erase that send it to read reclaim [default: the "
                     "device's read_reclaim, else a tenth of --reads]."),
    ],
    short_help="Read disturb: RBER and read reclaim against reads of a hot spot.",
    help="""Read disturb: every block at --cycles, the drive filled, a hot spot of four blocks'
    worth of addresses read --reads times (4 KiB at random, queue depth 1), without and with read
    reclaim; prints RBER, retries per
    read, UBER and what reclaim cost. The device's [device.errors] model is turned on (power-law)
    unless it sets one.""",
)
