"""Hot/cold separation at the host frontier (`[ftl] hot_cold`), as a user runs it: the summary says
how much the identifier found hot, and the key's bad values are refused with what it takes."""

import json
from pathlib import Path

HOT_TOML = """\
seed = 2
[device]
cell = "slc"
channels = 1
blocks_per_plane = 128
pages_per_block = 32
page_size = "4KiB"
over_provisioning = 0.2
[ftl]
hot_cold = "{hot_cold}"
[[phase]]
kind = "fill"
[[phase]]
name = "skewed"
distribution = "hotcold:0.5:0.01"
volume = 2.0
"""


def _run(nandlab_cli, tmp_path: Path, hot_cold: str):
    path = tmp_path / "hot.toml"
    path.write_text(HOT_TOML.replace("{hot_cold}", hot_cold))
    return nandlab_cli("run", str(path), "--json")


def test_the_summary_says_how_much_was_found_hot(nandlab_cli, tmp_path: Path) -> None:
    result = _run(nandlab_cli, tmp_path, "multi-hash:1024")
    assert result.exit_code == 0, result.stderr
    skewed = json.loads(result.stdout)["phases"][1]
    assert 0.4 < skewed["hot_bytes"] / skewed["host_write_bytes"] < 0.6
    off = json.loads(_run(nandlab_cli, tmp_path, "off").stdout)["phases"][1]
    assert "hot_bytes" not in off and off["waf"] > skewed["waf"]


def test_bad_values_are_refused_with_what_the_key_takes(nandlab_cli, tmp_path: Path) -> None:
    for bad in ("multi-hash:100", "multi-hash:+64", "multi-hash:0064", "multi-hash:32"):
        result = _run(nandlab_cli, tmp_path, bad)
        assert result.exit_code == 2, bad
        assert "[ftl] hot_cold: expected multi-hash:N with N a power of two" in result.stderr
    result = _run(nandlab_cli, tmp_path, "hot")
    assert result.exit_code == 2 and "hot/cold separation" in result.stderr
    path = tmp_path / "cache.toml"
    cached = HOT_TOML.replace("{hot_cold}", "multi-hash").replace('cell = "slc"', 'cell = "tlc"')
    path.write_text(cached.replace("[ftl]\n", '[ftl]\npslc = "static"\n'))
    result = nandlab_cli("run", str(path))
    assert result.exit_code == 2 and "with a pSLC cache" in result.stderr
