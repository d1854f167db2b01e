"""Reports as a sceptical reader sees them (issue 23): a sweep's time-series overlay names its runs
in a legend beside the panels; a heatmap's numbers are at least 9 pt at the size the report shows
the figure, its maps wrapped onto more rows rather than shrunk; a log axis always has two labelled
ticks or more; a run's time series are drawn against simulated time too (a phase that only reads
gets a width), and a short burst is clipped and said rather than flattening the rest; the run table
and the report's summary say when and why the drive died, in a column of their own."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from test_report import lifetime_sweep

from nandlab import output, plots, report
from nandlab.plots import grids



def drawn(figure: Figure) -> FigureCanvasAgg:
    """``figure`` drawn on an Agg canvas (for its ticks' labels and its artists' extents)."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas


def keep_figures(monkeypatch: pytest.MonkeyPatch, name: str) -> dict[str, Figure]:
    """The figures ``plots.NAME`` draws from now on, by file name."""
    kept: dict[str, Figure] = {}
    draw = getattr(plots, name)

    def keep(*args, **kwargs) -> Figure:
        figure = draw(*args, **kwargs)
        kept[Path(kwargs["path"] if "path" in kwargs else args[2]).name] = figure
        return figure

    monkeypatch.setattr(plots, name, keep)
    return kept


def series(phases: list[tuple[int, float, float, float]]) -> pl.DataFrame:
    """A made-up time series: per phase, (intervals, bytes written, seconds, MB/s written) of each
    interval; a phase that writes nothing reads at 100 MB/s."""
    rows, written, seconds = [], 0, 0.0
    for phase, (count, step, duration, mbps) in enumerate(phases):
        for _ in range(count):
            written += int(step)
            seconds += duration
            rows.append({"phase": phase, "host_write_bytes": written, "sim_seconds": seconds,
                         "write_mbps": mbps if step else 0.0, "read_mbps": 0.0 if step else 100.0,
                         "write_p50_us": 80.0 + phase, "write_p99_us": 95.0 + phase})
    return pl.DataFrame(rows)


# --- sweeps ---------------------------------------------------------------------------------------


def test_the_sweep_overlay_names_each_run_in_a_legend_beside_the_panels(monkeypatch, tmp_path: Path) -> None:
    figures = keep_figures(monkeypatch, "timeseries_panels")
    report.write(lifetime_sweep(tmp_path / "sweep"))
    figure = figures["timeseries.png"]
    canvas = drawn(figure)
    (legend,) = figure.legends
    labels = [text.get_text() for text in legend.get_texts()]
    # The first 12 finished runs by their axis values (the title names the axes), then the sides' line styles.
    assert legend.get_title().get_text() == "cell, reserve, working_set, read_level, seed"
    assert labels[:2] == ["tlc, 0.1, 0.5, low, 1", "tlc, 0.1, 0.5, low, 2"] and labels[-2:] == ["zombie", "baseline"]
    assert len(labels) == 14 and len(set(labels)) == 14
    assert len({str(line.get_color()) for line in legend.get_lines()[:12]}) == 12  # no colour twice
    renderer = canvas.get_renderer()
    right_of_panels = max(axes.get_window_extent(renderer).x1 for axes in figure.axes)
    assert legend.get_window_extent(renderer).x0 >= right_of_panels  # beside the panels, over no data


def test_heatmap_numbers_are_at_least_9_pt_at_the_reports_size_and_fit_their_squares(tmp_path: Path) -> None:
    # Four maps of six by four across would have been 18 inches wide, shown at 57 %: 7 pt drawn, 6 px seen.
    rows = [{"a": a, "b": b, "f": f, "v": 12_345.678 * (1 + a) * b if f != "z" else 0.1234 * b}
            for a, b, f in itertools.product([0.05, 0.1, 0.15, 0.2, 0.25, 0.3], [0.1, 0.25, 0.5, 1.0], "pqrz")]
    figure = plots.heatmaps(pl.DataFrame(rows), "v", x="a", y="b", path=tmp_path / "map.png", cols=["f"])
    assert figure.get_size_inches()[0] <= grids.REPORT_WIDTH  # shown at its own size: its points are the page's
    renderer = drawn(figure).get_renderer()
    maps = [axes for axes in figure.axes if axes.get_visible() and axes.images]
    assert len(maps) == 4 and len({round(axes.get_position().y0, 3) for axes in maps}) > 1  # wrapped onto more rows
    for axes in maps:
        numbers = axes.texts
        assert len(numbers) == 24 and all(text.get_fontsize() >= grids.CELL_FONT[0] for text in numbers)
        square = axes.get_window_extent(renderer).width / 6
        assert all(text.get_window_extent(renderer).width < square for text in numbers)
    assert {t.get_text() for t in maps[0].texts} >= {"1.36k", "13.6k"}  # thousands as k, three digits


