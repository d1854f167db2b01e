"""scripts/check-docs: a stated figure is found by the words around it, compared with the fresh one as the
document prints it, and a figure edited, a sentence reworded, a table cell changed or a committed result
file that no longer matches each make a finding with the file and line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from check_docs import check  # noqa: E402
from check_docs.model import Cell, Claim, SameFiles, Table, Value as V  # noqa: E402

RESULTS = {"run": {"phases": [{"name": "mix", "waf": 9.3118, "iops": 4389.4, "read_latency_us": {"p999": 4657.151}}],
                   "uber": 5.2e-28, "peak_rss_mib": 851.7}}
DOC = """# A page

On the default experiment it costs 11 %: WAF 9.31 →
10.35, 4,389 IOPS, read p99.9 4,657 µs, UBER 5.20e-28, 852 MiB at the peak.

| run | WAF | IOPS / p99.9 |
|---|---|---|
| mix | 9.31 | 4,389 / 4,657 |
"""
CLAIM = Claim("doc.md", "WAF {waf} → 10.35, {iops} IOPS, read p99.9 {p999} µs, UBER {uber}, {mib} MiB at the peak",
              {"waf": V("run", "phases.mix.waf", ".2f"), "iops": V("run", "phases.mix.iops", ",.0f"),
               "p999": V("run", "phases.mix.read_latency_us.p999", ",.0f"), "uber": V("run", "uber", ".2e"),
               "mib": V("run", "peak_rss_mib", ",.0f", tol=0.05)})
TABLE = Table("doc.md", ["run", "WAF", "IOPS / p99.9"], {
    "mix": {"WAF": V("run", "phases.mix.waf", ".2f"),
            "IOPS / p99.9": Cell({"iops": V("run", "phases.mix.iops", ",.0f"),
                                  "p": V("run", "phases.mix.read_latency_us.p999", ",.0f")}, "{iops} / {p}")}})


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(check, "ROOT", tmp_path)
    (tmp_path / "doc.md").write_text(DOC)
    return tmp_path / "doc.md"


def test_figures_as_stated_pass_across_line_breaks(doc: Path) -> None:
    assert check.check_claim(CLAIM, RESULTS) == []
    assert check.check_table(TABLE, RESULTS) == []


@pytest.mark.parametrize("edit, line, stated, measured", [
    ("4,389 IOPS", "4,390 IOPS", "4", "4,390"),
    ("4,657 µs", "4,675 µs", "4", "4,675"),
    ("5.20e-28", "5.2e-28", "4", "5.2e-28"),
])
def test_an_edited_figure_is_a_finding_naming_file_and_line(doc: Path, edit: str, line: str, stated: str,
                                                             measured: str) -> None:
    doc.write_text(DOC.replace(edit, line))
    [finding] = check.check_claim(CLAIM, RESULTS)
    assert finding.where == f"doc.md:{stated}" and finding.stated == measured
    assert str(finding).startswith(f"doc.md:{stated}: stated {measured}, measured ")


def test_a_measured_figure_holds_within_its_tolerance_only(doc: Path) -> None:
    doc.write_text(DOC.replace("852 MiB", "880 MiB"))
    assert check.check_claim(CLAIM, RESULTS) == []
    doc.write_text(DOC.replace("852 MiB", "950 MiB"))
    [finding] = check.check_claim(CLAIM, RESULTS)
    assert finding.stated == "950" and finding.measured == "852"


def test_a_reworded_sentence_or_a_changed_cell_is_a_finding(doc: Path) -> None:
    doc.write_text(DOC.replace("at the peak", "at most"))
    [finding] = check.check_claim(CLAIM, RESULTS)
    assert "not found" in finding.stated
    doc.write_text(DOC.replace("| 4,389 / 4,657 |", "| 4,389 / 4,567 |"))
    [finding] = check.check_table(TABLE, RESULTS)
    assert finding.where == "doc.md:8" and (finding.stated, finding.measured) == ("4,567", "4,657")


def test_a_bound_holds_while_the_figure_stays_within_it(doc: Path) -> None:
    within = Claim("doc.md", "it costs {pct} %", {"pct": V("run", "phases.mix.waf", bound="at most")})
    assert check.check_claim(within, RESULTS) == []  # 9.31 ≤ 11
    doc.write_text(DOC.replace("costs 11 %", "costs 9 %"))
    assert len(check.check_claim(within, RESULTS)) == 1


def test_committed_results_must_be_what_the_run_writes_now(doc: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "result.json").write_text(json.dumps({"waf": 9.31, "wall_seconds": 1.0}))
    (tmp_path / "committed.json").write_text(json.dumps({"waf": 9.31, "wall_seconds": 7.0}))
    files = SameFiles("doc.md", "written", [("committed.json", "result.json")])
    results = {"written": {"out": str(fresh)}}
    assert check.check_files(files, results) == []  # wall-clock figures aside
    (tmp_path / "committed.json").write_text(json.dumps({"waf": 9.32}))
    [finding] = check.check_files(files, results)
    assert "waf" in finding.measured and "9.32" in finding.measured


def test_the_command_lists_its_runs_and_every_claim_names_a_known_run() -> None:
    listed = subprocess.run(["bash", str(ROOT / "scripts" / "check-docs"), "--list"], capture_output=True, text=True,
                            cwd=ROOT)
    assert listed.returncode == 0, listed.stderr
    assert "default" in listed.stdout and "README.md" in listed.stdout
    from check_docs.claims import registry

    r = registry()
    for c in r.checks:
        assert c.runs() <= set(r.runs), c


def test_runs_that_want_the_trace_samples_are_skipped_where_there_are_none(monkeypatch) -> None:
    results = {"stats": check.RunFailed("no such file ../shared/traces/msr_rsrch_1.csv"),
               "broken": check.RunFailed("exited 2: nandlab: error: something else"), "fine": {"iops": 1}}
    monkeypatch.setattr(check, "SAMPLES", "no-such-folder/traces")
    assert check.without_samples(results) == ["stats"]
    monkeypatch.setattr(check, "SAMPLES", ".")
    assert check.without_samples(results) == []
