"""docs/qualify/README.md's figures: the six commands that write its directories, the empty standard drive
written sequentially, and the wear the write test leaves by its fifth section."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from check_docs.model import Claim, Registry, Run, SameFiles, Table
from check_docs.model import Value as V

F = "docs/qualify/README.md"
GIB, MB = 2**30, 1e6

PSLC = {
    "pslc-static": ["--device", "tlc-static-pslc"],
    "pslc-dynamic-aged": ["--device", "tlc-dynamic-pslc", "--compare", "aged"],
    "pslc-direct-write": ["--device", "tlc-static-pslc", "--compare", "direct-write"],
    "pslc-dynamic-direct-write": ["--device", "tlc-dynamic-pslc", "--direct-write"],
}
"""The pSLC-fill directories and their commands' options (the README's commands)."""

WRITE, READ = "qualify-write-sections", "qualify-read-sections"
STATIC, AGED, DW, DDW = (f"qualify-{name}" for name in PSLC)
STANDARD = "qualify-pslc-standard"
WRITE_SECTIONS = ("random-4k", "random-4k-same-order", "random-4k-new-order", "sequential-128k",
                  "sequential-128k-again", "random-4k-uniform", "random-4k-uniform-again")
READ_SECTIONS = ("random-4k-of-random", "sequential-128k-of-random", "random-4k-of-sequential",
                 "sequential-128k-of-sequential")


# --- reading a result ------------------------------------------------------------------------------


def section(number: int) -> str:
    """The write test's section ``number`` (1-based), by name."""
    return f"sections.{WRITE_SECTIONS[number - 1]}"


def part(document: dict, name: str, compare: bool = False) -> dict:
    """A pSLC fill's phase ``name`` (of the second run with ``compare``)."""
    phases = document["compare"]["phases"] if compare else document["phases"]
    [found] = [p for p in phases if p["name"] == name]
    return found


def mbps(x: float) -> str:
    """The tables' MB/s: one decimal from 10 MB/s, else two."""
    return f"{x:.1f}" if x >= 9.995 else f"{x:.2f}"


def points(document: dict, number: int) -> list[list[float]]:
    """Section ``number``'s smoothed curve: [GiB since the test's start, MB/s] per point."""
    [s] = [s for s in document["sections"] if s["name"] == WRITE_SECTIONS[number - 1]]
    return s["series"]


def where(document: dict, number: int, gib: float) -> float:
    """``gib`` (since the test's start) as a % of section ``number``'s pass."""
    [s] = [s for s in document["sections"] if s["name"] == WRITE_SECTIONS[number - 1]]
    return 100 * (gib - s["gib_start"]) / (s["gib_end"] - s["gib_start"])


def at_minimum(document: dict, number: int) -> float:
    """Where (% of the pass) section ``number``'s curve is lowest."""
    gib, _ = min(points(document, number), key=lambda p: p[1])
    return where(document, number, gib)


def back_to_half(document: dict, number: int) -> float:
    """Where (% of the pass) section ``number``'s curve, after its minimum, first reaches half of section 1's
    mean speed."""
    curve = points(document, number)
    low = min(range(len(curve)), key=lambda i: curve[i][1])
    half = dig_section(document, 1)["mean_mbps"] / 2
    gib = next(g for g, v in curve[low:] if v >= half)
    return where(document, number, gib)


def dig_section(document: dict, number: int) -> dict:
    [s] = [s for s in document["sections"] if s["name"] == WRITE_SECTIONS[number - 1]]
    return s


def last_tenth(document: dict, number: int) -> float:
    """Section ``number``'s speed over the last 10 % of its pass: bytes / simulated seconds between the
    time-series rows at 90 % and 100 % (series.parquet in the run's directory)."""
    import polars as pl

    s = dig_section(document, number)
    rows = pl.read_parquet(Path(document["out"]) / "series.parquet").filter(pl.col("section") == s["name"])
    start = s["gib_start"] + 0.9 * (s["gib_end"] - s["gib_start"])
    inside = rows.filter(pl.col("gib") >= start - 1e-6)
    first, last = inside.row(0, named=True), inside.row(-1, named=True)
    if abs(first["gib"] - start) > 1e-3:
        raise ValueError(f"no row at {start} GiB")
    return (last["gib"] - first["gib"]) * GIB / MB / (last["sim_seconds"] - first["sim_seconds"])


