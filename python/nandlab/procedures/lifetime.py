"""``nandlab lifetime``: a drive from pristine to dead (``nandlab.lifetime``), alone or as
ZombieNAND beside the baseline (``lifetime-compare``, which a sweep can run at each point)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console
from rich.table import Table

from nandlab import api, lifetime, slicing
from nandlab.output import DEATH_CAUSES, number
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.report.page import Report, read_json
from nandlab.terminal import safe

LIFETIME_JSON = "lifetime.json"


@dataclass(frozen=True)
class LifetimeResult(ProcedureResult):
    """A lifetime run's figures (``lifetime.run`` without its ``result``), or a comparison's
    (``lifetime.compare``): its ``document``."""

    document: dict[str, Any]

    def runs(self) -> dict[str, dict[str, Any]]:
        """The runs, by the label their table row has."""
        return {"run": self.document}

    def to_dict(self) -> dict[str, Any]:
        return self.document

    def files(self, out: Path) -> list[Path]:
        path = out / LIFETIME_JSON
        path.write_text(self.to_json() + "\n", encoding="utf-8")
        return [path]

    def print(self, console: Console) -> None:
        """Per run: host data written until death (and until the drive stopped holding its advertised
        capacity, if it lived on past that), the share of its advertised capacity it held when it died,
        drive writes, simulated and wall time, the cause; under the table, each death's whole reason."""
        table = Table("Drive", "Written until death", "Capacity held until", "Capacity at death", "Drive writes",
                      "Sim s", "Wall s", "Death", title="Lifetime")
        for label, r in self.runs().items():
            short = r.get("capacity_short_since_bytes")
            held = "to the end" if short is None or short >= r["host_write_bytes"] else f"{short / 1e12:.3g} TB"
            table.add_row(
                label,
                f"{r['host_write_bytes'] / 1e12:.3g} TB",
                held,
                "" if r.get("capacity_at_death") is None else f"{r['capacity_at_death']:.1%}",
                number(r["drive_writes"]),
                number(r["sim_seconds"]),
                number(r["wall_seconds"]),
                safe(DEATH_CAUSES.get(r.get("death_cause"), r["death"]) if r["death"] else "alive at the end"),
            )
        console.print(table)
        for label, r in self.runs().items():
            if r["death"]:
                console.print(safe(f"{label}: {r['death']}"), highlight=False)
        part = self.document.get("slice")
        if part and part["by"] == 1:
            blocks = part["simulated_blocks_per_pool"]
            why = (f"the drive has {blocks:,} blocks a GC pool, too few to cut in two and keep "
                   f"{slicing.MIN_BLOCKS_PER_POOL:,} in each" if blocks < 2 * slicing.MIN_BLOCKS_PER_POOL
                   else "a slice of 1 is the whole drive, or no slice of the floor's size divides it")
            console.print(f"Not sliced: {why}; it ran whole.", highlight=False)
        elif part:
            console.print(
                f"Approximate: simulated 1/{part['by']} of the drive ({part['simulated_capacity_bytes'] / 2**30:.4g} "
                f"GiB of {part['user_capacity_bytes'] / 2**30:.4g} GiB, {part['simulated_blocks_per_pool']:,} blocks "
                f"a GC pool); bytes written and simulated time are the slice's × {part['by']}, drive writes its own "
                "(within 0.5 % of the whole drive's where measured: BENCHMARKS.md).", highlight=False)

    @classmethod
    def report(cls, directory: Path) -> Report:
        """The runs' table (and a comparison's ratios)."""
        result = cls(read_json(directory / LIFETIME_JSON))
        r = Report(directory, "Lifetime", f"pristine to dead ({cls.kind})")
        for name in ("lifetime_ratio", "latency_ratio", "latency_ratio_after"):
            if name in result.document:
                r.fact(name, number(result.document[name]))
        part = result.document.get("slice")
        if part:
            r.fact("approximate", f"a 1/{part['by']} slice of the drive ran ({part['simulated_capacity_bytes']:,} of "
                                  f"{part['user_capacity_bytes']:,} bytes); bytes and time scaled back")
        r.table("Runs", [{"drive": label, **{k: v for k, v in run.items() if not isinstance(v, (dict, list))}}
                         for label, run in result.runs().items()])
        return r


class LifetimeRun(LifetimeResult):
    """One drive until death."""

    kind = "lifetime"

    @classmethod
    def of(cls, result: api.Result, sliced: dict[str, Any] | None = None) -> LifetimeRun:
        """A lifetime run's result from its ``nandlab.Result`` (one resumed from a snapshot; ``sliced``
        as ``lifetime.of_result`` takes it)."""
        return cls({k: v for k, v in lifetime.of_result(result, sliced).items() if k != "result"})


class LifetimeComparison(LifetimeResult):
    """ZombieNAND and the baseline, each until death, and their ratios."""

    kind = "lifetime-compare"

    def runs(self) -> dict[str, dict[str, Any]]:
        return {"zombie": self.document["zombie"], "baseline": self.document["baseline"]}

    def print(self, console: Console) -> None:
        """Both runs, then the ratios."""
        super().print(console)
        d = self.document
        after = d["latency_ratio_after"]
        console.print(
            f"lifetime ratio (ZombieNAND / baseline): {number(d['lifetime_ratio'])}; "
            f"latency ratio over the baseline's life: {number(d['latency_ratio'])}, "
            f"after it: {number(after) if after is not None else 'none (ZombieNAND died first)'}"
        )


def run(config: api.ConfigSource, **options: Any) -> LifetimeRun:
    """``lifetime.run`` (seed, progress, snapshots, notes, slice) as a procedure's result."""
    return LifetimeRun({k: v for k, v in lifetime.run(config, **options).items() if k != "result"})


def compare(config: api.ConfigSource, **options: Any) -> LifetimeComparison:
    """``lifetime.compare`` (seed, progress, slice) as a procedure's result."""
    return LifetimeComparison(lifetime.compare(config, **options))


def sweep_point(config: dict[str, Any]) -> tuple[dict[str, Any], pl.DataFrame]:
    """A sweep's point: the ratios, and each side's bytes, drive writes, death (words, cause and the capacity held) and
    time; both sides' time series with a ``side`` column."""
    report = lifetime.compare(config, timeseries=True)
    figures = {k: report[k] for k in ("lifetime_ratio", "latency_ratio", "latency_ratio_after")}
    series = []
    for side in ("zombie", "baseline"):
        for key in ("host_write_bytes", "drive_writes", "death", "death_cause", "capacity_at_death", "sim_seconds"):
            figures[f"{side}_{key}"] = report[side][key]
        series.append(report[f"{side}_timeseries"].with_columns(side=pl.lit(side)))
    return figures, pl.concat(series, how="diagonal_relaxed")


RUN = Procedure("lifetime", "nandlab lifetime", LifetimeRun, run)
COMPARE = Procedure("lifetime-compare", "nandlab lifetime --compare-baseline", LifetimeComparison, compare,
                    sweep=sweep_point)
