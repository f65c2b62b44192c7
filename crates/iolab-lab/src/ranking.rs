//! Ranking methods that cannot contradict itself. Each row is a method's median time per op with an
//! interval (the middle rounds, [`iolab_engine::stats::middle_range`]); two rows are tied when their
//! intervals overlap. Rows share a rank label only when every pair of them is tied: the label is a number
//! ("1", "2=") where the ties fall into separate groups, and grouping letters ("a", "ab", "b") where one
//! row is tied with rows that are not tied with each other, as a compact letter display does. Each row
//! also carries its time against write()'s (the `sync` method's) with the interval that ratio can have.

use serde::{Deserialize, Serialize};

/// What the interval of a row is, as the JSON and the tables state it.
pub const INTERVAL: &str = "the range of the middle rounds: every round's time per op with the fastest and \
                            slowest quarter dropped (of 5 rounds the middle three, of 3 or fewer all)";

/// The method whose time every row is put against.
pub const BASELINE: &str = "sync";

/// One row to rank: a method, its median and interval (any unit where lower is faster), and whether it
/// is the floor (nop: no kernel call, shown first and not ranked).
#[derive(Debug, Clone)]
pub struct Entry {
    pub method: String,
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    pub floor: bool,
}

/// A ranked row, in the survey's JSON `ranking`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RankRow {
    pub method: String,
    /// The printed label: "1", "2=", "a", "ab" ..., or "floor".
    pub rank: String,
    pub median: f64,
    /// The interval the ties are judged on ([`INTERVAL`]).
    pub lo: f64,
    pub hi: f64,
    /// median / write()'s median, and the least and most that ratio can be given both intervals
    /// (lo / write's hi, hi / write's lo); absent where write() did not run.
    pub ratio_to_write: Option<f64>,
    pub ratio_lo: Option<f64>,
    pub ratio_hi: Option<f64>,
    /// The methods whose interval overlaps this one's (symmetric; the floor is tied with none).
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
}

fn default_baseline() -> String {
    BASELINE.into()
}

fn default_baseline_label() -> String {
    "write()".into()
}

fn tied(a: &Entry, b: &Entry) -> bool {
    a.lo <= b.hi && b.lo <= a.hi
}

/// The maximal groups of pairwise-tied rows (`idx` sorted by median), each as indices into `e`, in the
/// order of their lowest point: where intervals overlap pairwise they share a point, so a sweep over the
/// ends finds every such group (the set of open intervals just before one closes after another opened).
fn groups(e: &[Entry], idx: &[usize]) -> Vec<Vec<usize>> {
    // (coordinate, 0 = opens / 1 = closes, row): opens sort before closes at one coordinate, since closed
    // intervals that touch are tied.
    let mut ev: Vec<(f64, u8, usize)> = idx
        .iter()
        .flat_map(|&i| [(e[i].lo, 0, i), (e[i].hi, 1, i)])
        .collect();
    ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut open, mut out, mut grew) = (Vec::<usize>::new(), Vec::new(), false);
    for (_, kind, i) in ev {
        if kind == 0 {
            open.push(i);
            grew = true;
        } else {
            if grew {
                let mut g = open.clone();
                g.sort_by(|&a, &b| e[a].median.total_cmp(&e[b].median));
                out.push(g);
                grew = false;
            }
            open.retain(|&j| j != i);
        }
    }
    out
}

/// "a".."z", then "A".."Z", then "g27"...
fn letter(n: usize) -> String {
    match n {
        0..=25 => ((b'a' + n as u8) as char).to_string(),
        26..=51 => ((b'A' + (n - 26) as u8) as char).to_string(),
        _ => format!("g{}", n + 1),
    }
}

/// The labels of the ranked rows `idx`: numbers where every row is in one group, letters otherwise.
fn labels(e: &[Entry], idx: &[usize]) -> Vec<(usize, String)> {
    let gs = groups(e, idx);
    let member_of =
        |i: usize| -> Vec<usize> { (0..gs.len()).filter(|&g| gs[g].contains(&i)).collect() };
    if idx.iter().all(|&i| member_of(i).len() == 1) {
        let mut before = 0;
        let mut out = Vec::new();
        let mut ordered = gs.clone();
        ordered.sort_by(|a, b| e[a[0]].median.total_cmp(&e[b[0]].median));
        for g in &ordered {
            let label = if g.len() > 1 {
                format!("{}=", before + 1)
            } else {
                (before + 1).to_string()
            };
            out.extend(g.iter().map(|&i| (i, label.clone())));
            before += g.len();
        }
        return out;
    }
    idx.iter()
        .map(|&i| (i, member_of(i).into_iter().map(letter).collect::<String>()))
        .collect()
}

/// Ranks `entries` (one target and block size) against write() ([`BASELINE`]).
pub fn rank(entries: &[Entry]) -> Vec<RankRow> {
    rank_against(entries, BASELINE)
}

