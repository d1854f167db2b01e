"""``nandlab run``: every ``[[phase]]`` of a config in order on one drive (``nandlab.run``); its
result is the ``nandlab.Result`` with the run's tables, its ``--out`` files (``output.write``) and
its report; a sweep runs it at each point."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import api, files, output, plausible
from nandlab.output import NONE, fixed, number
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.report.page import GIB, Report, fmt, gib, read_json, read_table
from nandlab.terminal import safe

FLASH_WAF_CAPTION = (
    " Flash WAF: the programs that reached the flash — the booked ones less those a power cut called off."
)
WAF_CAPTION = (
    "WAF = write amplification: flash pages programmed (host writes + garbage-collection copies) "
    "per page written by the host; 1.00 is ideal."
)
CLIPPED_CAPTION = "; a ▲ on a panel's top edge marks values beyond its scale (the note above it says the highest)"
"""Said under a run's time-series figures: how ``plots.clip_bursts`` shows what it clipped."""


@dataclass(frozen=True)
class RunResult(ProcedureResult):
    """A run of a config (``nandlab run``, ``resume``, ``trace replay``): its ``nandlab.Result``;
    ``kind`` is the procedure that ran it."""

    result: api.Result
    kind: str = "run"

    def to_dict(self) -> dict[str, Any]:
        return self.result.to_dict()

    def files(self, out: Path) -> list[Path]:
        return output.write(self.result, out)

    def print(self, console: Console) -> None:
        """The device, then the results table: one row per phase and the run total (with a column of
        when and why the drive died, if it did); then what power cuts did."""
        for line in output.device_lines(self.result.device):
            console.print(safe(line), highlight=False)
        cuts = any(phase.get("power_loss") for phase in self.result.phases)
        died = output.deaths(self.result.phases)
        if not any(died):
            died = []
        caption = WAF_CAPTION + (FLASH_WAF_CAPTION if cuts else "")
        table = Table(box=box.SIMPLE_HEAD, caption=caption, caption_justify="left", pad_edge=False, collapse_padding=True)
        table.add_column("Phase", overflow="fold")
        for header in (
            "Written\nGiB",
            "Read\nGiB",
            "IOPS",
            "MB/s",
            "WAF",
            *(["Flash\nWAF"] if cuts else []),
            "Avg\nW",
            "Sim\ns",
            "Wall\ns",
            "Mreq per\nwall-s",
        ):
            table.add_column(header, justify="right", overflow="fold")
        if died:
            table.add_column("Died", overflow="fold")
        for index, phase in enumerate(self.result.phases):
            jobs = phase.get("jobs", [])
            last = index == len(self.result.phases) - 1
            table.add_row(*_row(phase["name"], phase, cuts), *died[index:index + 1], end_section=last and not jobs)
            for n, job in enumerate(jobs, 1):
                row = _job_row(job)
                table.add_row(*(row[:6] + [""] + row[6:] if cuts else row), *([""] if died else []), style="dim",
                              end_section=last and n == len(jobs))
        total = _row("total", self.result.summary, cuts)
        table.add_row(*total, *[cell for cell in died if cell], style="bold")
        console.print(table)
        _latency_table(console, self.result)
        _bit_error_table(console, self.result)
        for note in self.notes():
            # Into a file or a pipe a note is one line: wrapped at 80 columns it broke a key (`[ftl]
            # map_extents ⏎= false`) a reader would copy.
            console.print(safe(note), style="yellow", highlight=False, soft_wrap=not console.is_terminal)
        _power_cut_tables(console, self.result)

    def notes(self) -> list[str]:
        """What the tables alone do not say: trace lines skipped, map lookups extents answered, reads of
        never-written addresses, a drive worn out and the phases it did not live to run (under the
        tables; on stderr with --json)."""
        return (output.skipped_trace_lines(self.result.phases) + output.map_extent_lines(self.result.phases)
                + output.unwritten_read_lines(self.result.phases, RUN_UNWRITTEN_HOW)
                + output.wear_out_lines(self.result.summary)
                + output.unrun_phase_lines(self.result.phases, self.result.config["phases"]))

    @classmethod
    def report(cls, directory: Path) -> Report:
        return run_report(directory)


