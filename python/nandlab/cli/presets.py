"""``nandlab presets`` and ``nandlab default-config``: the built-in device presets and the default
experiment, as tables or TOML to copy and edit."""

from __future__ import annotations

import click
from rich.table import Table

from nandlab._core import default_config_toml, preset_toml, presets
from nandlab.terminal import stdout_console


@click.command("presets", short_help="List the device presets, or print one as TOML.")
@click.argument("name", required=False)
def list_presets(name: str | None) -> None:
    """List the device presets ([device] preset = "NAME"), or print preset NAME as TOML."""
    if name is not None:
        click.echo(preset_toml(name).rstrip("\n"))
        return
    table = Table("Preset", "Description", title="Device presets")
    for preset, description in presets().items():
        table.add_row(preset, description)
    stdout_console().print(table)


@click.command("default-config", short_help="Print the default experiment as TOML.")
def default_config() -> None:
    """Print the built-in default experiment as TOML, to copy and edit."""
    click.echo(default_config_toml().rstrip("\n"))
