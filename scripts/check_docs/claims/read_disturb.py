"""docs/read-disturb/README.md's figures: `nandlab test read-disturb` on tlc-3d-errors (seeds 1–8) and on
examples/tlc-3d-errors-no-spread.toml (seeds 1–3), 2 GiB, 2,000 cycles, 2,000,000 reads."""

from __future__ import annotations

import math

from check_docs.model import Claim, Registry, Run, Table, Value as V

F = "docs/read-disturb/README.md"
ARGS = ["--capacity", "2GiB", "--cycles", "2000", "--reads", "2000000"]
NO_SPREAD = "examples/tlc-3d-errors-no-spread.toml"


def rd(seed: int, spread: bool = True) -> str:
    return f"read-disturb-{seed}" if spread else f"read-disturb-no-spread-{seed}"


def parted(d) -> float:
    """Where the RBER curves with and without reclaim part: the last read count (millions) at which they
    are the same."""
    without = {c["reads"]: c["rber_mean"] for c in d["curves"] if c["firmware"] == "without reclaim"}
    same = [c["reads"] for c in d["curves"] if c["firmware"] == "with reclaim" and without.get(c["reads"]) ==
            c["rber_mean"]]
    return max(same) / 1e6


def declare(r: Registry) -> None:
    for seed in range(1, 9):
        # Seed 1 is the README's command as written (no --seed: the default, 1).
        r.run(Run(rd(seed), ["test", "read-disturb", "--device", "tlc-3d-errors", *ARGS,
                             *(["--seed", str(seed)] if seed > 1 else []), "--json", "-q"], cost=3))
    for seed in range(1, 4):
        r.run(Run(rd(seed, False), ["test", "read-disturb", "--device", NO_SPREAD, *ARGS, "--seed", str(seed),
                                    "--json", "-q"], cost=3))
    one = rd(1)

    def firmware(side: str) -> dict:
        return {"RBER mean": V(one, f"{side}.rber_mean", ".2e"), "RBER max": V(one, f"{side}.rber_max", ".2e"),
                "retries/read": V(one, f"{side}.retries_per_read", ".3f"), "UBER": V(one, f"{side}.uber", ".2e"),
                "reclaims": V(one, f"{side}.read_reclaims")}

    seeds = {str(s): {"UBER without": V(rd(s), "without.uber", ".2e"), "UBER with": V(rd(s), "with.uber", ".2e"),
                      "retries/read without": V(rd(s), "without.retries_per_read", ".4f"),
                      "retries/read with": V(rd(s), "with.retries_per_read", ".4f"),
                      "RBER mean without": V(rd(s), "without.rber_mean", ".3e"),
                      "RBER mean with": V(rd(s), "with.rber_mean", ".3e")} for s in range(1, 9)}
    alike = {str(s): {"UBER without": V(rd(s, False), "without.uber", ".2e"),
                      "UBER with": V(rd(s, False), "with.uber", ".2e"),
                      "RBER max without": V(rd(s, False), "without.rber_max", ".3e"),
                      "RBER max with": V(rd(s, False), "with.rber_max", ".3e"),
                      "RBER mean without": V(rd(s, False), "without.rber_mean", ".3e"),
                      "RBER mean with": V(rd(s, False), "with.rber_mean", ".3e")} for s in range(1, 4)}
    every = tuple(rd(s) for s in range(1, 9)) + tuple(rd(s, False) for s in range(1, 4))
    r.check(
        Table(F, ["firmware", "RBER mean", "RBER max", "retries/read", "UBER", "reclaims"],
              {"without reclaim": firmware("without"), "with reclaim": firmware("with")}),
        Claim(F, "once the eight blocks holding the hot spot (it is striped over the drive's eight planes) pass "
                 "{reclaim} reads, at {millions} million reads",
              {"reclaim": V(one, "read_reclaim", ",.0f"), "millions": V(one, get=parted, fmt=".1f")}),
        Table(F, ["seed", "UBER without", "UBER with", "retries/read without", "retries/read with",
                  "RBER mean without", "RBER mean with"], seeds),
        Table(F, ["seed", "UBER without", "UBER with", "RBER max without", "RBER max with", "RBER mean without",
                  "RBER mean with"], alike),
        Claim(F, "every UBER here is {orders} orders of magnitude or more below the 1e-15 target",
              {"orders": V(every, bound="at least", fmt=".0f",
                           get=lambda *ds: min(-15 - math.log10(d[side]["uber"]) for d in ds
                                               for side in ("without", "with")))}),
    )
