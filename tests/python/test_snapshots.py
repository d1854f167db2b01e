"""Snapshots and resume (issue 8): a lifetime run killed with SIGKILL goes on from its last
periodic snapshot, one stopped by Ctrl-C or SIGTERM from the snapshot written on the signal, and
each ends with the same JSON result as the run that was never stopped; damaged, foreign and
misplaced snapshots are refused with one line; the Python API resumes multi-phase runs whole."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

import nandlab

# A pSLC ZombieNAND drive written from pristine to dead (about 80 GiB of host writes).
LIFETIME = """
seed = 3
[device]
preset = "zombienand-synthetic-tlc"
capacity = "64MiB"
reserve = 0.2
[[phase]]
name = "life"
working_set = 0.3
block_size = "8KiB"
queue_depth = 1
until = "dead"
"""

# Three phases; the last lasts long enough (about a second) to be stopped in the middle: progress is
# reported every 0.2 s.
PHASES = """
seed = 11
[device]
cell = "tlc"
channels = 2
blocks_per_plane = 64
pages_per_block = 32
page_size = "16KiB"
over_provisioning = "20 %"
[[phase]]
kind = "fill"
[[phase]]
name = "warm"
volume = 2.0
read_fraction = 0.2
[[phase]]
name = "long"
queue_depth = 8
distribution = "zipf:0.8"
read_fraction = 0.3
volume = 300.0
"""


def nandlab_cli(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "nandlab", *map(str, args)]


def without_wall_clock(value: Any) -> Any:
    """A result with its wall-clock figures (the only ones a resumed run may change) left out."""
    if isinstance(value, dict):
        return {k: without_wall_clock(v) for k, v in value.items() if "wall" not in k}
    if isinstance(value, list):
        return [without_wall_clock(v) for v in value]
    return value


@pytest.fixture(scope="module")
def lifetime(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The lifetime config and its uninterrupted JSON result."""
    path = tmp_path_factory.mktemp("life") / "life.toml"
    path.write_text(LIFETIME)
    done = subprocess.run(nandlab_cli("run", path, "--json", "-q"), capture_output=True, text=True, check=True)
    return path, json.loads(done.stdout)


def started(config: Path, snapshot: Path, *args: str, command: str = "run", **popen: Any) -> subprocess.Popen[str]:
    """`nandlab COMMAND CONFIG --snapshot SNAPSHOT --snapshot-every 4GiB ARGS`, once it has written
    its first periodic snapshot (a tenth of the way to the drive's death)."""
    run = subprocess.Popen(
        nandlab_cli(command, config, "--snapshot", snapshot, "--snapshot-every", "4GiB", *args), text=True, **popen
    )
    deadline = time.monotonic() + 120
    while not snapshot.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert run.poll() is None, "the run ended before it could be stopped"
    return run


def interrupted(config: Path, snapshot: Path) -> bytes:
    """The snapshot a run of ``config`` stopped by Ctrl-C leaves in ``snapshot``."""
    run = started(config, snapshot, "-q", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=60) == 130
    return snapshot.read_bytes()


