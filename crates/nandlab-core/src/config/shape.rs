//! The drive's shape: the `[device]` keys that size the flash (cell mode,
//! channels down to pages, page size, capacity and spare space) with the two
//! `[ftl]` keys that cut it up (`mapping_unit`, `gc_scope`), as a [`Geometry`].

use super::device::Capacity;
use super::ftl::{GcScope, GC_SCOPE};
use super::keyword::{Keywords, Meaning::Is};
use super::raw::{RawDevice, RawFtl};
use super::values::{err, fraction_in, positive, SECTOR};
use super::ConfigError;
use crate::geometry::{Dividers, Geometry};
use crate::media::CellMode;

/// What the other sections need of the drive's shape.
pub(super) struct Shape {
    pub geometry: Geometry,
    /// How the spare flash is set.
    pub capacity: Capacity,
    /// Whether `[device] capacity` sized the planes (rather than `blocks_per_plane`).
    pub nominal: bool,
    pub gc_scope: GcScope,
}

pub(super) fn shape(d: &RawDevice, f: &RawFtl) -> Result<Shape, ConfigError> {
    let cells: Vec<_> = CellMode::ALL.iter().map(|&m| (m.name(), Is(m))).collect();
    let cell = Keywords::new("cell mode", &cells).parse_or(
        "[device] cell",
        d.cell.as_deref(),
        CellMode::Mlc,
    )?;
    let channels = positive("[device] channels", d.channels, None)?;
    let chips_per_channel = positive("[device] chips_per_channel", d.chips_per_channel, Some(1))?;
    let dies_per_chip = positive("[device] dies_per_chip", d.dies_per_chip, Some(1))?;
    let planes_per_die = positive("[device] planes_per_die", d.planes_per_die, Some(1))?;
    let pages_per_block = positive("[device] pages_per_block", d.pages_per_block, None)?;
    let (page_size, unit_size) = page_and_unit(d, f)?;
    let units_per_page = (page_size / unit_size) as u32;
    // Every product in u128 (four u32 factors cannot overflow it), checked
    // against what nandlab addresses before anything narrower is taken.
    let units_per_block = units_per_page as u128 * pages_per_block as u128;
    let dies = channels as u128 * chips_per_channel as u128 * dies_per_chip as u128;
    let planes = dies * planes_per_die as u128;
    if units_per_page as u128 * planes_per_die as u128 > 1 << 20 {
        return err(
            "[device] planes_per_die",
            format!(
                "expected a die of at most 1,048,576 mapping units a page across its planes, found \
                 {planes_per_die} planes × {units_per_page} units"
            ),
        );
    }
    let capacity = spare_setting(d)?;
    let nominal_units = nominal_units(d, unit_size)?;
    let blocks_per_plane = match nominal_units {
        Some(user) => blocks_per_plane_for(user, capacity, units_per_block * planes),
        None => positive("[device] blocks_per_plane", d.blocks_per_plane, None)?,
    };
    let blocks = planes * blocks_per_plane as u128;
    let slots = blocks * units_per_block;
    if units_per_block > 1 << 20 || slots >= u32::MAX as u128 || blocks >= 1 << 31 {
        return err(
            "[device]",
            format!(
                "impossible geometry: {channels} channels × {chips_per_channel} chips × {dies_per_chip} dies × \
                 {planes_per_die} planes × {blocks_per_plane} blocks × {pages_per_block} pages × \
                 {units_per_page} units = {slots} mapping units of {unit_size} bytes; nandlab addresses \
                 at most 4,294,967,294 units and 2,147,483,647 blocks per drive, and 1,048,576 units a block"
            ),
        );
    }
    // Within those bounds every count fits its type.
    let (units_per_block, dies, planes, blocks, slots) = (
        units_per_block as u64,
        dies as u64,
        planes as u64,
        blocks as u64,
        slots as u64,
    );
    let user_units = match (nominal_units, capacity) {
        (Some(user), _) => user,
        (None, Capacity::OverProvisioning(op)) => (slots as f64 / (1.0 + op)).floor() as u64,
        (None, Capacity::Reserve(r)) => (slots as f64 * (1.0 - r)).floor() as u64,
    };
    let gc_scope = gc_scope(d, f)?;
    let planes_per_pool = match gc_scope {
        GcScope::Plane => 1,
        GcScope::Die => planes_per_die,
    };
    let mut geometry = Geometry {
        cell,
        channels,
        chips_per_channel,
        dies_per_chip,
        planes_per_die,
        blocks_per_plane,
        pages_per_block,
        planes_per_pool,
        pools: (planes / planes_per_pool as u64) as u32,
        blocks_per_pool: blocks_per_plane * planes_per_pool,
        page_size: page_size as u32,
        unit_size: unit_size as u32,
        units_per_page,
        units_per_block: units_per_block as u32,
        dies: dies as u32,
        planes: planes as u32,
        blocks: blocks as u32,
        slots,
        user_units,
        raw_capacity_bytes: slots * unit_size,
        user_capacity_bytes: user_units * unit_size,
        fast: Dividers::new(1, 1, 1, 1, 1, 1),
    };
    geometry.fast = geometry.dividers();
    Ok(Shape {
        geometry,
        capacity,
        nominal: nominal_units.is_some(),
        gc_scope,
    })
}

