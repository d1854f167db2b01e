//! One SSD as the host sees it: a request comes over the link, writes stream
//! through the DRAM write buffer into the FTL's write frontier, reads gather
//! their units page by page (multi-plane where possible) from the dies.
//! Returns each request's completion time. Commands overlap, or (with
//! `command_order = "in-order"`) the controller takes each once the one
//! before it has issued its flash operations.
//!
//! Power cuts planned for a phase happen between commands: the FTL recovers
//! ([`Ftl::power_loss`]), RAM state (write buffer, read-ahead) is gone, and
//! commands wait until the drive is back.

mod power_cut;
mod read;
pub mod readahead;
mod state;
pub mod write_buffer;

use crate::config::{CommandOrder, Config, WriteCache};
use crate::drive::readahead::ReadAhead;
use crate::drive::write_buffer::WriteBuffer;
pub use crate::ftl::fill::FILL_CHUNK;
use crate::ftl::mapcache::MapAccess;
use crate::ftl::{Ftl, Programmed};
use crate::host::workload::{Op, Request};
use crate::media::wear::DataPattern;
use crate::power::CutPlan;
use crate::sanity::{ensure, same, Checked};
use crate::schedule::timeline::Timeline;
use crate::stats::power_loss::PowerLossEvent;
use crate::stats::Activity;
use crate::stats::Counters;
use crate::units::CLOCK_LIMIT_NS;
use crate::SimError;
use serde::{Deserialize, Serialize};

/// The FTL, its resource timeline and the write buffer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drive {
    pub ftl: Ftl,
    pub tl: Timeline,
    buffer: WriteBuffer,
    unit: Unit,
    multiplane: bool,
    read_ahead: Option<ReadAhead>,
    /// In-order command processing: when the controller may take the next
    /// command (None: commands are reordered and overlap freely).
    dispatch_free: Option<u64>,
    /// When the command being run had all its flash operations issued.
    issued: u64,
    /// Write-through: a write is acknowledged once its data is programmed.
    write_through: bool,
    /// Power cuts still to come in this phase.
    cuts: Option<CutPlan>,
    /// Commands arriving at or after this take the power path (next cut,
    /// or time to forget finished erases); MAX on a drive without cuts.
    power_check: u64,
    /// When the drive is back after the last cut (commands wait till then).
    back_at: u64,
    /// The configuration may lose acknowledged writes (documented unsafe).
    power_unsafe: bool,
    /// What the cuts did, since the caller last took them.
    pub power_events: Vec<PowerLossEvent>,
}

/// How often (simulated ns) the power path forgets finished erases.
const FORGET_EVERY_NS: u64 = 1_000_000;

/// The mapping unit, for byte ↔ unit arithmetic on every request: shifts
/// when its size is a power of two (as it nearly always is), else divisions.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Unit {
    size: u64,
    shift: Option<u32>,
}

impl Unit {
    fn new(size: u64) -> Unit {
        Unit {
            size,
            shift: size.is_power_of_two().then(|| size.trailing_zeros()),
        }
    }

    /// The unit holding byte `b`.
    #[inline]
    fn of(self, b: u64) -> u64 {
        match self.shift {
            Some(s) => b >> s,
            None => b / self.size,
        }
    }

    #[inline]
    fn is_aligned(self, b: u64) -> bool {
        match self.shift {
            Some(_) => b & (self.size - 1) == 0,
            None => b.is_multiple_of(self.size),
        }
    }

    /// The first unit that starts at or after byte `b`.
    #[inline]
    fn ceil(self, b: u64) -> u64 {
        self.of(b + self.size - 1)
    }
}

/// The flash read being assembled for a request: one page, or the same page
/// index on several planes of one die.
#[derive(Debug, Clone, Copy)]
struct ReadGroup {
    die: u32,
    page: u32,
    read_ns: u64,
    block: u32,
    planes: u64,
    units: u32,
}

