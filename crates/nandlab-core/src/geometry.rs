//! Physical addressing: channel / chip / die / plane / block / page / mapping
//! slot, all as flat integer indices, and the capacity figures that follow from
//! the geometry and the spare-space setting.
//!
//! Index layout: dies are numbered channel-major (`die = (channel * chips +
//! chip) * dies_per_chip + die_in_chip`), planes die-major, and blocks
//! plane-minor (`block = block_in_plane * planes + plane`), so that the blocks
//! the planes write at the same time sit next to each other in memory instead
//! of a power-of-two stride apart (which made every plane's state share the
//! same cache sets). A slot is one mapping unit of physical flash:
//! `block * units_per_block + page * units_per_page + unit_in_page`.
//!
//! A GC pool is the set of blocks that share a free-block queue, a victim
//! index, watermarks and write frontiers: one plane (the default) or all
//! planes of a die (a "flash element", as the ZombieNAND paper's drives).
//! Pools are numbered like their first plane divided by the planes per pool.

use crate::media::CellMode;
use crate::sanity::Broken;
use serde::{Deserialize, Serialize};

/// Division by a runtime constant as a multiply and a shift (Lemire's
/// fastdiv): the address arithmetic runs for every operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FastDiv {
    d: u32,
    m: u64,
}

impl FastDiv {
    pub fn new(d: u32) -> FastDiv {
        assert!(d > 0, "division by zero");
        FastDiv {
            d,
            m: (u64::MAX / d as u64).wrapping_add(1),
        }
    }

    #[inline]
    pub fn quotient(self, n: u32) -> u32 {
        if self.d == 1 {
            n
        } else {
            ((self.m as u128 * n as u128) >> 64) as u32
        }
    }

    /// What it divides by.
    #[inline]
    pub fn divisor(self) -> u32 {
        self.d
    }

    #[inline]
    pub fn remainder(self, n: u32) -> u32 {
        n - self.quotient(n) * self.d
    }
}

/// The drive's shape and derived capacities. Its dividers are not written
/// out: deserialising computes them again from the shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Shape")]
pub struct Geometry {
    pub cell: CellMode,
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Planes per GC pool: 1, or the planes of a die.
    pub planes_per_pool: u32,
    pub pools: u32,
    pub blocks_per_pool: u32,
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
    #[serde(skip)]
    pub fast: Dividers,
}

/// A [`Geometry`] as read back: every field but the dividers.
#[derive(Deserialize)]
struct Shape {
    cell: CellMode,
    channels: u32,
    chips_per_channel: u32,
    dies_per_chip: u32,
    planes_per_die: u32,
    blocks_per_plane: u32,
    pages_per_block: u32,
    planes_per_pool: u32,
    pools: u32,
    blocks_per_pool: u32,
    page_size: u32,
    unit_size: u32,
    units_per_page: u32,
    units_per_block: u32,
    dies: u32,
    planes: u32,
    blocks: u32,
    slots: u64,
    user_units: u64,
    raw_capacity_bytes: u64,
    user_capacity_bytes: u64,
}

impl TryFrom<Shape> for Geometry {
    type Error = Broken;

    fn try_from(s: Shape) -> Result<Geometry, Broken> {
        let counts = [
            s.units_per_block,
            s.units_per_page,
            s.planes,
            s.planes_per_die,
            s.planes_per_pool,
            s.chips_per_channel,
            s.dies_per_chip,
        ];
        if counts.contains(&0) {
            return Err("a geometry with a zero count".into());
        }
        let mut g = Geometry {
            cell: s.cell,
            channels: s.channels,
            chips_per_channel: s.chips_per_channel,
            dies_per_chip: s.dies_per_chip,
            planes_per_die: s.planes_per_die,
            blocks_per_plane: s.blocks_per_plane,
            pages_per_block: s.pages_per_block,
            planes_per_pool: s.planes_per_pool,
            pools: s.pools,
            blocks_per_pool: s.blocks_per_pool,
            page_size: s.page_size,
            unit_size: s.unit_size,
            units_per_page: s.units_per_page,
            units_per_block: s.units_per_block,
            dies: s.dies,
            planes: s.planes,
            blocks: s.blocks,
            slots: s.slots,
            user_units: s.user_units,
            raw_capacity_bytes: s.raw_capacity_bytes,
            user_capacity_bytes: s.user_capacity_bytes,
            fast: Dividers::new(1, 1, 1, 1, 1, 1),
        };
        g.fast = g.dividers();
        Ok(g)
    }
}

/// Precomputed dividers of the address arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dividers {
    pub units_per_block: FastDiv,
    pub units_per_page: FastDiv,
    pub planes: FastDiv,
    pub planes_per_die: FastDiv,
    pub planes_per_pool: FastDiv,
    pub dies_per_channel: FastDiv,
}

