//! The integrity oracle: every mapping unit the host writes gets a version
//! number, every physical slot carries the version it holds, and every move
//! (GC copy, fold, wear-levelling or mode-switch relocation) carries it along.
//! A read is right when the slot the map points to holds the latest version
//! written, and a unit is mapped exactly when its last host operation was a
//! write (not a TRIM). A violation is reported with the unit, the version
//! expected and found, and the last operations on that unit. Off by default
//! (about 9 bytes per unit and slot); `[checks] integrity = true` or the
//! environment variable `NANDLAB_INTEGRITY=1` switch it on.

use crate::sanity::Broken;
use crate::sanity::{ensure, len, Checked};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// How many recent stamped operations are kept for violation reports.
const HISTORY: usize = 4096;

/// A stamped operation, for reports.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
enum Stamp {
    Write {
        lpn: u32,
        slot: u32,
        version: u32,
    },
    Move {
        lpn: u32,
        from: u32,
        to: u32,
        version: u32,
    },
    Trim {
        lpn: u32,
    },
    /// Recovery after a power cut settled the unit on `version` (None: unwritten).
    Recovered {
        lpn: u32,
        version: Option<u32>,
    },
}

impl Stamp {
    fn lpn(self) -> u32 {
        match self {
            Stamp::Write { lpn, .. }
            | Stamp::Move { lpn, .. }
            | Stamp::Trim { lpn }
            | Stamp::Recovered { lpn, .. } => lpn,
        }
    }

    fn describe(self) -> String {
        match self {
            Stamp::Write { slot, version, .. } => {
                format!("host write of version {version} to slot {slot}")
            }
            Stamp::Move {
                from, to, version, ..
            } => format!("move of version {version} from slot {from} to slot {to}"),
            Stamp::Trim { .. } => "TRIM".to_string(),
            Stamp::Recovered { version: None, .. } => {
                "power-loss recovery left it unwritten".to_string()
            }
            Stamp::Recovered {
                version: Some(v), ..
            } => format!("power-loss recovery settled it on version {v}"),
        }
    }
}

/// What the host has been told about each unit, for judging power cuts: the
/// versions handed out, when the last write (or TRIM) was acknowledged, and
/// the state before it with its acknowledgement time. A cut before both
/// acknowledgements (writes to one unit overlapping in flight) accepts any
/// state: the check can miss a loss then, never invent one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Acks {
    #[serde(with = "crate::memory::flat")]
    issued: Vec<u32>,
    /// When the unit's last operation was acknowledged (a write's request
    /// sets it once it completes; fill phases leave 0: at once).
    #[serde(with = "crate::memory::flat")]
    done: Vec<u64>,
    /// The state before the last operation, and when it was acknowledged.
    before: Vec<Floor>,
    #[serde(with = "crate::memory::flat")]
    before_done: Vec<u64>,
}

/// What a unit may read as after a cut: `version` or newer, or unwritten
/// if `unmapped_ok`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Floor {
    pub version: u32,
    pub unmapped_ok: bool,
}

/// Version stamps per logical unit (latest written) and per physical slot (held).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Oracle {
    /// The version a read must get (the latest written, or after a power
    /// cut what recovery found).
    #[serde(with = "crate::memory::flat")]
    latest: Vec<u32>,
    #[serde(with = "crate::memory::flat")]
    held: Vec<u32>,
    /// Whether each unit's last host operation was a write (else never
    /// written, or trimmed since).
    written: Vec<bool>,
    history: VecDeque<Stamp>,
    /// Stamped operations so far (host writes, moves and TRIMs).
    pub stamped: u64,
    /// Units the host's reads have checked so far (counted by the drive).
    pub checked_reads: u64,
    /// Kept on drives with power cuts.
    pub acks: Option<Acks>,
}

impl Oracle {
    pub fn new(units: u64, slots: u64) -> Oracle {
        Oracle {
            latest: vec![0; units as usize],
            held: vec![0; slots as usize],
            written: vec![false; units as usize],
            history: VecDeque::with_capacity(HISTORY),
            stamped: 0,
            checked_reads: 0,
            acks: None,
        }
    }

