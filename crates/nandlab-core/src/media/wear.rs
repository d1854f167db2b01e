//! NAND wear physics: trapped-charge oxide stress (ZombieNAND's model), the
//! endurance it allows per bit mode and per block, and how program and erase
//! latency move with it in quantized ISPP steps (Desnoyers), plus the data
//! and retention-relaxation effects on program time (Wang et al., ICS 2014).

use crate::math::Deterministic;
use crate::media::CellMode;
use serde::{Deserialize, Serialize};

/// Elementary charge, C.
pub const Q: f64 = 1.6e-19;
/// Oxide capacitance, F.
pub const C_OX: f64 = 2.15e-17;

/// Threshold-voltage shift after `c` program/erase cycles, in volts:
/// ΔV = (ΔN_it + ΔN_ot)·q/C_ox with ΔN_it = 0.08·c^0.62, ΔN_ot = 5.0·c^0.30.
pub fn delta_v(c: f64) -> f64 {
    (0.08 * c.pow_d(0.62) + 5.0 * c.pow_d(0.30)) * Q / C_OX
}

/// Rated endurance per mode when a config gives none (ZombieNAND's survey;
/// QLC from current parts).
pub const DEFAULT_RATED: [f64; 4] = [75_000.0, 6_000.0, 1_000.0, 300.0];

/// ISPP program-verify loops of a fresh and of a worn-out block: program
/// time falls to 2/5 over a block's life.
pub const PROGRAM_LOOPS: (u32, u32) = (10, 4);
/// Erase pulses of a fresh and of a worn-out block: erase time triples.
pub const ERASE_LOOPS: (u32, u32) = (4, 12);

/// How cycling is done: one page per erase (Desnoyers' test) or the whole block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CyclePattern {
    SinglePage,
    FullBlock,
}

/// Conditions that scale how fast cycling wears a block out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Conditions {
    pub pattern: CyclePattern,
    pub temperature_c: f64,
    /// Retention-relaxed programming (short-lived data): 7.1 % more endurance.
    pub relaxed: bool,
}

impl Default for Conditions {
    fn default() -> Self {
        Conditions {
            pattern: CyclePattern::SinglePage,
            temperature_c: 25.0,
            relaxed: false,
        }
    }
}

impl Conditions {
    /// Endurance multiplier: full-block cycling halves it at worst (Desnoyers:
    /// "by no more than a factor of two"), 5 °C halves it, heat up to 80 °C
    /// changes nothing; relaxed programming adds 7.1 %.
    pub fn endurance_factor(&self) -> f64 {
        let pattern = match self.pattern {
            CyclePattern::SinglePage => 1.0,
            CyclePattern::FullBlock => 0.5,
        };
        // Linear from ×1 at 25 °C down to ×0.5 at 5 °C, flat above.
        let cold = if self.temperature_c >= 25.0 {
            1.0
        } else {
            (0.5 + 0.025 * (self.temperature_c - 5.0)).clamp(0.25, 1.0)
        };
        let relaxed = if self.relaxed { 1.071 } else { 1.0 };
        pattern * cold * relaxed
    }
}

/// Where a block stands in its life in one bit mode.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WearModel {
    /// ΔV at which each mode fails: ΔV(rated cycles of that mode).
    pub threshold_v: [f64; 4],
    pub rated: [f64; 4],
}

impl WearModel {
    pub fn new(rated: [f64; 4]) -> WearModel {
        WearModel {
            threshold_v: rated.map(delta_v),
            rated,
        }
    }

    /// Effective cycles (cycles scaled by the block's endurance factor and
    /// conditions) after which a block dies in `mode`. ΔV grows monotonically
    /// with cycles, so "ΔV past the mode's threshold" is "cycles past rated".
    pub fn limit(&self, mode: CellMode) -> f64 {
        self.rated[mode.index()]
    }

    /// Life used in `mode` by a stress of `dv` volts, 0 (fresh) to 1 (dead).
    pub fn life_used(&self, mode: CellMode, dv: f64) -> f64 {
        (dv / self.threshold_v[mode.index()]).clamp(0.0, 1.0)
    }

    /// Program time after wear: the fresh time in ISPP steps, fewer steps as
    /// the oxide traps charge.
    pub fn program_ns(&self, fresh_ns: u64, mode: CellMode, dv: f64) -> u64 {
        quantized(fresh_ns, PROGRAM_LOOPS, self.life_used(mode, dv))
    }

    /// Erase time after wear: more erase pulses as the oxide traps charge.
    pub fn erase_ns(&self, fresh_ns: u64, mode: CellMode, dv: f64) -> u64 {
        quantized(fresh_ns, ERASE_LOOPS, self.life_used(mode, dv))
    }
}

/// `fresh_ns` split into `loops.0` equal steps; at life `u` the operation takes
/// the step count interpolated towards `loops.1`, rounded to whole steps.
fn quantized(fresh_ns: u64, loops: (u32, u32), u: f64) -> u64 {
    let step = fresh_ns as f64 / loops.0 as f64;
    let n = (loops.0 as f64 + (loops.1 as f64 - loops.0 as f64) * u).round();
    (n * step).round() as u64
}

/// Program time of '11' and '00' relative to '01'.
const T11: f64 = 1.0 - 0.31;
const T00: f64 = T11 / (1.0 - 0.23);

