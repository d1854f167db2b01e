"""MQSim's configuration files as a nandlab experiment (``nandlab import mqsim``): its device
(``ssdconfig.xml``: geometry, latencies, channel and PCIe rates, over-provisioning, GC thresholds and
victim policy, the CMT, the data cache, suspension, endurance) and one of its workload's IO scenarios
(``workload.xml``: synthetic flows as jobs that run together, trace flows as trace phases, MQSim's
preconditioning as a fill), written as commented TOML: each parameter with the MQSim name it came
from, and a note wherever nandlab models it differently."""

from __future__ import annotations

import json
import math
import os
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field
from pathlib import Path

from nandlab import files
from nandlab._core import ConfigError, check_config
from nandlab.arguments import checked
from nandlab.terminal import shown

__all__ = ["import_config"]

CELLS = {"SLC": "slc", "MLC": "mlc", "TLC": "tlc"}
PAGE_TYPES = ("LSB", "CSB", "MSB")
BITS = {"slc": 1, "mlc": 2, "tlc": 3}
MAX_XML_BYTES = 2**20
"""The most bytes of an MQSim file nandlab reads (its own are a few KiB; 25 MB of attributes took 9 s and
0.7 GB to parse)."""
MAX_ELEMENTS = 100_000
"""The most XML elements an MQSim file may have (its own have a few hundred)."""
MAX_DEPTH = 32
"""How deep its elements may nest (MQSim's files: four levels)."""
# MQSim's GC_Block_Selection_Policy → nandlab's `gc` (RGA's d is log2 of the blocks per plane).
GC = {"GREEDY": "greedy", "RANDOM": "random", "RANDOM_P": "random", "RANDOM_PP": "random", "FIFO": "fifo"}
SUSPEND = {"NONE": "none", "ERASE": "erase", "PROGRAM": "program+erase", "PROGRAM_ERASE": "program+erase"}
MAX_TEXT = 4096
"""The most characters of an MQSim parameter's value (a trace's path is the longest MQSim reads)."""
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A number as MQSim's C++ reads it: ASCII digits only (Python's float() also takes other scripts' digits)."""


@dataclass
class Toml:
    """Commented TOML, table by table (values written as JSON, which TOML reads for these types)."""

    lines: list[str] = field(default_factory=list)

    def table(self, name: str, note: str = "", array: bool = False) -> None:
        """``[name]``, or ``[[name]]`` for an array of tables."""
        self.lines.append("")
        if note:
            self.comment(note)
        self.lines.append(f"[[{name}]]" if array else f"[{name}]")

    def comment(self, text: str) -> None:
        # A value from the file may carry control characters, which a TOML comment may not.
        self.lines += [f"# {shown(line)}" for line in text.splitlines()]

    def key(self, name: str, value: object, note: str = "") -> None:
        if note:
            self.comment(note)
        self.lines.append(f"{name} = {_value(value)}")

    def text(self) -> str:
        return "\n".join(self.lines).strip() + "\n"


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    # A float stays one (an integer volume is a byte count); JSON escapes what TOML strings may not hold.
    return json.dumps(value).replace("\x7f", "\\u007f")


def _exact(number: float) -> str:
    """``number`` as the engine reads it back to the bit: whole numbers without a point or exponent."""
    number = float(number)
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)


