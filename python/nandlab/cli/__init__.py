"""The ``nandlab`` command: a group of commands, a module each (``run`` and ``resume``, ``presets``,
``lifetime``, ``chip``, ``fio``, ``trace``, ``test``, ``matrix``, ``sweep``, ``report``, ``serve``, ``import``), with the
options they share (``options``), one-line errors (``errors``) and what they print (``console``)."""

from __future__ import annotations

import importlib

import click

from nandlab.cli.errors import Cli

__all__ = ["cli", "main"]

COMMANDS = {
    "run": ("run", "run", "Run an experiment (the built-in default without CONFIG.toml)."),
    "resume": ("run", "resume", "Go on with a run from its snapshot (nandlab run --snapshot)."),
    "presets": ("presets", "list_presets", "List the device presets, or print one as TOML."),
    "default-config": ("presets", "default_config", "Print the default experiment as TOML."),
    "report": ("report", "report_command", "Build the self-contained HTML report of a result directory."),
    "lifetime": ("lifetime", "lifetime_command", "Run a drive from pristine to dead; ZombieNAND beside a baseline."),
    "lifetime-grid": ("lifetime", "lifetime_grid_command", "The ZombieNAND paper's synthetic grid (its Fig. 3)."),
    "lifetime-traces": ("lifetime", "lifetime_traces_command", "The ZombieNAND paper's trace study (its Figs. 4-6)."),
    "chip": ("chip", "chip", "The chip test bench: endurance and latency of raw NAND chips."),
    "fio": ("fio", "fio_command", "Run a fio job file (or fio's command-line jobs) on a simulated drive."),
    "trace": ("trace", "trace_group", "Real block I/O traces: what they hold, and replays on a simulated drive."),
    "test": ("test", "test_group", "Media qualification: Swissbit AN2103, JESD218 retention, read disturb."),
    "sweep": ("sweep", "sweep_command",
              "Run a parameter sweep: one run per grid point, on this machine or a dask cluster."),
    "matrix": ("matrix", "matrix_command",
               "SNIA-style matrices: IOPS and MB/s over R/W mix x block size, burst and steady."),
    "serve": ("serve", "serve_command", "Serve a simulated drive over NBD to real programs (fio, qemu, nbdcopy)."),
    "import": ("importers", "import_group", "Other simulators' configurations as nandlab experiments (mqsim)."),
}
"""Each command's module under ``nandlab.cli``, its name there and its short help: a command's module (and
what it imports: polars, matplotlib, the procedures) loads only when that command runs, so that ``nandlab
presets`` and ``nandlab --help`` start in a tenth of a second (a test keeps each short help the command's
own)."""


class LazyCli(Cli):
    """The ``nandlab`` group, its commands imported when named (``COMMANDS``)."""

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context | None, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        return getattr(importlib.import_module(f"nandlab.cli.{module}"), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help, without importing them."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in self.list_commands(ctx)])


@click.group(cls=LazyCli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="nandlab")
def cli() -> None:
    """nandlab: a NAND flash SSD simulator."""


def main() -> None:
    """Entry point of the ``nandlab`` command."""
    cli(prog_name="nandlab")
