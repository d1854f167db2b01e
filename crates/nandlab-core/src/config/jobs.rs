//! `[[phase.job]]`: synthetic workloads a phase runs together, each with its
//! own queue depth, stop condition and results (fio's jobs). A job takes its
//! phase's workload keys under its own, and is checked as a phase.

use super::phase::{self, Label, PhaseConfig, PhaseKind, PHASE_KIND};
use super::raw::RawPhase;
use super::ConfigError;
use crate::geometry::Geometry;
use serde_json::Value;

/// The most `[[phase.job]]`s a phase may have: fio's own limit on the jobs
/// of one run (its `REAL_MAX_JOBS`). Each job keeps two latency histograms
/// (about half a MiB) and a queue; more jobs than fio can run is a mistake,
/// not a workload.
pub const MAX_JOBS_PER_PHASE: usize = 4096;

/// Phase keys a `[[phase.job]]` does not take from its phase: its name, the
/// phase's stop conditions (which stop all jobs together) and time series.
const PHASE_ONLY_KEYS: [&str; 8] = [
    "job",
    "name",
    "volume",
    "requests",
    "duration",
    "interval",
    "power_loss",
    "power_loss_every",
];

/// Gives each `[[phase.job]]` its phase's workload keys (as fio's `[global]`),
/// under the job's own.
pub(super) fn inherit_phase_keys(value: &mut Value) {
    let Some(phases) = value.get_mut("phase").and_then(Value::as_array_mut) else {
        return;
    };
    for phase in phases.iter_mut().filter_map(Value::as_object_mut) {
        let mut shared = phase.clone();
        for key in PHASE_ONLY_KEYS {
            shared.remove(key);
        }
        let Some(jobs) = phase.get_mut("job").and_then(Value::as_array_mut) else {
            continue;
        };
        for job in jobs.iter_mut() {
            if let Value::Object(own) = job.take() {
                let mut merged = shared.clone();
                merged.extend(own);
                *job = Value::Object(merged);
            }
        }
    }
}

/// The jobs of the phase at `at`, of kind `kind`.
pub(super) fn validate(
    at: Label,
    kind: PhaseKind,
    jobs: Option<Vec<RawPhase>>,
    g: &Geometry,
) -> Result<Vec<PhaseConfig>, ConfigError> {
    if jobs.is_some() && kind != PhaseKind::Io {
        return at.err(
            "job",
            format!(
                "jobs run synthetic workloads together: their phase is kind = \"{}\"",
                PHASE_KIND.name(PhaseKind::Io)
            ),
        );
    }
    let jobs = jobs.unwrap_or_default();
    if jobs.len() > MAX_JOBS_PER_PHASE {
        return at.err(
            "job",
            format!(
                "at most {MAX_JOBS_PER_PHASE} [[phase.job]] tables per phase (fio's limit on the jobs of one run), found {}",
                jobs.len()
            ),
        );
    }
    jobs.into_iter()
        .enumerate()
        .map(|(j, raw)| job(&format!("{} job #{}", at.0, j + 1), j + 1, raw, g))
        .collect()
}

/// Job `number` (`label`): a closed-loop synthetic workload, its stop
/// condition optional (the phase's stop it).
fn job(
    label: &str,
    number: usize,
    mut raw: RawPhase,
    g: &Geometry,
) -> Result<PhaseConfig, ConfigError> {
    let at = Label(label);
    if raw.job.is_some() {
        return at.err("job", "a job cannot have jobs of its own");
    }
    if raw.power_loss.is_some() || raw.power_loss_every.is_some() {
        return at.err(
            if raw.power_loss.is_some() {
                "power_loss"
            } else {
                "power_loss_every"
            },
            "power cuts hit the whole drive: give them to the phase, not a job",
        );
    }
    if raw.rate.is_some() || raw.idle_every.is_some() || raw.until.is_some() {
        return at.err(
            if raw.rate.is_some() { "rate" } else if raw.idle_every.is_some() { "idle_every" } else { "until" },
            "jobs run closed loop (queue_depth) without idle gaps, until a volume, request count or duration",
        );
    }
    let has_stop = raw.volume.is_some() || raw.requests.is_some() || raw.duration.is_some();
    if !has_stop {
        // Checked as a phase: stopped by the phase's stop conditions.
        raw.requests = Some(u64::MAX);
    }
    let name = phase::named(&Label(label).key("name"), raw.name.take(), || {
        format!("job-{number}")
    })?;
    let mut job = phase::validate(label, number, raw, g, None)?;
    if !has_stop {
        job.requests = None;
    }
    job.name = name;
    Ok(job)
}
