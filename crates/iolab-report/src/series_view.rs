//! The tables of `run --repeat`, `sweep` and `compare` as documents (`crate::text::Doc`): printed
//! to the terminal's width and exported with `--md`. Every figure carries a human unit; a rate over a
//! span too short to time says so (`iolab_engine::units::too_short`).

use crate::text::{Align, Doc, Table};
use iolab_engine::units::{fmt_mib_s, fmt_ns, fmt_ops_s};
use iolab_lab::compare::{CompareRow, Outcome};
use iolab_lab::series::{self, RepeatSummary};
use serde_json::Value;

use Align::{Left as L, Right as R};

/// A figure of `series::FIGURES` as people read it: its name and its value with a unit.
pub fn figure_name(name: &str) -> &str {
    match name {
        "iops" => "IOPS",
        "mib_s" => "throughput",
        "ns_per_op" => "time/op",
        "lat_p50" => "latency p50",
        "lat_p99" => "latency p99",
        "cpu_user" => "user CPU",
        "cpu_sys" => "system CPU",
        "syscalls_per_op" => "syscalls/op",
        other => other,
    }
}

/// A value of the figure `name` with its unit.
pub fn figure_value(name: &str, v: f64) -> String {
    match name {
        "iops" => fmt_ops_s(v),
        "mib_s" => fmt_mib_s(v),
        "ns_per_op" | "lat_p50" | "lat_p99" => fmt_ns(v),
        "cpu_user" | "cpu_sys" => iolab_engine::units::fmt_s(v),
        _ => format!("{v:.3}"),
    }
}

/// A rate of a result document, or "too short" where its timed span was too short to time.
fn rate_of(r: &Value, text: String) -> String {
    let n = |p: &[&str]| series::num(r, p).unwrap_or(f64::NAN);
    match iolab_engine::units::too_short(
        n(&["wall_s"]),
        n(&["clock", "overhead_ns"]),
        n(&["clock", "ns_per_tick"]),
    ) {
        Some(_) => "too short".into(),
        None => text,
    }
}

/// The cells of a run's key figures: IOPS, throughput, time/op, p50 and p99 latency.
fn run_cells(r: &Value) -> Vec<String> {
    let n = |p: &[&str]| series::num(r, p).unwrap_or(f64::NAN);
    // A figure the result does not hold is "-", never "NaN s".
    let ns = |p: &[&str]| {
        Some(n(p))
            .filter(|v| v.is_finite())
            .map_or("-".into(), fmt_ns)
    };
    vec![
        rate_of(r, fmt_ops_s(n(&["iops"]))),
        rate_of(r, fmt_mib_s(n(&["mib_s"]))),
        ns(&["ns_per_op"]),
        ns(&["latency", "p50_ns"]),
        ns(&["latency", "p99_ns"]),
    ]
}

/// What a sweep's table (`run_cells`), its CSV (`csv::CSV_COLUMNS`), its `--csv-intervals` (with
/// `intervals`) and its exit status read of each point's result: all a sweep holds of a point while it
/// runs and at `--resume` (the whole record, its latency histogram and gaps, was about 56 KB a point).
/// What compare reads, with the ops and bytes the CSV gives.
pub fn sweep_held(intervals: bool) -> Vec<&'static [&'static str]> {
    let mut p: Vec<&'static [&'static str]> = iolab_lab::compare::KEPT.to_vec();
    p.extend([&["ops"][..], &["bytes"][..]]);
    if intervals {
        p.push(&["intervals"]);
    }
    p
}

/// A sweep or suite point's figures as its line says them when it finishes.
pub fn point_figures(r: &Value) -> String {
    let c = run_cells(r);
    format!("{}  {}  {}/op  p99 {}", c[0], c[1], c[2], c[4])
}

const RUN_COLS: [(&str, Align); 5] = [
    ("IOPS", R),
    ("throughput", R),
    ("time/op", R),
    ("p50", R),
    ("p99", R),
];

/// One line of `run --repeat` as it finishes: "run   2/5   ..." with the run's key figures.
pub fn repeat_line(i: usize, n: usize, r: &Value) -> String {
    let c = run_cells(r);
    format!(
        "run {:>3}/{n}  {:>12}  {:>11}  {:>9}/op  p50 {:>9}  p99 {:>9}",
        i + 1,
        c[0],
        c[1],
        c[2],
        c[3],
        c[4]
    )
}

