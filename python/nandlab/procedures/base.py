"""What every procedure is: a ``Procedure`` (its name, its runner, the type of its result) and the
``ProcedureResult`` the runner returns, which knows its JSON document (``to_dict``), the files its
``--out`` directory gets (``write``, with a ``manifest.json`` naming the kind), its terminal tables
(``print``) and the report of such a directory (``report``)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import click
import polars as pl

from nandlab import files, output
from nandlab.terminal import safe

if TYPE_CHECKING:  # the report page imports matplotlib's helpers lazily; only its type is needed here
    from rich.console import Console

    from nandlab.report.page import Report

MANIFEST_JSON = "manifest.json"
"""What a result directory is: ``{"kind": procedure name, "nandlab": version, "files": [...]}``."""

class Finite(click.FloatRange):
    """A number within a range (any, by default), never nan or infinite (click's FloatRange lets nan
    through: it compares false with both ends)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        # Finite before the range: 1e400 was "inf is not in the range" (the range check saw float's inf).
        if isinstance(value, str) and not value.isascii():  # float() reads other scripts' digits too
            self.fail(f"expected a number in ASCII digits, found {safe(value)!r}", param, ctx)
        number = value if isinstance(value, float) else click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"expected a finite number, found {safe(str(value))!r}", param, ctx)
        return super().convert(number, param, ctx)


QUEUE_DEPTH = click.IntRange(1, 65_536)
"""Requests in flight, as an option takes them: as many as the engine takes."""

SweepRunner = Callable[[dict[str, Any]], "tuple[dict[str, Any], pl.DataFrame]"]
"""A sweep point's run: its config in, its figures (a flat dict) and time series out."""


WRITTEN_FOLDERS = ("figures", "runs", "timeseries", "failures")
"""The folders nandlab writes in an output directory (the report's figures, a sweep's runs)."""


class ProcedureResult:
    """What a procedure returns. A subclass sets (or has) ``kind``, the name of the procedure that
    made it, and implements ``to_dict``, ``files``, ``print`` and ``report``."""

    kind: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (what ``--json`` prints)."""
        raise NotImplementedError

    def to_json(self) -> str:
        """The document as ``--json`` prints it: strict JSON (non-finite numbers are null)."""
        return output.to_strict_json(self.to_dict())

    def files(self, out: Path) -> list[Path]:
        """Write the procedure's files to ``out`` (which exists); returns their paths."""
        raise NotImplementedError

    def write(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write the result to ``out_dir`` (created if needed): its files, then ``manifest.json``
        naming them and the kind; returns every path written."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files.unlink_links(out, output.RESULT_SUFFIXES, WRITTEN_FOLDERS)
        paths = self.files(out)
        return [*paths, write_manifest(out, self.kind, paths)]

    def print(self, console: Console) -> None:
        """Print the result's tables on ``console`` (the terminal's view of ``to_dict``)."""
        raise NotImplementedError

    @classmethod
    def report(cls, directory: Path) -> Report:
        """The report of a directory such a result wrote."""
        raise NotImplementedError


@dataclass(frozen=True)
class DocumentResult(ProcedureResult):
    """A result that is one JSON document, written as ``result.json`` (and what a subclass adds)."""

    document: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.document

    def files(self, out: Path) -> list[Path]:
        """result.json."""
        path = out / "result.json"
        path.write_text(self.to_json() + "\n", encoding="utf-8")
        return [path]


@dataclass(frozen=True)
class Procedure:
    """A registered procedure.

    Attributes:
        name: what it is called: the ``kind`` of its results and manifests, a sweep's ``procedure``.
        title: how messages name it (``nandlab chip endurance``).
        result: the type of its result (its ``report`` builds a directory's report).
        run: the runner, which returns a ``result``.
        sweep: for procedures a sweep can run: a point's config to its figures and time series.
        options: for ``nandlab test`` procedures: the click options of the command beyond the
            common ones (``--device``, ``--capacity``, ``--seed``, ``--json``, ``--out``, ``-q``),
            given to ``run`` by name; ``help`` and ``short_help`` are the command's texts.
    """

    name: str
    title: str
    result: type[ProcedureResult]
    run: Callable[..., ProcedureResult]
    sweep: SweepRunner | None = None
    options: Sequence[Callable[[Any], Any]] | None = None
    help: str = ""
    short_help: str = ""


def write_manifest(out: Path, kind: str, paths: Sequence[Path]) -> Path:
    """Write ``out/manifest.json`` for a result of ``kind`` whose files are ``paths``."""
    path = out / MANIFEST_JSON
    names = [p.relative_to(out).as_posix() for p in paths]
    document = {"kind": kind, "nandlab": version(), "files": names}
    files.unlink_link(path).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")  # never through a link
    return path


def version() -> str:
    """nandlab's version, as installed."""
    try:
        return metadata.version("nandlab")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree not installed
        return "(not installed)"