def test_the_sweep_reports_heatmaps_have_readable_numbers(monkeypatch, tmp_path: Path) -> None:
    figures = keep_figures(monkeypatch, "heatmaps")
    report.write(lifetime_sweep(tmp_path / "sweep"))
    assert figures
    for figure in figures.values():
        assert figure.get_size_inches()[0] <= grids.REPORT_WIDTH
        assert all(text.get_fontsize() >= grids.CELL_FONT[0] for axes in figure.axes for text in axes.texts)


def test_wide_tables_scroll_across_in_a_box_and_headers_keep_their_names_whole(tmp_path: Path) -> None:
    page = report.write(lifetime_sweep(tmp_path / "sweep")).read_text()
    style = re.search(r"\.scroll \{([^}]*)\}", page).group(1)
    assert "overflow-x: auto" in style and "max-width: 100%" in style
    assert page.count("<table>") == page.count('<div class="scroll"><table>') > 0
    results = re.search(r'<section id="results">(.*?)</section>', page, re.S).group(1)
    assert "<th>zombie_drive_writes</th>" in results and "<th>baseline_drive_writes</th>" in results
    assert "<wbr>" not in page


# --- axes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("low, high", [(80, 100), (600, 1_300), (150, 300), (2.01, 10), (1, 1e6), (3e-9, 2e-3)])
def test_a_log_axis_always_has_two_labelled_ticks(low: float, high: float) -> None:
    figure = Figure()
    axes = figure.subplots()
    axes.plot([0, 1], [low, high])
    plots.timeseries.log_y(axes)
    drawn(figure)
    bottom, top = axes.get_ylim()
    labelled = {label.get_text() for label in axes.get_yticklabels(which="both")
                if label.get_text() and bottom <= label.get_position()[1] <= top}
    assert len(labelled) >= 2, (low, high, labelled)


def test_the_latency_panel_of_a_narrow_range_is_labelled(tmp_path: Path) -> None:
    figure = plots.timeseries_panels(series([(50, 2**24, 0.1, 100.0)]), (plots.LATENCY,), tmp_path / "f.png")
    drawn(figure)
    (axes,) = figure.axes
    assert len([label for label in axes.get_yticklabels(which="both") if label.get_text()]) >= 2


def test_a_read_only_phase_has_a_width_against_time(tmp_path: Path) -> None:
    ts = series([(20, 2**26, 1.0, 64.0), (20, 0, 1.0, 0.0)])  # 20 s of writes, then 20 s of reads
    spans = {}
    for x in plots.timeseries.X_AXES:
        figure = plots.timeseries_panels(ts, (plots.THROUGHPUT,), tmp_path / f"{x}.png", phases=["w", "r"], x=x)
        (axes,) = figure.axes
        read = next(line for line in axes.get_lines() if line.get_label() == "read")
        xs = np.asarray(read.get_xdata(), dtype=float)[np.isfinite(np.asarray(read.get_ydata(), dtype=float))]
        spans[x] = (xs.max() - xs.min(), axes.get_xlabel())
    assert spans["written"] == (0.0, "host data written (GiB)")  # a vertical line
    assert spans["time"][0] > 15 and spans["time"][1] == "simulated time (s)"


def test_phase_by_phase_every_phase_that_takes_time_has_the_same_width(tmp_path: Path) -> None:
    """Issue 40: a short phase after a long one was a sliver against either axis. Against "phase" each
    phase that took simulated time spans one unit (a 2 s phase after 200 s as wide), and one that took
    none (a fill) is a line where the next begins."""
    ts = series([(10, 2**26, 0.0, 0.0), (100, 2**26, 2.0, 32.0), (10, 0, 0.2, 0.0)])  # a fill, 200 s, 2 s
    figure = plots.timeseries_panels(ts, (plots.THROUGHPUT,), tmp_path / "phases.png", phases=["f", "w", "r"],
                                     x="phase")
    (axes,) = figure.axes
    read = next(line for line in axes.get_lines() if line.get_label() == "read")
    xs = np.asarray(read.get_xdata(), dtype=float)[np.isfinite(np.asarray(read.get_ydata(), dtype=float))]
    assert xs.min() > 1.0 and xs.max() == pytest.approx(2.0)  # the 2 s phase spans 1 to 2
    write = next(line for line in axes.get_lines() if line.get_label() == "write")
    assert np.nanmin(np.asarray(write.get_xdata(), dtype=float)) == pytest.approx(0.0)
    assert list(axes.get_xticks()) == [0, 1, 2] and "the same width each" in axes.get_xlabel()


