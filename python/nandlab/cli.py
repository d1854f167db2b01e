"""The ``nandlab`` command: run experiments, list presets, print the default config."""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

import polars as pl

from nandlab import api, chipbench, fio, lifetime, output, qualify, traces
from nandlab._core import (
    ConfigError,
    Interrupted,
    SimulationError,
    SnapshotError,
    TraceError,
    default_config_toml,
    preset_toml,
    presets,
)

GIB = 2**30
PROGRESS_DELAY_SECONDS = 1.0
PIPED_WIDTH = 120
WAF_CAPTION = (
    "WAF = write amplification: flash pages programmed (host writes + garbage-collection copies) "
    "per page written by the host; 1.00 is ideal."
)
QUALIFY_CAPTION = (
    "MB/s = 10^6 bytes per simulated second. Min: the slowest speed over a window of 2 % of the capacity."
)


def _wrote(paths: list[Path], out: Path, console: Console | None = None) -> None:
    """Builds ``out``'s HTML report (``nandlab.report``) and says what was written there."""
    from nandlab import report

    paths = [*paths, report.write(out)]
    (console or Console(stderr=True)).print(f"wrote {', '.join(path.name for path in paths)} to {out}", soft_wrap=True)


MAX_MESSAGE_CHARS = 2000
"""A message longer than this (one quoting a long value from a file) is cut in its middle."""


def _shown(text: str, keep: str = "") -> str:
    """``text`` with each control or other unprintable character (the start of an escape sequence,
    a bidi override, an undecodable byte) but those in ``keep`` written as its Python escape
    (``\\x1b``): whatever a file holds, printing it does not drive the terminal."""
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii") for c in text)


def _safe(text: str) -> str:
    """Text from a file (a phase or job name, a trace's name) for rich: ``_shown`` (line breaks
    kept) and its markup escaped."""
    return escape(_shown(text, keep="\n"))


def _printable(text: str) -> str:
    """``text`` as one line that is safe on a terminal, whatever file it quotes: its lines joined,
    ``_shown``, and cut in the middle beyond ``MAX_MESSAGE_CHARS``."""
    line = _shown(" ".join(part.strip() for part in text.splitlines() if part.strip()))
    if len(line) > MAX_MESSAGE_CHARS:
        head, tail = MAX_MESSAGE_CHARS * 3 // 4, MAX_MESSAGE_CHARS // 4
        line = f"{line[:head]} … ({len(line) - head - tail:,} characters left out) … {line[-tail:]}"
    return line


class _Failure(click.ClickException):
    """An error the user can fix: printed as one ``nandlab: error: ...`` line, no traceback."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(_printable(message))
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"nandlab: error: {self.message}", err=True)


def _usage_failure(error: click.ClickException) -> _Failure:
    """click's usage error (bad option value, unknown option, missing argument, ...) as one line,
    with where to find help instead of click's usage block."""
    message = error.format_message().rstrip(".")
    if message[:2].istitle():  # click's "Invalid value ...", "No such option ...": the house style is lower case
        message = message[0].lower() + message[1:]
    ctx = getattr(error, "ctx", None)
    return _Failure(f"{message} (see {ctx.command_path} --help)" if ctx is not None else message, 2)


class _Cli(click.Group):
    """The command group and its subgroups; one line for every usage error, and the engine's
    exceptions turned into messages and exit codes."""

    group_class = type  # subgroups (chip, trace, test) are _Cli too

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except _Failure:
            raise
        except click.ClickException as error:  # the group's own options and arguments
            raise _usage_failure(error) from None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and not ctx.resilient_parsing:  # one line, rather than click's help page
            commands = ", ".join(self.list_commands(ctx))
            raise click.UsageError(f"missing command: expected one of {commands}", ctx)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _Failure:
            raise
        except click.ClickException as error:  # a subcommand's options and arguments, or its own check
            raise _usage_failure(error) from None
        except (ConfigError, TraceError, SnapshotError) as error:
            raise _Failure(str(error), 2) from None
        except Interrupted as error:
            # The state is in the snapshot: exit as the signal would have (128 + its number).
            click.echo(f"nandlab: {_printable(str(error))}", err=True)
            raise click.exceptions.Exit(143 if isinstance(error.__cause__, _Terminated) else 130) from None
        except SimulationError as error:
            raise _Failure(str(error), 1) from None
        except OSError as error:  # e.g. --out DIR not writable
            raise _Failure(str(error), 1) from None
        except KeyboardInterrupt:
            click.echo("nandlab: interrupted", err=True)
            raise click.exceptions.Exit(130) from None
        except _Terminated:
            click.echo("nandlab: terminated", err=True)
            raise click.exceptions.Exit(143) from None


class _Terminated(Exception):
    """SIGTERM, raised by its handler while a run with a snapshot goes on (the engine then stops
    the run at its next sync point with its state in the snapshot, as for Ctrl-C)."""


@contextlib.contextmanager
def _sigterm_stops_run(active: bool) -> Iterator[None]:
    """While the block runs (if ``active``): SIGTERM raises ``_Terminated`` instead of killing."""
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: Any) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _check_snapshot_options(snapshot: Path | None, snapshot_every: str | None, force: bool) -> None:
    """``--snapshot-every`` and ``--force`` only with ``--snapshot``."""
    if snapshot_every is not None and snapshot is None:
        raise click.UsageError("--snapshot-every needs --snapshot PATH (where to write it)")
    if force and snapshot is None:
        raise click.UsageError("--force lets --snapshot PATH write over another run's snapshot: give --snapshot")


def _snapshot_options(command: Any) -> Any:
    """``--snapshot PATH``, ``--snapshot-every X`` and ``--force`` of the commands that run a config."""
    command = click.option(
        "--force",
        is_flag=True,
        help="With --snapshot: write over PATH even if it holds the snapshot of another run (another "
        "config or seed); without it only a snapshot of this same run is replaced.",
    )(command)
    command = click.option(
        "--snapshot-every",
        metavar="X",
        help="Also write the snapshot every X of simulated time (10s, 5min) or data the host moved (50GiB); "
        "a run killed outright goes on from the last one.",
    )(command)
    return click.option(
        "--snapshot",
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="PATH",
        help="On Ctrl-C or SIGTERM, stop with the run's whole state in PATH (`nandlab resume PATH` goes on "
        "to the same result).",
    )(command)


# --- option types: what the engine and the machine take, refused in one line before anything runs -

SEED = click.IntRange(0, 2**64 - 1)
"""A seed: the engine's are 64-bit unsigned integers."""
QUEUE_DEPTH = click.IntRange(1, 65_536)
"""Requests in flight: as many as the engine takes."""
MAX_WORKERS = 1024
WORKERS = click.IntRange(1, MAX_WORKERS)
"""Runs at once (processes or threads): more than ``MAX_WORKERS`` is a slip of the keyboard, and a
dask LocalCluster would start them all."""
DEVICE_IDS = 2**32
"""Device / volume / ASU numbers of a trace are below this (the engine's are 32-bit)."""


class _Finite(click.FloatRange):
    """A number within a range (any, by default), never nan or infinite."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"expected a finite number, found {value!r}", param, ctx)
        return number


class _Directory(click.Path):
    """A directory to write to: one, or a path where one can be made; refused before the run if it is
    a file of any kind (a device, a FIFO)."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        if os.path.exists(path) and not os.path.isdir(path):
            self.fail(f"{click.format_filename(value)!r} is not a directory", param, ctx)
        return path


def _numbers(ctx: click.Context, param: click.Parameter, text: str) -> list[float]:
    """A comma-separated list of finite numbers, percentages allowed ("10%,20%" or "0.1,0.2")."""
    try:
        numbers = [float(x.strip().rstrip("%")) / (100 if x.strip().endswith("%") else 1) for x in text.split(",")]
    except ValueError:
        numbers = []
    if not numbers or not all(math.isfinite(x) for x in numbers):
        raise click.BadParameter(f"expected comma-separated finite numbers, found {text!r}")
    return numbers


