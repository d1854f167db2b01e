//! `[ftl]`'s wear keys: wear levelling (ZombieNAND's usage-table GC,
//! Algorithms 2 and 3, and how it judges a block worn), ZombieNAND's bit-mode
//! switch and its early-switch pool (wear-unleveling), and when a worn drive
//! counts as dead.

use super::ftl::registered_policies;
use super::keyword::{Keywords, Meaning::*};
use super::raw::RawFtl;
use super::values::err;
use super::{ConfigError, GcPolicy};
use crate::geometry::Geometry;
use serde::{Deserialize, Serialize};

/// `[ftl] unleveling_bet`'s default under the capacity death rule: the
/// early-switch pool may put half a percent of the baseline's life (and of
/// its write latency) at risk, were the whole drive to become live.
pub const UNLEVELING_BET: f64 = 0.005;

/// `[ftl] life_average`: the average remaining life a block's is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LifeAverage {
    /// Algorithm 3's `COMPUTE_AVG_LIFE(element)`, as the authors' DiskSim
    /// computes it: the remaining erases of every usable block of the GC
    /// pool, whatever its mode or pool — so once blocks live on in SLC,
    /// worn normal blocks fall below the threshold and wear settles on the
    /// zombies.
    Element,
    /// The pool's normal (not early-switch) blocks in the block's own mode.
    Mode,
}

const LIFE_AVERAGE: Keywords<LifeAverage> = Keywords::new(
    "life average",
    &[
        ("element", Is(LifeAverage::Element)),
        ("mode", Is(LifeAverage::Mode)),
    ],
);

/// `[ftl] life_skip`: what GC does with a normal block below the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LifeSkip {
    /// Skipped, always (Algorithm 3).
    Strict,
    /// Skipped at random, taken with probability (life / average) /
    /// threshold (DiskSim's `ssd_rate_limit`).
    RateLimited,
}

const LIFE_SKIP: Keywords<LifeSkip> = Keywords::new(
    "life skip",
    &[
        ("strict", Is(LifeSkip::Strict)),
        ("rate-limited", Is(LifeSkip::RateLimited)),
    ],
);

/// `[ftl] early_switch`: how the early-switch pool is sized and filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EarlySwitch {
    /// Eq. 1's count of blocks, ⌊(R − W)·B / 2^(S−2)⌋, chosen at the start.
    Eq1,
    /// As many blocks, chosen at the start, as the spare flash can lose if
    /// they all end in SLC, less `gc_start` blocks left for normal blocks to
    /// switch: ⌊(pool flash − user share − high watermark) / (native − SLC
    /// units per block)⌋ − low watermark.
    Capacity,
    /// Empty at the start; a normal block joins when it switches mode at
    /// death, while the pool stays within the capacity size.
    Rolling,
}

const EARLY_SWITCH: Keywords<EarlySwitch> = Keywords::new(
    "early-switch pool",
    &[
        ("eq1", Is(EarlySwitch::Eq1)),
        ("capacity", Is(EarlySwitch::Capacity)),
        ("rolling", Is(EarlySwitch::Rolling)),
    ],
);

/// `[ftl] death`: when lost flash ends the drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeathRule {
    /// The drive keeps its advertised capacity: it dies when a pool's usable
    /// flash can no longer hold its share of the user capacity plus the GC
    /// high watermark.
    Capacity,
    /// The paper's literal rule: it dies when a pool's retired blocks
    /// exceed (R − W)% of its blocks; blocks living on in a lower mode do
    /// not count, so the drive may hold less than it advertised (the
    /// summary says so) as long as its data fits.
    DeadBlocks,
}

const DEATH: Keywords<DeathRule> = Keywords::new(
    "death rule",
    &[
        ("capacity", Is(DeathRule::Capacity)),
        ("dead-blocks", Is(DeathRule::DeadBlocks)),
    ],
);

