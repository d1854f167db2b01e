"""docs/matrix/README.md's figures: the two matrices its commands write (snia-slc, snia-mlc at 8 GiB), the
die-scaling figure drawn from them, and the variants its sentences describe (a reordering controller,
rounds of equal bytes)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from check_docs.model import Cell, Claim, Registry, Run, SameFiles, Table
from check_docs.model import Value as V

F = "docs/matrix/README.md"
ROOT = Path(__file__).resolve().parents[3]
DRIVES = ("snia-slc", "snia-mlc")
SLC, MLC = (f"matrix-{d}" for d in DRIVES)
BOTH = (SLC, MLC)
KIB, MIB = 1024, 1024 * 1024
SIZES = (512, 4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB, 64 * KIB, 128 * KIB, 256 * KIB, 512 * KIB, MIB)
MIXES = (75, 50, 25)
"""The read shares of the mixed cells (75/25, 50/50, 25/75)."""

# --- reading a matrix's result ---------------------------------------------------------------------


def cell(m: dict, state: str, read: int, size: int) -> dict:
    [c] = [c for c in m["states"][state]["cells"] if (c["read_percent"], c["block_size"]) == (read, size)]
    return c


def cells(m: dict, state: str, reads: Iterable[int] = (100, 75, 50, 25, 0), sizes: Iterable[int] = SIZES) -> list:
    reads, sizes = set(reads), set(sizes)
    return [c for c in m["states"][state]["cells"] if c["read_percent"] in reads and c["block_size"] in sizes]


def of(state: str, read: int, size: int, key: str = "mbps") -> Callable[[dict], Any]:
    return lambda m: cell(m, state, read, size)[key]


def sig3(x: float) -> str:
    """Three significant digits, trailing zeros kept (5.10, 41.0, 109), as the tables print."""
    return f"{x:.0f}" if abs(x) >= 99.95 else f"{x:.1f}" if abs(x) >= 9.995 else f"{x:.2f}"


def one(values: Iterable[float], fmt: Callable[[float], str]) -> str:
    """The figure all of ``values`` print as (else their range, which no single stated figure matches)."""
    printed = sorted({fmt(v) for v in values}, key=lambda s: float(s.replace(",", "")))
    return printed[0] if len(printed) == 1 else f"{printed[0]}–{printed[-1]}"


def lo(values: Callable[..., Iterable[float]]) -> Callable[..., float]:
    return lambda *ms: min(values(*ms))


def hi(values: Callable[..., Iterable[float]]) -> Callable[..., float]:
    return lambda *ms: max(values(*ms))


def scaling(m: dict, read: int) -> list[dict]:
    return sorted((p for p in m["scaling"] if p["read_percent"] == read), key=lambda p: p["dies"])


def link_full_at(m: dict, read: int) -> int:
    """The fewest dies whose bandwidth fills the host link (within 3 %)."""
    return min(p["dies"] for p in scaling(m, read) if p["mbps"] >= 0.97 * p["link_mbps"])


def below_both(m: dict, state: str, size: int, reads: Iterable[int] = MIXES) -> bool:
    """Whether each mix of ``reads`` runs slower than both pure cases at ``size``."""
    pure = min(cell(m, state, 100, size)["mbps"], cell(m, state, 0, size)["mbps"])
    return all(cell(m, state, r, size)["mbps"] < pure for r in reads)


def in_read_order(m: dict, state: str, size: int) -> bool:
    """Whether the cells at ``size`` run faster the larger their read share (the mixes between the pure cases)."""
    mbps = [cell(m, state, r, size)["mbps"] for r in (100, 75, 50, 25, 0)]
    return mbps == sorted(mbps, reverse=True)


def kib(sizes: Iterable[int]) -> list[int]:
    return [s // KIB for s in sizes]


def largest_below_both(state: str) -> Callable[[dict], int]:
    """The largest block size (KiB) up to which every size from 4 KiB has all three mixes below both pure
    cases (and none larger has)."""
    def get(m: dict) -> int | str:
        sizes = [s for s in SIZES[1:] if below_both(m, state, s)]
        contiguous = sizes == list(SIZES[1:1 + len(sizes)])
        return sizes[-1] // KIB if sizes and contiguous else f"sizes {kib(sizes)}"
    return get


def between_from(m: dict) -> int | str:
    """The smallest block size (KiB) from which every larger steady-state cell has its mixes between the pure
    cases, in order of their read share."""
    ok = [in_read_order(m, "steady", s) for s in SIZES]
    first = next((i for i in range(len(SIZES)) if all(ok[i:])), None)
    return SIZES[first] // KIB if first is not None else "none"


# --- runs written here -----------------------------------------------------------------------------


def _matrix(device: Any, capacity: str, **options: Any) -> dict[str, Any]:
    from nandlab import matrix

    return matrix.run(device, capacity=capacity, workers=2, **options).to_dict()


REORDERED = {"device": {"preset": "snia-slc"}, "ftl": {"command_order": "reordered", "read_priority": True}}
"""snia-slc with nandlab's default controller: NCQ reordering and read priority."""


