//! Host reads at the drive: the units a read covers grouped by flash page
//! (and plane, with multi-plane reads), sensed on their dies and sent over
//! the link; units still in the write buffer come from RAM; a sequential
//! stream is read ahead into the read-ahead window. With an error model,
//! each page read is decoded, retried or reported uncorrectable.

use super::{Drive, ReadGroup};
use crate::ftl::mapcache::MapAccess;
use crate::host::workload::Request;

impl Drive {
    pub(super) fn read(&mut self, req: Request, t: u64) -> u64 {
        let first = self.unit.of(req.offset);
        let last = self.unit.of(req.offset + req.len as u64 - 1);
        self.ftl.count_read_request(req.len as u64);
        let cmd = self.tl.command(t);
        self.issued = cmd;
        let Some(mut ra) = self.read_ahead.take() else {
            return self.read_units(req, first, last, cmd);
        };
        let done = if ra.covers(first, last) {
            // Each unit streams to the host once its flash read has landed.
            let mut done = cmd;
            for u in first..=last {
                let bytes = bytes_in(&req, u, self.unit.size);
                if self.ftl.lookup(u as u32).is_none() {
                    // Never written: the window holds its zeroes (as `read_units` counts them).
                    self.ftl.count_unwritten_read(bytes);
                }
                let ready = cmd.max(ra.ready(u));
                done = done.max(self.tl.link_transfer(ready, bytes, false));
            }
            done
        } else {
            self.read_units(req, first, last, cmd)
        };
        if let Some((from, to)) = ra.after_read(first, last) {
            let to = to.min(self.ftl.geometry().user_units);
            if from < to {
                let ready = self.read_ahead_units(from, to, cmd);
                ra.fill(from, to, |u| ready[(u - from) as usize]);
            }
        }
        self.read_ahead = Some(ra);
        done
    }

    /// Reads units `from..to` into controller RAM from `t` (read-ahead),
    /// priority over queued work), a page at a time; returns when each unit is there.
    pub(super) fn read_ahead_units(&mut self, from: u64, to: u64, t: u64) -> Vec<u64> {
        let mut ready = vec![t; (to - from) as usize];
        // The page being gathered, and the index of its first unit in `ready`.
        let mut group: Option<(ReadGroup, usize)> = None;
        for (i, lpn) in (from..to).enumerate() {
            ready[i] = self
                .ftl
                .map_access(lpn as u32, MapAccess::Lookup, t, &mut self.tl);
            let Some(slot) = self
                .ftl
                .lookup_to_read(lpn as u32)
                .filter(|&s| self.ftl.is_programmed(s))
            else {
                continue;
            };
            let block = self.ftl.geometry().block_of_slot(slot);
            let (die, page, read_ns) = self.ftl.read_target(slot);
            if let Some((g, first)) = &mut group {
                if g.block == block && g.page == page {
                    g.units += 1;
                    continue;
                }
                self.read_ahead_page(*g, &mut ready[*first..i]);
            }
            let g = ReadGroup {
                die,
                page,
                read_ns,
                block,
                planes: 1,
                units: 1,
            };
            group = Some((g, i));
        }
        if let Some((g, first)) = group {
            self.read_ahead_page(g, &mut ready[first..]);
        }
        ready
    }

    /// Reads one page for read-ahead, with a host read's priority on the die
    /// (it serves the host's stream); `ready` are its units (with any units
    /// between them that are not on flash) and becomes when they are in RAM.
    pub(super) fn read_ahead_page(&mut self, g: ReadGroup, ready: &mut [u64]) {
        self.ftl.count_host_sensings(1);
        let start = ready.iter().copied().max().unwrap_or(0);
        let (_, sensed) = self.tl.host_read(start, g.die, g.read_ns, g.units);
        let done = self.decoded(g, sensed);
        ready.fill(done);
    }

