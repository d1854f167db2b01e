"""``nandlab fio``: a fio job file — or fio's own command-line jobs — on a simulated drive, with
fio's report, fio's JSON or fio's terse lines, and fio's logs; fio's own flags (``--output-format``,
``--section``, ``--runtime`` and any job option) read as fio reads them."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from nandlab import api, fio, output
from nandlab._core import ConfigError
from nandlab.cli import options
from nandlab.cli.console import LazyProgress, wrote
from nandlab.procedures import fio as fio_procedure
from nandlab.terminal import printable, safe, shown, stdout_console

FORMATS = ("terse", "json", "json+", "normal")
"""fio's output formats, in the order fio prints them when given several."""


def _output_formats(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    """``--output-format``: one of ``FORMATS`` or several, comma-separated (``json,normal``), in
    fio's order; json+ (json with latency histograms) stands for json."""
    chosen = [part.strip().lower() for part in value.split(",")]
    unknown = [part for part in chosen if part not in FORMATS]
    if unknown:
        raise click.BadParameter(f"expected {', '.join(FORMATS)} or several of them comma-separated, "
                                 f"found {', '.join(map(repr, unknown))}")
    if "json+" in chosen:
        chosen = [f for f in chosen if f != "json"]
    return tuple(f for f in FORMATS if f in chosen)


@click.command("fio", short_help="Run a fio job file (or fio's command-line jobs) on a simulated drive.",
               options_metavar="[JOBFILE] [OPTIONS] [--FIO-OPTION=VALUE ...]",
               context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@options.device()
@options.capacity()
@click.option("--seed", type=options.SEED, metavar="N", help="Override the job file's randseed.")
@click.option("--json", "as_json", is_flag=True, help="Print only fio-style JSON on stdout (--output-format=json).")
@click.option("--output-format", "output_formats", default="normal", show_default=True, metavar="FORMAT[,FORMAT]",
              callback=_output_formats,
              help="fio's: normal (its text report), json, json+ (json with each completion latency's histogram, "
                   "clat_ns bins, as fio_jsonplus_clat2csv reads it), terse (its "
                   "semicolon-separated lines, version 3), or several comma-separated, printed in fio's order.")
@click.option("--section", "sections", multiple=True, metavar="NAME",
              help="Run only this job of the file (fio's --section; may repeat).")
@options.out("Also write fio.json and the run's summary.json, timeseries and PNG to DIR, and the jobs' "
             "write_bw_log, write_lat_log and write_iops_log logs (without --out: in the working directory, "
             "as fio writes them).")
@options.QUIET_BAR
@click.pass_context
def fio_command(ctx: click.Context, device: str, capacity: str | None, seed: int | None, as_json: bool,
                output_formats: tuple[str, ...], sections: tuple[str, ...], out: Path | None, quiet: bool) -> None:
    """Run a fio job file on a simulated drive, or fio's command-line jobs (--name=a --rw=randread
    --bs=4k --iodepth=16 --size=1g --name=b ...: options before the first --name apply to all).
    Jobs run together, each with its own queue, as fio runs them; a job with stonewall waits for the
    ones before it; group_reporting reports a group's jobs as one. Job options given with a job file
    (--runtime=10) replace each job's. fio's output (IOPS, BW, completion-latency percentiles), its
    JSON or its terse lines; write_bw_log, write_lat_log and write_iops_log write fio's logs, a line
    per window of the simulated time series (log_avg_msec sets the window). Options that mean nothing
    without a real device, or that nandlab does not model, are named in warnings.

    \b
    nandlab fio examples/randwrite.fio --device swissbit-standard --capacity 4GiB --output-format=json
    nandlab fio --device snia-mlc --capacity 1GiB --name=r --rw=randread --bs=4k --iodepth=16 --size=256m
    """
    # [JOBFILE] among fio's own options (click leaves both in ctx.args).
    files = [a for a in ctx.args if not a.startswith("--")]
    if len(files) > 1:
        raise click.UsageError(f"expected one JOBFILE, found {', '.join(map(repr, files))}")
    jobfile = Path(files[0]) if files else None
    text, overrides = fio.command_line([a for a in ctx.args if a.startswith("--")])
    if jobfile is not None and text:
        raise ConfigError("give a job file or command-line jobs (--name=...), not both")
    if jobfile is None and not text:
        raise click.UsageError("expected a JOBFILE or command-line jobs such as --name=r --rw=randread")
    if text:
        jobs = fio.parse(text, "<command line>", sections)
    else:
        jobs = fio.load(jobfile, sections, overrides)
    formats = ("json",) if as_json else output_formats
    try:
        fio.check_logs_writable(jobs, out if out is not None else Path.cwd())
    except ValueError as error:
        raise ConfigError(str(error)) from None
    # Warnings once nothing stops the run (a refusal is one line): the drive's config checked first.
    try:
        api.check_config(fio.to_config(jobs, device, capacity))
    except ConfigError as error:
        raise fio.job_file_error(jobs, error) from None
    stderr = Console(stderr=True)
    for warning in jobs.warnings:
        stderr.print(f"[yellow]warning:[/] {safe(printable(warning))}", soft_wrap=True, highlight=False)
    with LazyProgress(Console(stderr=True, quiet=quiet)) as progress:
        result = fio_procedure.run(jobs, device, capacity, seed=seed, progress=progress, bins="json+" in formats)
    if "terse" in formats:
        click.echo(fio.terse(result.document), nl=False)
    if "json" in formats or "json+" in formats:
        click.echo(result.to_json())
    if "normal" in formats:
        result.print(stdout_console())  # its text says it too
    else:
        for note in output.unwritten_read_lines(result.result.phases, fio.UNWRITTEN_HOW):
            stderr.print(f"[yellow]note:[/] {safe(note)}", soft_wrap=True, highlight=False)
    if out is not None:
        wrote(result.write(out), out, stderr)
    logs = fio.write_logs(jobs, result.result, out if out is not None else Path.cwd())
    if logs:
        where = out if out is not None else "the working directory"
        stderr.print(f"wrote {', '.join(safe(shown(str(path.relative_to(out or Path.cwd())))) for path in logs)} "
                     f"to {safe(str(where))}", soft_wrap=True, highlight=False)