def _read_levels(ctx: click.Context, param: click.Parameter, text: str) -> dict[str, float]:
    """``low=0.25,medium=0.5``: read levels by name, each a finite read fraction."""
    try:
        levels = {name.strip(): float(value) for name, value in (item.split("=") for item in text.split(","))}
    except ValueError:
        levels = {}
    if not levels or not all(name and math.isfinite(value) for name, value in levels.items()):
        raise click.BadParameter(f"expected name=fraction,..., found {text!r}")
    return levels


def _device_ids(ctx: click.Context, param: click.Parameter, text: str | None) -> list[int] | None:
    """``0,3``: a trace's device / volume / ASU numbers."""
    if text is None:
        return None
    try:
        ids = [int(x) for x in text.split(",")]
    except ValueError:
        ids = []
    if not ids or not all(0 <= x < DEVICE_IDS for x in ids):
        raise click.BadParameter(f"expected comma-separated numbers from 0 to {DEVICE_IDS - 1}, found {text!r}")
    return ids


_OUT_DIR = _Directory()


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="nandlab")
def cli() -> None:
    """nandlab: a NAND flash SSD simulator."""


@cli.command(short_help="Run an experiment (the built-in default without CONFIG.toml).")
@click.argument("config", required=False, type=click.Path(dir_okay=False, path_type=Path), metavar="[CONFIG.toml]")
@click.option(
    "--out",
    type=_OUT_DIR,
    metavar="DIR",
    help="Write summary.json, timeseries.parquet/.csv and throughput_latency.png to DIR.",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout.")
@click.option("--seed", type=SEED, metavar="N", help="Override the config's seed.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no messages on stderr.")
@_snapshot_options
def run(
    config: Path | None,
    out: Path | None,
    as_json: bool,
    seed: int | None,
    quiet: bool,
    snapshot: Path | None,
    snapshot_every: str | None,
    force: bool,
) -> None:
    """Run the experiment in CONFIG.toml (the built-in default without one).

    Each [[phase]] runs in order on the same drive; a table of results follows.
    """
    _run_and_report(config, out, as_json, seed, quiet, snapshot, snapshot_every, force)


def _run_and_report(
    config: api.ConfigSource,
    out: Path | None,
    as_json: bool,
    seed: int | None,
    quiet: bool,
    snapshot: Path | None = None,
    snapshot_every: str | None = None,
    force: bool = False,
) -> None:
    """Run a config with a progress bar; print its table or JSON; write ``--out``."""
    _check_snapshot_options(snapshot, snapshot_every, force)
    stderr = Console(stderr=True, quiet=quiet)
    # What `nandlab resume` needs to finish the job as this command would have.
    notes = {"out": None if out is None else str(out.resolve()), "json": as_json}
    with _LazyProgress(stderr) as progress, _sigterm_stops_run(snapshot is not None):
        result = api.run(config, seed=seed, progress=progress, snapshot=snapshot, snapshot_every=snapshot_every,
                         notes=notes, overwrite_snapshot=force)
    _show_result(result, out, as_json, stderr)


def _show_result(result: api.Result, out: Path | None, as_json: bool, stderr: Console) -> None:
    """Print a run's table (or JSON); write ``--out``."""
    if as_json:
        click.echo(output.to_json(result))
    else:
        _print_summary(_stdout_console(), result)
    if out is not None:
        _wrote(output.write(result, out), out, stderr)


@cli.command("resume", short_help="Go on with a run from its snapshot (nandlab run --snapshot).")
@click.argument("snapshot", type=click.Path(dir_okay=False, path_type=Path), metavar="SNAPSHOT")
@click.option("--out", type=_OUT_DIR, metavar="DIR",
              help="Write the results to DIR (default: the --out the run was given).")
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON (also if the run had --json).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no messages on stderr.")
def resume_command(snapshot: Path, out: Path | None, as_json: bool, quiet: bool) -> None:
    """Go on with the run whose state is in SNAPSHOT, where it stopped; it ends with the same
    results the run would have had (and keeps writing SNAPSHOT as the run did).

    A damaged, truncated or foreign file, or one from another nandlab version, is refused.
    """
    stderr = Console(stderr=True, quiet=quiet)
    paused = api.open_snapshot(snapshot)
    # What `nandlab run` or `lifetime` kept (a snapshot written from Python keeps its caller's notes).
    kept_out = paused.notes.get("out")
    if out is None and isinstance(kept_out, str) and kept_out:
        out = Path(kept_out)
    as_json = as_json or paused.notes.get("json") is True
    names = paused.simulator.phase_names
    stderr.print(f"resuming phase {paused.phase + 1}/{len(names)} {_safe(_printable(names[paused.phase]))} "
                 f"from {_safe(_printable(str(snapshot)))}", highlight=False)
    with _LazyProgress(stderr) as progress, _sigterm_stops_run(True):
        result = paused.go_on(progress)
    if paused.notes.get("command") == "lifetime":
        _print_lifetime({k: v for k, v in lifetime.of_result(result).items() if k != "result"}, False, as_json)
    else:
        _show_result(result, out, as_json, stderr)


@cli.command("presets")
@click.argument("name", required=False)
def list_presets(name: str | None) -> None:
    """List the device presets ([device] preset = "NAME"), or print preset NAME as TOML."""
    if name is not None:
        click.echo(preset_toml(name).rstrip("\n"))
        return
    table = Table("Preset", "Description", title="Device presets")
    for preset, description in presets().items():
        table.add_row(preset, description)
    _stdout_console().print(table)


@cli.command("default-config", short_help="Print the default experiment as TOML.")
def default_config() -> None:
    """Print the built-in default experiment as TOML, to copy and edit."""
    click.echo(default_config_toml().rstrip("\n"))


@cli.command("report", short_help="Build the self-contained HTML report of a result directory.")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path), metavar="DIR")
@click.option("--open", "open_it", is_flag=True, help="Open the report in the default browser.")
def report_command(directory: Path, open_it: bool) -> None:
    """Build DIR/report.html: one self-contained HTML file (figures embedded, nothing fetched) with
    the configuration, summary tables and figures of a run, a sweep, or any procedure's --out
    directory; its figures are also PNG files in DIR/figures. Prints its path."""
    from nandlab import report

    try:
        path = report.write(directory)
    except ValueError as error:
        raise _Failure(str(error), 2) from None
    click.echo(str(path))
    if open_it:
        click.launch(str(path))


@cli.command("lifetime")
@click.argument("config", metavar="CONFIG.toml|PRESET")
@click.option("--compare-baseline", is_flag=True, help="Also run the baseline (no ZombieNAND) and compare.")
@click.option("--reserve", type=_Finite(0.0, 0.95), default=0.3, show_default=True, help="With a PRESET.")
@click.option("--working-set", type=_Finite(0.0, 1.0, min_open=True), default=0.5, show_default=True,
              help="With a PRESET: share of the drive the random requests address.")
