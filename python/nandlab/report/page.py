"""A report page: one self-contained HTML file, ``report.html`` — inline CSS, no script, every figure
a PNG embedded as a data URI, and a Content-Security-Policy that forbids fetching anything — built
of a title, headline facts and sections (tables, figures, texts); and the pieces each procedure's
report section uses to read its directory and show figures."""

from __future__ import annotations

import base64
import html
import json
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nandlab import files, output, plausible
from nandlab.procedures.base import version

REPORT_HTML = "report.html"
FIGURES = "figures"
"""The directory (in the reported one) of the figures a report draws and redraws."""
DRAWN = ".drawn"
"""In ``figures/``: the names of the figures the last report drew (an earlier report's figures that the
next does not draw are removed; no other file there is touched)."""

MAX_TABLE_ROWS = 500
LONG_TEXT = 40
"""Characters of a table's text beyond which it wraps in its cell."""
GIB = 2**30
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CONTENT_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1180px;
       padding: 0 1.2em; color: #1d232a; }
h1 { font-size: 1.6em; margin: 0; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #d6dbe0; }
.kind { color: #5b6570; margin: 0.2em 0 0.8em; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.15em 1.2em; margin: 0.6em 0; }
dl.facts dd { overflow-wrap: anywhere; }
dl.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(20em, 1fr)); gap: 0.1em 1.5em;
          font-size: 0.85em; }
