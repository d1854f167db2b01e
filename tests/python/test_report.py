"""Reports (issue 7): every kind of result directory — a run, a sweep (a real one-axis sweep and a
made-up lifetime-compare sweep with four axes and a failed run), each procedure's --out — gets one
self-contained report.html (figures embedded, nothing fetched) with its tables and figures, also
as PNG files; a sweep file's [report] table chooses the heatmaps, and a wrong one, like a directory
nandlab did not write, is refused clearly; and a real browser (headless Chromium) renders the
reports with every figure, no console error, no request beyond the file itself, and no table
sticking out of the page or figures of a drive running into each other, wide or narrow."""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import shutil
import sys
from pathlib import Path

import click
import polars as pl
import pytest
from conftest import TINY_TOML
from test_sweep import QUICK

from nandlab import _core, report, sweep

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
MSR_TRACE = "".join(  # MSR Cambridge format: timestamp, host, disk, type, offset, size, response time
    f"{128166372000000000 + 10_000 * i},hm,0,{'Write' if i % 3 else 'Read'},{4096 * (i * 7 % 50)},"
    f"{4096 * (1 + i % 4)},100\n"
    for i in range(200)
)

# --- fixtures: one directory of each kind -------------------------------------------------------


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``nandlab run --out`` on a tiny drive (the CLI writes the report)."""
    from click.testing import CliRunner

    from nandlab.cli import cli

    directory = tmp_path_factory.mktemp("run")
    (directory / "tiny.toml").write_text(TINY_TOML)
    result = CliRunner().invoke(cli, ["run", str(directory / "tiny.toml"), "--out", str(directory / "out"), "--quiet"])
    assert result.exit_code == 0, result.output
    return directory / "out"


@pytest.fixture(scope="module")
def one_axis_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real sweep (nandlab.sweep) of three seeds on a 1 GiB drive."""
    directory = tmp_path_factory.mktemp("sweep")
    sweep.run(sweep.parse(QUICK.format(runs=3, volume=0.1), "quick.toml"), directory, workers=2)
    report.write(directory)
    return directory


LIFETIME_AXES = [
    {"name": "cell", "keys": ["device.preset", "phase.0.block_size"], "labels": ["tlc", "mlc"],
     "values": [["zombienand-synthetic-tlc", "8KiB"], ["zombienand-synthetic-mlc", "4KiB"]]},
    {"name": "reserve", "keys": ["device.reserve"], "labels": None, "values": [[0.1], [0.2], [0.3]]},
    {"name": "working_set", "keys": ["phase.0.working_set"], "labels": None, "values": [[0.5], [1.0]]},
    {"name": "read_level", "keys": ["phase.0.read_fraction"], "labels": ["low", "high"], "values": [[0.25], [0.75]]},
    {"name": "seed", "keys": ["seed"], "labels": None, "values": [[1], [2]]},
]
FAILED_RUN = 5