def _read_xml(path: str | os.PathLike[str], what: str, root: str) -> ElementTree.Element:
    """The XML file's root element (named ``root``); a ConfigError names the file otherwise."""
    text = files.read_text(Path(path), what, MAX_XML_BYTES)
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ConfigError(f"{path}: a {what} has no DTD or entities (refused: they can expand without bound)")
    # Parsed incrementally, counting elements and depth: 16 M elements under the size cap took 2.8 GB.
    parser = ElementTree.XMLPullParser(events=("start", "end"))
    elements = depth = 0
    element = None
    try:
        for at in range(0, len(text), 1 << 16):
            parser.feed(text[at:at + (1 << 16)])
            for event, item in parser.read_events():
                element = item if element is None else element
                depth += 1 if event == "start" else -1
                elements += event == "start"
                if elements > MAX_ELEMENTS or depth > MAX_DEPTH:
                    raise ConfigError(f"{path}: more than {MAX_ELEMENTS:,} elements or {MAX_DEPTH} levels of nesting; "
                                      f"a {what} has a few hundred, four levels deep")
        parser.close()
    except ElementTree.ParseError as error:
        raise ConfigError(f"{path}: not XML: {error}") from None
    if element is None:
        raise ConfigError(f"{path}: not XML: no element")
    if element.tag != root:
        raise ConfigError(f"{path}: expected MQSim's <{root}>, found <{element.tag}>")
    return element


class Params:
    """An XML parameter set's values by name, read as MQSim reads them; errors name the file and key."""

    def __init__(self, element: ElementTree.Element, source: str) -> None:
        self.values = {child.tag: (child.text or "").strip() for child in element}
        self.unstripped = {child.tag: child.text or "" for child in element}
        self.source = source
        for name, value in self.values.items():
            if len(value) > MAX_TEXT:
                raise ConfigError(f"{source}: <{shown(name)}>: {len(value):,} characters, more than the {MAX_TEXT:,} "
                                  "an MQSim parameter takes")

    def text(self, name: str, default: str | None = None) -> str:
        if name not in self.values:
            if default is None:
                raise ConfigError(f"{self.source}: <{name}> is missing")
            return default
        return self.values[name]

    def number(self, name: str, default: float | None = None, low: float = 0.0, high: float = 1e18) -> float:
        raw = self.text(name, None if default is None else str(default))
        value = float(raw) if _NUMBER.fullmatch(raw) else math.nan
        if not (math.isfinite(value) and low <= value <= high):
            raise ConfigError(f"{self.source}: <{name}>: expected a number from {_exact(low)} to {_exact(high)}, "
                              f"found {shown(repr(raw))}")
        return value

    def whole(self, name: str, default: int | None = None, low: int = 0, high: int = 2**40) -> int:
        value = self.number(name, default, low, high)
        if not value.is_integer():
            raise ConfigError(f"{self.source}: <{name}>: expected a whole number, found {shown(repr(self.text(name)))}")
        return int(value)

    def flag(self, name: str, default: bool, out: Toml) -> bool:
        """A switch as MQSim reads it: anything but FALSE (in any case, spaces kept) is true; a value
        other than true or false gets a comment in ``out`` saying so."""
        if name not in self.unstripped:
            return default
        raw = self.unstripped[name]
        if raw.upper() not in ("TRUE", "FALSE"):
            out.comment(f"<{shown(name)}> {shown(repr(raw))}: MQSim reads anything but FALSE as true")
        return raw.upper() != "FALSE"


