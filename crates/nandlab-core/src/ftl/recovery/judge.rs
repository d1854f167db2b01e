//! Judging a recovery: each unit's copy recovery keeps against what the
//! host was told (the integrity oracle's acknowledgements) — acknowledged
//! writes lost and why, writes in flight that survived or not — and, on a
//! configuration documented safe, a lost acknowledged write is an error.

use super::{AtCut, Copy};
use crate::ftl::Ftl;
use crate::oracle::Floor;
use crate::power::{PowerModel, SlotAtCut};
use crate::stats::power_loss::{LossReason, LostByReason, LostWrite};
use crate::SimError;

/// What a cut did to what the host was told.
pub(super) struct Judged {
    pub lost: Vec<LostWrite>,
    pub by_reason: LostByReason,
    pub unacked_lost: u64,
    pub unacked_survived: u64,
}

impl Ftl {
    /// Judges recovery's choice `best` (per unit) after a cut at `t`, and
    /// settles the oracle on it; on a `safe` configuration a lost
    /// acknowledged write is an integrity error naming the first few.
    pub(super) fn judge(
        &mut self,
        pm: &PowerModel,
        best: &[Option<Copy>],
        at_cut: &[AtCut],
        t: u64,
        safe: bool,
    ) -> Result<Judged, SimError> {
        let oracle = self.oracle.as_mut().expect("power cuts keep the oracle");
        // Units whose acknowledged version was lost: (unit, version, found).
        let mut losses = Vec::new();
        let (mut unacked_lost, mut unacked_survived) = (0u64, 0u64);
        for lpn in 0..self.g.user_units as u32 {
            let found = best[lpn as usize].map(|c| c.version);
            let floor: Floor = oracle.floor_at(lpn, t);
            let ok = match found {
                None => floor.unmapped_ok,
                Some(v) => v >= floor.version,
            };
            if !ok {
                losses.push((lpn, floor.version, found));
            }
            let in_flight_write = oracle.is_written(lpn) && oracle.floor_at(lpn, u64::MAX) != floor;
            if in_flight_write && ok {
                if found == Some(oracle.issued(lpn)) {
                    unacked_survived += 1;
                } else {
                    unacked_lost += 1;
                }
            }
            if found != oracle.expected(lpn) || oracle.floor_at(lpn, u64::MAX) != floor {
                oracle.recovered(lpn, found, t);
            }
        }
        // Why each acknowledged version was lost.
        let mut why: std::collections::HashMap<u32, (u32, Option<LossReason>)> = losses
            .iter()
            .map(|&(lpn, version, _)| (lpn, (version, None)))
            .collect();
        if !why.is_empty() {
            self.visit_copies(pm, at_cut, t, |lpn, c, state| {
                // The gravest fate of a copy of it: destroyed on the flash
                // rather than never programmed.
                if let (Some(w), SlotAtCut::Lost(reason)) = (why.get_mut(&lpn), state) {
                    if c.version == w.0 && Some(reason) > w.1 {
                        w.1 = Some(reason);
                    }
                }
            });
        }
        let mut by_reason = LostByReason::default();
        let lost: Vec<LostWrite> = losses
            .iter()
            .map(|&(unit, acknowledged, recovered)| {
                let reason = why[&unit].1;
                by_reason.add(reason);
                LostWrite {
                    unit,
                    acknowledged,
                    recovered,
                    reason,
                }
            })
            .collect();
        let oracle = self.oracle.as_ref().expect("power cuts keep the oracle");
        let failures = if safe {
            &lost[..lost.len().min(8)]
        } else {
            &[]
        };
        if !failures.is_empty() {
            let list: Vec<String> = failures
                .iter()
                .map(|w| {
                    format!(
                        "unit {} acknowledged at version {}, recovered {} ({}; {})",
                        w.unit,
                        w.acknowledged,
                        w.recovered
                            .map_or("nothing".to_string(), |v| format!("version {v}")),
                        w.reason
                            .map_or("no copy of it was found", LossReason::describe),
                        oracle.recent(w.unit)
                    )
                })
                .collect();
            return Err(SimError::Integrity(format!(
                "integrity check failed: a power cut at {:.6} s lost {} acknowledged write(s) on a \
                 configuration that must not lose any: {}",
                t as f64 / 1e9,
                by_reason.total(),
                list.join("; ")
            )));
        }

        Ok(Judged {
            lost,
            by_reason,
            unacked_lost,
            unacked_survived,
        })
    }
}
