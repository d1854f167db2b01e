"""``nandlab test``: the media qualification procedures, one command per registered procedure with
``options`` (``nandlab.procedures``): the options every one takes, then its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from nandlab import qualify
from nandlab.cli import options
from nandlab.cli.console import LazyProgress, show
from nandlab.cli.errors import Cli

COMMON = (
    options.device("Device preset (see: nandlab presets) or a TOML file: its [device] and [ftl], not its phases."),
    options.capacity(),
    click.option("--seed", type=options.SEED, default=qualify.SEED, show_default=True, metavar="N"),
    options.AS_JSON,
    options.out("Write series.parquet, the sections/phases CSV, result.json and a PNG to DIR."),
    options.QUIET,
)
"""The options every ``nandlab test`` procedure takes."""


class _Procedures(Cli):
    """``nandlab test``'s commands: the registered procedures with ``options``."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from nandlab import procedures

        return sorted(name for name, procedure in procedures.PROCEDURES.items() if procedure.options is not None)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from nandlab import procedures

        procedure = procedures.get(name)
        if procedure is None or procedure.options is None:
            return None

        def command(device: str, as_json: bool, out: Path | None, quiet: bool, **settings: Any) -> None:
            stderr = Console(stderr=True, quiet=quiet)
            with LazyProgress(stderr) as progress:
                result = procedure.run(device, progress=progress, **settings)
            show(result, as_json, out, stderr)

        for option in reversed([*COMMON, *procedure.options]):
            command = option(command)
        return click.command(name, help=procedure.help, short_help=procedure.short_help)(command)


@click.group("test", cls=_Procedures, short_help="Media qualification: Swissbit AN2103, JESD218 retention, read disturb.")
def test_group() -> None:
    """Media qualification procedures of Swissbit's application note AN2103: the write test (its
    Fig. 1), the read test (its Fig. 6) and the pSLC-cache fill (its Figs. 2-5)."""
