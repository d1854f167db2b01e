//! Hot/cold data separation at the host frontier (`[ftl] hot_cold`): each
//! host write is classified by the multi-hash-function identifier of Hsieh,
//! Kuo and Chang ("Efficient identification of hot data for flash memory
//! storage systems", ACM TOS 2(1), 2006) and placed on its own stream — hot
//! units on the [`Frontier::Hot`] block of their pool, cold ones on the host
//! frontier — so that blocks fill with data of like lifetimes and GC finds
//! hot blocks mostly invalid.
//!
//! The identifier keeps a table of 4-bit saturating counters. A write adds
//! one to the counter each of its [`HASHES`] hash functions picks; the unit
//! is hot if every one of them then has one of its two high bits set (≥ 4);
//! every `decay_every` writes all counters are halved, so hotness follows
//! recent writes. nandlab halves them every N / 2 writes for N counters
//! (4,096 by default, `[ftl] hot_cold = "multi-hash:N"` for others): a
//! uniform stream then adds one to a counter between halvings, so a cold
//! unit's counters seldom both reach 4, while a unit written twice or more
//! between halvings climbs past it. Every write counts, the fill's too (a
//! fill then places unit by unit).

use super::frontiers::Frontier;
use super::Ftl;
use crate::sanity::{ensure, len, Checked};
use serde::{Deserialize, Serialize};

/// Hash functions a unit's counters are picked by.
const HASHES: usize = 2;

/// A counter's ceiling (4 bits), and the count from which a unit whose
/// counters all reach it is hot (a high bit of two set).
const COUNTER_MAX: u8 = 15;
const HOT_AT: u8 = 4;

/// Odd multipliers of the hash functions (Fibonacci hashing: the unit
/// number times a 64-bit odd constant, its top bits the counter).
const MULTIPLIERS: [u64; HASHES] = [0x9E37_79B9_7F4A_7C15, 0xC2B2_AE3D_27D4_EB4F];

/// The multi-hash identifier's table and clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HotCold {
    counters: Vec<u8>,
    /// log2 of the counters.
    bits: u32,
    /// Writes between halvings, and those since the last.
    decay_every: u64,
    since_decay: u64,
}

impl HotCold {
    /// An identifier of `counters` counters (a power of two).
    pub fn new(counters: u32) -> HotCold {
        debug_assert!(counters.is_power_of_two());
        HotCold {
            counters: vec![0; counters as usize],
            bits: counters.trailing_zeros(),
            decay_every: counters as u64 / 2,
            since_decay: 0,
        }
    }

    /// Counts a write of unit `lpn`; whether the unit is hot.
    #[inline]
    pub fn write(&mut self, lpn: u32) -> bool {
        let mut hot = true;
        for m in MULTIPLIERS {
            let i = ((lpn as u64).wrapping_mul(m) >> (64 - self.bits)) as usize;
            let c = &mut self.counters[i];
            *c = (*c + 1).min(COUNTER_MAX);
            hot &= *c >= HOT_AT;
        }
        self.since_decay += 1;
        if self.since_decay == self.decay_every {
            self.since_decay = 0;
            for c in &mut self.counters {
                *c >>= 1;
            }
        }
        hot
    }

    /// Checks a loaded identifier against `fresh` (its config's): as many
    /// counters, each within 4 bits, the same clock.
    pub fn check_loaded(&self, fresh: &HotCold) -> Checked {
        len(
            "hot/cold counters",
            self.counters.len(),
            fresh.counters.len() as u64,
        )?;
        ensure(
            self.bits == fresh.bits
                && self.decay_every == fresh.decay_every
                && self.since_decay < self.decay_every
                && self.counters.iter().all(|&c| c <= COUNTER_MAX),
            || "the hot/cold identifier's counters are not its config's".into(),
        )
    }
}

impl Ftl {
    /// The host stream a write of `lpn` goes to: hot or cold data's, with
    /// the identifier on (counting the hot units); else the host frontier's.
    #[inline]
    pub(super) fn host_stream(&mut self, lpn: u32) -> Frontier {
        let Some(h) = &mut self.hot_cold else {
            return Frontier::Host;
        };
        if h.write(lpn) {
            self.counters.hot_units += 1;
            Frontier::Hot
        } else {
            Frontier::Host
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HotCold;

    /// A stream of writes, `hot_share` of them to the first `hot` of
    /// `units` units and the rest to the others, each uniform (a small
    /// LCG: the truth the identifier is checked against).
    fn classify(hot: u32, units: u32, hot_share: f64, writes: u32) -> (f64, f64) {
        let mut id = HotCold::new(4096);
        let mut x: u64 = 12345;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut hot_found, mut hot_writes, mut cold_found, mut cold_writes) = (0, 0, 0, 0);
        for _ in 0..writes {
            let is_hot = next() < hot_share;
            let lpn = if is_hot {
                (next() * hot as f64) as u32
            } else {
                hot + (next() * (units - hot) as f64) as u32
            };
            let found = id.write(lpn);
            if is_hot {
                hot_writes += 1;
                hot_found += found as u32;
            } else {
                cold_writes += 1;
                cold_found += found as u32;
            }
        }
        (
            hot_found as f64 / hot_writes as f64,
            cold_found as f64 / cold_writes as f64,
        )
    }

    #[test]
    fn a_small_hot_set_is_found_and_cold_data_is_not() {
        // Half the writes to 100 of 100,000 units: each hot unit is written
        // some 10 times between halvings, each cold one 0.01 times.
        let (hot, cold) = classify(100, 100_000, 0.5, 2_000_000);
        assert!(hot > 0.95, "hot writes found hot: {hot}");
        assert!(cold < 0.02, "cold writes found hot: {cold}");
    }

    #[test]
    fn uniform_writes_find_nothing_hot() {
        let (_, cold) = classify(1, 100_000, 0.0, 2_000_000);
        assert!(cold < 0.02, "uniform writes found hot: {cold}");
    }

    #[test]
    fn a_unit_turns_hot_on_its_fourth_write_and_cools_as_counters_halve() {
        let mut id = HotCold::new(4096);
        assert_eq!(id.decay_every, 2048);
        let found: Vec<bool> = (0..5).map(|_| id.write(7)).collect();
        assert_eq!(found, [false, false, false, true, true]);
        // Counters saturate at 15.
        for _ in 0..20 {
            id.write(7);
        }
        assert!(id.counters.iter().all(|&c| c <= 15));
        // Four halvings' worth of writes to other units, each once: unit 7 is cold again.
        for lpn in 1000..1000 + 4 * 2048 {
            id.write(lpn);
        }
        assert!(!id.write(7));
    }
}
