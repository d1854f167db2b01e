//! The page-mapped flash translation layer, as a facade over its parts:
//! the logical↔physical [`map`], allocation striped over the flash
//! ([`alloc`]), garbage collection with its victim policies ([`gc`]), the
//! pSLC cache ([`pslc`]), the timing of flash operations ([`flash`]), the
//! [`blocks`] and their wear, the DRAM-less [`mapcache`], bit errors on
//! reads ([`read_errors`]) and the firmware's answer to them (`scrub`), and recovery
//! after a power cut. Every flash operation it decides is timed on the
//! [`Timeline`], so GC competes with host I/O for dies and channels. On a
//! drive with power cuts every placement, page program and erase is also
//! noted in the [`PowerModel`], from which recovery rebuilds the map.

pub mod alloc;
pub mod blocks;
pub mod fill;
pub mod flash;
pub mod frontiers;
pub mod gc;
mod hot_cold;
mod laid;
mod loaded;
pub mod map;
pub mod mapcache;
pub mod pslc;
pub mod read_errors;
mod recovery;
mod scrub;

use crate::config::WriteCache;
use crate::config::{Config, DeathRule};
use crate::ftl::alloc::Alloc;
use crate::ftl::blocks::{BlockState, BlockTable};
use crate::ftl::flash::FlashOps;
use crate::ftl::frontiers::Frontiers;
use crate::ftl::gc::Gc;
use crate::ftl::map::Map;
use crate::ftl::mapcache::{MapAccess, MapCache};
use crate::ftl::pslc::Pslc;
use crate::geometry::Geometry;
use crate::media::ModeTiming;
use crate::memory;
use crate::oracle::Oracle;
use crate::power::PowerModel;
use crate::sanity::Broken;
use crate::schedule::timeline::Timeline;
use crate::stats::Counters;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

pub use crate::ftl::alloc::Programmed;
use crate::ftl::read_errors::{ReadErrors, ReadOutcome};

const NIL: u32 = u32::MAX;

/// The FTL and the flash state it manages.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ftl {
    g: Geometry,
    map: Map,
    blocks: BlockTable,
    alloc: Alloc,
    /// Each stream's open block in each pool: host, pSLC cache, GC.
    frontiers: Frontiers,
    gc: Gc,
    pslc: Pslc,
    flash: FlashOps,
    /// Logical clock: host units written (ages for cost-benefit GC).
    clock: u64,
    rng: Xoshiro256PlusPlus,
    counters: Counters,
    /// Flash a pool must keep usable: its share of the user capacity plus
    /// the blocks GC keeps free (high watermark), in units.
    guaranteed_units: u64,
    /// When lost flash ends the drive, and the retired blocks a pool may
    /// have under `death = "dead-blocks"`.
    death: DeathRule,
    dead_block_limit: u32,
    /// Host bytes written when a pool's usable flash first fell below its
    /// guaranteed units: from then the drive no longer holds its advertised
    /// capacity (only under `death = "dead-blocks"` does it live on).
    capacity_short_at: Option<u64>,
    /// Version stamps checking that reads get the latest write (tests, debugging).
    oracle: Option<Oracle>,
    /// DRAM-less drive: the cached part of the mapping table.
    map_cache: Option<MapCache>,
    /// What the flash physically holds, on a drive with power cuts.
    power: Option<Box<PowerModel>>,
    /// No power-loss protection: RAM is lost at a cut, so GC programs its
    /// copies and waits for programs under way before erasing a victim.
    volatile_ram: bool,
    /// Host writes replayed from the power-loss dump keep this version.
    replay_version: Option<u32>,
    /// `[device.errors]`: bit errors, ECC and read retry on host reads.
    errors: Option<Box<ReadErrors>>,
    /// `[ftl] hot_cold`: the hot/cold data identifier of the host streams.
    hot_cold: Option<hot_cold::HotCold>,
}