def lifetime_sweep(directory: Path, report_table: str = "") -> Path:
    """A lifetime-compare sweep directory laid out as nandlab.sweep writes one, made up with polars:
    2 cells x 3 reserves x 2 working sets x 2 read levels x 2 seeds, run FAILED_RUN failed, each
    finished run's time series (ZombieNAND and the baseline) in a hive partition."""
    directory.mkdir()
    (directory / "sweep.toml").write_text('[sweep]\nname = "made-up"\nprocedure = "lifetime-compare"\n' + report_table)
    about = {"name": "made-up", "procedure": "lifetime-compare", "runs": 48, "axes": LIFETIME_AXES,
             "base": {"device": {"preset": "zombienand-synthetic-tlc"}, "phase": [{"until": "dead"}]}}
    (directory / "sweep.json").write_text(json.dumps(about))
    rows, walls = [], []
    for run, point in enumerate(itertools.product(*(range(len(a["values"])) for a in LIFETIME_AXES))):
        run_id = f"{run:016x}"  # the first ten look like numbers: the partitions must stay strings
        row = {"run": run, "run_id": run_id, "status": "ok", "error": None}
        for axis, i in zip(LIFETIME_AXES, point):
            row[axis["name"]] = axis["labels"][i] if axis["labels"] else axis["values"][i][0]
            row.update(dict(zip(axis["keys"], axis["values"][i])))
        cell, reserve, working_set = point[0], row["reserve"], row["working_set"]
        row.update(lifetime_ratio=1.0 + (2 - cell) * reserve - 0.1 * working_set, latency_ratio=1.0 + 0.2 * reserve,
                   latency_ratio_after=1.5, zombie_host_write_bytes=2**40, baseline_host_write_bytes=2**39,
                   zombie_drive_writes=800.0, baseline_drive_writes=400.0, zombie_death="worn out",
                   baseline_death="worn out")
        if run == FAILED_RUN:
            row = {k: (None if k in ("lifetime_ratio", "latency_ratio") else v) for k, v in row.items()}
            row.update(status="failed", error="SimulationError: made up")
            (directory / "failures").mkdir(exist_ok=True)
            (directory / "failures" / f"{run_id}.json").write_text(json.dumps(
                {"error": row["error"], "traceback": "Traceback (most recent call last):\n  made up"}))
        else:
            sides = [pl.DataFrame({
                "phase": [0] * 20, "sim_seconds": [float(t) for t in range(20)],
                "host_write_bytes": [(t + 1) * 2**30 * (2 if side == "zombie" else 1) for t in range(20)],
                "write_mbps": [100.0] * 20, "read_mbps": [50.0] * 20, "latency_mean_us": [80.0 + t for t in range(20)],
                "waf_cumulative": [1.0 + t / 20 for t in range(20)], "free_blocks": [40 - t for t in range(20)],
                "reserve_used": [t / 20 for t in range(20)], "usable_bytes": [2**33 - t * 2**28 for t in range(20)],
                "phase_name": ["life"] * 20, "side": [side] * 20,
            }) for side in ("zombie", "baseline")]
            partition = directory / "timeseries" / f"run_id={run_id}"
            partition.mkdir(parents=True)
            pl.concat(sides).write_parquet(partition / "part-0.parquet")
            walls.append({"run_id": run_id, "wall_seconds": 1.5})
        rows.append(row)
    pl.DataFrame(rows).write_parquet(directory / "results.parquet")
    pl.DataFrame(walls).write_parquet(directory / "wall.parquet")
    return directory


@pytest.fixture(scope="module")
def lifetime_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = lifetime_sweep(tmp_path_factory.mktemp("lifetime") / "sweep")
    report.write(directory)
    return directory


def images(page: str) -> list[str]:
    return re.findall(r'<img src="([^"]*)"', page)


def headings(page: str) -> list[str]:
    return re.findall(r"<h2>([^<]*)</h2>", page)


def assert_self_contained(page: str) -> None:
    assert images(page) and all(src.startswith("data:image/png;base64,") for src in images(page))
    assert not re.search(r'(src|href)="(https?:)?//', page) and "<script" not in page and "<link" not in page
    assert "default-src 'none'" in page  # the browser may fetch nothing


# --- runs and sweeps ----------------------------------------------------------------------------


def test_a_run_gets_its_configuration_summary_time_series_and_erase_counts(run_dir: Path) -> None:
    page = (run_dir / "report.html").read_text()
    assert headings(page) == ["Summary", "Throughput and latency", "The drive over the run", "Erase counts", "Device",
                              "Configuration", "Configuration (resolved)"]
    # The config as given (the file, comments and all) and as the engine resolved it, both as TOML.
    assert TINY_TOML in html.unescape(page) and f"nandlab run {run_dir / 'rerun.toml'}" in html.unescape(page)
    assert "randwrite" in page and "over_provisioning = 0.2" in html.unescape(page)
    assert_self_contained(page)
    # Throughput and latency, and the drive, against data written, time and phase by phase; erase counts.
    assert len(images(page)) == 7
    assert {p.name for p in (run_dir / "figures").glob("*.png")} == {
        "throughput-latency-time.png", "throughput-latency-phases.png", "drive.png", "drive-time.png",
        "drive-phases.png", "erase-counts.png"}
    assert (run_dir / "config.json").exists() and (run_dir / "throughput_latency.png").exists()
    assert (run_dir / "rerun.toml").read_text() == TINY_TOML


def without_wall_time(summary: dict) -> dict:
    """A run's summary without the figures of the machine's speed."""
    if isinstance(summary, dict):
        return {k: without_wall_time(v) for k, v in summary.items() if k not in ("wall_seconds",
                                                                                  "requests_per_wall_second")}
    return [without_wall_time(v) for v in summary] if isinstance(summary, list) else summary


