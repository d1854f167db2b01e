//! The controller's side of bit errors: per block, when it was written (on
//! the retention clock) and how often it has been read since its erase; per
//! host page read, the page's RBER from the model and whether its codewords
//! decode on the first pass, after read-retry steps, after a soft decode,
//! or not at all (reported uncorrectable to the host).
//!
//! Whether a codeword decodes is drawn from the exact binomial tail of its
//! error count (`media::errors::TailTable`): the same outcome as sampling
//! the count, in O(1) per read whatever the codeword size.
//!
//! A host read does not evaluate the model: each page type of each block
//! keeps a [`Window`] of retention ages and reads since erase over which its
//! RBER moves by at most [`WINDOW_TOLERANCE`], and what the read path needs
//! of it there (the RBER, its part retry cannot take back, and their ECC
//! tails), computed when the window opens.

use crate::config::ErrorsConfig;
use crate::math::{exp_quick, Deterministic};
use crate::media::errors::{
    acceleration, cycle_wear, sectors_per_codeword, ErrorModel, RetentionClock, TailTable,
    WearTerms, CYCLE_WEAR, DAY_NS,
};
use crate::media::spread::Spread;
use crate::media::vt::{state_shares, StateShares};
use crate::media::ModeTiming;
use crate::sanity::{ensure, same, Checked};
use crate::seed::derive_seed;
use crate::stats::ErrorTally;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// What a page read took to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOutcome {
    /// Read-retry steps (each a new sensing, transfer and hard decode).
    pub retries: u32,
    /// A soft decode followed the ladder (LDPC).
    pub soft: bool,
    /// Nothing decoded it: the host is told the read failed.
    pub uncorrectable: bool,
}

/// What the model and the ladder need of `[device.errors]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ErrorSettings {
    model: ErrorModel,
    data_bits: u32,
    retry_steps: u32,
    retry_factor: f64,
    retry_floor: f64,
    /// What of the shift above the floor the whole ladder leaves
    /// (`retry_factor` to the power `retry_steps`).
    retry_left: f64,
    reference_c: f64,
    activation_ev: f64,
    /// Hard and soft decode times, and a soft decode's extra sensings.
    pub decode_ns: u64,
    pub soft_decode_ns: u64,
    pub soft_reads: u32,
    /// Reads since erase that send a block to read reclaim (0: never).
    pub read_reclaim: u32,
    /// How much faster retention ages than the parameter set's (relaxed programs).
    retention_scale: f64,
    /// Patrol refresh (None: never): the hard decode's limit as an RBER
    /// (correctable bits per codeword bit) and the share of the headroom
    /// below it that retention and disturb may use.
    pub refresh: Option<(f64, f64)>,
}

impl ErrorSettings {
    fn new(c: &ErrorsConfig) -> ErrorSettings {
        ErrorSettings {
            model: c.model,
            data_bits: c.ecc.data_bytes * 8,
            retry_steps: c.retry_steps,
            retry_factor: c.retry_factor,
            retry_floor: c.retry_floor,
            retry_left: c.retry_factor.pow_d(c.retry_steps as f64),
            reference_c: c.reference_c,
            activation_ev: c.activation_ev,
            decode_ns: c.decode_ns,
            soft_decode_ns: c.soft_decode_ns,
            soft_reads: c.soft_reads,
            read_reclaim: c.read_reclaim,
            retention_scale: c.retention_scale,
            refresh: c
                .refresh_at
                .map(|share| (c.ecc.hard_limit as f64 / c.ecc.bits as f64, share)),
        }
    }

    /// Data bytes of a codeword.
    pub fn data_bytes(&self) -> u32 {
        self.data_bits / 8
    }

    /// The codewords `bytes` of data span (at least one).
    #[inline]
    pub fn codewords(&self, bytes: u64) -> u32 {
        let each = self.data_bytes() as u64;
        let n = if each.is_power_of_two() {
            // Without a division instruction (this runs per host read).
            (bytes + each - 1) >> each.trailing_zeros()
        } else {
            bytes.div_ceil(each)
        };
        n.max(1) as u32
    }

    fn rate(&self, temp_c: f64) -> f64 {
        acceleration(temp_c, self.reference_c, self.activation_ev)
    }
}

/// What the model keeps of a block while it holds data, together so that a
/// read touches one cache line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[repr(align(64))]
struct BlockErrors {
    /// Retention clock (equivalent ns) when it was opened for writing.
    written_at: f64,
    /// Its wear terms at the cycles it had when opened (they change only
    /// at its next erase).
    wear: WearTerms,
    /// Page reads since its erase (read disturb).
    reads: u32,
    /// Bits per cell as it runs.
    bits: u8,
    /// Waiting in the read-reclaim queue.
    queued: bool,
    /// What it was written with (an index into `ReadErrors::data`).
    data: u8,
}

/// How far, relative, the RBER (and its part retry cannot take back) a read
/// uses may lie from the model's at the read's retention age and reads: a
/// window's figures are the middle of the model's at its two corners, which
/// may differ by twice this.
pub const WINDOW_TOLERANCE: f64 = 1e-4;

/// log2 of the relative step in retention age and reads a window first
/// tries, and the most and least it grows and shrinks to.
const FIRST_STEP: i8 = 0;
const MOST_STEP: i8 = 4;
const LEAST_STEP: i8 = -20;

/// The change over a window its successor's step aims at, as a share of
/// the most a window may hold (2 × [`WINDOW_TOLERANCE`]): below 1, so that
/// a model that bends a little more over the next step still holds.
const STEP_AIM: f64 = 0.75;

/// How many doublings a step may grow by at once (a model whose change
/// was nil may bend at the next step).
const MOST_GROWTH: i8 = 2;

