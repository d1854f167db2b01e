"""docs/zombienand/README.md (the synthetic grid) and docs/zombienand/traces/README.md (the trace study)."""

from __future__ import annotations

from check_docs.model import Registry, Run, SameFiles

GRID = "docs/zombienand/README.md"
TRACES = "docs/zombienand/traces/README.md"
SAMPLES = "{root}/../shared/traces"


def declare(r: Registry) -> None:
    r.run(
        Run("lifetime-grid", ["lifetime-grid", "--out", "{out}", "-q"], json=False, cost=1650, ci=False),
        Run("lifetime-traces", ["lifetime-traces", *(f"{SAMPLES}/{t}" for t in (
            "msr_rsrch_1.csv", "tencent_cbs_sample_50k.csv", "msr_hm_0_first1000.csv",
            "ssdsim_example_financial1_first10k.ascii", "mqsim_wsrch-small.trace")),
            "--endurance-scale", "20", "--out", "{out}", "-q"], json=False, cost=400, ci=False),
    )
    r.check(
        SameFiles(GRID, "lifetime-grid", [("docs/zombienand/grid.csv", "grid.csv")]),
        SameFiles(TRACES, "lifetime-traces", [("docs/zombienand/traces/traces.csv", "traces.csv"),
                                              ("docs/zombienand/traces/composition.csv", "composition.csv")]),
    )
