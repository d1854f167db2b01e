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
        """fio's text report (its "normal" output format): the jobs' header lines (``...`` for a job's
        numjobs copies), the version and "Starting N processes" lines, then per job (or
        jobs reported together) and direction its IOPS and bandwidth, submission, completion and total
        latency, completion percentiles, bandwidth and IOPS samples, then the job's latency
        distribution, IO depths and issued counts, then each group's "Run status" lines; nandlab adds
        the drive's write amplification under each job that wrote, and says when reads found
        addresses never written (a fresh drive: precondition it, as fio users do)."""
        lines = []
        for index, job in enumerate(self.jobs.jobs):
            # As fio: a line per job section, "..." once under it for its numjobs copies.
            copy = index > 0 and (self.jobs.jobs[index - 1].name, self.jobs.jobs[index - 1].options) \
                == (job.name, job.options)
            if not copy:
                lines.append(_header(job, self.jobs.phases))
            elif lines[-1] != "...":
                lines.append("...")
        count = len(self.jobs.jobs)
        lines += [self.document["fio version"], f"Starting {count} process{'es' if count > 1 else ''}", ""]
        groups: dict[int, list[dict[str, Any]]] = {}
        for job, members in zip(self.document["jobs"], fio.entries(self.jobs)):
            groups.setdefault(job["groupid"], []).append(job)
            lines.append(f"{shown(job['jobname'])}: (groupid={job['groupid']}, jobs={len(members)}): err= 0: "
                         f"(simulated: {self.document['device']})")
            for kind in ("read", "write", "trim"):
                d = job[kind]
                if d["total_ios"]:
                    lines += _direction_lines(kind, d)
            lines += _job_lines(job)
            if job["write"]["total_ios"]:
                lines.append(f"  write amplification: {output.fixed(job['waf'])}")
        for group, jobs in groups.items():
            # As fio: jobs follow one another, and a blank line comes before each group's status.
            lines += ["", f"Run status group {group} (all jobs):"]
            for kind, label in (("read", "READ"), ("write", "WRITE"), ("trim", "TRIM")):
                done = [j[kind] for j in jobs if j[kind]["total_ios"]]
                if not done:
                    continue
                io = sum(d["io_bytes"] for d in done)
                run = max(d["runtime"] for d in done)
                bws = [d["bw_bytes"] for d in done]
                # Over the longest job's own time, as its bw figures take it (the whole milliseconds of
                # `run` put a lone job's group rate outside its own min-max: 222MiB/s, 221-221).
                longest = max(d["io_bytes"] / d["bw_bytes"] for d in done if d["bw_bytes"]) if any(bws) else 0.0
                rate = io / longest if longest else 0.0
                lines.append(
                    f"  {label:>5}: bw={_fio_bytes(rate, 1024)}/s ({_fio_bytes(rate, 1000)}/s), "
                    f"{_fio_bytes(min(bws), 1024)}/s-{_fio_bytes(max(bws), 1024)}/s "
                    f"({_fio_bytes(min(bws), 1000)}/s-{_fio_bytes(max(bws), 1000)}/s), "
                    f"io={_fio_bytes(io, 1024)} ({_fio_bytes(io, 1000)}), "
                    f"run={min(d['runtime'] for d in done):.0f}-{run:.0f}msec")
        unwritten = output.unwritten_read_lines(self.result.phases, fio.UNWRITTEN_HOW)
        if unwritten:
            lines += ["", *(f"note: {line}" for line in unwritten)]
        for line in lines:
            console.out(line, highlight=False)

    @classmethod
    def report(cls, directory: Path) -> Report:
        """The run's report with the fio jobs' table."""
        document = read_json(directory / FIO_JSON)

        def jobs(r: Report) -> None:
            r.table("fio jobs", [_row(job) for job in document["jobs"]], note="; ".join(document.get("warnings", [])))

        return run_report(directory, extra=jobs, kind="fio job file")


def run(jobfile: str | os.PathLike[str] | fio.FioJobs, device: qualify.DeviceSource, capacity: str | int | None = None,
        seed: int | None = None, progress: api.Progress = "auto", bins: bool = False) -> FioResult:
    """Run a job file (a path, or one ``fio.load`` read) on a drive (a preset, a TOML file, a dict);
    with ``bins``, its document is json+'s (each completion latency's histogram)."""
    jobs = jobfile if isinstance(jobfile, fio.FioJobs) else fio.load(jobfile)
    result = fio.run_config(jobs, fio.to_config(jobs, device, capacity), seed=seed, progress=progress)
    return FioResult(jobs, result, fio.report(jobs, result, bins=bins))


def _header(member: fio.FioJob, phases: list[dict[str, Any]]) -> str:
    """A job's line before the run, as fio prints it: its group, rw, smallest and largest request size
    (those nandlab runs: one range for reads, writes and trims) and depth."""
    phase = phases[member.phase]
    phase = phase["job"][member.slot] if "job" in phase else phase
    sizes = [int(item.split("B/")[0]) for item in phase["block_sizes"]] if "block_sizes" in phase \
        else [int(phase["block_size"].rstrip("B"))]
    span = f"{_num2str(min(sizes))}B-{_num2str(max(sizes))}B"
    return (f"{shown(member.name)}: (g={member.group}): rw={shown(member.options.get('rw', 'read'))}, "
            f"bs={', '.join(f'({direction}) {span}' for direction in 'RWT')}, ioengine=nandlab, "
            f"iodepth={phase.get('queue_depth', 1)}")


