"""Progress bars: the CLI's, on stderr and only once a run has lasted a second; and Python's
(``progress=True``, or ``"auto"`` in a Jupyter notebook) for ``nandlab.run``, ``lifetime`` and
``sweep``, which follow the run and close however it ends."""

from __future__ import annotations

import builtins
import io
from pathlib import Path

import pytest
from rich.console import Console

import nandlab
from nandlab import progress_bars, sweep
from nandlab.cli import console as cli_console

INFO = {"phase": 0, "phase_name": "fill", "phases": 2, "sim_seconds": 2.0, "host_write_bytes": 3 << 30}


def test_progress_bar_appears_only_after_a_second(monkeypatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(cli_console.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=100)
    with cli_console.LazyProgress(console) as progress:
        clock[0] += 0.5
        progress(0.1, INFO)
        assert stream.getvalue() == ""
        clock[0] += 1.0
        progress(0.5, INFO)
        drawn = stream.getvalue()
    assert "phase 1/2 fill" in drawn and "3.00 GiB written" in drawn and "50%" in drawn


def test_quiet_progress_draws_nothing(monkeypatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(cli_console.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    with cli_console.LazyProgress(Console(file=stream, force_terminal=True, quiet=True)) as progress:
        clock[0] += 5.0
        progress(0.5, INFO)
    assert stream.getvalue() == ""


def test_a_lifetime_run_shows_wear_and_spare_lost(monkeypatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(cli_console.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    info = {**INFO, "phase_name": "life", "wear_used": 1.37, "reserve_used": 0.42}
    with cli_console.LazyProgress(Console(file=stream, force_terminal=True, width=160)) as progress:
        clock[0] += 2.0
        progress(0.42, info)
        drawn = stream.getvalue()
    assert "wear 137% of rating" in drawn and "spare lost 42%" in drawn


def test_a_lifetime_time_series_tracks_wear_and_spare_lost() -> None:
    import nandlab

    config = {
        "device": {"cell": "tlc", "channels": 1, "blocks_per_plane": 32, "pages_per_block": 16,
                   "page_size": "8KiB", "reserve": "30 %", "wear": {"rated": {"slc": 200, "mlc": 20, "tlc": 5}}},
        "ftl": {"gc_start": 2, "gc_stop": 3, "zombie": True},
        "phase": [{"working_set": 0.5, "until": "dead"}],
    }
    result = nandlab.run(config)
    ts = result.timeseries
    assert result.summary["death"]
    wear = ts["wear_used"].to_list()
    assert wear == sorted(wear) and wear[-1] > 1.0  # ZombieNAND outlives the rating
    # The drive dies when mode switches have eaten the spare flash.
    assert ts["reserve_used"][-1] > 0.9
    assert ts["usable_bytes"][-1] < ts["usable_bytes"][0]


# --- bars from Python (notebooks) ----------------------------------------------------------------

LONG = {  # a run long enough (about a second) for the engine to report its progress
    "device": {"preset": "snia-mlc", "capacity": "4GiB"},
    "phase": [{"name": "fill", "volume": "8GiB", "pattern": "random", "read_fraction": 0.0},
              {"name": "reads", "volume": "64MiB", "read_fraction": 1.0}],
}


def test_a_phase_bar_shows_each_phase_and_ends_full() -> None:
    stream = io.StringIO()
    with progress_bars.PhaseBar(Console(file=stream, force_terminal=True, width=140), transient=False) as bar:
        bar(0.3, INFO)
        bar(0.6, {**INFO, "phase": 1, "phase_name": "reads"})
    drawn = stream.getvalue()
    assert "phase 1/2 fill" in drawn and "phase 2/2 reads" in drawn and "100%" in drawn
    assert not bar.bar.live.is_started


def test_a_bar_stays_where_an_interrupt_stopped_it() -> None:
    with pytest.raises(KeyboardInterrupt), progress_bars.PhaseBar(Console(file=io.StringIO())) as bar:
        bar(0.4, INFO)
        raise KeyboardInterrupt
    assert not bar.bar.live.is_started and bar.bar.tasks[0].completed == 0.4


class Recorded(progress_bars.PhaseBar):
    """A ``PhaseBar`` that keeps itself and its updates (``stop_after``: raise KeyboardInterrupt then)."""

    made: list[Recorded] = []
    stop_after: int | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.updates: list[tuple[float, str]] = []
        Recorded.made.append(self)

    def __call__(self, fraction: float, info: dict) -> None:
        super().__call__(fraction, info)
        self.updates.append((fraction, info["phase_name"]))
        if len(self.updates) == self.stop_after:
            raise KeyboardInterrupt


@pytest.fixture
def recorded(monkeypatch) -> type[Recorded]:
    monkeypatch.setattr(progress_bars, "PhaseBar", Recorded)
    monkeypatch.setattr(Recorded, "made", [])
    return Recorded


def test_progress_true_draws_a_bar_in_a_plain_python_session(recorded) -> None:
    result = nandlab.run(LONG, progress=True)
    assert result.phases[1]["name"] == "reads"
    (bar,) = recorded.made
    assert bar.updates and bar.updates[0][1] == "fill"
    assert not bar.bar.live.is_started and bar.bar.tasks[0].completed == 1.0  # closed, full


def test_a_bar_closes_when_the_run_is_interrupted(recorded, monkeypatch) -> None:
    monkeypatch.setattr(recorded, "stop_after", 1)
    with pytest.raises(KeyboardInterrupt):
        nandlab.run(LONG, progress=True)
    (bar,) = recorded.made
    assert len(bar.updates) == 1 and not bar.bar.live.is_started


def test_auto_draws_only_in_a_notebook(monkeypatch, recorded) -> None:
    nandlab.run(LONG)  # "auto" by default: no bar outside a notebook
    assert recorded.made == []
    with progress_bars.phases("auto") as callback:
        assert callback is None

    class ZMQInteractiveShell:  # what IPython's kernel is, as rich detects Jupyter
        pass

    monkeypatch.setattr(builtins, "get_ipython", ZMQInteractiveShell, raising=False)
    monkeypatch.setattr(progress_bars, "_has_ipywidgets", lambda: False)
    with pytest.warns(UserWarning, match=r'needs ipywidgets: pip install "nandlab\[notebook\]"'), \
            progress_bars.phases("auto") as nothing:
        assert nothing is None
    monkeypatch.setattr(progress_bars, "_has_ipywidgets", lambda: True)
    with progress_bars.phases("auto") as bar:
        assert isinstance(bar, progress_bars.PhaseBar) and bar.console.is_jupyter and not bar.transient
    with progress_bars.phases(False) as none, progress_bars.phases(print) as given:
        assert none is None and given is print
    with pytest.raises(ValueError, match='expected True, False, None, "auto" or a callable'), \
            progress_bars.phases("yes"):
        pass


def test_a_lifetime_run_and_a_sweep_take_progress_true(recorded, monkeypatch, tmp_path: Path) -> None:
    from test_sweep import quick

    from nandlab import lifetime

    long_life = {**LONG, "phase": [{"name": "life", "pattern": "random", "until": "dead", "read_fraction": 0.0}],
                 "device": {"preset": "snia-mlc", "capacity": "1GiB", "wear": {"rated": {"mlc": 60}}}}
    lifetime.run(long_life, progress=True)
    assert [bar.updates[0][1] for bar in recorded.made] == ["life"]
    counts = []

    class Runs(progress_bars.RunsBar):
        def __call__(self, done: int, total: int, failed: int) -> None:
            super().__call__(done, total, failed)
            counts.append((done, total, failed))

    monkeypatch.setattr(progress_bars, "RunsBar", Runs)
    sweep.run(sweep.load(quick(tmp_path, runs=2, volume=0.05)), tmp_path / "out", workers=1, progress=True)
    assert counts == [(0, 2, 0), (1, 2, 0), (2, 2, 0)]


@pytest.mark.parametrize("width", [80, 60])
def test_a_narrow_terminal_keeps_the_bar_percentage_and_time(width: int) -> None:
    """Issue 40: at 80 columns the line showed only "phase 2/3 rando… 19.66 GiB written, … spar…"."""
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    info = {"phase": 1, "phases": 3, "phase_name": "random-write", "host_write_bytes": 21 * 2**30,
            "sim_seconds": 1234.5, "wear_used": 0.5, "reserve_used": 0.25}
    with progress_bars.PhaseBar(console, transient=False) as bar:
        bar(0.42, info)
        frame = out.getvalue().split("\r")[-1]
    last = out.getvalue().split("\r")[-1]
    for line in (frame, last):
        text = line.replace("\x1b[2K", "").split("\n")[0]
        assert len(text) <= width and "━" in text and "phase 2/3" in text, text
    assert " 42% -:--:--" in frame and " 100% 0:00:00" in last  # a finished run's last frame is full


def test_no_frame_shows_the_old_phase_at_zero() -> None:
    """Issue 40's outside check: between phases one frame showed the old phase's label at 0 % (the bar's
    reset drew before the new label came)."""
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True, color_system=None)
    info = {"phases": 3, "host_write_bytes": 0, "sim_seconds": 1.0}
    with progress_bars.PhaseBar(console, transient=False) as bar:
        bar(0.98, {**info, "phase": 1, "phase_name": "random-write"})
        bar(0.01, {**info, "phase": 2, "phase_name": "random-read"})
    frames = [f.replace("\x1b[2K", "") for f in out.getvalue().split("\r") if "phase" in f]
    assert frames and not [f for f in frames if "phase 2/3" in f and " 0%" in f], frames
    assert all("phase 3/3" in f for f in frames[frames.index(next(f for f in frames if "phase 3/3" in f)):])


def test_a_run_until_dead_moves_its_bar_through_the_life() -> None:
    """The issue's outside check: an `until = "dead"` run showed 0 % for its whole length (the bar took the
    spare flash lost, which goes only at the end); a drive that retires its blocks now moves with its wear.
    A phase's first report comes at its first check, whatever the machine's speed: after 500 drive writes
    of a life of about 1,400, the bar of the phase that runs on until death starts about a third in."""
    first: dict[str, float] = {}

    def progress(fraction: float, info: dict) -> None:
        first.setdefault(info["phase_name"], fraction)

    nandlab.run({"device": {"preset": "zombienand-synthetic-tlc", "reserve": 0.3},
                 "ftl": {"zombie": False, "wear_unleveling": False},
                 "phase": [{"name": "young", "working_set": 0.5, "block_size": "8KiB", "volume": 500.0},
                           {"name": "end", "working_set": 0.5, "block_size": "8KiB", "until": "dead"}]},
                progress=progress)
    assert 0.25 < first["end"] < 0.5, first


def test_a_zombienand_run_until_dead_moves_its_bar_through_the_life() -> None:
    """Issue 40's second outside check: examples/long-life.toml (ZombieNAND) showed 0 % for its whole life
    (a ZombieNAND drive's bar took only the spare flash lost, which went at the very end). Half its bar
    is now the native wear: after 500 drive writes of a life of about 1,400, the bar of the phase that
    runs on until death starts a sixth to a quarter in; it never goes back."""
    seen: list[tuple[str, float]] = []
    nandlab.run({"device": {"preset": "zombienand-synthetic-tlc", "reserve": 0.3},
                 "phase": [{"name": "young", "working_set": 0.5, "block_size": "8KiB", "volume": 500.0},
                           {"name": "end", "working_set": 0.5, "block_size": "8KiB", "until": "dead"}]},
                progress=lambda fraction, info: seen.append((info["phase_name"], fraction)))
    end = [fraction for name, fraction in seen if name == "end"]
    assert 0.12 < end[0] < 0.25 and end == sorted(end), end[:3]


def test_a_run_until_death_projects_its_time_left_from_the_wear_rate() -> None:
    """Issue 39 §4: a lifetime says early how long it will take. Wear moving 1 % a second with 40 %
    used leaves 60 s; a ZombieNAND drive past its rating goes by its spare flash; nothing moving, no
    projection."""
    death = progress_bars.DeathProjection()
    assert death.seconds_left(0.0, 0.0, 0.0) is None  # one point: no rate yet
    assert death.seconds_left(40.0, 0.40, 0.0) == pytest.approx(60.0)
    # The rate over the last minute of wall time: wear that slowed to a fifth of its pace goes by that.
    for t in range(41, 200):
        left = death.seconds_left(float(t), 0.40 + 0.002 * (t - 40), 0.0)
    assert left == pytest.approx((1 - (0.40 + 0.002 * 159)) / 0.002)
    # Spare flash going faster than the wear: it decides.
    zombie = progress_bars.DeathProjection()
    zombie.seconds_left(0.0, 2.0, 0.10)
    assert zombie.seconds_left(10.0, 2.5, 0.20) == pytest.approx(80.0)  # past its rating: the spare flash
    idle = progress_bars.DeathProjection()
    idle.seconds_left(0.0, 0.5, 0.0)
    assert idle.seconds_left(10.0, 0.5, 0.0) is None


def test_the_bar_shows_the_projection_and_a_log_gets_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a terminal the time column of a phase run until death is the projection (rich's own estimate
    of the bar's pace was 2x off for a ZombieNAND drive, whose bar is half native wear, half spare
    flash); without one, `nandlab lifetime` prints a line now and then (it printed nothing)."""
    from nandlab.cli import console as cli_console

    clock = iter(float(t) for t in range(0, 1000, 10))
    monkeypatch.setattr(progress_bars.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=True, color_system=None)
    info = {"phase": 0, "phases": 1, "phase_name": "life", "host_write_bytes": 0, "sim_seconds": 1.0,
            "until_dead": True, "reserve_used": 0.0}
    with progress_bars.PhaseBar(console, transient=False) as bar:
        bar(0.1, {**info, "wear_used": 0.1})
        bar(0.2, {**info, "wear_used": 0.2})  # 10 s later: 1 % a second, 80 % left
        assert bar.death_in == pytest.approx(80.0)
    # The percentage follows the projection: 10 s gone, 80 s to go.
    assert " 11% 0:01:20 phase 1/1 life" in out.getvalue()
    # Without a terminal: a line once 5 s have passed, then every 30 s.
    times = iter([0.0, 2.0, 2.0, 6.0, 6.0, 20.0, 20.0, 40.0, 40.0])  # the bar's start, then each call twice
    monkeypatch.setattr(progress_bars.time, "monotonic", lambda: next(times))
    monkeypatch.setattr(cli_console.time, "monotonic", lambda: next(times))
    log = io.StringIO()
    lazy = cli_console.LazyProgress(Console(file=log, width=80, force_terminal=False))
    for wear in (0.1, 0.2, 0.3, 0.4):
        lazy(wear, {**info, "wear_used": wear})
    lines = log.getvalue().splitlines()
    assert len(lines) == 2, lines  # at 6 s and at 40 s (the next after 36)
    assert lines[0].startswith("phase 1/1 life: 20.0% of the rating used, 0.0% of the spare flash lost") \
        and lines[0].endswith("projected to die in 0:00:32"), lines
    assert lines[1].startswith("phase 1/1 life: 40.0% of the rating used"), lines
    # A ZombieNAND drive before the end of its rating: the projection is that end, said so.
    zombie = cli_console.life_line({**info, "wear_used": 0.5, "zombie": True}, 30.0)
    assert zombie.endswith("its rating is projected to run out in 0:00:30 (ZombieNAND may keep the drive alive "
                           "past it)")
    # Past its rating a ZombieNAND drive gets no projection (the third outside check: 0.02-0.2x of the time
    # left, its spare flash going at a pace that changes): the line says why, the bar shows -:--:--.
    past = cli_console.life_line({**info, "wear_used": 1.5, "zombie": True}, None)
    assert past.endswith("living on past its rating (ZombieNAND): no projection, the pace it loses its spare "
                         "flash at changes")
    monkeypatch.setattr(progress_bars.time, "monotonic", iter([0.0, 10.0]).__next__)
    out = io.StringIO()
    with progress_bars.PhaseBar(Console(file=out, width=120, force_terminal=True, color_system=None),
                                transient=False) as bar:
        bar(0.5, {**info, "wear_used": 1.2, "reserve_used": 0.1, "zombie": True})
        bar(0.6, {**info, "wear_used": 1.4, "reserve_used": 0.2, "zombie": True})
        assert bar.death_in is None
        assert " 60% -:--:-- phase 1/1 life" in out.getvalue()
