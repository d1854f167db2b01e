"""The files a user names (configs, fio job files, sweep files, the results ``nandlab report``
reads back), read whole but never more than a cap (``MAX_FILE_BYTES``, or ``MAX_RESULT_BYTES``
for results): ``/dev/zero``, a FIFO that never ends or a huge file is refused after reading at
most one byte more than the cap, in bounded time and memory. Every refusal is a ``ConfigError``
naming the file, what it should have been and, if it is too large, the cap. (Snapshots and traces
are read by the engine.)"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from nandlab._core import ConfigError

__all__ = ["MAX_FILE_BYTES", "MAX_RESULT_BYTES", "MAX_TABLE_ROWS", "NAME_MAX", "directory_problem", "is_file",
           "output_directory", "read_bytes", "read_table", "read_text"]

MAX_FILE_BYTES = 64 * 2**20
"""The most nandlab reads of a config, job or sweep file (they are KiB) or a figure."""
MAX_RESULT_BYTES = 2**30
"""The most ``nandlab report`` reads of a result file: a run's summary.json lists every power cut
(about 700 bytes each), so a long run with frequent cuts writes one of hundreds of MiB."""
MAX_TABLE_ROWS = 250_000
"""The most rows ``nandlab report`` reads of a result table: it draws every row of a time series (at
the cap, 8 s and 0.6 GB; a run's default is 200 rows a phase, a phase's ``interval`` sets more)."""
_CHUNK = 2**20
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _open_for_reading(p: Path) -> int:
    """A descriptor reading ``p``, opened non-blocking so that a FIFO nobody writes to does not wait for
    a writer (it then reads as empty); its reads block again. OSError, or ValueError for a NUL in the name."""
    fd = os.open(p, os.O_RDONLY | _NONBLOCK)
    if _NONBLOCK:
        try:
            os.set_blocking(fd, True)
        except OSError:
            os.close(fd)
            raise
    return fd


def read_bytes(path: str | os.PathLike[str], what: str = "file", cap: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the file at ``path``, a ``what`` (``"config file"``); ConfigError if it is
    missing, a directory, unreadable, or larger than ``cap`` bytes."""
    p = Path(path)
    try:
        fd = _open_for_reading(p)
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such {what}") from None
    except OSError as error:
        raise ConfigError(f"{p}: cannot read the {what}: {error.strerror}") from None
    except ValueError:  # a NUL byte in the name
        raise ConfigError(f"{os.fspath(p)!r}: a file name with a NUL byte, expected a {what}") from None
    chunks: list[bytes] = []
    size = 0
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            raise ConfigError(f"{p}: a directory, expected a {what}")
        too_large = stat.S_ISREG(status.st_mode) and status.st_size > cap
        while not too_large:
            chunk = os.read(fd, min(_CHUNK, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            too_large = size > cap
    except OSError as error:
        raise ConfigError(f"{p}: cannot read the {what}: {error.strerror}") from None
    finally:
        os.close(fd)
    if too_large:
        raise ConfigError(f"{p}: larger than {cap // 2**20} MiB, the most nandlab reads of a {what}")
    return b"".join(chunks)


def read_table(path: str | os.PathLike[str], what: str = "result table", max_rows: int = MAX_TABLE_ROWS) -> Any:
    """The Parquet (or, named ``.csv``, CSV) table at ``path`` as a polars DataFrame (see
    ``read_bytes``: Parquet capped at ``MAX_RESULT_BYTES``, CSV at ``MAX_FILE_BYTES``); ConfigError if
    it is not such a table or holds more than ``max_rows`` rows (a Parquet file's counted from its
    footer, before any row is read)."""
    import io

    import polars as pl
    import pyarrow
    import pyarrow.parquet

    csv = Path(path).suffix == ".csv"
    data = read_bytes(path, what, MAX_FILE_BYTES if csv else MAX_RESULT_BYTES)
    try:
        if csv:
            table = pl.read_csv(io.BytesIO(data))
            rows = table.height
        else:
            rows = pyarrow.parquet.ParquetFile(io.BytesIO(data)).metadata.num_rows
        if rows > max_rows:
            raise ConfigError(f"{Path(path)}: {rows:,} rows, more than the {max_rows:,} nandlab reads of a {what} "
                              "(a run's phases with a coarser interval write fewer)")
        return table if csv else pl.read_parquet(io.BytesIO(data))
    except (pyarrow.ArrowException, pl.exceptions.PolarsError, OSError, ValueError) as error:
        if isinstance(error, ConfigError):
            raise
        kind = "CSV" if csv else "Parquet"
        raise ConfigError(f"{Path(path)}: not a {kind} file nandlab wrote, expected a {what}") from None


def read_text(path: str | os.PathLike[str], what: str = "file", cap: int = MAX_FILE_BYTES) -> str:
    """The text of a UTF-8 file (see ``read_bytes``); ConfigError if it is not UTF-8."""
    try:
        return read_bytes(path, what, cap).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{Path(path)}: not UTF-8 text, expected a {what}") from None


def is_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a file (False too where the name cannot be one: too long, a NUL byte)."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


NAME_MAX = 255
"""The longest name (bytes) of one file or folder on Linux's file systems."""


def directory_problem(path: str | os.PathLike[str]) -> str | None:
    """Why results cannot go into the directory ``path`` (to be made if missing), found before a run
    rather than after it; None if they can: a NUL byte, a name longer than ``NAME_MAX`` bytes, a file
    where the directory or one on its way is, or a place that takes no new entries (read-only,
    /proc, /sys)."""
    text = os.fspath(path)
    if "\0" in text:
        return "a path with a NUL byte, which no file name holds"
    for part in Path(text).parts:
        if len(os.fsencode(part)) > NAME_MAX:
            return f"a name of {len(os.fsencode(part)):,} bytes, longer than the {NAME_MAX} a file name may have"
    if os.path.exists(text) and not os.path.isdir(text):
        return "not a directory"
    nearest = Path(os.path.abspath(text))
    while not nearest.exists() and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        return f"cannot be made: {str(nearest)!r} is a file"
    if not os.access(nearest, os.W_OK | os.X_OK) or str(nearest).startswith(("/proc", "/sys")):
        return f"{str(nearest)!r} takes no new files here"
    return None


def output_directory(path: str | os.PathLike[str]) -> Path:
    """The directory ``path``, made if missing, for results; ConfigError naming it if it cannot take them
    (``directory_problem``)."""
    problem = directory_problem(path)
    if problem is not None:
        raise ConfigError(f"{os.fspath(path)[:200]!r}: {problem}")
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def unlink_links(directory: Path, suffixes: tuple[str, ...], folders: tuple[str, ...]) -> None:
    """Removes the symbolic links where nandlab writes in an output ``directory`` — named with one of
    the ``suffixes`` of its files, or one of the ``folders`` it writes, there or in those folders —
    before it writes its results: a result file is never written through a link into a file elsewhere
    (the link goes; its target is left alone). A user's other links stay. ``directory`` itself may be
    a link (the user named it)."""
    if not directory.is_dir():
        return

    def written(entry: Path) -> bool:
        return entry.suffix in suffixes or entry.name in folders

    for entry in directory.iterdir():
        if entry.is_symlink():
            if written(entry):
                entry.unlink()
        elif entry.is_dir() and entry.name in folders:
            for inner in entry.iterdir():
                if inner.is_symlink() and written(inner):
                    inner.unlink()


def unlink_link(path: Path) -> Path:
    """``path``, a symbolic link there removed first (a file written there replaces it, never follows it)."""
    if path.is_symlink():
        path.unlink()
    return path


def write_replacing(path: Path, text: str) -> None:
    """Writes ``text`` to a new file beside ``path`` and renames it over ``path``: a ``path`` that is a
    link is replaced, never followed, and no file that is there is written over. The new file gets
    the mode a file opened for writing would (0o666 less the umask)."""
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(partial, 0o666 & ~mask)
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def read_head(path: str | os.PathLike[str], n: int) -> bytes:
    """The first ``n`` bytes (at most) of the file at ``path``, opened as ``read_bytes`` opens it."""
    try:
        fd = _open_for_reading(Path(path))
    except (OSError, ValueError):
        return b""
    try:
        return os.read(fd, n)
    except OSError:
        return b""
    finally:
        os.close(fd)