impl Dividers {
    /// The GC pool of a block (as [`Geometry::pool_of_block`]).
    #[inline]
    pub fn pool_of_block(&self, block: u32) -> usize {
        self.planes_per_pool.quotient(self.planes.remainder(block)) as usize
    }

    pub fn new(
        units_per_block: u32,
        units_per_page: u32,
        planes: u32,
        planes_per_die: u32,
        planes_per_pool: u32,
        dies_per_channel: u32,
    ) -> Self {
        Dividers {
            units_per_block: FastDiv::new(units_per_block),
            units_per_page: FastDiv::new(units_per_page),
            planes: FastDiv::new(planes),
            planes_per_die: FastDiv::new(planes_per_die),
            planes_per_pool: FastDiv::new(planes_per_pool),
            dies_per_channel: FastDiv::new(dies_per_channel),
        }
    }
}

impl Geometry {
    /// The dividers of the address arithmetic for this shape.
    pub fn dividers(&self) -> Dividers {
        Dividers::new(
            self.units_per_block,
            self.units_per_page,
            self.planes,
            self.planes_per_die,
            self.planes_per_pool,
            self.chips_per_channel * self.dies_per_chip,
        )
    }

    #[inline]
    pub fn plane_of_block(&self, block: u32) -> u32 {
        self.fast.planes.remainder(block)
    }

    #[inline]
    pub fn pool_of_block(&self, block: u32) -> u32 {
        self.fast.pool_of_block(block) as u32
    }

    /// The `index`-th block of `pool` (its planes' blocks interleaved).
    #[inline]
    pub fn block_in_pool(&self, pool: u32, index: u32) -> u32 {
        let row = self.fast.planes_per_pool.quotient(index);
        let plane = pool * self.planes_per_pool + (index - row * self.planes_per_pool);
        row * self.planes + plane
    }

    /// The blocks of `pool`.
    pub fn pool_blocks(&self, pool: u32) -> impl Iterator<Item = u32> + '_ {
        (0..self.blocks_per_pool).map(move |i| self.block_in_pool(pool, i))
    }

    #[inline]
    pub fn die_of_pool(&self, pool: u32) -> u32 {
        self.die_of_plane(pool * self.planes_per_pool)
    }

    #[inline]
    pub fn die_of_plane(&self, plane: u32) -> u32 {
        self.fast.planes_per_die.quotient(plane)
    }

    #[inline]
    pub fn block_of_slot(&self, slot: u32) -> u32 {
        self.fast.units_per_block.quotient(slot)
    }

    /// Page of a block that a slot belongs to (`slot` relative to the block's base).
    #[inline]
    pub fn page_of_offset(&self, offset: u32) -> u32 {
        self.fast.units_per_page.quotient(offset)
    }

    /// First slot of a block.
    #[inline]
    pub fn block_base(&self, block: u32) -> u32 {
        block * self.units_per_block
    }

    /// Spare blocks per pool: blocks not needed to hold the user capacity.
    pub fn spare_blocks_per_pool(&self) -> f64 {
        let user_blocks = self.user_units as f64 / self.units_per_block as f64;
        (self.blocks as f64 - user_blocks) / self.pools as f64
    }

    /// Mapping units of the user capacity each pool must be able to hold
    /// (host writes are striped evenly over the pools).
    pub fn user_units_per_pool(&self) -> u64 {
        self.user_units.div_ceil(self.pools as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::FastDiv;

    #[test]
    fn pools_partition_the_blocks() {
        let cfg = crate::config::Config::from_toml(
            "[device]\nplanes_per_die = 4\nchannels = 2\nblocks_per_plane = 8\npages_per_block = 4\npage_size = \"4KiB\"\nover_provisioning = \"40 %\"\n\
             [ftl]\ngc_scope = \"die\"\ngc_start = 2\ngc_stop = 2\n[[phase]]\nrequests = 1\n",
            "test",
        )
        .unwrap();
        let g = &cfg.geometry;
        assert_eq!((g.pools, g.blocks_per_pool), (2, 32));
        let mut seen = vec![false; g.blocks as usize];
        for pool in 0..g.pools {
            for b in g.pool_blocks(pool) {
                assert_eq!(g.pool_of_block(b), pool);
                assert_eq!(g.die_of_pool(pool), g.die_of_plane(g.plane_of_block(b)));
                assert!(!std::mem::replace(&mut seen[b as usize], true));
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn fast_division_is_exact() {
        for d in [1u32, 2, 3, 7, 64, 384, 512, 1000, 1536, 4096, 65_537] {
            let f = FastDiv::new(d);
            for n in (0..200_000u32).chain([u32::MAX - 1, u32::MAX, 1 << 31, 3_000_000_017]) {
                assert_eq!(f.quotient(n), n / d, "{n} / {d}");
                assert_eq!(f.remainder(n), n % d, "{n} % {d}");
            }
        }
    }
}
