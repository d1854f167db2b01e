"""What the ``nandlab test`` procedures of Swissbit's AN2103 share (``nandlab.qualify`` measures):
a result of one run, or of two compared, with its table per run, its ``--out`` files (the speed
series, a row per section or phase, result.json and the note's figure) and its report."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import polars as pl
from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import output, qualify
from nandlab.output import fixed, number
from nandlab.procedures.base import QUEUE_DEPTH, Procedure, ProcedureResult
from nandlab.report.page import Report, existing_figure, gib, read_json
from nandlab.terminal import safe

QUEUE_DEPTH_OPTION = click.option(
    "--queue-depth", type=QUEUE_DEPTH, default=qualify.QUEUE_DEPTH, show_default=True, metavar="N",
    help="Requests in flight (1: one at a time, as the note's tests; 32: SATA NCQ).",
)
"""The write and read tests' ``--queue-depth``."""
CAPTION = "MB/s = 10^6 bytes per simulated second. Min: the slowest speed over a window of 2 % of the capacity."


@dataclass(frozen=True)
class Qualified(ProcedureResult):
    """What a procedure measured: ``runs`` (one ``qualify.Qualification``, or two compared) and the
    ``labels`` of two compared runs. Each procedure's subclass sets ``kind``."""

    runs: Sequence[qualify.Qualification]
    labels: tuple[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The first run's document; the second's under ``compare``, with its ``label``."""
        document = self.runs[0].to_dict()
        if self.labels is not None:
            document["compare"] = {"label": self.labels[1], **self.runs[1].to_dict()}
        return document

    def files(self, out: Path) -> list[Path]:
        """series.parquet, sections.csv or phases.csv (with a ``run`` column when two runs are
        compared), result.json and PROCEDURE.png."""
        from nandlab import plots  # matplotlib only when drawing

        q = self.runs[0]
        paths = [out / name for name in ("series.parquet", f"{q.part_column}s.csv", "result.json", f"{self.kind}.png")]
        parquet, csv, result_json, png = paths
        tagged = [(run.series, pl.DataFrame(run.parts)) for run in self.runs]
        if self.labels:
            tagged = [(s.with_columns(run=pl.lit(n)), p.with_columns(run=pl.lit(n)))
                      for (s, p), n in zip(tagged, self.labels)]
        pl.concat([s for s, _ in tagged]).write_parquet(parquet)
        pl.concat([p for _, p in tagged]).write_csv(csv)
        result_json.write_text(self.to_json() + "\n", encoding="utf-8")
        if q.part_column == "section":
            plots.sections(q, png)
        else:
            plots.fill_curves(list(self.runs), png, labels=list(self.labels) if self.labels else None)
        return paths

    def print(self, console: Console) -> None:
        """Per run: the device, then one row per section or phase."""
        for q, label in zip(self.runs, self.labels or ("",)):
            for line in output.device_lines(q.result.device):
                console.print(safe(line), highlight=False)
            sections = q.part_column == "section"
            title = f"nandlab test {q.procedure}" + (f": {label}" if label else "")
            table = Table(box=box.SIMPLE_HEAD, title=safe(title), caption=CAPTION, caption_justify="left")
            table.add_column("#" if sections else "Phase")
            if sections:
                table.add_column("Section")
            for header in ("Mean\nMB/s", "Min\nMB/s", *(("WAF",) if sections else ()), "GiB"):
                table.add_column(header, justify="right")
            for n, part in enumerate(q.parts, 1):
                cells = [str(n), safe(part["description"])] if sections else [safe(part["name"])]
                cells += [number(part["mean_mbps"]), number(part["min_mbps"])]
                if sections:
                    cells.append(fixed(part["waf"]))
                cells.append(f"{number(part['gib_start'])}–{number(part['gib_end'])}")
                table.add_row(*cells)
            console.print(table)

    @classmethod
    def report(cls, directory: Path) -> Report:
        """The note's figure, then a table of sections or phases per run."""
        d = directory
        doc = read_json(d / "result.json")
        r = Report(d, f"nandlab test {cls.kind}: {doc['device']}", "Swissbit AN2103 media qualification")
        r.fact("capacity", f"{gib(doc['capacity_bytes'])} GiB")
        existing_figure(r, d, "Speed", f"{cls.kind}.png", "speed against data moved, each section or phase marked")
        runs = [("", doc), *([(doc["compare"].get("label", "compared"), doc["compare"])] if "compare" in doc else [])]
        for label, run in runs:
            heading = "Sections" if "sections" in run else "Phases"
            rows = [{k: v for k, v in part.items() if not isinstance(v, (list, dict))}
                    for part in run.get("sections") or run.get("phases") or []]
            r.table(f"{heading}: {label}" if label else heading, rows,
                    note="MB/s = 10^6 bytes per simulated second; min: the slowest over a window of 2 % of the "
                         "capacity.")
        return r


def procedure(kind: str, about: str, run: Callable[..., Qualified] | None = None, **command: Any) -> Procedure:
    """A ``nandlab test`` procedure called ``kind``, its result a ``Qualified`` of that kind (``about``
    says what it holds): ``run``, or by default ``qualify``'s function of that name
    (``write-sections``: ``qualify.write_sections``) run once; ``command`` has its ``options``,
    ``short_help`` and ``help``."""
    result = type(kind.title().replace("-", ""), (Qualified,), {"kind": kind, "__doc__": about})
    if run is None:
        measure = getattr(qualify, kind.replace("-", "_"))

        def run(device: qualify.DeviceSource, progress: Any = None, **settings: Any) -> Qualified:
            return result([measure(device, progress=progress, **settings)])

    return Procedure(kind, f"nandlab test {kind}", result, run, **command)
