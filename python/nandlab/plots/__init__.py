"""Every figure nandlab draws, on matplotlib's off-screen Agg canvas (no display needed), by kind:
time-series panels (``timeseries``), grids of runs (``grids``: heatmaps, bars), distributions
(``distributions``: histograms, CDFs) and the procedures' own figures (``procedures``). The reports
and sweeps (``nandlab.report``) and every procedure draw through these names."""

import warnings

from nandlab.plots.distributions import (  # noqa: F401
    cdf,
    cumulative,
    distribution,
    reuse_curves,
    trace_stats,
)
from nandlab.plots.grids import (  # noqa: F401
    bars,
    heatmaps,
    lifetime_heatmaps,
)
from nandlab.plots.procedures import (  # noqa: F401
    CIRCLED,
    QUALIFY_FIGURES,
    chip_latency,
    die_scaling,
    endurance,
    fill_curves,
    matrix_block_sizes,
    power_cuts,
    read_disturb,
    retention,
    sections,
    trace_latency_curves,
    trace_lifetimes,
)
from nandlab.plots.timeseries import (  # noqa: F401
    BIT_ERRORS,
    BIT_MODES,
    FREE_BLOCKS,
    GIB,
    LATENCY,
    LINE_STYLES,
    MAX_LEGEND,
    MEAN_LATENCY,
    POWER,
    PSLC,
    RETRIES,
    SERIES_STYLES,
    THROUGHPUT,
    WAF,
    WEAR,
    Panel,
    throughput_latency,
    timeseries_panels,
    with_data,
)

# A name from a file (a phase, an axis) may hold control characters: matplotlib's warning about their
# missing glyphs would print them raw on the terminal. Labels escape what they can; this covers the rest.
warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from (current )?font", category=UserWarning)
