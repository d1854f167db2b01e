"""Reports: one self-contained HTML file (``report.html``: inline CSS, every figure a PNG embedded as
a data URI, no scripts, nothing fetched) for any directory nandlab writes — a run (``nandlab run
--out``, ``nandlab fio --out``), a sweep, and every procedure's ``--out`` (write/read sections, pSLC
fill, lifetime grid, chip endurance and latency, matrix, trace statistics). Each gets its
configuration, summary tables and figures; the figures are also PNG files beside it, drawn by
``nandlab.plots``::

    from nandlab import report
    report.write("results/grid")          # → results/grid/report.html

Procedures call ``write`` on their ``--out`` directory; ``nandlab report DIR`` does it for any.
"""

from __future__ import annotations

import base64
import html
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from nandlab import output

__all__ = ["REPORT_HTML", "Report", "build", "write"]

REPORT_HTML = "report.html"
FIGURES = "figures"
"""Where the figures a report draws itself go (procedures' own PNGs stay where they are)."""
MAX_TABLE_ROWS = 200
MAX_OVERLAY_RUNS = 12

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1180px;
       padding: 0 1.2em; color: #1d232a; }
h1 { font-size: 1.6em; margin-bottom: 0.1em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #d6dbe0; }
.kind { color: #5b6570; margin-top: 0; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e6e9ec; text-align: right; white-space: nowrap; }
th { background: #f3f5f7; position: sticky; top: 0; } td:first-child, th:first-child { text-align: left; }
.scroll { max-height: 32em; overflow: auto; border: 1px solid #e6e9ec; }
figure { margin: 1em 0; } img { max-width: 100%; height: auto; border: 1px solid #eef0f2; }
figcaption { color: #5b6570; font-size: 0.85em; }
pre { background: #f6f8fa; padding: 0.8em; overflow: auto; max-height: 28em; font-size: 0.8em; }
.failed { color: #b42318; }
"""


@dataclass
class Report:
    """What a report shows: a ``title``, what ``kind`` of directory it is, and ``sections`` of
    (heading, HTML) and ``figures`` of (PNG path, caption), in order."""

    title: str
    kind: str
    sections: list[tuple[str, str]] = field(default_factory=list)
    figures: list[tuple[Path, str]] = field(default_factory=list)

    def table(self, heading: str, rows: Sequence[Mapping[str, Any]], note: str = "") -> None:
        """Adds a table section (the first ``MAX_TABLE_ROWS`` rows)."""
        self.sections.append((heading, _table(rows) + (f"<p>{html.escape(note)}</p>" if note else "")))

    def text(self, heading: str, text: str) -> None:
        """Adds a preformatted section (a config, a sweep file)."""
        self.sections.append((heading, f"<pre>{html.escape(text)}</pre>"))

    def figure(self, path: Path, caption: str) -> None:
        self.figures.append((path, caption))

    def to_html(self) -> str:
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>{html.escape(self.title)}</h1><p class=\"kind\">{html.escape(self.kind)} · nandlab report</p>",
        ]
        # Tables first, then the figures, then the configuration texts.
        texts = [(h, b) for h, b in self.sections if b.startswith("<pre>")]
        for heading, body in (section for section in self.sections if section not in texts):
            parts.append(f"<h2>{html.escape(heading)}</h2>{body}")
        if self.figures:
            parts.append("<h2>Figures</h2>")
        for path, caption in self.figures:
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            parts.append(
                f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(caption)}">'
                f"<figcaption>{html.escape(caption)} ({html.escape(path.name)})</figcaption></figure>"
            )
        for heading, body in texts:
            parts.append(f"<h2>{html.escape(heading)}</h2>{body}")
        parts.append("</body></html>")
        return "\n".join(parts)


def write(directory: str | os.PathLike[str]) -> Path:
    """Build ``directory``'s report and write it as ``report.html`` there; returns its path.
    Raises ValueError naming the directory if nandlab did not write it."""
    report = build(directory)
    path = Path(directory) / REPORT_HTML
    path.write_text(report.to_html(), encoding="utf-8")
    return path


def build(directory: str | os.PathLike[str]) -> Report:
    """The report of a directory (see the module for the kinds); draws its missing figures."""
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d}: no such directory")
    for kind, marker, builder in _KINDS:
        if marker(d):
            return builder(d)
    expected = ", ".join(kind for kind, _, _ in _KINDS)
    raise ValueError(f"{d}: not a directory nandlab wrote; expected the --out of one of: {expected}")


# --- the kinds -----------------------------------------------------------------------------------


def _sweep(d: Path) -> Report:
    from nandlab import plots

    about = json.loads((d / "sweep.json").read_text(encoding="utf-8"))
    results = pl.read_parquet(d / "results.parquet")
    r = Report(f"Sweep: {about['name']}", f"sweep of {about['runs']} runs ({about['procedure']})")
    axes = [a["name"] for a in about["axes"]]
    varying = [a["name"] for a in about["axes"] if len(a["values"]) > 1]
    metrics = _sweep_metrics(about["procedure"], results)
    ok = results.filter(pl.col("status") == "ok")
    figures = _figures_dir(d)
    requested = about.get("report", {}).get("heatmaps")
    if requested:
        maps = [(h["value"], h["x"], h["y"]) for h in requested]
    elif len(varying) >= 2:
        maps = [(m, varying[0], varying[1]) for m in metrics[:3]]
    else:
        maps = []
    for value, x, y in maps:
        if value not in ok.columns or not ok.height:
            continue
        facets = [a for a in varying if a not in (x, y)]
        path = figures / f"heatmap-{value}.png"
        ratio = value.endswith("_ratio")
        plots.heatmaps(ok, value, x=x, y=y, path=path, rows=facets[1] if len(facets) > 1 else None,
                       cols=facets[0] if facets else None, title=f"{about['name']}: {value}",
                       better="lower" if "latency" in value or value == "waf" else "higher",
                       reference=1.0 if ratio else None)
        r.figure(path, f"{value} over {x} and {y}" + (f", by {', '.join(facets)}" if facets else ""))
    if len(varying) == 1 and ok.height:
        path = figures / "bars.png"
        plots.bars(ok, varying[0], metrics[:3], path, title=about["name"])
        r.figure(path, f"{', '.join(metrics[:3])} by {varying[0]}")
    series_dir = d / "timeseries"
    if ok.height and series_dir.is_dir() and any(series_dir.iterdir()):
        series = pl.read_parquet(series_dir, hive_partitioning=True)
        runs = ok.head(MAX_OVERLAY_RUNS).select("run_id", *axes)
        label = runs.select(run_id="run_id", run=pl.concat_str([pl.col(a).cast(pl.String) for a in axes], separator=" "))
        series = series.join(label, on="run_id").filter(pl.col("run_id").is_in(runs["run_id"].to_list()))
        if "side" in series.columns:
            series = series.with_columns(run=pl.concat_str(["run", "side"], separator=" "))
        columns = [c for c in ("write_mbps", "waf_cumulative", "free_blocks", "reserve_used") if c in series.columns]
        path = figures / "timeseries.png"
        plots.overlay(series, "run", columns, path, title=f"{about['name']}: the first {runs.height} runs over time")
        r.figure(path, "time series of the runs (one line each)")
    r.table("Results", results.select(*[c for c in ("run", "status", *axes, *metrics) if c in results.columns]).to_dicts(),
            note=f"{ok.height} of {results.height} runs finished; every figure of every run is in results.parquet.")
    failed = results.filter(pl.col("status") == "failed")
    if failed.height:
        r.table("Failed runs", failed.select("run", "run_id", *axes, "error").to_dicts())
    r.text("Sweep file", (d / "sweep.toml").read_text(encoding="utf-8") if (d / "sweep.toml").exists() else "")
    r.text("Base config", json.dumps(about["base"], indent=2))
    return r


def _sweep_metrics(procedure: str, results: pl.DataFrame) -> list[str]:
    """The headline figures of a sweep's results, in order."""
    wanted = (("lifetime_ratio", "latency_ratio", "latency_ratio_after") if procedure == "lifetime-compare"
              else ("waf", "iops", "mbps", "write_latency_us_p99", "read_latency_us_p99"))
    return [m for m in wanted if m in results.columns and results[m].null_count() < results.height]


def _run(d: Path) -> Report:
    from nandlab import plots

    doc = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    ts = pl.read_parquet(d / "timeseries.parquet")
    device = doc.get("device", {})
    r = Report(f"Run on {device.get('preset') or 'a custom drive'}", "run")
    figures = _figures_dir(d)
    if (d / "throughput_latency.png").exists():
        r.figure(d / "throughput_latency.png", "throughput and latency percentiles against data written")
    if ts.height:
        path = figures / "drive.png"
        plots.drive_state(ts, doc.get("erase_count_histogram") or [], path)
        r.figure(path, "WAF, free blocks, blocks by bit mode, and the erase-count distribution (bars) with its CDF")
    columns = ("name", "kind", "host_write_bytes", "host_read_bytes", "iops", "mbps", "waf",
               "read_latency_us", "write_latency_us", "sim_seconds", "wall_seconds")
    rows = [_summary_row(p, columns) for p in doc.get("phases", [])] + [_summary_row({**doc, "name": "total"}, columns)]
    r.table("Summary", rows)
    for phase in doc.get("phases", []):
        if phase.get("jobs"):
            r.table(f"Jobs of {phase['name']}", [_summary_row(j, ("name", *columns[2:6], *columns[7:10])) for j in phase["jobs"]])
    if (d / "fio.json").exists():
        fio = json.loads((d / "fio.json").read_text(encoding="utf-8"))
        rows = [{"job": j["jobname"], "group": j["groupid"], **{f"{k} IOPS": j[k]["iops"] for k in ("read", "write")},
                 **{f"{k} p99 µs": j[k]["clat_ns"]["percentile"].get("99.000000", 0) / 1000 for k in ("read", "write")}}
                for j in fio["jobs"]]
        r.table("fio jobs", rows, note="; ".join(fio.get("warnings", [])))
    r.table("Device", [{"figure": k, "value": v} for k, v in device.items() if not isinstance(v, (dict, list))])
    if (d / "config.json").exists():
        r.text("Configuration (resolved)", (d / "config.json").read_text(encoding="utf-8"))
    return r


def _summary_row(s: Mapping[str, Any], columns: Sequence[str]) -> dict[str, Any]:
    """A summary's figures for a table: latencies as p50 / p99 µs."""
    row = {}
    for c in columns:
        value = s.get(c)
        if isinstance(value, Mapping):
            row[f"{c} p50 / p99"] = f"{_fmt(value.get('p50'))} / {_fmt(value.get('p99'))}"
        else:
            row[c] = value
    return row


def _matrix(d: Path) -> Report:
    doc = json.loads((d / "result.json").read_text(encoding="utf-8"))
    r = Report(f"SNIA matrix: {doc['device']}", "performance matrix")
    _existing_figures(r, d, {"matrix-burst.png": "burst: MB/s against block size, per R/W mix",
                             "matrix-steady.png": "steady state (SNIA PTS): MB/s against block size, per R/W mix",
                             "scaling.png": "bandwidth against die count, simulated and theoretical"})
    for state, part in doc["states"].items():
        keys = ("read_percent", "block_size", "iops", "mbps", "theoretical_mbps", "percent_of_theoretical", "waf",
                "rounds", "steady")
        r.table(f"{state} cells", [{k: c.get(k) for k in keys if k in c} for c in part["cells"]],
                note=f"RMS: {part['rms_iops']:.0f} IOPS, {part['rms_mbps']:.1f} MB/s")
    r.table("Die-count scaling", doc["scaling"])
    r.text("Drive", json.dumps(doc["drive"], indent=2))
    return r


def _qualification(d: Path) -> Report:
    doc = json.loads((d / "result.json").read_text(encoding="utf-8"))
    parts = doc.get("sections") or doc.get("phases") or []
    r = Report(f"Qualification: {doc.get('device', '')}", "Swissbit AN2103 procedure")
    _existing_figures(r, d, {p.name: "speed against data moved, per section or phase" for p in sorted(d.glob("*.png"))})
    r.table("Sections" if "sections" in doc else "Phases", [{k: v for k, v in p.items() if not isinstance(v, (list, dict))} for p in parts])
    r.text("Result", json.dumps({k: v for k, v in doc.items() if k not in ("sections", "phases")}, indent=2))
    return r


def _trace_stats(d: Path) -> Report:
    doc = json.loads((d / "stats.json").read_text(encoding="utf-8"))
    r = Report(f"Trace: {d.name}", f"trace statistics ({doc.get('format')})")
    _existing_figures(r, d, {"trace-stats.png": "request sizes and address reuse (ZombieNAND's Fig. 4)"})
    r.table("Composition", [{k: v for k, v in doc.items() if not isinstance(v, (list, dict))}])
    return r


def _lifetime_grid(d: Path) -> Report:
    table = pl.read_parquet(d / "grid.parquet")
    r = Report("ZombieNAND synthetic grid", "lifetime grid (the paper's Fig. 3)")
    _existing_figures(r, d, {"lifetime-ratio.png": "lifetime relative to the baseline",
                             "latency-ratio.png": "mean latency over the baseline's life, relative to the baseline"})
    r.table("Grid", table.to_dicts())
    return r


def _chip(d: Path) -> Report:
    r = Report(f"Chip bench: {d.name}", "chip endurance / latency")
    _existing_figures(r, d, {p.name: p.stem.replace("-", " ") for p in sorted(d.glob("*.png"))})
    for name in ("endurance.json", "latency.json"):
        if (d / name).exists():
            doc = json.loads((d / name).read_text(encoding="utf-8"))
            r.text(name, json.dumps({k: v for k, v in doc.items() if k not in ("trace", "lifetimes")}, indent=2))
    return r


_KINDS: tuple[tuple[str, Callable[[Path], bool], Callable[[Path], Report]], ...] = (
    ("sweep", lambda d: (d / "sweep.json").exists() and (d / "results.parquet").exists(), _sweep),
    ("run / fio", lambda d: (d / "summary.json").exists() and (d / "timeseries.parquet").exists(), _run),
    ("matrix", lambda d: (d / "result.json").exists() and (d / "scaling.csv").exists(), _matrix),
    ("test write-sections / read-sections / pslc-fill", lambda d: (d / "series.parquet").exists(), _qualification),
    ("trace stats", lambda d: (d / "stats.json").exists(), _trace_stats),
    ("lifetime-grid", lambda d: (d / "grid.parquet").exists(), _lifetime_grid),
    ("chip endurance / latency", lambda d: (d / "endurance.json").exists() or (d / "latency.json").exists(), _chip),
)


# --- HTML pieces ---------------------------------------------------------------------------------


def _figures_dir(d: Path) -> Path:
    path = d / FIGURES
    path.mkdir(exist_ok=True)
    return path


def _existing_figures(r: Report, d: Path, captions: Mapping[str, str]) -> None:
    for name, caption in captions.items():
        if (d / name).exists():
            r.figure(d / name, caption)


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return "<p>(none)</p>"
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = []
    for row in rows[:MAX_TABLE_ROWS]:
        cells = []
        for c in columns:
            value = row.get(c)
            css = ' class="failed"' if c == "status" and value == "failed" else ""
            cells.append(f"<td{css}>{html.escape(_fmt(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f"<p>… and {len(rows) - MAX_TABLE_ROWS} more rows.</p>" if len(rows) > MAX_TABLE_ROWS else ""
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>{more}'


def _fmt(value: Any) -> str:
    """Numbers with three significant digits (thousands separated), the rest as text."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "–" if value != value else output.number(value)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
