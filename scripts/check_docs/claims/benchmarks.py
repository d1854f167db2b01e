"""BENCHMARKS.md's figures: every simulated result, and the peak memory of the commands that take
seconds (within 10 %). Wall times, callgrind counts, MQSim's figures and the figures the document
labels as history (with their date or commit) are measurements of their day and are not re-checked.

The engine-only figures come from `nandlab run CONFIG --json` (the same engine and config as the
`bench` example); the `bench` example itself runs only where its own peak memory is the figure."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from check_docs.claims import common
from check_docs.model import Cell, Claim, Registry, Run, Table
from check_docs.model import Value as V

F = "BENCHMARKS.md"
ROOT = Path(__file__).resolve().parents[3]
TRACES = ROOT.parent / "shared" / "traces"
MSR = "msr_rsrch_1.csv"
BLKPARSE = "blkparse_ycsb_ext4_msclaudz.txt"
MB = 1e6
MQSIM_IOPS = 6452
"""MQSim's own figure for the steady reference workload (measured once, BENCHMARKS.md)."""
MIB = 2**20


# ---------------------------------------------------------------- runs written in Python

def _run(config: Any) -> dict[str, Any]:
    """A nandlab run's whole result, as `nandlab run --json` prints it."""
    import nandlab
    from nandlab import output

    return json.loads(output.to_json(nandlab.run(config, progress=False)))