@checked
def import_config(ssdconfig: str | os.PathLike[str], workload: str | os.PathLike[str] | None = None,
                  scenario: int = 1) -> str:
    """An experiment (TOML text) from MQSim's ``ssdconfig.xml`` and, if given, scenario ``scenario``
    (1-based) of its ``workload.xml``."""
    root = _read_xml(ssdconfig, "MQSim ssdconfig.xml", "Execution_Parameter_Set")
    host_element, device_element = root.find("Host_Parameter_Set"), root.find("Device_Parameter_Set")
    if device_element is None:
        raise ConfigError(f"{ssdconfig}: <Device_Parameter_Set> is missing")
    source = str(ssdconfig)
    host = Params(host_element if host_element is not None else ElementTree.Element("x"), source)
    device = Params(device_element, source)
    flash_element = device_element.find("Flash_Parameter_Set")
    if flash_element is None:
        raise ConfigError(f"{ssdconfig}: <Flash_Parameter_Set> is missing")
    flash = Params(flash_element, source)

    out = Toml()
    out.comment(f"Imported from MQSim's {Path(ssdconfig).name}"
                + (f" and scenario {scenario} of {Path(workload).name}" if workload else "")
                + " by `nandlab import mqsim`.\nEach key names the MQSim parameter it came from; `note:` marks "
                  "what nandlab models differently.")
    out.key("seed", device.whole("Seed", 1), "Seed")
    _device(out, host, device, flash)
    _ftl(out, device, flash)
    if workload is not None:
        _workload(out, workload, scenario, device.flag("Enabled_Preconditioning", True, out))
    else:
        out.table("phase", array=True, note="No workload.xml given: MQSim's default flows are 4 KiB random I/O at QD 16.")
        out.key("name", "random-write")
        out.key("pattern", "random")
        out.key("block_size", "4KiB")
        out.key("queue_depth", 16)
        out.key("duration", "1s")
    text = out.text()
    # Checked as a run reads it, but for the traces (read where nandlab runs): their phases as plain phases.
    trace_keys = ("trace = ", 'format = "mqsim"', "replay = ")
    checked = "\n".join("requests = 1" if line == 'kind = "trace"' else line for line in text.splitlines()
                         if not line.startswith(trace_keys))
    try:
        check_config(checked, "the imported experiment")
    except ConfigError as error:
        raise ConfigError(f"{ssdconfig}: MQSim's parameters make a drive nandlab cannot run (see the MQSim name "
                          f"beside the key in the imported TOML): {error}") from None
    return text


