"""``nandlab fio``: a fio job file on a simulated drive (``nandlab.fio``); its result prints fio's
text report or fio's JSON, and its ``--out`` holds the run's files beside fio.json."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from nandlab import api, fio, output, qualify
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.procedures.run import run_report
from nandlab.report.page import Report, read_json
from nandlab.terminal import shown

FIO_JSON = "fio.json"


@dataclass(frozen=True)
class FioResult(ProcedureResult):
    """A job file's run: its ``jobs``, the ``result`` of the run and fio's JSON ``document``."""

    jobs: fio.FioJobs
    result: api.Result
    document: dict[str, Any]
    kind = "fio"

    def to_dict(self) -> dict[str, Any]:
        return self.document

    def files(self, out: Path) -> list[Path]:
        """fio.json, then the run's files (``output.write``)."""
        paths = output.write(self.result, out)
        (out / FIO_JSON).write_text(output.to_strict_json(self.document) + "\n", encoding="utf-8")
        return [out / FIO_JSON, *paths]

    def print(self, console: Console) -> None:
        """fio's text report, per job and direction."""
        lines = []
        for job in self.document["jobs"]:
            lines.append(f"{shown(job['jobname'])}: (groupid={job['groupid']}, jobs=1): err= 0  "
                         f"(simulated: {self.document['device']})")
            for kind in ("read", "write", "trim"):
                d = job[kind]
                if not d["total_ios"]:
                    continue
                mib = d["bw_bytes"] / 2**20
                lines.append(f"  {kind}: IOPS={d['iops']:,.0f}, BW={mib:,.1f}MiB/s ({d['bw_bytes'] / 1e6:,.1f}MB/s)"
                             f"({d['io_bytes'] / 2**20:,.1f}MiB/{d['runtime']:,.0f}msec)")
                clat = d["clat_ns"]
                if kind != "trim":
                    lines.append(f"    clat (usec): max={clat['max'] / 1000:,.0f}, avg={clat['mean'] / 1000:,.2f}")
                    points = ", ".join(f"{float(q):g}th=[{v / 1000:,.0f}]" for q, v in clat["percentile"].items())
                    lines.append(f"     clat percentiles (usec): {points}")
            lines.append(f"  write amplification: {job['waf']:.2f}")
        for line in lines:
            console.out(line, highlight=False)

    @classmethod
    def report(cls, directory: Path) -> Report:
        """The run's report with the fio jobs' table."""
        document = read_json(directory / FIO_JSON)

        def jobs(r: Report) -> None:
            r.table("fio jobs", [_row(job) for job in document["jobs"]], note="; ".join(document.get("warnings", [])))

        return run_report(directory, fio=jobs)


def run(jobfile: str | os.PathLike[str] | fio.FioJobs, device: qualify.DeviceSource, capacity: str | int | None = None,
        seed: int | None = None, progress: api.ProgressCallback | None = None) -> FioResult:
    """Run a job file (a path, or one ``fio.load`` read) on a drive (a preset, a TOML file, a dict)."""
    jobs = jobfile if isinstance(jobfile, fio.FioJobs) else fio.load(jobfile)
    result = api.run(fio.to_config(jobs, device, capacity), seed=seed, progress=progress)
    return FioResult(jobs, result, fio.report(jobs, result))


def _row(job: Mapping[str, Any]) -> dict[str, Any]:
    """A fio job's figures (fio's JSON shape) as a table row."""
    row: dict[str, Any] = {"job": job["jobname"], "group": job["groupid"]}
    for kind in ("read", "write"):
        d = job[kind]
        row[f"{kind} IOPS"] = d["iops"]
        row[f"{kind} MB/s"] = d["bw_bytes"] / 1e6
        row[f"{kind} clat p99 µs"] = d["clat_ns"]["percentile"].get("99.000000", 0) / 1000 if d["total_ios"] else None
    row["WAF"] = job.get("waf")
    return row


PROCEDURE = Procedure("fio", "nandlab fio", FioResult, run)