/// Ranks `entries`: the floor first, then by median; each row's ratio against `baseline`'s.
pub fn rank_against(entries: &[Entry], baseline: &str) -> Vec<RankRow> {
    let mut idx: Vec<usize> = (0..entries.len()).filter(|&i| !entries[i].floor).collect();
    idx.sort_by(|&a, &b| entries[a].median.total_cmp(&entries[b].median));
    let label_of = labels(entries, &idx);
    let base = entries.iter().find(|x| x.method == baseline && !x.floor);
    let row = |i: usize, rank: String| {
        let x = &entries[i];
        let tied_with = if x.floor {
            Vec::new()
        } else {
            idx.iter()
                .filter(|&&j| j != i && tied(x, &entries[j]))
                .map(|&j| entries[j].method.clone())
                .collect()
        };
        RankRow {
            method: x.method.clone(),
            rank,
            median: x.median,
            lo: x.lo,
            hi: x.hi,
            ratio_to_write: base.map(|b| x.median / b.median),
            ratio_lo: base.map(|b| x.lo / b.hi),
            ratio_hi: base.map(|b| x.hi / b.lo),
            tied_with,
        }
    };
    let floors = (0..entries.len()).filter(|&i| entries[i].floor);
    let mut out: Vec<RankRow> = floors.map(|i| row(i, "floor".into())).collect();
    out.extend(idx.iter().map(|&i| {
        let l = label_of
            .iter()
            .find(|(j, _)| *j == i)
            .map(|(_, l)| l.clone());
        row(i, l.unwrap_or_default())
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(method: &str, median: f64, lo: f64, hi: f64) -> Entry {
        Entry {
            method: method.into(),
            median,
            lo,
            hi,
            floor: method == "nop",
        }
    }

    fn labels_of(rows: &[RankRow]) -> Vec<(&str, &str)> {
        rows.iter()
            .map(|r| (r.method.as_str(), r.rank.as_str()))
            .collect()
    }

    /// Rows sharing a label are pairwise tied, `tied_with` is symmetric, and tied rows' intervals overlap.
    fn consistent(rows: &[RankRow]) {
        for a in rows {
            for b in rows {
                if a.method == b.method || a.rank == "floor" || b.rank == "floor" {
                    continue;
                }
                if a.rank == b.rank {
                    assert!(a.tied_with.contains(&b.method), "{a:?} {b:?}");
                }
                assert_eq!(
                    a.tied_with.contains(&b.method),
                    b.tied_with.contains(&a.method)
                );
                if a.tied_with.contains(&b.method) {
                    assert!(a.lo <= b.hi && b.lo <= a.hi, "{a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn separate_groups_are_numbered_with_their_ties() {
        let rows = rank(&[
            e("nop", 17.0, 16.0, 18.0),
            e("stdio", 27.0, 20.0, 44.0),
            e("psync", 279.0, 277.0, 440.0),
            e("sync", 291.0, 221.0, 294.0),
            e("aio", 1500.0, 1400.0, 1500.0),
        ]);
        assert_eq!(
            labels_of(&rows),
            [
                ("nop", "floor"),
                ("stdio", "1"),
                ("psync", "2="),
                ("sync", "2="),
                ("aio", "4")
            ]
        );
        consistent(&rows);
        let psync = &rows[2];
        assert!((psync.ratio_to_write.unwrap() - 279.0 / 291.0).abs() < 1e-12);
        assert!((psync.ratio_lo.unwrap() - 277.0 / 294.0).abs() < 1e-12);
        assert!((psync.ratio_hi.unwrap() - 440.0 / 221.0).abs() < 1e-12);
    }

    /// The survey's chain: sendfile ties io_uring, io_uring ties aio, sendfile and aio do not overlap:
    /// no common rank, letters instead.
    #[test]
    fn a_chain_of_ties_gets_letters_not_one_rank() {
        let rows = rank(&[
            e("sendfile", 901.0, 830.0, 1000.0),
            e("io_uring", 1000.0, 986.0, 1100.0),
            e("offload", 1300.0, 526.0, 1300.0),
            e("aio", 1500.0, 1400.0, 1500.0),
            e("splice", 1400.0, 1200.0, 1500.0),
        ]);
        consistent(&rows);
        let l: std::collections::HashMap<_, _> = labels_of(&rows).into_iter().collect();
        assert_ne!(l["sendfile"], l["aio"], "{l:?}");
        assert!(!rows[0].tied_with.contains(&"aio".to_string()));
        // Every letter's rows are pairwise tied, and every tied pair shares a letter.
        for a in &rows {
            for b in &rows {
                let share = a.rank.chars().any(|c| b.rank.contains(c));
                assert_eq!(
                    share,
                    a.method == b.method || a.tied_with.contains(&b.method),
                    "{l:?}"
                );
            }
        }
    }

    #[test]
    fn no_write_row_gives_no_ratio() {
        let rows = rank(&[e("psync", 2.0, 1.0, 3.0)]);
        assert_eq!(rows[0].ratio_to_write, None);
        assert_eq!(rows[0].rank, "1");
        assert!(rows[0].tied_with.is_empty());
    }
}