    /// Checks this (loaded) oracle's arrays against the geometry.
    pub fn check_loaded(&self, g: &crate::geometry::Geometry) -> Checked {
        len("oracle.latest", self.latest.len(), g.user_units)?;
        len("oracle.written", self.written.len(), g.user_units)?;
        len("oracle.held", self.held.len(), g.slots)?;
        if let Some(a) = &self.acks {
            for (name, l) in [
                ("issued", a.issued.len()),
                ("done", a.done.len()),
                ("before", a.before.len()),
                ("before_done", a.before_done.len()),
            ] {
                len(&format!("oracle acknowledgements.{name}"), l, g.user_units)?;
            }
        }
        ensure(self.history.len() <= HISTORY, || {
            "the oracle's history is too long".into()
        })
    }

    /// Keeps acknowledgements too (a drive with power cuts).
    pub fn track_acks(&mut self) {
        let n = self.latest.len();
        self.acks = Some(Acks {
            issued: vec![0; n],
            done: vec![0; n],
            before_done: vec![0; n],
            before: vec![
                Floor {
                    version: 0,
                    unmapped_ok: true
                };
                n
            ],
        });
    }

    /// The state of `lpn` after its last operation.
    fn state(&self, lpn: u32) -> Floor {
        let l = lpn as usize;
        match &self.acks {
            Some(a) if !self.written[l] => Floor {
                version: a.issued[l] + 1,
                unmapped_ok: true,
            },
            _ => Floor {
                version: self.latest[l],
                unmapped_ok: !self.written[l],
            },
        }
    }

    /// A new operation on `lpn` arrives: the state it replaces.
    fn arrives(&mut self, lpn: u32) {
        let state = self.state(lpn);
        if let Some(a) = &mut self.acks {
            let l = lpn as usize;
            a.before[l] = state;
            a.before_done[l] = a.done[l];
            a.done[l] = 0;
        }
    }

    /// The host's last write of `lpn` was acknowledged at `done`.
    #[inline]
    pub fn write_acknowledged(&mut self, lpn: u32, done: u64) {
        if let Some(a) = &mut self.acks {
            a.done[lpn as usize] = done;
        }
    }

    /// What `lpn` may read as after a cut at `t`.
    pub fn floor_at(&self, lpn: u32, t: u64) -> Floor {
        let l = lpn as usize;
        match &self.acks {
            Some(a) if a.done[l] > t && a.before_done[l] <= t => a.before[l],
            Some(a) if a.done[l] > t => Floor {
                version: 0,
                unmapped_ok: true,
            },
            _ => self.state(lpn),
        }
    }

    /// The version of `lpn` last handed out (a write in flight at a cut may
    /// be newer than what reads expect).
    pub fn issued(&self, lpn: u32) -> u32 {
        match &self.acks {
            Some(a) => a.issued[lpn as usize],
            None => self.latest[lpn as usize],
        }
    }

    /// The version a read of `lpn` must get (None: it must read as unwritten).
    pub fn expected(&self, lpn: u32) -> Option<u32> {
        self.written[lpn as usize].then(|| self.latest[lpn as usize])
    }

    /// The versions slots `range` hold.
    pub fn versions(&self, range: std::ops::Range<usize>) -> &[u32] {
        &self.held[range]
    }

    /// Whether `lpn`'s last operation was a write.
    pub fn is_written(&self, lpn: u32) -> bool {
        self.written[lpn as usize]
    }

    /// After a cut at `t`, recovery settled `lpn` on `version` (None: unwritten).
    pub fn recovered(&mut self, lpn: u32, version: Option<u32>, t: u64) {
        let l = lpn as usize;
        if let Some(v) = version {
            self.latest[l] = v;
        }
        self.written[l] = version.is_some();
        let state = self.state(lpn);
        if let Some(a) = &mut self.acks {
            a.done[l] = t;
            a.before[l] = state;
            a.before_done[l] = t;
        }
        self.log(Stamp::Recovered { lpn, version });
    }

    /// Recovery copied version `version` of `lpn` into `slot`.
    pub fn restored(&mut self, slot: u32, version: u32) {
        self.held[slot as usize] = version;
    }

    fn log(&mut self, stamp: Stamp) {
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(stamp);
        self.stamped += 1;
    }

    /// The host wrote a new version of `lpn` into `slot`.
    #[inline]
    pub fn host_write(&mut self, lpn: u32, slot: u32) {
        let version = match &mut self.acks {
            None => self.latest[lpn as usize] + 1,
            Some(_) => {
                self.arrives(lpn);
                let a = self.acks.as_mut().expect("acks kept");
                a.issued[lpn as usize] += 1;
                a.issued[lpn as usize]
            }
        };
        self.latest[lpn as usize] = version;
        self.held[slot as usize] = version;
        self.written[lpn as usize] = true;
        self.log(Stamp::Write { lpn, slot, version });
    }

