//! The report's HTML page: its head and introduction, the table of every record, the charts as figures,
//! the profile section of each profiled run (`html/flame.rs`), and the findings of each run.

use super::model::{Out, Run};
use crate::fields;
use crate::html::markup::embed;
use crate::html::markup::esc;
use serde_json::Value;
use std::fmt::Write;

/// The whole page.
pub(super) fn page(
    recs: &[Value],
    labels: &[String],
    runs: &[Run],
    out: &mut Out,
    sources: &[String],
    answer: &str,
    keep_svgs: bool,
) -> String {
    let mut o = String::new();
    head(recs, runs, sources, &mut o);
    o.push_str(answer);
    o.push_str("<h2>Runs</h2>\n");
    super::runs_table::head(&mut o);
    for (rec, label) in recs.iter().zip(labels).take(MAX_ROWS) {
        record_row(&super::model::held(rec), label, &mut o);
    }
    o.push_str("</table>\n");
    if recs.len() > MAX_ROWS {
        let _ = writeln!(
            o,
            "<p>The table lists the first {} runs; {} more are in the result files, not listed here.</p>",
            iolab_engine::units::thousands_u64(MAX_ROWS as u64),
            iolab_engine::units::thousands_u64((recs.len() - MAX_ROWS) as u64)
        );
    }
    repeats_note(runs, &mut o);
    super::offload::section(runs, &mut o);
    o.push_str("<h2>Charts</h2>\n");
    // With charts left out (their reasons listed below), the records held something to chart.
    if !out.charts.iter().any(|c| c.run.is_none()) {
        o.push_str(match out.left_out.is_empty() {
            true => "<p>The records hold nothing to chart.</p>\n",
            false => "<p>No chart is drawn: each is left out, for the reason listed below.</p>\n",
        });
    }
    for c in out.charts.iter_mut().filter(|c| c.run.is_none()) {
        embed(c, keep_svgs, &mut o);
    }
    out.close_cap();
    if !out.left_out.is_empty() {
        o.push_str("<p>Charts left out, and why:</p>\n<ul class=\"left-out\">\n");
        for l in &out.left_out {
            let _ = writeln!(o, "<li>{}</li>", esc(l));
        }
        o.push_str("</ul>\n");
    }
    super::flame::section(runs, &mut out.charts, keep_svgs, &mut o);
    findings(runs, &mut o);
    o.push_str("</body></html>\n");
    o
}

/// The head with its style, the title, where the records came from, and the host of the first run.
fn head(recs: &[Value], runs: &[Run], sources: &[String], o: &mut String) {
    let emulated = runs.iter().filter(|x| x.has.emulated).count();
    o.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>iolab report</title>\n<style>\
         body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;font-size:13px}\
         td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child,td.fn,td.q,table.answers th{text-align:left}\
         table.runs td small{white-space:nowrap;color:#555}figure{margin:2em 0}figure svg{max-width:100%;height:auto}figcaption{font-size:13px;color:#333;max-width:1000px}.err{color:#a00}\
         .emulated{background:#fff3cd;border:1px solid #d4a017;padding:6px 10px}\
         @media (max-width:700px){body{margin:0.7em}table{display:block;overflow-x:auto;max-width:100%}\
         td,th{white-space:nowrap}table.answers td{white-space:normal}table.answers td.q{min-width:5em}figure{overflow-x:auto;margin:1.2em 0}figure svg{max-width:none}}\
         </style></head><body>\n",
    );
    let _ = writeln!(o, "<h1>iolab report</h1>");
    let _ = writeln!(
        o,
        "<p>From {} ({} records, {} with results). Units: MiB = 2<sup>20</sup> bytes; times are of the timed loop \
         (what each run timed and left out is in its JSON: <code>timed</code>, <code>excluded</code>).</p>",
        sources.iter().map(|s| format!("<code>{}</code>", esc(s))).collect::<Vec<_>>().join(", "),
        recs.len(),
        runs.len()
    );
    if emulated > 0 {
        let _ = writeln!(
            o,
            "<p class=\"emulated\"><b>Emulated:</b> {emulated} of {} runs ran on an emulated CPU (QEMU {}, \
             <code>iolab vm</code>; marked \u{2020} below): their figures show how the kernel behaves (counts, \
             bytes, punts, polled completions), not how fast real hardware is.</p>",
            runs.len(),
            esc(&runs
                .iter()
                .find(|x| x.has.emulated)
                .map(|x| fields::HOST_ACCELERATOR.text(&x.r()).to_uppercase())
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| "TCG".into()))
        );
    }
    // Each distinct machine once: a fleet's runs come from several.
    let mut hosts: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for x in runs.iter().filter(|x| x.host != super::coords::NONE) {
        if seen.insert(x.host) {
            hosts.push(x.coords.values.text(x.host).to_string());
        }
    }
    match hosts.len() {
        0 => {}
        1 => {
            let _ = writeln!(o, "<p>Host: {}.</p>", esc(&hosts[0]));
        }
        n => {
            let _ = writeln!(
                o,
                "<p>{n} machines (each run's source names its host): {}.</p>",
                esc(&hosts.join("; "))
            );
        }
    }
}

/// Did this run's CPU run emulated (`host.emulated`)?
pub(super) fn is_emulated(r: &Value) -> bool {
    fields::HOST_EMULATED.at(r).and_then(Value::as_bool) == Some(true)
}

/// The most runs the page's table lists: a row is up to a few KB (a refusal's text), and a table of
/// 228,000 rows was a 300 MB page.
pub(super) const MAX_ROWS: usize = 2000;

/// One record's row of the table (`html/runs_table.rs`). A run on an emulated CPU is marked with a
/// dagger.
fn record_row(rec: &Value, label: &str, o: &mut String) {
    let label = match fields::RESULT.at(rec) {
        Some(r) if is_emulated(r) => format!("{label} \u{2020} emulated"),
        _ => label.to_string(),
    };
    super::runs_table::row(rec, &label, o);
}

/// What a row and a chart of a configuration run with `--repeat K` show, when the records hold one.
fn repeats_note(runs: &[Run], o: &mut String) {
    if runs.iter().any(|x| x.has.repeats) {
        o.push_str(
            "<p>A configuration run with <code>--repeat K</code> is one row, \"(K repeats)\": each figure the \
             median of its K repeats, under it the range (min-max; the tooltip adds the middle range, the \
             fastest and slowest quarter dropped). The charts draw it once (its label ends in \"(K repeats)\", and a \
             legend names <code>repeats=K</code> where that tells runs apart): throughput, IOPS, time per op, CPU and system calls per op at their medians, latency percentiles \
             and distributions from its median run (the repeat with the median time per op).</p>\n",
        );
    }
}

/// The findings of every run that has any, under the run's label.
fn findings(runs: &[Run], o: &mut String) {
    let mut findings = String::new();
    for x in runs.iter().filter(|x| x.has.findings) {
        if let Some(fs) = fields::FINDINGS.at(&x.r()).map(iolab_lab::series::items) {
            if fs.is_empty() {
                continue;
            }
            let _ = writeln!(findings, "<h3>{}</h3><ul>", esc(&x.label));
            for f in fs.iter() {
                let _ = writeln!(findings, "<li>{}</li>", esc(&fields::FINDING_TEXT.text(f)));
            }
            findings.push_str("</ul>\n");
        }
    }
    if !findings.is_empty() {
        o.push_str("<h2>Findings</h2>\n");
        o.push_str(&findings);
    }
}
