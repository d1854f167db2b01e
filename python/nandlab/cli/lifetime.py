"""``nandlab lifetime``, ``lifetime-grid`` and ``lifetime-traces``: drives from pristine to dead,
ZombieNAND beside the baseline, and the ZombieNAND paper's synthetic grid and trace study."""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from nandlab import api, files, lifetime
from nandlab._core import ConfigError, presets
from nandlab.cli import options
from nandlab.cli.console import LazyProgress, progress_bar, show
from nandlab.cli.errors import sigterm_stops_run
from nandlab.procedures import lifetime as lifetime_procedure
from nandlab.procedures import lifetime_grid, lifetime_traces
from nandlab.terminal import safe, stdout_console


@click.command("lifetime", short_help="Run a drive from pristine to dead; ZombieNAND beside a baseline.")
@click.argument("config", metavar="CONFIG.toml|PRESET")
@click.option("--compare-baseline", is_flag=True, help="Also run the baseline (no ZombieNAND) and compare.")
@click.option("--reserve", type=options.Fraction(0.0, 0.95), default=0.3, show_default=True, help="With a PRESET.")
@click.option("--working-set", type=options.Fraction(0.0, 1.0, min_open=True), default=0.5, show_default=True,
              help="With a PRESET: share of the drive the random requests address.")
@click.option("--read-fraction", type=options.Fraction(0.0, 0.99), default=0.0, show_default=True,
              help="With a PRESET: share of requests that are reads.")
@options.capacity("4GiB")
@click.option("--slice", "slice_by", type=options.SliceBy(), metavar="N|auto",
              help="Approximate: simulate 1/N of the drive's blocks (auto: as few as keep 2,048 a GC pool) and "
                   "scale bytes and time back; for drives too large to run whole.")
