//! The check of a paused phase read back from a snapshot: it is the phase
//! its config and seed describe, its counters and clocks are behind the
//! drive's, its request generators are the ones the config builds (at some
//! point of their pass), and every request and queue entry it holds is in
//! range — so that a snapshot altered whole is refused on load.

use super::loops::{job_seed, IoState, Source, Work};
use super::progress::Stop;
use super::recorder::default_interval;
use super::PhaseRun;
use crate::config::{Arrival, Config, PhaseConfig, PhaseKind};
use crate::host::workload::Generator;
use crate::sanity::{ensure, same, Checked};
use crate::seed::derive_seed;
use crate::stats::Counters;

impl PhaseRun {
    /// Checks this (loaded) phase of `cfg`, paused on a drive whose
    /// counters are `counters` at simulated time `now`.
    pub(super) fn check_loaded(&self, cfg: &Config, counters: Counters, now: u64) -> Checked {
        let p = self
            .index
            .and_then(|i| cfg.phases.get(i))
            .ok_or("the paused phase is not one of its config's")?;
        ensure(
            self.seed == derive_seed(cfg.seed, "workload", self.ordinal),
            || "the paused phase's seed differs from its config's".into(),
        )?;
        let rec = &self.rec;
        ensure(
            self.start <= now
                && rec.phase as u64 == self.ordinal
                && counters.checked_sub(rec.last).is_some()
                && rec.last.checked_sub(self.before).is_some(),
            || "the paused phase is ahead of its drive".into(),
        )?;
        let user = cfg.geometry.user_capacity_bytes;
        let interval = p.interval.unwrap_or_else(|| default_interval(p, user));
        same("the time-series interval", &rec.interval, &interval)?;
        let cuts = !p.power_loss_ns.is_empty() || p.power_loss_every_ns.is_some();
        ensure(self.cuts == cuts, || {
            "the paused phase's power cuts differ from its config's".into()
        })?;
        match (&self.work, p.kind) {
            (Work::LayOut { done, .. }, PhaseKind::Fill | PhaseKind::Trim) => {
                ensure(*done <= cfg.geometry.user_units, || {
                    "a fill or trim is past the drive's end".into()
                })
            }
            (Work::Io(st), PhaseKind::Io | PhaseKind::Trace) => st.check_loaded(p, cfg, self),
            _ => Err("the paused phase is of another kind than its config's".into()),
        }
    }
}

impl IoState {
    /// Checks this (loaded) request loop of phase `p` (run `run`).
    fn check_loaded(&self, p: &PhaseConfig, cfg: &Config, run: &PhaseRun) -> Checked {
        let (user, unit) = (
            cfg.geometry.user_capacity_bytes,
            cfg.geometry.unit_size as u64,
        );
        match (&self.source, &p.trace, p.jobs.is_empty()) {
            (Source::Jobs, _, false) | (Source::Trace { .. }, Some(_), true) => {}
            (Source::Synthetic(g), None, true) => {
                g.check_loaded(&Generator::new(&p.stream(), user, unit, run.seed))?
            }
            _ => return Err("the paused phase's request source differs from its config's".into()),
        }
        ensure(self.jobs.len() == p.jobs.len(), || {
            "the paused phase's jobs differ from its config's".into()
        })?;
        for (j, (job, config)) in self.jobs.iter().zip(&p.jobs).enumerate() {
            job.source.check_loaded(&Generator::new(
                &config.stream(),
                user,
                unit,
                job_seed(run.seed, j),
            ))?;
            same(
                "a job's stop conditions",
                &job.stop,
                &Stop::of(config, run.start, user),
            )?;
            let depth = match config.arrival {
                Arrival::Closed { queue_depth } => queue_depth,
                Arrival::Open { .. } => 0,
            };
            ensure(job.queue_depth == depth, || {
                "a job's queue depth differs from its config's".into()
            })?;
        }
        let slots: u64 = self.jobs.iter().map(|j| j.queue_depth as u64).sum();
        ensure(
            self.slots.len() as u64 <= slots && self.slots.iter().all(|s| s.0 .1 < self.jobs.len()),
            || "the jobs' queue slots are out of range".into(),
        )?;
        if let Arrival::Closed { queue_depth } = p.arrival {
            ensure(self.queue.len() <= queue_depth as usize, || {
                "more requests in flight than the queue depth".into()
            })?;
        }
        let request_fits = |(_, r): &(Option<u64>, crate::host::workload::Request)| {
            r.len > 0
                && r.offset
                    .checked_add(r.len as u64)
                    .is_some_and(|end| end <= user)
        };
        ensure(self.next.as_ref().is_none_or(request_fits), || {
            "the next request lies past the drive's end".into()
        })?;
        ensure(self.after.as_ref().is_none_or(request_fits), || {
            "the request after the next lies past the drive's end".into()
        })?;
        ensure(self.next.is_some() || self.after.is_none(), || {
            "a request drawn after the last".into()
        })
    }
}
