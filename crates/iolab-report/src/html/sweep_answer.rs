//! The answer a sweep's page opens with: the best point of each line by throughput, with its IOPS and
//! p99 latency, its lead over the line's next best point (decided as `iolab compare` decides: beyond
//! the noise band or within it, `iolab_lab::compare::rows_of`) and the line's lowest point. A line is a
//! combination of the other keys the sweep varies, along the first numeric key it varies (bs, qd,
//! threads, batch); a sweep of none of them (methods, seeds) is one line, its points ranked. The
//! harness's floor (nop) moves no data and is left out.

use super::markup::esc;
use super::model::{held, Run};
use super::repeats;
use super::vary::{self, series_label, val};
use crate::fields;
use iolab_engine::units::{fmt_mib_s, fmt_ns, fmt_ops_s};
use iolab_lab::compare::Verdict;
use serde_json::Value;
use std::fmt::Write;

/// Lines the table shows at most (the charts below hold every one).
const MAX_LINES: usize = 24;

/// The keys a sweep's lines run along, in the order one is chosen.
const ALONG: [&str; 4] = ["bs", "qd", "threads", "batch"];

/// A sweep's point: its run, its throughput, and how many results it stands for (its repeats', else
/// its own: [`results`]).
struct Point<'a, 'b> {
    run: &'b Run<'a>,
    mib: f64,
    repeats: usize,
}

/// The results a point stands for, read again from its record (a record of JSON lines is held as its
/// text: the results of every point were not held at once).
fn results(p: &Point) -> Vec<Value> {
    let rec = held(p.run.rec);
    let rs: Vec<Value> = repeats::runs(&rec).into_iter().cloned().collect();
    match rs.is_empty() {
        true => vec![p.run.r().into_owned()],
        false => rs,
    }
}

/// The section, or nothing when the records are not a sweep's (points without a suite step) or hold
/// fewer than two points with a throughput.
pub(super) fn section(recs: &[Value], runs: &[Run]) -> String {
    let points: Vec<Point> = runs
        .iter()
        .filter_map(|run| {
            let rec = held(run.rec);
            let r = fields::RESULT.at(&rec)?;
            let ranked = rec.get("point").is_some()
                && val(run, "step").is_empty()
                && fields::WORKLOAD.at(r).is_none()
                // The harness's floor moves no data: no throughput to rank.
                && val(run, "method") != iolab_engine::method::nop::INFO.name;
            Some(Point {
                run,
                mib: fields::MIB_S.num(r).filter(|_| ranked)?,
                repeats: repeats::runs(&rec).len(),
            })
        })
        .collect();
    if points.len() < 2 || points.len() < recs.len() / 2 {
        return String::new();
    }
    let all: Vec<&Run> = points.iter().map(|p| p.run).collect();
    let keys = vary::varying(&all, &[]);
    let along = ALONG.iter().find(|k| keys.iter().any(|v| v == *k)).copied();
    // Without a key to run along, every point is on one line, ranked (methods, and seeds as repeats).
    let line_keys: Vec<String> = match along {
        Some(a) => keys.iter().filter(|k| k.as_str() != a).cloned().collect(),
        None => Vec::new(),
    };
    let mut lines: Vec<(String, Vec<&Point>)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = Default::default();
    for p in &points {
        let l = series_label(p.run, &line_keys);
        let i = *at.entry(l.clone()).or_insert_with(|| {
            lines.push((l, Vec::new()));
            lines.len() - 1
        });
        lines[i].1.push(p);
    }
    table(&lines, along, &points)
}

/// The page's table of `lines` along key `along` (none: the points ranked as one line).
fn table(lines: &[(String, Vec<&Point>)], along: Option<&str>, points: &[Point]) -> String {
    let name = along.unwrap_or("point");
    let single = points.iter().all(|p| p.repeats < 2);
    let mut o = format!(
        "<h2>The answer</h2>\n<p>The best point of each line by throughput (MiB/s, higher is better){}. \
         Its lead is over the line's next best point, decided as <code>iolab compare</code> decides: a \
         change beyond the noise band (the wider of the two points' spreads over their repeats, at least \
         2%) or within it.{}</p>\n<table class=\"answer\"><tr><th>line</th><th>best {name}</th>\
         <th>throughput</th><th>IOPS</th><th>p99 latency</th><th>lead over the next best</th>\
         <th>lowest</th></tr>\n",
        match along {
            Some(k) => format!(
                "; a line is a combination of the other keys the sweep varies, along <code>{}</code>",
                esc(k)
            ),
            None => String::new(),
        },
        if single {
            " Every point ran once: no spread was measured, so the band is the 2% floor and a lead of a \
             few percent is indicative; a second sweep tells whether it holds."
        } else {
            ""
        }
    );
    for (label, pts) in lines.iter().take(MAX_LINES) {
        row(label, pts, along, &mut o);
    }
    o.push_str("</table>\n");
    if lines.len() > MAX_LINES {
        let _ = writeln!(
            o,
            "<p>{} more lines are in the charts below.</p>",
            lines.len() - MAX_LINES
        );
    }
    o
}

/// A line's row: its best point, the lead over its next best, and its lowest point.
fn row(label: &str, pts: &[&Point], along: Option<&str>, o: &mut String) {
    let mib = |p: &Point| p.mib;
    let mut ranked: Vec<&Point> = pts.to_vec();
    ranked.sort_by(|a, b| mib(b).total_cmp(&mib(a)));
    let best = ranked[0];
    let place = |p: &Point| match along {
        Some(k) => val(p.run, k).to_string(),
        None => p.run.label.clone(),
    };
    let lead = match ranked.get(1) {
        Some(next) => lead(best, next, &place(next)),
        None => "one point".into(),
    };
    let low = ranked[ranked.len() - 1];
    let lowest = if ranked.len() > 1 {
        format!("{}: {}", place(low), fmt_mib_s(mib(low)))
    } else {
        "-".into()
    };
    let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".into(), f);
    let _ =
        writeln!(
        o,
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(if label.is_empty() { "all points" } else { label }),
        esc(&place(best)),
        fmt_mib_s(mib(best)),
        opt(fields::IOPS.num(&best.run.r()), fmt_ops_s),
        opt(fields::LATENCY_P99.num(&best.run.r()), fmt_ns),
        esc(&lead),
        esc(&lowest)
    );
}

/// The best point's lead over `next` (at `place`), in compare's words.
fn lead(best: &Point, next: &Point, place: &str) -> String {
    let (of_next, of_best) = (results(next), results(best));
    let rows = iolab_lab::compare::rows_of(
        "",
        &of_next.iter().collect::<Vec<_>>(),
        &of_best.iter().collect::<Vec<_>>(),
        &["mib_s"],
    );
    let Some(r) = rows.first() else {
        return format!("over {place}: no throughput to compare");
    };
    let pct = (r.ratio - 1.0) * 100.0;
    match r.verdict {
        Verdict::Faster => format!("{pct:.1}% over {place} (band {:.0}%)", r.noise_pct),
        Verdict::WithinNoise if r.ratio.is_finite() => format!(
            "within noise of {place} ({pct:.1}%, band {:.0}%)",
            r.noise_pct
        ),
        _ => format!("over {place}: no ratio (a throughput of 0 there)"),
    }
}
