"""``nandlab run`` and ``nandlab resume``: an experiment (every phase of a config on one drive) with
a progress bar, its table or JSON and its ``--out``; stopped into a snapshot and gone on with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from nandlab import api, slicing
from nandlab.cli import options
from nandlab.cli.console import LazyProgress, show
from nandlab.cli.errors import sigterm_stops_run
from nandlab.procedures import run as run_procedure
from nandlab.procedures.lifetime import LifetimeRun
from nandlab.terminal import printable, safe

RUN_OUT = ("Write summary.json, config.json, rerun.toml (the config to run it again), timeseries.parquet/.csv, "
           "throughput_latency.png and report.html to DIR.")


@click.command("run", short_help="Run an experiment (the built-in default without CONFIG.toml).")
@click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path), metavar="[CONFIG.toml]")
@options.out(RUN_OUT)
@options.AS_JSON
@click.option("--seed", type=options.SEED, metavar="N", help="Override the config's seed.")
@options.QUIET
@options.snapshot_options
def run(config: Path | None, seed: int | None, **output: Any) -> None:
    """Run the experiment in CONFIG.toml (the built-in default without one).

    Each [[phase]] runs in order on the same drive; a table of results follows.
    """
    run_with_snapshots(lambda **how: run_procedure.run(config, seed=seed, **how), **output)


def run_with_snapshots(
    runner: Callable[..., run_procedure.RunResult],
    out: Path | None,
    as_json: bool,
    quiet: bool,
    snapshot: Path | None,
    snapshot_every: str | None,
    force: bool,
) -> None:
    """Run ``runner(progress=..., snapshot=..., ...)`` (a run of a config) with a progress bar; print
    its table or JSON; write ``--out``."""
    options.check_snapshot_options(snapshot, snapshot_every, force)
    stderr = Console(stderr=True, quiet=quiet)
    # What `nandlab resume` needs to finish the job as this command would have.
    notes = {"out": None if out is None else str(out.resolve()), "json": as_json}
    with LazyProgress(stderr) as progress, sigterm_stops_run(snapshot is not None):
        result = runner(progress=progress, snapshot=snapshot, snapshot_every=snapshot_every, notes=notes,
                        overwrite_snapshot=force)
    show_run(result, as_json, out, stderr)


def show_run(result: run_procedure.RunResult, as_json: bool, out: Path | None, stderr: Console) -> None:
    """``show`` a run's result; with ``as_json`` stdout is the JSON alone, and what the tables' notes
    say goes to stderr, a line each."""
    show(result, as_json, out, stderr)
    if as_json:
        for note in result.notes():
            stderr.print(f"[yellow]note:[/] {safe(note)}", soft_wrap=True, highlight=False)


@click.command("resume", short_help="Go on with a run from its snapshot (nandlab run --snapshot).")
@click.argument("snapshot", type=click.Path(dir_okay=False, path_type=Path), metavar="SNAPSHOT")
@options.out("Write the results to DIR (the run's own --out is named, never used unless given again).")
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON (also if the run had --json).")
@options.QUIET
def resume(snapshot: Path, out: Path | None, as_json: bool, quiet: bool) -> None:
    """Go on with the run whose state is in SNAPSHOT, where it stopped; it ends with the same
    results the run would have had (and keeps writing SNAPSHOT as the run did).

    A damaged, truncated or foreign file, or one from another nandlab version, is refused.
    """
    stderr = Console(stderr=True, quiet=quiet)
    paused = api.open_snapshot(snapshot)
    # What `nandlab run` or `lifetime` kept (a snapshot written from Python keeps its caller's notes). Files
    # go only where this command line says: a snapshot (perhaps someone else's) never chooses a directory.
    kept_out = paused.notes.get("out")
    # A lifetime's approximate mode: its figures scale (the notes checked against the snapshot's drive).
    sliced = slicing.from_notes(paused.notes.get("slice"), paused.simulator.device)
    as_json = as_json or paused.notes.get("json") is True
    names = paused.simulator.phase_names
    if stderr.is_terminal:  # where a script reads stderr, a run that fails says one line
        stderr.print(f"resuming phase {paused.phase + 1}/{len(names)} {safe(printable(names[paused.phase]))} "
                     f"from {safe(printable(str(snapshot)))}", highlight=False)
    with LazyProgress(stderr) as progress, sigterm_stops_run(True):
        result = paused.go_on(progress)
    if paused.notes.get("command") == "lifetime":
        show(LifetimeRun.of(result, sliced), as_json, out, stderr)
    else:
        show_run(run_procedure.RunResult(result), as_json, out, stderr)
    if out is None and isinstance(kept_out, str) and kept_out:
        stderr.print(safe(f"the run was given --out {printable(kept_out)}: its files are written only where the "
                          "command line says (nandlab resume SNAPSHOT --out DIR)"), style="yellow", highlight=False)