def test_phase_by_phase_a_first_window_that_stalled_is_no_wider_than_its_data(tmp_path: Path) -> None:
    """The third outside check: a read phase whose first window held one read that waited 9 s on the
    write phase's backlog took 95 % of the phase's width by time, its 3,000 reads a sliver at the edge.
    Across the data each phase moved, the stall is a sliver and the reads fill the phase."""
    rows = [{"phase": 0, "sim_seconds": 10.0 * (i + 1), "host_write_bytes": 2**26 * (i + 1), "host_read_bytes": 0,
             "write_mbps": 6.7, "read_mbps": 0.0} for i in range(10)]
    rows.append({"phase": 1, "sim_seconds": 109.0, "host_write_bytes": 10 * 2**26, "host_read_bytes": 4096,
                 "write_mbps": 0.0, "read_mbps": 0.0005})  # one read, 9 s
    rows += [{"phase": 1, "sim_seconds": 109.0 + 0.01 * (i + 1), "host_write_bytes": 10 * 2**26,
              "host_read_bytes": 4096 + 2**20 * (i + 1), "write_mbps": 0.0, "read_mbps": 105.0} for i in range(9)]
    figure = plots.timeseries_panels(pl.DataFrame(rows), (plots.THROUGHPUT,), tmp_path / "p.png", phases=["w", "r"],
                                     x="phase")
    read = next(line for line in figure.axes[0].get_lines() if line.get_label() == "read")
    xs = np.asarray(read.get_xdata(), dtype=float)
    assert xs[10] < 1.01 and xs[11] < 1.2 and xs[-1] == pytest.approx(2.0)  # the stalled window: under 1 %


def test_panels_of_counts_have_whole_number_ticks(tmp_path: Path) -> None:
    ts = series([(20, 2**26, 1.0, 64.0)]).with_columns(free_blocks=pl.Series([1, 2, 3] * 6 + [2, 3]))
    figure = plots.timeseries_panels(ts, (plots.FREE_BLOCKS,), tmp_path / "free.png")
    (axes,) = figure.axes
    assert all(float(tick).is_integer() for tick in axes.get_yticks())


def test_a_burst_is_clipped_and_said_but_a_phase_of_its_own_is_not(tmp_path: Path) -> None:
    # A write buffer takes 1 GiB at 2 GB/s in 0.7 s, the drive writes 9 GiB at 20 MB/s in 10 minutes,
    # then reads at 100 MB/s for 10 s: on either x axis, the reads set the scale and the burst is clipped.
    burst, writes, reads = (10, 2**27, 0.07, 2000.0), (90, 2**27, 6.7, 20.0), (10, 0, 1.0, 0.0)
    for x in plots.timeseries.X_AXES:
        figure = plots.timeseries_panels(series([burst, writes, reads]), (plots.THROUGHPUT,), tmp_path / "f.png", x=x)
        (axes,) = figure.axes
        carets = [line for line in axes.get_lines() if line.get_label() == "_clipped"]
        assert 100 < axes.get_ylim()[1] < 150
        assert [text.get_text() for text in axes.texts] == ["▲ beyond the scale: up to 2,000"]
        assert [(line.get_color(), len(line.get_xdata())) for line in carets] == [("tab:blue", 10)]  # the burst's
        figure = plots.timeseries_panels(series([writes, reads]), (plots.THROUGHPUT,), tmp_path / "f.png", x=x)
        (axes,) = figure.axes
        assert axes.get_ylim()[1] >= 100 and not axes.texts  # nothing clipped


# --- runs -----------------------------------------------------------------------------------------


def test_deaths_say_when_and_why_from_the_start_of_the_run() -> None:
    gib = 2**30
    phases = [{"host_write_bytes": 0, "fill_bytes": 2 * gib, "sim_seconds": 0.0},
              {"host_write_bytes": 3 * gib, "sim_seconds": 100.0,
               "death": "worn out: GC pool 0 has 9 usable mapping units left, fewer than the 10 its share ... need"
                        " — at 0.005 TB written by the host, 0 blocks retired",
               "death_cause": "too-little-flash"},
              ]
    assert output.deaths(phases) == ["", "worn out: too little usable flash, at 5 GiB and 100 s"]
    phases[1].update(death="something new: the engine says why", death_cause="something-new")
    assert output.deaths(phases)[1] == "something new, at 5 GiB and 100 s"


