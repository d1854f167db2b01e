"""The procedure registry (issue 18): every --out directory says in manifest.json which procedure
wrote it, and `nandlab report` builds the report that procedure's result type defines; the
`nandlab test` commands are the registered procedures with options; results cross the binding as
Python objects and NumPy columns, the values JSON gave before."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import nandlab
from nandlab import procedures, sweep
from nandlab.cli import test as test_commands

LIFETIME = """
[device]
cell = "tlc"
channels = 1
blocks_per_plane = 32
pages_per_block = 16
page_size = "8KiB"
reserve = "30 %"
[device.wear.rated]
slc = 200
mlc = 20
tlc = 5
[ftl]
gc_start = 2
gc_stop = 3
zombie = true
[[phase]]
working_set = 0.5
until = "dead"
"""


def test_an_out_directory_names_its_procedure_and_files(nandlab_cli, tiny_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = nandlab_cli("run", tiny_path, "--out", out, "-q")
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "run" and manifest["nandlab"]
    assert manifest["files"][:2] == ["summary.json", "config.json"]
    assert all((out / name).exists() for name in manifest["files"])


def test_the_report_follows_the_manifest_not_the_file_names(nandlab_cli, tmp_path: Path) -> None:
    (tmp_path / "life.toml").write_text(LIFETIME)
    out = tmp_path / "out"
    result = nandlab_cli("lifetime", tmp_path / "life.toml", "--out", out, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads((out / "lifetime.json").read_text()) == json.loads(result.stdout)
    assert json.loads((out / "manifest.json").read_text())["kind"] == "lifetime"
    assert "<h2>Runs</h2>" in (out / "report.html").read_text()
    (out / "manifest.json").write_text('{"kind": "nonesuch"}')
    result = nandlab_cli("report", out)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "kind 'nonesuch'" in result.stderr


def test_each_procedure_is_registered_once_with_a_report() -> None:
    for name, procedure in procedures.PROCEDURES.items():
        assert procedure.name == name
        assert procedure.result.report.__func__ is not procedures.ProcedureResult.report.__func__, name
    assert set(sweep.sweepable()) == {"run", "lifetime-compare"}
    group = test_commands.test_group
    assert group.list_commands(None) == ["pslc-fill", "read-sections", "write-sections"]
    assert all(group.get_command(None, name).name == name for name in group.list_commands(None))


def test_results_cross_the_binding_as_objects_and_numpy_columns(tiny_toml: str) -> None:
    sim = nandlab.make_simulator(tiny_toml)
    phase = sim.run_phase(0)
    assert isinstance(phase["summary"], dict) and isinstance(phase["summary"]["read_latency_us"], dict)
    columns = phase["timeseries"]
    assert columns["phase"].dtype == np.int64 and columns["sim_seconds"].dtype == np.float64
    assert len({len(column) for column in columns.values()}) == 1
    # What json.loads of the old JSON text gave: key order, ints as ints, non-finite floats as None.
    assert list(sim.device) == sorted(sim.device) and list(sim.config) == sorted(sim.config)
    assert isinstance(phase["summary"]["host_write_bytes"], int)
    assert json.loads(json.dumps(phase["summary"], allow_nan=False)) == phase["summary"]
