//! The report's section for a suite's findings and answers (`iolab_lab::answers::Summary`, the
//! `{"summary": ...}` line of a suite's record file), which the page opens with: the memory copy rate
//! throughputs were checked against, each question with its answer and what it would need, the seed's
//! published figures checked, then the comparing findings.

use iolab_lab::answers::{needed_by_all, Summary};
use std::fmt::Write;

use crate::markup::esc;

/// The section for `sums` (one per suite run; empty: no section).
pub fn section(sums: &[Summary]) -> String {
    let mut o = String::new();
    for s in sums {
        let _ = writeln!(o, "<h2>The answers: suite {}</h2>", esc(&s.suite));
        let shared = needed_by_all(&s.answers);
        answers_table(s, shared, &mut o);
        let _ = writeln!(
            o,
            "<p>Throughputs are checked against what {}.</p>",
            esc(&s.memory.describe())
        );
        if !s.answers.is_empty() {
            o.push_str("<h3>Each answer</h3>\n<ol>\n");
            for (i, a) in s.answers.iter().enumerate() {
                let _ = write!(
                    o,
                    "<li id=\"answer-{}\"><p><b>{}</b> {} [{}]</p><p>{}</p>",
                    i + 1,
                    esc(&a.question),
                    esc(&a.source),
                    a.status.word(),
                    esc(&a.text)
                );
                if let Some(n) = a.needs_besides(shared) {
                    let _ = write!(o, "<p><i>Needs:</i> {}</p>", esc(n));
                }
                o.push_str("</li>\n");
            }
            o.push_str("</ol>\n");
        }
        if !s.published.is_empty() {
            o.push_str("<h3>The seed's published throughputs, checked</h3>\n<ul>\n");
            for p in &s.published {
                let class = if p.impossible { " class=\"err\"" } else { "" };
                let _ = writeln!(o, "<li{class}>{}: {}</li>", esc(&p.label), esc(&p.verdict));
            }
            o.push_str("</ul>\n");
        }
        if !s.findings.is_empty() {
            o.push_str("<h3>Findings</h3>\n");
            o.push_str(&crate::findings_by_cause::html_groups(&s.findings));
        }
    }
    o
}

/// The answers at a glance: each question with its status (linked to its answer below), and what every
/// answer needs, said once.
fn answers_table(s: &Summary, shared: Option<&str>, o: &mut String) {
    if s.answers.is_empty() {
        return;
    }
    o.push_str(
        "<table class=\"answers\"><tr><th>#</th><th>status</th><th>question</th><th>seed</th></tr>\n",
    );
    for (i, a) in s.answers.iter().enumerate() {
        let _ = writeln!(
            o,
            "<tr><td>{n}</td><td class=\"q\">{}</td><td class=\"q\"><a href=\"#answer-{n}\">{}</a></td>\
             <td class=\"q\">{}</td></tr>",
            a.status.word(),
            esc(&a.question),
            esc(&a.source),
            n = i + 1
        );
    }
    o.push_str("</table>\n");
    if let Some(w) = shared {
        let _ = writeln!(o, "<p>Every answer also needs {}.</p>", esc(w));
    }
}

/// `html` (a whole report page) with the section for `sums` leading it: the suite's answers, the seed's
/// figures checked and the findings before the table of runs and the charts.
pub fn with_answers(mut html: String, sums: &[Summary]) -> String {
    let sec = section(sums);
    let at = html.find("<h2>Runs</h2>").or_else(|| html.rfind("</body>"));
    if let Some(i) = at.filter(|_| !sec.is_empty()) {
        // In place: a page of many records is not copied whole.
        html.insert_str(i, &sec);
    }
    html
}
