"""Block I/O traces recorded on real systems: what a trace holds, read in one streaming pass by the
engine (constant memory but for the footprint's block counts)::

    from nandlab import traces

    s = traces.stats("msr_rsrch_1.csv")            # format detected; or format="msr"
    s["format"], s["records"], s["write_percent"], s["write_sequential_percent"]
    s["reuse_cdf"]                                  # [[share of the footprint, share of accesses], ...]

Formats (``traces.FORMATS``): MSR Cambridge CSV, UMass/SPC, blkparse text, fio iolog v2 and v3,
DiskSim, MQSim and SSDsim ASCII, FIU, Alibaba 2020, Tencent CBS; gzip, bzip2 and zstd files are
decompressed on the fly. A malformed line stops the read with the file, the line number and the
format expected (``TraceError``), unless ``skip_bad`` passes over it and counts it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from nandlab import api
from nandlab._core import TraceError, trace_formats, trace_stats
from nandlab.arguments import checked
from nandlab.terminal import shown

__all__ = ["FORMATS", "TraceError", "replay_phase", "stats", "write_comparison", "write_composition", "write_stats"]

FORMATS = tuple(trace_formats())


@checked
def stats(path: str | os.PathLike[str], format: str | None = None, skip_bad: bool = False) -> dict[str, Any]:
    """The trace's summary: ``format``, ``records``, ``reads``, ``writes``, ``trims``, ``read_bytes``,
    ``write_bytes``; the ZombieNAND paper's Table III composition (``read_percent``,
    ``write_percent`` of the bytes moved; ``read_random_percent``, ``read_sequential_percent``,
    ``write_random_percent``, ``write_sequential_percent`` of each kind's bytes — sequential: it
    starts where the previous request of its kind on its device ended); ``devices``;
    ``duration_seconds``; ``interarrival_us`` (p50 ... max; gaps above an hour count as an hour);
    ``size_histogram`` (``[bytes at least, requests, reads, writes]`` per power of two);
    ``footprint_bytes`` and ``write_footprint_bytes`` (distinct 4 KiB blocks); the address-reuse CDFs
    of the paper's Fig. 4, ``reuse_cdf`` and ``write_reuse_cdf``; ``skipped_lines``.

    Raises:
        TraceError: unreadable file, unknown or undetectable format, a malformed line, no records.
    """
    if format is not None and format not in FORMATS:
        raise TraceError(f"unknown trace format `{format}`, expected one of: {', '.join(FORMATS)}")
    return trace_stats(Path(path), format=format, skip_bad=skip_bad)


@checked
def replay_phase(
    path: str | os.PathLike[str],
    trace_format: str | None = None,
    queue_depth: int | None = None,
    timed: bool = False,
    time_scale: float | None = None,
    remap: str | None = None,
    unique_bytes: str | None = None,
    devices: Sequence[int] | None = None,
    looping: bool = False,
    volume: str | None = None,
    skip_bad: bool = False,
    until: str | None = None,
) -> dict[str, Any]:
    """A ``[[phase]]`` replaying a trace (``kind = "trace"``), with only the keys given, checked as a run
    reads them (ConfigError naming the key: a missing trace, a queue depth of −1, a nan time scale)."""
    phase: dict[str, Any] = {"name": Path(path).name, "kind": "trace", "trace": str(Path(path).resolve())}
    optional = {
        "format": trace_format,
        "queue_depth": queue_depth,
        "replay": "timed" if timed else None,
        "time_scale": time_scale,
        "remap": remap,
        "unique_bytes": unique_bytes,
        "devices": list(devices) if devices else None,
        "loop": looping or None,
        "volume": volume,
        "skip_bad": skip_bad or None,
        "until": until,
    }
    phase.update({key: value for key, value in optional.items() if value is not None})
    api.check_config({"device": {"preset": "snia-slc"}, "phase": [phase]})  # any drive checks a trace phase
    return phase


@checked
def write_stats(summary: dict[str, Any], out: Path) -> list[Path]:
    """Write ``stats.json``, ``size_histogram.csv``, ``reuse_cdf.csv`` and ``trace-stats.png`` to ``out``."""
    from nandlab import output, plots  # matplotlib only when drawing

    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in ("stats.json", "size_histogram.csv", "reuse_cdf.csv", "trace-stats.png")]
    document, sizes, cdf, png = paths
    document.write_text(output.to_strict_json(summary) + "\n", encoding="utf-8")
    pl.DataFrame(summary["size_histogram"], schema=["bytes", "requests", "reads", "writes"], orient="row").write_csv(
        sizes
    )
    frames = [
        pl.DataFrame(summary[key], schema=["footprint_share", "access_share"], orient="row").with_columns(
            accesses=pl.lit(name)
        )
        for key, name in (("reuse_cdf", "all"), ("write_reuse_cdf", "writes"))
        if summary[key]
    ]
    pl.concat(frames).write_csv(cdf)
    plots.trace_stats(summary, png, title=shown(out.name))  # a name as the user typed it, control characters escaped
    return paths


COMPOSITION_COLUMNS = (
    "format", "records", "read_bytes", "write_bytes", "write_percent", "write_random_percent",
    "write_sequential_percent", "read_percent", "read_random_percent", "read_sequential_percent",
    "footprint_bytes", "write_footprint_bytes", "duration_seconds",
)


@checked
def write_comparison(summaries: dict[Path, dict[str, Any]], out: Path) -> list[Path]:
    """Several traces: each one's files in ``out/NAME/``, plus ``composition.csv`` (one Table III row
    per trace) and ``reuse.png`` (their address-reuse curves, as the paper's Fig. 4)."""
    for file, summary in summaries.items():
        write_stats(summary, out / file.name)
    return write_composition(summaries, out)


@checked
def write_composition(summaries: dict[Path, dict[str, Any]], out: Path) -> list[Path]:
    """``composition.csv`` (one Table III row per trace) and ``reuse.png`` (their address-reuse
    curves, as the paper's Fig. 4) in ``out``."""
    from nandlab import plots  # matplotlib only when drawing

    out.mkdir(parents=True, exist_ok=True)
    table = out / "composition.csv"
    rows = [{"trace": file.name, **{k: s[k] for k in COMPOSITION_COLUMNS}} for file, s in summaries.items()]
    pl.DataFrame(rows).write_csv(table)
    png = out / "reuse.png"
    plots.reuse_curves({file.name: s for file, s in summaries.items()}, png)
    return [table, png]
