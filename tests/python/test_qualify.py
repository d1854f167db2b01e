"""Swissbit AN2103's qualification procedures (`nandlab test ...`): the shapes the note describes.

The checks compare sections with each other as the note's words do (REFERENCE.md §5, the German
original in seeds/004): "constant", "slightly lower", "collapses", "the maximum", never against
numbers taken from nandlab's own output. Each procedure runs once per module on a 4 GiB drive.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import nandlab
from nandlab import api, qualify

CAPACITY = "4GiB"
SECTION_KEYS = {"name", "description", "mean_mbps", "min_mbps", "waf", "data_waf", "gib_start", "gib_end", "series"}
PHASE_KEYS = {"name", "mean_mbps", "min_mbps", "gib_start", "gib_end"}


@pytest.fixture(scope="module")
def write() -> qualify.Qualification:
    return qualify.write_sections("swissbit-standard", capacity=CAPACITY)


@pytest.fixture(scope="module")
def read() -> qualify.Qualification:
    return qualify.read_sections("swissbit-standard", capacity=CAPACITY)


def means(q: qualify.Qualification) -> list[float]:
    """Mean MB/s of each part, numbered from 1 as the note numbers its sections."""
    return [float("nan"), *(part["mean_mbps"] for part in q.parts)]


def speeds(q: qualify.Qualification, number: int) -> np.ndarray:
    """The smoothed series (MB/s) of section ``number`` (from 1)."""
    name = q.parts[number - 1]["name"]
    return q.series.filter(pl.col("section") == name)["mbps"].to_numpy()


def recovery(series: np.ndarray, level: float) -> float:
    """Where (share of the section) the speed first reaches ``level`` after its minimum; 1 if never."""
    low = int(np.argmin(series))
    above = np.nonzero(series[low:] >= level)[0]
    return (low + above[0]) / len(series) if above.size else 1.0


# --- write-sections (AN2103 Fig. 1) ----------------------------------------------------------


def test_write_sections_lie_side_by_side(write) -> None:
    assert [part["name"] for part in write.parts] == [s.name for s in qualify.WRITE_SECTIONS]
    capacity_gib = write.capacity_bytes / 2**30
    for number, part in enumerate(write.parts):
        assert part["gib_start"] == pytest.approx(number * capacity_gib)
        assert part["gib_end"] == pytest.approx((number + 1) * capacity_gib)
    gib = write.series["gib"].to_numpy()
    assert np.all(np.diff(gib) >= 0)


def test_section_means_are_bytes_over_simulated_time(write) -> None:
    # MB = 10^6 bytes, as the engine's own phase figures.
    phases = {phase["name"]: phase for phase in write.result.phases}
    for part in write.parts:
        assert part["mean_mbps"] == pytest.approx(phases[part["name"]]["mbps"], rel=1e-6)


def test_1_is_constant(write) -> None:
    # "Sie bleibt konstant über die gesamte Zeit."
    inner = speeds(write, 1)[1:-1]
    mean = means(write)[1]
    assert np.max(np.abs(inner - mean)) < 0.15 * mean


def test_2_is_slightly_below_1(write) -> None:
    # "eine leichte Reduktion der Schreibgeschwindigkeit"
    m = means(write)
    assert 0.6 * m[1] < m[2] < m[1]


def test_3_collapses_soon_and_rises_steeply_at_its_end(write) -> None:
    # "Bereits nach dem Schreiben einer kleinen Datenmenge bricht die Geschwindigkeit stark ein";
    # "kurz vor Ende des Abschnitts [steigt] die Schreibgeschwindigkeit exponentiell an".
    s3 = speeds(write, 3)
    assert np.argmin(s3) < len(s3) / 2
    assert s3.min() < 0.3 * means(write)[1]
    assert s3[-len(s3) // 10 :].max() > 3 * s3.min()


def test_4_starts_high_drops_to_3s_level_and_recovers_earlier_and_higher(write) -> None:
    m = means(write)
    s3, s4 = speeds(write, 3), speeds(write, 4)
    # "sofort zu einem höheren Durchsatz"
    assert s4[0] > m[1] and s4[0] > m[3]
    # "bricht ... nahezu auf den gleichen Wert wie in Abschnitt 3 ein"
    assert 0.5 < s4.min() / s3.min() < 2.0
    # "Die Schreibgeschwindigkeit steigt dann schneller und höher als in Abschnitt 3"
    level = m[1] / 2
    assert recovery(s4, level) < recovery(s3, level)
    assert s4[-len(s4) // 10 :].max() > s3[-len(s3) // 10 :].max()


def test_5_is_the_fastest(write) -> None:
    # "Hier wird nun die maximale Schreibgeschwindigkeit des Speichermediums erreicht."
    m = means(write)
    assert m[5] == max(m[1:])
    assert all(m[5] > m[n] for n in (1, 2, 3, 4, 6, 7))


def test_6_and_7_are_the_sustained_minimum(write) -> None:
    # "das echte Sustained-Random-Write, bei dem die minimale Schreibgeschwindigkeit erreicht wird"
    m = means(write)
    assert max(m[6], m[7]) < min(m[1], m[2], m[4], m[5])


def test_6_and_7_have_the_highest_waf(write) -> None:
    # "der Write Amplification Factor [fällt] so hoch aus, dass ..." GC at full load for good: the
    # data's WAF is highest in both. With translation-page write-backs counted, (7) is the highest;
    # (6) starts from (5)'s sequential layout, whose GC moves hit the map cache, so its total can
    # fall below (3)'s.
    data = [part["data_waf"] for part in write.parts]
    assert min(data[5], data[6]) > max(data[:5])
    waf = [part["waf"] for part in write.parts]
    assert waf[6] == max(waf)


# --- read-sections (AN2103 Fig. 6) -----------------------------------------------------------


def test_read_sections_order(read) -> None:
    # 1: "die geringste Leseleistung"; 2: "viel höher"; 4: "die maximale Leseleistung".
    m = means(read)
    assert m[4] > m[2] > m[3] > m[1]


def test_read_3_is_above_1_by_its_simpler_lookups(read) -> None:
    # "Durch das sequentielle Schreiben ist die Suche in den Zuordnungstabellen aber einfacher und die
    # Geschwindigkeit höher als in Abschnitt 1." Written in order, a translation page is one extent in
    # RAM: no translation-page reads.
    phases = {p["name"]: p for p in read.result.phases}
    random_written, sequentially_written = (phases[s.name] for s in qualify.READ_SECTIONS[0::2])
    assert random_written["map_reads"] > 0.5 * random_written["host_read_requests"]
    assert sequentially_written["map_reads"] == 0
    m = means(read)
    assert m[3] > 1.2 * m[1]


def test_read_sections_count_gib_read(read) -> None:
    assert [part["name"] for part in read.parts] == [s.name for s in qualify.READ_SECTIONS]
    assert read.parts[-1]["gib_end"] == pytest.approx(4 * read.capacity_bytes / 2**30)
    assert all(part["waf"] is None for part in read.parts), "reads alone write nothing: no WAF (null, not 0)"


# --- pslc-fill (AN2103 Figs. 2-5) ------------------------------------------------------------

needs_pslc = pytest.mark.skipif(
    not {"tlc-static-pslc", "tlc-dynamic-pslc"} <= set(nandlab.presets()),
    reason="the engine has no pSLC presets (tlc-static-pslc, tlc-dynamic-pslc) yet",
)


@pytest.fixture(scope="module")
def fills() -> Callable[..., qualify.Qualification]:
    """One run per (preset, aged, direct_write) the checks need, each on first use."""
    runs: dict = {}

    def fill(preset: str, aged: bool = False, direct_write: bool | None = None) -> qualify.Qualification:
        key = (preset, aged, direct_write)
        if key not in runs:
            runs[key] = qualify.pslc_fill(preset, capacity=CAPACITY, aged=aged, direct_write=direct_write)
        return runs[key]

    return fill


def fill_mbps(q: qualify.Qualification, after: int = 0) -> float:
    """MB/s over the fill from the start of phase ``after`` (0: the whole fill) to its end."""
    parts = q.parts[after:]
    seconds = sum((p["gib_end"] - p["gib_start"]) * 2**30 / (p["mean_mbps"] * 1e6) for p in parts)
    return (parts[-1]["gib_end"] - parts[0]["gib_start"]) * 2**30 / seconds / 1e6


def test_a_drive_without_a_cache_has_one_native_phase(fills) -> None:
    q = fills("swissbit-standard")
    assert [p["name"] for p in q.parts] == ["native"]
    assert set(q.series["phase"]) == {"native"}


@needs_pslc
def test_static_cache_is_fast_until_full_then_drops_sharply(fills) -> None:
    # Fig. 2: "Ist der schnelle pSLC-Cache gefüllt, bricht die Geschwindigkeit stark ein".
    q = fills("tlc-static-pslc", direct_write=False)
    assert q.parts[0]["name"] == "pslc" and len(q.parts) >= 2
    assert q.parts[0]["mean_mbps"] >= 2 * q.parts[1]["mean_mbps"]


def mbps_until(q: qualify.Qualification, gib: float) -> float:
    """MB/s over the fill's first ``gib`` GiB."""
    head = q.series.filter(pl.col("gib") <= gib)
    return head["gib"].max() * 2**30 / head["sim_seconds"].max() / 1e6 if head.height else 0.0


