//! Ranking methods that cannot contradict itself, and that a second survey of the same machine does not
//! reverse. Each row is a method's median time per op over its quiet rounds, with the middle rounds as
//! its spread; every pair of rows is tested on their paired rounds ([`crate::pairs`]): separated, tied or
//! undecided. Rows ordered by median fall into groups: a row joins the group before it unless it is
//! separated from one of its rows, so a group holds rows with no clear difference between them, and no
//! row is in two groups. The label is the group's first place ("1", "2=" where it holds several).
//! `tied_with` names every row a row is not separated from (tied or undecided): against the others, the
//! order is decided. Each row also carries its time against the baseline's (write()'s, the `sync`
//! method's) as the paired test gives it, with its interval.

use crate::pairs::{Outcome, Pair};
use serde::{Deserialize, Serialize};

/// What the interval of a row is, as the JSON and the tables state it.
pub const INTERVAL: &str =
    "the range of the middle rounds: every quiet round's time per op with the \
                            fastest and slowest quarter dropped (of 3 or fewer rounds all)";

/// The method every row's time is put against.
pub const BASELINE: &str = iolab_engine::method::sync::INFO.name;

/// One row to rank: a method, its median and spread (any unit where lower is faster), its quiet rounds
/// as (round, value), and whether it is the floor (nop: no kernel call, shown first and not ranked).
#[derive(Debug, Clone)]
pub struct Entry {
    pub method: String,
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    pub rounds: Vec<(u32, f64)>,
    pub floor: bool,
}

/// A ranked row, in the survey's JSON `ranking`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankRow {
    pub method: String,
    /// The printed label: "1", "2=" ..., or "floor".
    pub rank: String,
    pub median: f64,
    /// The spread of its rounds ([`INTERVAL`]).
    pub lo: f64,
    pub hi: f64,
    /// Its time against the baseline's: the paired test's median ratio and interval ([`crate::pairs`]);
    /// where they share too few rounds, the ratio of the medians without an interval. Absent where the
    /// baseline did not run.
    pub ratio_to_write: Option<f64>,
    pub ratio_lo: Option<f64>,
    pub ratio_hi: Option<f64>,
    /// The rows this one is not separated from (tied or undecided; symmetric; the floor is in none):
    /// against every row not named here its order is decided.
    pub tied_with: Vec<String>,
}

/// One ranked table: a target and block size.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankingTable {
    pub target: String,
    pub bs: u64,
    /// The unit of `median`, `lo` and `hi`.
    pub unit: String,
    pub rows: Vec<RankRow>,
    /// The method every row's ratio is against ([`BASELINE`] in results before it was written), and
    /// what the text calls it ("write()", "pread()").
    #[serde(default = "default_baseline")]
    pub baseline: String,
    #[serde(default = "default_baseline_label")]
    pub baseline_label: String,
    /// Every pair of ranked rows, the faster (by median) first ([`crate::pairs::STATED`]); empty in
    /// results before it.
    #[serde(default)]
    pub pairs: Vec<Pair>,
    /// Every pair of rows next to each other is separated or tied; false where the rounds could not
    /// decide one (`pairs` says which); absent (true) in results before it.
    #[serde(default = "yes")]
    pub decided: bool,
}

fn yes() -> bool {
    true
}

fn default_baseline() -> String {
    BASELINE.into()
}

fn default_baseline_label() -> String {
    "write()".into()
}

impl RankingTable {
    /// The test of `a` against `b` (either order).
    pub fn pair(&self, a: &str, b: &str) -> Option<&Pair> {
        self.pairs
            .iter()
            .find(|p| (p.a == a && p.b == b) || (p.a == b && p.b == a))
    }

    /// The ranked rows (not the floor).
    pub fn ranked(&self) -> impl Iterator<Item = &RankRow> {
        self.rows.iter().filter(|r| r.rank != "floor")
    }

    /// The groups, in order: the rows sharing a label.
    pub fn groups(&self) -> Vec<Vec<&RankRow>> {
        let mut out: Vec<Vec<&RankRow>> = Vec::new();
        for r in self.ranked() {
            match out.last_mut() {
                Some(g) if g[0].rank == r.rank => g.push(r),
                _ => out.push(vec![r]),
            }
        }
        out
    }
}