impl Ftl {
    pub fn new(cfg: &Config, seed: u64) -> Ftl {
        let g = cfg.geometry.clone();
        Ftl {
            map: Map::new(&g),
            blocks: BlockTable::new(&g, &cfg.device.wear, &cfg.ftl, cfg.seed),
            alloc: Alloc::new(cfg),
            frontiers: Frontiers::new(&g),
            gc: Gc::new(cfg),
            pslc: Pslc::new(cfg),
            flash: FlashOps::new(cfg),
            clock: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            counters: Counters::default(),
            guaranteed_units: g.user_units_per_pool()
                + cfg.ftl.gc_stop as u64 * g.units_per_block as u64,
            death: cfg.ftl.wear.death,
            dead_block_limit: cfg.ftl.wear.dead_block_limit,
            capacity_short_at: None,
            oracle: None,
            map_cache: cfg.ftl.map_cache.map(|bytes| {
                MapCache::new(
                    bytes,
                    g.page_size,
                    g.units_per_page,
                    g.user_units,
                    g.dies,
                    &cfg.device.timing[g.cell.index()],
                    cfg.ftl.map_extents,
                )
            }),
            power: None,
            volatile_ram: cfg.device.write_cache != WriteCache::Plp,
            replay_version: None,
            errors: cfg.device.errors.as_ref().map(|e| {
                Box::new(ReadErrors::new(
                    e,
                    g.blocks,
                    g.cell.bits(),
                    cfg.device.wear.conditions.temperature_c,
                    seed,
                ))
            }),
            hot_cold: cfg.ftl.hot_cold.map(hot_cold::HotCold::new),
            g,
        }
    }

    /// Block `b` was opened for writing at `now` (its data's retention starts).
    #[inline]
    fn opened(&mut self, b: u32, now: u64) {
        if let Some(e) = self.errors.as_deref_mut() {
            let bits = self.blocks.run()[b as usize].bits();
            e.opened(b, now, bits, self.blocks.cycles(b));
        }
    }

    /// A host read of `units` units of page `page` of block `b` at `t`: what
    /// its codewords took to decode (None without an error model).
    #[inline]
    pub fn decode_read(&mut self, b: u32, page: u32, units: u32, t: u64) -> Option<ReadOutcome> {
        let e = self.errors.as_deref_mut()?;
        debug_assert!(
            e.opened_with(b, self.blocks.cycles(b)),
            "block {b} changed since opened"
        );
        let bytes = units as u64 * self.g.unit_size as u64;
        let codewords = e.settings.codewords(bytes);
        Some(e.read(b, page, codewords, t))
    }

