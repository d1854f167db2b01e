"""Running the commands behind the documents' figures, and comparing every stated figure with the
fresh one: sentences (``Claim``), table cells (``Table``) and committed result files (``SameFiles``)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from check_docs.model import Cell, Claim, Finding, Registry, Run, SameFiles, Table, Value, formatted, same, \
    template_regex

ROOT = Path(__file__).resolve().parents[2]


THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def huge_pages_only_where_advised() -> str | None:
    """Has this process and the runs it starts use transparent huge pages only where asked for
    (``madvise``, Debian's default), as the documents' memory figures were measured: a kernel set to
    ``always`` backs every large heap with 2 MiB pages and adds 10–20 % to peak memory. Returns a
    note when the kernel would add them and cannot be told not to (Linux before 6.18)."""
    try:
        mode = THP.read_text()
    except OSError:
        return None
    if "[always]" not in mode:
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_thp_disable, except_advised = 41, 1 << 1
    if libc.prctl(pr_set_thp_disable, 1, except_advised, 0, 0) == 0:
        return None
    return ("note: transparent huge pages are 'always' on this kernel and it cannot be told otherwise "
            "per process: memory figures measure 10-20 % above the documents' (measured with 'madvise')")


def evict_libraries() -> None:
    """Drops this Python's shared libraries (its own and its packages', the engine's among them) from
    the page cache, as after a reboot: files written moments ago — a fresh install, as on CI — sit
    there in large folios, which a process maps whole, and the same command's peak memory then
    measures 15–20 % more (123 → 146 MB, the same 45 MB for importing polars once evicted).
    Read back on demand, they map as the documents' figures were measured."""
    roots = {Path(sys.prefix), Path(sys.base_prefix), ROOT / "python"}
    for root in roots:
        for path in root.rglob("*.so*"):
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            except OSError:
                pass
            finally:
                os.close(fd)


class RunFailed(Exception):
    """A run that did not finish: what it printed last."""


def execute(run: Run, work: Path, reuse: bool) -> Any:
    """Runs ``run`` (or, with ``reuse``, takes the result a previous check left in ``work``)."""
    folder = work / run.id
    saved = folder / "result.json"
    if reuse and saved.exists():
        result = json.loads(saved.read_text())
        if isinstance(result, dict) and "out" in result:
            result["out"] = str(folder / "out")  # where it is now, were the folder moved
        return result
    if folder.exists():
        shutil.rmtree(folder)
    out = folder / "out"
    out.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k != "NANDLAB_INTEGRITY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "scripts"), env.get("PYTHONPATH")]))
    env.update(run.env)
    argv = [a.replace("{out}", str(out)).replace("{root}", str(ROOT)) for a in run.argv]
    if run.python:
        command = [sys.executable, "-m", "check_docs.call", run.python, str(out)]
    elif run.memory:
        evict_libraries()
        command = [sys.executable, "-m", "check_docs.measure", str(out), *argv]
    else:
        command = [sys.executable, "-m", "nandlab", *argv]
    started = time.monotonic()
    # The environment's own commands first (a script a run calls may call `nandlab`).
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        last = " / ".join(done.stderr.strip().splitlines()[-2:])
        raise RunFailed(f"`{' '.join(command[2:])}` exited {done.returncode}: {last[-300:]}")
    result = json.loads(done.stdout) if run.json or run.python else {}
    if isinstance(result, dict):
        result.setdefault("out", str(out))
        if run.memory:
            result["peak_rss_mib"] = float((out / "peak_rss_mib").read_text())
    saved.write_text(json.dumps(result))
    (folder / "seconds").write_text(f"{time.monotonic() - started:.1f}\n")
    return result


def run_all(runs: Iterable[Run], work: Path, jobs: int, reuse: bool, say) -> dict[str, Any]:
    """Every run, ``jobs`` at once, the longest first; a failed run's result is its ``RunFailed``."""
    results: dict[str, Any] = {}

    def one(run: Run) -> None:
        started = time.monotonic()
        try:
            results[run.id] = execute(run, work, reuse)
            say(f"  ran {run.id} ({time.monotonic() - started:.0f} s)")
        except (RunFailed, json.JSONDecodeError) as error:
            results[run.id] = RunFailed(str(error))
            say(f"  FAILED {run.id}: {error}")

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, sorted(runs, key=lambda r: -r.cost)))
    return results


