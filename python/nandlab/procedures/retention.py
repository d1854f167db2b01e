"""``nandlab test retention``: JESD218's data-retention test on a simulated drive. Every block is
cycled to ``--cycles`` program/erase cycles (an aged drive, as ``[device.wear] initial`` ages one),
the drive is filled, powered off for ``--hours`` at ``--temperature`` (retention ages on the
Arrhenius clock of ``[device.errors]``), then read end to end. It passes when the uncorrectable bit
error rate the model predicts stays under the class's target (``uber_target``: client 10⁻¹⁵).

UBER is JESD218's: failed 512-byte sectors per bit read (``uber_codewords``: failed codewords). The
verdict rests on ``uber_expected``, the UBER expected over the blocks' endurance spread — a run's own
``uber`` follows the few weakest blocks its seed drew, and moves by orders of magnitude between
seeds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table

from nandlab import api, qualify
from nandlab._core import ConfigError
from nandlab.output import number
from nandlab.procedures.base import DocumentResult, Finite, Procedure
from nandlab.report.page import Report, existing_figure, read_json
from nandlab.terminal import safe

CELLS = ("slc", "mlc", "tlc", "qlc")
READ_BLOCK = "128KiB"
"""The read-back pass's request size: sequential, at queue depth 1."""
CURVE_CYCLES = (0.5, 1.0, 1.5, 2.0)
"""The figure's lines: these shares of ``--cycles``."""
CURVE_STEPS = 4
"""The figure's points per line: the bake split in this many spells, a sample read after each."""
CURVE_READS = 2000
"""Random 4 KiB reads per sample."""
MAX_HOURS = 1.2e6
"""The longest bake (137 years: a power-off phase lasts at most 146)."""
FIGURE = "retention.png"
FIGURES = ("uber", "uber_codewords", "uber_target", "rber_mean", "rber_p99", "rber_max", "retries_per_read", "soft_decodes",
           "uncorrectable_reads", "ecc_page_reads")
"""The read-back phase's error figures the result carries."""


@dataclass(frozen=True)
class Retention(DocumentResult):
    """The test's settings, the read-back's figures and ``pass``."""

    kind = "retention"

    def files(self, out: Path) -> list[Path]:
        """result.json and the figure of RBER against cycles and retention."""
        paths = super().files(out)
        from nandlab import plots  # matplotlib loads only to draw

        plots.retention(self.document, out / FIGURE)
        return [*paths, out / FIGURE]

    def print(self, console: Console) -> None:
        d = self.document
        verdict = "[green]PASS[/]" if d["pass"] else "[red]FAIL[/]"
        title = (f"nandlab test retention: {safe(d['device'])}, {number(d['cycles'])} cycles, "
                 f"{number(d['hours'])} h at {number(d['temperature_c'])} °C — {verdict}")
        table = Table(box=box.SIMPLE_HEAD, title=title,
                      caption="UBER: failed 512-byte sectors per bit read (JESD218) that the model predicts, "
                      "expected over the blocks' endurance spread (the verdict) and for this drive's own blocks "
                      "(this seed's weakest decide it), against the class's target; RBER: raw bit error rate of "
                      "the pages read; retries per read, soft decodes, reads reported uncorrectable.",
                      caption_justify="left")
        for header in ("UBER expected", "UBER drive", "Target", "RBER mean", "RBER p99", "Retries", "Soft",
                       "UECC reads", "Read p99 µs", "p99.9 µs"):
            table.add_column(header, justify="right")
        table.add_row(f"{d['uber_expected']:.2e}", f"{d['uber']:.2e}", f"{d['uber_target']:.0e}",
                      f"{d['rber_mean']:.2e}", f"{d['rber_p99']:.2e}",
                      f"{d['retries_per_read']:.3g}", str(d["soft_decodes"]), str(d["uncorrectable_reads"]),
                      number(d["read_latency_us"]["p99"]), number(d["read_latency_us"]["p999"]))
        console.print(table)

    @classmethod
    def report(cls, directory: Path) -> Report:
        d = read_json(directory / "result.json")
        r = Report(directory, f"nandlab test retention: {d['device']}", "JESD218-style data retention")
        for key in ("cycles", "hours", "temperature_c", "params", "uber_expected", "pass"):
            r.fact(key, str(d[key]))
        r.table("Read-back", [{k: d[k] for k in FIGURES}])
        existing_figure(r, directory, "RBER against cycles and retention", FIGURE,
                        "Sample reads (2,000 random 4 KiB) before the bake and after each quarter of it, at "
                        "half, once, 1.5 and twice the test's cycles; UBER below 1e-30 is drawn at 1e-30.")
        return r


