"""What check-docs checks: runs (the commands behind the figures), the values taken from their results,
and claims — a figure as a document states it, found by the text around it, a table's cells, or a
result file committed beside a document.

A claim's template is the document's own text with each figure replaced by ``{name}``; any run of
whitespace in it matches any run of whitespace (prose wraps), so a claim reads as the sentence it
checks. Each figure names a run, where it is in the run's result and how the document prints it; the
check prints the fresh figure that way and compares the two texts — exactly, or within a tolerance for
the few figures that are measured rather than simulated (peak memory)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class Run:
    """A command whose results documents quote.

    ``argv``: the ``nandlab`` command line (``{out}`` becomes a fresh directory, ``{root}`` the checkout);
    with ``json`` its stdout is the result, else the result is ``{"out": directory}``. ``python``:
    instead, ``module:function`` of this package, called with the fresh directory, returning the
    result. ``cost``: seconds on 2 idle cores (scheduling, and ``ci``: cheap enough for every CI run).
    ``memory``: the result gains ``peak_rss_mib``, the command's peak memory; ``env``: set for it.
    ``measured``: its result is a measurement (real clients, wall time, a randomised test), not a
    simulation that repeats to the bit: it has no golden digest (a ``memory`` run's has, its peak
    memory aside)."""

    id: str
    argv: Sequence[str] = ()
    python: str | None = None
    cost: float = 10.0
    ci: bool = True
    json: bool = True
    memory: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    measured: bool = False

    @property
    def golden(self) -> bool:
        """Whether its whole result is pinned in the golden file (a deterministic simulation)."""
        return not self.measured


def dig(document: Any, path: str | Sequence[str]) -> Any:
    """``"phases.mixed-70r30w.read_latency_us.p999"``: keys of dicts; in a list, an index, or the element
    whose ``name`` (``jobname``, ``section``, ``firmware``) is the part. A key with a dot in it: give the
    path as a sequence of parts."""
    value = document
    for part in (path.split(".") if isinstance(path, str) else path):
        if isinstance(value, Mapping):
            if part not in value:
                raise KeyError(f"{path}: no {part!r}")
            value = value[part]
        elif isinstance(value, Sequence) and not isinstance(value, str):
            if part.lstrip("-").isdigit():
                value = value[int(part)]
                continue
            matches = [v for v in value if isinstance(v, Mapping)
                       and part in (v.get("name"), v.get("jobname"), v.get("section"), v.get("firmware"))]
            if len(matches) != 1:
                raise KeyError(f"{path}: {len(matches)} elements named {part!r}")
            value = matches[0]
        else:
            raise KeyError(f"{path}: nothing at {part!r}")
    return value


def number(value: float) -> str:
    """nandlab's table style: three significant digits, thousands separated from 1,000."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


Format = Union[str, Callable[[Any], str]]


def formatted(value: Any, fmt: Format) -> str:
    """``value`` as a document prints it: a format spec (``",.0f"``, ``".2f"``, ``".2e"``), ``"n"`` (three
    significant digits), ``"%"`` or ``"%.1"`` (a share as a percentage with that many decimals), or a
    function; ``None`` prints as a dash."""
    if callable(fmt):
        return fmt(value)
    if value is None:
        return "—"
    if fmt == "n":
        return number(value)
    if fmt.startswith("%"):
        return f"{100 * value:.{int(fmt[2:] or 0)}f}"
    return format(value, fmt)


@dataclass(frozen=True)
class Value:
    """A figure: from run ``run``'s result at ``path``, then through ``get`` if given (with several runs,
    ``get`` takes their results in order), printed as ``fmt``; ``tol``: a relative tolerance, for a
    measured figure (peak memory), where a simulated one must match exactly; ``bound``: the document
    states a bound, not the figure ("within 0.5 %": ``"at most"``; ``"at least"``)."""

    run: str | tuple[str, ...]
    path: str | Sequence[str] | None = None
    fmt: Format = "n"
    get: Callable[..., Any] | None = None
    tol: float = 0.0
    bound: str | None = None

    def runs(self) -> tuple[str, ...]:
        return (self.run,) if isinstance(self.run, str) else self.run

    def of(self, results: Mapping[str, Any]) -> Any:
        if isinstance(self.run, tuple):
            return self.get(*(results[r] for r in self.run))
        value = results[self.run]
        if self.path:
            value = dig(value, self.path)
        return self.get(value) if self.get else value