impl Drive {
    pub fn new(cfg: &Config, seed: u64) -> Drive {
        let ftl = Ftl::new(cfg, seed);
        let unit = cfg.geometry.unit_size as u64;
        Drive {
            tl: Timeline::new(cfg),
            buffer: WriteBuffer::new(
                (cfg.device.write_buffer / unit).max(2 * ftl.stripe_units() as u64),
            ),
            unit: Unit::new(unit),
            multiplane: cfg.device.multiplane,
            read_ahead: (cfg.ftl.read_ahead >= unit)
                .then(|| ReadAhead::new(cfg.ftl.read_ahead / unit)),
            dispatch_free: (cfg.ftl.command_order == CommandOrder::InOrder).then_some(0),
            issued: 0,
            write_through: cfg.device.write_cache == WriteCache::Off,
            cuts: None,
            power_check: u64::MAX,
            back_at: 0,
            power_unsafe: !cfg.power_loss_unsafe().is_empty(),
            power_events: Vec::new(),
            ftl,
        }
    }

    /// Checks this drive, read back from a snapshot, against the one `cfg`
    /// builds: the same hardware and settings, every part's state in range
    /// and the map consistent (see [`crate::sanity`]).
    pub fn check_loaded(&self, cfg: &Config) -> Checked {
        let mut fresh = Drive::new(cfg, cfg.seed);
        if self.ftl.has_power_model() {
            fresh.enable_power_model(cfg);
        }
        let settings = |d: &Drive| (d.unit, d.multiplane, d.write_through, d.power_unsafe);
        same("the drive's settings", &settings(self), &settings(&fresh))?;
        ensure(
            self.dispatch_free.is_some() == fresh.dispatch_free.is_some()
                && self.read_ahead.is_some() == fresh.read_ahead.is_some(),
            || "the drive's command order or read-ahead differs from its config's".into(),
        )?;
        self.tl.check_loaded(&fresh.tl)?;
        self.buffer.check_loaded(&fresh.buffer)?;
        if let (Some(r), Some(f)) = (&self.read_ahead, &fresh.read_ahead) {
            r.check_loaded(f)?;
        }
        self.ftl.check_loaded(&fresh.ftl)
    }

    /// Everything counted so far, host side and flash side.
    #[inline]
    pub fn counters(&self) -> Counters {
        self.ftl.counters()
    }

    /// Whether flash operations take time (fill phases lay data out at
    /// memory speed, untimed phases move data only).
    pub fn set_timed(&mut self, timed: bool) {
        self.tl.enabled = timed;
    }

    /// The host is idle until `until`: background work (GC, idle folding)
    /// runs while the dies would otherwise be idle.
    pub fn idle(&mut self, until: u64) -> Result<(), SimError> {
        self.ftl.background_gc(until, &mut self.tl)?;
        self.ftl.patrol(until, &mut self.tl)
    }

    /// What the dies, channels, link and controller have done so far (energy).
    pub fn activity(&self) -> Activity {
        self.tl.activity
    }

    /// When every die, channel and the link have finished what is booked.
    pub fn all_idle_at(&self) -> u64 {
        self.tl.all_idle_at()
    }

    /// Host data units in the write buffer waiting for their program at `t`.
    pub fn buffer_dirty_units(&self, t: u64) -> u64 {
        self.buffer.dirty_at(t)
    }

    /// Flash work booked beyond `t` on the busiest die, ns.
    pub fn die_backlog_ns(&self, t: u64) -> u64 {
        self.tl.max_backlog_ns(t)
    }

    /// What the host writes from now on (program time, and the states its
    /// cells take for the threshold-voltage error model).
    pub fn set_data(&mut self, data: &DataPattern) {
        self.ftl.set_data(data);
    }

    /// Whether the drive keeps what power cuts need.
    pub fn has_power_model(&self) -> bool {
        self.ftl.has_power_model()
    }

    /// A fill phase lays out `count` units, the i-th at `lpn_of(i)`, at memory speed.
    pub fn fill(
        &mut self,
        count: u64,
        lpn_of: impl Fn(u64) -> u32,
    ) -> Result<(), crate::ftl::fill::FillStopped> {
        self.ftl.fill(count, lpn_of, &mut self.tl)
    }

