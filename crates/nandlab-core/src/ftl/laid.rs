//! Where a sequential fill of an empty drive laid its units, kept as
//! arithmetic rather than written into the map: the fill walks the
//! allocation stripe, each step a page in each of its GC pools, so unit `i`
//! of the fill lies in the pool of step `i / step_units` (modulo the
//! stripe) at that pool's `i / cycle_units`-th page of the fill, in the
//! block the pool had open then. A fill then costs time in the blocks it
//! opens, not the units it lays, and the map's untouched entries stay
//! untouched memory (the map reads an entry it never wrote as "where the
//! fill laid it", `ftl::map`).

use crate::geometry::{FastDiv, Geometry};
use crate::sanity::{ensure, Checked};
use serde::{Deserialize, Serialize};

/// A block's part of the fill: from its page `page`, `pages` pages, the
/// first unit of the first of them being `lpn` (each next page of the block
/// holds the units one stripe cycle on). `lpn` is [`NONE`] for a block the
/// fill did not lay out, or erased since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct BlockPart {
    lpn: u32,
    page: u32,
    pages: u32,
}

const NONE: u32 = u32::MAX;

/// A pool's block from its `from`-th page of the fill on, laid from the
/// block's page `page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Run {
    from: u32,
    block: u32,
    page: u32,
}

/// The units `first` .. `first + units` as one sequential fill laid them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Laid {
    first: u32,
    units: u32,
    /// Of them, those whose map entry is still unwritten (no write,
    /// relocation, TRIM or read has written it).
    live: u32,
    /// Units a page holds and a block holds; units a stripe step lays (its
    /// pools × a page); steps in a stripe cycle.
    page_units: FastDiv,
    block_units: FastDiv,
    step_units: FastDiv,
    steps: FastDiv,
    /// The first pool of each step of the cycle, from the fill's first step.
    step_pool: Vec<u32>,
    /// Per pool, the blocks its pages went to, in order.
    runs: Vec<Vec<Run>>,
    /// Per block, what of it the fill laid.
    blocks: Vec<BlockPart>,
}

impl Laid {
    /// A fill from unit `first` on drive `g` whose stripe steps, from the
    /// fill's first, start at pools `step_pool`, `step_pools` pools each;
    /// nothing laid yet.
    pub fn new(g: &Geometry, first: u32, step_pool: Vec<u32>, step_pools: u32) -> Laid {
        Laid {
            first,
            units: 0,
            live: 0,
            page_units: g.fast.units_per_page,
            block_units: g.fast.units_per_block,
            step_units: FastDiv::new(step_pools * g.units_per_page),
            steps: FastDiv::new(step_pool.len() as u32),
            step_pool,
            runs: vec![Vec::new(); g.pools as usize],
            blocks: vec![
                BlockPart {
                    lpn: NONE,
                    page: 0,
                    pages: 0
                };
                g.blocks as usize
            ],
        }
    }

    /// Units a whole stripe cycle lays (a pool's next page of the fill
    /// holds the units this many on).
    fn cycle_units(&self) -> u32 {
        self.step_units.divisor() * self.steps.divisor()
    }

    /// The first unit laid.
    pub fn first(&self) -> u32 {
        self.first
    }

    /// The unit after the last one laid.
    pub fn end(&self) -> u32 {
        self.first + self.units
    }

    /// Whether unit `lpn` is one the fill laid (whether or not it still lives there).
    #[inline]
    pub fn covers(&self, lpn: u32) -> bool {
        lpn.wrapping_sub(self.first) < self.units
    }

    /// The fill has laid units up to (not including) unit `end`.
    pub fn laid_to(&mut self, end: u32) {
        self.live += end - self.first - self.units;
        self.units = end - self.first;
    }

    /// A unit it laid has its map entry written (it was written, moved,
    /// trimmed, or read and its slot written down).
    #[inline]
    pub fn left(&mut self) {
        self.live -= 1;
    }