/// log2 of how much a window's step must change for the change over its
/// successor to be [`STEP_AIM`] of the most allowed, from `change`, the
/// relative change over its own step, taken as proportional to the step
/// (rounded down: no more than the aim; at most [`MOST_GROWTH`]).
fn step_change(change: f64) -> i8 {
    let ratio = STEP_AIM * 2.0 * WINDOW_TOLERANCE / change;
    if ratio >= f64::from(1u32 << MOST_GROWTH) {
        return MOST_GROWTH; // nil or tiny change too (ratio inf)
    }
    if ratio.is_nan() {
        return -12;
    }
    // floor(log2(ratio)): the binary exponent, exactly (0 and subnormals fall below -12);
    // shrinking by at most 12 doublings at once.
    let exponent = ((ratio.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    exponent.max(-12) as i8
}

/// The smallest retention age (equivalent ns: a millisecond) and reads a
/// window's step is taken of.
const AGE_FLOOR: f64 = 1e6;
const READS_FLOOR: f64 = 16.0;

/// A page type's figures over a box of retention ages and reads since erase.
/// The model's RBER and its part retry cannot take back only grow with both
/// (more charge lost, more disturb), so over the box they lie between those
/// at its corners; a window opens at the read that finds none, computes
/// both corners, and holds while they agree to within twice
/// [`WINDOW_TOLERANCE`] (else it holds for that read alone, at the model's
/// figures there). Its step (relative to the age and reads it opened at) is
/// sized from the change its predecessor's corners measured
/// ([`step_change`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[repr(align(64))]
struct Window {
    /// Retention clock (equivalent ns) and reads since erase up to which it holds.
    until: f64,
    reads_until: u32,
    /// Reads at its RBER not yet in the tally's RBER histogram (they go in
    /// together when it closes or the tally is read: recording each read
    /// cost a fifth of what the model adds to one).
    pending: u32,
    /// log2 of the relative step its successor tries.
    step: i8,
    /// The page type's RBER and its part retry cannot take back.
    rber: f64,
    base: f64,
    /// P(a codeword fails the whole ladder).
    fails: f64,
}

impl Window {
    /// A window that holds for no read (a block just opened).
    const NONE: Window = Window {
        until: f64::NEG_INFINITY,
        reads_until: 0,
        pending: 0,
        step: FIRST_STEP,
        rber: 0.0,
        base: 0.0,
        fails: 0.0,
    };

    #[inline]
    fn holds(&self, at: f64, reads: u32) -> bool {
        at <= self.until && reads <= self.reads_until
    }
}

/// Blocks up to which the model's tables (64 B a block and a page type, a
/// few MiB) are taken to stay in the CPU's cache.
const CACHED_BLOCKS: usize = 16_384;

/// The most data patterns a drive tells apart (more distinct phases' `data`
/// share the nearest one).
const MAX_PATTERNS: usize = 256;

/// A data pattern's MLC state shares, and its state shares per bits per
/// cell (index bits − 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Pattern {
    mlc: [f64; 4],
    shares: [StateShares; 4],
    /// The wear weight of a cycle that programmed it (`CYCLE_WEAR`).
    wear: f64,
}

impl Pattern {
    fn new(mlc: &[f64; 4]) -> Pattern {
        Pattern {
            mlc: *mlc,
            shares: [1, 2, 3, 4].map(|bits| state_shares(bits, mlc)),
            wear: cycle_wear(mlc),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadErrors {
    pub settings: ErrorSettings,
    hard: TailTable,
    soft: Option<TailTable>,
    quiet: Vec<Quiet>,
    clock: RetentionClock,
    blocks: Vec<BlockErrors>,
    /// Per block, the mean wear weight of its cycles so far (`CYCLE_WEAR`;
    /// an aged drive's precycling, and random data, weigh 1): what its bit
    /// errors see of its cycles.
    cycle_weight: Vec<f64>,
    /// Each block's page types' windows, `bits` (the drive's cells') a block.
    windows: Vec<Window>,
    bits: u32,
    /// The data patterns blocks were written with, and the one written now.
    data: Vec<Pattern>,
    writing: u8,
    /// Blocks read past `read_reclaim`, for the firmware to relocate.
    pub reclaim_due: Vec<u32>,
    /// The next block patrol checks.
    pub patrol_at: u32,
    rng: Xoshiro256PlusPlus,
    /// Its RBER histogram lacks the reads windows hold (see [`ReadErrors::tally`]).
    pub tally: ErrorTally,
}

impl ReadErrors {
    /// `blocks` blocks of `bits`-bit cells; the drive's temperature `temp_c` (°C).
    pub fn new(cfg: &ErrorsConfig, blocks: u32, bits: u32, temp_c: f64, seed: u64) -> ReadErrors {
        let settings = ErrorSettings::new(cfg);
        let unopened = BlockErrors {
            written_at: 0.0,
            wear: settings.model.terms(0.0, 1),
            reads: 0,
            bits: 1,
            queued: false,
            data: 0,
        };
        let hard = TailTable::new(cfg.ecc.bits, cfg.ecc.hard_limit);
        ReadErrors {
            settings,
            quiet: Quiet::table(&hard),
            hard,
            soft: cfg.ecc.soft_limit.map(|l| TailTable::new(cfg.ecc.bits, l)),
            clock: RetentionClock::new(settings.rate(temp_c)),
            blocks: vec![unopened; blocks as usize],
            cycle_weight: vec![1.0; blocks as usize],
            windows: vec![Window::NONE; (blocks * bits) as usize],
            bits,
            data: vec![Pattern::new(&[0.25; 4])],
            writing: 0,
            reclaim_due: Vec::new(),
            patrol_at: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(derive_seed(seed, "bit-errors", 0)),
            tally: ErrorTally::default(),
        }
    }

    /// Checks a loaded model against `fresh`, the one its config makes: the
    /// same settings and ECC tables, block tables that fit `blocks` blocks.
    pub fn check_loaded(&self, fresh: &ReadErrors, blocks: u32) -> Checked {
        same(
            "the error model's settings",
            &self.settings,
            &fresh.settings,
        )?;
        ensure(self.fits(blocks), || {
            "the error model's block arrays do not fit the drive".into()
        })?;
        ensure(self.same_tables(fresh), || {
            "the error model's ECC tables are not the config's".into()
        })
    }

    /// Whether this state's block tables fit `blocks` blocks (a window per
    /// page type of each, and every cycle weight one a mean of `CYCLE_WEAR`
    /// can take).
    fn fits(&self, blocks: u32) -> bool {
        let (lo, hi) = CYCLE_WEAR
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), &w| {
                (lo.min(w), hi.max(w))
            });
        self.blocks.len() == blocks as usize
            && self.cycle_weight.len() == blocks as usize
            && self.cycle_weight.iter().all(|w| (lo..=hi).contains(w))
            && (1..=4).contains(&self.bits)
            && self.windows.len() == blocks as usize * self.bits as usize
    }

    /// Whether its tables — the ECC tails and the RBERs a read's verdicts
    /// start at, all made from the config — are those `fresh` (a drive made
    /// from the same config) has: a snapshot's must be, or its reads would
    /// decode by another code.
    fn same_tables(&self, fresh: &ReadErrors) -> bool {
        self.hard == fresh.hard && self.soft == fresh.soft && self.quiet == fresh.quiet
    }

    /// From simulated time `t` the drive is at `temp_c`.
    pub fn set_temperature(&mut self, t: u64, temp_c: f64) {
        let rate = self.settings.rate(temp_c);
        self.clock.set_rate(t, rate);
    }

    /// The drive sits powered off for `ns` at `temp_c`: its data ages.
    pub fn bake(&mut self, ns: u64, temp_c: f64) {
        let rate = self.settings.rate(temp_c);
        self.clock.bake(ns as f64, rate);
    }

    /// From now on the host writes data whose MLC cells take '11', '10',
    /// '00', '01' in `mlc` shares.
    pub fn set_data(&mut self, mlc: &[f64; 4]) {
        let distance = |p: &Pattern| {
            p.mlc
                .iter()
                .zip(mlc)
                .map(|(a, b)| (a - b).abs())
                .sum::<f64>()
        };
        let i = match self.data.iter().position(|p| p.mlc == *mlc) {
            Some(i) => i,
            None if self.data.len() < MAX_PATTERNS => {
                self.data.push(Pattern::new(mlc));
                self.data.len() - 1
            }
            None => (0..self.data.len())
                .min_by(|&a, &b| distance(&self.data[a]).total_cmp(&distance(&self.data[b])))
                .unwrap_or(0),
        };
        self.writing = i as u8;
    }

    /// Block `b`, running at `bits` bits per cell with `cycles` equivalent
    /// cycles, is opened for writing at `t`; its bit errors see the cycles
    /// weighted by what they programmed (`cycle_weight`).
    pub fn opened(&mut self, b: u32, t: u64, bits: u32, cycles: f64) {
        let weighted = cycles * self.cycle_weight[b as usize];
        let e = &mut self.blocks[b as usize];
        e.written_at = self.clock.at(t);
        e.wear = self.settings.model.terms(weighted, bits);
        e.bits = bits as u8;
        e.data = self.writing;
        self.close_windows(b);
    }

    /// Block `b` was erased, its `erases`-th erase: its reads since erase
    /// start again, and the cycle's wear weight (what it held) joins the mean.
    #[inline]
    pub fn erased(&mut self, b: u32, erases: u32) {
        let e = &mut self.blocks[b as usize];
        e.reads = 0;
        let w = self.data[e.data as usize].wear;
        let mean = &mut self.cycle_weight[b as usize];
        *mean += (w - *mean) / erases.max(1) as f64;
        self.close_windows(b);
    }

    /// Block `b`'s data or reads changed: no window of its holds.
    fn close_windows(&mut self, b: u32) {
        let first = (b * self.bits) as usize;
        for w in &mut self.windows[first..first + self.bits as usize] {
            self.tally.rber_reads(w.rber, w.pending);
            *w = Window::NONE;
        }
    }

    /// What the model did to host reads so far: the tally with every
    /// window's reads in its RBER histogram.
    pub fn tally(&self) -> ErrorTally {
        let mut tally = self.tally.clone();
        for w in self.windows.iter().filter(|w| w.pending > 0) {
            tally.rber_reads(w.rber, w.pending);
        }
        tally
    }

    /// Block `b` has left the read-reclaim queue (relocated, or not
    /// relocatable now: its next read queues it again).
    pub fn dequeued(&mut self, b: u32) {
        self.blocks[b as usize].queued = false;
    }

    /// The predicted RBER of block `b`'s most error-prone page type at `t`,
    /// and that page type's part that read retry cannot take back (what it
    /// would be rewritten now, near enough).
    pub fn worst_rber(&self, b: u32, t: u64) -> (f64, f64) {
        let bits = self.blocks[b as usize].bits as u32;
        (0..bits as usize)
            .map(|p| self.page_type_rber(b, p, t))
            .fold((0.0, 0.0), |w, x| if x.0 > w.0 { x } else { w })
    }

    /// RBER of page type `page_type` of block `b` at `t`, and its part that
    /// read retry cannot take back.
    #[inline]
    fn page_type_rber(&self, b: u32, page_type: usize, t: u64) -> (f64, f64) {
        let e = &self.blocks[b as usize];
        self.rber_at(e, page_type, self.clock.at(t) - e.written_at, e.reads)
    }

    /// RBER of page type `page_type` of block `e` at retention age `age`
    /// (equivalent ns) after `reads` reads since erase, and its part that
    /// read retry cannot take back.
    fn rber_at(&self, e: &BlockErrors, page_type: usize, age: f64, reads: u32) -> (f64, f64) {
        let bits = e.bits as u32;
        let days = age.max(0.0) / DAY_NS * self.settings.retention_scale;
        let shares = &self.data[e.data as usize].shares[bits as usize - 1];
        let (base, shift) =
            self.settings
                .model
                .page_parts(&e.wear, bits, page_type, days, reads as f64, shares);
        (base + shift, base)
    }

    /// The window of page type `page_type` of block `b` that holds at `t`,
    /// opened there if none does, with a read at its RBER counted.
    #[inline]
    fn window(&mut self, b: u32, page_type: usize, t: u64) -> Window {
        let at = self.clock.at(t);
        let i = (b * self.bits) as usize + page_type;
        let w = &mut self.windows[i];
        if w.holds(at, self.blocks[b as usize].reads) && w.pending < u32::MAX {
            w.pending += 1;
            return *w;
        }
        let last = *w;
        self.tally.rber_reads(last.rber, last.pending);
        let w = Window {
            pending: 1,
            ..self.open_window(b, page_type, at, &last)
        };
        self.windows[i] = w;
        w
    }

    /// A window of page type `page_type` of block `b` from retention clock
    /// `at`, after `last` (see [`Window`]).
    #[cold]
    fn open_window(&self, b: u32, page_type: usize, at: f64, last: &Window) -> Window {
        let e = &self.blocks[b as usize];
        let age = (at - e.written_at).max(0.0);
        let here = self.rber_at(e, page_type, age, e.reads);
        let near = |a: f64, z: f64| (z - a).abs() <= 2.0 * WINDOW_TOLERANCE * a;
        let mut w = Window {
            until: at,
            reads_until: e.reads,
            rber: here.0,
            base: here.1,
            ..*last
        };
        // Only a page type whose RBER hardly moved since its last window
        // tries a wider one: one that moves read by read (disturb on a block
        // read a few times) is read at the model's own figures, for the one
        // evaluation a read took without windows.
        if near(last.rber, here.0) {
            // 2^step, exactly.
            let s = f64::from_bits(((1023 + last.step as i64) as u64) << 52);
            let reads_until = e
                .reads
                .saturating_add(((e.reads as f64).max(READS_FLOOR) * s).max(1.0) as u32);
            let until_age = age + age.max(AGE_FLOOR) * s;
            let there = self.rber_at(e, page_type, until_age, reads_until);
            if near(here.0, there.0) && near(here.1, there.1) {
                let mid = |a: f64, z: f64| a + 0.5 * (z - a);
                w.until = e.written_at + until_age;
                w.reads_until = reads_until;
                w.rber = mid(here.0, there.0);
                w.base = mid(here.1, there.1);
            }
            // The next step from the change over this one, held or not: a
            // fixed rule (one up, three down) overshot and undershot by
            // turns, and a window that fails serves one read for two
            // evaluations.
            let relative = |a: f64, z: f64| if a > 0.0 { (z - a).abs() / a } else { 0.0 };
            let change = relative(here.0, there.0).max(relative(here.1, there.1));
            w.step = last
                .step
                .saturating_add(step_change(change))
                .clamp(LEAST_STEP, MOST_STEP);
        }
        w.fails = exp_quick(self.ln_ladder_fails(w.rber, w.base));
        w
    }

    /// Whether its tables are large enough that a read's block record is
    /// likely out of the CPU's cache (worth fetching a request ahead).
    #[inline]
    pub fn far_from_cache(&self) -> bool {
        self.blocks.len() > CACHED_BLOCKS
    }

    /// Starts loading block `b`'s record and windows into the CPU's cache: a host read
    /// decodes it only after its work on the timeline, and the drive's
    /// block table is far larger than the cache.
    #[inline]
    pub fn prefetch(&self, b: u32) {
        crate::memory::prefetch(&self.blocks, b as usize);
        let first = (b * self.bits) as usize;
        for i in first..first + self.bits as usize {
            crate::memory::prefetch(&self.windows, i);
        }
    }

    /// Whether block `b` was opened with `cycles` and has not been erased
    /// since (its record is the block's as it is now).
    pub fn opened_with(&self, b: u32, cycles: f64) -> bool {
        self.blocks[b as usize].wear.cycles == cycles * self.cycle_weight[b as usize]
    }

    /// RBER of page `page` of block `b` read at `t`, and the part of it read
    /// retry cannot take back.
    #[inline]
    pub fn rber(&self, b: u32, page: u32, t: u64) -> (f64, f64) {
        let bits = self.blocks[b as usize].bits as u32;
        self.page_type_rber(b, ModeTiming::page_type(page, bits), t)
    }

    /// A host read of `codewords` codewords of page `page` of block `b` at
    /// `t` (see [`ReadErrors::rber`]).
    ///
    /// Every step of the ladder re-reads the same cells. Its errors are those
    /// the best step still sees — the wear-widened distributions and the
    /// shift the best references leave — plus what of the retention and
    /// disturb shift the step has not yet taken back: a codeword's errors
    /// shrink step by step, and one that decodes at a step decodes at every
    /// later one. So one draw decides the ladder: the page's weakest
    /// codeword, as a quantile of the error count (the same quantile at
    /// every step), fails each step whose failure probability lies above it.
    /// The soft decode reads the best step's errors with its higher limit.
    /// The expected uncorrectable codewords are P(the best step fails), per
    /// codeword, whether or not this read failed.
    #[inline]
    pub fn read(&mut self, b: u32, page: u32, codewords: u32, t: u64) -> ReadOutcome {
        let bits = self.blocks[b as usize].bits as u32;
        let w = self.window(b, ModeTiming::page_type(page, bits), t);
        let (rber, base) = (w.rber, w.base);
        let e = &mut self.blocks[b as usize];
        e.reads = e.reads.saturating_add(1);
        let reclaim = self.settings.read_reclaim;
        if reclaim > 0 && e.reads >= reclaim && !e.queued {
            e.queued = true;
            self.reclaim_due.push(b);
        }
        self.tally.page(rber, codewords, self.settings.data_bits);
        let n = codewords as f64;
        let outcome = ReadOutcome {
            retries: 0,
            soft: false,
            uncorrectable: false,
        };
        let (negligible, undrawn) = self.quiet(rber, codewords);
        if negligible {
            // The best step fails no more often than the first: nothing f64
            // could add to the tally (the common case, fresh data).
            return self.count(outcome, 0.0);
        }
        let expected = n * w.fails;
        if undrawn {
            // No draw could find a codeword that fails even the first step.
            return self.count(outcome, expected);
        }
        self.draw(outcome, codewords, rber, base, expected)
    }

    /// Draws the ladder of a read of `codewords` codewords at `rber`, `base`
    /// of it beyond retry's reach, `expected` of them expected to fail it
    /// (see [`ReadErrors::read`]).
    #[cold]
    fn draw(
        &mut self,
        mut outcome: ReadOutcome,
        codewords: u32,
        rber: f64,
        base: f64,
        expected: f64,
    ) -> ReadOutcome {
        let n = codewords as f64;
        // Each step takes back `retry_factor` of what is left of the shift
        // above its floor: the best read references leave `retry_floor` of it.
        let cfg = self.settings;
        let full = rber - base;
        let floor = full * cfg.retry_floor;
        let ln_last = self.ln_ladder_fails(rber, base);
        // The weakest codeword's tail quantile v (a codeword fails a step
        // whose failure probability is above its quantile): P(v < x) =
        // 1 − (1 − x)ⁿ, so v = 1 − r^(1/n) for r uniform in [0, 1).
        let r: f64 = self.rng.random();
        let ln_v = (-(r.ln_d() / n).exp_m1_d()).ln_d();
        let mut shift = full;
        for step in 0..=cfg.retry_steps {
            let ln_q = self
                .hard
                .ln_fail(if step == 0 { rber } else { base + shift });
            if ln_v >= ln_q {
                outcome.retries = step;
                return self.count(outcome, expected);
            }
            shift = floor + (shift - floor) * cfg.retry_factor;
        }
        outcome.retries = cfg.retry_steps;
        outcome.soft = self.soft.is_some();
        outcome.uncorrectable = self.soft.is_none() || ln_v < ln_last;
        self.count(outcome, expected)
    }

    /// Whether a read of `codewords` codewords at `rber` adds nothing to the
    /// tally (n · P(the first decode fails) below what f64 holds), and
    /// whether no draw could find a codeword that fails even the first
    /// decode: from the RBERs where each starts ([`Quiet`]), or — for more
    /// codewords than those are made for — from the tail itself.
    #[inline]
    fn quiet(&self, rber: f64, codewords: u32) -> (bool, bool) {
        match self.quiet.get(codewords as usize) {
            Some(q) => (rber < q.negligible, rber < q.undrawn),
            None => {
                let ln = self.hard.ln_fail(rber) + (codewords as f64).ln_d();
                (ln < NEGLIGIBLE, ln < NEVER_DRAWN)
            }
        }
    }

    /// ln P(a codeword read at `rber`, `base` of it beyond retry's reach,
    /// fails the whole ladder): its best step's hard decode, or the soft
    /// decode of what that step reads.
    #[inline]
    fn ln_ladder_fails(&self, rber: f64, base: f64) -> f64 {
        let cfg = &self.settings;
        let full = rber - base;
        let floor = full * cfg.retry_floor;
        let best = base + floor + (full - floor) * cfg.retry_left;
        match &self.soft {
            Some(soft) => soft.ln_fail(best),
            None => self.hard.ln_fail(best),
        }
    }

    /// JESD218's UBER of reading back every page of a drive of `blocks`
    /// blocks cycled to `cycles` (a nominal block's) and written `days` ago
    /// (at the reference temperature) with random data, at `bits` bits per
    /// cell, expected over blocks whose endurance is a factor drawn from
    /// `spread` times `conditions` (a block of factor f has seen cycles / f
    /// of a nominal block's stress). A run's own UBER follows the weakest
    /// blocks its seed drew (orders of magnitude apart between seeds); this
    /// is the seed-free figure of the median drive: every block of the
    /// spread, those weaker than the median drive's weakest (the ln 2 / n
    /// quantile) taken as that one — the unbounded log-normal's far tail,
    /// blocks one drive in millions holds, would otherwise decide it.
    pub fn expected_uber(
        &self,
        bits: u32,
        cycles: f64,
        days: f64,
        spread: &Spread,
        conditions: f64,
        blocks: u32,
    ) -> f64 {
        let shares = state_shares(bits, &[0.25; 4]);
        let fails = |factor: f64| {
            let w = self
                .settings
                .model
                .terms(cycles / (factor * conditions), bits);
            (0..bits as usize)
                .map(|p| {
                    let (base, shift) = self
                        .settings
                        .model
                        .page_parts(&w, bits, p, days, 0.0, &shares);
                    self.ln_ladder_fails(base + shift, base).exp_d()
                })
                .sum::<f64>()
                / bits as f64
        };
        let p_fail = match *spread {
            Spread::Rated => fails(1.0),
            Spread::LogNormal {
                median,
                sigma,
                outliers,
            } => {
                // ln f = ln median + σ·z, z standard normal: the trapezoid
                // rule over ±9 σ (what lies beyond weighs under 10⁻¹⁸), z held
                // at the median drive's weakest; the outliers are uniform
                // over 0.5–3× the rating.
                let weakest = normal_quantile(std::f64::consts::LN_2 / blocks.max(1) as f64);
                const STEPS: usize = 1800;
                let dz = 18.0 / STEPS as f64;
                let normal: f64 = (0..=STEPS)
                    .map(|i| {
                        let z = -9.0 + i as f64 * dz;
                        let w = if i == 0 || i == STEPS { 0.5 } else { 1.0 };
                        let f = median * (sigma * z.max(weakest)).exp_d();
                        w * (-0.5 * z * z).exp_d() * fails(f)
                    })
                    .sum::<f64>()
                    * dz
                    / (2.0 * std::f64::consts::PI).sqrt();
                let du = 2.5 / 250.0;
                let uniform: f64 = (0..250)
                    .map(|i| fails(0.5 + (i as f64 + 0.5) * du))
                    .sum::<f64>()
                    / 250.0;
                (1.0 - outliers) * normal + outliers * uniform
            }
        };
        p_fail * sectors_per_codeword(self.settings.data_bits) / self.settings.data_bits as f64
    }

    fn count(&mut self, outcome: ReadOutcome, expected_uncorrectable: f64) -> ReadOutcome {
        let t = &mut self.tally;
        t.expected_uncorrectable += expected_uncorrectable;
        t.retries += outcome.retries as u64;
        t.soft_decodes += outcome.soft as u64;
        t.uncorrectable_reads += outcome.uncorrectable as u64;
        outcome
    }
}

/// Up to how many codewords a read's [`Quiet`] RBERs are made for (a 16
/// KiB page of 512 B codewords holds 32).
const QUIET_CODEWORDS: usize = 64;

/// For a read of some number n of codewords, the RBERs below which n ·
/// P(the first decode fails) is below what f64 holds, and below which no
/// draw could find a codeword failing the first decode: the same verdicts
/// as the tail's (it only grows with the RBER), without its logarithm a read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Quiet {
    negligible: f64,
    undrawn: f64,
}

impl Quiet {
    /// Index n: a read of n codewords (n = 0 as 1).
    fn table(hard: &TailTable) -> Vec<Quiet> {
        (0..=QUIET_CODEWORDS)
            .map(|n| {
                let ln_n = if n <= 1 { 0.0 } else { (n as f64).ln_d() };
                let starts = |limit: f64| first_rber(|rber| hard.ln_fail(rber) + ln_n >= limit);
                Quiet {
                    negligible: starts(NEGLIGIBLE),
                    undrawn: starts(NEVER_DRAWN),
                }
            })
            .collect()
    }
}

/// The least RBER in [0, 1] at which `reached` holds (it holds at every
/// greater one), found over the floats themselves (their bits order as
/// they do); infinite if it holds at none.
fn first_rber(reached: impl Fn(f64) -> bool) -> f64 {
    let (mut lo, mut hi) = (0u64, 1.0f64.to_bits());
    if !reached(1.0) {
        return f64::INFINITY;
    }
    if reached(0.0) {
        return 0.0;
    }
    // reached(lo) is false, reached(hi) true.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if reached(f64::from_bits(mid)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    f64::from_bits(hi)
}

/// The z below which a standard normal falls with probability `p` (0 < p ≤
/// 0.5), by bisection on its tail: to 10⁻¹² in z.
fn normal_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0f64, 0.0f64);
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if 0.5 * libm::erfc(-mid * std::f64::consts::FRAC_1_SQRT_2) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// ln of a probability a uniform f64 draw cannot tell from 0 (2⁻⁵³).
const NEVER_DRAWN: f64 = -36.8;

