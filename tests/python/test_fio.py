"""fio job files: the same workload as a fio job and as a nandlab phase gives the same numbers (same
seed), jobs run together or in sequence (stonewall) as fio runs them; unsupported options are named
in warnings; bad input names the line."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

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
        ios = job["read"]["total_ios"] + job["write"]["total_ios"]
        assert ios / (job["read"]["runtime"] / 1000) == pytest.approx(phase["iops"], rel=1e-12)
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
    reader, writer1, writer2, _ = report["jobs"]
    assert writer1["write"]["io_bytes"] == writer2["write"]["io_bytes"] == 32 * 2**20
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


def test_real_fio_and_nandlab_fio_write_json_one_consumer_reads(nandlab_cli, tmp_path: Path) -> None:
    """The same job file through Debian's fio (on a file in tmpfs) and through `nandlab fio`."""
    import shutil
    import subprocess

    if shutil.which("fio") is None:
        pytest.skip("fio not installed (scripts/test-all installs Debian's package)")
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
        real = subprocess.run(["fio", str(job), "--output-format=json"], capture_output=True, text=True, timeout=120)
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
