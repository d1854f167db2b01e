//! What a phase's requests are: where they go (`pattern`, `distribution`,
//! `working_set`), what they do (`read_fraction`, `trim_fraction`), how big
//! they are (`block_size`, `block_sizes`, `align`) and what they write (`data`).

use super::keyword::{FormWord, Keywords, Meaning::*};
use super::phase::{Label, PhaseKind};
use super::raw::{Extent, RawPhase};
use super::values::{self, fraction_in, SECTOR};
use super::ConfigError;
use crate::geometry::Geometry;
use crate::host::workload::{Distribution, Pattern};
use crate::media::wear::DataPattern;
use crate::units::BadValue;

/// A phase's `pattern` (fio's short names accepted too).
const PATTERN: Keywords<Pattern> = Keywords::new(
    "pattern",
    &[
        ("sequential", Is(Pattern::Sequential)),
        ("seq", Alias(Pattern::Sequential)),
        ("random", Is(Pattern::Random)),
        ("rand", Alias(Pattern::Random)),
        ("shuffle", Is(Pattern::Shuffle)),
    ],
);

/// A phase's requests, checked.
pub(super) struct Requests {
    pub pattern: Pattern,
    pub distribution: Distribution,
    pub read_fraction: f64,
    pub trim_fraction: f64,
    pub block_size: u64,
    pub block_sizes: Vec<(u32, u32)>,
    pub align: u64,
    pub working_set: f64,
    pub working_set_offset: f64,
}

pub(super) fn validate(
    p: &RawPhase,
    kind: PhaseKind,
    g: &Geometry,
    at: Label,
) -> Result<Requests, ConfigError> {
    let (pattern, distribution) = positions(p, kind, at)?;
    let (read_fraction, trim_fraction) = mix(p, at)?;
    let block_sizes = block_sizes(p, at)?;
    let block_size = match block_sizes.iter().map(|&(s, _)| s as u64).max() {
        Some(largest) => largest,
        None => p.block_size.map(|s| s.0).unwrap_or(4096),
    };
    if block_size < SECTOR || !block_size.is_multiple_of(SECTOR) || block_size > (64 << 20) {
        return at.err(
            "block_size",
            format!(
                "expected a multiple of 512 bytes up to 64MiB, found {}",
                values::sector_size_shown(block_size)
            ),
        );
    }
    let align = p
        .align
        .map(|s| s.0)
        .unwrap_or(block_size.min(g.unit_size as u64).max(SECTOR));
    if align < SECTOR || !align.is_multiple_of(SECTOR) {
        return at.err(
            "align",
            format!("expected a multiple of 512 bytes, found {align}"),
        );
    }
    let (working_set, working_set_offset) = working_set(p, kind, block_size, g, at)?;
    // Requests start on multiples of the alignment (and of the mapping unit) inside the working set.
    let step = align.max(g.unit_size as u64);
    let ws_bytes = (working_set * g.user_capacity_bytes as f64) as u64;
    if kind == PhaseKind::Io && ws_bytes / step * step < block_size {
        return at.err(
            "align",
            format!(
                "requests start on multiples of {align} bytes: the working set ({ws_bytes} bytes) \
                 holds none of {block_size} bytes; expected an alignment up to the working set"
            ),
        );
    }
    Ok(Requests {
        pattern,
        distribution,
        read_fraction,
        trim_fraction,
        block_size,
        block_sizes,
        align,
        working_set,
        working_set_offset,
    })
}

/// `pattern`, with `order_seed` and `distribution` that apply to one pattern each.
fn positions(
    p: &RawPhase,
    kind: PhaseKind,
    at: Label,
) -> Result<(Pattern, Distribution), ConfigError> {
    let pattern = PATTERN.parse_or(
        &at.key("pattern"),
        p.pattern.as_deref(),
        if kind == PhaseKind::Io {
            Pattern::Random
        } else {
            Pattern::Sequential
        },
    )?;
    if p.order_seed.is_some() && pattern != Pattern::Shuffle {
        return at.err(
            "order_seed",
            format!(
                "applies to pattern = \"{}\" (the order each position is visited in)",
                PATTERN.name(Pattern::Shuffle)
            ),
        );
    }
    if p.distribution.is_some() && pattern != Pattern::Random {
        return at.err(
            "distribution",
            format!("applies to pattern = \"{}\"", PATTERN.name(Pattern::Random)),
        );
    }
    let distribution = DISTRIBUTION.parse_or(
        &at.key("distribution"),
        p.distribution.as_deref(),
        Distribution::Uniform,
    )?;
    Ok((pattern, distribution))
}