/// ln of an expected count below what f64 adds to any tally (e^-745 is the
/// smallest subnormal).
const NEGLIGIBLE: f64 = -745.0;

#[cfg(test)]
mod tests {
    use super::ReadErrors;
    use crate::config::{Config, ErrorsConfig};
    use crate::math::Deterministic;
    use crate::media::errors::tests::direct_tail;
    use crate::media::errors::{page_type_factor, DAY_NS, FAST19_MLC};
    use crate::media::ModeTiming;
    use crate::stats::Latency;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn errors(ecc: &str) -> ErrorsConfig {
        errors_of("power-law", ecc)
    }

    fn errors_of(model: &str, ecc: &str) -> ErrorsConfig {
        let text = format!(
            "[device]\npreset = \"zombienand-synthetic-mlc\"\n[device.errors]\nmodel = \"{model}\"\n\
             ecc = \"{ecc}\"\nreference_c = 25.0\n[[phase]]\nrequests = 1\n"
        );
        let cfg = Config::from_toml(&text, "test").unwrap();
        cfg.device.errors.unwrap()
    }

    /// The ICS poster's experiment (Wang, Xie & Zhou, 2014): MLC blocks worn
    /// out programming one pattern every cycle, then written with
    /// pseudo-random data and read after a month. The block cycled with '11'
    /// (erased, never programmed) errs most; among the programmed states,
    /// the higher the voltage, the more errors — under both models. Random
    /// cycling weighs exactly as the fits were made.
    #[test]
    fn blocks_cycled_with_11_wear_into_the_most_errors() {
        for model in ["power-law", "vt"] {
            let e = errors_of(model, "bch:40/1KiB");
            let rber_after = |mlc: [f64; 4]| {
                let mut errors = ReadErrors::new(&e, 1, 2, 25.0, 1);
                let cycles = 3000u32;
                for n in 1..=cycles {
                    errors.set_data(&mlc);
                    errors.opened(0, 0, 2, 0.0);
                    errors.erased(0, n);
                }
                errors.set_data(&[0.25; 4]);
                errors.opened(0, 0, 2, cycles as f64);
                let t = (30.0 * DAY_NS) as u64;
                (errors.rber(0, 0, t).0 + errors.rber(0, 1, t).0) / 2.0
            };
            let one = |s: usize| {
                let mut mlc = [0.0; 4];
                mlc[s] = 1.0;
                rber_after(mlc)
            };
            // MLC states by voltage: '11' (erased), '10', '00', '01'.
            let by_state: Vec<f64> = (0..4).map(one).collect();
            assert!(
                by_state[0] > by_state[3] && by_state[3] > by_state[2] && by_state[2] > by_state[1],
                "{model}: {by_state:?}"
            );
            let random = rber_after([0.25; 4]);
            let plain = {
                let mut errors = ReadErrors::new(&e, 1, 2, 25.0, 1);
                errors.opened(0, 0, 2, 3000.0);
                let t = (30.0 * DAY_NS) as u64;
                (errors.rber(0, 0, t).0 + errors.rber(0, 1, t).0) / 2.0
            };
            assert_eq!(random, plain, "{model}");
        }
    }