def mean_until(document: dict, gib: float, run: str | None = None) -> float:
    """A pSLC fill's speed over its first ``gib`` GiB (bytes / simulated seconds, from series.parquet; of the
    run labelled ``run`` when the file holds two)."""
    import polars as pl

    rows = pl.read_parquet(Path(document["out"]) / "series.parquet")
    if run is not None:
        rows = rows.filter(pl.col("run") == run)
    before = rows.filter(pl.col("gib") <= gib + 1e-6)
    last = before.row(-1, named=True)
    if abs(last["gib"] - gib) > 0.1:
        raise ValueError(f"no row near {gib} GiB")
    return last["gib"] * GIB / MB / last["sim_seconds"]


def two_lowest(document: dict, number: int) -> float | str:
    """Section ``number``'s mean speed, if sections 6 and 7 have the two lowest means."""
    slowest = sorted(range(1, 8), key=lambda n: dig_section(document, n)["mean_mbps"])[:2]
    return dig_section(document, number)["mean_mbps"] if sorted(slowest) == [6, 7] else f"lowest: {slowest}"


def simulated_hours(document: dict) -> float:
    """The write test's simulated time: each section's bytes at its mean speed (bytes / simulated time)."""
    return sum((s["gib_end"] - s["gib_start"]) * GIB / MB / s["mean_mbps"] for s in document["sections"]) / 3600


# --- runs written here -----------------------------------------------------------------------------


def wear_by_section_5(out: Path) -> dict[str, Any]:
    """The write test on `swissbit-standard` as `nandlab test write-sections` runs it, its first five sections:
    the blocks' erase counts after section 5 (the engine's phase summary)."""
    from nandlab import api, qualify

    config, cap = qualify._prepare("swissbit-standard", None)
    phases = [qualify._TRIM, *(qualify._phase(s, cap, qualify.QUEUE_DEPTH) for s in qualify.WRITE_SECTIONS[:5])]
    result = api.run({**config, "phase": phases}, seed=qualify.SEED)
    last = result.phases[-1]
    return {"section": last["name"], "erase_count": last["erase_count"]}


# --- the checks ------------------------------------------------------------------------------------


def declare(r: Registry) -> None:
    r.run(
        Run(WRITE, ["test", "write-sections", "--device", "swissbit-standard", "--out", "{out}", "--json", "-q"],
            cost=60, ci=False, memory=True),
        Run(READ, ["test", "read-sections", "--device", "swissbit-standard", "--out", "{out}", "--json", "-q"],
            cost=12, memory=True),
        *(Run(f"qualify-{name}", ["test", "pslc-fill", *options, "--out", "{out}", "--json", "-q"], cost=3,
              memory=True) for name, options in PSLC.items()),
        Run(STANDARD, ["test", "pslc-fill", "--device", "swissbit-standard", "--json", "-q"], cost=2),
        Run("qualify-wear-by-section-5", python="claims.qualify:wear_by_section_5", cost=40, ci=False),
    )
    r.check(
        SameFiles(F, WRITE, [(f"docs/qualify/write-sections/{f}", f)
                             for f in ("result.json", "sections.csv", "series.parquet")]),
        SameFiles(F, READ, [(f"docs/qualify/read-sections/{f}", f)
                            for f in ("result.json", "sections.csv", "series.parquet")]),
        *(SameFiles(F, f"qualify-{name}", [(f"docs/qualify/{name}/{f}", f)
                                           for f in ("result.json", "phases.csv", "series.parquet")])
          for name in PSLC),
        *costs(), write_table(), *write_shapes(), read_table(), *read_shapes(), *pslc(),
    )


def costs() -> list[Claim]:
    pslc_runs = tuple(f"qualify-{name}" for name in PSLC)
    return [
        Claim(F, "write test 39 s ({gib} GiB written, {hours} simulated hours,",
              {"gib": V(WRITE, get=lambda d: d["sections"][-1]["gib_end"], fmt=".0f"),
               "hours": V(WRITE, get=simulated_hours, fmt=".1f")}),
        Claim(F, "peak memory {lo}–{hi} MB.",
              {"lo": V((WRITE, READ, *pslc_runs), get=lambda *rs: min(r["peak_rss_mib"] for r in rs) * 1.048576,
                       fmt=".0f", tol=0.15),
               "hi": V((WRITE, READ, *pslc_runs), get=lambda *rs: max(r["peak_rss_mib"] for r in rs) * 1.048576,
                       fmt=".0f", tol=0.15)}),
    ]


def write_table() -> Table:
    rows = {}
    for number in range(1, 8):
        path = section(number)
        rows[str(number)] = {"mean MB/s": V(WRITE, f"{path}.mean_mbps", mbps),
                             "min MB/s": V(WRITE, f"{path}.min_mbps", mbps),
                             "WAF": V(WRITE, f"{path}.waf", ".2f"),
                             "data WAF": V(WRITE, f"{path}.data_waf", ".2f")}
    return Table(F, ["#", "section", "phase", "mean MB/s", "min MB/s", "WAF", "data WAF"], rows)