def _bench(config: str) -> dict[str, Any]:
    """`cargo run --release -p nandlab-core --example bench -- CONFIG` (built first if need be): its
    phases' requests and the process's peak RSS (MiB), as it prints them."""
    done = subprocess.run(["cargo", "run", "--locked", "--quiet", "--release", "-p", "nandlab-core", "--example",
                           "bench", "--", config], cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    phases = {m[1]: {"wall_seconds": float(m[2]), "host_requests": int(m[3])}
              for m in re.finditer(r"^  (\S+)\s+wall\s+([\d.]+) s\s+requests\s+(\d+)", done.stdout, re.M)}
    peak = re.search(r"peak RSS (\d+) MiB", done.stdout)
    if not peak:
        raise RuntimeError(f"no peak RSS in: {done.stdout[-500:]}")
    return {"phases": phases, "peak_rss_mib": float(peak[1])}


def bench_reference(out: Path) -> dict[str, Any]:
    """The `bench` example on the MQSim reference workload (with the run's environment: the integrity
    oracle when NANDLAB_INTEGRITY=1)."""
    return _bench("bench/mqsim-reference.toml")


def bench_reference_fill(out: Path) -> dict[str, Any]:
    """The `bench` example filling the reference drive whole, and the drive's 4 KiB slots."""
    import nandlab

    result = _bench("bench/mqsim-reference-fill.toml")
    result["slots"] = nandlab.make_simulator("bench/mqsim-reference-fill.toml").config["geometry"]["slots"]
    return result


def reference_geometry(out: Path) -> dict[str, Any]:
    """The reference drive's maps as the engine sizes them: user units and slots (4 bytes each in the
    forward and the reverse map), and what the 75 % fill writes of them."""
    import nandlab

    path = ROOT / "bench/mqsim-reference.toml"
    geometry = nandlab.make_simulator(str(path)).config["geometry"]
    volume = tomllib.loads(path.read_text())["phase"][0]["volume"]
    units = geometry["user_units"]
    return {"user_units": units, "slots": geometry["slots"], "fill_volume": volume,
            "fill_map_bytes": 8 * round(volume * units), "reverse_map_bytes": 4 * geometry["slots"]}


def snapshot_bench(out: Path) -> dict[str, Any]:
    """`cargo run --release -p nandlab-core --example snapshot_bench` (the reference drive aged into GC
    steady state, 512 GiB): the snapshot's size (its temporary file goes to this run's directory)."""
    done = subprocess.run(["cargo", "run", "--locked", "--quiet", "--release", "-p", "nandlab-core", "--example",
                           "snapshot_bench"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(out)})
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    size = re.search(r"snapshot ([\d.]+) MiB", done.stdout)
    peak = re.search(r"peak RSS (\d+) MiB", done.stdout)
    if not size:
        raise RuntimeError(f"no snapshot size in: {done.stdout[-500:]}")
    return {"snapshot_mib": float(size[1]), "peak_rss_mib": float(peak[1]) if peak else None}


def sata_reads(out: Path) -> dict[str, Any]:
    """The drive of `tests/timing.rs`' `queued_reads_overlap_on_a_half_duplex_link`: snia-mlc with 256
    blocks a plane on a SATA 300 link, reordered commands with read priority, filled, then 20,000 4 KiB
    random reads at QD 1 and at QD 32; and the link's bound the test holds them to."""
    iops = {}
    for depth in (1, 32):
        result = _run(f"""seed = 3
[device]
preset = "snia-mlc"
blocks_per_plane = 256
interface = "sata-300"
[ftl]
command_order = "reordered"
read_priority = true
[[phase]]
kind = "fill"
volume = 1.0
[[phase]]
pattern = "random"
read_fraction = 1.0
block_size = "4KiB"
queue_depth = {depth}
requests = 20000
""")
        iops[f"qd{depth}"] = result["phases"][1]["iops"]
    transfer_ns = 4096 * 1e9 / 300e6
    return {**iops, "link_bound": 1e9 / (4000 + transfer_ns)}


def steady_state_example(out: Path) -> dict[str, Any]:
    """`nandlab run examples/steady-state.toml`: its random-read phase, and the IOPS of that phase's
    first time-series window."""
    import polars as pl

    import nandlab

    result = nandlab.run("examples/steady-state.toml", progress=False)
    phase = next(p for p in result.phases if p["name"] == "random-read")
    index = next(i for i, p in enumerate(result.phases) if p["name"] == "random-read")
    first = result.timeseries.filter(pl.col("phase") == index).row(0, named=True)
    return {"iops": phase["iops"], "read_latency_us": phase["read_latency_us"], "first_window_iops": first["iops"]}


SUSPEND_VARIANTS = {
    "fifo": {"suspend": "none", "read_priority": "false"},
    "priority": {"suspend": "none", "read_priority": "true"},
    "erase": {"suspend": "erase", "read_priority": "true"},
}


def suspend_variants(out: Path) -> dict[str, Any]:
    """`examples/suspend.toml` with `suspend` and `read_priority` changed, as its comment says (the file
    as committed, program+erase suspension, is the shared run ``suspend``): each one's read latency."""
    text = (ROOT / "examples/suspend.toml").read_text()
    results = {}
    for name, keys in SUSPEND_VARIANTS.items():
        config = re.sub(r'^suspend = "[^"]*"', f'suspend = "{keys["suspend"]}"', text, count=1, flags=re.M)
        config = re.sub(r"^read_priority = \w+", f"read_priority = {keys['read_priority']}", config, count=1,
                        flags=re.M)
        assert config.count(keys["suspend"]) and f"read_priority = {keys['read_priority']}" in config
        phase = _run(config)["phases"][-1]
        results[name] = phase["read_latency_us"]
    return results


def _toml_from(path: str, pattern: str) -> str:
    [text] = re.findall(pattern, (ROOT / path).read_text(), re.S)
    return text


def snapshot_test_lives(out: Path) -> dict[str, Any]:
    """The two lifetime runs the snapshot tests resume: `tests/snapshot.rs`' LIFETIME (a 32 MiB pSLC
    ZombieNAND drive) and `tests/python/test_snapshots.py`'s (64 MiB), each run to death as written."""
    lives = {
        "rust": _toml_from("crates/nandlab-core/tests/snapshot.rs", r'const LIFETIME: &str = r#"(.*?)"#;'),
        "python": _toml_from("tests/python/test_snapshots.py", r'\nLIFETIME = """(.*?)"""'),
    }
    results = {}
    for name, config in lives.items():
        phase = _run(config)["phases"][-1]
        results[name] = {"host_requests": phase["host_requests"], "host_write_bytes": phase["host_write_bytes"]}
    return results


def trace_samples(out: Path) -> dict[str, Any]:
    """The two samples the trace readers' bench concatenates (MSR rsrch_1 ×500, blkparse ×100): their
    records, lines and bytes, and what `nandlab trace stats` finds in them."""
    done = subprocess.run(["nandlab", "trace", "stats", str(TRACES / MSR), str(TRACES / BLKPARSE), "--json"],
                          capture_output=True, text=True, check=True)
    stats = {Path(t["file"]).name: t for t in json.loads(done.stdout)["traces"]}
    result = {}
    for name in (MSR, BLKPARSE):
        data = (TRACES / name).read_bytes()
        result[name] = {**stats[name], "file": name, "lines": data.count(b"\n"), "file_bytes": len(data)}
    return result


def _peak_mib(args: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """A command's own peak resident set (MiB, from wait4) and its last line on stderr."""
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, **(env or {})})
    stderr = process.stderr.read().decode()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, (stderr.strip().splitlines() or [""])[-1]


def _zstd_bomb(byte: bytes, blocks: int) -> bytes:
    """A zstd frame of RLE blocks of 128 KiB each: 4 bytes a block (RFC 8878), as in
    `tests/python/test_input_bounds.py`."""
    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")
    for i in range(blocks):
        header = (128 << 10) << 3 | 1 << 1 | (i + 1 == blocks)
        frame += header.to_bytes(3, "little") + byte
    return bytes(frame)