    /// How many of its units' map entries are still unwritten.
    pub fn live(&self) -> u32 {
        self.live
    }

    /// Whether half or more of its units' map entries are unwritten (a unit
    /// looked up is then likely to be read from the layout: worth fetching
    /// its run ahead).
    #[inline]
    pub fn mostly_live(&self) -> bool {
        self.live as u64 * 2 >= self.units as u64
    }

    /// Pool `pool`'s pages of the fill from its `from`-th go to block
    /// `block` from its page `page`, `pages` of them.
    pub fn opened(&mut self, pool: u32, from: u32, block: u32, page: u32, pages: u32) {
        self.runs[pool as usize].push(Run { from, block, page });
        self.blocks[block as usize] = self.part(pool, from, page, pages);
    }

    /// The block part of pool `pool`'s pages from its `from`-th, laid from
    /// the block's page `page`, `pages` of them.
    fn part(&self, pool: u32, from: u32, page: u32, pages: u32) -> BlockPart {
        // The pool's `from`-th page is laid by step `from · steps + position`.
        let position = self.position(pool);
        let step = self.steps.divisor() * from + position;
        let lpn = self.first
            + step * self.step_units.divisor()
            + (pool - self.step_pool[position as usize]) * self.page_units.divisor();
        BlockPart { lpn, page, pages }
    }

    /// The step of the cycle (from the fill's first) that lays pool `pool`.
    fn position(&self, pool: u32) -> u32 {
        let pools = self.step_units.divisor() / self.page_units.divisor();
        self.step_pool
            .iter()
            .position(|&p| (p..p + pools).contains(&pool))
            .expect("every pool is in the stripe") as u32
    }

    /// Block `b` was erased: nothing of the fill is left in it.
    #[inline]
    pub fn erased(&mut self, b: u32) {
        self.blocks[b as usize].lpn = NONE;
    }

    /// Where the fill laid unit `lpn` (one it [`Laid::covers`]): its
    /// pool, the pool's page of the fill, the unit's place in the page.
    #[inline]
    fn place(&self, lpn: u32) -> (u32, u32, u32) {
        let i = lpn - self.first;
        let step = self.step_units.quotient(i);
        let within = i - step * self.step_units.divisor();
        let pool_page = self.page_units.quotient(within);
        let unit = within - pool_page * self.page_units.divisor();
        let cycle = self.steps.quotient(step);
        let pool = self.step_pool[(step - cycle * self.steps.divisor()) as usize] + pool_page;
        (pool, cycle, unit)
    }

    /// The slot the fill laid unit `lpn` in (one it [`Laid::covers`]).
    pub fn slot_of(&self, lpn: u32) -> u32 {
        let (pool, cycle, unit) = self.place(lpn);
        let runs = &self.runs[pool as usize];
        let guess = self.guess(runs, cycle);
        let holds =
            |j: usize| runs[j].from <= cycle && runs.get(j + 1).is_none_or(|n| n.from > cycle);
        let run = if holds(guess) {
            runs[guess]
        } else {
            runs[runs.partition_point(|r| r.from <= cycle) - 1]
        };
        let page = run.page + (cycle - run.from);
        run.block * self.block_units.divisor() + page * self.page_units.divisor() + unit
    }