    /// The RBER histogram holds every read at the RBER it was decoded at,
    /// whether its window is still open (counted in `tally()`), closed by a
    /// later window, or closed by its block's erase or new data.
    /// A snapshot's tables are checked against a fresh drive's: the same
    /// config makes the same ones, and an altered one is told apart.
    #[test]
    fn tables_made_from_the_config_are_the_fresh_drive_s() {
        let e = errors_of("power-law", "bch:40/1KiB");
        let (a, mut b) = (
            ReadErrors::new(&e, 4, 2, 25.0, 1),
            ReadErrors::new(&e, 4, 2, 40.0, 2),
        );
        assert!(a.same_tables(&b));
        b.quiet[4].undrawn *= 2.0;
        assert!(!a.same_tables(&b));
        let other = ReadErrors::new(&errors_of("power-law", "bch:8/1KiB"), 4, 2, 25.0, 1);
        assert!(!a.same_tables(&other));
    }

    #[test]
    fn every_read_is_in_the_rber_histogram_once() {
        for model in ["power-law", "vt"] {
            let mut errors = ReadErrors::new(&errors_of(model, "bch:40/1KiB"), 4, 2, 25.0, 1);
            let mut each = Latency::new(3);
            for b in 0..4 {
                errors.opened(b, 0, 2, 1000.0 * b as f64);
            }
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
            for i in 0..20_000u64 {
                let (b, page) = (rng.random_range(0..4u32), rng.random_range(0..8u32));
                if i % 5_000 == 4_999 {
                    errors.erased(b, 2);
                    errors.opened(b, i * 1_000_000, 2, 2000.0);
                }
                errors.read(b, page, 2, i * 1_000_000);
                let w =
                    &errors.windows[(b * errors.bits) as usize + ModeTiming::page_type(page, 2)];
                each.record((w.rber * 1e12).max(1.0) as u64);
            }
            let tally = errors.tally();
            assert_eq!(tally.page_reads, 20_000, "{model}");
            assert_eq!(tally.rber_bins(), each.bins(), "{model}");
            // Some reads were still in open windows (the case under test).
            let recorded: u64 = errors.tally.rber_bins().iter().map(|&(_, n)| n).sum();
            assert!(recorded < 20_000, "{model}: {recorded}");
        }
    }

