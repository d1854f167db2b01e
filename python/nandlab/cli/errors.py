"""How the ``nandlab`` command fails: every usage error and every error the user can fix is one
``nandlab: error: ...`` line with exit code 2 (an engine failure or an unwritable ``--out``: 1), no
traceback and no usage block; a run stopped by Ctrl-C or SIGTERM exits as the signal would have."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

import click

from nandlab._core import ConfigError, Interrupted, SimulationError, SnapshotError, TraceError
from nandlab.terminal import printable


class Failure(click.ClickException):
    """An error the user can fix: printed as one ``nandlab: error: ...`` line, no traceback."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(printable(message))
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"nandlab: error: {self.message}", err=True)


def usage_failure(error: click.ClickException) -> Failure:
    """click's usage error (bad option value, unknown option, missing argument, ...) as one line,
    with where to find help instead of click's usage block."""
    message = error.format_message().rstrip(".")
    if message[:2].istitle():  # click's "Invalid value ...", "No such option ...": the house style is lower case
        message = message[0].lower() + message[1:]
    ctx = getattr(error, "ctx", None)
    return Failure(f"{message} (see {ctx.command_path} --help)" if ctx is not None else message, 2)


class Cli(click.Group):
    """The command group and its subgroups (chip, trace, test); one line for every usage error, and the engine's
    exceptions turned into messages and exit codes."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except Failure:
            raise
        except click.ClickException as error:  # the group's own options and arguments
            raise usage_failure(error) from None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and not ctx.resilient_parsing:  # one line, rather than click's help page
            commands = ", ".join(self.list_commands(ctx))
            raise click.UsageError(f"missing command: expected one of {commands}", ctx)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        # The subcommand's arguments as given (click hands them on and clears them).
        given = [*getattr(ctx, "_protected_args", []), *ctx.args]
        _check_address_space()
        try:
            return super().invoke(ctx)
        except Failure:
            raise
        except click.ClickException as error:  # a subcommand's options and arguments, or its own check
            raise usage_failure(error) from None
        except (ConfigError, TraceError, SnapshotError) as error:
            raise Failure(_flag_named(given, str(error)), 2) from None
        except Interrupted as error:
            # The state is in the snapshot: exit as the signal would have (128 + its number).
            click.echo(f"nandlab: {printable(str(error))}", err=True)
            raise click.exceptions.Exit(143 if isinstance(error.__cause__, Terminated) else 130) from None
        except SimulationError as error:
            raise Failure(str(error), 1) from None
        except RecursionError:  # input nested deeper than a reader checks for itself
            raise Failure("an input nested too deeply (tables, arrays or JSON objects within each other "
                          "thousands of levels down): nandlab reads at most a few dozen levels", 2) from None
        except MemoryError:  # Python's own objects, past what the memory estimate counts
            raise Failure("out of memory (the engine's estimate fitted, but the results' tables or figures "
                          "did not): give the process more memory, or make the run's outputs smaller", 2) from None
        except OSError as error:  # e.g. --out DIR not writable
            raise Failure(str(error), 1) from None
        except KeyboardInterrupt:
            click.echo("nandlab: interrupted", err=True)
            raise click.exceptions.Exit(130) from None
        except Terminated:
            click.echo("nandlab: terminated", err=True)
            raise click.exceptions.Exit(143) from None


MIN_ADDRESS_SPACE = 3 << 29
"""The least address space (``ulimit -v``) nandlab runs in: its libraries (polars' thread pool,
matplotlib, the engine) reserve about 1.4 GB of virtual memory, however small the run, and one
that cannot get it aborts (Rust) or fails deep in a figure (MemoryError)."""


def _check_address_space() -> None:
    """Failure if this process's address space is limited below ``MIN_ADDRESS_SPACE``."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft < MIN_ADDRESS_SPACE:
        raise Failure(f"an address space of {soft / 2**30:.2f} GiB (ulimit -v): nandlab needs at least "
                      f"{MIN_ADDRESS_SPACE / 2**30:.1f} GiB (its libraries reserve that much virtual memory, "
                      "whatever the run; the memory it uses is far less)", 2)


# Config keys that a command-line flag sets: an error about the key names the flag too.
_FLAG_KEYS = {"[device] capacity": "--capacity", "snapshot_every": "--snapshot-every"}


def _flag_named(given: list[str], message: str) -> str:
    """``message``, naming the flag the user gave (in ``given``) for the config key it is about."""
    for key, flag in _FLAG_KEYS.items():
        if message.startswith(f"{key}:") and any(a == flag or a.startswith(f"{flag}=") for a in given):
            return f"{flag} ({key}){message[len(key):]}"
    return message


class Terminated(Exception):
    """SIGTERM, raised by its handler while a run with a snapshot goes on (the engine then stops
    the run at its next sync point with its state in the snapshot, as for Ctrl-C)."""


@contextlib.contextmanager
def sigterm_stops_run(active: bool) -> Iterator[None]:
    """While the block runs (if ``active``): SIGTERM raises ``Terminated`` instead of killing."""
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: Any) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
