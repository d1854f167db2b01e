"""The procedures nandlab runs, registered once: name → ``Procedure`` (its runner and the type of
its result; see ``nandlab.procedures.base``). The CLI's ``nandlab test`` commands, ``nandlab report``
(a directory's ``manifest.json`` names its procedure) and sweeps (a ``[sweep] procedure``) look
procedures up here.

A new procedure is one module in this package (its runner, its result type with ``to_dict``,
``files``, ``print`` and ``report``, and its ``Procedure``) and one line below; one with ``options``
is also a ``nandlab test`` command.
"""

from __future__ import annotations

from nandlab.procedures import (
    chip,
    fio,
    lifetime,
    lifetime_grid,
    lifetime_traces,
    matrix,
    pslc_fill,
    read_disturb,
    read_sections,
    retention,
    run,
    serve,
    sweep,
    trace,
    write_sections,
)
from nandlab.procedures.base import MANIFEST_JSON, Procedure, ProcedureResult

__all__ = ["MANIFEST_JSON", "PROCEDURES", "Procedure", "ProcedureResult", "get"]

PROCEDURES: dict[str, Procedure] = {procedure.name: procedure for procedure in (
    run.PROCEDURE,
    lifetime.RUN,
    lifetime.COMPARE,
    lifetime_grid.PROCEDURE,
    lifetime_traces.PROCEDURE,
    chip.ENDURANCE,
    chip.LATENCY,
    fio.PROCEDURE,
    trace.STATS,
    trace.COMPARISON,
    trace.REPLAY,
    write_sections.PROCEDURE,
    read_sections.PROCEDURE,
    pslc_fill.PROCEDURE,
    retention.PROCEDURE,
    read_disturb.PROCEDURE,
    matrix.PROCEDURE,
    sweep.PROCEDURE,
    serve.PROCEDURE,
)}


def get(name: str) -> Procedure | None:
    """The procedure called ``name``, or None."""
    return PROCEDURES.get(name)