def hostile_inputs(out: Path) -> dict[str, Any]:
    """The inputs of BENCHMARKS.md's hostile-input table, each refused: the CLI's peak memory, and the
    memory estimate that refuses 4,096 jobs under NANDLAB_MEMORY_LIMIT=1GiB (the inputs of
    `tests/python/test_input_bounds.py`)."""
    nandlab = [sys.executable, "-m", "nandlab"]
    drive = '[device]\npreset = "zombienand-synthetic-tlc"\ncapacity = "256MiB"\n'
    bomb = out / "bomb.csv.zst"
    bomb.write_bytes(_zstd_bomb(b"7", 10 * 8192))  # 10 GiB of digits without a newline, in 320 KiB
    many = out / "jobs-10000.toml"
    many.write_text(f"{drive}[[phase]]\nrequests = 100\n" + "[[phase.job]]\nqueue_depth = 1\n" * 10_000)
    limit = out / "jobs-4096.toml"
    limit.write_text(f"{drive}[[phase]]\nrequests = 100000\n" + "[[phase.job]]\nqueue_depth = 1\n" * 4096)
    result: dict[str, Any] = {}
    checks = {
        "run-dev-zero": (nandlab + ["run", "/dev/zero"], None, "larger than 64 MiB"),
        "trace-stats-bomb": (nandlab + ["trace", "stats", str(bomb), "--skip-bad"], None,
                             "a line longer than 8192 bytes"),
        "trace-replay-bomb": (nandlab + ["trace", "replay", str(bomb), "--device", "zombienand-synthetic-tlc",
                                         "--capacity", "256MiB", "--quiet", "--skip-bad"], None,
                              "a line longer than 8192 bytes"),
        "jobs-10000": (nandlab + ["run", str(many), "--quiet"], None, "at most 4096 [[phase.job]] tables"),
        "jobs-4096-limit": (nandlab + ["run", str(limit), "--quiet"], {"NANDLAB_MEMORY_LIMIT": "1GiB"},
                            "and only 1.0 GiB of RAM is available"),
    }
    for name, (args, env, refusal) in checks.items():
        peak, message = _peak_mib(args, env)
        if refusal not in message:
            raise RuntimeError(f"{name}: not refused as expected: {message}")
        result[name] = {"peak_rss_mib": peak, "message": message}
    estimate = re.search(r"needs about ([\d.]+) GiB", result["jobs-4096-limit"]["message"])
    result["jobs-4096-limit"]["estimate_gib"] = float(estimate[1])
    return result


# ---------------------------------------------------------------- formats

def mb(mib: float) -> float:
    """MiB (as measured) in MB (10^6 bytes, as `/usr/bin/time`'s KB / 1000 reads)."""
    return mib * MIB / MB


def millions(x: float) -> float:
    return x / 1e6


def phase(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in result["phases"] if p["name"] == name)


MEMORY = 0.1
"""Peak memory varies between runs and machines: within 10 %."""


