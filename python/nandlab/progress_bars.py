"""Progress bars, drawn with rich: in a Jupyter notebook (rich's notebook support, through
ipywidgets: ``pip install "nandlab[notebook]"``) or on stderr in a terminal. ``nandlab.run``, ``nandlab.resume``, ``nandlab.lifetime.run``
and ``compare``, ``nandlab.fio.run`` and ``nandlab.sweep.run`` take ``progress``:

- ``"auto"`` (their default): a bar in a notebook, none elsewhere;
- ``True``: a bar anywhere (on stderr outside a notebook); ``False`` or ``None``: none;
- a callable: called with each update instead of a bar (``nandlab.api.ProgressCallback``, or
  ``nandlab.sweep.ProgressCallback`` for a sweep).

A run's bar shows the phase under way and how far it is; a sweep's, the runs done. A bar closes
when its run ends (full), fails or is interrupted; in a terminal it vanishes, in a notebook (or
stderr sent to a file) its last frame stays. The CLI draws its bars with the same classes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import time
import warnings
from collections.abc import Iterator
from typing import Any, Callable, Union

from rich.console import Console
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

from nandlab._core import ConfigError
from nandlab.output import number
from nandlab.terminal import safe, shown

GIB = 2**30
BAR_WIDTH = 24
"""Characters of a phase bar's bar."""
FIXED_COLUMNS = BAR_WIDTH + len(" 100% ") + len("0:00:00 ") + 1
"""What a phase bar's line takes before its text (bar, percentage, time left), with a spare column."""
FILE_WIDTH = 120
"""The width of a bar whose stderr is a file or a pipe (rich would take 80 columns)."""

ProgressOption = Union[bool, str, Callable[..., None], None]
"""What a ``progress`` argument takes (see the module)."""


RATE_WINDOW_SECONDS = 60.0
"""The wall time over which a run until death measures how fast it wears (``DeathProjection``)."""


class DeathProjection:
    """The wall time a run until death has left, projected from how fast it wears: the mean block's
    share of its native rating used (``wear_used``) and the spare flash lost (``reserve_used``; the
    drive dies when it is all gone), each at its rate over the last ``RATE_WINDOW_SECONDS`` of wall
    time. Until the native rating is used up the drive is projected to die when it is (a drive that
    retires its blocks loses its spare flash all at the end) or when its spare flash is gone, if that
    comes first; past the rating, when its spare flash is gone at the rate it goes (``PhaseBar`` shows
    none for a ZombieNAND drive there: that pace changes). None while there is no rate to go by (the
    first report, or nothing moving)."""

    def __init__(self) -> None:
        self._points: list[tuple[float, float, float]] = []  # (wall s, wear, reserve)

    def seconds_left(self, now: float, wear: float, reserve: float) -> float | None:
        self._points.append((now, wear, reserve))
        while len(self._points) > 2 and self._points[1][0] <= now - RATE_WINDOW_SECONDS:
            self._points.pop(0)
        then, wear_then, reserve_then = self._points[0]
        elapsed = now - then
        if elapsed <= 0:
            return None

        def left(value: float, before: float) -> float | None:
            rate = (value - before) / elapsed
            return (1.0 - value) / rate if rate > 0 and value < 1.0 else None

        by_reserve = left(reserve, reserve_then)
        by_wear = left(wear, wear_then)
        times = [t for t in (by_reserve, by_wear) if t is not None]
        return min(times) if times else None


class ProjectedTimeColumn(TimeRemainingColumn):
    """The time left: a run until death's projection (the task's ``death_in`` field, ``DeathProjection``;
    ``-:--:--`` while it has none), else rich's estimate from the bar's progress."""

    def render(self, task: Any) -> Any:
        from rich.text import Text

        seconds = task.fields.get("death_in")
        if seconds is not None:
            return Text(clock(seconds), style="progress.remaining")
        if task.fields.get("projecting"):
            return Text("-:--:--", style="progress.remaining")
        return super().render(task)


