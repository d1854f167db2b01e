"""fio job files: the same workload as a fio job and as a nandlab phase gives the same numbers (same
seed), jobs run together or in sequence (stonewall) as fio runs them; unsupported options are named
in warnings; bad input names the line."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import nandlab
from nandlab import fio
from nandlab._core import ConfigError

DEVICE = {"device": {"preset": "swissbit-standard", "capacity": "4GiB"}}
JOBS = """
[global]
ioengine=libaio
direct=1
size=1g
iodepth=16
randseed=7
verify=md5
stonewall

[randwrite]
rw=randwrite
bs=4k
io_size=64m

[randrw]
rw=randrw
rwmixread=70
bs=16k
norandommap
number_ios=4000
"""


@pytest.fixture(scope="module")
def jobs() -> fio.FioJobs:
    return fio.parse(JOBS, "jobs.fio")


def test_jobs_match_the_same_workload_written_as_phases(jobs: fio.FioJobs) -> None:
    report = fio.run(jobs, "swissbit-standard", capacity="4GiB")
    # The same two workloads as nandlab phases: 1 GiB of the 4 GiB drive, seed 7.
    phases = [
        {"name": "randwrite", "pattern": "shuffle", "read_fraction": 0.0, "block_size": "4KiB",
         "queue_depth": 16, "working_set": 0.25, "volume": "64MiB"},
        {"name": "randrw", "pattern": "random", "read_fraction": 0.7, "block_size": "16KiB",
         "queue_depth": 16, "working_set": 0.25, "requests": 4000},
    ]
    result = nandlab.run({**DEVICE, "phase": phases}, seed=7)
    for job, phase in zip(report["jobs"], result.phases):
        assert job["read"]["iops"] + job["write"]["iops"] == pytest.approx(phase["iops"], rel=1e-12)
        # Whole milliseconds, as fio's; a direction without I/O ran for none.
        assert job["write"]["runtime"] == round(phase["sim_seconds"] * 1000)
        assert job["read"]["runtime"] == (round(phase["sim_seconds"] * 1000) if job["read"]["total_ios"] else 0)
    assert report["jobs"][0]["write"]["io_bytes"] == 64 * 2**20
    assert report["jobs"][1]["read"]["total_ios"] + report["jobs"][1]["write"]["total_ios"] == 4000


def test_options_without_meaning_or_support_are_named(jobs: fio.FioJobs) -> None:
    text = "\n".join(jobs.warnings)
    assert "no effect on a simulated drive, ignored: direct, ioengine" in text
    assert "not supported, ignored: verify" in text


def test_bssplit_bsrange_and_distributions_become_phase_keys() -> None:
    j = fio.parse("[a]\nrw=randread\nbssplit=4k/60:64k/40\nrandom_distribution=pareto:0.9\n"
                  "[b]\nstonewall\nrw=write\nbsrange=4k-16k\nramp_time=1s\nruntime=10\ntime_based\n")
    a, ramp, b = j.phases
    assert a["block_sizes"] == ["4096B/60", "65536B/40"] and a["distribution"] == "pareto:0.9"
    assert b["block_sizes"] == ["4096B/1", "8192B/1", "12288B/1", "16384B/1"]
    assert ramp["name"] == "b (ramp)" and ramp["duration"] == "1.0s" and b["duration"] == "10.0s"
    assert j.reported == ["a", "b"]


def test_bad_input_names_the_line() -> None:
    with pytest.raises(ConfigError, match=r"jobs.fio:2: \[x\] rw: expected one of"):
        fio.parse("[x]\nrw=sideways\n", "jobs.fio")
    with pytest.raises(ConfigError, match="no job sections"):
        fio.parse("[global]\nbs=4k\n", "jobs.fio")


BAD_NUMBERS = {  # an option's value, and the line's message
    "numjobs=100000000": "numjobs: expected a whole number from 1 to 4096, found `100000000`",
    "numjobs=0": "numjobs: expected a whole number from 1 to 4096",
    "iodepth=99999999999999999999": "iodepth: expected a whole number from 1 to 65536",
    "iodepth=abc": "iodepth: expected a whole number from 1 to 65536, found `abc`",
    "randseed=99999999999999999999999": "randseed: expected a whole number from 0 to 18446744073709551615",
    "number_ios=-5": "number_ios: expected a whole number from 1 to",
    "rwmixread=nan": "rwmixread: expected a whole number from 0 to 100, found `nan`",
}


@pytest.mark.parametrize(("option", "message"), BAD_NUMBERS.items(), ids=BAD_NUMBERS.keys())
def test_a_number_the_engine_cannot_take_names_its_line(option: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"jobs.fio:3: [x] {message}")):
        fio.parse(f"[x]\nrw=randrw\n{option}\n", "jobs.fio")


def test_more_jobs_than_fio_starts_are_refused_at_the_first_too_many() -> None:
    with pytest.raises(ConfigError, match=re.escape("jobs.fio:4: [b] more than 4096 jobs in the file")):
        fio.parse("[a]\nnumjobs=4000\n[b]\nnumjobs=97\n", "jobs.fio")
    with pytest.raises(ConfigError, match=re.escape("jobs.fio:4097: [a] more than 4096 jobs in the file")):
        fio.parse("[a]\n" * 1_000_000, "jobs.fio")  # each section a job


def test_cli_prints_fio_json(nandlab_cli, tmp_path: Path) -> None:
    job = tmp_path / "job.fio"
    job.write_text("[w]\nrw=randwrite\nbs=4k\nsize=256m\niodepth=8\nioengine=libaio\n")
    result = nandlab_cli("fio", job, "--device", "swissbit-standard", "--capacity", "4GiB", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    w = doc["jobs"][0]["write"]
    assert w["iops"] > 0 and w["io_bytes"] == 256 * 2**20 and "99.000000" in w["clat_ns"]["percentile"]
    assert "ioengine" in result.stderr


TOGETHER = """
[global]
size=512m
bs=4k
randseed=3

[reader]
rw=randread
iodepth=8
runtime=1
time_based

[writer]
rw=randwrite
iodepth=4
io_size=32m
numjobs=2

