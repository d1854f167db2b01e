"""nandlab: a NAND flash SSD simulator — the public Python API.

The engine is Rust (``nandlab._core``); this package is its Python face::

    import nandlab

    result = nandlab.run("experiment.toml", seed=1)   # or a dict, TOML text, or None
    print(result.summary["waf"], result.summary["iops"])
    result.timeseries                                   # a polars DataFrame

``run`` runs every ``[[phase]]`` of a config, in order, on one drive; with ``snapshot=PATH`` a
signal stops it with its state in PATH (``snapshot_every`` also writes it periodically), and
``resume(PATH)`` goes on to the same result. For finer control (run
some phases, inspect the drive, run more) build a ``Simulator`` with ``make_simulator``.

Procedures live in their own modules: ``nandlab.lifetime`` (pristine to dead, ZombieNAND vs
baseline, the paper's grid), ``nandlab.qualify`` (Swissbit AN2103's write, read and pSLC tests),
``nandlab.traces`` (what a block I/O trace holds; ``kind = "trace"`` phases replay one),
``nandlab.fio`` (fio job files) and ``nandlab.matrix`` (the SNIA tutorial's IOPS and bandwidth
matrices, burst and steady state), ``nandlab.sweep`` (parameter studies on a process pool or a dask
cluster). ``nandlab.procedures`` registers each as the CLI runs it: a typed result with its JSON,
its ``--out`` files (with a ``manifest.json``), its tables and its report.
"""

from importlib import metadata as _metadata

from nandlab._core import (
    ConfigError,
    InternalError,
    Interrupted,
    SimulationError,
    SnapshotError,
    Simulator,
    TraceError,
    death_causes,
    default_config_toml,
    parse_share,
    parse_size,
    preset_toml,
    presets,
)
from nandlab.api import Paused, Result, make_simulator, open_snapshot, resume, run

try:
    __version__ = _metadata.version("nandlab")
except _metadata.PackageNotFoundError:  # run from a source tree without installing
    __version__ = "0+unknown"

# The engine's classes are nandlab's: tracebacks and reprs name them so (nandlab.ConfigError).
for _class in (ConfigError, InternalError, Interrupted, SimulationError, SnapshotError, TraceError, Simulator):
    _class.__module__ = "nandlab"
del _class

__all__ = [
    "__version__",
    "ConfigError",
    "InternalError",
    "Interrupted",
    "Paused",
    "Result",
    "SimulationError",
    "SnapshotError",
    "Simulator",
    "TraceError",
    "death_causes",
    "default_config_toml",
    "make_simulator",
    "open_snapshot",
    "parse_share",
    "parse_size",
    "preset_toml",
    "presets",
    "resume",
    "run",
]
