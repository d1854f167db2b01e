"""``nandlab trace stats`` and ``trace replay``: what a block I/O trace holds (``nandlab.traces``),
for one trace or several side by side, and a trace replayed on a simulated drive (a run)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import api, qualify, traces
from nandlab.output import number
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.procedures.run import RunResult
from nandlab.report.page import REPORT_HTML, Report, existing_figure, gib, read_json, read_table
from nandlab.terminal import safe

COMPOSITION_TITLE = "Composition (% of bytes moved, as ZombieNAND's Table III)"
COMPOSITION_NOTE = "Percent of the bytes moved, as ZombieNAND's Table III."


@dataclass(frozen=True)
class TraceStats(ProcedureResult):
    """One trace's ``summary`` (``traces.stats``) and its ``file``."""

    file: Path
    summary: dict[str, Any]
    kind = "trace-stats"

    def to_dict(self) -> dict[str, Any]:
        return self.summary

    def files(self, out: Path) -> list[Path]:
        return traces.write_stats(self.summary, out)

    def print(self, console: Console) -> None:
        """The trace's figures, then its Table III row."""
        s = self.summary
        table = Table(box=box.SIMPLE_HEAD, title=safe(f"{self.file.name} ({s['format']})"), show_header=False)
        table.add_column("", style="bold")
        table.add_column("", justify="right")
        rows = [
            ("records", f"{s['records']:,} ({s['reads']:,} reads, {s['writes']:,} writes, {s['trims']:,} trims)"),
            ("read / written", f"{s['read_bytes'] / 2**30:.3f} / {s['write_bytes'] / 2**30:.3f} GiB"),
            ("devices", f"{s['devices']:,}"),
            ("duration", f"{s['duration_seconds']:,.1f} s"),
            ("inter-arrival p50 / p99",
             f"{number(s['interarrival_us']['p50'])} / {number(s['interarrival_us']['p99'])} µs"),
            ("mean request", f"{s['mean_request_bytes'] / 1024:,.1f} KiB"),
            ("footprint (writes)",
             f"{s['footprint_bytes'] / 2**30:.3f} GiB ({s['write_footprint_bytes'] / 2**30:.3f} GiB)"),
        ]
        if s["skipped_lines"]:
            rows.append(("malformed lines skipped", f"{s['skipped_lines']:,}"))
        for name, value in rows:
            table.add_row(name, value)
        console.print(table)
        composition = Table("", "Total %", "Random %", "Sequential %", box=box.SIMPLE_HEAD, title=COMPOSITION_TITLE)
        for kind in ("write", "read"):
            composition.add_row(f"{kind.title()}s", f"{s[f'{kind}_percent']:.0f}", f"{s[f'{kind}_random_percent']:.0f}",
                                f"{s[f'{kind}_sequential_percent']:.0f}")
        console.print(composition)

    @classmethod
    def report(cls, directory: Path) -> Report:
        d = directory
        doc = read_json(d / "stats.json")
        r = Report(d, f"Trace: {d.resolve().name}", f"trace statistics, {doc['format']} format (nandlab trace stats)")
        r.fact("records", f"{doc['records']:,} ({doc['reads']:,} reads, {doc['writes']:,} writes, "
               f"{doc['trims']:,} trims)")
        r.fact("footprint", f"{gib(doc['footprint_bytes'])} GiB ({gib(doc['write_footprint_bytes'])} GiB written)")
        existing_figure(r, d, "Address reuse and request sizes", "trace-stats.png",
                        "address reuse (ZombieNAND's Fig. 4) and request sizes")
        r.table("Composition", [
            {"": kind + "s", "% of bytes": doc[f"{kind}_percent"], "random %": doc[f"{kind}_random_percent"],
             "sequential %": doc[f"{kind}_sequential_percent"]} for kind in ("write", "read")
        ], note=COMPOSITION_NOTE)
        nested = [(f"{k} {q}", v) for k, inner in doc.items() if isinstance(inner, dict) for q, v in inner.items()]
        r.pairs("Figures", [(k, v) for k, v in doc.items() if not isinstance(v, (list, dict))] + nested)
        r.table("Request sizes", [dict(zip(("at least (bytes)", "requests", "reads", "writes"), row))
                                  for row in doc["size_histogram"]])
        return r


