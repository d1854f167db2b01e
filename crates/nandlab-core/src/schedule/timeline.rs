//! Time on the drive's shared resources. Each resource (host link in each
//! direction, each channel bus, each die) has a "free at" time; an operation
//! starts at the latest of the times it needs and pushes them forward. All
//! times are integer nanoseconds, so runs are bit-identical everywhere.
//!
//! Channel and host-link transfers are short and go into the earliest gap
//! that fits, so a die booked far ahead (GC) does not block its channel's
//! other dies, and on a half-duplex link (SATA) a command need not wait for
//! the data of reads still being sensed.
//!
//! Host reads may get ahead of what is booked on a die, and suspend a
//! program or erase in progress: see [`die_queue`](super::die_queue).
//!
//! With `[device] dram_rate`, host write data also crosses the controller's
//! DRAM, a bus like the others.

use super::die_queue::{Die, OpKind};
use crate::config::{Config, Suspend};
use crate::geometry::FastDiv;
use crate::sanity::{ensure, same, Checked};
use crate::stats::energy::Activity;
use crate::units::transfer_ns;
use serde::{Deserialize, Serialize};

/// A bus (a flash channel, or the host link in one direction): short
/// transfers booked at the earliest gap that fits, so that the transfers of
/// a die busy far ahead (say, with GC) interleave with those of the
/// channel's other dies instead of blocking them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Bus {
    /// Busy intervals (start, end), sorted, not overlapping; those before
    /// `head` have ended and wait to be dropped.
    busy: Vec<(u64, u64)>,
    head: usize,
}

impl Bus {
    /// Books `len` ns at the earliest gap at or after `t`, at time `now` (no
    /// booking ever starts before `now`). Returns the transfer's end.
    #[inline]
    fn book(&mut self, now: u64, t: u64, len: u64) -> u64 {
        while self.head < self.busy.len() && self.busy[self.head].1 <= now {
            self.head += 1;
        }
        if self.head > 32 && self.head * 2 > self.busy.len() {
            self.busy.drain(..self.head);
            self.head = 0;
        }
        // Most bookings start after everything booked: append.
        let last_end = self.busy[self.head..].last().map_or(0, |&(_, e)| e);
        if last_end < t || self.head == self.busy.len() {
            self.busy.push((t, t + len));
            return t + len;
        }
        let live = &self.busy[self.head..];
        let mut i = self.head + live.partition_point(|&(_, e)| e <= t);
        let mut start = t;
        while i < self.busy.len() {
            let (a, b) = self.busy[i];
            if a >= start + len {
                break;
            }
            start = start.max(b);
            i += 1;
        }
        let end = start + len;
        let touches_prev = i > self.head && self.busy[i - 1].1 == start;
        let touches_next = i < self.busy.len() && self.busy[i].0 == end;
        match (touches_prev, touches_next) {
            (true, true) => {
                self.busy[i - 1].1 = self.busy[i].1;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => self.busy.insert(i, (start, end)),
        }
        end
    }

    /// When the last booked transfer ends.
    fn free(&self) -> u64 {
        self.busy.last().map_or(0, |&(_, e)| e)
    }
}

/// Free-at times of every resource, and the costs of moving data.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Timeline {
    /// When false (fill phases), operations cost no time.
    pub enabled: bool,
    dies: Vec<Die>,
    /// Operations issued to a die at once, and what a read may suspend.
    depth: usize,
    suspend: Suspend,
    channels: Vec<Bus>,
    /// The controller DRAM host write data crosses, and its rate (bytes/s).
    dram: Option<(Bus, u64)>,
    /// Host link: [host→drive, drive→host]; `out` is 0 on a half-duplex link.
    links: [Bus; 2],
    out: usize,
    /// The latest command's arrival: nothing is booked on the link before it.
    link_now: u64,
    pub command_ns: u64,
    link_rate: u64,
    /// The last link transfer's size and time (requests mostly repeat a size;
    /// the exact time costs a 128-bit division).
    link_memo: (u64, u64),
    /// Channel transfer time of k mapping units, k = 0..=units per multi-plane page.
    chan_units_ns: Vec<u64>,
    dies_per_channel: FastDiv,
    unit_bytes: u64,
    /// What the dies, channels, link and controller have done (energy).
    pub activity: Activity,
}