/// `[ftl] zombie`, `wear_leveling`, `wear_unleveling` and their settings.
#[derive(Debug, Clone, Serialize)]
pub struct WearRules {
    /// ZombieNAND: a block dead at its bit mode drops one bit per cell (TLC →
    /// MLC → SLC) instead of being retired.
    pub zombie: bool,
    /// GC and allocation level wear by remaining life: GC skips a normal
    /// block whose remaining life is below `life_threshold` × the average
    /// (`life_average`), and a frontier opens the free block with the most
    /// life left.
    pub wear_leveling: bool,
    /// ZombieNAND's wear-unleveling: an early-switch pool per GC pool is
    /// preferred by GC and allocation so it wears out, and switches mode,
    /// first; it is levelled only among itself.
    pub wear_unleveling: bool,
    pub life_threshold: f64,
    /// The share of the baseline's projected life the early-switch pool's
    /// lead may put at risk were the whole drive to become live
    /// (`ftl::blocks::bet`); 1 or more: no bound (the paper's bet).
    pub unleveling_bet: f64,
    pub life_average: LifeAverage,
    pub life_skip: LifeSkip,
    pub early_switch: EarlySwitch,
    /// Early-switch blocks per GC pool (rolling: the most that may join);
    /// 0 without wear-unleveling.
    pub early_switch_blocks: u32,
    pub death: DeathRule,
    /// Retired blocks a pool may have under `death = "dead-blocks"`:
    /// ⌊(R − W)·B / 100⌋ in whole percent.
    pub dead_block_limit: u32,
}

pub(super) fn validate(
    f: &RawFtl,
    gc: GcPolicy,
    g: &Geometry,
    gc_start: u32,
    gc_stop: u32,
) -> Result<WearRules, ConfigError> {
    let zombie = f.zombie.unwrap_or(false);
    let unleveling = f.wear_unleveling.unwrap_or(zombie);
    let leveling = f.wear_leveling.unwrap_or(false) || unleveling;
    if leveling && !gc.wear_aware() {
        let key = if f.wear_leveling == Some(true) {
            "[ftl] wear_leveling"
        } else {
            "[ftl] wear_unleveling"
        };
        return err(
            key,
            format!(
                "works with gc = \"{}\" (ZombieNAND's usage-table GC), found gc = \"{}\"",
                registered_policies()
                    .iter()
                    .filter(|p| p.wear_aware)
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join("\" or gc = \""),
                f.gc.as_deref().unwrap_or_default()
            ),
        );
    }
    let life_threshold = match f.life_threshold {
        None => 0.8,
        Some(x) if (0.0..=1.0).contains(&x) => x,
        Some(x) => {
            return err(
                "[ftl] life_threshold",
                format!(
                "expected a fraction of the pool's average remaining life from 0 to 1, found {x}"
            ),
            )
        }
    };
    // Each death rule has the reading of the paper that fits it: keeping the
    // advertised capacity, a pool the spare flash can afford and Algorithm
    // 3's strict skip; counting dead blocks (the paper's literal rule), Eq.
    // 1's pool and the authors' DiskSim's rate-limited skip.
    let death = DEATH.parse_or("[ftl] death", f.death.as_deref(), DeathRule::Capacity)?;
    let (pool_default, skip_default) = match death {
        DeathRule::Capacity => (EarlySwitch::Capacity, LifeSkip::Strict),
        DeathRule::DeadBlocks => (EarlySwitch::Eq1, LifeSkip::RateLimited),
    };
    // The capacity rule keeps the advertised capacity whatever the workload
    // does, so its bet on the workload is bounded; the paper's literal rule
    // lets the drive shrink, and takes the paper's unbounded bet.
    let unleveling_bet = match (f.unleveling_bet, death) {
        (None, DeathRule::Capacity) => UNLEVELING_BET,
        (None, DeathRule::DeadBlocks) => 1.0,
        (Some(x), _) if (0.0..=1.0).contains(&x) => x,
        (Some(x), _) => {
            return err(
                "[ftl] unleveling_bet",
                format!(
                    "expected the share of the baseline's life the early-switch pool may put at \
                     risk, from 0 to 1 (1: no bound), found {x}"
                ),
            )
        }
    };
    let early_switch = EARLY_SWITCH.parse_or(
        "[ftl] early_switch",
        f.early_switch.as_deref(),
        pool_default,
    )?;
    let early_switch_blocks = match (unleveling, f.early_switch_blocks) {
        (false, _) => 0,
        (true, None) => match early_switch {
            EarlySwitch::Eq1 => early_switch_pool(g, gc_stop),
            EarlySwitch::Capacity | EarlySwitch::Rolling => {
                early_switch_by_capacity(g, gc_start, gc_stop)
            }
        },
        (true, Some(n)) if n <= g.blocks_per_pool => n,
        (true, Some(n)) => {
            return err(
                "[ftl] early_switch_blocks",
                format!(
                    "expected at most the {} blocks of a GC pool, found {n}",
                    g.blocks_per_pool
                ),
            )
        }
    };
    Ok(WearRules {
        zombie,
        wear_leveling: leveling,
        wear_unleveling: unleveling,
        life_threshold,
        unleveling_bet,
        life_average: LIFE_AVERAGE.parse_or(
            "[ftl] life_average",
            f.life_average.as_deref(),
            LifeAverage::Element,
        )?,
        life_skip: LIFE_SKIP.parse_or("[ftl] life_skip", f.life_skip.as_deref(), skip_default)?,
        early_switch,
        early_switch_blocks,
        death,
        dead_block_limit: dead_block_limit(g, gc_stop),
    })
}