@needs_pslc
def test_an_aged_dynamic_cache_is_static_and_slower(fills) -> None:
    # Fig. 3: "Nach kurzer Nutzungszeit wird das Medium aber dauerhaft langsamer": after 10 % of the
    # rated cycles only the static part is left, so the fast phase ends far sooner and the span the
    # fresh drive writes at pSLC speed goes at folding speed. (Over a whole fill the aged drive is not
    # slower here: the fresh one must then fold its large cache too, and worn cells program faster.)
    fresh, aged = fills("tlc-dynamic-pslc"), fills("tlc-dynamic-pslc", aged=True)
    assert fresh.parts[0]["name"] == aged.parts[0]["name"] == "pslc"
    burst = fresh.parts[0]["gib_end"]
    assert aged.parts[0]["gib_end"] < burst / 4
    assert mbps_until(aged, burst) < 0.5 * mbps_until(fresh, burst)


@needs_pslc
def test_direct_write_is_faster_once_the_cache_is_full(fills) -> None:
    # Fig. 4: direct-write "erhöht bei sehr großen Datenmengen die Schreibgeschwindigkeit".
    direct = fills("tlc-static-pslc", direct_write=True)
    cached = fills("tlc-static-pslc", direct_write=False)
    assert direct.parts[0]["name"] == cached.parts[0]["name"] == "pslc"
    assert fill_mbps(direct, after=1) > fill_mbps(cached, after=1)


