//! Human-friendly quantities in configs: sizes ("4KiB"), fractions ("7 %"),
//! durations ("10us") and transfer rates ("400MB/s"), each accepted as a
//! string with a unit or as a plain number, and parsed into exact integers
//! (bytes, nanoseconds, bytes per second) so that timing stays deterministic.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

crate::message_error! {
    /// A value nandlab does not take (a setting's, a form's argument, a trace
    /// record's): the message says what was expected and what was found; the
    /// caller says where (a config error puts the setting's key in front of it,
    /// a trace error the file and line).
    pub struct BadValue;
}

/// The largest size a config may give, bytes (4 EiB): far beyond any drive
/// (nandlab addresses at most 4 billion mapping units), and small enough
/// that a few such sizes add up in 64 bits.
pub const MAX_BYTES: u64 = 1 << 62;

/// The longest time a config may give, ns (about 146 years): the simulated
/// clock counts nanoseconds in 64 bits (584 years) and takes no request past
/// [`CLOCK_LIMIT_NS`], so the clock plus any one such time stays representable.
pub const MAX_DURATION_NS: u64 = 1 << 62;

/// The simulated time past which no request is taken, ns (about 292 years):
/// half the 64-bit clock, the other half room for what is added to it.
pub const CLOCK_LIMIT_NS: u64 = 1 << 63;

/// The slowest and fastest transfer rates a config may give, bytes per
/// second: 1 MB/s (slower than any flash bus or host link; below it, a
/// queue of large requests would take centuries of simulated time) to 1 PB/s.
const RATE_RANGE: std::ops::RangeInclusive<f64> = 1e6..=1e15;

/// `bytes` if it is a size a config may give.
fn size_in_range(bytes: f64, found: impl fmt::Display) -> Result<u64, BadValue> {
    if bytes > MAX_BYTES as f64 {
        return Err(format!("expected a size of at most 4 EiB (2^62 bytes), found {found}").into());
    }
    if !(bytes >= 0.0 && bytes.fract() == 0.0) {
        return Err(format!("expected a whole number of bytes, found {found}").into());
    }
    Ok(bytes as u64)
}

/// Splits "12.5 KiB" into (12.5, "KiB"), "1e-3s" into (0.001, "s"). Returns
/// None if there is no number. An `e` or `E` is the number's exponent only
/// when digits (after a sign, if any) follow it: "4EiB" is 4 EiB.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let b = s.as_bytes();
    let mantissa = |c: u8| c.is_ascii_digit() || c == b'.' || c == b'_';
    let mut end = b.iter().position(|&c| !mantissa(c)).unwrap_or(b.len());
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let sign = matches!(b.get(end + 1), Some(b'+' | b'-')) as usize;
        let digits = b[end + 1 + sign..]
            .iter()
            .take_while(|c| c.is_ascii_digit() || **c == b'_')
            .count();
        if digits > 0 {
            end += 1 + sign + digits;
        }
    }
    let (num, unit) = s.split_at(end);
    let num: f64 = num.replace('_', "").parse().ok()?;
    if !num.is_finite() {
        return None;
    }
    Some((num, unit.trim()))
}

/// Parses a byte size: "4KiB", "8 KB", "1.5GiB", "512", "512B".
pub fn parse_size(s: &str) -> Result<u64, BadValue> {
    let expected = || {
        format!(
            "expected a size like \"4KiB\", \"1.5GiB\" or \"8KB\" (in B, KiB/KB, MiB/MB, GiB/GB, \
             TiB/TB, PiB/PB or EiB/EB), found \"{s}\""
        )
    };
    let (n, unit) = split_number(s).ok_or_else(expected)?;
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "kb" => 1e3,
        "m" | "mib" => 1024.0 * 1024.0,
        "mb" => 1e6,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "gb" => 1e9,
        "t" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "tb" => 1e12,
        "p" | "pib" => (1u64 << 50) as f64,
        "pb" => 1e15,
        "e" | "eib" => (1u64 << 60) as f64,
        "eb" => 1e18,
        _ => return Err(expected().into()),
    };
    size_in_range(n * mult, format!("\"{s}\""))
}

