//! The integrity oracle: every mapping unit the host writes gets a version
//! number, every physical slot carries the version it holds, and every move
//! (GC copy, fold, wear-levelling or mode-switch relocation) carries it along.
//! A read is right when the slot the map points to holds the latest version
//! written, and a unit is mapped exactly when its last host operation was a
//! write (not a TRIM). A violation is reported with the unit, the version
//! expected and found, and the last operations on that unit. Off by default
//! (about 9 bytes per unit and slot); `[checks] integrity = true` or the
//! environment variable `NANDLAB_INTEGRITY=1` switch it on.

use std::collections::VecDeque;

/// How many recent stamped operations are kept for violation reports.
const HISTORY: usize = 4096;

/// A stamped operation, for reports.
#[derive(Debug, Clone, Copy)]
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
}

impl Stamp {
    fn lpn(self) -> u32 {
        match self {
            Stamp::Write { lpn, .. } | Stamp::Move { lpn, .. } | Stamp::Trim { lpn } => lpn,
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
        }
    }
}

/// Version stamps per logical unit (latest written) and per physical slot (held).
#[derive(Debug, Clone)]
pub struct Oracle {
    latest: Vec<u32>,
    held: Vec<u32>,
    /// Whether each unit's last host operation was a write (else never
    /// written, or trimmed since).
    written: Vec<bool>,
    history: VecDeque<Stamp>,
    /// Stamped operations so far (host writes, moves and TRIMs).
    pub stamped: u64,
    /// Units the host's reads have checked so far (counted by the drive).
    pub checked_reads: u64,
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
        }
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
        let v = &mut self.latest[lpn as usize];
        *v += 1;
        let version = *v;
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
    pub fn trim(&mut self, lpn: u32) {
        self.written[lpn as usize] = false;
        self.log(Stamp::Trim { lpn });
    }

    /// Checks that `slot` (where the map sends `lpn`, if anywhere) holds the
    /// latest version of `lpn`, and that `lpn` is mapped exactly when its last
    /// host operation was a write.
    pub fn check(&self, lpn: u32, slot: Option<u32>) -> Result<(), String> {
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
            Some(p) => Err(format!("integrity check failed: {p}; {}", self.recent(lpn))),
        }
    }

    /// The version slot `slot` holds (0: none written there).
    pub fn version_in(&self, slot: u32) -> u32 {
        self.held[slot as usize]
    }

    /// The last operations on `lpn` still in the history, oldest first.
    fn recent(&self, lpn: u32) -> String {
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
        let stale = o.check(2, Some(5)).unwrap_err();
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
            .contains("the acknowledged write is lost"));
        o.trim(2);
        assert!(o.check(2, None).is_ok());
        assert!(o.check(2, Some(12)).unwrap_err().contains("trimmed"));
        assert!(o.check(1, None).is_ok());
    }
}
