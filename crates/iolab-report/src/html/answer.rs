//! The answer a survey's page opens with: per target and block size its ranking (the one the survey
//! printed, [`iolab_lab::ranking`]), each method's time per op against write()'s drawn as a bar on a log
//! axis with the range that ratio can have, fastest first.

use crate::html::markup::esc;
use iolab_engine::method::MethodKind;
use iolab_engine::units::{fmt_ns, fmt_size};
use iolab_lab::ranking::{RankRow, RankingTable};
use iolab_lab::rounds::RoundRun;
use iolab_lab::series::items;
use iolab_lab::survey::Ranked;
use serde_json::Value;
use std::fmt::Write;

/// Width of a bar's drawing, px.
const W: f64 = 260.0;

/// A survey's run as its ranking and the layer figure read it: from a record's result cut down to
/// what the report shows (a whole `RunResult` is not held: a survey of many runs is read in a small
/// multiple of its text).
struct Run<'a> {
    ranked: Ranked<'a>,
    /// `--layers`: the mean time per op before, queued in, on the device and after (ns).
    layers: Option<[f64; 4]>,
}

/// `r` (a survey's run, read as a record's result) as the ranking reads it, with its own copy of its
/// target (a record held as its JSON text is parsed for this and let go); none for other results.
fn owned_run(r: &Value) -> Option<(String, Run<'static>)> {
    let run = run_of(r)?;
    let target = run.ranked.target.to_string();
    let ranked = Ranked {
        target: "",
        ..run.ranked
    };
    Some((target, Run { ranked, ..run }))
}

/// `r` (a survey's run, read as a record's result) as the ranking reads it; none for other results.
fn run_of(r: &Value) -> Option<Run<'_>> {
    use crate::fields::*;
    if SPEC_METHOD.at(r).is_some() {
        return None;
    }
    let result = SURVEY_RESULT.at(r).filter(|v| !v.is_null());
    let round_runs = SURVEY_ROUND_RUNS.at(r).map(items).unwrap_or_default();
    let round_runs = round_runs.iter().filter_map(|x| {
        Some(RoundRun {
            round: u32::try_from(ROUND_NUMBER.num(x)? as u64).ok()?,
            ns_per_op: ROUND_NS_PER_OP.num(x)?,
            disturbed: ROUND_DISTURBED.at(x)?.as_bool()?,
        })
    });
    let rounds = SURVEY_ROUNDS.at(r).map(items).unwrap_or_default();
    let layers = [LAYERS_BEFORE, LAYERS_QUEUED, LAYERS_DEVICE, LAYERS_AFTER];
    Some(Run {
        ranked: Ranked {
            target: SURVEY_TARGET.at(r)?.as_str()?,
            method: MethodKind::parse(SURVEY_METHOD.at(r)?.as_str()?)?,
            bs: SURVEY_BS.at(r)?.as_u64()?,
            median: result.and_then(|x| NS_PER_OP.num(x)),
            round_runs: round_runs.collect(),
            rounds_ns_per_op: rounds.iter().filter_map(Value::as_f64).collect(),
        },
        layers: result.and_then(|x| {
            let v: Vec<f64> = layers.iter().filter_map(|f| f.num(x)).collect();
            v.try_into().ok()
        }),
    })
}

