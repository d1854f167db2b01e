"""Text from files on a terminal: whatever a file holds (a phase or job name, a trace's line quoted
in an error), printing it never drives the terminal — control characters are shown as escapes —
and an error message stays one line of bounded length."""

from __future__ import annotations

import os

from rich.console import Console
from rich.markup import escape

MAX_MESSAGE_CHARS = 2000
"""A message longer than this (one quoting a long value from a file) is cut in its middle."""


def shown(text: str, keep: str = "") -> str:
    """``text`` with each control or other unprintable character (the start of an escape sequence,
    a bidi override, an undecodable byte) but those in ``keep`` written as its Python escape
    (``\\x1b``): whatever a file holds, printing it does not drive the terminal."""
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii") for c in text)


def safe(text: str) -> str:
    """Text from a file (a phase or job name, a trace's name) for rich: ``shown`` (line breaks
    kept) and its markup escaped."""
    return escape(shown(text, keep="\n"))


def printable(text: str) -> str:
    """``text`` as one line that is safe on a terminal, whatever file it quotes: its lines joined,
    ``shown``, and cut in the middle beyond ``MAX_MESSAGE_CHARS``."""
    line = shown(" ".join(part.strip() for part in text.splitlines() if part.strip()))
    if len(line) > MAX_MESSAGE_CHARS:
        head, tail = MAX_MESSAGE_CHARS * 3 // 4, MAX_MESSAGE_CHARS // 4
        line = f"{line[:head]} … ({len(line) - head - tail:,} characters left out) … {line[-tail:]}"
    return line


PIPED_WIDTH = 120
"""The width of tables written to a pipe or a file (rich's default there is 80 columns)."""


def stdout_console() -> Console:
    """A console on stdout; when piped, wide enough for the table rather than rich's 80 columns."""
    console = Console()
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPED_WIDTH
    return console
