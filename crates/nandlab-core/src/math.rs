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
//!
//! A host read with bit errors on takes exponentials (the probability the
//! ECC tail gives, the vt model's Gaussian tails) and often a power (the
//! retention term): [`ln_quick`], [`exp_quick`] and [`pow_quick`] do them in
//! a third to a fifth of libm's instructions, within 10⁻¹⁵ of it (10⁻¹⁴ for
//! the power; the tables a read looks up hold their figures to about 10⁻³),
//! from IEEE additions and multiplications on tables libm makes: as
//! deterministic.

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

/// Sub-intervals per binade of [`ln_quick`]'s table, and of a power of
/// two in [`exp_quick`]'s.
const QUICK_STEPS: usize = 64;

/// For [`ln_quick`]: 1 / cⱼ and ln cⱼ at the middles cⱼ = 1 + (j + ½) / 64
/// of the mantissa's sub-intervals; for [`exp_quick`]: 2^(j / 64).
struct QuickTables {
    inv: [f64; QUICK_STEPS],
    ln: [f64; QUICK_STEPS],
    exp2: [f64; QUICK_STEPS],
}

fn quick_tables() -> &'static QuickTables {
    static TABLES: std::sync::OnceLock<QuickTables> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let middle = |j: usize| 1.0 + (j as f64 + 0.5) / QUICK_STEPS as f64;
        QuickTables {
            inv: std::array::from_fn(|j| 1.0 / middle(j)),
            ln: std::array::from_fn(|j| middle(j).ln_d()),
            exp2: std::array::from_fn(|j| libm::exp2(j as f64 / QUICK_STEPS as f64)),
        }
    })
}

/// ln `x`, within 10⁻¹⁵ of libm's (relative where |ln x| > 1; libm's own
/// for 0, negative, infinite and NaN `x`): x = 2ᵉ·m, m in its sub-interval
/// around cⱼ, ln x = e·ln 2 + ln cⱼ + ln(m / cⱼ), the last from six terms
/// of its series (|m / cⱼ − 1| ≤ 1/129).
#[inline]
pub fn ln_quick(x: f64) -> f64 {
    if !(x > 0.0 && x < f64::INFINITY) {
        return x.ln_d(); // 0, negative, infinite or NaN: libm's -inf, NaN or inf
    }
    let (mut bits, mut scale) = (x.to_bits(), 0i64);
    if bits >> 52 == 0 {
        // Subnormal: scaled into the normal range first.
        bits = (x * f64::from_bits((1023 + 54) << 52)).to_bits();
        scale = -54;
    }
    let e = (bits >> 52) as i64 - 1023 + scale;
    let j = ((bits >> 46) & (QUICK_STEPS as u64 - 1)) as usize;
    let m = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    let t = quick_tables();
    let r = m * t.inv[j] - 1.0;
    let series =
        r * (1.0 + r * (-0.5 + r * (1.0 / 3.0 + r * (-0.25 + r * (0.2 + r * (-1.0 / 6.0))))));
    e as f64 * std::f64::consts::LN_2 + (t.ln[j] + series)
}

/// e to the power `x`, within 10⁻¹⁵ (relative) of libm's: with x = k·ln 2
/// / 64 + r, eˣ = 2^(k div 64) · 2^((k mod 64) / 64) · eʳ, eʳ from six
/// terms of its series (|r| ≤ ln 2 / 128). Outside ±700 (and for NaN) it
/// is libm's.
#[inline]
pub fn exp_quick(x: f64) -> f64 {
    // ln 2 / 64 in two parts, the first with its low 32 bits clear so that
    // k times it is exact; the second with what f64's ln 2 leaves out.
    const STEP_HI: f64 = f64::from_bits(0x3f86_2e42_0000_0000);
    const STEP_LO: f64 = (std::f64::consts::LN_2 / QUICK_STEPS as f64 - STEP_HI)
        + 2.319_046_813_846_299_6e-17 / QUICK_STEPS as f64;
    if !(-700.0..=700.0).contains(&x) {
        return x.exp_d();
    }
    // k = x · 64 / ln 2 rounded to the nearest whole number (ties to even),
    // by adding and taking away 1.5·2⁵²: `f64::round` is a call on x86-64.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    let k = (x * (QUICK_STEPS as f64 / std::f64::consts::LN_2) + ROUND) - ROUND;
    let r = (x - k * STEP_HI) - k * STEP_LO;
    let series =
        1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0)))));
    let k = k as i64;
    let power = f64::from_bits(((k.div_euclid(QUICK_STEPS as i64) + 1023) as u64) << 52);
    quick_tables().exp2[k.rem_euclid(QUICK_STEPS as i64) as usize] * series * power
}

/// `x` (> 0) to the power `y`, as [`exp_quick`] of `y` · [`ln_quick`] `x`.
#[inline]
pub fn pow_quick(x: f64, y: f64) -> f64 {
    exp_quick(y * ln_quick(x))
}

#[cfg(test)]
mod tests {
    use super::{exp_quick, ln_quick, pow_quick, Deterministic};

    /// Against libm over a million points spread over every binade the
    /// engine takes logarithms in (and subnormals), and exponentials from
    /// −745 to 709.
    #[test]
    fn quick_functions_match_libm() {
        let mut worst = (0.0f64, 0.0f64, 0.0f64);
        let mut x = f64::MIN_POSITIVE / 1e10;
        while x < 1e300 {
            let exact = x.ln_d();
            worst.0 = worst
                .0
                .max((ln_quick(x) - exact).abs() / exact.abs().max(1.0));
            x *= 1.000_71;
        }
        let mut y = -745.0;
        while y < 709.0 {
            let (quick, exact) = (exp_quick(y), y.exp_d());
            if exact > f64::MIN_POSITIVE {
                worst.1 = worst.1.max((quick / exact - 1.0).abs());
            }
            y += 0.000_731;
        }
        for (x, n) in [
            (1e-9, 3.33),
            (0.37, 0.54),
            (14.0, 3.33),
            (365.0, 0.54),
            (2.5e4, 2.49),
        ] {
            worst.2 = worst.2.max((pow_quick(x, n) / x.pow_d(n) - 1.0).abs());
        }
        assert!(
            worst.0 < 1e-15 && worst.1 < 1e-15 && worst.2 < 1e-14,
            "{worst:?}"
        );
        assert_eq!(exp_quick(0.0), 1.0);
        assert_eq!(ln_quick(0.0), f64::NEG_INFINITY);
        assert_eq!(ln_quick(f64::INFINITY), f64::INFINITY);
        assert!(ln_quick(-1.0).is_nan() && ln_quick(f64::NAN).is_nan());
        assert_eq!(exp_quick(f64::NEG_INFINITY), 0.0);
    }

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