dl.grid div { display: flex; flex-wrap: wrap; gap: 0 0.8em; border-bottom: 1px solid #eef0f2; min-width: 0; }
dl.grid dd { margin-left: auto; text-align: right; overflow-wrap: anywhere; }
dt { color: #5b6570; } dd { margin: 0; }
nav { font-size: 0.9em; margin: 0.8em 0; display: flex; flex-wrap: wrap; gap: 0.2em 1em; }
nav a { white-space: nowrap; }
a { color: #1c5fb0; text-decoration: none; } a:hover { text-decoration: underline; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #e6e9ec; text-align: right; white-space: nowrap; }
th { background: #f3f5f7; position: sticky; top: 0; white-space: normal; vertical-align: bottom; }
td.text, th.text, th:first-child, td:first-child { text-align: left; }
td.long { white-space: normal; min-width: 16em; }
.scroll { max-height: 34em; overflow-x: auto; overflow-y: auto; border: 1px solid #e6e9ec; margin: 0.6em 0;
          width: fit-content; max-width: 100%; box-sizing: border-box; }
figure { margin: 1em 0; } img { max-width: 100%; height: auto; border: 1px solid #eef0f2; }
figcaption, .note, footer { color: #5b6570; font-size: 0.85em; }
pre { background: #f6f8fa; padding: 0.8em; overflow: auto; max-height: 30em; font-size: 0.8em; }
.failed { color: #b42318; } details { margin: 0.4em 0; } summary { cursor: pointer; }
footer { margin-top: 3em; border-top: 1px solid #d6dbe0; padding-top: 0.6em; }
"""


@dataclass
class Report:
    """What a report shows, in order: a ``title``, the ``kind`` of directory, a few headline
    ``facts``, and ``sections`` (heading, HTML parts: tables, figures, texts)."""

    directory: Path
    title: str
    kind: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    sections: list[tuple[str, list[str]]] = field(default_factory=list)
    drawn: set[Path] = field(default_factory=set)
    """The figures this report drew (``figure_path``)."""

    def fact(self, name: str, value: str) -> None:
        """A headline figure under the title."""
        self.facts.append((name, value))

    def table(self, heading: str, rows: Sequence[Mapping[str, Any]], note: str = "") -> None:
        """A table (at most ``MAX_TABLE_ROWS`` rows; long text columns and headers wrap), in a box that
        scrolls across when it is still wider than the page."""
        self._add(heading, _table(rows) + (f'<p class="note">{html.escape(note)}</p>' if note else ""))

    def pairs(self, heading: str, pairs: Sequence[tuple[str, Any]]) -> None:
        """Name–value pairs laid out in columns (a drive's figures)."""
        items = "".join(f"<div><dt>{html.escape(k)}</dt><dd>{html.escape(fmt(v))}</dd></div>" for k, v in pairs)
        self._add(heading, f'<dl class="grid">{items}</dl>')

    def text(self, heading: str, text: str, note: str = "") -> None:
        """Preformatted text (a config, a sweep file), with a ``note`` above it."""
        above = f'<p class="note">{html.escape(note)}</p>' if note else ""
        self._add(heading, f"{above}<pre>{html.escape(text)}</pre>")

    def details(self, heading: str, summary: str, text: str) -> None:
        """Preformatted text folded under a one-line ``summary`` (a traceback)."""
        folded = f"<summary>{html.escape(summary)}</summary><pre>{html.escape(text)}</pre>"
        self._add(heading, f"<details>{folded}</details>")

    def figure(self, heading: str, path: Path, caption: str) -> None:
        """A PNG, embedded, with its caption and a link to the file."""
        data = files.read_bytes(path, "PNG figure")
        if not data.startswith(PNG_SIGNATURE) or len(data) < 24:
            raise ValueError(f"{path}: not a PNG image")
        width, height = struct.unpack(">II", data[16:24])  # the PNG header's IHDR chunk
        link = path.relative_to(self.directory).as_posix()
        self._add(heading, (
            f'<figure><img src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}" '
            f'width="{width}" height="{height}" alt="{html.escape(caption)}">'
            f'<figcaption>{html.escape(caption)} (<a href="{html.escape(link)}">{html.escape(link)}</a>)</figcaption>'
            "</figure>"
        ))

    def figure_path(self, name: str) -> Path:
        """Where a figure the report draws goes: ``figures/NAME``, with any character but letters, digits,
        ``.``, ``_`` and ``-`` made a ``-`` (a name may carry an axis name such as ``read/write mix``)."""
        path = self.directory / FIGURES / re.sub(r"[^A-Za-z0-9._-]+", "-", name).lstrip(".")
        path.parent.mkdir(exist_ok=True)
        self.drawn.add(path)
        return files.unlink_link(path)

    def links(self, heading: str, links: Sequence[tuple[str, str]]) -> None:
        """A list of (text, relative address) links (other reports)."""
        items = "".join(f'<li><a href="{html.escape(href)}">{html.escape(text)}</a></li>' for text, href in links)
        self._add(heading, f"<ul>{items}</ul>")

    def _add(self, heading: str, part: str) -> None:
        if self.sections and self.sections[-1][0] == heading:
            self.sections[-1][1].append(part)
        else:
            self.sections.append((heading, [part]))

    def to_html(self) -> str:
        """The whole page."""
        anchors = _anchors([heading for heading, _ in self.sections])
        facts = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in self.facts)
        nav = "".join(f'<a href="#{a}">{html.escape(h)}</a>' for a, (h, _) in zip(anchors, self.sections))
        body = "".join(
            f'<section id="{a}"><h2>{html.escape(h)}</h2>{"".join(parts)}</section>\n'
            for a, (h, parts) in zip(anchors, self.sections)
        )
        page = "".join([
            "<!DOCTYPE html>\n",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_POLICY}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head>\n<body>",
            f"<header><h1>{html.escape(self.title)}</h1>",
            f'<p class="kind">{html.escape(self.kind)} · {html.escape(self.directory.resolve().name)}</p>',
            f'<dl class="facts">{facts}</dl>' if facts else "",
            f"<nav>{nav}</nav></header>\n<main>{body}</main>",
            f"<footer>nandlab {html.escape(version())} report: one file, nothing fetched. Its figures are also PNG ",
            f"files in {FIGURES}/; <code>nandlab report DIR</code> builds it again.</footer></body></html>\n",
        ])
        # Control characters a file's text may hold (ESC, BEL in a device's name) shown as their escapes.
        return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), page)


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters but tab and line breaks."""

_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON escape of a UTF-16 surrogate."""


class _TooLong(Exception):
    """A JSON integer longer than any nandlab writes (its digits' count is the message)."""


def _whole(digits: str) -> int:
    """A JSON integer as ``read_json`` takes it: at most 20 digits (a 5,000-digit one took Python's
    digit limit's ValueError, and a 400-digit one failed where it was drawn)."""
    if len(digits.lstrip("-")) > 20:
        raise _TooLong(f"{len(digits.lstrip('-')):,}")
    return int(digits)


def read_json(path: Path, figures: bool = True) -> dict[str, Any]:
    """A JSON result file of the directory (an object, as nandlab writes them); ValueError naming it if it is
    not one, or if ``figures`` (a result, not a config) and a figure it holds cannot exist (``plausible``)."""
    oversize = path.is_file() and path.stat().st_size > files.MAX_RESULT_BYTES  # refused by its size below
    if not oversize and files.read_head(path, 4096).lstrip()[:1] not in (b"{", b"["):
        # Looked at before the whole file is: /dev/zero behind the name took 1.1 GB to refuse.
        raise ValueError(f"{path}: not JSON (a result nandlab writes starts with {{ or [)")
    try:
        text = files.read_text(path, "result file", files.MAX_RESULT_BYTES)
        document = json.loads(text, parse_int=_whole)
        if _SURROGATE.search(text):  # an escaped half of a pair: whole pairs are fine, a lone one no text
            json.dumps(document, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{path}: text with a lone surrogate (\\ud800-\\udfff), which no UTF-8 file holds and "
                         "nandlab never writes") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON: {error}") from None
    except _TooLong as error:
        raise ValueError(f"{path}: a whole number of {error} digits, where nandlab writes at most 20 "
                         "(a 64-bit count)") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested thousands of levels deep, not a result nandlab wrote") from None
    if not isinstance(document, dict):
        raise ValueError(f"{path}: a JSON {type(document).__name__}, where nandlab writes an object ({{...}})")
    plausible.check_document(document, path, figures)
    return document


def read_table(path: Path, what: str) -> Any:
    """A result table of the directory (``files.read_table``), its figures checked for what can exist."""
    table = files.read_table(path, what)
    plausible.check_table(table, path)
    return table


def existing_figure(r: Report, d: Path, heading: str, name: str, caption: str) -> None:
    """A figure the procedure drew itself, if it is there."""
    if (d / name).exists():
        r.figure(heading, d / name, caption)


def _anchors(headings: Sequence[str]) -> list[str]:
    """A distinct id per section, from its heading."""
    seen: dict[str, int] = {}
    anchors = []
    for heading in headings:
        slug = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"
        seen[slug] = seen.get(slug, 0) + 1
        anchors.append(slug if seen[slug] == 1 else f"{slug}-{seen[slug]}")
    return anchors


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    if not rows:
        return '<p class="note">(none)</p>'
    columns = list(dict.fromkeys(k for row in rows for k in row))
    # A header wraps only at its spaces: a name (`read_p99_us`) is never broken inside, and a table
    # wider than the page scrolls across in its box. A column of text has its header on the left,
    # as its cells.
    texts = {c for c in columns if any(isinstance(row.get(c), str) for row in rows)}
    head = "".join(('<th class="text">' if c in texts else "<th>") + html.escape(str(c))
                   + "</th>" for c in columns)
    body = []
    for row in rows[:MAX_TABLE_ROWS]:
        cells = []
        for c in columns:
            value = row.get(c)
            classes = ["text"] if isinstance(value, str) else []
            if isinstance(value, str) and len(value) > LONG_TEXT:
                classes.append("long")
            if c == "status" and value == "failed":
                classes.append("failed")
            css = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{css}>{html.escape(fmt(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = f'<p class="note">… and {len(rows) - MAX_TABLE_ROWS} more rows.</p>' if len(rows) > MAX_TABLE_ROWS else ""
    table = f'<table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    return f'<div class="scroll">{table}</div>{more}'


def fmt(value: Any) -> str:
    """Numbers with three significant digits (thousands separated), the rest as text."""
    if value is None:
        return output.NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return output.number(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def gib(size: float) -> str:
    """Bytes in GiB, three significant digits."""
    return output.number(size / GIB)