    /// A sequential fill phase lays out units `first` .. `first + count`
    /// in one go, as [`Drive::fill`] would in chunks of [`FILL_CHUNK`], in
    /// time proportional to the blocks it opens, when the drive maps
    /// nothing yet; returns false (having done nothing) otherwise.
    pub fn fill_in_order(&mut self, first: u32, count: u64) -> Result<bool, SimError> {
        self.ftl.fill_in_order(first, count, &mut self.tl)
    }

    /// A trim phase unmaps unit `lpn` at `t`.
    pub fn trim_unit(&mut self, lpn: u32, t: u64) {
        self.ftl.trim(lpn, t);
    }

    /// A fill (`fill`) or trim phase laid out `bytes`: counted; after a
    /// fill the open page is programmed and flash operations take time again.
    pub fn laid_out(&mut self, fill: bool, bytes: u64) {
        self.ftl.count_laid_out(fill, bytes);
        if fill {
            self.flush();
            self.tl.enabled = true;
        }
    }

    /// Runs one request arriving at `t`; returns when it completes.
    #[inline]
    pub fn submit(&mut self, req: Request, t: u64) -> Result<u64, SimError> {
        if t >= CLOCK_LIMIT_NS {
            // The config's times add up past what 64 bits of nanoseconds hold.
            return Err(SimError::Unsupported(format!(
                "a request arrives {:.3e} s into the run, past the 292 years the simulated clock \
                 takes: the config's times add up past it (a large time_scale, a low rate, long \
                 idle gaps)",
                t as f64 / 1e9,
            )));
        }
        let arrival = t;
        let t = if t >= self.power_check || t < self.back_at {
            self.power_path(t)?
        } else {
            t
        };
        let done = match self.dispatch_free {
            None => self.run(req, t)?,
            // In order: the controller takes this command once the previous
            // one's flash operations have been issued.
            Some(free) => {
                let done = self.run(req, t.max(free))?;
                self.dispatch_free = Some(self.issued);
                done
            }
        };
        self.tl.activity.command(arrival, done);
        Ok(done)
    }

    #[inline]
    fn run(&mut self, req: Request, t: u64) -> Result<u64, SimError> {
        match req.op {
            Op::Write => self.write(req, t),
            Op::Read => {
                if self.has_oracle() {
                    self.verify(req)?;
                }
                let done = self.read(req, t);
                self.ftl.reclaim_due(t, &mut self.tl)?;
                Ok(done)
            }
            Op::Trim => Ok(self.trim(req, t)),
        }
    }

    /// With the integrity oracle on: every unit a read covers maps to its
    /// latest acknowledged write (or, never written or trimmed, to nothing).
    fn verify(&mut self, req: Request) -> Result<(), SimError> {
        let first = self.unit.of(req.offset);
        let last = self.unit.of(req.offset + req.len as u64 - 1);
        for lpn in first..=last {
            self.ftl
                .check_read(lpn as u32)
                .map_err(|e| SimError::Integrity(e.into()))?;
        }
        self.ftl.count_checked_reads(last - first + 1);
        Ok(())
    }

    /// Hints a request two ahead of the one being issued, so its map entry is
    /// in cache in time.
    #[inline]
    pub fn prefetch(&self, req: &Request) {
        self.ftl.will_touch(self.unit.of(req.offset) as u32);
    }

    /// Hints the request after the one being issued (its map entry hinted a
    /// request ago): a read's first unit's block record in the bit-error
    /// model, which its decode reads (on a large drive, far from the cache).
    #[inline]
    pub fn prefetch_decoding(&self, req: &Request) {
        if req.op == Op::Read {
            self.ftl.will_decode(self.unit.of(req.offset) as u32);
        }
    }

    /// The write buffer frees the units of program `p` when it completes;
    /// returns when that is (0: no program).
    fn release(&mut self, p: Option<Programmed>) -> u64 {
        match p {
            Some(p) => {
                self.buffer.release_at(p.units as u64, p.done);
                p.done
            }
            None => 0,
        }
    }