    /// The contents of slot `from` (holding `lpn`) were copied into slot `to`.
    #[inline]
    pub fn moved(&mut self, lpn: u32, from: u32, to: u32) {
        let version = self.held[from as usize];
        self.held[to as usize] = version;
        self.log(Stamp::Move {
            lpn,
            from,
            to,
            version,
        });
    }

    /// The host trimmed `lpn`: it must read as unwritten until written again.
    #[inline]
    pub fn trim(&mut self, lpn: u32, t: u64) {
        self.arrives(lpn);
        if let Some(a) = &mut self.acks {
            a.done[lpn as usize] = t;
        }
        self.written[lpn as usize] = false;
        self.log(Stamp::Trim { lpn });
    }

    /// Checks that `slot` (where the map sends `lpn`, if anywhere) holds the
    /// latest version of `lpn`, and that `lpn` is mapped exactly when its last
    /// host operation was a write.
    pub fn check(&self, lpn: u32, slot: Option<u32>) -> Result<(), Broken> {
        let (latest, written) = (self.latest[lpn as usize], self.written[lpn as usize]);
        let problem = match slot {
            Some(s) if !written => Some(format!(
                "unit {lpn} was never written or was trimmed, but the map points to slot {s} (holding version {})",
                self.held[s as usize]
            )),
            Some(s) if self.held[s as usize] != latest => Some(format!(
                "unit {lpn}: expected version {latest}, found version {} in slot {s}, where the map points",
                self.held[s as usize]
            )),
            None if written => Some(format!(
                "unit {lpn}: expected version {latest}, found no mapping: the acknowledged write is lost"
            )),
            _ => None,
        };
        match problem {
            None => Ok(()),
            Some(p) => Err(format!("integrity check failed: {p}; {}", self.recent(lpn)).into()),
        }
    }

    /// The version slot `slot` holds (0: none written there).
    pub fn version_in(&self, slot: u32) -> u32 {
        self.held[slot as usize]
    }

    /// The last operations on `lpn` still in the history, oldest first.
    pub fn recent(&self, lpn: u32) -> String {
        let ops: Vec<String> = self
            .history
            .iter()
            .filter(|s| s.lpn() == lpn)
            .map(|s| s.describe())
            .collect();
        let tail = &ops[ops.len().saturating_sub(8)..];
        if tail.is_empty() {
            format!("no operation on it among the last {HISTORY} stamped")
        } else {
            format!("its last operations: {}", tail.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Oracle;

    #[test]
    fn stale_lost_and_resurrected_units_are_caught() {
        let mut o = Oracle::new(4, 16);
        o.host_write(2, 5);
        o.host_write(2, 9);
        assert!(o.check(2, Some(9)).is_ok());
        let stale = o.check(2, Some(5)).unwrap_err().0;
        assert!(
            stale.contains("expected version 2, found version 1 in slot 5")
                && stale.contains(
                    "host write of version 1 to slot 5, host write of version 2 to slot 9"
                ),
            "{stale}"
        );
        o.moved(2, 9, 12);
        assert!(o.check(2, Some(12)).is_ok());
        assert!(o
            .check(2, None)
            .unwrap_err()
            .0
            .contains("the acknowledged write is lost"));
        o.trim(2, 0);
        assert!(o.check(2, None).is_ok());
        assert!(o.check(2, Some(12)).unwrap_err().0.contains("trimmed"));
        assert!(o.check(1, None).is_ok());
    }

    #[test]
    fn a_cut_may_keep_or_lose_only_what_was_not_acknowledged() {
        let mut o = Oracle::new(2, 8);
        o.track_acks();
        o.host_write(0, 1);
        o.write_acknowledged(0, 20);
        let never = super::Floor {
            version: 1,
            unmapped_ok: true,
        };
        assert_eq!(o.floor_at(0, 15), never);
        let v1 = super::Floor {
            version: 1,
            unmapped_ok: false,
        };
        assert_eq!(o.floor_at(0, 20), v1);
        // A second write in flight: version 1 or 2 will do.
        o.host_write(0, 2);
        o.write_acknowledged(0, 40);
        assert_eq!(o.floor_at(0, 35), v1);
        o.trim(0, 50);
        assert_eq!(
            o.floor_at(0, 50),
            super::Floor {
                version: 3,
                unmapped_ok: true
            }
        );
        o.recovered(0, None, 60);
        o.host_write(0, 3);
        assert_eq!(o.issued(0), 3);
    }
}
