//! Numbers as fio 3.33 reads them (parse.c: `str_to_decimal`, `__get_mult_bytes`, `get_mult_time`), so
//! a value means in iolab what it means in fio, and a value fio would read as something other than it
//! looks is refused rather than guessed:
//!
//! - sizes and counts (fio reads its integer options, iodepth and numjobs too, the same way): a whole
//!   number, or hexadecimal after `0x`; a unit k, m, g, t, p or e (any case) with nothing, `b` or `i` after it
//!   is a power of `kb_base` (1024 by default: `4k`, `4kb`, `4Ki` are 4096), and with `ib` after it the
//!   other base (`4KiB` is 4000 with kb_base 1024, 4096 with 1000). fio's HOWTO says `Ki` is a power of
//!   1024 whatever kb_base is; its code (and a run of fio 3.33: `size=4ki` with kb_base=1000 moves 4000
//!   bytes) reads it as `k`, and fio's code is what a job file gets.
//! - `N%` where fio takes a percentage (size, io_size).
//! - times: a whole number of seconds, or with us (usec), ms (msec), s, m, h or d.
//!
//! Refused: a fraction (fio stops at the point: `1.5m` is 1 byte to it, `0.5` s is 0), a unit after a
//! hexadecimal number (fio drops it: `0x10k` is 16), units fio does not know (it reads `10sec` as 10
//! microseconds), signs, spaces inside, arithmetic.

/// A number fio reads from a size option: bytes, or a percentage of the file or device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Num {
    Bytes(u64),
    Percent(u64),
}

/// A size or count, or a percentage (1 to 100), as fio reads it with `kb` as its kb_base.
pub fn fio_number(v: &str, kb: u64) -> Result<Num, String> {
    let t = v.trim();
    if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let end = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        if end < hex.len() {
            return Err(format!(
                "'{v}': fio reads a hexadecimal number without a unit after it (it takes 0x10k as 16): \
                 give the number alone, or in decimal with its unit"
            ));
        }
        return u64::from_str_radix(hex, 16)
            .map(Num::Bytes)
            .map_err(|_| format!("'{v}' is not a number"));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{v}' is not a size (a whole number, with k, m, g, t, p or e)"
        ));
    }
    if unit.starts_with('.') {
        return Err(format!(
            "'{v}': fio reads whole numbers only (it stops at the '.', so {v} would be {num} to it)"
        ));
    }
    let n: u64 = num.parse().map_err(|_| format!("'{v}' is too large"))?;
    if unit == "%" {
        return match n {
            1..=100 => Ok(Num::Percent(n)),
            _ => Err(format!("'{v}': a percentage is 1 to 100")),
        };
    }
    let u = unit.to_ascii_lowercase();
    let bad = || {
        format!(
            "'{v}': unit '{unit}' is not one fio reads (k, m, g, t, p or e, with B, i or iB after it, or a \
             byte count alone)"
        )
    };
    if u.is_empty() || u == "b" {
        return Ok(Num::Bytes(n));
    }
    let pow = match u.as_bytes()[0] {
        b'k' => 1,
        b'm' => 2,
        b'g' => 3,
        b't' => 4,
        b'p' => 5,
        b'e' => 6,
        _ => return Err(bad()),
    };
    let base = match &u[1..] {
        "" | "b" | "i" => kb,
        // "KiB" and the like: the other base (fio's "opposite units" under kb_base 1024).
        "ib" if kb == 1024 => 1000,
        "ib" => 1024,
        _ => return Err(bad()),
    };
    n.checked_mul(base.pow(pow))
        .map(Num::Bytes)
        .ok_or_else(|| format!("'{v}' is too large"))
}

/// A size in fio's meaning (no percentage); see [`fio_number`].
pub fn fio_size(v: &str, kb: u64) -> Result<u64, String> {
    match fio_number(v, kb)? {
        Num::Bytes(n) => Ok(n),
        Num::Percent(_) => Err(format!(
            "'{v}': a percentage is not accepted here (fio takes one for size, io_size and offset)"
        )),
    }
}

