"""fio job files on a simulated drive: the options that make sense without a real device become
nandlab ``[[phase]]`` keys; the rest are named in warnings, never silently dropped::

    from nandlab import fio

    job = fio.load("randwrite.fio")          # FioJobs: phases, warnings
    report = fio.run(job, "swissbit-standard", capacity="4GiB")
    report["jobs"][0]["write"]["iops"]       # shaped like `fio --output-format=json`

Mapping (fio → nandlab): ``rw``/``readwrite`` → ``pattern`` and ``read_fraction`` (random jobs
without ``norandommap`` visit every block once per pass, as fio's random map does: ``shuffle``);
``rwmixread``/``rwmixwrite``; ``bs``, ``bsrange``, ``bssplit`` → ``block_size``/``block_sizes``;
``iodepth`` → ``queue_depth``; ``size`` and ``offset`` → the working set; ``io_size``/``io_limit``
and ``number_ios`` → ``volume``/``requests`` (default: one pass of ``size``); ``runtime`` →
``duration`` (``time_based``: the job runs for it; else it caps the job); ``random_distribution``
(random, zipf, pareto, normal) → ``distribution``; ``ramp_time`` → a phase before the job whose
results are not reported; ``randseed`` → the seed; ``numjobs`` → that many copies of the job.

Jobs run as fio runs them: together, each with its own queue, until a job with ``stonewall`` (or
``wait_for_previous``) waits for all before it to finish and starts a new group. A group of one job
is a ``[[phase]]``; a group of several is one phase of ``[[phase.job]]``s, each reported on its own.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nandlab import api, files, qualify
from nandlab._core import ConfigError

__all__ = ["FioJobs", "load", "parse", "report", "run", "to_config"]

_NO_EFFECT = {
    "ioengine", "direct", "buffered", "filename", "directory", "group_reporting", "thread", "invalidate",
    "randrepeat", "refill_buffers", "exitall", "exitall_on_error", "name", "description", "gtod_reduce",
    "disable_lat", "disable_clat", "disable_slat", "clat_percentiles", "lat_percentiles", "percentile_list",
    "log_avg_msec", "write_bw_log", "write_lat_log", "write_iops_log", "per_job_logs", "allow_mounted_write",
    "continue_on_error", "iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete", "fsync_on_close",
    "end_fsync", "create_on_open", "unlink", "overwrite", "loops", "kb_base", "unit_base", "new_group", "fadvise_hint", "scramble_buffers", "zero_buffers", "cpus_allowed",
    "cpumask", "nice", "prio", "prioclass", "numa_cpu_nodes",
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


@dataclass
class FioJobs:
    """A job file turned into nandlab phases.

    Attributes:
        phases: the ``[[phase]]`` dicts, in order (ramp phases before their jobs); jobs that run
            together are one phase with a ``job`` list.
        reported: names of the phases that hold jobs (not ramps), in order.
        options: each job's fio options (after ``[global]``), by job name.
        warnings: options nandlab ignored or approximated, one line each.
        seed: ``randseed`` if given.
    """

    phases: list[dict[str, Any]] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)
    options: dict[str, dict[str, str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    seed: int | None = None


def load(path: str | os.PathLike[str], sections: Collection[str] = (),
         overrides: Mapping[str, str] | None = None) -> FioJobs:
    """Read and convert a fio job file (``ConfigError`` names the line at fault); see ``parse``."""
    p = Path(path)
    text = files.read_text(p, "job file")
    return parse(text, str(p), sections, overrides)


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
            sections.append((value, []))
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
    Lazily, so that a file of millions of sections is refused at the job past ``MAX_JOBS``."""
    section: tuple[str, dict[str, str], dict[str, int]] | None = None
    for number, raw in enumerate(io.StringIO(text, newline=None), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            if section is not None:
                yield section
            section = (line[1:-1].strip(), {}, {"": number})
            continue
        if section is None:
            raise ConfigError(f"{source}:{number}: an option before any [job] section: `{line}`")
        key, _, value = line.partition("=")
        section[1][key.strip().lower()] = value.strip()
        section[2][key.strip().lower()] = number
    if section is not None:
        yield section


MAX_JOBS = 4096
"""The most jobs a job file starts, ``numjobs`` copies included (fio's own limit)."""

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgtp]?)(i?b?)$", re.IGNORECASE)


def _size(value: str, what: str) -> int:
    """fio sizes: ``4k`` = 4 KiB (fio's default kb_base is 1024), ``1m``, ``512``, ``4KiB``."""
    m = _SIZE.match(value.strip())
    if not m:
        raise ValueError(f"{what}: expected a size like 4k or 1m, found `{value}`")
    number, prefix, _ = m.groups()
    return int(float(number) * 1024 ** "_kmgtp".index(prefix.lower() or "_"))