@dataclass(frozen=True)
class TraceComparison(ProcedureResult):
    """Several traces' ``summaries``, by file."""

    summaries: dict[Path, dict[str, Any]]
    kind = "trace-comparison"

    def to_dict(self) -> dict[str, Any]:
        return {"traces": [{"file": str(f), **s} for f, s in self.summaries.items()]}

    def files(self, out: Path) -> list[Path]:
        """Each trace's own directory (``out/NAME``, a ``TraceStats`` each), then composition.csv and
        reuse.png comparing them."""
        for file, summary in self.summaries.items():
            TraceStats(file, summary).write(out / file.name)
        return traces.write_composition(self.summaries, out)

    def print(self, console: Console) -> None:
        """One row per trace: the ZombieNAND paper's Table III, with sizes and footprints."""
        table = Table(
            "Trace", "Format", "Records", "GiB moved", "Writes %", "W random %", "W seq. %", "Reads %",
            "R random %", "R seq. %", "Footprint GiB", box=box.SIMPLE_HEAD, title=COMPOSITION_TITLE,
        )
        for file, s in self.summaries.items():
            table.add_row(
                safe(file.name), s["format"], f"{s['records']:,}",
                f"{(s['read_bytes'] + s['write_bytes']) / 2**30:.3f}",
                *(f"{s[k]:.0f}" for k in ("write_percent", "write_random_percent", "write_sequential_percent",
                                          "read_percent", "read_random_percent", "read_sequential_percent")),
                f"{s['footprint_bytes'] / 2**30:.3f}",
            )
        console.print(table)

    @classmethod
    def report(cls, directory: Path) -> Report:
        """The traces' Table III rows and reuse curves, linking each trace's own report."""
        d = directory
        table = read_table(d / "composition.csv", "trace composition")
        names = table["trace"].to_list()
        r = Report(d, f"Traces: {d.resolve().name}", "trace statistics of several traces (nandlab trace stats)")
        r.fact("traces", ", ".join(names))
        existing_figure(r, d, "Address reuse", "reuse.png", "each trace's address reuse, all accesses and writes")
        r.table("Composition", table.to_dicts(), note=COMPOSITION_NOTE)
        own = [(name, f"{name}/{REPORT_HTML}") for name in names if (d / name / REPORT_HTML).exists()]
        if own:
            r.links("Each trace", own)
        return r


def stats(files: list[str | os.PathLike[str]], format: str | None = None,
          skip_bad: bool = False) -> TraceStats | TraceComparison:
    """The statistics of one trace, or of several side by side."""
    summaries = {Path(file): traces.stats(file, format=format, skip_bad=skip_bad) for file in files}
    if len(summaries) == 1:
        (file, summary), = summaries.items()
        return TraceStats(file, summary)
    return TraceComparison(summaries)


def replay(file: str | os.PathLike[str], device: qualify.DeviceSource, capacity: str | int | None = None,
           run: Mapping[str, Any] | None = None, **phase: Any) -> RunResult:
    """Replay a trace on a drive (a preset, a TOML file, a dict): a run of one ``kind = "trace"``
    phase with the ``phase`` keys ``traces.replay_phase`` takes; ``run`` goes to ``nandlab.run``
    (seed, progress, snapshots)."""
    config = qualify.device_config(device, capacity)
    config["phase"] = [traces.replay_phase(file, **phase)]
    return RunResult(api.run(config, **(run or {})), kind="trace-replay")


STATS = Procedure("trace-stats", "nandlab trace stats", TraceStats, stats)
COMPARISON = Procedure("trace-comparison", "nandlab trace stats with several traces", TraceComparison, stats)
REPLAY = Procedure("trace-replay", "nandlab trace replay", RunResult, replay)
