//! `--bs-split`: a length drawn for each op (fio's `bssplit` and `bsrange`), and the walk of a region by
//! ops of those lengths.
//!
//! Two forms:
//! - `4k/50:64k/30:1m/20`, fio's bssplit: each size with its share of the ops, in percent. A share left
//!   out (or 0) takes an equal part of what the others leave, rounded down as fio does; what the shares
//!   then leave short of 100 goes to the last-listed size of the smallest share, where fio's draw falls
//!   through (its list sorted by share, glibc's sort keeping the order of equal ones). Shares over 100 in
//!   all are refused, and so is a size that is not a multiple of the smallest (fio would cut its ops down to
//!   one).
//! - `1k-4k`, fio's bsrange: `MIN + MAX x U` for U uniform in [0, 1), cut down to a multiple of MIN and to
//!   MAX at most (fio's `get_next_buflen`): each multiple of MIN below MAX alike, MAX taking the rest.
//!
//! The smallest size is the run's `--bs`: offsets are multiples of it from the region's start, and the
//! region is counted in blocks of it. Sequential ops follow one another, each starting where the one
//! before ended, back at the region's start when not even the smallest fits before its end. A random op
//! starts at a uniformly drawn block. An op is never cut at the region's end: a length that does not fit
//! is drawn again (fio's `io_u_fits`), the largest that fits after 64 draws. With `--distribution once`
//! (fio's random map) a pass visits each block once: a drawn block already covered is passed over, and an
//! op is cut short at the first block an earlier op of the pass covered, as fio's `mark_random_map` does
//! (fio takes the next free block instead of the next drawn one: the bytes of a pass are the same).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// fio's most entries of a bssplit (BSSPLIT_MAX).
pub const MAX_SIZES: usize = 64;

const FLAG: &str = "--bs-split";

/// How op lengths are drawn; in JSON as its name (`4k/50:64k/50`, `1k-4k`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct BsSplit {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// The sizes in the order given, each with its share (percent, adding up to 100).
    Split(Vec<(u64, u64)>),
    /// fio's bsrange.
    Range { min: u64, max: u64 },
}

impl From<BsSplit> for String {
    fn from(b: BsSplit) -> String {
        b.name()
    }
}

impl TryFrom<String> for BsSplit {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<BsSplit, String> {
        BsSplit::parse(&s).map_err(|e| e.to_string())
    }
}