@needs_pslc
def test_dynamic_cache_with_direct_write_has_three_phases(fills) -> None:
    # Fig. 5: fast into pSLC, slow direct-write, slowest while the cache is folded.
    q = fills("tlc-dynamic-pslc", direct_write=True)
    assert [p["name"] for p in q.parts] == ["pslc", "direct", "folding"]
    assert q.parts[0]["mean_mbps"] > q.parts[1]["mean_mbps"] > q.parts[2]["mean_mbps"]


def test_fill_phases_from_the_pslc_columns(monkeypatch) -> None:
    """The classification on a made-up fill: 20 % into the cache, a folding blip, 30 % direct-write,
    then folding in bursts (rows alternate with direct-write rows)."""
    step = 4 * 2**30 // 200  # rows every 0.5 % of the 4 GiB drive
    classes = ["pslc"] * 40 + ["direct"] * 30 + ["folding"] + ["direct"] * 29 + ["folding", "direct", "folding"] * 33
    counters = ("host_write_bytes", "pslc_bytes", "folded_bytes", "direct_bytes")
    rows = [{"phase": 0, "sim_seconds": 0.0, **dict.fromkeys(counters, 0)}]
    pslc = 0
    for i, kind in enumerate(classes, 1):
        pslc += step if kind == "pslc" else 0
        seconds = {"pslc": 0.01, "direct": 0.05, "folding": 0.2}[kind]
        rows.append({
            "phase": 1,
            "sim_seconds": rows[-1]["sim_seconds"] + seconds,
            "host_write_bytes": i * step,
            "pslc_bytes": pslc,
            "folded_bytes": step if kind == "folding" else 0,
            "direct_bytes": step if kind == "direct" else 0,
        })
    fake = api.Result(summary={}, phases=[], timeseries=pl.DataFrame(rows), device={}, config={}, erase_counts=[])
    monkeypatch.setattr(qualify.api, "run", lambda *args, **kwargs: fake)
    q = qualify.pslc_fill("swissbit-standard", capacity="4GiB")
    gib = step / 2**30
    assert [(p["name"], round(p["gib_start"] / gib), round(p["gib_end"] / gib)) for p in q.parts] == [
        ("pslc", 0, 40),
        ("direct", 40, 100),
        ("folding", 100, 199),
    ]
    assert q.parts[0]["mean_mbps"] == pytest.approx(step / 0.01 / 1e6)