impl Timeline {
    /// Checks this (loaded) timeline against `fresh`, one its config
    /// builds: the same dies, channels and link, and booking queues whose
    /// bookkeeping adds up.
    pub fn check_loaded(&self, fresh: &Timeline) -> Checked {
        let settings = |t: &Timeline| {
            let dies: Vec<bool> = t.dies.iter().map(Die::has_priority).collect();
            let fixed = (
                t.out,
                t.command_ns,
                t.link_rate,
                t.dies_per_channel,
                t.unit_bytes,
            );
            let dram = t.dram.as_ref().map(|d| d.1);
            let queue = (t.depth, t.suspend, dram);
            (
                dies,
                t.channels.len(),
                fixed,
                t.chan_units_ns.clone(),
                queue,
            )
        };
        same("the drive's timeline", &settings(self), &settings(fresh))?;
        let mut buses = self.channels.iter().chain(&self.links);
        ensure(buses.all(|b| b.head <= b.busy.len()), || {
            "a bus's bookings are out of order".into()
        })?;
        self.dies.iter().try_for_each(Die::check_loaded)
    }

    pub fn new(cfg: &Config) -> Timeline {
        let (g, d) = (&cfg.geometry, &cfg.device);
        let max_units = (g.units_per_page * g.planes_per_die) as u64;
        Timeline {
            enabled: true,
            dies: vec![Die::new(cfg.ftl.read_priority); g.dies as usize],
            depth: cfg.ftl.die_queue_depth as usize,
            suspend: d.suspend,
            channels: vec![Bus::default(); g.channels as usize],
            dram: d.dram_rate.map(|r| (Bus::default(), r)),
            links: [Bus::default(), Bus::default()],
            link_now: 0,
            out: d.interface.full_duplex as usize,
            command_ns: d.interface.command_overhead_ns,
            link_rate: d.interface.link_rate,
            link_memo: (0, 0),
            chan_units_ns: (0..=max_units)
                .map(|k| transfer_ns(k * g.unit_size as u64, d.channel_rate))
                .collect(),
            dies_per_channel: g.fast.dies_per_channel,
            unit_bytes: g.unit_size as u64,
            activity: Activity::default(),
        }
    }

    /// A sensing of `read_ns` and `units` units over the channel.
    #[inline]
    fn worked_read(&mut self, read_ns: u64, units: u32) {
        self.activity.read_ns += read_ns;
        self.activity.channel_bytes += units as u64 * self.unit_bytes;
    }

    #[inline]
    fn channel(&self, die: u32) -> usize {
        self.dies_per_channel.quotient(die) as usize
    }

    /// A command crosses the link to the drive no earlier than `t`; returns when it has.
    #[inline]
    pub fn command(&mut self, t: u64) -> u64 {
        if !self.enabled {
            return t;
        }
        self.link_now = self.link_now.max(t);
        self.links[0].book(self.link_now, t, self.command_ns)
    }

    /// Moves `bytes` host→drive (`to_drive`) or drive→host, starting no earlier than `t`.
    #[inline]
    pub fn link_transfer(&mut self, t: u64, bytes: u64, to_drive: bool) -> u64 {
        if !self.enabled {
            return t;
        }
        let i = if to_drive { 0 } else { self.out };
        if self.link_memo.0 != bytes {
            self.link_memo = (bytes, transfer_ns(bytes, self.link_rate));
        }
        self.activity.link_ns += self.link_memo.1;
        self.links[i].book(self.link_now, t, self.link_memo.1)
    }

    /// Moves `bytes` of host write data into the controller DRAM from `t`
    /// (no time unless `[device] dram_rate` is set).
    #[inline]
    pub fn dram_transfer(&mut self, t: u64, bytes: u64) -> u64 {
        match &mut self.dram {
            Some((bus, rate)) if self.enabled => {
                let len = transfer_ns(bytes, *rate);
                bus.book(self.link_now, t, len)
            }
            _ => t,
        }
    }

    /// Reads a page on `die` (sense `read_ns`) behind everything booked there,
    /// then moves `units` mapping units to the controller (GC and
    /// read-modify-write reads). Returns when the data is in the controller.
    #[inline]
    pub fn flash_read(&mut self, t: u64, die: u32, read_ns: u64, units: u32) -> u64 {
        if !self.enabled {
            return t;
        }
        let (d, c) = (die as usize, self.channel(die));
        self.worked_read(read_ns, units);
        let start = t.max(self.dies[d].free);
        let xfer_end =
            self.channels[c].book(t, start + read_ns, self.chan_units_ns[units as usize]);
        // The die's page register holds the data until it has crossed the bus.
        self.dies[d].book(self.link_now, start, xfer_end, OpKind::Read);
        xfer_end
    }