@pytest.mark.parametrize("given", ["file", "dict"])
def test_a_run_s_rerun_toml_runs_the_same_experiment_again(nandlab_cli, tmp_path: Path, given: str) -> None:
    """A config as a file with comments, or as a Python dict with a null, with a seed over its own:
    rerun.toml, given to ``nandlab run``, resolves to the same config and gives the same results."""
    from nandlab import api, output

    tiny = "# a comment\n" + TINY_TOML.replace("volume = 1.0\n", "volume = 0.25\n")
    (tmp_path / "tiny.toml").write_text(tiny)
    config = tmp_path / "tiny.toml" if given == "file" else {**tomllib.loads(tiny), "description": None}
    result = api.run(config, seed=11, progress=False)
    output.write(result, tmp_path / "out")
    again = nandlab_cli("run", tmp_path / "out" / "rerun.toml", "--json")
    assert again.exit_code == 0, again.output
    assert tomllib.loads((tmp_path / "out" / "rerun.toml").read_text())["seed"] == 11
    assert json.loads((tmp_path / "out" / "config.json").read_text()) == api.make_simulator(
        tmp_path / "out" / "rerun.toml").config
    assert without_wall_time(json.loads(again.stdout)) == without_wall_time(json.loads(output.to_json(result)))


def test_a_rerun_toml_runs_its_trace_from_any_directory(nandlab_cli, tmp_path: Path, monkeypatch) -> None:
    """Issue 40's third outside check: a trace given relative to where the run started was not found by
    `nandlab run OUT/rerun.toml` from elsewhere; its path is made absolute there."""
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "sub").mkdir()
    shutil.copy(root / "examples" / "traces" / "hot-cold.csv", tmp_path / "sub" / "hot-cold.csv")
    (tmp_path / "sub" / "t.toml").write_text('# mine\n[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n'
                                             '[[phase]]\nkind = "trace"\ntrace = "hot-cold.csv"\n')
    monkeypatch.chdir(tmp_path / "sub")
    first = nandlab_cli("run", "t.toml", "--out", tmp_path / "out", "--json")
    assert first.exit_code == 0, first.stderr
    monkeypatch.chdir(tmp_path)
    again = nandlab_cli("run", tmp_path / "out" / "rerun.toml", "--json")
    assert again.exit_code == 0, again.stderr
    assert without_wall_time(json.loads(again.stdout)) == without_wall_time(json.loads(first.stdout))


def test_the_default_experiment_s_rerun_toml_is_the_default_config() -> None:
    """Without a config (the built-in default) and with a seed: the TOML to run it again resolves to
    the same config (running the default takes half a minute; the test above runs what it gives)."""
    from nandlab import api

    given = api.make_simulator(None, seed=3)
    text = api.given_toml(*given.given_config)
    assert api.make_simulator(text).config == given.config and tomllib.loads(text)["seed"] == 3
    assert api.given_toml(*api.make_simulator(None).given_config) == _core.default_config_toml()


def test_the_report_command_rebuilds_it_and_prints_its_path(nandlab_cli, run_dir: Path, monkeypatch) -> None:
    figures = run_dir / "figures"
    (figures / "stale.png").write_bytes(b"")  # a figure an earlier report drew, and this one does not
    (figures / ".drawn").write_text((figures / ".drawn").read_text() + "stale.png\n")
    (figures / "mine.png").write_bytes(b"")  # a file the user put there
    opened = []
    monkeypatch.setattr(click, "launch", opened.append)
    result = nandlab_cli("report", run_dir, "--open")
    assert result.exit_code == 0 and result.stdout.strip() == str(run_dir / "report.html")
    assert opened == [str(run_dir / "report.html")]
    assert not (figures / "stale.png").exists() and (figures / "mine.png").exists()
    assert "stale.png" not in (figures / ".drawn").read_text()
    (figures / "mine.png").unlink()  # run_dir is shared


