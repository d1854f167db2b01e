"""Shared fixtures: a tiny drive config (as TOML text, dict and file) and a CLI runner. Every test
runs with the integrity oracle on (``NANDLAB_INTEGRITY=1``): any read that does not get the latest
acknowledged write fails the run that made it. The suite runs in parallel (pytest-xdist: ``-n 2``)."""

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from nandlab.cli import cli

os.environ["NANDLAB_INTEGRITY"] = "1"
if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist's workers get COLUMNS=80 and LINES=24: output piped to a test is as wide as when
    # pytest runs alone (a test that wants a width sets it).
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

TINY_TOML = """\
seed = 1

[device]
cell = "slc"
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 64
pages_per_block = 32
page_size = "4KiB"
over_provisioning = "20 %"

[[phase]]
name = "fill"
kind = "fill"
volume = 1.0

[[phase]]
name = "randwrite"
pattern = "random"
block_size = "4KiB"
queue_depth = 8
volume = 1.0
"""

DYING_TOML = """\
seed = 1
[device]
cell = "tlc"
channels = 1
blocks_per_plane = 32
pages_per_block = 16
page_size = "8KiB"
reserve = "30 %"
wear = { rated = { slc = 200, mlc = 20, tlc = 5 } }
[ftl]
gc_start = 2
gc_stop = 3
[[phase]]
name = "fill"
kind = "fill"
[[phase]]
name = "life"
working_set = 0.5
until = "dead"
"""
"""A drive rated for five cycles, filled and then written until it dies: under a second."""

# The summary keys issue 2 names (acceptance checks read them).
SUMMARY_KEYS = {
    "name",
    "kind",
    "waf",
    "host_write_bytes",
    "host_read_bytes",
    "host_requests",
    "flash_programs",
    "flash_reads",
    "erases",
    "iops",
    "mbps",
    "read_latency_us",
    "write_latency_us",
    "sim_seconds",
    "wall_seconds",
    "requests_per_wall_second",
}
LATENCY_KEYS = {"p50", "p90", "p99", "p999", "max"}
WALL_CLOCK_KEYS = ("wall_seconds", "requests_per_wall_second")


@pytest.fixture
def tiny_toml() -> str:
    return TINY_TOML


@pytest.fixture
def tiny_dict() -> dict:
    return tomllib.loads(TINY_TOML)


@pytest.fixture
def tiny_path(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML)
    return path


@pytest.fixture
def dying_path(tmp_path: Path) -> Path:
    path = tmp_path / "dying.toml"
    path.write_text(DYING_TOML)
    return path


def without_wall_clock(summary: dict) -> dict:
    """A summary without the figures that depend on the machine's speed."""
    return {key: value for key, value in summary.items() if key not in WALL_CLOCK_KEYS}


@pytest.fixture
def nandlab_cli():
    """Run ``nandlab ARGS...`` in-process; returns click's Result (exit_code, stdout, stderr)."""

    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()  # click >= 8.2 keeps stderr apart anyway

    def invoke(*args: str) -> Result:
        return runner.invoke(cli, [str(arg) for arg in args], prog_name="nandlab")

    return invoke
