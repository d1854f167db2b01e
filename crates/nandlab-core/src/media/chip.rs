//! The chip test bench: presets for raw NAND chips (Desnoyers' Table 1, SNIA's
//! dies) and the experiments run on them — endurance to failure and latency
//! over a block's life — driving the wear model directly, not a whole drive.

use crate::media::spread::{Spread, MEASURED};
use crate::media::wear::{delta_v, Conditions, WearModel, DEFAULT_RATED};
use crate::media::CellMode;
use serde::Serialize;

/// Latencies a datasheet gives, µs (typical values).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Datasheet {
    pub read_us: f64,
    pub program_us: f64,
    pub erase_us: f64,
}

/// A raw NAND chip.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chip {
    pub name: &'static str,
    pub description: &'static str,
    pub cell: CellMode,
    pub size_bits: u64,
    pub process_nm: u32,
    pub page_size: u32,
    pub pages_per_block: u32,
    pub nominal_endurance: f64,
    pub datasheet: Datasheet,
    pub spread: Spread,
}

#[allow(clippy::too_many_arguments)] // one row of the table below
const fn chip(
    name: &'static str,
    description: &'static str,
    cell: CellMode,
    size_mbit: u64,
    process_nm: u32,
    geometry: (u32, u32),
    nominal_endurance: f64,
    datasheet: (f64, f64, f64),
    spread: Spread,
) -> Chip {
    Chip {
        name,
        description,
        cell,
        size_bits: size_mbit << 20,
        process_nm,
        page_size: geometry.0,
        pages_per_block: geometry.1,
        nominal_endurance,
        datasheet: Datasheet {
            read_us: datasheet.0,
            program_us: datasheet.1,
            erase_us: datasheet.2,
        },
        spread,
    }
}

/// The chips of Desnoyers' Table 1 (size, cell, rated endurance and process as
/// the paper gives them; page geometry and latencies are typical datasheet
/// values of the part families, approximate) and SNIA's SLC and MLC dies.
pub const CHIPS: &[Chip] = &[
    chip(
        "NAND128W3A2BN",
        "ST 128 Mbit SLC, 90 nm, small-page (Desnoyers Table 1)",
        CellMode::Slc,
        128,
        90,
        (512, 32),
        1e5,
        (12.0, 200.0, 2000.0),
        MEASURED,
    ),
    chip(
        "HY27US08121A",
        "Hynix 512 Mbit SLC, 90 nm, small-page (Desnoyers Table 1)",
        CellMode::Slc,
        512,
        90,
        (512, 32),
        1e5,
        (12.0, 200.0, 2000.0),
        MEASURED,
    ),
    chip(
        "MT29F2G08AAD",
        "Micron 2 Gbit SLC, 50 nm (Desnoyers Table 1)",
        CellMode::Slc,
        2048,
        50,
        (2048, 64),
        1e5,
        (25.0, 220.0, 1500.0),
        MEASURED,
    ),
    chip(
        "MT29F4G08AAC",
        "Micron 4 Gbit SLC, 72 nm (Desnoyers Table 1)",
        CellMode::Slc,
        4096,
        72,
        (2048, 64),
        1e5,
        (25.0, 250.0, 2000.0),
        MEASURED,
    ),
    chip(
        "NAND08GW3B2C",
        "Numonyx 8 Gbit SLC, 60 nm (Desnoyers Table 1)",
        CellMode::Slc,
        8192,
        60,
        (2048, 64),
        1e5,
        (25.0, 200.0, 1500.0),
        MEASURED,
    ),
    chip(
        "MT29F8G08MAAWC",
        "Micron 8 Gbit MLC, 72 nm (Desnoyers Table 1)",
        CellMode::Mlc,
        8192,
        72,
        (2048, 128),
        1e4,
        (50.0, 600.0, 3000.0),
        MEASURED,
    ),
    chip(
        "29F16G08CANC1",
        "Intel 16 Gbit SLC, 50 nm (Desnoyers Table 1)",
        CellMode::Slc,
        16384,
        50,
        (4096, 64),
        1e5,
        (25.0, 200.0, 1500.0),
        MEASURED,
    ),
    chip(
        "MT29F32G08QAA",
        "Micron 32 Gbit MLC, 50 nm (Desnoyers Table 1)",
        CellMode::Mlc,
        32768,
        50,
        (4096, 128),
        1e4,
        (50.0, 900.0, 3500.0),
        MEASURED,
    ),
    chip(
        "snia-slc",
        "SNIA tutorial SLC die: 0.5 GB, tR 25 us, tPROG 200 us, tBERS 3 ms",
        CellMode::Slc,
        4096,
        0,
        (4096, 64),
        1e5,
        (25.0, 200.0, 3000.0),
        Spread::Rated,
    ),
    chip(
        "snia-mlc",
        "SNIA tutorial MLC die: 1 GB, tR 60 us, tPROG 600 us, tBERS 10 ms",
        CellMode::Mlc,
        8192,
        0,
        (4096, 64),
        1e4,
        (60.0, 600.0, 10000.0),
        Spread::Rated,
    ),
];

