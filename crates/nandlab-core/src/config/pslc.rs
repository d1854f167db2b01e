//! `[ftl] pslc`, `pslc_*`, `fold_idle`, `direct_write*`: the pSLC write
//! cache, sized per GC pool.

use super::keyword::{Keywords, Meaning::Is};
use super::raw::RawFtl;
use super::values::{err, fraction_in, volume, Volume};
use super::ConfigError;
use crate::geometry::Geometry;
use crate::media::CellMode;
use serde::{Deserialize, Serialize};

/// Which pSLC cache the firmware runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PslcKind {
    Off,
    /// A fixed set of blocks runs as SLC for the drive's life.
    Static,
    /// The static set plus up to a share of the free native blocks, run as
    /// SLC while the drive is young.
    Dynamic,
}

/// The pSLC write cache: host writes land in blocks run as SLC (fast) and
/// are folded into native-mode blocks later (in idle time, or in the
/// foreground when the cache is full).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PslcConfig {
    pub kind: PslcKind,
    /// Blocks per GC pool permanently run as SLC (the static cache).
    pub static_blocks: u32,
    /// Dynamic cache: at most this many native blocks per pool run as SLC at once.
    pub dynamic_blocks: u32,
    /// The dynamic cache turns static once this share of the native rated
    /// cycles is used (averaged over blocks).
    pub static_after: f64,
    /// Fold the cache in idle time (else only when it is full).
    pub fold_idle: bool,
    /// Direct-write: a sequential stream at least `direct_write_after` bytes
    /// long bypasses a cache that has no room, into native blocks.
    pub direct_write: bool,
    pub direct_write_after: u64,
}

/// `[ftl] pslc`.
const PSLC: Keywords<PslcKind> = Keywords::new(
    "pSLC cache",
    &[
        ("off", Is(PslcKind::Off)),
        ("static", Is(PslcKind::Static)),
        ("dynamic", Is(PslcKind::Dynamic)),
    ],
);

/// `[ftl] pslc*`, `fold_idle`, `direct_write*`: the pSLC cache, sized per GC pool.
pub(super) fn validate(f: &RawFtl, g: &Geometry, gc_start: u32) -> Result<PslcConfig, ConfigError> {
    let kind = PSLC.parse_or("[ftl] pslc", f.pslc.as_deref(), PslcKind::Off)?;
    keys_apply(f, kind)?;
    if kind == PslcKind::Off {
        return Ok(PslcConfig {
            kind,
            static_blocks: 0,
            dynamic_blocks: 0,
            static_after: 0.0,
            fold_idle: false,
            direct_write: false,
            direct_write_after: 0,
        });
    }
    let direct_write = f.direct_write.unwrap_or(false);
    if f.direct_write_after.is_some() && !direct_write {
        return err(
            "[ftl] direct_write_after",
            "sets when direct-write starts: set [ftl] direct_write = true",
        );
    }
    if g.cell == CellMode::Slc {
        return err(
            "[ftl] pslc",
            "a pSLC cache runs multi-bit cells as SLC; this drive's cells are already SLC",
        );
    }
    let (static_blocks, native) = static_cache(f, kind, g, gc_start)?;
    let share = match f.pslc_dynamic_share {
        None => 0.75,
        Some(x) => fraction_in("[ftl] pslc_dynamic_share", x.0, 0.0, 1.0)?,
    };
    let static_after = match f.pslc_static_after {
        None => 0.1,
        Some(x) => fraction_in("[ftl] pslc_static_after", x.0, 0.0, 1.0)?,
    };
    Ok(PslcConfig {
        kind,
        static_blocks,
        dynamic_blocks: match kind {
            PslcKind::Dynamic => (share * native).floor() as u32,
            _ => 0,
        },
        static_after,
        fold_idle: f.fold_idle.unwrap_or(true),
        direct_write,
        direct_write_after: f.direct_write_after.map_or(4 << 20, |s| s.0),
    })
}

/// The cache keys given apply to the cache `kind`: none without a cache, no
/// dynamic-cache key for a static one.
fn keys_apply(f: &RawFtl, kind: PslcKind) -> Result<(), ConfigError> {
    let cache_keys = [
        ("pslc_size", f.pslc_size.is_some()),
        ("pslc_dynamic_share", f.pslc_dynamic_share.is_some()),
        ("pslc_static_after", f.pslc_static_after.is_some()),
        ("fold_idle", f.fold_idle.is_some()),
        ("direct_write", f.direct_write == Some(true)),
        ("direct_write_after", f.direct_write_after.is_some()),
    ];
    let given = |key: &str| cache_keys.iter().any(|&(k, given)| k == key && given);
    match kind {
        PslcKind::Off => match cache_keys.iter().find(|(_, given)| *given) {
            Some((key, _)) => err(
                &format!("[ftl] {key}"),
                format!(
                    "configures the pSLC cache: set [ftl] pslc = \"{}\" or \"{}\"",
                    PSLC.name(PslcKind::Static),
                    PSLC.name(PslcKind::Dynamic)
                ),
            ),
            None => Ok(()),
        },
        PslcKind::Static => match ["pslc_dynamic_share", "pslc_static_after"]
            .into_iter()
            .find(|&key| given(key))
        {
            Some(key) => err(
                &format!("[ftl] {key}"),
                format!(
                    "applies to a dynamic cache: set [ftl] pslc = \"{}\"",
                    PSLC.name(PslcKind::Dynamic)
                ),
            ),
            None => Ok(()),
        },
        PslcKind::Dynamic => Ok(()),
    }
}

/// `[ftl] pslc_size`: the static cache's blocks per pool (at least 1 for a
/// static cache), and the native blocks it leaves, which must hold the
/// pool's share of the user data plus what GC needs.
fn static_cache(
    f: &RawFtl,
    kind: PslcKind,
    g: &Geometry,
    gc_start: u32,
) -> Result<(u32, f64), ConfigError> {
    let size = match f.pslc_size {
        None => Volume::Capacities(0.03),
        Some(v) => volume("[ftl] pslc_size", v, g)?,
    };
    // Blocks per pool holding that much data in SLC mode (whole pages).
    let slc_units = ((g.units_per_block / g.cell.bits()) / g.units_per_page * g.units_per_page)
        .max(g.units_per_page) as u64;
    let units = size
        .bytes(g.user_capacity_bytes)
        .div_ceil(g.unit_size as u64);
    let static_blocks = units.div_ceil(slc_units * g.pools as u64);
    let static_blocks = match (kind, static_blocks) {
        (PslcKind::Static, 0) => 1,
        (_, n) => n,
    };
    // As the spare-space check of the whole pool.
    let native = g.blocks_per_pool as f64 - static_blocks as f64;
    let data = g.user_units_per_pool() as f64 / g.units_per_block as f64;
    if native - data <= gc_start as f64 + 2.0 {
        return err(
            "[ftl] pslc_size",
            format!(
                "the static cache takes {static_blocks} of each GC pool's {} blocks, leaving {:.1} spare native blocks; \
                 GC needs more than {}: lower pslc_size or raise the spare space",
                g.blocks_per_pool,
                native - data,
                gc_start + 2
            ),
        );
    }
    Ok((static_blocks as u32, native))
}
