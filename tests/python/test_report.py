"""Reports (issue 7): every kind of result directory gets one self-contained report.html (figures
embedded, nothing fetched) with its tables and figures, also as PNG files; a directory nandlab did not
write is refused clearly; and a real browser (headless Chromium) renders a report with every figure
and no console error."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from test_sweep import QUICK

from nandlab import report, sweep

ROOT = Path(__file__).resolve().parents[2]
# The sweep tests' small study with a second axis: 3 seeds x 2 queue depths.
SWEEP = QUICK.format(runs=3, volume=0.1) + """
[[axis]]
name = "queue_depth"
key = "phase.1.queue_depth"
values = [1, 32]
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from click.testing import CliRunner
    from conftest import TINY_TOML

    from nandlab.cli import cli

    directory = tmp_path_factory.mktemp("run")
    config = directory / "tiny.toml"
    config.write_text(TINY_TOML)
    result = CliRunner().invoke(cli, ["run", str(config), "--out", str(directory / "out"), "--quiet"])
    assert result.exit_code == 0, result.output
    return directory / "out"


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("sweep")
    sweep.run(sweep.parse(SWEEP, "tiny.toml"), directory, workers=2)
    report.write(directory)
    return directory


def images(page: str) -> list[str]:
    return re.findall(r'<img src="([^"]*)"', page)


def test_a_run_gets_its_report_from_the_cli(run_dir: Path) -> None:
    page = (run_dir / "report.html").read_text()
    assert "<h2>Summary</h2>" in page and "randwrite" in page and "Configuration (resolved)" in page
    assert len(images(page)) == 2 and all(src.startswith("data:image/png;base64,") for src in images(page))
    assert (run_dir / "figures" / "drive.png").read_bytes()[:4] == b"\x89PNG"
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing to fetch


def test_a_sweep_report_has_heatmaps_results_and_time_series(sweep_dir: Path) -> None:
    page = (sweep_dir / "report.html").read_text()
    assert "<h2>Results</h2>" in page and "6 of 6 runs finished" in page and "[[axis]]" in page
    names = {p.name for p in (sweep_dir / "figures").iterdir()}
    assert {"heatmap-waf.png", "heatmap-iops.png", "timeseries.png"} <= names
    assert len(images(page)) == len(names)


@pytest.mark.parametrize("source", ["docs/matrix/snia-slc", "docs/zombienand", "docs/qualify/write-sections"])
def test_every_procedure_directory_gets_a_report(source: str, tmp_path: Path) -> None:
    directory = tmp_path / "copy"
    shutil.copytree(ROOT / source, directory)
    page = report.write(directory).read_text()
    assert images(page) and "<table>" in page


def test_a_foreign_directory_is_refused(nandlab_cli, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a directory nandlab wrote"):
        report.write(tmp_path)
    result = nandlab_cli("report", tmp_path)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "expected the --out of one of" in result.stderr


def test_chromium_renders_every_figure_without_errors(run_dir: Path, sweep_dir: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on this machine (scripts/test-all installs Debian's package)")
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            for directory in (run_dir, sweep_dir):
                page = browser.new_page()
                errors: list[str] = []
                requests: list[str] = []
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("request", lambda r: requests.append(r.url))
                url = (directory / "report.html").as_uri()
                page.goto(url)
                page.wait_for_load_state("load")
                rendered = page.evaluate(
                    "() => Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)")
                assert rendered and all(rendered), (directory, rendered)
                assert errors == [], errors
                assert [r for r in requests if not r.startswith("data:")] == [url]
                page.close()
        finally:
            browser.close()
