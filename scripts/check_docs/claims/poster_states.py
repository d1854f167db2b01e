"""docs/poster-states/README.md's figures: the two sweeps (`nandlab sweep examples/poster-states.toml` and
`examples/poster-read-states.toml`) and their committed result files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from check_docs.model import Claim, Registry, Run, SameFiles, Value as V
from check_docs.recipes import committed_sweep

F = "docs/poster-states/README.md"
PAIRS = ("results.parquet", "sweep.json", "manifest.json")


def _sweep(example: str, committed: str, out: Path, key: str) -> dict[str, Any]:
    """The README's command into a fresh directory: each run's figures by its axes' labels."""
    rows = committed_sweep(example, committed, out)
    return {"runs": len(rows), "points": {key.format(**r): {k: r[k] for k in ("rber_mean", "rber_p99")}
                                          for r in rows}}


def cycling(out: Path) -> dict[str, Any]:
    return _sweep("examples/poster-states.toml", "docs/poster-states/cycling", out, "{cycled_with}/{model}")


def read_states(out: Path) -> dict[str, Any]:
    return _sweep("examples/poster-read-states.toml", "docs/poster-states/read-states", out, "{written}")


def at(point: str, figure: str = "rber_mean"):
    return lambda d: d["points"][point][figure]


def declare(r: Registry) -> None:
    r.run(
        Run("poster-states-cycling", python="claims.poster_states:cycling", cost=35),
        Run("poster-states-read", python="claims.poster_states:read_states", cost=2),
    )
    r.check(
        SameFiles(F, "poster-states-cycling", [(f"docs/poster-states/cycling/{n}", n) for n in PAIRS]),
        SameFiles(F, "poster-states-read", [(f"docs/poster-states/read-states/{n}", n) for n in PAIRS]),
        Claim(F, "| '11' (cells left erased) | **{pl}** | **{vt}** |",
              {"pl": V("poster-states-cycling", get=at("11/power-law"), fmt=".2e"),
               "vt": V("poster-states-cycling", get=at("11/vt"), fmt=".2e")}),
        *(Claim(F, f"| {label} | {{pl}} | {{vt}} |",
                {"pl": V("poster-states-cycling", get=at(f"{state}/power-law"), fmt=".2e"),
                 "vt": V("poster-states-cycling", get=at(f"{state}/vt"), fmt=".2e")})
          for label, state in (("'10'", "10"), ("'00'", "00"), ("'01'", "01"), ("random", "random"))),
        *(Claim(F, f"| all '{state}' | {{mean}} | {{p99}} |",
                {"mean": V("poster-states-read", get=at(state), fmt=".2e"),
                 "p99": V("poster-states-read", get=at(state, "rber_p99"), fmt=".2e")})
          for state in ("11", "10", "00", "01")),
    )