@click.option("--read-fraction", type=_Finite(0.0, 0.99), default=0.0, show_default=True,
              help="With a PRESET: share of requests that are reads.")
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout.")
@click.option("--seed", type=SEED, metavar="N", help="Override the config's seed.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@_snapshot_options
def lifetime_command(
    config: str,
    compare_baseline: bool,
    reserve: float,
    working_set: float,
    read_fraction: float,
    as_json: bool,
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
    if not Path(config).exists():
        if config in presets():
            source = lifetime.synthetic(config, reserve, working_set, read_fraction)
        elif not config.endswith((".toml", ".json")):
            close = difflib.get_close_matches(config, presets(), n=1)
            hint = f" (did you mean {close[0]}?)" if close else f"; presets: {', '.join(presets())}"
            raise ConfigError(f"{config}: neither a config file nor a device preset{hint}")
    _check_snapshot_options(snapshot, snapshot_every, force)
    if snapshot is not None and compare_baseline:
        raise click.UsageError("--snapshot runs one drive: leave out --compare-baseline (or run the two sides apart)")
    stderr = Console(stderr=True, quiet=quiet)
    with _LazyProgress(stderr) as progress, _sigterm_stops_run(snapshot is not None):
        if compare_baseline:
            report = lifetime.compare(source, seed=seed, progress=progress)
        else:
            notes = {"command": "lifetime", "json": as_json}
            run = lifetime.run(source, seed=seed, progress=progress, snapshot=snapshot,
                               snapshot_every=snapshot_every, notes=notes, overwrite_snapshot=force)
            report = {k: v for k, v in run.items() if k != "result"}
    _print_lifetime(report, compare_baseline, as_json)


def _print_lifetime(report: dict[str, Any], compare_baseline: bool, as_json: bool) -> None:
    """A lifetime run's (or comparison's) table, or its JSON."""
    if as_json:
        click.echo(output.to_strict_json(report))
        return
    runs = {"zombie": report["zombie"], "baseline": report["baseline"]} if compare_baseline else {"run": report}
    table = Table("Drive", "Written until death", "Drive writes", "Sim s", "Wall s", "Death", title="Lifetime")
    for label, r in runs.items():
        table.add_row(
            label,
            f"{r['host_write_bytes'] / 1e12:.3g} TB",
            _number(r["drive_writes"]),
            _number(r["sim_seconds"]),
            _number(r["wall_seconds"]),
            _safe(r["death"] or "alive at the end"),
        )
    console = _stdout_console()
    console.print(table)
    if compare_baseline:
        console.print(
            f"lifetime ratio (ZombieNAND / baseline): {report['lifetime_ratio']:.3g}; "
            f"latency ratio over the baseline's life: {report['latency_ratio']:.3g}, "
            f"after it: {report['latency_ratio_after']:.3g}"
        )


@cli.command("lifetime-grid")
@click.option("--cells", default="tlc,mlc", show_default=True, help="Cell types (zombienand-synthetic-* presets).")
@click.option("--reserves", default="5%,10%,15%,20%,25%,30%", show_default=True, callback=_numbers)
@click.option("--working-sets", default="10%,25%,50%,100%", show_default=True, callback=_numbers)
@click.option("--read-levels", default="low=0.25,medium=0.5,high=0.75", show_default=True, callback=_read_levels,
              help="Read fraction of each read level.")
@click.option("--workers", type=WORKERS, default=min(os.cpu_count() or 1, MAX_WORKERS), show_default="all cores",
              help="Runs at once.")
@click.option("--seed", type=SEED, default=1, show_default=True, metavar="N")
@click.option("--out", type=_OUT_DIR, default=Path("results/zombienand-grid"),
              show_default=True, metavar="DIR", help="Where the table (Parquet, CSV) and heatmaps (PNG) go.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def lifetime_grid(
    cells: str, reserves: list[float], working_sets: list[float], read_levels: dict[str, float], workers: int,
    seed: int, out: Path, quiet: bool,
) -> None:
    """The ZombieNAND paper's synthetic grid (its Fig. 3): ZombieNAND and the baseline from pristine to
    dead for every cell type x reserve x working set x read level; writes the table and the lifetime
    and latency heatmaps (``nandlab lifetime-grid --out docs/zombienand`` draws the docs' figures)."""
    kinds = [c.strip() for c in cells.split(",")]
    for kind in kinds:
        if f"zombienand-synthetic-{kind}" not in presets():
            raise click.BadParameter(f"no preset zombienand-synthetic-{kind}; expected tlc or mlc", param_hint="--cells")
    cells_total = len(kinds) * len(reserves) * len(working_sets) * len(read_levels)
    started = time.monotonic()
    with _progress_bar(
        Console(stderr=True, quiet=quiet), TextColumn("grid cells (2 lifetime runs each)"), BarColumn(),
        MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
    ) as bar:
        task = bar.add_task("", total=cells_total)
        table = lifetime.grid(
            kinds, reserves, working_sets, read_levels, workers=workers, seed=seed,
            on_run=lambda done, total: bar.update(task, completed=done, total=total), out=out / "sweep",
        )
    wall = time.monotonic() - started
    from nandlab import plots  # matplotlib only when drawing

    out.mkdir(parents=True, exist_ok=True)
    table.write_parquet(out / "grid.parquet")
    table.write_csv(out / "grid.csv")
    plots.lifetime_heatmaps(table, "lifetime_ratio", out / "lifetime-ratio.png")
    plots.lifetime_heatmaps(table, "latency_ratio", out / "latency-ratio.png")
    from nandlab import report

    report.write(out)
    summary = Table("Cell", "Lifetime ratio\nmin / max", "Latency ratio\nmin / max", "Runs", title="ZombieNAND synthetic grid")
    for kind in kinds:
        part = table.filter(pl.col("cell") == kind)
        summary.add_row(
            kind.upper(),
            f"{part['lifetime_ratio'].min():.2f} / {part['lifetime_ratio'].max():.2f}",
            f"{part['latency_ratio'].min():.2f} / {part['latency_ratio'].max():.2f}",
            str(2 * part.height),
        )
    console = _stdout_console()
    console.print(summary)
    console.print(f"{2 * cells_total} runs in {wall:.0f} s on {workers} workers; table and heatmaps in {_safe(str(out))}/ "
                  f"(the sweep's dataset in {_safe(str(out / 'sweep'))}/: run again to resume)")


@cli.group()
def chip() -> None:
    """The chip test bench: endurance and latency of raw NAND chips (Desnoyers' experiments)."""


@chip.command("list")
def chip_list() -> None:
    """List the chip presets (Desnoyers' Table 1 chips, SNIA's dies)."""
    table = Table("Chip", "Description", title="Chip presets")
    for name, description in chipbench.chips().items():
        table.add_row(name, description)
    _stdout_console().print(table)


@chip.command("endurance")
@click.option("--chip", "name", required=True, metavar="NAME", help="Chip preset (see `nandlab chip list`).")
@click.option("--blocks", type=click.IntRange(1, 1_000_000), default=100, show_default=True, help="Blocks to test.")
@click.option(
    "--pattern",
    type=click.Choice(["single-page", "full-block"]),
    default="single-page",
    show_default=True,
    help="Program one page with zeros per cycle, or the whole block.",
)
@click.option("--temperature", "temperature_c", type=float, default=25.0, show_default=True, help="°C.")
@click.option("--seed", type=SEED, default=0, show_default=True, metavar="S")
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout.")
@click.option("--out", type=_OUT_DIR, metavar="DIR", help="Write JSON, Parquet, PNG.")
def chip_endurance(
    name: str, blocks: int, pattern: str, temperature_c: float, seed: int, as_json: bool, out: Path | None
) -> None:
    """Cycle blocks to failure: program, erase, repeat until an operation fails (Desnoyers' method)."""
    run = chipbench.endurance(name, blocks=blocks, pattern=pattern, temperature_c=temperature_c, seed=seed)
    if as_json:
        click.echo(json.dumps(run))
    else:
        lifetimes = sorted(run["lifetimes"])
        nominal = run["nominal_endurance"]
        table = Table(
            "Blocks", "Nominal", "Min", "Median", "Max", "Median / nominal",
            title=f"{run['chip']['name']}: cycles to failure ({pattern}, {temperature_c:g} °C)",
        )
        table.add_row(
            f"{len(lifetimes):,}",
            f"{nominal:,}",
            f"{lifetimes[0]:,}",
            f"{lifetimes[len(lifetimes) // 2]:,}",
            f"{lifetimes[-1]:,}",
            f"{lifetimes[len(lifetimes) // 2] / nominal:.3g}×",
        )
        _stdout_console().print(table)
    if out is not None:
        _wrote(chipbench.write_endurance(run, out), out)


@chip.command("latency")
@click.option("--chip", "name", required=True, metavar="NAME", help="Chip preset (see `nandlab chip list`).")
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout.")
@click.option("--out", type=_OUT_DIR, metavar="DIR", help="Write JSON and PNG.")
def chip_latency(name: str, as_json: bool, out: Path | None) -> None:
    """Read, program and erase latency over a block's life (worst / typical / best) beside the datasheet."""
    result = chipbench.latency(name)
    if out is not None:
        _wrote(chipbench.write_latency(result, out), out)
    if as_json:
        click.echo(json.dumps(result))
        return
    table = Table("Operation", "Worst µs", "Typical µs", "Best µs", "Datasheet µs", title=f"{name}: latency over life")
    for op in ("read", "program", "erase"):
        spectrum = result[f"{op}_us"]
        table.add_row(
            op,
            *(_number(spectrum[k]) for k in ("worst", "typical", "best")),
            _number(result["datasheet"][f"{op}_us"]),
        )
    _stdout_console().print(table)


@cli.command("fio")
@click.argument("jobfile", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--device", required=True, metavar="PRESET|FILE",
              help="Device preset (see `nandlab presets`) or a TOML file: its [device] and [ftl].")
@click.option("--capacity", metavar="SIZE", help='Nominal capacity, e.g. "4GiB" (sets [device] capacity).')
@click.option("--seed", type=SEED, metavar="N", help="Override the job file's randseed.")
@click.option("--json", "as_json", is_flag=True, help="Print only fio-style JSON on stdout.")
@click.option("--out", type=_OUT_DIR, metavar="DIR",
              help="Also write fio.json and the run's summary.json, timeseries and PNG to DIR.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def fio_command(jobfile: Path, device: str, capacity: str | None, seed: int | None, as_json: bool,
                out: Path | None, quiet: bool) -> None:
    """Run a fio job file on a simulated drive. Jobs run together, each with its own queue, as fio
    runs them; a job with stonewall waits for the ones before it. fio's output (IOPS, BW,
    completion-latency percentiles), or its JSON with --json. Options that mean nothing without a
    real device, or that nandlab does not model, are named in warnings."""
    jobs = fio.load(jobfile)
    stderr = Console(stderr=True)
    for warning in jobs.warnings:
        stderr.print(f"[yellow]warning:[/] {_safe(_printable(warning))}", soft_wrap=True, highlight=False)
    with _LazyProgress(Console(stderr=True, quiet=quiet)) as progress:
        result = api.run(fio.to_config(jobs, device, capacity), seed=seed, progress=progress)
    document = fio.report(jobs, result)
    if as_json:
        click.echo(output.to_strict_json(document))
    else:
        _print_fio(document)
    if out is not None:
        paths = output.write(result, out)
        (out / "fio.json").write_text(output.to_strict_json(document) + "\n", encoding="utf-8")
        _wrote([out / "fio.json", *paths], out, stderr)


def _print_fio(document: dict[str, Any]) -> None:
    """fio's text report, per job and direction."""
    for job in document["jobs"]:
        name = _shown(job["jobname"])
        click.echo(f"{name}: (groupid={job['groupid']}, jobs=1): err= 0  (simulated: {document['device']})")
        for kind in ("read", "write", "trim"):
            d = job[kind]
            if not d["total_ios"]:
                continue
            mib = d["bw_bytes"] / 2**20
            click.echo(f"  {kind}: IOPS={d['iops']:,.0f}, BW={mib:,.1f}MiB/s ({d['bw_bytes'] / 1e6:,.1f}MB/s)"
                       f"({d['io_bytes'] / 2**20:,.1f}MiB/{d['runtime']:,.0f}msec)")
            clat = d["clat_ns"]
            if kind != "trim":
                click.echo(f"    clat (usec): max={clat['max'] / 1000:,.0f}, avg={clat['mean'] / 1000:,.2f}")
                points = ", ".join(f"{float(q):g}th=[{v / 1000:,.0f}]" for q, v in clat["percentile"].items())
                click.echo(f"     clat percentiles (usec): {points}")
        click.echo(f"  write amplification: {job['waf']:.2f}")


@cli.group("trace")
def trace_group() -> None:
    """Block I/O traces recorded on real systems (MSR, UMass/SPC, blkparse, fio iolog, DiskSim/MQSim/
    SSDsim ASCII, FIU, Alibaba, Tencent; gzip, bzip2 or zstd)."""


@trace_group.command("stats")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path), metavar="FILE...")
@click.option("--format", "trace_format", type=click.Choice(traces.FORMATS), help="The traces' format (default: detected).")
@click.option("--skip-bad", is_flag=True, help="Pass over malformed lines and count them (default: stop at the first).")
@click.option("--json", "as_json", is_flag=True,
              help="Print only the result as JSON on stdout (several files: {\"traces\": [...]}).")