def test_a_one_axis_sweep_gets_bar_charts_series_and_erase_count_cdfs(one_axis_sweep: Path) -> None:
    page = (one_axis_sweep / "report.html").read_text()
    assert headings(page) == ["Axes", "Results", "Bar charts", "Time series", "Erase counts", "Sweep file",
                              "Base config"]
    assert "3 of 3 runs finished" in page and "[[axis]]" in page
    # The base config as TOML laid out as a config file, as the run report's configuration (it was JSON,
    # then an inline `phase = [{...}]`).
    base = page[page.index('id="base-config"'):]
    assert "[device]" in base and "[[phase]]" in base and "{&quot;" not in base[:2000]
    assert_self_contained(page)
    figures = {p.name for p in (one_axis_sweep / "figures").glob("*.png")}
    # The runs' series against data written and phase by phase (a read phase is no vertical line).
    assert figures == {"bars.png", "timeseries.png", "timeseries-phases.png", "erase-count-cdf.png"}
    assert len(images(page)) == 4


def test_a_sweep_that_records_its_own_figures_gets_bars_of_them(tmp_path: Path) -> None:
    """A sweep whose ``record`` keeps none of the headline figures (as docs/poster-states' keep
    RBER): its bar charts draw the figures it kept, not nothing."""
    text = QUICK.format(runs=2, volume=0.05).replace('name = "quick"', 'name = "quick"\nrecord = ["host_write_bytes"]')
    sweep.run(sweep.parse(text, "quick.toml"), tmp_path, workers=1)
    report.write(tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "Bar charts" in headings(page) and "host_write_bytes by seed" in page
    assert (tmp_path / "figures" / "bars.png").stat().st_size > 5_000


def test_a_lifetime_sweep_gets_faceted_heatmaps_series_and_its_failure(lifetime_dir: Path) -> None:
    page = (lifetime_dir / "report.html").read_text()
    assert headings(page) == ["Axes", "Results", "Failed runs", "Heatmaps", "Time series", "Sweep file", "Base config"]
    assert "47 finished, 1 failed" in page and "SimulationError: made up" in page and "most recent call last" in page
    assert_self_contained(page)
    # Numbers with the most points make the maps (reserve across, working set up); the rest facet them.
    assert {p.name for p in (lifetime_dir / "figures").glob("*.png")} == {
        "heatmap-lifetime_ratio-reserve-working_set.png", "heatmap-latency_ratio-reserve-working_set.png",
        "timeseries.png"}
    assert "a map per cell, read_level, seed" in page
    results = re.search(r'<section id="results">(.*?)</section>', page, re.S).group(1)
    assert results.count("<tr>") == 49 and 'class="text failed">failed' in results


def test_a_sweep_files_report_table_chooses_the_heatmaps(tmp_path: Path) -> None:
    table = '[report]\nheatmaps = [{ x = "working_set", y = "cell", value = "zombie_drive_writes" }]\n'
    directory = lifetime_sweep(tmp_path / "sweep", table)
    report.write(directory)
    maps = [p.name for p in (directory / "figures").glob("heatmap-*")]
    assert maps == ["heatmap-zombie_drive_writes-working_set-cell.png"]


@pytest.mark.parametrize("table, message", [
    ('heatmaps = [{ x = "reserve", y = "size", value = "lifetime_ratio" }]',
     "heatmaps #1: y = 'size' is no axis; the axes are cell, reserve, working_set, read_level, seed"),
    ('heatmaps = [{ x = "reserve", y = "cell", value = "lifetime" }]',
     "value = 'lifetime' is not a column of results.parquet (its headline figures: lifetime_ratio, "),
    ('heatmaps = [{ x = "reserve", y = "cell" }]', "heatmaps #1: expected { x = AXIS, y = AXIS, value = FIGURE }"),
    ('bars = true', "[report]: expected only heatmaps = "),
])
def test_a_wrong_report_table_is_refused_naming_the_file(nandlab_cli, tmp_path: Path, table: str, message: str) -> None:
    directory = lifetime_sweep(tmp_path / "sweep", f"[report]\n{table}\n")
    with pytest.raises(ValueError, match=re.escape(f"{directory / 'sweep.toml'}: [report]")) as error:
        report.write(directory)
    assert message in str(error.value)
    result = nandlab_cli("report", directory)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr


# --- every procedure's --out --------------------------------------------------------------------


@pytest.mark.parametrize("source, sections, figures", [
    ("docs/matrix/snia-slc", ["burst", "steady", "Die-count scaling", "Theoretical model", "Drive"], 3),
    ("docs/zombienand", ["Heatmaps", "Grid"], 2),
    ("docs/qualify/write-sections", ["Speed", "Sections"], 1),
    ("docs/qualify/pslc-dynamic-aged", ["Speed", "Phases", "Phases: aged (10 % of rated cycles)"], 1),
    ("docs/traces", ["Address reuse", "Composition"], 1),
])
def test_each_procedures_committed_output_gets_a_report(source: str, sections: list[str], figures: int,
                                                        tmp_path: Path) -> None:
    directory = tmp_path / "copy"
    shutil.copytree(ROOT / source, directory)
    page = report.write(directory).read_text()
    assert headings(page) == sections and len(images(page)) == figures
    assert_self_contained(page)


@pytest.mark.parametrize("command, sections", [
    (["test", "write-sections", "--device", "{tiny}"], ["Speed", "Sections"]),
    (["test", "pslc-fill", "--device", "{tiny}"], ["Speed", "Phases"]),
    (["matrix", "--device", "{tiny}", "--block-sizes", "4KiB,64KiB", "--mixes", "100/0,0/100", "--states", "burst",
      "--no-scaling", "--workers", "1"], ["burst", "Theoretical model", "Drive"]),
    (["trace", "stats", "{trace}"], ["Address reuse and request sizes", "Composition", "Figures", "Request sizes"]),
    (["chip", "endurance", "--chip", "MT29F2G08AAD", "--blocks", "5"], ["Endurance"]),
    (["chip", "latency", "--chip", "MT29F2G08AAD"], ["Latency over life"]),
])
def test_each_procedures_out_writes_its_report(nandlab_cli, tmp_path: Path, command: list[str],
                                               sections: list[str]) -> None:
    (tmp_path / "tiny.toml").write_text(TINY_TOML)
    (tmp_path / "trace.csv").write_text(MSR_TRACE)
    arguments = [a.format(tiny=tmp_path / "tiny.toml", trace=tmp_path / "trace.csv") for a in command]
    result = nandlab_cli(*arguments, "--out", tmp_path / "out", "--json")
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    assert headings(page) == sections
    assert_self_contained(page)


def test_several_traces_get_a_comparison_report_linking_each(nandlab_cli, tmp_path: Path) -> None:
    for name in ("a.csv", "b.csv"):
        (tmp_path / name).write_text(MSR_TRACE)
    result = nandlab_cli("trace", "stats", tmp_path / "a.csv", tmp_path / "b.csv", "--out", tmp_path / "out", "--json")
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "out" / "report.html").read_text()
    assert headings(page) == ["Address reuse", "Composition", "Each trace"]
    assert 'href="a.csv/report.html"' in page and (tmp_path / "out" / "b.csv" / "report.html").exists()