/// A size as written back: the largest binary unit that divides it.
fn short(b: u64) -> String {
    for (shift, unit) in [(30, "g"), (20, "m"), (10, "k")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

impl BsSplit {
    /// `SIZE/SHARE:...` or `MIN-MAX`, with fio's rules.
    pub fn parse(text: &str) -> Result<BsSplit> {
        let bad = |why: String| Error::usage(FLAG, format!("'{text}': {why}"));
        let size = |s: &str| -> Result<u64> {
            match crate::units::parse_size(s.trim()) {
                Ok(0) => Err(bad("a size of 0 bytes".into())),
                Ok(n) => Ok(n),
                Err(e) => Err(bad(e)),
            }
        };
        if text.contains(',') {
            return Err(bad(
                "one set of sizes: iolab draws reads and writes from one (fio takes a set per direction, \
                 separated by commas)"
                    .into(),
            ));
        }
        if !text.contains('/') {
            if let Some((a, b)) = text.split_once('-') {
                let (min, max) = (size(a)?, size(b)?);
                if min > max {
                    return Err(bad(format!(
                        "the range's first size is the smaller: {b}-{a}"
                    )));
                }
                return Ok(BsSplit {
                    kind: Kind::Range { min, max },
                });
            }
        }
        let mut sizes: Vec<(u64, Option<u64>)> = Vec::new();
        // fio stops at the first empty entry.
        for entry in text.split(':').take_while(|e| !e.trim().is_empty()) {
            if sizes.len() == MAX_SIZES {
                return Err(bad(format!("at most {MAX_SIZES} sizes, as fio takes")));
            }
            let (s, share) = entry.split_once('/').unwrap_or((entry, ""));
            let share = match share.trim() {
                "" => None,
                p => match p.parse::<u64>() {
                    // fio's atoi: 0 is a share left out, above 100 is 100.
                    Ok(0) => None,
                    Ok(n) => Some(n.min(100)),
                    Err(_) => return Err(bad(format!("'{p}' is not a share in percent"))),
                },
            };
            sizes.push((size(s)?, share));
        }
        if sizes.is_empty() {
            return Err(bad(
                "no size given; expected SIZE/PERCENT:SIZE/PERCENT... or MIN-MAX".into(),
            ));
        }
        let shares = fill_shares(&sizes).map_err(bad)?;
        let min = sizes.iter().map(|s| s.0).min().expect("one size at least");
        if let Some((s, _)) = sizes.iter().find(|s| !s.0.is_multiple_of(min)) {
            return Err(bad(format!(
                "{} is not a multiple of the smallest size, {}: fio would cut its ops down to one",
                short(*s),
                short(min)
            )));
        }
        Ok(BsSplit {
            kind: Kind::Split(sizes.iter().map(|s| s.0).zip(shares).collect()),
        })
    }

    /// The name that parses back to this split.
    pub fn name(&self) -> String {
        match &self.kind {
            Kind::Range { min, max } => format!("{}-{}", short(*min), short(*max)),
            Kind::Split(v) => v
                .iter()
                .map(|(s, p)| format!("{}/{p}", short(*s)))
                .collect::<Vec<_>>()
                .join(":"),
        }
    }

    /// fio's bsrange form (`MIN-MAX`), not a bssplit.
    pub fn is_range(&self) -> bool {
        matches!(self.kind, Kind::Range { .. })
    }

    /// The smallest op length (the run's `--bs`).
    pub fn min(&self) -> u64 {
        match &self.kind {
            Kind::Range { min, .. } => *min,
            Kind::Split(v) => v.iter().map(|s| s.0).min().unwrap_or(1),
        }
    }

    /// The largest op length (each buffer's size).
    pub fn max(&self) -> u64 {
        match &self.kind {
            Kind::Range { max, .. } => *max,
            Kind::Split(v) => v.iter().map(|s| s.0).max().unwrap_or(1),
        }
    }

    /// The mean op length away from a region's end (for a live rate; the figures count each op's bytes).
    pub fn mean(&self) -> f64 {
        match &self.kind {
            Kind::Split(v) => v.iter().map(|(s, p)| *s as f64 * *p as f64 / 100.0).sum(),
            Kind::Range { min, max } => {
                // v = min + max U over [min, min + max): each multiple of min up to the largest below
                // max has min of it, max the rest.
                let (lo, hi) = (*min as f64, *max as f64);
                let top = (max - max % min) as f64;
                let k = top / lo;
                (lo * lo * k * (k + 1.0) / 2.0 + (hi - top) * hi) / hi
            }
        }
    }

    /// The draws of one thread's ops, from `seed`.
    pub fn lens(&self, seed: u64) -> Lens {
        let table = match &self.kind {
            Kind::Split(v) => {
                let mut c = 0;
                Table::Split(
                    v.iter()
                        .map(|(s, p)| {
                            c += p;
                            (c, *s)
                        })
                        .collect(),
                )
            }
            Kind::Range { min, max } => Table::Range(*min, *max),
        };
        Lens {
            table,
            rng: crate::rng::mix64(seed ^ 0x0B55_B1A7) | 1,
        }
    }
}

/// Shares left out filled in as fio fills them; the rest short of 100 to the last-listed of the smallest.
fn fill_shares(sizes: &[(u64, Option<u64>)]) -> std::result::Result<Vec<u64>, String> {
    let given: u64 = sizes.iter().filter_map(|s| s.1).sum();
    let missing = sizes.iter().filter(|s| s.1.is_none()).count() as u64;
    if given > 100 {
        return Err(format!("the shares add up to {given}%, over 100"));
    }
    let each = (100 - given).checked_div(missing).unwrap_or(0);
    let mut shares: Vec<u64> = sizes.iter().map(|s| s.1.unwrap_or(each)).collect();
    let sum: u64 = shares.iter().sum();
    if sum < 100 {
        let least = *shares.iter().min().expect("one share at least");
        let last = shares.iter().rposition(|&p| p == least).expect("found");
        shares[last] += 100 - sum;
    }
    Ok(shares)
}

#[derive(Debug, Clone)]
enum Table {
    /// (cumulative share, size), in the order given.
    Split(Vec<(u64, u64)>),
    Range(u64, u64),
}

/// One thread's op lengths: a generator of its own, apart from the offsets'.
#[derive(Debug, Clone)]
pub struct Lens {
    table: Table,
    rng: u64,
}

/// Draws of a length before the largest that fits is taken.
const TRIES: u32 = 64;

impl Lens {
    /// The next length.
    #[inline]
    pub fn draw(&mut self) -> u64 {
        let r = crate::rng::xorshift(&mut self.rng);
        match &self.table {
            Table::Split(t) => {
                let v = ((r as u128 * 100) >> 64) as u64;
                let i = t.partition_point(|&(c, _)| c <= v);
                t[i.min(t.len() - 1)].1
            }
            Table::Range(min, max) => {
                let v = min + ((r as u128 * *max as u128) >> 64) as u64;
                (v - v % min).min(*max)
            }
        }
    }

    /// The next length of at most `room` bytes (at least the smallest size): drawn again where it does not
    /// fit, the largest that fits after [`TRIES`] draws.
    #[inline]
    pub fn draw_fit(&mut self, room: u64) -> u64 {
        for _ in 0..TRIES {
            let l = self.draw();
            if l <= room {
                return l;
            }
        }
        match &self.table {
            Table::Split(t) => t.iter().map(|e| e.1).filter(|&s| s <= room).max(),
            Table::Range(min, max) => Some((room - room % min).min(*max)),
        }
        .unwrap_or(room)
    }
}

/// A region walked by ops of drawn lengths: where the next sequential op starts, and with `--distribution
/// once` the blocks of the pass already covered.
#[derive(Debug, Clone)]
pub struct SizedWalk {
    lens: Lens,
    /// Where the next sequential op starts: of every op, or of reads (0) and of writes (1) with
    /// `--walk-per-direction`.
    pos: [u64; 2],
    covered: Option<Covered>,
}

/// The blocks a pass of `--distribution once` has covered, and the drawn blocks it has taken.
#[derive(Debug, Clone)]
struct Covered {
    bits: Vec<u64>,
    drawn: u64,
}

impl Covered {
    fn get(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] & (1 << (b % 64)) != 0
    }
    fn set(&mut self, b: u64) {
        self.bits[(b / 64) as usize] |= 1 << (b % 64);
    }
}

impl SizedWalk {
    /// A walk of `nblocks` blocks drawing its lengths from `lens`; `once`: each block once a pass.
    pub fn new(lens: Lens, nblocks: u64, once: bool) -> SizedWalk {
        SizedWalk {
            lens,
            pos: [0; 2],
            covered: once.then(|| Covered {
                bits: vec![0; nblocks.div_ceil(64) as usize],
                drawn: 0,
            }),
        }
    }

    /// The next sequential op in a region of `nblocks` blocks of `bs`: its byte position and length.
    /// `way` picks the walk: 0 for every op, or per direction (0 reads, 1 writes).
    #[inline]
    pub fn next_seq(&mut self, nblocks: u64, bs: u64, way: usize) -> (u64, u64) {
        let region = nblocks * bs;
        let pos = &mut self.pos[way];
        if *pos + bs > region {
            *pos = 0;
        }
        let len = self.lens.draw_fit(region - *pos);
        let at = *pos;
        *pos += len;
        (at, len)
    }

    /// The next random op starting at block `b` (drawn by the caller) of `nblocks` of `bs`: its byte
    /// position and length, or `None` where a pass of `--distribution once` already covered `b`.
    #[inline]
    pub fn next_rand(&mut self, b: u64, nblocks: u64, bs: u64) -> Option<(u64, u64)> {
        let mut len = self.lens.draw_fit((nblocks - b) * bs);
        if let Some(c) = &mut self.covered {
            c.drawn += 1;
            let taken = !c.get(b);
            if taken {
                let want = len.div_ceil(bs);
                let mut n = 0;
                while n < want && !c.get(b + n) {
                    c.set(b + n);
                    n += 1;
                }
                len = len.min(n * bs);
            }
            // The shuffle has offered every block once: the pass is over.
            if c.drawn == nblocks {
                c.bits.fill(0);
                c.drawn = 0;
            }
            if !taken {
                return None;
            }
        }
        Some((b * bs, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lens(text: &str, n: usize) -> Vec<u64> {
        let mut l = BsSplit::parse(text).unwrap().lens(3);
        (0..n).map(|_| l.draw()).collect()
    }

    fn share(v: &[u64], size: u64) -> f64 {
        v.iter().filter(|&&x| x == size).count() as f64 * 100.0 / v.len() as f64
    }

    #[test]
    fn shares_are_filled_in_and_names_read_back_as_fio_fills_them() {
        for (text, name) in [
            ("4k/50:8k/50", "4k/50:8k/50"),
            ("512/25:1k/:2k/:4k/", "512/25:1k/25:2k/25:4k/25"),
            ("4k/:8k/:16k/", "4k/33:8k/33:16k/34"),
            ("4k/50:8k/:16k/:32k", "4k/50:8k/16:16k/16:32k/18"),
            ("4k/0:8k/60", "4k/40:8k/60"),
            ("4k/10:8k/30", "4k/70:8k/30"),
            ("64k/40:1024k/60", "64k/40:1m/60"),
            ("4k/150", "4k/100"),
            ("4k/60:8k/40:", "4k/60:8k/40"),
            ("1k-4k", "1k-4k"),
            ("1536-3k", "1536-3k"),
        ] {
            let b = BsSplit::parse(text).unwrap();
            assert_eq!(b.name(), name, "{text}");
            assert_eq!(BsSplit::parse(name).unwrap(), b, "{name} reads back");
        }
        let b = BsSplit::parse("512/10:64k/90").unwrap();
        assert_eq!((b.min(), b.max()), (512, 65536));
        assert!((b.mean() - (51.2 + 0.9 * 65536.0)).abs() < 1e-6);
    }

    #[test]
    fn bad_splits_name_the_flag_and_what_is_wrong() {
        for (text, says) in [
            ("4k/60:8k/60", "add up to 120%"),
            (
                "3k/50:2k/50",
                "3k is not a multiple of the smallest size, 2k",
            ),
            ("4k/50,8k/100", "one set of sizes"),
            ("0/50:4k/50", "a size of 0 bytes"),
            ("4q/100", "unknown unit"),
            ("4k/x", "'x' is not a share"),
            ("8k-4k", "4k-8k"),
            ("", "no size given"),
        ] {
            let e = BsSplit::parse(text).unwrap_err().to_string();
            assert!(e.contains("--bs-split") && e.contains(says), "{text}: {e}");
        }
        let many = vec!["4k/1"; MAX_SIZES + 1].join(":");
        assert!(BsSplit::parse(&many)
            .unwrap_err()
            .to_string()
            .contains("at most 64"));
    }

    #[test]
    fn lengths_fall_by_their_shares() {
        let v = lens("4k/10:64k/50:32k/40", 100_000);
        for (size, pct) in [(4096, 10.0), (65536, 50.0), (32768, 40.0)] {
            let got = share(&v, size);
            assert!(
                (got - pct).abs() < 1.0,
                "{size}: {got}% of 100,000, wanted {pct}"
            );
        }
        // fio's bsrange 1k-4k: 1, 2, 3 and 4 KiB alike; 4k-10k: 4k and 8k at 40% each, 10k the rest.
        let v = lens("1k-4k", 100_000);
        for k in 1..=4 {
            let got = share(&v, k * 1024);
            assert!((got - 25.0).abs() < 1.0, "{k} KiB: {got}%");
        }
        let v = lens("4k-10k", 100_000);
        for (size, pct) in [(4096, 40.0), (8192, 40.0), (10240, 20.0)] {
            let got = share(&v, size);
            assert!((got - pct).abs() < 1.0, "{size}: {got}%");
        }
        let mean = v.iter().sum::<u64>() as f64 / v.len() as f64;
        let want = BsSplit::parse("4k-10k").unwrap().mean();
        assert!((mean - want).abs() / want < 0.01, "{mean} against {want}");
    }

    #[test]
    fn sequential_ops_follow_each_other_and_never_cross_the_end() {
        let b = BsSplit::parse("4k/50:16k/50").unwrap();
        let mut w = SizedWalk::new(b.lens(1), 10, false);
        let mut at = 0;
        for _ in 0..1000 {
            let (pos, len) = w.next_seq(10, 4096, 0);
            assert!(pos == at || pos == 0, "{pos} after {at}");
            assert!(
                pos + len <= 40960 && (len == 4096 || len == 16384),
                "{pos} {len}"
            );
            at = pos + len;
        }
    }

    #[test]
    fn once_a_pass_covers_every_block_once() {
        let b = BsSplit::parse("4k/50:16k/50").unwrap();
        let n = 1000;
        let mut w = SizedWalk::new(b.lens(2), n, true);
        let mut shuffle = crate::shuffle::Shuffle::new(n, 9);
        for _pass in 0..3 {
            let mut seen = vec![0u32; n as usize];
            for _ in 0..n {
                if let Some((pos, len)) = w.next_rand(shuffle.next_block(), n, 4096) {
                    assert!(pos + len <= n * 4096);
                    for b in pos / 4096..(pos + len) / 4096 {
                        seen[b as usize] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "{:?}", &seen[..20]);
        }
    }
}