    /// Reads units `first..=last` (those `req` covers) from flash, or RAM
    /// for unwritten units and those still in the write buffer; returns when
    /// the host has them.
    pub(super) fn read_units(&mut self, req: Request, first: u64, last: u64, cmd: u64) -> u64 {
        // Bytes of the request still to send: a request smaller than its
        // units (a 512 B read) sends only its own bytes over the link.
        let mut unsent = req.len as u64;
        let unit = self.unit;
        let mut done = cmd;
        let mut from_ram = 0u64;
        let mut group: Option<ReadGroup> = None;
        let ppd = self.ftl.geometry().planes_per_die;
        // When the mapping entries read so far are known (DRAM-less drives
        // may first read translation pages).
        let mut mapped = cmd;
        for lpn in first..=last {
            mapped =
                mapped.max(
                    self.ftl
                        .map_access(lpn as u32, MapAccess::Lookup, cmd, &mut self.tl),
                );
            let slot = match self.ftl.lookup_to_read(lpn as u32) {
                Some(s) if self.ftl.is_programmed(s) => s,
                // Still in the write buffer: no flash access.
                Some(_) => {
                    from_ram += unit.size;
                    continue;
                }
                // Never written: zeroes, from the controller (the bytes of
                // the unit the request reads counted).
                None => {
                    from_ram += unit.size;
                    self.ftl
                        .count_unwritten_read(bytes_in(&req, lpn, unit.size));
                    continue;
                }
            };
            let block = self.ftl.geometry().block_of_slot(slot);
            self.ftl.prefetch_errors(block);
            let plane_bit = 1u64 << (self.ftl.geometry().plane_of_block(block) % ppd);
            let (die, page, read_ns) = self.ftl.read_target(slot);
            if let Some(g) = &mut group {
                let same_page = g.block == block && g.page == page;
                let other_plane =
                    self.multiplane && g.die == die && g.page == page && g.planes & plane_bit == 0;
                if same_page || other_plane {
                    g.units += 1;
                    g.planes |= plane_bit;
                    g.block = block;
                    g.read_ns = g.read_ns.max(read_ns);
                    continue;
                }
                done = done.max(self.flash_read_group(*g, mapped, &mut unsent));
            }
            group = Some(ReadGroup {
                die,
                page,
                read_ns,
                block,
                planes: plane_bit,
                units: 1,
            });
        }
        if let Some(g) = group {
            done = done.max(self.flash_read_group(g, mapped, &mut unsent));
        }
        if from_ram > 0 {
            done = done.max(self.tl.link_transfer(mapped, from_ram.min(unsent), false));
        }
        done
    }

    /// Senses a read group no earlier than `t` and sends its data to the
    /// host; returns when the host has it.
    pub(super) fn flash_read_group(&mut self, g: ReadGroup, t: u64, unsent: &mut u64) -> u64 {
        self.ftl.count_host_sensings(g.planes.count_ones() as u64);
        let (start, sensed) = self.tl.host_read(t, g.die, g.read_ns, g.units);
        self.issued = self.issued.max(start);
        let in_ram = self.decoded(g, sensed);
        let bytes = (g.units as u64 * self.unit.size).min(*unsent);
        *unsent -= bytes;
        if bytes == 0 {
            return in_ram;
        }
        self.tl.link_transfer(in_ram, bytes, false)
    }

    /// When a read group sensed and in controller RAM at `t` is decoded:
    /// with an error model, a hard decode, then each read-retry step (a new
    /// sensing and transfer, and a hard decode), then a soft decode's extra
    /// sensings and its decode; an uncorrectable read has taken them all.
    fn decoded(&mut self, g: ReadGroup, t: u64) -> u64 {
        let Some(outcome) = self.ftl.decode_read(g.block, g.page, g.units, t) else {
            return t;
        };
        let s = &self
            .ftl
            .errors()
            .expect("an outcome needs the model")
            .settings;
        let (decode_ns, soft_reads, soft_decode_ns) = (s.decode_ns, s.soft_reads, s.soft_decode_ns);
        let mut done = t + decode_ns;
        for _ in 0..outcome.retries {
            done = self.tl.host_read(done, g.die, g.read_ns, g.units).1 + decode_ns;
        }
        let mut sensings = outcome.retries as u64;
        if outcome.soft {
            for _ in 0..soft_reads {
                done = self.tl.host_read(done, g.die, g.read_ns, g.units).1;
            }
            done += soft_decode_ns;
            sensings += soft_reads as u64;
        }
        self.ftl
            .count_host_sensings(sensings * g.planes.count_ones().max(1) as u64);
        done
    }
}

/// The bytes of unit `u` (of `size` bytes) that `req` covers.
#[inline]
fn bytes_in(req: &Request, u: u64, size: u64) -> u64 {
    let end = req.offset + req.len as u64;
    end.min((u + 1) * size) - req.offset.max(u * size)
}