    /// `reads` reads of `codewords` codewords of page 0 of block 0: the
    /// shares that needed a retry and that failed, and the tally's expected
    /// uncorrectable codewords per codeword read.
    fn read_many(errors: &mut ReadErrors, reads: u32, codewords: u32, t: u64) -> (f64, f64, f64) {
        let before = errors.tally.expected_uncorrectable;
        let (mut retried, mut failed) = (0, 0);
        for _ in 0..reads {
            // Reads since erase would add disturb: the block is erased anew.
            errors.erased(0, 1);
            let o = errors.read(0, 0, codewords, t);
            retried += (o.retries > 0 || o.soft) as u32;
            failed += o.uncorrectable as u32;
        }
        let n = reads as f64;
        let expected = (errors.tally.expected_uncorrectable - before) / (n * codewords as f64);
        (retried as f64 / n, failed as f64 / n, expected)
    }

    fn near(share: f64, p: f64, reads: u32) -> bool {
        (share - p).abs() < 4.0 * (p * (1.0 - p) / reads as f64).sqrt() + 1.0 / reads as f64
    }

    /// Whatever window a read falls in, the RBER it uses (and the part
    /// retry cannot take back) is within [`WINDOW_TOLERANCE`] of the
    /// model's own at that read's age and reads: both models, SLC to TLC
    /// blocks of MLC and TLC drives, fresh to thrice the rating, read at
    /// ages from a second to a decade and up to 10⁶ times.
    #[test]
    fn windows_hold_the_rber_to_their_tolerance() {
        use super::{ModeTiming, WINDOW_TOLERANCE};
        for (preset, rated) in [
            ("zombienand-synthetic-mlc", 6000.0),
            ("tlc-3d-errors", 1500.0),
        ] {
            for model in ["power-law", "vt"] {
                let text = format!(
                    "[device]\npreset = \"{preset}\"\n[device.errors]\nmodel = \"{model}\"\n\
                     [[phase]]\nrequests = 1\n"
                );
                let cfg = Config::from_toml(&text, "test").unwrap();
                let bits = cfg.geometry.cell.bits();
                let e = cfg.device.errors.unwrap();
                let mut errors = ReadErrors::new(&e, 8, bits, 25.0, 1);
                let mut worst = 0.0f64;
                for (b, cycles) in [0.0, 0.3, 1.0, 3.0].into_iter().enumerate() {
                    for mode in 1..=bits {
                        errors.opened(b as u32, 0, mode, cycles * rated);
                        errors.erased(b as u32, 1);
                        // Reads spread geometrically over ten years.
                        let reads = 20_000u32;
                        for i in 0..reads {
                            let t = (1e9
                                * (10.0 * 365.0 * 86_400.0f64).pow_d(i as f64 / reads as f64))
                                as u64;
                            let page = (i * 7919) % 64;
                            let exact = errors.rber(b as u32, page, t);
                            let bits_now = errors.blocks[b].bits as u32;
                            let w =
                                errors.window(b as u32, ModeTiming::page_type(page, bits_now), t);
                            // Skip ahead in reads: a block read 10⁶ times by the end.
                            errors.blocks[b].reads += 1 + (i / 400);
                            for (ours, exact) in [(w.rber, exact.0), (w.base, exact.1)] {
                                let off = (ours - exact).abs() / exact;
                                worst = worst.max(off);
                                assert!(
                                    off <= WINDOW_TOLERANCE * (1.0 + 1e-9),
                                    "{preset} {model} {cycles} {mode}: {ours:e} vs {exact:e}"
                                );
                            }
                        }
                    }
                }
                assert!(worst > 0.0, "{preset} {model}: no window spanned a change");
            }
        }
    }

