"""Writing a run's results to a directory (summary.json, config.json, the time series as Parquet and
CSV, a figure) and the formats results are shown in: strict JSON, table numbers, the drive's lines."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

import polars as pl

from nandlab import files, plausible
from nandlab._core import ConfigError, death_causes
from nandlab.api import Result

SUMMARY_JSON = "summary.json"
RESULT_SUFFIXES = (".json", ".csv", ".parquet", ".html", ".png", ".log", ".txt")
"""Suffixes of the files nandlab writes in an output directory (and its figures/)."""
CONFIG_JSON = "config.json"
RERUN_TOML = "rerun.toml"
"""The config as the run was given it (with its seed): ``nandlab run DIR/rerun.toml`` runs it again."""
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
    """Write summary.json, config.json (the resolved config), rerun.toml (the config as given, to run
    it again), timeseries.parquet, timeseries.csv, throughput_latency.png, and with power cuts
    power_losses.parquet and .csv (a row per cut).

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
    if result.config_toml:
        paths.insert(2, out / RERUN_TOML)
        files.write_replacing(paths[2], result.config_toml)
    result.timeseries.write_parquet(parquet)
    result.timeseries.write_csv(csv)
    plots.throughput_latency(result, png)
    cuts = power_loss_table(result)
    if cuts.height:
        paths += [out / POWER_LOSSES_PARQUET, out / POWER_LOSSES_CSV]
        cuts.write_parquet(paths[-2])
        cuts.write_csv(paths[-1])
    return paths


def read_timeseries(path: Path) -> pl.DataFrame:
    """A run's ``timeseries.parquet`` read back (``files.read_parquet``'s bounds); ConfigError naming
    the file and the column if a column of the engine's is not of its type, or the simulated time
    or host data written is not a finite number at or above 0 (what every figure's x axis is)."""
    from nandlab._core import TIMESERIES_COLUMNS, TIMESERIES_INTEGER_COLUMNS

    ts = files.read_table(path, "time series")
    for name, dtype in ts.schema.items():
        if name in TIMESERIES_INTEGER_COLUMNS:
            expected, ok = "whole numbers", dtype.is_integer()
        elif name in TIMESERIES_COLUMNS:
            expected, ok = "numbers", dtype.is_numeric()
        elif name == "phase_name":
            expected, ok = "text", dtype == pl.String
        else:
            continue
        if not ok:
            raise ConfigError(f"{path}: column {name} holds {dtype}, expected {expected} as nandlab writes them")
    for name in ("sim_seconds", "host_write_bytes"):
        if name not in ts.columns:
            raise ConfigError(f"{path}: no column {name}, which every time series nandlab writes has")
        column = ts[name].cast(pl.Float64)
        if column.null_count() or not column.is_finite().all() or (column < 0).any():
            raise ConfigError(f"{path}: column {name} holds a value that is not a finite number at or "
                              "above 0 (nandlab writes none)")
    try:
        plausible.check_table(ts, path)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    return ts


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


LOSS_REASONS = {
    "write_cache": "in the volatile write cache",
    "interrupted": "program interrupted",
    "paired_page": "lower page corrupted by an interrupted upper-page program",
    "erased": "block erase begun",
    "missing": "no copy found",
}
"""Why an acknowledged write was lost, as the tables and reports say it."""


def power_cut_rows(phases: list[dict[str, Any]]) -> list[dict[str, str]]:
    """A row per phase with power cuts: the cuts, acknowledged units lost and why, unacknowledged
    writes lost and survived, units moved by recovery, recovery time (empty without cuts)."""
    rows = []
    for phase in phases:
        cuts = phase.get("power_loss")
        if not cuts:
            continue
        why = "; ".join(f"{LOSS_REASONS[k]} {number(v)}" for k, v in cuts["lost_by_reason"].items() if v)
        rows.append({
            "Phase": phase["name"],
            "Cuts": number(cuts["cuts"]),
            "Acknowledged units lost": number(cuts["acknowledged_lost_units"]),
            "Why": why or NONE,
            "Unacknowledged lost / survived": (
                f"{number(cuts['unacknowledged_lost_units'])} / {number(cuts['unacknowledged_survived_units'])}"
            ),
            "Units moved": number(cuts["relocated_units"]),
            "Programs called off": number(cuts["in_flight"]["discarded_programs"]),
            "Recovery ms mean / max": f"{number(cuts['recovery_us_mean'] / 1e3)} / {number(cuts['recovery_us_max'] / 1e3)}",
            "Time recovering": f"{cuts.get('recovering_fraction', 0):.0%}",
        })
    return rows


def power_cut_verdict(phases: list[dict[str, Any]]) -> str:
    """Whether the run's configuration may lose acknowledged writes on a power cut, and why."""
    reasons = next((p["power_loss"]["unsafe_because"] for p in phases if p.get("power_loss")), [])
    if reasons:
        return "This configuration is documented unsafe: " + "; ".join(reasons) + "."
    return "A configuration documented safe: no acknowledged write may be lost (the run checks it)."


