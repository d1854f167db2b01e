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
from nandlab.progress_bars import PhaseBar
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


class LazyProgress(PhaseBar):
    """The bar of a run's phases (``nandlab.progress_bars.PhaseBar``) on stderr, that appears once
    the run has lasted a second, only on a terminal, and vanishes when the run ends.

    Called as the run's progress callback; it draws only when called (no background thread).
    """

    def __init__(self, console: Console) -> None:
        super().__init__(drawn(console))
        self._quiet = console.quiet
        self._started = time.monotonic()

    def __call__(self, fraction: float, info: dict[str, Any]) -> None:
        if self._quiet or time.monotonic() - self._started < PROGRESS_DELAY_SECONDS:
            return
        super().__call__(fraction, info)



