"""A lifetime's approximate mode: the drive cut to a slice of its blocks.

A drive's life in drive writes does not depend on its size once each GC pool holds a few thousand
blocks (the same chips, the same spare share, the same workload over the same share of the
addresses): a 32 GiB drive and an 8 GiB slice of it wear out within 0.1 % of each other
(BENCHMARKS.md, "A lifetime's approximate mode"). ``cut(config, by)`` keeps every chip, channel and
plane, and gives each plane ``1/by`` of its blocks; ``scaled`` turns the slice's figures back into the
whole drive's (bytes written and simulated time × ``by``). Only a workload given as shares of the
drive can be cut: a trace, a request count, a time, idle periods or a size in bytes is refused, naming
the key, and so are what a slice would change — an address distribution skewed by the number of
addresses (Zipf, Pareto, normal), an error model (its data ages with the simulated time), block
counts and sizes in ``[ftl]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nandlab import api
from nandlab._core import MAX_NAME_CHARS, ConfigError, parse_share, parse_size, preset_toml

MIN_BLOCKS_PER_POOL = 2048
"""The fewest blocks a GC pool of a slice keeps: from there on, a slice's lifetime is within 0.5 % of
the whole drive's (measured in BENCHMARKS.md; at 736 blocks it was 0.7 % longer)."""
MAX_SLICE = 1 << 16
SCALED = ("host_write_bytes", "capacity_short_since_bytes", "sim_seconds")
"""A lifetime's figures that grow with the drive (× the slice); the others (drive writes, the share of
capacity held, wall time) are the slice's own."""

SCALED_BYTES = ("host_write_bytes", "capacity_short_since_bytes")
"""Of those, the byte counts (whole numbers, as the engine's)."""

_ABSOLUTE_PHASE_KEYS = ("requests", "duration", "power_loss", "power_loss_every", "trace", "idle_every",
                        "idle_duration")
_SLICEABLE_DISTRIBUTIONS = ("uniform", "hotcold:")
_ABSOLUTE_FTL_KEYS = ("early_switch_blocks", "map_cache")


@dataclass(frozen=True)
class Slice:
    """A drive cut to ``1/by`` of its blocks: the slice's ``config``, the whole drive's
    ``user_capacity_bytes`` and the slice's, and the blocks each GC pool of the slice holds."""

    by: int
    config: dict[str, Any]
    user_capacity_bytes: int
    simulated_capacity_bytes: int
    blocks_per_pool: int

    def describe(self) -> dict[str, Any]:
        """What a lifetime's figures say of the slice they came from."""
        return {
            "by": self.by,
            "user_capacity_bytes": self.user_capacity_bytes,
            "simulated_capacity_bytes": self.simulated_capacity_bytes,
            "simulated_blocks_per_pool": self.blocks_per_pool,
        }