def power_cut_caveat(phases: list[dict[str, Any]]) -> str | None:
    """When cuts came faster than the drive recovered, or called off many programs booked ahead:
    what that does to the phase's figures (the program counters count programs as booked, and
    recovery redoes the GC they belonged to)."""
    notes = []
    for phase in phases:
        cuts = phase.get("power_loss")
        if cuts and cuts.get("cuts_outpace_recovery"):
            notes.append(f"{phase['name']}: cuts came faster than the drive recovered (up "
                         f"{number(cuts['uptime_ms_mean'])} ms between cuts on average, recovery "
                         f"{number(cuts['recovery_us_mean'] / 1e3)} ms): it spent {cuts['recovering_fraction']:.0%} "
                         "of its time recovering, so its wear, WAF and speed describe recovery more than the workload")
        booked = phase.get("flash_programs", 0)
        called_off = cuts["in_flight"]["discarded_programs"] if cuts else 0
        if booked and called_off >= 0.05 * booked and cuts.get("flash_waf") is not None:
            notes.append(f"{phase['name']}: WAF {phase['waf']:.3g} counts page programs as booked; the cuts called off "
                         f"{number(called_off)} of them ({called_off / booked:.0%}), booked ahead of the flash, and "
                         f"recovery did their GC again: the flash programmed about {cuts['flash_waf']:.3g}× the "
                         "host's data")
    return "; ".join(notes) + "." if notes else None


def skipped_trace_lines(phases: list[dict[str, Any]]) -> list[str]:
    """For trace phases replayed with ``--skip-bad`` that passed over malformed lines: how many, and
    the first (a replay must not hide that part of its trace was not replayed)."""
    notes = []
    for phase in phases:
        skipped = phase.get("trace_skipped") or {}
        if skipped.get("lines"):
            notes.append(f"{phase['name']}: {number(skipped['lines'])} malformed trace lines skipped (--skip-bad), "
                         f"the first at line {skipped['first_line']}")
    return notes


def map_extent_lines(phases: list[dict[str, Any]]) -> list[str]:
    """For phases of a DRAM-less drive whose map lookups extents answered for the most part: how many
    (data written in order needs no translation page; a page-level DFTL such as MQSim's CMT would
    have missed), and the key that turns extents off."""
    lines = []
    for phase in phases:
        lookups, extents = phase.get("map_lookups") or 0, phase.get("map_extent_lookups") or 0
        if lookups and extents * 2 > lookups:
            lines.append(f"{phase['name']}: extents answered {extents / lookups:.0%} of {number(lookups)} map lookups "
                         "(data written in order reads no translation page; [ftl] map_extents = false makes every "
                         "lookup go through the map cache, as a page-level DFTL such as MQSim's does)")
    return lines


def unwritten_read_lines(phases: list[dict[str, Any]], how: str) -> list[str]:
    """If the run's reads found addresses never written: how many bytes, why their latency says nothing
    of the flash, and ``how`` to write the drive first; else nothing."""
    unwritten = sum(int(phase.get("unwritten_read_bytes") or 0) for phase in phases)
    if not unwritten:
        return []
    return [f"{unwritten / 2**20:,.1f} MiB of the reads found addresses never written: a fresh drive answers them "
            f"from the controller, without reading flash (as a real drive does); {how} to measure reads of flash"]


def wear_out_lines(summary: dict[str, Any]) -> list[str]:
    """When and why the drive died, and since when it no longer holds its advertised capacity (under
    ``death = "dead-blocks"`` a ZombieNAND drive lives on with less flash than it advertised)."""
    lines = []
    if summary.get("death"):
        lines.append(f"death: {summary['death']}")
    short = summary.get("capacity_short_since_bytes")
    if short is not None and summary.get("death_cause") != "too-little-flash":
        lines.append(f"capacity: the drive no longer holds its advertised capacity since {short / 1e12:.3f} TB "
                     "written by the host (its usable flash is below the user capacity plus the GC high "
                     "watermark; death = \"dead-blocks\" lives on while the data fits)")
    return lines


def unrun_phase_lines(phases: list[dict[str, Any]], planned: list[dict[str, Any]]) -> list[str]:
    """The config's phases a run left out because the drive died before them (``phases`` ran,
    ``planned`` are the config's)."""
    if not phases or len(phases) >= len(planned) or not phases[-1].get("death"):
        return []
    names = ", ".join(f"`{p.get('name', '')}`" for p in planned[len(phases):])
    return [f"not run: {names} (the drive died in `{phases[-1]['name']}`)"]


DEATH_CAUSES = death_causes()
"""The summary's ``death_cause`` names and what a table says for each (the engine's words)."""