/// Parses a fraction: "7 %", "7%", "0.07".
pub fn parse_fraction(s: &str) -> Result<f64, BadValue> {
    let expected = || format!("expected a fraction like \"7 %\" or 0.07, found \"{s}\"");
    let (n, unit) = split_number(s).ok_or_else(expected)?;
    match unit {
        "%" => Ok(n / 100.0),
        "" => Ok(n),
        _ => Err(expected().into()),
    }
}

/// Parses a duration into nanoseconds: "10us", "1.5 ms", "2s", "1h"; a bare number is seconds.
pub fn parse_duration_ns(s: &str) -> Result<u64, BadValue> {
    let expected =
        || format!("expected a duration like \"10us\", \"1.5ms\" or \"2s\", found \"{s}\"");
    let (n, unit) = split_number(s).ok_or_else(expected)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        "d" => 86_400e9,
        "y" => 365.0 * 86_400e9,
        _ => return Err(expected().into()),
    };
    let ns = (n * mult).round();
    if ns > MAX_DURATION_NS as f64 {
        return Err(
            format!("expected a duration of at most 146 years (2^62 ns), found \"{s}\"").into(),
        );
    }
    Ok(ns as u64)
}

/// Parses a transfer rate into bytes per second: "400MB/s", "3Gb/s", "1.5GiB/s"; a bare number is MB/s.
pub fn parse_rate(s: &str) -> Result<u64, BadValue> {
    let expected = || format!("expected a rate like \"400MB/s\" or \"6Gb/s\", found \"{s}\"");
    let (n, unit) = split_number(s).ok_or_else(expected)?;
    let unit = unit.strip_suffix("/s").unwrap_or(unit);
    let mult = match unit {
        "" | "MB" => 1e6,
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "GB" => 1e9,
        "TB" => 1e12,
        "PB" => 1e15,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        "Mb" => 1e6 / 8.0,
        "Gb" => 1e9 / 8.0,
        "Tb" => 1e12 / 8.0,
        _ => return Err(expected().into()),
    };
    let r = (n * mult).round();
    if !RATE_RANGE.contains(&r) {
        return Err(format!("expected a rate from 1MB/s to 1PB/s, found \"{s}\"").into());
    }
    Ok(r as u64)
}