[after]
stonewall
rw=read
bs=128k
io_size=64m
"""


def test_jobs_without_stonewall_run_together() -> None:
    jobs = fio.parse(TOGETHER)
    together, after = jobs.phases
    # fio's groups: reader and two writer copies together, then `after` once they are all done.
    assert [j["name"] for j in together["job"]] == ["reader", "writer", "writer"]
    assert jobs.reported == ["reader+writer", "after"] and after["name"] == "after"
    report = fio.run(jobs, DEVICE)
    names = [(j["jobname"], j["groupid"]) for j in report["jobs"]]
    assert names == [("reader", 0), ("writer", 0), ("writer", 0), ("after", 1)]
    reader, writer1, writer2, last = report["jobs"]
    assert writer1["write"]["io_bytes"] == writer2["write"]["io_bytes"] == 32 * 2**20
    # As fio's JSON: bare flags (time_based, stonewall) are not among a job's options.
    assert reader["job options"] == {"rw": "randread", "iodepth": "8", "runtime": "1"}
    assert last["job options"] == {"rw": "read", "bs": "128k", "io_size": "64m"}
    assert 1000 <= reader["read"]["runtime"] < 1050  # 1 s of issuing, then its last requests complete
    # The same group written as [[phase.job]]s, seed 3: the same numbers.
    shared = {"pattern": "shuffle", "block_size": "4KiB", "working_set": 0.125}
    phase = {"name": "group", "job": [
        {**shared, "name": "reader", "read_fraction": 1.0, "queue_depth": 8, "duration": "1.0s"},
        *[{**shared, "name": "writer", "read_fraction": 0.0, "queue_depth": 4, "volume": "32MiB"}] * 2,
    ]}
    result = nandlab.run({**DEVICE, "phase": [phase]}, seed=3)
    for fio_job, job in zip(report["jobs"], result.phases[0]["jobs"]):
        kind = "read" if job["name"] == "reader" else "write"
        assert fio_job[kind]["iops"] == pytest.approx(job["iops"], rel=1e-12)
    # Beside the writers, the reader gets less of the drive than alone.
    alone = fio.run(fio.parse("[reader]\nrw=randread\nsize=512m\nbs=4k\niodepth=8\nruntime=1\ntime_based\n"), DEVICE)
    assert reader["read"]["iops"] < alone["jobs"][0]["read"]["iops"]


def _consume(document: dict) -> list[tuple]:
    """What a fio JSON consumer (fio-plot, fio's own scripts) reads of each job, with each value's type:
    the same code must read real fio's document and nandlab's."""
    rows = []
    for job in document["jobs"]:
        rows.append(("jobname", type(job["jobname"]), "groupid", type(job["groupid"])))
        assert set(job["iodepth_level"]) >= {"1", "2", "4", "8", "16", "32", ">=64"}
        for kind in ("read", "write"):
            d = job[kind]
            for key in ("io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios", "bw_min",
                        "bw_max", "bw_mean", "bw_dev", "bw_samples", "iops_min", "iops_max", "iops_mean"):
                float(d[key])
            for lat in ("clat_ns", "lat_ns", "slat_ns"):
                for key in ("min", "max", "mean", "stddev", "N"):
                    float(d[lat][key])
            if d["total_ios"]:
                assert set(d["clat_ns"]["percentile"]) >= {"1.000000", "50.000000", "99.000000", "99.990000"}
                assert all(float(v) >= 0 for v in d["clat_ns"]["percentile"].values())
    return rows


def _shape(document: dict) -> dict[str, str]:
    """Every key of a fio JSON document a consumer may read — top level, each job, each direction and
    its latency and sample figures — with its JSON type (integer and float apart), by path; percentile
    keys stand for the list (present or not), option values for the table."""
    kinds = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}
    shape = {}

    def walk(value: object, path: str) -> None:
        shape[path] = kinds.get(type(value), type(value).__name__)
        if isinstance(value, dict) and not path.endswith(("options", "percentile", "bins", "disk_util")):
            for key, item in value.items():
                walk(item, f"{path}.{key}")

    for key, value in document.items():
        if key != "jobs":
            shape[key] = kinds.get(type(value), type(value).__name__)
    for number, job in enumerate(document["jobs"]):
        walk(job, f"jobs[{number}]")
    return shape


def _real_fio(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """Debian's fio with ``args``, run in ``cwd`` (fio writes state files where it runs); skips the
    test without fio."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (scripts/test-all installs Debian's package)")
    return subprocess.run(["fio", *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def _both(nandlab_cli, tmp_path: Path, text: str, *args: str) -> tuple[subprocess.CompletedProcess, Any]:
    """The job file ``text`` through Debian's fio (its null engine: nothing written anywhere) and through
    `nandlab fio` on a 1 GiB snia-mlc, each with ``args``; both asserted to have run."""
    job = tmp_path / "job.fio"
    job.write_text("[global]\nioengine=null\n" + text)
    real = _real_fio(tmp_path, str(job), *args)
    assert real.returncode == 0, real.stderr
    ours = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB", *args)
    assert ours.exit_code == 0, ours.stderr
    return real, ours


def test_real_fio_and_nandlab_fio_write_json_one_consumer_reads(nandlab_cli, tmp_path: Path) -> None:
    """The same job file through Debian's fio (on a file in tmpfs) and through `nandlab fio`."""
    target = Path("/dev/shm") if Path("/dev/shm").is_dir() else tmp_path
    job = tmp_path / "mixed.fio"
    job.write_text(f"""[global]
filename={target}/nandlab-fio-{os.getpid()}
size=16m
bs=4k
ioengine=psync
[randwrite]
rw=randwrite
[randread]
stonewall
rw=randread
iodepth=4
""")
    try:
        real = _real_fio(tmp_path, str(job), "--output-format=json")
    finally:
        Path(f"{target}/nandlab-fio-{os.getpid()}").unlink(missing_ok=True)
    assert real.returncode == 0, real.stderr
    simulated = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB", "--output-format=json")
    assert simulated.exit_code == 0, simulated.stderr
    real_doc = json.loads(real.stdout[real.stdout.index("{"):])
    ours = json.loads(simulated.stdout)
    assert _consume(real_doc) == _consume(ours)
    # The options fio read are the ones nandlab read.
    assert [j["jobname"] for j in real_doc["jobs"]] == [j["jobname"] for j in ours["jobs"]]
    assert ours["global options"] == real_doc["global options"]
    for mine_job, real_job in zip(ours["jobs"], real_doc["jobs"]):  # (fio leaves out bare flags: stonewall)
        assert real_job["job options"].items() <= mine_job["job options"].items()
    # Every key real fio writes, nandlab writes, of the same JSON type (fio's whole numbers are whole
    # numbers here too; a direction without I/O has no percentiles in either).
    theirs, mine = _shape(real_doc), _shape(ours)
    assert {path: (kind, mine.get(path)) for path, kind in theirs.items() if mine.get(path) != kind} == {}


def _layout(text: str) -> list[str]:
    """What a reader's eye (or a script splitting fio's normal output into blocks) sees of its layout:
    per line, blank, a job's first line, a direction's first line, a group's status, or other."""
    kinds = []
    for line in text.splitlines():
        if not line.strip():
            kinds.append("blank")
        elif re.match(r"\S+: \(groupid=", line):
            kinds.append("job")
        elif re.match(r"  (read|write|trim): IOPS=", line):
            kinds.append("direction")
        elif line.startswith("Run status group"):
            kinds.append("group")
        else:
            kinds.append("other")
    return [kind for kind in kinds if kind != "other"]


def test_real_fio_and_nandlab_fio_lay_out_the_normal_report_alike(nandlab_cli, tmp_path: Path) -> None:
    """Two jobs in two groups: blank lines where fio puts them (none between jobs, one before each
    group's status), whatever lines each has within a job."""
    real, simulated = _both(nandlab_cli, tmp_path, "size=8m\nbs=4k\n[w]\nrw=randwrite\n[r]\nstonewall\nrw=randread\n")
    expected = ["blank", "job", "direction", "job", "direction", "blank", "group", "blank", "group"]
    assert _layout(real.stdout)[-len(expected):] == expected and _layout(simulated.stdout) == expected


@pytest.mark.parametrize("sizes", ["bs=4k", "bs=128k", "bs=10k", "bs=1536", "bs=1m", "bs=1536k",
                                   "bssplit=4k/50:64k/50", "bssplit=512/10:3m/90", "bsrange=4k-16k"])
def test_the_job_header_gives_the_request_sizes_as_fio_writes_them(nandlab_cli, tmp_path: Path, sizes: str) -> None:
    """Issue 40's second outside check: bssplit=4k/50:64k/50 was `4096B-4096B` (fio: `4096B-64.0KiB`), bs=128k
    `131072B-131072B` (fio: `128KiB-128KiB`)."""
    real, simulated = _both(nandlab_cli, tmp_path, f"[j]\nrw=randwrite\nsize=4m\n{sizes}\n")
    header = [line for line in real.stdout.splitlines() if line.startswith("j: (g=0)")][0]
    assert simulated.stdout.splitlines()[0].split(", ioengine=")[0] == header.split(", ioengine=")[0]


@pytest.mark.parametrize("job", ["rw=read bs=64k size=1000k", "rw=write bs=3k size=10k",
                                 "rw=randwrite bs=12k size=1m", "rw=write bs=4k size=4097",
                                 "rw=randwrite bssplit=4k/50:64k/50 size=1001k",
                                 "rw=randread bssplit=4k/50:64k/50 size=16m", "rw=randwrite bs=48k size=16m",
                                 "rw=randwrite bsrange=4k-60k size=3m", "rw=randread bs=4k size=1m io_size=1k"])
def test_a_job_moves_what_fio_moves_of_its_size(nandlab_cli, tmp_path: Path, job: str) -> None:
    """Issue 40's outside checks: a bssplit job of size=128m moved 134,258,688 bytes; then, cut to fit, bs=4k
    with size=4097 moved 4,608. As fio: no request goes past the size (the last ones take a size of the
    split that fits), and the job ends when none fits."""
    real, ours = _both(nandlab_cli, tmp_path, "[j]\n" + job.replace(" ", "\n") + "\n", "--output-format=json")
    moved = [sum(j[d]["io_bytes"] for d in ("read", "write")) for j in
             (json.loads(real.stdout[real.stdout.index("{"):])["jobs"][0], json.loads(ours.stdout)["jobs"][0])]
    assert moved[0] == moved[1], moved


def test_switches_are_read_as_fio_reads_them(nandlab_cli, tmp_path: Path) -> None:
    """Issue 40's outside checks: `true`, `yes` and `on` ran (fio refuses them); `0x1` was off and
    4294967296 on (fio: on and off). group_reporting of two jobs says which: one entry or two."""
    entries = {}
    for value in ("1", "0", "0x1", "0x0", "09", "4294967296", "4294967297", "-1", "1.5", "0.5", "1e3", "0b1", "true",
                  "off"):
        job = tmp_path / "s.fio"
        job.write_text(f"[j]\nrw=read\nsize=1m\nioengine=null\nnumjobs=2\ngroup_reporting={value}\n")
        real = _real_fio(tmp_path, str(job), "--output-format=json")
        ours = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB", "--output-format=json")
        theirs = len(json.loads(real.stdout[real.stdout.index("{"):])["jobs"]) if real.returncode == 0 else "refused"
        mine = len(json.loads(ours.stdout)["jobs"]) if ours.exit_code == 0 else "refused"
        entries[value] = (theirs, mine)
    assert all(theirs == mine for theirs, mine in entries.values()), entries


def test_fio_command_line_jobs_section_and_runtime(nandlab_cli, tmp_path: Path) -> None:
    result = nandlab_cli("fio", "--device", "snia-mlc", "--capacity", "1GiB", "--name=w", "--rw=randwrite",
                         "--bs=4k", "--size=8m", "--name=r", "--rw=randread", "--bs=4k", "--size=8m", "--stonewall",
                         "--output-format=json")
    assert result.exit_code == 0, result.stderr
    assert [j["jobname"] for j in json.loads(result.stdout)["jobs"]] == ["w", "r"]
    root = Path(__file__).resolve().parents[2]
    result = nandlab_cli("fio", root / "examples" / "randwrite.fio", "--device", "swissbit-standard",
                         "--capacity", "4GiB", "--section", "randread", "--runtime=1")
    assert result.exit_code == 0, result.stderr
    assert "randread:" in result.stdout and "randwrite:" not in result.stdout
    assert "Run status group" in result.stdout and not re.search(r"IOPS=\d+,\d", result.stdout)
    assert re.search(r"run=100[0-9]-100[0-9]msec", result.stdout)  # 1 s, and the commands in flight


# --- fio's terse output --------------------------------------------------------------------------

TERSE_FIELDS = 121
"""A terse version 3 line's fields before the disk utilization sections (HOWTO's "Terse output")."""
DISK_FIELDS = 9


def _terse(line: str) -> dict:
    """What a terse v3 consumer reads of a line: every field numeric where fio's format says so
    (``N``, ``N%``, ``Q%=N``), disk sections of nine fields, and an optional description."""
    fields = line.rstrip("\n").split(";")
    assert fields[0] == "3" and len(fields) >= TERSE_FIELDS
    for value in fields[3:TERSE_FIELDS]:
        quantile, equals, latency = value.partition("%=")
        if equals:
            float(quantile), int(latency)
        else:
            float(value.removesuffix("%"))
    rest = fields[TERSE_FIELDS:]
    disks = len(rest) // DISK_FIELDS
    for at in range(0, disks * DISK_FIELDS, DISK_FIELDS):
        name, *counts, util = rest[at:at + DISK_FIELDS]
        assert name and all(int(count) >= 0 for count in counts) and 0 <= float(util.removesuffix("%")) <= 100
    description = rest[disks * DISK_FIELDS:]
    assert len(description) <= 1
    return {"fields": len(fields), "disks": disks, "job": fields[2], "group": int(fields[3]),
            "read_kib": int(fields[5]), "description": description[0] if description else None}


def test_terse_lines_read_as_real_fios_do(nandlab_cli, tmp_path: Path) -> None:
    """`--output-format=terse` from Debian's fio and from `nandlab fio`: one parser reads both."""
    job = ["--name=t", "--size=4m", "--rw=randread", "--bs=4k", "--ioengine=psync", "--output-format=terse"]
    real = _real_fio(tmp_path, f"--filename={tmp_path}/f", *job)
    assert real.returncode == 0, real.stderr
    ours = nandlab_cli("fio", "--device", "snia-mlc", "--capacity", "1GiB", *job)
    assert ours.exit_code == 0, ours.stderr
    (real_line,), (our_line,) = real.stdout.splitlines(), ours.stdout.splitlines()
    real_fields, our_fields = _terse(real_line), _terse(our_line)
    assert our_fields["disks"] == 1 and real_fields["disks"] <= 1  # no disk section for a file on tmpfs
    if real_fields["disks"]:
        assert our_fields["fields"] == real_fields["fields"]
    assert our_fields["job"] == real_fields["job"] == "t" and our_fields["read_kib"] == real_fields["read_kib"] == 4096


def _clat2csv(cwd: Path, document: str) -> list[dict[str, str]]:
    """fio's own fio_jsonplus_clat2csv (Debian's fio, run by the system Python, which needs six) on a
    json+ document, its output validated by the same script; the first job's CSV rows."""
    script = shutil.which("fio_jsonplus_clat2csv")
    if script is None or subprocess.run(["/usr/bin/python3", "-c", "import six"]).returncode:
        pytest.skip("fio_jsonplus_clat2csv or python3-six not installed (scripts/test-all installs them)")
    (cwd / "plus.json").write_text(document)
    for extra in ([], ["--validate"]):
        done = subprocess.run(["/usr/bin/python3", script, *extra, "plus.json", "clat.csv"], capture_output=True,
                              text=True, timeout=60, cwd=cwd)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    with (cwd / "clat_job0.csv").open() as f:
        return [{k.strip(): v.strip() for k, v in row.items()} for row in csv.DictReader(f)]


def test_json_plus_histograms_read_by_fios_own_converter(nandlab_cli, tmp_path: Path) -> None:
    """json+ from Debian's fio and from `nandlab fio`: fio_jsonplus_clat2csv turns each into the same
    columns, and nandlab's histogram holds every completion, its cumulative share ending at 100 %."""
    job = ["--name=t", "--size=4m", "--rw=randread", "--bs=4k", "--ioengine=psync", "--output-format=json+"]
    real = _real_fio(tmp_path, f"--filename={tmp_path}/f", *job)
    assert real.returncode == 0, real.stderr
    real_rows = _clat2csv(tmp_path, real.stdout[real.stdout.index("{"):])
    ours = nandlab_cli("fio", "--device", "snia-mlc", "--capacity", "1GiB", *job, "--out", tmp_path / "out")
    assert ours.exit_code == 0, ours.stderr
    document = json.loads(ours.stdout)
    assert json.loads((tmp_path / "out" / "fio.json").read_text()) == document  # the saved document is json+'s too
    bins = document["jobs"][0]["read"]["clat_ns"]["bins"]
    assert sum(bins.values()) == document["jobs"][0]["read"]["total_ios"] == 1024
    assert "bins" not in document["jobs"][0]["write"]["clat_ns"]  # as fio: no I/O, no histogram
    rows = _clat2csv(tmp_path, ours.stdout)
    assert list(rows[0]) == list(real_rows[0])
    assert int(rows[-1]["read_clat_ns_cumulative"]) == 1024 and float(rows[-1]["read_clat_ns_percentile"]) == 1.0
    # The histogram agrees with the percentiles: the median bin holds the p50.
    p50 = document["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"]
    median = next(int(r["nsec"]) for r in rows if float(r["read_clat_ns_percentile"]) >= 0.5)
    assert abs(median - p50) <= 0.01 * p50


def test_terse_has_an_entry_per_job_and_each_description() -> None:
    jobs = fio.parse("[a]\nrw=randwrite\nsize=16m\ndescription=fill it\n[b]\nstonewall\nrw=randread\nsize=16m\n")
    lines = fio.terse(fio.run(jobs, DEVICE)).splitlines()
    a, b = (_terse(line) for line in lines)
    assert (a["job"], a["group"], a["description"]) == ("a", 0, "fill it")
    assert (b["job"], b["group"], b["description"], b["read_kib"]) == ("b", 1, None, 16 * 1024)


def test_output_formats_combine_in_fios_order(nandlab_cli) -> None:
    args = ("fio", "--device", "snia-mlc", "--capacity", "1GiB", "--name=w", "--rw=randwrite", "--size=8m")
    result = nandlab_cli(*args, "--output-format=normal,json,terse")
    assert result.exit_code == 0, result.stderr
    terse, rest = result.stdout.split("\n", 1)
    assert _terse(terse)["job"] == "w"
    document, end = json.JSONDecoder().raw_decode(rest)
    assert document["jobs"][0]["jobname"] == "w" and "Run status group 0" in rest[end:]
    bad = nandlab_cli(*args, "--output-format=json,xml")
    assert bad.exit_code == 2 and "'xml'" in bad.stderr


# --- group_reporting -----------------------------------------------------------------------------

GROUPED = """
[global]
size=64m
bs=4k
randseed=5

[writers]
rw=randwrite
io_size=8m
numjobs=3
group_reporting

[reader]
rw=randread
number_ios=2000

[after]
stonewall
rw=read
io_size=16m
numjobs=2
group_reporting
"""


def test_group_reporting_joins_a_groups_jobs_into_one_entry() -> None:
    grouped, apart = fio.parse(GROUPED), fio.parse(GROUPED.replace("group_reporting\n", ""))
    assert grouped.phases == apart.phases
    result = nandlab.run(fio.to_config(grouped, DEVICE))
    joined, single = fio.report(grouped, result)["jobs"], fio.report(apart, result)["jobs"]
    # As fio: the writers' copies join the first; the reader (no group_reporting) is its own entry.
    assert [(j["jobname"], j["groupid"]) for j in joined] == [("writers", 0), ("reader", 0), ("after", 1)]
    assert [len(members) for members in fio.entries(grouped)] == [3, 1, 2]
    writers, reader, after = joined
    assert writers["write"]["io_bytes"] == sum(j["write"]["io_bytes"] for j in single[:3]) == 3 * 8 * 2**20
    assert writers["write"]["runtime"] == max(j["write"]["runtime"] for j in single[:3])
    mean = sum(j["write"]["clat_ns"]["mean"] * j["write"]["total_ios"] for j in single[:3]) / (3 * 2048)
    assert writers["write"]["clat_ns"]["mean"] == pytest.approx(mean, rel=1e-9)
    assert reader == single[3]
    assert "[writers] group_reporting over some of the jobs that run together" in "\n".join(grouped.warnings)
    # A whole phase reported together has the phase's own figures, percentiles included.
    phase = result.phases[1]
    assert after["read"]["total_ios"] == phase["host_read_requests"] == 2 * 4096
    # fio's completion latency: the drive's latency less the host interface's command time (its submission).
    command_ns = result.config["device"]["interface"]["command_overhead_ns"]
    assert after["read"]["slat_ns"]["mean"] == command_ns
    assert after["read"]["clat_ns"]["percentile"]["99.000000"] == round(phase["read_latency_us"]["p99"] * 1000) - command_ns
    assert after["read"]["lat_ns"]["max"] == round(phase["read_latency_us"]["max"] * 1000)
    shares = [j["write"]["bw_agg"] for j in single[:3]]
    assert all(0 < share < 100 for share in shares)  # each writer's part of its group's bandwidth


def test_new_group_reports_apart_jobs_that_run_together(nandlab_cli) -> None:
    jobs = fio.parse("[global]\nsize=32m\ngroup_reporting\n[a]\nrw=randwrite\nnumjobs=2\n[b]\nnew_group\nrw=randread\n")
    assert len(jobs.phases) == 1 and [(j.name, j.group) for j in jobs.jobs] == [("a", 0), ("a", 0), ("b", 1)]
    result = nandlab_cli("fio", "--device", "snia-mlc", "--capacity", "1GiB", "--name=a", "--rw=randwrite",
                         "--size=32m", "--numjobs=2", "--group_reporting", "--name=b", "--new_group", "--rw=randread",
                         "--size=32m")
    assert result.exit_code == 0, result.stderr
    assert "a: (groupid=0, jobs=2)" in result.stdout and "b: (groupid=1, jobs=1)" in result.stdout
    assert "Run status group 0" in result.stdout and "Run status group 1" in result.stdout


# --- fio's logs ----------------------------------------------------------------------------------

LOGGED = """
[global]
size=64m
bs=4k
iodepth=8

[w]
rw=randwrite
io_size=32m
write_bw_log=x
write_lat_log=x
write_iops_log
log_avg_msec=20

[r]
stonewall
rw=randread
io_size=16m
write_bw_log=y
per_job_logs=0
"""


def _log_rows(path: Path) -> list[tuple[int, ...]]:
    """A fio log's lines (``time, value, direction, block size, priority``) as whole numbers."""
    rows = [tuple(int(field) for field in line.split(", ")) for line in path.read_text().splitlines()]
    assert all(len(row) == 5 for row in rows)
    return rows


def test_logs_are_fios_windowed_logs_of_the_time_series(tmp_path: Path) -> None:
    jobs = fio.parse(LOGGED)
    assert jobs.phases[0]["interval"] == "20ms" and "interval" not in jobs.phases[1]
    assert "[r] write_bw_log without log_avg_msec" in "\n".join(jobs.warnings)
    result = nandlab.run(fio.to_config(jobs, DEVICE))
    written = fio.write_logs(jobs, result, tmp_path)
    assert sorted(p.name for p in written) == ["w_iops.1.log", "x_bw.1.log", "x_clat.1.log", "x_lat.1.log",
                                                 "x_slat.1.log", "y_bw.log"]
    assert (tmp_path / "x_slat.1.log").read_text() == ""  # no submission latency, as fio's sync engines
    bw, iops, lat = (_log_rows(tmp_path / name) for name in ("x_bw.1.log", "w_iops.1.log", "x_lat.1.log"))
    times = [0] + [row[0] for row in bw]
    steps = [b - a for a, b in zip(times, times[1:])]
    assert all(19 <= step <= 21 for step in steps[:-1]) and 0 <= steps[-1] <= 21  # the last window ends the job
    assert {row[2] for row in bw} == {1} and [row[0] for row in iops] == times[1:]
    moved = sum(row[1] * 1024 * step / 1000 for row, step in zip(bw, steps))
    assert moved == pytest.approx(32 * 2**20, rel=0.05)
    assert sum(row[1] * step / 1000 for row, step in zip(iops, steps)) == pytest.approx(8192, rel=0.05)
    clat = fio.report(jobs, result)["jobs"][0]["write"]["clat_ns"]
    assert all(clat["min"] <= row[1] <= clat["max"] for row in lat)
    assert {row[2] for row in _log_rows(tmp_path / "y_bw.log")} == {0}


def test_jobs_together_log_once_and_the_cli_writes_logs_where_fio_would(nandlab_cli, tmp_path: Path,
                                                                        monkeypatch) -> None:
    args = ("fio", "--device", "snia-mlc", "--capacity", "1GiB", "--name=w", "--rw=randwrite", "--size=16m",
            "--numjobs=2", "--write_bw_log=both", "--log_avg_msec=10")
    monkeypatch.chdir(tmp_path)
    result = nandlab_cli(*args)
    assert result.exit_code == 0, result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["both_bw.1.log"]  # the pair shares one time series
    assert "the logs of w (job 1) hold the figures of them all" in result.stderr
    result = nandlab_cli(*args, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "out" / "both_bw.1.log").is_file() and (tmp_path / "out" / "fio.json").is_file()


def test_real_fio_writes_logs_of_the_same_columns(tmp_path: Path) -> None:
    real = _real_fio(tmp_path, "--name=t", f"--filename={tmp_path}/f", "--size=4m", "--rw=randrw", "--bs=4k",
                     "--ioengine=psync", "--write_bw_log=real", "--write_lat_log=real", "--log_avg_msec=10",
                     "--output-format=terse")
    assert real.returncode == 0, real.stderr
    for kind in ("bw", "lat", "clat"):
        assert {row[2] for row in _log_rows(tmp_path / f"real_{kind}.1.log")} <= {0, 1}


# --- fio's own example job files -----------------------------------------------------------------

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "data" / "fio-examples").glob("*.fio"))


