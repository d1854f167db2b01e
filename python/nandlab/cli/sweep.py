"""``nandlab sweep``: every point of a sweep file on this machine or a dask cluster, into one
Parquet dataset with its report; or its points listed."""

from __future__ import annotations

from pathlib import Path

import click
from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import sweep
from nandlab.cli import options
from nandlab.cli.errors import Failure, Terminated
from nandlab.procedures import sweep as sweep_procedure
from nandlab.progress_bars import RunsBar
from nandlab.terminal import printable, safe, stdout_console


@click.command("sweep", short_help="Run a parameter sweep: one run per grid point, on this machine or a dask cluster.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path), metavar="SWEEP.toml")
@options.out("Where the dataset goes (default: results/<sweep name>). Finished runs there are not run again.")
@click.option("--workers", type=options.WORKERS, default=None, show_default="all cores", metavar="N",
              help="Runs at once on this machine (processes).")
@click.option("--scheduler", metavar="tcp://HOST:PORT",
              help="Run on a dask.distributed cluster: its scheduler's address.")
@click.option("--local-cluster", type=options.WORKERS, metavar="N",
              help="Run on a dask LocalCluster of N worker processes.")
@click.option("--only", "only", multiple=True, metavar="AXIS=V1,V2",
              help="Only these positions of an axis (by label or value); repeatable.")
@click.option("--list", "list_points", is_flag=True,
              help="Check every point's config and list the points (and which are finished in --out); run nothing.")
@options.QUIET_BAR
def sweep_command(file: Path, out: Path | None, workers: int | None, scheduler: str | None,
                  local_cluster: int | None, only: tuple[str, ...], list_points: bool, quiet: bool) -> None:
    """Run every point of a sweep file (a base config and axes: lists, ranges, zipped keys, labels)
    into one Parquet dataset: results.parquet (one row per run: axis values and every summary
    figure) and timeseries/ (one partition per run). A killed sweep started again skips the runs it
    finished. A failed run is recorded and the others go on; the exit status is the number of
    failed runs (at most 100)."""
    given = [flag for flag, value in (("--workers", workers), ("--scheduler", scheduler),
                                      ("--local-cluster", local_cluster)) if value is not None]
    if len(given) > 1:
        raise click.BadParameter(f"give one of --workers, --scheduler and --local-cluster (a cluster's workers "
                                 f"are its own), not {' and '.join(given)}", param_hint=given[-1])
    study = sweep.load(file)
    selection: dict[str, list[str]] = {}
    for item in only:
        name, equals, values = item.partition("=")
        if not equals or not values:
            raise click.BadParameter(f"expected AXIS=V1,V2, found {item!r}", param_hint="--only")
        selection.setdefault(name.strip(), []).extend(v.strip() for v in values.split(","))
    try:
        study = study.only(**selection)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--only") from None
    directory = out if out is not None else Path("results") / study.name
    if list_points:
        _print_points(study, directory)
        return
    try:
        # On a terminal a bar; elsewhere (a pipe, a log) a line per finished run.
        with RunsBar(Console(stderr=True, quiet=quiet)) as progress:
            result = sweep_procedure.run(study, directory, workers=workers, scheduler=scheduler,
                                         local_cluster=local_cluster, progress=progress)
    except (KeyboardInterrupt, Terminated) as stop:
        click.echo(f"nandlab: interrupted: the finished runs are in {printable(str(directory))}; the same command "
                   "goes on from them (finished runs are not run again)", err=True)
        raise click.exceptions.Exit(143 if isinstance(stop, Terminated) else 130) from None
    from nandlab import report

    try:
        report.write(directory)
    except ValueError as error:  # e.g. a bad [report] table: the runs are saved, the report is not
        raise Failure(f"the runs are saved in {directory}, but its report failed: {error}", 2) from None
    result.print(stdout_console())
    failures = result.failures()
    if failures.height:
        raise click.exceptions.Exit(min(failures.height, 100))


def _print_points(study: sweep.Sweep, directory: Path) -> None:
    """The sweep's points as a table: index, coordinates, run id, and whether ``directory`` has it."""
    grid = sweep.points(study)
    table = Table("Run", *[safe(axis.name) for axis in study.axes], "Run id", "Finished",
                  title=f"{safe(study.name)}: {len(grid)} runs ({study.procedure})", box=box.SIMPLE_HEAD)
    finished = 0
    for p in grid:
        done = (directory / "runs" / f"{p.run_id}.parquet").exists()
        finished += done
        table.add_row(str(p.index), *[safe(str(v)) for v in p.coordinates.values()], p.run_id, "yes" if done else "")
    console = stdout_console()
    console.print(table)
    console.print(f"{finished} of {len(grid)} finished in {safe(str(directory))}/", highlight=False)
