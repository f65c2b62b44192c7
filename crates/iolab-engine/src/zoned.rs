//! fio's zoned access distributions (`--distribution zoned:...` and `zoned_abs:...`, fio's
//! `random_distribution=zoned` and `zoned_abs`): the region is cut into consecutive zones, each taking a
//! share of the accesses; inside a zone blocks are drawn uniformly, with replacement.
//!
//! `zoned:60/10:30/20:10/` sends 60% of the accesses to the first 10% of the region, 30% to the next 20%
//! and 10% to the rest. A zone whose size is left out (or 0) takes an equal part of what the sizes given
//! leave, as fio fills it in. `zoned_abs:60/20G:40/100G` gives sizes in bytes instead. The access shares
//! add up to exactly 100; the sizes of `zoned` to at most 100 (the region beyond them is never visited);
//! the sizes of `zoned_abs` must fit the thread's region, which the target's setup checks.
//!
//! The draw is fio's (`__get_next_rand_offset_zoned` in its io_u.c): a number v from 1 to 100 picks the
//! zone whose accesses cover it; a zone from S% to E% of a region of n blocks starts at block S n / 100
//! and holds n (E - S) / 100 blocks.

use crate::error::{Error, Result};

/// fio takes up to 256 zones.
pub const MAX_ZONES: usize = 256;

const FLAG: &str = "--distribution";

/// The zones, in order: each one's share of the accesses (percent) and its size (percent of the region,
/// or bytes for `zoned_abs`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoneSplit {
    abs: bool,
    n: usize,
    access: [u8; MAX_ZONES],
    size: [u64; MAX_ZONES],
}

