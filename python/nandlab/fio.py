"""fio job files on a simulated drive: the options that make sense without a real device become
nandlab ``[[phase]]`` keys; the rest are named in warnings, never silently dropped::

    from nandlab import fio

    job = fio.load("randwrite.fio")          # FioJobs: phases, jobs, warnings
    result = nandlab.run(fio.to_config(job, "swissbit-standard", capacity="4GiB"))
    report = fio.report(job, result)         # shaped like `fio --output-format=json`
    report["jobs"][0]["write"]["iops"]
    print(fio.terse(report), end="")         # `fio --output-format=terse` (version 3)
    fio.write_logs(job, result, "logs")      # write_bw_log=..., write_lat_log=..., write_iops_log=...

Mapping (fio → nandlab): ``rw``/``readwrite`` → ``pattern`` and ``read_fraction`` (random jobs
without ``norandommap`` visit every block once per pass, as fio's random map does: ``shuffle``);
``rwmixread``/``rwmixwrite``; ``bs``, ``bsrange``, ``bssplit`` → ``block_size``/``block_sizes``;
``iodepth`` → ``queue_depth``; ``size`` and ``offset`` → the working set; ``io_size``/``io_limit``
and ``number_ios`` → ``volume``/``requests`` (default: one pass of ``size``; ``number_ios`` only
ends a job sooner, as in fio); ``runtime`` →
``duration`` (``time_based``: the job runs for it; else it caps the job); ``random_distribution``
(random, zipf, pareto, normal; zoned ones run uniform, with a warning) → ``distribution``;
``ramp_time`` → a phase before the job whose results are not reported; ``randseed`` → the seed;
``numjobs`` → that many copies of the job; ``log_avg_msec`` of a job that writes logs → the
phase's time-series ``interval``.

Jobs run as fio runs them: together, each with its own queue, until a job with ``stonewall`` (or
``wait_for_previous``) waits for all before it to finish and starts a new group (``new_group``
starts a new group without waiting). Jobs that run together are one phase of ``[[phase.job]]``s
(a job alone: a plain ``[[phase]]``), each reported on its own — or, with ``group_reporting``,
joined to the job before it in the same group, as fio joins them.

Logs (``write_bw_log``, ``write_lat_log``, ``write_iops_log``) are fio's windowed logs, one line per
window of the phase's time series and data direction: ``time (ms), value, direction, 0, 0`` (fio
3.x's format with ``log_avg_msec``: block size and priority 0); bandwidth in KiB/s, IOPS, latency
in ns (the mean of the window's requests; nandlab has no submission latency, so slat logs are
empty, as fio's are for synchronous engines). Named as fio names them, ``PREFIX_bw.N.log`` with
``N`` the job's number (``per_job_logs=0``: no number). Jobs that run together share one time
series: the first of them that asks for logs gets the phase's figures.
"""

from __future__ import annotations

import bisect
import io
import math
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from nandlab import api, files, output, qualify
from nandlab._core import ConfigError
from nandlab.arguments import checked, show_types
from nandlab.terminal import shown

__all__ = ["FioJob", "FioJobs", "entries", "load", "logs", "parse", "report", "run", "terse", "to_config",
           "write_logs"]

_NO_EFFECT = {
    "ioengine", "direct", "buffered", "filename", "directory", "thread", "threads", "invalidate",
    "randrepeat", "refill_buffers", "exitall", "exitall_on_error", "name", "description", "gtod_reduce",
    "disable_lat", "disable_clat", "disable_slat", "clat_percentiles", "lat_percentiles", "percentile_list",
    "allow_mounted_write", "continue_on_error", "iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete",
    "fsync_on_close", "end_fsync", "create_on_open", "unlink", "overwrite", "loops", "unit_base",
    "fadvise_hint", "scramble_buffers", "zero_buffers", "cpus_allowed", "cpumask", "nice", "prio", "prioclass",
    "numa_cpu_nodes",
}
"""Options with no meaning for a simulated drive (named in a warning when given)."""

_RW = {
    "read": ("sequential", 1.0),
    "write": ("sequential", 0.0),
    "randread": ("random", 1.0),
    "randwrite": ("random", 0.0),
    "rw": ("sequential", None),
    "readwrite": ("sequential", None),
    "randrw": ("random", None),
}

_UNMODELLED_DISTRIBUTIONS = ("zoned", "zoned_abs")
"""fio's ``random_distribution`` kinds that nandlab runs as uniform random (with a warning)."""

_LOGS = {"write_bw_log": ("bw",), "write_iops_log": ("iops",), "write_lat_log": ("lat", "slat", "clat")}
"""The log options and the logs each writes (``PREFIX_bw.N.log``, ...)."""

_LATENCY_LEVELS = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
"""The upper bounds of fio's ``latency_ns`` and ``latency_us`` levels (``latency_ms`` adds 2000 and >=2000)."""

TERSE_VERSION = 3
PERCENTILE_FIELDS = 20
"""Completion-latency percentile fields in a terse line's read and write parts (fio's list's most)."""


@dataclass(frozen=True)
class FioJob:
    """One job fio starts (each of ``numjobs`` copies is one).

    Attributes:
        name: its section's name.
        number: fio's job number: 1, 2, ... in the order the jobs start (the ``N`` of its log files).
        group: fio's ``groupid``: ``stonewall``, ``wait_for_previous`` and ``new_group`` start the next.
        phase: index in ``FioJobs.phases`` of the phase that runs it.
        slot: its place among that phase's ``[[phase.job]]``s (0 in a phase of one job).
        options: its fio options (after ``[global]`` and command-line overrides).
        own: those of its section and the command line alone (fio's ``job options``).
        lines: the job file's line of each option (its own section's, else ``[global]``'s; 0: the
            command line), and of its section's header under "".
    """

    name: str
    number: int
    group: int
    phase: int
    slot: int
    options: dict[str, str]
    own: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)


@dataclass
class FioJobs:
    """A job file turned into nandlab phases.

    Attributes:
        phases: the ``[[phase]]`` dicts, in order (ramp phases before their jobs); jobs that run
            together are one phase with a ``job`` list.
        jobs: every job fio would start, in order (each with its options).
        warnings: options nandlab ignored or approximated, one line each.
        seed: ``randseed`` if given.
        global_options: the ``[global]`` sections' options (fio's ``global options``).
    """

    phases: list[dict[str, Any]] = field(default_factory=list)
    jobs: list[FioJob] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seed: int | None = None
    global_options: dict[str, str] = field(default_factory=dict)
    source: str = "<job file>"

    @property
    def reported(self) -> list[str]:
        """Names of the phases that hold jobs (not ramps), in order."""
        return [self.phases[index]["name"] for index in dict.fromkeys(job.phase for job in self.jobs)]


@checked
def load(path: str | os.PathLike[str], sections: Collection[str] = (),
         overrides: Mapping[str, str] | None = None) -> FioJobs:
    """Read and convert a fio job file (``ConfigError`` names the line at fault); see ``parse``."""
    p = Path(path)
    text = files.read_text(p, "job file")
    return parse(text, str(p), sections, overrides)