    /// A window's next step aims at [`STEP_AIM`] of the change a window may
    /// hold: no change grows it the most allowed, the aim keeps it, twice
    /// the aim halves it, and a change far past the aim shrinks it at most
    /// 12 doublings (a NaN too).
    #[test]
    fn the_next_step_follows_the_change_measured() {
        use super::{step_change, MOST_GROWTH, STEP_AIM, WINDOW_TOLERANCE};
        let aim = STEP_AIM * 2.0 * WINDOW_TOLERANCE;
        assert_eq!(step_change(0.0), MOST_GROWTH);
        assert_eq!(step_change(aim / 100.0), MOST_GROWTH);
        assert_eq!(step_change(aim / 2.0), 1);
        assert_eq!(step_change(aim), 0);
        assert_eq!(step_change(aim * 1.01), -1);
        assert_eq!(step_change(aim * 2.0), -1);
        assert_eq!(step_change(aim * 2.01), -2);
        assert_eq!(step_change(1.0), -12);
        assert_eq!(step_change(f64::NAN), -12);
        let changes = [0.0, 1e-9, 1e-6, 1e-5, 1e-4, 1e-3, 0.1, 10.0];
        assert!(changes
            .windows(2)
            .all(|w| step_change(w[0]) >= step_change(w[1])));
    }