/// Looks a chip up by name.
pub fn find(name: &str) -> Option<&'static Chip> {
    CHIPS.iter().find(|c| c.name == name)
}

impl Chip {
    /// The wear model of this chip: its rating for its native mode, the
    /// defaults' proportions for the others.
    pub fn wear_model(&self) -> WearModel {
        let native = self.cell.index();
        let scale = self.nominal_endurance / DEFAULT_RATED[native];
        WearModel::new(DEFAULT_RATED.map(|r| r * scale))
    }

    /// Endurance factor of each of `blocks` blocks (seeded).
    pub fn block_factors(&self, blocks: usize, seed: u64) -> Vec<f64> {
        self.spread.sample(blocks, seed)
    }
}

/// One block cycled to death: its lifetime, and (if traced) program and erase
/// times at sampled cycles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockRun {
    pub lifetime: u64,
    pub trace: Vec<(u64, f64, f64)>,
}

/// One block of a chip cycled under some conditions: when it dies, and its
/// program and erase times at any cycle.
struct BlockLife {
    model: WearModel,
    mode: CellMode,
    /// Rated cycles per real cycle: the block ages `rated / limit` times as fast.
    wear_rate: f64,
    lifetime: u64,
    program_fresh: u64,
    erase_fresh: u64,
}

impl BlockLife {
    fn new(chip: &Chip, factor: f64, conditions: &Conditions) -> BlockLife {
        let model = chip.wear_model();
        let rated = model.limit(chip.cell);
        let limit = rated * factor * conditions.endurance_factor();
        BlockLife {
            model,
            mode: chip.cell,
            wear_rate: rated / limit,
            lifetime: limit.ceil().max(1.0) as u64,
            program_fresh: (chip.datasheet.program_us * 1000.0) as u64,
            erase_fresh: (chip.datasheet.erase_us * 1000.0) as u64,
        }
    }

    /// (program µs, erase µs) at cycle `c` (1 = the first).
    fn latency_us(&self, c: u64) -> (f64, f64) {
        let dv = delta_v(c as f64 * self.wear_rate);
        (
            self.model.program_ns(self.program_fresh, self.mode, dv) as f64 / 1000.0,
            self.model.erase_ns(self.erase_fresh, self.mode, dv) as f64 / 1000.0,
        )
    }
}

