"""Whole-lifetime runs: `nandlab lifetime CONFIG --compare-baseline --json`."""

import json
from pathlib import Path

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


def test_a_config_without_until_dead_is_refused(nandlab_cli, tiny_path: Path) -> None:
    result = nandlab_cli("lifetime", str(tiny_path))
    assert result.exit_code == 2
    assert 'until = "dead"' in result.stderr
