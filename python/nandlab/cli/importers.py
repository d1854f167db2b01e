"""``nandlab import``: other simulators' configurations as nandlab experiments (``mqsim``)."""

from __future__ import annotations

from pathlib import Path

import click

from nandlab import mqsim
from nandlab.cli.errors import Cli


@click.group("import", cls=Cli, short_help="Other simulators' configurations as nandlab experiments (mqsim).")
def import_group() -> None:
    """Turn another simulator's configuration into a nandlab experiment (TOML on stdout)."""


@import_group.command("mqsim", short_help="MQSim's ssdconfig.xml and workload.xml as a nandlab experiment.")
@click.argument("ssdconfig", type=click.Path(dir_okay=False, path_type=Path), metavar="SSDCONFIG.xml")
@click.argument("workload", required=False, type=click.Path(dir_okay=False, path_type=Path),
                metavar="[WORKLOAD.xml]")
@click.option("--scenario", type=click.IntRange(1, 10**6), default=1, show_default=True, metavar="N",
              help="Which <IO_Scenario> of WORKLOAD.xml (1 is the first).")
def import_mqsim(ssdconfig: Path, workload: Path | None, scenario: int) -> None:
    """MQSim's device (SSDCONFIG.xml) and one IO scenario of its workload as a nandlab experiment,
    every key commented with the MQSim parameter it came from and what nandlab models differently.

    \b
    nandlab import mqsim ssdconfig.xml workload.xml > experiment.toml && nandlab run experiment.toml
    """
    click.echo(mqsim.import_config(ssdconfig, workload, scenario), nl=False)
