"""``nandlab test read-sections``: the read test of Swissbit's AN2103 (its Fig. 6): small and
large reads of randomly and of sequentially written data (``qualify.read_sections``)."""

from __future__ import annotations

from typing import Any

from nandlab import qualify
from nandlab.procedures.base import Procedure
from nandlab.procedures.qualification import QUEUE_DEPTH_OPTION, Qualified


class ReadSections(Qualified):
    """The read test's speed per section, against GiB read."""

    kind = "read-sections"


def run(device: qualify.DeviceSource, **options: Any) -> ReadSections:
    """``qualify.read_sections`` (capacity, queue_depth, seed, progress) as a procedure's result."""
    return ReadSections([qualify.read_sections(device, **options)])


PROCEDURE = Procedure(
    "read-sections", "nandlab test read-sections", ReadSections, run,
    options=[QUEUE_DEPTH_OPTION],
    short_help="The read test (AN2103 Fig. 6): four reads, speed vs GiB read.",
    help="""The read test (AN2103 Fig. 6): read a drive written 4 KiB at random, 4 KiB at random in
    another order (1) and 128 KiB sequentially (2); write it 128 KiB sequentially, read it both
    ways again (3, 4).""",
)
