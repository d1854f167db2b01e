"""docs/power-loss/README.md's figures: the twelve-design sweep (`nandlab sweep examples/power-loss.toml`),
the per-cut run (`nandlab run examples/power-loss-cuts.toml`, the README's `toml` block) and
bench/power-loss.toml's caveat figures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from check_docs.model import Claim, Registry, Run, Value as V

F = "docs/power-loss/README.md"
ROOT = Path(__file__).resolve().parents[3]
CUTS = "examples/power-loss-cuts.toml"

COLUMNS = ("write_cache", "paired_page_backup", "pslc", "waf", "backup_programs", "power_loss_cuts",
           "power_loss_flash_waf", "power_loss_acknowledged_lost_units", "power_loss_lost_by_reason_write_cache",
           "power_loss_lost_by_reason_interrupted", "power_loss_lost_by_reason_paired_page",
           "power_loss_recovery_us_mean", "power_loss_recovering_fraction")


def _nandlab(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "nandlab", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return done.stdout


def sweep(out: Path) -> dict[str, Any]:
    """`nandlab sweep examples/power-loss.toml`: each point's figures the README quotes, by
    ``"write_cache/backup/pslc"`` (``"off/no/dynamic"``)."""
    import polars as pl

    _nandlab("sweep", "examples/power-loss.toml", "--out", str(out), "-q")
    rows = pl.read_parquet(out / "results.parquet").select(COLUMNS).to_dicts()
    return {"points": {f"{r['write_cache']}/{'yes' if r['paired_page_backup'] else 'no'}/{r['pslc']}": r
                       for r in rows}}


def cuts(out: Path) -> dict[str, Any]:
    """The README's per-cut run: examples/power-loss-cuts.toml (whose settings must be the README's `toml`
    block, line for line), its summary and the recovery times of power_losses.parquet."""
    import polars as pl

    block = re.search(r"```toml\n(.*?)```", (ROOT / F).read_text(), re.S)[1]
    body = [line for line in (ROOT / CUTS).read_text().splitlines() if line.strip() and not line.startswith("#")]
    if body != [line for line in block.splitlines() if line.strip()]:
        raise RuntimeError(f"{CUTS} is not the README's toml block")
    result = json.loads(_nandlab("run", CUTS, "--out", str(out), "--json", "-q"))
    recovery = pl.read_parquet(out / "power_losses.parquet")["recovery_us"]
    result["recovery_ms"] = {"min": recovery.min() / 1e3, "max": recovery.max() / 1e3}
    return result


def points(select):
    """A figure over the sweep's points that ``select(write_cache, backup, pslc)`` keeps."""
    def of(result: dict[str, Any]) -> list[dict[str, Any]]:
        return [row for key, row in result["points"].items() if select(*key.split("/"))]
    return of


def low(select, column: str):
    return lambda result: min(row[column] for row in points(select)(result))


def high(select, column: str):
    return lambda result: max(row[column] for row in points(select)(result))


def one(key: str, column: str):
    return lambda result: result["points"][key][column]


def all_paired(key: str):
    """The units lost at point ``key``, if every one of them was a lower page an upper-page program
    corrupted (the table's "why"), else what else they were."""
    def of(result: dict[str, Any]) -> Any:
        row = result["points"][key]
        paired = row["power_loss_lost_by_reason_paired_page"]
        return row[LOST] if paired == row[LOST] else f"{row[LOST]} ({paired} to paired pages)"
    return of


def everywhere(cache: str, backup: str = "", pslc: str = ""):
    return lambda c, b, p: c == cache and (not backup or b == backup) and (not pslc or p == pslc)


LOST = "power_loss_acknowledged_lost_units"
ANY = lambda c, b, p: True  # noqa: E731
PSLC = lambda c, b, p: p == "dynamic"  # noqa: E731
NO_PSLC = lambda c, b, p: p == "off"  # noqa: E731


