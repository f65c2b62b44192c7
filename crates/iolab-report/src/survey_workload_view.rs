//! `iolab survey --target PATH` as text: the answer first (per workload the fastest methods at the same
//! requests in flight against pread()/pwrite(), the fastest one's verdict), every row with its verdict
//! with `-v`.

use crate::survey_answer::{line_of, x_write};
use crate::text::table::{Align, Table};
use crate::text::Doc;
use iolab_engine::units::fmt_ns;
use iolab_lab::survey_workload::{Workload, WorkloadSurvey};

/// The answer, then with `verbose` each workload's table.
pub fn doc(s: &WorkloadSurvey, verbose: bool) -> Doc {
    let mut d = Doc::new();
    d.line(format!(
        "iolab survey: {} ({}, {}): every method at the same requests in flight, time per op against \
         pread()'s or pwrite()'s (lower is faster), median of {} round{}",
        s.target,
        s.target_kind,
        s.fs,
        s.rounds,
        if s.rounds == 1 { "" } else { "s" }
    ));
    if let Some(e) = s.host.emulated_line() {
        d.line(format!("emulated (indicative only): {e}"));
    }
    if s.rounds < 3 {
        d.line("indicative: fewer than 3 rounds cannot tell noise from a difference (give --rounds 3 or more)");
    }
    // One line per workload, under its cache mode: the two fastest, the slowest.
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for direct in [true, false] {
        let mine: Vec<&Workload> = s.workloads.iter().filter(|w| w.direct == direct).collect();
        if mine.is_empty() {
            continue;
        }
        d.blank().line(if direct {
            "O_DIRECT:"
        } else {
            "buffered (through the page cache):"
        });
        for w in mine {
            let Some(t) = s.ranking.iter().find(|t| t.target == w.label()) else {
                d.line(format!("  {:<15} nothing ran", w.short()));
                continue;
            };
            d.line(format!("  {:<15} {}", w.short(), line_of(t, 2)));
            let first = t.rows.iter().find(|r| r.rank != "floor");
            if let Some(v) = first
                .and_then(|r| run(s, &t.target, &r.method))
                .and_then(|r| r.verdict.as_ref())
            {
                match kinds.iter_mut().find(|(k, _)| *k == v.kind) {
                    Some((_, n)) => *n += 1,
                    None => kinds.push((v.kind.clone(), 1)),
                }
            }
        }
    }
    if !kinds.is_empty() {
        let said: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} in {n}")).collect();
        d.blank().line(format!(
            "What limited the fastest method: {}",
            said.join(", ")
        ));
    }
    let not_run = s.runs.iter().filter(|r| r.result.is_none()).count();
    if not_run > 0 {
        d.blank().line(format!(
            "{not_run} method-workload pairs not measured (a method that cannot do the workload, with why: -v)"
        ));
    }
    if verbose {
        for t in &s.ranking {
            table(s, t, &mut d);
        }
    } else {
        d.line("Every row with what limited it: iolab survey -v ... (or the JSON below)");
    }
    d
}

fn run<'a>(
    s: &'a WorkloadSurvey,
    target: &str,
    method: &str,
) -> Option<&'a iolab_lab::survey::SurveyRun> {
    s.runs
        .iter()
        .find(|r| r.target == target && r.method.name() == method)
}

/// One workload's rows: rank, method, how its in-flight count was made, time per op, the ratio, the
/// verdict; then the methods that did not run, with why.
fn table(s: &WorkloadSurvey, t: &iolab_lab::ranking::RankingTable, d: &mut Doc) {
    use Align::{Left as L, Right as R};
    d.blank().heading(format!("== {}", t.target));
    let mut tb = Table::new(
        &[
            ("rank", R),
            ("method", L),
            ("in flight as", L),
            ("time/op", R),
            ("middle rounds", R),
            (format!("x {}", t.baseline_label).as_str(), R),
            ("what limited it", L),
        ],
        2,
    );
    for row in &t.rows {
        let Some(r) = run(s, &t.target, &row.method) else {
            continue;
        };
        let Some(res) = r.result.as_ref() else {
            continue;
        };
        tb.row([
            row.rank.clone(),
            row.method.clone(),
            format!(
                "{} thread{} x qd {}",
                res.spec.threads,
                if res.spec.threads == 1 { "" } else { "s" },
                res.spec.qd
            ),
            fmt_ns(row.median),
            format!("{}-{}", fmt_ns(row.lo), fmt_ns(row.hi)),
            x_write(row, &t.baseline),
            r.verdict.as_ref().map_or("-".into(), |v| v.text.clone()),
        ]);
    }
    for u in s
        .runs
        .iter()
        .filter(|r| r.target == t.target && r.result.is_none())
    {
        tb.note(
            ["n/a".to_string(), u.method.name().to_string()],
            u.unavailable.as_deref().unwrap_or("unavailable"),
        );
    }
    d.table(tb);
}