def _num2str(size: int, digits: int = 4) -> str:
    """A size as fio's header writes it (its ``num2str`` with ``sig_figs`` 4, binary prefixes, the
    unit left to the caller): the number if it has at most ``digits`` digits (4096), else divided by
    1024 until it has, with the decimals left of the ``digits`` (64.0Ki, 128Ki), rounded half up."""
    prefixes = ("", "Ki", "Mi", "Gi", "Ti", "Pi")
    power, rest = 0, None
    while len(str(size)) > digits and power < len(prefixes) - 1:
        size, rest = divmod(size, 1024)
        power += 1
    if rest is None:
        return f"{size}{prefixes[power]}"
    decimals = digits - len(str(size)) - 1  # one place goes to the point
    if decimals < 1:
        return f"{size + (rest >= 512)}{prefixes[power]}"
    fraction = f"{rest / 1024:.{decimals}f}"
    if fraction.startswith("1"):  # rounded up to the next whole number
        return f"{size + 1}{prefixes[power]}"
    return f"{size}.{fraction[2:]}{prefixes[power]}"


def _latency_line(label: str, stat: Mapping[str, Any]) -> str:
    """A ``slat``/``clat``/``lat`` line, in the unit fio chooses for its smallest value."""
    unit, scale = ("nsec", 1) if stat["min"] < 10_000 else ("usec", 1000) if stat["min"] < 10_000_000 else ("msec", 1e6)
    # fio divides min and max by the unit rounding down (13,648 ns is min=13 µs, not 14: above its avg).
    return (f"{label} ({unit}): min={stat['min'] // scale:.0f}, max={stat['max'] // scale:.0f}, "
            f"avg={stat['mean'] / scale:.2f}, stdev={stat['stddev'] / scale:.2f}")


def _direction_lines(kind: str, d: Mapping[str, Any]) -> list[str]:
    """A direction's lines of fio's text report."""
    lines = [f"  {kind}: IOPS={_fio_count(d['iops'])}, BW={_fio_bytes(d['bw_bytes'], 1024)}/s "
             f"({_fio_bytes(d['bw_bytes'], 1000)}/s)({_fio_bytes(d['io_bytes'], 1024)}/{d['runtime']:.0f}msec)"]
    if kind == "trim":
        return lines
    lines += ["    " + _latency_line("slat", d["slat_ns"]), "    " + _latency_line("clat", d["clat_ns"]),
              "     " + _latency_line("lat", d["lat_ns"]), "    clat percentiles (usec):"]
    points = [f"{float(q):5.2f}th=[{v / 1000:5.0f}]" for q, v in d["clat_ns"].get("percentile", {}).items()]
    for at in range(0, len(points), 4):
        lines.append("     | " + ", ".join(points[at:at + 4]) + ",")
    lines[-1] = lines[-1].rstrip(",")
    if d["bw_samples"]:
        lines.append(f"   bw (  KiB/s): min={d['bw_min']}, max={d['bw_max']}, per={d['bw_agg']:.2f}%, "
                     f"avg={d['bw_mean']:.2f}, stdev={d['bw_dev']:.2f}, samples={d['bw_samples']}")
        lines.append(f"   iops        : min={d['iops_min']}, max={d['iops_max']}, avg={d['iops_mean']:.2f}, "
                     f"stdev={d['iops_stddev']:.2f}, samples={d['iops_samples']}")
    return lines


def _job_lines(job: Mapping[str, Any]) -> list[str]:
    """A job's latency distribution, IO depths and issued counts in fio's text report."""
    lines = []
    for unit, label in (("ns", "nsec"), ("us", "usec"), ("ms", "msec")):
        shares = [f"{level}={share:.2f}%" for level, share in job[f"latency_{unit}"].items() if share > 0]
        for first in range(0, len(shares), 5):  # fio's lines hold five levels each
            lines.append(f"  lat ({label})   : " + ", ".join(shares[first:first + 5]))

    def levels(name: str) -> str:
        return ", ".join(f"{level}={share:.1f}%" for level, share in job[name].items())

    issued = ",".join(str(job[kind]["total_ios"]) for kind in ("read", "write", "trim"))
    lines += [f"  IO depths    : {levels('iodepth_level')}", f"     submit    : {levels('iodepth_submit')}",
              f"     complete  : {levels('iodepth_complete')}",
              f"     issued rwts: total={issued},0 short=0,0,0,0 dropped=0,0,0,0",
              f"     latency   : target={job['latency_target']}, window={job['latency_window']}, "
              f"percentile={job['latency_percentile']:.2f}%, depth={job['latency_depth']}"]
    return lines


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


def _fio_significant(value: float) -> str:
    """Three significant digits, as fio prints them (24.5, 221, 9.05)."""
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _fio_count(value: float) -> str:
    """A count as fio prints it: whole below 10,000, else 56.6k, 1.23M (no thousands separators)."""
    if value < 10_000:
        return f"{value:.0f}"
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return _fio_significant(value / scale) + unit
    return f"{value:.0f}"


def _fio_bytes(value: float, base: int) -> str:
    """Bytes as fio prints them: 221MiB (base 1024) or 232MB (base 1000)."""
    units = ("B", "KiB", "MiB", "GiB", "TiB") if base == 1024 else ("B", "kB", "MB", "GB", "TB")
    power = 0
    while value >= base and power < len(units) - 1:
        value /= base
        power += 1
    return (f"{value:.0f}" if power == 0 else _fio_significant(value)) + units[power]
