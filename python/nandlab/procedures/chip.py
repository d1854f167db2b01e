"""``nandlab chip endurance`` and ``chip latency``: the chip test bench (``nandlab.chipbench``,
Desnoyers' experiments on raw NAND chips). One report shows a directory's endurance run, its
latency spectrum, or both."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rich.console import Console
from rich.table import Table

from nandlab import chipbench
from nandlab.output import number
from nandlab.procedures.base import Procedure, ProcedureResult
from nandlab.report.page import Report, existing_figure, read_json


@dataclass(frozen=True)
class _ChipResult(ProcedureResult):
    """A chip bench result: its ``document`` (printed as compact JSON, as the engine gives it),
    written by the subclass's ``writer`` (``chipbench.write_endurance``, ``write_latency``)."""

    document: dict[str, Any]
    writer: ClassVar[Callable[[dict[str, Any], Path], list[Path]]]

    def to_dict(self) -> dict[str, Any]:
        return self.document

    def files(self, out: Path) -> list[Path]:
        return type(self).writer(self.document, out)

    def to_json(self) -> str:
        return json.dumps(self.document)

    @classmethod
    def report(cls, directory: Path) -> Report:
        """Endurance and latency, whichever of the two the directory holds."""
        d = directory
        r = Report(d, f"Chip bench: {d.resolve().name}", "chip endurance and latency (nandlab chip)")
        documents = [read_json(d / name) for name in (chipbench.ENDURANCE_JSON, chipbench.LATENCY_JSON)
                     if (d / name).exists()]
        chip = documents[0]["chip"]
        r.title = f"Chip bench: {chip['name']}"
        r.fact("chip", f"{chip['name']}: {chip['description']}")
        if (d / chipbench.ENDURANCE_JSON).exists():
            run = documents[0]
            lifetimes = sorted(run["lifetimes"])
            median = lifetimes[len(lifetimes) // 2]
            conditions = run["conditions"]
            r.fact("endurance test",
                   f"{len(lifetimes):,} blocks, {conditions['pattern']}, {conditions['temperature_c']:g} °C")
            existing_figure(r, d, "Endurance", chipbench.ENDURANCE_PNG,
                            "block lifetimes against the rating; latency against cycles")
            r.table("Endurance", [{"blocks": len(lifetimes), "nominal": run["nominal_endurance"], "min": lifetimes[0],
                                   "median": median, "max": lifetimes[-1],
                                   "median / nominal": median / run["nominal_endurance"]}],
                    note="Program/erase cycles until an operation failed (Desnoyers' method).")
        if (d / chipbench.LATENCY_JSON).exists():
            doc = documents[-1]
            existing_figure(r, d, "Latency over life", chipbench.LATENCY_PNG,
                            "worst, typical and best latency beside the datasheet")
            r.table("Latency over life", [
                {"operation": op, **{f"{k} µs": doc[f"{op}_us"][k] for k in ("worst", "typical", "best")},
                 "datasheet µs": doc["datasheet"][f"{op}_us"]} for op in ("read", "program", "erase")
            ])
        return r


class Endurance(_ChipResult):
    """Blocks of a chip cycled to failure (``chipbench.endurance``'s document)."""

    kind = "chip-endurance"
    writer = staticmethod(chipbench.write_endurance)

    def print(self, console: Console) -> None:
        """Lifetimes: min, median and max against the rating."""
        run = self.document
        lifetimes = sorted(run["lifetimes"])
        nominal = run["nominal_endurance"]
        conditions = run["conditions"]
        table = Table(
            "Blocks", "Nominal", "Min", "Median", "Max", "Median / nominal",
            title=f"{run['chip']['name']}: cycles to failure ({conditions['pattern']}, "
                  f"{conditions['temperature_c']:g} °C)",
        )
        table.add_row(
            f"{len(lifetimes):,}",
            f"{nominal:,}",
            f"{lifetimes[0]:,}",
            f"{lifetimes[len(lifetimes) // 2]:,}",
            f"{lifetimes[-1]:,}",
            f"{lifetimes[len(lifetimes) // 2] / nominal:.3g}×",
        )
        console.print(table)


class Latency(_ChipResult):
    """A chip's latency over a block's life (``chipbench.latency``'s document)."""

    kind = "chip-latency"
    writer = staticmethod(chipbench.write_latency)

    def print(self, console: Console) -> None:
        """Worst, typical and best latency per operation, beside the datasheet."""
        result = self.document
        table = Table("Operation", "Worst µs", "Typical µs", "Best µs", "Datasheet µs",
                      title=f"{result['chip']['name']}: latency over life")
        for op in ("read", "program", "erase"):
            spectrum = result[f"{op}_us"]
            table.add_row(
                op,
                *(number(spectrum[k]) for k in ("worst", "typical", "best")),
                number(result["datasheet"][f"{op}_us"]),
            )
        console.print(table)


def endurance(chip: str, **options: Any) -> Endurance:
    """``chipbench.endurance`` (blocks, pattern, temperature_c, seed) as a procedure's result."""
    return Endurance(chipbench.endurance(chip, **options))


def latency(chip: str) -> Latency:
    """``chipbench.latency`` as a procedure's result."""
    return Latency(chipbench.latency(chip))


ENDURANCE = Procedure("chip-endurance", "nandlab chip endurance", Endurance, endurance)
LATENCY = Procedure("chip-latency", "nandlab chip latency", Latency, latency)