RUN_UNWRITTEN_HOW = 'write the drive first (a [[phase]] with kind = "fill" before the reads)'
"""How a run preconditions a drive, said when reads found addresses never written."""


def run(config: api.ConfigSource = None, seed: int | None = None, **options: Any) -> RunResult:
    """``nandlab.run`` (progress, snapshots and notes as it takes them) as a procedure's result."""
    return RunResult(api.run(config, seed=seed, **options))


def sweep_point(config: dict[str, Any]) -> tuple[dict[str, Any], pl.DataFrame]:
    """A sweep's point: the run summary's figures, then each phase's as ``<phase>.<figure>``."""
    result = api.run(config)
    figures = _flat(result.summary)
    for phase in result.phases:
        figures.update({f"{phase['name']}.{k}": v for k, v in _flat(phase).items()})
    return figures, result.timeseries


PROCEDURE = Procedure("run", "nandlab run", RunResult, run, sweep=sweep_point)


def _power_cut_tables(console: Console, result: api.Result) -> None:
    """For phases with power cuts: what the cuts did, why the config may lose writes, the first lost."""
    rows = output.power_cut_rows(result.phases)
    if not rows:
        return
    table = Table(box=box.SIMPLE_HEAD, title="Power cuts", caption_justify="left")
    for header in rows[0]:
        two_lines = header.replace(" units lost", "\nunits lost").replace(" lost / ", "\nlost / ")
        two_lines = two_lines.replace("Units moved", "Units\nmoved").replace(" ms ", " ms\n")
        two_lines = two_lines.replace("Programs called", "Programs\ncalled").replace("Time rec", "Time\nrec")
        if header == "Why":
            table.add_column(header, min_width=16, ratio=1)
        else:
            table.add_column(two_lines, justify="left" if header == "Phase" else "right", no_wrap=True)
    for row in rows:
        table.add_row(*map(safe, row.values()))
    console.print(table)
    verdict = output.power_cut_verdict(result.phases)
    console.print(safe(verdict), style="yellow" if "unsafe" in verdict else None)
    caveat = output.power_cut_caveat(result.phases)
    if caveat:
        console.print(safe(caveat), style="yellow")
    for line in output.lost_writes(result.phases, result.device, 5):
        console.print(safe(f"  lost: {line}"), highlight=False)


def _row(label: str, summary: dict[str, Any], cuts: bool = False) -> list[str]:
    """One table row from a summary dict (with ``cuts``, the flash WAF beside the booked one)."""
    return [
        safe(label),
        number((summary["host_write_bytes"] + summary.get("fill_bytes", 0)) / GIB),
        number(summary["host_read_bytes"] / GIB),
        number(summary["iops"]),
        number(summary["mbps"]),
        fixed(summary["waf"]),
        *([fixed((summary.get("power_loss") or {}).get("flash_waf"))] if cuts else []),
        fixed(summary["average_power_w"] if summary["sim_seconds"] else None),
        number(summary["sim_seconds"]),
        number(summary["wall_seconds"]),
        number(summary["requests_per_wall_second"] / 1e6),
    ]


def _job_row(job: dict[str, Any]) -> list[str]:
    """A ``[[phase.job]]``'s row under its phase: its own requests (the drive's WAF and wall time are
    the phase's)."""
    return [
        safe(f"  └ {job['name']}"),
        number(job["host_write_bytes"] / GIB),
        number(job["host_read_bytes"] / GIB),
        number(job["iops"]),
        number(job["mbps"]),
        "",
        "",
        number(job["sim_seconds"]),
        "",
        "",
    ]


