"""``nandlab chip``: the chip test bench (list, endurance, latency of raw NAND chips)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from nandlab import chipbench
from nandlab.cli import options
from nandlab.cli.console import show
from nandlab.cli.errors import Cli
from nandlab.procedures import chip as chip_procedures
from nandlab.procedures.base import Finite
from nandlab.terminal import stdout_console

CHIP = click.option("--chip", "name", required=True, metavar="NAME", help="Chip preset (see: nandlab chip list).")


@click.group("chip", cls=Cli, short_help="The chip test bench: endurance and latency of raw NAND chips.")
def chip() -> None:
    """The chip test bench: endurance and latency of raw NAND chips (Desnoyers' experiments)."""


@chip.command("list")
def chip_list() -> None:
    """List the chip presets (Desnoyers' Table 1 chips, SNIA's dies)."""
    table = Table("Chip", "Description", title="Chip presets")
    for name, description in chipbench.chips().items():
        table.add_row(name, description)
    stdout_console().print(table)


@chip.command("endurance", short_help="Cycle blocks to failure (Desnoyers' method): lifetimes and latency.")
@CHIP
@click.option("--blocks", type=click.IntRange(1, 1_000_000), default=100, show_default=True, help="Blocks to test.")
@click.option(
    "--pattern",
    type=click.Choice(["single-page", "full-block"]),
    default="single-page",
    show_default=True,
    help="Program one page with zeros per cycle, or the whole block.",
)
@click.option("--temperature", "temperature_c", type=Finite(-60.0, 200.0), default=25.0, show_default=True,
              help="°C.")
@click.option("--seed", type=options.SEED, default=0, show_default=True, metavar="S")
@options.AS_JSON
@options.out("Write JSON, Parquet, PNG.")
def chip_endurance(
    name: str, blocks: int, pattern: str, temperature_c: float, seed: int, as_json: bool, out: Path | None
) -> None:
    """Cycle blocks to failure: program, erase, repeat until an operation fails (Desnoyers' method)."""
    result = chip_procedures.endurance(name, blocks=blocks, pattern=pattern, temperature_c=temperature_c, seed=seed)
    show(result, as_json, out)


@chip.command("latency", short_help="Read, program and erase latency over a block's life vs the datasheet.")
@CHIP
@options.AS_JSON
@options.out("Write JSON and PNG.")
def chip_latency(name: str, as_json: bool, out: Path | None) -> None:
    """Read, program and erase latency over a block's life (worst / typical / best) beside the datasheet."""
    show(chip_procedures.latency(name), as_json, out)
