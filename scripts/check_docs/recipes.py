"""Runs written in Python: figures that take several nandlab calls, a config taken from a document, or a
test's own output. Each takes the run's fresh directory and returns its result (JSON-able)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import nandlab
from nandlab import output

ROOT = Path(__file__).resolve().parents[2]


def _run(config: Any) -> dict[str, Any]:
    """A nandlab run's whole result, as `nandlab run --json` prints it."""
    return json.loads(output.to_json(nandlab.run(config, progress=False)))


def readme_power_cut_snippet(out: Path) -> dict[str, Any]:
    """The README's power-cut config (the TOML block with `power_loss_every = "50ms"`), run as written."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    [block] = [b for b in blocks if 'power_loss_every = "50ms"' in b]
    return _run(textwrap.dedent(block))


def default_gc_until_stop(out: Path) -> dict[str, Any]:
    """The built-in default experiment with `[ftl] gc_until = "stop"`."""
    config = nandlab.default_config_toml().replace("[ftl]\n", '[ftl]\ngc_until = "stop"\n', 1)
    return _run(config)


def early_switch_blocks(out: Path) -> dict[str, Any]:
    """The early-switch pool of each synthetic ZombieNAND drive at 30 % and 10 % reserve, as the engine
    sizes it (`early_switch = "capacity"`)."""
    sizes = {}
    for cell in ("tlc", "mlc"):
        for reserve in (0.3, 0.1):
            sim = nandlab.make_simulator({"device": {"preset": f"zombienand-synthetic-{cell}", "reserve": reserve},
                                          "phase": [{"requests": 1}]})
            sizes[f"{cell}-{round(reserve * 100)}"] = sim.config["ftl"]["early_switch_blocks"]
    return sizes


def energy_anchor(out: Path) -> dict[str, Any]:
    """SNIA's 2009 SATA SLC drive as `tests/energy.rs` runs it: snia-slc filled, aged by an untimed pass of
    twice its capacity in 4 KiB random writes, then 100,000 of them at QD 32 in steady state."""
    return _run({"seed": 1, "device": {"preset": "snia-slc"}, "phase": [
        {"name": "fill", "kind": "fill"},
        {"name": "age", "timed": False, "volume": 2.0},
        {"name": "writes", "queue_depth": 32, "requests": 100_000},
    ]})


def _cargo_test(test: str, *args: str) -> str:
    done = subprocess.run(["cargo", "test", "--locked", "--release", "-p", "nandlab-core", "--test", test, *args,
                           "--", "--nocapture"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return done.stdout + done.stderr


def waf_models(out: Path) -> dict[str, Any]:
    """`tests/waf_models.rs`: each policy's simulated WAF against Desnoyers' model at 7–50 % OP."""
    errors = [float(e) for e in re.findall(r"op [\d.]+: simulated [\d.]+, model [\d.]+ .*?error ([\d.]+) %",
                                            _cargo_test("waf_models"))]
    return {"cells": len(errors), "max_error_percent": max(errors)}


def invariants_cuts(out: Path) -> dict[str, Any]:
    """`tests/invariants.rs` as CI runs it (256 sequences): the power cuts its tally line counts."""
    line = re.search(r"(\d+) sequences, (\d+) operations, (\d+) cuts", _cargo_test("invariants"))
    return {"sequences": int(line[1]), "operations": int(line[2]), "cuts": int(line[3])}


def bench_serve(out: Path) -> dict[str, Any]:
    """`scripts/bench-serve` (real fio over NBD against `nandlab fio`): each table line's IOPS and mean
    latency, by its label and job (``"fio (realtime, auto) qd1"``)."""
    done = subprocess.run(["bash", "scripts/bench-serve"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    lines = {}
    for label, job, iops, mean in re.findall(r"^(.+?)\s{2,}(\S+)\s+([\d,]+) IOPS\s+([\d.]+) us mean$", done.stdout,
                                             re.M):
        lines[f"{label.strip()} {job}"] = {"iops": float(iops.replace(",", "")), "mean_us": float(mean)}
    return lines


def served_snapshot(out: Path) -> dict[str, Any]:
    """The README's served-drive snapshot: snia-mlc at 1 GiB, qemu-io writes 3 MiB, the server stops."""
    import os
    import time

    socket, snapshot = out / "drive.sock", out / "drive.nls"
    server = subprocess.Popen(["python", "-m", "nandlab", "serve", "snia-mlc", "--capacity", "1GiB", "--socket",
                               str(socket), "--snapshot", str(snapshot), "--once", "-q"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(200):
        if socket.exists():
            break
        time.sleep(0.05)
    for attempt in range(50):  # the socket exists a moment before the server listens on it
        written = subprocess.run(["qemu-io", "-f", "raw", "-c", "write -P 0x5a 0 3M", f"nbd+unix:///?socket={socket}"],
                                 capture_output=True, text=True, timeout=60)
        if written.returncode == 0:
            break
        time.sleep(0.1)
    else:
        raise RuntimeError(f"qemu-io: {written.stderr}")
    server.wait(timeout=60)
    return {"snapshot_bytes": os.path.getsize(snapshot)}


def committed_sweep(example: str, committed: str, out: Path) -> list[dict[str, Any]]:
    """A document's ``nandlab sweep EXAMPLE --out COMMITTED`` run into ``out`` afresh: its result rows,
    once the committed sweep.toml is checked to be the example (SameFiles compares the tables and JSON,
    not TOML)."""
    import polars as pl

    done = subprocess.run([sys.executable, "-m", "nandlab", "sweep", example, "--out", str(out), "-q"], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    if (ROOT / committed / "sweep.toml").read_text() != (out / "sweep.toml").read_text():
        raise RuntimeError(f"{committed}/sweep.toml is not {example}")
    return pl.read_parquet(out / "results.parquet").to_dicts()