def clock(seconds: float) -> str:
    """Wall seconds as H:MM:SS (at most 99:59:59)."""
    whole = int(min(max(seconds, 0.0), 359_999))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class PhaseBar:
    """A bar for a run's phases, called as its progress callback (``progress(fraction, info)``, see
    ``nandlab.api.ProgressCallback``): the phase under way ("phase 2/3 fill"), how far it is, the
    host data written and the simulated time (and a lifetime run's wear), and the time left (for a
    phase run until the drive dies, projected from its wear: ``DeathProjection``). Drawn at the first update
    (nothing before: no unlabelled 0 % frame); a new phase starts the bar again. As a context
    manager it closes when the block ends, full if it ends without an error."""

    def __init__(self, console: Console, transient: bool = True) -> None:
        self.console = console
        self.transient = transient
        self.bar: Progress | None = None
        self._task: TaskID | None = None
        self._phase: int | None = None
        self._death: DeathProjection | None = None  # a phase run until the drive dies
        self._phase_start = 0.0
        self._shown = 0.0  # the bar's fraction in this phase so far
        self.death_in: float | None = None
        """The wall seconds the phase under way is projected to have left until the drive dies."""

    def __enter__(self) -> PhaseBar:
        return self

    def __exit__(self, error_type: type[BaseException] | None, *_: Any) -> None:
        if self.bar is None:
            return
        if error_type is None and self._task is not None:
            self.bar.update(self._task, completed=1.0)
            self.bar.refresh()  # the last frame drawn shows 100 % (a notebook's widget keeps it)
        self.bar.stop()

    def __call__(self, fraction: float, info: dict[str, Any]) -> None:
        if self.bar is None:
            # The bar, percentage and time left first, at fixed widths: an 80-column terminal cuts
            # what follows (the phase's name, the data written), never them.
            self.bar = Progress(
                BarColumn(bar_width=BAR_WIDTH), TaskProgressColumn(), ProjectedTimeColumn(),
                TextColumn("{task.description}"),
                console=self.console, transient=self.transient, auto_refresh=False,
            )
            self._task = self.bar.add_task("", total=1.0, death_in=None, projecting=False)
        description = f"phase {info['phase'] + 1}/{info['phases']} {info['phase_name']}"
        detail = f"{info['host_write_bytes'] / GIB:.2f} GiB written, {number(info['sim_seconds'])} s simulated"
        if info.get("wear_used"):
            detail += f", wear {info['wear_used']:.0%} of rating, spare lost {info['reserve_used']:.0%}"
        # Cut to what the line has left after the bar, percentage and time (rich would drop those first).
        room = max(0, self.console.width - FIXED_COLUMNS)
        text = f"{description}  {detail}"
        text = safe(text if len(text) <= room else text[:max(0, room - 1)] + "…")
        now = time.monotonic()
        if info["phase"] != self._phase:
            self._death = DeathProjection() if info.get("until_dead") else None
            self._phase_start, self._shown = now, 0.0
        death_in = None
        if self._death is not None and "wear_used" in info:
            death_in = self._death.seconds_left(now, info["wear_used"], info["reserve_used"])
            if info.get("zombie") and info["wear_used"] >= 1:
                # A ZombieNAND drive living on past its rating loses its spare flash at a pace that changes
                # (the outside checks found projections of a tenth to a fiftieth of the time left): none
                # is shown, and the bar is the engine's, half native wear, half spare flash lost.
                death_in = None
            elif death_in is not None:
                # The bar follows the projection, so that its percentage and time left agree (the engine's
                # fraction of a ZombieNAND drive is half native wear, half spare flash: 50 % at its death).
                # It is a projection: a drive that lives on past it moves the bar back.
                elapsed = now - self._phase_start
                fraction = elapsed / (elapsed + death_in) if elapsed + death_in > 0 else fraction
        elif self._shown > fraction:
            fraction = self._shown  # other phases' bars only go forward
        fraction = self._shown = min(fraction, 1.0)
        self.death_in = death_in
        if self._phase is not None and info["phase"] != self._phase:
            # The time left is estimated per phase. reset() draws a frame: it gets the new phase's
            # label and fraction (a frame of the old label at 0 % came between the phases).
            self.bar.reset(self._task, completed=fraction, description=text, death_in=death_in,
                           projecting=self._death is not None)
        self._phase = info["phase"]
        self.bar.update(self._task, completed=fraction, description=text, death_in=death_in,
                        projecting=self._death is not None)
        if not self.bar.live.is_started:
            self.bar.start()  # once the task is labelled
        self.bar.refresh()


