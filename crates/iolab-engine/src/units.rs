//! Parsing and printing of sizes, counts and durations.
//!
//! Sizes are bytes with optional binary suffixes, as fio reads them: `4`, `512`, `4k`, `4K`, `4KiB`, `4KB`,
//! `1m`, `1MiB`, `2g`, `1t` (all powers of 1024; case does not matter; a trailing `b`/`B` alone means bytes).
//! Counts (`--ops`) are decimal: `1000000`, `1_000_000`, `1000k`, `1M`. Durations are seconds unless a suffix
//! says otherwise: `5`, `2.5s`, `500ms`, `1m`.

/// Parses a size; `Err` carries a description of what is accepted.
pub fn parse_size(s: &str) -> Result<u64, String> {
    parse_size_wide(s)?.ok_or_else(|| too_large(s, "size", u64::MAX))
}

/// Parses a size that may be beyond what 64 bits hold: `Ok(None)` for a well-formed size too large for
/// any use (the caller names its own maximum), `Err` for text that is not a size.
pub fn parse_size_wide(s: &str) -> Result<Option<u64>, String> {
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
    // Digits only, so the parse fails by overflowing alone.
    Ok(num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)))
}

/// The message for a number beyond what iolab can hold: it names the largest value, so "too large" is
/// never "not a number".
fn too_large(s: &str, what: &str, max: u64) -> String {
    format!("'{s}' is too large for a {what}; the largest is {max}")
}

/// Parses a decimal count.
pub fn parse_count(s: &str) -> Result<u64, String> {
    const ACCEPT: &str = "a whole number such as 1000, 1_000_000, 100k or 1M";
    let t = s.trim().replace('_', "");
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(format!("'{s}' is not a count; expected {ACCEPT}"));
    }
    let n: u64 = num.parse().map_err(|_| too_large(s, "count", u64::MAX))?;
    let mult: u64 = match suffix {
        "" => 1,
        "k" | "K" => 1_000,
        "m" | "M" => 1_000_000,
        "g" | "G" => 1_000_000_000,
        _ => return Err(format!("'{s}' is not a count; expected {ACCEPT}")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| too_large(s, "count", u64::MAX))
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

/// A data rate with a readable binary unit, from MiB/s: "512.0 KiB/s", "390.6 MiB/s", "14.07 GiB/s".
pub fn fmt_mib_s(mib_s: f64) -> String {
    if !mib_s.is_finite() {
        return "-".into();
    }
    let b = mib_s * 1048576.0;
    if b < 1024.0 * 1024.0 {
        format!("{:.1} KiB/s", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{mib_s:.1} MiB/s")
    } else if b < 1024f64.powi(4) {
        format!("{:.2} GiB/s", mib_s / 1024.0)
    } else {
        format!("{:.2} TiB/s", mib_s / 1048576.0)
    }
}

/// Operations per second with a decimal multiplier: "950.0 ops/s", "12.3 k ops/s", "3.69 M ops/s".
pub fn fmt_ops_s(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v >= 1e6 {
        format!("{:.2} M ops/s", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k ops/s", v / 1e3)
    } else {
        format!("{v:.1} ops/s")
    }
}

/// A range of two figures formatted by `f`: one unit where both ends read in it ("1.2-1.4 µs"), else
/// each end in its own ("212.0 ns-2.0 µs").
pub fn fmt_range(lo: f64, hi: f64, f: impl Fn(f64) -> String) -> String {
    let (l, h) = (f(lo), f(hi));
    match (l.split_once(' '), h.split_once(' ')) {
        (Some((ln, lu)), Some((hn, hu))) if lu == hu => format!("{ln}-{hn} {hu}"),
        _ => format!("{l}-{h}"),
    }
}

/// Seconds with a readable unit: "0.0271 s" is "27.10 ms".
pub fn fmt_s(s: f64) -> String {
    fmt_ns(s * 1e9)
}

/// How many times the clock's uncertainty a timed span must last for a rate taken over it to be
/// printed: the span's ends are each known to within one clock read (its cost) and one tick, so a span
/// of 100 times (two reads plus a tick) gives a rate within 1%.
pub const SPAN_FACTOR: f64 = 100.0;

/// The floor of that threshold, for clocks that claim to cost nothing (the tests' mock clock).
pub const MIN_SPAN_NS: f64 = 1000.0;

/// The shortest timed span (ns) a rate is printed for, by a clock whose read costs `overhead_ns` with
/// ticks of `ns_per_tick` (see [`SPAN_FACTOR`]): 2.0 µs for the TSC here (10 ns a read).
pub fn min_span_ns(overhead_ns: f64, ns_per_tick: f64) -> f64 {
    let u = 2.0 * overhead_ns.max(0.0) + ns_per_tick.max(0.0);
    (SPAN_FACTOR * u).max(MIN_SPAN_NS)
}

/// Why a rate over `wall_s` is not printed, or `None` when the span was long enough to time it.
pub fn too_short(wall_s: f64, overhead_ns: f64, ns_per_tick: f64) -> Option<String> {
    let min = min_span_ns(overhead_ns, ns_per_tick);
    // NaN (no span at all) is too short as well.
    let timed = wall_s * 1e9 >= min;
    (!timed).then(|| {
        format!(
            "too short to time ({} timed; a rate needs at least {}, 100x the clock's uncertainty)",
            fmt_ns(wall_s * 1e9),
            fmt_ns(min)
        )
    })
}

/// `s` cut to `n` characters by leaving out its middle, marked with an ellipsis: names that share a long
/// start stay told apart by their ends (a name shown in a message).
pub fn clip_middle(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        return s.to_string();
    }
    let head = n.saturating_sub(1) / 2;
    let tail = n.saturating_sub(1) - head;
    let start: String = s.chars().take(head).collect();
    let end: String = s.chars().skip(count - tail).collect();
    format!("{start}…{end}")
}

/// `text` with every control character but the line feed and tab shown as `\xNN` (an escape sequence in a
/// file name, say, never reaches the terminal as one).
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut o = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            o.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            o.push(c);
        }
    }
    std::borrow::Cow::Owned(o)
}

