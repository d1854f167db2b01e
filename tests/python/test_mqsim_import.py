"""``nandlab import mqsim`` on MQSim's own ssdconfig.xml and workload.xml (tests/data/mqsim, MIT): the
experiment it writes runs, and says what MQSim's files say."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import nandlab
from nandlab import mqsim
from nandlab._core import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).resolve().parents[1] / "data" / "mqsim"
SSD, WORKLOAD = DATA / "ssdconfig.xml", DATA / "workload.xml"


def test_the_device_is_mqsims_default_drive(nandlab_cli) -> None:
    result = nandlab_cli("import", "mqsim", SSD, WORKLOAD)
    assert result.exit_code == 0, result.stderr
    config = tomllib.loads(result.stdout)
    d = config["device"]
    assert (d["cell"], d["channels"], d["chips_per_channel"], d["dies_per_chip"], d["planes_per_die"],
            d["blocks_per_plane"], d["pages_per_block"], d["page_size"]) == ("mlc", 8, 4, 2, 2, 2048, 256, "8192B")
    assert d["over_provisioning"] == "7 %" and d["link_rate"] == "4000MB/s" and d["channel_rate"] == "333MB/s"
    assert d["timing"]["mlc"] == {"read_us": [75, 75], "program_us": [750, 750], "erase_us": 3800}
    assert d["wear"]["rated"] == {"mlc": 10000} and d["suspend"] == "erase" and d["dram_rate"] == "100MB/s"
    assert config["ftl"]["gc"] == "d-choices:11" and config["ftl"]["gc_start"] == 0.05
    assert config["seed"] == 321
    # The same drive as the preset made from the same file by hand.
    preset = tomllib.loads(nandlab.preset_toml("mqsim-default"))["device"]
    assert preset["timing"]["mlc"] == d["timing"]["mlc"] and preset["channels"] == d["channels"]
    # Notes say what nandlab models differently.
    assert "# Page_Capacity (note: MQSim maps whole pages" in result.stdout
    assert "one transaction per die at a time" in result.stdout


@pytest.mark.parametrize("value, preconditions", [("false", False), ("FALSE", False), ("False", False),
                                                   ("true", True), ("1", True), ("yes", True), ("", True),
                                                   (" false ", True), ("0", True)])
def test_switches_are_read_as_mqsim_reads_them(tmp_path: Path, value: str, preconditions: bool) -> None:
    """MQSim takes anything but FALSE (any case, spaces kept) as true (outside check of issue 40: `1`,
    `yes` and ` false ` were taken as false, without a word)."""
    ssd = tmp_path / "ssd.xml"
    ssd.write_text(SSD.read_text().replace("<Enabled_Preconditioning>false<", f"<Enabled_Preconditioning>{value}<"))
    text = mqsim.import_config(ssd, WORKLOAD, 1)
    phases = tomllib.loads(text)["phase"]
    assert (phases[0].get("kind") == "fill") == preconditions, text[:2000]
    odd = value.upper() not in ("TRUE", "FALSE")
    assert ("MQSim reads anything but FALSE as true" in text) == odd


def test_each_scenario_becomes_phases_that_run(tmp_path: Path) -> None:
    # MQSim's test ssdconfig.xml says Enabled_Preconditioning false: no fill, and a comment says why.
    text = mqsim.import_config(SSD, WORKLOAD, 1)
    assert "Enabled_Preconditioning false" in text
    assert [p.get("kind") for p in tomllib.loads(text)["phase"]] == [None]
    ssd = tmp_path / "ssd.xml"
    ssd.write_text(SSD.read_text().replace("<Enabled_Preconditioning>false<", "<Enabled_Preconditioning>true<"))
    first = tomllib.loads(mqsim.import_config(ssd, WORKLOAD, 1))
    fill, flows = first["phase"]
    assert fill == {"name": "precondition", "kind": "fill", "volume": 0.75}
    assert [j["queue_depth"] for j in flows["job"]] == [16, 2]
    assert [j["duration"] for j in flows["job"]] == ["10s", "10s"] and "requests" not in flows["job"][0]
    assert all(j["read_fraction"] == 0 and j["working_set"] == 0.5 and j["block_size"] == "4096B"
               for j in flows["job"])
    second = tomllib.loads(mqsim.import_config(ssd, WORKLOAD, 2))
    assert [j["read_fraction"] for j in second["phase"][1]["job"]] == [1, 1]
    third = tomllib.loads(mqsim.import_config(ssd, WORKLOAD, 3))
    assert third["phase"][1]["trace"] == "traces/tpcc-small.trace" and third["phase"][1]["format"] == "mqsim"
    # Scaled down (fewer channels and blocks), the imported experiment runs as it is.
    first["device"].update(capacity="4GiB", channels=2, chips_per_channel=1)
    del first["device"]["blocks_per_plane"]
    for job in first["phase"][1]["job"]:
        job["duration"] = "0.02s"
    result = nandlab.run(first, progress=None)
    assert [j["name"] for j in result.phases[1]["jobs"]] == ["flow-1", "flow-2"]
    assert result.phases[1]["host_write_requests"] > 0 and result.summary["map_reads"] > 0


@pytest.mark.parametrize("text, message", [
    ("not xml", "not XML"),
    ("<Other/>", "expected MQSim's <Execution_Parameter_Set>"),
    ("<!DOCTYPE x [<!ENTITY a 'aaaa'>]><Execution_Parameter_Set/>", "no DTD or entities"),
    ("<Execution_Parameter_Set><Device_Parameter_Set><Flash_Parameter_Set/></Device_Parameter_Set>"
     "</Execution_Parameter_Set>", "<Flash_Technology> is missing"),
])
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(text)
    with pytest.raises(ConfigError, match="bad.xml") as caught:
        mqsim.import_config(bad)
    assert message in str(caught.value)


def test_a_bad_value_names_its_parameter(tmp_path: Path) -> None:
    text = SSD.read_text().replace("<Flash_Channel_Count>8<", "<Flash_Channel_Count>eight<")
    bad = tmp_path / "ssd.xml"
    bad.write_text(text)
    with pytest.raises(ConfigError, match=r"<Flash_Channel_Count>: expected a number from 1 to 4096, found 'eight'"):
        mqsim.import_config(bad)


@pytest.mark.parametrize("old, new", [
    ("<Initial_Occupancy_Percentage>75<", "<Initial_Occupancy_Percentage>100<"),  # was volume = 1: one byte
    ("<Stop_Time>10000000000<", "<Stop_Time>12345<"),  # was duration = "1.2345e-05s"
], ids=["full occupancy", "short stop time"])
def test_what_the_importer_writes_loads(tmp_path: Path, old: str, new: str) -> None:
    workload = tmp_path / "workload.xml"
    workload.write_text(WORKLOAD.read_text().replace(old, new))
    nandlab.make_simulator(mqsim.import_config(SSD, workload))


def test_control_characters_in_a_value_leave_valid_toml(tmp_path: Path) -> None:
    ssd = tmp_path / "ssd.xml"
    ssd.write_text(SSD.read_text().replace("<Plane_Allocation_Scheme>CWDP<", "<Plane_Allocation_Scheme>C\x7fW<"))
    tomllib.loads(mqsim.import_config(ssd))


@pytest.mark.parametrize("text, message", [
    ("<Execution_Parameter_Set>" + "<a/>" * 200_000 + "</Execution_Parameter_Set>", "more than 100,000 elements"),
    ("<Execution_Parameter_Set>" + "<a>" * 1000 + "</a>" * 1000 + "</Execution_Parameter_Set>", "levels of nesting"),
    (SSD.read_text().replace("<Flash_Technology>MLC<", "<Flash_Technology>QLC<"), "expected SLC, MLC or TLC"),
], ids=["many elements", "deep", "QLC"])
def test_xml_out_of_bounds_is_refused(tmp_path: Path, text: str, message: str) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text(text)
    with pytest.raises(ConfigError, match=message):
        mqsim.import_config(bad)


def test_every_parameter_nandlab_does_not_take_is_named() -> None:
    """Dropped without a word before: the TOML was byte-identical when these changed."""
    text = mqsim.import_config(SSD, WORKLOAD, 1)
    for name in ("Use_Copyback_for_GC", "Preemptible_GC_Enabled", "Dynamic_Wearleveling_Enabled", "IO_Queue_Depth",
                 "Data_Cache_Sharing_Mode", "Static_Wearleveling_Threshold", "Flash_Comm_Protocol",
                 "Page_Metadat_Capacity"):
        assert f"# {name} " in text, name
    ssd = SSD.read_text().replace("<GC_Block_Selection_Policy>RGA<", "<GC_Block_Selection_Policy>RANDOM_PP<")
    assert "RANDOM_PP draws again until a block has at least its random_pp_threshold" in \
        mqsim.import_config(ssd_file(ssd), WORKLOAD, 1)
    ssd = SSD.read_text().replace("<GC_Block_Selection_Policy>RGA<", "<GC_Block_Selection_Policy>RANDOM_P<")
    assert "RANDOM_P skips blocks still being programmed" in mqsim.import_config(ssd_file(ssd), WORKLOAD, 1)


def test_a_flow_stops_as_mqsims_io_flow_synthetic_stops_it(tmp_path: Path) -> None:
    """The second outside check: Stop_Time 0 (MQSim: stop after Total_Requests_To_Generate) was refused,
    and a flow with both got both stops, where MQSim ignores the request count once it has a Stop_Time."""
    text = WORKLOAD.read_text()
    workload = tmp_path / "workload.xml"

    def first_flow(stop: str, total: str) -> str:
        workload.write_text(text.replace("<Stop_Time>10000000000<", f"<Stop_Time>{stop}<", 1).replace(
            "<Total_Requests_To_Generate>0<", f"<Total_Requests_To_Generate>{total}<", 1))
        return mqsim.import_config(SSD, workload, 1)

    jobs = tomllib.loads(first_flow("0", "1000"))["phase"][0]["job"]
    assert (jobs[0].get("duration"), jobs[0]["requests"]) == (None, 1000) and jobs[1]["duration"] == "10s"
    imported = first_flow("10000000000", "5000")
    jobs = tomllib.loads(imported)["phase"][0]["job"]
    assert (jobs[0]["duration"], jobs[0].get("requests")) == ("10s", None)
    assert "MQSim ignores Total_Requests_To_Generate (5,000) when a flow has one" in imported
    with pytest.raises(ConfigError, match="would generate nothing"):
        first_flow("0", "0")


def test_every_device_parameter_changes_the_import_or_is_named() -> None:
    """The issue's outside check: Caching_Mechanism, CMT_Sharing_Mode, Address_Mapping, Queue_Fetch_Size,
    the buffer DRAM's timings and the preferred suspend times left the TOML byte-identical when they
    changed; every parameter of MQSim's own file now shows in the TOML, as a key's source or a comment."""
    import re

    text = mqsim.import_config(SSD, WORKLOAD, 1)
    for name in sorted(set(re.findall(r"<([A-Za-z_]+)>", SSD.read_text()))):
        if name.endswith("Parameter_Set") or name in ("Seed", "Enable_ResponseTime_Logging",
                                                       "ResponseTime_Logging_Period_Length", "Memory_Type"):
            continue
        assert name in text, name


def test_mlc_latencies_are_mqsims_lsb_and_msb_pages() -> None:
    """MQSim's MLC pages are LSB and MSB (SSD_Device.cpp); the importer read LSB and CSB."""
    ssd = SSD.read_text().replace("<Page_Read_Latency_MSB>75000<", "<Page_Read_Latency_MSB>150000<")
    assert "<Flash_Technology>MLC<" in ssd and "read_us = [75.0, 150.0]" in mqsim.import_config(ssd_file(ssd), WORKLOAD, 1)