/// The section, or nothing when no record is a survey's run.
pub(super) fn section(recs: &[Value]) -> String {
    let mut owned: Vec<(String, Run<'static>)> = recs
        .iter()
        .filter_map(|rec| owned_run(crate::fields::RESULT.at(&super::model::held(rec))?))
        .collect();
    let (ranked, layers_of): (Vec<Ranked<'_>>, Vec<Option<[f64; 4]>>) = owned
        .iter_mut()
        .map(|(target, r)| {
            let ranked = Ranked {
                target: target.as_str(),
                round_runs: std::mem::take(&mut r.ranked.round_runs),
                rounds_ns_per_op: std::mem::take(&mut r.ranked.rounds_ns_per_op),
                ..r.ranked
            };
            (ranked, r.layers)
        })
        .unzip();
    if ranked.is_empty() {
        return String::new();
    }
    // The runs of `survey --target` are named by their workload and ranked against pread()/pwrite().
    let workload = ranked.iter().all(|r| r.target.contains(" in flight, "));
    let (tables, all) = if workload {
        workload_tables(&ranked)
    } else {
        iolab_lab::survey::ranking_of_first(
            &ranked,
            iolab_lab::ranking::BASELINE,
            "write()",
            MAX_TABLES,
        )
    };
    if tables
        .iter()
        .all(|t| t.rows.iter().all(|r| r.rank == "floor"))
    {
        return String::new();
    }
    let against = if workload {
        "Per workload, each method at the same requests in flight: its median time per op against \
         pread()'s or pwrite()'s (the <code>psync</code> method)"
    } else {
        "Per target and block size, each method's median time per op against write()'s (the \
         <code>sync</code> method)"
    };
    let mut o = format!(
        "<h2>The answer</h2>\n<p>{against}, fastest first. Bars are on a log axis (one scale per table; each \
         bar runs from the line at 1, the baseline, to the method's ratio: left is faster); the ratio is the \
         median of the per-round ratios over the rounds both ran, and the whisker its 99% interval (sign \
         test; none with fewer than 6 such rounds). A row shares the rank of the rows before it (\"2=\") \
         unless that interval separates it from each of them.</p>\n"
    );
    // The first run of each target and method, as the ranking's rows name them.
    let mut layers = super::layers::Layers::new();
    for (r, l) in ranked.iter().zip(&layers_of) {
        if let Some(l) = *l {
            let key = (r.target, r.method.name());
            layers.entry(key).or_insert(l);
        }
    }
    for (n, t) in tables.iter().enumerate() {
        table(t, &mut o);
        if workload {
            super::layers::figure_of(t, &layers, n, &mut o);
        }
    }
    if all > tables.len() {
        let _ = writeln!(
            o,
            "<p>{} more tables (a target and block size each) are left out of the page: the survey's \
             JSON holds every ranking.</p>",
            iolab_engine::units::thousands_u64((all - tables.len()) as u64)
        );
    }
    o
}

/// The most ranking tables the page draws (a survey of many targets and block sizes has a few hundred;
/// a forged one of 127,000 cells made a page of 55 MB).
const MAX_TABLES: usize = 500;

/// A workload survey's tables, each against pread() or pwrite() by its direction.
fn workload_tables(runs: &[Ranked<'_>]) -> (Vec<RankingTable>, usize) {
    let (mut tables, all) = iolab_lab::survey::ranking_of_first(
        runs,
        iolab_lab::survey_workload::BASELINE,
        "pread()",
        MAX_TABLES,
    );
    for t in &mut tables {
        if t.target.contains(" writes, ") {
            t.baseline_label = "pwrite()".into();
        }
    }
    (tables, all)
}

fn table(t: &RankingTable, o: &mut String) {
    let rows: Vec<&RankRow> = t.rows.iter().filter(|r| r.rank != "floor").collect();
    let ends: Vec<f64> = rows
        .iter()
        .flat_map(|r| [r.ratio_lo, r.ratio_hi, r.ratio_to_write])
        .flatten()
        .filter(|x| *x > 0.0 && x.is_finite())
        .chain([1.0])
        .collect();
    let lo = ends
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .log10()
        .floor();
    let hi = ends
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .log10()
        .ceil()
        .max(lo + 1.0);
    let x = |v: f64| (v.log10() - lo) / (hi - lo) * W;
    let heading = if t.baseline == iolab_lab::ranking::BASELINE {
        format!("{} writes to {}", fmt_size(t.bs), t.target)
    } else {
        t.target.clone()
    };
    let _ = writeln!(
        o,
        "<h3>{}</h3>\n<table class=\"answer\"><tr><th>rank</th><th>method</th><th>time/op</th>\
         <th>middle rounds</th><th>x {}</th><th>log axis: {} to {}</th></tr>",
        esc(&heading),
        esc(&t.baseline_label),
        axis_label(lo),
        axis_label(hi)
    );
    let base_name = format!("{} ({})", t.baseline_label, t.baseline);
    for r in rows {
        let name = if r.method == t.baseline {
            &base_name
        } else {
            &r.method
        };
        let ratio = r.ratio_to_write.map_or("-".into(), |v| format!("{v:.2}x"));
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"fn\">{}</td><td>{}</td><td>{}-{}</td><td>{ratio}</td><td>",
            esc(&r.rank),
            esc(name),
            fmt_ns(r.median),
            fmt_ns(r.lo),
            fmt_ns(r.hi)
        );
        bar(r, &x, o);
        o.push_str("</td></tr>\n");
    }
    o.push_str("</table>\n");
}

/// One row's bar from the left edge to its ratio, its whisker, and the line at write() (1x).
fn bar(r: &RankRow, x: &dyn Fn(f64) -> f64, o: &mut String) {
    let _ = write!(
        o,
        "<svg width=\"{W}\" height=\"14\" role=\"img\"><title>{}</title>",
        esc(&r.method)
    );
    if let Some(v) = r.ratio_to_write {
        // From write()'s line: faster to the left, slower to the right, so a bar's length is how far
        // the method is from write() on the log axis (not from the axis's arbitrary end).
        let fill = if v <= 1.0 { "#3a7" } else { "#c64" };
        let (from, to) = (x(1.0).min(x(v)), x(1.0).max(x(v)));
        let _ = write!(
            o,
            "<rect x=\"{from:.1}\" y=\"3\" width=\"{:.1}\" height=\"8\" fill=\"{fill}\"/>",
            (to - from).max(1.0)
        );
        // The whisker: the paired test's interval, where the two shared enough rounds for one.
        if let (Some(a), Some(b)) = (r.ratio_lo, r.ratio_hi) {
            let _ = write!(
                o,
                "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"7\" y2=\"7\" stroke=\"#000\"/>",
                x(a),
                x(b)
            );
        }
    }
    let _ = write!(
        o,
        "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"0\" y2=\"14\" stroke=\"#444\" stroke-dasharray=\"2,2\"/></svg>",
        x(1.0)
    );
}

/// "0.01x", "1x", "100x" for a power of ten.
fn axis_label(p: f64) -> String {
    let v = 10f64.powf(p);
    if v >= 1.0 {
        format!("{v:.0}x")
    } else {
        format!("{v}x")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_survey_page_opens_with_its_ranking_on_a_log_axis() {
        let run = |method: &str, ns: f64| {
            serde_json::json!({"result": {"target": "/dev/null", "method": method, "bs": 4,
                "result": null, "unavailable": null, "rounds_ns_per_op": [ns, ns * 1.01, ns * 0.99]}})
        };
        // Runs without a result are not ranked: the section is empty for them.
        assert_eq!(section(&[run("sync", 300.0)]), "");
        assert_eq!(
            section(&[serde_json::json!({"point": {}, "result": {"ops": 1}})]),
            ""
        );
    }

    #[test]
    fn the_axis_is_labelled_in_powers_of_ten() {
        assert_eq!(axis_label(-2.0), "0.01x");
        assert_eq!(axis_label(0.0), "1x");
        assert_eq!(axis_label(2.0), "100x");
    }
}
