"""The CLI's progress bar: on stderr, and only once a run has lasted a second."""

import io

from rich.console import Console

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