def _fio_reads(path: Path, cwd: Path) -> list[tuple[str, dict[str, tuple[str, int | None]]]]:
    """Each section of a job file as real fio parses it (``fio --debug=parse --parse-only``): its
    options (fio's names for them) with the text given and the number fio made of it, if any."""
    run = _real_fio(cwd, "--debug=parse", "--parse-only", str(path))
    assert run.returncode == 0, run.stderr
    sections: list[tuple[str, dict[str, tuple[str, int | None]]]] = []
    for line in run.stdout.splitlines():
        if match := re.search(r"Parsing section \[(.*)\]$", line):
            sections.append((match.group(1), {}))
        elif (match := re.search(r"\bhandle_option=([^,]+), ptr=(.*)$", line)) and "__handle" not in line:
            key = match.group(1)
            sections[-1][1][key] = ("" if match.group(2) == "(null)" else match.group(2), None)
        elif match := re.search(r"ret=0, out=(-?\d+)$", line):
            sections[-1][1][key] = (sections[-1][1][key][0], int(match.group(1)))
    return sections


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_fios_example_job_files_read_as_fio_reads_them(path: Path, tmp_path: Path) -> None:
    """Jobs (numjobs copies included), groups, and each job's rw, bs, iodepth, size and runtime."""
    jobs = fio.load(path)  # options nandlab does not know are warnings, never errors
    expected, defaults, group, in_group = [], {}, 0, 0
    for name, own in _fio_reads(path, tmp_path):
        if name.startswith("global"):
            defaults.update(own)
            continue
        options = {**defaults, **own}
        if ("stonewall" in options or "new_group" in options) and in_group:
            group, in_group = group + 1, 0
        copies = options.get("numjobs", ("1", 1))[1]
        in_group += copies
        expected += [(name, group, options)] * copies
    assert [(job.name, job.group) for job in jobs.jobs] == [(name, group) for name, group, _ in expected]
    for job, (_, _, options) in zip(jobs.jobs, expected):
        phase = jobs.phases[job.phase]
        phase = phase["job"][job.slot] if "job" in phase else phase
        for key, (text, _) in options.items():  # the same text for each option (comments cut, as fio does)
            if key in job.options:
                assert job.options[key] == text, key
        assert job.options.get("rw", "read") == options.get("rw", ("read",))[0]
        assert phase["queue_depth"] == options.get("iodepth", ("1", 1))[1]
        if "bs" in options:
            assert phase["block_size"] == f"{options['bs'][1]}B"
        if "size" in options:
            assert phase["working_set"] == f"{options['size'][1]}B"
        if "runtime" in options:
            assert float(phase["duration"].removesuffix("s")) == options["runtime"][1] / 1e6


