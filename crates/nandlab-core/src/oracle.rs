//! The integrity oracle: every mapping unit the host writes gets a version
//! number, every physical slot carries the version it holds, and GC copies
//! carry it along. A read is right when the slot the map points to holds the
//! latest version written. Off by default (it costs 4 bytes per unit and
//! slot); tests switch it on.

/// Version stamps per logical unit (latest written) and per physical slot (held).
#[derive(Debug, Clone)]
pub struct Oracle {
    latest: Vec<u32>,
    held: Vec<u32>,
    /// Stamped operations so far (host writes and GC copies).
    pub checked_writes: u64,
}

impl Oracle {
    pub fn new(units: u64, slots: u64) -> Oracle {
        Oracle {
            latest: vec![0; units as usize],
            held: vec![0; slots as usize],
            checked_writes: 0,
        }
    }

    /// The host wrote a new version of `lpn` into `slot`.
    #[inline]
    pub fn host_write(&mut self, lpn: u32, slot: u32) {
        let v = &mut self.latest[lpn as usize];
        *v += 1;
        self.held[slot as usize] = *v;
        self.checked_writes += 1;
    }

    /// GC (or any move) copied the contents of slot `from` into slot `to`.
    #[inline]
    pub fn moved(&mut self, from: u32, to: u32) {
        self.held[to as usize] = self.held[from as usize];
        self.checked_writes += 1;
    }

    /// Checks that `slot` (where the map sends `lpn`, if anywhere) holds the
    /// latest version of `lpn`; an unmapped unit must never have been written
    /// since its last TRIM, which the caller knows.
    pub fn check(&self, lpn: u32, slot: Option<u32>) -> Result<(), String> {
        let latest = self.latest[lpn as usize];
        match slot {
            Some(s) if self.held[s as usize] != latest => Err(format!(
                "unit {lpn}: the map points to slot {s} holding version {}, but the latest write is version {latest}",
                self.held[s as usize]
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Oracle;

    #[test]
    fn a_stale_slot_is_caught() {
        let mut o = Oracle::new(4, 16);
        o.host_write(2, 5);
        o.host_write(2, 9);
        assert!(o.check(2, Some(9)).is_ok());
        assert!(o
            .check(2, Some(5))
            .unwrap_err()
            .contains("version 1, but the latest write is version 2"));
        o.moved(9, 12);
        assert!(o.check(2, Some(12)).is_ok());
    }
}
