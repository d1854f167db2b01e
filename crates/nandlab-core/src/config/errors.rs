//! `[device.errors]`: the bit-error model (off unless a preset or the user
//! turns it on), its parameter set, the ECC and its read-retry ladder, and
//! the Arrhenius clock's activation energy and reference temperature.

use super::keyword::{FormWord, Keywords, Meaning::*};
use super::raw::RawErrors;
use super::values::{err, number};
use super::ConfigError;
use crate::media::errors::{Ecc, ErrorModel, FAST19_MLC, FAST19_SLC, FAST19_TLC};
use crate::media::vt::{VT_MLC, VT_TLC};
use crate::media::CellMode;
use crate::units::parse_size;
use crate::units::BadValue;
use serde::Serialize;

/// The checked `[device.errors]` of a drive whose model is on.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorsConfig {
    /// The name of the parameter set (`params`).
    pub params_name: String,
    pub model: ErrorModel,
    pub ecc: Ecc,
    /// Read-retry steps before soft decode (LDPC) or giving up (BCH), and
    /// how much of the retention and disturb shift each step takes back.
    pub retry_steps: u32,
    pub retry_factor: f64,
    /// The share of the shift the best read references still leave (Cai et
    /// al., HPCA 2015: optimal read references cut retention errors by
    /// about 2–3×, not to zero).
    pub retry_floor: f64,
    /// Hard decode of a page's codewords, soft decode, and the extra
    /// sensings a soft decode needs.
    pub decode_ns: u64,
    pub soft_decode_ns: u64,
    pub soft_reads: u32,
    /// Arrhenius: activation energy (eV) and the temperature the parameter
    /// set's retention ages were fitted at.
    pub activation_ev: f64,
    pub reference_c: f64,
    /// The uncorrectable bit error rate the drive's class promises (JESD218:
    /// client 10⁻¹⁵, enterprise 10⁻¹⁶).
    pub uber_target: f64,
    /// The firmware's answers: relocate a block once it has been read this
    /// often since its erase (0: never), and in idle time refresh a block
    /// whose retention and disturb have used this share of the headroom its
    /// wear leaves below the hard decode's limit.
    pub read_reclaim: u32,
    pub refresh_at: Option<f64>,
    /// With `[device.wear] retention_relaxed`: how long relaxed programs
    /// hold their data, against the parameter set's year; retention then
    /// ages that much faster, and patrol refresh is on (`refresh_at` 0.5
    /// unless set).
    pub retention_scale: f64,
}

/// `[device.errors] model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Model {
    None,
    PowerLaw,
    Vt,
}

const MODEL: Keywords<Model> = Keywords::new(
    "error model",
    &[
        ("none", Is(Model::None)),
        ("power-law", Is(Model::PowerLaw)),
        ("vt", Is(Model::Vt)),
    ],
);

/// `[device.errors] params`: the published power-law sets, and the
/// threshold-voltage sets fitted to them.
const PARAMS: Keywords<ErrorModel> = Keywords::new(
    "parameter set",
    &[
        ("fast19-slc", Is(ErrorModel::PowerLaw(FAST19_SLC))),
        ("fast19-mlc", Is(ErrorModel::PowerLaw(FAST19_MLC))),
        ("fast19-tlc", Is(ErrorModel::PowerLaw(FAST19_TLC))),
        ("vt-mlc", Is(ErrorModel::Vt(VT_MLC))),
        ("vt-tlc", Is(ErrorModel::Vt(VT_TLC))),
    ],
);

/// `[device.errors] ecc`.
const ECC: Keywords<Ecc> = Keywords::new(
    "ECC",
    &[
        ("bch:T/SIZE", Form(bch_form)),
        ("ldpc:HARD/SOFT/SIZE", Form(ldpc_form)),
    ],
);