/// `read_fraction` and `trim_fraction` (the rest are writes).
fn mix(p: &RawPhase, at: Label) -> Result<(f64, f64), ConfigError> {
    let share = |key: &str, v: Option<crate::units::Fraction>| {
        fraction_in(&at.key(key), v.map(|f| f.0).unwrap_or(0.0), 0.0, 1.0)
    };
    let read_fraction = share("read_fraction", p.read_fraction)?;
    let trim_fraction = share("trim_fraction", p.trim_fraction)?;
    if read_fraction + trim_fraction > 1.0 + 1e-12 {
        return at.err(
            "trim_fraction",
            "read_fraction + trim_fraction must not exceed 1",
        );
    }
    Ok((read_fraction, trim_fraction))
}

/// `block_sizes`: (bytes, weight) of each request size, fio's bssplit.
fn block_sizes(p: &RawPhase, at: Label) -> Result<Vec<(u32, u32)>, ConfigError> {
    let Some(list) = &p.block_sizes else {
        return Ok(Vec::new());
    };
    if p.block_size.is_some() {
        return at.err(
            "block_sizes",
            "give either block_size or block_sizes, not both",
        );
    }
    let mut out = Vec::new();
    for item in list {
        let (size, weight) = item.split_once('/').unwrap_or((item.as_str(), "1"));
        let size = crate::units::parse_size(size.trim())
            .ok()
            .filter(|&b| b >= SECTOR && b.is_multiple_of(SECTOR) && b <= (64 << 20));
        let weight = weight.trim().parse::<u32>().ok();
        match (size, weight) {
            (Some(s), Some(w)) => out.push((s as u32, w)),
            _ => {
                return at.err(
                    "block_sizes",
                    format!("expected sizes with weights like \"4KiB/50\" (multiples of 512 bytes up to 64MiB), found `{item}`"),
                )
            }
        }
    }
    if out.is_empty() || out.iter().all(|&(_, w)| w == 0) {
        return at.err(
            "block_sizes",
            "needs at least one size with a weight above 0",
        );
    }
    out.retain(|&(_, w)| w > 0);
    Ok(out)
}

/// `working_set` and `working_set_offset`, as shares of the user capacity.
fn working_set(
    p: &RawPhase,
    kind: PhaseKind,
    block_size: u64,
    g: &Geometry,
    at: Label,
) -> Result<(f64, f64), ConfigError> {
    let share = |key: &str, extent: Option<Extent>, default: f64| match extent {
        None => Ok(default),
        Some(Extent::Share(f)) => fraction_in(&at.key(key), f, 0.0, 1.0),
        Some(Extent::Bytes(b)) if b > g.user_capacity_bytes => at.err(
            key,
            format!(
                "{b} bytes is more than the drive's user capacity ({} bytes)",
                g.user_capacity_bytes
            ),
        ),
        Some(Extent::Bytes(b)) => Ok(b as f64 / g.user_capacity_bytes as f64),
    };
    let working_set = share("working_set", p.working_set, 1.0)?;
    let working_set_offset = share("working_set_offset", p.working_set_offset, 0.0)?;
    if working_set <= 0.0 {
        return at.err("working_set", "must be above 0");
    }
    if working_set_offset + working_set > 1.0 + 1e-12 {
        return at.err(
            "working_set_offset",
            "working_set_offset + working_set must not exceed 1",
        );
    }
    let ws_bytes = (working_set * g.user_capacity_bytes as f64) as u64;
    if kind == PhaseKind::Io && ws_bytes < block_size {
        return at.err("working_set", format!("the working set ({ws_bytes} bytes) is smaller than one request ({block_size} bytes)"));
    }
    Ok((working_set, working_set_offset))
}

/// `data`: what the phase writes (random data unless given).
pub(super) fn data_pattern(p: &RawPhase, at: Label) -> Result<DataPattern, ConfigError> {
    DATA.parse_or(&at.key("data"), p.data.as_deref(), DataPattern::RANDOM)
}

