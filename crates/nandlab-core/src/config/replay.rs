//! A `kind = "trace"` phase's keys: the trace file and its format, how it is
//! replayed (closed loop or at its recorded times) and how its addresses
//! become the drive's; and that no other kind of phase has them.

use super::keyword::{Keywords, Meaning::Is};
use super::phase::{Label, PhaseKind, PHASE_KIND};
use super::raw::RawPhase;
use super::ConfigError;
use crate::host::trace::replay::{Remap, ReplayConfig};
use crate::host::trace::TraceFormat;

/// `replay`: whether requests go at their recorded times.
const REPLAY: Keywords<bool> =
    Keywords::new("replay mode", &[("closed", Is(false)), ("timed", Is(true))]);

/// `remap`.
const REMAP: Keywords<Remap> = Keywords::new(
    "remap",
    &[
        ("modulo", Is(Remap::Modulo)),
        ("compact", Is(Remap::Compact)),
    ],
);

/// The replay of a trace phase (None for another kind, which has no trace keys).
pub(super) fn validate(
    p: &RawPhase,
    kind: PhaseKind,
    at: Label,
) -> Result<Option<ReplayConfig>, ConfigError> {
    keys_apply(p, kind, at)?;
    if kind != PhaseKind::Trace {
        return Ok(None);
    }
    let path = p.trace.as_deref().ok_or_else(|| {
        ConfigError::new(
            at.key("trace"),
            "a trace phase needs the trace file: trace = \"PATH\"",
        )
    })?;
    match std::fs::metadata(path) {
        Err(_) => return at.err("trace", format!("no such file: {path}")),
        Ok(m) if m.is_dir() => {
            return at.err("trace", format!("{path} is a directory, not a trace file"))
        }
        Ok(m) if !m.is_file() => {
            return at.err(
                "trace",
                format!(
                    "{path} is not a regular file (a device, a FIFO or a socket), not a trace file"
                ),
            )
        }
        Ok(_) => {}
    }
    let formats: Vec<_> = TraceFormat::ALL
        .iter()
        .map(|&f| (f.name(), Is(f)))
        .collect();
    let format = p
        .format
        .as_deref()
        .map(|f| Keywords::new("trace format", &formats).parse(&at.key("format"), f))
        .transpose()?;
    let (timed, time_scale) = clock(p, at)?;
    let remap = remap(p, at)?;
    Ok(Some(ReplayConfig {
        path: path.into(),
        format,
        skip_bad: p.skip_bad.unwrap_or(false),
        timed,
        time_scale,
        devices: p.devices.clone().unwrap_or_default(),
        remap,
        unique_bytes: p.unique_bytes.map(|s| s.0),
        looping: p.looping.unwrap_or(false),
        // `until = "dead"` and nothing else: only writes can end a loop.
        ends_by_wear: p.until.as_deref() == Some("dead")
            && p.volume.is_none()
            && p.requests.is_none()
            && p.duration.is_none(),
    }))
}

/// Trace keys only in a trace phase; no keys shaping a synthetic workload in one.
fn keys_apply(p: &RawPhase, kind: PhaseKind, at: Label) -> Result<(), ConfigError> {
    if kind != PhaseKind::Trace {
        let trace_keys = [
            ("trace", p.trace.is_some()),
            ("format", p.format.is_some()),
            ("skip_bad", p.skip_bad.is_some()),
            ("replay", p.replay.is_some()),
            ("time_scale", p.time_scale.is_some()),
            ("devices", p.devices.is_some()),
            ("remap", p.remap.is_some()),
            ("unique_bytes", p.unique_bytes.is_some()),
            ("loop", p.looping.is_some()),
        ];
        return match trace_keys.iter().find(|(_, given)| *given) {
            Some((key, _)) => at.err(
                key,
                format!(
                    "applies to a trace phase (kind = \"{}\")",
                    PHASE_KIND.name(PhaseKind::Trace)
                ),
            ),
            None => Ok(()),
        };
    }
    let synthetic = [
        ("pattern", p.pattern.is_some()),
        ("distribution", p.distribution.is_some()),
        ("read_fraction", p.read_fraction.is_some()),
        ("trim_fraction", p.trim_fraction.is_some()),
        ("block_size", p.block_size.is_some()),
        ("block_sizes", p.block_sizes.is_some()),
        ("working_set", p.working_set.is_some()),
        ("order_seed", p.order_seed.is_some()),
        ("data", p.data.is_some()),
    ];
    match synthetic.iter().find(|(_, given)| *given) {
        Some((key, _)) => at.err(
            key,
            "shapes a synthetic workload; a trace phase replays the trace's own requests",
        ),
        None => Ok(()),
    }
}

/// `replay` and `time_scale`: whether requests go at their recorded times,
/// and how those times are scaled.
fn clock(p: &RawPhase, at: Label) -> Result<(bool, f64), ConfigError> {
    let timed = REPLAY.parse_or(&at.key("replay"), p.replay.as_deref(), false)?;
    if timed && (p.queue_depth.is_some() || p.rate.is_some()) {
        return at.err(
            "replay",
            format!(
                "\"{}\" issues each request at its recorded time: no queue_depth or rate",
                REPLAY.name(true)
            ),
        );
    }
    let time_scale = p.time_scale.unwrap_or(1.0);
    if !(time_scale.is_finite() && time_scale > 0.0) {
        return at.err(
            "time_scale",
            format!("expected a factor above 0 on the recorded gaps (0.5: twice as fast), found {time_scale}"),
        );
    }
    if p.time_scale.is_some() && !timed {
        return at.err(
            "time_scale",
            format!("applies to replay = \"{}\"", REPLAY.name(true)),
        );
    }
    Ok((timed, time_scale))
}

/// `remap` (compact by default with `unique_bytes`), and `unique_bytes`
/// only with it.
fn remap(p: &RawPhase, at: Label) -> Result<Remap, ConfigError> {
    let remap = REMAP.parse_or(
        &at.key("remap"),
        p.remap.as_deref(),
        if p.unique_bytes.is_some() {
            Remap::Compact
        } else {
            Remap::Modulo
        },
    )?;
    if p.unique_bytes.is_some_and(|s| s.0 == 0) {
        // No distinct address at all: every request would be passed over, a run of nothing.
        return at.err("unique_bytes", "must be above 0");
    }
    if p.unique_bytes.is_some() && remap != Remap::Compact {
        return at.err(
            "unique_bytes",
            format!(
                "counts distinct addresses as remap = \"{}\" numbers them",
                REMAP.name(Remap::Compact)
            ),
        );
    }
    Ok(remap)
}