@click.option("--out", type=_OUT_DIR, metavar="DIR",
              help="Write stats.json, size_histogram.csv, reuse_cdf.csv and trace-stats.png to DIR "
              "(several files: one directory each, plus composition.csv and reuse.png comparing them).")
def trace_stats(files: tuple[Path, ...], trace_format: str | None, skip_bad: bool, as_json: bool,
                out: Path | None) -> None:
    """What a trace holds: records, bytes, the read/write and random/sequential composition (the
    ZombieNAND paper's Table III), request sizes, inter-arrival times, footprint, address reuse
    (its Fig. 4). Several files: one Table III row each, and their reuse curves side by side."""
    summaries = {file: traces.stats(file, format=trace_format, skip_bad=skip_bad) for file in files}
    if len(files) == 1:
        (file, summary), = summaries.items()
        if as_json:
            click.echo(output.to_strict_json(summary))
        else:
            _print_trace_stats(_stdout_console(), file, summary)
        paths = traces.write_stats(summary, out) if out is not None else []
    else:
        if as_json:
            click.echo(output.to_strict_json({"traces": [{"file": str(f), **s} for f, s in summaries.items()]}))
        else:
            _print_trace_table(_stdout_console(), summaries)
        paths = traces.write_comparison(summaries, out) if out is not None else []
    if paths and len(files) > 1:
        for file in files:  # each trace's own directory gets its report, then the comparison
            _wrote([], out / file.name)
    if paths:
        _wrote(paths, out)


def _print_trace_table(console: Console, summaries: dict[Path, dict[str, Any]]) -> None:
    """One row per trace: the ZombieNAND paper's Table III, with sizes and footprints."""
    table = Table(
        "Trace", "Format", "Records", "GiB moved", "Writes %", "W random %", "W seq. %", "Reads %",
        "R random %", "R seq. %", "Footprint GiB",
        box=box.SIMPLE_HEAD, title="Composition (% of bytes moved, as ZombieNAND's Table III)",
    )
    for file, s in summaries.items():
        table.add_row(
            _safe(file.name), s["format"], f"{s['records']:,}",
            f"{(s['read_bytes'] + s['write_bytes']) / 2**30:.3f}",
            *(f"{s[k]:.0f}" for k in ("write_percent", "write_random_percent", "write_sequential_percent",
                                      "read_percent", "read_random_percent", "read_sequential_percent")),
            f"{s['footprint_bytes'] / 2**30:.3f}",
        )
    console.print(table)


@trace_group.command("replay")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--device", required=True, metavar="PRESET|FILE",
              help="Device preset (see `nandlab presets`) or a TOML file: its [device] and [ftl].")
