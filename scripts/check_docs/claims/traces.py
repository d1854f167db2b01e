"""docs/traces/README.md's figures: `nandlab trace stats` over the trace samples beside the checkout
(../shared/traces), run as the README's command runs it, and its committed composition.csv."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from check_docs.model import Cell, Claim, Registry, Run, SameFiles, Table, Value as V

F = "docs/traces/README.md"
ROOT = Path(__file__).resolve().parents[3]
TRACES = ROOT.parent / "shared" / "traces"
PATTERNS = ("*.csv", "*.txt", "*.trace", "*.ascii", "*.spc")
RUN = "trace-stats"


def trace_stats(out: Path) -> dict[str, Any]:
    """`cd ../shared/traces && nandlab trace stats *.csv *.txt *.trace *.ascii *.spc --out DIR` (the shell's
    order: each pattern's files sorted): composition.csv's rows by trace."""
    import polars as pl

    files = [p.name for pattern in PATTERNS for p in sorted(TRACES.glob(pattern))]
    done = subprocess.run([sys.executable, "-m", "nandlab", "trace", "stats", *files, "--out", str(out)],
                          cwd=TRACES, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return {"traces": {row["trace"]: row for row in pl.read_csv(out / "composition.csv").to_dicts()}}


def of(trace: str, column: str):
    """A column of one trace's composition row (trace names hold dots: no path)."""
    return lambda d: d["traces"][trace][column]


def declare_runs(r: Registry) -> None:
    r.run(Run(RUN, python="claims.traces:trace_stats", cost=7))


def declare(r: Registry) -> None:
    declare_runs(r)

    def share(trace: str, kind: str) -> Cell:
        return Cell({"all": V(RUN, get=of(trace, f"{kind}_percent"), fmt=".0f"),
                     "random": V(RUN, get=of(trace, f"{kind}_random_percent"), fmt=".0f"),
                     "sequential": V(RUN, get=of(trace, f"{kind}_sequential_percent"), fmt=".0f")},
                    "{all} ({random} / {sequential})")

    names = ("msr_hm_0_first1000.csv", "msr_rsrch_1.csv", "tencent_cbs_sample_50k.csv",
             "blkparse_ycsb_ext4_msclaudz.txt", "fiu_mail_cheetah_sample.clean.txt", "mqsim_wsrch-small.trace",
             "ssdsim_example_financial1_first10k.ascii", "umass_websearch1_first10.spc")
    rows = {name: {"records": V(RUN, get=of(name, "records"), fmt=",.0f"),
                   "writes % (random / seq.)": share(name, "write"),
                   "reads % (random / seq.)": share(name, "read")} for name in names}
    # No writes: the cell is the share alone.
    rows["umass_websearch1_first10.spc"]["writes % (random / seq.)"] = V(
        RUN, get=of("umass_websearch1_first10.spc", "write_percent"), fmt=".0f")
    r.check(
        SameFiles(F, RUN, [("docs/traces/composition.csv", "composition.csv")]),
        Table(F, ["trace", "format", "records", "writes % (random / seq.)", "reads % (random / seq.)"], rows),
        Claim(F, "One of its dispatch events carries a timestamp of {t} s",
              {"t": V(RUN, get=lambda d: math.floor(of("blkparse_ycsb_ext4_msclaudz.txt", "duration_seconds")(d)),
                      fmt=",.0f")}),
    )