def _device(out: Toml, host: Params, device: Params, flash: Params) -> None:
    technology = flash.text("Flash_Technology").upper()
    if technology not in CELLS:
        raise ConfigError(f"{flash.source}: <Flash_Technology>: expected SLC, MLC or TLC, found {technology!r}")
    cell = CELLS[technology]
    out.table("device")
    out.key("cell", cell, "Flash_Technology")
    out.key("channels", device.whole("Flash_Channel_Count", low=1, high=4096), "Flash_Channel_Count")
    out.key("chips_per_channel", device.whole("Chip_No_Per_Channel", low=1, high=4096), "Chip_No_Per_Channel")
    out.key("dies_per_chip", flash.whole("Die_No_Per_Chip", low=1, high=64), "Die_No_Per_Chip")
    out.key("planes_per_die", flash.whole("Plane_No_Per_Die", low=1, high=64), "Plane_No_Per_Die")
    out.key("blocks_per_plane", flash.whole("Block_No_Per_Plane", low=1, high=1 << 20), "Block_No_Per_Plane")
    out.key("pages_per_block", flash.whole("Page_No_Per_Block", low=1, high=1 << 16), "Page_No_Per_Block")
    out.key("page_size", f"{flash.whole('Page_Capacity', low=512, high=1 << 20)}B",
            "Page_Capacity (note: MQSim maps whole pages; nandlab maps 4 KiB units, [ftl] mapping_unit)")
    ratio = device.number("Overprovisioning_Ratio", 0.07, 0.0, 1.0)
    percent = f"{ratio * 100:g}"  # "7 %" where that reads back as the same ratio, else the ratio itself
    out.key("over_provisioning", f"{percent} %" if float(percent) / 100 == ratio else ratio, "Overprovisioning_Ratio")
    interface = device.text("HostInterface_Type", "NVME").upper()
    if interface == "SATA":
        out.key("interface", "sata-600", "HostInterface_Type SATA (note: SATA_Processing_Delay "
                f"{host.whole('SATA_Processing_Delay', 0)} ns is not modelled)")
    else:
        lanes = host.whole("PCIe_Lane_Count", 4, 1, 32)
        gbps = host.number("PCIe_Lane_Bandwidth", 1.0, 0.001, 100.0)
        out.key("interface", f"nvme-gen3-x{lanes}" if lanes in (1, 2, 4, 8, 16) else "nvme-gen3-x4",
                "HostInterface_Type NVME")
        out.key("link_rate", f"{_exact(gbps * lanes * 1000)}MB/s", f"PCIe_Lane_Bandwidth {gbps:g} GB/s x PCIe_Lane_Count {lanes}")
        out.comment(f"SATA_Processing_Delay {host.whole('SATA_Processing_Delay', 0)} ns: MQSim takes it for SATA only")
    rate = device.number("Channel_Transfer_Rate", 333, 1, 1e6) * device.number("Flash_Channel_Width", 1, 1, 64)
    out.key("channel_rate", f"{_exact(rate)}MB/s", "Channel_Transfer_Rate (MT/s) x Flash_Channel_Width (bytes)")
    if device.text("Caching_Mechanism", "ADVANCED").upper() != "NONE":
        out.key("write_buffer", f"{device.whole('Data_Cache_Capacity', 256 << 20, 4096)}B",
                "Data_Cache_Capacity (note: MQSim's cache also serves reads; nandlab's buffer holds writes)")
        dram = device.number("Data_Cache_DRAM_Data_Rate", 100, 1, 1e6) * device.number(
            "Data_Cache_DRAM_Data_Busrt_Size", 1, 1, 64)
        out.key("dram_rate", f"{_exact(dram)}MB/s", "Data_Cache_DRAM_Data_Rate (MT/s) x Data_Cache_DRAM_Data_Busrt_Size "
                "(note: MQSim's default DRAM, 100 MT/s, caps large writes)")
    suspension = flash.text("CMD_Suspension_Support", "NONE").upper()
    if suspension in SUSPEND:
        out.key("suspend", SUSPEND[suspension], "CMD_Suspension_Support")
        if suspension != "NONE":
            ns = flash.whole("Suspend_Erase_Time", 0)
            out.key("suspend_latency", f"{ns // 1000}us" if ns % 1000 == 0 else f"{ns}ns",
                    "Suspend_Erase_Time (Suspend_Program_Time "
                    f"{flash.whole('Suspend_Program_Time', 0) / 1000:g} us: nandlab takes one latency for both)")
    out.key("multiplane", True, "MQSim issues multi-plane commands when it can")
    _unmodelled(out, device, flash)
    bits = BITS[cell]
    types = {1: ("LSB",), 2: ("LSB", "MSB"), 3: PAGE_TYPES}[bits]  # MQSim's MLC pages are LSB and MSB
    used = [f"Page_{kind}_Latency_{t}" for kind in ("Read", "Program") for t in types]
    out.table(f"device.timing.{cell}", f"{', '.join(used)}, Block_Erase_Latency (ns)")
    unused = [f"Page_{kind}_Latency_{t}" for kind in ("Read", "Program") for t in PAGE_TYPES if t not in types]
    if unused:
        out.comment(f"{', '.join(unused)}: not used by MQSim for {cell.upper()} (its pages are {' and '.join(types)})")
    out.key("read_us", [flash.number(f"Page_Read_Latency_{t}", low=1) / 1000 for t in types])
    out.key("program_us", [flash.number(f"Page_Program_Latency_{t}", low=1) / 1000 for t in types])
    out.key("erase_us", flash.number("Block_Erase_Latency", low=1) / 1000)
    out.table("device.wear", "Block_PE_Cycles_Limit (note: MQSim counts cycles; nandlab's endurance varies "
                             "per block, [device.wear] spread)")
    out.lines.append(f"rated = {{ {cell} = {flash.whole('Block_PE_Cycles_Limit', 10000, 1)} }}")