    /// Reads the old contents of a partially overwritten unit; returns when they are in RAM.
    fn read_old_unit(&mut self, lpn: u32, t: u64) -> u64 {
        match self.ftl.lookup(lpn) {
            Some(slot) if self.ftl.is_programmed(slot) => {
                let (die, _, read_ns) = self.ftl.read_target(slot);
                self.ftl.count_host_sensings(1);
                self.tl.flash_read(t, die, read_ns, 1)
            }
            _ => t,
        }
    }

    fn write(&mut self, req: Request, t: u64) -> Result<u64, SimError> {
        let (unit, size) = (self.unit, self.unit.size);
        let end_byte = req.offset + req.len as u64;
        let first = unit.of(req.offset);
        let last = unit.of(end_byte - 1);
        self.ftl
            .count_write_request(req.len as u64, last - first + 1);
        if let Some(ra) = &mut self.read_ahead {
            ra.invalidate(first, last);
        }
        let cmd = self.tl.command(t);
        self.issued = cmd;
        // Partial units are read, merged and written whole (read-modify-write).
        let mut merged_ready = cmd;
        if !unit.is_aligned(req.offset) {
            merged_ready = merged_ready.max(self.read_old_unit(first as u32, cmd));
        }
        if !unit.is_aligned(end_byte) && (last != first || unit.is_aligned(req.offset)) {
            merged_ready = merged_ready.max(self.read_old_unit(last as u32, cmd));
        }
        let chunk = self.ftl.stripe_units() as u64;
        let mut done = cmd;
        let mut programmed = 0;
        let mut lpn = first;
        while lpn <= last {
            let n = (last - lpn + 1).min(chunk);
            let space = self.buffer.acquire(n, cmd);
            self.issued = self.issued.max(space);
            let lo = req.offset.max(lpn * size);
            let hi = end_byte.min((lpn + n) * size);
            // The data streams over the link into DRAM (cut-through): the
            // slower of the two sets when it is in.
            let on_link = self.tl.link_transfer(space, hi - lo, true);
            done = on_link.max(self.tl.dram_transfer(space, hi - lo));
            let ready = done.max(merged_ready);
            for l in lpn..lpn + n {
                let p = self.ftl.write_unit(l as u32, ready, &mut self.tl, true)?;
                programmed = programmed.max(self.release(p));
                if ready > done {
                    self.ftl.note_arrival(l as u32, done);
                }
            }
            lpn += n;
        }
        if self.write_through {
            // Acknowledged once on flash: the open page is padded and programmed.
            let p = self.ftl.flush_open_page(&mut self.tl);
            done = done.max(programmed).max(self.release(p));
        }
        self.ftl.acknowledged(first..=last, done);
        Ok(done)
    }

    fn trim(&mut self, req: Request, t: u64) -> u64 {
        // Only whole units are unmapped; partial ones keep their data.
        let first = self.unit.ceil(req.offset);
        let end = self.unit.of(req.offset + req.len as u64);
        self.ftl.count_trim_request(req.len as u64);
        if let (Some(ra), true) = (&mut self.read_ahead, first < end) {
            ra.invalidate(first, end - 1);
        }
        let cmd = self.tl.command(t);
        self.issued = cmd;
        for lpn in first..end {
            self.ftl
                .map_access(lpn as u32, MapAccess::Update, cmd, &mut self.tl);
            self.ftl.trim(lpn as u32, cmd);
        }
        cmd
    }

    /// Programs the partly filled write-frontier page (padding the rest), so
    /// that nothing waits in the buffer. Returns when the program completes.
    pub fn flush(&mut self) -> u64 {
        let p = self.ftl.flush_open_page(&mut self.tl);
        self.release(p)
    }

    /// A host FLUSH: the open page programmed, and every program the write
    /// buffer waits on done. Returns when all acknowledged data is on flash.
    pub fn flush_all(&mut self) -> u64 {
        let page = self.flush();
        page.max(self.buffer.drained_at())
    }
}