    /// The slot holding `lpn`, if mapped.
    #[inline]
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        self.map.slot_of(lpn)
    }

    /// [`Ftl::lookup`] for a host read (the map writes down an entry a fill
    /// laid, which it would otherwise work out at every read).
    #[inline]
    pub fn lookup_to_read(&mut self, lpn: u32) -> Option<u32> {
        self.map.slot_to_read(lpn)
    }

    /// Makes `lpn`'s mapping entry available no earlier than `t` for
    /// `access` (on a DRAM-less drive, reading its translation page on a
    /// miss). Returns when it is.
    #[inline]
    pub fn map_access(&mut self, lpn: u32, access: MapAccess, t: u64, tl: &mut Timeline) -> u64 {
        match &mut self.map_cache {
            Some(m) => m.access(lpn, access, t, tl, &mut self.counters),
            None => t,
        }
    }

    /// Whether a slot's data is on flash (else it still waits in controller RAM).
    #[inline]
    pub fn is_programmed(&self, slot: u32) -> bool {
        let b = self.g.block_of_slot(slot);
        slot - self.g.block_base(b) < self.blocks.programmed()[b as usize]
    }

    /// Die, page-in-block and read latency of a slot.
    #[inline]
    pub fn read_target(&self, slot: u32) -> (u32, u32, u64) {
        let b = self.g.block_of_slot(slot);
        let page = self.g.page_of_offset(slot - self.g.block_base(b));
        let mode = self.blocks.run()[b as usize];
        let die = self.g.die_of_plane(self.g.plane_of_block(b));
        (
            die,
            page,
            self.flash.timing[mode.index()].read_ns[ModeTiming::page_type(page, mode.bits())],
        )
    }

    /// Hints that `lpn` will be written or read soon (its map entry is
    /// fetched into cache while the current request is simulated).
    #[inline]
    pub fn will_touch(&self, lpn: u32) {
        self.map.prefetch(lpn);
    }

    /// The slot holding `lpn`, if mapped (None too for an address past the map).
    #[inline]
    fn lookup_hinted(&self, lpn: u32) -> Option<u32> {
        self.map.slot_of_any(lpn)
    }

    /// Hints that a read of `lpn` will be decoded soon: its block's record
    /// in the bit-error model is fetched into cache (nothing without one).
    #[inline]
    pub fn will_decode(&self, lpn: u32) {
        let Some(e) = self.errors.as_deref().filter(|e| e.far_from_cache()) else {
            return;
        };
        if let Some(s) = self.lookup_hinted(lpn) {
            e.prefetch(self.g.block_of_slot(s));
        }
    }

    #[inline]
    fn invalidate(&mut self, slot: u32) {
        let b = self.g.block_of_slot(slot);
        let bi = b as usize;
        self.blocks.remove_valid(b);
        if self.blocks.state()[bi] == BlockState::Sealed && !self.blocks.in_cache()[bi] {
            self.gc.victims.invalidated(
                b,
                self.blocks.valid()[bi],
                self.blocks.capacity()[bi],
                self.clock,
            );
        }
    }

    #[inline]
    fn map(&mut self, lpn: u32, slot: u32) {
        if let Some(old) = self.map.place(lpn, slot) {
            self.invalidate(old);
        }
        self.blocks.add_valid(self.g.block_of_slot(slot));
    }

    /// Removes `lpn`'s mapping (TRIM, acknowledged at `t`). Returns whether it was mapped.
    #[inline]
    pub fn trim(&mut self, lpn: u32, t: u64) -> bool {
        if let Some(o) = &mut self.oracle {
            o.trim(lpn, t);
        }
        if let Some(p) = &mut self.power {
            p.trimmed(lpn, t);
        }
        let Some(old) = self.map.unmap(lpn) else {
            return false;
        };
        self.invalidate(old);
        true
    }

    /// On a drive with power cuts: the host's bytes of unit `lpn` (just
    /// placed) reached controller RAM at `at`, before a read-modify-write
    /// merge completes (recovery can finish a merge from the old data).
    pub fn note_arrival(&mut self, lpn: u32, at: u64) {
        let slot = self.lookup(lpn);
        if let (Some(pm), Some(slot)) = (&mut self.power, slot) {
            pm.ready[slot as usize] = at;
        }
    }

    /// Checks the mapping invariants (expensive: for tests and debug runs):
    /// every mapped unit's slot maps back to it, valid counts match, and the
    /// number of valid slots equals the number of mapped units.
    pub fn check_invariants(&self) -> Result<(), Broken> {
        let mut valid = vec![0u32; self.g.blocks as usize];
        let mut mapped = 0u64;
        for (lpn, slot) in self.map.mapped() {
            if self.map.lpn_at(slot) != lpn {
                return Err(format!(
                    "lpn {lpn} maps to slot {slot}, which maps back to {}",
                    self.map.lpn_at(slot)
                )
                .into());
            }
            let b = self.g.block_of_slot(slot);
            if slot - self.g.block_base(b) >= self.blocks.written()[b as usize] {
                return Err(format!(
                    "lpn {lpn} maps to slot {slot} beyond block {b}'s write pointer"
                )
                .into());
            }
            if matches!(
                self.blocks.state()[b as usize],
                BlockState::Free | BlockState::Bad
            ) {
                return Err(format!("lpn {lpn} maps into free or retired block {b}").into());
            }
            valid[b as usize] += 1;
            mapped += 1;
        }
        if let Some(b) = (0..valid.len()).find(|&b| valid[b] != self.blocks.valid()[b]) {
            return Err(format!(
                "block {b}: valid count {} but {} units map to it",
                self.blocks.valid()[b],
                valid[b]
            )
            .into());
        }
        let total: u64 = self.blocks.valid().iter().map(|&v| v as u64).sum();
        if total != mapped {
            return Err(format!("{total} valid slots but {mapped} mapped units").into());
        }
        Ok(())
    }

    /// Whether a fill was laid out as arithmetic ([`Ftl::fill_in_order`]).
    pub fn fill_laid_out(&self) -> bool {
        self.map.has_layout()
    }

    /// The parts of the maps a fill of `count` units from `first_lpn` will
    /// write on a fresh drive (for [`memory::populate`]).
    pub fn fill_regions(&self, first_lpn: u64, count: u64) -> [memory::Region; 2] {
        let slack = (self.g.planes * self.g.units_per_block) as u64;
        self.map.fill_regions(first_lpn, count, slack)
    }

    /// Switches on the integrity oracle (before anything is written; a
    /// second call keeps the one on).
    pub fn enable_oracle(&mut self) {
        if self.oracle.is_none() {
            self.oracle = Some(Oracle::new(self.g.user_units, self.g.slots));
        }
    }

    /// With the oracle on: checks that unit `lpn` reads its latest write.
    pub fn check_read(&self, lpn: u32) -> Result<(), Broken> {
        match &self.oracle {
            Some(o) => o.check(lpn, self.lookup(lpn)),
            None => Ok(()),
        }
    }

    /// How much of the spare flash wear has taken, 0 (pristine) to 1 (dead):
    /// the most of any pool, as the share of its usable flash beyond the
    /// guaranteed capacity (user share + high watermark) that retirements and
    /// mode switches have eaten.
    pub fn reserve_used(&self) -> f64 {
        let native = self.g.blocks_per_pool as u64 * self.g.units_per_block as u64;
        let budget = native.saturating_sub(self.guaranteed_units).max(1) as f64;
        let lost = self
            .blocks
            .pool_capacity()
            .iter()
            .map(|&c| native - c)
            .max();
        (lost.unwrap_or(0) as f64 / budget).min(1.0)
    }

    /// How far the drive is towards its death, 0 to 1, for a progress bar: the spare flash lost
    /// (`reserve_used`), or — on a drive that retires its blocks, whose spare goes only at the very
    /// end — the mean block's share of its native life used, whichever is further. A ZombieNAND
    /// drive lives on past its native life: half its bar is the native life, half the spare flash.
    pub fn life_used(&self) -> f64 {
        let reserve = self.reserve_used();
        let wear = self.blocks.wear_used().min(0.999);
        if self.blocks.zombie_on() {
            // Its blocks live on past their native rating, and its spare flash goes only as they
            // switch modes (often all at the end): half the way is the native wear, half the spare
            // flash lost (a bar at 0 % for a whole life told nothing).
            reserve.max(0.5 * wear + 0.5 * reserve).min(0.999)
        } else {
            reserve.max(wear)
        }
    }

    /// Mapped logical units.
    pub fn mapped_units(&self) -> u64 {
        self.blocks.valid_total()
    }

    /// Host bytes written when the drive stopped holding its advertised
    /// capacity (a pool's usable flash below its share of the user
    /// capacity plus the high watermark), if it has.
    pub fn capacity_short_since_bytes(&self) -> Option<u64> {
        self.capacity_short_at
    }
}