def w(number: int, key: str, fmt: Any = mbps) -> V:
    return V(WRITE, f"{section(number)}.{key}", fmt)


def wf(get: Callable[[dict], Any], fmt: Any = ".1f") -> V:
    return V(WRITE, get=get, fmt=fmt)


def write_shapes() -> list[Claim]:
    spread = lambda d: 100 * (max(v for _, v in points(d, 1)) - min(v for _, v in points(d, 1))) / \
        dig_section(d, 1)["mean_mbps"]  # noqa: E731
    return [
        Claim(F, "within {spread} % over the pass; every 4 KiB write reads and later writes back a translation page "
                 "(WAF {waf}, data WAF {data})",
              {"spread": wf(spread), "waf": w(1, "waf", ".2f"), "data": w(1, "data_waf", ".2f")}),
        Claim(F, "| {two} vs {one} MB/s |", {"two": w(2, "mean_mbps", ".1f"), "one": w(1, "mean_mbps", ".1f")}),
        Claim(F, "| {start} MB/s at its start, {low} MB/s at {at} % of the pass |",
              {"start": wf(lambda d: points(d, 3)[0][1]), "low": w(3, "min_mbps"),
               "at": wf(lambda d: at_minimum(d, 3))}),
        Claim(F, "| {end} MB/s over its last 10 % (bytes / simulated time), {times}× its minimum |",
              {"end": wf(lambda d: last_tenth(d, 3)),
               "times": wf(lambda d: last_tenth(d, 3) / dig_section(d, 3)["min_mbps"], ".0f")}),
        Claim(F, "| starts at {start} MB/s |", {"start": wf(lambda d: points(d, 4)[0][1], ".0f")}),
        Claim(F, "| minimum {four} vs {three} MB/s |", {"four": w(4, "min_mbps"), "three": w(3, "min_mbps")}),
        Claim(F, "back to half of (1)'s speed at {four} % of the pass vs {three} %; {end4} vs {end3} MB/s over the "
                 "last 10 %",
              {"four": wf(lambda d: back_to_half(d, 4)), "three": wf(lambda d: back_to_half(d, 3)),
               "end4": wf(lambda d: last_tenth(d, 4)), "end3": wf(lambda d: last_tenth(d, 3))}),
        Claim(F, "| {five} MB/s, WAF {waf} |", {"five": w(5, "mean_mbps"), "waf": w(5, "waf", ".2f")}),
        Claim(F, "| {six} and {seven} MB/s, the two lowest means |",
              {"six": wf(lambda d: two_lowest(d, 6), mbps), "seven": wf(lambda d: two_lowest(d, 7), mbps)}),
        Claim(F, "data WAF {six} and {seven}, nearly twice (3)'s and (4)'s; with map write-backs (7) is the highest "
                 "({waf7}) — (6) ({waf6})",
              {"six": w(6, "data_waf", ".1f"), "seven": w(7, "data_waf", ".1f"), "waf7": w(7, "waf", ".1f"),
               "waf6": w(6, "waf", ".1f")}),
        Claim(F, "runs at\n{native} MB/s, {below} % below (5): by (5) the blocks have been erased {cycles} times on "
                 "average",
              {"native": V(STANDARD, get=lambda d: part(d, "native")["mean_mbps"], fmt=".0f"),
               "below": V((STANDARD, WRITE), get=lambda s, d: 100 * (1 - part(s, "native")["mean_mbps"]
                                                                     / dig_section(d, 5)["mean_mbps"]), fmt=".0f"),
               "cycles": V("qualify-wear-by-section-5", "erase_count.mean", ".0f")}),
    ]


def read_table() -> Table:
    rows = {str(n): {"mean MB/s": V(READ, f"sections.{name}.mean_mbps", ".1f"),
                     "min MB/s": V(READ, f"sections.{name}.min_mbps", ".1f")}
            for n, name in enumerate(READ_SECTIONS, 1)}
    return Table(F, ["#", "section", "mean MB/s", "min MB/s"], rows)


def rd(number: int, fmt: Any = ".1f") -> V:
    return V(READ, f"sections.{READ_SECTIONS[number - 1]}.mean_mbps", fmt)


