"""Sweeps (`nandlab sweep`, issue 7): the sweep file and its errors; the ZombieNAND grid shipped in
examples/ on a process pool and on a dask LocalCluster with the same results (and the same as
`lifetime.grid`); a sweep killed with SIGKILL and started again runs only what it had not finished
and ends with the dataset of an uninterrupted sweep; a failing run is recorded and counted."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from nandlab import lifetime, pool, sweep
from nandlab._core import ConfigError

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "examples" / "zombienand-grid.toml"
SMALL = {"cell": ["tlc"], "reserve": [0.3], "working_set": [1.0], "read_level": ["low", "high"]}

QUICK = """
[sweep]
name = "quick"
[base]
[base.device]
preset = "snia-slc"
capacity = "1GiB"
[[base.phase]]
kind = "fill"
[[base.phase]]
name = "writes"
pattern = "random"
block_size = "4KiB"
queue_depth = 32
volume = {volume}
[[axis]]
key = "seed"
range = {{ start = 1, stop = {runs}, step = 1 }}
"""


def quick(tmp_path: Path, runs: int, volume: float = 0.25) -> Path:
    path = tmp_path / "quick.toml"
    path.write_text(QUICK.format(runs=runs, volume=volume))
    return path


# --- the sweep file ----------------------------------------------------------------------------


def test_the_grid_file_has_the_papers_axes() -> None:
    s = sweep.load(GRID)
    assert [(a.name, len(a)) for a in s.axes] == [("cell", 2), ("reserve", 6), ("working_set", 4), ("read_level", 3)]
    assert len(s) == 144 and s.procedure == "lifetime-compare"
    assert [v for (v,) in s.axes[1].values] == [0.05, 0.1, 0.15, 0.2, 0.25, 0.3]  # range, stop included
    cell = s.axes[0]
    assert cell.keys == ("device.preset", "phase.0.block_size") and cell.values[1] == ("zombienand-synthetic-mlc", "4KiB")
    first = sweep.points(s.only(**SMALL))[1]
    assert first.coordinates == {"cell": "tlc", "reserve": 0.3, "working_set": 1.0, "read_level": "high"}
    assert first.config["phase"][0]["read_fraction"] == 0.75 and first.config["device"]["reserve"] == 0.3


def test_linspace_zip_and_star_keys(tmp_path: Path) -> None:
    s = sweep.parse("""
