"""A drive's death is an outcome of the phase it happens in, whatever that phase's stop (issue 41):
``nandlab run`` shows the table up to it and says which phases it did not live to run; procedures
that need every phase say where the drive died."""

import json
from pathlib import Path

import pytest

from conftest import DYING_TOML

# The dying drive, its life a phase of 1,000 drive writes (not `until = "dead"`), then reads.
HEAVY_TOML = DYING_TOML.replace('until = "dead"', 'volume = 1000.0') + """\
[[phase]]
name = "reads"
read_fraction = 1.0
requests = 1000
"""


@pytest.fixture
def heavy_path(tmp_path: Path) -> Path:
    path = tmp_path / "heavy.toml"
    path.write_text(HEAVY_TOML)
    return path


def test_run_shows_the_phases_up_to_the_death_and_names_those_left_out(nandlab_cli, heavy_path: Path) -> None:
    result = nandlab_cli("run", str(heavy_path))
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "worn out" in text and "life" in text
    assert "not run: `reads` (the drive died in `life`)" in " ".join(text.split())


def test_the_json_has_the_death_on_its_phase_and_no_phase_after_it(nandlab_cli, heavy_path: Path) -> None:
    result = nandlab_cli("run", str(heavy_path), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [p["name"] for p in doc["phases"]] == ["fill", "life"]
    life = doc["phases"][1]
    assert life["death"] and life["death_cause"] and doc["summary"]["death"] == life["death"]
    assert 0 < life["host_write_bytes"] < 1000 * doc["device"]["user_capacity_bytes"]
    assert "not run: `reads`" in result.stderr


def test_a_procedure_that_needs_every_phase_says_where_the_drive_died(heavy_path: Path) -> None:
    from nandlab import SimulationError, api

    result = api.run(heavy_path, progress=False)
    assert len(result.phases) == 2
    with pytest.raises(SimulationError, match=r"the drive died in phase `life`: .*blocks retired"):
        api.every_phase(result)
    sim = api.make_simulator(heavy_path)
    api.living_phase(sim, 0)
    with pytest.raises(SimulationError, match=r"the drive died in phase `life`"):
        api.living_phase(sim, 1)
    with pytest.raises(SimulationError, match="the drive is dead"):
        sim.run_phase(2)


def test_a_phase_run_until_dead_is_not_refused(dying_path: Path) -> None:
    from nandlab import api

    result = api.every_phase(api.run(dying_path, progress=False))
    assert result.phases[-1]["death"]


def test_a_fill_the_drive_dies_in_counts_what_it_wrote() -> None:
    """Worn by four drive writes, the drive dies refilling itself: the fill's figures are what it
    placed before (its bytes and its host programs agree), not zero."""
    from nandlab import api

    base = DYING_TOML.split("[[phase]]")[0]
    plan = base + ('[[phase]]\nname = "pre"\nvolume = 4.0\n[[phase]]\nname = "refill"\nkind = "fill"\n'
                   '[[phase]]\nname = "after"\nrequests = 10\n')
    result = api.run(plan, progress=False)
    assert [p["name"] for p in result.phases] == ["pre", "refill"]
    refill = result.phases[1]
    assert refill["death"] and 0 < refill["fill_bytes"] < result.device["user_capacity_bytes"]
    assert refill["fill_bytes"] == refill["flash_programs_host"] * 8192


def test_resume_says_what_run_says_under_json(nandlab_cli, heavy_path: Path, tmp_path: Path) -> None:
    snapshot = tmp_path / "heavy.snap"
    ran = nandlab_cli("run", str(heavy_path), "--json", "--snapshot", str(snapshot), "--snapshot-every", "2MiB")
    assert ran.exit_code == 0, ran.stderr
    resumed = nandlab_cli("resume", str(snapshot), "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert "not run: `reads`" in resumed.stderr and "note: death:" in resumed.stderr
    assert json.loads(resumed.stdout)["phases"][-1]["death"] == json.loads(ran.stdout)["phases"][-1]["death"]