/// `[device] page_size` and `[ftl] mapping_unit` (which divides it), bytes.
fn page_and_unit(d: &RawDevice, f: &RawFtl) -> Result<(u64, u64), ConfigError> {
    let page_size = d.page_size.map(|s| s.0).ok_or_else(|| {
        ConfigError::new(
            "[device] page_size",
            "missing: give a size like \"8KiB\" or choose a `[device] preset`",
        )
    })?;
    if !(SECTOR..=(1 << 20)).contains(&page_size) || page_size % SECTOR != 0 {
        return err(
            "[device] page_size",
            format!(
                "expected a multiple of 512 bytes up to 1MiB, found {}",
                super::values::sector_size_shown(page_size)
            ),
        );
    }
    let unit_size = match f.mapping_unit {
        Some(s) => s.0,
        None => page_size.min(4096),
    };
    if unit_size < SECTOR || unit_size % SECTOR != 0 || page_size % unit_size != 0 {
        return err(
            "[ftl] mapping_unit",
            format!("expected a multiple of 512 bytes that divides the page size ({page_size}), found {unit_size}"),
        );
    }
    Ok((page_size, unit_size))
}

/// `[device] over_provisioning` or `reserve`: the spare flash.
fn spare_setting(d: &RawDevice) -> Result<Capacity, ConfigError> {
    Ok(match (d.over_provisioning, d.reserve) {
        (Some(_), Some(_)) => {
            return err(
                "[device] reserve",
                "give either over_provisioning or reserve, not both",
            );
        }
        (Some(op), None) => {
            Capacity::OverProvisioning(fraction_in("[device] over_provisioning", op.0, 0.0, 10.0)?)
        }
        (None, Some(r)) => Capacity::Reserve(fraction_in("[device] reserve", r.0, 0.0, 0.95)?),
        (None, None) => Capacity::OverProvisioning(0.07),
    })
}

/// `[device] capacity` in mapping units: a nominal capacity sizes the planes,
/// enough blocks for it plus the spare setting.
fn nominal_units(d: &RawDevice, unit_size: u64) -> Result<Option<u64>, ConfigError> {
    match d.capacity {
        None => Ok(None),
        Some(c) if c.0 >= unit_size && c.0 % unit_size == 0 => Ok(Some(c.0 / unit_size)),
        Some(c) => err(
            "[device] capacity",
            format!(
                "expected a whole number of mapping units ({unit_size} bytes), found {}",
                super::values::size_shown(c.0, unit_size)
            ),
        ),
    }
}

/// Blocks per plane that hold `user` mapping units plus the spare setting,
/// `units_per_block_row` being the units of one block in every plane.
fn blocks_per_plane_for(user: u64, capacity: Capacity, units_per_block_row: u128) -> u32 {
    let raw = match capacity {
        Capacity::OverProvisioning(op) => user as f64 * (1.0 + op),
        Capacity::Reserve(r) => user as f64 / (1.0 - r),
    };
    let per_plane = (raw / units_per_block_row as f64).ceil();
    per_plane.clamp(1.0, u32::MAX as f64) as u32
}

/// `[ftl] gc_scope`: the blocks a GC pool holds.
fn gc_scope(d: &RawDevice, f: &RawFtl) -> Result<GcScope, ConfigError> {
    let scope = GC_SCOPE.parse_or("[ftl] gc_scope", f.gc_scope.as_deref(), GcScope::Plane)?;
    if scope == GcScope::Die && d.multiplane == Some(true) {
        return err(
            "[ftl] gc_scope",
            format!(
                "\"{}\" opens one block per die at a time, so it cannot program planes together: set [device] multiplane = false",
                GC_SCOPE.name(GcScope::Die)
            ),
        );
    }
    Ok(scope)
}