@click.option("--capacity", metavar="SIZE", help='Nominal capacity, e.g. "4GiB" (sets [device] capacity).')
@click.option("--format", "trace_format", type=click.Choice(traces.FORMATS), help="The trace's format (default: detected).")
@click.option("--queue-depth", type=QUEUE_DEPTH, metavar="N",
              help="Closed loop: keep N requests in flight, as fast as the drive takes them (default 1).")
@click.option("--timed", is_flag=True, help="Open loop: issue each request at its recorded time.")
@click.option("--time-scale", type=_Finite(min=0, min_open=True), metavar="X",
              help="With --timed: multiply the recorded gaps by X (0.5: twice as fast).")
@click.option("--remap", type=click.Choice(["modulo", "compact"]),
              help="Fit addresses to the drive: modulo its capacity (default), or distinct addresses in order of first use.")
@click.option("--unique-bytes", metavar="SIZE",
              help="Use only the first SIZE of distinct addresses (ZombieNAND's rule; implies --remap compact).")
@click.option("--devices", metavar="IDS", callback=_device_ids, help="Only these devices / volumes / ASUs, e.g. 0,3.")
@click.option("--loop", "looping", is_flag=True, help="Replay the trace again when it ends (with --volume).")
@click.option("--volume", metavar="SIZE", help="Stop after this much data (e.g. 64GiB).")
@click.option("--skip-bad", is_flag=True, help="Pass over malformed lines and count them.")
@click.option("--seed", type=SEED, default=1, show_default=True, metavar="N")
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout.")
@click.option("--out", type=_OUT_DIR, metavar="DIR",
              help="Write summary.json, timeseries.parquet/.csv and throughput_latency.png to DIR.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no messages on stderr.")
@_snapshot_options
def trace_replay(file: Path, device: str, capacity: str | None, **options: Any) -> None:
    """Replay a trace on a simulated drive (a [[phase]] with kind = "trace")."""
    config = qualify.device_config(device, capacity)
    run_options = ("out", "as_json", "seed", "quiet", "snapshot", "snapshot_every", "force")
    config["phase"] = [traces.replay_phase(file, **{k: v for k, v in options.items() if k not in run_options})]
    _run_and_report(config, *(options[k] for k in run_options))


def _print_trace_stats(console: Console, file: Path, s: dict[str, Any]) -> None:
    """The trace's figures, then its Table III row."""
    gib = 2**30
    table = Table(box=box.SIMPLE_HEAD, title=_safe(f"{file.name} ({s['format']})"), show_header=False)
    table.add_column("", style="bold")
    table.add_column("", justify="right")
    rows = [
        ("records", f"{s['records']:,} ({s['reads']:,} reads, {s['writes']:,} writes, {s['trims']:,} trims)"),
        ("read / written", f"{s['read_bytes'] / gib:.3f} / {s['write_bytes'] / gib:.3f} GiB"),
        ("devices", f"{s['devices']:,}"),
        ("duration", f"{s['duration_seconds']:,.1f} s"),
        ("inter-arrival p50 / p99", f"{_number(s['interarrival_us']['p50'])} / {_number(s['interarrival_us']['p99'])} µs"),
        ("mean request", f"{s['mean_request_bytes'] / 1024:,.1f} KiB"),
        ("footprint (writes)", f"{s['footprint_bytes'] / gib:.3f} GiB ({s['write_footprint_bytes'] / gib:.3f} GiB)"),
    ]
    if s["skipped_lines"]:
        rows.append(("malformed lines skipped", f"{s['skipped_lines']:,}"))
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)
    composition = Table(
        "", "Total %", "Random %", "Sequential %", box=box.SIMPLE_HEAD,
        title="Composition (% of bytes moved, as ZombieNAND's Table III)",
    )
    composition.add_row("Writes", f"{s['write_percent']:.0f}", f"{s['write_random_percent']:.0f}",
                        f"{s['write_sequential_percent']:.0f}")
    composition.add_row("Reads", f"{s['read_percent']:.0f}", f"{s['read_random_percent']:.0f}",
                        f"{s['read_sequential_percent']:.0f}")
    console.print(composition)


@cli.group("test")
def test_group() -> None:
    """Media qualification procedures of Swissbit's application note AN2103: the write test (its
    Fig. 1), the read test (its Fig. 6) and the pSLC-cache fill (its Figs. 2-5)."""


def _procedure_options(command: Any) -> Any:
    """The options every ``nandlab test`` procedure takes."""
    options = [
        click.option("--device", required=True, metavar="PRESET|FILE",
                     help="Device preset (see `nandlab presets`) or a TOML file: its [device] and [ftl], "
                     "not its phases."),
        click.option("--capacity", metavar="SIZE", help='Nominal capacity, e.g. "4GiB" (sets [device] capacity).'),
        click.option("--seed", type=SEED, default=qualify.SEED, show_default=True, metavar="N"),
        click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout."),
        click.option("--out", type=_OUT_DIR, metavar="DIR",
                     help="Write series.parquet, the sections/phases CSV, result.json and a PNG to DIR."),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar, no messages on stderr."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


_QUEUE_DEPTH = click.option(
    "--queue-depth", type=QUEUE_DEPTH, default=qualify.QUEUE_DEPTH, show_default=True, metavar="N",
    help="Requests in flight (1: one at a time, as the note's tests; 32: SATA NCQ).",
)


@test_group.command("write-sections", short_help="The write test (AN2103 Fig. 1): seven passes, speed vs GiB written.")
@_procedure_options
@_QUEUE_DEPTH
def test_write_sections(**options: Any) -> None:
    """The write test (AN2103 Fig. 1): TRIM the drive, then write its capacity seven times: 4 KiB
    random, each address once (1), the same order again (2), a new order (3); 128 KiB sequential
    (4), again (5); 4 KiB uniform random twice (6, 7)."""
    _run_procedure(qualify.write_sections, **options)


@test_group.command("read-sections", short_help="The read test (AN2103 Fig. 6): four reads, speed vs GiB read.")
@_procedure_options
@_QUEUE_DEPTH
def test_read_sections(**options: Any) -> None:
    """The read test (AN2103 Fig. 6): read a drive written 4 KiB at random, 4 KiB at random in
    another order (1) and 128 KiB sequentially (2); write it 128 KiB sequentially, read it both
    ways again (3, 4)."""
    _run_procedure(qualify.read_sections, **options)


@test_group.command("pslc-fill", short_help="The pSLC-cache test (AN2103 Figs. 2-5): one sequential fill.")
@_procedure_options
@click.option("--aged", is_flag=True, help="Every block has used 10 % of its rated cycles ([device.wear] initial).")
@click.option("--direct-write/--no-direct-write", default=None, help="Set [ftl] direct_write (default: the device's).")
@click.option("--compare", type=click.Choice(["aged", "direct-write"]),
              help="Also run the drive aged (Fig. 3) or with direct-write (Fig. 4) and overlay both curves; "
              "the JSON gets the second run under `compare`.")
def test_pslc_fill(compare: str | None, **options: Any) -> None:
    """The pSLC-cache test (AN2103 Figs. 2-5): TRIM, then write the whole capacity 128 KiB
    sequentially without a pause; phases: pslc (into the cache), direct (direct-write), folding
    (the cache folded into native blocks), or native (no cache)."""
    if compare is None:
        _run_procedure(qualify.pslc_fill, **options)
        return
    variant = {"aged": {"aged": True}, "direct-write": {"direct_write": True}}[compare]
    base = {"aged": {"aged": False}, "direct-write": {"direct_write": False}}[compare]
    labels = {"aged": ("fresh", "aged (10 % of rated cycles)"), "direct-write": ("pSLC only", "direct-write")}[compare]
    _run_procedure(qualify.pslc_fill, **{**options, **base}, compare=(variant, labels))


def _run_procedure(
    procedure: Any,
    device: str,
    as_json: bool,
    out: Path | None,
    quiet: bool,
    compare: tuple[dict[str, Any], tuple[str, str]] | None = None,
    **options: Any,
) -> None:
    """Run a ``qualify`` procedure with a progress bar (and, with ``compare``, a second run with
    those options changed); print its table or JSON; write ``--out``."""
    stderr = Console(stderr=True, quiet=quiet)
    runs = [options] if compare is None else [options, {**options, **compare[0]}]
    qs = []
    for run_options in runs:
        with _LazyProgress(stderr) as progress:
            qs.append(procedure(device, progress=progress, **run_options))
    document = qs[0].to_dict()
    if compare is not None:
        document["compare"] = {"label": compare[1][1], **qs[1].to_dict()}
    if as_json:
        click.echo(output.to_strict_json(document))
    else:
        for q, label in zip(qs, compare[1] if compare else ("",)):
            _print_qualification(_stdout_console(), q, label)
    if out is not None:
        _wrote(_write_qualification(qs, out, document, compare[1] if compare else None), out, stderr)


def _print_qualification(console: Console, q: qualify.Qualification, label: str = "") -> None:
    """The device, then one row per section or phase."""
    for line in _device_lines(q.result):
        console.print(_safe(line), highlight=False)
    sections = q.part_column == "section"
    title = f"nandlab test {q.procedure}" + (f": {label}" if label else "")
    table = Table(box=box.SIMPLE_HEAD, title=_safe(title), caption=QUALIFY_CAPTION, caption_justify="left")
    table.add_column("#" if sections else "Phase")
    if sections:
        table.add_column("Section")
    for header in ("Mean\nMB/s", "Min\nMB/s", *(("WAF",) if sections else ()), "GiB"):
        table.add_column(header, justify="right")
    for number, part in enumerate(q.parts, 1):
        cells = [str(number), _safe(part["description"])] if sections else [_safe(part["name"])]
        cells += [_number(part["mean_mbps"]), _number(part["min_mbps"])]
        if sections:
            cells.append(f"{part['waf']:.2f}" if part["waf"] else "–")
        cells.append(f"{_number(part['gib_start'])}–{_number(part['gib_end'])}")
        table.add_row(*cells)
    console.print(table)


def _write_qualification(
    qs: list[qualify.Qualification], out: Path, document: dict[str, Any], labels: tuple[str, str] | None
) -> list[Path]:
    """Write series.parquet, sections.csv or phases.csv (with a ``run`` column when two runs are
    compared), result.json and PROCEDURE.png to ``out``."""
    from nandlab import plots  # matplotlib only when drawing

    q = qs[0]
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in ("series.parquet", f"{q.part_column}s.csv", "result.json", f"{q.procedure}.png")]
    parquet, csv, result_json, png = paths
    names = labels or ("",)
    tagged = [(run.series, pl.DataFrame(run.parts), name) for run, name in zip(qs, names)]
    if labels:
        tagged = [(s.with_columns(run=pl.lit(n)), p.with_columns(run=pl.lit(n)), n) for s, p, n in tagged]
    pl.concat([s for s, _, _ in tagged]).write_parquet(parquet)
    pl.concat([p for _, p, _ in tagged]).write_csv(csv)
    result_json.write_text(output.to_strict_json(document) + "\n", encoding="utf-8")
    if q.part_column == "section":
        plots.sections(q, png)
    else:
        plots.fill_curves(qs, png, labels=list(labels) if labels else None)
    return paths


