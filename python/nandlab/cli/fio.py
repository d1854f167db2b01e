"""``nandlab fio``: a fio job file on a simulated drive, with fio's report or fio's JSON."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from nandlab import fio
from nandlab.cli import options
from nandlab.cli.console import LazyProgress, show
from nandlab.procedures import fio as fio_procedure
from nandlab.terminal import printable, safe


@click.command("fio")
@click.argument("jobfile", type=click.Path(dir_okay=False, path_type=Path))
@options.device()
@options.capacity()
@click.option("--seed", type=options.SEED, metavar="N", help="Override the job file's randseed.")
@click.option("--json", "as_json", is_flag=True, help="Print only fio-style JSON on stdout.")
@options.out("Also write fio.json and the run's summary.json, timeseries and PNG to DIR.")
@options.QUIET_BAR
def fio_command(jobfile: Path, device: str, capacity: str | None, seed: int | None, as_json: bool,
                out: Path | None, quiet: bool) -> None:
    """Run a fio job file on a simulated drive. Jobs run together, each with its own queue, as fio
    runs them; a job with stonewall waits for the ones before it. fio's output (IOPS, BW,
    completion-latency percentiles), or its JSON with --json. Options that mean nothing without a
    real device, or that nandlab does not model, are named in warnings."""
    jobs = fio.load(jobfile)
    stderr = Console(stderr=True)
    for warning in jobs.warnings:
        stderr.print(f"[yellow]warning:[/] {safe(printable(warning))}", soft_wrap=True, highlight=False)
    with LazyProgress(Console(stderr=True, quiet=quiet)) as progress:
        result = fio_procedure.run(jobs, device, capacity, seed=seed, progress=progress)
    show(result, as_json, out, stderr)
