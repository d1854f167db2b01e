"""The Python API: config sources, the Result's parts, determinism."""

from pathlib import Path

import polars as pl
import pytest
from conftest import LATENCY_KEYS, SUMMARY_KEYS, without_wall_clock

import nandlab


def test_result_has_summary_phases_timeseries(tiny_toml: str) -> None:
    result = nandlab.run(tiny_toml)
    assert SUMMARY_KEYS <= result.summary.keys()
    assert LATENCY_KEYS <= result.summary["write_latency_us"].keys()
    assert [phase["name"] for phase in result.phases] == ["fill", "randwrite"]
    for phase in result.phases:
        assert SUMMARY_KEYS <= phase.keys()
    ts = result.timeseries
    assert isinstance(ts, pl.DataFrame)
    assert {"phase", "phase_name", "host_write_bytes", "write_mbps", "waf"} <= set(ts.columns)
    assert set(ts["phase_name"]) <= {"fill", "randwrite"}
    assert "randwrite" in set(ts["phase_name"])
    assert len(result.erase_counts) == result.device["blocks"]
    assert result.to_dict()["phases"] == result.phases
    assert "randwrite" in repr(result)


def test_dict_toml_text_and_path_give_the_same_run(tiny_toml: str, tiny_dict: dict, tiny_path: Path) -> None:
    runs = [nandlab.run(config, seed=7) for config in (tiny_toml, tiny_dict, tiny_path, str(tiny_path))]
    first = runs[0]
    for other in runs[1:]:
        assert without_wall_clock(other.summary) == without_wall_clock(first.summary)
        assert other.timeseries.equals(first.timeseries)


def test_same_seed_same_results(tiny_toml: str) -> None:
    first, second = nandlab.run(tiny_toml, seed=3), nandlab.run(tiny_toml, seed=3)
    assert without_wall_clock(first.summary) == without_wall_clock(second.summary)
    for a, b in zip(first.phases, second.phases):
        assert without_wall_clock(a) == without_wall_clock(b)
    assert first.timeseries.equals(second.timeseries)
    assert first.erase_counts == second.erase_counts


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(nandlab.ConfigError, match="nope.toml"):
        nandlab.run(missing)
    with pytest.raises(nandlab.ConfigError, match="nope.toml"):
        nandlab.run(str(missing))


def test_unknown_key_is_a_config_error_naming_it(tiny_dict: dict) -> None:
    tiny_dict["device"]["chanels"] = tiny_dict["device"].pop("channels")
    with pytest.raises(nandlab.ConfigError, match="chanels"):
        nandlab.run(tiny_dict)


def test_config_of_the_wrong_type_is_a_config_error() -> None:
    with pytest.raises(nandlab.ConfigError, match="config: expected a dict, TOML text, a path or None, found int 42"):
        nandlab.run(42)  # type: ignore[arg-type]


def test_make_simulator_runs_phases_one_by_one(tiny_toml: str) -> None:
    sim = nandlab.make_simulator(tiny_toml)
    assert sim.phase_names == ["fill", "randwrite"]
    fill = sim.run_phase(0)["summary"]
    assert fill["name"] == "fill"


def test_presets_include_mqsim_default() -> None:
    presets = nandlab.presets()
    assert "mqsim-default" in presets
    assert all(isinstance(description, str) and description for description in presets.values())


class Stop(Exception):
    pass


def test_progress_reports_the_phase_and_an_exception_in_it_stops_the_run(tiny_dict: dict) -> None:
    calls = []

    def progress(fraction: float, info: dict) -> None:
        calls.append((fraction, info))
        raise Stop

    with pytest.raises(Stop):
        nandlab.run(tiny_dict, progress=progress)
    fraction, info = calls[0]
    assert 0 <= fraction <= 1
    # A phase's first report comes at its first check, however short the phase: the fill's, here.
    assert (info["phase_name"], info["phase"], info["phases"]) == ("fill", 0, 2)
    assert {"sim_seconds", "host_write_bytes"} <= info.keys()


def test_the_package_has_a_version_and_names_its_own_exceptions() -> None:
    from importlib import metadata

    assert nandlab.__version__ == metadata.version("nandlab")
    for cls in (nandlab.ConfigError, nandlab.SimulationError, nandlab.SnapshotError, nandlab.TraceError):
        assert repr(cls) == f"<class 'nandlab.{cls.__name__}'>"
    with pytest.raises(nandlab.ConfigError) as caught:
        nandlab.run({"device": {"chanels": 2}})
    assert type(caught.value).__module__ == "nandlab"


def test_the_time_series_goes_to_pandas_out_of_the_box(tiny_dict) -> None:
    """pandas and pyarrow come with nandlab: ``Result.timeseries.to_pandas()`` works in a fresh install."""
    result = nandlab.run(tiny_dict, progress=None)
    frame = result.timeseries.to_pandas()
    assert len(frame) == result.timeseries.height and "waf" in frame.columns