def test_the_run_table_and_the_report_say_when_and_why_the_drive_died(
    nandlab_cli, dying_path: Path, tmp_path: Path
) -> None:
    result = nandlab_cli("run", dying_path, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.split("WAF = write amplification")[0].splitlines()  # the run table
    assert lines[next(i for i, line in enumerate(lines) if line.strip().startswith("Phase"))].rstrip().endswith("Died")
    rows = {line.split()[0]: line for line in lines if line.strip().startswith(("fill", "life", "total"))}
    assert "worn out" not in rows["fill"] and "worn out: no erased block" in rows["life"]
    assert "worn out: no erased block" in rows["total"]
    saved = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [p["death_cause"] for p in saved["phases"]] == [None, "no-erased-block"]
    assert saved["death_cause"] == "no-erased-block"
    page = (tmp_path / "out" / "report.html").read_text()
    summary = re.search(r'<section id="summary">(.*?)</section>', page, re.S).group(1)
    assert '<th class="text">died</th>' in summary
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr>(<td.*?)</tr>", summary)]
    assert [(cells[0], cells[-1].split(",")[0]) for cells in rows] == [
        ("fill", ""), ("life", "worn out: no erased block left"), ("total", "worn out: no erased block left")]


def test_phase_starts_follow_the_series_own_phases() -> None:
    """Phases by name, in the series' order; a later session of a served drive (its clock going on from
    the earlier sessions', its phase numbered after them) starts one window before its first row."""
    from nandlab.plots.timeseries import X_COLUMN, _phase_starts

    fresh = pl.DataFrame({"phase": [0, 0, 2, 2], "phase_name": ["fill", "fill", "read", "read"],
                          X_COLUMN: [1.0, 2.0, 3.0, 4.0]})
    assert _phase_starts(fresh, ["fill", "idle", "read"]) == [(0.0, "fill"), (2.0, "idle"), (2.0, "read")]
    later = pl.DataFrame({"phase": [1, 1, 1], "phase_name": ["serve"] * 3, X_COLUMN: [19.8, 21.2, 21.7]})
    (start, name), = _phase_starts(later, ["serve"])
    assert name == "serve" and start == pytest.approx(18.4)


def test_a_long_series_is_drawn_in_groups_that_keep_its_spikes(tmp_path: Path) -> None:
    """Issue 38: a million rows took 2.8 GB to draw. Past MAX_DRAWN_ROWS a figure draws groups of
    consecutive windows of a phase, each as its maximum (a spike stays), and its title says so."""
    ts = series([(30_000, 2**20, 0.01, 64.0), (30_000, 0, 0.01, 0.0)])
    spike = ts.with_columns(write_p99_us=pl.when(pl.int_range(pl.len()) == 12_345).then(9_999.0)
                            .otherwise(pl.col("write_p99_us")))
    figure = plots.timeseries_panels(spike, (plots.LATENCY,), tmp_path / "long.png", title="t")
    (axes,) = figure.axes
    p99 = next(line for line in axes.get_lines() if line.get_label() == "write p99")
    assert len(p99.get_xdata()) <= plots.timeseries.MAX_DRAWN_ROWS + 2
    assert np.nanmax(np.asarray(p99.get_ydata(), dtype=float)) == 9_999.0
    assert figure._suptitle.get_text() == "t (every 3 windows drawn as their maximum)"
    reads = next(line for line in figure.axes[0].get_lines() if line.get_label() == "write p50")
    assert np.nanmax(np.asarray(reads.get_xdata(), dtype=float)) == pytest.approx(ts["host_write_bytes"].max() / 2**30)


def test_an_erase_count_histogram_has_whole_number_ticks(tmp_path: Path) -> None:
    """Issue 40 (outside check): the histogram's erase-count axis read 27.5, 30.0, 32.5."""
    figure = plots.distribution([(27, 10), (31, 40), (38, 30), (45, 5)], tmp_path / "e.png", "erase count",
                                "blocks")
    for axes in figure.axes:
        assert all(float(t).is_integer() for t in axes.get_xticks()), axes.get_xticks()


def test_a_cdf_s_title_keeps_clear_of_its_legend(tmp_path: Path, monkeypatch) -> None:
    """The third outside check: the sweep's erase-count CDF had its title over the legend's long title."""
    from matplotlib.figure import Figure

    saved = {}
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: saved.setdefault("figure", self))
    curves = {f"{policy}, {depth}": ([0, 2, 4, 6], [0.1, 0.5, 0.9, 1.0]) for policy in ("greedy", "fifo")
              for depth in (1, 16)}
    plots.cdf(curves, tmp_path / "cdf.png", "erase count", title="a-sweep: erase counts",
              legend_title="gc_victim_selection_policy, host_queue_depth_for_writes")
    figure = saved["figure"]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    (legend,) = figure.legends
    (title,) = [t for t in (figure._suptitle, figure.axes[0].title) if t is not None and t.get_text()]
    assert not title.get_window_extent(renderer).overlaps(legend.get_window_extent(renderer))