def declare(r: Registry) -> None:
    common.declare_runs(r)
    r.run(
        Run("bench-example-reference", python="claims.benchmarks:bench_reference", cost=60, ci=False, measured=True),
        Run("bench-example-reference-integrity", python="claims.benchmarks:bench_reference", cost=10, ci=False,
            env={"NANDLAB_INTEGRITY": "1"}, measured=True),
        Run("bench-example-fill", python="claims.benchmarks:bench_reference_fill", cost=10, ci=False, measured=True),
        Run("bench-reference-geometry", python="claims.benchmarks:reference_geometry", cost=1),
        Run("bench-snapshot", python="claims.benchmarks:snapshot_bench", cost=90, ci=False, measured=True),
        Run("bench-sata-reads", python="claims.benchmarks:sata_reads", cost=3),
        Run("bench-steady", ["run", "bench/mqsim-reference-steady.toml", "--json", "-q"], cost=40, ci=False),
        Run("bench-steady-map-cache", ["run", "bench/mqsim-reference-steady-map-cache.toml", "--json", "-q"],
            cost=50, ci=False),
        Run("bench-gc-steady-state", ["run", "bench/gc-steady-state.toml", "--json", "-q"], cost=6),
        Run("bench-chip-endurance", ["chip", "endurance", "--chip", "MT29F2G08AAD", "--blocks", "100", "--json"],
            cost=1),
        Run("bench-trace-drive-life", ["lifetime", "zombienand-trace-tlc", "--reserve", "0.3", "--working-set", "0.5",
                                       "--compare-baseline", "--json", "-q"], memory=True, cost=70, ci=False),
        *(Run(f"bench-full-drive-{cell}", ["lifetime", f"zombienand-synthetic-{cell}", "--reserve", "0.05",
                                           "--working-set", "1.0", "--json", "-q"], memory=True, cost=cost)
          for cell, cost in (("mlc", 6), ("tlc", 2))),
        Run("bench-mlc-life", ["run", "bench/zombienand-synthetic-mlc-life.toml", "--json", "-q"], cost=60, ci=False),
        Run("bench-slice-128", ["lifetime", "zombienand-synthetic-tlc", "--capacity", "128GiB", "--slice", "auto",
                                "--json", "-q"], memory=True, cost=150, ci=False),
        Run("bench-write-sections", ["run", "bench/swissbit-write-sections.toml", "--json", "-q"], cost=90,
            ci=False),
        Run("bench-read-sections-memory", ["test", "read-sections", "--device", "swissbit-standard", "--out",
                                           "{out}", "-q"], json=False, memory=True, cost=12),
        Run("bench-pslc-direct-write-memory", ["test", "pslc-fill", "--device", "tlc-dynamic-pslc", "--direct-write",
                                               "--out", "{out}", "-q"], json=False, memory=True, cost=3),
        Run("bench-pslc-aged-memory", ["test", "pslc-fill", "--device", "tlc-dynamic-pslc", "--compare", "aged",
                                       "--out", "{out}", "-q"], json=False, memory=True, cost=4),
        Run("bench-trace-samples", python="claims.benchmarks:trace_samples", cost=2),
        # Shared with claims/power_loss.py (declared the same there).
        Run("bench-power-loss", ["run", "bench/power-loss.toml", "--json", "-q"], cost=90, ci=False),
        Run("bench-snapshot-test-lives", python="claims.benchmarks:snapshot_test_lives", cost=8),
        Run("bench-hostile-inputs", python="claims.benchmarks:hostile_inputs", cost=5, measured=True),
        Run("bench-steady-state-example", python="claims.benchmarks:steady_state_example", cost=8),
        Run("bench-suspend-variants", python="claims.benchmarks:suspend_variants", cost=6),
        Run("bench-retention", ["test", "retention", "--device", "tlc-3d-errors", "--cycles", "1500", "--hours", "500",
                                "--temperature", "52", "--capacity", "2GiB", "--json", "-q"], cost=2),
        Run("bench-serve-compare-sim", ["fio", "bench/serve-compare.fio", "--device", "snia-mlc", "--capacity",
                                        "1GiB", "--json", "-q"], cost=2),
    )
    mqsim_reference(r)
    steady_and_gc(r)
    chip_and_lifetimes(r)
    procedures_and_traces(r)
    power_loss_and_snapshots(r)
    tails_errors_serving(r)


def mqsim_reference(r: Registry) -> None:
    r.check(
        Claim(F, "11,400 IOPS at QD 32 on 16 dies before issue 5; now {iops} IOPS, the link's limit",
              {"iops": V("bench-sata-reads", "qd32", ",.0f")}),
        Claim(F, "The reference run peaks at {peak} MiB (the `bench` example); a fill of the whole drive "
                 "(`bench/mqsim-reference-fill.toml`) at {full} MiB, {per_slot} bytes per 4 KiB slot",
              {"peak": V("bench-example-reference", "peak_rss_mib", ",.0f", tol=MEMORY),
               "full": V("bench-example-fill", "peak_rss_mib", ",.0f", tol=MEMORY),
               "per_slot": V("bench-example-fill", fmt=".1f", tol=MEMORY,
                             get=lambda d: d["peak_rss_mib"] * MIB / d["slots"])}),
        Claim(F, "the fill writes {mb} MB of fresh map memory (4 bytes in each map per unit it writes)",
              {"mb": V("bench-reference-geometry", "fill_map_bytes", ",.0f", get=lambda b: b / MB)}),
        Claim(F, "Peak memory of the MQSim reference: {plain} → {checked} MiB",
              {"plain": V("bench-example-reference", "peak_rss_mib", ",.0f", tol=MEMORY),
               "checked": V("bench-example-reference-integrity", "peak_rss_mib", ",.0f", tol=MEMORY)}),
    )


