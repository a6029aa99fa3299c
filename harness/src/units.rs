//! Byte sizes and durations as users write them (`64MiB`, `1.5GB`, `4096`, `10s`, `100ms`).
//!
//! `GB`/`MB`/`KB` are decimal (1e9/1e6/1e3), `GiB`/`MiB`/`KiB` binary (2^30/2^20/2^10).
//! Parsing is exact: `1.5GB` is 1_500_000_000 bytes; a size that is not a whole number of bytes
//! is rejected.

use std::fmt;
use std::time::Duration;

/// GB/s as used everywhere in pinscope: 1e9 bytes per second.
pub const GB: f64 = 1e9;
pub const KIB: u64 = 1 << 10;
pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;

/// Why a size or duration string was rejected; the message is meant for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnitError(pub String);

const SIZE_UNITS: &[(&str, u64)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", KIB),
    ("MiB", MIB),
    ("GiB", GIB),
    ("TiB", 1 << 40),
];

/// Parses a byte size: a plain integer is bytes; otherwise a decimal number and a unit.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (t[..split].trim(), t[split..].trim());
    if num.is_empty() {
        return Err(UnitError(format!(
            "`{text}` is not a size: write a number and a unit, like `64MiB`, `1.5GB` or `4096`"
        )));
    }
    let mult = if unit.is_empty() {
        1
    } else {
        SIZE_UNITS
            .iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, m)| *m)
            .ok_or_else(|| {
                UnitError(format!(
                    "`{text}` has an unknown unit `{unit}`: use B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)"
                ))
            })?
    };
    let too_big = || UnitError(format!("`{text}` is too large to be a size in bytes"));
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return Err(UnitError(format!(
            "`{text}` is not a number followed by a unit"
        )));
    }
    // Exact decimal arithmetic: value = (int * 10^k + frac) * mult / 10^k.
    if frac_part.len() > 18 {
        return Err(UnitError(format!("`{text}` has too many decimal places")));
    }
    let scale = 10u128.pow(frac_part.len() as u32);
    let int_v: u128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| too_big())?
    };
    let frac_v: u128 = if frac_part.is_empty() {
        0
    } else {
        frac_part.parse().map_err(|_| too_big())?
    };
    let scaled = int_v
        .checked_mul(scale)
        .and_then(|v| v.checked_add(frac_v))
        .and_then(|v| v.checked_mul(mult as u128))
        .ok_or_else(too_big)?;
    if scaled % scale != 0 {
        return Err(UnitError(format!(
            "`{text}` is not a whole number of bytes"
        )));
    }
    u64::try_from(scaled / scale).map_err(|_| too_big())
}

/// Formats bytes with the largest binary unit that keeps the number readable (`64 MiB`, `1.5 GiB`).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [("TiB", 1 << 40), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)];
    for (name, m) in UNITS {
        if bytes >= m {
            let v = bytes as f64 / m as f64;
            return if bytes.is_multiple_of(m) {
                format!("{} {name}", bytes / m)
            } else {
                format!("{v:.2} {name}")
            };
        }
    }
    format!("{bytes} B")
}

/// Parses a duration: `250ms`, `2s`, `1.5s`, `2m`, `500us`; a bare number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    let v: f64 = num.parse().map_err(|_| {
        UnitError(format!(
            "`{text}` is not a duration: write a number and a unit, like `100ms`, `2s` or `1m`"
        ))
    })?;
    let secs = match unit {
        "" | "s" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        other => {
            return Err(UnitError(format!(
                "`{text}` has an unknown time unit `{other}`: use us, ms, s, m or h"
            )));
        }
    };
    if !secs.is_finite() || secs > 7.0 * 24.0 * 3600.0 {
        return Err(UnitError(format!("`{text}` is too long a duration")));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A value as the user wrote it next to what it means, e.g. `"64MiB"` and 67108864.
#[derive(Debug, Clone, PartialEq)]
pub struct Written<T> {
    pub text: String,
    pub value: T,
}

impl<T> fmt::Display for Written<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Columns `s` takes in a monospaced terminal or table: a wide character (CJK, fullwidth forms)
/// takes two, a combining mark none.
pub fn display_width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_exactly() {
        assert_eq!(parse_size("64MiB"), Ok(64 * MIB));
        assert_eq!(parse_size("4GiB"), Ok(4 * GIB));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("0.5KiB"), Ok(512));
        assert_eq!(parse_size(" 16 MiB "), Ok(16 * MIB));
    }

    #[test]
    fn bad_sizes_are_rejected_with_a_reason() {
        for (size, reason) in [
            ("1.0000001KB", "whole number"),
            ("1e30GiB", "unknown unit"),
            ("99999999999999999999GiB", "too large"),
            ("-1MiB", "not a size"),
            ("12 parsecs", "unknown unit"),
        ] {
            let e = parse_size(size).expect_err("must be rejected");
            assert!(e.0.contains(reason), "{size}: {}", e.0);
        }
        assert!(parse_size("").is_err());
        assert!(parse_size(".").is_err());
        assert!(parse_size("1.2.3MB").is_err());
    }

    #[test]
    fn sizes_format_readably() {
        assert_eq!(format_size(64 * MIB), "64 MiB");
        assert_eq!(format_size(3 * GIB / 2), "1.50 GiB");
        assert_eq!(format_size(100), "100 B");
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("100ms"), Ok(Duration::from_millis(100)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert!(parse_duration("2 fortnights").is_err());
        assert!(parse_duration("1e300").is_err());
    }
}
