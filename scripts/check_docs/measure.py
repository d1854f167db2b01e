"""``python -m check_docs.measure OUT ARGS...``: ``nandlab ARGS...`` in this process, its peak memory (the
process's maximum resident set, MiB) written to ``OUT/peak_rss_mib`` — a figure the documents quote for
the command as a user runs it."""

import resource
import sys
from pathlib import Path

from nandlab.cli import main

out = Path(sys.argv[1])
sys.argv = ["nandlab", *sys.argv[2:]]
try:
    main()
except SystemExit as stop:
    if stop.code:
        raise
finally:
    (out / "peak_rss_mib").write_text(f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.1f}\n")