[base]
[base.device]
preset = "snia-slc"
capacity = "1GiB"
[[base.phase]]
kind = "fill"
[[base.phase]]
volume = 0.1
[[axis]]
name = "mix"
key = "phase.*.read_fraction"
linspace = { start = 0.0, stop = 1.0, num = 5 }
""")
    assert [v for (v,) in s.axes[0].values] == [0.0, 0.25, 0.5, 0.75, 1.0]
    p = sweep.points(s)[2]
    assert [phase["read_fraction"] for phase in p.config["phase"]] == [0.5, 0.5]


@pytest.mark.parametrize(("text", "message"), [
    ("[[axis]]\nkey = 'device.reserve'\nvalues = [0.1, 0.2]\nlabels = ['a']", r"\[\[axis\]\] #1 labels: expected 2 distinct labels"),
    ("[[axis]]\nzip = [{ key = 'a.b', values = [1, 2] }, { key = 'c.d', values = [1] }]", r"zipped keys need as many values each"),
    ("[[axis]]\nkey = 'device.reserve'\nvalues = [0.1]\nrange = { start = 0, stop = 1, step = 1 }", r"exactly one of values, range, linspace"),
    ("[[axis]]\nkey = 'device.reserve'\nrange = { start = 0, stop = 1, step = -1 }", r"range: step -1 does not lead from 0 to 1"),
    ("[[axis]]\nkey = 'phase.3.volume'\nvalues = [1]", r"phase.3 is not an item of the base config's list of 1"),
    ("[[axis]]\nkey = 'device.reserve'\nvalues = [0.1]\nvalue = 2", r"unknown key 'value'"),
    ("[[axis]]\nkey = 'device.reserve'\nvalues = [7]", r"the run at reserve = 7: \[device\] reserve"),
    ("[[axis]]\nkey = 'seed'\nrange = { start = 1, stop = 100000, step = 1 }\n"
     "[[axis]]\nkey = 'phase.0.volume'\nlinspace = { start = 0.1, stop = 1, num = 100000 }",
     r"bad.toml: 10,000,000,000 runs \(100,000 seed × 100,000 volume\); expected at most 100,000"),
])
def test_bad_sweep_files_name_the_axis_and_key(text: str, message: str) -> None:
    base = "[base]\n[base.device]\npreset = 'snia-slc'\ncapacity = '1GiB'\n[[base.phase]]\nvolume = 0.1\n"
    with pytest.raises(ConfigError, match=message):
        sweep.points(sweep.parse(base + text, "bad.toml"))


def test_only_names_what_is_missing() -> None:
    with pytest.raises(ValueError, match="axis 'reserve' has no '0.9'"):
        sweep.load(GRID).only(reserve=["0.9"])
    with pytest.raises(ValueError, match="no axis 'size'"):
        sweep.load(GRID).only(size=[1])


# --- running -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_grid(tmp_path_factory: pytest.TempPathFactory) -> sweep.Outcome:
    return sweep.run(sweep.load(GRID).only(**SMALL), tmp_path_factory.mktemp("local"), workers=2)


def test_the_grid_matches_lifetime_grid(local_grid: sweep.Outcome) -> None:
    table = local_grid.results
    assert table["status"].to_list() == ["ok", "ok"] and table["read_level"].to_list() == ["low", "high"]
    direct = lifetime.grid(["tlc"], [0.3], [1.0], {"low": 0.25, "high": 0.75}, workers=2)
    for key in ("lifetime_ratio", "latency_ratio", "latency_ratio_after"):
        assert table[key].to_list() == direct[key].to_list()
    assert table["zombie_host_write_bytes"].to_list() == direct["zombie_host_write_bytes"].to_list()
    assert set(table["zombie_death_cause"]) <= {"too-little-flash", "no-erased-block", "nothing-to-reclaim"}
    series = pl.read_parquet(local_grid.directory / "timeseries", hive_partitioning=True)
    assert set(series["run_id"].unique()) == set(table["run_id"]) and set(series["side"]) == {"zombie", "baseline"}


def test_a_dask_local_cluster_gives_the_same_dataset(local_grid: sweep.Outcome, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    on_dask = sweep.run(sweep.load(GRID).only(**SMALL), tmp_path / "dask", local_cluster=2)
    assert on_dask.ran == 2 and on_dask.results.equals(local_grid.results)


def test_a_killed_sweep_resumes_with_only_the_unfinished_runs(tmp_path: Path) -> None:
    file = quick(tmp_path, runs=8, volume=2.0)
    command = [str(Path(sys.executable).parent / "nandlab"), "sweep", str(file), "--workers", "1", "--quiet"]
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    process = subprocess.Popen([*command, "--out", str(killed)], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finished = lambda: len(list((killed / "runs").glob("*[0-9a-f].parquet")))  # noqa: E731
    deadline = time.monotonic() + 120
    while finished() < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)  # the sweep and its worker processes, mid-run
    process.wait()
    done = finished()
    assert 3 <= done < 8, f"{done} runs finished before the kill"
    assert not (killed / "results.parquet").exists()
    again = subprocess.run([*command, "--out", str(killed)], capture_output=True, text=True, check=True)
    assert f"{8 - done} ran now" in again.stdout and f"{done} finished earlier" in again.stdout, again.stdout
    subprocess.run([*command, "--out", str(whole)], capture_output=True, check=True)
    resumed, uninterrupted = pl.read_parquet(killed / "results.parquet"), pl.read_parquet(whole / "results.parquet")
    assert resumed.height == 8 and resumed.equals(uninterrupted)
    # Runs without a read have no read latency (null, not 0); their writes have theirs.
    assert uninterrupted["read_latency_us_p99"].null_count() == 8
    assert (uninterrupted["write_latency_us_p99"] > 0).all()
    assert len(list((killed / "timeseries").iterdir())) == 8


def test_a_failing_run_is_recorded_and_counted(nandlab_cli, tmp_path: Path) -> None:
    # An MSR trace with a malformed line 80: replayed with skip_bad it runs, without it the run
    # fails when it reaches that line (the config itself is valid).
    lines = [f"{128166372000000000 + i * 1000},host,0,Write,{i * 4096},4096,100" for i in range(100)]
    lines[79] = "not,a,record"
    trace = tmp_path / "t.csv"
    trace.write_text("\n".join(lines) + "\n")
    file = tmp_path / "s.toml"
    file.write_text(f"""
