"""Reports: one self-contained HTML file, ``report.html``, for any directory nandlab writes — a run
(``nandlab run``, ``fio``, ``trace replay`` with ``--out``), a sweep, and every procedure's ``--out``
(write / read sections, pSLC fill, matrix, trace statistics, lifetime grid, chip endurance and
latency). Each gets its configuration, summary tables and figures. The file needs nothing else to be
read (see ``nandlab.report.page``). The figures it draws (with ``nandlab.plots``) are also PNG files
in ``figures/`` beside it; the ones a procedure drew itself stay where they are::

    from nandlab import report
    report.write("results/grid")          # → results/grid/report.html

A directory's ``manifest.json`` names the procedure that wrote it, whose result type builds the
report (``ProcedureResult.report``); a directory written before manifests is recognised by its file
names. Procedures call ``write`` on their ``--out`` directory; ``nandlab report DIR`` does it for any.
A sweep's ``[report]`` table (in its sweep.toml) chooses its heatmaps::

    [report]
    heatmaps = [{ x = "reserve", y = "working_set", value = "lifetime_ratio" }]
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from nandlab import files, output
from nandlab.arguments import show_types
from nandlab.procedures.base import MANIFEST_JSON
from nandlab.report.page import DRAWN, FIGURES, REPORT_HTML, Report
from nandlab.terminal import printable

__all__ = ["FIGURES", "REPORT_HTML", "Report", "build", "write"]

_DAMAGED = (KeyError, IndexError, TypeError, AttributeError, OverflowError, ZeroDivisionError, RecursionError,
            FileNotFoundError, NotADirectoryError, FileExistsError, pl.exceptions.PolarsError)
"""What reading a directory's files raises when one is not as nandlab wrote it."""


def write(directory: str | os.PathLike[str]) -> Path:
    """Build ``directory``'s report and write it as ``report.html`` there; returns its path.
    Raises ValueError naming the directory if it is none nandlab writes or its files are damaged
    (or naming the sweep file if its [report] table is wrong)."""
    report = build(directory)
    path = Path(directory) / REPORT_HTML
    files.write_replacing(path, report.to_html())
    return path


def build(directory: str | os.PathLike[str]) -> Report:
    """The report of a directory (see the module for the kinds), its figures drawn afresh."""
    from nandlab import procedures

    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d}: no such directory")
    kind, wrote_it = _kind(d)
    # A figure is never drawn through a link: figures/ itself (here) or one of its PNGs (Report.figure_path).
    # The files the report reads may be links (a git-annex or DVC checkout): they stay.
    files.unlink_link(d / FIGURES)
    procedure = procedures.get(kind)
    if procedure is None:
        raise ValueError(f"{d / MANIFEST_JSON}: kind {kind!r} is no procedure of this nandlab; "
                         f"it knows {', '.join(procedures.PROCEDURES)}")
    before = _drawn_before(d)
    try:
        report = procedure.result.report(d)
    except _DAMAGED + (ValueError,) as error:  # a file without the keys, columns or types nandlab writes
        if isinstance(error, ValueError) and str(error).startswith(str(d)):
            raise  # names the file of the directory and what is wrong with it
        raise ValueError(f"{d}: a damaged --out of {wrote_it or procedure.title}: {_what_is_wrong(error)}") from None
    # Figures an earlier report drew and this one did not go, once it has been built; any other file in
    # figures/ is someone else's and stays.
    for stale in before - {path.name for path in report.drawn}:
        (d / FIGURES / stale).unlink(missing_ok=True)
    if report.drawn:
        names = "".join(f"{path.name}\n" for path in sorted(report.drawn))
        files.write_replacing(d / FIGURES / DRAWN, names)
    return report


