"""The nandlab command: table, --json, --out, presets, default-config, and how errors look."""

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import SUMMARY_KEYS

from nandlab import SimulationError, api, output


def test_run_prints_a_table(nandlab_cli, tiny_path: Path) -> None:
    result = nandlab_cli("run", tiny_path, "--quiet")
    assert result.exit_code == 0, result.stderr
    for text in ("fill", "randwrite", "total", "WAF", "IOPS", "GiB", "µs", "SLC"):
        assert text in result.stdout
    assert result.stderr == ""


def test_run_latency_table_flags_a_max_far_beyond_p999() -> None:
    from nandlab.procedures.run import _stall_lines

    def latency(p999: float, top: float) -> dict:
        return {"mean": 1.0, "p50": 1.0, "p99": 1.0, "p999": p999, "max": top}

    calm = {"read_latency_us": latency(500.0, 4_000.0), "write_latency_us": latency(0.0, 0.0)}
    stalled = {"read_latency_us": latency(500.0, 54_000_000.0), "write_latency_us": latency(0.0, 0.0)}
    assert _stall_lines([("calm", calm)]) == []
    (line,) = _stall_lines([("mixed", stalled)])
    assert line.startswith("mixed: read max 54,000,000 µs is 108,000× its p99.9")


def test_run_json_is_only_json_with_the_summary_keys(nandlab_cli, tiny_path: Path) -> None:
    result = nandlab_cli("run", tiny_path, "--json", "--seed", "5")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert SUMMARY_KEYS <= document.keys()
    assert SUMMARY_KEYS <= document["summary"].keys()
    assert {key: document[key] for key in document["summary"]} == document["summary"]
    assert [phase["name"] for phase in document["phases"]] == ["fill", "randwrite"]
    assert "user_capacity_bytes" in document["device"]


