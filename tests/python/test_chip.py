"""The chip test bench: `nandlab chip endurance|latency|list` and the chipbench API."""

import json
from pathlib import Path

import polars as pl

from nandlab import chipbench


def test_endurance_json_has_the_lifetimes_against_the_rating(nandlab_cli) -> None:
    result = nandlab_cli("chip", "endurance", "--chip", "MT29F2G08AAD", "--blocks", "50", "--seed", "3", "--json")
    assert result.exit_code == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["nominal_endurance"] == 100_000
    assert len(run["lifetimes"]) == 50
    # Desnoyers: lifetimes far above the rating, often ~100×, a few outliers near it.
    median = sorted(run["lifetimes"])[25]
    assert 10 * 100_000 < median < 200 * 100_000
    again = json.loads(nandlab_cli("chip", "endurance", "--chip", "MT29F2G08AAD", "--blocks", "50", "--seed", "3", "--json").stdout)
    assert again["lifetimes"] == run["lifetimes"]


def test_cold_and_full_block_cycling_shorten_life() -> None:
    base = chipbench.endurance("MT29F4G08AAC", blocks=20, seed=1)["lifetimes"]
    cold = chipbench.endurance("MT29F4G08AAC", blocks=20, seed=1, temperature_c=5)["lifetimes"]
    full = chipbench.endurance("MT29F4G08AAC", blocks=20, seed=1, pattern="full-block")["lifetimes"]
    hot = chipbench.endurance("MT29F4G08AAC", blocks=20, seed=1, temperature_c=80)["lifetimes"]
    for b, c, f, h in zip(base, cold, full, hot):
        assert abs(c / b - 0.5) < 0.01 and abs(f / b - 0.5) < 0.01 and h == b


def test_latency_json_reports_worst_typical_best_and_the_datasheet(nandlab_cli) -> None:
    result = nandlab_cli("chip", "latency", "--chip", "MT29F8G08MAAWC", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    for op in ("read_us", "program_us", "erase_us"):
        assert {"worst", "typical", "best"} <= doc[op].keys()
    assert {"read_us", "program_us", "erase_us"} <= doc["datasheet"].keys()
    assert doc["read_us"]["worst"] == doc["read_us"]["best"]  # read latency does not move with wear
    assert doc["program_us"]["best"] <= doc["program_us"]["worst"] / 2
    assert doc["erase_us"]["worst"] >= 2 * doc["erase_us"]["best"]


def test_endurance_out_writes_parquet_and_png(nandlab_cli, tmp_path: Path) -> None:
    result = nandlab_cli("chip", "endurance", "--chip", "snia-slc", "--blocks", "5", "--out", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert "Nominal" in result.stdout
    assert pl.read_parquet(tmp_path / "lifetimes.parquet")["lifetime"].to_list() == [100_000] * 5
    assert pl.read_parquet(tmp_path / "latency_trace.parquet").height > 100
    assert (tmp_path / "endurance.png").stat().st_size > 10_000


def test_latency_out_writes_a_png(nandlab_cli, tmp_path: Path) -> None:
    result = nandlab_cli("chip", "latency", "--chip", "MT29F32G08QAA", "--out", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "latency.json").read_text())["datasheet"]["program_us"] == 900
    assert (tmp_path / "latency.png").stat().st_size > 10_000


def test_bad_chip_settings_are_one_line_and_exit_code_2(nandlab_cli) -> None:
    result = nandlab_cli("chip", "latency", "--chip", "MT29F2G08AD")
    assert result.exit_code == 2
    assert result.stderr == "nandlab: error: --chip: unknown chip `MT29F2G08AD`, did you mean `MT29F2G08AAD`?\n"
    result = nandlab_cli("chip", "endurance", "--chip", "MT29F2G08AAD", "--temperature", "300")
    assert result.exit_code == 2 and "--temperature" in result.stderr


def test_every_table_1_chip_is_there() -> None:
    names = chipbench.chips()
    for name in ("NAND128W3A2BN", "HY27US08121A", "MT29F2G08AAD", "MT29F4G08AAC", "NAND08GW3B2C",
                 "MT29F8G08MAAWC", "29F16G08CANC1", "MT29F32G08QAA"):
        assert name in names
