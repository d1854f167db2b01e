"""What the ``nandlab`` commands print: results on stdout (a procedure's tables, or its JSON),
progress bars and the files written on stderr; and the ``--out`` directory's report."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TaskProgressColumn, TextColumn, TimeRemainingColumn

from nandlab.output import number
from nandlab.procedures.base import ProcedureResult
from nandlab.terminal import safe

GIB = 2**30
PROGRESS_DELAY_SECONDS = 1.0
PIPED_WIDTH = 120


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

    paths = [*paths, report.write(out)]
    (console or Console(stderr=True)).print(f"wrote {', '.join(path.name for path in paths)} to {out}", soft_wrap=True)


def progress_bar(console: Console, *columns: Any, **options: Any) -> Progress:
    """A progress bar on ``console`` that vanishes when it stops; drawn only on a terminal (elsewhere
    rich cannot redraw it in place, and ends it with an empty line that would come before an error's
    one line)."""
    shown = console if console.is_interactive else Console(stderr=True, quiet=True)
    return Progress(*columns, console=shown, transient=True, **options)


class LazyProgress:
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

    def __enter__(self) -> LazyProgress:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._bar is not None:
            self._bar.stop()

    def __call__(self, fraction: float, info: dict[str, Any]) -> None:
        if self._console.quiet or time.monotonic() - self._started < PROGRESS_DELAY_SECONDS:
            return
        if self._bar is None:
            self._bar = progress_bar(
                self._console,
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[detail]}"),
                TimeRemainingColumn(),
                auto_refresh=False,
            )
            # Started below, once the task is labelled: no unlabelled "0 %" first frame.
            self._task = self._bar.add_task("", total=1.0, detail="")
        elif info["phase"] != self._phase:
            self._bar.reset(self._task)  # the time left is estimated per phase
        self._phase = info["phase"]
        description = f"phase {info['phase'] + 1}/{info['phases']} {info['phase_name']}"
        detail = f"{info['host_write_bytes'] / GIB:.2f} GiB written, {number(info['sim_seconds'])} s simulated"
        if info.get("wear_used"):
            detail += f", wear {info['wear_used']:.0%} of rating, spare lost {info['reserve_used']:.0%}"
        self._bar.update(self._task, completed=fraction, description=safe(description), detail=detail)
        if not self._bar.live.is_started:
            self._bar.start()
        self._bar.refresh()


def stdout_console() -> Console:
    """A console on stdout; when piped, wide enough for the table rather than rich's 80 columns."""
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPED_WIDTH
    return console