/// Relative program time of an MLC page whose cells go to a 2-bit state: the
/// erased-looking '11' is 15.5 %, 23 % and 31 % faster than '10', '00' and '01'
/// (Wang et al.). Normalised so that random data (all states, the slowest '01'
/// sets the page's time) takes the datasheet time.
pub fn mlc_state_time(state: &str) -> Option<f64> {
    Some(match state {
        "11" => T11,
        "10" => T11 / (1.0 - 0.155),
        "00" => T00,
        "01" => 1.0,
        _ => return None,
    })
}

/// Program time factor of a page holding `states` (e.g. ["11"] for all-ones
/// data, or every state for random data): the slowest state present sets it.
pub fn data_factor(states: &[&str]) -> Option<f64> {
    states
        .iter()
        .map(|s| mlc_state_time(s))
        .try_fold(0.0f64, |m, t| t.map(|t| m.max(t)))
}

/// What a phase writes: its program-time factor and the shares of MLC
/// cells it leaves in '11', '10', '00', '01' (the threshold-voltage error
/// model reads them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DataPattern {
    pub program_factor: f64,
    pub mlc_shares: [f64; 4],
}

impl DataPattern {
    /// Random data: every state equally, the datasheet's program time.
    pub const RANDOM: DataPattern = DataPattern {
        program_factor: 1.0,
        mlc_shares: [0.25; 4],
    };

    /// All-ones data: every MLC cell left in the erased-looking '11'.
    pub const ONES: DataPattern = DataPattern {
        program_factor: T11,
        mlc_shares: [1.0, 0.0, 0.0, 0.0],
    };

    /// All-zeros data: every MLC cell in '00'.
    pub const ZEROS: DataPattern = DataPattern {
        program_factor: T00,
        mlc_shares: [0.0, 0.0, 1.0, 0.0],
    };

    /// Cells spread over the MLC `states` listed (a state listed twice
    /// holds twice the share); None if one is not an MLC state.
    pub fn of_states(states: &[&str]) -> Option<DataPattern> {
        const ORDER: [&str; 4] = ["11", "10", "00", "01"];
        let mut mlc_shares = [0.0; 4];
        for s in states {
            let i = ORDER.iter().position(|o| o == s)?;
            mlc_shares[i] += 1.0 / states.len() as f64;
        }
        Some(DataPattern {
            program_factor: data_factor(states).filter(|_| !states.is_empty())?,
            mlc_shares,
        })
    }
}

/// Retention-relaxed programming (Wang et al.: narrower Vt targets for data
/// that lives hours or days): "programming speed can be improved by 50 %" —
/// 1.5× the speed, two thirds of the time.
pub const RELAXED_PROGRAM_FACTOR: f64 = 1.0 / 1.5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_v_matches_the_formula() {
        // c = 1000: 0.08·1000^0.62 + 5·1000^0.3 = 5.796 + 39.811 = 45.607 traps; ×q/C_ox.
        let expected = (0.08 * 1000f64.pow_d(0.62) + 5.0 * 1000f64.pow_d(0.3)) * 1.6e-19 / 2.15e-17;
        assert!((delta_v(1000.0) - expected).abs() < 1e-15);
        assert!((delta_v(1000.0) - 0.3394).abs() < 1e-3);
        assert!(delta_v(2.0) > delta_v(1.0));
    }

    #[test]
    fn latency_moves_with_wear_on_the_quantized_grid() {
        let m = WearModel::new(DEFAULT_RATED);
        let fresh = 1_000_000;
        let eol = m.threshold_v[CellMode::Mlc.index()];
        assert_eq!(m.program_ns(fresh, CellMode::Mlc, 0.0), fresh);
        assert!(m.program_ns(fresh, CellMode::Mlc, eol) * 2 <= fresh);
        assert!(m.erase_ns(fresh, CellMode::Mlc, eol) >= 2 * fresh);
        let step = fresh / PROGRAM_LOOPS.0 as u64;
        for dv in [0.0, eol * 0.3, eol * 0.77, eol] {
            assert_eq!(m.program_ns(fresh, CellMode::Mlc, dv) % step, 0);
        }
    }

    #[test]
    fn data_dependent_program_time_follows_the_poster() {
        let t = |s| mlc_state_time(s).unwrap();
        assert!((t("11") / t("10") - (1.0 - 0.155)).abs() < 1e-12);
        assert!((t("11") / t("00") - (1.0 - 0.23)).abs() < 1e-12);
        assert!((t("11") / t("01") - (1.0 - 0.31)).abs() < 1e-12);
        assert_eq!(data_factor(&["11", "10", "00", "01"]), Some(1.0));
        assert_eq!(data_factor(&["11"]), Some(t("11")));
        assert_eq!(data_factor(&["12"]), None);
    }

    #[test]
    fn conditions_scale_endurance_as_measured() {
        let base = Conditions::default();
        assert_eq!(base.endurance_factor(), 1.0);
        let cold = Conditions {
            temperature_c: 5.0,
            ..base
        };
        assert!((cold.endurance_factor() - 0.5).abs() < 1e-12);
        let hot = Conditions {
            temperature_c: 80.0,
            ..base
        };
        assert_eq!(hot.endurance_factor(), 1.0);
        let full = Conditions {
            pattern: CyclePattern::FullBlock,
            ..base
        };
        assert_eq!(full.endurance_factor(), 0.5);
        let relaxed = Conditions {
            relaxed: true,
            ..base
        };
        assert!((relaxed.endurance_factor() - 1.071).abs() < 1e-12);
    }
}
