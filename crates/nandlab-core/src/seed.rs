//! Seeds: each random stream of a run (the workload, the endurance spread,
//! the bit errors, the power cuts) draws from its own seed, derived from the
//! run's by purpose and index, so the streams stay independent and a run is
//! the same for the same seed.

/// Derives an independent seed for one purpose (SplitMix64 finaliser).
pub fn derive_seed(seed: u64, purpose: &str, index: u64) -> u64 {
    let mut h: u64 = seed ^ 0x9E37_79B9_7F4A_7C15;
    for b in purpose.bytes().chain(index.to_le_bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01B3);
    }
    h ^= h >> 30;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_differ_by_purpose() {
        assert_ne!(derive_seed(1, "ops", 0), derive_seed(1, "addresses", 0));
        assert_ne!(derive_seed(1, "ops", 0), derive_seed(1, "ops", 1));
        assert_eq!(derive_seed(1, "ops", 0), derive_seed(1, "ops", 0));
    }
}