def steady_and_gc(r: Registry) -> None:
    age = "phases.age"
    writes = "phases.random-write"
    r.check(
        Claim(F, "by simulation — {age_m} M random writes over the working set",
              {"age_m": V("bench-steady", f"{age}.host_requests", ".0f", get=millions)}),
        Table(F, ["phase", "wall s", "rate"], {
            "age (untimed, 0.6 × capacity)": {"rate": Cell({"waf": V("bench-steady", f"{age}.waf", ".2f")},
                                                             "5.4 M requests/s, WAF {waf}")},
            "2 M timed random writes": {"rate": Cell({"waf": V("bench-steady", f"{writes}.waf", ".2f")},
                                                       "3.1 M requests/s, WAF {waf}")},
        }),
        Claim(F, "Simulated figures differ from MQSim's: nandlab reports {iops} IOPS and WAF {waf} where MQSim",
              {"iops": V("bench-steady", f"{writes}.iops", ",.0f"),
               "waf": V("bench-steady", f"{writes}.waf", ".2f")}),
        Claim(F, "capacities of 4 KiB random writes at QD 32 (WAF {waf}: GC at full load throughout).",
              {"waf": V("bench-gc-steady-state", "phases.random-write.waf", ".1f")}),
    )
    map_cache(r)


def map_cache(r: Registry) -> None:
    """The steady config with MQSim's 2 MiB map cache (declared with the paragraph it checks)."""
    writes = "phases.random-write"
    r.check(
        Claim(F, "(`bench/mqsim-reference-steady-map-cache.toml`) gives **{iops} IOPS** (MQSim 6,452), WAF {waf} "
                 "with the translation-page write-backs counted, write p99 {p99} ms: {times}× MQSim's IOPS",
              {"iops": V("bench-steady-map-cache", f"{writes}.iops", ",.0f"),
               "waf": V("bench-steady-map-cache", f"{writes}.waf", ".2f"),
               "p99": V("bench-steady-map-cache", f"{writes}.write_latency_us.p99", ".1f", get=lambda us: us / 1e3),
               "times": V("bench-steady-map-cache", f"{writes}.iops", ".2f", get=lambda iops: iops / MQSIM_IOPS)}),
    )


def chip_and_lifetimes(r: Registry) -> None:
    def lifetimes(get):
        return lambda d: get(d["lifetimes"], d["nominal_endurance"])

    r.check(
        Claim(F, "for 100 blocks whose lifetimes run from {low} to {high} million cycles (median {median} M, "
                 "{times} × the rating; seed 0, the default)",
              {"low": V("bench-chip-endurance", fmt=".2g", get=lifetimes(lambda life, _: min(life) / 1e6)),
               "high": V("bench-chip-endurance", fmt=".2g", get=lifetimes(lambda life, _: max(life) / 1e6)),
               "median": V("bench-chip-endurance", fmt=".1f",
                           get=lifetimes(lambda life, _: statistics.median(life) / 1e6)),
               "times": V("bench-chip-endurance", fmt=".0f",
                          get=lifetimes(lambda life, rated: statistics.median(life) / rated))}),
    )
    life = "bench-trace-drive-life"
    r.check(
        Table(F, ["run", "written until death", "simulated time"], {
            "ZombieNAND": {
                "written until death": Cell({"tb": V(life, "zombie.host_write_bytes", ".2f", get=lambda b: b / 1e12),
                                             "dw": V(life, "zombie.drive_writes", ",.0f")},
                                            "{tb} TB ({dw} drive writes)"),
                "simulated time": Cell({"s": V(life, "zombie.sim_seconds", ",.0f")}, "{s} s")},
            "baseline (blocks retired at death)": {
                "written until death": Cell({"tb": V(life, "baseline.host_write_bytes", ".2f",
                                                     get=lambda b: b / 1e12),
                                             "dw": V(life, "baseline.drive_writes", ",.0f")},
                                            "{tb} TB ({dw} drive writes)"),
                "simulated time": Cell({"s": V(life, "baseline.sim_seconds", ",.0f")}, "{s} s")},
        }),
        Claim(F, "ZombieNAND lives {ratio}× the baseline here; the two runs peak at {mib} MiB.",
              {"ratio": V(life, "lifetime_ratio", ".2f"),
               "mib": V(life, "peak_rss_mib", ",.0f", tol=MEMORY)}),
    )
    mlc, tlc = "bench-full-drive-mlc", "bench-full-drive-tlc"
    r.check(
        Claim(F, "peaked at 925 MB in a 1.5 s run of a 64 MiB drive that dies after {tlc_gb} GB written, and the "
                 "MLC one at 5.5 GB (11.9 s, {mlc_mb} MB written).",
              {"tlc_gb": V(tlc, "host_write_bytes", ".2f", get=lambda b: b / 1e9),
               "mlc_mb": V(mlc, "host_write_bytes", ".0f", get=lambda b: b / MB)}),
        Claim(F, "phase's reads went from p99.9 {p999} µs / max {max} µs to 54,362 / 215,482 (issue 34).",
              {"p999": V("default", "phases.mixed-70r30w.read_latency_us.p999", ",.0f"),
               "max": V("default", "phases.mixed-70r30w.read_latency_us.max", ",.0f")}),
        Claim(F, "MLC 4.5 s, **{mlc_peak} MB peak** (every operation of its life booked on its one die: 5.3 GB "
                 "unbounded, 126 MB joined), TLC 1.2 s, {tlc_peak} MB; the MLC drive writes {bytes} bytes in "
                 "{s} simulated s,",
              {"mlc_peak": V(mlc, "peak_rss_mib", ".0f", get=mb, tol=MEMORY),
               "tlc_peak": V(tlc, "peak_rss_mib", ".0f", get=mb, tol=MEMORY),
               "bytes": V(mlc, "host_write_bytes", ",.0f"),
               "s": V(mlc, "sim_seconds", ",.2f")}),
        Claim(F, "Its ZombieNAND drive dies after {m} M requests (`nandlab run",
              {"m": V("bench-mlc-life", "host_requests", ".0f", get=millions)}),
        Claim(F, "(a 1/{by} slice: {gib} GiB,\n{blocks} blocks) ran in **144.7 s wall, {mb} MB peak**",
              {"by": V("bench-slice-128", "slice.by"),
               "gib": V("bench-slice-128", "slice.simulated_capacity_bytes", ".0f", get=lambda b: b / 2**30),
               "blocks": V("bench-slice-128", "slice.simulated_blocks_per_pool", ",.0f"),
               "mb": V("bench-slice-128", "peak_rss_mib", ".0f", get=mb, tol=MEMORY)}),
        Claim(F, "{tb} TB written, {dw} drive\nwrites, 0.06 % from the 32 GiB drive's exact life.",
              {"tb": V("bench-slice-128", "host_write_bytes", ".0f", get=lambda b: b / 1e12),
               "dw": V("bench-slice-128", "drive_writes", ",.2f")}),
    )


