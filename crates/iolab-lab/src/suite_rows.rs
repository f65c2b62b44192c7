//! A suite's records as rows: repeats of one point grouped (the run with the median time per op shown,
//! the range of the middle runs beside it), and the comparing rules' rows the findings and answers read.

use crate::findings_compare::{Row, Spread};
use crate::series::{self, num};
use serde_json::Value;

pub use iolab_engine::measure::cpu::FEW_TICKS;

/// A record's point without its `repeat` key: the point its repeats share.
pub fn shared_point(rec: &Value) -> Vec<(String, String)> {
    series::record_point(rec)
        .into_iter()
        .filter(|(k, _)| k != "repeat")
        .collect()
}

/// One point's records: every repeat, and the one a table shows.
pub struct Group<'a> {
    /// The run with the median ns/op (the lower middle of an even count), else the first record.
    pub rec: &'a Value,
    pub runs: Vec<&'a Value>,
}

fn ns_of(rec: &Value) -> Option<f64> {
    num(rec.get("result")?, &["ns_per_op"]).filter(|v| v.is_finite())
}

impl<'a> Group<'a> {
    /// The records that have an iolab run's result, by ns/op.
    pub fn ran(&self) -> Vec<&'a Value> {
        let mut v: Vec<&Value> = self
            .runs
            .iter()
            .copied()
            .filter(|r| ns_of(r).is_some())
            .collect();
        v.sort_by(|a, b| ns_of(a).unwrap_or(0.0).total_cmp(&ns_of(b).unwrap_or(0.0)));
        v
    }

    /// The lowest and highest of figure `path` over the middle runs, and how many ran.
    pub fn middle(&self, path: &[&str]) -> Option<(usize, f64, f64)> {
        let xs: Vec<f64> = self
            .ran()
            .iter()
            .filter_map(|r| num(r.get("result")?, path))
            .collect();
        (xs.len() > 1).then(|| {
            let (lo, hi) = iolab_engine::stats::middle_range(xs.clone());
            (xs.len(), lo, hi)
        })
    }

    /// The spread of ns/op over the repeats, when there were some.
    pub fn spread(&self) -> Option<Spread> {
        self.middle(&["ns_per_op"])
            .map(|(runs, low_ns, high_ns)| Spread {
                runs,
                low_ns,
                high_ns,
            })
    }
}

/// The records grouped by point (repeats together), in the order each point first appears.
pub fn groups(recs: &[Value]) -> Vec<Group<'_>> {
    let mut keys: Vec<Vec<(String, String)>> = Vec::new();
    let mut out: Vec<Vec<&Value>> = Vec::new();
    for r in recs {
        let k = shared_point(r);
        match keys.iter().position(|x| *x == k) {
            Some(i) => out[i].push(r),
            None => {
                keys.push(k);
                out.push(vec![r]);
            }
        }
    }
    out.into_iter()
        .map(|runs| {
            let mut g = Group { rec: runs[0], runs };
            let ran = g.ran();
            if !ran.is_empty() {
                g.rec = ran[(ran.len() - 1) / 2];
            }
            g
        })
        .collect()
}

/// The comparing rules' rows: one per point, its median run, with the spread of its repeats.
pub fn rows_of(recs: &[Value]) -> Vec<Row> {
    rows_at(recs, &[])
}

/// [`rows_of`], each row knowing the line of its record: `lines[i]` is the record file's line holding
/// `recs[i]` (missing or 0: not known).
pub fn rows_at(recs: &[Value], lines: &[usize]) -> Vec<Row> {
    groups(recs)
        .iter()
        .filter_map(|g| {
            let mut row = Row::of_record(g.rec)?;
            row.spread = g.spread();
            let i = recs.iter().position(|r| std::ptr::eq(r, g.rec));
            row.source =
                crate::cite::Source::Line(i.and_then(|i| lines.get(i).copied()).unwrap_or(0));
            Some(row)
        })
        .collect()
}

/// Whether any point ran more than once.
pub fn repeated(gs: &[Group]) -> bool {
    gs.iter().any(|g| g.runs.len() > 1)
}
