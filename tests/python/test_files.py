"""Bounded reads of the files a user names (issue 17): a config, job, sweep, base-config or device
file larger than 64 MiB, and a result file larger than 1 GiB, is refused in one line naming the
file, the cap and what it is — after reading at most one byte more than the cap, so /dev/zero, a
FIFO fed forever or a huge file cost bounded time and memory; a FIFO nobody writes to does not
hang."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from test_cli_errors import JOB_FILE, assert_one_line_exit_2

from nandlab import files

MEMORY_LIMIT = 2 * 2**30
"""The address space a subprocess may use: refusing /dev/zero needs a small part of it; reading it
all runs out of it in seconds."""


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` zero bytes that takes no room on the disk."""
    with open(path, "wb") as file:
        file.truncate(size)
    return path


SWEEP_WITH_BASE = """
[sweep]
base = "big.toml"
[[axis]]
key = "seed"
values = [1, 2]
"""
# (arguments, the file that is too large, what it is); {big} is a file one byte over 64 MiB.
TOO_LARGE = {
    "run": (("run", "{big}"), "config file"),
    "lifetime": (("lifetime", "{big}"), "config file"),
    "fio job file": (("fio", "{big}", "--device", "snia-slc"), "job file"),
    "fio device": (("fio", "{jobs}", "--device", "{big}"), "device file"),
    "sweep file": (("sweep", "{big}"), "sweep file"),
    "sweep base": (("sweep", "{sweep}"), "base config file"),
    "test device": (("test", "write-sections", "--device", "{big}"), "device file"),
    "matrix device": (("matrix", "--device", "{big}"), "device file"),
    "trace replay device": (("trace", "replay", "{jobs}", "--device", "{big}"), "device file"),
}


@pytest.mark.parametrize(("args", "what"), TOO_LARGE.values(), ids=TOO_LARGE.keys())
def test_a_file_over_64_mib_is_refused_in_one_line(nandlab_cli, tmp_path: Path, args, what: str) -> None:
    big = sparse(tmp_path / "big.toml", files.MAX_FILE_BYTES + 1)
    (tmp_path / "jobs.fio").write_text(JOB_FILE)
    (tmp_path / "sweep.toml").write_text(SWEEP_WITH_BASE)
    paths = {"big": big, "jobs": tmp_path / "jobs.fio", "sweep": tmp_path / "sweep.toml"}
    result = nandlab_cli(*(arg.format(**paths) for arg in args))
    assert_one_line_exit_2(result, f"{big}: larger than 64 MiB, the most nandlab reads of a {what}")


def test_a_result_file_over_1_gib_is_refused_by_report(nandlab_cli, tmp_path: Path) -> None:
    stats = sparse(tmp_path / "stats.json", files.MAX_RESULT_BYTES + 1)  # a `trace stats --out` directory
    result = nandlab_cli("report", tmp_path)
    assert_one_line_exit_2(result, f"{stats}: larger than 1024 MiB, the most nandlab reads of a result file")


def nandlab_limited(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """``nandlab ARGS`` in a process with ``MEMORY_LIMIT`` of address space, killed after ``timeout``."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run([sys.executable, "-m", "nandlab", *map(str, args)], capture_output=True, text=True,
                          preexec_fn=limit, timeout=timeout)


def assert_refused_as_too_large(done: subprocess.CompletedProcess, path: Path | str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr == f"nandlab: error: {path}: larger than 64 MiB, the most nandlab reads of a config file\n"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_refused_in_bounded_memory() -> None:
    assert_refused_as_too_large(nandlab_limited("run", "/dev/zero"), "/dev/zero")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_fed_forever_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)

    def feed() -> None:  # until the reader closes its end
        with open(fifo, "wb") as writer:
            try:
                while True:
                    writer.write(bytes(2**20))
            except BrokenPipeError:
                pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    assert_refused_as_too_large(nandlab_limited("run", fifo), fifo)
    feeder.join(timeout=10)
    assert not feeder.is_alive()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_a_fifo_nobody_writes_to_reads_as_empty_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    done = nandlab_limited("run", fifo, timeout=30)
    assert done.returncode == 2 and done.stderr.startswith("nandlab: error: ") and done.stderr.count("\n") == 1
    # A trace too (it waited for a writer, deaf to Ctrl-C): read by the engine.
    done = nandlab_limited("trace", "stats", fifo, timeout=30)
    assert done.returncode == 2 and done.stderr.startswith("nandlab: error: ") and done.stderr.count("\n") == 1
