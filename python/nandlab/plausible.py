"""Figures read back from files (a report's, a snapshot's finished phases), checked for what can exist
before any is shown: a percentage from 0 to 100, a bit error rate or a share from 0 to 1, a count
a whole number, and every figure a number below 2⁶⁴ in size, not below 0 unless its name says it
may be (a temperature, a slope). A file that says otherwise was not written so by nandlab (an
altered or foreign file); the report names the file, the figure and the value instead of drawing it.

What a figure is comes from its name, word by word (``write_random_percent``: a percentage;
``rber_p99``: a rate; ``host_write_bytes``: a count), as nandlab names its figures. NaN is a figure
that could not be had (WAF without writes), never a count."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["check_document", "check_table", "impossible"]


class Rule(NamedTuple):
    low: float
    high: float
    what: str
    nan: bool = True
    """NaN allowed: a figure that could not be had."""


_LARGEST = 2.0**64
"""No figure nandlab writes is this large (counts are 64-bit; times, rates and ratios far smaller)."""

_EXACT = {"capacity_at_death": Rule(0.0, 1.0, "a share, from 0 to 1")}

_RULES: tuple[tuple[frozenset[str], Rule], ...] = (
    (frozenset({"percent", "pct", "%"}), Rule(0.0, 100.0, "a percentage, from 0 to 100")),
    (frozenset({"uber", "rber", "fraction", "share", "probability"}), Rule(0.0, 1.0, "a rate or share, from 0 to 1")),
    (frozenset({"bytes", "records", "reads", "writes", "trims", "count", "counts", "lines", "blocks", "cycles",
                "erases", "runs", "pages", "decodes", "requests", "dies", "planes", "channels", "chips", "depth",
                "jobs", "units", "slots"}),
     Rule(0.0, _LARGEST, "a count, a number from 0", nan=False)),
    (frozenset({"temperature", "slope", "drift", "change", "delta"}), Rule(-_LARGEST, _LARGEST, "a number")),
)
"""(words of a name, its rule): the first rule one of a name's words is in holds; a name no rule
knows is a figure not below 0 (a size, a time, a rate, a ratio)."""

_ANY = Rule(0.0, _LARGEST, "a figure from 0 (a size, time, rate or ratio)")

_WORD = re.compile(r"[a-z]+|%")


def _rule(name: str) -> Rule:
    if name in _EXACT:
        return _EXACT[name]
    words = set(_WORD.findall(name.lower()))
    for rule_words, rule in _RULES:
        if words & rule_words:
            if rule.high == 100.0 and "of" in words:  # a percentage of something else (of theoretical): any size
                return Rule(0.0, _LARGEST, "a percentage, not below 0")
            return rule
    return _ANY


def _impossible(value: Any, rule: Rule, numbers_only: bool) -> bool:
    """Whether ``value`` cannot be a figure under ``rule`` (None, a missing one, can; so can True or
    False: whether it passed, ``uber_pass``; text can where the name does not say it is a number)."""
    if value is None or isinstance(value, bool):
        return False
    if not isinstance(value, (int, float)):
        return numbers_only
    if math.isnan(value):
        return not rule.nan
    return not rule.low <= value <= rule.high


_SETTINGS = {"job options", "global options", "options", "config", "params"}
"""Keys whose values are settings as the user gave them (fio's ``iodepth = "8"``), not figures."""


def _numbers(document: Any) -> Iterator[tuple[str, str, Any]]:
    """(where, the name that says what it is, value) of every value under a key of ``document``, a
    list's items under its key's name, walked without recursion (settings left out: ``_SETTINGS``)."""
    stack: list[tuple[str, str, Any]] = [("", "", document)]
    while stack:
        where, name, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{where}.{key}" if where else str(key), str(key), v) for key, v in value.items()
                         if key not in _SETTINGS)
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", name, v) for i, v in enumerate(value))
        elif where:
            yield where, name, value


def impossible(document: Any) -> str | None:
    """What cannot exist in ``document`` (a JSON result's content): ``where = value, where nandlab
    writes …``; None if every figure can."""
    for where, name, value in _numbers(document):
        rule = _rule(name)
        if _impossible(value, rule, numbers_only=rule.high <= _LARGEST and rule.low == 0.0 and rule is not _ANY):
            return f"{where} = {_shown(value)}, where nandlab writes {rule.what}"
    return None


def check_document(document: Any, path: Path) -> None:
    """ValueError naming ``path``, the figure and its value if a figure of ``document`` (a JSON
    result file's content) cannot exist."""
    wrong = impossible(document)
    if wrong is not None:
        raise ValueError(f"{path}: {wrong}")


def check_table(table: Any, path: Path) -> None:
    """ValueError naming ``path``, the column and a value if a numeric column of ``table`` (a polars
    DataFrame read from a result file) holds a figure that cannot exist."""
    import numpy as np

    for name, dtype in table.schema.items():
        if not dtype.is_numeric():
            continue
        rule = _rule(name)
        values = table[name].drop_nulls().to_numpy().astype(np.float64, copy=False)
        nan = np.isnan(values)
        bad = values[(nan & (not rule.nan)) | (~nan & ((values < rule.low) | (values > rule.high)))]
        if bad.size:
            raise ValueError(f"{path}: column {name!r} holds {_shown(bad[0].item())}, where nandlab writes {rule.what}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"
