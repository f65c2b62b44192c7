//! `--warmup N` or `--warmup 1s`: operations each thread runs before timing starts, with its own
//! instance of the method on the same target and region, excluded from every figure and counted apart
//! (the result's `warmup`).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// How much warm-up: none, a number of operations over all threads, or seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    #[default]
    None,
    /// Operations over all threads (split like `--ops`).
    Ops(u64),
    /// Seconds, each thread.
    Seconds(f64),
}

const ACCEPT: &str = "a number of operations (1000, 10k, 1M) or seconds with a unit (2s, 500ms)";
/// The most operations a warm-up by count runs (a longer one is given in seconds, which bounds it).
pub const MAX_WARMUP_OPS: u64 = 1_000_000_000;

impl Warmup {
    pub fn is_none(&self) -> bool {
        *self == Warmup::None
    }

    /// `--warmup`: a count (decimal, k/M/G) or a duration with a unit (s, ms, us, min); "1m" is
    /// ambiguous (a million ops or a minute) and refused. 0 is no warm-up.
    pub fn parse(s: &str) -> Result<Warmup> {
        let t = s.trim();
        let bad = |why: String| Error::usage("--warmup", why);
        let unit = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '_');
        match unit {
            "m" => Err(bad(format!(
                "'{s}' is ambiguous: write 1M for a million operations or 60s for a minute"
            ))),
            "s" | "ms" | "us" | "min" => {
                let v = crate::units::parse_duration(t)
                    .map_err(|_| bad(format!("'{s}' is not {ACCEPT}")))?;
                if !(0.0..=super::defaults::MAX_DURATION_S).contains(&v) {
                    return Err(bad(format!(
                        "'{s}' is out of range; expected 0 to 365 days"
                    )));
                }
                Ok(if v == 0.0 {
                    Warmup::None
                } else {
                    Warmup::Seconds(v)
                })
            }
            _ => match crate::units::parse_count(t) {
                Ok(0) => Ok(Warmup::None),
                Ok(n) if n > MAX_WARMUP_OPS => Err(bad(format!(
                    "'{s}' is more than the 1G operations a warm-up by count runs; give a longer one in \
                     seconds (60s), which bounds it"
                ))),
                Ok(n) => Ok(Warmup::Ops(n)),
                Err(_) => Err(bad(format!("'{s}' is not {ACCEPT}"))),
            },
        }
    }

    /// Thread `t`'s share of a warm-up of operations (the first threads take the remainder), or `None`
    /// for a warm-up bounded by time (or none at all: 0).
    pub fn ops_for_thread(&self, t: u32, threads: u32) -> Option<u64> {
        match *self {
            Warmup::None => Some(0),
            Warmup::Ops(n) => {
                let k = threads.max(1) as u64;
                Some(n / k + u64::from((t as u64) < n % k))
            }
            Warmup::Seconds(_) => None,
        }
    }

    /// "10,000 ops" or "1.5 s", for the header line.
    pub fn describe(&self) -> String {
        match *self {
            Warmup::None => "none".into(),
            Warmup::Ops(n) => format!("{n} ops"),
            Warmup::Seconds(s) => format!("{s} s"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_or_seconds() {
        assert_eq!(Warmup::parse("1000").unwrap(), Warmup::Ops(1000));
        assert_eq!(Warmup::parse("10k").unwrap(), Warmup::Ops(10_000));
        assert_eq!(Warmup::parse("1M").unwrap(), Warmup::Ops(1_000_000));
        assert_eq!(Warmup::parse("1G").unwrap(), Warmup::Ops(MAX_WARMUP_OPS));
        let e = Warmup::parse("1000G").unwrap_err().to_string();
        assert!(e.contains("--warmup") && e.contains("in seconds"), "{e}");
        assert_eq!(Warmup::parse("1s").unwrap(), Warmup::Seconds(1.0));
        assert_eq!(Warmup::parse("500ms").unwrap(), Warmup::Seconds(0.5));
        assert_eq!(Warmup::parse("0").unwrap(), Warmup::None);
        for bad in ["1m", "soon", "-1", "1.5", "2h"] {
            let e = Warmup::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("--warmup:") && e.contains(bad), "{bad}: {e}");
        }
        assert_eq!(Warmup::Ops(10).ops_for_thread(0, 3), Some(4));
        assert_eq!(Warmup::Ops(10).ops_for_thread(2, 3), Some(3));
        assert_eq!(Warmup::Seconds(1.0).ops_for_thread(0, 3), None);
    }
}
