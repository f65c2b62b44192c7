//! `iolab compare A B` of two surveys: what changed in each table's order, by each survey's own rounds
//! (a pair of methods is ordered where its survey's paired rounds separated it, else within noise), and
//! the rows whose time moved most.

use crate::ranking::{RankRow, RankingTable};
use serde_json::Value;

/// How the order of one table changed from A to B.
#[derive(Debug, Clone, PartialEq)]
pub struct TableChange {
    /// The table as a person names it: a workload survey's workload ("4 KiB random reads, 1 in flight,
    /// O_DIRECT"), the main survey's target and block size ("file at 4 KiB").
    pub table: String,
    /// The fastest group's methods in A and in B.
    pub fastest: (Vec<String>, Vec<String>),
    /// Pairs ordered one way in A and the other in B, each separated by its survey's rounds: (the one
    /// faster in B, the one faster in A).
    pub reversed: Vec<(String, String)>,
    /// Pairs ordered in A that B's rounds could not separate.
    pub now_within_noise: usize,
    /// Pairs A's rounds could not separate that B's ordered.
    pub now_ordered: usize,
}

/// A row's time in A and in B (the medians of their rounds, with each side's spread).
#[derive(Debug, Clone, PartialEq)]
pub struct Moved {
    pub table: String,
    pub method: String,
    pub a: RankRow,
    pub b: RankRow,
}

impl Moved {
    /// B's median over A's.
    pub fn ratio(&self) -> f64 {
        self.b.median / self.a.median
    }

    /// Whether the two sides' spreads overlap (the move is inside their rounds' noise).
    pub fn within_noise(&self) -> bool {
        self.a.lo <= self.b.hi && self.b.lo <= self.a.hi
    }
}

/// The two surveys' tables, compared: none where either document holds no ranking (not a survey).
pub fn compare(a: &Value, b: &Value) -> Option<(Vec<TableChange>, Vec<Moved>)> {
    let tables = |d: &Value| -> Option<Vec<RankingTable>> {
        serde_json::from_value(d.get("ranking")?.clone()).ok()
    };
    let (ta, tb) = (tables(a)?, tables(b)?);
    // A workload survey's table names its block size already.
    let name = |t: &RankingTable| {
        let size = iolab_engine::units::fmt_size(t.bs);
        match t.target.contains(&size) {
            true => t.target.clone(),
            false => format!("{} at {size}", t.target),
        }
    };
    let mut changes = Vec::new();
    let mut moved = Vec::new();
    for x in &ta {
        let Some(y) = tb.iter().find(|y| y.target == x.target && y.bs == x.bs) else {
            continue;
        };
        changes.push(change(name(x), x, y));
        for r in x.ranked() {
            if let Some(s) = y.ranked().find(|s| s.method == r.method) {
                moved.push(Moved {
                    table: name(x),
                    method: r.method.clone(),
                    a: r.clone(),
                    b: s.clone(),
                });
            }
        }
    }
    moved.retain(|m| m.a.median > 0.0 && m.b.median > 0.0);
    moved.sort_by(|p, q| q.ratio().ln().abs().total_cmp(&p.ratio().ln().abs()));
    Some((changes, moved))
}

/// Each method's group in a table (its place among the groups), by name.
fn places(t: &RankingTable) -> Vec<(String, usize)> {
    t.groups()
        .iter()
        .enumerate()
        .flat_map(|(i, g)| g.iter().map(move |r| (r.method.clone(), i)))
        .collect()
}

fn change(table: String, a: &RankingTable, b: &RankingTable) -> TableChange {
    let (pa, pb) = (places(a), places(b));
    let place = |p: &[(String, usize)], m: &str| p.iter().find(|(n, _)| n == m).map(|(_, i)| *i);
    let mut c = TableChange {
        table,
        fastest: (first_group(a), first_group(b)),
        reversed: Vec::new(),
        now_within_noise: 0,
        now_ordered: 0,
    };
    for (i, (x, _)) in pa.iter().enumerate() {
        for (y, _) in &pa[i + 1..] {
            let (Some(ax), Some(ay), Some(bx), Some(by)) =
                (place(&pa, x), place(&pa, y), place(&pb, x), place(&pb, y))
            else {
                continue;
            };
            match (ax.cmp(&ay), bx.cmp(&by)) {
                (std::cmp::Ordering::Less, std::cmp::Ordering::Greater) => {
                    c.reversed.push((y.clone(), x.clone()))
                }
                (std::cmp::Ordering::Greater, std::cmp::Ordering::Less) => {
                    c.reversed.push((x.clone(), y.clone()))
                }
                (o, std::cmp::Ordering::Equal) if o.is_ne() => c.now_within_noise += 1,
                (std::cmp::Ordering::Equal, o) if o.is_ne() => c.now_ordered += 1,
                _ => {}
            }
        }
    }
    c
}

fn first_group(t: &RankingTable) -> Vec<String> {
    t.groups()
        .first()
        .map(|g| g.iter().map(|r| r.method.clone()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&str, &str, f64)]) -> Value {
        let rows: Vec<Value> = rows
            .iter()
            .map(|(m, rank, med)| {
                serde_json::json!({"method": m, "rank": rank, "median": med, "lo": med * 0.95,
                    "hi": med * 1.05, "ratio_to_write": null, "ratio_lo": null, "ratio_hi": null,
                    "tied_with": []})
            })
            .collect();
        serde_json::json!({"ranking": [{"target": "RND4K Q1 read", "bs": 4096, "unit": "ns", "rows": rows}]})
    }

    #[test]
    fn an_order_reversed_in_both_surveys_is_named_and_a_tie_is_not_a_change() {
        let a = table(&[
            ("aio", "1", 10.0),
            ("psync", "2=", 20.0),
            ("sync", "2=", 21.0),
            ("mmap", "4", 60.0),
        ]);
        let b = table(&[
            ("psync", "1", 10.0),
            ("aio", "2=", 20.0),
            ("sync", "2=", 20.5),
            ("mmap", "2=", 21.0),
        ]);
        let (c, moved) = compare(&a, &b).unwrap();
        let c = &c[0];
        assert_eq!(
            c.fastest,
            (vec!["aio".to_string()], vec!["psync".to_string()])
        );
        // psync and aio swapped, each separated in its survey; psync and sync tied in A, ordered in B;
        // aio-sync, aio-mmap and sync-mmap ordered in A, tied in B.
        assert_eq!(c.reversed, vec![("psync".to_string(), "aio".to_string())]);
        assert_eq!((c.now_ordered, c.now_within_noise), (1, 3));
        // mmap moved most (60 -> 21), outside both spreads.
        assert_eq!(moved[0].method, "mmap");
        assert!(!moved[0].within_noise());
        assert!(compare(&a, &serde_json::json!({})).is_none());
    }
}