def deaths(phases: list[dict[str, Any]]) -> list[str]:
    """For each phase, "" if the drive lived through it, else when and why it died there, short enough
    for a table: the cause (``DEATH_CAUSES`` by its ``death_cause``), the host data
    written (fill included) and the simulated time by then, from the start of the run ("worn out: too
    little usable flash, at 67.3 GiB and 6,431 s"). ``wear_out_lines`` gives the whole reason."""
    cells = []
    written = seconds = 0.0
    for phase in phases:
        written += phase["host_write_bytes"] + phase.get("fill_bytes", 0)
        seconds += phase["sim_seconds"]
        reason = phase.get("death")
        if reason:
            cause = DEATH_CAUSES.get(phase.get("death_cause"), reason.split(":")[0])
            cells.append(f"{cause}, at {number(written / 2**30)} GiB and {number(seconds)} s")
        else:
            cells.append("")
    return cells


def lost_writes(phases: list[dict[str, Any]], device: dict[str, Any], limit: int) -> list[str]:
    """The first ``limit`` acknowledged writes the run's power cuts lost, one sentence each."""
    unit = device.get("unit_size") or device.get("mapping_unit") or 4096
    lost = [w for p in phases for cut in p.get("power_losses", []) for w in cut["lost"]][:limit]
    lines = []
    for w in lost:
        recovered = "nothing" if w["recovered"] is None else f"version {w['recovered']}"
        reason = LOSS_REASONS.get((w["reason"] or "missing").replace("-", "_"), w["reason"])
        lines.append(f"unit {w['unit']} (byte {w['unit'] * unit}) acknowledged at version {w['acknowledged']}, "
                     f"recovered {recovered}: {reason}")
    return lines


NONE = "—"
"""What a table shows for a figure without meaning (``null``: WAF without host writes, a rate over no
simulated time) or without a value."""


def number(value: float | None) -> str:
    """Three significant digits, thousands separated above 1,000: how tables show figures; ``NONE`` for
    ``None`` or NaN."""
    if value is None or value != value:
        return NONE
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


_SIZE_KEYS = ("page_size", "unit_size", "write_buffer", "map_cache", "read_ahead")
"""A drive's figures in bytes whose names do not end in ``_bytes``."""


def as_toml(document: dict[str, Any]) -> str:
    """A JSON document (a resolved config) as TOML text, laid out as a config file is: tables as
    ``[name]`` sections and arrays of tables as ``[[name]]`` ones, however short (tomli_w writes a short
    array of tables inline, ``phase = [{...}]``); nulls, which TOML has no form for, left out."""
    import tomli_w

    def kept(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): kept(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [kept(v) for v in value if v is not None]
        return value

    def key(name: str) -> str:
        return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)

    def tables(value: Any) -> bool:
        return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)

    def sections(path: str, table: dict[str, Any]) -> list[str]:
        plain = {k: v for k, v in table.items() if not isinstance(v, dict) and not tables(v)}
        parts = [tomli_w.dumps(plain)] if plain else []
        for k, v in table.items():
            name = f"{path}.{key(k)}" if path else key(k)
            if isinstance(v, dict):
                parts.append(f"[{name}]\n" + "\n".join(sections(name, v)))
            elif tables(v):
                parts += [f"[[{name}]]\n" + "\n".join(sections(name, item)) for item in v]
        return parts

    return "\n".join(sections("", kept(document)))


def device_value(key: str, value: Any) -> Any:
    """A drive's figure as a table shows it: rates in MB/s (``channel_rate`` 400,000,000 → 400 MB/s),
    sizes in binary units (268,435,456 → 256 MiB), anything else as it is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if key.endswith("_rate"):
        return f"{value / 1e6:,.6g} MB/s"
    if key.endswith("_bytes") or key in _SIZE_KEYS:
        return binary_size(value)
    return value


def binary_size(size: float) -> str:
    """``size`` bytes in the largest binary unit below it, to four significant digits (1 GiB, 1.07 GiB)."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    step = 0
    while abs(size) >= 1024 and step < len(units) - 1:
        size, step = size / 1024, step + 1
    return f"{size:,.4g} {units[step]}"


def fixed(value: float | None, digits: int = 2) -> str:
    """``value`` with ``digits`` decimals (a WAF: ``9.31``), ``NONE`` for ``None`` or NaN."""
    return NONE if value is None or value != value else f"{value:.{digits}f}"


def device_lines(device: dict[str, Any]) -> list[str]:
    """A drive (the engine's device figures) in two lines: preset, cell, user capacity (and the
    flash behind it) and interface; then its geometry."""
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
        f"{number(device['user_capacity_bytes'] / 2**30)} GiB user capacity "
        f"({number(device['raw_capacity_bytes'] / 2**30)} GiB of flash) · {device['interface']} host link",
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
