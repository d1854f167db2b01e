"""The options the ``nandlab`` commands share, and the types that refuse a bad value in one line
before anything runs (a seed beyond 64 bits, a queue depth the engine does not take, nan, a file
where a directory is expected)."""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any

import click

from nandlab import files, output, slicing
from nandlab._core import parse_share
from nandlab.pool import MAX_WORKERS
from nandlab.procedures.base import QUEUE_DEPTH as QUEUE_DEPTH  # the commands' --queue-depth
from nandlab.procedures.base import Finite as Finite  # the commands' numbers

SEED = click.IntRange(0, 2**64 - 1)
"""A seed: the engine's are 64-bit unsigned integers."""
WORKERS = click.IntRange(1, MAX_WORKERS)
"""Runs at once (processes or threads), at most ``pool.MAX_WORKERS``."""
DEVICE_IDS = 2**32
"""Device / volume / ASU numbers of a trace are below this (the engine's are 32-bit)."""


def fraction(text: str) -> float:
    """A share as the CLI takes it, by the engine's rule (as configs read it): ``30%``, ``30 %`` or
    ``0.3``; a bare number above 1 (``30``) is refused with what it would mean (ValueError with the
    engine's words)."""
    return parse_share(text)


class Fraction(Finite):
    """A share within a range, given as ``30%`` or ``0.3`` (see ``fraction``)."""

    name = "fraction"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, str):
            try:
                value = fraction(value)
            except ValueError as error:
                self.fail(str(error), param, ctx)
        return super().convert(value, param, ctx)


class SliceBy(click.ParamType):
    """``--slice N|auto``: a lifetime's approximate mode (``nandlab.slicing``)."""

    name = "N|auto"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | str:
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        text = str(value).strip()
        if text.isascii() and text.isdigit() and len(text) < 8 and 1 <= int(text) <= slicing.MAX_SLICE:
            return int(text)
        self.fail(f"expected a whole number from 1 to {slicing.MAX_SLICE:,} or \"auto\", found {value!r}", param, ctx)


class Directory(click.Path):
    """A directory to write to: one, or a path where one can be made; refused before the run if it is
    a file of any kind (a device, a FIFO)."""

    def __init__(self) -> None:
        super().__init__(file_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        path = super().convert(value, param, ctx)
        problem = files.directory_problem(path)
        if problem is not None:
            self.fail(f"{click.format_filename(value)!r}: {problem}", param, ctx)
        blocking = _blocking_entry(path) if os.path.isdir(path) else None
        if blocking is not None:
            self.fail(f"{click.format_filename(value)!r} holds {blocking}, where nandlab writes its results "
                      "(move it, or choose another --out)", param, ctx)
        return path


def _blocking_entry(directory: Path) -> str | None:
    """What in ``directory`` (or its ``figures/``) would stop results being written there, found before
    the run rather than after it: a FIFO (writing to it blocks for good), a socket or a device, or a
    directory named like a result file (``summary.json/``)."""
    for folder in (directory, directory / "figures"):
        try:
            entries = list(os.scandir(folder)) if folder.is_dir() and not folder.is_symlink() else []
        except OSError:
            continue
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            name = click.format_filename(os.path.relpath(entry.path, directory))
            if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                return f"{name!r}, which is not a regular file"
            if stat.S_ISDIR(mode) and entry.name.endswith(output.RESULT_SUFFIXES):
                return f"{name!r}, a directory named like a result file"
    return None


def numbers(ctx: click.Context, param: click.Parameter, text: str) -> list[float]:
    """A comma-separated list of finite fractions, percentages allowed ("10%,20%" or "0.1,0.2")."""
    try:
        numbers = [fraction(x) for x in text.split(",")]
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    if not numbers or not all(math.isfinite(x) for x in numbers):
        raise click.BadParameter(f"expected comma-separated finite numbers, found {text!r}")
    if len(set(numbers)) < len(numbers):  # a grid point twice: its cell would be two runs, one shown
        raise click.BadParameter(f"each value once, found {text!r}")
    return numbers


def read_levels(ctx: click.Context, param: click.Parameter, text: str) -> dict[str, float]:
    """``low=0.25,medium=0.5``: read levels by name, each a finite read fraction."""
    try:
        pairs = [(name.strip(), float(value)) for name, value in (item.split("=") for item in text.split(","))]
    except ValueError:
        pairs = []
    levels = dict(pairs)
    if not levels or not all(name and math.isfinite(value) for name, value in levels.items()):
        raise click.BadParameter(f"expected name=fraction,..., found {text!r}")
    if len(levels) < len(pairs) or len(set(levels.values())) < len(levels):  # one was dropped, or twice run
        raise click.BadParameter(f"each name and fraction once, found {text!r}")
    return levels


def device_ids(ctx: click.Context, param: click.Parameter, text: str | None) -> list[int] | None:
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


OUT_DIR = Directory()

AS_JSON = click.option("--json", "as_json", is_flag=True, help="Print only the result as JSON on stdout.")
QUIET = click.option("--quiet", "-q", is_flag=True, help="No progress bar, no messages on stderr.")
QUIET_BAR = click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
DEATH = click.option(
    "--death", type=click.Choice(["capacity", "dead-blocks"]), default=None,
    help="[ftl] death: the drive dies when it can no longer hold its advertised capacity (capacity, the "
         "default) or, the ZombieNAND paper's rule, when more blocks have died than its reserve less the GC "
         "high watermark (dead-blocks).",
)


def capacity(example: str = "4GiB") -> Any:
    """``--capacity SIZE``."""
    return click.option("--capacity", metavar="SIZE",
                        help=f'Nominal capacity, e.g. "{example}" (sets [device] capacity).')


def all_cores(help: str) -> Any:
    """``--workers N``, all cores by default."""
    return click.option("--workers", type=WORKERS, default=min(os.cpu_count() or 1, MAX_WORKERS),
                        show_default="all cores", help=help)


def device(help: str = "Device preset (see: nandlab presets) or a TOML file: its [device] and [ftl].") -> Any:
    """``--device PRESET|FILE``, required."""
    return click.option("--device", required=True, metavar="PRESET|FILE", help=help)


def out(help: str, **options: Any) -> Any:
    """``--out DIR``: a directory to write to (see ``Directory``)."""
    return click.option("--out", type=OUT_DIR, metavar="DIR", help=help, **options)


def check_snapshot_options(snapshot: Path | None, snapshot_every: str | None, force: bool) -> None:
    """``--snapshot-every`` and ``--force`` only with ``--snapshot``."""
    if snapshot_every is not None and snapshot is None:
        raise click.UsageError("--snapshot-every needs --snapshot PATH (where to write it)")
    if force and snapshot is None:
        raise click.UsageError("--force lets --snapshot PATH write over another run's snapshot: give --snapshot")


def snapshot_options(command: Any) -> Any:
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
        help="On Ctrl-C or SIGTERM, stop with the run's whole state in PATH (nandlab resume PATH goes on "
        "to the same result).",
    )(command)