def test_fio_examples_options_nandlab_does_not_model_are_warnings() -> None:
    by_name = {path.stem: fio.load(path).warnings for path in EXAMPLES}
    assert "[ss-write] not supported, ignored: ss, ss_dur, ss_ramp" in by_name["steadystate"]
    assert any("zoned:50/5:30/15:20/80: zones are not modelled" in w for w in by_name["jesd219"])
    assert any("not supported, ignored: do_verify, fill_device, verify" in w for w in by_name["surface-scan"])


def test_latency_levels_are_counted_from_the_histogram_as_fio_counts_them() -> None:
    """fio's ``latency_us``/``latency_ms`` count each completion in its level (100–249 µs is ``250``,
    1–1.999 ms is ``ms`` ``2``); they once came from the percentile list, which put 0 % in a level
    holding 8 % of the I/Os and showed float noise."""
    jobs = fio.parse("[global]\nbs=4k\niodepth=16\n[age]\nrw=randwrite\nio_size=2g\n"
                     "[randrw]\nstonewall\nrw=randrw\nrwmixread=70\nnumber_ios=20000\n", "mix.fio")
    result = nandlab.run(fio.to_config(jobs, "snia-mlc", capacity="1GiB"), progress=None)
    entry = fio.report(jobs, result, bins=True)["jobs"][1]
    bins = [(int(ns), n) for kind in ("read", "write") for ns, n in entry[kind]["clat_ns"]["bins"].items()]
    total = sum(n for _, n in bins)
    assert total == 20000

    def share(low_ns: int, high_ns: int) -> float:
        return 100 * sum(n for ns, n in bins if low_ns <= ns < high_ns) / total

    us, ms = entry["latency_us"], entry["latency_ms"]
    assert us["750"] == pytest.approx(share(500_000, 750_000), abs=1e-9)
    assert us["1000"] == pytest.approx(share(750_000, 1_000_000), abs=1e-9)
    assert us["250"] == pytest.approx(share(100_000, 250_000), abs=1e-9)
    assert ms["2"] == pytest.approx(share(1_000_000, 2_000_000), abs=1e-9)
    assert us["750"] > 1.0 and ms["2"] > 1.0, "an aged drive's mix spreads over many levels"
    levels = [v for key in ("latency_ns", "latency_us", "latency_ms") for v in entry[key].values()]
    floored = [v for v in levels if v == 0.01]  # as fio: a level with any completion shows 0.01 % at least
    assert sum(levels) == pytest.approx(100.0, abs=0.01 * len(floored) + 1e-9)
    # Each level is a count over the total: a multiple of 100 / total, no interpolation between steps.
    for v in levels:
        assert v == 0.01 or v * total / 100 == pytest.approx(round(v * total / 100), abs=1e-6)