/// `run --repeat`'s tables: the header, every run (a table; on the terminal the runs were printed as
/// they finished, so `runs` is empty there), then each figure's median, min, max, stdev and spread.
pub fn repeat_doc(header: &str, runs: &[Value], s: &RepeatSummary) -> Doc {
    let mut d = Doc::new();
    if !runs.is_empty() {
        d.line(header);
        let mut cols = vec![("run", R)];
        cols.extend(RUN_COLS);
        let mut t = Table::new(&cols, 1);
        for (i, r) in runs.iter().enumerate() {
            let mut cells = vec![format!("{}", i + 1)];
            cells.extend(run_cells(r));
            t.row(cells);
        }
        d.table(t).blank();
    }
    d.line(format!(
        "repeat       {} runs of the same workload (each figure: median, min, max, stdev, spread = \
         (max-min)/median; time/op = wall / ops; CPU of the whole process; syscalls/op by iolab's count)",
        s.runs
    ));
    let mut t = Table::new(
        &[
            ("figure", L),
            ("median", R),
            ("min", R),
            ("max", R),
            ("stdev", R),
            ("spread", R),
        ],
        1,
    )
    .indent(2);
    for (name, _, st) in &s.figures {
        let v = |x: f64| figure_value(name, x);
        t.row([
            figure_name(name).to_string(),
            v(st.median),
            v(st.min),
            v(st.max),
            v(st.stdev),
            format!("{:.1}%", st.spread_pct),
        ]);
    }
    d.table(t);
    if let Some(n) = &s.spread_note {
        d.line(format!("note         {n}"));
    }
    d
}

/// A sweep's table: a row per point (its keys, then the run's key figures, or why it did not run).
pub fn sweep_doc(lead: &str, keys: &[String], recs: &[&Value]) -> Doc {
    let mut d = Doc::new();
    d.line(lead);
    let mut cols: Vec<(&str, Align)> = keys.iter().map(|k| (k.as_str(), L)).collect();
    cols.extend(RUN_COLS);
    let mut t = Table::new(&cols, keys.len());
    for rec in recs {
        let key_cells = crate::csv::point_cells(rec, keys);
        match (rec.get("result"), rec.get("error").and_then(|e| e.as_str())) {
            (Some(r), _) => {
                let mut cells = key_cells;
                cells.extend(run_cells(r));
                t.row(cells);
            }
            // A point that started and failed (no space, an I/O error) is not one that did not run.
            (None, Some(e)) if iolab_lab::suite::point_failed(rec) => {
                t.note(key_cells, format!("failed: {e}"))
            }
            (None, Some(e)) => t.note(key_cells, format!("not run: {e}")),
            _ => {}
        }
    }
    d.table(t);
    d
}

/// What compare found: the lead line, the single-run warning, a table per workload, what only one side
/// has.
pub fn compare_doc(lead: &str, warning: Option<String>, o: &Outcome) -> Doc {
    let mut d = Doc::new();
    d.line(lead);
    if let Some(w) = warning {
        d.line(w);
    }
    let mut last: Option<&str> = None;
    let mut table: Option<Table> = None;
    for (i, r) in o.rows.iter().enumerate() {
        if last != Some(r.workload.as_str()) {
            if let Some(t) = table.take() {
                d.table(t);
            }
            // The workload's runs: the most any of its figures is from (a run too short for a rate has
            // no IOPS, and its rows say fewer).
            let same: Vec<_> = o.rows[i..]
                .iter()
                .take_while(|x| x.workload == r.workload)
                .collect();
            let most = |side: fn(&CompareRow) -> usize| {
                let n: Vec<usize> = same.iter().map(|x| side(x)).collect();
                (
                    n.iter().copied().max().unwrap_or(0),
                    n.iter().copied().min().unwrap_or(0),
                )
            };
            let ((a, a_lo), (b, b_lo)) = (most(|x| x.a.n), most(|x| x.b.n));
            let runs = |n: usize| format!("{n} run{}", if n == 1 { "" } else { "s" });
            let fewer = match a_lo < a || b_lo < b {
                true => "; a figure some runs lack is from fewer",
                false => "",
            };
            d.blank().line(format!(
                "{} (A: {}, B: {}{fewer})",
                r.workload,
                runs(a),
                runs(b)
            ));
            table = Some(compare_table());
            last = Some(&r.workload);
        }
        compare_row(table.as_mut().expect("made above"), r);
    }
    if let Some(t) = table {
        d.table(t);
    }
    if !o.only_a.is_empty() || !o.only_b.is_empty() {
        d.blank();
    }
    for w in &o.only_a {
        d.line(format!("only in A: {w}"));
    }
    for w in &o.only_b {
        d.line(format!("only in B: {w}"));
    }
    if o.rows.is_empty() {
        d.line("no workload appears in both files");
    }
    d
}