def read_shapes() -> list[Claim]:
    return [
        Claim(F, "| {v} MB/s: each read first reads its translation page |", {"v": rd(1)}),
        Claim(F, "| {v} MB/s: 32 pages read on all dies at once", {"v": rd(2, ".0f")}),
        Claim(F, "| {v} MB/s, {times}× (1)", {"v": rd(3), "times": V(READ, get=lambda d: d["sections"][2]["mean_mbps"]
                                                                     / d["sections"][0]["mean_mbps"], fmt=".1f")}),
        Claim(F, "| {v} MB/s, the SATA link's limit", {"v": rd(4, ".0f")}),
    ]


def pslc() -> list[Claim]:
    aged_label = "aged (10 % of rated cycles)"
    return [
        # A TLC block run as SLC holds a third of its data.
        Claim(F, "({gib} GiB\nof data in {tlc} GiB of TLC blocks",
              {"gib": V(STATIC, get=lambda d: part(d, "pslc")["gib_end"], fmt=".2f"),
               "tlc": V(STATIC, get=lambda d: 3 * part(d, "pslc")["gib_end"], fmt=".2f")}),
        Claim(F, "pslc {pslc} MB/s for {gib} GiB, then folding at {folding} MB/s to the end — the note's sharp drop "
                 "({times}×)",
              {"pslc": V(STATIC, get=lambda d: part(d, "pslc")["mean_mbps"], fmt=".0f"),
               "gib": V(STATIC, get=lambda d: part(d, "pslc")["gib_end"], fmt=".2f"),
               "folding": V(STATIC, get=lambda d: part(d, "folding")["mean_mbps"], fmt=".0f"),
               "times": V(STATIC, get=lambda d: part(d, "pslc")["mean_mbps"] / part(d, "folding")["mean_mbps"],
                          fmt=".0f")}),
        Claim(F, "Native TLC writes alone run at {v} MB/s.",
              {"v": V(STANDARD, get=lambda d: part(d, "native")["mean_mbps"], fmt=".0f")}),
        Claim(F, "Fresh: pslc {pslc} MB/s for {gib} GiB (the dynamic part, ¼ of the capacity), then folding at "
                 "{folding} MB/s.",
              {"pslc": V(AGED, get=lambda d: part(d, "pslc")["mean_mbps"], fmt=".0f"),
               "gib": V(AGED, get=lambda d: part(d, "pslc")["gib_end"], fmt=".1f"),
               "folding": V(AGED, get=lambda d: part(d, "folding")["mean_mbps"], fmt=".0f")}),
        Claim(F, "pslc for {gib} GiB, then folding at\n{folding} MB/s. Over the span the fresh drive writes at pSLC "
                 "speed, the aged one averages {mean} MB/s, 1/{times} of it",
              {"gib": V(AGED, get=lambda d: part(d, "pslc", True)["gib_end"], fmt=".2f"),
               "folding": V(AGED, get=lambda d: part(d, "folding", True)["mean_mbps"], fmt=".0f"),
               "mean": V(AGED, get=lambda d: mean_until(d, part(d, "pslc")["gib_end"], aged_label), fmt=".0f"),
               "times": V(AGED, get=lambda d: part(d, "pslc")["mean_mbps"]
                          / mean_until(d, part(d, "pslc")["gib_end"], aged_label), fmt=".0f")}),
        Claim(F, "must then also fold its large cache back ({folding} MB/s)",
              {"folding": V(AGED, get=lambda d: part(d, "folding")["mean_mbps"], fmt=".0f")}),
        Claim(F, "goes straight to TLC\nat {direct} MB/s instead of {folding} MB/s through the full cache",
              {"direct": V(DW, get=lambda d: part(d, "direct", True)["mean_mbps"], fmt=".0f"),
               "folding": V(DW, get=lambda d: part(d, "folding")["mean_mbps"], fmt=".0f")}),
        Claim(F, "Three phases in the note's order: pslc {pslc} MB/s to {end1} GiB",
              {"pslc": V(DDW, get=lambda d: part(d, "pslc")["mean_mbps"], fmt=".0f"),
               "end1": V(DDW, get=lambda d: part(d, "pslc")["gib_end"], fmt=".1f")}),
        Claim(F, "direct-write {direct} MB/s to {end2} GiB (the remaining TLC, another ¼), then folding {folding} "
                 "MB/s:",
              {"direct": V(DDW, get=lambda d: part(d, "direct")["mean_mbps"], fmt=".0f"),
               "end2": V(DDW, get=lambda d: part(d, "direct")["gib_end"], fmt=".1f"),
               "folding": V(DDW, get=lambda d: part(d, "folding")["mean_mbps"], fmt=".0f")}),
    ]