def ssd_file(text: str) -> Path:
    import tempfile

    path = Path(tempfile.mkdtemp()) / "ssdconfig.xml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("old, new, message", [
    ("<Overprovisioning_Ratio>0.07<", "<Overprovisioning_Ratio>1e-300<", "over_provisioning: spare space too small"),
    ("<Overprovisioning_Ratio>0.07<", "<Overprovisioning_Ratio>0<", "over_provisioning: spare space too small"),
    ("<Suspend_Erase_Time>700000<", "<Suspend_Erase_Time>700001<", None),
    ("<Suspend_Erase_Time>700000<", "<Suspend_Erase_Time>4294967296<", "suspend_latency: expected at most 100 ms"),
    ("<Block_No_Per_Plane>2048<", "<Block_No_Per_Plane>\u0663<", r"<Block_No_Per_Plane>: expected a number .* found '\u0663'"),
    ("<Block_No_Per_Plane>2048<", "<Block_No_Per_Plane>2_048<", r"<Block_No_Per_Plane>: expected a number"),
    ("<Channel_Transfer_Rate>333<", "<Channel_Transfer_Rate>333.3333333<", None),
    ("<Execution_Parameter_Set>", "<Execution_Parameter_Set " + " ".join(f'a{i}="1"' for i in range(200_000)) + ">",
     "larger than 1 MiB"),
], ids=["OP 1e-300", "OP 0", "suspend in ns", "suspend 2^32 ns", "Arabic-Indic digit", "underscore", "fine rate",
        "2M attributes"])
def test_an_imported_experiment_runs_or_the_import_says_why(tmp_path: Path, old: str, new: str,
                                                             message: str | None) -> None:
    """Issue 38: the importer wrote configs that did not load (over_provisioning "1e-298 %", a suspend
    latency "4.29497e+06us", a drive without spare space) and read other scripts' digits; what it writes
    now loads, to the bit, or the import stops naming the MQSim parameter or the nandlab key."""
    assert old in SSD.read_text()
    ssd = tmp_path / "ssd.xml"
    ssd.write_text(SSD.read_text().replace(old, new))
    if message:
        with pytest.raises(ConfigError, match=message):
            mqsim.import_config(ssd)
        return
    config = tomllib.loads(mqsim.import_config(ssd))
    nandlab.make_simulator(mqsim.import_config(ssd))
    if "333.33" in new:
        assert config["device"]["channel_rate"] == "333.3333333MB/s"
    if "700001" in new:
        assert config["device"]["suspend_latency"] == "700001ns"