def _whole(value: str, what: str, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` (``iodepth``, ``numjobs``, ``randseed``, ...)."""
    try:
        number = int(value)
    except ValueError:
        number = low - 1
    if not low <= number <= high:
        raise ValueError(f"{what}: expected a whole number from {low} to {high}, found `{value}`")
    return number


def _seconds(value: str, what: str) -> float:
    """fio times: seconds by default, or with us/ms/s/m/h."""
    m = re.match(r"^(\d+(?:\.\d+)?)\s*(us|usec|ms|msec|s|sec|m|min|h)?$", value.strip().lower())
    if not m:
        raise ValueError(f"{what}: expected a time like 30, 30s or 500ms, found `{value}`")
    scale = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "m": 60, "min": 60, "h": 3600}
    return float(m.group(1)) * scale.get(m.group(2) or "s", 1.0)


def _bytes_text(n: int) -> str:
    return f"{n}B"


def parse(text: str, source: str = "<job file>", sections: Collection[str] = (),
          overrides: Mapping[str, str] | None = None) -> FioJobs:
    """Convert job file text (see the module's mapping). ``sections``: run only these jobs (fio's
    ``--section``); ``overrides``: options that replace every job's (fio's command-line options
    given with a job file, such as ``--runtime=10``)."""
    jobs = FioJobs()
    global_options: dict[str, str] = {}
    global_lines: dict[str, int] = {}
    # Groups of jobs that run together: (phase, ramp phase or None) of each job.
    groups: list[list[tuple[dict[str, Any], dict[str, Any] | None]]] = []
    started = 0
    for name, own, lines in _sections(text, source):
        if name == "global":
            global_options.update(own)
            global_lines.update({k: v for k, v in lines.items() if k})
            continue
        if sections and name not in sections:
            continue
        options = {**global_options, **own, **(overrides or {})}
        lines = {**global_lines, **lines}
        jobs.options[name] = options
        try:
            phase, ramp, seed, copies = _job(name, options, jobs.warnings)
        except ValueError as error:
            # Messages start with the option at fault: point at its line.
            line = lines.get(str(error).split(":")[0], lines[""])
            raise ConfigError(f"{source}:{line}: [{name}] {error}") from None
        if seed is not None:
            jobs.seed = seed
        started += copies
        if started > MAX_JOBS:
            line = lines.get("numjobs", lines[""])
            raise ConfigError(f"{source}:{line}: [{name}] more than {MAX_JOBS} jobs in the file (numjobs included), "
                              "fio's limit")
        if not groups or "stonewall" in options or "wait_for_previous" in options:
            groups.append([])
        groups[-1] += [(phase, ramp)] * copies
    if not groups:
        chosen = f" named {', '.join(sorted(sections))}" if sections else ""
        raise ConfigError(f"{source}: no job sections{chosen} (only [global] or nothing)")
    for group in groups:
        _add_group(jobs, group)
    return jobs


def _add_group(jobs: FioJobs, group: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
    """A group's phases: its ramp (if a job has one), then the jobs, as one phase or one of jobs."""
    if len(group) == 1:
        phase, ramp = group[0]
        jobs.phases += [ramp, phase] if ramp else [phase]
        jobs.reported.append(phase["name"])
        return
    name = "+".join(dict.fromkeys(phase["name"] for phase, _ in group))
    ramps = [ramp for _, ramp in group if ramp]
    if ramps:
        # fio starts the jobs together and each measures after its own ramp_time; here the group
        # ramps together for the longest one.
        seconds = max(float(ramp["duration"][:-1]) for ramp in ramps)
        if len({ramp["duration"] for ramp in ramps}) > 1 or len(ramps) < len(group):
            jobs.warnings.append(f"[{name}] jobs run together ramp together: {seconds:g}s, the longest ramp_time")
        unstopped = [{k: v for k, v in phase.items() if k not in ("volume", "requests", "duration")}
                     for phase, _ in group]
        jobs.phases.append({"name": f"{name} (ramp)", "duration": f"{seconds}s", "job": unstopped})
    jobs.phases.append({"name": name, "job": [phase for phase, _ in group]})
    jobs.reported.append(name)


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
    rw = (take("rw", "readwrite") or "read").lower()
    base, _, suffix = rw.partition(":")
    if base not in _RW:
        raise ValueError(f"rw: expected one of {', '.join(_RW)}, found `{rw}`")
    if suffix:
        warnings.append(f"[{name}] rw={rw}: the ':{suffix}' (holes between sequential requests) is not modelled")
    pattern, read_fraction = _RW[base]
    mix_read, mix_write = take("rwmixread"), take("rwmixwrite")
    if read_fraction is None:
        if mix_read is not None:
            read_fraction = _whole(mix_read, "rwmixread", 0, 100) / 100
        elif mix_write is not None:
            read_fraction = 1 - _whole(mix_write, "rwmixwrite", 0, 100) / 100
        else:
            read_fraction = 0.5
    phase["read_fraction"] = read_fraction
    distribution = (take("random_distribution") or "random").lower()
    norandommap = take("norandommap") is not None
    if pattern == "random":
        kind, _, params = distribution.partition(":")
        if kind == "random":
            phase["pattern"] = "random" if norandommap else "shuffle"
        elif kind in ("zipf", "pareto", "normal"):
            value, _, rest = params.partition(":")
            if rest:
                warnings.append(f"[{name}] random_distribution={distribution}: the ':{rest}' is not modelled")
            phase["pattern"] = "random"
            phase["distribution"] = f"{kind}:{value}"
        else:
            raise ValueError(f"random_distribution: expected random, zipf:T, pareto:H or normal:DEV, found `{distribution}`")
    else:
        phase["pattern"] = "sequential"
    bs, bsrange, bssplit = take("bs", "blocksize"), take("bsrange", "blocksize_range"), take("bssplit")
    if bssplit:
        parts = []
        for item in bssplit.split(",")[0].split(":"):
            size, _, weight = item.partition("/")
            parts.append(f"{_size(size, 'bssplit')}B/{int(weight or 1)}")
        if "," in bssplit:
            warnings.append(f"[{name}] bssplit: separate read/write splits are not modelled; using `{bssplit.split(',')[0]}`")
        phase["block_sizes"] = parts
    elif bsrange:
        low, _, high = bsrange.split(",")[0].partition("-")
        lo, hi = _size(low, "bsrange"), _size(high or low, "bsrange")
        if hi < lo or lo % 512:
            raise ValueError(f"bsrange: expected LOW-HIGH with multiples of 512, found `{bsrange}`")
        phase["block_sizes"] = [f"{s}B/1" for s in range(lo, hi + 1, lo)]
    else:
        sizes = (bs or "4k").split(",")
        if len(set(sizes)) > 1:
            warnings.append(f"[{name}] bs={bs}: separate read/write sizes are not modelled; using {sizes[0]}")
        phase["block_size"] = _bytes_text(_size(sizes[0], "bs"))
    phase["queue_depth"] = _whole(take("iodepth") or "1", "iodepth", 1, 65_536)  # the engine's most
    numjobs = _whole(take("numjobs") or "1", "numjobs", 1, MAX_JOBS)
    take("stonewall", "wait_for_previous")
    size, offset = take("size"), take("offset")
    if size:
        if size.endswith("%"):
            phase["working_set"] = float(size[:-1]) / 100
        else:
            phase["working_set"] = _bytes_text(_size(size, "size"))
    if offset:
        if offset.endswith("%"):
            phase["working_set_offset"] = float(offset[:-1]) / 100
        else:
            phase["working_set_offset"] = _bytes_text(_size(offset, "offset"))
    io_size, number_ios = take("io_size", "io_limit"), take("number_ios")
    runtime, time_based = take("runtime", "timeout"), take("time_based") is not None
    if number_ios:
        phase["requests"] = _whole(number_ios, "number_ios", 1, 2**64 - 1)
    if io_size:
        phase["volume"] = _bytes_text(_size(io_size, "io_size"))
    if runtime:
        phase["duration"] = f"{_seconds(runtime, 'runtime')}s"
    if not time_based and not io_size and not number_ios:
        # fio does one pass of the job's size (the whole device without one).
        phase["volume"] = phase.get("working_set", 1.0)
    if time_based and not runtime:
        raise ValueError("time_based needs a runtime")
    ramp = None
    ramp_time = take("ramp_time")
    if ramp_time:
        ramp = {**{k: v for k, v in phase.items() if k not in ("volume", "requests")},
                "name": f"{name} (ramp)", "duration": f"{_seconds(ramp_time, 'ramp_time')}s"}
    seed = take("randseed")
    ignored = sorted(k for k in o if k not in handled and k in _NO_EFFECT)
    unknown = sorted(k for k in o if k not in handled and k not in _NO_EFFECT)
    if ignored:
        warnings.append(f"[{name}] no effect on a simulated drive, ignored: {', '.join(ignored)}")
    if unknown:
        warnings.append(f"[{name}] not supported, ignored: {', '.join(unknown)}")
    return phase, ramp, _whole(seed, "randseed", 0, 2**64 - 1) if seed else None, numjobs


def to_config(jobs: FioJobs, device: qualify.DeviceSource, capacity: str | int | None = None) -> dict[str, Any]:
    """The nandlab config running the jobs on a device (a preset, a TOML file, or a dict)."""
    config = qualify.device_config(device, capacity)
    config["phase"] = jobs.phases  # size= and offset= in bytes are the engine's working_set sizes
    if jobs.seed is not None:
        config["seed"] = jobs.seed
    return config


def run(
    jobs: FioJobs,
    device: qualify.DeviceSource,
    capacity: str | int | None = None,
    seed: int | None = None,
    progress: api.ProgressCallback | None = None,
) -> dict[str, Any]:
    """Run the jobs on one drive (see the module for groups); the result shaped like
    ``fio --output-format=json``."""
    result = api.run(to_config(jobs, device, capacity), seed=seed, progress=progress)
    return report(jobs, result)


def report(jobs: FioJobs, result: api.Result) -> dict[str, Any]:
    """fio's JSON document for the jobs' phases of a run."""
    by_name = {p["name"]: p for p in result.phases}
    reports = []
    for group_id, name in enumerate(jobs.reported):
        phase = by_name[name]
        for job in phase.get("jobs") or [phase]:
            reports.append(_job_report(job["name"], jobs.options[job["name"]], job, phase["waf"], group_id))
    return {
        "fio version": "nandlab (simulated drive)",
        "device": result.device.get("preset") or "custom",
        "warnings": jobs.warnings,
        "jobs": reports,
    }


def _job_report(name: str, options: dict[str, str], s: dict[str, Any], waf: float, group_id: int) -> dict[str, Any]:
    """One job's entry: ``s`` its phase summary (or its own figures in a group), ``waf`` the
    drive's over the phase."""
    runtime_ms = s["sim_seconds"] * 1000

    def direction(kind: str) -> dict[str, Any]:
        io_bytes = s.get(f"host_{kind}_bytes", 0)
        ios = s.get(f"host_{kind}_requests", 0)
        seconds = s["sim_seconds"]
        lat = s[f"{kind}_latency_us"] if kind != "trim" else None

        def ns(key: str) -> float:
            return lat[key] * 1000 if lat and ios else 0.0

        clat = {
            "min": ns("min"), "max": ns("max"), "mean": ns("mean"), "stddev": ns("stddev"), "N": ios,
            "percentile": {f"{q:.6f}": (v * 1000 if ios else 0.0) for q, v in (lat or {}).get("percentiles", [])},
        }
        bw_kib = io_bytes / 1024 / seconds if seconds else 0.0
        iops = ios / seconds if seconds else 0.0
        return {
            "io_bytes": io_bytes,
            "io_kbytes": io_bytes // 1024,
            "bw_bytes": io_bytes / seconds if seconds else 0.0,
            "bw": bw_kib,
            "iops": iops,
            "runtime": runtime_ms,
            "total_ios": ios,
            "short_ios": 0,
            "drop_ios": 0,
            # A simulated command has no submission latency apart from its completion latency.
            "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
            "clat_ns": clat,
            "lat_ns": {k: v for k, v in clat.items() if k != "percentile"},
            # One sample: the run's mean (fio samples every 500 ms of wall time).
            "bw_min": bw_kib, "bw_max": bw_kib, "bw_agg": 100.0 if io_bytes else 0.0, "bw_mean": bw_kib,
            "bw_dev": 0.0, "bw_samples": 1 if io_bytes else 0,
            "iops_min": iops, "iops_max": iops, "iops_mean": iops, "iops_stddev": 0.0,
            "iops_samples": 1 if ios else 0,
        }

    depth = options.get("iodepth", "1")
    levels = {"1": 0.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0}
    try:
        d = max(1, int(depth))
        # A closed loop keeps its queue full: every I/O at the job's depth.
        levels[">=64" if d >= 64 else str(1 << (d.bit_length() - 1))] = 100.0
    except ValueError:
        pass
    return {
        "jobname": name,
        "groupid": group_id,
        "error": 0,
        "eta": 0,
        "elapsed": round(s["sim_seconds"]),
        "job options": options,
        "read": direction("read"),
        "write": direction("write"),
        "trim": direction("trim"),
        "job_runtime": round(runtime_ms),
        "usr_cpu": 0.0,
        "sys_cpu": 0.0,
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": levels,
        "latency_ns": {}, "latency_us": {}, "latency_ms": {},
        "waf": waf,
    }
