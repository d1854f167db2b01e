"""Same results across restructurings, for the procedures Python builds (issue 18): AN2103's write,
read and pSLC-fill tests, a fio job file and a SNIA matrix give exactly the JSON recorded in
``tests/golden/procedures.json`` (wall-clock figures aside). The engine's own configs have their
golden test in ``crates/nandlab-core/tests/golden.rs``. A change meant to change results re-records
them with ``NANDLAB_BLESS=1 python -m pytest tests/python/test_golden.py`` and says why."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EXPECTED = GOLDEN / "procedures.json"

PROCEDURES = {
    "write-sections": ["test", "write-sections", "--device", "swissbit-standard", "--capacity", "2GiB"],
    "read-sections": ["test", "read-sections", "--device", "swissbit-standard", "--capacity", "2GiB"],
    "pslc-fill-direct": ["test", "pslc-fill", "--device", "tlc-dynamic-pslc", "--capacity", "2GiB", "--direct-write"],
    "fio": ["fio", str(GOLDEN / "mixed.fio"), "--device", "swissbit-standard", "--capacity", "2GiB"],
    "matrix": ["matrix", "--device", "snia-slc", "--capacity", "1GiB", "--block-sizes", "4KiB,128KiB",
               "--mixes", "100/0,0/100", "--no-scaling", "--workers", "1"],
}


def without_wall_clock(value: Any) -> Any:
    """``value`` with every figure measured on the wall clock left out, and the integrity oracle's
    counts (there when ``NANDLAB_INTEGRITY=1`` turns it on: a check, not a result)."""
    if isinstance(value, dict):
        # (fio's document also says when it was written: timestamp, timestamp_ms, time.)
        return {k: without_wall_clock(v) for k, v in value.items()
                if "wall" not in k and k not in ("integrity", "timestamp", "timestamp_ms", "time")}
    if isinstance(value, list):
        return [without_wall_clock(v) for v in value]
    return value


def outcome(document: dict[str, Any]) -> dict[str, Any]:
    """A digest of the whole JSON document, and a few headline figures to read a difference by."""
    text = json.dumps(without_wall_clock(document), sort_keys=True)
    headline = {k: document[k] for k in ("waf", "iops", "mbps") if isinstance(document.get(k), (int, float))}
    return {"digest": hashlib.sha256(text.encode()).hexdigest()[:16], "bytes": len(text), **headline}


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(EXPECTED.read_text()) if EXPECTED.exists() else {}


@pytest.mark.parametrize("name", sorted(PROCEDURES))
def test_each_procedure_gives_the_recorded_results(nandlab_cli, recorded: dict[str, Any], name: str) -> None:
    run = nandlab_cli(*PROCEDURES[name], "--json", "-q")
    assert run.exit_code == 0, run.stderr
    got = outcome(json.loads(run.stdout))
    if os.environ.get("NANDLAB_BLESS"):
        recorded[name] = got
        EXPECTED.write_text(json.dumps(dict(sorted(recorded.items())), indent=2) + "\n")
        return
    assert name in recorded, f"{name}: no recorded result (NANDLAB_BLESS=1 records it)"
    assert got == recorded[name], f"{name}: results differ from tests/golden/procedures.json"