/// What the drive's front end (its host interface and read path) tells the
/// FTL and reads of it, through methods rather than its fields: the host
/// requests it counts, the geometry, read-only views of the block table,
/// the error model and the integrity oracle, and what the oracle learns of
/// acknowledged writes and checked reads.
impl Ftl {
    /// Everything counted so far, host side and flash side.
    #[inline]
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// A host read of `bytes` arrived.
    #[inline]
    pub fn count_read_request(&mut self, bytes: u64) {
        self.counters.read_requests += 1;
        self.counters.host_read_bytes += bytes;
    }

    /// A host write of `bytes` arrived, covering `units` mapping units.
    #[inline]
    pub fn count_write_request(&mut self, bytes: u64, units: u64) {
        let c = &mut self.counters;
        c.write_requests += 1;
        c.host_write_bytes += bytes;
        c.host_write_units += units;
    }

    /// A host TRIM of `bytes` arrived.
    #[inline]
    pub fn count_trim_request(&mut self, bytes: u64) {
        self.counters.trim_requests += 1;
        self.counters.host_trim_bytes += bytes;
    }

    /// A fill (`fill`) or trim phase laid out `bytes` at memory speed.
    pub fn count_laid_out(&mut self, fill: bool, bytes: u64) {
        if fill {
            self.counters.fill_bytes += bytes;
        } else {
            self.counters.host_trim_bytes += bytes;
        }
    }

