"""``nandlab matrix``: SNIA-style performance matrices with a progress bar over their runs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from nandlab import matrix as matrices
from nandlab.cli import options
from nandlab.cli.console import progress_bar, show
from nandlab.cli.errors import Failure
from nandlab.procedures import matrix as matrix_procedure
from nandlab.terminal import safe


@click.command("matrix", short_help="SNIA-style matrices: IOPS and MB/s over R/W mix x block size, burst and steady.")
@options.device()
@options.capacity("1GiB")
@click.option("--mixes", default="100/0,75/25,50/50,25/75,0/100", show_default=True, metavar="R/W,...",
              help="Read/write mixes, % of the bytes moved.")
@click.option("--block-sizes", default="512B,4KiB,8KiB,16KiB,32KiB,64KiB,128KiB,256KiB,512KiB,1MiB",
              show_default=True, metavar="SIZE,...", help="Block sizes of the random I/O.")
@click.option("--states", default="burst,steady", show_default=True, metavar="STATE,...",
              help="burst (a fresh drive) and/or steady (SNIA PTS: precondition, rounds until steady).")
@click.option("--queue-depth", type=options.QUEUE_DEPTH, default=32, show_default=True, metavar="N",
              help="Requests in flight.")
@click.option("--burst-volume", type=options.Finite(min=0, min_open=True), default=0.05, show_default=True,
              metavar="X", help="Host data per burst cell, x the capacity.")
@click.option("--round-volume", type=options.Finite(min=0, min_open=True), default=0.25, show_default=True,
              metavar="X", help="Host data written per steady-state round (read, for reads only), x the capacity.")
@click.option("--max-rounds", type=click.IntRange(5, 1000), default=25, show_default=True, metavar="N",
              help="Steady-state rounds per cell at most (SNIA PTS: 25).")
@click.option("--scaling/--no-scaling", default=True, show_default=True,
              help="Also measure bandwidth vs die count (1 MiB random reads and writes).")
@options.all_cores("Runs at once (each cell is a run on its own drive).")
@click.option("--seed", type=options.SEED, default=1, show_default=True, metavar="N")
@options.AS_JSON
@options.out("Write matrix.parquet, matrix.csv, scaling.csv, result.json and PNGs to DIR.")
@options.QUIET
def matrix_command(device: str, capacity: str | None, mixes: str, block_sizes: str, states: str, as_json: bool,
                   out: Path | None, quiet: bool, **settings: Any) -> None:
    """SNIA-style performance matrices (the SNIA tutorial, REFERENCE.md section 2): IOPS and MB/s of
    random I/O over read/write mix x block size, on a fresh drive (burst) and in steady state (SNIA
    PTS: two capacities of 128 KiB sequential writes, then rounds until five in a row are within
    10 %), beside the tutorial's theoretical bandwidth; and bandwidth vs die count."""
    parsed: dict[str, Any] = {}
    for option, parse, text in (("--mixes", matrices.parse_mixes, mixes),
                                ("--block-sizes", matrices.parse_block_sizes, block_sizes),
                                ("--states", matrices.parse_states, states)):
        try:
            parsed[option] = parse(text)
        except ValueError as error:
            raise Failure(f"{option}: {error}", 2) from None
    stderr = Console(stderr=True, quiet=quiet)
    started = time.monotonic()
    # Drawn from the first finished run on (a bad device or capacity fails before any).
    bar = progress_bar(
        stderr, TextColumn("matrix runs"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
        TimeElapsedColumn(), TimeRemainingColumn(),
    )
    task = bar.add_task("", total=None)

    def step(done: int, total: int, label: str) -> None:
        if not bar.live.is_started and not quiet:
            bar.start()
        bar.update(task, completed=done, total=total, description=safe(label))

    try:
        result = matrix_procedure.run(device, capacity, mixes=parsed["--mixes"], block_sizes=parsed["--block-sizes"],
                                      states=parsed["--states"], on_step=step, **settings)
    finally:
        if bar.live.is_started:
            bar.stop()
    wall = time.monotonic() - started
    show(result, as_json, out, stderr)
    stderr.print(f"matrix: {wall:.1f} s wall", highlight=False)