def aged_with_errors(
    device: qualify.DeviceSource, capacity: str | int | None, cycles: float, test: str
) -> dict[str, Any]:
    """The device's config with its error model on (power-law unless it sets one) and every block at
    ``cycles`` program/erase cycles. Past its rating a drive's blocks would be retired: the rating is
    raised (as a bench cycles a chip past it) so that every block lives to be read."""
    config = qualify.device_config(device, capacity)
    errors = config["device"].setdefault("errors", {})
    if errors.setdefault("model", "power-law") == "none":
        raise ConfigError(f'[device.errors] model: the {test} test needs an error model ("power-law" or "vt")')
    if cycles > 0:
        resolved = api.make_simulator({**config, "phase": [{"kind": "trim"}]}).config
        cell = CELLS.index(resolved["geometry"]["cell"])
        rated = list(resolved["device"]["wear"]["rated"])
        # A nominal block's cycles are its stress: initial × rating; a rating 4× the cycles keeps
        # the weakest blocks of the spread alive.
        rated[cell] = max(rated[cell], 4.0 * cycles)
        wear = config["device"].setdefault("wear", {})
        wear["rated"] = dict(zip(CELLS, rated))
        wear["initial"] = cycles / rated[cell]
    return config


def run(
    device: qualify.DeviceSource,
    cycles: float,
    hours: float,
    temperature: float,
    capacity: str | int | None = None,
    seed: int = qualify.SEED,
    progress: Any = None,
) -> Retention:
    """Age the drive to ``cycles`` (``aged_with_errors``), fill it, bake it ``hours`` at
    ``temperature`` °C powered off, read it all back; the result's ``pass`` is ``uber_expected`` (over
    the endurance spread) ≤ ``uber_target``: its bit errors alone decide."""
    config = aged_with_errors(device, capacity, cycles, "retention")
    bake_ns = round(hours * 3600e9)  # a bake shorter than the clock's nanosecond is none
    bake = [{"name": "bake", "kind": "power-off", "duration": f"{bake_ns}ns", "temperature_c": temperature}]
    phases = [
        {"name": "fill", "kind": "fill"},
        *(bake if bake_ns > 0 else []),
        {"name": "read-back", "read_fraction": 1.0, "pattern": "sequential", "block_size": READ_BLOCK,
         "volume": 1.0, "queue_depth": 1},
    ]
    run_config = {**config, "phase": phases}
    expected = api.make_simulator(run_config, seed).expected_uber(hours, temperature)
    result = api.every_phase(api.run(run_config, seed=seed, progress=progress))
    read = result.phases[-1]
    settings = result.config["device"]["errors"]
    document = {
        "device": qualify._label(device),
        "cycles": cycles,
        "hours": hours,
        "temperature_c": temperature,
        "params": settings["params_name"],
        **{key: read[key] for key in FIGURES},
        "uber_expected": expected,
        "read_latency_us": read["read_latency_us"],
        "pass": bool(expected <= read["uber_target"]),
        "curves": _curves(device, capacity, cycles, hours, temperature, seed),
    }
    return Retention(document)


def _curves(
    device: qualify.DeviceSource, capacity: str | int | None, cycles: float, hours: float, temperature: float,
    seed: int,
) -> list[dict[str, Any]]:
    """RBER, retries and UBER of sample reads at shares of ``cycles`` (one line each) after each
    spell of the bake split in ``CURVE_STEPS``."""
    sample = {"read_fraction": 1.0, "block_size": "4KiB", "requests": CURVE_READS, "queue_depth": 1}
    spell_ns = round(hours * 3600e9 / CURVE_STEPS)  # spells shorter than the clock's nanosecond are none
    spell = {"kind": "power-off", "duration": f"{spell_ns}ns", "temperature_c": temperature}
    rows = []
    for share in CURVE_CYCLES if cycles > 0 else (1.0,):
        config = aged_with_errors(device, capacity, share * cycles, "retention")
        phases: list[dict[str, Any]] = [{"kind": "fill"}, {"name": "sample-0", **sample}]
        for k in range(1, CURVE_STEPS + 1 if spell_ns > 0 else 1):
            phases += [spell, {"name": f"sample-{k}", **sample}]
        result = api.every_phase(api.run({**config, "phase": phases}, seed=seed))
        for phase in result.phases:
            if phase["name"].startswith("sample-"):
                k = int(phase["name"].removeprefix("sample-"))
                rows.append({"cycles": share * cycles, "hours": hours * k / CURVE_STEPS,
                             "rber_mean": phase["rber_mean"], "retries_per_read": phase["retries_per_read"],
                             "uber": phase["uber"]})
    return rows


PROCEDURE = Procedure(
    "retention", "nandlab test retention", Retention, run,
    options=[
        click.option("--cycles", type=Finite(0, 1e7), required=True, metavar="N",
                     help="Program/erase cycles every block has had."),
        click.option("--hours", type=Finite(0, MAX_HOURS), required=True, metavar="H",
                     help="Hours powered off (JESD218 client: 1 year at 30 °C, or 500 h at 52 °C)."),
        click.option("--temperature", type=Finite(-40, 125), default=30.0, show_default=True,
                     metavar="C", help="°C while powered off."),
    ],
    short_help="JESD218 data retention: cycle, bake powered off, read back; UBER against the target.",
    help="""JESD218-style data retention: every block at --cycles program/erase cycles, the drive
    filled, powered off --hours at --temperature (retention ages on the Arrhenius clock of
    [device.errors]), then read back end to end; prints uber_expected (JESD218's UBER, failed
    512-byte sectors per bit read, expected over the blocks' endurance spread), this drive's own
    uber, rber_mean, retries_per_read and pass (uber_expected under the class's uber_target). The device's [device.errors] model is turned on
    (power-law) unless it sets one.""",
)
