"""Figures read back from files (a report's, a snapshot's finished phases), checked for what can exist
before any is shown: a percentage from 0 to 100, a bit error rate or a share from 0 to 1, a count a
whole number from 0, a temperature above absolute zero, a write amplification below a million, and
every other figure a number from 0 below 2⁶⁴. A file that says otherwise was not written so by
nandlab (an altered or foreign file); the report names the file, the figure and the value instead of
drawing it. A document of more than ``MAX_VALUES`` values is none nandlab writes either.

What a figure is comes from its name, word by word (``write_random_percent``: a percentage;
``rber_p99``: a rate; ``host_write_bytes``: a count), as nandlab names its figures. NaN is a figure
that could not be had (WAF without writes), never a count. Text stands where a name says nothing of
a number (``death``, ``device``), never where it names a figure."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["MAX_VALUES", "blocks_problem", "check_document", "check_table", "impossible"]

MAX_VALUES = 2_000_000
"""The most values (numbers, text, nulls) one result document may hold: a run's summary with every
phase's erase-count histogram at ``api.MAX_HISTOGRAM`` pairs is far below (a 40 MB file of 20 M
zeros took 46 s and 3.2 GB to check one by one)."""

MAX_TEXT = 65_536
"""The longest text nandlab writes in a result (a config's description; names are at most 256
characters, paths 4,096): a phase name of 2 M characters took 142 s and 1.4 GB to draw, then failed."""


class Rule(NamedTuple):
    low: float
    high: float
    what: str
    nan: bool = True
    """NaN allowed: a figure that could not be had."""
    whole: bool = False
    """A count: a whole number."""
    text: bool = False
    """Text allowed: the name says nothing of a number."""


_LARGEST = 2.0**64
"""No figure nandlab writes is this large (counts are 64-bit; times, rates and ratios far smaller)."""

_EXACT = {"capacity_at_death": Rule(0.0, 1.0, "a share, from 0 to 1")}

_RULES: tuple[tuple[frozenset[str], Rule], ...] = (
    (frozenset({"percent", "pct", "%"}), Rule(0.0, 100.0, "a percentage, from 0 to 100")),
    (frozenset({"uber", "rber", "fraction", "share", "probability"}), Rule(0.0, 1.0, "a rate or share, from 0 to 1")),
    (frozenset({"bytes", "records", "reads", "writes", "trims", "count", "counts", "lines", "blocks", "cycles",
                "erases", "runs", "pages", "decodes", "requests", "dies", "planes", "channels", "chips", "depth",
                "jobs", "units", "slots"}),
     Rule(0.0, _LARGEST, "a count, a whole number from 0 to 2^64", nan=False, whole=True)),
    (frozenset({"temperature"}), Rule(-273.15, 1e4, "a temperature in °C, above absolute zero")),
    (frozenset({"waf"}), Rule(0.0, 1e6, "a write amplification, from 0 to a million")),
    (frozenset({"slope", "drift", "change", "delta"}), Rule(-_LARGEST, _LARGEST, "a number")),
    (frozenset({"iops", "mbps", "seconds", "hours", "us", "ns", "ms", "latency", "ratio", "reclaim", "power",
                "energy", "joules", "watts", "w", "j", "bandwidth", "bw", "lifetime", "lifetimes", "endurance",
                "mean", "p99", "p999", "max", "min", "rate"}),
     Rule(0.0, _LARGEST, "a figure from 0 to 2^64 (a rate, time, ratio or energy)")),
)
"""(words of a name, its rule): the first rule one of a name's words is in holds."""

_ANY = Rule(0.0, _LARGEST, "a figure from 0 to 2^64 (a size, time, rate or ratio)", text=True)
"""A name no rule knows: a number from 0, or text (a name, a cause of death)."""

_WORD = re.compile(r"[a-z]+|%|\d+")