/// The reserve R and high watermark W in whole percent of the flash, as the
/// paper writes them.
fn reserve_and_watermark(g: &Geometry, gc_stop: u32) -> (f64, f64) {
    let reserve = 100.0 * (1.0 - g.user_units as f64 / g.slots as f64);
    let watermark = 100.0 * gc_stop as f64 / g.blocks_per_pool as f64;
    (reserve.round(), watermark.round())
}

/// ZombieNAND's Eq. 1: early-switch blocks per pool ≤ (R − W)·B / 2^(S−2),
/// with R the reserve and W the high watermark in whole percent of the flash,
/// B the blocks per pool and S the native bits per cell (1 for SLC: no lower
/// mode to switch to).
pub fn early_switch_pool(g: &Geometry, gc_stop: u32) -> u32 {
    if g.cell.bits() < 2 {
        return 0;
    }
    let (r, w) = reserve_and_watermark(g, gc_stop);
    if r <= w {
        return 0;
    }
    ((r - w) * g.blocks_per_pool as f64 / 100.0 / f64::from(1u32 << (g.cell.bits() - 2))).floor()
        as u32
}

/// The early-switch pool sized by capacity: as many blocks as, with
/// `gc_start` normal blocks more, may all end in SLC before the pool's usable
/// flash falls below its share of the user capacity plus the high
/// watermark. The `gc_start` blocks leave room for normal blocks to live on
/// as zombies once the pool is spent; a pool that took the whole margin would
/// end the drive at the first normal block's switch.
pub fn early_switch_by_capacity(g: &Geometry, gc_start: u32, gc_stop: u32) -> u32 {
    if g.cell.bits() < 2 {
        return 0;
    }
    let native = g.blocks_per_pool as u64 * g.units_per_block as u64;
    let guaranteed = g.user_units_per_pool() + gc_stop as u64 * g.units_per_block as u64;
    let per_block = g.units_per_block as u64 - slc_units_per_block(g) as u64;
    let n = (native.saturating_sub(guaranteed) / per_block.max(1)).saturating_sub(gc_start as u64);
    n.min(g.blocks_per_pool as u64) as u32
}

/// Units a block holds in SLC mode: its native capacity over its bits per
/// cell, in whole pages (as the block table counts it).
pub fn slc_units_per_block(g: &Geometry) -> u32 {
    let units = g.units_per_block / g.cell.bits();
    (units / g.units_per_page * g.units_per_page).max(g.units_per_page)
}

/// Retired blocks a pool may have under `death = "dead-blocks"`: the reserve
/// less the high watermark, ⌊(R − W)·B / 100⌋.
fn dead_block_limit(g: &Geometry, gc_stop: u32) -> u32 {
    let (r, w) = reserve_and_watermark(g, gc_stop);
    ((r - w).max(0.0) * g.blocks_per_pool as f64 / 100.0).floor() as u32
}