def cut(config: dict[str, Any], by: int | str) -> Slice:
    """``config`` (a dict, as a TOML file reads) with its drive cut to ``1/by`` of its blocks;
    ``by = "auto"`` takes the largest power of two that divides the drive and leaves each GC pool
    ``MIN_BLOCKS_PER_POOL`` blocks (1, the whole drive, if none does). Raises ConfigError naming a key
    that cannot be cut, or a slice too small to stand for the drive."""
    _check_shares(config)
    whole = api.check_config(config)
    device = _section(config, "device")
    if "capacity" in device:
        capacity = device["capacity"]
        size = parse_size(capacity) if isinstance(capacity, str) else capacity
        key, total, unit = "capacity", size, whole["unit_size"]
    else:
        key, total, unit = "blocks_per_plane", whole["blocks_per_plane"], 1

    def divides(n: int) -> bool:
        return isinstance(total, int) and total % (n * unit) == 0

    def keeps_floor(n: int) -> bool:
        return whole["blocks_per_pool"] // n >= MIN_BLOCKS_PER_POOL

    if by == "auto":
        by = 1
        while 2 * by <= MAX_SLICE and divides(2 * by) and keeps_floor(2 * by):
            by *= 2
    elif isinstance(by, bool) or not isinstance(by, int) or not 1 <= by <= MAX_SLICE:
        raise ConfigError(f"slice: expected a whole number from 1 to {MAX_SLICE:,} or \"auto\", found {by!r}")
    sliced = {**config, "device": dict(config.get("device", {}))}
    if by > 1:
        if not divides(by):
            what = f"{unit:,}-byte mapping units" if key == "capacity" else "blocks"
            raise ConfigError(f"[device] {key}: {device.get(key, total)!r} is not a whole number of {what} in each "
                              f"of {by} slices: choose a slice that divides it (or \"auto\")")
        sliced["device"][key] = total // by
        sliced["phase"] = [_named(i, phase, by) for i, phase in enumerate(config.get("phase", []))]
    try:
        part = api.check_config(sliced)
    except ConfigError as error:
        raise ConfigError(f"in the 1/{by} slice of the drive: {error}") from None
    if by > 1 and part["blocks_per_pool"] < MIN_BLOCKS_PER_POOL:
        most = max(1, whole["blocks_per_pool"] // MIN_BLOCKS_PER_POOL)
        raise ConfigError(
            f"slice: 1/{by} of this drive leaves {part['blocks_per_pool']:,} blocks in a GC pool, fewer than the "
            f"{MIN_BLOCKS_PER_POOL:,} that keep a lifetime within 0.5 % of the whole drive's: slice by {most} at most, "
            "by a number that divides the drive (or \"auto\")")
    return Slice(by, sliced, whole["user_capacity_bytes"], part["user_capacity_bytes"], part["blocks_per_pool"])


def from_notes(value: Any, device: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """What a snapshot's notes say of the slice its run simulated (``Slice.describe()``), checked — against
    the snapshot's drive (``Simulator.device``) if given: None if the run was not sliced; ConfigError if
    the notes say something no slice of that drive is."""
    if value is None:
        return None
    keys = ("by", "user_capacity_bytes", "simulated_capacity_bytes", "simulated_blocks_per_pool")
    if not (isinstance(value, dict) and set(value) == set(keys)
            and all(isinstance(value[k], int) and not isinstance(value[k], bool) and value[k] > 0 for k in keys)
            and value["by"] <= MAX_SLICE):
        raise ConfigError(f"the snapshot's notes: slice: expected {', '.join(keys)} as positive whole numbers "
                          f"(by at most {MAX_SLICE:,}), found {str(value)[:200]}")
    if device is not None:
        ratio = scale(value) / value["by"]
        if value["simulated_capacity_bytes"] != device["user_capacity_bytes"] or abs(ratio - 1) > 1e-3 or \
                value["simulated_blocks_per_pool"] != device["blocks_per_pool"]:
            raise ConfigError("the snapshot's notes: slice: its figures are not those of a slice of this snapshot's "
                              f"drive ({device['user_capacity_bytes']:,} bytes, {device['blocks_per_pool']:,} blocks "
                              "a GC pool)")
    return value


def scale(sliced: dict[str, Any]) -> float:
    """What a slice's bytes and time are multiplied by to stand for the whole drive's: the user capacities'
    ratio (``by`` where the capacity divides exactly)."""
    return sliced["user_capacity_bytes"] / sliced["simulated_capacity_bytes"]


def scaled(figures: dict[str, Any], sliced: dict[str, Any]) -> dict[str, Any]:
    """A slice's lifetime figures (``lifetime.run``'s) as the whole drive's: its bytes and time × the
    whole drive's user capacity over the slice's (the slice ``by``, where the capacity divides exactly)."""
    factor = scale(sliced)
    out = {k: (v * factor if k in SCALED and v is not None else v) for k, v in figures.items()}
    for key in SCALED_BYTES:
        if out.get(key) is not None:
            out[key] = round(out[key])
    if sliced["by"] > 1 and out.get("death"):
        out["death"] = f"{out['death']} (in the simulated slice, 1/{sliced['by']} of the drive)"
    return out


def _named(index: int, phase: Any, by: int) -> Any:
    """A phase of a slice, its name saying so (progress lines show the slice's bytes written)."""
    if not isinstance(phase, dict):
        return phase
    name = phase.get("name", f"phase-{index + 1}")
    marked = f"{name} (1/{by} slice)"
    return {**phase, "name": marked} if isinstance(name, str) and len(marked) <= MAX_NAME_CHARS else phase


def _section(config: dict[str, Any], name: str) -> dict[str, Any]:
    """A config's section as it applies: its preset's keys, then its own over them."""
    own = config.get(name, {})
    if not isinstance(own, dict):
        return {}
    preset = config.get("device", {}).get("preset") if isinstance(config.get("device"), dict) else None
    base: dict[str, Any] = {}
    if isinstance(preset, str):
        base = api._tomllib().loads(preset_toml(preset)).get(name, {})
    return {**base, **own}


def _check_shares(config: dict[str, Any]) -> None:
    """Refuses what a slice cannot cut: a workload or setting given in bytes, requests, blocks or time."""
    if _section(config, "device").get("errors"):
        raise ConfigError("[device.errors]: bit errors age with the simulated time, which a slice divides: a drive "
                          "with an error model runs whole")
    ftl = _section(config, "ftl")
    own = config.get("ftl", {}) if isinstance(config.get("ftl"), dict) else {}
    for key in _ABSOLUTE_FTL_KEYS:
        if key in ftl:
            where = "" if key in own else " (set by the device preset)"
            raise ConfigError(f"[ftl] {key}{where}: a size or block count cannot be sliced: a drive with it runs whole")
    for key in ("gc_start", "gc_stop"):
        if isinstance(ftl.get(key), int) and not isinstance(ftl.get(key), bool):
            raise ConfigError(f"[ftl] {key}: a block count ({ftl[key]}) cannot be sliced: give a fraction like 0.05")
    if "pslc_size" in ftl and not _is_multiple(ftl["pslc_size"]):
        raise ConfigError(f"[ftl] pslc_size: a size ({ftl['pslc_size']!r}) cannot be sliced: give a multiple of "
                          "the user capacity like 0.04")
    for i, phase in enumerate(config.get("phase", [])):
        if not isinstance(phase, dict):
            continue
        for where, p in [(f"[[phase]] #{i + 1}", phase)] + [
                (f"[[phase]] #{i + 1} [[phase.job]] #{j + 1}", job)
                for j, job in enumerate(phase.get("job", [])) if isinstance(job, dict)]:
            _check_phase(where, p)


def _check_phase(where: str, phase: dict[str, Any]) -> None:
    """One phase (or job) of a sliced drive: a workload as shares of the drive."""
    if phase.get("kind", "io") not in ("io", "fill", "trim"):
        raise ConfigError(f"{where}: kind = {phase['kind']!r} cannot run on a slice of the drive: a slice runs "
                          "io, fill and trim phases")
    for key in _ABSOLUTE_PHASE_KEYS:
        if key in phase:
            raise ConfigError(f"{where}: {key}: a slice of the drive runs a workload given as shares of it "
                              "(working_set, volume in drive writes, until = \"dead\"), not a request count, a "
                              "time or a trace")
    distribution = phase.get("distribution", "uniform")
    if isinstance(distribution, str) and not distribution.startswith(_SLICEABLE_DISTRIBUTIONS):
        raise ConfigError(f"{where}: distribution: {distribution!r} is skewed by the number of addresses, which a "
                          "slice divides: a slice runs uniform or hotcold:R:F addresses")
    for key in ("volume",):
        if key in phase and not _is_multiple(phase[key]):
            raise ConfigError(f"{where}: {key}: a size in bytes ({phase[key]!r}) cannot be sliced: give it in "
                              "drive writes, a float like 2.0")
    for key in ("working_set", "working_set_offset"):
        if key in phase and not _is_share(phase[key]):
            raise ConfigError(f"{where}: {key}: a size in bytes ({phase[key]!r}) cannot be sliced: give a share of "
                              "the drive like 0.5")


def _is_multiple(value: Any) -> bool:
    """Whether a volume is a multiple of the user capacity (a float), not bytes."""
    return isinstance(value, float)


def _is_share(value: Any) -> bool:
    """Whether an extent is a share of the drive, as the engine reads it (an integer above 1 is bytes)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value <= 1
    if isinstance(value, float):
        return True
    if isinstance(value, str):
        try:
            parse_share(value)
        except (ConfigError, ValueError):
            return False
        return True
    return False
