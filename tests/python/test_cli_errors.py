"""Every usage error of every command (issue 17): one ``nandlab: error: ...`` line on stderr that
names the flag or file at fault, exit code 2, nothing on stdout, no traceback and no click usage
block; and such a line never carries a file's raw bytes to the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_snapshots import PHASES

from nandlab import Interrupted, SimulationError, api, make_simulator, terminal
from nandlab.cli import console

HUGE = "99999999999999999999999"  # beyond 64 bits
MSR_TRACE = "".join(f"{128166372000000000 + i * 1000},host,0,Write,{i * 4096},4096,100\n" for i in range(10))
JOB_FILE = "[job]\nrw=randwrite\nbs=4k\nsize=1m\n"
SWEEP_FILE = """
[sweep]
name = "bad-cli"
[base]
[base.device]
preset = "snia-slc"
capacity = "1GiB"
[[base.phase]]
kind = "fill"
[[axis]]
key = "seed"
values = [1, 2]
"""
TRACE_DEVICE = ("--device", "snia-slc", "--capacity", "1GiB")

# (arguments, a text the line must contain); {dir}, {missing}, {config}, {trace}, {jobs}, {sweep} are
# an empty directory, a path to nothing, and valid files of each kind (see `paths`).
BAD_INVOCATIONS = [
    ((), "missing command"),
    (("--bogus",), "--bogus"),
    (("bogus",), "bogus"),
    (("run", "--seed", HUGE), "--seed"),
    (("run", "--seed", "-1"), "--seed"),
    (("run", "--seed", "abc"), "--seed"),
    (("run", "{dir}"), "dir"),
    (("run", "{missing}"), "missing"),
    (("run", "{config}", "--bogus"), "--bogus"),
    (("run", "{config}", "extra"), "extra"),
    (("run", "{config}", "--snapshot-every", "10s"), "--snapshot"),
    (("run", "{config}", "--snapshot", "{dir}"), "--snapshot"),
    (("run", "{config}", "--out", "{config}"), "--out"),
    (("run", "{config}", "--out", "/dev/null"), "--out"),
    (("resume",), "SNAPSHOT"),
    (("resume", "{dir}"), "dir"),
    (("resume", "{missing}"), "missing"),
    (("resume", "{config}"), "config.toml"),  # not a snapshot: SnapshotError
    (("presets", "nonesuch"), "nonesuch"),
    (("presets", "a", "b"), "b"),
    (("default-config", "extra"), "extra"),
    (("lifetime",), "CONFIG"),
    (("lifetime", "{dir}"), "dir"),
    (("lifetime", "{missing}.toml"), "missing"),
    (("lifetime", "nonesuch"), "nonesuch"),
    (("lifetime", "zombienand-synthetic-tlc", "--seed", HUGE), "--seed"),
    (("lifetime", "zombienand-synthetic-tlc", "--reserve", "nan"), "--reserve"),
    (("lifetime", "zombienand-synthetic-tlc", "--reserve", "2"), "--reserve"),
    (("lifetime", "zombienand-synthetic-tlc", "--reserve", "30"), '"30 %" or 0.3'),
    (("lifetime", "zombienand-synthetic-tlc", "--reserve", "99%"), "--reserve"),
    (("lifetime-grid", "--reserves", "10,20"), '"10 %" or 0.1'),
    (("lifetime", "zombienand-synthetic-tlc", "--working-set", "inf"), "--working-set"),
    (("lifetime", "zombienand-synthetic-tlc", "--read-fraction", "-nan"), "--read-fraction"),
    (("lifetime", "zombienand-synthetic-tlc", "--snapshot", "{missing}", "--compare-baseline"), "--compare-baseline"),
    (("lifetime-grid", "--reserves", "abc"), "--reserves"),
    (("lifetime-grid", "--working-sets", "nan"), "--working-sets"),
    (("lifetime-grid", "--reserves", "1e999"), "--reserves"),
    (("lifetime-grid", "--read-levels", "oops"), "--read-levels"),
    (("lifetime-grid", "--read-levels", "low=inf"), "--read-levels"),
    (("lifetime-grid", "--cells", "qlc"), "--cells"),
    (("lifetime-grid", "--workers", "0"), "--workers"),
    (("lifetime-grid", "--workers", HUGE), "--workers"),
    (("lifetime-grid", "--seed", HUGE), "--seed"),
    (("lifetime-grid", "--out", "/dev/null"), "--out"),
    (("chip",), "missing command"),
    (("chip", "bogus"), "bogus"),
    (("chip", "endurance"), "--chip"),
    (("chip", "endurance", "--chip", "nonesuch"), "--chip"),
    (("chip", "endurance", "--chip", "snia-slc", "--seed", HUGE), "--seed"),
    (("chip", "endurance", "--chip", "snia-slc", "--blocks", "0"), "--blocks"),
    (("chip", "endurance", "--chip", "snia-slc", "--pattern", "zigzag"), "--pattern"),
    (("chip", "endurance", "--chip", "snia-slc", "--temperature", "nan"), "--temperature"),
    (("chip", "endurance", "--chip", "snia-slc", "--temperature", "inf"), "--temperature"),
    (("chip", "latency"), "--chip"),
    (("chip", "latency", "--chip", "nonesuch"), "--chip"),
    (("fio", "{dir}", "--device", "snia-slc"), "dir"),
    (("fio", "{missing}", "--device", "snia-slc"), "missing"),
    (("fio", "{jobs}"), "--device"),
    (("fio", "{jobs}", "--device", "nonesuch"), "nonesuch"),
    (("fio", "{jobs}", "--device", "{dir}"), "dir"),
    (("fio", "{jobs}", "--device", "snia-slc", "--seed", HUGE), "--seed"),
    (("trace",), "missing command"),
    (("trace", "stats"), "FILE"),
    (("trace", "stats", "{dir}"), "dir"),
    (("trace", "stats", "{missing}"), "missing"),
    (("trace", "stats", "{trace}", "--format", "nonsense"), "--format"),
    (("trace", "replay", "{trace}", *TRACE_DEVICE, "--seed", HUGE), "--seed"),
    (("trace", "replay", "{trace}", *TRACE_DEVICE, "--queue-depth", "-1"), "--queue-depth"),
    (("trace", "replay", "{trace}", *TRACE_DEVICE, "--queue-depth", HUGE), "--queue-depth"),
    (("trace", "replay", "{trace}", *TRACE_DEVICE, "--timed", "--time-scale", "nan"), "--time-scale"),
    (("trace", "replay", "{trace}", *TRACE_DEVICE, "--timed", "--time-scale", "inf"), "--time-scale"),
    (("trace", "replay", "{trace}", *TRACE_DEVICE, "--devices", "abc"), "--devices"),
    (("trace", "replay", "{trace}", *TRACE_DEVICE, "--devices", HUGE), "--devices"),
    (("trace", "replay", "{trace}", *TRACE_DEVICE, "--format", "nonsense"), "--format"),
    (("trace", "replay", "{dir}", *TRACE_DEVICE), "dir"),
    (("trace", "replay", "{missing}", *TRACE_DEVICE), "missing"),
    (("trace", "replay", "{trace}"), "--device"),
    (("test",), "missing command"),
    (("test", "write-sections"), "--device"),
    (("test", "write-sections", "--device", "snia-slc", "--queue-depth", "-1"), "--queue-depth"),
    (("test", "write-sections", "--device", "nonesuch"), "nonesuch"),
    (("test", "write-sections", "--device", "{dir}"), "dir"),
    (("test", "read-sections", "--device", "snia-slc", "--seed", HUGE), "--seed"),
    (("test", "pslc-fill", "--device", "snia-slc", "--compare", "nonsense"), "--compare"),
    # click's FloatRange lets nan through (it compares false with both ends): a nan bake must not PASS.
    (("test", "retention", "--device", "snia-mlc", "--cycles", "nan", "--hours", "1"), "--cycles"),
    (("test", "retention", "--device", "snia-mlc", "--cycles", "1", "--hours", "nan"), "--hours"),
    (("test", "retention", "--device", "snia-mlc", "--cycles", "1", "--hours", "2e6"), "--hours"),
    (("test", "read-disturb", "--device", "snia-mlc", "--reads", "10", "--cycles", "nan"), "--cycles"),
    (("test", "pslc-fill", "--device", "snia-slc", "--out", "/dev/null"), "--out"),
    (("report",), "DIR"),
    (("report", "{missing}"), "missing"),
    (("report", "{config}"), "config.toml"),
    (("report", "{dir}"), "dir"),
    (("sweep",), "SWEEP"),
    (("sweep", "{dir}"), "dir"),
    (("sweep", "{missing}"), "missing"),
    (("sweep", "{config}"), "config.toml"),
    (("sweep", "{sweep}", "--workers", "0"), "--workers"),
    (("sweep", "{sweep}", "--workers", HUGE), "--workers"),
    (("sweep", "{sweep}", "--local-cluster", HUGE), "--local-cluster"),
    (("sweep", "{sweep}", "--scheduler", "tcp://localhost:1", "--local-cluster", "2"), "--local-cluster"),
    (("sweep", "{sweep}", "--scheduler", "garbage"), "scheduler 'garbage'"),
    (("sweep", "{sweep}", "--only", "nonsense"), "--only"),
    (("sweep", "{sweep}", "--only", "seed=7"), "--only"),
    (("matrix",), "--device"),
    (("matrix", "--device", "snia-slc", "--mixes", "50/60"), "--mixes"),
    (("matrix", "--device", "snia-slc", "--queue-depth", "0"), "--queue-depth"),
    (("matrix", "--device", "snia-slc", "--burst-volume", "nan"), "--burst-volume"),
    (("matrix", "--device", "snia-slc", "--round-volume", "inf"), "--round-volume"),
    (("matrix", "--device", "snia-slc", "--seed", HUGE), "--seed"),
    (("matrix", "--device", "snia-slc", "--workers", HUGE), "--workers"),
    (("matrix", "--device", "snia-slc", "--states", "nonsense"), "--states"),
]


@pytest.fixture
def paths(tmp_path: Path, tiny_toml: str) -> dict[str, Path]:
    """The files and directories the bad invocations name."""
    files = {"config": ("config.toml", tiny_toml), "trace": ("trace.csv", MSR_TRACE),
             "jobs": ("jobs.fio", JOB_FILE), "sweep": ("sweep.toml", SWEEP_FILE)}
    found = {"dir": tmp_path / "dir", "missing": tmp_path / "missing"}
    found["dir"].mkdir()
    for key, (name, text) in files.items():
        found[key] = tmp_path / name
        found[key].write_text(text)
    return found


def assert_one_line_exit_2(result, named: str) -> None:
    """A usage error as the house rules want it."""
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    assert result.stdout == ""
    assert result.stderr.startswith("nandlab: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert named in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "Usage:" not in result.stderr


@pytest.mark.parametrize(("args", "named"), BAD_INVOCATIONS, ids=[" ".join(a) or "(none)" for a, _ in BAD_INVOCATIONS])
def test_a_bad_invocation_is_one_line_and_exit_code_2(nandlab_cli, paths, args, named, monkeypatch) -> None:
    monkeypatch.chdir(paths["dir"].parent)  # a sweep that ran by mistake writes here, not in the checkout
    result = nandlab_cli(*(arg.format(**{k: str(v) for k, v in paths.items()}) for arg in args))
    assert_one_line_exit_2(result, named)


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u202e"  # sets the terminal's title, clears the screen; a bidi override
HOSTILE_FILES = {  # name, content, arguments, what the line names
    "trace line": ("trace.csv", MSR_TRACE + HOSTILE + ",evil\n", ("trace", "stats", "{file}", "--format", "msr"),
                   "trace.csv:11"),
    "config value": ("config.toml", f'[device]\npreset = "snia-slc"\n[[phase]]\nuntil = {json.dumps(HOSTILE)}\n',
                     ("run", "{file}"), "until"),
    "job file line": ("jobs.fio", HOSTILE + "bs=4k\n" + JOB_FILE, ("fio", "{file}", "--device", "snia-slc"),
                      "jobs.fio:1"),
}


@pytest.mark.parametrize(("name", "content", "args", "named"), HOSTILE_FILES.values(), ids=HOSTILE_FILES.keys())
def test_a_message_quoting_a_file_shows_its_control_characters_escaped(
    nandlab_cli, tmp_path: Path, name: str, content: str, args: tuple[str, ...], named: str
) -> None:
    file = tmp_path / name
    file.write_text(content)
    result = nandlab_cli(*(arg.format(file=file) for arg in args))
    assert_one_line_exit_2(result, named)
    assert result.stderr[:-1].isprintable(), repr(result.stderr)
    assert "\\x1b]0;pwned\\x07\\x1b[2J\\u202e" in result.stderr


NAMED_IN_FILES = {  # a file naming something with HOSTILE in its name, and the command printing it
    "phase name": ("config.toml", lambda toml: toml.replace('name = "fill"', f"name = {json.dumps('fill' + HOSTILE)}"),
                   ("run", "{file}")),
    "fio job name": ("jobs.fio", lambda toml: JOB_FILE.replace("[job]", f"[job{HOSTILE}]"),
                     ("fio", "{file}", "--device", "snia-slc", "--capacity", "1GiB", "-q")),
    # (A sweep's name names a folder: one with control characters is refused, the name escaped.)
    "axis names": ("sweep.toml", lambda toml: SWEEP_FILE + f"name = {json.dumps('a' + HOSTILE)}\n",
                   ("sweep", "{file}", "--list")),
}


@pytest.mark.parametrize(("name", "content", "args"), NAMED_IN_FILES.values(), ids=NAMED_IN_FILES.keys())
def test_names_from_a_file_are_printed_with_their_control_characters_escaped(
    nandlab_cli, tmp_path: Path, tiny_toml: str, name: str, content, args: tuple[str, ...]
) -> None:
    file = tmp_path / name
    file.write_text(content(tiny_toml))
    result = nandlab_cli(*(arg.format(file=file) for arg in args))
    assert result.exit_code == 0, result.output
    assert "\\x1b]0;pwne" in result.stdout  # (a table may cut the rest)
    assert all(c.isprintable() or c == "\n" for c in result.stdout + result.stderr), repr(result.output)


def test_a_message_quoting_a_long_value_is_cut_in_the_middle(nandlab_cli, tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text(f'[device]\npreset = "snia-slc"\n[[phase]]\nuntil = "{"A" * 100_000}"\n')
    result = nandlab_cli("run", file)
    assert_one_line_exit_2(result, "until")
    assert len(result.stderr) < terminal.MAX_MESSAGE_CHARS + 100
    assert "characters left out" in result.stderr and result.stderr.endswith("A`\n")


def test_an_error_after_the_progress_bar_began_is_still_one_line(nandlab_cli, monkeypatch, tiny_path: Path) -> None:
    clock = [100.0]
    monkeypatch.setattr(console.time, "monotonic", lambda: clock[0])

    def fail_after_a_while(*args, progress, **kwargs):
        clock[0] += 5.0  # the bar is due
        progress(0.5, {"phase": 0, "phase_name": "fill", "phases": 1, "sim_seconds": 1.0, "host_write_bytes": 0})
        raise SimulationError("die 3 melted")

    monkeypatch.setattr(api, "run", fail_after_a_while)
    result = nandlab_cli("run", tiny_path)  # stderr is not a terminal: no bar, and no line it leaves
    assert (result.exit_code, result.stderr) == (1, "nandlab: error: die 3 melted\n")


def paused_snapshot(path: Path, extra: str) -> Path:
    """A snapshot of test_snapshots' PHASES stopped in its last phase, keeping ``extra`` as a Python
    caller may (``Simulator.snapshot_extra``; ``nandlab.run`` keeps the finished phases there)."""
    sim = make_simulator(PHASES)
    sim.snapshot_to(str(path))
    sim.run_phase(0)
    sim.run_phase(1)
    sim.snapshot_extra = extra

    def stop(fraction: float, info: dict) -> None:
        raise KeyboardInterrupt

    with pytest.raises(Interrupted):
        sim.run_phase(2, progress=stop)
    return path


def test_resume_goes_on_whatever_notes_a_python_caller_kept(nandlab_cli, tmp_path: Path) -> None:
    snapshot = tmp_path / "mine.snap"

    def stop_in_the_last_phase(fraction: float, info: dict) -> None:
        if info["phase"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted):
        api.run(PHASES, snapshot=snapshot, notes={"out": 5, "json": "no", "command": ["x"]},
                progress=stop_in_the_last_phase)
    result = nandlab_cli("resume", snapshot, "--json", "--quiet")
    assert result.exit_code == 0, result.output
    assert [phase["name"] for phase in json.loads(result.stdout)["phases"]] == ["phase-1", "warm", "long"]


@pytest.mark.parametrize("extra", [
    '{"notes": [1]}', '{"phases": {"a": 1}}', '{"phases": [1, 2]}', '{"phases": [{}, {}], "timeseries": "ab"}',
    '{"phases": [{}, {}], "timeseries": [{"a": [1, 2], "b": [1]}, {}]}', '{"phases": [{}]}',
    # Phases without a phase's figures ran the whole rest of the run, then failed (KeyError).
    '{"phases": [{"name": "a"}, {"name": "b"}], "timeseries": [{}, {}]}',
    '{"notes": ' + "[" * 100_000 + "]" * 100_000 + "}",
], ids=lambda extra: extra[:40])
def test_resume_refuses_what_a_run_did_not_keep_in_one_line(nandlab_cli, tmp_path: Path, extra: str) -> None:
    result = nandlab_cli("resume", paused_snapshot(tmp_path / "odd.snap", extra))
    assert_one_line_exit_2(result, "odd.snap: not a snapshot of `nandlab run`")


@pytest.mark.parametrize("args, message", [
    (("run", "examples/retention-relaxation.toml"), "this is a sweep file ([sweep], [[axis]]), not an experiment: "
                                                    "run it with `nandlab sweep FILE`"),
    (("sweep", "examples/steady-state.toml"), "this is an experiment ([device], [[phase]]), not a sweep: run it "
                                              "with `nandlab run FILE`"),
    (("fio", "examples/randwrite.fio", "--device", "snia-mlc", "--capacity", "4GB"),
     "--capacity ([device] capacity): expected a whole number of mapping units (4096 bytes), found 4000000000 "
     "(4 GB is decimal: did you mean \"4GiB\"?)"),
])
def test_a_file_or_flag_in_the_wrong_place_is_named(nandlab_cli, monkeypatch, args, message) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    result = nandlab_cli(*args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