    /// Starts loading the run [`Laid::slot_of`] will look at for unit
    /// `lpn` (one it covers) into the CPU's cache.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        let (pool, cycle, _) = self.place(lpn);
        let runs = &self.runs[pool as usize];
        crate::memory::prefetch(runs, self.guess(runs, cycle));
    }

    /// Which of `runs` (a pool's) likely holds the pool's `cycle`-th page
    /// of the fill: where whole blocks follow the first, found by
    /// arithmetic (one look instead of a search's dozen, each a likely
    /// cache miss).
    #[inline]
    fn guess(&self, runs: &[Run], cycle: u32) -> usize {
        let pages = self.block_units.divisor() / self.page_units.divisor();
        match runs.get(1) {
            Some(second) if cycle >= second.from => {
                (1 + (cycle - second.from) / pages).min(runs.len() as u32 - 1) as usize
            }
            _ => 0,
        }
    }

    /// The unit the fill laid in slot `slot`, if it laid one there and the
    /// block has not been erased since.
    #[inline]
    pub fn lpn_at(&self, slot: u32) -> Option<u32> {
        let b = self.block_units.quotient(slot);
        let part = self.blocks[b as usize];
        if part.lpn == NONE {
            return None;
        }
        let offset = slot - b * self.block_units.divisor();
        let page = self.page_units.quotient(offset);
        let unit = offset - page * self.page_units.divisor();
        let k = page.wrapping_sub(part.page);
        (k < part.pages).then(|| part.lpn + k * self.cycle_units() + unit)
    }

    /// Checks a loaded layout against drive `g` and its stripe (each step's
    /// first pool, `step_pools` pools each): its shape is the drive's, its
    /// steps the stripe's (from some step on), its units whole stripe
    /// cycles inside the drive, each pool's runs in order inside its own
    /// blocks' pages, and every block part where its pool's last run in it
    /// puts it. (That every unit it covers lives where it was laid unless
    /// the map says otherwise is the map's check.)
    pub fn check_loaded(&self, g: &Geometry, stripe_pools: &[u32], step_pools: u32) -> Checked {
        let steps = stripe_pools.len() as u32;
        ensure(
            steps > 0
                && self.page_units == g.fast.units_per_page
                && self.block_units == g.fast.units_per_block
                && self.step_units == FastDiv::new(step_pools * g.units_per_page)
                && self.steps == FastDiv::new(steps)
                && self.step_pool.len() == steps as usize
                && self.runs.len() == g.pools as usize
                && self.blocks.len() == g.blocks as usize,
            || "the fill layout's shape is not the drive's".into(),
        )?;
        let start = stripe_pools.iter().position(|&p| p == self.step_pool[0]);
        ensure(
            start.is_some_and(|s| {
                (0..steps as usize)
                    .all(|j| self.step_pool[j] == stripe_pools[(s + j) % steps as usize])
            }),
            || "the fill layout's steps are not the stripe's".into(),
        )?;
        let cycle = self.cycle_units() as u64;
        ensure(
            self.first as u64 + self.units as u64 <= g.user_units
                && (self.units as u64).is_multiple_of(cycle),
            || "the fill layout's units are out of range".into(),
        )?;
        let cycles = (self.units as u64 / cycle) as u32;
        let pages_per_block = g.units_per_block / g.units_per_page;
        let mut last_run = vec![None; g.blocks as usize];
        for (pool, runs) in self.runs.iter().enumerate() {
            let pool = pool as u32;
            let in_order = runs.first().is_none_or(|r| r.from == 0)
                && (cycles == 0 || !runs.is_empty())
                && runs.windows(2).all(|w| w[0].from < w[1].from)
                && runs.last().is_none_or(|r| r.from < cycles.max(1));
            ensure(in_order, || {
                format!("the fill layout's runs of pool {pool} are out of order")
            })?;
            for (j, r) in runs.iter().enumerate() {
                let pages = runs.get(j + 1).map_or(cycles, |n| n.from) - r.from;
                let inside = r.block < g.blocks
                    && g.pool_of_block(r.block) == pool
                    && r.page as u64 + pages as u64 <= pages_per_block as u64;
                ensure(inside, || {
                    format!("the fill layout's run {j} of pool {pool} is out of its blocks")
                })?;
                last_run[r.block as usize] = Some(self.part(pool, r.from, r.page, pages));
            }
        }
        let misplaced = self
            .blocks
            .iter()
            .zip(&last_run)
            .position(|(part, run)| part.lpn != NONE && Some(*part) != *run);
        ensure(misplaced.is_none(), || {
            format!(
                "the fill layout's block {} is not where its run puts it",
                misplaced.unwrap_or(0)
            )
        })
    }
}
