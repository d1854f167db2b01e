"""What the ``nandlab`` commands print: results on stdout (a procedure's tables, or its JSON),
progress bars and the files written on stderr; and the ``--out`` directory's report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import Progress

from nandlab.cli.errors import Failure
from nandlab.procedures.base import ProcedureResult
from nandlab.progress_bars import PhaseBar, clock
from nandlab.terminal import safe, stdout_console

PROGRESS_DELAY_SECONDS = 1.0


def show(result: ProcedureResult, as_json: bool, out: Path | None = None, stderr: Console | None = None) -> None:
    """Print a procedure's result (its tables, or with ``as_json`` its JSON) and write ``out``."""
    if as_json:
        click.echo(result.to_json())
    else:
        result.print(stdout_console())
    if out is not None:
        wrote(result.write(out), out, stderr)


def wrote(paths: list[Path], out: Path, console: Console | None = None) -> None:
    """Builds ``out``'s HTML report (``nandlab.report``) and says what was written there."""
    from nandlab import report

    try:
        paths = [*paths, report.write(out)]
    except ValueError as error:  # results too large to check (summary.json past 2 M values): they are saved
        raise Failure(f"the results are saved in {out}, but its report failed: {error}") from None
    (console or Console(stderr=True)).print(
        f"wrote {', '.join(safe(path.name) for path in paths)} to {safe(str(out))}", soft_wrap=True, highlight=False)


def progress_bar(console: Console, *columns: Any, **options: Any) -> Progress:
    """A progress bar on ``console`` that vanishes when it stops; drawn only on a terminal
    (``drawn``)."""
    return Progress(*columns, console=drawn(console), transient=True, **options)


def drawn(console: Console) -> Console:
    """Where a bar meant for ``console`` is drawn: there on a terminal, nowhere elsewhere (rich cannot
    redraw it in place, and ends it with an empty line that would come before an error's one line)."""
    return console if console.is_interactive else Console(stderr=True, quiet=True)


FIRST_LINE_SECONDS = 5.0
LINE_EVERY_SECONDS = 30.0
"""Without a terminal, a phase run until the drive dies says how far it is after this long, then this often."""


class LazyProgress(PhaseBar):
    """The bar of a run's phases (``nandlab.progress_bars.PhaseBar``) on stderr, that appears once
    the run has lasted a second, only on a terminal, and vanishes when the run ends. Without a
    terminal (a log file, a pipe), a phase run until the drive dies prints a line now and then
    instead: its wear and when the drive is projected to die (a long lifetime says early how long it
    will take).

    Called as the run's progress callback; it draws only when called (no background thread).
    """

    def __init__(self, console: Console) -> None:
        super().__init__(drawn(console))
        self._quiet = console.quiet
        self._started = time.monotonic()
        self._lines = None if console.quiet or console.is_interactive else console
        self._next_line = self._started + FIRST_LINE_SECONDS

    def __call__(self, fraction: float, info: dict[str, Any]) -> None:
        now = time.monotonic()
        if self._quiet or now - self._started < PROGRESS_DELAY_SECONDS:
            return
        super().__call__(fraction, info)
        if self._lines is not None and info.get("until_dead") and now >= self._next_line:
            self._next_line = now + LINE_EVERY_SECONDS
            self._lines.print(safe(life_line(info, self.death_in)), highlight=False, soft_wrap=True)


def life_line(info: dict[str, Any], death_in: float | None) -> str:
    """A line on how far a phase run until the drive dies is: its wear, the spare flash lost, the data
    written, and the wall time it is projected to take still."""
    if death_in is None and info.get("zombie") and info["wear_used"] >= 1:
        projected = ("living on past its rating (ZombieNAND): no projection, the pace it loses its spare flash "
                     "at changes")
    elif death_in is None:
        projected = "no projection yet (the wear has not moved)"
    elif info.get("zombie") and info["wear_used"] < 1:
        projected = (f"its rating is projected to run out in {clock(death_in)} (ZombieNAND may keep the drive "
                     "alive past it)")
    else:
        projected = f"the drive is projected to die in {clock(death_in)}"
    return (f"phase {info['phase'] + 1}/{info['phases']} {info['phase_name']}: {info['wear_used']:.1%} of the "
            f"rating used, {info['reserve_used']:.1%} of the spare flash lost, "
            f"{info['host_write_bytes'] / 2**30:,.2f} GiB written; {projected}")