[sweep]
procedure = "run"
[base]
[base.device]
preset = "snia-slc"
capacity = "1GiB"
[[base.phase]]
kind = "trace"
trace = "{trace}"
format = "msr"
[[axis]]
name = "bad_lines"
key = "phase.0.skip_bad"
values = [true, false]
labels = ["skip", "stop"]
""")
    result = nandlab_cli("sweep", file, "--out", tmp_path / "out", "--workers", "2")
    assert result.exit_code == 1, result.output  # one run failed
    assert "1 failed" in result.stdout and "t.csv:80:" in result.stdout
    # The results table: a row per run with its axis label, status and headline figures.
    assert "results" in result.stdout and "bad lines" in result.stdout and "waf" in result.stdout
    assert re.search(r"\b0\s+skip\s+ok\b", result.stdout) and re.search(r"\b1\s+stop\s+failed\b", result.stdout)
    table = pl.read_parquet(tmp_path / "out" / "results.parquet")
    assert table["status"].to_list() == ["ok", "failed"]
    assert table["host_write_bytes"].to_list() == [99 * 4096, None]
    assert "TraceError" in table["error"][1] and "t.csv:80:" in table["error"][1]
    assert (tmp_path / "out" / "failures" / f"{table['run_id'][1]}.json").exists()


def _maybe_die(name: str) -> dict:
    """A task for the pool test: the one named "die" kills its own worker process."""
    if name == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    return {"figures": {"name": name}, "timeseries": None, "wall_seconds": 0.0}


def test_a_worker_that_dies_fails_only_its_own_run() -> None:
    tasks = iter([(name, (name,)) for name in ("a", "b", "die", "c", "d", "e")])
    outcomes = dict(pool.on_processes(_maybe_die, tasks, workers=2))
    assert sorted(outcomes) == ["a", "b", "c", "d", "die", "e"]
    assert "worker process died" in outcomes["die"]["error"]
    assert all(outcomes[n]["figures"] == {"name": n} for n in "abcde")


def test_record_selects_figures_without_running_again(tmp_path: Path) -> None:
    file = quick(tmp_path, runs=2, volume=0.05)
    first = sweep.run(sweep.load(file), tmp_path / "out", workers=1)
    assert {"waf", "iops", "writes.waf"} <= set(first.results.columns)
    file.write_text(file.read_text().replace('name = "quick"', 'name = "quick"\nrecord = ["waf"]'))
    again = sweep.run(sweep.load(file), tmp_path / "out", workers=1)
    assert (again.ran, again.reused) == (0, 2)
    assert [c for c in again.results.columns if "waf" in c] == ["waf", "phase-1.waf", "writes.waf"]
    assert "iops" not in again.results.columns and "data_waf" not in again.results.columns
    assert again.results["waf"].to_list() == first.results["waf"].to_list()
    # A name no run has is a mistake (said after the runs, which a corrected sweep then reuses).
    file.write_text(file.read_text().replace('record = ["waf"]', 'record = ["waf", "iopz"]'))
    with pytest.raises(ConfigError, match='no finished run has a figure named "iopz" \\(did you mean "iops"\\?\\)'):
        sweep.run(sweep.load(file), tmp_path / "out", workers=1)


def test_list_checks_and_shows_the_points_without_running(nandlab_cli, tmp_path: Path) -> None:
    file = quick(tmp_path, runs=3, volume=0.05)
    sweep.run(sweep.load(file).only(seed=[2]), tmp_path / "out", workers=1)
    result = nandlab_cli("sweep", file, "--out", tmp_path / "out", "--list")
    assert result.exit_code == 0, result.output
    assert "quick: 3 runs (run)" in result.stdout and "1 of 3 finished" in result.stdout
    assert len(list((tmp_path / "out" / "runs").glob("*[0-9a-f].parquet"))) == 1  # nothing ran


# --- workers die with their parent ---------------------------------------------------------------

LONG = QUICK.format(runs=4, volume=100.0)  # runs of minutes: the workers are busy when the parent dies
KILLED_PARENTS = {
    "sweep on processes": ("sweep", "{file}", "--workers", "2"),
    "sweep on a dask LocalCluster": ("sweep", "{file}", "--local-cluster", "2"),
    "lifetime-grid": ("lifetime-grid", "--workers", "2", "--cells", "tlc", "--reserves", "30%", "--working-sets",
                      "100%", "--read-levels", "low=0.25,high=0.75"),
}


def children(pid: int) -> dict[int, str]:
    """The processes whose parent is ``pid``: their command lines by pid (from /proc)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            if int(text[text.rindex(")") + 2:].split()[1]) == pid:
                found[int(stat.parent.name)] = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):  # gone meanwhile
            continue
    return found