    /// Fresh data (ε alone: no retention or disturb shift for retry to take
    /// back): every step re-reads the same errors, so the ladder fails as
    /// often as the first decode, P(X > 1) for one BCH codeword correcting 1
    /// bit, X ~ Binomial(codeword bits, ε) — not that probability to the
    /// power of the ladder's six steps.
    #[test]
    fn retries_cannot_help_fresh_data() {
        let e = errors("bch:1/1KiB");
        let mut errors = ReadErrors::new(&e, 4, 2, 25.0, 1);
        errors.opened(0, 0, 2, 0.0);
        let p = direct_tail(e.ecc.bits, FAST19_MLC.epsilon * page_type_factor(2, 0), 1);
        let reads = 40_000;
        let (retried, failed, expected) = read_many(&mut errors, reads, 1, 0);
        assert!(near(retried, p, reads), "{retried} vs {p}");
        assert_eq!(retried, failed);
        assert!((expected / p - 1.0).abs() < 0.02, "{expected} vs {p}");
        // Four codewords a page: the page fails when any does.
        let page = 1.0 - (1.0 - p).pow_d(4.0);
        let (_, failed, expected) = read_many(&mut errors, reads, 4, 0);
        assert!(near(failed, page, reads), "{failed} vs {page}");
        assert!((expected / p - 1.0).abs() < 0.02, "{expected} vs {p}");
    }