/// A phase's `data`: what is written, which sets how long programs take and,
/// under the threshold-voltage error model, how its cells err.
const DATA: Keywords<DataPattern> = Keywords::new(
    "data pattern",
    &[
        ("random", Is(DataPattern::RANDOM)),
        ("ones", Is(DataPattern::ONES)),
        ("zeros", Is(DataPattern::ZEROS)),
        ("byte:0xNN", Form(data_byte)),
        ("states:11,10,...", Form(data_states)),
    ],
);

fn data_states(w: &FormWord) -> Result<DataPattern, BadValue> {
    let states: Vec<&str> = w.args.split(',').map(str::trim).collect();
    DataPattern::of_states(&states).ok_or_else(|| {
        BadValue(format!(
            "{}:S1,S2,... takes MLC states 11, 10, 00, 01; found `{}`",
            w.name(),
            w.word
        ))
    })
}

fn data_byte(w: &FormWord) -> Result<DataPattern, BadValue> {
    let hex = w.args.trim_start_matches("0x");
    let byte = u8::from_str_radix(hex, 16)
        .map_err(|_| format!("{} takes one byte in hex, found `{}`", w.form, w.word))?;
    // Each pair of bits is one MLC cell's target state.
    let states: Vec<String> = (0..4)
        .map(|i| format!("{:02b}", (byte >> (6 - 2 * i)) & 3))
        .collect();
    let states: Vec<&str> = states.iter().map(String::as_str).collect();
    Ok(DataPattern::of_states(&states).expect("two-bit strings are states"))
}

/// A phase's `distribution` (pattern = "random").
const DISTRIBUTION: Keywords<Distribution> = Keywords::listed(
    false,
    &[
        ("uniform", Is(Distribution::Uniform)),
        ("hotcold:R:F", Form(hot_cold)),
        ("zipf:THETA", Form(zipf)),
        ("pareto:H", Form(pareto)),
        ("normal:DEV", Form(normal)),
    ],
);

/// A distribution form's `N` arguments (else the word is unknown).
fn arguments<'w, const N: usize>(w: &FormWord<'w>) -> Result<[&'w str; N], String> {
    let args: Vec<&str> = w.args.split(':').collect();
    args.try_into().map_err(|_| DISTRIBUTION.unknown(w.word))
}

/// A distribution argument, `what` naming it in the message.
fn number(w: &FormWord, x: &str, what: &str) -> Result<f64, BadValue> {
    x.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| BadValue(format!("{}'s {what} must be a number, found `{x}`", w.form)))
}

fn hot_cold(w: &FormWord) -> Result<Distribution, BadValue> {
    let [r, f] = arguments(w)?;
    let (r, f) = (number(w, r, "R")?, number(w, f, "F")?);
    if !(r > 0.0 && r < 1.0 && f > 0.0 && f < 1.0) {
        return Err(format!(
            "{} needs 0 < R < 1 and 0 < F < 1, found `{}`",
            w.form, w.word
        )
        .into());
    }
    Ok(Distribution::HotCold { r, f })
}

fn zipf(w: &FormWord) -> Result<Distribution, BadValue> {
    let [theta] = arguments(w)?;
    let theta = number(w, theta, "THETA")?;
    if !(theta > 0.0 && theta <= 10.0) {
        return Err(format!("{} needs 0 < THETA ≤ 10, found `{}`", w.form, w.word).into());
    }
    Ok(Distribution::Zipf { theta })
}

fn pareto(w: &FormWord) -> Result<Distribution, BadValue> {
    let [h] = arguments(w)?;
    let h = number(w, h, "H")?;
    if !(h > 0.0 && h < 1.0) {
        return Err(format!("{} needs 0 < H < 1, found `{}`", w.form, w.word).into());
    }
    Ok(Distribution::Pareto { h })
}

fn normal(w: &FormWord) -> Result<Distribution, BadValue> {
    let [dev] = arguments(w)?;
    let dev = number(w, dev, "DEV (percent)")?;
    if !(dev > 0.0 && dev <= 100.0) {
        return Err(format!(
            "{} needs 0 < DEV ≤ 100 (percent of the working set), found `{}`",
            w.form, w.word
        )
        .into());
    }
    Ok(Distribution::Normal { dev })
}
