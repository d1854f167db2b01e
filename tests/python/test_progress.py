"""The CLI's progress bar: on stderr, and only once a run has lasted a second."""

import io

from rich.console import Console

from nandlab import cli

INFO = {"phase": 0, "phase_name": "fill", "phases": 2, "sim_seconds": 2.0, "host_write_bytes": 3 << 30}


def test_progress_bar_appears_only_after_a_second(monkeypatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(cli.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=100)
    with cli._LazyProgress(console) as progress:
        clock[0] += 0.5
        progress(0.1, INFO)
        assert stream.getvalue() == ""
        clock[0] += 1.0
        progress(0.5, INFO)
        drawn = stream.getvalue()
    assert "phase 1/2 fill" in drawn and "3.00 GiB written" in drawn and "50%" in drawn


def test_quiet_progress_draws_nothing(monkeypatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(cli.time, "monotonic", lambda: clock[0])
    stream = io.StringIO()
    with cli._LazyProgress(Console(file=stream, force_terminal=True, quiet=True)) as progress:
        clock[0] += 5.0
        progress(0.5, INFO)
    assert stream.getvalue() == ""