def resumed_result(snapshot: Path) -> dict[str, Any]:
    done = subprocess.run(nandlab_cli("resume", snapshot, "-q"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_lifetime_run_killed_outright_resumes_to_the_same_death(
    lifetime: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    config, straight = lifetime
    snapshot = tmp_path / "life.snap"
    run = started(config, snapshot, "--json", "-q", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert snapshot.exists()

    resumed = resumed_result(snapshot)
    assert resumed["death"] is not None and resumed["host_write_bytes"] > 40e9
    assert without_wall_clock(resumed) == without_wall_clock(straight)


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_run_with_a_snapshot_and_resume_ends_the_same(
    lifetime: tuple[Path, dict[str, Any]], tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    config, straight = lifetime
    snapshot = tmp_path / "life.snap"
    run = started(config, snapshot, "--json", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.send_signal(sig)
    stdout, stderr = run.communicate(timeout=60)
    assert run.returncode == code, stderr
    assert stdout == ""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines == [f"nandlab: run interrupted; its state is in the snapshot {snapshot}: "
                     f"`nandlab resume {snapshot}` goes on"]
    assert without_wall_clock(resumed_result(snapshot)) == without_wall_clock(straight)


def test_nandlab_lifetime_resumes_to_its_own_report(lifetime: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    config, straight = lifetime
    snapshot = tmp_path / "life.snap"
    run = started(config, snapshot, "--json", command="lifetime", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    run.send_signal(signal.SIGINT)
    assert run.wait(timeout=60) == 130
    resumed = resumed_result(snapshot)  # the lifetime report, as `nandlab lifetime --json` prints it
    assert set(resumed) == {"host_write_bytes", "drive_writes", "death", "death_cause", "capacity_short_since_bytes",
                            "capacity_at_death", "sim_seconds", "wall_seconds"}
    assert resumed["host_write_bytes"] == straight["host_write_bytes"] and resumed["death"] == straight["death"]
    assert resumed["death_cause"] == straight["death_cause"] == "too-little-flash"
    assert resumed["sim_seconds"] == straight["sim_seconds"]


def test_damaged_foreign_and_misplaced_snapshots_are_refused_in_one_line(
    lifetime: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    config, _ = lifetime
    snapshot = tmp_path / "life.snap"
    whole = interrupted(config, snapshot)

    def refused(data: bytes | None, *args: str | Path) -> str:
        if data is not None:
            (tmp_path / "bad.snap").write_bytes(data)
        done = subprocess.run(nandlab_cli(*args), capture_output=True, text=True)
        assert done.returncode == 2, done.stderr  # a bad input, as every other
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("nandlab: error: "), done.stderr
        return lines[0]

    bad = tmp_path / "bad.snap"
    flipped = bytearray(whole)
    flipped[len(whole) // 2] ^= 0xFF
    assert "checksum does not match" in refused(bytes(flipped), "resume", bad)
    assert "truncated" in refused(whole[: len(whole) // 2], "resume", bad)
    assert "not a nandlab snapshot" in refused(LIFETIME.encode(), "resume", bad)
    other = bytearray(whole)
    other[24] = ord("9")  # the nandlab version it claims to come from
    assert "written by nandlab 9" in refused(bytes(other), "resume", bad)
    assert "no such file" in refused(None, "resume", tmp_path / "absent.snap").lower()
    # --snapshot never overwrites a file that is not a snapshot, nor runs without a place to write.
    assert "refusing to overwrite" in refused(None, "run", config, "--snapshot", config)
    assert config.read_text() == LIFETIME
    assert "cannot write a snapshot there" in refused(None, "run", config, "--snapshot", tmp_path / "no" / "x.snap")
    assert "snapshot_every" in refused(None, "run", config, "--snapshot", snapshot, "--snapshot-every", "often")
    # Issue 17: nor the snapshot of another run (another seed here), unless forced ...
    message = refused(None, "run", config, "--snapshot", snapshot, "--seed", "4")
    assert "holds the snapshot of another run" in message and "refusing to overwrite" in message
    assert snapshot.read_bytes() == whole
    quick = tmp_path / "quick.toml"
    quick.write_text(PHASES.split("[[phase]]")[0] + '[[phase]]\nkind = "fill"\n')
    forced = subprocess.run(nandlab_cli("run", quick, "-q", "--snapshot", snapshot, "--force"), capture_output=True)
    assert forced.returncode == 0, forced.stderr
    assert "--force" in refused(None, "run", quick, "--force")
    # ... and reading one is bounded: a device, or a header claiming more than the file holds.
    started_at = time.monotonic()
    assert "not a regular file" in refused(None, "resume", "/dev/zero")
    assert time.monotonic() - started_at < 10
    header = 16 + 4 + 4 + int.from_bytes(whole[20:24], "little") + 12
    lying = bytearray(whole)
    lying[header - 12 : header - 4] = (1 << 40).to_bytes(8, "little")
    assert "where its header says 1099511627776" in refused(bytes(lying), "resume", bad)


def test_a_snapshot_altered_with_a_matching_checksum_is_refused_in_one_line(
    lifetime: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """Issue 17: 33 snapshots altered with their checksum recomputed ended in internal errors or ran on
    a corrupt state. The state read back is checked first: refused in one line (exit 2), never a crash."""
    config, _ = lifetime
    snapshot = tmp_path / "life.snap"
    whole = interrupted(config, snapshot)
    header = 16 + 4 + 4 + int.from_bytes(whole[20:24], "little") + 12
    body = whole[header:]
    # Single flips all over the state: each is refused in one line or runs; a state flipped every
    # 997 bytes (its maps among the rest) must be refused, as not holding together or not decoding.
    flips = [[len(body) * (2 * k + 1) // 24] for k in range(12)] + [list(range(0, len(body), 997))]
    for at in flips:
        altered = bytearray(body)
        for i in at:
            altered[i] ^= 0x04
        head = bytearray(whole[:header])
        head[header - 4 :] = zlib.crc32(altered).to_bytes(4, "little")
        bad = tmp_path / "altered.snap"
        bad.write_bytes(bytes(head) + bytes(altered))
        done = subprocess.run(nandlab_cli("resume", bad, "--json", "-q"), capture_output=True, text=True, timeout=300)
        lines = done.stderr.strip().splitlines()
        assert done.returncode in (0, 1, 2) and "Traceback" not in done.stderr and "internal error" not in done.stderr
        if done.returncode != 0:
            assert len(lines) == 1 and lines[0].startswith("nandlab: error: "), done.stderr
    assert done.returncode == 2 and ("does not hold together" in done.stderr or "cannot be decoded" in done.stderr)


def test_the_api_resumes_a_run_of_several_phases_whole(tmp_path: Path) -> None:
    straight = nandlab.run(PHASES)
    snapshot = tmp_path / "phases.snap"

    def ctrl_c_in_the_last_phase(fraction: float, info: dict[str, Any]) -> None:
        # Raised here, not by a signal: a signal's KeyboardInterrupt waits for the next check (the next
        # report, 0.2 s of wall time later), which the phase may not live to see on a loaded machine.
        # A phase's first report comes at its first check (its first 1,024 requests), whatever the
        # machine's speed: this test depends on no wall clock.
        if info["phase_name"] == "long":
            raise KeyboardInterrupt

    with pytest.raises(nandlab.Interrupted) as stopped:
        nandlab.run(PHASES, progress=ctrl_c_in_the_last_phase, snapshot=snapshot, notes={"mine": [1, 2]})
    assert stopped.value.snapshot == str(snapshot)
    assert isinstance(stopped.value.__cause__, KeyboardInterrupt)

    paused = nandlab.open_snapshot(snapshot)
    assert paused.phase == 2 and paused.notes == {"mine": [1, 2]}
    assert [phase["name"] for phase in paused.done] == ["phase-1", "warm"]
    resumed = paused.go_on()
    assert without_wall_clock(resumed.phases) == without_wall_clock(straight.phases)
    assert without_wall_clock(resumed.summary) == without_wall_clock(straight.summary)
    assert resumed.timeseries.drop("wall_seconds", strict=False).equals(
        straight.timeseries.drop("wall_seconds", strict=False)
    )
    assert resumed.erase_counts == straight.erase_counts


@pytest.mark.parametrize(("ftl", "left_out"), [("", "unwritten_read_bytes"),
                                              ('[ftl]\nmap_cache = "64KiB"\n', "map_lookups")])
def test_a_run_whose_phases_leave_figures_out_resumes(tmp_path: Path, ftl: str, left_out: str) -> None:
    # Half filled: "warm" reads addresses never written (and, DRAM-less, looks entries up), so the
    # run's summary has `unwritten_read_bytes` (`map_lookups`), which the fill's leaves out (an outside
    # check found such a snapshot refused as "not a snapshot of nandlab run").
    config = PHASES.replace('kind = "fill"\n', 'kind = "fill"\nvolume = 0.5\n').replace("[[phase]]", ftl + "[[phase]]", 1)
    assert 'volume = 0.5' in config
    straight = nandlab.run(config)
    assert straight.summary[left_out] > 0 and left_out not in straight.phases[0]
    snapshot = tmp_path / "half.snap"
    with pytest.raises(nandlab.Interrupted):
        nandlab.run(config, progress=lambda f, info: _stop_in(info, "long"), snapshot=snapshot)
    resumed = nandlab.open_snapshot(snapshot).go_on()
    assert without_wall_clock(resumed.phases) == without_wall_clock(straight.phases)
    assert without_wall_clock(resumed.summary) == without_wall_clock(straight.summary)


def test_snapshot_every_needs_a_snapshot_file() -> None:
    with pytest.raises(nandlab.ConfigError, match="snapshot_every"):
        nandlab.run(PHASES, snapshot_every="1s")


def test_resume_refuses_a_fifo(tmp_path: Path) -> None:
    """``nandlab resume FIFO`` blocked for good, deaf to Ctrl-C."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "nandlab", "resume", str(fifo)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and done.stderr.startswith("nandlab: error:") and "regular file" in done.stderr


CUTS_AND_JOBS = """
seed = 5
[device]
cell = "mlc"
channels = 2
blocks_per_plane = 64
pages_per_block = 32
page_size = "16KiB"
over_provisioning = "20 %"
write_cache = "volatile"
[[phase]]
name = "cut"
volume = 0.5
power_loss_every = "2ms"
[[phase.job]]
name = "a"
pattern = "random"
[[phase.job]]
name = "b"
pattern = "sequential"
[[phase]]
name = "long"
volume = 200.0
"""


def _with_extra(whole: bytes, alter: Any) -> bytes:
    """The snapshot ``whole`` with what the run kept beside its state (its finished phases, time series
    and notes: JSON) changed by ``alter``, its checksum made to match."""

    def varint(at: int) -> tuple[int, int]:
        value, shift = 0, 0
        while True:
            byte = body[at]
            value, shift, at = value | (byte & 0x7F) << shift, shift + 7, at + 1
            if not byte & 0x80:
                return value, at

    def string_end(at: int) -> tuple[int, int]:
        length, at = varint(at)
        return at, at + length

    header = 16 + 4 + 4 + int.from_bytes(whole[20:24], "little") + 12
    body = whole[header:]
    _, at = string_end(0)  # the config
    _, at = string_end(at + 1)  # its JSON flag, the source's name
    at = at + 1 if body[at] == 0 else varint(at + 1)[1]  # the seed
    start, end = string_end(at)
    kept = json.loads(body[start:end])
    alter(kept)
    text = json.dumps(kept).encode()
    length, n = bytearray(), len(text)
    while True:
        length.append(n & 0x7F | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            break
    new = body[:at] + bytes(length) + text + body[end:]
    head = bytearray(whole[:header])
    head[header - 12 : header - 4] = len(new).to_bytes(8, "little")
    head[header - 4 :] = zlib.crc32(new).to_bytes(4, "little")
    return bytes(head) + new


def test_finished_phases_altered_in_a_snapshot_are_refused_before_the_run_goes_on(tmp_path: Path) -> None:
    """Issue 38: a snapshot's finished phases with figures the engine never gives (a death that is no
    text, jobs and power cuts of another shape, a latency summary of words, a negative count) were
    taken, and the run failed only after the rest of it had run. They are refused in one line at once;
    the phase as it was (with jobs and power cuts) resumes."""
    snapshot = tmp_path / "cut.snap"
    with pytest.raises(nandlab.Interrupted):
        nandlab.run(CUTS_AND_JOBS, progress=lambda f, info: _stop_in(info, "long"), snapshot=snapshot)
    whole = snapshot.read_bytes()
    done = nandlab.open_snapshot(snapshot).done
    assert done[0]["jobs"] and done[0]["power_losses"]

    def phase(key: str, value: Any) -> Any:
        return lambda kept: kept["phases"][0].__setitem__(key, value)

    def first_cut(key: str, value: Any) -> Any:
        return lambda kept: kept["phases"][0]["power_losses"][0].__setitem__(key, value)

    altered = {
        "a death as a dict": phase("death", {"at": 1}),
        "a job of other figures": phase("jobs", [{"x": 1}]),
        "jobs as text": phase("jobs", "abc"),
        "power cuts as numbers": phase("power_losses", [1, 2, 3]),
        "a cut without its losses": lambda kept: kept["phases"][0]["power_losses"][0].pop("lost_by_reason"),
        "a cut's time as text": first_cut("at_seconds", "soon"),
        "a latency summary of words": phase("write_latency_us", {"p99": "x"}),
        "no latency summary of the writes it made": phase("write_latency_us", None),
        "a negative count": phase("host_write_bytes", -1),
        "a count past 64 bits": phase("erases", 2**64),
        "a histogram of words": phase("erase_count_histogram", [["a", 1]]),
        "figures nested past six": phase("jobs", [{"x": [[[[[[[1]]]]]]]}]),
        # Found by the outside check (issue 38): each ran, then failed or wrote an impossible result.
        "a trace's skipped lines as words": phase("trace_skipped", {"lines": "many"}),
        "a name with a lone surrogate": phase("name", "\ud800"),
        "a name past 256 characters": phase("name", "x" * 257),
        "a key of its own holding a 4,000-digit number": phase("zz", 10**4000),
        "a key of its own nested ten deep": phase("zz", [[[[[[[[[[[]]]]]]]]]]]),
        "a negative time": phase("sim_seconds", -1e308),
        "an infinite rate": phase("iops", float("inf")),
        "a death in a finished phase": phase("death", "dead"),
        "a death's cause in a finished phase": phase("death_cause", "\x1b[2J"),
        "an erase-count histogram of 200,001 counts": phase("erase_count_histogram", [[i, 1] for i in range(200_001)]),
    }
    for case, alter in altered.items():
        bad = tmp_path / "altered.snap"
        bad.write_bytes(_with_extra(whole, alter))
        refused = subprocess.run(nandlab_cli("resume", bad, "-q"), capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2, (case, refused.stderr)
        assert refused.stderr.startswith("nandlab: error: ") and refused.stderr.count("\n") == 1, (case, refused.stderr)
        assert "not a snapshot of `nandlab run`" in refused.stderr, case
    intact = tmp_path / "intact.snap"
    intact.write_bytes(_with_extra(whole, lambda kept: None))
    assert nandlab.open_snapshot(intact).go_on(progress=None).phases[0]["jobs"] == done[0]["jobs"]


def test_a_snapshot_keeping_more_rows_than_a_report_reads_is_refused(tmp_path: Path, monkeypatch) -> None:
    """Issue 38: a snapshot whose finished phases kept a million rows took 2.8 GB and crashed while the
    resumed run drew them. The finished phases keep at most what `nandlab report` reads of a series."""
    from nandlab import api

    snapshot = tmp_path / "phases.snap"
    with pytest.raises(nandlab.Interrupted):
        nandlab.run(PHASES, progress=lambda f, info: _stop_in(info, "long"), snapshot=snapshot)
    rows = sum(len(s["sim_seconds"]) for s in nandlab.open_snapshot(snapshot).series)
    monkeypatch.setattr(api, "MAX_KEPT_ROWS", rows - 1)
    with pytest.raises(nandlab.SnapshotError, match=f"keep {rows:,} time-series rows, more than the {rows - 1:,}"):
        nandlab.open_snapshot(snapshot)


def _stop_in(info: dict[str, Any], name: str) -> None:
    if info["phase_name"] == name:
        raise KeyboardInterrupt