    /// Aged data: retry takes back all but `retry_floor` of the retention
    /// shift (less what its last step leaves), and the ladder fails when the
    /// errors at its best step do: P(X > t), X ~ Binomial(bits, best RBER).
    /// The first decode fails far more often, and every failed read needed
    /// the whole ladder.
    #[test]
    fn the_ladder_fails_as_its_best_step_does() {
        let e = errors("bch:8/1KiB");
        let mut errors = ReadErrors::new(&e, 4, 2, 25.0, 1);
        let cycles = 12000.0;
        errors.opened(0, 0, 2, cycles);
        let days = 365.0;
        let t = (days * DAY_NS) as u64;
        let m = FAST19_MLC;
        let f = page_type_factor(2, 0);
        let base = (m.epsilon + m.alpha * cycles.pow_d(m.k)) * f;
        let shift = m.beta * cycles.pow_d(m.m) * m.age_factor(days) * f;
        let left =
            e.retry_floor + (1.0 - e.retry_floor) * e.retry_factor.pow_d(e.retry_steps as f64);
        let first = direct_tail(e.ecc.bits, base + shift, 8);
        let last = direct_tail(e.ecc.bits, base + shift * left, 8);
        assert!(
            first > 0.05 && last > 1e-3 && last < first / 5.0,
            "{first} {last}"
        );
        let reads = 20_000;
        let (retried, failed, expected) = read_many(&mut errors, reads, 1, t);
        assert!(near(retried, first, reads), "{retried} vs {first}");
        assert!(near(failed, last, reads), "{failed} vs {last}");
        assert!((expected / last - 1.0).abs() < 0.03, "{expected} vs {last}");
    }
}
