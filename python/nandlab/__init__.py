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

from typing import Any as _Any

from nandlab._core import (
    ConfigError,
    InternalError,
    Interrupted,
    SimulationError,
    Simulator,
    SnapshotError,
    TraceError,
    death_causes,
    default_config_toml,
    parse_share,
    parse_size,
    preset_toml,
    presets,
)

_API = ("Paused", "Result", "check_config", "make_simulator", "open_snapshot", "resume", "run")
"""What ``nandlab.api`` gives the package: imported at first use (with polars), so that a command
that needs none of it (``nandlab presets``) starts without."""


def __getattr__(name: str) -> _Any:
    if name in _API:
        from nandlab import api

        return getattr(api, name)
    if name == "__version__":
        from importlib import metadata

        try:
            return metadata.version("nandlab")
        except metadata.PackageNotFoundError:  # run from a source tree without installing
            return "0+unknown"
    raise AttributeError(f"module 'nandlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)

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
    "check_config",
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