# --- the command -------------------------------------------------------------------------------


def test_write_sections_json(nandlab_cli) -> None:
    result = nandlab_cli("test", "write-sections", "--device", "swissbit-standard", "--capacity", CAPACITY, "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc.keys() == {"device", "capacity_bytes", "sections"}
    assert (doc["device"], doc["capacity_bytes"]) == ("swissbit-standard", 4 * 2**30)
    assert len(doc["sections"]) == 7
    for section in doc["sections"]:
        assert section.keys() == SECTION_KEYS
        assert all(len(point) == 2 for point in section["series"])
        assert section["gib_start"] <= section["series"][0][0] <= section["series"][-1][0] <= section["gib_end"]


def test_a_misspelt_preset_gets_a_suggestion(nandlab_cli) -> None:
    result = nandlab_cli("test", "write-sections", "--device", "swissbit-standrad")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("nandlab: error: ") and result.stderr.count("\n") == 1
    assert "did you mean swissbit-standard?" in result.stderr


def test_out_writes_series_table_json_and_png(nandlab_cli, tmp_path: Path) -> None:
    # A TOML file as the device: its [device] and [ftl] count, its phases do not.
    device = tmp_path / "drive.toml"
    device.write_text('[device]\npreset = "swissbit-standard"\n\n[[phase]]\nvolume = 5.0\n')
    out = tmp_path / "read"
    result = nandlab_cli("test", "read-sections", "--device", device, "--capacity", CAPACITY, "--out", out, "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert json.loads((out / "result.json").read_text()) == doc
    series = pl.read_parquet(out / "series.parquet")
    assert {"section", "gib", "mbps"} <= set(series.columns)
    assert series.height == sum(len(section["series"]) for section in doc["sections"])
    table = pl.read_csv(out / "sections.csv")
    assert table["name"].to_list() == [section["name"] for section in doc["sections"]]
    assert (out / "read-sections.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pslc_fill_table_and_out(nandlab_cli, tmp_path: Path) -> None:
    preset = "tlc-static-pslc" if "tlc-static-pslc" in nandlab.presets() else "swissbit-standard"
    result = nandlab_cli("test", "pslc-fill", "--device", preset, "--capacity", CAPACITY, "--out", tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "Phase" in result.stdout and "MB/s" in result.stdout
    doc = json.loads((tmp_path / "result.json").read_text())
    assert doc.keys() == {"device", "capacity_bytes", "series", "phases"}
    assert all(phase.keys() == PHASE_KEYS for phase in doc["phases"])
    assert pl.read_csv(tmp_path / "phases.csv").height == len(doc["phases"])
    assert (tmp_path / "pslc-fill.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
