//! Parsing and printing of sizes, counts and durations.
//!
//! Sizes are bytes with optional binary suffixes, as fio reads them: `4`, `512`, `4k`, `4K`, `4KiB`, `4KB`,
//! `1m`, `1MiB`, `2g`, `1t` (all powers of 1024; case does not matter; a trailing `b`/`B` alone means bytes).
//! Counts (`--ops`) are decimal: `1000000`, `1_000_000`, `1000k`, `1M`. Durations are seconds unless a suffix
//! says otherwise: `5`, `2.5s`, `500ms`, `1m`.

/// Parses a size; `Err` carries a description of what is accepted.
pub fn parse_size(s: &str) -> Result<u64, String> {
    const ACCEPT: &str = "a byte count such as 4, 512, 4k, 4KiB, 1m or 1MiB";
    let t = s.trim().replace('_', "");
    if t.is_empty() {
        return Err(format!("empty size; expected {ACCEPT}"));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{s}' is not a size; expected {ACCEPT}"));
    }
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size; expected {ACCEPT}"))?;
    let mult: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "'{s}' has an unknown unit '{suffix}'; expected {ACCEPT}"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Parses a decimal count.
pub fn parse_count(s: &str) -> Result<u64, String> {
    const ACCEPT: &str = "a whole number such as 1000, 1_000_000, 100k or 1M";
    let t = s.trim().replace('_', "");
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a count; expected {ACCEPT}"))?;
    let mult: u64 = match suffix {
        "" => 1,
        "k" | "K" => 1_000,
        "m" | "M" => 1_000_000,
        "g" | "G" => 1_000_000_000,
        _ => return Err(format!("'{s}' is not a count; expected {ACCEPT}")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Parses a duration into seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    const ACCEPT: &str = "seconds such as 5, 2.5s, 500ms or 1m";
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration; expected {ACCEPT}"))?;
    let mult = match suffix {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        "m" | "min" => 60.0,
        _ => return Err(format!("'{s}' is not a duration; expected {ACCEPT}")),
    };
    let v = n * mult;
    if !v.is_finite() {
        return Err(format!("'{s}' is not a duration; expected {ACCEPT}"));
    }
    Ok(v)
}

/// "4 B", "4 KiB", "1.5 MiB": exact binary units where the value divides evenly, otherwise one decimal.
pub fn fmt_size(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v.fract() == 0.0 {
        format!("{} {}", v as u64, UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// Nanoseconds with a readable unit: "95.2 ns", "12.4 µs", "3.1 ms", "2.00 s".
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_from_the_issue() {
        assert_eq!(parse_size("4"), Ok(4));
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("1_024"), Ok(1024));
    }

    #[test]
    fn bad_sizes_say_what_is_accepted() {
        for bad in ["", "k", "4x", "4.5k", "-1", "abc", "99999999999999999999"] {
            let e = parse_size(bad).unwrap_err();
            assert!(
                e.contains("expected") || e.contains("too large"),
                "{bad}: {e}"
            );
        }
        assert!(parse_size("17179869184t")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn counts_and_durations() {
        assert_eq!(parse_count("1_000_000"), Ok(1_000_000));
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        assert_eq!(parse_count("100k"), Ok(100_000));
        assert!(parse_count("1.5").is_err());
        assert_eq!(parse_duration("2.5"), Ok(2.5));
        assert_eq!(parse_duration("500ms"), Ok(0.5));
        assert_eq!(parse_duration("1m"), Ok(60.0));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt_size(4), "4 B");
        assert_eq!(fmt_size(4096), "4 KiB");
        assert_eq!(fmt_size(1536), "1.5 KiB");
        assert_eq!(fmt_ns(95.25), "95.2 ns");
        assert_eq!(fmt_ns(12_400.0), "12.4 µs");
    }
}
