"""Hostile input on the surfaces added since the first hardening (issue 38): geometry products that
overflowed, memory limits below the host's, fio job values, sweep files, damaged result directories
and Python arguments. Each is refused with one ``nandlab: error:`` line and exit status 2 (or
nandlab's own exception from Python), in bounded time, and no user file is touched."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

import nandlab


def _one_error_line(result, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nandlab: error: "), result.stderr
    return lines[0].removeprefix("nandlab: error: ")


@pytest.mark.parametrize("counts", [(65536, 65536, 65536, 65536), (769546, 494770, 48448661, 1),
                                    (823996703, 36760123, 609, 1)])
def test_geometry_products_that_overflowed_are_refused(counts: tuple[int, ...]) -> None:
    """65,536 of each panicked (division by zero); products wrapping to 4 dies indexed out of bounds, or
    asked for 26 GB: every product is checked, and a panic is never pyo3's BaseException."""
    channels, chips, dies, planes = counts
    config = {"device": {"preset": "snia-mlc", "channels": channels, "chips_per_channel": chips,
                         "dies_per_chip": dies, "planes_per_die": planes, "blocks_per_plane": 64}}
    with pytest.raises(nandlab.ConfigError, match="impossible geometry"):
        nandlab.make_simulator(config)


def test_an_address_space_limit_below_the_host_s_memory_is_taken_into_account(tmp_path: Path) -> None:
    """Under ``ulimit -v`` a 3 TiB drive aborted with "memory allocation … failed" and a backtrace; it is
    refused before anything is allocated, as a run too large for the memory left is (exit 1)."""
    config = tmp_path / "big.toml"
    config.write_text('[device]\npreset = "snia-mlc"\ncapacity = "3TiB"\n[[phase]]\nrequests = 1000\n')
    limit = 1536 << 20

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k != "NANDLAB_MEMORY_LIMIT"}
    done = subprocess.run([sys.executable, "-m", "nandlab", "run", str(config)], capture_output=True, text=True,
                          timeout=120, preexec_fn=limited, env=env)
    assert done.returncode == 2 and done.stderr.startswith("nandlab: error: this run needs about"), done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize("line, message", [
    ("bs=" + "9" * 400, "bs: expected a size like 4k or 1m, found `9999"),
    ("bsrange=512-1t", "bsrange: expected sizes up to 64MiB"),
    ("bsrange=0-4k", "bsrange: expected LOW-HIGH, multiples of 512 bytes"),
    ("bssplit=4k/" + "9" * 5000, "bssplit: expected SIZE/PERCENT items"),
    ("runtime=" + "9" * 400 + "h", "runtime: expected a time like 30, 30s or 500ms, found `9999"),
    ("ramp_time=99999999999999999999h", "ramp_time: at most 4,611,686,018 s"),
    ("bs=\uff14k", "bs: expected a size like 4k or 1m, found `\uff14k`"),
    ("iodepth=\uff18", "iodepth: expected a whole number from 1 to 65536"),
    ("rwmixread=nan", "rwmixread: expected a whole number from 0 to 100, found `nan`"),  # even where rw= has no mix
], ids=lambda v: v[:20])
def test_fio_job_values_out_of_range(nandlab_cli, tmp_path: Path, line: str, message: str) -> None:
    """400 digits (OverflowError), a range to 1 TB (5.3 GB, then MemoryError after 19 s), a zero step, 5,000 digits;
    times past the engine's clock ("found infs"); full-width digits (were read as 4k and 8)."""
    job = tmp_path / "job.fio"
    job.write_text(f"[j]\nrw=randwrite\nsize=16m\n{line}\n")
    began = time.monotonic()
    error = _one_error_line(nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB"))
    assert message in error and len(error) < 400 and time.monotonic() - began < 5


SWEEP = ('[sweep]\nprocedure = "run"\n[base.device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n'
         '[[base.phase]]\nrequests = 100\n')


@pytest.mark.parametrize("text, message", [
    (SWEEP + '[[axis]]\nkey = "device.reserve"\nrange = {start = 0.0, stop = 1e300, step = 1e-300}\n',
     "range: from 0.0 to 1e+300 by 1e-300 is more than"),
    ('[sweep]\nprocedure = "run"\nbase = "a\\u0000b"\n[[axis]]\nkey = "device.reserve"\nvalues = [0.1]\n',
     "a file name with a NUL byte"),
    (SWEEP + '[[axis]]\nkey = "device.reserve"\nvalues = ' + "[" * 5000 + "]" * 5000 + "\n",
     "nested thousands of levels deep"),
    (SWEEP + '[[axis]]\nkey = "' + ".".join(["a"] * 5000) + '"\nvalues = [1, 2]\n', "at most 32 parts"),
    # (Python 3.11's tomllib reads it, and nandlab counts 5,001 levels; 3.9's tomli recurses, and is stopped.)
    (SWEEP + '[[axis]]\nkey = "device.reserve"\nvalues = [0.1]\n[base.x]\n' + ".".join(["a"] * 5000) + " = 1\n",
     "levels deep"),
    (SWEEP + '[[axis]]\nkey = "device.reserve"\nname = "' + "x" * 200 + '"\nvalues = [0.1, 0.2]\n',
     "at most 64 characters"),
    (SWEEP + '[[axis]]\nkey = "device.reserve"\nname = "run_id"\nvalues = [0.1, 0.2]\n', "is a column every sweep"),
], ids=["overflowing range", "NUL in base", "deep arrays", "long dotted key", "deep base", "long name", "run_id"])
def test_sweep_files_out_of_range(nandlab_cli, tmp_path: Path, text: str, message: str) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(text)
    began = time.monotonic()
    assert message in _one_error_line(nandlab_cli("sweep", sweep, "--out", tmp_path / "out"))
    assert time.monotonic() - began < 5


@pytest.fixture(scope="module")
def run_out(tmp_path_factory) -> Path:
    """A small run's --out directory."""
    out = tmp_path_factory.mktemp("run") / "out"
    config = out.parent / "tiny.toml"
    config.write_text('[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n[[phase]]\nrequests = 2000\n')
    done = subprocess.run([sys.executable, "-m", "nandlab", "run", str(config), "--out", str(out), "--quiet"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return out


DEEP = "[" * 100_000 + "]" * 100_000


def _damage(d: Path, how: str) -> None:
    if how in ("summary.json", "config.json", "manifest.json"):
        (d / how).write_text(DEEP)
    elif how == "huge number":
        summary = json.loads((d / "summary.json").read_text())
        summary["erase_count_histogram"] = [[10**400, 10**400]]
        (d / "summary.json").write_text(json.dumps(summary))
    elif how == "no time series":
        (d / "timeseries.parquet").unlink()
    elif how == "figures a file":
        shutil.rmtree(d / "figures")
        (d / "figures").write_text("mine")
    elif how == "zeroes":  # /dev/zero behind the name was read to the 1 GiB cap (1.1 GB of RSS)
        (d / "summary.json").unlink()
        (d / "summary.json").symlink_to("/dev/zero")
    elif how == "long histogram":  # 2 M counts took 728 MB to draw
        summary = json.loads((d / "summary.json").read_text())
        summary["erase_count_histogram"] = [[i, 1] for i in range(300_000)]
        (d / "summary.json").write_text(json.dumps(summary))
    elif how == "text histogram":  # "not enough values to unpack (expected 2, got 1)", naming no file
        summary = json.loads((d / "summary.json").read_text())
        summary["erase_count_histogram"] = "0123"
        (d / "summary.json").write_text(json.dumps(summary))
    elif how == "list summary":  # "AttributeError: 'list' object has no attribute 'get'"
        (d / "summary.json").write_text("[1, 2]")


@pytest.mark.parametrize("how", ["summary.json", "config.json", "manifest.json", "huge number", "no time series",
                                 "figures a file", "zeroes", "long histogram", "text histogram", "list summary"])
def test_a_damaged_result_directory_is_one_line(nandlab_cli, run_out: Path, tmp_path: Path, how: str) -> None:
    """Deep JSON gave a RecursionError, a 400-digit count an OverflowError, a missing time series or a file
    named figures exit 1; a user's PNG in figures/ was deleted even when the report then failed."""
    d = tmp_path / "out"
    shutil.copytree(run_out, d)
    mine = d / "figures" / "mine.png"
    if (d / "figures").is_dir():
        shutil.copy(next((d / "figures").glob("*.png")), mine)
    _damage(d, how)
    error = _one_error_line(nandlab_cli("report", d))
    if how in ("huge number", "text histogram", "list summary"):
        assert "summary.json: " in error
    if how != "figures a file":
        assert mine.exists()


def test_a_report_html_link_is_replaced_not_followed(nandlab_cli, run_out: Path, tmp_path: Path) -> None:
    d = tmp_path / "out"
    shutil.copytree(run_out, d)
    theirs = tmp_path / "theirs.html"
    theirs.write_text("keep")
    (d / "report.html").unlink()
    (d / "report.html").symlink_to(theirs)
    assert nandlab_cli("report", d).exit_code == 0
    assert theirs.read_text() == "keep" and not (d / "report.html").is_symlink()


@pytest.mark.parametrize("seed", [-1, 2**64, True, 1.5])
def test_a_python_seed_out_of_range_is_a_config_error(seed) -> None:
    with pytest.raises(nandlab.ConfigError, match="seed: expected a whole number from 0 to 18446744073709551615"):
        nandlab.make_simulator(None, seed=seed)


@pytest.mark.parametrize("config, where", [({"seed": 2**64}, "seed"), ({"device": {"channels": [1, -(2**70)]}},
                                                                         "device.channels[1]")])
def test_a_dict_config_number_past_64_bits_is_named_as_given(config, where: str) -> None:
    """Past 64 bits JSON carried it as a float: "found the number `18446744073709552000.0`"."""
    with pytest.raises(nandlab.ConfigError, match=rf"{re.escape(where)}: found -?1[0-9]+, outside what any setting"):
        nandlab.make_simulator(config)


def test_notes_that_are_not_json_are_a_config_error() -> None:
    with pytest.raises(nandlab.ConfigError, match="notes: expected JSON-able values"):
        nandlab.run({"device": {"preset": "snia-mlc", "capacity": "1GiB"}, "phase": [{"requests": 10}]},
                    notes={"when": object()}, progress=False)


def test_fio_logs_stay_inside_the_output_directory_and_are_checked_first(nandlab_cli, tmp_path: Path) -> None:
    """Absolute or ``..`` log prefixes wrote outside --out and overwrote a file there; a log that could not be
    written failed only after the whole run, and the --out results were never written."""
    keep = tmp_path / "keep_bw.log"
    keep.write_text("mine")
    out = tmp_path / "out"
    out.mkdir()
    (out / "f").write_text("a file, not a folder")
    for prefix, message in [(str(tmp_path / "abs"), "expected a log name inside"), ("../keep", "expected a log name"),
                            ("f/x", "cannot write fio's logs")]:
        job = tmp_path / "job.fio"
        job.write_text(f"[j]\nrw=randwrite\nsize=16m\nlog_avg_msec=100\nwrite_bw_log={prefix}\n")
        began = time.monotonic()
        assert message in _one_error_line(nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB",
                                                      "--out", out))
        assert time.monotonic() - began < 5
    assert keep.read_text() == "mine" and not (out / "summary.json").exists()


def _paused_in_phase_2(snapshot: Path, notes: dict, alter=lambda series: None, changes: dict | None = None) -> None:
    """A two-phase run's snapshot, paused in its second phase, kept with ``notes``, the first phase's
    time series as ``alter`` leaves it and its figures with ``changes``."""
    sim = nandlab.make_simulator({"device": {"cell": "tlc", "channels": 2, "blocks_per_plane": 64,
                                             "pages_per_block": 32, "page_size": "16KiB"},
                                  "phase": [{"name": "a", "requests": 2000}, {"name": "b", "volume": 30.0}]})
    sim.snapshot_to(str(snapshot))
    first = sim.run_phase(0)
    series = {name: column.tolist() for name, column in first["timeseries"].items()}
    alter(series)
    summary = {**first["summary"], **(changes or {})}
    sim.snapshot_extra = json.dumps({"phases": [summary], "timeseries": [series], "notes": notes})

    def stop(fraction: float, info: dict) -> None:
        raise KeyboardInterrupt

    with pytest.raises(nandlab.Interrupted):
        sim.run_phase(1, progress=stop)


def test_resume_writes_files_only_where_its_command_line_says(nandlab_cli, tmp_path: Path) -> None:
    """A snapshot's notes chose where results went: an altered one wrote summary.json into another run's
    directory with no --out given."""
    victim = tmp_path / "theirs"
    victim.mkdir()
    (victim / "summary.json").write_text("theirs")
    snapshot = tmp_path / "run.snap"
    _paused_in_phase_2(snapshot, {"out": str(victim)})
    result = nandlab_cli("resume", snapshot, "--quiet")
    assert result.exit_code == 0, result.stderr
    assert (victim / "summary.json").read_text() == "theirs" and sorted(victim.iterdir()) == [victim / "summary.json"]


@pytest.mark.parametrize("alter", [
    lambda series: series.update(extra=[1.0] * len(series["waf"])),
    lambda series: series.update(waf=["x"] * len(series["waf"])),
    lambda series: series[next(iter(series))].append(1),
    lambda series: series.pop("waf"),
], ids=["extra column", "text", "ragged", "missing column"])
def test_a_snapshot_s_altered_time_series_is_refused_before_the_run_goes_on(nandlab_cli, tmp_path: Path,
                                                                          alter) -> None:
    """A column added to a finished phase's kept time series failed in pl.concat, after the rest of the run."""
    snapshot = tmp_path / "run.snap"
    _paused_in_phase_2(snapshot, {}, alter)
    began = time.monotonic()
    assert "not a snapshot of `nandlab run`" in _one_error_line(nandlab_cli("resume", snapshot, "--quiet"))
    assert time.monotonic() - began < 5


def test_a_user_s_file_named_like_a_partial_snapshot_is_left_alone(nandlab_cli, tmp_path: Path) -> None:
    """``--snapshot X`` deleted an unrelated existing ``X.partial``."""
    config = tmp_path / "tiny.toml"
    config.write_text('[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n[[phase]]\nrequests = 2000\n')
    mine = tmp_path / "run.snap.partial"
    mine.write_text("mine")
    result = nandlab_cli("run", config, "--snapshot", tmp_path / "run.snap", "--snapshot-every", "1MiB", "--quiet")
    assert result.exit_code == 0, result.stderr
    assert mine.read_text() == "mine" and not list(tmp_path.glob("run.snap.*-*.partial"))


@pytest.mark.parametrize("text, message", [
    ('[device.timing.mlc]\nerase_us = 1000000000000000\n', "below 100,000,000 (100 s), found 1000000000000000"),
    ('[device.wear]\nrated = { mlc = 1099511627776 }\n', "from 1 to 1e12, found 1099511627776"),
    ('[device]\nchannels = 4294967296\n', "from 1 to 4,294,967,295"),
    ('[device]\ndies_per_chip = -1\n', "from 1 to 4,294,967,295"),
    ('[device]\ncapacity = "16ZiB"\n', "in B, KiB/KB, MiB/MB, GiB/GB, TiB/TB, PiB/PB or EiB/EB"),
    ('[device]\ncapacity = "16EiB"\n', "at most 4 EiB"),  # the unit the limit is given in is one it reads
], ids=["erase time", "cycles", "u32", "negative count", "unit", "EiB"])
def test_messages_state_the_real_limit(tmp_path: Path, text: str, message: str) -> None:
    """Messages that misled: "above 0" where the limit is 1e8, "at least 1" where it is 1e12, "a whole
    number" for one too large, "a size like…" for an unknown unit."""
    base = '[device]\npreset = "snia-mlc"\n'
    capacity = "" if "capacity" in text else 'capacity = "1GiB"\n'
    config = base + capacity + (text[len("[device]\n"):] if text.startswith("[device]\n") else text)
    with pytest.raises(nandlab.ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        nandlab.make_simulator(config + "[[phase]]\nrequests = 10\n")


def test_a_toml_integer_past_64_bits_says_so(nandlab_cli, tmp_path: Path) -> None:
    config = tmp_path / "seed.toml"
    config.write_text('seed = 9223372036854775808\n[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n')
    assert "the largest TOML holds" in _one_error_line(nandlab_cli("run", config))


@pytest.mark.parametrize("notes", ["x", [[1, 2]], object()], ids=["str", "pairs", "object"])
def test_notes_that_are_not_a_dict_are_a_config_error(notes) -> None:
    with pytest.raises(nandlab.ConfigError, match="notes: expected a dict"):
        nandlab.run(None, notes=notes, progress=False)


def test_a_config_dict_nested_deep_or_holding_an_object_is_a_config_error() -> None:
    deep: dict = {}
    inner = deep
    for _ in range(100_000):
        inner["a"] = {}
        inner = inner["a"]
    for config, message in [
        (deep, "nested thousands of levels deep"),
        ({"device": {"x": object()}}, "device.x: found object <object"),
        ({"device": {"preset": b"snia-mlc"}}, "device.preset: found bytes b'snia-mlc', expected a number, text"),
        ({"phase": [{"read_fraction": {1}}]}, r"phase\[0\].read_fraction: found set \{1\}"),
        ({1: 2}, "<dict>: a key int 1; keys are text"),
        ({"phase": [1]}, r"\[\[phase\]\] #1: found the number `1`, expected a table"),
    ]:
        with pytest.raises(nandlab.ConfigError, match=message):
            nandlab.make_simulator(config)
    # NumPy's numbers and arrays are what a sweep in a notebook hands over: taken as Python's.
    numpy = pytest.importorskip("numpy")
    nandlab.make_simulator({"device": {"preset": "snia-mlc", "capacity": "1GiB", "channels": numpy.int64(4)},
                            "phase": [{"requests": 10, "block_sizes": numpy.array(["4KiB/1", "8KiB/1"])}]})


def test_a_directory_named_report_html_is_one_line(nandlab_cli, run_out: Path, tmp_path: Path) -> None:
    d = tmp_path / "out"
    shutil.copytree(run_out, d)
    (d / "report.html").unlink()
    (d / "report.html").mkdir()
    assert "report.html: a directory, where the report writes a file" in _one_error_line(nandlab_cli("report", d))
    assert not list(d.glob(".report.html.*"))
    (d / "report.html").rmdir()
    (d / "figures" / "drive.png").unlink(missing_ok=True)
    (d / "figures" / "drive.png").mkdir(parents=True)  # a figure's place: the message names it
    assert f"{d / 'figures' / 'drive.png'}: a directory, where the report writes a file" in \
        _one_error_line(nandlab_cli("report", d))


def test_results_never_go_through_a_link_in_the_output_directory(nandlab_cli, run_out: Path, tmp_path: Path) -> None:
    """A link named summary.json, a PNG or a fio log in --out, or a figures/ that is a link, had its target
    overwritten; the links go, their targets stay."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    for name in ("summary", "png", "log", "drive.png"):
        (theirs / name).write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").symlink_to(theirs / "summary")
    (out / "throughput_latency.png").symlink_to(theirs / "png")
    (out / "x_bw.1.log").symlink_to(theirs / "log")
    job = tmp_path / "job.fio"
    job.write_text("[j]\nrw=randwrite\nsize=4m\nlog_avg_msec=10\nwrite_bw_log=x\n")
    assert nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB", "--out", out).exit_code == 0
    d = tmp_path / "run"
    shutil.copytree(run_out, d)
    shutil.rmtree(d / "figures")
    (d / "figures").symlink_to(theirs)
    assert nandlab_cli("report", d).exit_code == 0
    assert all((theirs / name).read_text() == "keep" for name in ("summary", "png", "log", "drive.png"))
    assert (d / "figures").is_dir() and not (d / "figures").is_symlink()


@pytest.mark.parametrize("name", ["/tmp/elsewhere", "../../elsewhere", "..", ".hidden", "a/b", "x" * 101, 5])
def test_a_sweep_name_is_a_folder_name_under_results_never_a_path(nandlab_cli, tmp_path: Path, monkeypatch,
                                                                  name) -> None:
    """An absolute or ../ name put a sweep's results (and its report.html, overwriting the user's) wherever
    the file said."""
    monkeypatch.chdir(tmp_path)
    sweep = tmp_path / "s.toml"
    value = json.dumps(name)
    sweep.write_text(SWEEP.replace('[sweep]\n', f'[sweep]\nname = {value}\n') +
                     '[[axis]]\nkey = "device.reserve"\nvalues = [0.1]\n')
    assert "[sweep] name: expected a plain name" in _one_error_line(nandlab_cli("sweep", sweep, "--workers", "1"))
    assert not (tmp_path / "results").exists()


def test_a_sweep_file_named_with_spaces_gets_a_plain_folder_name(tmp_path: Path) -> None:
    text = SWEEP + '[[axis]]\nkey = "device.reserve"\nvalues = [0.1]\n'
    assert nandlab.sweep.parse(text, str(tmp_path / "my study (v2).toml")).name == "my-study-v2"


def test_the_report_reads_result_files_through_links_and_leaves_them(nandlab_cli, run_out: Path,
                                                                     tmp_path: Path) -> None:
    """Results checked out as links (git-annex, DVC): the report removed summary.json and
    timeseries.parquet, then said summary.json was not JSON."""
    d, store = tmp_path / "out", tmp_path / "store"
    shutil.copytree(run_out, d)
    store.mkdir()
    for name in ("summary.json", "timeseries.parquet"):
        (d / name).rename(store / name)
        (d / name).symlink_to(store / name)
    result = nandlab_cli("report", d)
    assert result.exit_code == 0, result.stderr
    assert (d / "summary.json").is_symlink() and (d / "timeseries.parquet").is_symlink()


@pytest.mark.parametrize("blocker", ["fifo summary.json", "dir summary.json", "dir report.html", "dir figures/drive.png",
                                     "fifo figures/drive.png"])
def test_an_out_directory_that_cannot_take_the_results_is_refused_before_the_run(nandlab_cli, tmp_path: Path,
                                                                                 blocker: str) -> None:
    """A FIFO at summary.json hung after the run; a directory there failed after it (exit 1, a raw OS error)."""
    kind, name = blocker.split()
    out = tmp_path / "out"
    (out / "figures").mkdir(parents=True)
    os.mkfifo(out / name) if kind == "fifo" else (out / name).mkdir()
    config = tmp_path / "tiny.toml"
    config.write_text('[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n[[phase]]\nrequests = 2000\n')
    began = time.monotonic()
    assert f"holds '{name}'" in _one_error_line(nandlab_cli("run", config, "--out", out))
    assert time.monotonic() - began < 5


def test_a_fio_log_cannot_take_a_result_files_name(nandlab_cli, tmp_path: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_text("[j]\nrw=randwrite\nsize=16m\nwrite_bw_log=summary.json/x\n")
    error = _one_error_line(nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB", "--out",
                                        tmp_path / "out"))
    assert "write_bw_log: a log in summary.json/ would take the name" in error
    assert not (tmp_path / "out" / "summary.json").exists()


@pytest.mark.parametrize("axis", ['name = "waf"\nkey = "device.reserve"\nvalues = [0.1, 0.2]',
                                  'key = "phase.0.name"\nvalues = ["a", "b"]'], ids=["waf", "name"])
def test_an_axis_named_as_a_figure_keeps_both(nandlab_cli, tmp_path: Path, axis: str) -> None:
    """A DuplicateError traceback after every point had run."""
    sweep = tmp_path / "s.toml"
    sweep.write_text(SWEEP + f"[[axis]]\n{axis}\n")
    result = nandlab_cli("sweep", sweep, "--out", tmp_path / "out", "--workers", "1", "--quiet")
    assert result.exit_code == 0, result.stderr
    columns = pl.read_parquet(tmp_path / "out" / "results.parquet").columns
    figure = "waf" if "waf" in axis else "name"
    assert figure in columns and f"{figure} (figure)" in columns


@pytest.mark.parametrize("cuts, message", [
    ('power_loss = [' + ", ".join(f'"{n}ns"' for n in range(1, 10_002)) + ']', "at most 10000 cut times"),
    ('power_loss_every = "1us"', "expected at least 1ms between cuts"),
], ids=["10,001 times", "every microsecond"])
def test_power_cuts_are_bounded(nandlab_cli, tmp_path: Path, cuts: str, message: str) -> None:
    """20,000 listed cuts took 52 s of a 10-request phase; 100,000 over a minute (2.6 ms a cut)."""
    config = tmp_path / "cuts.toml"
    config.write_text(f'[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n[[phase]]\nrequests = 10\n{cuts}\n')
    began = time.monotonic()
    assert message in _one_error_line(nandlab_cli("run", config))
    assert time.monotonic() - began < 5


@pytest.mark.parametrize("args, message", [
    (["--cycles", "1e400", "--hours", "1"], "'--cycles': expected a finite number, found '1e400'"),
    (["--cycles", "100", "--hours", "\u0661"], "'--hours': expected a number in ASCII digits"),
], ids=["1e400", "Arabic-Indic digit"])
def test_cli_numbers_are_named_as_typed(nandlab_cli, args: list[str], message: str) -> None:
    """Issue 38: 1e400 was "inf is not in the range"; a bake of 1e-320 h named an internal phase's key."""
    result = nandlab_cli("test", "retention", "--device", "snia-mlc", "--capacity", "1GiB", *args)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_a_bake_shorter_than_a_nanosecond_is_none(nandlab_cli) -> None:
    result = nandlab_cli("test", "retention", "--device", "snia-mlc", "--capacity", "1GiB", "--cycles", "10",
                         "--hours", "1e-320", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["hours"] == 1e-320


@pytest.mark.parametrize("line, message", [
    ("size=200%", "[j] size: expected a number above 0 to 100, found `200`"),
    ("offset=100%", "[j] offset: expected a number from 0 to 99.999, found `100`"),
    ("random_distribution=zipf:nan", "[j] random_distribution=zipf:nan: expected a number above 0"),
    ("random_distribution=pareto:2", "[j] random_distribution=pareto:2: expected a number above 0 to 1"),
    ("bs=3", "[j] bs: expected a request size in whole 512-byte sectors, from 512 bytes to 64MiB, found `3`"),
    ("bs=0", "[j] bs: expected a request size in whole 512-byte sectors"),
    ("bs=1t", "found `1t`, which fio reads as 1,099,511,627,776 bytes"),
    ("bs=4KiB", "found `4KiB`, which fio reads as 4,000 bytes (with kb_base=1024, KiB, MiB and the like are powers"),
    ("bssplit=4k/50:3/50", "[j] bssplit: expected a request size in whole 512-byte sectors"),
    ("size=0", "[j] size: expected a size above 0"),
    # Issue 40's outside check: fio refuses these ("failed parsing"); they ran silently.
    ("stonewall=abc", "[j] stonewall: expected 0 or 1 (fio takes a whole number for a switch), found `abc`"),
    ("time_based=yes", "[j] time_based: expected 0 or 1"),
    ("group_reporting=on", "[j] group_reporting: expected 0 or 1"),
], ids=["size 200%", "offset 100%", "zipf nan", "pareto 2", "bs 3", "bs 0", "bs 1t", "bs 4KiB", "bssplit 3",
        "size 0", "stonewall abc", "time_based yes", "group_reporting on"])
def test_fio_values_out_of_range_name_the_job_files_line(nandlab_cli, tmp_path: Path, line: str, message: str) -> None:
    """Issue 38: these named the engine's key (`[[phase]] #1 working_set`, `distribution`), not the job file's."""
    job = tmp_path / "job.fio"
    job.write_text(f"[j]\nrw=randwrite\n{'' if line.startswith('size') else 'size=4m'}\n{line}\n")
    result = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert f"{job}:4:" in result.stderr


@pytest.mark.parametrize("line, option, message", [
    ("offset=3g", "offset", "more than the drive's user capacity"),
    ("random_distribution=pareto:1", "random_distribution", "pareto:H needs 0 < H < 1"),
    ("bs=1m", "size", "smaller than one request"),
])
def test_what_the_engine_refuses_of_a_job_is_said_of_the_job_file(nandlab_cli, tmp_path: Path, line: str,
                                                                  option: str, message: str) -> None:
    """Issue 40's second outside check: these named the engine's keys (`[[phase]] #1 job #2
    working_set_offset`), not the job file's line and option."""
    job = tmp_path / "job.fio"
    job.write_text(f"[a]\nrw=randread\nsize=4m\n[b]\nrw=randwrite\nsize=512k\n{line}\n")
    result = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB")
    expected = f"nandlab: error: {job}:{7 if option != 'size' else 6}: [b] {option}: "
    assert result.exit_code == 2 and result.stderr.startswith(expected) and message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1


def test_bssplit_sizes_without_a_share_split_what_is_left_as_fio_does(nandlab_cli, tmp_path: Path) -> None:
    """fio runs `bssplit=4k/0:8k/0` (a 0 or missing percentage shares what the others leave); it was refused."""
    from nandlab import fio

    shares = {b: fio.parse(f"[j]\nrw=randread\nbssplit={b}\n").phases[0]["block_sizes"]
              for b in ("4k/0:8k/0", "4k/60:8k", "4k/100:8k/0", "4k:8k:16k/50")}
    assert shares == {"4k/0:8k/0": ["4096B/100", "8192B/100"], "4k/60:8k": ["4096B/60", "8192B/40"],
                      "4k/100:8k/0": ["4096B/100"], "4k:8k:16k/50": ["4096B/50", "8192B/50", "16384B/100"]}
    job = tmp_path / "job.fio"
    job.write_text("[j]\nrw=randwrite\nsize=4m\nbssplit=4k/0:8k/0\n")
    assert nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB").exit_code == 0


@pytest.mark.parametrize("line", ["random_distribution=zipf:abc", "random_distribution=lumpy", "stonewall=true",
                                  "norandommap=yes", "random_distribution=zipf:1", "random_distribution=ZIPF:1.2"])
def test_options_a_sequential_job_does_not_use_are_checked_as_fio_checks_them(nandlab_cli, tmp_path: Path,
                                                                              line: str) -> None:
    """Issue 40's outside check: a sequential read with random_distribution=zipf:abc ran; fio refuses it."""
    job = tmp_path / "job.fio"
    job.write_text(f"[j]\nrw=read\nsize=4m\n{line}\n")
    result = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"nandlab: error: {job}:4: [j] {line.split('=')[0]}"), result.stderr


def test_terse_output_sends_no_control_character_of_a_job_file(nandlab_cli, tmp_path: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_text("[j\x07\x1b[2J]\nrw=randwrite\nsize=1m\ndescription=a\x07b\n")
    result = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB", "--output-format=terse")
    assert result.exit_code == 0, result.stderr
    assert "\x07" not in result.stdout and "\x1b" not in result.stdout and ";j\\x07" in result.stdout


def test_a_result_number_past_64_bits_is_named(nandlab_cli, run_out: Path, tmp_path: Path) -> None:
    d = tmp_path / "out"
    shutil.copytree(run_out, d)
    summary = (d / "summary.json").read_text()
    (d / "summary.json").write_text(summary.replace('"host_write_bytes": ', '"host_write_bytes": 1' + "0" * 5000 + ", "
                                                    '"x": ', 1))
    result = nandlab_cli("report", d)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "summary.json: a whole number of 5,001 digits, where nandlab writes at most 20" in result.stderr


def test_a_fio_warning_comes_only_when_the_run_goes_ahead(nandlab_cli, tmp_path: Path) -> None:
    """Issue 38: a job file that nandlab warns about and whose drive the engine refuses printed the
    warning, then the error: two lines."""
    job = tmp_path / "job.fio"
    job.write_text("[j]\nrw=randwrite\nsize=4m\nioengine=libaio\n")
    result = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "64MiB")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "too small for this geometry" in result.stderr


@pytest.mark.parametrize("every, message", [
    ("16EiB", "--snapshot-every (snapshot_every): expected a size of at most 4 EiB"),
    ("99999999999999999999s", "--snapshot-every (snapshot_every): expected a duration of at most 146 years"),
    ("300years", "(at most 146 years), or bytes moved like \"50GiB\" (at most 4 EiB), found \"300years\""),
])
def test_snapshot_every_names_the_flag_and_its_limit(nandlab_cli, tiny_path: Path, tmp_path: Path, every: str,
                                                    message: str) -> None:
    result = nandlab_cli("run", tiny_path, "--snapshot", tmp_path / "s.snap", "--snapshot-every", every)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_a_lone_surrogate_in_a_result_file_is_named(nandlab_cli, run_out: Path, tmp_path: Path) -> None:
    d = tmp_path / "out"
    shutil.copytree(run_out, d)
    summary = json.loads((d / "summary.json").read_text())
    summary["phases"][0]["name"] = "\ud800"
    (d / "summary.json").write_text(json.dumps(summary))
    result = nandlab_cli("report", d)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "summary.json: text with a lone surrogate" in result.stderr
    summary["phases"][0]["name"] = "\U0001f600 fine"  # a whole pair, escaped the same way, is text
    (d / "summary.json").write_text(json.dumps(summary))
    assert nandlab_cli("report", d).exit_code == 0


def test_links_of_the_users_in_an_output_directory_stay(nandlab_cli, tiny_path: Path, tmp_path: Path) -> None:
    """Issue 38 (second outside check): `run --out DIR` removed every link in DIR and its folders. Only
    links where nandlab writes go (a result file's name, a folder it writes); the user's stay."""
    d, target = tmp_path / "out", tmp_path / "target.txt"
    (d / "proj").mkdir(parents=True)
    target.write_text("data")
    (d / "toplink").symlink_to(target)
    (d / "proj" / "link2").symlink_to(target)
    (d / "dirlink").symlink_to(d / "proj")
    (d / "summary.json").symlink_to(target)  # where nandlab writes: the link goes, its target stays
    assert nandlab_cli("run", tiny_path, "--out", d, "--quiet").exit_code == 0
    assert all((d / name).is_symlink() for name in ("toplink", "proj/link2", "dirlink"))
    assert not (d / "summary.json").is_symlink() and target.read_text() == "data"


def test_an_out_that_cannot_be_made_is_refused_before_the_run(nandlab_cli, tiny_path: Path, tmp_path: Path) -> None:
    """Issue 38 (second outside check): a file on the way, /proc or /sys failed after the run, exit 1."""
    (tmp_path / "afile").write_text("")
    for out, message in [(tmp_path / "afile" / "sub", "cannot be made"), ("/proc/self", "takes no new files"),
                         ("/sys/kernel", "takes no new files")]:
        result = nandlab_cli("run", tiny_path, "--out", out, "--quiet")
        assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


@pytest.mark.parametrize("args", [["--reserves", "0.3,0.3"], ["--read-levels", "low=0.25,low=0.5"],
                                  ["--read-levels", "a=0.25,b=0.25"]])
def test_a_grid_point_given_twice_is_refused_before_the_runs(nandlab_cli, args: list[str]) -> None:
    """Issue 38 (second outside check): twice the same reserve ran every point, then a traceback; a read
    level named twice dropped one without a word."""
    result = nandlab_cli("lifetime-grid", "--cells", "mlc", "--working-sets", "1", *args)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "once, found" in result.stderr, result.stderr


# --- third outside check ---------------------------------------------------------------------------

_MODULES = ("lifetime", "fio", "sweep", "traces", "qualify", "matrix", "lifetime_traces", "mqsim", "chipbench")


def test_every_public_function_of_the_procedure_modules_checks_its_arguments() -> None:
    """Issue 38 (third outside check): nandlab.lifetime, fio, sweep, traces … raised TypeError,
    AttributeError or ValueError from deep inside for a wrong kind of argument."""
    import importlib
    import inspect

    for name in _MODULES:
        module = importlib.import_module(f"nandlab.{name}")
        for function_name, function in vars(module).items():  # every public one, in __all__ or not
            if not function_name.startswith("_") and inspect.isfunction(function) and \
                    function.__module__ == module.__name__ and inspect.signature(function).parameters:
                assert hasattr(function, "__wrapped__"), f"nandlab.{name}.{function_name} is not @checked"


@pytest.mark.parametrize("call, message", [
    (lambda: nandlab.parse_size(None), "parse_size(): text: expected text (a str), found NoneType"),
    (lambda: nandlab.preset_toml(5), "preset_toml(): name: expected text (a str), found int"),
    (lambda: nandlab.check_config(b""), "config: expected a dict, TOML text, a path or None, found bytes"),
    (lambda: nandlab.run(42), "config: expected a dict, TOML text, a path or None, found int 42"),
    (lambda: __import__("nandlab.lifetime").lifetime.synthetic(5), "lifetime.synthetic(): preset: expected text"),
    (lambda: __import__("nandlab.lifetime").lifetime.grid(cells="tlc"), "cells: expected a sequence of text"),
    (lambda: __import__("nandlab.lifetime").lifetime.grid(reserves=[0.1, "x"]), "reserves: expected a sequence of a number"),
    (lambda: __import__("nandlab.fio").fio.parse(None), "fio.parse(): text: expected text (a str), found NoneType"),
    (lambda: __import__("nandlab.traces").traces.stats("x", skip_bad=1), "skip_bad: expected True or False, found int 1"),
    (lambda: __import__("nandlab.sweep").sweep.run(None, "x"), "sweep.run(): sweep: expected a Sweep"),
    (lambda: __import__("nandlab.matrix").matrix.run("snia-slc", mixes="ab"), "mixes: expected a sequence"),
    (lambda: __import__("nandlab.lifetime").lifetime.synthetic("x", nope=1), "unexpected keyword argument 'nope'"),
    # Values out of range, and mappings without what nandlab gives (a fourth outside check's cases)
    (lambda: __import__("nandlab.chipbench").chipbench.endurance("MT29F2G08AAD", blocks=-1), "chipbench.endurance()"),
    (lambda: __import__("nandlab.matrix").matrix.is_steady([1.0] * 5, window=0), "window: expected a whole number"),
    (lambda: __import__("nandlab.matrix").matrix.steady_round([1.0] * 5, window=-2**63), "window: expected"),
    (lambda: __import__("nandlab.matrix").matrix.parse_mixes(""), "expected read/write percentages"),
    (lambda: __import__("nandlab.fio").fio.terse({}), "fio.terse(): an argument is not as nandlab makes it"),
    (lambda: __import__("nandlab.lifetime").lifetime.grid_sweep(cells=[]), "lifetime.grid_sweep()"),
    (lambda: __import__("nandlab.qualify").qualify.device_config("x" * 300), "neither a config file nor a device"),
    (lambda: nandlab.Simulator.resume(5), "Simulator.resume(): path: expected a path"),
    (lambda: nandlab.make_simulator(None).snapshot_to(None), "Simulator.snapshot_to(): path: expected a path"),
    (lambda: nandlab.Simulator.is_served_drive(b"/tmp/x"), "Simulator.is_served_drive(): path: expected a path"),
], ids=["parse_size", "preset_toml", "check_config", "run", "synthetic", "grid str", "grid item", "fio.parse",
        "traces.stats", "sweep.run", "matrix.run", "unknown keyword", "blocks -1", "window 0", "window -2^63",
        "parse_mixes", "terse", "grid_sweep", "long device", "resume", "snapshot_to", "is_served_drive"])
def test_a_wrong_kind_of_argument_is_a_config_error(call, message: str) -> None:
    with pytest.raises(nandlab.ConfigError, match=re.escape(message)):
        call()


def test_matrix_functions_take_numpy_arrays_and_numbers() -> None:
    import numpy as np

    from nandlab import matrix

    assert matrix.is_steady(np.array([100.0, 100.5, 99.8, 100.1, 100.0]), window=np.int64(5))


@pytest.mark.parametrize("kwargs, message", [
    ({"workers": 0}, "workers: expected a whole number from 1 to 1024, found 0"),
    ({"workers": True}, "workers: expected a whole number or None, found bool True"),
    ({"workers": 2, "local_cluster": 2}, "give one of workers, scheduler and local_cluster"),
])
def test_sweep_workers_are_checked_before_anything_runs(tmp_path: Path, kwargs: dict, message: str) -> None:
    """Issue 38 (third outside check): workers=0 was taken as all cores; workers with a cluster ignored."""
    from nandlab import sweep

    study = sweep.parse('[sweep]\nname = "x"\n[base]\n[[axis]]\nkey = "seed"\nvalues = [1]\n')
    with pytest.raises(nandlab.ConfigError, match=re.escape(message)):
        sweep.run(study, tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists()


def test_the_cli_takes_one_place_to_run_a_sweep(nandlab_cli, tmp_path: Path) -> None:
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text('[sweep]\nname = "x"\n[base]\n[[axis]]\nkey = "seed"\nvalues = [1]\n')
    error = _one_error_line(nandlab_cli("sweep", sweep_file, "--workers", "2", "--local-cluster", "2"))
    assert "give one of --workers, --scheduler and --local-cluster" in error


def test_a_first_trace_line_of_digits_is_never_passed_over_as_a_header(nandlab_cli, tmp_path: Path) -> None:
    """Issue 38 (third outside check): an MSR trace whose first timestamp was 2⁶⁴ − 1 lost that line
    without a word (taken for a header)."""
    trace = tmp_path / "t.csv"
    trace.write_text("18446744073709551615,hm,0,Write,0,4096,10\n128166385295514878,hm,0,Write,4096,512,2617\n")
    error = _one_error_line(nandlab_cli("trace", "stats", trace, "--format", "msr"))
    assert "t.csv:1: not a msr line" in error


def _trace_stats_dir(nandlab_cli, tmp_path: Path) -> Path:
    trace = tmp_path / "t.csv"
    trace.write_text("".join(f"{128166385295514663 + i * 1000},hm,0,{'Read' if i % 3 else 'Write'},{i * 4096},4096,10\n"
                             for i in range(50)))
    out = tmp_path / "stats"
    assert nandlab_cli("trace", "stats", trace, "--out", out).exit_code == 0
    return out


@pytest.mark.parametrize("key, value, message", [
    ("read_percent", 250, "read_percent = 250, where nandlab writes a percentage, from 0 to 100"),
    ("records", "many", "records = 'many', where nandlab writes a count"),
    ("footprint_bytes", -1e300, "footprint_bytes = -1e+300"),
])
def test_a_report_never_shows_a_figure_that_cannot_exist(nandlab_cli, tmp_path: Path, key: str, value,
                                                         message: str) -> None:
    """Issue 38 (third outside check): a report drew read_percent 250 and uber -1 from altered files; a string
    where a count was failed with "Cannot specify ',' with 's'." naming no file."""
    out = _trace_stats_dir(nandlab_cli, tmp_path)
    document = json.loads((out / "stats.json").read_text())
    document[key] = value
    (out / "stats.json").write_text(json.dumps(document))
    error = _one_error_line(nandlab_cli("report", out))
    assert error.startswith(str(out / "stats.json")) and message in error


def test_a_report_never_draws_an_impossible_column(nandlab_cli, tmp_path: Path) -> None:
    out = tmp_path / "grid"
    out.mkdir()
    pl.DataFrame({"cell": ["tlc"], "reserve": [0.3], "working_set": [0.1], "lifetime_ratio": [-1e300]}) \
        .write_parquet(out / "grid.parquet")
    error = _one_error_line(nandlab_cli("report", out))
    assert "grid.parquet: column 'lifetime_ratio' holds -1e+300" in error


@pytest.mark.parametrize("key, value", [("free_blocks", 10**9), ("erase_count_histogram", [[0, 999_999_999]]),
                                        ("waf", -2.0), ("waf", 1e300), ("capacity_at_death", 5),
                                        ("average_power_w", -5.0)])
def test_a_snapshot_s_finished_phase_that_cannot_be_is_refused(nandlab_cli, tmp_path: Path, key: str, value) -> None:
    """Issue 38 (third outside check): a finished phase with 999,999,999 blocks in its histogram, or 10⁹ free
    blocks, on a drive of 512, resumed and reported them."""
    snapshot = tmp_path / "run.snap"
    _paused_in_phase_2(snapshot, {}, changes={key: value})
    assert "not a snapshot of `nandlab run`" in _one_error_line(nandlab_cli("resume", snapshot, "--quiet"))


def test_a_trace_replay_of_no_distinct_address_is_refused(nandlab_cli, tmp_path: Path) -> None:
    """Issue 38 (third outside check): ``--unique-bytes 0`` replayed nothing and printed a table of zeros."""
    trace = tmp_path / "t.csv"
    trace.write_text("128166385295514663,hm,0,Write,0,4096,10\n")
    error = _one_error_line(nandlab_cli("trace", "replay", trace, "--device", "snia-mlc", "--capacity", "1GiB",
                                        "--unique-bytes", "0"))
    assert "unique_bytes: must be above 0" in error


def _sweep_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.toml"
    path.write_text('[sweep]\nname = "s"\n[base.device]\npreset = "snia-slc"\ncapacity = "1GiB"\n'
                    '[[base.phase]]\nkind = "fill"\n[[axis]]\nkey = "seed"\nvalues = [1]\n')
    return path


@pytest.mark.parametrize("name", ["res[1]", "res*"])
def test_a_sweep_into_a_directory_named_with_glob_characters(nandlab_cli, tmp_path: Path, name: str) -> None:
    """A fourth outside check: `--out 'res[1]'` ended in a polars traceback after the runs; `res*` read
    other directories' runs (the names went to polars as glob patterns)."""
    (tmp_path / "resother" / "runs").mkdir(parents=True)
    result = nandlab_cli("sweep", _sweep_file(tmp_path), "--out", tmp_path / name, "--workers", "1")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / name / "figures" / "timeseries.png").exists()


def test_an_out_that_no_file_name_can_be_is_refused_before_the_run(nandlab_cli, tiny_path: Path,
                                                                   tmp_path: Path) -> None:
    """A fourth outside check: a 300-byte --out ran the whole run, then failed with exit 1 leaving its parent."""
    long = tmp_path / "parent" / ("z" * 300)
    assert "longer than the 255" in _one_error_line(nandlab_cli("run", tiny_path, "--out", long, "--quiet"))
    assert not (tmp_path / "parent").exists()
    from nandlab import sweep

    for out, message in [("/dev/zero", "not a directory"), (str(tmp_path / "a\0b"), "NUL byte"),
                         (long, "longer than the 255")]:
        with pytest.raises(nandlab.ConfigError, match=message):
            sweep.run(sweep.load(_sweep_file(tmp_path)), out, workers=1)


def test_number_ios_only_ends_a_fio_job_sooner(nandlab_cli) -> None:
    """A fourth outside check: number_ios=100000 ran 100,000 I/Os past size=1m (fio: 256), and 2⁶⁴ − 1
    ran without end."""
    result = nandlab_cli("fio", "--device", "snia-slc", "--capacity", "1GiB", "--output-format=json", "--name=j",
                         "--rw=randwrite", "--bs=4k", "--size=1m", "--number_ios=18446744073709551615")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout[result.stdout.index("{"):])["jobs"][0]["write"]["total_ios"] == 256


def test_a_trace_that_is_no_regular_file_is_named_so(nandlab_cli, tmp_path: Path) -> None:
    """A fourth outside check: /dev/zero and a directory as a config's trace were "no such file"."""
    for trace, message in [("/dev/zero", "is not a regular file"), (str(tmp_path), "is a directory")]:
        config = tmp_path / "c.toml"
        config.write_text(f'[device]\npreset = "snia-slc"\ncapacity = "1GiB"\n[[phase]]\nkind = "trace"\n'
                          f'trace = "{trace}"\n')
        assert message in _one_error_line(nandlab_cli("run", config))


def test_a_per_request_time_series_is_counted_in_the_memory_check(nandlab_cli, tmp_path: Path, monkeypatch) -> None:
    """A fourth outside check: interval = 1 over 3 M requests was estimated at 892 MiB and aborted at 1.2 GB
    (the rows' vector doubles, then is copied into columns)."""
    config = tmp_path / "c.toml"
    config.write_text('[device]\npreset = "snia-slc"\ncapacity = "1GiB"\n[[phase]]\npattern = "random"\n'
                      'block_size = "4KiB"\nrequests = 3000000\ninterval = 1\n')
    monkeypatch.setenv("NANDLAB_MEMORY_LIMIT", "1500MiB")
    assert "this run needs about 2.5 GiB" in _one_error_line(nandlab_cli("run", config))


# --- a fifth outside check -------------------------------------------------------------------------


@pytest.mark.parametrize("figures, wrong", [
    ({"temperature_c": -500}, True), ({"reads": 0.5}, True), ({"waf": 1e19}, True), ({"waf": "-5"}, True),
    ({"iops": "-99999"}, True), ({"mean_request_bytes": 12.5}, False), ({"drive_writes": 683.8}, False),
    ({"erase_count_std": 0.5}, False), ({"death": "worn out"}, False), ({"waf": float("nan")}, False),
    ({"records": float("nan")}, True), ({"phases": [{"free_blocks": -1}]}, True),
])
def test_what_a_figure_can_be_follows_its_name(figures: dict, wrong: bool) -> None:
    from nandlab import plausible

    assert (plausible.impossible(figures) is not None) == wrong


def _run_dir(nandlab_cli, tiny_path: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    assert nandlab_cli("run", tiny_path, "--out", out, "--quiet").exit_code == 0
    return out


def test_a_result_file_of_millions_of_values_is_refused_at_once(nandlab_cli, tiny_path: Path, tmp_path: Path) -> None:
    """A fifth outside check: 20 M zeros under a key of summary.json took 46 s and 3.2 GB to check."""
    out = _run_dir(nandlab_cli, tiny_path, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    (out / "summary.json").write_text(json.dumps({**summary, "extra": [0] * 2_100_000}))
    began = time.monotonic()
    assert "more than 2,000,000 values" in _one_error_line(nandlab_cli("report", out))
    assert time.monotonic() - began < 5


@pytest.mark.parametrize("column, value", [("free_blocks", -5), ("waf", -3.0), ("iops", float("inf"))])
def test_a_run_s_time_series_holds_only_figures_that_can_be(nandlab_cli, tiny_path: Path, tmp_path: Path,
                                                            column: str, value) -> None:
    """A fifth outside check: a time series' free blocks of -5 and WAF of -3 were drawn."""
    out = _run_dir(nandlab_cli, tiny_path, tmp_path)
    ts = pl.read_parquet(out / "timeseries.parquet")
    ts.with_columns(pl.lit(value).cast(ts[column].dtype).alias(column)).write_parquet(out / "timeseries.parquet")
    assert f"column '{column}' holds" in _one_error_line(nandlab_cli("report", out))


def test_a_run_summary_with_more_blocks_than_its_drive_is_refused(nandlab_cli, tiny_path: Path, tmp_path: Path) -> None:
    out = _run_dir(nandlab_cli, tiny_path, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    summary["phases"][0]["free_blocks"] = 10**18
    (out / "summary.json").write_text(json.dumps(summary))
    assert "on a drive of 128 blocks" in _one_error_line(nandlab_cli("report", out))


def test_a_chip_endurance_result_that_divides_by_zero_is_one_line(nandlab_cli, tmp_path: Path) -> None:
    out = tmp_path / "chip"
    assert nandlab_cli("chip", "endurance", "--chip", "MT29F2G08AAD", "--blocks", "4", "--out", out).exit_code == 0
    document = json.loads((out / "endurance.json").read_text())
    (out / "endurance.json").write_text(json.dumps({**document, "nominal_endurance": 0}))
    assert "a figure nandlab divides by is 0" in _one_error_line(nandlab_cli("report", out))


def test_the_simulator_class_checks_what_it_is_given(tmp_path: Path) -> None:
    """A fifth outside check: Simulator(seed=-1) raised OverflowError, Simulator(5) TypeError, and
    Simulator.resume(FIFO) blocked for good."""
    for call, message in [(lambda: nandlab.Simulator("seed = 1", seed=-1), "seed: expected a whole number"),
                          (lambda: nandlab.Simulator(5), "config: expected text"),
                          (lambda: nandlab.Simulator("seed = 1", seed=True), "found True")]:
        with pytest.raises(nandlab.ConfigError, match=message):
            call()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(nandlab.SnapshotError, match="not a regular file"):
        nandlab.Simulator.resume(str(fifo))
    assert nandlab.Simulator.is_served_drive(str(fifo)) is False


def test_chip_results_go_only_into_a_directory(tmp_path: Path) -> None:
    from nandlab import chipbench

    run = chipbench.endurance("MT29F2G08AAD", blocks=2)
    for out, message in [("/dev/null", "not a directory"), (tmp_path / ("x" * 300), "longer than the 255")]:
        with pytest.raises(nandlab.ConfigError, match=message):
            chipbench.write_endurance(run, out)


def test_an_out_with_control_characters_is_shown_escaped(nandlab_cli, tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("128166385295514663,hm,0,Write,0,4096,10\n")
    result = nandlab_cli("trace", "stats", trace, "--out", tmp_path / "o\x1b[31mx")
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stderr and "\\x1b" in result.stderr


def test_a_report_shows_control_characters_as_their_escapes(nandlab_cli, tiny_path: Path, tmp_path: Path) -> None:
    """A fifth outside check: an ESC or BEL in a result's text (a device's name) went raw into the page."""
    out = _run_dir(nandlab_cli, tiny_path, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    summary["phases"][0]["name"] = "a\x1b[31mb\x07"
    (out / "summary.json").write_text(json.dumps(summary))
    assert nandlab_cli("report", out).exit_code == 0
    page = (out / "report.html").read_text()
    assert "\x1b" not in page and "\x07" not in page and "a\\x1b[31mb\\x07" in page


def test_a_matrix_of_no_state_is_refused() -> None:
    from nandlab import matrix

    with pytest.raises(nandlab.ConfigError, match="nothing to run"):
        matrix.run("snia-slc", capacity="1GiB", states=[], scaling=False)


# --- a sixth look: builders, verdicts, skipped lines at detection, bench results ------------------


@pytest.mark.parametrize("build, message", [
    (lambda: __import__("nandlab.lifetime").lifetime.synthetic("zombienand-synthetic-tlc", working_set=float("nan")),
     "working_set: must be a finite number"),
    (lambda: __import__("nandlab.lifetime").lifetime.synthetic("zombienand-synthetic-mlc", reserve=2.0),
     "reserve: a bare number is a share of 1: 2 would be 200 %"),
    (lambda: __import__("nandlab.lifetime").lifetime.changing("zombienand-synthetic-mlc", 0.2, [(0.1, 5), (1.5, None)]),
     "#2 working_set: expected a fraction between 0 and 1, found 1.5"),
    (lambda: __import__("nandlab.lifetime").lifetime.grid_sweep(reserves=[0.1, 2.0]),
     "lifetime.grid_sweep(): [device] reserve"),
    (lambda: __import__("nandlab.lifetime").lifetime.grid_sweep(read_levels={"x": -1}),
     "lifetime.grid_sweep(): [[phase]] #1 read_fraction"),
    (lambda: __import__("nandlab.lifetime").lifetime.grid_sweep(cells=[]), "cells: expected at least one"),
    (lambda: __import__("nandlab.traces").traces.replay_phase("/nonexistent.csv"), "trace: no such file"),
    (lambda: __import__("nandlab.traces").traces.replay_phase(__file__, queue_depth=-1), "queue_depth"),
    (lambda: __import__("nandlab.traces").traces.replay_phase(__file__, time_scale=float("nan")), "time_scale"),
], ids=["synthetic nan", "synthetic 200 %", "changing 150 %", "grid reserve", "grid read level", "grid no cell",
        "replay missing trace", "replay depth -1", "replay nan scale"])
def test_builders_refuse_what_a_run_would(build, message: str) -> None:
    """The sixth outside check: lifetime.synthetic, grid_sweep and traces.replay_phase returned configs
    with nan, 200 % or a queue depth of −1, refused only when the run started."""
    with pytest.raises(nandlab.ConfigError) as error:
        build()
    assert message in str(error.value)


def test_a_verdict_that_contradicts_its_figures_is_refused(nandlab_cli, tmp_path: Path) -> None:
    out = tmp_path / "ret"
    result = nandlab_cli("test", "retention", "--device", "snia-mlc", "--capacity", "1GiB", "--cycles", "10",
                         "--hours", "1", "--out", out, "-q")
    assert result.exit_code == 0, result.stderr
    document = json.loads((out / "result.json").read_text())
    assert document["pass"] is (document["uber_expected"] <= document["uber_target"])
    assert nandlab_cli("report", out).exit_code == 0
    document["uber_expected"] = 0.5  # a possible rate, but then the test cannot have passed
    (out / "result.json").write_text(json.dumps(document))
    message = _one_error_line(nandlab_cli("report", out))
    assert "pass = true, but uber_expected = 0.5 is above uber_target" in message


def test_a_bad_line_among_the_first_is_skipped_when_the_format_is_detected(nandlab_cli, tmp_path: Path) -> None:
    lines = [f"{128166372000000000 + t},hm,0,Write,{t * 4096},4096,100" for t in range(20)]
    lines.insert(2, "1,2,3")
    trace = tmp_path / "t.csv"
    trace.write_text("\n".join(lines) + "\n")
    assert "not a trace format" in _one_error_line(nandlab_cli("trace", "stats", trace))
    result = nandlab_cli("trace", "stats", trace, "--skip-bad", "--json")
    assert result.exit_code == 0, result.stderr
    stats = json.loads(result.stdout)
    assert (stats["format"], stats["records"], stats["skipped_lines"]) == ("msr", 20, 1)


def test_bench_results_with_figures_that_cannot_exist_are_not_written(tmp_path: Path) -> None:
    from nandlab import chipbench

    run = chipbench.endurance("MT29F2G08AAD", blocks=2)
    run["lifetimes"][0] = 10**30  # polars raised TypeError writing it
    with pytest.raises(nandlab.ConfigError, match=r"run: lifetimes\[0\] = 1000000000000000000000000000000"):
        chipbench.write_endurance(run, tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --- a sixth outside check (about 1,500 cases of its own) ------------------------------------------


def test_a_read_ahead_window_past_the_drive_is_refused(nandlab_cli, tiny_path: Path) -> None:
    """`[ftl] read_ahead = "4EiB"` aborted the process (a 9 PB allocation) from the CLI, the API and serve."""
    config = {"device": {"preset": "snia-slc", "capacity": "1GiB"}, "ftl": {"read_ahead": "4EiB"},
              "phase": [{"requests": 10}]}
    with pytest.raises(nandlab.ConfigError, match=r"\[ftl\] read_ahead: expected at most 1 GiB"):
        nandlab.check_config(config)
    config["ftl"]["read_ahead"] = "2MiB"
    nandlab.check_config(config)


def test_fio_logs_never_go_through_a_linked_folder(nandlab_cli, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "z_bw.1.log").write_text("PRECIOUS")
    out = tmp_path / "out"
    out.mkdir()
    (out / "linkdir").symlink_to(elsewhere)
    job = tmp_path / "job.fio"
    job.write_text("[a]\nrw=write\nbs=4k\nnumber_ios=100\nlog_avg_msec=10\nwrite_bw_log=linkdir/z\n")
    message = _one_error_line(nandlab_cli("fio", job, "--device", "snia-slc", "--capacity", "1GiB", "--out", out))
    assert "a symbolic link" in message
    assert (elsewhere / "z_bw.1.log").read_text() == "PRECIOUS" and not (out / "summary.json").exists()


def test_a_sweep_never_writes_through_its_linked_folders(nandlab_cli, tmp_path: Path) -> None:
    """runs/ and timeseries/ linked elsewhere: a user's file there was overwritten by a run's Parquet."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "runs").mkdir(parents=True)
    (elsewhere / "series").mkdir()
    (elsewhere / "series" / "keep.txt").write_text("USERDATA")
    out = tmp_path / "out"
    out.mkdir()
    (out / "runs").symlink_to(elsewhere / "runs")
    (out / "timeseries").symlink_to(elsewhere / "series")
    result = nandlab_cli("sweep", _sweep_file(tmp_path), "--out", out, "--workers", "1", "--quiet")
    assert result.exit_code == 0, result.stderr
    assert not (out / "runs").is_symlink() and list((out / "runs").glob("*.parquet"))
    assert sorted(p.name for p in elsewhere.rglob("*")) == ["keep.txt", "runs", "series"]  # nothing written there
    assert (elsewhere / "series" / "keep.txt").read_text() == "USERDATA"


def test_results_too_large_for_their_report_are_one_line(nandlab_cli, tiny_path: Path, tmp_path: Path,
                                                          monkeypatch) -> None:
    """A valid run of 6 × 4,096 jobs with latency bins wrote a summary.json of more than 2 M values, and
    its own report ended in a traceback (the values are fewer here: the limit is lowered)."""
    from nandlab import plausible

    monkeypatch.setattr(plausible, "MAX_VALUES", 50)
    message = _one_error_line(nandlab_cli("run", tiny_path, "--out", tmp_path / "o", "--quiet"))
    assert message.startswith(f"the results are saved in {tmp_path / 'o'}, but its report failed")
    assert (tmp_path / "o" / "summary.json").exists()


def test_a_dask_scheduler_address_where_something_else_answers(nandlab_cli, tmp_path: Path) -> None:
    """An HTTP server at --scheduler: a traceback ending in numpy's "Unable to allocate 3.07 EiB"."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)

    def answer() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n" * 4)
            connection.close()

    threading.Thread(target=answer, daemon=True).start()
    try:
        began = time.monotonic()
        message = _one_error_line(nandlab_cli("sweep", _sweep_file(tmp_path), "--out", tmp_path / "o",
                                              "--scheduler", f"tcp://127.0.0.1:{server.getsockname()[1]}"))
        assert "no dask scheduler answered there" in message and time.monotonic() - began < 15
    finally:
        server.close()


@pytest.mark.parametrize("trace_format, line", [
    ("msr", "128166372000000000,host,4294967296,Write,8192,8192,100"),  # DiskNumber
    ("umass", "4294967296,0,8192,w,0.5"),  # ASU
    ("alibaba", "4294967296,W,0,4096,1"),  # device
])
def test_a_device_number_past_32_bits_is_a_bad_line(nandlab_cli, tmp_path: Path, trace_format: str,
                                                    line: str) -> None:
    """Disk 2^32 was cut to disk 0: `--devices 0` replayed it, silently."""
    trace = tmp_path / "t.csv"
    trace.write_text(line + "\n")
    message = _one_error_line(nandlab_cli("trace", "stats", trace, "--format", trace_format))
    assert message.endswith("expected `a device number below 2^32`")


def test_an_address_space_too_small_for_nandlab_is_one_line(tiny_path: Path, tmp_path: Path) -> None:
    """Under `prlimit --as=1.2GB` a tiny run aborted in a library's allocation (exit 134) or failed in
    matplotlib (MemoryError traceback)."""
    limit = 1_200_000_000

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run([sys.executable, "-m", "nandlab", "run", str(tiny_path), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=60, preexec_fn=limited)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr[-2000:]
    assert "nandlab needs at least 1.5 GiB" in done.stderr


@pytest.mark.parametrize("call, message", [
    (lambda: __import__("nandlab.qualify").qualify.device_config({"device": 5}), "qualify.device_config()"),
    (lambda: __import__("nandlab.matrix").matrix.theoretical({}), "matrix.theoretical()"),
    (lambda: __import__("nandlab.fio").fio.command_line(5), "fio.command_line()"),
    (lambda: __import__("nandlab.fio").fio.command_line([None]), "fio.command_line()"),
], ids=["device 5", "theoretical {}", "command_line 5", "command_line [None]"])
def test_module_functions_raise_nandlab_s_errors(call, message: str) -> None:
    with pytest.raises(nandlab.ConfigError, match=re.escape(message)):
        call()


def test_a_sweep_s_only_names_the_axis_it_lacks(tmp_path: Path) -> None:
    from nandlab import sweep

    study = sweep.load(_sweep_file(tmp_path))
    with pytest.raises(nandlab.ConfigError, match="no axis 'nope'"):
        study.only(nope=[1])
    with pytest.raises(nandlab.ConfigError, match="has no 99"):
        study.only(seed=[99])


@pytest.mark.parametrize("cuts, message", [
    ("", "expected times like 5s,12.5s, found nothing"),
    (",".join(["1s"] * 10_001), "expected at most 10,000 times, found 10,001"),
])
def test_serve_power_cuts_are_bounded(cuts: str, message: str) -> None:
    from nandlab.procedures import serve

    with pytest.raises(nandlab.ConfigError, match=message):
        serve.seconds_list(cuts)


@pytest.mark.parametrize("extra, message", [
    ("".join(f'[[axis]]\nkey = "phase.0.x{i}"\nvalues = [1]\n' for i in range(40)), "at most 32 [[axis]] tables"),
    ('[[axis]]\nkey = "device.reserve"\nvalues = [0.1, 0.2]\nlabels = ["' + "a" * 300 + '", "b"]\n',
     "labels of at most 256 characters"),
    ('[report]\nheatmaps = [{ x = "seed", y = "reserve", value = "../../x" }]\n'
     '[[axis]]\nkey = "device.reserve"\nvalues = [0.1]\n', "is no figure's name"),
], ids=["40 axes", "a 300-character label", "a heatmap value with a slash"])
def test_sweep_files_are_bounded_before_anything_runs(nandlab_cli, tmp_path: Path, extra: str, message: str) -> None:
    """100,000 axes ran for 13 minutes (quadratic), a 1 M-character label took 1.26 GB, a heatmap value
    of ../../x failed only after every run."""
    path = tmp_path / "s.toml"
    path.write_text(_sweep_file(tmp_path).read_text() + extra)
    began = time.monotonic()
    assert message in _one_error_line(nandlab_cli("sweep", path, "--out", tmp_path / "o"))
    assert time.monotonic() - began < 5 and not (tmp_path / "o" / "runs").exists()


@pytest.mark.parametrize("alter, message", [
    (lambda s: s["phases"][0].update(name="n" * 100_000), "text of 100,000 characters"),
    (lambda s: s["phases"][0].update(waf=True), "waf = True"),
    (lambda s: s["phases"][1]["write_latency_us"].update(p50=1e9, max=0.5), "above"),  # (a fill has none)
], ids=["a 100,000-character name", "waf true", "p50 above max"])
def test_a_report_refuses_figures_that_contradict_each_other(nandlab_cli, tiny_path: Path, tmp_path: Path,
                                                             alter, message: str) -> None:
    out = _run_dir(nandlab_cli, tiny_path, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    alter(summary)
    (out / "summary.json").write_text(json.dumps(summary))
    began = time.monotonic()
    assert message in _one_error_line(nandlab_cli("report", out))
    assert time.monotonic() - began < 5


def test_a_report_refuses_a_drive_whose_shape_is_not_its_capacity(nandlab_cli, tiny_path: Path,
                                                                  tmp_path: Path) -> None:
    out = _run_dir(nandlab_cli, tiny_path, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    summary["device"]["page_size"] = 0
    (out / "summary.json").write_text(json.dumps(summary))
    assert "which is not its raw_capacity_bytes" in _one_error_line(nandlab_cli("report", out))


def test_a_config_description_is_bounded() -> None:
    with pytest.raises(nandlab.ConfigError, match="description: expected at most 65536 characters"):
        nandlab.check_config({"description": "d" * 70_000, "device": {"preset": "snia-slc"}, "phase": [{"requests": 1}]})


def test_a_snapshot_s_notes_are_bounded(tiny_path: Path) -> None:
    """An altered snapshot's 50 M-item notes took 12 s and 1 GB to take back (a MemoryError traceback
    under a memory limit): notes are at most 1 MiB of JSON, written or read."""
    with pytest.raises(nandlab.ConfigError, match="more than the 1,048,576 a snapshot keeps"):
        nandlab.run(tiny_path, notes={"x": [0] * 600_000}, progress=False)


def test_a_sweep_s_manifest_is_never_written_through_a_link(nandlab_cli, tmp_path: Path) -> None:
    """A second look at the sixth check: manifest.json linked to a user's file was written through."""
    precious = tmp_path / "precious.txt"
    precious.write_text("precious user data")
    out = tmp_path / "out"
    out.mkdir()
    (out / "manifest.json").symlink_to(precious)
    result = nandlab_cli("sweep", _sweep_file(tmp_path), "--out", out, "--workers", "1", "--quiet")
    assert result.exit_code == 0, result.stderr
    assert precious.read_text() == "precious user data" and not (out / "manifest.json").is_symlink()


@pytest.mark.parametrize("key, value, message", [
    ("iops", 1e12, "iops = 1000000000000.0 over sim_seconds"),
    ("write_mbps", 1e9, "over sim_seconds"),
    ("average_power_w", 1e15, "is more than energy_joules = "),
    ("host_read_requests", 10**9, "more than host_requests"),
    ("flash_programs_gc", 10**9, "more than flash_programs"),
], ids=["iops", "write MB/s", "power", "reads", "gc programs"])
def test_a_report_refuses_rates_that_are_not_their_amounts(nandlab_cli, tiny_path: Path, tmp_path: Path,
                                                           key: str, value: float, message: str) -> None:
    out = _run_dir(nandlab_cli, tiny_path, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    summary["summary"][key] = value
    (out / "summary.json").write_text(json.dumps(summary))
    assert message in _one_error_line(nandlab_cli("report", out))


def test_a_report_counts_free_and_bad_blocks_together(nandlab_cli, tiny_path: Path, tmp_path: Path) -> None:
    out = _run_dir(nandlab_cli, tiny_path, tmp_path)
    summary = json.loads((out / "summary.json").read_text())
    blocks = summary["device"]["blocks"]
    summary["phases"][0].update(free_blocks=blocks - 10, bad_blocks=blocks - 10)
    (out / "summary.json").write_text(json.dumps(summary))
    assert f"on a drive of {blocks:,} blocks" in _one_error_line(nandlab_cli("report", out))


def test_a_run_with_an_untimed_phase_is_reported(nandlab_cli, tmp_path: Path) -> None:
    """The rate checks above first asked a rate to be its amount over the time exactly: an untimed
    ageing's requests count in host_requests and not in the run's IOPS (examples/suspend.toml's report
    was refused). A rate is at most its amount over the time."""
    config = tmp_path / "aged.toml"
    config.write_text('[device]\npreset = "snia-slc"\ncapacity = "1GiB"\n'
                      '[[phase]]\nname = "age"\nrequests = 20000\ntimed = false\n'
                      '[[phase]]\nname = "measure"\nrequests = 2000\n')
    result = nandlab_cli("run", config, "--out", tmp_path / "o", "--quiet")
    assert result.exit_code == 0, result.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())["summary"]
    assert summary["iops"] * summary["sim_seconds"] < summary["host_requests"]  # the case this is about
