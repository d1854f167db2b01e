"""nandlab: a NAND flash SSD simulator — the public Python API.

The engine is Rust (``nandlab._core``); this package is its Python face::

    import nandlab

    result = nandlab.run("experiment.toml", seed=1)   # or a dict, TOML text, or None
    print(result.summary["waf"], result.summary["iops"])
    result.timeseries                                   # a polars DataFrame

``run`` runs every ``[[phase]]`` of a config, in order, on one drive. For finer control (run
some phases, inspect the drive, run more) build a ``Simulator`` with ``make_simulator``.

Procedures live in their own modules: ``nandlab.lifetime`` (pristine to dead, ZombieNAND vs
baseline, the paper's grid), ``nandlab.qualify`` (Swissbit AN2103's write, read and pSLC tests),
``nandlab.traces`` (what a block I/O trace holds; ``kind = "trace"`` phases replay one),
``nandlab.fio`` (fio job files) and ``nandlab.matrix`` (the SNIA tutorial's IOPS and bandwidth
matrices, burst and steady state), ``nandlab.sweep`` (parameter studies on a process pool or a dask
cluster).
"""

from nandlab._core import (
    ConfigError,
    InternalError,
    SimulationError,
    Simulator,
    default_config_toml,
    preset_toml,
    presets,
)
from nandlab.api import Result, make_simulator, run

__all__ = [
    "ConfigError",
    "InternalError",
    "Result",
    "SimulationError",
    "Simulator",
    "default_config_toml",
    "make_simulator",
    "preset_toml",
    "presets",
    "run",
]