    /// A host read: like [`flash_read`](Self::flash_read), but with read
    /// priority it waits only for what it cannot overtake on the die (see
    /// [`die_queue`](super::die_queue)), or suspends it. Returns when the die
    /// starts sensing and when the data is in the controller.
    #[inline]
    pub fn host_read(&mut self, t: u64, die: u32, read_ns: u64, units: u32) -> (u64, u64) {
        if !self.enabled {
            return (t, t);
        }
        let (d, c) = (die as usize, self.channel(die));
        self.worked_read(read_ns, units);
        let slot = self.dies[d].read_start(t, self.depth, &self.suspend);
        let xfer_end =
            self.channels[c].book(t, slot.start + read_ns, self.chan_units_ns[units as usize]);
        self.dies[d].insert_read(slot, xfer_end, &self.suspend);
        (slot.start, xfer_end)
    }

    /// Moves `units` mapping units to `die` once they are ready at `t`, then
    /// programs them (`program_ns`). Returns when the program completes.
    #[inline]
    pub fn flash_program(&mut self, t: u64, die: u32, program_ns: u64, units: u32) -> u64 {
        if !self.enabled {
            return t;
        }
        let (d, c) = (die as usize, self.channel(die));
        self.activity.program_ns += program_ns;
        self.activity.channel_bytes += units as u64 * self.unit_bytes;
        // The die's data register takes the page while the previous operation
        // finishes (cache program), not earlier.
        let xfer = self.chan_units_ns[units as usize];
        let xfer_end =
            self.channels[c].book(t, t.max(self.dies[d].free.saturating_sub(xfer)), xfer);
        let start = xfer_end.max(self.dies[d].free);
        let done = start + program_ns;
        self.dies[d].book(self.link_now, start, done, OpKind::Program);
        done
    }

    /// Erases a block on `die` no earlier than `t`; returns when done.
    #[inline]
    pub fn erase(&mut self, t: u64, die: u32, erase_ns: u64) -> u64 {
        if !self.enabled {
            return t;
        }
        let d = die as usize;
        self.activity.erase_ns += erase_ns;
        let start = t.max(self.dies[d].free);
        self.dies[d].book(self.link_now, start, start + erase_ns, OpKind::Erase);
        start + erase_ns
    }

    /// Power came back at `t`: whatever was booked is gone, every resource
    /// is idle from `t` on.
    pub fn restart(&mut self, t: u64) {
        for die in &mut self.dies {
            *die = die.restarted(t);
        }
        let dram = self.dram.iter_mut().map(|d| &mut d.0);
        for bus in self
            .channels
            .iter_mut()
            .chain(self.links.iter_mut())
            .chain(dram)
        {
            *bus = Bus {
                busy: vec![(t, t)],
                head: 0,
            };
        }
        self.link_now = t;
    }

    /// When `die` finishes the work queued on it.
    #[inline]
    pub fn die_free_at(&self, die: u32) -> u64 {
        self.dies[die as usize].free
    }

    /// When every resource is idle.
    pub fn all_idle_at(&self) -> u64 {
        let dies = self.dies.iter().map(|l| l.free);
        let dram = self.dram.iter().map(|d| d.0.free());
        dies.chain(self.channels.iter().map(Bus::free))
            .chain(self.links.iter().map(Bus::free))
            .chain(dram)
            .max()
            .unwrap_or(0)
    }

    /// The most flash work booked on any die beyond `t`, in ns: the backlog
    /// the firmware holds (write buffer flushes and GC) for its busiest die.
    pub fn max_backlog_ns(&self, t: u64) -> u64 {
        self.dies.iter().map(|d| d.backlog_ns(t)).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::Bus;

    #[test]
    fn bus_transfers_fill_gaps_and_never_overlap() {
        let mut bus = Bus::default();
        assert_eq!(bus.book(0, 100, 10), 110);
        assert_eq!(bus.book(0, 0, 10), 10);
        // Does not fit in [10, 100) after 95: goes after 110.
        assert_eq!(bus.book(0, 95, 10), 120);
        // Fits in the gap [10, 100).
        assert_eq!(bus.book(0, 50, 10), 60);
        assert_eq!(bus.book(0, 0, 10), 20);
        let mut v = bus.busy[bus.head..].to_vec();
        v.sort();
        assert!(v.windows(2).all(|w| w[0].1 <= w[1].0), "{v:?}");
        assert_eq!(bus.free(), 120);
    }
}