/// A path as iolab names it in messages and tables: every control character, the line feed included,
/// shown as `\xNN`, so a name cannot break a line or move the cursor.
pub fn show_path(p: &std::path::Path) -> String {
    let s = p.display().to_string();
    if !s.chars().any(char::is_control) {
        return s;
    }
    s.chars()
        .map(|c| {
            if c.is_control() {
                format!("\\x{:02x}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The shortest span whose CPU time is put as a share of it: the kernel samples CPU time per scheduler
/// tick (1-10 ms), so a shorter span can show more CPU than wall time ("140% system").
pub const MIN_CPU_SPAN_S: f64 = 0.1;

/// Why `wall_s` is too short for a CPU share, if it is ("too short: 12.3 ms").
pub fn cpu_span_too_short(wall_s: f64) -> Option<String> {
    (wall_s.is_nan() || wall_s < MIN_CPU_SPAN_S)
        .then(|| format!("too short: {}", fmt_ns(wall_s * 1e9)))
}

/// Why a process's `cpu_s` of CPU time cannot be put against its timed span of `wall_s` on `cpus` CPUs:
/// more than they could spend in it (10% slack). It was then mostly spent around the span (starting and
/// joining threads, iolab's own reads of the counters), or sampled per tick: 16 threads of one op each
/// showed 12.7 CPUs busy on a machine of 2.
pub fn cpu_beyond_span(cpu_s: f64, wall_s: f64, cpus: f64) -> Option<String> {
    let most = wall_s * cpus.max(1.0) * 1.1;
    (cpu_s > most || wall_s.is_nan()).then(|| {
        format!(
            "the process's CPU time ({}) is more than its {cpus} CPUs could spend in the timed span ({}): \
             it was spent mostly around the span (starting and joining threads) or sampled per tick",
            fmt_ns(cpu_s * 1e9),
            fmt_ns(wall_s * 1e9)
        )
    })
}

/// `cpu_s` of CPU time as a share of `wall_s` ("41.3%"), or why the span is too short to say.
pub fn cpu_share(cpu_s: f64, wall_s: f64) -> String {
    cpu_span_too_short(wall_s).unwrap_or_else(|| format!("{:.1}%", cpu_s / wall_s * 100.0))
}

/// A fraction as a whole percentage: 0.425 -> "43%".
pub fn pct(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

/// A fraction as a percentage with one decimal: 0.4251 -> "42.5%".
pub fn pct1(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

/// "1,031,349": a number rounded to a whole, with thousands separated by commas.
pub fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut o = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            o.push(',');
        }
        o.push(ch);
    }
    if v < 0.0 && digits.chars().any(|c| c != '0') {
        o.insert(0, '-');
    }
    o
}

/// A number as a message quotes it: as given, but never hundreds of digits (1e308 is "1.000e308",
/// 2.5e-9 "2.500e-9").
pub fn show_number(v: f64) -> String {
    if !(v.is_finite() && v != 0.0 && !(1e-6..1e12).contains(&v.abs())) {
        return format!("{v}");
    }
    // Mantissa and exponent by hand: `{:e}` would bring float formatting code of its own (4 KB of a
    // board's binary).
    let exp = v.abs().log10().floor() as i32;
    let m = v / 10f64.powi(exp);
    // A mantissa rounded up to 10 (9.9996) moves to the next power.
    let (m, exp) = if m.abs() >= 9.9995 {
        (m / 10.0, exp + 1)
    } else {
        (m, exp)
    };
    format!("{m:.3}e{exp}")
}

/// A count with thousands separated: "12,345,678" (exact for every u64).
pub fn thousands_u64(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "20261122-013512" in UTC, from Unix seconds (civil-from-days, H. Hinnant's algorithm).
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_quoted_without_hundreds_of_digits() {
        assert_eq!(show_number(1e308), "1.000e308");
        assert_eq!(show_number(-2.5e-9), "-2.500e-9");
        assert_eq!(show_number(9.9999e15), "1.000e16");
        assert_eq!(show_number(123.5), "123.5");
        assert_eq!(show_number(0.0), "0");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands_u64(0), "0");
        assert_eq!(thousands_u64(999), "999");
        assert_eq!(thousands_u64(1000), "1,000");
        assert_eq!(thousands_u64(1_234_567), "1,234,567");
        assert_eq!(thousands(1_031_349.4), "1,031,349");
        assert_eq!(thousands(-1234.0), "-1,234");
        assert_eq!(thousands(-0.2), "0");
    }

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(visible("a\x1b[2Jb\n"), "a\\x1b[2Jb\n");
        assert_eq!(visible("plain"), "plain");
        let p = std::path::Path::new("/tmp/x\ny\x07");
        assert_eq!(show_path(p), "/tmp/x\\x0ay\\x07");
    }

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(1_795_311_312), "20261122-013512");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
    }

    #[test]
    fn ranges_in_one_unit_where_both_ends_read_in_it() {
        assert_eq!(fmt_range(1200.0, 1400.0, fmt_ns), "1.2-1.4 µs");
        assert_eq!(fmt_range(212.0, 2000.0, fmt_ns), "212.0 ns-2.0 µs");
        assert_eq!(fmt_range(400.0, 500.0, |v| format!("{v:.0}")), "400-500");
    }

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
        // Beyond 64 bits is "too large" with the largest value, never "not a count".
        for big in [
            "99999999999999999999",
            "18446744073709551616",
            "99999999999999G",
        ] {
            let e = parse_count(big).unwrap_err();
            assert!(
                e.contains("too large") && e.contains("18446744073709551615"),
                "{big}: {e}"
            );
        }
        assert!(parse_count("x").unwrap_err().contains("not a count"));
        assert_eq!(parse_size_wide("99999999999t"), Ok(None));
        assert_eq!(parse_size_wide("4k"), Ok(Some(4096)));
        assert!(parse_size_wide("4q").is_err());
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
        assert_eq!(fmt_mib_s(14404.7), "14.07 GiB/s");
        assert_eq!(fmt_mib_s(390.6), "390.6 MiB/s");
        assert_eq!(fmt_mib_s(0.5), "512.0 KiB/s");
        assert_eq!(fmt_ops_s(3_690_000.0), "3.69 M ops/s");
        assert_eq!(fmt_ops_s(950.0), "950.0 ops/s");
    }

    #[test]
    fn spans_too_short_to_time() {
        // The TSC here: 10 ns a read, 0.385 ns a tick: 2.04 µs.
        assert!((min_span_ns(10.0, 0.385) - 2038.5).abs() < 1e-6);
        assert_eq!(min_span_ns(0.0, 0.0), MIN_SPAN_NS);
        let why = too_short(1.2e-6, 10.0, 0.385).unwrap();
        assert!(why.starts_with("too short to time (1.2 µs timed"), "{why}");
        assert!(too_short(0.0271, 10.0, 0.385).is_none());
        assert!(too_short(f64::NAN, 10.0, 0.385).is_some());
    }

    #[test]
    fn a_clipped_name_keeps_its_ends() {
        assert_eq!(clip_middle("abc", 3), "abc");
        assert_eq!(clip_middle("abcdef", 3), "a…f");
        assert_eq!(clip_middle("ééééé1", 4), "é…é1");
        assert_ne!(clip_middle("nnnnnnnn1", 5), clip_middle("nnnnnnnn2", 5));
    }
}
