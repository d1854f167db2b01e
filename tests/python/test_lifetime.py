"""Whole-lifetime runs: `nandlab lifetime CONFIG --compare-baseline --json`."""

import json
from pathlib import Path

import pytest

LIFETIME_TOML = """\
seed = 5
[device]
cell = "tlc"
channels = 2
planes_per_die = 2
blocks_per_plane = 32
pages_per_block = 48
page_size = "8KiB"
reserve = "30 %"
[device.wear]
rated = { slc = 1500, mlc = 120, tlc = 20 }
[ftl]
gc_start = 2
gc_stop = 3
[[phase]]
kind = "fill"
working_set = 0.5
[[phase]]
working_set = 0.5
queue_depth = 8
until = "dead"
"""


def test_compare_baseline_reports_the_ratios(nandlab_cli, tmp_path: Path) -> None:
    path = tmp_path / "life.toml"
    path.write_text(LIFETIME_TOML)
    result = nandlab_cli("lifetime", str(path), "--compare-baseline", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    for side in ("zombie", "baseline"):
        assert doc[side]["host_write_bytes"] > 0 and doc[side]["wall_seconds"] > 0
        assert doc[side]["death"]
    assert doc["lifetime_ratio"] == doc["zombie"]["host_write_bytes"] / doc["baseline"]["host_write_bytes"]
    assert doc["lifetime_ratio"] >= 1.0
    assert 0.5 < doc["latency_ratio"] < 2.0


def test_a_drive_that_dies_before_the_last_phase_ends_its_life_there(nandlab_cli, tmp_path: Path) -> None:
    """A plan whose drive wears out in a step before its last (a heavy first step, a baseline that dies early)
    is a lifetime that ended there: the death is reported, the steps after it are not run."""
    from nandlab import lifetime

    plan = LIFETIME_TOML.replace('working_set = 0.5\nqueue_depth = 8\nuntil = "dead"',
                                 'working_set = 1.0\nqueue_depth = 8\nvolume = 1000.0\n[[phase]]\n'
                                 'working_set = 0.1\nuntil = "dead"')
    assert plan.count("[[phase]]") == 3
    outcome = lifetime.run(plan, progress=False)
    assert outcome["death"] and outcome["drive_writes"] < 1000
    assert [bool(p.get("death")) for p in outcome["result"].phases] == [False, True]
    path = tmp_path / "life.toml"
    path.write_text(plan)
    result = nandlab_cli("lifetime", str(path), "--compare-baseline", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["baseline"]["death"]


def test_a_config_without_until_dead_is_refused(nandlab_cli, tiny_path: Path) -> None:
    result = nandlab_cli("lifetime", str(tiny_path))
    assert result.exit_code == 2
    assert 'until = "dead"' in result.stderr


def test_a_misspelt_preset_gets_a_suggestion(nandlab_cli) -> None:
    result = nandlab_cli("lifetime", "zombienand-trace-tcl")
    assert result.exit_code == 2
    assert "did you mean zombienand-trace-tlc?" in result.stderr


def test_lifetime_grid_writes_the_table_and_heatmaps(nandlab_cli, tmp_path: Path) -> None:
    import polars as pl

    out = tmp_path / "grid"
    result = nandlab_cli(
        "lifetime-grid", "--cells", "tlc", "--reserves", "30%", "--working-sets", "100%",
        "--read-levels", "low=0.25", "--out", str(out), "--quiet",
    )
    assert result.exit_code == 0, result.stderr
    table = pl.read_parquet(out / "grid.parquet")
    assert table.height == 1
    row = table.row(0, named=True)
    assert (row["cell"], row["reserve"], row["working_set"], row["read_fraction"]) == ("tlc", 0.3, 1.0, 0.25)
    # The paper's first claim: ZombieNAND never shortens life.
    assert row["lifetime_ratio"] >= 1.0
    assert row["lifetime_ratio"] == row["zombie_host_write_bytes"] / row["baseline_host_write_bytes"]
    assert row["zombie_death"] and row["baseline_death"]
    for png in ("lifetime-ratio.png", "latency-ratio.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "2 runs in" in result.stdout


def test_a_preset_runs_the_papers_synthetic_workload(nandlab_cli) -> None:
    result = nandlab_cli(
        "lifetime", "zombienand-synthetic-tlc", "--reserve", "0.1", "--working-set", "1.0", "--json", "--quiet"
    )
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["death"].startswith(("worn out", "GC pool"))
    # 128 blocks rated 1,000 TLC cycles, 90 % of them user capacity: a full-drive random workload
    # writes several hundred drive-writes before the drive dies (WAF > 1 at 10 % reserve).
    assert 100 < doc["drive_writes"] < 1000


def test_the_dead_block_rule_outlives_the_advertised_capacity(nandlab_cli, tmp_path: Path, monkeypatch) -> None:
    """`--death dead-blocks` (the paper's rule) lives on past the point where the capacity rule ends
    the drive, and says from when it no longer held its advertised capacity."""
    monkeypatch.setenv("COLUMNS", "200")  # the table's headers on one line each
    path = tmp_path / "life.toml"
    small = LIFETIME_TOML.replace("working_set = 0.5", "working_set = 0.2")
    path.write_text(small.replace("[ftl]\n", '[ftl]\nzombie = true\nwear_leveling = true\n'))
    capacity = json.loads(nandlab_cli("lifetime", str(path), "--json", "-q").stdout)
    path.write_text(path.read_text().replace("[ftl]\n", '[ftl]\ndeath = "dead-blocks"\n'))
    result = nandlab_cli("lifetime", str(path), "-q")
    assert result.exit_code == 0, result.stderr
    assert "Capacity held until" in result.stdout and "Capacity at death" in result.stdout
    doc = json.loads(nandlab_cli("lifetime", str(path), "--json", "-q").stdout)
    assert "retired blocks, more than the" in doc["death"]
    assert doc["host_write_bytes"] > capacity["host_write_bytes"]
    assert 0 < doc["capacity_short_since_bytes"] < doc["host_write_bytes"]
    # What each offered when it died: the capacity rule all it advertised, the dead-block rule less.
    assert capacity["capacity_at_death"] == 1.0
    assert 0 < doc["capacity_at_death"] < 1


def test_a_preset_takes_a_capacity(nandlab_cli) -> None:
    """Issue 39: `nandlab lifetime PRESET --capacity SIZE` (a config sets [device] capacity)."""
    result = nandlab_cli("lifetime", "zombienand-synthetic-mlc", "--capacity", "8MiB", "--working-set", "0.25",
                         "--json", "--quiet")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["host_write_bytes"] / doc["drive_writes"] == pytest.approx(8 * 2**20)  # a drive write is 8 MiB


def test_death_and_capacity_go_with_a_preset(nandlab_cli, tmp_path: Path) -> None:
    path = tmp_path / "life.toml"
    path.write_text(LIFETIME_TOML)
    result = nandlab_cli("lifetime", str(path), "--death", "dead-blocks")
    assert result.exit_code == 2 and "[ftl] death" in result.stderr
    result = nandlab_cli("lifetime", str(path), "--capacity", "1GiB")
    assert result.exit_code == 2 and "[device] capacity" in result.stderr
    result = nandlab_cli("lifetime", "zombienand-synthetic-tlc", "--death", "dead")
    assert result.exit_code == 2 and "dead-blocks" in result.stderr


def _msr_trace(path: Path, records: int = 400) -> Path:
    """An MSR-format trace: writes to a few hot 8 KiB blocks and a colder tail, and some reads."""
    lines = []
    for i in range(records):
        block = i % 8 if i % 4 else 64 + i % 512
        kind = "Read" if i % 5 == 0 else "Write"
        lines.append(f"{128166372000000000 + i * 1000},host,0,{kind},{block * 8192},8192,100")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_lifetime_traces_runs_the_study_and_leaves_out_traces_without_writes(nandlab_cli, tmp_path: Path) -> None:
    import polars as pl

    hot = _msr_trace(tmp_path / "hot.csv")
    reads = tmp_path / "reads.csv"
    reads.write_text("128166372000000000,host,0,Read,0,4096,100\n")
    out = tmp_path / "study"
    result = nandlab_cli("lifetime-traces", str(hot), str(reads), "--cells", "tlc", "--reserves", "30%",
                         "--endurance-scale", "100", "--workers", "1", "--out", str(out), "-q")
    assert result.exit_code == 0, result.stderr
    assert "left out: reads" in result.stdout
    table = pl.read_parquet(out / "traces.parquet")
    assert table.height == 1 and table["trace"][0] == "hot" and table["cell"][0] == "tlc"
    # A small hot set on a 30 % reserve: ZombieNAND lives longer (the paper's finding).
    assert table["lifetime_ratio"][0] > 1.5
    assert table["unique_bytes"][0] < 8 << 20
    for name in ("lifetime-ratio.png", "latency-over-life.png", "address-reuse.png", "composition.csv", "report.html"):
        assert (out / name).stat().st_size > 0, name
    curves = pl.read_parquet(out / "curves.parquet")
    assert curves["life"].max() > 100 and curves["latency"].is_finite().all()


def test_a_looping_trace_that_never_writes_cannot_hang_until_dead(nandlab_cli, tmp_path: Path) -> None:
    """A pass without writes can never wear the drive out: refused after one pass, not a hang."""
    trace = tmp_path / "reads.csv"
    trace.write_text("128166372000000000,host,0,Read,0,4096,100\n128166372000001000,host,0,Read,8192,4096,100\n")
    config = tmp_path / "ro.toml"
    config.write_text(f'[device]\npreset = "zombienand-synthetic-tlc"\n[[phase]]\nkind = "trace"\n'
                      f'trace = "{trace}"\nloop = true\nuntil = "dead"\n')
    result = nandlab_cli("run", str(config), "-q")
    assert result.exit_code == 2
    assert "writes nothing" in result.stderr and 'until = "dead" would never' in result.stderr