def procedures_and_traces(r: Registry) -> None:
    sections = "bench-write-sections"
    r.check(
        Claim(F, "— {gib} GiB written, {req_m} M requests, {hours} simulated hours, most of them GC-bound with WAF "
                 "up to {waf} (translation-page",
              {"gib": V(sections, "host_write_bytes", ".0f", get=lambda b: b / 2**30),
               "req_m": V(sections, "host_requests", ".1f", get=millions),
               "hours": V(sections, "sim_seconds", ".1f", get=lambda s: s / 3600),
               "waf": V(sections, fmt=".0f",
                        get=lambda d: max(p["waf"] for p in d["phases"] if p["waf"] is not None))}),
        Table(F, ["command", "wall", "peak memory"], {
            "`nandlab test read-sections --device swissbit-standard --out DIR` (128 GiB read)":
                {"peak memory": Cell({"mb": V("bench-read-sections-memory", "peak_rss_mib", ".0f", get=mb,
                                              tol=MEMORY)}, "{mb} MB")},
            "`nandlab test pslc-fill --device tlc-dynamic-pslc --direct-write --out DIR` (one 32 GiB fill)":
                {"peak memory": Cell({"mb": V("bench-pslc-direct-write-memory", "peak_rss_mib", ".0f", get=mb,
                                              tol=MEMORY)}, "{mb} MB")},
            "`nandlab test pslc-fill --device tlc-dynamic-pslc --compare aged --out DIR` (two fills)":
                {"peak memory": Cell({"mb": V("bench-pslc-aged-memory", "peak_rss_mib", ".0f", get=mb,
                                              tol=MEMORY)}, "{mb} MB")},
        }),
    )
    samples = "bench-trace-samples"
    msr, blk = f"{MSR}", f"{BLKPARSE}"

    def of(name: str, key: str, scale: float = 1.0):
        return lambda d: d[name][key] * scale

    r.check(
        Claim(F, "concatenated 500 times ({msr_m} M records, {msr_mb} MB) and the blkparse sample 100 times "
                 "({blk_lines} M lines, of which {blk_m} M are dispatch events, {blk_mb} MB)",
              {"msr_m": V(samples, fmt=".2f", get=of(msr, "records", 500 / 1e6)),
               "msr_mb": V(samples, fmt=".0f", get=of(msr, "file_bytes", 500 / MB)),
               "blk_lines": V(samples, fmt=".2f", get=of(blk, "lines", 100 / 1e6)),
               "blk_m": V(samples, fmt=".2f", get=of(blk, "records", 100 / 1e6)),
               "blk_mb": V(samples, fmt=".0f", get=of(blk, "file_bytes", 100 / MB))}),
        Table(F, ["trace", "reading", "with statistics"], {
            "MSR CSV": {"with statistics": Cell({"fp": V(samples, fmt=".0f", get=of(msr, "footprint_bytes", 1 / MIB))},
                                                "7.3 M per second ({fp} MiB footprint)")},
            "blkparse text": {"with statistics": Cell(
                {"kib": V(samples, fmt=".0f", get=of(blk, "mean_request_bytes", 1 / 1024)),
                 "counts": V(samples, fmt=".0f", get=of(blk, "mean_request_bytes", 1 / 4096)),
                 "fp": V(samples, fmt=".1f", get=of(blk, "footprint_bytes", 1 / 2**30))},
                "1.2 M records per second: {kib} KiB requests, {counts} block counts each, {fp} GiB footprint")},
        }),
        Claim(F, "MSR `rsrch_1` ({records} records, {random} % random writes, {fp} MiB footprint)",
              {"records": V(samples, fmt=",.0f", get=of(msr, "records")),
               "random": V(samples, fmt=".0f", get=of(msr, "write_random_percent")),
               "fp": V(samples, fmt=".0f", get=of(msr, "footprint_bytes", 1 / MIB))}),
    )