def main() -> None:
    """Entry point of the ``nandlab`` command."""
    cli(prog_name="nandlab")


def _progress_bar(console: Console, *columns: Any, **options: Any) -> Progress:
    """A progress bar on ``console`` that vanishes when it stops; drawn only on a terminal (elsewhere
    rich cannot redraw it in place, and ends it with an empty line that would come before an error's
    one line)."""
    shown = console if console.is_interactive else Console(stderr=True, quiet=True)
    return Progress(*columns, console=shown, transient=True, **options)


class _LazyProgress:
    """A progress bar on stderr for the current phase, that appears once the run has lasted a second.

    Called as the run's progress callback; it draws only when called (no background thread), and
    vanishes when the run ends.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._started = time.monotonic()
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._phase: int | None = None

    def __enter__(self) -> _LazyProgress:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, fraction: float, info: dict[str, Any]) -> None:
        if self._console.quiet or time.monotonic() - self._started < PROGRESS_DELAY_SECONDS:
            return
        if self._bar is None:
            self._bar = _progress_bar(
                self._console,
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[detail]}"),
                TimeRemainingColumn(),
                auto_refresh=False,
            )
            self._bar.start()
            self._task = self._bar.add_task("", total=1.0, detail="")
        elif info["phase"] != self._phase:
            self._bar.reset(self._task)  # the time left is estimated per phase
        self._phase = info["phase"]
        description = f"phase {info['phase'] + 1}/{info['phases']} {info['phase_name']}"
        detail = f"{info['host_write_bytes'] / GIB:.2f} GiB written, {_number(info['sim_seconds'])} s simulated"
        if info.get("wear_used"):
            detail += f", wear {info['wear_used']:.0%} of rating, spare lost {info['reserve_used']:.0%}"
        self._bar.update(self._task, completed=fraction, description=_safe(description), detail=detail)
        self._bar.refresh()


def _print_summary(console: Console, result: api.Result) -> None:
    """The device, then the results table: one row per phase and the run total."""
    for line in _device_lines(result):
        console.print(_safe(line), highlight=False)
    table = Table(box=box.SIMPLE_HEAD, caption=WAF_CAPTION, caption_justify="left")
    table.add_column("Phase")
    for header in (
        "Written\nGiB",
        "Read\nGiB",
        "IOPS",
        "MB/s",
        "WAF",
        "Read µs\np50 / p99",
        "Write µs\np50 / p99",
        "Sim\ns",
        "Wall\ns",
        "Mreq per\nwall-s",
    ):
        table.add_column(header, justify="right")
    for index, phase in enumerate(result.phases):
        jobs = phase.get("jobs", [])
        table.add_row(*_row(phase["name"], phase), end_section=index == len(result.phases) - 1 and not jobs)
        for number, job in enumerate(jobs, 1):
            table.add_row(*_job_row(job), style="dim", end_section=index == len(result.phases) - 1 and number == len(jobs))
    table.add_row(*_row("total", result.summary), style="bold")
    console.print(table)
    for note in output.skipped_trace_lines(result.phases):
        console.print(_safe(note), style="yellow", highlight=False)
    _print_power_cuts(console, result)


def _print_power_cuts(console: Console, result: api.Result) -> None:
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
        table.add_row(*map(_safe, row.values()))
    console.print(table)
    verdict = output.power_cut_verdict(result.phases)
    console.print(_safe(verdict), style="yellow" if "unsafe" in verdict else None)
    caveat = output.power_cut_caveat(result.phases)
    if caveat:
        console.print(_safe(caveat), style="yellow")
    for line in output.lost_writes(result.phases, result.device, 5):
        console.print(_safe(f"  lost: {line}"), highlight=False)


def _row(label: str, summary: dict[str, Any]) -> list[str]:
    """One table row from a summary dict."""
    return [
        _safe(label),
        _number((summary["host_write_bytes"] + summary.get("fill_bytes", 0)) / GIB),
        _number(summary["host_read_bytes"] / GIB),
        _number(summary["iops"]),
        _number(summary["mbps"]),
        f"{summary['waf']:.2f}" if summary["host_write_bytes"] else "–",
        _latency(summary["read_latency_us"]),
        _latency(summary["write_latency_us"]),
        _number(summary["sim_seconds"]),
        _number(summary["wall_seconds"]),
        _number(summary["requests_per_wall_second"] / 1e6),
    ]


def _job_row(job: dict[str, Any]) -> list[str]:
    """A ``[[phase.job]]``'s row under its phase: its own requests (the drive's WAF and wall time are
    the phase's)."""
    return [
        _safe(f"  └ {job['name']}"),
        _number(job["host_write_bytes"] / GIB),
        _number(job["host_read_bytes"] / GIB),
        _number(job["iops"]),
        _number(job["mbps"]),
        "",
        _latency(job["read_latency_us"]),
        _latency(job["write_latency_us"]),
        _number(job["sim_seconds"]),
        "",
        "",
    ]