def test_a_directory_nandlab_did_not_write_is_refused(nandlab_cli, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a result")
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path}: not a directory nandlab wrote")) as error:
        report.write(tmp_path)
    assert "nandlab run, fio or trace replay (summary.json + timeseries.parquet)" in str(error.value)
    assert "nandlab chip endurance or latency (endurance.json or latency.json)" in str(error.value)
    assert not (tmp_path / "report.html").exists()
    result = nandlab_cli("report", tmp_path)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "found none of the files" in result.stderr
    assert nandlab_cli("report", tmp_path / "missing").exit_code == 2  # click: does not exist


DAMAGED = {  # files as nandlab names them, with contents it never writes; what the line says
    "a list for an object": ({"stats.json": "[]"}, "stats.json: a JSON list, where nandlab writes an object"),
    "a missing key": ({"stats.json": '{"x": 1}'},
                      "a damaged --out of nandlab trace stats: a file lacks the key 'format'"),
    "a number for an object": ({"endurance.json": '{"chip": 5}'}, "a damaged --out of nandlab chip endurance"),
    "not Parquet": ({"grid.parquet": "x"}, "grid.parquet: not a Parquet file nandlab wrote, expected a lifetime grid"),
    "not JSON": ({"summary.json": "{", "timeseries.parquet": ""}, "summary.json: not JSON"),
}


