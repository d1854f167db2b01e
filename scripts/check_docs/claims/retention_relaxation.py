"""docs/retention-relaxation/README.md's figures: the sweep (`nandlab sweep examples/retention-relaxation.toml
--out docs/retention-relaxation`, from the checkout with ../shared/traces beside it), its committed result
files, and the cold-fill variant the README quotes."""

from __future__ import annotations

import copy
import json
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib
from pathlib import Path
from typing import Any

from check_docs.model import Claim, Registry, Run, SameFiles, Value as V
from check_docs.recipes import committed_sweep

F = "docs/retention-relaxation/README.md"
D = "docs/retention-relaxation"
ROOT = Path(__file__).resolve().parents[3]
SWEEP = "examples/retention-relaxation.toml"
FIGURES = ("latency_us_mean", "waf", "refresh_programs", "sim_seconds")


def sweep(out: Path) -> dict[str, Any]:
    """The README's command (into a fresh directory): each run's figures by ``"trace/scale/relaxed"``
    (``"rsrch_1/0.1/true"``), and the drive the base config makes. The committed sweep.toml must be the
    sweep file (SameFiles compares the tables and JSON, not TOML)."""
    import nandlab

    rows = committed_sweep(SWEEP, D, out)
    base = tomllib.loads((ROOT / SWEEP).read_text())["base"]
    sim = nandlab.make_simulator(base)
    mlc = sim.config["device"]["timing"][1]
    return {"runs": len(rows),
            "points": {f"{r['trace']}/{r['time_scale']:g}/{str(r['relaxed']).lower()}": {k: r[k] for k in FIGURES}
                       for r in rows},
            "device": {"dies": sim.device["dies"], "program_us": mlc["program_ns"][0] / 1e3,
                       "read_us": mlc["read_ns"][0] / 1e3}}


def cold_fill(out: Path) -> dict[str, Any]:
    """The sweep's base (rsrch_1 at its recorded pace) with the whole drive filled first, without and with
    relaxation: the trace phase's WAF and mean response time."""
    import nandlab
    from nandlab import output

    base = tomllib.loads((ROOT / SWEEP).read_text())
    seed = base["sweep"]["seed"]
    result = {}
    for relaxed in (False, True):
        config = copy.deepcopy(base["base"])
        config["seed"] = seed
        config["device"]["wear"]["retention_relaxed"] = relaxed
        config["phase"] = [{"name": "cold", "kind": "fill"}, *config["phase"]]
        phase = json.loads(output.to_json(nandlab.run(config, progress=False)))["phases"][1]
        result["relaxed" if relaxed else "normal"] = {k: phase[k] for k in ("waf", "latency_us_mean",
                                                                             "refresh_programs")}
    return result


S = "retention-relaxation"


def at(trace: str, scale: str, relaxed: bool, figure: str):
    return lambda d: d["points"][f"{trace}/{scale}/{str(relaxed).lower()}"][figure]


def cut(trace: str, *scales: str):
    """The largest cut of the mean response time over ``scales`` (a share)."""
    return lambda d: max(1 - at(trace, s, True, "latency_us_mean")(d) / at(trace, s, False, "latency_us_mean")(d)
                         for s in scales)


def most(trace: str, scales: tuple[str, ...], figure: str, relaxed: tuple[bool, ...] = (True,)):
    return lambda d: max(at(trace, s, r, figure)(d) for s in scales for r in relaxed)


def same_at_every_scale(trace: str, relaxed: bool, figure: str):
    """The figure, if every time scale gives it exactly (the table's "any"), else the scales' values."""
    def of(d):
        values = {at(trace, s, relaxed, figure)(d) for s in ("1", "0.1", "0.01")}
        return values.pop() if len(values) == 1 else f"{sorted(values)} by scale"
    return of


def none_or_share(v: Any) -> str:
    """A cut stated as "0 %" (relaxed and normal identical, the table's "same"), else the share."""
    return "0" if v == 0 else f"{100 * v:.2g}"