NUMBER = r"[-−]?\d[\d,]*(?:\.\d+)?(?:e[-+−]?\d+)?|[-−]?\.\d+|—|–"
"""What a stated figure looks like (a dash stands for a figure without meaning)."""


def template_regex(template: str) -> str:
    """A template as a regex: its text literal but for whitespace (any run matches any), each ``{name}``
    a figure."""
    out = []
    for i, part in enumerate(re.split(r"\{(\w+)\}", template)):
        if i % 2:
            out.append(f"(?P<{part}>{NUMBER})")
        else:
            out.append("".join(r"\s+" if p.isspace() else re.escape(p) for p in re.split(r"(\s+)", part) if p))
    return "".join(out)


@dataclass(frozen=True)
class Claim:
    """Figures as ``file`` states them in a sentence: ``template`` is its text with ``{name}`` for each
    figure of ``values``; it must occur once in the file."""

    file: str
    template: str
    values: Mapping[str, Value]

    def runs(self) -> set[str]:
        return {r for v in self.values.values() for r in v.runs()}


@dataclass(frozen=True)
class Cell:
    """A table cell's figures: ``template`` as in a claim (default ``"{v}"``, the cell one figure)."""

    values: Mapping[str, Value]
    template: str = "{v}"


@dataclass(frozen=True)
class Table:
    """A table's figures: the table whose header row holds ``header`` (the header's cells, as text),
    rows found by their first cell; ``rows`` maps a row's first cell to its checked cells by column."""

    file: str
    header: Sequence[str]
    rows: Mapping[str, Mapping[str, Value | Cell]]

    def runs(self) -> set[str]:
        out = set()
        for cells in self.rows.values():
            for cell in cells.values():
                values = cell.values.values() if isinstance(cell, Cell) else [cell]
                out |= {r for v in values for r in v.runs()}
        return out


@dataclass(frozen=True)
class SameFiles:
    """Result files committed beside a document (``committed``, relative to the checkout) are the ones
    run ``run`` writes now (``fresh``, relative to its fresh directory), wall-clock figures aside."""

    file: str
    run: str
    pairs: Sequence[tuple[str, str]]

    def runs(self) -> set[str]:
        return {self.run}


Check = Union[Claim, Table, SameFiles]


def _command(run: Run) -> tuple:
    """What a run does (not what it costs)."""
    return (tuple(run.argv), run.python, run.json, run.memory, tuple(sorted(run.env.items())), run.measured)


def same(stated: str, measured: str, value: Any, v: Value) -> bool:
    """Whether the stated figure is the measured one: as printed, within ``v.tol`` of it, or — for a
    bound — holding it."""
    if stated == measured and not v.bound:
        return True
    if not isinstance(value, (int, float)) or not (v.tol or v.bound):
        return False
    try:
        figure = float(stated.replace(",", "").replace("−", "-"))
    except ValueError:
        return False
    if v.bound == "at most":
        return value <= figure
    if v.bound == "at least":
        return value >= figure
    return math.isclose(figure, float(value), rel_tol=v.tol)


@dataclass
class Finding:
    """One thing check-docs found wrong."""

    where: str
    stated: str
    measured: str
    about: str = ""

    def __str__(self) -> str:
        return f"{self.where}: stated {self.stated}, measured {self.measured}" + (f" ({self.about})" if self.about
                                                                                   else "")


@dataclass
class Registry:
    """Every run and check, as the claims modules declare them."""

    runs: dict[str, Run] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)

    def run(self, *runs: Run) -> None:
        """Declares runs; a run two modules quote may be declared by both, as the same command."""
        for r in runs:
            known = self.runs.get(r.id)
            if known is not None and _command(known) != _command(r):
                raise ValueError(f"run {r.id} declared twice, as two commands")
            if known is None or r.cost > known.cost:
                self.runs[r.id] = r

    def check(self, *checks: Check) -> None:
        self.checks.extend(checks)
