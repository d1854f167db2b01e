//! Host interfaces: the link between host and drive, its bandwidth, whether it
//! carries data both ways at once, and the fixed cost of each command.

use serde::Serialize;

/// A resolved host interface.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interface {
    pub name: String,
    /// Payload bandwidth in bytes per second (after line coding).
    pub link_rate: u64,
    /// Per-command protocol cost, occupying the link, in nanoseconds.
    pub command_overhead_ns: u64,
    /// PCIe carries reads and writes at once; SATA is half duplex.
    pub full_duplex: bool,
}

/// The names `[device] interface` accepts.
pub fn names() -> Vec<String> {
    let mut v: Vec<String> = ["sata-150", "sata-300", "sata-600"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for gen in ["gen3", "gen4"] {
        for lanes in [1, 2, 4] {
            v.push(format!("nvme-{gen}-x{lanes}"));
        }
    }
    v
}

/// Looks up an interface by name: `sata-150|300|600`, `nvme-gen3|gen4-x1|x2|x4`.
pub fn lookup(name: &str) -> Option<Interface> {
    let sata = |mbps: u64| Interface {
        name: name.to_string(),
        link_rate: mbps * 1_000_000,
        command_overhead_ns: 4_000,
        full_duplex: false,
    };
    match name {
        "sata-150" => return Some(sata(150)),
        "sata-300" => return Some(sata(300)),
        "sata-600" => return Some(sata(600)),
        _ => {}
    }
    let rest = name.strip_prefix("nvme-")?;
    let (gen, lanes) = rest.split_once("-x")?;
    // Per-lane payload rate after 128b/130b coding: 8 GT/s and 16 GT/s.
    let per_lane: u64 = match gen {
        "gen3" => 984_615_384,
        "gen4" => 1_969_230_769,
        _ => return None,
    };
    let lanes: u64 = match lanes {
        "1" => 1,
        "2" => 2,
        "4" => 4,
        _ => return None,
    };
    Some(Interface {
        name: name.to_string(),
        link_rate: per_lane * lanes,
        command_overhead_ns: 500,
        full_duplex: true,
    })
}