def _rule(name: str) -> Rule:
    if name in _EXACT:
        return _EXACT[name]
    words = set(_WORD.findall(name.lower()))
    if "pass" in words:  # a verdict: true or false (uber_pass)
        return _ANY
    for rule_words, rule in _RULES:
        if words & rule_words:
            if rule.high == 100.0 and "of" in words:  # a percentage of something else (of theoretical): any size
                return Rule(0.0, _LARGEST, "a percentage, not below 0")
            if rule.whole and words & _NOT_WHOLE:  # a mean of counts (mean_request_bytes)
                return rule._replace(whole=False, what="a figure from 0 to 2^64")
            if "histogram" in words:  # a sweep's table keeps a histogram as its JSON text
                return rule._replace(text=True)
            return rule
    return _ANY


_NOT_WHOLE = frozenset({"mean", "avg", "average", "per", "median", "p50", "p99", "p999", "drive", "gib", "mib", "kib",
                        "tb", "gb", "mb", "std", "stdev", "sd", "var", "cv"})
"""Words that make a count's figure a fraction: a mean of counts, drive writes, sizes in GiB."""


def _impossible(value: Any, rule: Rule) -> bool:
    """Whether ``value`` cannot be a figure under ``rule`` (None, a missing one, can; so can True or
    False: whether it passed, ``uber_pass``)."""
    if value is None:
        return False
    if isinstance(value, bool):  # a verdict (pass, uber_pass) or a setting no rule knows; never a figure
        return not rule.text
    if not isinstance(value, (int, float)):
        return not rule.text
    if math.isnan(value):
        return not rule.nan
    if rule.whole and value != math.floor(value):
        return True
    return not rule.low <= value <= rule.high


_SETTINGS = {"job options", "global options", "options", "config", "params"}
"""Keys whose values are settings as the user gave them (fio's ``iodepth = "8"``), not figures."""


def impossible(document: Any, figures: bool = True) -> str | None:
    """What cannot exist in ``document`` (a JSON result's content): ``where = value, where nandlab
    writes …``; None if every figure can. Walked without recursion, each value under its key's rule
    (a list's items under the list's key), settings (``_SETTINGS``) left out; without ``figures`` (a
    config, a manifest) only its size and its texts' lengths are checked."""
    # (value, its key's name, the parent entry and the key or index that reach it): the place is
    # spelled out only for a value that is wrong.
    stack: list[tuple[Any, str, Any, Any]] = [(document, "", None, None)]
    seen = 0
    while stack:
        entry = stack.pop()
        value, name = entry[0], entry[1]
        seen += 1
        if seen > MAX_VALUES:
            return f"more than {MAX_VALUES:,} values, where nandlab writes fewer"
        if isinstance(value, dict):
            inconsistent = _inconsistent(value) if figures else None
            if inconsistent is not None:
                return f"{_where(entry) or 'the document'}: {inconsistent}"
            stack.extend((v, str(key), entry, key) for key, v in value.items() if key not in _SETTINGS or not figures)
        elif isinstance(value, list):
            numbers = _as_numbers(value) if len(value) > 64 and figures else None
            if numbers is None:
                stack.extend((v, name, entry, index) for index, v in enumerate(value))
                continue
            seen += len(value)  # a long list of numbers (a histogram's row, a CDF), checked at once
            if seen > MAX_VALUES:
                return f"more than {MAX_VALUES:,} values, where nandlab writes fewer"
            index = _first_wrong(numbers, _rule(name))
            if index is not None:
                return _impossible_at((value[index], name, entry, index))
        elif isinstance(value, str) and len(value) > MAX_TEXT:
            return f"{_where(entry)}: text of {len(value):,} characters, where nandlab writes at most {MAX_TEXT:,}"
        elif figures and entry[2] is not None and _impossible(value, _rule(name)):
            return _impossible_at(entry)
    return None


_ORDERED = ("min", "p50", "p90", "p99", "p999", "max")
"""A distribution's figures, each at most the next (its mean lies between the first and the last)."""

_GEOMETRY = ("channels", "chips_per_channel", "dies_per_chip", "planes_per_die", "blocks_per_plane",
             "pages_per_block", "page_size")
"""A drive's shape: their product is its raw capacity in bytes."""


