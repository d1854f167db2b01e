"""The chip test bench: endurance and latency experiments on raw NAND chips (Desnoyers' method).

The engine drives its wear model directly (no drive, no FTL), so an endurance run of 100 blocks to
failure at millions of cycles each takes a moment::

    from nandlab import chipbench

    run = chipbench.endurance("MT29F2G08AAD", blocks=100, seed=1)
    run["lifetimes"], run["nominal_endurance"]
    chipbench.latency("MT29F8G08MAAWC")["program_us"]   # worst / typical / best
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import polars as pl

from nandlab import files, plausible
from nandlab._core import ConfigError, chip_endurance, chip_latency, chip_presets
from nandlab.arguments import checked, show_types

__all__ = ["chips", "endurance", "latency", "write_endurance", "write_latency"]

LIFETIMES_PARQUET = "lifetimes.parquet"
TRACE_PARQUET = "latency_trace.parquet"
ENDURANCE_JSON = "endurance.json"
ENDURANCE_PNG = "endurance.png"
LATENCY_JSON = "latency.json"
LATENCY_PNG = "latency.png"


def chips() -> dict[str, str]:
    """Chip presets: name → description (Desnoyers' Table 1 chips and SNIA's dies)."""
    return dict(chip_presets())


@checked
def endurance(
    chip: str, blocks: int = 100, pattern: str = "single-page", temperature_c: float = 25.0, seed: int = 0
) -> dict[str, Any]:
    """Cycle ``blocks`` blocks of ``chip`` to failure: program a page with zeros (``single-page``) or
    every page (``full-block``), erase, repeat until an operation fails.

    Returns ``nominal_endurance``, ``lifetimes`` (cycles per block), ``trace`` (``cycle``,
    ``program_us``, ``erase_us`` of the first block, every cycle up to 2,000 then sampled),
    ``chip`` and ``conditions``. Raises ``ConfigError`` for an unknown chip or a bad setting.
    """
    return chip_endurance(chip, blocks=blocks, pattern=pattern, temperature_c=temperature_c, seed=seed)


@checked
def latency(chip: str) -> dict[str, Any]:
    """Read, program and erase latency over a typical block's life, each with ``worst``,
    ``typical`` and ``best`` (µs, as Desnoyers reports them), and the chip's ``datasheet`` values."""
    return chip_latency(chip)


@checked
def write_endurance(run: dict[str, Any], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write endurance.json, lifetimes.parquet, latency_trace.parquet and endurance.png to ``out_dir``."""
    from nandlab import plots

    _check_figures(run, "chipbench.write_endurance(): run")
    out = files.output_directory(out_dir)
    paths = [out / name for name in (ENDURANCE_JSON, LIFETIMES_PARQUET, TRACE_PARQUET, ENDURANCE_PNG)]
    summary, lifetimes, trace, png = paths
    summary.write_text(json.dumps(run, indent=2) + "\n", encoding="utf-8")
    pl.DataFrame({"block": range(len(run["lifetimes"])), "lifetime": run["lifetimes"]}).write_parquet(lifetimes)
    pl.DataFrame(run["trace"]).write_parquet(trace)
    plots.endurance(run, png)
    return paths


@checked
def write_latency(result: dict[str, Any], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write latency.json and latency.png (worst / typical / best beside the datasheet) to ``out_dir``."""
    from nandlab import plots

    _check_figures(result, "chipbench.write_latency(): result")
    out = files.output_directory(out_dir)
    summary, png = out / LATENCY_JSON, out / LATENCY_PNG
    summary.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    plots.chip_latency(result, png)
    return [summary, png]


def _check_figures(document: dict[str, Any], what: str) -> None:
    """ConfigError naming ``what`` if a figure of ``document`` (a bench's result, perhaps altered)
    cannot exist: nothing is written then."""
    wrong = plausible.impossible(document)
    if wrong is not None:
        raise ConfigError(f"{what}: {wrong}")


show_types(__name__)