def test_run_out_writes_summary_timeseries_and_plot(nandlab_cli, tiny_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    result = nandlab_cli("run", tiny_path, "--out", out, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads((out / "summary.json").read_text()) == json.loads(result.stdout)
    ts = pl.read_parquet(out / "timeseries.parquet")
    assert ts.height > 0 and {"phase", "phase_name", "write_mbps", "write_p99_us"} <= set(ts.columns)
    assert pl.read_csv(out / "timeseries.csv").height == ts.height
    assert (out / "throughput_latency.png").read_bytes().startswith(b"\x89PNG")
    assert "summary.json" in result.stderr


def test_run_without_a_config_uses_the_built_in_default(nandlab_cli, monkeypatch, tiny_toml: str) -> None:
    # The default experiment is a real-sized drive: stand the tiny one in for it.
    monkeypatch.setattr(api, "default_config_toml", lambda: tiny_toml)
    result = nandlab_cli("run", "--json")
    assert result.exit_code == 0, result.stderr
    assert [phase["name"] for phase in json.loads(result.stdout)["phases"]] == ["fill", "randwrite"]


def test_default_config_prints_the_default_toml(nandlab_cli) -> None:
    from nandlab import default_config_toml

    result = nandlab_cli("default-config")
    assert result.exit_code == 0
    assert result.stdout.strip() == default_config_toml().strip()
    assert "[[phase]]" in result.stdout


def test_presets_lists_names_and_descriptions(nandlab_cli) -> None:
    result = nandlab_cli("presets")
    assert result.exit_code == 0
    assert "mqsim-default" in result.stdout


BAD_CONFIGS = {
    "unknown key": (("channels = 2", "chanels = 2"), "channels"),
    "wrong type": (("channels = 2", 'channels = "two"'), "channels"),
    "impossible geometry": (("channels = 2", "channels = 0"), "channels"),
    "phase without stop condition": (("queue_depth = 8\nvolume = 1.0", "queue_depth = 8"), "stop condition"),
    "toml syntax": (("channels = 2", "channels = = 2"), ""),
}


@pytest.mark.parametrize("case", BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_bad_config_is_one_line_and_exit_code_2(nandlab_cli, tiny_toml: str, tmp_path: Path, case) -> None:
    (old, new), named = case
    assert old in tiny_toml
    path = tmp_path / "bad.toml"
    path.write_text(tiny_toml.replace(old, new, 1))
    result = nandlab_cli("run", path, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("nandlab: error: ")
    assert result.stderr.count("\n") == 1
    assert named in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_missing_config_file_is_one_line_and_exit_code_2(nandlab_cli, tmp_path: Path) -> None:
    result = nandlab_cli("run", tmp_path / "missing.toml")
    assert result.exit_code == 2
    assert result.stderr.startswith("nandlab: error: ") and "missing.toml" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("raised", "exit_code", "message"),
    [
        (SimulationError("die 3 melted"), 1, "nandlab: error: die 3 melted\n"),
        (KeyboardInterrupt(), 130, "nandlab: interrupted\n"),
    ],
)
def test_run_failures_exit_codes(nandlab_cli, monkeypatch, tiny_path: Path, raised, exit_code, message) -> None:
    def fail(*args, **kwargs):
        raise raised

    monkeypatch.setattr(api, "run", fail)
    result = nandlab_cli("run", tiny_path)
    assert (result.exit_code, result.stderr, result.stdout) == (exit_code, message, "")


def test_presets_name_prints_the_preset_toml(nandlab_cli) -> None:
    result = nandlab_cli("presets", "mqsim-default")
    assert result.exit_code == 0
    assert "channels" in result.stdout


def test_unknown_preset_is_one_line_and_exit_code_2(nandlab_cli) -> None:
    result = nandlab_cli("presets", "mqsim-defualt")
    assert result.exit_code == 2
    assert result.stderr.startswith("nandlab: error: ") and "mqsim-default" in result.stderr


def test_the_real_process_prints_one_line_and_exits_2(tiny_toml: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(tiny_toml.replace("channels = 2", "chanels = 2"))
    done = subprocess.run([sys.executable, "-m", "nandlab", "run", str(path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("nandlab: error: [device]: unknown key `chanels`") and done.stderr.count("\n") == 1
    assert "did you mean `channels`" in done.stderr


def test_fractions_read_the_same_everywhere() -> None:
    """``--reserve 30%`` as ``--reserves 30%`` and configs' "30 %": one parser for the CLI's shares."""
    from nandlab.cli import options

    assert options.fraction("30%") == options.fraction("30 %") == options.fraction("0.3") == 0.3
    assert options.Fraction(0.0, 0.95).convert("30%", None, None) == 0.3


def test_help_texts_are_whole_sentences_without_markdown(nandlab_cli) -> None:
    """Every group's command list shows whole short helps (click cuts long first sentences with "..."),
    and no help text shows Markdown backticks."""
    for group in ((), ("test",), ("trace",), ("chip",), ("import",)):
        result = nandlab_cli(*group, "--help")
        assert result.exit_code == 0 and "..." not in result.stdout.split("Commands:")[1], result.stdout
    for command in (("serve",), ("run",), ("fio",), ("chip", "endurance"), ("test", "retention"), ("lifetime",)):
        result = nandlab_cli(*command, "--help")
        assert result.exit_code == 0 and "`" not in result.stdout, (command, result.stdout)


def test_a_command_imports_only_what_it_needs() -> None:
    """Issue 40: `nandlab presets` took 0.65 s, most of it importing polars, NumPy and matplotlib for
    commands it does not run. A command's module loads when it runs (BENCHMARKS.md has the times)."""
    probe = ("import sys\nfrom nandlab.cli import cli\ncli(['presets'], standalone_mode=False)\n"
             "print(sorted(m for m in ('polars', 'numpy', 'matplotlib', 'nandlab.api') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


MAPPED = """
seed = 1
[device]
preset = "snia-mlc"
capacity = "1GiB"
[ftl]
map_cache = "64KiB"
{extents}
[[phase]]
kind = "fill"
[[phase]]
name = "reads"
pattern = "random"
read_fraction = 1.0
requests = 20000
"""


def test_extents_are_said_and_can_be_turned_off(nandlab_cli, tmp_path: Path) -> None:
    """Issue 40: random reads of data written in order never missed the map cache (extents), where
    MQSim's page-level CMT misses, and nothing said why. `[ftl] map_extents = false` turns them off;
    the output says when extents answered most lookups."""
    runs = {}
    for extents in ("", "map_extents = false"):
        path = tmp_path / "mapped.toml"
        path.write_text(MAPPED.format(extents=extents))
        table = nandlab_cli("run", path)
        as_json = nandlab_cli("run", path, "--json")
        assert table.exit_code == as_json.exit_code == 0, table.stderr
        runs[extents] = (table.stdout, json.loads(as_json.stdout)["phases"][1])
        # With --json, stdout is the JSON alone and the note goes to stderr (the second outside check).
        assert ("note: reads: extents answered 100%" in as_json.stderr) == (extents == ""), as_json.stderr
    text, reads = runs[""]
    assert reads["map_reads"] == 0 and reads["map_extent_lookups"] == reads["map_lookups"] == 20000
    assert "reads: extents answered 100% of 20,000 map lookups" in " ".join(text.split())
    # Into a pipe the note is one line: wrapped at 80 columns it broke the key a reader would copy.
    assert any("[ftl] map_extents = false makes" in line for line in text.splitlines())
    text, reads = runs["map_extents = false"]
    assert reads["map_reads"] > 15000 and "map_extent_lookups" not in reads and reads["map_lookups"] == 20000
    assert "extents answered" not in text


def test_the_command_list_s_short_help_is_each_command_s_own() -> None:
    """`nandlab --help` lists the commands without importing them (0.59 s before, ~0.1 s now): each line
    is the text the command itself gives."""
    import click

    from nandlab.cli import COMMANDS, cli

    ctx = click.Context(cli)
    for name, (_, _, short) in COMMANDS.items():
        assert cli.get_command(ctx, name).get_short_help_str(limit=1000) == short, name


def test_an_80_column_terminal_shows_every_figure_of_the_run_whole(tiny_path: Path) -> None:
    """The issue's outside check: at 80 columns the run's tables cut figures to `56,6…` and names to `rand…`."""
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm"}
    done = subprocess.run([sys.executable, "-m", "nandlab", "run", str(tiny_path)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "…" not in done.stdout and max(map(len, done.stdout.splitlines())) <= 80
    assert any(line.split()[:1] == ["randwrite"] for line in done.stdout.splitlines()), done.stdout


def test_an_80_column_terminal_breaks_no_latency_figure_whatever_the_phase_names(tmp_path: Path) -> None:
    """Issue 40's second outside check: with long phase names the latency table folded a max of
    6,194,987 µs as `6,194,9` over `87`. Each direction then gets a table of its own."""
    config = tmp_path / "long.toml"
    config.write_text('[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n[[phase]]\nkind = "fill"\n[[phase]]\n'
                      'name = "random-write-with-a-long-name"\npattern = "random"\nqueue_depth = 8\nvolume = 0.1\n'
                      '[[phase]]\nname = "random-read-after-the-writes-long"\npattern = "random"\n'
                      'read_fraction = 1.0\nrequests = 5000\n')
    env = {**os.environ, "COLUMNS": "80", "TERM": "xterm"}
    done = subprocess.run([sys.executable, "-m", "nandlab", "run", str(config)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert max(map(len, done.stdout.splitlines())) <= 80
    result = api.run(config, progress=False)
    for phase in result.phases[1:]:
        for key in ("read_latency_us", "write_latency_us"):
            if phase[key]:  # every figure whole on a line (as the table rounds it)
                figures = [output.number(phase[key][f]) for f in ("mean", "p50", "p99", "p999", "max")]
                assert any(line.split()[-5:] == figures for line in done.stdout.splitlines()), (figures, done.stdout)
