"""``scripts/check-docs [--ci] [--only TEXT] [--keep DIR] [--jobs N] [--list]``: re-runs the commands behind
the figures of README.md, BENCHMARKS.md and docs/*/README.md and compares every figure they state with
the fresh result, printing each mismatch as ``file:line: stated X, measured Y``; exit 1 if any.

``--ci`` checks only what rests on cheap runs (the CI budget); ``--only PATH`` the checks of that file or
the files in that directory; ``--keep DIR`` keeps the runs' results there and reuses them the next time (delete DIR to
run again); ``--list`` names the runs and what they cost, without running anything. Every deterministic
run's whole result is also pinned, as a digest, in tests/golden/docs.json: a change to any figure of a
documented configuration, quoted or not, is a finding until ``--bless`` records it (in a commit that
says what moved and why)."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from check_docs import check
from check_docs.claims import registry


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/check-docs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ci", action="store_true", help="only the checks that rest on cheap runs")
    parser.add_argument("--only", action="append", default=[], metavar="PATH",
                        help="only the checks of this file, or of the files in this directory (repeatable)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep (and reuse) the runs' results in DIR")
    parser.add_argument("--jobs", type=int, default=2, metavar="N", help="runs at once (default 2)")
    parser.add_argument("--list", action="store_true", help="list the runs and their checks, run nothing")
    parser.add_argument("--bless", action="store_true",
                        help=f"record the runs' digests in {check.GOLDEN} (after a change meant to move results)")
    args = parser.parse_args()

    check.evict_libraries()
    note = check.huge_pages_only_where_advised()
    if note:
        print(note, file=sys.stderr)
    r = registry()
    checks = [c for c in r.checks if not args.only or any(c.file == t or c.file.startswith(t.rstrip("/") + "/")
                                                           for t in args.only)]
    if args.ci:
        checks = [c for c in checks if all(r.runs[x].ci for x in c.runs())]
    needed = sorted({x for c in checks for x in c.runs()})
    if args.list:
        for run_id in needed:
            run = r.runs[run_id]
            users = sorted({c.file for c in checks if run_id in c.runs()})
            print(f"{run_id:<28} {run.cost:>6.0f} s {'ci ' if run.ci else '   '} {', '.join(users)}")
        print(f"{len(needed)} runs, {sum(r.runs[x].cost for x in needed) / 60:.1f} min of runs; {len(checks)} checks")
        return 0
    work = args.keep or Path(tempfile.mkdtemp(prefix="check-docs-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(f"check-docs: {len(checks)} checks on {len(needed)} runs "
          f"(about {sum(r.runs[x].cost for x in needed) / 60 / max(1, args.jobs):.1f} min on {args.jobs} workers)",
          flush=True)
    results = check.run_all([r.runs[x] for x in needed], work, args.jobs, args.keep is not None,
                            lambda line: print(line, flush=True))
    without = check.without_samples(results)
    if without:
        print(f"check-docs: no {check.SAMPLES} beside the checkout: skipped the checks of "
              f"{', '.join(without)} (they read the trace samples)")
        checks = [c for c in checks if not set(c.runs()) & set(without)]
        needed = [x for x in needed if x not in without]
    findings = check.check(r, results, checks)
    findings += check.check_golden([r.runs[x] for x in needed], results, args.bless)
    for finding in findings:
        print(finding)
    figures = sum(len(c.values) if hasattr(c, "values") else
                  sum(len(v.values) if hasattr(v, "values") else 1 for cells in c.rows.values() for v in cells.values())
                  if hasattr(c, "rows") else len(c.pairs) for c in checks)
    print(f"check-docs: {figures} figures in {len(checks)} checks, {len(findings)} mismatches "
          f"({time.monotonic() - started:.0f} s)")
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
