"""The ``nandlab`` command: a group of commands, a module each (``run`` and ``resume``, ``presets``,
``lifetime``, ``chip``, ``fio``, ``trace``, ``test``, ``matrix``, ``sweep``, ``report``, ``serve``, ``import``), with the
options they share (``options``), one-line errors (``errors``) and what they print (``console``)."""

from __future__ import annotations

import importlib

import click

from nandlab.cli.errors import Cli

__all__ = ["cli", "main"]

COMMANDS = {
    "run": ("run", "run"),
    "resume": ("run", "resume"),
    "presets": ("presets", "list_presets"),
    "default-config": ("presets", "default_config"),
    "report": ("report", "report_command"),
    "lifetime": ("lifetime", "lifetime_command"),
    "lifetime-grid": ("lifetime", "lifetime_grid_command"),
    "lifetime-traces": ("lifetime", "lifetime_traces_command"),
    "chip": ("chip", "chip"),
    "fio": ("fio", "fio_command"),
    "trace": ("trace", "trace_group"),
    "test": ("test", "test_group"),
    "sweep": ("sweep", "sweep_command"),
    "matrix": ("matrix", "matrix_command"),
    "serve": ("serve", "serve_command"),
    "import": ("importers", "import_group"),
}
"""Each command's module under ``nandlab.cli`` and its name there: a command's module (and what it
imports: polars, matplotlib, the procedures) loads only when that command runs, so that ``nandlab
presets`` starts in a tenth of a second."""


class LazyCli(Cli):
    """The ``nandlab`` group, its commands imported when named (``COMMANDS``)."""

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context | None, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name]
        return getattr(importlib.import_module(f"nandlab.cli.{module}"), attribute)


@click.group(cls=LazyCli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="nandlab")
def cli() -> None:
    """nandlab: a NAND flash SSD simulator."""


def main() -> None:
    """Entry point of the ``nandlab`` command."""
    cli(prog_name="nandlab")