def test_a_level_with_any_completion_shows_at_least_a_hundredth_percent_as_fios() -> None:
    """Issue 40's outside check: fio's stat_calc_lat rounds a level holding any completion up to 0.01 %
    (its text report then prints it); nandlab wrote 0.00113 and left the level out of its text."""
    levels = fio._latency_levels({"latency_bins": {"read": [(15_000, 1), (300_000, 99_999)], "write": []}}, 0)
    assert levels["latency_us"]["20"] == 0.01 and levels["latency_us"]["500"] == pytest.approx(99.999)
    assert levels["latency_us"]["50"] == 0.0  # an empty level stays 0
    from nandlab.procedures.fio import _job_lines
    job = {**levels, **{k: {"1": 100.0} for k in ("iodepth_level", "iodepth_submit", "iodepth_complete")},
           **{kind: {"total_ios": 0} for kind in ("read", "write", "trim")}, "latency_target": 0,
           "latency_window": 0, "latency_percentile": 100.0, "latency_depth": 1}
    assert "lat (usec)   : 20=0.01%, 500=100.00%" in "\n".join(_job_lines(job))


def test_jobs_that_run_together_each_get_their_own_bandwidth_samples(nandlab_cli, tmp_path: Path) -> None:
    """Issue 40's outside check: a writer and a reader running together got one sample each (bw_min =
    bw_max, bw_dev 0), and a group of numjobs copies the runtime of one; fio samples every job."""
    job = tmp_path / "together.fio"
    job.write_text("[global]\nbs=4k\nsize=64m\nruntime=1\ntime_based=1\n"
                   "[a]\nrw=randwrite\niodepth=4\n[b]\nrw=randread\niodepth=2\n")
    result = nandlab_cli("fio", job, "--device", "snia-mlc", "--capacity", "1GiB", "--output-format=json")
    assert result.exit_code == 0, result.stderr
    a, b = json.loads(result.stdout)["jobs"]
    for d in (a["write"], b["read"]):
        assert d["bw_samples"] > 100 and d["bw_min"] < d["bw_max"] and d["bw_dev"] > 0, d
        assert d["bw_mean"] == pytest.approx(d["bw"], rel=0.01)  # its samples' mean is its own bandwidth
    assert a["read"]["bw_samples"] == b["write"]["bw_samples"] == 0  # a direction a job never moved
    result = nandlab_cli("fio", "--device", "snia-mlc", "--capacity", "1GiB", "--name=g", "--rw=randwrite",
                         "--bs=4k", "--size=64m", "--numjobs=2", "--group_reporting", "--runtime=1", "--time_based",
                         "--output-format=json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    (group,) = document["jobs"]
    assert 2000 <= group["job_runtime"] <= 2010, "fio adds up a group's runtimes"
    assert group["write"]["bw_samples"] > 200  # both jobs' samples
    # As fio's sum_stat for group_reporting: the jobs' means (and minima, maxima) added up, so the mean is
    # the group's bandwidth and bw_agg its whole share (the second outside check: it was half of each).
    assert group["write"]["bw_mean"] == pytest.approx(group["write"]["bw"], rel=0.01)
    assert group["write"]["bw_agg"] == pytest.approx(100.0, abs=1)
    # As fio: a command-line job's options start with its name; no global options, no key.
    assert list(group["job options"])[0] == "name" and group["job options"]["name"] == "g"
    assert "global options" not in document
    # A group of writers and readers: a job adds nothing to a direction it never moved (fio's sum_stat
    # returns early), so the writes' statistics are the writers' alone.
    mixed = tmp_path / "group.fio"
    mixed.write_text("[global]\nbs=4k\nsize=64m\nruntime=1\ntime_based=1\ngroup_reporting\n"
                     "[w]\nrw=randwrite\nnumjobs=2\n[r]\nrw=randread\nnumjobs=2\n")
    result = nandlab_cli("fio", mixed, "--device", "snia-mlc", "--capacity", "1GiB", "--output-format=json")
    assert result.exit_code == 0, result.stderr
    (group,) = json.loads(result.stdout)["jobs"]
    for kind in ("read", "write"):
        d = group[kind]
        assert d["bw_min"] > 0 and d["bw_mean"] == pytest.approx(d["bw"], rel=0.01), (kind, d)
        assert d["bw_samples"] == 400  # two jobs' 200 each
    # Jobs of sizes that end at different times, and a phase whose windows follow the data moved (not
    # equal times): samples over equal spans of each job's own time average to its bandwidth, as fio's.
    golden = Path(__file__).resolve().parents[1] / "golden" / "mixed.fio"
    result = nandlab_cli("fio", golden, "--device", "snia-mlc", "--capacity", "1GiB", "--output-format=json")
    assert result.exit_code == 0, result.stderr
    for entry in json.loads(result.stdout)["jobs"]:
        for d in (entry["read"], entry["write"]):
            if d["io_bytes"]:
                assert d["bw_samples"] > 100 and d["bw_mean"] == pytest.approx(d["bw_bytes"] / 1024, rel=1e-3)
                assert d["iops_mean"] == pytest.approx(d["iops"], rel=1e-3)


SIZES = ["4k", "4kb", "4KiB", "8KB", "1m", "1MiB", "64K", "512"]


@pytest.mark.parametrize("kb_base", ["1024", "1000"])
def test_sizes_read_as_fio_reads_them(tmp_path: Path, kb_base: str) -> None:
    """fio's sizes are not the engine's: by fio's default ``kb_base=1024``, ``k``/``kb``/``KB`` are powers of
    1,024 and ``KiB``/``MiB`` powers of 1,000 (``kb_base=1000`` swaps them). `nandlab fio` reads them as fio
    does — checked against Debian's fio on the null engine: its bytes per I/O are the block size."""
    expected = {
        "1024": {"4k": 4096, "4kb": 4096, "4KiB": 4000, "8KB": 8192, "1m": 1 << 20, "1MiB": 10**6, "64K": 65536,
                 "512": 512},
        "1000": {"4k": 4000, "4kb": 4000, "4KiB": 4096, "8KB": 8000, "1m": 10**6, "1MiB": 1 << 20, "64K": 64000,
                 "512": 512},
    }[kb_base]
    for size in SIZES:
        text = f"[global]\nkb_base={kb_base}\n[t]\nrw=read\nbs={size}\nsize=64m\n"
        if expected[size] % 512:  # fio reads it as whole bytes; the drive takes whole sectors: said at its line
            with pytest.raises(ValueError, match=f"which fio reads as {expected[size]:,} bytes"):
                fio.parse(text, "kb.fio")
            continue
        jobs = fio.parse(text, "kb.fio")
        assert jobs.phases[0]["block_size"] == f"{expected[size]}B", size
    # The engine's own sizes (configs, nandlab's options): KiB is 1,024 bytes, KB 1,000.
    assert nandlab.parse_size("4KiB") == 4096 and nandlab.parse_size("8KB") == 8000
    job = tmp_path / "kb.fio"
    for size in SIZES:
        job.write_text(f"[global]\nkb_base={kb_base}\n[t]\nioengine=null\nrw=read\nbs={size}\nsize=8m\n")
        real = _real_fio(tmp_path, str(job), "--output-format=json")
        read = json.loads(real.stdout)["jobs"][0]["read"]
        assert read["io_bytes"] // read["total_ios"] == expected[size], (size, real.stdout[-300:])


def test_the_text_report_has_fios_lines_and_says_when_reads_found_nothing_written(nandlab_cli) -> None:
    """It lacked the header, slat/lat, sample, distribution, depth, issued and latency lines; a read-only
    job said "write amplification: 0.00"; reads of a fresh drive (flat 17.6 µs) came with no hint."""
    result = nandlab_cli("fio", "--device", "snia-mlc", "--capacity", "1GiB", "--name=fresh", "--rw=randread",
                         "--bs=4k", "--size=64m", "--runtime=1", "--time_based")
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    for line in ("fresh: (g=0): rw=randread, bs=(R) 4096B-4096B", "    slat (nsec): min=4000", "     lat (usec)",
                 "   bw (  KiB/s): min=", "  IO depths    : 1=100.0%", "     submit    : 0=0.0%, 4=100.0%",
                 "     issued rwts: total=", "     latency   : target=0, window=0, percentile=100.00%, depth=1",
                 "Run status group 0", "found addresses never written"):
        assert line in text, line
    assert "write amplification" not in text
    written = nandlab_cli("fio", "--device", "snia-mlc", "--capacity", "1GiB", "--name=fill", "--rw=write",
                          "--bs=128k", "--size=64m", "--name=read", "--stonewall", "--rw=randread", "--bs=4k",
                          "--size=64m", "--number_ios=1000")
    assert written.exit_code == 0, written.stderr
    assert "never written" not in written.stdout and "write amplification: 1.00" in written.stdout


@pytest.mark.parametrize("rw, bs", [("randread", "4k"), ("read", "4k"), ("read", "128k")])
def test_reads_of_never_written_addresses_are_pointed_out_in_every_format(nandlab_cli, tmp_path: Path, rw: str,
                                                                          bs: str) -> None:
    """The issue's outside check: only fio's normal text said so; JSON, terse and `nandlab run` were silent.
    Its second: sequential reads, served from the read-ahead window, counted none (0.0 MiB)."""
    job = tmp_path / "r.fio"
    job.write_text(f"[r]\nrw={rw}\nbs={bs}\nsize=16m\n")
    args = ("fio", job, "--device", "snia-mlc", "--capacity", "1GiB")
    as_json = nandlab_cli(*args, "--output-format", "json")
    assert as_json.exit_code == 0, as_json.stderr
    assert any("found addresses never written" in w for w in json.loads(as_json.stdout)["warnings"])
    assert "note: 16.0 MiB of the reads found addresses never written" in as_json.stderr
    assert "found addresses never written" in nandlab_cli(*args).stdout
    config = tmp_path / "rd.toml"
    config.write_text('[device]\npreset = "snia-mlc"\ncapacity = "1GiB"\n[[phase]]\nread_fraction = 1.0\n'
                      'requests = 2000\n')
    assert 'kind = "fill" before the reads' in " ".join(nandlab_cli("run", config).stdout.split())
    written = tmp_path / "w.toml"
    written.write_text(config.read_text().replace("[[phase]]\nread", '[[phase]]\nkind = "fill"\n[[phase]]\nread'))
    assert "never written" not in nandlab_cli("run", written).stdout


def test_the_latency_distribution_takes_five_levels_a_line_as_fio_prints_it() -> None:
    from nandlab.procedures.fio import _job_lines

    job = {"latency_ns": {}, "latency_ms": {},
           "latency_us": {str(level): 10.0 for level in (2, 4, 10, 20, 50, 100, 250)},
           **{name: {"1": 100.0} for name in ("iodepth_level", "iodepth_submit", "iodepth_complete")},
           "read": {"total_ios": 1}, "write": {"total_ios": 0}, "trim": {"total_ios": 0},
           "latency_target": 0, "latency_window": 0, "latency_percentile": 100.0, "latency_depth": 1}
    lines = [line for line in _job_lines(job) if line.startswith("  lat (usec)")]
    assert lines == ["  lat (usec)   : 2=10.00%, 4=10.00%, 10=10.00%, 20=10.00%, 50=10.00%",
                     "  lat (usec)   : 100=10.00%, 250=10.00%"]


def test_the_header_has_fios_copies_line_and_process_count(nandlab_cli) -> None:
    """The second outside check: fio prints `...` under a job with numjobs copies, then its version and
    "Starting N processes" before the results."""
    result = nandlab_cli("fio", "--device", "snia-mlc", "--capacity", "1GiB", "--name=g", "--rw=randread",
                         "--bs=4k", "--size=8m", "--numjobs=2", "--group_reporting", "--name=h", "--rw=read",
                         "--bs=4k", "--size=8m")
    assert result.exit_code == 0, result.stderr
    head = result.stdout.split("\n\n")[0].splitlines()
    assert head[0].startswith("g: (g=0): rw=randread") and head[1] == "..." and head[2].startswith("h: (g=0)")
    assert head[-2:] == ["nandlab (simulated drive)", "Starting 3 processes"]