def _erase_count_histogram(summary: dict[str, Any], path: Path) -> list[list[int]]:
    """The summary's ``erase_count_histogram`` ([erase count, blocks] pairs of whole numbers); ValueError
    naming ``path`` if it is not one a drive could have."""
    histogram = summary.get("erase_count_histogram") or []
    if not isinstance(histogram, list) or len(histogram) > api.MAX_HISTOGRAM:
        size = f"of {len(histogram):,} counts" if isinstance(histogram, list) else f"that is a {type(histogram).__name__}"
        raise ValueError(f"{path}: an erase-count histogram {size}; a drive's is a list of at most {api.MAX_HISTOGRAM:,} "
                         "[erase count, blocks] pairs (one per erase count its blocks reached)")
    for pair in histogram:
        if not (isinstance(pair, list) and len(pair) == 2
                and all(type(n) is int and 0 <= n < 2**53 for n in pair)):
            raise ValueError(f"{path}: erase_count_histogram: expected [erase count, blocks] pairs of whole numbers "
                             f"from 0 to 2^53, found {str(pair)[:60]}")
    return histogram


BIT_ERROR_FIGURES = (("RBER mean", "rber_mean", "{:.2e}"), ("RBER p99", "rber_p99", "{:.2e}"),
                     ("Retries/read", "retries_per_read", "{:.3g}"), ("Soft decodes", "soft_decodes", "{:,}"),
                     ("Uncorrectable", "uncorrectable_reads", "{:,}"), ("UBER", "uber", "{:.2e}"),
                     ("Reclaims", "read_reclaims", "{:,}"), ("Refreshes", "refreshes", "{:,}"))
"""The bit-error table's columns: header, summary key, format."""


def _bit_error_table(console: Console, result: api.Result) -> None:
    """With ``[device.errors]``: what bit errors did in each phase that read (and the run)."""
    rows = [(p["name"], p) for p in result.phases if p.get("ecc_page_reads")]
    if not rows:
        return
    target = result.summary["uber_target"]
    table = Table(box=box.SIMPLE_HEAD, title="Bit errors", title_justify="left", caption_justify="left",
                  caption=f"UBER: expected uncorrectable errors per bit read (target {target:.0e}).")
    table.add_column("Phase", overflow="fold")
    for header, _, _ in BIT_ERROR_FIGURES:
        table.add_column(header, justify="right", overflow="fold")
    for name, p in [*rows, ("total", result.summary)]:
        table.add_row(safe(name), *(fmt.format(p[key]) for _, key, fmt in BIT_ERROR_FIGURES),
                      style="bold" if name == "total" else None)
    console.print(table)


LATENCY_FIGURES = ("mean", "p50", "p99", "p999", "max")

#: A max this many times its p99.9 is a stall the percentiles hide: the table says so.
STALL_FACTOR = 10


def _latency_table(console: Console, result: api.Result) -> None:
    """Read and write latency of every phase (and its jobs): mean, p50, p99, p99.9 and max in µs;
    then a line for each max far beyond its p99.9."""
    rows = [(p["name"], p) for p in result.phases if _has_requests(p)]
    for phase in result.phases:
        rows += [(f"{phase['name']} └ {j['name']}", j) for j in phase.get("jobs", []) if _has_requests(j)]
    if not rows:
        return
    cells = {op: [[number(s[key][f]) if _measured(s[key]) else NONE for f in LATENCY_FIGURES] for _, s in rows]
             for op, key in (("Read", "read_latency_us"), ("Write", "write_latency_us"))}
    # Both directions side by side if their figures fit the terminal beside the phase names (up to 20
    # characters of them); else a table each, so that no figure is broken over two lines.
    widths = [max(len(row[i]) for row in cells[op]) for op in cells for i in range(len(LATENCY_FIGURES))]
    names = min(20, max(len(label) for label, _ in rows))
    if names + sum(max(w, 5) + 1 for w in widths) <= console.width:
        tables = [("Latency µs", ("Read", "Write"))]
    else:
        tables = [(f"{op} latency µs", (op,)) for op in cells if any(row[0] != NONE for row in cells[op])]
    for title, ops in tables:
        table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False, collapse_padding=True)
        table.add_column("Phase", overflow="fold")
        for op in ops:
            for figure in LATENCY_FIGURES:
                table.add_column(f"{op}\n{'p99.9' if figure == 'p999' else figure}", justify="right", no_wrap=True)
        for index, (label, _) in enumerate(rows):
            if len(ops) == 1 and cells[ops[0]][index][0] == NONE:
                continue  # a table of one direction: the rows that had it
            table.add_row(safe(label), *(cell for op in ops for cell in cells[op][index]))
        console.print(table)
    for line in _stall_lines(rows):
        console.print(safe(line), style="yellow", highlight=False)


