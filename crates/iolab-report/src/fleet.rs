//! The fleet section of `iolab report DIR` (a results directory of `iolab fleet`): each host's outcome,
//! then per workload a row per host and the fleet's percentiles from the hosts' histograms merged.

use crate::markup::esc;
use iolab_engine::units::{fmt_ns, thousands_u64};
use iolab_lab::fleet::{Host, Merged, Outcome};
use std::fmt::Write;

/// `html` with a fleet section for `dir` before its runs (or at the end).
pub fn with_fleet(mut html: String, dir: &str, hosts: &[Host], merged: &[Merged]) -> String {
    let sec = section(dir, hosts, merged);
    match html.find("<h2>Runs</h2>").or_else(|| html.rfind("</body>")) {
        Some(i) => html.insert_str(i, &sec),
        None => html.push_str(&sec),
    }
    html
}

/// The hosts' table and the workloads' table, the workloads whose hosts differ most first.
pub fn section(dir: &str, hosts: &[Host], merged: &[Merged]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "<h2>Fleet: {}</h2>", esc(dir));
    o.push_str(
        "<table><tr><th>host</th><th>architecture</th><th>kernel</th><th>outcome</th></tr>\n",
    );
    for h in hosts {
        let what = match &h.outcome {
            Outcome::Ok => format!("ok, {} file(s) came back", h.files.len()),
            Outcome::Failed { why, .. } => format!("failed: {why} (its records are not merged)"),
            Outcome::NotRun { why } => format!("not run: {why}"),
            Outcome::Lost { why } => format!("lost: {why} (its records are not merged)"),
        };
        let what = match &h.emulated {
            Some(acc) => format!("{what}; emulated ({acc}): its figures show behaviour, not speed"),
            None => what,
        };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&h.name),
            esc(&h.architecture),
            esc(&h.kernel),
            esc(&what)
        );
    }
    o.push_str("</table>\n");
    if merged.is_empty() {
        o.push_str("<p>No workload to merge: no host that ran to the end sent back results.</p>\n");
        return o;
    }
    o.push_str(
        "<p>Latency per workload. The fleet's percentiles come from the hosts' latency histograms \
         merged into one (within the histograms' 0.1% precision), never from averaged percentiles. \
         Spread: the highest host p99 over the lowest. Outliers: hosts whose median IOPS lies beyond \
         their own runs' noise from the hosts' median (three hosts or more).</p>\n",
    );
    o.push_str(
        "<table><tr><th>workload</th><th>host</th><th>runs</th><th>IOPS (median)</th>\
         <th>p50</th><th>p99</th><th>latency values</th></tr>\n",
    );
    let mut order: Vec<&Merged> = merged.iter().collect();
    order.sort_by(|a, b| {
        b.p99_spread
            .unwrap_or(1.0)
            .total_cmp(&a.p99_spread.unwrap_or(1.0))
    });
    for m in order {
        workload_rows(m, &mut o);
    }
    o.push_str("</table>\n");
    o
}

/// A workload's host rows, then its fleet row.
fn workload_rows(m: &Merged, o: &mut String) {
    let span = m.hosts.len() + 1;
    for (i, h) in m.hosts.iter().enumerate() {
        let first = if i == 0 {
            format!("<td rowspan=\"{span}\">{}</td>", esc(&m.workload))
        } else {
            String::new()
        };
        let off = m
            .outliers
            .iter()
            .find(|(n, _)| n == &h.host)
            .map(|(_, r)| format!(" (outlier: {r:.2}x the hosts' median)"))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "<tr>{first}<td>{}</td><td>{}</td><td>{:.0}{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&h.host),
            h.runs,
            h.iops,
            esc(&off),
            fmt_ns(h.latency.p50_ns),
            fmt_ns(h.latency.p99_ns),
            thousands_u64(h.latency.count)
        );
    }
    let fleet = match &m.fleet {
        Some(f) => format!(
            "<td>{}</td><td>{}</td><td>{}</td>",
            fmt_ns(f.p50_ns),
            fmt_ns(f.p99_ns),
            thousands_u64(f.count)
        ),
        None => "<td colspan=\"3\">no fleet percentiles: a host's result carries no histogram</td>"
            .into(),
    };
    let spread = match m.p99_spread {
        Some(s) => format!("spread {s:.1}x"),
        None if m.hosts.len() > 1 => "no spread: fewer than two hosts measured a p99".into(),
        None => "one host".into(),
    };
    let _ = writeln!(
        o,
        "<tr class=\"fleet\"><td><b>fleet</b></td><td colspan=\"2\">{spread}</td>{fleet}</tr>"
    );
}