def reordered_4k(out: Path) -> dict[str, Any]:
    """The README's reordering-controller sentence: snia-slc at 1 GiB with ``command_order = "reordered"``,
    ``read_priority = true``, 4 KiB steady state, reads, 50/50 and writes (`tests/python/test_matrix.py`'s
    set-up, with the pure reads added)."""
    return _matrix(REORDERED, "1GiB", mixes=[(100, 0), (50, 50), (0, 100)], block_sizes=[4 * KIB],
                   states=["steady"], scaling=False)


def reordered_512b(out: Path) -> dict[str, Any]:
    """512 B random reads of the 8 GiB snia-slc in burst with the reordering controller (the engine note's
    figure from before the SNIA presets got the in-order controller)."""
    return _matrix(REORDERED, "8GiB", mixes=[(100, 0)], block_sizes=[512], states=["burst"], scaling=False)


def equal_byte_rounds(out: Path) -> dict[str, Any]:
    """1 MiB 75/25 in steady state on the 8 GiB snia-slc with rounds of equal bytes (0.25 × the capacity
    moved per round, a quarter of it written), as the matrix ran before each round wrote 0.25 × the
    capacity (4907d96)."""
    return _matrix("snia-slc", "8GiB", mixes=[(75, 25)], block_sizes=[MIB], states=["steady"], scaling=False,
                   round_volume=0.25 * 0.25)


def nominal_capacities(out: Path) -> dict[str, Any]:
    """Each SNIA preset's nominal (user) capacity in GiB, without ``--capacity``."""
    import nandlab

    sizes = {}
    for preset in DRIVES:
        sim = nandlab.make_simulator({"device": {"preset": preset}, "phase": [{"requests": 1}]})
        sizes[preset] = sim.device["user_capacity_bytes"] / 2**30
    return sizes


def scaling_figure(out: Path) -> dict[str, Any]:
    """The README's `python -c ... plots.die_scaling(...)` command as written, drawing into ``out``."""
    text = (ROOT / F).read_text()
    [command] = re.findall(r'^python -c "(.*plots\.die_scaling.*)"$', text, re.M)
    target = out / "scaling.png"
    command = command.replace("'docs/matrix/scaling.png'", repr(str(target)))
    subprocess.run([sys.executable, "-c", command], cwd=ROOT, check=True)
    if not target.stat().st_size:
        raise RuntimeError("the command drew nothing")
    # What it drew from: each panel's host link.
    return {"link_mbps": [json.loads((ROOT / f"docs/matrix/{d}/result.json").read_text())["theoretical"]["link_mbps"]
                          for d in DRIVES]}


# --- the checks ------------------------------------------------------------------------------------


def declare(r: Registry) -> None:
    r.run(
        *(Run(f"matrix-{d}", ["matrix", "--device", d, "--capacity", "8GiB", "--out", "{out}", "--json", "-q"],
              cost=c, ci=False, memory=True) for d, c in zip(DRIVES, (200, 260))),
        Run("matrix-scaling-figure", python="claims.matrix:scaling_figure", cost=2),
        Run("matrix-reordered-4k", python="claims.matrix:reordered_4k", cost=5),
        Run("matrix-reordered-512b", python="claims.matrix:reordered_512b", cost=2),
        Run("matrix-equal-byte-rounds", python="claims.matrix:equal_byte_rounds", cost=2),
        Run("matrix-nominal-capacities", python="claims.matrix:nominal_capacities", cost=1),
    )
    r.check(
        *(SameFiles(F, f"matrix-{d}", [(f"docs/matrix/{d}/{name}", name)
                                       for name in ("result.json", "matrix.csv", "matrix.parquet", "scaling.csv")])
          for d in DRIVES),
        *volumes(), *measured(), *die_scaling(), steady_table(), *steady_rounds(), *findings(),
    )


