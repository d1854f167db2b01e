"""``nandlab trace``: what block I/O traces hold (``stats``) and a trace replayed on a simulated
drive (``replay``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from nandlab import traces
from nandlab.cli import options
from nandlab.cli.console import show, wrote
from nandlab.cli.errors import Cli
from nandlab.cli.run import RUN_OUT, run_with_snapshots
from nandlab.procedures import trace as trace_procedures

FORMAT = click.Choice(traces.FORMATS)


@click.group("trace", cls=Cli, short_help="Real block I/O traces: what they hold, and replays on a simulated drive.")
def trace_group() -> None:
    """Block I/O traces recorded on real systems (MSR, UMass/SPC, blkparse, fio iolog, DiskSim/MQSim/
    SSDsim ASCII, FIU, Alibaba, Tencent; gzip, bzip2 or zstd)."""


@trace_group.command("stats", short_help="What a trace holds: composition, sizes, footprint, reuse.")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path), metavar="FILE...")
@click.option("--format", "trace_format", type=FORMAT, help="The traces' format (default: detected).")
@click.option("--skip-bad", is_flag=True, help="Pass over malformed lines and count them (default: stop at the first).")
@click.option("--json", "as_json", is_flag=True,
              help="Print only the result as JSON on stdout (several files: {\"traces\": [...]}).")
@options.out("Write stats.json, size_histogram.csv, reuse_cdf.csv and trace-stats.png to DIR "
             "(several files: one directory each, plus composition.csv and reuse.png comparing them).")
def trace_stats(files: tuple[Path, ...], trace_format: str | None, skip_bad: bool, as_json: bool,
                out: Path | None) -> None:
    """What a trace holds: records, bytes, the read/write and random/sequential composition (the
    ZombieNAND paper's Table III), request sizes, inter-arrival times, footprint, address reuse
    (its Fig. 4). Several files: one Table III row each, and their reuse curves side by side."""
    result = trace_procedures.stats(list(files), format=trace_format, skip_bad=skip_bad)
    show(result, as_json)
    if out is None:
        return
    paths = result.write(out)
    if isinstance(result, trace_procedures.TraceComparison):
        for file in files:  # each trace's own directory gets its report, then the comparison
            wrote([], out / file.name)
    wrote(paths, out)


@trace_group.command("replay", short_help="Replay a trace on a simulated drive.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@options.device()
@options.capacity()
@click.option("--format", "trace_format", type=FORMAT, help="The trace's format (default: detected).")
@click.option("--queue-depth", type=options.QUEUE_DEPTH, metavar="N",
              help="Closed loop: keep N requests in flight, as fast as the drive takes them (default 1).")
@click.option("--timed", is_flag=True, help="Open loop: issue each request at its recorded time.")
@click.option("--time-scale", type=options.Finite(min=0, min_open=True), metavar="X",
              help="With --timed: multiply the recorded gaps by X (0.5: twice as fast).")
@click.option("--remap", type=click.Choice(["modulo", "compact"]),
              help="Fit addresses to the drive: modulo its capacity (default), or distinct addresses in order of "
              "first use.")
@click.option("--unique-bytes", metavar="SIZE",
              help="Use only the first SIZE of distinct addresses (ZombieNAND's rule; implies --remap compact).")
@click.option("--devices", metavar="IDS", callback=options.device_ids,
              help="Only these devices / volumes / ASUs, e.g. 0,3.")
@click.option("--loop", "looping", is_flag=True, help="Replay the trace again when it ends (with --volume).")
@click.option("--volume", metavar="SIZE", help="Stop after this much data (e.g. 64GiB).")
@click.option("--skip-bad", is_flag=True, help="Pass over malformed lines and count them.")
@click.option("--seed", type=options.SEED, default=1, show_default=True, metavar="N")
@options.AS_JSON
@options.out(RUN_OUT)
@options.QUIET
@options.snapshot_options
def trace_replay(file: Path, device: str, capacity: str | None, seed: int, out: Path | None, as_json: bool,
                 quiet: bool, snapshot: Path | None, snapshot_every: str | None, force: bool, **phase: Any) -> None:
    """Replay a trace on a simulated drive (a [[phase]] with kind = "trace")."""
    run_with_snapshots(
        lambda **how: trace_procedures.replay(file, device, capacity, run={"seed": seed, **how}, **phase),
        out, as_json, quiet, snapshot, snapshot_every, force,
    )