@checked
def command_line(args: Sequence[str]) -> tuple[str, dict[str, str]]:
    """fio's job options on its command line (``--name=a --rw=randread --bs=4k --name=b ...``) as a
    job file's text: options before the first ``--name`` go to ``[global]``, each ``--name`` starts
    a job. Without any ``--name``, no text: the options, as a dict, override a job file's jobs."""
    sections: list[tuple[str, list[str]]] = [("global", [])]
    options: dict[str, str] = {}
    for arg in args:
        if not arg.startswith("--") or len(arg) == 2:
            raise ConfigError(f"command line: expected fio options like --rw=randread, found `{arg}`")
        key, eq, value = arg[2:].partition("=")
        key = key.strip().lower()
        if any(c in key + value for c in "[]\n\r"):
            raise ConfigError(f"command line: `{arg}` is not a job option")
        if key == "name":
            # fio lists a command-line job's name among its job options (a job file's is its section's).
            sections.append((value, [f"name={value}"] if not any(c in value for c in ";#") else []))
            continue
        sections[-1][1].append(f"{key}={value}" if eq else key)
        options[key] = value
    if len(sections) == 1:
        return "", options
    text = "".join(f"[{name}]\n" + "".join(f"{line}\n" for line in lines) for name, lines in sections)
    return text, {}


def _sections(text: str, source: str) -> Iterator[tuple[str, dict[str, str], dict[str, int]]]:
    """``(name, options, lines)`` of each section in file order (``lines``: each option's line, the
    section's own under ``""``), each once it is read whole; bare options are flags (value ``""``).
    As fio reads a line, a ``;`` or ``#`` anywhere starts a comment (but in a whole ``[name]``
    line: a name is taken as written). Lazily, so that a file of millions of sections is refused at
    the job past ``MAX_JOBS``."""
    section: tuple[str, dict[str, str], dict[str, int]] | None = None
    for number, raw in enumerate(io.StringIO(text, newline=None), 1):
        line = raw.strip()
        if not (line.startswith("[") and line.endswith("]")):
            line = line.split(";", 1)[0].split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            if section is not None:
                yield section
            section = (line[1:-1].strip(), {}, {"": number})
            continue
        if section is None:
            raise ConfigError(f"{source}:{number}: an option before any [job] section: `{raw.strip()}`")
        key, _, value = line.partition("=")
        section[1][key.strip().lower()] = value.strip()
        section[2][key.strip().lower()] = number
    if section is not None:
        yield section


MAX_JOBS = 4096
"""The most jobs a job file starts, ``numjobs`` copies included (fio's own limit)."""

_SIZE = re.compile(r"^([0-9]{1,20})(?:\.([0-9]{1,20}))?\s*([a-z]*)$")

_IEC = ("kib", "mib", "gib", "tib", "pib")
"""fio's IEC suffixes, which it reads against its ``kb_base`` (``KiB`` is 1,000 bytes by default!)."""


MAX_BLOCK = 64 << 20
"""The largest request nandlab models (the engine's ``block_size`` bound)."""
MAX_SIZES = 1024
"""A ``bsrange`` is modelled with at most this many sizes."""
MAX_SECONDS = 4_611_686_018
"""The longest ``runtime`` or ``ramp_time``: 2^62 ns, the longest duration a phase takes."""


def _shown(value: str, most: int = 40) -> str:
    """``value`` as an error message quotes it: at most ``most`` characters."""
    return value if len(value) <= most else f"{value[:most]}… ({len(value):,} characters)"


def _size(value: str, what: str, kb_base: int = 1024) -> int:
    """A size as fio reads it (its ``get_mult_bytes``): a number and a suffix, case aside, ``b`` after
    it optional. fio's default ``kb_base=1024`` reads ``k``/``kb``, ``m``, ``g``, ``t``, ``p`` as powers of
    1,024 and — for old job files — ``kib``, ``mib``, ... as powers of 1,000 (``bs=4KiB`` is 4,000 bytes
    in fio, and here); ``kb_base=1000`` swaps them. nandlab's own configs and options read ``4KiB`` as
    4,096 and ``8KB`` as 8,000 (the engine's rule)."""
    m = _SIZE.match(value.strip().lower())
    if not m:
        raise ValueError(f"{what}: expected a size like 4k or 1m, found `{_shown(value)}`")
    whole, fraction, suffix = m.groups()
    suffix = suffix.removesuffix("b") if suffix not in _IEC else suffix
    if suffix in _IEC:
        power, base = _IEC.index(suffix) + 1, 1000 if kb_base == 1024 else 1024
    elif suffix in ("", "k", "m", "g", "t", "p"):
        power, base = "_kmgtp".index(suffix or "_"), kb_base
    else:
        raise ValueError(f"{what}: expected a size like 4k or 1m, found `{_shown(value)}`")
    scale = base**power
    size = int(whole) * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)
    if size > 1 << 62:
        raise ValueError(f"{what}: expected a size of at most 4 EiB, found `{_shown(value)}`")
    return size


