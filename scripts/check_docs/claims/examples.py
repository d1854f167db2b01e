"""examples/*.toml and examples/*.fio: the figures their descriptions and comments state (drive sizes,
timings, a job file's sizes), from the drive each file makes as the engine resolves it. Inputs a file
sets itself (a rate, a queue depth, a capacity it names) are not re-checked; what the engine derives
from them (user capacity, flash, a preset's timings) and what a parser reads (a fio job's sizes and depth) is."""

from __future__ import annotations

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib
from pathlib import Path
from typing import Any

from check_docs.model import Claim, Registry, Run, Value as V

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = ("life", "serve", "steady-state", "suspend", "volatile-drive", "power-loss-cuts", "tlc-3d-vt",
           "tlc-3d-errors-no-spread")
RUN = "example-drives"
GIB = 2 ** 30


def drives(out: Path) -> dict[str, Any]:
    """Each example config's drive (the engine's ``device``: capacities in bytes, dies, ...) and each cell
    mode's timings in µs; and randwrite.fio's phases as `nandlab fio` reads them."""
    import nandlab
    from nandlab import fio

    result: dict[str, Any] = {}
    for name in CONFIGS:
        config = tomllib.loads((ROOT / "examples" / f"{name}.toml").read_text())
        config.setdefault("phase", [{"requests": 1}])  # device files (no workload) still make a drive
        sim = nandlab.make_simulator(config)
        timing = {mode: {"program_us": t["program_ns"][0] / 1e3, "read_us": t["read_ns"][0] / 1e3}
                  for mode, t in zip(("slc", "mlc", "tlc", "qlc"), sim.config["device"]["timing"])}
        result[name] = {**sim.device, "timing": timing}
    jobs = fio.load(ROOT / "examples" / "randwrite.fio")
    result["randwrite-fio"] = {"phases": jobs.phases}
    return result


def gib(path: str):
    return V(RUN, path, get=lambda b: b / GIB, fmt=".3g")


def size(text: str) -> int:
    """A phase's size as `nandlab fio` writes it ("4096B")."""
    assert text.endswith("B") and text[:-1].isdigit(), text
    return int(text[:-1])


def declare(r: Registry) -> None:
    r.run(Run(RUN, python="claims.examples:drives", cost=2))
    write = "randwrite-fio.phases.randwrite"
    r.check(
        Claim("examples/steady-state.toml", "on an MLC drive of {raw} GiB of flash ({user} GiB user",
              {"raw": gib("steady-state.raw_capacity_bytes"), "user": gib("steady-state.user_capacity_bytes")}),
        Claim("examples/steady-state.toml", "on an MLC drive of {raw} GiB of flash ({user} GiB for the user)",
              {"raw": gib("steady-state.raw_capacity_bytes"), "user": gib("steady-state.user_capacity_bytes")}),
        Claim("examples/suspend.toml", "Aged MLC drive of {raw} GiB of flash ({user} GiB for the user)",
              {"raw": gib("suspend.raw_capacity_bytes"), "user": gib("suspend.user_capacity_bytes")}),
        Claim("BENCHMARKS.md", "`examples/suspend.toml` (an aged MLC drive of {raw} GiB of flash, {user} GiB for\n"
              "the user,", {"raw": gib("suspend.raw_capacity_bytes"), "user": gib("suspend.user_capacity_bytes")}),
        Claim("examples/serve.toml", "SNIA tutorial's MLC drive at {user} GiB, filled first so that reads find data "
                                     "on flash ({tr} us tR,",
              {"user": gib("serve.user_capacity_bytes"), "tr": V(RUN, "serve.timing.mlc.read_us", ".0f")}),
        Claim("examples/randwrite.fio", "; {bs} KiB random writes at queue depth {qd} for {gib} GiB,",
              {"bs": V(RUN, f"{write}.block_size", get=lambda s: size(s) / 1024, fmt="g"),
               "qd": V(RUN, f"{write}.queue_depth"),
               "gib": V(RUN, f"{write}.volume", get=lambda s: size(s) / GIB, fmt="g")}),
    )