def latency(v: Any) -> str:
    return v if isinstance(v, str) else f"{v:,.0f}"


ALL = ("1", "0.1", "0.01")


def row(label: str, trace: str, scale: str, bold_cut: bool, bold_waf: bool, hours: str) -> Claim:
    cut_text = "**{cut} %**" if bold_cut else "{cut} %"
    waf_text = "**{waf}**" if bold_waf else "{waf}"
    return Claim(F, f"| {label} | {scale} | {{normal}} | {{relaxed}} | {cut_text} | {waf_text} | {{refresh}} | "
                    f"{{time}} {hours} |",
                 {"normal": V(S, get=at(trace, scale, False, "latency_us_mean"), fmt=",.0f"),
                  "relaxed": V(S, get=at(trace, scale, True, "latency_us_mean"), fmt=",.0f"),
                  "cut": V(S, get=cut(trace, scale), fmt="%.1"),
                  "waf": V(S, get=at(trace, scale, True, "waf"), fmt=".2f"),
                  "refresh": V(S, get=at(trace, scale, True, "refresh_programs"), fmt=",.0f"),
                  "time": V(S, get=lambda d: at(trace, scale, False, "sim_seconds")(d) / (3600 if hours == "h" else 1),
                            fmt=".1f" if scale == "0.01" else ".0f")})


def unchanged_row(label: str, trace: str) -> Claim:
    """A row of a trace relaxation leaves unchanged at every scale ("same", "0 %")."""
    return Claim(F, f"| {label} | 1 / 0.1 / 0.01 | {{a}} / {{b}} / {{c}} | same | {{cut}} % | {{waf}} | {{refresh}} | "
                    "{time} s at 1× |",
                 {"a": V(S, get=at(trace, "1", False, "latency_us_mean"), fmt=",.0f"),
                  "b": V(S, get=at(trace, "0.1", False, "latency_us_mean"), fmt=",.0f"),
                  "c": V(S, get=at(trace, "0.01", False, "latency_us_mean"), fmt=",.0f"),
                  "cut": V(S, get=lambda d: max(abs(c) for c in [cut(trace, s)(d) for s in ALL]),
                           fmt=none_or_share),
                  "waf": V(S, get=most(trace, ALL, "waf", (False, True)), fmt=".2f"),
                  "refresh": V(S, get=most(trace, ALL, "refresh_programs", (False, True)), fmt=",.0f"),
                  "time": V(S, get=at(trace, "1", False, "sim_seconds"), fmt=".0f")})


