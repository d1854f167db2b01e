"""Reports: one self-contained HTML file, ``report.html``, for any directory nandlab writes — a run
(``nandlab run``, ``fio``, ``trace replay`` with ``--out``), a sweep, and every procedure's ``--out``
(write / read sections, pSLC fill, matrix, trace statistics, lifetime grid, chip endurance and
latency). Each gets its configuration, summary tables and figures. The file needs nothing else to be
read: inline CSS, no script, every figure a PNG embedded as a data URI, and a Content-Security-Policy
that forbids fetching anything. The figures it draws (with ``nandlab.plots``) are also PNG files in
``figures/`` beside it; the ones a procedure drew itself stay where they are::

    from nandlab import report
    report.write("results/grid")          # → results/grid/report.html

Procedures call ``write`` on their ``--out`` directory; ``nandlab report DIR`` does it for any.
A sweep's ``[report]`` table (in its sweep.toml) chooses its heatmaps::

    [report]
    heatmaps = [{ x = "reserve", y = "working_set", value = "lifetime_ratio" }]
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import struct
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import polars as pl

from nandlab import files, output

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["FIGURES", "REPORT_HTML", "Report", "build", "write"]

REPORT_HTML = "report.html"
FIGURES = "figures"
"""The directory (in the reported one) of the figures a report draws; it owns it and redraws it."""
MAX_TABLE_ROWS = 500
MAX_OVERLAY_RUNS = 12
"""Runs drawn in a sweep's time-series and CDF overlays (the first, in sweep order)."""
GIB = 2**30
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CONTENT_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1180px;
       padding: 0 1.2em; color: #1d232a; }
h1 { font-size: 1.6em; margin: 0; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #d6dbe0; }
.kind { color: #5b6570; margin: 0.2em 0 0.8em; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.15em 1.2em; margin: 0.6em 0; }
dl.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(17em, 1fr)); gap: 0.1em 1.5em;
          font-size: 0.85em; }
