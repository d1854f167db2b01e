"""Trustworthy under faults (issue 8): a Rust panic reaches Python as an exception with its message
(never a crash, never a BaseException that escapes ``except Exception``) and the CLI prints one
line; the integrity oracle checks every read of a run."""

from __future__ import annotations

import pytest

import nandlab
from nandlab import _core


def test_a_rust_panic_becomes_an_internal_error(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(nandlab.InternalError, match=r"internal error \(a bug in nandlab.*\): boom \(at crates/") as info:
        _core._panic_for_test("boom")
    assert isinstance(info.value, nandlab.SimulationError) and isinstance(info.value, Exception)
    assert "panicked" not in capfd.readouterr().err  # no Rust panic report on stderr


def test_integrity_checks_cover_every_read(tiny_dict: dict) -> None:
    config = {**tiny_dict, "checks": {"integrity": True}}
    config["phase"] = [*config["phase"], {"name": "reads", "pattern": "random", "read_fraction": 0.7,
                                           "trim_fraction": 0.1, "block_size": "8KiB", "requests": 20000}]
    result = nandlab.run(config)
    reads = result.phases[-1]["host_read_requests"]
    assert reads > 10000
    counts = result.summary["integrity"]  # every unit of every read checked, none failed
    assert counts["checked_reads"] >= 2 * reads and counts["stamped"] > result.summary["host_write_requests"]


def test_checks_is_a_config_table() -> None:
    with pytest.raises(nandlab.ConfigError, match=r"\[checks\].*integrity"):
        nandlab.make_simulator({"checks": {"integrety": True}})


def test_a_drive_too_big_for_the_memory_left_is_refused(monkeypatch: pytest.MonkeyPatch, tiny_dict: dict) -> None:
    monkeypatch.setenv("NANDLAB_MEMORY_LIMIT", "16MiB")
    with pytest.raises(nandlab.ConfigError, match=r"needs about 6\d\.\d MiB, and only 16\.0 MiB of RAM is available"):
        nandlab.make_simulator(tiny_dict)
    monkeypatch.setenv("NANDLAB_MEMORY_LIMIT", "1GiB")
    nandlab.make_simulator(tiny_dict)