def _measured(latency: Mapping[str, Any] | None) -> bool:
    """Whether a direction's latencies are figures: None without a request (a summary written before
    nandlab wrote null there has them all 0)."""
    return bool(latency) and bool(latency.get("max"))


def _has_requests(s: dict[str, Any]) -> bool:
    return _measured(s["read_latency_us"]) or _measured(s["write_latency_us"])


def _stall_lines(rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """A line for each (label, summary) whose read or write max is more than ``STALL_FACTOR`` times
    its p99.9: the few requests the percentiles leave out."""
    lines = []
    for label, s in rows:
        for op in ("read", "write"):
            lat = s[f"{op}_latency_us"]
            if _measured(lat) and lat["max"] > STALL_FACTOR * max(lat["p999"], 1.0):
                lines.append(
                    f"{label}: {op} max {number(lat['max'])} µs is {lat['max'] / max(lat['p999'], 1.0):,.0f}× "
                    f"its p99.9 — a few requests stalled (the time series' {op}_max_us shows when)"
                )
    return lines


def run_report(d: Path, extra: Callable[[Report], None] | None = None, kind: str = "run") -> Report:
    """A run's report; ``extra`` adds a procedure's own tables after the power cuts (a fio job file's,
    a served drive's connections), ``kind`` names what wrote it."""
    from nandlab import plots

    summary = read_json(d / output.SUMMARY_JSON)
    ts = output.read_timeseries(d / output.TIMESERIES_PARQUET)
    config = read_json(d / output.CONFIG_JSON, figures=False) if (d / output.CONFIG_JSON).exists() else {}
    device = summary.get("device", {})
    total = summary.get("summary") or {**summary, "name": "total"}
    phases = summary.get("phases", [])
    names = [p["name"] for p in phases]
    blocks = device.get("blocks") if isinstance(device, dict) else None
    if isinstance(blocks, int):  # no more blocks than the drive has, free, bad or in a histogram
        for figures in (total, *phases):
            wrong = plausible.blocks_problem(figures, blocks) if isinstance(figures, dict) else None
            if wrong is not None:
                raise ValueError(f"{d / output.SUMMARY_JSON}: {wrong}")
    r = Report(d, f"Run: {config.get('description') or device.get('preset') or 'a custom drive'}",
               kind)
    if device:
        for line in output.device_lines(device):
            name, _, value = line.partition(":")
            r.fact(name.lower(), value.strip())
    r.fact("host data", f"{gib(total['host_write_bytes'] + total.get('fill_bytes', 0))} GiB written "
           f"({gib(total['host_write_bytes'])} GiB by requests), {gib(total['host_read_bytes'])} GiB read")
    r.fact("WAF", fmt(total["waf"]))
    r.fact("simulated", f"{fmt(total['sim_seconds'])} s in {len(phases)} phases ({', '.join(names)})")
    for line in output.wear_out_lines(total):
        name, _, value = line.partition(": ")
        r.fact(name, value)
    rows = [_summary_row(p) for p in phases] + [_summary_row(total)]
    died = output.deaths(phases)
    if any(died):  # when and why the drive died, on its phase's row and the total's
        for row, cell in zip(rows, [*died, *[cell for cell in died if cell]]):
            row["died"] = cell
    r.table("Summary", rows,
            note=" ".join(["Written: host writes and fill. WAF: flash pages programmed per page the host wrote. "
                           "Latencies in µs. MB/s = 10^6 bytes per simulated second.",
                           *(f"{n}." for n in output.skipped_trace_lines(phases) + output.map_extent_lines(phases))]))
    for phase in phases:
        if phase.get("jobs"):
            r.table(f"Jobs of {phase['name']}", [_summary_row(j) for j in phase["jobs"]])
    _power_cuts(r, d, phases, device)
    if extra:
        extra(r)
    heading = "Throughput and latency"
    caption = "throughput and latency percentiles against host data written, phases marked" + CLIPPED_CAPTION
    if (d / output.THROUGHPUT_LATENCY_PNG).exists():
        r.figure(heading, d / output.THROUGHPUT_LATENCY_PNG, caption)
    elif ts.height:
        path = r.figure_path("throughput-latency.png")
        plots.timeseries_panels(ts, (plots.THROUGHPUT, plots.LATENCY), path, phases=names)
        r.figure(heading, path, caption)
    if ts.height:
        path = r.figure_path("throughput-latency-time.png")
        plots.timeseries_panels(ts, (plots.THROUGHPUT, plots.LATENCY), path, phases=names, x="time",
                                title="throughput and latency over simulated time")
        r.figure(heading, path, "the same against simulated time, where a phase that only reads (or waits) has its "
                 "width" + CLIPPED_CAPTION)
        if ts["phase"].n_unique() > 1:
            path = r.figure_path("throughput-latency-phases.png")
            plots.timeseries_panels(ts, (plots.THROUGHPUT, plots.LATENCY), path, phases=names, x="phase",
                                    title="throughput and latency phase by phase")
            r.figure(heading, path, "the same with every phase the same width, across the data it moved (its "
                     "simulated time if it moved none): a short phase, or one that stalled, is no sliver"
                     + CLIPPED_CAPTION)
    drive = plots.with_data(ts, (plots.WAF, plots.FREE_BLOCKS, plots.BIT_MODES, plots.WEAR, plots.PSLC,
                                 plots.POWER, plots.BIT_ERRORS, plots.RETRIES))
    if ts.height and drive:
        axes = [("written", "drive.png", "host data written"), ("time", "drive-time.png", "simulated time")]
        if ts["phase"].n_unique() > 1:  # a short phase is no sliver: each the same width
            axes.append(("phase", "drive-phases.png", "each phase's data moved (or time), phases the same width"))
        for x, name, against in axes:
            path = r.figure_path(name)
            plots.timeseries_panels(ts, drive, path, phases=names, x=x, title=f"the drive over the run ({against})")
            r.figure("The drive over the run", path, f"{', '.join(p.label for p in drive)} against {against}"
                     + CLIPPED_CAPTION)
    histogram = _erase_count_histogram(summary, d / output.SUMMARY_JSON)
    if histogram:
        r.table("Erase counts", [{"blocks": sum(n for _, n in histogram), **(summary.get("erase_count") or {})}])
        path = r.figure_path("erase-counts.png")
        plots.distribution(histogram, path, "erase count", "blocks", title="erase counts at the end of the run")
        r.figure("Erase counts", path, "blocks per erase count at the end of the run, and its CDF")
    if device:
        r.pairs("Device", [(k, output.device_value(k, v)) for k, v in device.items()
                           if not isinstance(v, (dict, list))])
    rerun = d / output.RERUN_TOML
    if rerun.is_file():
        r.text("Configuration", files.read_text(rerun, "config"),
               f"as the run was given it, with its seed (and its traces' paths made absolute): "
               f"`nandlab run {rerun}` runs it again from anywhere")
    if config:
        r.text("Configuration (resolved)", output.as_toml(config),
               "every value the engine used, presets applied and defaults filled in (config.json), in TOML "
               "for reading: its layout is the engine's, not a config file's"
               + (f" — {output.RERUN_TOML} is the file to run" if rerun.is_file() else ""))
    return r


def _power_cuts(r: Report, d: Path, phases: list[dict[str, Any]], device: dict[str, Any]) -> None:
    """What the run's power cuts did: per phase, each cut over time, the acknowledged writes lost."""
    from nandlab import plots

    rows = output.power_cut_rows(phases)
    if not rows:
        return
    caveat = output.power_cut_caveat(phases)
    r.table("Power cuts", rows, note=output.power_cut_verdict(phases) + (f" {caveat}" if caveat else "")
            + " Units are the drive's mapping units; every cut is a row of power_losses.parquet and .csv.")
    if (d / output.POWER_LOSSES_PARQUET).exists():
        path = r.figure_path("power-cuts.png")
        plots.power_cuts(read_table(d / output.POWER_LOSSES_PARQUET, "power cut table"), path)
        r.figure("Each power cut", path, "recovery time and units lost or moved, cut by cut, over simulated time")
    lost = output.lost_writes(phases, device, 50)
    if lost:
        r.text("Acknowledged writes lost (the first 50)", "\n".join(lost))


def _summary_row(s: Mapping[str, Any]) -> dict[str, Any]:
    """A phase's, job's or the run's figures as a table row."""
    return {
        "phase": s["name"],
        "kind": s.get("kind", "job"),
        "written GiB": (s["host_write_bytes"] + s.get("fill_bytes", 0)) / GIB,
        "read GiB": s["host_read_bytes"] / GIB,
        "IOPS": s["iops"],
        "MB/s": s["mbps"],
        "WAF": s.get("waf"),
        "avg W": s.get("average_power_w") if s.get("sim_seconds") and "average_power_w" in s else None,
        "read p50 / p99 / p99.9": _percentiles(s["read_latency_us"]),
        "write p50 / p99 / p99.9": _percentiles(s["write_latency_us"]),
        "erases": s.get("erases"),
        "sim s": s["sim_seconds"],
        "wall s": s.get("wall_seconds"),
    }


def _percentiles(latency: Mapping[str, float] | None) -> str:
    """``p50 / p99 / p99.9`` in µs, or a dash when there was no such request."""
    if not _measured(latency):
        return output.NONE
    return " / ".join(output.number(latency[k]) for k in ("p50", "p99", "p999"))


LATENCY_KEYS = ("p50", "p90", "p99", "p999", "max", "mean", "min", "stddev", "percentiles")
"""A direction's latency figures in a summary (``read_latency_us``: None without a read)."""

_WALL_CLOCK = {"wall_seconds", "requests_per_wall_second"}
"""Figures that measure the machine, not the drive: kept in wall.parquet, out of the results."""


def _flat(summary: Mapping[str, Any]) -> dict[str, Any]:
    """A summary's figures as one flat dict: nested tables joined with ``_`` (``read_latency_us_p99``),
    lists as JSON text (``erase_count_histogram``); wall-clock figures left out."""
    flat: dict[str, Any] = {}
    for key, value in summary.items():
        if key in _WALL_CLOCK or key in ("jobs", "summary", "phases"):
            continue
        if value is None and key.endswith("_latency_us"):  # no request of the kind: each figure None
            flat.update({f"{key}_{k}": None for k in LATENCY_KEYS})
        elif isinstance(value, Mapping):
            flat.update({f"{key}_{k}": v for k, v in _flat(value).items()})
        elif isinstance(value, (list, tuple)):
            flat[key] = json.dumps(value)
        else:
            flat[key] = value
    return flat