def volumes() -> list[Claim]:
    return [
        *(Claim(F, f"--out docs/matrix/{d}   # {{seconds}} s, {{mb}} MB peak",
                {"mb": V(f"matrix-{d}", "peak_rss_mib", get=lambda x: x * 1.048576, fmt=".0f", tol=0.15)})
          for d in DRIVES),
        Claim(F, "SLC's nominal capacity is {slc} GiB, MLC's {mlc} GiB;",
              {"slc": V("matrix-nominal-capacities", "snia-slc", ".1f"),
               "mlc": V("matrix-nominal-capacities", "snia-mlc", ".1f")}),
        Claim(F, "reads-only rounds read 2 GiB; {lo}–{hi} rounds per cell", {
            "lo": V(BOTH, get=lo(lambda *ms: [c["rounds"] for m in ms for c in cells(m, "steady")]), fmt="d"),
            "hi": V(BOTH, get=hi(lambda *ms: [c["rounds"] for m in ms for c in cells(m, "steady")]), fmt="d")}),
    ]


def measured() -> list[Claim]:
    run = "matrix-equal-byte-rounds"
    return [
        Claim(F, "with rounds of equal bytes, 1 MiB 75/25 looked steady at WAF {waf} against {pure} for pure "
                 "writes)",
              {"waf": V(run, get=lambda m: cell(m, "steady", 75, MIB)["waf"] if cell(m, "steady", 75, MIB)["steady"]
                        else "not steady", fmt=".1f"),
               "pure": V(SLC, get=of("steady", 0, MIB, "waf"), fmt=".1f")}),
        Claim(F, "(SLC: {sr} and {sw} MB/s, MLC: {mr} and {mw} MB/s per die)",
              {"sr": V(SLC, "theoretical.read_mbps_per_die", sig3),
               "sw": V(SLC, "theoretical.write_mbps_per_die", sig3),
               "mr": V(MLC, "theoretical.read_mbps_per_die", sig3),
               "mw": V(MLC, "theoretical.write_mbps_per_die", sig3)}),
    ]


