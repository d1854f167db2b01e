//! Physical addressing: channel / chip / die / plane / block / page / mapping
//! slot, all as flat integer indices, and the capacity figures that follow from
//! the geometry and the spare-space setting.
//!
//! Index layout: dies are numbered channel-major (`die = (channel * chips +
//! chip) * dies_per_chip + die_in_chip`), planes die-major, blocks plane-major.
//! A slot is one mapping unit of physical flash: `block * units_per_block +
//! page * units_per_page + unit_in_page`.

use crate::media::CellMode;
use serde::Serialize;

/// The drive's shape and derived capacities.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Geometry {
    pub cell: CellMode,
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_size: u32,
    /// Mapping unit in bytes (4 KiB by default).
    pub unit_size: u32,
    pub units_per_page: u32,
    pub units_per_block: u32,
    pub dies: u32,
    pub planes: u32,
    pub blocks: u32,
    /// Physical mapping slots (raw capacity in mapping units).
    pub slots: u64,
    /// Logical mapping units the host can address.
    pub user_units: u64,
    pub raw_capacity_bytes: u64,
    pub user_capacity_bytes: u64,
}

impl Geometry {
    #[inline]
    pub fn plane_of_block(&self, block: u32) -> u32 {
        block / self.blocks_per_plane
    }

    #[inline]
    pub fn die_of_plane(&self, plane: u32) -> u32 {
        plane / self.planes_per_die
    }

    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        die / (self.chips_per_channel * self.dies_per_chip)
    }

    #[inline]
    pub fn block_of_slot(&self, slot: u32) -> u32 {
        slot / self.units_per_block
    }

    /// First slot of a block.
    #[inline]
    pub fn block_base(&self, block: u32) -> u32 {
        block * self.units_per_block
    }

    /// Spare blocks per plane: blocks not needed to hold the user capacity.
    pub fn spare_blocks_per_plane(&self) -> f64 {
        let user_blocks = self.user_units as f64 / self.units_per_block as f64;
        (self.blocks as f64 - user_blocks) / self.planes as f64
    }
}
