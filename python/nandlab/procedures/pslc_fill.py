"""``nandlab test pslc-fill``: the pSLC-cache test of Swissbit's AN2103 (its Figs. 2-5): one
sequential fill of the whole drive without a pause (``qualify.pslc_fill``), alone or beside the
same drive aged or with direct-write."""

from __future__ import annotations

from typing import Any

import click

from nandlab import qualify
from nandlab.procedures.qualification import Qualified, procedure

COMPARISONS = {  # --compare: the options of each run, and their labels
    "aged": ({"aged": False}, {"aged": True}, ("fresh", "aged (10 % of rated cycles)")),
    "direct-write": ({"direct_write": False}, {"direct_write": True}, ("pSLC only", "direct-write")),
}


def run(device: qualify.DeviceSource, compare: str | None = None, progress: Any = None, **options: Any) -> Qualified:
    """``qualify.pslc_fill`` (capacity, aged, direct_write, queue_depth, seed) as a procedure's
    result; with ``compare`` (``aged`` or ``direct-write``), run the drive without and with it."""
    if compare is None:
        return PROCEDURE.result([qualify.pslc_fill(device, progress=progress, **options)])
    base, variant, labels = COMPARISONS[compare]
    runs = [qualify.pslc_fill(device, progress=progress, **{**options, **changes}) for changes in (base, variant)]
    return PROCEDURE.result(runs, labels)


PROCEDURE = procedure(
    "pslc-fill", "The fill's speed per phase (pslc, direct, folding, native), against GiB written.", run,
    options=[
        click.option("--aged", is_flag=True,
                     help="Every block has used 10 % of its rated cycles ([device.wear] initial)."),
        click.option("--direct-write/--no-direct-write", default=None,
                     help="Set [ftl] direct_write (default: the device's)."),
        click.option("--compare", type=click.Choice(list(COMPARISONS)),
                     help="Also run the drive aged (Fig. 3) or with direct-write (Fig. 4) and overlay both curves; "
                     "the JSON gets the second run under `compare`."),
    ],
    short_help="The pSLC-cache test (AN2103 Figs. 2-5): one sequential fill.",
    help="""The pSLC-cache test (AN2103 Figs. 2-5): TRIM, then write the whole capacity 128 KiB
    sequentially without a pause; phases: pslc (into the cache), direct (direct-write), folding
    (the cache folded into native blocks), or native (no cache).""",
)