    /// `bytes` of a host read were of units never written: zeroes, from the
    /// controller.
    #[inline]
    pub fn count_unwritten_read(&mut self, bytes: u64) {
        self.counters.unwritten_read_bytes += bytes;
    }

    /// The host's reads sensed `planes` flash pages (retries and soft
    /// decodes' extra sensings included).
    #[inline]
    pub fn count_host_sensings(&mut self, planes: u64) {
        self.counters.flash_reads_host += planes;
    }

    /// The drive's geometry.
    #[inline]
    pub fn geometry(&self) -> &Geometry {
        &self.g
    }

    /// The block table, to read (free, retired, by mode, wear).
    pub fn blocks(&self) -> &BlockTable {
        &self.blocks
    }

    /// Starts loading block `b`'s bit-error record into the CPU's cache,
    /// when the drive has an error model.
    #[inline]
    pub fn prefetch_errors(&self, b: u32) {
        if let Some(e) = &self.errors {
            e.prefetch(b);
        }
    }

    /// The bit-error model, if the drive has one.
    pub fn errors(&self) -> Option<&ReadErrors> {
        self.errors.as_deref()
    }

    /// The bit-error model, to set the temperature or bake the drive.
    pub fn errors_mut(&mut self) -> Option<&mut ReadErrors> {
        self.errors.as_deref_mut()
    }

    /// Whether flash contents are tracked for power cuts.
    #[inline]
    pub fn has_power_model(&self) -> bool {
        self.power.is_some()
    }

    /// No power cut can come at or before `t` any more: the power model
    /// forgets the erases and TRIMs only such a cut would undo.
    pub fn no_cut_before(&mut self, t: u64) {
        if let Some(pm) = &mut self.power {
            pm.forget_before(t);
        }
    }

    /// The integrity oracle (None when it is off): the version each unit's
    /// reads must return.
    pub fn oracle(&self) -> Option<&Oracle> {
        self.oracle.as_ref()
    }

    /// `units` unit reads were checked against the oracle.
    pub fn count_checked_reads(&mut self, units: u64) {
        if let Some(o) = &mut self.oracle {
            o.checked_reads += units;
        }
    }

    /// With power cuts and the oracle on: units `lpns` were acknowledged to
    /// the host at `t` (a cut after it must not lose them).
    pub fn acknowledged(&mut self, lpns: std::ops::RangeInclusive<u64>, t: u64) {
        if let (true, Some(o)) = (self.power.is_some(), &mut self.oracle) {
            for l in lpns {
                o.write_acknowledged(l as u32, t);
            }
        }
    }
}