/// The rows `idx` (sorted by median) in groups: a row joins the last group unless it is separated from
/// one of its rows.
fn groups(idx: &[usize], separated: impl Fn(usize, usize) -> bool) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for &i in idx {
        match out.last_mut() {
            Some(g) if g.iter().all(|&j| !separated(i, j)) => g.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
}

/// Ranks `entries` (one target and block size) against write() ([`BASELINE`]).
pub fn rank(entries: &[Entry]) -> RankingTable {
    rank_against(entries, BASELINE, "write()")
}

/// Ranks `entries`: the floor first, then by median in groups; each row's ratio against `baseline`'s,
/// which the text calls `label`. The table's target and block size are left for the caller.
pub fn rank_against(entries: &[Entry], baseline: &str, label: &str) -> RankingTable {
    let mut idx: Vec<usize> = (0..entries.len()).filter(|&i| !entries[i].floor).collect();
    idx.sort_by(|&a, &b| entries[a].median.total_cmp(&entries[b].median));
    let mut pairs = Vec::new();
    for (n, &i) in idx.iter().enumerate() {
        for &j in &idx[n + 1..] {
            let (a, b) = (&entries[i], &entries[j]);
            let mut p = crate::pairs::test(&a.method, &a.rounds, &b.method, &b.rounds);
            // `a` is the faster by median: rounds that say otherwise, at the 99% asked, decide nothing.
            if p.outcome == Outcome::Separated && p.hi.is_some_and(|h| h >= 1.0) {
                p.outcome = Outcome::Undecided;
            }
            pairs.push(p);
        }
    }
    let find = |a: &str, b: &str| {
        pairs
            .iter()
            .find(|p| (p.a == a && p.b == b) || (p.a == b && p.b == a))
    };
    let separated = |i: usize, j: usize| {
        find(&entries[i].method, &entries[j].method)
            .is_some_and(|p| p.outcome == Outcome::Separated)
    };
    let decided = idx.windows(2).all(|w| {
        find(&entries[w[0]].method, &entries[w[1]].method)
            .is_some_and(|p| p.outcome != Outcome::Undecided)
    });
    let mut rows: Vec<RankRow> = Vec::new();
    let base = entries.iter().find(|x| x.method == baseline && !x.floor);
    let row = |i: usize, rank: String| {
        let x = &entries[i];
        let tied_with = idx
            .iter()
            .filter(|&&j| !x.floor && j != i && !separated(i, j))
            .map(|&j| entries[j].method.clone())
            .collect();
        let (ratio, lo, hi) = match base {
            Some(b) if b.method == x.method => (Some(1.0), Some(1.0), Some(1.0)),
            Some(b) => against(x, b),
            None => (None, None, None),
        };
        RankRow {
            method: x.method.clone(),
            rank,
            median: x.median,
            lo: x.lo,
            hi: x.hi,
            ratio_to_write: ratio,
            ratio_lo: lo,
            ratio_hi: hi,
            tied_with,
        }
    };
    rows.extend(
        (0..entries.len())
            .filter(|&i| entries[i].floor)
            .map(|i| row(i, "floor".into())),
    );
    let mut place = 1;
    for g in groups(&idx, separated) {
        let label = if g.len() > 1 {
            format!("{place}=")
        } else {
            place.to_string()
        };
        rows.extend(g.iter().map(|&i| row(i, label.clone())));
        place += g.len();
    }
    RankingTable {
        target: String::new(),
        bs: 0,
        unit: "ns/op".into(),
        rows,
        baseline: baseline.into(),
        baseline_label: label.into(),
        pairs,
        decided,
    }
}

/// `x`'s time against `base`'s: the paired test's ratio and interval, or the medians' ratio alone.
fn against(x: &Entry, base: &Entry) -> (Option<f64>, Option<f64>, Option<f64>) {
    let p = crate::pairs::test(&x.method, &x.rounds, &base.method, &base.rounds);
    match p.ratio {
        Some(r) => (Some(r), p.lo, p.hi),
        None => (Some(x.median / base.median), None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row whose rounds are `base` times 1 + a small wobble that differs by round (`seed`), so that
    /// rows of different bases are separated and rows of one base are tied.
    fn e(method: &str, base: f64, n: u32, seed: u32) -> Entry {
        let rounds: Vec<(u32, f64)> = (0..n)
            .map(|r| (r, base * (1.0 + 0.004 * f64::from((r * 7 + seed * 3) % 5))))
            .collect();
        let mut v: Vec<f64> = rounds.iter().map(|x| x.1).collect();
        v.sort_by(f64::total_cmp);
        Entry {
            method: method.into(),
            median: v[v.len() / 2],
            lo: v[0],
            hi: v[v.len() - 1],
            rounds,
            floor: method == "nop",
        }
    }

    fn labels_of(t: &RankingTable) -> Vec<(&str, &str)> {
        t.rows
            .iter()
            .map(|r| (r.method.as_str(), r.rank.as_str()))
            .collect()
    }

    /// Rows sharing a label are pairwise not separated, `tied_with` is symmetric and names exactly the
    /// rows not separated.
    fn consistent(t: &RankingTable) {
        for a in t.ranked() {
            for b in t.ranked() {
                if a.method == b.method {
                    continue;
                }
                let sep = t.pair(&a.method, &b.method).unwrap().outcome == Outcome::Separated;
                assert_eq!(a.tied_with.contains(&b.method), !sep, "{a:?} {b:?}");
                if a.rank == b.rank {
                    assert!(!sep, "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn decided_rows_are_numbered_with_their_ties() {
        let t = rank(&[
            e("nop", 17.0, 6, 0),
            e("stdio", 27.0, 6, 1),
            e("psync", 280.0, 6, 2),
            e("sync", 281.0, 6, 3),
            e("aio", 1500.0, 6, 4),
        ]);
        assert_eq!(
            labels_of(&t),
            [
                ("nop", "floor"),
                ("stdio", "1"),
                ("psync", "2="),
                ("sync", "2="),
                ("aio", "4")
            ]
        );
        consistent(&t);
        assert!(t.decided);
        assert_eq!(t.pair("psync", "sync").unwrap().outcome, Outcome::Tied);
        assert_eq!(t.pair("stdio", "aio").unwrap().outcome, Outcome::Separated);
        let psync = &t.rows[2];
        let (r, lo, hi) = (
            psync.ratio_to_write.unwrap(),
            psync.ratio_lo.unwrap(),
            psync.ratio_hi.unwrap(),
        );
        assert!(
            lo <= r && r <= hi && (r - 280.0 / 281.0).abs() < 0.02,
            "{psync:?}"
        );
        assert_eq!(t.rows[3].ratio_to_write, Some(1.0));
    }

    /// Five rounds decide nothing: every row is in one group, and the table says it is not decided.
    #[test]
    fn too_few_rounds_rank_nothing() {
        let t = rank(&[
            e("stdio", 27.0, 5, 1),
            e("sync", 280.0, 5, 2),
            e("aio", 1500.0, 5, 3),
        ]);
        assert!(!t.decided);
        assert!(t.ranked().all(|r| r.rank == "1="), "{:?}", labels_of(&t));
        assert!(t.pairs.iter().all(|p| p.outcome == Outcome::Undecided));
        consistent(&t);
        // The ratio is the medians' without an interval.
        assert_eq!(t.rows[0].ratio_lo, None);
    }

    /// A chain: a ~ b undecided, b ~ c undecided, a and c separated: b joins a's group, c starts its own,
    /// and tied_with still names b for c. The slowest is never in the fastest's group.
    #[test]
    fn a_chain_splits_where_a_row_is_separated_from_the_group() {
        let a = e("a", 100.0, 6, 0);
        let c = e("c", 200.0, 6, 0);
        // b is a's in three rounds and c's in the other three.
        let mut b = a.clone();
        b.method = "b".into();
        for (k, r) in b.rounds.iter_mut().enumerate() {
            if k % 2 == 1 {
                r.1 = c.rounds[k].1;
            }
        }
        b.median = 150.0;
        let t = rank(&[a, b, c]);
        assert_eq!(labels_of(&t), [("a", "1="), ("b", "1="), ("c", "3")]);
        assert!(!t.decided);
        consistent(&t);
        assert!(t.rows[2].tied_with.contains(&"b".to_string()));
    }

    #[test]
    fn no_baseline_row_gives_no_ratio() {
        let t = rank(&[e("psync", 2.0, 6, 0)]);
        assert_eq!(t.rows[0].ratio_to_write, None);
        assert_eq!(t.rows[0].rank, "1");
        assert!(t.rows[0].tied_with.is_empty() && t.decided);
    }
}