_RUN_FIGURES = ("host_requests", "iops", "sim_seconds", "host_write_bytes")
"""A run's or phase's summary: the figures below hold together there."""
_SUMS = (("host_requests", ("host_read_requests", "host_write_requests")),
         ("flash_programs", ("flash_programs_gc",)))
"""(a whole, its parts): the parts add up to at most the whole."""
_RATES = (("iops", ("host_requests",), 1.0), ("mbps", ("host_read_bytes", "host_write_bytes"), 1e6),
          ("read_mbps", ("host_read_bytes",), 1e6), ("write_mbps", ("host_write_bytes",), 1e6),
          ("average_power_w", ("energy_joules",), 1.0))
"""(a rate, what it counts, its unit): rate × sim_seconds × unit is at most the amount (all of it when
every phase took simulated time; an untimed phase's requests count in the amount only)."""


_CHECKED_TOGETHER = frozenset({*_ORDERED, "mean", *_GEOMETRY, "raw_capacity_bytes", *_RUN_FIGURES})
"""The keys an object must have one of for ``_inconsistent`` to look at it."""


def _inconsistent(table: dict[str, Any]) -> str | None:
    """What in one JSON object cannot be so together: a distribution out of order (a p50 above its
    p99), a run's rates that are not its amounts over its time or parts more than their whole, a
    drive whose shape does not multiply to its raw capacity; None if nothing."""
    if not table.keys() & _CHECKED_TOGETHER:  # most objects (a histogram's pair, a job's options): at once
        return None

    def number(key: str) -> float | None:
        value = table.get(key)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)
        return value if ok else None

    ordered = [(key, number(key)) for key in _ORDERED if number(key) is not None]
    for (low_key, low), (high_key, high) in zip(ordered, ordered[1:]):
        if low > high:
            return f"{low_key} = {_shown(low)} above {high_key} = {_shown(high)}, where a distribution's are in order"
    mean = number("mean")
    if mean is not None and ordered and not ordered[0][1] <= mean <= ordered[-1][1] * (1 + 1e-9):
        return f"mean = {_shown(mean)} outside {ordered[0][0]} to {ordered[-1][0]}"
    if all(number(key) is not None for key in _RUN_FIGURES):
        seconds = number("sim_seconds")
        for whole, parts in _SUMS:
            values = [number(key) for key in parts]
            if number(whole) is not None and all(v is not None for v in values) and sum(values) > number(whole):
                return f"{' + '.join(parts)} = {_shown(sum(values))}, more than {whole} = {_shown(number(whole))}"
        for rate, amount, scale in _RATES:
            # At most: a phase that took no simulated time (an untimed ageing) adds to the amount, not the rate.
            r, a = number(rate), sum(number(key) or 0.0 for key in amount)
            if seconds and r is not None and r * seconds * scale > a * (1 + 1e-6) + 1e-6:
                return (f"{rate} = {_shown(r)} over sim_seconds = {_shown(seconds)} is more than "
                        f"{' + '.join(amount)} = {_shown(a)} (a rate is at most its amount over the time)")
    shape = [number(key) for key in _GEOMETRY]
    raw = number("raw_capacity_bytes")
    if raw is not None and all(v is not None for v in shape) and math.prod(shape) != raw:
        return (f"a drive of {' × '.join(f'{_shown(v)} {k}' for k, v in zip(_GEOMETRY, shape))}, which is not "
                f"its raw_capacity_bytes = {_shown(raw)}")
    return None


def _impossible_at(entry: tuple[Any, str, Any, Any]) -> str:
    """``where = value, where nandlab writes …`` for the value of ``entry`` (see ``impossible``)."""
    return f"{_where(entry)} = {_shown(entry[0])}, where nandlab writes {_rule(entry[1]).what}"


def _as_numbers(values: list[Any]) -> Any:
    """``values`` as a NumPy array of floats if every one is an int or a float (not a bool); else None."""
    import numpy as np

    if not all(type(v) in (int, float) for v in values):
        return None
    try:
        return np.array(values, dtype=np.float64)
    except OverflowError:  # an int beyond a float: checked one by one
        return None


