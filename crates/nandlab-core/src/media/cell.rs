//! The flash cell: bit modes (SLC..QLC), page types within a wordline, and the
//! latency of each operation per mode and page type. Every block carries its
//! own mode; a block's capacity and latencies follow from it.

use serde::{Deserialize, Serialize};

/// Bits stored per cell. The discriminant is the number of bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum CellMode {
    Slc = 1,
    Mlc = 2,
    Tlc = 3,
    Qlc = 4,
}

impl CellMode {
    pub const ALL: [CellMode; 4] = [CellMode::Slc, CellMode::Mlc, CellMode::Tlc, CellMode::Qlc];
    pub const NAMES: [&'static str; 4] = ["slc", "mlc", "tlc", "qlc"];

    pub fn bits(self) -> u32 {
        self as u32
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize - 1]
    }

    pub fn parse(s: &str) -> Option<CellMode> {
        Self::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Self::ALL[i])
    }

    /// One bit per cell fewer (ZombieNAND's downgrade), or None below SLC.
    pub fn lower(self) -> Option<CellMode> {
        match self {
            CellMode::Slc => None,
            CellMode::Mlc => Some(CellMode::Slc),
            CellMode::Tlc => Some(CellMode::Mlc),
            CellMode::Qlc => Some(CellMode::Tlc),
        }
    }

    /// Index 0..4 for per-mode tables.
    pub fn index(self) -> usize {
        self as usize - 1
    }
}

/// Page types of a wordline, lowest first: LSB, CSB, MSB, TSB.
pub const PAGE_TYPE_NAMES: [&str; 4] = ["LSB", "CSB", "MSB", "TSB"];

/// Latencies of one bit mode, in nanoseconds, one entry per page type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeTiming {
    pub read_ns: Vec<u64>,
    pub program_ns: Vec<u64>,
    pub erase_ns: u64,
}

impl ModeTiming {
    /// Built-in defaults per mode (typical datasheet figures; presets override them).
    pub fn default_for(mode: CellMode) -> ModeTiming {
        let us = |v: &[u64]| v.iter().map(|x| x * 1000).collect::<Vec<_>>();
        match mode {
            CellMode::Slc => ModeTiming {
                read_ns: us(&[25]),
                program_ns: us(&[200]),
                erase_ns: 1_500_000,
            },
            CellMode::Mlc => ModeTiming {
                read_ns: us(&[50, 50]),
                program_ns: us(&[300, 700]),
                erase_ns: 3_000_000,
            },
            CellMode::Tlc => ModeTiming {
                read_ns: us(&[150, 150, 150]),
                program_ns: us(&[500, 1000, 1500]),
                erase_ns: 3_000_000,
            },
            CellMode::Qlc => ModeTiming {
                read_ns: us(&[150, 170, 200, 250]),
                program_ns: us(&[600, 1200, 2000, 3000]),
                erase_ns: 5_000_000,
            },
        }
    }

    /// Page type of page `page` of a block in a mode with `bits` bits per cell
    /// (pages of a wordline are consecutive: LSB, CSB, MSB, ...).
    #[inline]
    pub fn page_type(page: u32, bits: u32) -> usize {
        // `page % bits` without a division instruction (this runs per program).
        (match bits {
            1 => 0,
            2 => page & 1,
            3 => page % 3,
            _ => page & 3,
        }) as usize
    }
}