/// `T/SIZE` or `HARD/SOFT/SIZE`: limits in bits, then the codeword's data size.
fn limits_and_size(w: &FormWord, limits: usize) -> Result<(Vec<u32>, u32), BadValue> {
    let parts: Vec<&str> = w.args.split('/').map(str::trim).collect();
    let bad = || {
        format!(
            "{} expects {} (for example `{}`), found `{}`",
            w.form,
            w.form,
            example(w),
            w.word
        )
    };
    if parts.len() != limits + 1 {
        return Err(bad().into());
    }
    let nums = parts[..limits]
        .iter()
        .map(|p| p.parse::<u64>().ok().map(|n| (p, n)))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(bad)?;
    if let Some((p, _)) = nums.iter().find(|(_, n)| !(1..=10_000).contains(n)) {
        return Err(format!(
            "{}: expected 1 to 10,000 bits corrected per codeword, found `{p}` in `{}`",
            w.form, w.word
        )
        .into());
    }
    let nums: Vec<u32> = nums.into_iter().map(|(_, n)| n as u32).collect();
    let size = parse_size(parts[limits]).map_err(|e| format!("{}: codeword size: {e}", w.form))?;
    if !(64..=65_536).contains(&size) {
        return Err(format!(
            "{}: a codeword of 64 B to 64 KiB of data, found {size} B",
            w.form
        )
        .into());
    }
    let bits = size as u32 * 8;
    if nums.iter().any(|&n| n >= bits / 4) {
        return Err(format!(
            "{}: a code corrects fewer than a quarter of its bits, found `{}`",
            w.form, w.word
        )
        .into());
    }
    Ok((nums, size as u32))
}

fn example(w: &FormWord) -> &'static str {
    if w.name() == "bch" {
        "bch:40/1KiB"
    } else {
        "ldpc:280/520/4KiB"
    }
}

fn bch_form(w: &FormWord) -> Result<Ecc, BadValue> {
    let (t, size) = limits_and_size(w, 1)?;
    Ok(Ecc::bch(t[0], size))
}

fn ldpc_form(w: &FormWord) -> Result<Ecc, BadValue> {
    let (l, size) = limits_and_size(w, 2)?;
    if l[1] < l[0] {
        return Err(format!(
            "{}: soft decode corrects at least what hard decode does, found `{}`",
            w.form, w.word
        )
        .into());
    }
    Ok(Ecc::ldpc(l[0], l[1], size))
}

/// A count up to `max`, `default` when not given.
fn at_most(
    key: &str,
    v: Option<u32>,
    default: u32,
    max: u32,
    what: &str,
) -> Result<u32, ConfigError> {
    match v {
        None => Ok(default),
        Some(n) if n <= max => Ok(n),
        Some(n) => err(key, format!("expected at most {max} {what}, found {n}")),
    }
}

/// A year: the retention the parameter sets' drives are rated for (JESD218 client).
const RATED_RETENTION_NS: f64 = 365.0 * 86_400e9;