def _unmodelled(out: Toml, device: Params, flash: Params) -> None:
    """A comment for each MQSim parameter nandlab takes no key for, saying what it does instead."""
    notes = {
        "IO_Queue_Depth": "the host's queue depth is each job's queue_depth",
        "Data_Cache_Sharing_Mode": "one write buffer serves every flow",
        "Use_Copyback_for_GC": "GC copies always cross the channel (no copyback)",
        "Preemptible_GC_Enabled": "GC is paced against host writes below gc_start, and reads go ahead of programs "
                                  "and erases in die queues (read_priority, suspend)",
        "Dynamic_Wearleveling_Enabled": "a new block is always the least worn free one",
        "Static_Wearleveling_Threshold": "wear_leveling's usage-table GC has its own rule (life_threshold)",
        "Flash_Comm_Protocol": "the bus speed is channel_rate",
        "Page_Metadat_Capacity": "a page's spare area is not modelled",
        "CMT_Sharing_Mode": "one map cache serves every flow",
        "Address_Mapping": "nandlab maps pages (page-level mapping, its map cache a DFTL's CMT)",
        "Queue_Fetch_Size": "the interface takes a command as soon as the queue holds one",
        "Data_Cache_DRAM_Row_Size": "the buffer's DRAM is a rate (dram_rate), without rows or timings",
        "Data_Cache_DRAM_tRCD": "the buffer's DRAM is a rate (dram_rate), without rows or timings",
        "Data_Cache_DRAM_tCL": "the buffer's DRAM is a rate (dram_rate), without rows or timings",
        "Data_Cache_DRAM_tRP": "the buffer's DRAM is a rate (dram_rate), without rows or timings",
        "Preferred_suspend_erase_time_for_read": "a read suspends a program or erase whenever suspend allows",
        "Preferred_suspend_erase_time_for_write": "a read suspends a program or erase whenever suspend allows",
        "Preferred_suspend_write_time_for_read": "a read suspends a program or erase whenever suspend allows",
    }
    for name, instead in notes.items():
        params = next((p for p in (device, flash) if name in p.values), None)
        if params is not None:
            out.comment(f"{name} {params.text(name)}: no nandlab key: {instead}")
    caching = device.text("Caching_Mechanism", "ADVANCED").upper()
    if caching == "NONE":
        out.comment("Caching_Mechanism NONE: no write_buffer set (the drive's own default buffer stays)")
    else:
        out.comment(f"Caching_Mechanism {caching}: nandlab's write buffer holds writes until they are programmed "
                    "(write_buffer); MQSim's cache policies and its read hits are not modelled")


