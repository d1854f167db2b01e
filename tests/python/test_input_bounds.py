"""Hostile values and files (issue 17): each is refused with one ``nandlab: error:`` line naming the
key, variable or file and line, exit status 2, in bounded time and memory; never run as if it were
something else."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import nandlab

DRIVE = '[device]\npreset = "zombienand-synthetic-tlc"\ncapacity = "256MiB"\n'


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def _one_error_line(result, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nandlab: error: "), result.stderr
    return lines[0].removeprefix("nandlab: error: ")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("read_fraction = nan", "[[phase]] #2 read_fraction: must be a finite number, found nan"),
        ("rate = inf", "[[phase]] #2 rate: must be a finite number, found inf"),
        ("queue_depth = -inf", "[[phase]] #2 queue_depth: found the float -inf, expected a whole number"),
    ],
)
def test_numbers_that_are_not_finite_name_the_key(nandlab_cli, tmp_path: Path, line: str, message: str) -> None:
    path = _config(tmp_path, f'{DRIVE}[[phase]]\nkind = "fill"\n[[phase]]\nrequests = 100\n{line}\n')
    assert _one_error_line(nandlab_cli("run", path, "--quiet")).startswith(message)


def test_a_python_dict_with_nan_names_the_key() -> None:
    config = {"device": {"preset": "zombienand-synthetic-tlc", "capacity": "256MiB", "over_provisioning": float("-inf")},
              "phase": [{"requests": 100}]}
    with pytest.raises(nandlab.ConfigError, match=r"^\[device\] over_provisioning: must be a finite number, found -inf"):
        nandlab.make_simulator(config)
    config["device"] = {"preset": "zombienand-synthetic-tlc", "capacity": "256MiB", "channels": float("nan")}
    with pytest.raises(nandlab.ConfigError, match=r"^\[device\] channels: found the float nan, expected a whole number"):
        nandlab.make_simulator(config)


def test_a_memory_limit_that_is_not_a_size_is_refused(nandlab_cli, monkeypatch, tiny_path: Path) -> None:
    monkeypatch.setenv("NANDLAB_MEMORY_LIMIT", "garbage")
    message = _one_error_line(nandlab_cli("run", tiny_path, "--quiet"))
    assert message == 'NANDLAB_MEMORY_LIMIT: expected a byte count or a size like "512MiB" or "8GiB", found "garbage"'
    monkeypatch.setenv("NANDLAB_MEMORY_LIMIT", "512MiB")
    assert nandlab_cli("run", tiny_path, "--quiet").exit_code == 0


def test_jobs_count_in_the_memory_check_before_anything_runs(nandlab_cli, monkeypatch, tmp_path: Path) -> None:
    jobs = "[[phase.job]]\nqueue_depth = 1\n" * 4000
    path = _config(tmp_path, f"{DRIVE}[[phase]]\nrequests = 100000\n{jobs}")
    monkeypatch.setenv("NANDLAB_MEMORY_LIMIT", "1GiB")
    start = time.perf_counter()
    message = _one_error_line(nandlab_cli("run", path, "--quiet"))
    assert "needs about 2." in message and "GiB, and only 1.0 GiB of RAM is available" in message, message
    assert time.perf_counter() - start < 10
    path = _config(tmp_path, f"{DRIVE}[[phase]]\nrequests = 100\n{jobs * 3}")
    message = _one_error_line(nandlab_cli("run", path, "--quiet"))
    assert message.startswith("[[phase]] #1 job: at most 4096 [[phase.job]] tables per phase"), message


def _zstd_bomb(byte: bytes, blocks: int) -> bytes:
    """A zstd frame of RLE blocks of 128 KiB each: 4 bytes a block (RFC 8878)."""
    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")
    for i in range(blocks):
        header = (128 << 10) << 3 | 1 << 1 | (i + 1 == blocks)
        frame += header.to_bytes(3, "little") + byte
    return bytes(frame)


@pytest.mark.parametrize("command", ["stats", "replay"])
def test_a_decompression_bomb_is_refused_at_its_first_line(nandlab_cli, tmp_path: Path, command: str) -> None:
    bomb = tmp_path / "bomb.csv.zst"
    bomb.write_bytes(_zstd_bomb(b"7", 10 * 8192))  # 10 GiB of digits without a newline, in 320 KiB
    args = ["--device", "zombienand-synthetic-tlc", "--capacity", "256MiB", "--quiet"] if command == "replay" else []
    start = time.perf_counter()
    message = _one_error_line(nandlab_cli("trace", command, bomb, *args, "--skip-bad"))
    assert message.startswith(f"{bomb}:1: a line longer than 8192 bytes"), message
    assert time.perf_counter() - start < 10


def _blkparse(tmp_path: Path, *events: tuple[int, str, str]) -> Path:
    """A blkparse trace of D events (cpu, time, sector)."""
    path = tmp_path / "trace.blk"
    path.write_text("".join(f"  8,16  {cpu}  5  {t}  3645  D   W {sector} + 8 [java]\n" for cpu, t, sector in events))
    return path


@pytest.mark.parametrize(
    ("events", "line", "message"),
    [
        # sector * 512 past 64 bits: was dropped (20 digits) or wrapped to another address
        ([(0, "0.1", "8"), (0, "0.2", "18446744073709551615"), (0, "0.3", "16")], 2, "not a blkparse line"),
        ([(0, "0.1", "8"), (0, "0.2", "36028797018963968"), (0, "0.3", "16")], 2, "a request of at most 1 GiB"),
        # the same CPU's clock going back: was a 0 µs gap
        ([(0, "0.1", "8"), (1, "0.05", "0"), (0, "0.09", "16")], 3, "goes back 10.000 ms from line 1's on CPU 0"),
    ],
)
def test_bad_blkparse_records_name_the_line_or_count_as_skipped(
    nandlab_cli, tmp_path: Path, events: list, line: int, message: str
) -> None:
    path = _blkparse(tmp_path, *events)
    error = _one_error_line(nandlab_cli("trace", "stats", path, "--format", "blkparse"))
    assert error.startswith(f"{path}:{line}: ") and message in error, error
    result = nandlab_cli("trace", "stats", path, "--format", "blkparse", "--skip-bad", "--json")
    assert result.exit_code == 0, result.stderr
    stats = json.loads(result.stdout)
    assert (stats["records"], stats["skipped_lines"]) == (2, 1)
    # A replay reports what it skipped too, in its summary and under its table.
    replay = ("trace", "replay", path, "--format", "blkparse", "--device", "swissbit-standard", "--capacity", "2GiB",
              "--skip-bad", "-q")
    summary = json.loads(nandlab_cli(*replay, "--json").stdout)
    assert summary["phases"][0]["trace_skipped"] == {"lines": 1, "first_line": line}
    table = nandlab_cli(*replay)
    assert f"1 malformed trace lines skipped (--skip-bad), the first at line {line}" in " ".join(table.stdout.split())


@pytest.mark.parametrize("scale", ["1e6", "1e30"])
def test_a_time_scale_past_the_clock_is_refused(nandlab_cli, tmp_path: Path, scale: str) -> None:
    path = tmp_path / "trace.csv"
    # Two records a week apart (MSR's 100 ns ticks): 10^6 times a week is 19,000 years.
    path.write_text("128166385295514663,hm,0,Write,0,4096,1\n128172433295514663,hm,0,Write,4096,4096,1\n")
    result = nandlab_cli("trace", "replay", path, "--device", "zombienand-synthetic-tlc", "--capacity", "256MiB",
                         "--timed", "--time-scale", scale, "--quiet")
    error = _one_error_line(result)
    assert error.startswith(f"{path}:2: time_scale (--time-scale) ") and "past the 146 years" in error, error