def alive(pid: int) -> bool:
    """The process runs (it is neither gone nor a zombie its adoptive parent has yet to reap)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="lists processes with /proc")
@pytest.mark.parametrize("args", KILLED_PARENTS.values(), ids=KILLED_PARENTS.keys())
def test_worker_processes_die_with_a_parent_killed_outright(tmp_path: Path, args: tuple[str, ...]) -> None:
    file = tmp_path / "long.toml"
    file.write_text(LONG)
    command = [sys.executable, "-m", "nandlab", *(arg.format(file=file) for arg in args), "--out", tmp_path / "out"]
    parent = subprocess.Popen([*map(str, command), "--quiet"], start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        processes: dict[int, str] = {}
        while sum("spawn_main" in line for line in processes.values()) < 2:
            assert parent.poll() is None and time.monotonic() < deadline, "no two worker processes started"
            time.sleep(0.2)
            processes = children(parent.pid)  # the workers, and multiprocessing's resource tracker
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while any(map(alive, processes)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [line for pid, line in processes.items() if alive(pid)]
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)  # whatever the test started and is left
        except ProcessLookupError:
            pass
        parent.wait()


def test_the_watchdog_ends_a_worker_whose_parent_dies_where_prctl_is_missing(tmp_path: Path) -> None:
    # The parent starts a worker that sets itself up as a pool's worker does, but without Linux's
    # parent-death signal, and says its pid; then the parent is killed outright.
    worker = ("import os, time; from nandlab import pool; pool._kill_me_with_my_parent = lambda: False; "
              "pool._die_with_parent(os.getppid()); print(os.getpid(), flush=True); time.sleep(600)")
    starter = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {worker!r}]).wait()"
    parent = subprocess.Popen([sys.executable, "-c", starter], start_new_session=True, stdout=subprocess.PIPE,
                              text=True)
    try:
        pid = int(parent.stdout.readline())
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 5
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(pid)
    finally:
        try:
            os.killpg(parent.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        parent.wait()


def test_without_a_terminal_each_finished_run_is_a_line(nandlab_cli, tmp_path: Path) -> None:
    """Issue 40: `nandlab sweep` in a pipe or a log printed nothing for minutes."""
    result = nandlab_cli("sweep", quick(tmp_path, 3, 0.05), "--out", tmp_path / "out", "--workers", "1")
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("runs ")]
    assert [line.split(" done")[0] for line in lines] == ["runs 1/3", "runs 2/3", "runs 3/3"], result.stderr
    assert "elapsed" in lines[-1]


def test_an_interrupted_sweep_says_where_its_runs_are_and_how_to_go_on(nandlab_cli, tmp_path: Path,
                                                                      monkeypatch) -> None:
    from nandlab.procedures import sweep as sweep_procedure

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_procedure, "run", stopped)
    result = nandlab_cli("sweep", quick(tmp_path, 3, 0.05), "--out", tmp_path / "out")
    assert result.exit_code == 130 and result.stderr.count("\n") == 1, result.stderr
    assert f"the finished runs are in {tmp_path / 'out'}; the same command goes on from them" in result.stderr


def test_a_report_table_naming_no_axis_is_refused_before_any_run(nandlab_cli, tmp_path: Path) -> None:
    """Issue 38 (second outside check): every run ran, then "its report failed" after 129 lines."""
    path = quick(tmp_path, 3, 0.05)
    path.write_text(path.read_text() + '[report]\nheatmaps = [{ x = "nosuch", y = "seed", value = "waf" }]\n')
    result = nandlab_cli("sweep", path, "--out", tmp_path / "out")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "[report] heatmaps #1: x = 'nosuch' is no axis" in result.stderr and not (tmp_path / "out").exists()