def _ftl(out: Toml, device: Params, flash: Params) -> None:
    out.table("ftl")
    policy = device.text("GC_Block_Selection_Policy", "GREEDY").upper()
    blocks = flash.whole("Block_No_Per_Plane", low=1)
    if policy == "RGA":
        out.key("gc", f"d-choices:{max(1, round(math.log2(blocks)))}",
                "GC_Block_Selection_Policy RGA: randomized greedy over log2(blocks per plane) sampled blocks")
    elif policy in GC:
        notes = {
            "RANDOM_P": " (note: MQSim's RANDOM_P skips blocks still being programmed or with a pending erase; "
                        "nandlab's random victim is any full block)",
            "RANDOM_PP": " (note: MQSim's RANDOM_PP draws again until a block has at least its random_pp_threshold "
                         "invalid pages, skipping blocks still being programmed or with a pending erase; nandlab's "
                         "random victim is any full block, however few pages it frees)",
        }
        out.key("gc", GC[policy], f"GC_Block_Selection_Policy {policy}" + notes.get(policy, ""))
    else:
        raise ConfigError(f"{device.source}: <GC_Block_Selection_Policy>: expected GREEDY, RGA, RANDOM, RANDOM_P, "
                          f"RANDOM_PP or FIFO, found {policy!r}")
    threshold = device.number("GC_Exec_Threshold", 0.05, 0.0, 0.5)
    out.key("gc_start", threshold, "GC_Exec_Threshold (free blocks per plane)")
    out.key("gc_stop", threshold, f"GC_Hard_Threshold {device.number('GC_Hard_Threshold', 0.005):g} "
            "(note: nandlab's GC is paced against host writes below gc_start instead)")
    scheme = device.text("Plane_Allocation_Scheme", "CWDP").lower()
    if sorted(scheme) == sorted("cwdp"):
        out.key("stripe_order", scheme, "Plane_Allocation_Scheme")
    else:
        out.comment(f"Plane_Allocation_Scheme {scheme.upper()}: not a permutation of CWDP, kept as nandlab's default")
    if not device.flag("Ideal_Mapping_Table", False, out):
        out.key("map_cache", f"{device.whole('CMT_Capacity', 2 << 20, 4096)}B",
                "CMT_Capacity: cached mapping table (Ideal_Mapping_Table false)")
        out.key("map_extents", False, "MQSim's CMT is a page-level DFTL: every lookup goes through it (nandlab's "
                "default keeps data written in order as extents in RAM, which never miss)")
    scheduling = device.text("Transaction_Scheduling_Policy", "OUT_OF_ORDER").upper()
    out.key("read_priority", scheduling != "FIFO",
            f"Transaction_Scheduling_Policy {scheduling} (note: MQSim dispatches one transaction per die at a time; "
            "nandlab's die queues take die_queue_depth, reads first unless FIFO)")
    static = device.flag("Static_Wearleveling_Enabled", True, out)
    if static and policy == "GREEDY":
        out.key("wear_leveling", True, "Static_Wearleveling_Enabled (Dynamic_Wearleveling: nandlab always writes "
                "to the least worn free block)")
    elif static:
        out.comment("Static_Wearleveling_Enabled: note: nandlab's wear_leveling goes with gc = \"greedy\" (its "
                    "usage-table GC); not set with this victim policy")


def _workload(out: Toml, workload: str | os.PathLike[str], scenario: int, precondition: bool) -> None:
    root = _read_xml(workload, "MQSim workload.xml", "MQSim_IO_Scenarios")
    scenarios = root.findall("IO_Scenario")
    if not 1 <= scenario <= len(scenarios):
        raise ConfigError(f"{workload}: scenario {scenario}: the file has {len(scenarios)} (1 to {len(scenarios)})")
    flows = list(scenarios[scenario - 1])
    source = f"{workload} scenario {scenario}"
    synthetic = [Params(f, source) for f in flows if f.tag == "IO_Flow_Parameter_Set_Synthetic"]
    traces = [Params(f, source) for f in flows if f.tag == "IO_Flow_Parameter_Set_Trace_Based"]
    if not synthetic and not traces:
        raise ConfigError(f"{source}: no IO flow")
    occupancy = max(f.number("Initial_Occupancy_Percentage", 0, 0, 100) for f in synthetic + traces)
    if occupancy and not precondition:
        out.comment(f"Enabled_Preconditioning false: MQSim starts from an empty drive (Initial_Occupancy_Percentage "
                    f"{occupancy:g} is not applied)")
    elif occupancy:
        out.table("phase", array=True, note="Initial_Occupancy_Percentage: MQSim preconditions the drive this full")
        out.key("name", "precondition")
        out.key("kind", "fill")
        out.key("volume", occupancy / 100)
    for i, flow in enumerate(traces, 1):
        out.table("phase", array=True, note="IO_Flow_Parameter_Set_Trace_Based (note: run one after another, not together)")
        out.key("name", f"trace-{i}")
        out.key("kind", "trace")
        out.key("trace", flow.text("File_Path"), "File_Path (relative to where nandlab runs)")
        out.key("format", "mqsim")
        out.key("replay", "timed", f"Time_Unit {flow.text('Time_Unit', 'NANOSECOND')}: recorded arrival times")
        relay = flow.whole("Relay_Count", 1, 1, 1 << 20)
        if relay > 1:
            out.comment(f"Relay_Count {relay}: loop = true with volume = {relay} passes' bytes replays it again")
        if flow.number("Percentage_To_Be_Executed", 100, 0, 100) < 100:
            out.comment("Percentage_To_Be_Executed: nandlab replays the whole trace (give requests = N to cut it)")
    if synthetic:
        _synthetic(out, synthetic)