impl ZoneSplit {
    /// The zones of `text` (what follows `zoned:` or, with `abs`, `zoned_abs:`), with fio's rules; `whole`
    /// is the flag's value, for messages.
    pub fn parse(text: &str, abs: bool, whole: &str) -> Result<ZoneSplit> {
        let bad = |why: String| Error::usage(FLAG, format!("'{whole}': {why}"));
        if text.contains(',') {
            return Err(bad(
                "one set of zones: iolab draws reads and writes from one law (fio takes a set per \
                 direction, separated by commas)"
                    .into(),
            ));
        }
        let mut z = ZoneSplit {
            abs,
            n: 0,
            access: [0; MAX_ZONES],
            size: [0; MAX_ZONES],
        };
        // Sizes left out, filled in below (fio's -1).
        let mut missing = Vec::new();
        // fio stops at the first empty entry ("60/10:40/90:" ends with the second).
        for entry in text.split(':').take_while(|e| !e.is_empty()) {
            if z.n == MAX_ZONES {
                return Err(bad(format!("at most {MAX_ZONES} zones, as fio takes")));
            }
            let (a, s) = entry.split_once('/').unwrap_or((entry, ""));
            z.access[z.n] = a
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|&a| a <= 100)
                .ok_or_else(|| {
                    bad(format!(
                        "'{a}' in '{entry}' is not a share of the accesses (0 to 100)"
                    ))
                })?;
            z.size[z.n] = if abs {
                // fio's zoned_abs takes a zone without a size as one of none.
                if s.trim().is_empty() {
                    0
                } else {
                    crate::units::parse_size(s.trim()).map_err(|_| {
                        bad(format!("'{s}' in '{entry}' is not a size (4k, 20G, ...)"))
                    })?
                }
            } else {
                // fio's atoi: a size above 100 is 100, and 0 or none is left to be filled in.
                let pct = if s.trim().is_empty() {
                    0
                } else {
                    s.trim().parse::<u64>().map_err(|_| {
                        bad(format!(
                            "'{s}' in '{entry}' is not a percentage of the region"
                        ))
                    })?
                };
                if pct == 0 {
                    missing.push(z.n);
                }
                pct.min(100)
            };
            z.n += 1;
        }
        let access: u32 = z.access[..z.n].iter().map(|&a| u32::from(a)).sum();
        if access != 100 {
            return Err(bad(format!(
                "the zones' shares of the accesses add up to {access}%; fio takes exactly 100"
            )));
        }
        if !abs {
            let given: u64 = z.size[..z.n].iter().sum();
            if given > 100 {
                return Err(bad(format!(
                    "the zones' sizes add up to {given}% of the region; at most 100"
                )));
            }
            if !missing.is_empty() {
                let each = (100 - given) / missing.len() as u64;
                for &i in &missing {
                    z.size[i] = each;
                }
            }
        }
        Ok(z)
    }

    /// The text `parse` reads back, sizes filled in: "zoned:50/5:30/15:20/80".
    pub fn name(&self) -> String {
        let zones: Vec<String> = (0..self.n)
            .map(|i| format!("{}/{}", self.access[i], self.size[i]))
            .collect();
        let kind = if self.abs { "zoned_abs" } else { "zoned" };
        format!("{kind}:{}", zones.join(":"))
    }

    /// The bytes the zones of `zoned_abs` span (None for `zoned`, whose zones are shares of any region).
    pub fn abs_bytes(&self) -> Option<u64> {
        self.abs.then(|| self.size[..self.n].iter().sum())
    }

    /// For each v of 1 to 100 (index v - 1), the blocks its zone spans in a region of `nblocks` blocks of
    /// `bs` bytes: (first block, blocks).
    pub fn table(&self, nblocks: u64, bs: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(100);
        let mut end = 0u64;
        for i in 0..self.n {
            let start = end;
            end += self.size[i];
            let (first, last) = if self.abs {
                (start / bs, end / bs)
            } else {
                let at = |pct: u64| (u128::from(nblocks) * u128::from(pct) / 100) as u64;
                (
                    at(start),
                    at(start) + (u128::from(nblocks) * u128::from(end - start) / 100) as u64,
                )
            };
            let first = first.min(nblocks - 1);
            let len = last.min(nblocks).saturating_sub(first);
            out.extend((0..self.access[i]).map(|_| (first, len)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(s: &str) -> ZoneSplit {
        let (kind, rest) = s.split_once(':').unwrap();
        ZoneSplit::parse(rest, kind == "zoned_abs", s).unwrap()
    }

    #[test]
    fn sizes_left_out_share_the_rest_as_fio_fills_them_in() {
        // fio's rand-zones.fio: 50% of the accesses to the first 5%, 30% to the next 15%, 20% to the rest.
        let z = zones("zoned:50/5:30/15:20/");
        assert_eq!(z.name(), "zoned:50/5:30/15:20/80");
        assert_eq!(zones(&z.name()), z, "the name reads back");
        assert_eq!(
            zones("zoned:40/:40/:20/10").name(),
            "zoned:40/45:40/45:20/10"
        );
        assert_eq!(zones("zoned:60/10:40/90:").name(), "zoned:60/10:40/90");
        let t = z.table(1000, 4096);
        assert_eq!(t.len(), 100);
        assert_eq!((t[0], t[49]), ((0, 50), (0, 50)));
        assert_eq!((t[50], t[79]), ((50, 150), (50, 150)));
        assert_eq!((t[80], t[99]), ((200, 800), (200, 800)));
    }

    #[test]
    fn draws_fall_in_the_zones_by_their_shares() {
        let d = crate::skew::Distribution::parse("zoned:50/5:30/15:20/").unwrap();
        let s = crate::skew::Skew::new(&d, 1000, 4096, (3, 5)).unwrap();
        let mut u = crate::skew::uniform_draws();
        let mut hits = [0u32; 3];
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            let b = s.block(&mut u);
            seen.insert(b);
            hits[usize::from(b >= 50) + usize::from(b >= 200)] += 1;
        }
        let shares = hits.map(|h| f64::from(h) / 1000.0);
        for (got, want) in shares.iter().zip([50.0, 30.0, 20.0]) {
            assert!(
                (got - want).abs() < 1.0,
                "zone shares {shares:?}, fio's 50/30/20"
            );
        }
        assert_eq!(seen.len(), 1000, "every block of the region is reached");
    }

    #[test]
    fn absolute_zones_are_bytes_cut_into_blocks() {
        let z = zones("zoned_abs:60/1m:30/2m:10/1m");
        assert_eq!(z.abs_bytes(), Some(4 << 20));
        assert_eq!(z.name(), "zoned_abs:60/1048576:30/2097152:10/1048576");
        let t = z.table(2048, 4096);
        assert_eq!((t[0], t[60], t[90]), ((0, 256), (256, 512), (768, 256)));
        assert_eq!(zones("zoned:100/50").abs_bytes(), None);
    }

    #[test]
    fn bad_zones_name_the_flag_and_what_is_wrong() {
        for (s, says) in [
            ("zoned:50/10:40/10", "add up to 90%"),
            ("zoned:60/10:50/10", "add up to 110%"),
            ("zoned:50/60:50/60", "sizes add up to 120%"),
            ("zoned:x/10:100/10", "'x' in 'x/10'"),
            ("zoned:100/ten", "'ten' in '100/ten'"),
            ("zoned:60/10:40/90,50/50:50/50", "one set of zones"),
            ("zoned_abs:100/lots", "not a size"),
        ] {
            let (kind, rest) = s.split_once(':').unwrap();
            let e = ZoneSplit::parse(rest, kind == "zoned_abs", s)
                .unwrap_err()
                .to_string();
            assert!(e.contains(FLAG) && e.contains(says), "{s}: {e}");
        }
        let many = vec!["0/1"; MAX_ZONES + 1].join(":");
        let e = ZoneSplit::parse(&many, false, "zoned:...").unwrap_err();
        assert!(e.to_string().contains("at most 256 zones"), "{e}");
    }
}