def declare(r: Registry) -> None:
    from check_docs.claims import traces

    traces.declare_runs(r)
    r.run(
        Run(S, python="claims.retention_relaxation:sweep", cost=10),
        Run("retention-relaxation-cold", python="claims.retention_relaxation:cold_fill", cost=2),
    )
    cold = "retention-relaxation-cold"
    r.check(
        SameFiles(F, S, [(f"{D}/{name}", name) for name in ("results.parquet", "sweep.json", "manifest.json")]),
        Claim(F, "{runs} runs, 2.6 s of wall time", {"runs": V(S, "runs")}),
        Claim(F, "(`snia-mlc`: tPROG {program} µs, tR {read} µs, {dies} dies,",
              {"program": V(S, "device.program_us", ".0f"), "read": V(S, "device.read_us", ".0f"),
               "dies": V(S, "device.dies")}),
        row("MSR rsrch_1", "rsrch_1", "1", False, True, "h"),
        row("MSR rsrch_1", "rsrch_1", "0.1", True, False, "h"),
        row("MSR rsrch_1", "rsrch_1", "0.01", True, False, "h"),
        unchanged_row("MSR hm_0 (first 1,000)", "hm_0"),
        Claim(F, "| Tencent CBS (50 k) | any | {normal} | {relaxed} | {cut} % | {waf} | {refresh} | {time} s |",
              {"normal": V(S, get=same_at_every_scale("tencent", False, "latency_us_mean"), fmt=latency),
               "relaxed": V(S, get=same_at_every_scale("tencent", True, "latency_us_mean"), fmt=latency),
               "cut": V(S, get=cut("tencent", *ALL), fmt="%.1"),
               "waf": V(S, get=most("tencent", ALL, "waf", (False, True)), fmt=".2f"),
               "refresh": V(S, get=most("tencent", ALL, "refresh_programs", (False, True)), fmt=",.0f"),
               "time": V(S, get=same_at_every_scale("tencent", False, "sim_seconds"),
                         fmt=lambda v: v if isinstance(v, str) else f"{v:.1f}")}),
        Claim(F, "| UMass Financial1 (first 10 k) | 1 / 0.1 | {n1} / {n2} | {r1} / {r2} | {cut} % | {waf} | "
                 "{refresh} | {time} s at 1× |",
              {"n1": V(S, get=at("financial1", "1", False, "latency_us_mean"), fmt=",.0f"),
               "n2": V(S, get=at("financial1", "0.1", False, "latency_us_mean"), fmt=",.0f"),
               "r1": V(S, get=at("financial1", "1", True, "latency_us_mean"), fmt=",.0f"),
               "r2": V(S, get=at("financial1", "0.1", True, "latency_us_mean"), fmt=",.0f"),
               "cut": V(S, get=cut("financial1", "1", "0.1"), fmt="%.1"),
               "waf": V(S, get=most("financial1", ("1", "0.1"), "waf", (False, True)), fmt=".2f"),
               "refresh": V(S, get=most("financial1", ("1", "0.1"), "refresh_programs", (False, True)), fmt=",.0f"),
               "time": V(S, get=at("financial1", "1", False, "sim_seconds"), fmt=".0f")}),
        row("UMass Financial1 (first 10 k)", "financial1", "0.01", True, False, "s"),
        unchanged_row("FIU mail (first 10 k)", "fiu-mail"),
        Claim(F, "rsrch_1 ({share} % writes) under",
              {"share": V(traces.RUN, get=traces.of("msr_rsrch_1.csv", "write_percent"), fmt=".1f")}),
        Claim(F, "load gains {lo}–{hi} %, inside the poster's 11–35 %",
              {"lo": V(S, get=lambda d: min(cut("rsrch_1", s)(d) for s in ("0.1", "0.01")), fmt="%"),
               "hi": V(S, get=lambda d: max(cut("rsrch_1", s)(d) for s in ("0.1", "0.01")), fmt="%")}),
        Claim(F, "from unstable to nearly idle ({cut} %)", {"cut": V(S, get=cut("financial1", "0.01"), fmt="%")}),
        Claim(F, "The Tencent sample's {records} requests are stamped",
              {"records": V(traces.RUN, get=traces.of("tencent_cbs_sample_50k.csv", "records"), fmt=",.0f")}),
        Claim(F, "whatever the scale; {cut} % is the shorter drain", {"cut": V(S, get=cut("tencent", "1"), fmt="%")}),
        Claim(F, "At its recorded pace rsrch_1 runs {days} days",
              {"days": V(S, get=lambda d: at("rsrch_1", "1", True, "sim_seconds")(d) / 86400, fmt=".1f")}),
        Claim(F, "the relaxed data the host has not overwritten: {refresh} refresh programs, WAF {normal} → {relaxed}.",
              {"refresh": V(S, get=at("rsrch_1", "1", True, "refresh_programs"), fmt=",.0f"),
               "normal": V(S, get=at("rsrch_1", "1", False, "waf"), fmt=".2f"),
               "relaxed": V(S, get=at("rsrch_1", "1", True, "waf"), fmt=".2f")}),
        Claim(F, "WAF {waf} and a mean response time of {relaxed} against {normal} µs",
              {"waf": V(cold, "relaxed.waf", ".0f"),
               "relaxed": V(cold, "relaxed.latency_us_mean", ",.0f"),
               "normal": V(cold, "normal.latency_us_mean", ",.0f")}),
    )