def power_loss_and_snapshots(r: Registry) -> None:
    cuts = "bench-power-loss"
    w = "phases.random-write"
    r.check(
        Claim(F, "a cut every second on average): {req_k} K requests, {cuts} cuts ({units_m} M units judged at each).",
              {"req_k": V(cuts, f"{w}.host_requests", ".0f", get=lambda n: n / 1e3),
               "cuts": V(cuts, f"{w}.power_loss.cuts", ",.0f"),
               "units_m": V(cuts, "device.user_units", ".0f", get=millions)}),
        Claim(F, "Mean recovery {ms} ms of simulated time, {lost} acknowledged writes lost",
              {"ms": V(cuts, f"{w}.power_loss.recovery_us_mean", ".0f", get=lambda us: us / 1e3),
               "lost": V(cuts, f"{w}.power_loss.acknowledged_lost_units", ",.0f")}),
        Claim(F, "({moved_m} M units moved in all, {off_m} M booked page programs called off); the program counters "
                 "count programs as booked, so the phase's WAF ({waf}) overstates the flash work: without the "
                 "programs called off (`power_loss.flash_waf`) it is {flash_waf}.",
              {"moved_m": V(cuts, f"{w}.power_loss.relocated_units", ".0f", get=millions),
               "off_m": V(cuts, f"{w}.power_loss.in_flight.discarded_programs", ".0f", get=millions),
               "waf": V(cuts, f"{w}.waf", ".0f"),
               "flash_waf": V(cuts, f"{w}.power_loss.flash_waf", ".2f")}),
        Claim(F, "a **{size} MiB** snapshot (the two 4-byte maps are {share} % of it)",
              {"size": V("bench-snapshot", "snapshot_mib", ",.0f"),
               "share": V(("bench-snapshot", "bench-reference-geometry"), fmt=".0f",
                          get=lambda s, g: 100 * 4 * (g["user_units"] + g["slots"]) / (s["snapshot_mib"] * MIB))}),
        Claim(F, "mostly the map against its reverse ({units} M units, a random access each into a {mb} MB "
                 "reverse map)",
              {"units": V("bench-reference-geometry", "user_units", ".0f", get=millions),
               "mb": V("bench-reference-geometry", "reverse_map_bytes", ".0f", get=lambda b: b / MB)}),
        Claim(F, "a 32 MiB pSLC ZombieNAND drive run to death: {m} M requests, {gb} GB)",
              {"m": V("bench-snapshot-test-lives", "rust.host_requests", ".1f", get=millions),
               "gb": V("bench-snapshot-test-lives", "rust.host_write_bytes", ".1f", get=lambda b: b / 1e9)}),
        Claim(F, "kills a 64 MiB lifetime run ({m} M requests, {gb} GB to death)",
              {"m": V("bench-snapshot-test-lives", "python.host_requests", ".1f", get=millions),
               "gb": V("bench-snapshot-test-lives", "python.host_write_bytes", ".0f", get=lambda b: b / 1e9)}),
    )
    hostile = "bench-hostile-inputs"

    def peak(name: str) -> V:
        return V(hostile, f"{name}.peak_rss_mib", ".0f", get=mb, tol=MEMORY)

    r.check(
        Table(F, ["input", "before", "after"], {
            "`nandlab run /dev/zero`": {"after": Cell(
                {"mb": peak("run-dev-zero")},
                "refused in 0.5 s, ≈ {mb} MB (the config cap: 64 MiB, read to 64 MiB + 1 byte)")},
            "330 KB zstd trace expanding to 10 GiB with no newline, `trace stats`": {"after": Cell(
                {"mb": peak("trace-stats-bomb")}, "refused at line 1 in 0.5 s, {mb} MB (lines capped at 8 KiB)")},
            "the same, `trace replay`": {"after": Cell({"mb": peak("trace-replay-bomb")}, "refused in 0.4 s, {mb} MB")},
            "10,000 `[[phase.job]]` tables": {"after": Cell(
                {"mb": peak("jobs-10000")},
                "refused in 0.40 s, {mb} MB (at most 4,096 jobs a phase, fio's limit; validation itself 28 ms)")},
            "4,096 jobs under `NANDLAB_MEMORY_LIMIT=1GiB`": {"after": Cell(
                {"gib": V(hostile, "jobs-4096-limit.estimate_gib", ".1f")},
                "refused in 0.36 s: the estimate ({gib} GiB) counts every job's histograms, generator and queue")},
        }),
    )