class RunsBar:
    """A bar for a sweep's runs, called as its progress callback (``progress(done, total, failed)``,
    see ``nandlab.sweep.ProgressCallback``): runs done of all, failures, time spent and left. As a
    context manager it closes when the block ends."""

    def __init__(self, console: Console, transient: bool = True) -> None:
        self.bar = Progress(
            TextColumn("runs"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=transient,
        )
        self._task = self.bar.add_task("", total=None, failed="")
        # Without a terminal (a pipe, a log file, CI) a line per finished run instead of frames.
        self._lines = not (console.is_terminal or console.is_jupyter)
        self._done = 0
        self._started = time.monotonic()

    def __enter__(self) -> RunsBar:
        if not self._lines:
            self.bar.start()
        return self

    def __exit__(self, *_: Any) -> None:
        if not self._lines:
            self.bar.stop()

    def __call__(self, done: int, total: int, failed: int) -> None:
        self.bar.update(self._task, completed=done, total=total, failed=f"{failed} failed" if failed else "")
        if self._lines and done > self._done:
            self._done = done
            elapsed = int(time.monotonic() - self._started)
            self.bar.console.print(f"runs {done}/{total} done" + (f", {failed} failed" if failed else "")
                                   + f", {elapsed // 60}:{elapsed % 60:02d} elapsed", highlight=False)


@contextlib.contextmanager
def phases(progress: ProgressOption) -> Iterator[Callable[[float, dict[str, Any]], None] | None]:
    """The callback a run's ``progress`` asks for (see the module), a ``PhaseBar`` open for the block."""
    with _opened(progress, PhaseBar) as callback:
        yield callback


@contextlib.contextmanager
def runs(progress: ProgressOption) -> Iterator[Callable[[int, int, int], None] | None]:
    """The callback a sweep's ``progress`` asks for (see the module), a ``RunsBar`` open for the block."""
    with _opened(progress, RunsBar) as callback:
        yield callback


def _has_ipywidgets() -> bool:
    """Whether rich can draw a bar in a notebook (its notebook support needs ipywidgets)."""
    return importlib.util.find_spec("ipywidgets") is not None


@contextlib.contextmanager
def _opened(progress: ProgressOption, bar: type[PhaseBar] | type[RunsBar]) -> Iterator[Any]:
    """``progress`` itself if it is a callable; else a ``bar`` it asks for, or None."""
    if callable(progress):
        yield progress
        return
    if progress not in (True, False, None, "auto"):
        raise ConfigError('progress: expected True, False, None, "auto" or a callable, '
                          f"found {shown(repr(progress))[:80]}")
    console = Console(stderr=True)
    if not progress or (progress == "auto" and not console.is_jupyter):
        yield None
        return
    if console.is_jupyter and not _has_ipywidgets():
        warnings.warn('a progress bar in a notebook needs ipywidgets: pip install "nandlab[notebook]"',
                      stacklevel=4)
        yield None
        return
    if not (console.is_terminal or console.is_jupyter):
        console = Console(stderr=True, width=FILE_WIDTH)  # a file's last frame, not squeezed into 80 columns
    with bar(console, transient=console.is_terminal) as opened:  # elsewhere its last frame stays
        yield opened