def _latency(latency: dict[str, float]) -> str:
    """``p50 / p99`` in µs, or a dash when there was no such request."""
    if not latency["max"]:
        return "–"
    return f"{_number(latency['p50'])} / {_number(latency['p99'])}"


_number = output.number


def _device_lines(result: api.Result) -> list[str]:
    """The drive: preset, cell, user capacity and interface; then its geometry."""
    return output.device_lines(result.device)


def _stdout_console() -> Console:
    """A console on stdout; when piped, wide enough for the table rather than rich's 80 columns."""
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPED_WIDTH
    return console


@cli.command("sweep", short_help="Run a parameter sweep: one run per grid point, on this machine or a dask cluster.")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path), metavar="SWEEP.toml")
@click.option("--out", type=_OUT_DIR, metavar="DIR",
              help="Where the dataset goes (default: results/<sweep name>). Finished runs there are not run again.")
@click.option("--workers", type=WORKERS, default=None, show_default="all cores", metavar="N",
              help="Runs at once on this machine (processes).")
@click.option("--scheduler", metavar="tcp://HOST:PORT", help="Run on a dask.distributed cluster: its scheduler's address.")
@click.option("--local-cluster", type=WORKERS, metavar="N",
              help="Run on a dask LocalCluster of N worker processes.")
@click.option("--only", "only", multiple=True, metavar="AXIS=V1,V2",
              help="Only these positions of an axis (by label or value); repeatable.")
@click.option("--list", "list_points", is_flag=True,
              help="Check every point's config and list the points (and which are finished in --out); run nothing.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def sweep_command(file: Path, out: Path | None, workers: int | None, scheduler: str | None,
                  local_cluster: int | None, only: tuple[str, ...], list_points: bool, quiet: bool) -> None:
    """Run every point of a sweep file (a base config and axes: lists, ranges, zipped keys, labels)
    into one Parquet dataset: results.parquet (one row per run: axis values and every summary
    figure) and timeseries/ (one partition per run). A killed sweep started again skips the runs it
    finished. A failed run is recorded and the others go on; the exit status is the number of
    failed runs (at most 100)."""
    from nandlab import sweep

    if scheduler is not None and local_cluster is not None:
        raise click.BadParameter("give either --scheduler or --local-cluster", param_hint="--local-cluster")
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
    stderr = Console(stderr=True, quiet=quiet)
    started = time.monotonic()
    with _progress_bar(
        stderr, TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]}"),
        TimeElapsedColumn(), TimeRemainingColumn(),
    ) as bar:
        task = bar.add_task("", total=None, failed="")

        def progress(done: int, total: int, failed: int) -> None:
            bar.update(task, completed=done, total=total, failed=f"{failed} failed" if failed else "")

        outcome = sweep.run(study, directory, workers=workers, scheduler=scheduler,
                            local_cluster=local_cluster, progress=progress)
    wall = time.monotonic() - started
    from nandlab import report

    try:
        report.write(directory)
    except ValueError as error:  # e.g. a bad [report] table: the runs are saved, the report is not
        raise _Failure(f"the runs are saved in {directory}, but its report failed: {error}", 2) from None
    where = scheduler or (f"a dask LocalCluster of {local_cluster}" if local_cluster else
                          f"{workers or os.cpu_count() or 1} processes")
    console = _stdout_console()
    console.print(
        f"{_safe(study.name)}: {outcome.results.height} runs — {outcome.ran} ran now on {_safe(where)} "
        f"in {wall:.1f} s, {outcome.reused} finished earlier, {outcome.failed} failed. "
        f"Dataset in {_safe(str(directory))}/",
        highlight=False, soft_wrap=True,
    )
    failures = outcome.results.filter(pl.col("status") == "failed")
    for row in failures.head(10).iter_rows(named=True):
        error = _safe(_printable(str(row["error"])))
        console.print(f"  failed: run {row['run']} ({row['run_id']}): {error}", highlight=False, soft_wrap=True)
    if failures.height:
        raise click.exceptions.Exit(min(failures.height, 100))


def _print_points(study: Any, directory: Path) -> None:
    """The sweep's points as a table: index, coordinates, run id, and whether ``directory`` has it."""
    from nandlab import sweep

    grid = sweep.points(study)
    table = Table("Run", *[_safe(axis.name) for axis in study.axes], "Run id", "Finished",
                  title=f"{_safe(study.name)}: {len(grid)} runs ({study.procedure})", box=box.SIMPLE_HEAD)
    finished = 0
    for p in grid:
        done = (directory / "runs" / f"{p.run_id}.parquet").exists()
        finished += done
        table.add_row(str(p.index), *[_safe(str(v)) for v in p.coordinates.values()], p.run_id, "yes" if done else "")
    console = _stdout_console()
    console.print(table)
    console.print(f"{finished} of {len(grid)} finished in {_safe(str(directory))}/", highlight=False)


@cli.command("matrix", short_help="SNIA-style matrices: IOPS and MB/s over R/W mix x block size, burst and steady.")
@click.option("--device", required=True, metavar="PRESET|FILE",
              help="Device preset (see `nandlab presets`) or a TOML file: its [device] and [ftl].")
@click.option("--capacity", metavar="SIZE", help='Nominal capacity, e.g. "1GiB" (sets [device] capacity).')
@click.option("--mixes", default="100/0,75/25,50/50,25/75,0/100", show_default=True, metavar="R/W,...",
              help="Read/write mixes, % of the bytes moved.")
@click.option("--block-sizes", default="512B,4KiB,8KiB,16KiB,32KiB,64KiB,128KiB,256KiB,512KiB,1MiB",
              show_default=True, metavar="SIZE,...", help="Block sizes of the random I/O.")
@click.option("--states", default="burst,steady", show_default=True, metavar="STATE,...",
              help="burst (a fresh drive) and/or steady (SNIA PTS: precondition, rounds until steady).")
@click.option("--queue-depth", type=QUEUE_DEPTH, default=32, show_default=True, metavar="N",
              help="Requests in flight.")
@click.option("--burst-volume", type=_Finite(min=0, min_open=True), default=0.05, show_default=True,
              metavar="X", help="Host data per burst cell, x the capacity.")
@click.option("--round-volume", type=_Finite(min=0, min_open=True), default=0.25, show_default=True,
              metavar="X", help="Host data written per steady-state round (read, for reads only), x the capacity.")
@click.option("--max-rounds", type=click.IntRange(5, 1000), default=25, show_default=True, metavar="N",
              help="Steady-state rounds per cell at most (SNIA PTS: 25).")
@click.option("--scaling/--no-scaling", default=True, show_default=True,
              help="Also measure bandwidth vs die count (1 MiB random reads and writes).")
@click.option("--workers", type=WORKERS, default=min(os.cpu_count() or 1, MAX_WORKERS), show_default="all cores",
              help="Runs at once (each cell is a run on its own drive).")
@click.option("--seed", type=SEED, default=1, show_default=True, metavar="N")
@click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout.")
@click.option("--out", type=_OUT_DIR, metavar="DIR",
              help="Write matrix.parquet, matrix.csv, scaling.csv, result.json and PNGs to DIR.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no messages on stderr.")
