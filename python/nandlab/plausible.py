"""Figures read back from files (a report's, a snapshot's finished phases), checked for what can exist
before any is shown:
a percentage from 0 to 100, a bit error rate or a share from 0 to 1, a count, size, time, rate or
ratio not below 0, and each of them a number. A file that says otherwise was not written so by
nandlab (an altered or foreign file); the report names the file, the figure and the value instead of
drawing it.

What a figure is comes from its name, word by word (``write_random_percent``: a percentage;
``rber_p99``: a rate; ``host_write_bytes``: a size), as nandlab names its figures; a name none of
the rules knows is not checked."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["check_document", "check_table", "impossible"]

_RULES: tuple[tuple[frozenset[str], float, float, str], ...] = (
    (frozenset({"percent", "pct", "%"}), 0.0, 100.0, "a percentage, from 0 to 100"),
    (frozenset({"uber", "rber", "fraction", "share", "probability"}), 0.0, 1.0, "a rate or share, from 0 to 1"),
    (frozenset({"bytes", "records", "reads", "writes", "trims", "count", "counts", "lines", "blocks", "cycles",
                "erases", "iops", "us", "ns", "ms", "seconds", "hours", "waf", "ratio", "latency", "runs", "pages",
                "decodes", "retries", "requests", "footprint", "mbps", "gib", "mib", "kib", "wall"}),
     0.0, math.inf, "a count, size, time, rate or ratio, not below 0"),
)
"""(words of a name, lowest, highest, what it is): the first rule one of a name's words is in holds."""

_WORD = re.compile(r"[a-z]+|%")


def _rule(name: str) -> tuple[float, float, str] | None:
    words = set(_WORD.findall(name.lower()))
    for rule_words, low, high, what in _RULES:
        if words & rule_words:
            if high == 100.0 and "of" in words:  # a percentage of something else (of theoretical): any size
                return low, math.inf, "a percentage, not below 0"
            return low, high, what
    return None


def _impossible(value: Any, low: float, high: float) -> bool:
    """Whether ``value`` cannot be a figure from ``low`` to ``high`` (None, a missing one, can; so can
    True or False: whether it passed, ``uber_pass``)."""
    if value is None or isinstance(value, bool):
        return False
    if not isinstance(value, (int, float)):
        return True
    return not math.isnan(value) and not low <= value <= high


def _numbers(document: Any) -> Iterator[tuple[str, str, Any]]:
    """(where, the name that says what it is, value) of every value under a key of ``document``, a
    list's items under its key's name, walked without recursion."""
    stack: list[tuple[str, str, Any]] = [("", "", document)]
    while stack:
        where, name, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{where}.{key}" if where else str(key), str(key), v) for key, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", name, v) for i, v in enumerate(value))
        elif where:
            yield where, name, value


def impossible(document: Any) -> str | None:
    """What cannot exist in ``document`` (a JSON result's content): ``where = value, where nandlab
    writes …``; None if every figure can."""
    for where, name, value in _numbers(document):
        rule = _rule(name)
        if rule is not None and _impossible(value, rule[0], rule[1]):
            return f"{where} = {_shown(value)}, where nandlab writes {rule[2]}"
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
        rule = _rule(name)
        if rule is None or not dtype.is_numeric():
            continue
        low, high, what = rule
        values = table[name].drop_nulls().to_numpy().astype(np.float64, copy=False)
        bad = values[~np.isnan(values) & ((values < low) | (values > high))]
        if bad.size:
            raise ValueError(f"{path}: column {name!r} holds {_shown(bad[0].item())}, where nandlab writes {what}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"