def _whole(value: str, what: str, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` (``iodepth``, ``numjobs``, ``randseed``, ...)."""
    number = int(value) if re.fullmatch(r"\s*[0-9]{1,20}\s*", value) else low - 1
    if not low <= number <= high:
        raise ValueError(f"{what}: expected a whole number from {low} to {high}, found `{_shown(value)}`")
    return number


def _seconds(value: str, what: str) -> float:
    """fio times: seconds by default, or with us/ms/s/m/h."""
    m = re.match(r"^([0-9]{1,20}(?:\.[0-9]{1,20})?)\s*(us|usec|ms|msec|s|sec|m|min|h)?$", value.strip().lower())
    if not m:
        raise ValueError(f"{what}: expected a time like 30, 30s or 500ms, found `{_shown(value)}`")
    scale = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "m": 60, "min": 60, "h": 3600}
    seconds = float(m.group(1)) * scale.get(m.group(2) or "s", 1.0)
    if seconds > MAX_SECONDS:
        raise ValueError(f"{what}: at most {MAX_SECONDS:,} s (the simulator's clock, 2^62 ns), found `{_shown(value)}`")
    return seconds


def _decimal(value: str, what: str, low: float, high: float, low_open: bool = False) -> float:
    """A decimal number (ASCII digits, a point) from ``low`` (excluded with ``low_open``) to ``high``."""
    m = re.fullmatch(r"\s*([0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})\s*", value)
    number = float(m.group(1)) if m else math.nan
    if not ((low < number if low_open else low <= number) and number <= high):
        bound = f"above {low:g}" if low_open else f"from {low:g}"
        raise ValueError(f"{what}: expected a number {bound} to {high:g}, found `{_shown(value)}`")
    return number


def _flag(name: str, value: str | None) -> bool:
    """A fio switch (``time_based``, ``stonewall``, ``group_reporting``, ...) as fio reads it: absent
    is off, bare is on, else the whole number it starts with (0x for hex; what follows its digits
    ignored; 32 bits, so 4294967296 is 0), on unless 0; words (true, yes, off) fio refuses ("failed
    parsing"), and so does this (ValueError naming it)."""
    if value is None:
        return False
    if not value.strip():
        return True
    # The number the value starts with as fio reads it (0x1f hex, else decimal: 1.5 is 1), in 32 bits.
    m = re.match(r"\s*[-+]?(?:0[xX]([0-9a-fA-F]{1,64})|([0-9]{1,64}))", value)
    if m is None:
        raise ValueError(f"{name}: expected 0 or 1 (fio takes a whole number for a switch), found `{_shown(value)}`")
    hexadecimal, decimal = m.groups()
    return (int(hexadecimal, 16) if hexadecimal else int(decimal)) % 2**32 != 0


def _bytes_text(n: int) -> str:
    return f"{n}B"


@checked
def parse(text: str, source: str = "<job file>", sections: Collection[str] = (),
          overrides: Mapping[str, str] | None = None) -> FioJobs:
    """Convert job file text (see the module's mapping). ``sections``: run only these jobs (fio's
    ``--section``); ``overrides``: options that replace every job's (fio's command-line options
    given with a job file, such as ``--runtime=10``)."""
    jobs = FioJobs(source=source)
    global_options: dict[str, str] = {}
    global_lines: dict[str, int] = {}
    # Jobs that run together, each copy (numjobs) with its name, options, phase, ramp phase and group.
    runs: list[list[_Member]] = []
    group, in_group = 0, 0
    for name, own, lines in _sections(text, source):
        if name.startswith("global"):  # as fio: any section whose name starts so
            global_options.update(own)
            global_lines.update({k: v for k, v in lines.items() if k})
            continue
        if sections and name not in sections:
            continue
        options = {**global_options, **own, **(overrides or {})}
        lines = {**global_lines, **lines}
        try:
            phase, ramp, seed, copies = _job(name, options, jobs.warnings)
            waits = any([_flag(key, options.get(key)) for key in ("stonewall", "wait_for_previous")])
            starts_group = waits or _flag("new_group", options.get("new_group"))
            _flag("group_reporting", options.get("group_reporting"))  # checked here, read when reported
        except ValueError as error:
            # Messages start with the option at fault: point at its line.
            line = lines.get(re.split("[:=]", str(error))[0], lines[""])
            raise ConfigError(f"{source}:{line}: [{name}] {error}") from None
        if seed is not None:
            jobs.seed = seed
        if sum(len(run) for run in runs) + copies > MAX_JOBS:
            line = lines.get("numjobs", lines[""])
            raise ConfigError(f"{source}:{line}: [{name}] more than {MAX_JOBS} jobs in the file (numjobs included), "
                              "fio's limit")
        if starts_group and in_group:
            group, in_group = group + 1, 0
        in_group += copies
        if not runs or waits:
            runs.append([])
        runs[-1] += [_Member(name, options, {**own, **(overrides or {})}, phase, ramp, group, lines)] * copies
    if not runs:
        chosen = f" named {', '.join(sorted(sections))}" if sections else ""
        raise ConfigError(f"{source}: no job sections{chosen} (only [global] or nothing)")
    jobs.global_options = global_options
    for run in runs:
        _add_run(jobs, run)
    per_phase = Counter(job.phase for job in jobs.jobs)
    for members in entries(jobs):
        together = per_phase[members[0].phase]
        if 1 < len(members) < together:
            jobs.warnings.append(f"[{members[0].name}] group_reporting over some of the jobs that run together: "
                                 "their latency percentiles are the request-weighted means of each job's")
    return jobs


class _Member(NamedTuple):
    """A job of jobs that run together, as ``parse`` reads it: ``options`` its own after ``[global]``'s,
    ``own`` its section's (and the command line's) alone."""

    name: str
    options: dict[str, str]
    own: dict[str, str]
    phase: dict[str, Any]
    ramp: dict[str, Any] | None
    group: int
    lines: dict[str, int]


def _add_run(jobs: FioJobs, run: list[_Member]) -> None:
    """The phases of jobs that run together: their ramp (if a job has one), then the jobs, as one
    phase or one of ``[[phase.job]]``s; and their ``FioJob``s."""
    windows = [ms for ms in (_log_window_ms(options) for _, options, *_ in run) if ms]
    interval = {"interval": f"{min(windows)}ms"} if windows else {}
    if len(run) == 1:
        job = run[0]
        jobs.phases += [job.ramp] if job.ramp else []
        jobs.jobs.append(FioJob(job.name, len(jobs.jobs) + 1, job.group, len(jobs.phases), 0, job.options, job.own,
                                job.lines))
        jobs.phases.append({**job.phase, **interval})
        return
    label = "+".join(dict.fromkeys(name for name, *_ in run))
    if len(set(windows)) > 1:
        jobs.warnings.append(f"[{label}] jobs that run together log together: every {min(windows)} ms, "
                             "the smallest log_avg_msec")
    logging = [name for name, options, *_ in run if _LOGS.keys() & options.keys()]
    if logging:
        number = len(jobs.jobs) + 1 + [name for name, *_ in run].index(logging[0])
        jobs.warnings.append(f"[{label}] jobs that run together share one time series: the logs of {logging[0]} "
                             f"(job {number}) hold the figures of them all; the others write none")
    ramps = [job.ramp for job in run if job.ramp]
    if ramps:
        # fio starts the jobs together and each measures after its own ramp_time; here the group
        # ramps together for the longest one.
        seconds = max(float(ramp["duration"][:-1]) for ramp in ramps)
        if len({ramp["duration"] for ramp in ramps}) > 1 or len(ramps) < len(run):
            jobs.warnings.append(f"[{label}] jobs run together ramp together: {seconds:g}s, the longest ramp_time")
        unstopped = [{k: v for k, v in phase.items() if k not in ("volume", "requests", "duration")}
                     for phase in (job.phase for job in run)]
        jobs.phases.append({"name": f"{label} (ramp)", "duration": f"{seconds}s", "job": unstopped})
    for slot, job in enumerate(run):
        jobs.jobs.append(FioJob(job.name, len(jobs.jobs) + 1, job.group, len(jobs.phases), slot, job.options,
                                job.own, job.lines))
    jobs.phases.append({"name": label, **interval, "job": [job.phase for job in run]})


def _log_window_ms(options: Mapping[str, str]) -> int | None:
    """``log_avg_msec`` of a job that writes logs (None: it writes none, or gives none)."""
    if not _LOGS.keys() & options.keys():
        return None
    return int(options.get("log_avg_msec") or 0) or None


def _job(name: str, o: Mapping[str, str], warnings: list[str]) -> tuple[dict, dict | None, int | None, int]:
    """One job's phase, its ramp phase, its seed and how many copies run (``numjobs``)."""
    handled: set[str] = set()

    def take(key: str, *aliases: str) -> str | None:
        for k in (key, *aliases):
            if k in o:
                handled.add(k)
                return o[k]
        return None

    phase: dict[str, Any] = {"name": name}
    take("name")  # a command-line job's --name, also its section's name
    kb_base = _whole(take("kb_base") or "1024", "kb_base", 1000, 1024)
    if kb_base not in (1000, 1024):
        raise ValueError(f"kb_base: expected 1000 or 1024, found `{kb_base}`")

    def bytes_of(value: str, what: str) -> int:
        return _size(value, what, kb_base)

    def block_of(value: str, what: str) -> int:
        """A request size: whole 512-byte sectors, up to ``MAX_BLOCK`` (what the drive takes)."""
        size = bytes_of(value, what)
        if size < 512 or size % 512 or size > MAX_BLOCK:
            decimal = (f" (with kb_base={kb_base}, {'KiB, MiB' if kb_base == 1024 else 'k, m'} and the like "
                       "are powers of 1,000)" if size % 512 and size % 1000 == 0 else "")
            raise ValueError(f"{what}: expected a request size in whole 512-byte sectors, from 512 bytes to 64MiB, "
                             f"found `{_shown(value)}`, which fio reads as {size:,} bytes{decimal}")
        return size

    rw = (take("rw", "readwrite") or "read").lower()
    base, _, suffix = rw.partition(":")
    if base not in _RW:
        raise ValueError(f"rw: expected one of {', '.join(_RW)}, found `{_shown(rw)}`")
    if suffix:
        warnings.append(f"[{name}] rw={rw}: the ':{suffix}' (holes between sequential requests) is not modelled")
    pattern, read_fraction = _RW[base]
    # Checked whatever rw is (a malformed value is a mistake even where fio would not use it).
    mix_read, mix_write = ((None if text is None else _whole(text, key, 0, 100))
                           for key, text in (("rwmixread", take("rwmixread")), ("rwmixwrite", take("rwmixwrite"))))
    if read_fraction is None:
        if mix_read is not None:
            read_fraction = mix_read / 100
        elif mix_write is not None:
            read_fraction = 1 - mix_write / 100
        else:
            read_fraction = 0.5
    phase["read_fraction"] = read_fraction
    distribution = take("random_distribution") or "random"  # (fio's names are lower case: ZIPF it refuses)
    norandommap = _flag("norandommap", take("norandommap"))
    # Checked whatever the pattern, as fio parses it (a sequential job does not use it).
    kind, _, params = distribution.partition(":")
    value, _, rest = params.partition(":")
    if kind in ("zipf", "pareto", "normal"):
        # zipf's θ and normal's deviation (a percentage) are above 0; pareto's h lies in (0, 1).
        parameter = _decimal(value, f"random_distribution={_shown(distribution)}", 0, 1 if kind == "pareto" else 100,
                             low_open=True)
        if kind == "zipf" and parameter == 1:
            raise ValueError(f"random_distribution={_shown(distribution)}: zipf's theta must not be 1 (fio refuses it)")
    elif kind != "random" and kind not in _UNMODELLED_DISTRIBUTIONS:
        raise ValueError("random_distribution: expected random, zipf:T, pareto:H, normal:DEV or zoned:..., "
                         f"found `{_shown(distribution)}`")
    if pattern == "random":
        uniform = "random" if norandommap else "shuffle"
        if kind == "random":
            phase["pattern"] = uniform
        elif kind in _UNMODELLED_DISTRIBUTIONS:
            warnings.append(f"[{name}] random_distribution={distribution}: zones are not modelled; uniform random")
            phase["pattern"] = uniform
        else:
            if rest:
                warnings.append(f"[{name}] random_distribution={distribution}: the ':{rest}' is not modelled")
            phase["pattern"] = "random"
            phase["distribution"] = f"{kind}:{value}"
    else:
        phase["pattern"] = "sequential"
    bs, bsrange, bssplit = take("bs", "blocksize"), take("bsrange", "blocksize_range"), take("bssplit")
    if bssplit:
        split = []
        for item in bssplit.split(",")[0].split(":"):
            size, _, weight = item.partition("/")
            if not re.fullmatch(r"\s*[0-9]{1,9}\s*", weight or "0"):
                raise ValueError(f"bssplit: expected SIZE/PERCENT items such as 4k/60:64k/40 (a whole number of at "
                                 f"most 9 digits after each /), found `{_shown(item)}`")
            split.append((block_of(size, "bssplit"), min(int(weight or 0), 100)))
        # As fio: a size without a percentage (or with 0) shares what the others leave of 100 % equally.
        unset = sum(weight == 0 for _, weight in split)
        left = max(0, 100 - sum(weight for _, weight in split))
        parts = [f"{size}B/{weight * max(unset, 1) if weight else left}" for size, weight in split if weight or left]
        if not parts:
            raise ValueError(f"bssplit: expected percentages that leave some size a share, found `{_shown(bssplit)}`")
        if "," in bssplit:
            warnings.append(f"[{name}] bssplit: separate read/write splits are not modelled; "
                            f"using `{bssplit.split(',')[0]}`")
        phase["block_sizes"] = parts
    elif bsrange:
        low, _, high = bsrange.split(",")[0].partition("-")
        lo, hi = bytes_of(low, "bsrange"), bytes_of(high or low, "bsrange")
        if lo < 512 or hi < lo or lo % 512 or hi % 512:
            raise ValueError(f"bsrange: expected LOW-HIGH, multiples of 512 bytes from 512 up, found `{_shown(bsrange)}`")
        if hi > MAX_BLOCK:
            raise ValueError(f"bsrange: expected sizes up to 64MiB (the largest request nandlab models), found "
                             f"`{_shown(bsrange)}`")
        # fio draws multiples of LOW; more than MAX_SIZES of them are modelled as every k-th.
        count = (hi - lo) // lo + 1
        step = lo * -(-count // MAX_SIZES)
        if step > lo:
            warnings.append(f"[{name}] bsrange={bsrange}: its {count:,} sizes are modelled as "
                            f"{len(range(lo, hi + 1, step)):,}, {step:,} bytes apart")
        phase["block_sizes"] = [f"{s}B/1" for s in range(lo, hi + 1, step)]
    else:
        sizes = (bs or "4k").split(",")
        if len(set(sizes)) > 1:
            warnings.append(f"[{name}] bs={bs}: separate read/write sizes are not modelled; using {sizes[0]}")
        phase["block_size"] = _bytes_text(block_of(sizes[0], "bs"))
    phase["queue_depth"] = _whole(take("iodepth") or "1", "iodepth", 1, 65_536)  # the engine's most
    numjobs = _whole(take("numjobs") or "1", "numjobs", 1, MAX_JOBS)
    take("stonewall", "wait_for_previous")
    take("new_group")
    take("group_reporting")
    size, offset = take("size"), take("offset")
    if size:
        if size.endswith("%"):  # of the device: fio's size=N% takes 0 < N <= 100
            phase["working_set"] = _decimal(size[:-1], "size", 0, 100, low_open=True) / 100
        elif bytes_of(size, "size") == 0:
            raise ValueError(f"size: expected a size above 0 (or N% of the drive), found `{_shown(size)}`")
        else:
            phase["working_set"] = _bytes_text(bytes_of(size, "size"))
    if offset:
        if offset.endswith("%"):
            phase["working_set_offset"] = _decimal(offset[:-1], "offset", 0, 99.999) / 100
        else:
            phase["working_set_offset"] = _bytes_text(bytes_of(offset, "offset"))
    io_size, number_ios = take("io_size", "io_limit"), take("number_ios")
    runtime, time_based = take("runtime", "timeout"), _flag("time_based", take("time_based"))
    if number_ios:
        phase["requests"] = _whole(number_ios, "number_ios", 1, 2**64 - 1)
    if io_size:
        # As fio: an io_size below the smallest request still does one.
        smallest = min(int(part.split("B/")[0]) for part in phase["block_sizes"]) if "block_sizes" in phase \
            else int(phase["block_size"].rstrip("B"))
        phase["volume"] = _bytes_text(max(bytes_of(io_size, "io_size"), smallest))
    if runtime:
        phase["duration"] = f"{_seconds(runtime, 'runtime')}s"
    if not time_based and not io_size:
        # fio does one pass of the job's size (the whole device without one); number_ios only ends a job
        # sooner (the phase stops at whichever of volume and requests comes first).
        phase["volume"] = phase.get("working_set", 1.0)
    if time_based and not runtime:
        raise ValueError("time_based needs a runtime")
    ramp = None
    ramp_time = take("ramp_time")
    if ramp_time:
        ramp = {**{k: v for k, v in phase.items() if k not in ("volume", "requests")},
                "name": f"{name} (ramp)", "duration": f"{_seconds(ramp_time, 'ramp_time')}s"}
    logged = [option for option in _LOGS if take(option) is not None]
    window = _whole(take("log_avg_msec") or "0", "log_avg_msec", 0, 2**31 - 1)
    _flag("per_job_logs", take("per_job_logs"))  # read when logs are written
    if logged and not window:
        warnings.append(f"[{name}] {logged[0]} without log_avg_msec: fio would log every I/O; here each line is "
                        "one window of the time series (about 200 a phase; log_avg_msec=N: every N ms)")
    if "write_lat_log" in logged and 0 < read_fraction < 1:
        warnings.append(f"[{name}] write_lat_log: a window's read and write latency is the mean of all its requests")
    seed = take("randseed")
    ignored = sorted(k for k in o if k not in handled and k in _NO_EFFECT)
    unknown = sorted(k for k in o if k not in handled and k not in _NO_EFFECT)
    if ignored:
        warnings.append(f"[{name}] no effect on a simulated drive, ignored: {', '.join(ignored)}")
    if unknown:
        warnings.append(f"[{name}] not supported, ignored: {', '.join(unknown)}")
    return phase, ramp, _whole(seed, "randseed", 0, 2**64 - 1) if seed else None, numjobs


@checked
def entries(jobs: FioJobs) -> list[list[FioJob]]:
    """The jobs as fio reports them: each on its own, but one with ``group_reporting`` joins the
    entry before it if that is in the same group (so a whole group, ``numjobs`` copies included,
    is one entry named after its first job)."""
    grouped: list[list[FioJob]] = []
    for job in jobs.jobs:
        if grouped and _flag("group_reporting", job.options.get("group_reporting")) and grouped[-1][0].group == job.group:
            grouped[-1].append(job)
        else:
            grouped.append([job])
    return grouped


@checked
def to_config(jobs: FioJobs, device: qualify.DeviceSource, capacity: str | int | None = None) -> dict[str, Any]:
    """The nandlab config running the jobs on a device (a preset, a TOML file, or a dict)."""
    config = qualify.device_config(device, capacity)
    # size= and offset= in bytes are the engine's working_set sizes; the histograms are json+'s bins.
    config["phase"] = [{**phase, "latency_bins": True} for phase in jobs.phases]
    if jobs.seed is not None:
        config["seed"] = jobs.seed
    return config


@checked
def run(
    jobs: FioJobs,
    device: qualify.DeviceSource,
    capacity: str | int | None = None,
    seed: int | None = None,
    progress: api.Progress = "auto",
) -> dict[str, Any]:
    """Run the jobs on one drive (see the module for groups; ``progress`` as ``nandlab.run`` takes
    it); the result shaped like ``fio --output-format=json``."""
    result = run_config(jobs, to_config(jobs, device, capacity), seed=seed, progress=progress)
    return report(jobs, result)


_ENGINE_KEYS = {"working_set_offset": ("offset",), "working_set": ("size", "io_size", "io_limit"),
                "block_sizes": ("bssplit", "bsrange", "blocksize_range"), "block_size": ("bs", "blocksize"),
                "distribution": ("random_distribution",), "queue_depth": ("iodepth",),
                "duration": ("runtime", "timeout"), "volume": ("size", "io_size", "io_limit"),
                "requests": ("number_ios",), "align": ("blockalign", "ba")}
"""The job options each engine key of a converted job comes from, for its error messages."""


@checked
def run_config(jobs: FioJobs, config: dict[str, Any], **options: Any) -> api.Result:
    """``api.run`` of ``config`` (``to_config`` of ``jobs``), an error in a job's phase said of the job
    file (``job_file_error``)."""
    try:
        return api.every_phase(api.run(config, **options))
    except ConfigError as error:
        raise job_file_error(jobs, error) from None


@checked
def job_file_error(jobs: FioJobs, error: ConfigError) -> ConfigError:
    """An error the engine found in a converted job's phase (``[[phase]] #1 job #2 working_set: ...``)
    said of the job file: its line, the job and the fio option; any other error as it is."""
    m = re.match(r"\[\[phase\]\] #(\d+)(?: job #(\d+))? (\w+): (.*)", str(error), re.S)
    job = m and next((j for j in jobs.jobs if j.phase == int(m.group(1)) - 1 and j.slot == int(m.group(2) or 1) - 1),
                     None)
    if not m or job is None:
        return error
    option = next((o for o in _ENGINE_KEYS.get(m.group(3), ()) if o in job.options), None)
    line = job.lines.get(option or "", job.lines.get("", 0))
    return ConfigError(f"{jobs.source}:{line}: [{job.name}] {option or m.group(3)}: {m.group(4)}")


# --- fio's JSON ----------------------------------------------------------------------------------


UNWRITTEN_HOW = "write the drive first (a job with rw=write, bs=128k, size=100% before a stonewall)"
"""How a fio user preconditions a drive, said when reads found addresses never written."""


@checked
def report(jobs: FioJobs, result: api.Result, bins: bool = False) -> dict[str, Any]:
    """fio's JSON document for the jobs' phases of a run: an entry per job (``entries``); with
    ``bins``, json+'s: each completion latency's histogram (``clat_ns["bins"]``, ns → count)."""
    reports = []
    command_ns = result.config["device"]["interface"]["command_overhead_ns"]
    windows: dict[int, list[dict[str, float]]] = {}
    per_phase = Counter(job.phase for job in jobs.jobs)
    for members in entries(jobs):
        phase = result.phases[members[0].phase]
        together = per_phase[members[0].phase]
        own = [phase["jobs"][job.slot] if together > 1 else phase for job in members]
        if len(members) == together:
            figures = phase  # the phase's own figures: exact percentiles over all its jobs
        elif len(members) == 1:
            figures = own[0]
        else:
            figures = _pooled(own)
        # Each job's bandwidth samples, from its phase's windows (fio samples each job; a group's entry
        # has all its jobs' samples, and their runtimes summed).
        if members[0].phase not in windows:  # a phase's windows once, however many entries it has
            windows[members[0].phase] = _windows(result.timeseries, members[0].phase)
        samples = [(_job_windows(windows[members[0].phase], job), job) for job in own]
        runtime_ms = sum(job["sim_seconds"] for job in own) * 1000
        reports.append(_job_report(members[0], figures, phase["waf"], command_ns, samples, runtime_ms, bins))
    _share_of_group(reports)
    device = result.device.get("preset") or "custom"
    now = time.time()
    return {
        "fio version": "nandlab (simulated drive)",
        "timestamp": int(now),
        "timestamp_ms": int(now * 1000),
        "time": time.ctime(now),
        # As fio: no bare flag, and no key at all without global options.
        **({"global options": options} if (options := {k: v for k, v in jobs.global_options.items() if v != ""})
           else {}),
        "device": device,
        "warnings": [*jobs.warnings, *output.unwritten_read_lines(result.phases, UNWRITTEN_HOW)],
        "jobs": reports,
        "disk_util": [_disk_util(device, result.summary)],
    }


def _pooled(figures: list[dict[str, Any]]) -> dict[str, Any]:
    """Jobs' figures as one job's: counts added up, the longest time, latency moments pooled, and
    each percentile the request-weighted mean of the jobs' (an approximation)."""
    pooled: dict[str, Any] = {"sim_seconds": max(f["sim_seconds"] for f in figures)}
    if all("latency_bins" in f for f in figures):
        pooled["latency_bins"] = {kind: _merged([f["latency_bins"][kind] for f in figures]) for kind in ("read", "write")}
    for kind in ("read", "write"):
        for key in (f"host_{kind}_bytes", f"host_{kind}_requests"):
            pooled[key] = sum(f[key] for f in figures)
        parts = [(f[f"host_{kind}_requests"], f[f"{kind}_latency_us"]) for f in figures if f[f"host_{kind}_requests"]]
        count = pooled[f"host_{kind}_requests"]
        if not parts:
            pooled[f"{kind}_latency_us"] = figures[0][f"{kind}_latency_us"]
            continue
        mean = sum(n * lat["mean"] for n, lat in parts) / count
        variance = sum(n * (lat["stddev"] ** 2 + (lat["mean"] - mean) ** 2) for n, lat in parts) / count
        quantiles = [q for q, _ in parts[0][1]["percentiles"]]
        pooled[f"{kind}_latency_us"] = {
            "min": min(lat["min"] for _, lat in parts), "max": max(lat["max"] for _, lat in parts),
            "mean": mean, "stddev": math.sqrt(variance),
            "percentiles": [(q, sum(n * lat["percentiles"][i][1] for n, lat in parts) / count)
                            for i, q in enumerate(quantiles)],
        }
    return pooled


def _merged(histograms: list[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Histograms as (value, count) pairs added up, in ascending order of value."""
    counts: dict[int, int] = {}
    for histogram in histograms:
        for value, count in histogram:
            counts[value] = counts.get(value, 0) + count
    return sorted(counts.items())


MAX_SAMPLES = 200
"""The most bandwidth samples a job gets (as many as its phase's time-series windows, up to this)."""


def _job_windows(windows: list[dict[str, float]], job: dict[str, Any]) -> list[dict[str, float]]:
    """A job's bandwidth and IOPS samples, as fio takes them: over equal spans of the job's own time
    (fio's ``bw_avg_time``), from its phase's time-series windows (``_windows``; their spans follow
    the data moved, so a short window's rate would count as much as a long one's), the data each
    window moved spread evenly over it. The engine keeps one time series per phase, not per job: a
    job's figures in a direction are the phase's scaled to the job's own bytes in it (exact for a
    job alone in its direction, as a writer beside a reader; jobs sharing a direction each get a
    constant share of it)."""
    import numpy as np

    end_ms = job["sim_seconds"] * 1000
    if not windows or end_ms <= 0:
        return []
    edges = np.array([0.0, *(w["end_ms"] for w in windows)])
    spans_s = np.diff(edges) / 1000
    count = min(len(windows), MAX_SAMPLES)
    bounds = np.linspace(0.0, end_ms, count + 1)
    seconds = np.diff(bounds) / 1000
    figures = {}
    for kind in ("read", "write"):
        for figure, total in (("bw", job[f"host_{kind}_bytes"] / 1024), ("iops", job[f"host_{kind}_requests"])):
            # The figure moved by each time, linear within a window; at the bounds, scaled to the job's own.
            totals = np.concatenate(([0.0], np.cumsum([w[f"{kind}_{figure}"] for w in windows] * spans_s)))
            at = np.interp(bounds, edges, totals)
            scale = total / at[-1] if at[-1] > 0 else 0.0
            figures[f"{kind}_{figure}"] = (np.diff(at) * scale / seconds).tolist()
    return [{name: values[i] for name, values in figures.items()} for i in range(count)]


def _job_report(job: FioJob, s: dict[str, Any], waf: float, command_ns: int,
                samples: list[tuple[list[dict[str, float]], dict[str, Any]]], job_runtime_ms: float,
                bins: bool = False) -> dict[str, Any]:
    """One entry: ``job`` the (first) job it reports, ``s`` its figures (a phase's, a job's in a
    phase, or pooled), ``waf`` the drive's over the phase, ``command_ns`` the host interface's time
    per command (fio's submission latency: the rest is the completion latency); ``samples`` each of
    its jobs' samples (``_job_windows``) and figures, which give its bandwidth and IOPS statistics;
    ``job_runtime_ms`` its jobs' runtimes added up (fio's ``job_runtime`` of a group); ``bins``:
    json+'s latency histograms. Whole numbers where fio writes them."""
    runtime_ms = s["sim_seconds"] * 1000

    def direction(kind: str) -> dict[str, Any]:
        io_bytes = s.get(f"host_{kind}_bytes", 0)
        ios = s.get(f"host_{kind}_requests", 0)
        seconds = s["sim_seconds"]
        lat = s[f"{kind}_latency_us"] if kind != "trim" else None

        def ns(value_us: float, less: int = 0) -> int:
            return max(0, round(value_us * 1000) - less)

        def latency(less: int) -> dict[str, Any]:
            if not (lat and ios):
                return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
            return {"min": ns(lat["min"], less), "max": ns(lat["max"], less),
                    "mean": max(0.0, lat["mean"] * 1000 - less), "stddev": lat["stddev"] * 1000, "N": ios}

        clat = latency(command_ns)
        if lat and ios:  # as fio: a direction without I/O has no percentiles
            clat["percentile"] = {f"{q:.6f}": ns(v, command_ns) for q, v in lat.get("percentiles", [])}
        if bins and ios:  # nor histogram
            clat["bins"] = {str(max(0, value - command_ns)): count
                            for value, count in s.get("latency_bins", {}).get(kind, [])}
        bw_kib = io_bytes / 1024 / seconds if seconds else 0.0
        iops = ios / seconds if seconds else 0.0
        slat = {"min": command_ns, "max": command_ns, "mean": float(command_ns), "stddev": 0.0, "N": ios} \
            if ios else latency(0)
        return {
            "io_bytes": io_bytes,
            "io_kbytes": io_bytes // 1024,
            "bw_bytes": round(io_bytes / seconds) if seconds else 0,
            "bw": round(bw_kib),
            "iops": iops,
            "runtime": round(runtime_ms) if ios else 0,
            "total_ios": ios,
            "short_ios": 0,
            "drop_ios": 0,
            "slat_ns": slat,
            "clat_ns": clat,
            "lat_ns": latency(0),
            **_samples(kind, samples),
        }

    depth = job.options.get("iodepth", "1")
    levels = {"1": 0.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0}
    # fio's submit and complete depth buckets: how many I/Os each submission and reap handled.
    batches = {"0": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, "64": 0.0, ">=64": 0.0}
    try:
        d = max(1, int(depth))
        # A closed loop keeps its queue full: every I/O at the job's depth, submitted and completed
        # one at a time (each as its slot frees).
        levels[">=64" if d >= 64 else str(1 << (d.bit_length() - 1))] = 100.0
    except ValueError:
        d = 1
    batches["4"] = 100.0
    return {
        "jobname": job.name,
        "groupid": job.group,
        "error": 0,
        "eta": 0,
        "elapsed": round(s["sim_seconds"]),
        "job options": {k: v for k, v in job.own.items() if v != ""},  # fio lists no bare flag (stonewall)
        "read": direction("read"),
        "write": direction("write"),
        "trim": direction("trim"),
        # fio's fsync/fdatasync figures: nandlab's jobs issue none.
        "sync": {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}},
        "job_runtime": round(job_runtime_ms),
        "usr_cpu": 0.0,
        "sys_cpu": 0.0,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": levels,
        "iodepth_submit": dict(batches),
        "iodepth_complete": dict(batches),
        **_latency_levels(s, command_ns),
        # fio's latency_target search (latency_target= not given): as fio reports it then.
        "latency_depth": d,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
        "waf": waf,
    }


def _samples(kind: str, jobs: list[tuple[list[dict[str, float]], dict[str, Any]]]) -> dict[str, Any]:
    """fio's bandwidth (KiB/s) and IOPS sample statistics of a direction over an entry's jobs, each
    job's from its samples (``_job_windows``; a job without any, as a trim, one sample at its means)
    — and, for a group's entry, added up as fio's ``sum_stat`` adds them for group_reporting: the
    jobs' minima, maxima, means and squared deviations summed, a job that never moved data in the
    direction left out."""
    stats: dict[str, list[float]] = {"bw": [0.0] * 5, "iops": [0.0] * 5}  # min, max, mean, S, samples
    for windows, job in jobs:
        if not job.get(f"host_{kind}_bytes"):
            continue
        seconds = job["sim_seconds"]
        means = {"bw": job[f"host_{kind}_bytes"] / 1024 / seconds if seconds else 0.0,
                 "iops": job[f"host_{kind}_requests"] / seconds if seconds else 0.0}
        for figure, total in stats.items():
            values = [w[f"{kind}_{figure}"] for w in windows if f"{kind}_{figure}" in w] or [means[figure]]
            mean = sum(values) / len(values)
            # (fio's samples are whole numbers: a group's minimum and maximum add up each job's, rounded)
            for i, v in enumerate((round(min(values)), round(max(values)), mean,
                                   sum((x - mean) ** 2 for x in values), len(values))):
                total[i] += v
    (bw_min, bw_max, bw_mean, bw_s, n), (iops_min, iops_max, iops_mean, iops_s, _) = stats["bw"], stats["iops"]

    def deviation(s: float) -> float:
        return math.sqrt(s / (n - 1)) if n > 1 else 0.0

    # bw_agg is set once the group's entries are known.
    return {"bw_min": round(bw_min), "bw_max": round(bw_max), "bw_agg": 100.0 if n else 0.0, "bw_mean": bw_mean,
            "bw_dev": deviation(bw_s), "bw_samples": int(n),
            "iops_min": round(iops_min), "iops_max": round(iops_max), "iops_mean": iops_mean,
            "iops_stddev": deviation(iops_s), "iops_samples": int(n)}


def _latency_levels(s: dict[str, Any], command_ns: int) -> dict[str, dict[str, float]]:
    """fio's ``latency_ns``, ``latency_us`` and ``latency_ms``: the share (%) of the reads and writes
    whose completion latency (the latency less ``command_ns``, as ``clat_ns``) fell in each level,
    counted from the latency histograms (``latency_bins``, ns) as fio
    counts its completions: below 1 µs by the nanoseconds, below 1 ms by the whole microseconds,
    else by the whole milliseconds; a level ``L`` holds the values from the level before it up to
    below ``L`` (``250`` µs: 100–249 µs), ``>=2000`` ms the rest; a level with any completion at
    least 0.01 (fio rounds it up)."""
    bins = s.get("latency_bins", {})
    counts = {unit: [0] * (len(_LATENCY_LEVELS) + (2 if unit == "ms" else 0)) for unit in ("ns", "us", "ms")}
    for kind in ("read", "write"):
        for total_ns, count in bins.get(kind, []):
            ns = max(0, total_ns - command_ns)
            unit, whole = ("ns", ns) if ns < 1000 else ("us", ns // 1000) if ns < 1_000_000 else ("ms", ns // 1_000_000)
            bounds = (*_LATENCY_LEVELS, 2000) if unit == "ms" else _LATENCY_LEVELS
            counts[unit][bisect.bisect_right(bounds, whole)] += count
    total = sum(sum(c) for c in counts.values())
    levels = {}
    for unit, level_counts in counts.items():
        names = [*map(str, _LATENCY_LEVELS), *(("2000", ">=2000") if unit == "ms" else ())]
        # As fio's stat_calc_lat: a level that holds any completion shows at least 0.01 %.
        levels[f"latency_{unit}"] = {name: (max(0.01, n / total * 100) if n else 0.0)
                                     for name, n in zip(names, level_counts)}
    return levels


def _share_of_group(reports: list[dict[str, Any]]) -> None:
    """Each entry's ``bw_agg``: its share (%) of its group's bandwidth (all the group's bytes over its
    longest runtime), as fio computes it."""
    for kind in ("read", "write", "trim"):
        groups: dict[int, list[dict[str, Any]]] = {}
        for entry in reports:
            groups.setdefault(entry["groupid"], []).append(entry[kind])
        for parts in groups.values():
            longest = max(d["runtime"] for d in parts)
            aggregate = sum(d["io_bytes"] for d in parts) / 1024 / (longest / 1000) if longest else 0.0
            for d in parts:
                d["bw_agg"] = min(100.0, d["bw_mean"] * 100 / aggregate) if aggregate else 0.0


def _disk_util(name: str, summary: dict[str, Any]) -> dict[str, Any]:
    """fio's ``disk_util`` entry for the simulated drive over the whole run: its requests, sectors,
    and ticks (ms its requests spent, mean latency × count); busy all the time it had work (its
    jobs keep their queues full)."""

    def ticks(kind: str) -> int:
        latency = summary[f"{kind}_latency_us"]  # None without a request of the kind
        return round(latency["mean"] * summary[f"host_{kind}_requests"] / 1000) if latency else 0

    ios = summary["host_read_requests"] + summary["host_write_requests"]
    return {
        "name": name,
        "read_ios": summary["host_read_requests"], "write_ios": summary["host_write_requests"],
        "read_sectors": summary["host_read_bytes"] // 512, "write_sectors": summary["host_write_bytes"] // 512,
        "read_merges": 0, "write_merges": 0,
        "read_ticks": ticks("read"), "write_ticks": ticks("write"), "in_queue": ticks("read") + ticks("write"),
        "util": 100.0 if ios else 0.0,
    }


# --- fio's terse output --------------------------------------------------------------------------


@checked
def terse(document: Mapping[str, Any]) -> str:
    """``report``'s document as fio's terse output, version 3 (``--output-format=terse``): a line per
    entry of semicolon-separated fields in fio's order — the job, read and write status, CPU, I/O
    depths, latency levels, the drive's disk utilization, and the job's description if it has one."""
    lines = []
    for job in document["jobs"]:
        # The job's name as fio writes it, but that a terminal is sent no control character of a job file's.
        fields = [str(TERSE_VERSION), document["fio version"], shown(job["jobname"]), str(job["groupid"]),
                  str(job["error"])]
        for kind in ("read", "write"):
            fields += _terse_direction(job[kind])
        fields += [f"{job['usr_cpu']:f}%", f"{job['sys_cpu']:f}%", str(job["ctx"]), str(job["majf"]), str(job["minf"])]
        fields += [f"{share:3.1f}%" for share in job["iodepth_level"].values()]
        fields += [f"{share:3.2f}%" for share in (*job["latency_us"].values(), *job["latency_ms"].values())]
        for disk in document["disk_util"]:
            counts = ("read_ios", "write_ios", "read_merges", "write_merges", "read_ticks", "write_ticks", "in_queue")
            fields += [disk["name"], *(str(disk[key]) for key in counts), f"{disk['util']:3.2f}%"]
        if job["job options"].get("description"):
            fields.append(shown(job["job options"]["description"]))
        lines.append(";".join(fields) + "\n")
    return "".join(lines)


def _terse_direction(d: Mapping[str, Any]) -> list[str]:
    """A direction's 41 terse fields: KiB, KiB/s, IOPS and runtime (ms), submission, completion
    latency (µs: min, max, mean, stddev) and its 20 percentile fields, total latency, bandwidth."""

    def usec(stat: Mapping[str, Any]) -> list[str]:
        return [str(int(stat["min"] // 1000)), str(int(stat["max"] // 1000)), f"{stat['mean'] / 1000:f}",
                f"{stat['stddev'] / 1000:f}"]

    runtime = round(d["runtime"])
    percentiles = [f"{float(q):f}%={int(v // 1000)}" for q, v in d["clat_ns"].get("percentile", {}).items()]
    return [
        str(d["io_kbytes"]),
        str(1000 * d["io_bytes"] // runtime // 1024 if runtime else 0),
        str(1000 * d["total_ios"] // runtime if runtime else 0),
        str(runtime),
        *usec(d["slat_ns"]), *usec(d["clat_ns"]),
        *(percentiles + ["0%=0"] * PERCENTILE_FIELDS)[:PERCENTILE_FIELDS],
        *usec(d["lat_ns"]),
        str(int(d["bw_min"])), str(int(d["bw_max"])), f"{d['bw_agg']:f}%", f"{d['bw_mean']:f}", f"{d['bw_dev']:f}",
    ]


# --- fio's logs ----------------------------------------------------------------------------------


@checked
def log_names(jobs: FioJobs) -> list[tuple[int, str, str]]:
    """The log files the jobs ask for (``write_bw_log``, ``write_lat_log``, ``write_iops_log``), as
    (phase, kind, name): each name as fio makes it, relative to the directory the logs go to. Jobs that
    run together share their phase's time series: the first that asks gets it. ValueError for a
    prefix that would leave that directory (absolute, or with ``..``)."""
    names = []
    logged: set[int] = set()
    for job in jobs.jobs:
        asked = [option for option in _LOGS if option in job.options]
        if not asked or job.phase in logged:
            continue
        logged.add(job.phase)
        number = f".{job.number}" if _flag("per_job_logs", job.options.get("per_job_logs", "1")) else ""
        for option in asked:
            prefix = job.options[option] or job.name
            if os.path.isabs(prefix) or ".." in Path(prefix).parts or "\0" in prefix:
                raise ValueError(f"[{job.name}] {option}: expected a log name inside the directory the logs go "
                                 f"to (--out, or the working directory), found `{_shown(prefix)}`")
            folders = Path(prefix).parts[:-1]
            if folders and (folders[0] == "figures" or folders[0].endswith(output.RESULT_SUFFIXES)):
                raise ValueError(f"[{job.name}] {option}: a log in {folders[0]}/ would take the name of a file or "
                                 f"folder nandlab writes its results to, found `{_shown(prefix)}`")
            names.extend((job.phase, kind, f"{prefix}_{kind}{number}.log") for kind in _LOGS[option])
    return names


@checked
def logs(jobs: FioJobs, result: api.Result) -> dict[str, str]:
    """Each log of ``log_names`` and its text (see the module)."""
    texts: dict[str, str] = {}
    windows: dict[int, list[dict[str, float]]] = {}
    for phase, kind, name in log_names(jobs):
        if phase not in windows:
            windows[phase] = _windows(result.timeseries, phase)
        texts[name] = texts.get(name, "") + "".join(_log_lines(windows[phase], kind))
    return texts


@checked
def check_logs_writable(jobs: FioJobs, directory: str | os.PathLike[str]) -> None:
    """Before a run: every log of ``log_names`` can be written under ``directory`` (its folders made,
    none of them a link); ConfigError naming the first that cannot."""
    for _, _, name in log_names(jobs):
        path = Path(directory) / name
        try:
            _log_folder(Path(directory), name)
            if path.exists() and (path.is_dir() or not os.access(path, os.W_OK)):
                raise OSError(f"{path}: cannot write a log there")
            with tempfile.TemporaryFile(dir=path.parent):
                pass
        except OSError as error:
            raise ConfigError(f"cannot write fio's logs: {error}") from None


def _log_folder(directory: Path, name: str) -> Path:
    """Makes the folders of log ``name`` under ``directory``; OSError if one is a symbolic link (a log
    written through it would land outside ``directory``: nandlab writes nothing through a link)."""
    directory.mkdir(parents=True, exist_ok=True)  # --out, named by the user (a link to it is theirs)
    folder = directory
    for part in Path(name).parts[:-1]:
        folder = folder / part
        if folder.is_symlink():
            raise OSError(f"{folder}: a symbolic link, and a log written through it would land outside "
                          f"{directory}")
        folder.mkdir(exist_ok=True)
    return folder


@checked
def write_logs(jobs: FioJobs, result: api.Result, directory: str | os.PathLike[str] = ".") -> list[Path]:
    """Write ``logs`` under ``directory`` (fio writes them in its working directory); their paths."""
    paths = []
    for name, text in logs(jobs, result).items():
        path = _log_folder(Path(directory), name) / Path(name).name
        files.unlink_link(path).write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _windows(series: pl.DataFrame, phase: int) -> list[dict[str, float]]:
    """A phase's time-series windows as a log needs them: ``ms`` (the window's end since the phase
    began), and each direction's ``bw`` (KiB/s), ``iops`` and the window's mean latency ``lat`` (ns).
    IOPS are split between the directions as their bytes are (reads and writes draw one size)."""
    times = series["sim_seconds"].to_list()
    rows = [i for i, p in enumerate(series["phase"].to_list()) if p == phase]
    start = times[rows[0] - 1] if rows and rows[0] else 0.0
    windows = []
    for i in rows:
        row = series.row(i, named=True)
        if row["iops"] is None:
            continue  # a window of no simulated time: fio has none
        moved = row["read_mbps"] + row["write_mbps"]
        windows.append({
            "ms": round((row["sim_seconds"] - start) * 1000),
            "end_ms": (row["sim_seconds"] - start) * 1000,  # not rounded: samples are taken over it
            "lat": (row["latency_mean_us"] or 0.0) * 1000,  # no completions: fio's logs say 0
            **{f"{kind}_bw": row[f"{kind}_mbps"] * 1e6 / 1024 for kind in ("read", "write")},
            **{f"{kind}_iops": row["iops"] * row[f"{kind}_mbps"] / moved if moved else 0.0
               for kind in ("read", "write")},
        })
    return windows


def _log_lines(windows: list[dict[str, float]], kind: str) -> Iterator[str]:
    """A log's lines: per window, a line per direction that moved data (read 0, write 1)."""
    if kind == "slat":
        return
    for window in windows:
        for ddir, direction in enumerate(("read", "write")):
            if window[f"{direction}_bw"] > 0:
                value = window["lat"] if kind in ("lat", "clat") else window[f"{direction}_{kind}"]
                yield f"{window['ms']}, {round(value)}, {ddir}, 0, 0\n"


show_types(__name__)
