//! The transcendental functions the engine's results rest on, from the
//! `libm` crate (a port of musl's libm): the same bits on every platform,
//! build and Rust version. std's `powf`, `exp`, `ln` and the like are
//! documented as non-deterministic in precision — they may differ between
//! platforms, and even within a build where the optimiser folds a call with
//! constant arguments — so a result could move with a dependency added or
//! an inlining decision. On x86-64 Linux these give the same bits as glibc
//! (the golden runs did not move when the engine switched). clippy.toml
//! disallows the std ones in the engine. Still on std inside: `rand_distr`'s
//! log-normal, normal and Zipf samplers (block endurance spread, `normal`
//! and `zipf` address distributions).

/// Deterministic transcendental functions of an `f64`.
pub trait Deterministic {
    /// `self` to the power `y`.
    fn pow_d(self, y: f64) -> f64;
    /// e to the power `self`.
    fn exp_d(self) -> f64;
    /// The natural logarithm.
    fn ln_d(self) -> f64;
    /// ln(1 + `self`), accurate near 0.
    fn ln_1p_d(self) -> f64;
    /// The base-10 logarithm.
    fn log10_d(self) -> f64;
    /// e to the power `self`, minus 1, accurate near 0.
    fn exp_m1_d(self) -> f64;
}

impl Deterministic for f64 {
    #[inline]
    fn pow_d(self, y: f64) -> f64 {
        libm::pow(self, y)
    }

    #[inline]
    fn exp_d(self) -> f64 {
        libm::exp(self)
    }

    #[inline]
    fn ln_d(self) -> f64 {
        libm::log(self)
    }

    #[inline]
    fn ln_1p_d(self) -> f64 {
        libm::log1p(self)
    }

    #[inline]
    fn log10_d(self) -> f64 {
        libm::log10(self)
    }

    #[inline]
    fn exp_m1_d(self) -> f64 {
        libm::expm1(self)
    }
}

#[cfg(test)]
mod tests {
    use super::Deterministic;

    #[test]
    fn known_values_to_the_last_bit() {
        assert_eq!(2f64.pow_d(10.0), 1024.0);
        assert_eq!(0f64.exp_d(), 1.0);
        assert_eq!(1f64.ln_d(), 0.0);
        assert_eq!(1000f64.log10_d(), 3.0);
        assert_eq!(0f64.ln_1p_d(), 0.0);
        assert_eq!(0f64.exp_m1_d(), 0.0);
        // The same bits wherever the engine runs: musl's e is one ulp above the
        // correctly rounded one (a `libm` update that moved it would move results).
        assert_eq!(1f64.exp_d().to_bits(), std::f64::consts::E.to_bits() + 1);
        assert_eq!(10f64.ln_d().to_bits(), std::f64::consts::LN_10.to_bits());
        assert_eq!(3000f64.pow_d(1.71).to_bits(), 0x412a_f11d_1184_313b);
    }
}