/// A time in fio's meaning: whole seconds unless a unit says otherwise (us or usec, ms or msec, s, m, h,
/// d; any case).
pub fn fio_seconds(v: &str) -> Result<f64, String> {
    let t = v.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "'{v}' is not a time (whole seconds, or with us, ms, s, m, h or d)"
        ));
    }
    if unit.starts_with('.') {
        return Err(format!(
            "'{v}': fio reads whole numbers only (it stops at the '.', so {v} would be {num} to it): give a \
             smaller unit, e.g. 500ms"
        ));
    }
    let n: f64 = num.parse().map_err(|_| format!("'{v}' is not a time"))?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => 1.0,
        "us" | "usec" => 1e-6,
        "ms" | "msec" => 1e-3,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => {
            return Err(format!(
                "'{v}': unit '{unit}' is not one fio reads (us, usec, ms, msec, s, m, h or d; fio takes \
                 others as microseconds)"
            ))
        }
    };
    Ok(n * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value and what fio 3.33 made of it (`fio --name=x --ioengine=null --size=V --bs=1 --rw=read`,
    /// read io_bytes), with kb_base 1024 and 1000.
    #[test]
    fn sizes_as_fio_reads_them() {
        for (v, kb, want) in [
            ("4096", 1024, 4096),
            ("4096b", 1024, 4096),
            ("4k", 1024, 4096),
            ("4kb", 1024, 4096),
            ("4KB", 1024, 4096),
            ("4Kb", 1024, 4096),
            ("1Ki", 1024, 1024),
            ("4ki", 1024, 4096),
            ("1KiB", 1024, 1000),
            ("4kib", 1024, 4000),
            ("1mi", 1024, 1 << 20),
            ("1MiB", 1024, 1_000_000),
            ("1MIB", 1024, 1_000_000),
            ("2g", 1024, 2 << 30),
            ("0x10", 1024, 16),
            ("0X1000", 1024, 4096),
            ("4ki", 1000, 4000),
            ("4kib", 1000, 4096),
            ("4k", 1000, 4000),
            ("4KB", 1000, 4000),
            ("1mi", 1000, 1_000_000),
            ("1m", 1000, 1_000_000),
            ("1e", 1024, 1 << 60),
            ("2E", 1000, 2_000_000_000_000_000_000),
        ] {
            assert_eq!(fio_size(v, kb), Ok(want), "{v} with kb_base {kb}");
        }
        assert_eq!(fio_number("10%", 1024), Ok(Num::Percent(10)));
        for (v, says) in [
            ("4x", "not one fio reads"),
            ("4kx", "not one fio reads"),
            ("1.5m", "whole numbers"),
            ("0x10k", "hexadecimal"),
            ("-1", "not a size"),
            ("4 k", "not one fio reads"),
            ("0%", "1 to 100"),
            ("101%", "1 to 100"),
            ("", "not a size"),
            ("99999999999999999999", "too large"),
            ("16385p", "too large"),
            ("16E", "too large"),
        ] {
            let e = fio_number(v, 1024).unwrap_err();
            assert!(e.contains(says), "{v}: {e}");
        }
        assert!(fio_size("10%", 1024).unwrap_err().contains("percentage"));
    }

    #[test]
    fn times_as_fio_reads_them() {
        assert_eq!(fio_seconds("30"), Ok(30.0));
        assert_eq!(fio_seconds("500ms"), Ok(0.5));
        assert_eq!(fio_seconds("500msec"), Ok(0.5));
        assert_eq!(fio_seconds("250us"), Ok(250e-6));
        assert_eq!(fio_seconds("2m"), Ok(120.0));
        assert_eq!(fio_seconds("2M"), Ok(120.0));
        assert_eq!(fio_seconds("1h"), Ok(3600.0));
        assert_eq!(fio_seconds("1d"), Ok(86400.0));
        for (v, says) in [
            ("0.2", "whole numbers"),
            ("1.5s", "whole numbers"),
            ("10sec", "microseconds"),
            ("x", "not a time"),
        ] {
            let e = fio_seconds(v).unwrap_err();
            assert!(e.contains(says), "{v}: {e}");
        }
    }
}