/// Desnoyers' endurance test on one block: program a page with zeros (or the
/// whole block), erase, repeat until an operation fails. `factor` is the
/// block's endurance factor; `trace_points` how many (cycle, program µs,
/// erase µs) samples to keep (0 = none).
pub fn cycle_to_death(
    chip: &Chip,
    factor: f64,
    conditions: &Conditions,
    trace_points: usize,
) -> BlockRun {
    let life = BlockLife::new(chip, factor, conditions);
    let lifetime = life.lifetime;
    let mut trace = Vec::with_capacity(trace_points);
    if trace_points > 0 {
        // Every cycle up to 2,000, then evenly spaced samples: quantized steps stay visible.
        let dense = lifetime.min(2000);
        let step = ((lifetime - dense) / trace_points.max(1) as u64).max(1);
        let mut c = 1;
        while c <= lifetime {
            let (p, e) = life.latency_us(c);
            trace.push((c, p, e));
            c += if c < dense { 1 } else { step };
        }
    }
    BlockRun { lifetime, trace }
}

/// Latency summary as Desnoyers reports it, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spectrum {
    pub worst: f64,
    pub typical: f64,
    pub best: f64,
}

/// Read, program and erase latency of a typical block over its life:
/// program worst = mean of the first 100 writes, typical = first 10⁴, best =
/// last 100 before failure; erase the other way round. Read does not move.
pub fn latency_spectrum(chip: &Chip) -> (Spectrum, Spectrum, Spectrum) {
    let factor = match chip.spread {
        Spread::Rated => 1.0,
        Spread::LogNormal { median, .. } => median,
    };
    let life = BlockLife::new(chip, factor, &Conditions::default());
    let lifetime = life.lifetime;
    // Mean program (or erase) time over cycles from+1 ..= to.
    let mean = |from: u64, to: u64, erase: bool| {
        let to = to.min(lifetime);
        let from = from.min(to);
        let total: f64 = (from + 1..=to)
            .map(|c| {
                let (p, e) = life.latency_us(c);
                if erase {
                    e
                } else {
                    p
                }
            })
            .sum();
        total / (to - from).max(1) as f64
    };
    let last = lifetime.saturating_sub(100);
    let program = Spectrum {
        worst: mean(0, 100, false),
        typical: mean(0, 10_000, false),
        best: mean(last, lifetime, false),
    };
    let erase = Spectrum {
        best: mean(0, 100, true),
        typical: mean(0, 10_000, true),
        worst: mean(last, lifetime, true),
    };
    let r = chip.datasheet.read_us;
    (
        Spectrum {
            worst: r,
            typical: r,
            best: r,
        },
        program,
        erase,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::Deterministic;

    #[test]
    fn a_block_without_variation_dies_at_its_rating() {
        for chip in CHIPS {
            let run = cycle_to_death(chip, 1.0, &Conditions::default(), 0);
            assert_eq!(run.lifetime, chip.nominal_endurance as u64, "{}", chip.name);
        }
    }

    #[test]
    fn the_lifetime_spread_follows_the_distribution() {
        let chip = find("MT29F2G08AAD").unwrap();
        let f = chip.block_factors(20_000, 3);
        let mut logs: Vec<f64> = f.iter().map(|x| x.ln_d()).collect();
        logs.sort_by(f64::total_cmp);
        let median = logs[logs.len() / 2].exp_d();
        assert!((median / 40.0 - 1.0).abs() < 0.05, "median factor {median}");
        let outliers = f.iter().filter(|&&x| x < 3.0).count() as f64 / f.len() as f64;
        assert!((0.02..0.04).contains(&outliers), "outlier share {outliers}");
        assert_eq!(chip.block_factors(100, 3), chip.block_factors(100, 3));
    }

    #[test]
    fn the_latency_spectrum_orders_as_measured() {
        let chip = find("MT29F8G08MAAWC").unwrap();
        let (read, program, erase) = latency_spectrum(chip);
        assert_eq!(read.worst, read.best);
        assert!(program.worst > program.typical && program.typical > program.best);
        assert!(program.best * 2.0 <= program.worst + 1e-9);
        assert!(erase.worst >= 2.0 * erase.best);
        assert!(
            (program.worst - chip.datasheet.program_us).abs() / chip.datasheet.program_us < 0.15
        );
    }
}