def tails_errors_serving(r: Registry) -> None:
    rw, mixed = "phases.random-write", "phases.mixed-70r30w"

    def latencies(run: str, path: str, keys=("mean", "p50", "p99", "p999", "max")) -> Cell:
        names = {k: f"l{i}" for i, k in enumerate(keys)}
        return Cell({names[k]: V(run, f"{path}.{k}", ",.0f") for k in keys},
                    " / ".join("{" + names[k] + "}" for k in keys))

    steady = "bench-steady-state-example"
    r.check(
        Table(F, ["run", "before", "now"], {
            "`nandlab run` (default), `random-write`: IOPS, WAF": {"now": Cell(
                {"iops": V("default", f"{rw}.iops", ",.0f"), "waf": V("default", f"{rw}.waf", ".2f")},
                "{iops}, {waf}")},
            "— write mean / p50 / p99 / p99.9 / max": {"now": latencies("default", f"{rw}.write_latency_us")},
            "`mixed-70r30w`: IOPS": {"now": V("default", f"{mixed}.iops", ",.0f")},
            "— read mean / p50 / p99 / p99.9 / max": {"now": latencies("default", f"{mixed}.read_latency_us")},
            "`examples/steady-state.toml`, `random-read`: first window, phase": {"now": Cell(
                {"first": V(steady, "first_window_iops", ",.0f"), "phase": V(steady, "iops", ",.0f")},
                "{first} IOPS, {phase} IOPS")},
            "— read max": {"now": V(steady, "read_latency_us.max", ",.0f")},
        }),
    )
    variants = "bench-suspend-variants"
    columns = ("mean", "p50", "p99", "p999", "max")
    headers = ("mean", "p50", "p99", "p99.9", "max")

    def row(run: str, path: str) -> dict[str, V]:
        return {h: V(run, f"{path}.{k}", ",.0f") for h, k in zip(headers, columns)}

    r.check(
        Table(F, ["dies", *headers], {
            "first come, first served (`read_priority = false`)": row(variants, "fifo"),
            "read priority": row(variants, "priority"),
            "+ `suspend = \"erase\"`": row(variants, "erase"),
            "+ `suspend = \"program+erase\"`": row("suspend", "phases.mixed-70r30w.read_latency_us"),
        }),
        Claim(F, "the bake, {reads} page reads, 0.5 s;", {"reads": V("bench-retention", "ecc_page_reads", ",.0f")}),
    )
    fio = "bench-serve-compare-sim"

    def us(path: str) -> V:
        return V(fio, path, ",.1f", get=lambda ns: ns / 1e3)

    r.check(
        Table(F, ["", "IOPS", "mean latency"], {
            "realtime, fill (1 MiB writes, QD 4): fio / `nandlab fio`": {
                "IOPS": Cell({"sim": V(fio, "jobs.fill.write.iops", ",.0f")}, "139 / {sim}"),
                "mean latency": Cell({"sim": V(fio, "jobs.fill.write.lat_ns.mean", ",.0f", get=lambda ns: ns / 1e3)},
                                     "28,729 / {sim} µs")},
            "`nandlab fio`, randread QD 1": {
                "IOPS": V(fio, "jobs.qd1.read.iops", ",.0f"),
                "mean latency": Cell({"sim": us("jobs.qd1.read.lat_ns.mean")}, "{sim} µs")},
            "realtime, randread QD 16, auto: fio / `nandlab fio`": {
                "IOPS": Cell({"sim": V(fio, "jobs.qd16.read.iops", ",.0f")}, "39,132 / {sim}"),
                "mean latency": Cell({"sim": us("jobs.qd16.read.lat_ns.mean")}, "408.5 / {sim} µs")},
        }),
    )