macro_rules! quantity {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $what:literal, $parse:path, |$v:ident| $from_num:expr, |$u:ident| $from_int:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, $v: f64) -> Result<$name, E> {
                        $from_num.map($name).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, $u: u64) -> Result<$name, E> {
                        $from_int.map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, i: i64) -> Result<$name, E> {
                        if i < 0 {
                            return Err(E::custom(format!("expected {}, found {i}", $what)));
                        }
                        self.visit_u64(i as u64)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

quantity!(
    /// A size in bytes.
    Size, u64, "a size like \"4KiB\" or a whole number of bytes", parse_size,
    |v| size_in_range(v, v),
    |u| size_in_range(u as f64, u)
);
quantity!(
    /// A fraction (0.07 or "7 %").
    Fraction, f64, "a fraction like \"7 %\" or 0.07", parse_share,
    |v| bare_fraction(v),
    |u| bare_fraction(u as f64)
);

/// A share as text, as configs and the command line take it: "30 %", "30%"
/// or "0.3"; a bare number above 1 is refused with what it would mean.
pub fn parse_share(s: &str) -> Result<f64, BadValue> {
    let v = parse_fraction(s)?;
    if s.trim_end().ends_with('%') {
        Ok(v)
    } else {
        bare_fraction(v)
    }
}

/// A fraction given as a bare number: a share of 1, so that more than 1 is
/// almost surely a percentage written without its sign.
fn bare_fraction(v: f64) -> Result<f64, BadValue> {
    if v > 1.0 {
        Err(format!(
            "a bare number is a share of 1: {v} would be {} %; write \"{v} %\" or {}",
            v * 100.0,
            v / 100.0
        )
        .into())
    } else {
        Ok(v)
    }
}
quantity!(
    /// A duration in nanoseconds (a bare number is seconds).
    Duration, u64, "a duration like \"10us\" or a number of seconds", parse_duration_ns,
    |v| parse_duration_ns(&format!("{v}s")),
    |u| parse_duration_ns(&format!("{u}s"))
);
quantity!(
    /// A transfer rate in bytes per second (a bare number is MB/s).
    Rate, u64, "a rate like \"400MB/s\" or a number of MB/s", parse_rate,
    |v| parse_rate(&format!("{v}MB/s")),
    |u| parse_rate(&format!("{u}MB/s"))
);

/// Nanoseconds needed to move `bytes` at `rate` bytes per second, rounded to the nearest ns.
#[inline]
pub fn transfer_ns(bytes: u64, rate: u64) -> u64 {
    ((bytes as u128 * 1_000_000_000 + rate as u128 / 2) / rate as u128) as u64
}

/// `1.5 GiB`, `64.0 MiB`, `512 B`: a byte count for messages.
pub fn human_bytes(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB * KIB {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    } else if b >= KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else if b >= KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("8 KB"), Ok(8000));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("4 kilo").is_err());
        assert!(parse_size("KiB").is_err());
        assert_eq!(parse_size("4194304TiB"), Ok(MAX_BYTES));
        assert_eq!(parse_size("4EiB"), Ok(MAX_BYTES));
        assert_eq!(parse_size("2 PiB"), Ok(1 << 51));
        assert_eq!(parse_size("1.5e3KiB"), Ok(1536000));
        for huge in [
            "4194305TiB",
            "1e19",
            "18446744073709551615",
            "5EiB",
            "4.7 EB",
        ] {
            let e = parse_size(huge).unwrap_err().0;
            assert!(e.starts_with("expected a size of at most 4 EiB"), "{e}");
        }
    }

    #[test]
    fn times_and_rates_the_clock_cannot_hold_are_refused() {
        for long in ["1e20s", "1300000h", "4611686019s"] {
            let e = parse_duration_ns(long).unwrap_err().0;
            assert!(
                e.starts_with("expected a duration of at most 146 years"),
                "{e}"
            );
        }
        assert!(parse_duration_ns("4611686018s").is_ok());
        assert_eq!(parse_rate("1MB/s"), Ok(1_000_000));
        for rate in ["999KB/s", "1B/s", "1000001GB/s"] {
            let e = parse_rate(rate).unwrap_err().0;
            assert!(e.starts_with("expected a rate from 1MB/s to 1PB/s"), "{e}");
        }
    }

    #[test]
    fn fractions_durations_rates() {
        assert!((parse_fraction("7 %").unwrap() - 0.07).abs() < 1e-12);
        assert_eq!(parse_fraction("0.5"), Ok(0.5));
        assert_eq!(parse_duration_ns("10us"), Ok(10_000));
        assert_eq!(parse_duration_ns("1.5 ms"), Ok(1_500_000));
        assert_eq!(parse_duration_ns("2"), Ok(2_000_000_000));
        assert_eq!(parse_rate("400MB/s"), Ok(400_000_000));
        assert_eq!(parse_rate("6Gb/s"), Ok(750_000_000));
        assert_eq!(parse_rate("333"), Ok(333_000_000));
        // Exponents as floats write them, signed or not; an `e` that starts a unit is the unit's.
        assert_eq!(parse_duration_ns("4.29497e+06us"), Ok(4_294_970_000));
        assert_eq!(parse_duration_ns("1e-3s"), Ok(1_000_000));
        assert!((parse_fraction("1e-298 %").unwrap() / 1e-300 - 1.0).abs() < 1e-12);
        assert!(parse_fraction("1e- %").is_err() && parse_duration_ns("1e+s").is_err());
        assert_eq!(transfer_ns(4096, 400_000_000), 10_240);
    }
}