SAMPLES = "../shared/traces"
"""The real trace samples some documents' runs read, beside the checkout (not in it)."""


def without_samples(results: Mapping[str, Any]) -> list[str]:
    """The runs that failed for want of the trace samples, where the checkout has none beside it."""
    if (ROOT / SAMPLES).is_dir():
        return []
    return sorted(k for k, v in results.items() if isinstance(v, RunFailed) and "shared/traces" in str(v))


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _figures(template: str, values: Mapping[str, Value], text: str, results: Mapping[str, Any],
             where: str, about: str) -> list[Finding]:
    """The figures of one occurrence of ``template`` in ``text`` against their fresh values."""
    matches = list(re.finditer(template_regex(template), text))
    if len(matches) != 1:
        what = "not found" if not matches else f"found {len(matches)} times"
        return [Finding(where, f"[{what}] {template!r}", "the claim's text must occur once", about)]
    failed = sorted({r for v in values.values() for r in v.runs() if isinstance(results.get(r), RunFailed)})
    if failed:
        spot = where if ":" in where else f"{where}:{line_of(text, matches[0].start())}"
        return [Finding(spot, f"{len(values)} figures", f"[run {failed[0]} failed: {results[failed[0]]}]", about)]
    found = []
    for name, value in values.items():
        stated = matches[0].group(name)
        try:
            fresh = value.of(results)
            measured = formatted(fresh, value.fmt)
        except Exception as error:  # a figure's function failing is a finding, never the end of the check
            found.append(Finding(where, stated, f"[no figure: {type(error).__name__}: {error}]", about))
            continue
        if not same(stated, measured, fresh, value):
            spot = where if ":" in where else f"{where}:{line_of(text, matches[0].start(name))}"
            found.append(Finding(spot, stated, measured, f"{name} in {template!r}"))
    return found


def check_claim(claim: Claim, results: Mapping[str, Any]) -> list[Finding]:
    text = (ROOT / claim.file).read_text()
    return _figures(claim.template, claim.values, text, results, claim.file, claim.template)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def check_table(table: Table, results: Mapping[str, Any]) -> list[Finding]:
    lines = (ROOT / table.file).read_text().splitlines()
    header = [i for i, line in enumerate(lines) if line.lstrip().startswith("|") and _cells(line) == list(table.header)]
    if len(header) != 1:
        return [Finding(table.file, f"[table {' | '.join(table.header)} found {len(header)} times]", "one")]
    start = header[0]
    columns = list(table.header)
    rows: dict[str, tuple[int, list[str]]] = {}
    for i in range(start + 2, len(lines)):
        if not lines[i].lstrip().startswith("|"):
            break
        cells = _cells(lines[i])
        rows[cells[0]] = (i + 1, cells)
    found = []
    for key, checked in table.rows.items():
        if key not in rows:
            found.append(Finding(f"{table.file}:{start + 1}", f"[no row {key!r}]", "a row of the table"))
            continue
        number, cells = rows[key]
        for column, cell in checked.items():
            text = cells[columns.index(column)] if column in columns and columns.index(column) < len(cells) else ""
            cell = cell if isinstance(cell, Cell) else Cell({"v": cell})
            found += _figures(cell.template, cell.values, text, results,
                              f"{table.file}:{number}", f"{key} / {column}")
    return found


WALL = re.compile(r"wall|elapsed|per_wall|seconds_wall|peak_rss|^timestamp|^time$")


def _without_wall(value: Any) -> Any:
    """``value`` without wall-clock figures, and with the checkout's place on this machine written
    ``{root}`` (a result that names its input files names them wherever the checkout is)."""
    if isinstance(value, dict):
        return {k: _without_wall(v) for k, v in value.items() if not WALL.search(k) and k != "out"}
    if isinstance(value, list):
        return [_without_wall(v) for v in value]
    if isinstance(value, str):
        return value.replace(str(ROOT.parent), "{root}/..")
    return value