fn compare_table() -> Table {
    Table::new(
        &[
            ("figure", L),
            ("A", R),
            ("B", R),
            ("B/A", R),
            ("noise", R),
            ("verdict", Align::Wrap),
        ],
        1,
    )
    .indent(2)
}

fn compare_row(t: &mut Table, r: &CompareRow) {
    let side = |s: &iolab_engine::stats::Stat| figure_value(&r.figure, s.median);
    let ratio = if r.ratio.is_finite() {
        format!("{:.3}", r.ratio)
    } else {
        "-".to_string()
    };
    let unranked = r.verdict == iolab_lab::compare::Verdict::Emulated;
    let single = if (r.a.n < 2 || r.b.n < 2) && !unranked {
        " (noise not measured)"
    } else {
        ""
    };
    t.row([
        figure_name(&r.figure).to_string(),
        side(&r.a),
        side(&r.b),
        ratio,
        format!("{:.1}%", r.noise_pct),
        format!("{}{single}", r.verdict_word()),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sweep holds of each point only what it shows: its table, CSV and interval CSV of the held records
    /// are those of the whole ones (a whole run's result, with every part the report reads).
    #[test]
    fn a_sweeps_held_records_show_what_the_whole_ones_do() {
        let mut r = serde_json::to_value(crate::fields::tests::full_run()).unwrap();
        // Figures that tell apart a column read from the wrong place.
        r["cpu"]["process"]["user_s"] = serde_json::json!(0.25);
        r["cpu"]["process"]["sys_s"] = serde_json::json!(0.5);
        let whole = series::record(&[("bs".into(), "4k".into())], Ok(r));
        let failed = serde_json::json!({"point": {"bs": "8k"}, "error": "no space left (ENOSPC)"});
        let keys = ["bs".to_string()];
        for intervals in [false, true] {
            let paths = sweep_held(intervals);
            let held: Vec<Value> = [&whole, &failed]
                .iter()
                .map(|v| series::kept((*v).clone(), series::Keep::Paths(&paths)))
                .collect();
            assert!(held[0].to_string().len() * 3 < whole.to_string().len() || intervals);
            let all = [&whole, &failed];
            let kept: Vec<&Value> = held.iter().collect();
            let text = |recs: &[&Value]| sweep_doc("lead", &keys, recs).render(Some(160));
            assert_eq!(text(&kept), text(&all));
            assert_eq!(
                crate::csv::of_records(kept.iter().copied(), &keys),
                crate::csv::of_records(all.iter().copied(), &keys)
            );
            if intervals {
                let csv = |recs: &[&Value]| crate::interval_csv::of_records(recs, &keys);
                assert_eq!(csv(&kept), csv(&all));
                assert!(csv(&all).lines().count() > 1);
            }
        }
    }

    #[test]
    fn every_figure_has_a_name_and_a_unit() {
        for f in series::FIGURES {
            assert_ne!(
                figure_name(f.name),
                f.name,
                "{} has no readable name",
                f.name
            );
            assert!(
                figure_name(f.name).len() <= 12,
                "{} is too long for a column",
                f.name
            );
            let v = figure_value(f.name, 2_574_838.0);
            if f.unit.starts_with("ns") || f.unit.contains("/s") {
                assert!(!v.contains("2574838"), "{}: {v}", f.name);
            }
        }
        assert_eq!(figure_value("lat_p99", 2_574_838.0), "2.57 ms");
    }
}