/// `[device.errors]` of a drive of `cell` (None: no error model); `relaxed`:
/// `[device.wear] retention_relaxed`.
pub(super) fn validate(
    e: &RawErrors,
    cell: CellMode,
    relaxed: bool,
) -> Result<Option<ErrorsConfig>, ConfigError> {
    let key = |k: &str| format!("[device.errors] {k}");
    let model = MODEL.parse_or(&key("model"), e.model.as_deref(), Model::None)?;
    if model == Model::None {
        return Ok(None);
    }
    let family = if model == Model::Vt { "vt" } else { "fast19" };
    // vt's sets describe MLC and TLC cells, worn at their modes' cycles: an
    // SLC drive's 75,000 would take them far past anything they were fitted
    // to (their blocks run as pSLC or zombies are rescaled to them).
    if model == Model::Vt && cell.bits() == 1 {
        return err(
            &key("model"),
            "`vt` describes MLC and TLC cells; an SLC drive takes `power-law` (its set fast19-slc)",
        );
    }
    let mode = match cell.bits() {
        1 => "slc",
        2 => "mlc",
        _ => "tlc",
    };
    let params_name = e
        .params
        .clone()
        .unwrap_or_else(|| format!("{family}-{mode}"));
    let params = PARAMS.parse(&key("params"), &params_name)?;
    if matches!(params, ErrorModel::Vt(_)) != (model == Model::Vt) {
        return err(
            &key("params"),
            format!(
                "`{params_name}` is not a set of model `{}`: it takes {}",
                e.model.as_deref().unwrap_or_default(),
                if model == Model::Vt {
                    "vt-mlc or vt-tlc"
                } else {
                    "fast19-slc, fast19-mlc or fast19-tlc"
                }
            ),
        );
    }
    // Each set's code: the one its drive class ships with (the SNIA
    // tutorial's SLC drive: 7 bits per 512 B).
    let default_ecc = match &params_name[params_name.len() - 3..] {
        "tlc" => "ldpc:280/520/4KiB",
        "slc" => "bch:7/512B",
        _ => "bch:40/1KiB",
    };
    let ecc = ECC.parse(&key("ecc"), e.ecc.as_deref().unwrap_or(default_ecc))?;
    let us = |k: &str, v: Option<f64>, default: f64| -> Result<u64, ConfigError> {
        Ok((number(&key(k), v, default, 0.0, 1e6, "microseconds")? * 1000.0).round() as u64)
    };
    let retry_steps = at_most(
        &key("retry_steps"),
        e.retry_steps,
        5,
        64,
        "read-retry steps",
    )?;
    let soft_reads = at_most(&key("soft_reads"), e.soft_reads, 4, 16, "extra sensings")?;
    Ok(Some(ErrorsConfig {
        params_name,
        model: params,
        ecc,
        retry_steps,
        retry_floor: number(
            &key("retry_floor"),
            e.retry_floor,
            0.3,
            0.0,
            1.0,
            "a fraction",
        )?,
        retry_factor: number(
            &key("retry_factor"),
            e.retry_factor,
            0.5,
            0.0,
            1.0,
            "a fraction",
        )?,
        decode_ns: us("decode_us", e.decode_us, 1.0)?,
        soft_decode_ns: us("soft_decode_us", e.soft_decode_us, 20.0)?,
        soft_reads,
        activation_ev: number(&key("activation_ev"), e.activation_ev, 1.1, 0.1, 3.0, "eV")?,
        reference_c: number(&key("reference_c"), e.reference_c, 25.0, -40.0, 125.0, "°C")?,
        uber_target: number(
            &key("uber_target"),
            e.uber_target,
            1e-15,
            1e-30,
            1e-3,
            "a rate",
        )?,
        read_reclaim: e.read_reclaim.unwrap_or(0),
        retention_scale: match (relaxed, e.relaxed_retention) {
            (false, None) => 1.0,
            (false, Some(_)) => {
                return err(
                    &key("relaxed_retention"),
                    "needs [device.wear] retention_relaxed = true",
                )
            }
            (true, None) => RATED_RETENTION_NS / (7.0 * 86_400e9),
            (true, Some(d)) if d.0 >= 60_000_000_000 && (d.0 as f64) <= RATED_RETENTION_NS => {
                RATED_RETENTION_NS / d.0 as f64
            }
            (true, Some(d)) => {
                return err(
                    &key("relaxed_retention"),
                    format!(
                        "expected from a minute to a year, found {:.3e} s",
                        d.0 as f64 / 1e9
                    ),
                )
            }
        },
        // Relaxed programs must be refreshed: patrol is on by default then.
        refresh_at: match e.refresh_at.or(relaxed.then_some(0.5)) {
            None => None,
            share => Some(number(
                &key("refresh_at"),
                share,
                0.5,
                0.01,
                1.0,
                "a share of the headroom below the hard-decode limit",
            )?),
        },
    }))
}