def _duration(ns: int) -> str:
    """Nanoseconds as a duration in the largest unit that holds them whole."""
    unit, scale = next((u, k) for u, k in (("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)) if ns % k == 0)
    return f"{ns // scale}{unit}"


def _synthetic(out: Toml, flows: list[Params]) -> None:
    out.table("phase", array=True, note="IO_Flow_Parameter_Set_Synthetic flows run together, each a job "
                         "(note: Priority_Class and the flows' Channel/Chip/Die/Plane_IDs are not modelled: "
                         "every job spans the whole drive)")
    out.key("name", "flows")
    for i, f in enumerate(flows, 1):
        # As MQSim's IO_Flow_Synthetic: a flow with a Stop_Time runs until then and ignores its request
        # count; with Stop_Time 0, it stops after Total_Requests_To_Generate.
        stop = f.whole("Stop_Time", 10**9, 0)
        total = f.whole("Total_Requests_To_Generate", 0)
        if not stop and not total:
            raise ConfigError(f"{f.source}, flow {i}: <Stop_Time> 0 and <Total_Requests_To_Generate> 0: it would "
                              "generate nothing (MQSim stops a flow at its Stop_Time, or with Stop_Time 0 after "
                              "its Total_Requests_To_Generate)")
        out.table("phase.job", array=True)
        out.key("name", f"flow-{i}")
        if stop:
            out.key("duration", _duration(stop), "Stop_Time (ns)"
                    + (f"; MQSim ignores Total_Requests_To_Generate ({total:,}) when a flow has one" if total else ""))
        else:
            out.key("requests", total, "Total_Requests_To_Generate (Stop_Time 0)")
        out.key("read_fraction", f.number("Read_Percentage", 0, 0, 100) / 100, "Read_Percentage")
        distribution = f.text("Address_Distribution", "RANDOM_UNIFORM").upper()
        if distribution == "STREAMING":
            out.key("pattern", "sequential", "Address_Distribution STREAMING")
        else:
            out.key("pattern", "random", f"Address_Distribution {distribution}")
            hot = f.number("Percentage_of_Hot_Region", 0, 0, 100) / 100
            if distribution == "RANDOM_HOTCOLD" and 0 < hot < 1:
                out.key("distribution", f"hotcold:{_exact(1 - hot)}:{_exact(hot)}",
                        "Percentage_of_Hot_Region: (100 - hot) % of requests to hot % of the addresses")
        out.key("working_set", f.number("Working_Set_Percentage", 100, 0.001, 100) / 100, "Working_Set_Percentage")
        sectors = f.whole("Average_Request_Size", 8, 1, 1 << 17)
        out.key("block_size", f"{sectors * 512}B", "Average_Request_Size (sectors)"
                + (" (note: Request_Size_Distribution NORMAL is taken as fixed)"
                   if f.text("Request_Size_Distribution", "FIXED").upper() != "FIXED" else ""))
        if f.flag("Generated_Aligned_Addresses", True, out):
            out.key("align", f"{f.whole('Address_Alignment_Unit', 8, 1, 1 << 17) * 512}B", "Address_Alignment_Unit")
        if f.text("Synthetic_Generator_Type", "QUEUE_DEPTH").upper() == "BANDWIDTH":
            out.comment(f"Synthetic_Generator_Type BANDWIDTH, Bandwidth {f.text('Bandwidth', '0')} B/s: nandlab's "
                        "jobs run closed loop; the queue depth below stands in (an open-loop phase takes rate =)")
        out.key("queue_depth", f.whole("Average_No_of_Reqs_in_Queue", 1, 1, 65535), "Average_No_of_Reqs_in_Queue")