def test_help_shows_types_and_where_results_live() -> None:
    """Issue 40: help(nandlab.run) showed 'ConfigSource' (a string), and the result type printed as
    nandlab.api.Result."""
    # On every supported Python (3.9 cannot evaluate `X | None`: its `|` is read as Union), and for every
    # public function (the second outside check found check_config's still strings).
    import importlib
    import inspect
    import pickle
    import pydoc

    from nandlab import fio, lifetime, sweep

    functions = [nandlab.run, nandlab.check_config, nandlab.make_simulator, nandlab.resume, nandlab.open_snapshot,
                 sweep.run, fio.run, lifetime.run]
    # And every public function and public class's method of the modules users call (the second outside
    # check: Sweep.only, report.build and write, sweepable, Report's methods).
    for name in ("report", "sweep", "matrix", "qualify", "chipbench", "lifetime_traces", "fio"):
        module = importlib.import_module(f"nandlab.{name}")
        for item in (getattr(module, public) for public in module.__all__):
            if inspect.isfunction(item):
                functions.append(item)
            elif inspect.isclass(item):
                functions += [f for f in vars(item).values() if inspect.isfunction(f)]
                functions += [p.fget for p in vars(item).values() if isinstance(p, property)]
    # The result types too (the third outside check: Result's and Paused's fields, properties).
    functions += [nandlab.Result, nandlab.Paused]
    for function in functions:
        signature = inspect.signature(function)
        annotations = [p.annotation for p in signature.parameters.values()] + [signature.return_annotation]
        assert not any(isinstance(a, str) for a in annotations), (function.__qualname__, signature)
    text = pydoc.render_doc(nandlab.run, renderer=pydoc.plaintext)
    assert "'ConfigSource'" not in text and "config: Union[" in text and "-> nandlab.Result" in text
    assert repr(nandlab.Result) == "<class 'nandlab.Result'>" and repr(nandlab.Paused) == "<class 'nandlab.Paused'>"
    result = nandlab.run({"device": {"preset": "snia-mlc", "capacity": "1GiB"}, "phase": [{"requests": 10}]},
                         progress=False)
    assert pickle.loads(pickle.dumps(result)).summary == result.summary  # sweeps send results between processes


def test_arguments_of_the_wrong_kind_are_nandlabs_errors(tmp_path: Path) -> None:
    """Issue 38: run_phase(-1) was pyo3's OverflowError, snapshot_every=nan a TypeError naming no
    parameter, resume(None) a TypeError from os.stat."""
    config = {"device": {"preset": "snia-mlc", "capacity": "1GiB"}, "phase": [{"requests": 10}]}
    sim = nandlab.make_simulator(config)
    for index in (-1, 2**64, 0.0, True, "0"):
        with pytest.raises(nandlab.ConfigError, match="index: expected a phase's number"):
            sim.run_phase(index)
    for arguments, message in [
        ({"snapshot": tmp_path / "s.snap", "snapshot_every": float("nan")}, "snapshot_every: expected text"),
        ({"snapshot": b"path"}, "snapshot: expected a path or None, found bytes"),
        ({"progress": "yes"}, "progress: expected True, False"),
    ]:
        with pytest.raises(nandlab.ConfigError, match=message):
            nandlab.run(config, **arguments)
    for path in (None, 5):
        with pytest.raises(nandlab.SnapshotError, match="path: expected a snapshot's path"):
            nandlab.resume(path)
    nandlab.check_config(config)
    with pytest.raises(nandlab.ConfigError, match=r"\[\[phase\]\] #1 name: at most 256 characters"):
        nandlab.check_config({**config, "phase": [{"requests": 10, "name": "x" * 257}]})


@pytest.mark.parametrize("preset", ["zombienand-trace-tlc", "zombienand-trace-mlc"])
@pytest.mark.parametrize("pattern", ["random", "sequential"])
@pytest.mark.parametrize("block_size", ["3KiB", "4KiB", "6KiB", "128KiB"])
def test_reads_of_a_fresh_drive_are_all_of_never_written_addresses(preset: str, pattern: str,
                                                                     block_size: str) -> None:
    """Issue 40's third outside check: a 4 KiB read of an 8 KiB mapping unit counted the whole unit
    (19.5 MiB "never written" of 9.77 MiB read). On a fresh drive every byte read is never written:
    no more, no less, whatever the request's size, whether read-ahead serves it or not."""
    result = nandlab.run({"device": {"preset": preset, "capacity": "1GiB"},
                          "phase": [{"pattern": pattern, "read_fraction": 1.0, "block_size": block_size,
                                     "volume": "2MiB"}]}, progress=False)
    phase = result.phases[0]
    assert phase["unwritten_read_bytes"] == phase["host_read_bytes"] > 0
