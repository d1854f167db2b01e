"""SNIA-style matrices (`nandlab matrix`, issue 6): the tutorial's shapes (REFERENCE.md §2, the text
in seeds/001) on its SLC and MLC dies, the PTS steady-state rule, and the command's contract.

The drives are 1 GiB (``--capacity``), with two block sizes; each matrix runs once per module.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import nandlab
from nandlab import matrix, qualify

CAPACITY = "1GiB"
MIB = 2**20
LARGE = MIB
CELL_KEYS = {"read_percent", "block_size", "iops", "mbps", "theoretical_mbps", "percent_of_theoretical", "waf"}
STEADY_KEYS = CELL_KEYS | {"rounds", "steady"}
SCALING_KEYS = {"dies", "read_percent", "block_size", "mbps", "theoretical_mbps", "percent_of_theoretical"}


@pytest.fixture(scope="module")
def slc() -> matrix.Matrix:
    return matrix.run("snia-slc", capacity=CAPACITY, block_sizes=[4096, LARGE])


@pytest.fixture(scope="module")
def mlc_scaling() -> matrix.Matrix:
    return matrix.run("snia-mlc", capacity=CAPACITY, block_sizes=[LARGE], states=[])


def series(m: matrix.Matrix, read_percent: int, key: str) -> list[float]:
    """A scaling curve (``mbps`` or ``theoretical_mbps``) in order of die count."""
    points = sorted((p for p in m.scaling if p["read_percent"] == read_percent), key=lambda p: p["dies"])
    return [p[key] for p in points]


# --- the PTS steady-state rule, on made-up rounds ------------------------------------------------


def test_a_flat_series_is_steady_once_a_window_is_full() -> None:
    assert not matrix.is_steady([100, 104, 97, 101])  # four rounds are not a window
    assert matrix.is_steady([100, 104, 97, 101, 99])
    # A fast start (a fresh write buffer, free blocks), then flat: steady at the fifth flat round.
    rounds = [230, 160, 100, 104, 97, 101, 99, 102]
    assert matrix.steady_round(rounds) == 7


def test_a_drifting_series_is_not_steady_by_its_slope() -> None:
    # 3 % more each round: every round within ±10 % of the mean and max - min 12 % of it, but the
    # fitted line climbs 15 % of the mean over the window.
    rounds = [100 * 1.03**k for k in range(25)]
    window = np.array(rounds[:5])
    assert np.all(np.abs(window - window.mean()) <= 0.1 * window.mean())
    assert np.ptp(window) <= 0.2 * window.mean()
    assert not matrix.is_steady(window)
    assert matrix.steady_round(rounds) is None


def test_an_oscillating_series_is_not_steady_by_its_excursion() -> None:
    # Flat on average (slope near 0), but rounds swing ±12 %: max - min is 24 % of the mean.
    rounds = [88, 112] * 12
    window = np.array(rounds[:5])
    assert abs(np.polyfit(np.arange(5), window, 1)[0]) * 5 <= 0.1 * window.mean()
    assert not matrix.is_steady(window)
    assert matrix.steady_round(rounds) is None


def test_a_series_that_settles_is_steady_where_it_settles() -> None:
    # Rounds 1-8 swing, 9-14 are flat: the first window without a swing is rounds 9-13.
    rounds = [80, 120] * 4 + [100, 101, 99, 100, 100, 100]
    assert matrix.steady_round(rounds) == 13
    assert matrix.is_steady(rounds[8:13]) and not matrix.is_steady(rounds[7:12])


# --- the theoretical model -------------------------------------------------------------------


def resolved(preset: str, **device: object) -> dict:
    config = qualify.device_config(preset, CAPACITY)
    config["device"].update(device)
    return nandlab.make_simulator({**config, "phase": [{"kind": "trim", "volume": 1.0}]}).config


def test_theoretical_bandwidth_is_the_tutorials_model() -> None:
    # Per die: page / (tR + page at 400 MB/s) and page / (tPROG + page at 400 MB/s).
    transfer = 4096 / 400e6
    one_die = resolved("snia-slc", channels=1, chips_per_channel=1)
    read, write = 4096 / (25e-6 + transfer) / 1e6, 4096 / (200e-6 + transfer) / 1e6
    assert matrix.theoretical_mbps(one_die, 100) == pytest.approx(read)
    assert matrix.theoretical_mbps(one_die, 0) == pytest.approx(write)
    # A mix: each byte takes its share of a read's and a write's time.
    assert matrix.theoretical_mbps(one_die, 75) == pytest.approx(1 / (0.75 / read + 0.25 / write))
    # 16 dies on SATA-II: every mix at the host link's 300 MB/s.
    drive = resolved("snia-slc")
    assert [matrix.theoretical_mbps(drive, r) for r, _ in matrix.MIXES] == pytest.approx([300.0] * 5)
    # On a PCIe x4 link the four 400 MB/s channels cap the reads (16 × 116 MB/s would be more).
    nvme = resolved("snia-slc", interface="nvme-gen3-x4")
    assert matrix.theoretical_mbps(nvme, 100) == pytest.approx(1600.0)
    assert matrix.theoretical_mbps(nvme, 0) == pytest.approx(16 * write)


# --- the tutorial's shapes ---------------------------------------------------------------------


@pytest.mark.parametrize("read_percent", [100, 0], ids=["reads", "writes"])
@pytest.mark.parametrize("key", ["mbps", "theoretical_mbps"], ids=["simulated", "theoretical"])
def test_bandwidth_grows_with_die_count_until_the_link_saturates(slc, read_percent, key) -> None:
    # "Bandwidth Depends on Die Count": doubling the dies doubles the bandwidth until the host link
    # (SATA-II, 300 MB/s) is full; from there on it stays at the link.
    assert [p["dies"] for p in slc.scaling if p["read_percent"] == read_percent] == [1, 2, 4, 8, 16]
    link = slc.theoretical["link_mbps"]
    curve = series(slc, read_percent, key)
    full = next(i for i, mbps in enumerate(curve) if mbps >= 0.97 * link)
    assert full >= 1  # one die does not fill the link
    for before, after in zip(curve[:full], curve[1 : full + 1]):
        assert after > 1.25 * before
    for before, after in zip(curve[: full - 1], curve[1:full]):
        assert after == pytest.approx(2 * before, rel=0.05)  # below the link: twice the dies, twice the MB/s
    assert all(0.97 * link <= mbps <= 1.001 * link for mbps in curve[full:])


def test_simulated_scaling_is_near_the_theoretical(slc) -> None:
    # The engine overlaps a page's transfer with the program before it (cache program), so its
    # writes reach page / tPROG: 5 % above the model, which adds the transfer.
    for point in slc.scaling:
        assert 95 <= point["percent_of_theoretical"] <= 110, point


def test_mlc_needs_more_dies_than_slc(slc, mlc_scaling) -> None:
    # "Greater R/W imbalance in MLC requires more banks": 16 SLC dies fill SATA-II with writes,
    # 16 MLC dies not half of it; MLC reads fill it from 8 dies.
    link = slc.theoretical["link_mbps"]
    assert series(slc, 0, "mbps")[-1] >= 0.97 * link
    assert series(mlc_scaling, 0, "mbps")[-1] < 0.5 * link
    assert series(mlc_scaling, 100, "mbps")[3] >= 0.97 * link
    assert mlc_scaling.states == {}


def test_steady_state_reports_the_round_it_became_steady(slc) -> None:
    for cell in slc.cells("steady"):
        rounds = cell["round_mbps"]
        assert cell["steady"] is True
        assert cell["rounds"] == cell["steady_round"] == len(rounds)
        assert matrix.WINDOW <= cell["steady_round"] <= matrix.MAX_ROUNDS
        assert matrix.steady_round(rounds) == cell["rounds"]  # the first window that passed
        assert cell["mbps"] == pytest.approx(np.mean(rounds[-matrix.WINDOW :]))
    # Writes start fast (free blocks, an empty write buffer) and take more than five rounds.
    assert slc.cell("steady", 0, 4096)["steady_round"] > matrix.WINDOW


def test_a_cell_not_steady_within_max_rounds_is_flagged() -> None:
    # The first round of random writes after preconditioning is fast, so five rounds cannot pass.
    m = matrix.run("snia-slc", capacity=CAPACITY, mixes=[(0, 100)], block_sizes=[4096], states=["steady"],
                   max_rounds=5, scaling=False)
    (cell,) = m.cells("steady")
    assert (cell["steady"], cell["steady_round"], cell["rounds"]) == (False, None, 5)
    assert m.table()["steady"].to_list() == [False]


def test_steady_state_writes_are_far_below_burst(slc) -> None:
    # Continuous writing on a full drive: garbage collection takes most of the flash's time.
    for size in (4096, LARGE):
        assert slc.cell("steady", 0, size)["mbps"] < 0.5 * slc.cell("burst", 0, size)["mbps"]
        assert slc.cell("steady", 0, size)["waf"] > 2


def mix_mbps(m: matrix.Matrix, state: str, size: int) -> dict[int, float]:
    """MB/s by read percentage, for one state and block size."""
    return {r: m.cell(state, r, size)["mbps"] for r, _ in matrix.MIXES}


def test_mixed_4k_is_below_both_pure_cases(slc) -> None:
    # "Read/Write Collisions -> Drop in Mixed Performance": the SNIA presets' 2009 controller takes
    # commands in order and runs a die's operations first come, first served, so a read behind a
    # program (or GC) holds up every command after it. 75/25, 50/50 and 25/75 are each below both
    # 100/0 and 0/100, in steady state and in burst.
    for state in ("steady", "burst"):
        mbps = mix_mbps(slc, state, 4096)
        assert max(mbps[75], mbps[50], mbps[25]) < min(mbps[100], mbps[0]), (state, mbps)


def test_a_reordering_controller_has_no_collisions() -> None:
    # The same drive with NCQ reordering and read priority: a mix lies between the pure cases.
    device = {"device": {"preset": "snia-slc"}, "ftl": {"command_order": "reordered", "read_priority": True}}
    m = matrix.run(device, capacity=CAPACITY, mixes=[(50, 50), (0, 100)], block_sizes=[4096],
                   states=["steady"], scaling=False)
    assert m.cell("steady", 50, 4096)["mbps"] > m.cell("steady", 0, 4096)["mbps"]


def test_large_block_mixes_lie_between_the_pure_cases_in_steady_state(slc) -> None:
    # At 1 MiB in steady state a read costs the dies 35 us per page against a written page's
    # WAF x 200 us, and a collision holds up commands while the dies still drain their queues: the
    # mixes keep about the pure write rate and add their reads, in order of their read share.
    mbps = mix_mbps(slc, "steady", LARGE)
    assert list(mbps.values()) == sorted(mbps.values(), reverse=True), mbps


# --- the command -------------------------------------------------------------------------------


def test_matrix_json_and_out(nandlab_cli, tmp_path: Path) -> None:
    out = tmp_path / "m"
    result = nandlab_cli("matrix", "--device", "snia-slc", "--capacity", CAPACITY, "--mixes", "100/0,25/75",
                         "--block-sizes", "1MiB,4KiB", "--max-rounds", "8", "--workers", "1", "--json", "--out", out)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert {"device", "states", "scaling"} <= doc.keys()
    assert doc["device"] == "snia-slc" and doc["capacity_bytes"] == 2**30
    assert doc["states"].keys() == {"burst", "steady"}
    for state, keys in (("burst", CELL_KEYS), ("steady", STEADY_KEYS)):
        cells = doc["states"][state]["cells"]
        assert [(c["read_percent"], c["block_size"]) for c in cells] == [(100, 4096), (100, MIB), (25, 4096), (25, MIB)]
        for cell in cells:
            assert keys <= cell.keys()
            assert cell["percent_of_theoretical"] == pytest.approx(100 * cell["mbps"] / cell["theoretical_mbps"])
    assert all(isinstance(c["steady"], bool) for c in doc["states"]["steady"]["cells"])
    assert doc["states"]["burst"]["cells"][0]["waf"] is None  # reads only
    assert len(doc["scaling"]) == 10 and all(SCALING_KEYS <= p.keys() for p in doc["scaling"])
    assert json.loads((out / "result.json").read_text()) == doc
    table = pl.read_parquet(out / "matrix.parquet")
    assert table.height == 8 and set(table["state"]) == {"burst", "steady"}
    assert pl.read_csv(out / "matrix.csv").height == 8
    assert pl.read_csv(out / "scaling.csv").height == 10
    for png in ("matrix-burst.png", "matrix-steady.png", "scaling.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_matrix_prints_grids(nandlab_cli) -> None:
    result = nandlab_cli("matrix", "--device", "snia-mlc", "--capacity", CAPACITY, "--mixes", "100/0,0/100",
                         "--block-sizes", "4KiB", "--states", "steady", "--max-rounds", "5", "--no-scaling", "--quiet")
    assert result.exit_code == 0, result.stderr
    for text in ("steady: IOPS", "steady: MB/s", "steady: rounds", "100/0", "0/100", "4KiB", "†"):
        assert text in result.stdout
    assert "burst" not in result.stdout and "Bandwidth vs die count" not in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--mixes", "100/0,60/30", "--mixes: expected read/write percentages adding up to 100"),
        ("--mixes", "75-25", "--mixes: expected read/write percentages adding up to 100"),
        ("--block-sizes", "4KiB,1000B", "--block-sizes: block size: expected a multiple of 512 bytes"),
        ("--states", "burst,warm", "--states: expected burst and/or steady"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_code_2(nandlab_cli, option, value, message) -> None:
    result = nandlab_cli("matrix", "--device", "snia-slc", option, value)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"nandlab: error: {message}") and result.stderr.count("\n") == 1


def test_more_cells_than_max_cells_are_refused_before_any_run(nandlab_cli) -> None:
    mixes = ",".join(f"{r}/{100 - r}" for r in range(101))
    sizes = ",".join(f"{512 * k}B" for k in range(1, 101))
    result = nandlab_cli("matrix", "--device", "snia-slc", "--mixes", mixes, "--block-sizes", sizes)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "nandlab: error: mixes × block sizes: 10,100 cells (101 × 100); expected at most 10,000\n"


def test_a_misspelt_device_gets_a_suggestion(nandlab_cli) -> None:
    result = nandlab_cli("matrix", "--device", "snia-slcc")
    assert result.exit_code == 2
    assert "did you mean snia-slc?" in result.stderr and result.stderr.count("\n") == 1


def test_block_sizes_are_read_by_the_engines_rule() -> None:
    """`--block-sizes` reads sizes as configs do (the engine's parser): KiB is 1,024 bytes, KB 1,000 — so
    8KB is 8,000 bytes, not a multiple of 512, and refused; fio's own convention is `nandlab fio`'s only."""
    from nandlab import matrix

    assert matrix.parse_block_sizes("8KiB,4k,512B") == [512, 4096, 8192]
    with pytest.raises(ValueError, match="multiple of 512 bytes, found 8000 bytes"):
        matrix.parse_block_sizes("8KB")
    with pytest.raises(ValueError, match="block size: expected a size"):
        matrix.parse_block_sizes("8 furlongs")