@options.DEATH
@options.AS_JSON
@options.out("Write lifetime.json (the result) to DIR.")
@click.option("--seed", type=options.SEED, metavar="N", help="Override the config's seed.")
@options.QUIET_BAR
@options.snapshot_options
def lifetime_command(
    config: str,
    compare_baseline: bool,
    reserve: float,
    working_set: float,
    read_fraction: float,
    capacity: str | None,
    slice_by: int | str | None,
    death: str | None,
    as_json: bool,
    out: Path | None,
    seed: int | None,
    quiet: bool,
    snapshot: Path | None,
    snapshot_every: str | None,
    force: bool,
) -> None:
    """Run a drive from pristine to dead (a config with a phase with until = "dead", or a device
    preset under the ZombieNAND paper's synthetic workload); with --compare-baseline, run it with
    ZombieNAND and without, and report the lifetime and latency ratios."""
    source: api.ConfigSource = Path(config)
    if not files.is_file(config):
        if config in presets():
            source = lifetime.synthetic(config, reserve, working_set, read_fraction, death=death, capacity=capacity)
        elif not config.endswith((".toml", ".json")):
            close = difflib.get_close_matches(config, presets(), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f"; presets: {', '.join(presets())}"
            raise ConfigError(f"{config}: neither a config file nor a device preset{hint}")
    for flag, value, key in (("--death", death, "[ftl] death"), ("--capacity", capacity, "[device] capacity")):
        if value is not None and not isinstance(source, dict):
            raise click.UsageError(f"{flag} goes with a PRESET; in a config file, set {key}")
    options.check_snapshot_options(snapshot, snapshot_every, force)
    if snapshot is not None and compare_baseline:
        raise click.UsageError("--snapshot runs one drive: leave out --compare-baseline (or run the two sides apart)")
    stderr = Console(stderr=True, quiet=quiet)
    with LazyProgress(stderr) as progress, sigterm_stops_run(snapshot is not None):
        if compare_baseline:
            result: lifetime_procedure.LifetimeResult = lifetime_procedure.compare(source, seed=seed,
                                                                                    progress=progress,
                                                                                    slice_by=slice_by)
        else:
            notes = {"command": "lifetime", "json": as_json, "out": None if out is None else str(out.resolve())}
            result = lifetime_procedure.run(source, seed=seed, progress=progress, snapshot=snapshot,
                                            snapshot_every=snapshot_every, notes=notes, overwrite_snapshot=force,
                                            slice_by=slice_by)
    show(result, as_json, out, stderr)


@click.command("lifetime-grid", short_help="The ZombieNAND paper's synthetic grid (its Fig. 3).")
@click.option("--cells", default="tlc,mlc", show_default=True, help="Cell types (zombienand-synthetic-* presets).")
@click.option("--reserves", default="5%,10%,15%,20%,25%,30%", show_default=True, callback=options.numbers)
@click.option("--working-sets", default="10%,25%,50%,100%", show_default=True, callback=options.numbers)
@click.option("--read-levels", default="low=0.25,medium=0.5,high=0.75", show_default=True,
              callback=options.read_levels, help="Read fraction of each read level.")
@options.DEATH
@options.all_cores("Runs at once.")
@click.option("--seed", type=options.SEED, default=1, show_default=True, metavar="N")
@options.out("Where the table (Parquet, CSV) and heatmaps (PNG) go.", default=Path("results/zombienand-grid"),
             show_default=True)
@options.QUIET_BAR
def lifetime_grid_command(
    cells: str, reserves: list[float], working_sets: list[float], read_levels: dict[str, float], death: str | None,
    workers: int, seed: int, out: Path, quiet: bool,
) -> None:
    """The ZombieNAND paper's synthetic grid (its Fig. 3): ZombieNAND and the baseline from pristine to
    dead for every cell type x reserve x working set x read level; writes the table and the lifetime
    and latency heatmaps (``nandlab lifetime-grid --out docs/zombienand`` draws the docs' figures)."""
    kinds = [c.strip() for c in cells.split(",")]
    for kind in kinds:
        if f"zombienand-synthetic-{kind}" not in presets():
            raise click.BadParameter(f"no preset zombienand-synthetic-{kind}; expected tlc or mlc",
                                     param_hint="--cells")
    cells_total = len(kinds) * len(reserves) * len(working_sets) * len(read_levels)
    _run_study(
        "grid cells (2 lifetime runs each)", cells_total, out, quiet, workers, "table and heatmaps",
        lambda on_run: lifetime_grid.run(kinds, reserves, working_sets, read_levels, workers=workers, seed=seed,
                                         on_run=on_run, out=out / "sweep", death=death),
    )


def _run_study(
    label: str, total: int | None, out: Path, quiet: bool, workers: int, what: str,
    runner: Callable[[Callable[[int, int], None]], lifetime_grid.Grid | lifetime_traces.TraceStudy],
) -> None:
    """A lifetime study (a sweep of comparisons): ``runner(on_run)`` under a progress bar of ``label``,
    then its files, report and table in ``out``, and a line saying how long it took."""
    started = time.monotonic()
    with progress_bar(
        Console(stderr=True, quiet=quiet), TextColumn(label), BarColumn(),
        MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
    ) as bar:
        task = bar.add_task("", total=total)
        result = runner(lambda done, total: bar.update(task, completed=done, total=total))
    wall = time.monotonic() - started
    result.write(out)
    from nandlab import report

    report.write(out)
    console = stdout_console()
    result.print(console)
    console.print(f"{2 * result.comparisons()} runs in {wall:.0f} s on {workers} workers; {what} in {safe(str(out))}/ "
                  f"(the sweep's dataset in {safe(str(out / 'sweep'))}/: run again to resume)")


@click.command("lifetime-traces", short_help="The ZombieNAND paper's trace study (its Figs. 4-6).")
@click.argument("trace_files", metavar="TRACE...", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--cells", default="tlc,mlc", show_default=True, help="Cell types (zombienand-trace-* presets).")
@click.option("--reserves", default="10%,20%,30%", show_default=True, callback=options.numbers)
@click.option("--endurance-scale", type=options.Finite(1.0, 1e6), default=1.0, show_default=True,
              help="Divide every mode's rated cycles by this, to age the drives that many times faster "
                   "(how closely the lifetime ratios hold: docs/zombienand/traces/README.md).")
@options.all_cores("Runs at once.")
@click.option("--seed", type=options.SEED, default=1, show_default=True, metavar="N")
@options.out("Where the tables, curves and figures go.", default=Path("results/zombienand-traces"),
             show_default=True)
@options.QUIET_BAR
def lifetime_traces_command(
    trace_files: tuple[Path, ...], cells: str, reserves: list[float], endurance_scale: float, workers: int,
    seed: int, out: Path, quiet: bool,
) -> None:
    """The ZombieNAND paper's trace study (its Figs. 5 and 6): each trace replayed in a loop (its first
    512 MB of distinct addresses, or all it holds) on the zombienand-trace-* presets, ZombieNAND and the
    baseline from pristine to dead, for every cell type x reserve; writes the runs, the traces'
    composition (Table III) and address reuse (Fig. 4), the lifetime bars and the latency curves."""
    kinds = [c.strip() for c in cells.split(",")]
    for kind in kinds:
        if f"zombienand-trace-{kind}" not in presets():
            raise click.BadParameter(f"no preset zombienand-trace-{kind}; expected tlc or mlc", param_hint="--cells")
    _run_study(
        "trace runs (2 lifetimes each)", None, out, quiet, workers, "tables and figures",
        lambda on_run: lifetime_traces.run(trace_files, kinds, reserves, endurance_scale=endurance_scale,
                                           workers=workers, seed=seed, on_run=on_run, out=out / "sweep"),
    )