@pytest.mark.parametrize(("contents", "message"), DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_directory_is_refused_in_one_line(nandlab_cli, tmp_path: Path, contents, message: str) -> None:
    for name, text in contents.items():
        (tmp_path / name).write_text(text)
    result = nandlab_cli("report", tmp_path)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("nandlab: error: ") and result.stderr.count("\n") == 1 and message in result.stderr


TIMESERIES_DAMAGE = {  # a run's time series altered as nandlab never writes it; what the line says
    "NaN time": (lambda ts: ts.with_columns(sim_seconds=float("nan")), "column sim_seconds holds a value that is not"),
    "negative bytes": (lambda ts: ts.with_columns(host_write_bytes=-1), "column host_write_bytes holds a value"),
    "a struct column": (lambda ts: ts.with_columns(waf=pl.struct(a=pl.lit(1))), "column waf holds Struct"),
    "text for numbers": (lambda ts: ts.with_columns(iops=pl.lit("x")), "column iops holds String, expected numbers"),
    "floats for counts": (lambda ts: ts.with_columns(erases=pl.lit(0.5)),
                          "column erases holds Float64, expected whole"),
    "no time": (lambda ts: ts.drop("sim_seconds"), "no column sim_seconds"),
    "too many rows": (lambda ts: pl.concat([ts] * (250_000 // ts.height + 1)),
                      "rows, more than the 250,000 nandlab reads of a time series"),
}


@pytest.mark.parametrize(("alter", "message"), TIMESERIES_DAMAGE.values(), ids=TIMESERIES_DAMAGE.keys())
def test_a_damaged_time_series_is_refused_in_one_line(nandlab_cli, run_dir: Path, tmp_path: Path, alter,
                                                      message: str) -> None:
    d = tmp_path / "out"
    shutil.copytree(run_dir, d)
    path = d / "timeseries.parquet"
    alter(pl.read_parquet(path)).write_parquet(path)
    result = nandlab_cli("report", d)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"nandlab: error: {path}: ") and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_for_the_time_series_is_refused_at_once(nandlab_cli, run_dir: Path, tmp_path: Path) -> None:
    d = tmp_path / "out"
    shutil.copytree(run_dir, d)
    (d / "timeseries.parquet").unlink()
    os.mkfifo(d / "timeseries.parquet")
    result = nandlab_cli("report", d)
    assert result.exit_code == 2 and "not a Parquet file nandlab wrote, expected a time series" in result.stderr


def test_a_figure_that_is_not_a_png_is_refused_in_one_line(nandlab_cli, tmp_path: Path) -> None:
    assert nandlab_cli("chip", "latency", "--chip", "MT29F32G08QAA", "--out", tmp_path).exit_code == 0
    (tmp_path / "latency.png").write_bytes(b"GIF89a")
    result = nandlab_cli("report", tmp_path)
    assert (result.exit_code, result.stderr) == (2, f"nandlab: error: {tmp_path / 'latency.png'}: not a PNG image\n")


# --- in a browser -------------------------------------------------------------------------------


LAYOUT_PROBLEMS = """() => {
    const problems = [];
    const page = document.querySelector("main").getBoundingClientRect();
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth + 1) problems.push(`the page scrolls sideways: ${root.scrollWidth} px wide`);
    for (const box of document.querySelectorAll(".scroll")) {
        const r = box.getBoundingClientRect();
        if (getComputedStyle(box).overflowX !== "auto") problems.push("a table's box does not scroll across");
        if (r.right > page.right + 1) problems.push(`a table sticks out of the page by ${r.right - page.right} px`);
    }
    for (const th of document.querySelectorAll("th")) {
        // A header may wrap at its spaces, never inside a word (issue 40: sweep headers broke at underscores).
        const chars = [];  // every character of the header: its text node and offset
        const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode())
            for (let i = 0; i < node.textContent.length; i++) chars.push([node, i, node.textContent[i]]);
        const range = document.createRange();
        for (let start = 0; start < chars.length;) {
            if (/\\s/.test(chars[start][2])) { start++; continue; }
            let end = start;
            while (end < chars.length && !/\\s/.test(chars[end][2])) end++;
            range.setStart(chars[start][0], chars[start][1]);
            range.setEnd(chars[end - 1][0], chars[end - 1][1] + 1);
            const tops = new Set(Array.from(range.getClientRects(), r => Math.round(r.top)));
            if (tops.size > 1) problems.push(`header ${th.textContent}: a word broken across lines`);
            start = end;
        }
    }
    for (const item of document.querySelectorAll("dl.grid div")) {
        const [name, value] = [item.querySelector("dt"), item.querySelector("dd")].map(e => e.getBoundingClientRect());
        const box = item.getBoundingClientRect();
        if (value.right > box.right + 1) problems.push(`${item.textContent}: the value sticks out of its cell`);
        if (value.top < name.bottom && value.left < name.right + 4) problems.push(`${item.textContent}: overlap`);
    }
    return problems;
}"""
"""What a reader would see wrong in a page's layout: a page wider than the window (the list of sections did
not wrap at 700 px: issue 40's second outside check), tables beyond the page (or not scrolling), figures
of a drive (``Report.pairs``) running into each other or out of their cells."""


def open_in(browser, directory: Path, width: int = 1280) -> tuple[list[bool], list[str], list[str], list[str]]:
    """Opens DIRECTORY/report.html in a new page ``width`` px wide: whether each image rendered, the
    console errors, page errors and failed requests, every URL the page requested, and the problems
    of its layout (``LAYOUT_PROBLEMS``)."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("requestfailed", lambda r: errors.append(f"failed: {r.url} {r.failure}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto((directory / "report.html").as_uri(), wait_until="load")
    rendered = page.evaluate("() => Array.from(document.images, i => i.complete && i.naturalWidth > 0)")
    problems = page.evaluate(LAYOUT_PROBLEMS)
    page.close()
    return rendered, errors, requests, problems


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (scripts/test-all installs Debian's package)")
def test_chromium_renders_every_figure_without_errors_requests_or_overlaps(run_dir: Path, one_axis_sweep: Path,
                                                                  lifetime_dir: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from nandlab.cli import cli

    (tmp_path / "long.toml").write_text(TINY_TOML.replace('name = "randwrite"', f'name = "{"x_" * 125}"'))
    long_name_dir = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "long.toml"), "--out", str(long_name_dir), "--quiet"])
    assert result.exit_code == 0, result.output
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for directory in (run_dir, one_axis_sweep, lifetime_dir):
                rendered, errors, requests, problems = open_in(browser, directory)
                assert len(rendered) == len(images((directory / "report.html").read_text())) > 0
                assert all(rendered), (directory, rendered)
                assert errors == [] and problems == [], (errors, problems)
                # The file itself and its embedded images, nothing else.
                assert [r for r in requests if not r.startswith("data:")] == [(directory / "report.html").as_uri()]
            for width in (700, 1000):  # on a narrower screen too
                assert open_in(browser, run_dir, width)[3] == [] and open_in(browser, lifetime_dir, width)[3] == []
            # A phase name of 250 characters without a space (the third outside check: the page was 2,077 px).
            assert open_in(browser, long_name_dir, 700)[3] == []
            # A sweep's many long headers (zombie_drive_writes, ...) at 700 px: whole, in a box that scrolls.
            sweep_dir = lifetime_sweep(tmp_path / "sweep")
            report.write(sweep_dir)
            assert open_in(browser, sweep_dir, 700)[3] == []
        finally:
            browser.close()


@pytest.mark.parametrize("document", [
    {"seed": 1, "device": {"preset": "x", "errors": {"model": "vt"}},
     "phase": [{"name": "a", "volume": 1.0}, {"name": "b", "job": [{"x": 1}, {"x": 2, "sub": {"y": 3}}]}],
     "empty": [], "mixed": [1, {"a": 2}]},
    {"weird key": {"a.b": [{"c d": None, "e": 1}]}, "n": None, "t": {}},
], ids=["config", "odd keys"])
def test_a_config_shown_as_toml_reads_back_and_has_its_tables_as_sections(document: dict) -> None:
    """Arrays of tables as `[[phase]]` however short (tomli_w wrote a short one inline), nulls left out."""
    from nandlab import output

    text = output.as_toml(document)

    def kept(value):
        if isinstance(value, dict):
            return {k: kept(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [kept(v) for v in value if v is not None]
        return value

    assert tomllib.loads(text) == kept(document)
    assert "{ name" not in text and ("[[phase]]" in text) == ("phase" in document)