def _first_wrong(values: Any, rule: Rule) -> int | None:
    """The index of the first of ``values`` (floats) that cannot be a figure under ``rule``; None if all can."""
    import numpy as np

    nan = np.isnan(values)
    wrong = (nan & (not rule.nan)) | (~nan & ((values < rule.low) | (values > rule.high)))
    if rule.whole:
        wrong |= ~nan & (values != np.floor(values))
    found = np.flatnonzero(wrong)
    return int(found[0]) if found.size else None


def _where(entry: tuple[Any, str, Any, Any]) -> str:
    """``phases[1].waf``: the keys and indexes from the document to ``entry``."""
    parts: list[str] = []
    while entry[2] is not None:
        step = entry[3]
        parts.append(f"[{step}]" if isinstance(step, int) else f".{step}")
        entry = entry[2]
    return "".join(reversed(parts)).lstrip(".")


def check_document(document: Any, path: Path, figures: bool = True) -> None:
    """ValueError naming ``path``, the figure and its value if a figure of ``document`` (a JSON
    result file's content) cannot exist (without ``figures``: if it is too large, or holds too long
    a text)."""
    wrong = impossible(document, figures) or (_verdict_problem(document) if figures else None)
    if wrong is not None:
        raise ValueError(f"{path}: {wrong}")


def _verdict_problem(document: Any) -> str | None:
    """What says a document's ``pass`` is not its figures' verdict (``uber_expected`` at most
    ``uber_target``, as the retention test decides); None if it is, or if it has no such verdict."""
    if not isinstance(document, dict):
        return None
    verdict, expected, target = (document.get(key) for key in ("pass", "uber_expected", "uber_target"))
    if not isinstance(verdict, bool) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in (expected, target)
    ):
        return None
    if verdict != (expected <= target):
        return (f"pass = {str(verdict).lower()}, but uber_expected = {_shown(expected)} is "
                f"{'at most' if expected <= target else 'above'} uber_target = {_shown(target)}")
    return None


def blocks_problem(figures: dict[str, Any], blocks: int) -> str | None:
    """What in a run's or phase's ``figures`` says there are more than the drive's ``blocks`` blocks
    (free, bad, or counted in its erase-count histogram); None if nothing does."""
    counts = {key: figures.get(key) for key in ("free_blocks", "bad_blocks")}
    counts = {key: value for key, value in counts.items() if isinstance(value, (int, float))}
    if sum(counts.values()) > blocks:
        return f"{' + '.join(f'{k} = {_shown(v)}' for k, v in counts.items())}, on a drive of {blocks:,} blocks"
    histogram = figures.get("erase_count_histogram") or []
    if isinstance(histogram, list) and all(isinstance(pair, list) and len(pair) == 2 for pair in histogram):
        total = sum(count for _, count in histogram if isinstance(count, (int, float)))
        if total > blocks:
            return f"an erase-count histogram of {_shown(total)} blocks, on a drive of {blocks:,}"
    return None


def check_table(table: Any, path: Path) -> None:
    """ValueError naming ``path``, the column and a value if a column of ``table`` (a polars
    DataFrame read from a result file) holds a figure that cannot exist: a numeric column by its
    rule, a text column where its name says a number (but for JSON lists and tables)."""
    import numpy as np

    for name, dtype in table.schema.items():
        rule = _rule(name.rsplit(".", 1)[-1])  # a sweep's `PHASE.figure`: the phase's name is the user's
        if not dtype.is_numeric():
            # A sweep's table keeps a nested figure (percentiles, a histogram) as its JSON text; any other
            # text where a name says a number is not nandlab's.
            if not rule.text and str(dtype) in ("String", "Utf8"):
                loose = table[name].drop_nulls().str.strip_chars_start().str.slice(0, 1)
                if (~loose.is_in(["[", "{"])).any():
                    raise ValueError(f"{path}: column {name!r} holds text, where nandlab writes {rule.what}")
            continue
        values = table[name].drop_nulls().to_numpy().astype(np.float64, copy=False)
        index = _first_wrong(values, rule)
        if index is not None:
            raise ValueError(f"{path}: column {name!r} holds {_shown(values[index].item())}, "
                             f"where nandlab writes {rule.what}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"
