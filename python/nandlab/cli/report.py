"""``nandlab report DIR``: build the self-contained HTML report of any directory nandlab wrote."""

from __future__ import annotations

from pathlib import Path

import click

from nandlab.cli.errors import Failure


@click.command("report", short_help="Build the self-contained HTML report of a result directory.")
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path), metavar="DIR")
@click.option("--open", "open_it", is_flag=True, help="Open the report in the default browser.")
def report_command(directory: Path, open_it: bool) -> None:
    """Build DIR/report.html: one self-contained HTML file (figures embedded, nothing fetched) with
    the configuration, summary tables and figures of a run, a sweep, or any procedure's --out
    directory; its figures are also PNG files in DIR/figures. Prints its path."""
    from nandlab import report

    try:
        path = report.write(directory)
    except ValueError as error:
        raise Failure(str(error), 2) from None
    except IsADirectoryError as error:  # where the report or one of its figures goes
        where = error.filename2 or error.filename or directory / report.REPORT_HTML  # a rename names both
        raise Failure(f"{where}: a directory, where the report writes a file", 2) from None
    click.echo(str(path))
    if open_it:
        click.launch(str(path))
