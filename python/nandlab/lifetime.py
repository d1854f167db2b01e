"""Whole-lifetime studies: run a drive from pristine to dead, and compare ZombieNAND with the
baseline (the same config with blocks retired at death) as the ZombieNAND paper's Fig. 6 does::

    from nandlab import lifetime

    report = lifetime.compare("my-lifetime.toml")
    report["lifetime_ratio"], report["latency_ratio"]

The config needs a phase with ``until = "dead"``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import polars as pl

from nandlab import api
from nandlab._core import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["compare", "run"]


def _as_dict(config: api.ConfigSource) -> dict[str, Any]:
    """A config as a dict (to set keys in it), from any form ``nandlab.run`` takes."""
    text, fmt, source = api._config_text(config)
    if fmt == "json":
        return json.loads(text)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: TOML syntax error: {error}") from None


def run(
    config: api.ConfigSource, zombie: bool | None = None, seed: int | None = None, progress: Any = None
) -> dict[str, Any]:
    """Run a config until the drive dies; ``zombie`` overrides ``[ftl] zombie`` (``False`` also
    turns wear-unleveling off: the baseline, blocks retired at death under plain wear levelling).

    Returns ``host_write_bytes`` (written until death), ``drive_writes`` (that over the user
    capacity), ``death`` (why, or None if a phase ended first), ``sim_seconds``, ``wall_seconds``
    and the ``result`` (a ``nandlab.Result``).
    """
    cfg = _as_dict(config)
    if not any(phase.get("until") == "dead" for phase in cfg.get("phase", [])):
        raise ConfigError('[[phase]]: a lifetime run needs a phase with until = "dead"')
    if zombie is not None:
        ftl = cfg.setdefault("ftl", {})
        ftl["zombie"] = zombie
        if not zombie:
            ftl["wear_unleveling"] = False
    result = api.run(cfg, seed=seed, progress=progress)
    summary = result.summary
    return {
        "host_write_bytes": summary["host_write_bytes"],
        "drive_writes": summary["host_write_bytes"] / result.device["user_capacity_bytes"],
        "death": summary["death"],
        "sim_seconds": summary["sim_seconds"],
        "wall_seconds": summary["wall_seconds"],
        "result": result,
    }


def _mean_latency(ts: pl.DataFrame, upto_bytes: float | None = None, after_bytes: float | None = None) -> float:
    """Request-weighted mean latency (µs) of the time-series rows in a range of host bytes written."""
    ts = ts.with_columns(
        requests=(pl.col("iops") * pl.col("sim_seconds").diff().over("phase").fill_null(0.0)).clip(lower_bound=0.0)
    )
    if upto_bytes is not None:
        ts = ts.filter(pl.col("host_write_bytes") <= upto_bytes)
    if after_bytes is not None:
        ts = ts.filter(pl.col("host_write_bytes") > after_bytes)
    weight = ts["requests"].sum()
    if not weight:
        return float("nan")
    return float((ts["latency_mean_us"] * ts["requests"]).sum() / weight)


def compare(config: api.ConfigSource, seed: int | None = None, progress: Any = None) -> dict[str, Any]:
    """Run ZombieNAND and the baseline from the same config, each until death.

    Returns ``lifetime_ratio`` (host bytes written until death, ZombieNAND / baseline),
    ``latency_ratio`` (mean request latency over the baseline's life, ZombieNAND / baseline),
    ``latency_ratio_after`` (ZombieNAND's mean after the baseline died / the baseline's mean), and
    ``zombie`` and ``baseline`` (each as ``run`` returns it, without ``result``).
    """
    cfg = _as_dict(config)
    # Both drives level wear the same way (ZombieNAND's usage-table GC), so
    # only the bit-mode switch and the early-switch pool differ.
    cfg.setdefault("ftl", {}).setdefault("wear_leveling", True)
    zombie = run(cfg, zombie=True, seed=seed, progress=progress)
    baseline = run(cfg, zombie=False, seed=seed, progress=progress)
    base_ts = baseline["result"].timeseries
    zombie_ts = zombie["result"].timeseries
    base_latency = _mean_latency(base_ts)
    life = baseline["host_write_bytes"]
    return {
        "lifetime_ratio": zombie["host_write_bytes"] / life if life else float("nan"),
        "latency_ratio": _mean_latency(zombie_ts, upto_bytes=life) / base_latency,
        "latency_ratio_after": _mean_latency(zombie_ts, after_bytes=life) / base_latency,
        "zombie": {k: v for k, v in zombie.items() if k != "result"},
        "baseline": {k: v for k, v in baseline.items() if k != "result"},
    }
