"""Writing a run's results to a directory (summary.json, config.json, the time series as Parquet and
CSV, a figure) and the formats results are shown in: strict JSON, table numbers, the drive's lines."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import polars as pl

from nandlab.api import Result

SUMMARY_JSON = "summary.json"
CONFIG_JSON = "config.json"
TIMESERIES_PARQUET = "timeseries.parquet"
TIMESERIES_CSV = "timeseries.csv"
POWER_LOSSES_PARQUET = "power_losses.parquet"
POWER_LOSSES_CSV = "power_losses.csv"
THROUGHPUT_LATENCY_PNG = "throughput_latency.png"


def to_json(result: Result) -> str:
    """The run as strict JSON (``Result.to_dict``); NaN and infinities become ``null``."""
    return to_strict_json(result.to_dict())


def to_strict_json(document: Any) -> str:
    """Any JSON-able document as strict JSON: NaN and infinities become ``null``."""
    return json.dumps(_finite(document), indent=2, allow_nan=False)


def write(result: Result, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write summary.json, config.json (the resolved config), timeseries.parquet, timeseries.csv,
    throughput_latency.png, and with power cuts power_losses.parquet and .csv (a row per cut).

    Creates ``out_dir`` if needed, overwrites those files, and returns their paths.
    """
    # Imported here: matplotlib is slow to import and only this needs it.
    from nandlab import plots

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in (SUMMARY_JSON, TIMESERIES_PARQUET, TIMESERIES_CSV, THROUGHPUT_LATENCY_PNG)]
    summary, parquet, csv, png = paths
    summary.write_text(to_json(result) + "\n", encoding="utf-8")
    config = out / CONFIG_JSON
    config.write_text(to_strict_json(result.config) + "\n", encoding="utf-8")
    paths.insert(1, config)
    result.timeseries.write_parquet(parquet)
    result.timeseries.write_csv(csv)
    plots.throughput_latency(result, png)
    cuts = power_loss_table(result)
    if cuts.height:
        paths += [out / POWER_LOSSES_PARQUET, out / POWER_LOSSES_CSV]
        cuts.write_parquet(paths[-2])
        cuts.write_csv(paths[-1])
    return paths


def power_loss_table(result: Result) -> pl.DataFrame:
    """A row per power cut of the run: its phase, when, recovery time, units lost (acknowledged, by
    reason; unacknowledged) and moved, and what was under way (empty without cuts)."""
    rows = []
    for phase in result.phases:
        for cut in phase.get("power_losses", []):
            rows.append({
                "phase_name": phase["name"],
                **{k: v for k, v in cut.items() if not isinstance(v, (dict, list))},
                **{f"lost_{k}": v for k, v in cut["lost_by_reason"].items()},
                **{f"in_flight_{k}": v for k, v in cut["in_flight"].items()},
            })
    return pl.DataFrame(rows)


def number(value: float) -> str:
    """Three significant digits, thousands separated above 1,000: how tables show figures."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def device_lines(device: dict[str, Any]) -> list[str]:
    """A drive (the engine's device figures) in two lines: preset, cell, user capacity and
    interface; then its geometry."""
    geometry = " × ".join(
        [
            _count(device["channels"], "channel"),
            _count(device["chips_per_channel"], "chip"),
            _count(device["dies_per_chip"], "die"),
            _count(device["planes_per_die"], "plane"),
            _count(device["blocks_per_plane"], "block"),
            _count(device["pages_per_block"], "page"),
            f"{device['page_size'] // 1024} KiB",
        ]
    )
    return [
        f"Device:   {device['preset'] or 'custom'} · {str(device['cell']).upper()} · "
        f"{number(device['user_capacity_bytes'] / 2**30)} GiB user capacity · {device['interface']} host link",
        f"Geometry: {geometry}",
    ]


def _count(n: int, noun: str) -> str:
    """``1 chip``, ``2 chips``, ``2,048 blocks``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float, however deeply nested, replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value
