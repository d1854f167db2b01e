"""The ``nandlab`` command: a group of commands, a module each (``run`` and ``resume``, ``presets``,
``lifetime``, ``chip``, ``fio``, ``trace``, ``test``, ``matrix``, ``sweep``, ``report``, ``serve``, ``import``), with the
options they share (``options``), one-line errors (``errors``) and what they print (``console``)."""

from __future__ import annotations

import click

from nandlab.cli import chip, fio, importers, lifetime, matrix, presets, report, run, serve, sweep, test, trace
from nandlab.cli.errors import Cli

__all__ = ["cli", "main"]


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="nandlab")
def cli() -> None:
    """nandlab: a NAND flash SSD simulator."""


for command in (
    run.run, run.resume, presets.list_presets, presets.default_config, report.report_command,
    lifetime.lifetime_command, lifetime.lifetime_grid_command, lifetime.lifetime_traces_command, chip.chip,
    fio.fio_command, trace.trace_group,
    test.test_group, sweep.sweep_command, matrix.matrix_command, serve.serve_command, importers.import_group,
):
    cli.add_command(command)


def main() -> None:
    """Entry point of the ``nandlab`` command."""
    cli(prog_name="nandlab")