def _table(path: Path):
    import polars as pl

    frame = pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path, infer_schema_length=None)
    return frame.select([c for c in frame.columns if not WALL.search(c)])


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            d = _first_difference(a.get(k), b.get(k), f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items against {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = _first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, float) and isinstance(b, float) and (a == b or (math.isnan(a) and math.isnan(b))):
        return None
    return None if a == b else f"{path}: {a!r} against {b!r}"


def check_files(check: SameFiles, results: Mapping[str, Any]) -> list[Finding]:
    result = results[check.run]
    if isinstance(result, RunFailed):
        return [Finding(check.file, "[committed results]", f"[run {check.run} failed: {result}]")]
    found = []
    for committed, fresh in check.pairs:
        old, new = ROOT / committed, Path(result["out"]) / fresh
        if not new.exists():
            found.append(Finding(committed, "[committed]", f"[the run wrote no {fresh}]"))
            continue
        if old.suffix == ".json":
            difference = _first_difference(_without_wall(json.loads(old.read_text())),
                                           _without_wall(json.loads(new.read_text())))
        else:
            a, b = _table(old), _table(new)
            difference = None if a.equals(b) else _frame_difference(a, b)
        if difference:
            found.append(Finding(committed, "[committed]", f"[fresh differs: {difference}]"))
    return found


def _frame_difference(a, b) -> str:
    if a.columns != b.columns:
        return f"columns {a.columns} against {b.columns}"
    if a.height != b.height:
        return f"{a.height} rows against {b.height}"
    for column in a.columns:
        if not a[column].equals(b[column]):
            i = next(i for i, (x, y) in enumerate(zip(a[column], b[column])) if x != y)
            return f"row {i} {column}: {a[column][i]!r} against {b[column][i]!r}"
    return "the same values in another order or type"


GOLDEN = Path("tests/golden/docs.json")
"""Every deterministic run's whole result, as a digest: what the documents' configurations gave when last
recorded (``--bless``), so that a change to any of their figures, quoted or not, is seen."""


def digest(result: Any) -> str:
    """A digest of a run's result, wall-clock figures aside: its JSON, or — for a run that writes files —
    its JSON and CSV files."""
    import hashlib

    h = hashlib.sha256(json.dumps(_without_wall(result), sort_keys=True).encode())
    out = Path(result["out"]) if isinstance(result, dict) and "out" in result else None
    if out and out.is_dir():
        for path in sorted(p for p in out.rglob("*") if p.suffix in (".json", ".csv") and p.is_file()):
            h.update(str(path.relative_to(out)).encode())
            if path.suffix == ".json":
                h.update(json.dumps(_without_wall(json.loads(path.read_text())), sort_keys=True).encode())
            else:
                h.update(_table(path).write_csv().replace(str(ROOT.parent), "{root}/..").encode())
    return h.hexdigest()[:16]


def check_golden(runs: Iterable[Run], results: Mapping[str, Any], bless: bool) -> list[Finding]:
    """Each deterministic run's digest against ``GOLDEN`` (with ``bless``: recorded there instead)."""
    path = ROOT / GOLDEN
    recorded = json.loads(path.read_text()) if path.exists() else {}
    found = []
    for run in sorted(runs, key=lambda r: r.id):
        result = results.get(run.id)
        if not run.golden or isinstance(result, RunFailed) or result is None:
            continue
        now = digest(result)
        if bless:
            recorded[run.id] = now
        elif recorded.get(run.id) != now:
            found.append(Finding(str(GOLDEN), f"{run.id} {recorded.get(run.id, '(none recorded)')}", now,
                                 "the run's results changed: find what moved, and re-record with --bless in a "
                                 "commit that lists it"))
    if bless:
        path.write_text(json.dumps(dict(sorted(recorded.items())), indent=2) + "\n")
    return found


def check(registry: Registry, results: Mapping[str, Any], checks: Iterable[Any]) -> list[Finding]:
    found = []
    for c in checks:
        if isinstance(c, Claim):
            found += check_claim(c, results)
        elif isinstance(c, Table):
            found += check_table(c, results)
        else:
            found += check_files(c, results)
    return found
