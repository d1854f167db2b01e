"""The procedures nandlab runs, registered once: name → ``Procedure`` (its runner and the type of
its result; see ``nandlab.procedures.base``). The CLI's ``nandlab test`` commands, ``nandlab report``
(a directory's ``manifest.json`` names its procedure) and sweeps (a ``[sweep] procedure``) look
procedures up here.

A new procedure is one module in this package (its runner, its result type with ``to_dict``,
``files``, ``print`` and ``report``, and its ``Procedure``) and one line in ``_REGISTERED``; one with ``options``
is also a ``nandlab test`` command.
"""

from __future__ import annotations

import importlib
from typing import Any

from nandlab.procedures.base import MANIFEST_JSON, Procedure, ProcedureResult

__all__ = ["MANIFEST_JSON", "PROCEDURES", "Procedure", "ProcedureResult", "get"]

_REGISTERED = (
    ("run", "PROCEDURE"),
    ("lifetime", "RUN"),
    ("lifetime", "COMPARE"),
    ("lifetime_grid", "PROCEDURE"),
    ("lifetime_traces", "PROCEDURE"),
    ("chip", "ENDURANCE"),
    ("chip", "LATENCY"),
    ("fio", "PROCEDURE"),
    ("trace", "STATS"),
    ("trace", "COMPARISON"),
    ("trace", "REPLAY"),
    ("write_sections", "PROCEDURE"),
    ("read_sections", "PROCEDURE"),
    ("pslc_fill", "PROCEDURE"),
    ("retention", "PROCEDURE"),
    ("read_disturb", "PROCEDURE"),
    ("matrix", "PROCEDURE"),
    ("sweep", "PROCEDURE"),
    ("serve", "PROCEDURE"),
)
"""Each procedure: its module in this package and the ``Procedure`` in it. The modules are imported
when the registry is first asked for (a command that runs one procedure imports only its own)."""


PROCEDURES: dict[str, Procedure]
"""Name → procedure (built on first use: see ``_REGISTERED``)."""


def _procedures() -> dict[str, Procedure]:
    registry = globals().get("PROCEDURES")
    if registry is None:
        loaded = [getattr(importlib.import_module(f"nandlab.procedures.{module}"), name)
                  for module, name in _REGISTERED]
        registry = globals()["PROCEDURES"] = {procedure.name: procedure for procedure in loaded}
    return registry


def __getattr__(name: str) -> Any:
    if name == "PROCEDURES":
        return _procedures()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get(name: str) -> Procedure | None:
    """The procedure called ``name``, or None."""
    return _procedures().get(name)