dl.grid div { display: flex; justify-content: space-between; border-bottom: 1px solid #eef0f2; }
dt { color: #5b6570; } dd { margin: 0; }
nav { font-size: 0.9em; margin: 0.8em 0; } nav a { margin-right: 1em; white-space: nowrap; }
a { color: #1c5fb0; text-decoration: none; } a:hover { text-decoration: underline; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e6e9ec; text-align: right; white-space: nowrap; }
th { background: #f3f5f7; position: sticky; top: 0; }
td.text, th:first-child, td:first-child { text-align: left; }
td.long { white-space: normal; min-width: 24em; }
.scroll { max-height: 34em; overflow: auto; border: 1px solid #e6e9ec; margin: 0.6em 0; width: fit-content;
          max-width: 100%; }
figure { margin: 1em 0; } img { max-width: 100%; height: auto; border: 1px solid #eef0f2; }
figcaption, .note, footer { color: #5b6570; font-size: 0.85em; }
pre { background: #f6f8fa; padding: 0.8em; overflow: auto; max-height: 30em; font-size: 0.8em; }
.failed { color: #b42318; } details { margin: 0.4em 0; } summary { cursor: pointer; }
footer { margin-top: 3em; border-top: 1px solid #d6dbe0; padding-top: 0.6em; }
"""


@dataclass
class Report:
    """What a report shows, in order: a ``title``, the ``kind`` of directory, a few headline
    ``facts``, and ``sections`` (heading, HTML parts: tables, figures, texts)."""

    directory: Path
    title: str
    kind: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    sections: list[tuple[str, list[str]]] = field(default_factory=list)

    def fact(self, name: str, value: str) -> None:
        """A headline figure under the title."""
        self.facts.append((name, value))

    def table(self, heading: str, rows: Sequence[Mapping[str, Any]], note: str = "") -> None:
        """A table (at most ``MAX_TABLE_ROWS`` rows; long text columns wrap)."""
        self._add(heading, _table(rows) + (f'<p class="note">{html.escape(note)}</p>' if note else ""))

    def pairs(self, heading: str, pairs: Sequence[tuple[str, Any]]) -> None:
        """Name–value pairs laid out in columns (a drive's figures)."""
        items = "".join(f"<div><dt>{html.escape(k)}</dt><dd>{html.escape(_fmt(v))}</dd></div>" for k, v in pairs)
        self._add(heading, f'<dl class="grid">{items}</dl>')

    def text(self, heading: str, text: str) -> None:
        """Preformatted text (a config, a sweep file)."""
        self._add(heading, f"<pre>{html.escape(text)}</pre>")

    def details(self, heading: str, summary: str, text: str) -> None:
        """Preformatted text folded under a one-line ``summary`` (a traceback)."""
        folded = f"<summary>{html.escape(summary)}</summary><pre>{html.escape(text)}</pre>"
        self._add(heading, f"<details>{folded}</details>")

    def figure(self, heading: str, path: Path, caption: str) -> None:
        """A PNG, embedded, with its caption and a link to the file."""
        data = files.read_bytes(path, "PNG figure")
        if not data.startswith(PNG_SIGNATURE) or len(data) < 24:
            raise ValueError(f"{path}: not a PNG image")
        width, height = struct.unpack(">II", data[16:24])  # the PNG header's IHDR chunk
        link = path.relative_to(self.directory).as_posix()
        self._add(heading, (
            f'<figure><img src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}" '
            f'width="{width}" height="{height}" alt="{html.escape(caption)}">'
            f'<figcaption>{html.escape(caption)} (<a href="{html.escape(link)}">{html.escape(link)}</a>)</figcaption>'
            "</figure>"
        ))

    def figure_path(self, name: str) -> Path:
        """Where a figure the report draws goes: ``figures/NAME``."""
        path = self.directory / FIGURES / name
        path.parent.mkdir(exist_ok=True)
        return path

    def links(self, heading: str, links: Sequence[tuple[str, str]]) -> None:
        """A list of (text, relative address) links (other reports)."""
        items = "".join(f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>' for text, href in links)
        self._add(heading, f"<ul>{items}</ul>")

    def _add(self, heading: str, part: str) -> None:
        if self.sections and self.sections[-1][0] == heading:
            self.sections[-1][1].append(part)
        else:
            self.sections.append((heading, [part]))

    def to_html(self) -> str:
        """The whole page."""
        anchors = _anchors([heading for heading, _ in self.sections])
        facts = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in self.facts)
        nav = "".join(f'<a href="#{a}">{html.escape(h)}</a>' for a, (h, _) in zip(anchors, self.sections))
        body = "".join(
            f'<section id="{a}"><h2>{html.escape(h)}</h2>{"".join(parts)}</section>\n'
            for a, (h, parts) in zip(anchors, self.sections)
        )
        return "".join([
            "<!DOCTYPE html>\n",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_POLICY}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head>\n<body>",
            f"<header><h1>{html.escape(self.title)}</h1>",
            f'<p class="kind">{html.escape(self.kind)} · {html.escape(self.directory.resolve().name)}</p>',
            f'<dl class="facts">{facts}</dl>' if facts else "",
            f"<nav>{nav}</nav></header>\n<main>{body}</main>",
            f"<footer>nandlab {html.escape(_version())} report: one file, nothing fetched. Its figures are also PNG ",
            f"files in {FIGURES}/; <code>nandlab report DIR</code> builds it again.</footer></body></html>\n",
        ])


def write(directory: str | os.PathLike[str]) -> Path:
    """Build ``directory``'s report and write it as ``report.html`` there; returns its path.
    Raises ValueError naming the directory if it is none nandlab writes or its files are damaged
    (or naming the sweep file if its [report] table is wrong)."""
    report = build(directory)
    path = Path(directory) / REPORT_HTML
    path.write_text(report.to_html(), encoding="utf-8")
    return path


def build(directory: str | os.PathLike[str]) -> Report:
    """The report of a directory (see the module for the kinds), its figures drawn afresh."""
    d = Path(directory)
    if not d.is_dir():
        raise ValueError(f"{d}: no such directory")
    for kind in _KINDS:
        if any(all((d / name).exists() for name in files) for files in kind.files):
            for stale in (d / FIGURES).glob("*.png"):
                stale.unlink()
            try:
                return kind.build(d)
            except _DAMAGED as error:  # a file without the keys, columns or types nandlab writes
                raise ValueError(f"{d}: a damaged --out of {kind.name}: {type(error).__name__}: {error}") from None
    expected = "; ".join(f"{kind.name} ({' or '.join(' + '.join(files) for files in kind.files)})" for kind in _KINDS)
    raise ValueError(f"{d}: not a directory nandlab wrote: found none of the files of an --out of {expected}")


# --- runs ----------------------------------------------------------------------------------------


def _run(d: Path) -> Report:
    from nandlab import plots

    summary = _read_json(d / output.SUMMARY_JSON)
    ts = pl.read_parquet(d / output.TIMESERIES_PARQUET)
    config = _read_json(d / output.CONFIG_JSON) if (d / output.CONFIG_JSON).exists() else {}
    fio = _read_json(d / "fio.json") if (d / "fio.json").exists() else None
    device = summary.get("device", {})
    total = summary.get("summary") or {**summary, "name": "total"}
    phases = summary.get("phases", [])
    names = [p["name"] for p in phases]
    r = Report(d, f"Run: {config.get('description') or device.get('preset') or 'a custom drive'}",
               "fio job file" if fio else "run")
    if device:
        for line in output.device_lines(device):
            name, _, value = line.partition(":")
            r.fact(name.lower(), value.strip())
    r.fact("host data", f"{_gib(total['host_write_bytes'] + total.get('fill_bytes', 0))} GiB written "
           f"({_gib(total['host_write_bytes'])} GiB by requests), {_gib(total['host_read_bytes'])} GiB read")
    r.fact("WAF", _fmt(total["waf"]) if total["host_write_bytes"] else "–")
    r.fact("simulated", f"{_fmt(total['sim_seconds'])} s in {len(phases)} phases ({', '.join(names)})")
    if summary.get("death"):
        r.fact("death", str(summary["death"]))
    r.table("Summary", [_summary_row(p) for p in phases] + [_summary_row(total)],
            note=" ".join(["Written: host writes and fill. WAF: flash pages programmed per page the host wrote. "
                           "Latencies in µs. MB/s = 10^6 bytes per simulated second.",
                           *(f"{n}." for n in output.skipped_trace_lines(phases))]))
    for phase in phases:
        if phase.get("jobs"):
            r.table(f"Jobs of {phase['name']}", [_summary_row(j) for j in phase["jobs"]])
    _power_cuts(r, d, phases, device)
    if fio:
        r.table("fio jobs", [_fio_row(job) for job in fio["jobs"]], note="; ".join(fio.get("warnings", [])))
    heading = "Throughput and latency"
    if (d / output.THROUGHPUT_LATENCY_PNG).exists():
        r.figure(heading, d / output.THROUGHPUT_LATENCY_PNG, "throughput and latency percentiles, phases marked")
    elif ts.height:
        path = r.figure_path("throughput-latency.png")
        plots.timeseries_panels(ts, (plots.THROUGHPUT, plots.LATENCY), path, phases=names)
        r.figure(heading, path, "throughput and latency percentiles, phases marked")
    drive = plots.with_data(ts, (plots.WAF, plots.FREE_BLOCKS, plots.BIT_MODES, plots.WEAR, plots.PSLC))
    if ts.height and drive:
        path = r.figure_path("drive.png")
        plots.timeseries_panels(ts, drive, path, phases=names, title="the drive over the run")
        r.figure("The drive over the run", path, f"{', '.join(p.label for p in drive)} against host data written")
    histogram = summary.get("erase_count_histogram") or []
    if histogram:
        r.table("Erase counts", [{"blocks": sum(n for _, n in histogram), **(summary.get("erase_count") or {})}])
        path = r.figure_path("erase-counts.png")
        plots.distribution(histogram, path, "erase count", "blocks", title="erase counts at the end of the run")
        r.figure("Erase counts", path, "blocks per erase count at the end of the run, and its CDF")
    if device:
        r.pairs("Device", [(k, v) for k, v in device.items() if not isinstance(v, (dict, list))])
    if config:
        r.text("Configuration (resolved)", json.dumps(config, indent=2))
    return r


def _power_cuts(r: Report, d: Path, phases: list[dict[str, Any]], device: dict[str, Any]) -> None:
    """What the run's power cuts did: per phase, each cut over time, the acknowledged writes lost."""
    from nandlab import plots

    rows = output.power_cut_rows(phases)
    if not rows:
        return
    caveat = output.power_cut_caveat(phases)
    r.table("Power cuts", rows, note=output.power_cut_verdict(phases) + (f" {caveat}" if caveat else "")
            + " Units are the drive's mapping units; every cut is a row of power_losses.parquet and .csv.")
    if (d / output.POWER_LOSSES_PARQUET).exists():
        path = r.figure_path("power-cuts.png")
        plots.power_cuts(pl.read_parquet(d / output.POWER_LOSSES_PARQUET), path)
        r.figure("Each power cut", path, "recovery time and units lost or moved, cut by cut, over simulated time")
    lost = output.lost_writes(phases, device, 50)
    if lost:
        r.text("Acknowledged writes lost (the first 50)", "\n".join(lost))


def _summary_row(s: Mapping[str, Any]) -> dict[str, Any]:
    """A phase's, job's or the run's figures as a table row."""
    return {
        "phase": s["name"],
        "kind": s.get("kind", "job"),
        "written GiB": (s["host_write_bytes"] + s.get("fill_bytes", 0)) / GIB,
        "read GiB": s["host_read_bytes"] / GIB,
        "IOPS": s["iops"],
        "MB/s": s["mbps"],
        "WAF": s["waf"] if s.get("waf") is not None and s["host_write_bytes"] else None,
        "read p50 / p99 / p99.9": _percentiles(s["read_latency_us"]),
        "write p50 / p99 / p99.9": _percentiles(s["write_latency_us"]),
        "erases": s.get("erases"),
        "sim s": s["sim_seconds"],
        "wall s": s.get("wall_seconds"),
    }


def _percentiles(latency: Mapping[str, float]) -> str:
    """``p50 / p99 / p99.9`` in µs, or a dash when there was no such request."""
    if not latency.get("max"):
        return "–"
    return " / ".join(output.number(latency[k]) for k in ("p50", "p99", "p999"))


def _fio_row(job: Mapping[str, Any]) -> dict[str, Any]:
    """A fio job's figures (fio's JSON shape) as a table row."""
    row: dict[str, Any] = {"job": job["jobname"], "group": job["groupid"]}
    for kind in ("read", "write"):
        d = job[kind]
        row[f"{kind} IOPS"] = d["iops"]
        row[f"{kind} MB/s"] = d["bw_bytes"] / 1e6
        row[f"{kind} clat p99 µs"] = d["clat_ns"]["percentile"].get("99.000000", 0) / 1000 if d["total_ios"] else None
    row["WAF"] = job.get("waf")
    return row


# --- sweeps --------------------------------------------------------------------------------------


def _sweep(d: Path) -> Report:
    from nandlab import plots

    about = _read_json(d / "sweep.json")
    results = pl.read_parquet(d / "results.parquet")
    if (d / "wall.parquet").exists():
        results = results.join(pl.read_parquet(d / "wall.parquet"), on="run_id", how="left")
    results = results.sort("run")
    axes = about["axes"]
    names = [a["name"] for a in axes]
    varying = [a["name"] for a in axes if len(a["values"]) > 1]
    ok = results.filter(pl.col("status") == "ok")
    failed = results.filter(pl.col("status") == "failed")
    metrics = _sweep_metrics(about["procedure"], results)
    r = Report(d, f"Sweep: {about['name']}", f"sweep, procedure {about['procedure']}")
    r.fact("runs", f"{results.height}: {ok.height} finished, {failed.height} failed")
    r.fact("axes", " × ".join(f"{a['name']} ({len(a['values'])})" for a in axes))
    if "wall_seconds" in results.columns and ok.height:
        r.fact("run time", f"{_fmt(ok['wall_seconds'].sum())} s of wall time, all runs together")
    r.table("Axes", [{"axis": a["name"], "keys": ", ".join(a["keys"]),
                      "points": ", ".join(_fmt(p) for p in _positions(a))} for a in axes])
    shown = ["run", "status", *names, *metrics, *(["wall_seconds"] if "wall_seconds" in results.columns else [])]
    r.table("Results", results.select(shown).to_dicts(),
            note=f"{ok.height} of {results.height} runs finished; every figure of every run is in results.parquet.")
    if failed.height:
        r.table("Failed runs", failed.select("run", "run_id", *names, "error").to_dicts())
        for row in failed.iter_rows(named=True):
            failure = d / "failures" / f"{row['run_id']}.json"
            if failure.exists():
                r.details("Failed runs", f"run {row['run']} ({row['run_id']}): traceback",
                          _read_json(failure).get("traceback") or "(none recorded)")
    for value, x, y in _heatmap_specs(d, about, results.columns, metrics) if ok.height else []:
        facets = [a for a in varying if a not in (x, y)]  # the first across, the others down
        path = r.figure_path(f"heatmap-{value}-{x}-{y}.png")
        plots.heatmaps(ok, value, x=x, y=y, path=path, rows=facets[1:], cols=facets[:1],
                       title=f"{about['name']}: {value}", better="lower" if _lower_is_better(value) else "higher",
                       reference=1.0 if value.endswith("_ratio") else None)
        r.figure("Heatmaps", path, f"{value} over {x} and {y}" + (f", a map per {', '.join(facets)}" if facets else ""))
    if len(varying) == 1 and ok.height and metrics:
        path = r.figure_path("bars.png")
        plots.bars(ok, varying[0], metrics[:3], path, title=about["name"])
        r.figure("Bar charts", path, f"{', '.join(metrics[:3])} by {varying[0]}")
    _sweep_series(r, d, about["procedure"], ok, varying)
    if "erase_count_histogram" in ok.columns:
        curves = {_run_label(row, varying): plots.cumulative(json.loads(row["erase_count_histogram"]))
                  for row in ok.head(MAX_OVERLAY_RUNS).iter_rows(named=True) if row["erase_count_histogram"]}
        if curves:
            path = r.figure_path("erase-count-cdf.png")
            plots.cdf(curves, path, "erase count", "share of blocks (CDF)", title=f"{about['name']}: erase counts")
            r.figure("Erase counts", path, f"erase-count CDFs at the end of the first {len(curves)} runs")
    if (d / "sweep.toml").exists():
        r.text("Sweep file", files.read_text(d / "sweep.toml", "sweep file"))
    r.text("Base config", json.dumps(about["base"], indent=2))
    return r


def _sweep_series(r: Report, d: Path, procedure: str, ok: pl.DataFrame, varying: Sequence[str]) -> None:
    """The first finished runs' time series overlaid, a colour each (lifetime-compare: ZombieNAND
    solid, the baseline dotted)."""
    from nandlab import plots

    parts = d / "timeseries"
    if not ok.height or not parts.is_dir() or not any(parts.iterdir()):
        return
    runs = ok.head(MAX_OVERLAY_RUNS)
    labels = {row["run_id"]: _run_label(row, varying) for row in runs.iter_rows(named=True)}
    order = {run_id: index for index, run_id in enumerate(labels)}
    series = (
        pl.scan_parquet(parts, hive_partitioning=True, hive_schema={"run_id": pl.String})
        .filter(pl.col("run_id").is_in(list(labels)))
        .collect()
        .with_columns(label=pl.col("run_id").replace_strict(labels), order=pl.col("run_id").replace_strict(order))
        .sort("order", maintain_order=True)
    )
    if not series.height:
        return
    if procedure == "lifetime-compare":
        panels = (plots.MEAN_LATENCY, plots.Panel("WAF (cumulative)", ("waf_cumulative",)),
                  plots.Panel("spare lost", ("reserve_used",)), plots.Panel("usable bytes", ("usable_bytes",)))
    else:
        panels = (plots.Panel("write MB/s", ("write_mbps",), zero_is_gap=True),
                  plots.Panel("read MB/s", ("read_mbps",), zero_is_gap=True),
                  plots.Panel("WAF (cumulative)", ("waf_cumulative",)), plots.FREE_BLOCKS)
    sides = "side" in series.columns
    path = r.figure_path("timeseries.png")
    plots.timeseries_panels(series, panels, path, by="label", style_by="side" if sides else None,
                            title="the runs over time")
    r.figure("Time series", path, f"the first {runs.height} of {ok.height} finished runs against host data written"
             + (", ZombieNAND solid, the baseline dotted" if sides else ""))


def _sweep_metrics(procedure: str, results: pl.DataFrame) -> list[str]:
    """The headline figures of a sweep's results (those it has), in order."""
    wanted = (("lifetime_ratio", "latency_ratio", "latency_ratio_after", "zombie_drive_writes", "baseline_drive_writes")
              if procedure == "lifetime-compare"
              else ("waf", "iops", "mbps", "write_latency_us_p99", "read_latency_us_p99", "erases"))
    return [m for m in wanted if m in results.columns and results[m].null_count() < results.height]


def _heatmap_specs(
    d: Path, about: Mapping[str, Any], columns: Sequence[str], metrics: Sequence[str]
) -> list[tuple[str, str, str]]:
    """(value, x, y) of each heatmap: the sweep file's ``[report] heatmaps``, or by default the
    headline figures over the two axes that suit a map best (``_map_axes``)."""
    source = d / "sweep.toml"
    try:
        settings = tomllib.loads(files.read_text(source, "sweep file")).get("report", {}) if source.exists() else {}
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{source}: TOML syntax error: {error}") from None
    usage = "heatmaps = [{ x = AXIS, y = AXIS, value = FIGURE }, ...]"
    if set(settings) - {"heatmaps"} or not isinstance(settings.get("heatmaps", []), list):
        raise ValueError(f"{source}: [report]: expected only {usage}")
    if "heatmaps" not in settings:
        pair = _map_axes([a for a in about["axes"] if len(a["values"]) > 1])
        count = 2 if about["procedure"] == "lifetime-compare" else 3
        return [(value, *pair) for value in metrics[:count]] if pair else []
    names = [a["name"] for a in about["axes"]]
    specs = []
    for number, spec in enumerate(settings["heatmaps"], 1):
        where = f"{source}: [report] heatmaps #{number}"
        if not isinstance(spec, dict) or set(spec) != {"x", "y", "value"}:
            raise ValueError(f"{where}: expected {{ x = AXIS, y = AXIS, value = FIGURE }}, found {spec!r}")
        for key in ("x", "y"):
            if spec[key] not in names:
                raise ValueError(f"{where}: {key} = {spec[key]!r} is no axis; the axes are {', '.join(names)}")
        if spec["x"] == spec["y"]:
            raise ValueError(f"{where}: x and y are both {spec['x']!r}; give two axes")
        if spec["value"] not in columns:
            raise ValueError(f"{where}: value = {spec['value']!r} is not a column of results.parquet "
                             f"(its headline figures: {', '.join(metrics) or 'none'})")
        specs.append((spec["value"], spec["x"], spec["y"]))
    return specs


def _map_axes(varying: Sequence[Mapping[str, Any]]) -> tuple[str, str] | None:
    """The two axes a heatmap is drawn over by default: numbers (unlabelled axes) before labels, the
    most points first; x the one earlier in the sweep. The other axes facet the maps."""
    if len(varying) < 2:
        return None
    ranked = sorted(range(len(varying)), key=lambda i: (bool(varying[i].get("labels")), -len(varying[i]["values"]), i))
    first, second = sorted(ranked[:2])
    return varying[first]["name"], varying[second]["name"]


def _positions(axis: Mapping[str, Any]) -> list[Any]:
    """An axis' points as results.parquet names them: labels, or the (first key's) values."""
    return list(axis["labels"]) if axis.get("labels") else [v[0] for v in axis["values"]]


def _run_label(row: Mapping[str, Any], varying: Sequence[str]) -> str:
    """A run named by its place on the axes that vary (``reserve=0.1, cell=tlc``)."""
    return ", ".join(f"{a}={_fmt(row[a])}" for a in varying) or f"run {row['run']}"


def _lower_is_better(figure: str) -> bool:
    return any(word in figure for word in ("latency", "waf", "_us", "erases"))


# --- the procedures ------------------------------------------------------------------------------


def _matrix(d: Path) -> Report:
    doc = _read_json(d / "result.json")
    r = Report(d, f"SNIA matrix: {doc['device']}", "performance matrix (nandlab matrix)")
    r.fact("drive", f"{_gib(doc['capacity_bytes'])} GiB, random I/O at queue depth {doc['queue_depth']}")
    for state, part in doc["states"].items():
        r.fact(state, f"RMS over the cells: {_fmt(part['rms_iops'])} IOPS, {_fmt(part['rms_mbps'])} MB/s")
    captions = {"burst": "burst (a fresh drive): IOPS and MB/s against block size, per R/W mix",
                "steady": "steady state (SNIA PTS): IOPS and MB/s against block size, per R/W mix"}
    keys = ("read_percent", "block_size", "iops", "mbps", "theoretical_mbps", "percent_of_theoretical", "waf",
            "rounds", "steady")
    for state, part in doc["states"].items():
        _existing_figure(r, d, state, f"matrix-{state}.png", captions.get(state, state))
        r.table(state, [{k: c[k] for k in keys if k in c} for c in part["cells"]])
    if doc.get("scaling"):
        _existing_figure(r, d, "Die-count scaling", "scaling.png",
                         "bandwidth against die count, simulated and theoretical")
        r.table("Die-count scaling", doc["scaling"])
    r.pairs("Theoretical model", list(doc["theoretical"].items()))
    r.pairs("Drive", [(k, v) for k, v in doc["drive"].items() if not isinstance(v, (dict, list))])
    return r


def _qualification(d: Path) -> Report:
    doc = _read_json(d / "result.json")
    procedure = next((p.stem for p in d.glob("*.png") if p.stem in ("write-sections", "read-sections", "pslc-fill")),
                     "qualification")
    r = Report(d, f"nandlab test {procedure}: {doc['device']}", "Swissbit AN2103 media qualification")
    r.fact("capacity", f"{_gib(doc['capacity_bytes'])} GiB")
    _existing_figure(r, d, "Speed", f"{procedure}.png", "speed against data moved, each section or phase marked")
    runs = [("", doc), *([(doc["compare"].get("label", "compared"), doc["compare"])] if "compare" in doc else [])]
    for label, run in runs:
        heading = "Sections" if "sections" in run else "Phases"
        rows = [{k: v for k, v in part.items() if not isinstance(v, (list, dict))}
                for part in run.get("sections") or run.get("phases") or []]
        r.table(f"{heading}: {label}" if label else heading, rows,
                note="MB/s = 10^6 bytes per simulated second; min: the slowest over a window of 2 % of the capacity.")
    return r


def _trace_stats(d: Path) -> Report:
    doc = _read_json(d / "stats.json")
    r = Report(d, f"Trace: {d.resolve().name}", f"trace statistics, {doc['format']} format (nandlab trace stats)")
    r.fact("records", f"{doc['records']:,} ({doc['reads']:,} reads, {doc['writes']:,} writes, {doc['trims']:,} trims)")
    r.fact("footprint", f"{_gib(doc['footprint_bytes'])} GiB ({_gib(doc['write_footprint_bytes'])} GiB written)")
    _existing_figure(r, d, "Address reuse and request sizes", "trace-stats.png",
                     "address reuse (ZombieNAND's Fig. 4) and request sizes")
    r.table("Composition", [
        {"": kind + "s", "% of bytes": doc[f"{kind}_percent"], "random %": doc[f"{kind}_random_percent"],
         "sequential %": doc[f"{kind}_sequential_percent"]} for kind in ("write", "read")
    ], note="Percent of the bytes moved, as ZombieNAND's Table III.")
    nested = [(f"{k} {q}", v) for k, inner in doc.items() if isinstance(inner, dict) for q, v in inner.items()]
    r.pairs("Figures", [(k, v) for k, v in doc.items() if not isinstance(v, (list, dict))] + nested)
    r.table("Request sizes", [dict(zip(("at least (bytes)", "requests", "reads", "writes"), row))
                              for row in doc["size_histogram"]])
    return r


def _trace_comparison(d: Path) -> Report:
    table = pl.read_csv(d / "composition.csv")
    traces = table["trace"].to_list()
    r = Report(d, f"Traces: {d.resolve().name}", "trace statistics of several traces (nandlab trace stats)")
    r.fact("traces", ", ".join(traces))
    _existing_figure(r, d, "Address reuse", "reuse.png", "each trace's address reuse, all accesses and writes")
    r.table("Composition", table.to_dicts(), note="Percent of the bytes moved, as ZombieNAND's Table III.")
    own = [(name, f"{name}/{REPORT_HTML}") for name in traces if (d / name / REPORT_HTML).exists()]
    if own:
        r.links("Each trace", own)
    return r


def _lifetime_grid(d: Path) -> Report:
    table = pl.read_parquet(d / "grid.parquet")
    r = Report(d, "ZombieNAND synthetic grid", "lifetime grid, the paper's Fig. 3 (nandlab lifetime-grid)")
    r.fact("grid", " × ".join(f"{c} ({table[c].n_unique()})" for c in ("cell", "reserve", "working_set", "read_level")))
    for metric in ("lifetime_ratio", "latency_ratio"):
        r.fact(metric, f"{_fmt(table[metric].min())} to {_fmt(table[metric].max())}")
    _existing_figure(r, d, "Heatmaps", "lifetime-ratio.png", "lifetime with ZombieNAND relative to the baseline")
    _existing_figure(r, d, "Heatmaps", "latency-ratio.png",
                     "mean latency over the baseline's life with ZombieNAND, relative to the baseline")
    r.table("Grid", table.select(c for c in table.columns if not c.endswith("_death")).to_dicts(),
            note="The causes of death are in grid.parquet and grid.csv; the runs' time series in the sweep "
                 "dataset in sweep/ (nandlab report DIR/sweep).")
    return r


def _chip(d: Path) -> Report:
    r = Report(d, f"Chip bench: {d.resolve().name}", "chip endurance and latency (nandlab chip)")
    documents = [_read_json(d / name) for name in ("endurance.json", "latency.json") if (d / name).exists()]
    chip = documents[0]["chip"]
    r.title = f"Chip bench: {chip['name']}"
    r.fact("chip", f"{chip['name']}: {chip['description']}")
    if (d / "endurance.json").exists():
        run = documents[0]
        lifetimes = sorted(run["lifetimes"])
        median = lifetimes[len(lifetimes) // 2]
        conditions = run["conditions"]
        r.fact("endurance test",
               f"{len(lifetimes):,} blocks, {conditions['pattern']}, {conditions['temperature_c']:g} °C")
        _existing_figure(r, d, "Endurance", "endurance.png",
                         "block lifetimes against the rating; latency against cycles")
        r.table("Endurance", [{"blocks": len(lifetimes), "nominal": run["nominal_endurance"], "min": lifetimes[0],
                               "median": median, "max": lifetimes[-1],
                               "median / nominal": median / run["nominal_endurance"]}],
                note="Program/erase cycles until an operation failed (Desnoyers' method).")
    if (d / "latency.json").exists():
        doc = documents[-1]
        _existing_figure(r, d, "Latency over life", "latency.png",
                         "worst, typical and best latency beside the datasheet")
        r.table("Latency over life", [
            {"operation": op, **{f"{k} µs": doc[f"{op}_us"][k] for k in ("worst", "typical", "best")},
             "datasheet µs": doc["datasheet"][f"{op}_us"]} for op in ("read", "program", "erase")
        ])
    return r


@dataclass(frozen=True)
class _Kind:
    """A kind of directory: its ``name``, the ``files`` that make one (all of a group, any group),
    and the function that builds its report."""

    name: str
    files: tuple[tuple[str, ...], ...]
    build: Callable[[Path], Report]


_DAMAGED = (KeyError, IndexError, TypeError, AttributeError, pl.exceptions.PolarsError)
"""What reading a directory's files raises when one is not as nandlab wrote it."""

_KINDS = (  # in the order they are tried
    _Kind("nandlab sweep", (("sweep.json", "results.parquet"),), _sweep),
    _Kind("nandlab run, fio or trace replay", ((output.SUMMARY_JSON, output.TIMESERIES_PARQUET),), _run),
    _Kind("nandlab matrix", (("matrix.parquet", "result.json"),), _matrix),
    _Kind("nandlab test write-sections, read-sections or pslc-fill", (("series.parquet", "result.json"),),
          _qualification),
    _Kind("nandlab trace stats", (("stats.json",),), _trace_stats),
    _Kind("nandlab trace stats with several traces", (("composition.csv",),), _trace_comparison),
    _Kind("nandlab lifetime-grid", (("grid.parquet",),), _lifetime_grid),
    _Kind("nandlab chip endurance or latency", (("endurance.json",), ("latency.json",)), _chip),
)


# --- pieces --------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    """A JSON result file of the directory; ValueError naming it if it is not JSON."""
    try:
        return json.loads(files.read_text(path, "result file", files.MAX_RESULT_BYTES))
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON: {error}") from None


def _existing_figure(r: Report, d: Path, heading: str, name: str, caption: str) -> None:
    """A figure the procedure drew itself, if it is there."""
    if (d / name).exists():
        r.figure(heading, d / name, caption)


def _anchors(headings: Sequence[str]) -> list[str]:
    """A distinct id per section, from its heading."""
    seen: dict[str, int] = {}
    anchors = []
    for heading in headings:
        slug = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"
        seen[slug] = seen.get(slug, 0) + 1
        anchors.append(slug if seen[slug] == 1 else f"{slug}-{seen[slug]}")
    return anchors


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return '<p class="note">(none)</p>'
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = []
    for row in rows[:MAX_TABLE_ROWS]:
        cells = []
        for c in columns:
            value = row.get(c)
            classes = ["text"] if isinstance(value, str) else []
            if isinstance(value, str) and len(value) > 60:
                classes.append("long")
            if c == "status" and value == "failed":
                classes.append("failed")
            css = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{css}>{html.escape(_fmt(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f'<p class="note">… and {len(rows) - MAX_TABLE_ROWS} more rows.</p>' if len(rows) > MAX_TABLE_ROWS else ""
    table = f'<table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    return f'<div class="scroll">{table}</div>{more}'


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
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def _gib(size: float) -> str:
    return output.number(size / GIB)


def _version() -> str:
    try:
        return metadata.version("nandlab")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree not installed
        return "(not installed)"
