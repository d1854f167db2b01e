"""``nandlab test write-sections``: the write test of Swissbit's AN2103 (its Fig. 1): TRIM, then
seven passes of the capacity, each another access pattern (``qualify.write_sections``)."""

from __future__ import annotations

from nandlab.procedures.qualification import QUEUE_DEPTH_OPTION, procedure

PROCEDURE = procedure(
    "write-sections", "The write test's speed per section, against GiB written.", options=[QUEUE_DEPTH_OPTION],
    short_help="The write test (AN2103 Fig. 1): seven passes, speed vs GiB written.",
    help="""The write test (AN2103 Fig. 1): TRIM the drive, then write its capacity seven times: 4 KiB
    random, each address once (1), the same order again (2), a new order (3); 128 KiB sequential
    (4), again (5); 4 KiB uniform random twice (6, 7).""",
)