def matrix_command(
    device: str,
    capacity: str | None,
    mixes: str,
    block_sizes: str,
    states: str,
    queue_depth: int,
    burst_volume: float,
    round_volume: float,
    max_rounds: int,
    scaling: bool,
    workers: int,
    seed: int,
    as_json: bool,
    out: Path | None,
    quiet: bool,
) -> None:
    """SNIA-style performance matrices (the SNIA tutorial, REFERENCE.md section 2): IOPS and MB/s of
    random I/O over read/write mix x block size, on a fresh drive (burst) and in steady state (SNIA
    PTS: two capacities of 128 KiB sequential writes, then rounds until five in a row are within
    10 %), beside the tutorial's theoretical bandwidth; and bandwidth vs die count."""
    from nandlab import matrix as matrices

    parsed: dict[str, Any] = {}
    for option, parse, text in (("--mixes", matrices.parse_mixes, mixes),
                                ("--block-sizes", matrices.parse_block_sizes, block_sizes),
                                ("--states", matrices.parse_states, states)):
        try:
            parsed[option] = parse(text)
        except ValueError as error:
            raise _Failure(f"{option}: {error}", 2) from None
    stderr = Console(stderr=True, quiet=quiet)
    started = time.monotonic()
    # Drawn from the first finished run on (a bad device or capacity fails before any).
    bar = _progress_bar(
        stderr, TextColumn("matrix runs"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
        TimeElapsedColumn(), TimeRemainingColumn(),
    )
    task = bar.add_task("", total=None)

    def step(done: int, total: int, label: str) -> None:
        if not bar.live.is_started and not quiet:
            bar.start()
        bar.update(task, completed=done, total=total, description=_safe(label))

    try:
        m = matrices.run(
            device, capacity, mixes=parsed["--mixes"], block_sizes=parsed["--block-sizes"], states=parsed["--states"],
            queue_depth=queue_depth, scaling=scaling, burst_volume=burst_volume, round_volume=round_volume,
            max_rounds=max_rounds, seed=seed, workers=workers, on_step=step,
        )
    finally:
        if bar.live.is_started:
            bar.stop()
    wall = time.monotonic() - started
    document = m.to_dict()
    if as_json:
        click.echo(output.to_strict_json(document))
    else:
        _print_matrix(_stdout_console(), m)
    if out is not None:
        _wrote(_write_matrix(m, out, document), out, stderr)
    stderr.print(f"matrix: {wall:.1f} s wall", highlight=False)


def _print_matrix(console: Console, m: Any) -> None:
    """The device, the model's figures, then per state an IOPS grid, an MB/s grid (with % of the
    theoretical maximum) and, in steady state, the rounds; then bandwidth vs die count."""
    from types import SimpleNamespace

    from nandlab.matrix import block_label

    for line in _device_lines(SimpleNamespace(device=m.drive)):  # the engine's device figures, as a run's
        console.print(_safe(line), highlight=False)
    t = m.theoretical
    console.print(
        f"Theory:   {_number(t['read_mbps_per_die'])} MB/s reads, {_number(t['write_mbps_per_die'])} MB/s writes "
        f"per die (page / (tR or tPROG + transfer)) · channels {_number(t['channel_mbps'])} · "
        f"link {_number(t['link_mbps'])} MB/s",
        highlight=False,
    )
    console.print("MB/s = 10^6 bytes per simulated second.", highlight=False)
    for state, part in m.states.items():
        cells = part["cells"]
        mixes = list(dict.fromkeys((c["read_percent"], c["write_percent"]) for c in cells))
        sizes = sorted({c["block_size"] for c in cells})
        by_key = {(c["read_percent"], c["block_size"]): c for c in cells}
        unsteady = state == "steady" and not all(c["steady"] for c in cells)
        if state == "burst":
            how = f"fresh drive (filled at memory speed), {_number(part['volume'])} × capacity per cell"
        else:
            how = (f"SNIA PTS: 2 × capacity 128 KiB sequential, then rounds writing {_number(part['round_volume'])} × "
                   f"capacity until steady (≤ {part['max_rounds']}); means of the last {part['window']} rounds")
        grids = [("IOPS", lambda c: _number(c["iops"]) + _dagger(c), None)]
        grids.append(("MB/s", lambda c: _number(c["mbps"]) + _dagger(c), "Theory\nMB/s"))
        grids.append(("% of theoretical", lambda c: _percent(c["percent_of_theoretical"]) + _dagger(c), None))
        if state == "steady":
            grids.append(("rounds", lambda c: str(c["steady_round"]) if c["steady"]
                          else f"{c['rounds']}†", None))
        note = f" † not steady within {part['max_rounds']} rounds." if unsteady else ""
        console.print(f"\n[bold]{state}[/]: {_safe(how)}; random I/O, queue depth {m.queue_depth}.{note} "
                      f"RMS over the cells: {_number(part['rms_iops'])} IOPS, {_number(part['rms_mbps'])} MB/s.",
                      highlight=False)
        for what, show, extra in grids:
            table = Table(box=box.SIMPLE_HEAD, title=f"{state}: {what}")
            table.add_column("R/W %")
            for size in sizes:
                table.add_column(block_label(size), justify="right")
            if extra:
                table.add_column(extra, justify="right")
            for mix in mixes:
                row = [f"{mix[0]}/{mix[1]}", *(show(by_key[(mix[0], size)]) for size in sizes)]
                if extra:
                    row.append(_number(by_key[(mix[0], sizes[0])]["theoretical_mbps"]))
                table.add_row(*row)
            console.print(table)
    if m.scaling:
        console.print(
            f"\n[bold]scaling[/]: {block_label(m.scaling[0]['block_size'])} random, queue depth {m.queue_depth}: reads "
            "of a filled drive, writes to an empty one (no garbage collection, as the model assumes).",
            highlight=False,
        )
        table = Table(
            "Dies", "Channels ×\nchips × dies", "Reads\nMB/s", "Theory", "Writes\nMB/s", "Theory",
            box=box.SIMPLE_HEAD, title="Bandwidth vs die count",
        )
        for dies in sorted({p["dies"] for p in m.scaling}):
            point = {p["read_percent"]: p for p in m.scaling if p["dies"] == dies}
            layout = point[100] if 100 in point else point[0]
            figures = [
                (_number(point[mix]["mbps"]), _number(point[mix]["theoretical_mbps"])) if mix in point else ("–", "–")
                for mix in (100, 0)
            ]
            table.add_row(
                str(dies), f"{layout['channels']} × {layout['chips_per_channel']} × {layout['dies_per_chip']}",
                *(value for pair in figures for value in pair),
            )
        console.print(table)


def _dagger(cell: dict[str, Any]) -> str:
    """``†`` after the figures of a steady-state cell that never became steady."""
    return "†" if cell.get("steady") is False else ""


def _percent(value: float) -> str:
    """``75``, ``9.2``, ``0.3``: whole percents from 10 up."""
    return f"{value:.0f}" if value >= 9.95 else f"{value:.1f}"


def _write_matrix(m: Any, out: Path, document: dict[str, Any]) -> list[Path]:
    """Write matrix.parquet, matrix.csv (one row per cell), scaling.csv, result.json, one
    matrix-STATE.png per state and scaling.png to ``out``."""
    from nandlab import plots  # matplotlib only when drawing

    out.mkdir(parents=True, exist_ok=True)
    table = m.table()
    paths = [out / "matrix.parquet", out / "matrix.csv", out / "result.json"]
    table.write_parquet(paths[0])
    table.write_csv(paths[1])
    paths[2].write_text(output.to_strict_json(document) + "\n", encoding="utf-8")
    for state in m.states:
        paths.append(out / f"matrix-{state}.png")
        plots.matrix_block_sizes(m, state, paths[-1])
    if m.scaling:
        paths += [out / "scaling.csv", out / "scaling.png"]
        pl.DataFrame(m.scaling).write_csv(paths[-2])
        plots.die_scaling(m, paths[-1])
    return paths