def _what_is_wrong(error: BaseException) -> str:
    """What a damaged directory's error says is wrong with it, in words (the exception's own text is
    Python's: kept short, in brackets, for whoever debugs it)."""
    words = {
        KeyError: f"a file lacks the key {printable(str(error))}",
        IndexError: "a list is shorter than nandlab writes it",
        OverflowError: "a number is too large for what nandlab writes there",
        ZeroDivisionError: "a figure nandlab divides by is 0",
        RecursionError: "a value is nested deeper than nandlab writes",
        FileNotFoundError: "a file nandlab writes there is missing",
        NotADirectoryError: "a file stands where nandlab writes a folder",
        FileExistsError: "a folder or file stands where nandlab writes another",
    }
    for kind, text in words.items():
        if isinstance(error, kind):
            return text if kind is KeyError else f"{text} ({printable(str(error))[:120]})"
    if isinstance(error, pl.exceptions.PolarsError):
        return f"a table is not as nandlab writes it ({printable(str(error))[:120]})"
    return f"a value is not of the type nandlab writes there ({type(error).__name__}: {printable(str(error))[:120]})"


def _drawn_before(d: Path) -> set[str]:
    """The figure names an earlier report recorded drawing in ``figures/`` (none if it kept no record)."""
    record = d / FIGURES / DRAWN
    if not record.is_file():
        return set()
    try:
        names = files.read_text(record, "figure list").splitlines()
    except ValueError:
        return set()
    return {name for name in names if name.endswith(".png") and name == Path(name).name}


def _kind(d: Path) -> tuple[str, str | None]:
    """The procedure that wrote ``d`` (its manifest's ``kind``), and for a directory written before
    manifests, what its file names say wrote it."""
    manifest = d / MANIFEST_JSON
    if not manifest.exists():
        return _kind_by_file_names(d)
    try:
        kind = json.loads(files.read_text(manifest, "manifest"))["kind"]
    except (json.JSONDecodeError, KeyError, TypeError, RecursionError):
        kind = None
    if not isinstance(kind, str):
        raise ValueError(f'{manifest}: not a manifest nandlab wrote (expected {{"kind": "...", ...}})')
    return kind, None


_OLD_DIRECTORIES = (  # what wrote it, the files that make one (all of a group, any group), its kind
    ("nandlab sweep", (("sweep.json", "results.parquet"),), "sweep"),
    ("nandlab run, fio or trace replay", ((output.SUMMARY_JSON, output.TIMESERIES_PARQUET),), "run"),
    ("nandlab matrix", (("matrix.parquet", "result.json"),), "matrix"),
    ("nandlab test write-sections, read-sections or pslc-fill", (("series.parquet", "result.json"),), "test"),
    ("nandlab trace stats", (("stats.json",),), "trace-stats"),
    ("nandlab trace stats with several traces", (("composition.csv",),), "trace-comparison"),
    ("nandlab lifetime-grid", (("grid.parquet",),), "lifetime-grid"),
    ("nandlab chip endurance or latency", (("endurance.json",), ("latency.json",)), "chip-endurance"),
)


def _kind_by_file_names(d: Path) -> tuple[str, str]:
    """A directory without a manifest, as nandlab wrote them before: the first kind (in the order
    of ``_OLD_DIRECTORIES``) whose files it holds; a run with fio.json is fio's, a test is the one
    whose figure it holds."""
    for wrote_it, groups, kind in _OLD_DIRECTORIES:
        if any(all((d / name).exists() for name in group) for group in groups):
            if kind == "run" and (d / "fio.json").exists():
                kind = "fio"
            elif kind == "test":
                kind = next((p.stem for p in sorted(d.glob("*.png"))
                             if p.stem in ("write-sections", "read-sections", "pslc-fill")), "write-sections")
            return kind, wrote_it
    expected = "; ".join(f"{wrote_it} ({' or '.join(' + '.join(group) for group in groups)})"
                         for wrote_it, groups, _ in _OLD_DIRECTORIES)
    raise ValueError(f"{d}: not a directory nandlab wrote: found none of the files of an --out of {expected}")


show_types(__name__)