def declare(r: Registry) -> None:
    r.run(
        Run("power-loss-sweep", python="claims.power_loss:sweep", cost=40, ci=False),
        Run("power-loss-cuts", python="claims.power_loss:cuts", cost=10),
    )
    if "bench-power-loss" not in r.runs:  # BENCHMARKS.md quotes the same run (claims/benchmarks.py declares it)
        r.run(Run("bench-power-loss", ["run", "bench/power-loss.toml", "--json", "-q"], cost=130, ci=False))
    s = "power-loss-sweep"

    def sweep_value(get, fmt: str = ",.0f") -> V:
        return V(s, get=get, fmt=fmt)

    volatile = everywhere("volatile")
    booked = "phases.random-write"
    r.check(
        Claim(F, "with a cut every 50 ms of simulated time on average ({lo} – {hi} cuts per run)",
              {"lo": sweep_value(low(ANY, "power_loss_cuts")), "hi": sweep_value(high(ANY, "power_loss_cuts"))}),
        Claim(F, "| plp | either | either | {v} | documented safe |",
              {"v": sweep_value(high(everywhere("plp"), LOST))}),
        Claim(F, "| off | yes | either | {v} | documented safe |",
              {"v": sweep_value(high(everywhere("off", "yes"), LOST))}),
        Claim(F, "| off | no | off | {v} | all lower pages corrupted",
              {"v": sweep_value(all_paired("off/no/off"), lambda v: v if isinstance(v, str) else f"{v:,}")}),
        Claim(F, "| off | no | dynamic | {v} | the same, only for data",
              {"v": sweep_value(all_paired("off/no/dynamic"), lambda v: v if isinstance(v, str) else f"{v:,}")}),
        Claim(F, "| volatile | either | either | {lo} – {hi} | mostly still in the DRAM cache "
                 "({cache_lo} – {cache_hi});",
              {"lo": sweep_value(low(volatile, LOST)), "hi": sweep_value(high(volatile, LOST)),
               "cache_lo": sweep_value(low(volatile, "power_loss_lost_by_reason_write_cache")),
               "cache_hi": sweep_value(high(volatile, "power_loss_lost_by_reason_write_cache"))}),
        Claim(F, "losses fall from {off} to {dynamic} units, those whose only copy already sat in TLC",
              {"off": sweep_value(one("off/no/off", LOST)), "dynamic": sweep_value(one("off/no/dynamic", LOST))}),
        Claim(F, "Backup costs flash programs — {lo} – {hi} SLC copies of lower pages per run",
              {"lo": sweep_value(low(lambda c, b, p: c != "plp" and b == "yes", "backup_programs")),
               "hi": sweep_value(high(lambda c, b, p: c != "plp" and b == "yes", "backup_programs"))}),
        Claim(F, "a pSLC cache costs more (its folds): WAF {p_lo} – {p_hi} against {lo} – {hi} as booked, "
                 "{fp_lo} – {fp_hi} against {f_lo} – {f_hi} in programs",
              {"p_lo": sweep_value(low(PSLC, "waf"), ".2f"), "p_hi": sweep_value(high(PSLC, "waf"), ".2f"),
               "lo": sweep_value(low(NO_PSLC, "waf"), ".2f"), "hi": sweep_value(high(NO_PSLC, "waf"), ".2f"),
               "fp_lo": sweep_value(low(PSLC, "power_loss_flash_waf"), ".2f"),
               "fp_hi": sweep_value(high(PSLC, "power_loss_flash_waf"), ".2f"),
               "f_lo": sweep_value(low(NO_PSLC, "power_loss_flash_waf"), ".2f"),
               "f_hi": sweep_value(high(NO_PSLC, "power_loss_flash_waf"), ".2f")}),
        Claim(F, "a recovery takes {lo} – {hi} ms on average, longer than the",
              {"lo": sweep_value(lambda d: low(ANY, "power_loss_recovery_us_mean")(d) / 1e3, ".0f"),
               "hi": sweep_value(lambda d: high(ANY, "power_loss_recovery_us_mean")(d) / 1e3, ".0f")}),
        Claim(F, "drive spends {lo} – {hi} % of the cut phase recovering",
              {"lo": sweep_value(low(ANY, "power_loss_recovering_fraction"), "%"),
               "hi": sweep_value(high(ANY, "power_loss_recovering_fraction"), "%")}),
        Claim(F, "{cuts} cuts on the same drive with a volatile cache and no backup",
              {"cuts": V("power-loss-cuts", "power_loss.cuts", ",.0f")}),
        Claim(F, "rebuilding the map, {lo} – {hi} ms of simulated time",
              {"lo": V("power-loss-cuts", "recovery_ms.min", ".0f"),
               "hi": V("power-loss-cuts", "recovery_ms.max", ".0f")}),
        Claim(F, "nandlab sweep examples/power-loss.toml --out results/power-loss # {runs} runs,",
              {"runs": sweep_value(lambda d: len(d["points"]))}),
        Claim(F, "on `bench/power-loss.toml` (a {gib} GiB drive at full GC load",
              {"gib": V("bench-power-loss", "device.raw_capacity_bytes", get=lambda b: b / 2 ** 30, fmt=".3g")}),
        Claim(F, "a cut a second) WAF {waf} as booked, {share} % of the programs called off, about {done} done",
              {"waf": V("bench-power-loss", f"{booked}.waf", ".0f"),
               "share": V("bench-power-loss", booked, "%",
                          get=lambda p: p["power_loss"]["in_flight"]["discarded_programs"] / p["flash_programs"]),
               "done": V("bench-power-loss", f"{booked}.power_loss.flash_waf", ".1f")}),
    )
