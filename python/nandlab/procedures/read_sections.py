"""``nandlab test read-sections``: the read test of Swissbit's AN2103 (its Fig. 6): small and
large reads of randomly and of sequentially written data (``qualify.read_sections``)."""

from __future__ import annotations

from nandlab.procedures.qualification import QUEUE_DEPTH_OPTION, procedure

PROCEDURE = procedure(
    "read-sections", "The read test's speed per section, against GiB read.", options=[QUEUE_DEPTH_OPTION],
    short_help="The read test (AN2103 Fig. 6): four reads, speed vs GiB read.",
    help="""The read test (AN2103 Fig. 6): read a drive written 4 KiB at random, 4 KiB at random in
    another order (1) and 128 KiB sequentially (2); write it 128 KiB sequentially, read it both
    ways again (3, 4).""",
)