def die_scaling() -> list[Claim]:
    def point(run: str, read: int, dies: int, key: str) -> V:
        return V(run, get=lambda m: next(p[key] for p in scaling(m, read) if p["dies"] == dies), fmt=sig3)

    rows = []
    for dies in (1, 2, 4, 8, 16):
        rows.append(Claim(F, f"| {dies} | {{a}} | {{b}} | {{c}} | {{d}} | {{e}} | {{f}} | {{g}} | {{h}} |", {
            "a": point(SLC, 100, dies, "mbps"), "b": point(SLC, 100, dies, "theoretical_mbps"),
            "c": point(SLC, 0, dies, "mbps"), "d": point(SLC, 0, dies, "theoretical_mbps"),
            "e": point(MLC, 100, dies, "mbps"), "f": point(MLC, 100, dies, "theoretical_mbps"),
            "g": point(MLC, 0, dies, "mbps"), "h": point(MLC, 0, dies, "theoretical_mbps")}))

    def full_reads(*ms: dict) -> list[float]:
        return [100 * p["mbps"] / p["link_mbps"] for m in ms for p in scaling(m, 100)
                if p["theoretical_mbps"] >= p["link_mbps"]]

    def writes_above(*ms: dict) -> list[float]:
        return [p["percent_of_theoretical"] - 100 for m in ms for p in scaling(m, 0)
                if p["theoretical_mbps"] < p["link_mbps"]]

    top = lambda m, read: scaling(m, read)[-1]  # noqa: E731
    return [
        *rows,
        # The link as scaling.png draws it: the figure's command ran.
        Claim(F, "until SATA-II's {link} MB/s is full — SLC reads at {sr} dies, MLC reads at {mr}, SLC writes at "
                 "{sw}; MLC writes reach only {share} % of the link with {dies} dies (they would need {need}):",
              {"link": V("matrix-scaling-figure", get=lambda f: one(f["link_mbps"], lambda x: f"{x:.0f}"), fmt=str),
               "sr": V(SLC, get=lambda m: link_full_at(m, 100), fmt="d"),
               "mr": V(MLC, get=lambda m: link_full_at(m, 100), fmt="d"),
               "sw": V(SLC, get=lambda m: link_full_at(m, 0), fmt="d"),
               "share": V(MLC, get=lambda m: 100 * top(m, 0)["mbps"] / top(m, 0)["link_mbps"], fmt=".0f"),
               "dies": V(MLC, get=lambda m: top(m, 0)["dies"], fmt="d"),
               "need": V(MLC, get=lambda m: -(-m["theoretical"]["link_mbps"] // m["theoretical"]["write_mbps_per_die"]),
                         fmt=".0f")}),
        Claim(F, "then reach {lo}–{hi} % of it", {"lo": V(BOTH, get=lo(full_reads), fmt=".0f"),
                                                  "hi": V(BOTH, get=hi(full_reads), fmt=".0f")}),
        Claim(F, "Writes come out {lo}–{hi} % above it", {"lo": V(BOTH, get=lo(writes_above), fmt=".0f"),
                                                          "hi": V(BOTH, get=hi(writes_above), fmt=".0f")}),
    ]


TABLE_COLUMNS = {f"{name} {label}": (run, size) for name, run in (("SLC", SLC), ("MLC", MLC))
                 for label, size in (("4 KiB", 4 * KIB), ("128 KiB", 128 * KIB), ("1 MiB", MIB))}


def steady_table() -> Table:
    rows = {}
    for read in (100, 75, 50, 25, 0):
        rows[f"{read}/{100 - read}"] = {
            column: Cell({"v": V(run, get=of("steady", read, size), fmt=sig3),
                          "p": V(run, get=of("steady", read, size, "percent_of_theoretical"), fmt=".0f")},
                         # Bold: below both pure cases (claimed in the prose: at 4 and 8 KiB).
                         template="**{v}** ({p} %)" if read in MIXES and size == 4 * KIB else "{v} ({p} %)")
            for column, (run, size) in TABLE_COLUMNS.items()}
    return Table(F, ["R/W", *TABLE_COLUMNS], rows)


def steady_rounds() -> list[Claim]:
    def rounds(reads: Iterable[int], sizes: Iterable[int] = SIZES) -> Callable[..., list[int]]:
        return lambda *ms: [c["steady_round"] if c["steady"] else 10**9 for m in ms
                            for c in cells(m, "steady", reads, sizes)]

    return [
        Claim(F, "Every steady-state cell of both drives became steady, between round {first}",
              {"first": V(BOTH, get=lo(rounds((100, 75, 50, 25, 0))), fmt="d")}),
        Claim(F, "(reads: nothing changes) and round {last};",
              {"last": V(BOTH, get=hi(rounds((100, 75, 50, 25, 0))), fmt="d")}),
        Claim(F, "writes of 4 KiB and more need at least {six} rounds,",
              {"six": V(BOTH, get=lo(rounds(MIXES + (0,), SIZES[1:])), fmt="d")}),
        Claim(F, "SLC's settle at round {five}).",
              {"five": V(SLC, get=lambda m: one(rounds(MIXES + (0,), [512])(m), str), fmt=str)}),
    ]


def findings() -> list[Claim]:
    slc_reads_from = 64 * KIB
    mlc_reads_from = 256 * KIB
    return [
        # Reads.
        Claim(F, "SLC reads from {slc_from} KiB up ({slo}–{shi} %), MLC reads from {mlc_from} KiB "
                 "({mlo}–{mhi} %)",
              {"slc_from": V(SLC, get=lambda m: min(s for s in SIZES if all(
                  cell(m, "steady", 100, t)["percent_of_theoretical"] >= 90 for t in SIZES if t >= s)) // KIB,
                             fmt="d"),
               "slo": V(SLC, get=lambda m: min(c["percent_of_theoretical"] for c in cells(
                   m, "steady", [100], [s for s in SIZES if s >= slc_reads_from])), fmt=".0f"),
               "shi": V(SLC, get=lambda m: max(c["percent_of_theoretical"] for c in cells(
                   m, "steady", [100], [s for s in SIZES if s >= slc_reads_from])), fmt=".0f"),
               "mlc_from": V(MLC, get=lambda m: min(s for s in SIZES if all(
                   cell(m, "steady", 100, t)["percent_of_theoretical"] >= 90 for t in SIZES if t >= s)) // KIB,
                             fmt="d"),
               "mlo": V(MLC, get=lambda m: min(c["percent_of_theoretical"] for c in cells(
                   m, "steady", [100], [s for s in SIZES if s >= mlc_reads_from])), fmt=".0f"),
               "mhi": V(MLC, get=lambda m: max(c["percent_of_theoretical"] for c in cells(
                   m, "steady", [100], [s for s in SIZES if s >= mlc_reads_from])), fmt=".0f")}),
        Claim(F, "Small reads stop at {k4} K IOPS (SLC, {p4} % at 4 KiB) and {k512} K at 512 B",
              {"k4": V(SLC, get=lambda m: of("steady", 100, 4 * KIB, "iops")(m) / 1e3, fmt=".0f"),
               "p4": V(SLC, get=of("steady", 100, 4 * KIB, "percent_of_theoretical"), fmt=".0f"),
               "k512": V(SLC, get=lambda m: of("steady", 100, 512, "iops")(m) / 1e3, fmt=".0f")}),
        # Burst writes.
        Claim(F, "from 4 KiB up: SLC {lo}–{hi} MB/s, {plo}–{phi} % of the model",
              {"lo": V(SLC, get=lambda m: min(c["mbps"] for c in cells(m, "burst", [0], SIZES[1:])), fmt=".0f"),
               "hi": V(SLC, get=lambda m: max(c["mbps"] for c in cells(m, "burst", [0], SIZES[1:])), fmt=".0f"),
               "plo": V(SLC, get=lambda m: min(c["percent_of_theoretical"] for c in cells(m, "burst", [0], SIZES[1:])),
                        fmt=".0f"),
               "phi": V(SLC, get=lambda m: max(c["percent_of_theoretical"] for c in cells(m, "burst", [0], SIZES[1:])),
                        fmt=".0f")}),
        Claim(F, "MLC {mbps} MB/s at every block size, {p} % of the model, since the first {buffer} MiB",
              {"mbps": V(MLC, get=lambda m: one([c["mbps"] for c in cells(m, "burst", [0], SIZES[1:])],
                                                lambda x: f"{x:.0f}"), fmt=str),
               "p": V(MLC, get=lambda m: one([c["percent_of_theoretical"] for c in cells(m, "burst", [0], SIZES[1:])],
                                             lambda x: f"{x:.0f}"), fmt=str),
               "buffer": V(MLC, "drive.write_buffer", get=lambda b: b / MIB, fmt=".0f")}),
        Claim(F, "WAF is {lo}–{hi}: the burst ends about where GC begins.",
              {"lo": V(BOTH, get=lo(lambda *ms: [c["waf"] for m in ms
                                                 for c in cells(m, "burst", (75, 50, 25, 0), SIZES[1:])]), fmt=".1f"),
               "hi": V(BOTH, get=hi(lambda *ms: [c["waf"] for m in ms
                                                 for c in cells(m, "burst", (75, 50, 25, 0), SIZES[1:])]), fmt=".1f")}),
        # Steady-state writes.
        Claim(F, "fall to {plo}–{phi} % of the model (SLC {slo}–{shi} MB/s, MLC {mlo}–{mhi} MB/s)", {
            "plo": V(BOTH, get=lo(lambda *ms: [c["percent_of_theoretical"] for m in ms
                                               for c in cells(m, "steady", [0], SIZES[1:])]), fmt=".0f"),
            "phi": V(BOTH, get=hi(lambda *ms: [c["percent_of_theoretical"] for m in ms
                                               for c in cells(m, "steady", [0], SIZES[1:])]), fmt=".0f"),
            **{f"{k}{end}": V(run, get=lambda m, f=f: f(c["mbps"] for c in cells(m, "steady", [0], SIZES[1:])),
                              fmt=".1f")
               for k, run in (("s", SLC), ("m", MLC)) for end, f in (("lo", min), ("hi", max))}}),
        Claim(F, "makes WAF {waf} for random writes up to {upto} KiB, falling to {mib} at 1 MiB",
              {"waf": V(BOTH, get=lambda *ms: one([c["waf"] for m in ms for c in cells(
                  m, "steady", [0], [s for s in SIZES if s <= 64 * KIB])], lambda x: f"{x:.1f}"), fmt=str),
               "upto": V(BOTH, get=lambda *ms: max(s for s in SIZES if all(
                   f"{cell(m, 'steady', 0, t)['waf']:.1f}" == f"{cell(ms[0], 'steady', 0, SIZES[0])['waf']:.1f}"
                   for m in ms for t in SIZES if t <= s)) // KIB, fmt="d"),
               "mib": V(BOTH, get=lambda *ms: one([cell(m, "steady", 0, MIB)["waf"] for m in ms],
                                                  lambda x: f"{x:.1f}"), fmt=str)}),
        # 512 B.
        Claim(F, "(WAF {blo}–{bhi} in the burst, {steady} in steady state, counted per unit)",
              {"blo": V(BOTH, get=lo(lambda *ms: [c["waf"] for m in ms for c in cells(m, "burst", (75, 50, 25, 0),
                                                                                       [512])]), fmt=".1f"),
               "bhi": V(BOTH, get=hi(lambda *ms: [c["waf"] for m in ms for c in cells(m, "burst", (75, 50, 25, 0),
                                                                                       [512])]), fmt=".1f"),
               "steady": V(BOTH, get=lambda *ms: one([c["waf"] for m in ms for c in cells(
                   m, "steady", (75, 50, 25, 0), [512])], lambda x: f"{x:.1f}"), fmt=str)}),
        Claim(F, "so 512 B writes are the slowest cells (0/100: {lo}–{hi} MB/s)",
              {"lo": V(BOTH, get=lo(lambda *ms: [c["mbps"] for m in ms for s in ("burst", "steady")
                                                 for c in cells(m, s, [0], [512])
                                                 if slowest_are_512b_writes(m, s)]), fmt=".1f"),
               "hi": V(BOTH, get=hi(lambda *ms: [c["mbps"] for m in ms for s in ("burst", "steady")
                                                 for c in cells(m, s, [0], [512])
                                                 if slowest_are_512b_writes(m, s)]), fmt=".1f")}),
        # Mixed against pure.
        Claim(F, "75/25, 50/50 and 25/75 fall below **both** pure cases in steady state at {a} and {b} KiB, "
                 "50/50 and 25/75 also at {c} KiB",
              {"a": V(BOTH, get=lambda *ms: min(s for s in SIZES[1:] if all(below_both(m, "steady", s) for m in ms))
                      // KIB, fmt="d"),
               "b": V(BOTH, get=lambda *ms: one([largest_below_both("steady")(m) for m in ms], str), fmt=str),
               "c": V(BOTH, get=lambda *ms: one([max(s for s in SIZES[1:] if below_both(m, "steady", s, (50, 25)))
                                                 // KIB for m in ms], str), fmt=str)}),
        Claim(F, "(SLC 4 KiB: {a}, {b}, {c} MB/s against {r} reads and {w} writes; MLC {d}, {e}, {f} against {r2} "
                 "and {w2})",
              {**{k: V(SLC, get=of("steady", read, 4 * KIB), fmt=sig3)
                  for k, read in (("a", 75), ("b", 50), ("c", 25), ("r", 100), ("w", 0))},
               **{k: V(MLC, get=of("steady", read, 4 * KIB), fmt=lambda x: f"{x:.1f}" if x < 99.95 else f"{x:.0f}")
                  for k, read in (("d", 75), ("e", 50), ("f", 25), ("r2", 100), ("w2", 0))}}),
        Claim(F, "and in burst from {a} to {slc} KiB (SLC) or {mlc} KiB (MLC; 4 KiB: {x}, {y}, {z} against {r} and "
                 "{w})",
              {"a": V(BOTH, get=lambda *ms: min(s for s in SIZES[1:] if all(below_both(m, "burst", s) for m in ms))
                      // KIB, fmt="d"),
               "slc": V(SLC, get=largest_below_both("burst"), fmt=str),
               "mlc": V(MLC, get=largest_below_both("burst"), fmt=str),
               **{k: V(MLC, get=of("burst", read, 4 * KIB), fmt=".0f")
                  for k, read in (("x", 75), ("y", 50), ("z", 25), ("r", 100), ("w", 0))}}),
        Claim(F, "at 1 GiB, SLC 4 KiB 50/50 then runs {mix} MB/s, between {reads} and {writes}",
              {"mix": V("matrix-reordered-4k", get=of("steady", 50, 4 * KIB), fmt=".1f"),
               "reads": V("matrix-reordered-4k", get=of("steady", 100, 4 * KIB), fmt=".0f"),
               "writes": V("matrix-reordered-4k", get=of("steady", 0, 4 * KIB), fmt=".1f")}),
        Claim(F, "From {size} KiB up in steady state the mixes lie between the pure cases, in order of their read "
                 "share",
              {"size": V(BOTH, get=lambda *ms: one([between_from(m) for m in ms], str), fmt=str)}),
        Claim(F, "(SLC 1 MiB 25/75: {w} MB/s of writes and {r} of reads, against {pure} of pure writes)",
              {"w": V(SLC, get=of("steady", 25, MIB, "write_mbps"), fmt=".1f"),
               "r": V(SLC, get=of("steady", 25, MIB, "read_mbps"), fmt=".1f"),
               "pure": V(SLC, get=of("steady", 0, MIB), fmt=".1f")}),
        Claim(F, "SLC 1 MiB writes also fill the link and the mixes are flat at {lo}–{hi} MB/s",
              {"lo": V(SLC, get=lambda m: min(c["mbps"] for c in cells(m, "burst", MIXES, [MIB])), fmt=".0f"),
               "hi": V(SLC, get=lambda m: max(c["mbps"] for c in cells(m, "burst", MIXES, [MIB])), fmt=".0f")}),
        # RMS.
        Claim(F, "its 50 cells: {bi} K IOPS, {bm} MB/s in burst, {si} K IOPS, {sm} MB/s in steady state",
              {"bi": V(SLC, "states.burst.rms_iops", get=lambda x: x / 1e3, fmt=".1f"),
               "bm": V(SLC, "states.burst.rms_mbps", ".0f"),
               "si": V(SLC, "states.steady.rms_iops", get=lambda x: x / 1e3, fmt=".1f"),
               "sm": V(SLC, "states.steady.rms_mbps", ".0f")}),
        Claim(F, "`snia-mlc` {bi} K / {bm} MB/s and {si} K / {sm} MB/s.",
              {"bi": V(MLC, "states.burst.rms_iops", get=lambda x: x / 1e3, fmt=".1f"),
               "bm": V(MLC, "states.burst.rms_mbps", ".0f"),
               "si": V(MLC, "states.steady.rms_iops", get=lambda x: x / 1e3, fmt=".1f"),
               "sm": V(MLC, "states.steady.rms_mbps", ".0f")}),
        Claim(F, "lies between nandlab's burst ({b} %) and steady state ({s} %)",
              {"b": V(SLC, get=lambda m: 100 * m["states"]["burst"]["rms_mbps"] / m["theoretical"]["link_mbps"],
                      fmt=".0f"),
               "s": V(SLC, get=lambda m: 100 * m["states"]["steady"]["rms_mbps"] / m["theoretical"]["link_mbps"],
                      fmt=".0f")}),
        # The engine note.
        Claim(F, "they now send their own bytes: {k} K IOPS",
              {"k": V("matrix-reordered-512b", get=lambda m: of("burst", 100, 512, "iops")(m) / 1e3, fmt=".0f")}),
        Claim(F, "{k} K with the in-order controller of the tables above",
              {"k": V(SLC, get=lambda m: of("burst", 100, 512, "iops")(m) / 1e3, fmt=".0f")}),
    ]


def slowest_are_512b_writes(m: dict, state: str) -> bool:
    """Whether the slowest cells of ``state`` are the 512 B ones with writes (each below every other cell)."""
    small = [c["mbps"] for c in cells(m, state, (75, 50, 25, 0), [512])]
    rest = [c["mbps"] for c in cells(m, state) if not (c["block_size"] == 512 and c["read_percent"] < 100)]
    return max(small) < min(rest)
