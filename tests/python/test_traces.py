"""`nandlab trace stats` and `nandlab.traces` on the real samples in ../shared/traces (record counts
and read/write splits as awk counts them; the Rust tests check every sample and format)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from nandlab import traces

SAMPLES = next(
    (p / "shared" / "traces" for p in Path(__file__).resolve().parents if (p / "shared" / "traces" / "SOURCES.md").is_file()),
    None,
)
CONTRACT = {"format", "records", "reads", "writes", "read_bytes", "write_bytes"}
pytestmark = pytest.mark.skipif(SAMPLES is None, reason="shared/traces/ (the trace samples) not found above the checkout")


@pytest.mark.parametrize(
    ("name", "format", "records", "reads", "writes"),
    [
        ("msr_rsrch_1.csv", "msr", 13780, 42, 13738),
        ("tencent_cbs_sample_50k.csv", "tencent", 50000, 24521, 25479),
        ("blkparse_ycsb_ext4_msclaudz.txt", "blkparse", 9887, 9039, 848),
        ("ssdsim_example_financial1_first10k.ascii", "ssdsim", 10000, 4077, 5923),
    ],
)
def test_trace_stats_json(nandlab_cli, name: str, format: str, records: int, reads: int, writes: int) -> None:
    result = nandlab_cli("trace", "stats", SAMPLES / name, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert CONTRACT <= doc.keys()
    assert (doc["format"], doc["records"], doc["reads"], doc["writes"]) == (format, records, reads, writes)


def test_table_iii_composition_is_in_percent_of_bytes() -> None:
    s = traces.stats(SAMPLES / "msr_hm_0_first1000.csv")
    assert s["read_percent"] == pytest.approx(100 * s["read_bytes"] / (s["read_bytes"] + s["write_bytes"]))
    assert s["write_random_percent"] + s["write_sequential_percent"] == pytest.approx(100)
    # The reuse CDF rises from (0, 0) to (1, 1), steepest first.
    cdf = s["reuse_cdf"]
    assert cdf[0] == [0.0, 0.0] and cdf[-1][0] == pytest.approx(1) and cdf[-1][1] == pytest.approx(1)
    slopes = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(cdf, cdf[1:]) if b[0] > a[0]]
    assert all(x >= y - 1e-9 for x, y in zip(slopes, slopes[1:]))


def test_gzip_and_explicit_format(tmp_path: Path) -> None:
    packed = tmp_path / "trace.gz"
    packed.write_bytes(gzip.compress((SAMPLES / "umass_websearch1_first10.spc").read_bytes()))
    assert traces.stats(packed)["records"] == traces.stats(SAMPLES / "umass_websearch1_first10.spc", format="umass")[
        "records"
    ] == 10


def test_bad_input_is_one_line_naming_the_line(nandlab_cli, tmp_path: Path) -> None:
    lines = (SAMPLES / "msr_hm_0_first1000.csv").read_text().splitlines()
    lines[41] = lines[41].replace(",Write,", ",Wrote?,").replace(",Read,", ",Rear?,")
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    result = nandlab_cli("trace", "stats", bad, "--format", "msr")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and ":42:" in result.stderr and "expected" in result.stderr, result.stderr
    skipped = nandlab_cli("trace", "stats", bad, "--format", "msr", "--skip-bad", "--json")
    assert json.loads(skipped.stdout)["skipped_lines"] == 1
    junk = tmp_path / "junk.txt"
    junk.write_text("not a trace\n")
    result = nandlab_cli("trace", "stats", junk)
    assert result.exit_code == 2 and "tried msr" in result.stderr


def test_out_writes_json_csv_and_png(nandlab_cli, tmp_path: Path) -> None:
    out = tmp_path / "stats"
    result = nandlab_cli("trace", "stats", SAMPLES / "fiu_mail_cheetah_sample.clean.txt", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Composition" in result.stdout
    for name in ("stats.json", "size_histogram.csv", "reuse_cdf.csv", "trace-stats.png"):
        assert (out / name).stat().st_size > 0


def test_replay_moves_the_traces_bytes(nandlab_cli) -> None:
    trace = SAMPLES / "fiu_mail_cheetah_sample.clean.txt"
    s = traces.stats(trace)
    result = nandlab_cli(
        "trace", "replay", trace, "--device", "swissbit-standard", "--capacity", "4GiB", "--queue-depth", "8", "--json"
    )
    assert result.exit_code == 0, result.output
    phase = json.loads(result.stdout)["phases"][0]
    assert (phase["kind"], phase["host_read_bytes"], phase["host_write_bytes"]) == (
        "trace",
        s["read_bytes"],
        s["write_bytes"],
    )


def test_replay_options_are_checked_by_the_engine(nandlab_cli) -> None:
    trace = SAMPLES / "msr_hm_0_first1000.csv"
    result = nandlab_cli(
        "trace", "replay", trace, "--device", "swissbit-standard", "--capacity", "4GiB", "--timed", "--queue-depth", "4"
    )
    assert result.exit_code == 2 and "replay" in result.stderr and "queue_depth" in result.stderr


def test_several_traces_give_one_row_each_and_their_reuse_curves(nandlab_cli, tmp_path: Path) -> None:
    files = [SAMPLES / "msr_hm_0_first1000.csv", SAMPLES / "umass_websearch1_first10.spc"]
    result = nandlab_cli("trace", "stats", *files, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [t["records"] for t in doc["traces"]] == [1000, 10]
    out = tmp_path / "both"
    result = nandlab_cli("trace", "stats", *files, "--out", out)
    assert result.exit_code == 0 and "Table III" in result.stdout
    assert (out / "reuse.png").stat().st_size > 0 and (out / "composition.csv").read_text().count("\n") == 3
    assert (out / "msr_hm_0_first1000.csv" / "stats.json").is_file()
