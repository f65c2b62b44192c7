//! `iolab survey --target PATH` as text: the answer first (per workload the fastest methods at the same
//! requests in flight against pread()/pwrite(), the fastest one's verdict), every row with its verdict
//! with `-v`.

use crate::survey_answer::x_write;
use crate::text::table::{Align, Table};
use crate::text::Doc;
use iolab_engine::units::fmt_ns;
use iolab_lab::survey_workload::{Workload, WorkloadSurvey};

/// The answer, then with `verbose` each workload's table.
pub fn doc(s: &WorkloadSurvey, verbose: bool) -> Doc {
    let mut d = Doc::new();
    head(s, &mut d);
    // A grid per cache mode, one line per workload: the fastest method's figures, who it is, what
    // limited it.
    for direct in [true, false] {
        let mine: Vec<&Workload> = s.workloads.iter().filter(|w| w.direct == direct).collect();
        if !mine.is_empty() {
            d.blank().table(grid(s, direct, &mine));
        }
    }
    if let Some(why) = nothing_ran(s) {
        d.blank().line(why);
    }
    let open = crate::rounds_text::undecided_lines(s.rounds_run.as_ref(), &s.ranking);
    if !open.is_empty() {
        d.blank();
        for l in open {
            d.line(l);
        }
    }
    let failed = failures(s);
    if !failed.is_empty() {
        d.blank();
        for f in failed.iter().take(3) {
            d.line(format!("FAILED {f}"));
        }
        if failed.len() > 3 {
            d.line(format!(
                "and {} more failures: -v lists them",
                failed.len() - 3
            ));
        }
    }
    let refused = s
        .runs
        .iter()
        .filter(|r| r.result.is_none() && !r.failed_at_run_time())
        .count();
    if refused > 0 && !verbose {
        d.blank().line(format!(
            "-v: every method's row against pread()/pwrite() and what limited it, and why {refused} pairs \
             were not measured (mmap cannot do O_DIRECT, ...)"
        ));
    } else if !verbose {
        d.blank().line(
            "-v: every method's row with its time against pread()/pwrite() and what limited it",
        );
    }
    if verbose {
        if !s.layers.is_empty() && !layers_missing(s) {
            d.blank().line(s.layers.clone());
        }
        d.blank().line(
            "Ranks: a row shares the rank of the rows before it (\"2=\") unless the paired rounds separate \
             it from one of them (the median per-round ratio's 99% interval excludes 1). time/op: wall \
             time over ops, all threads.",
        );
        for w in &s.workloads {
            table(s, &w.label(), &mut d);
        }
    }
    d
}

/// Why the workloads where nothing ran ran nothing: the refusal most of their runs were given (an
/// immutable file refuses every write), with how many it speaks for.
fn nothing_ran(s: &WorkloadSurvey) -> Option<String> {
    let none: Vec<String> = s
        .workloads
        .iter()
        .map(Workload::label)
        .filter(|l| !s.ranking.iter().any(|t| &t.target == l))
        .collect();
    let mut why: std::collections::BTreeMap<&str, usize> = Default::default();
    let runs = s.runs.iter().filter(|r| none.contains(&r.target));
    for u in runs.filter_map(|r| r.unavailable.as_deref()) {
        *why.entry(u).or_default() += 1;
    }
    let total: usize = why.values().sum();
    let (most, n) = why.into_iter().max_by_key(|(_, n)| *n)?;
    Some(format!(
        "nothing ran on {} workload{}: {n} of their {total} refused runs, for: {most}",
        none.len(),
        if none.len() == 1 { "" } else { "s" }
    ))
}

/// One cache mode's workloads: per line the fastest method's rate (MiB/s sequential, IOPS random), its p50
/// and p99 latency, which method it is (with those it ties with) and what limited it.
fn grid(s: &WorkloadSurvey, direct: bool, ws: &[&Workload]) -> Table {
    use Align::{Left as L, Right as R};
    let mode = if direct { "O_DIRECT" } else { "buffered" };
    let mut tb = Table::new(
        &[
            (mode, L),
            ("rate", R),
            ("p50", R),
            ("p99", R),
            ("fastest", L),
            ("limited by", L),
        ],
        1,
    )
    .indent(2);
    for w in ws {
        let label = w.short();
        let Some(t) = s.ranking.iter().find(|t| t.target == w.label()) else {
            tb.note([label], "nothing ran");
            continue;
        };
        let Some(first) = t.ranked().next() else {
            tb.note([label], "no method ran to its end");
            continue;
        };
        let r = run(s, &t.target, &first.method).and_then(|r| r.result.as_ref());
        let verdict = run(s, &t.target, &first.method).and_then(|r| r.verdict.as_ref());
        tb.row([
            label,
            figures(s, &t.target, &first.method),
            r.map_or("-".into(), p50),
            r.map_or("-".into(), p99),
            fastest(t),
            verdict.map_or("-".into(), |v| limited(&v.kind)),
        ]);
    }
    tb
}

/// Who the fastest is: one method, with those it ties with ("aio = pv2", "pv2 +3 tied"), or none where the rounds
/// separated no two methods ("7 within noise").
fn fastest(t: &iolab_lab::ranking::RankingTable) -> String {
    if crate::rounds_text::no_ranking(t).is_some() {
        return format!("{} within noise", t.ranked().count());
    }
    let groups = t.groups();
    let Some(g) = groups.first() else {
        return "-".into();
    };
    let names: Vec<String> = g.iter().map(|r| crate::rounds_text::name(t, r)).collect();
    match names.len() {
        1 => names[0].clone(),
        2 if names.join(" = ").len() <= 20 => names.join(" = "),
        n => format!("{} +{} tied", names[0], n - 1),
    }
}

/// A row's absolute figure as KDiskMark shows it: MiB/s for a sequential workload, IOPS for a random one
/// ("215 MiB/s", "55k IOPS"); p99 and both rates are in the -v table.
fn figures(s: &WorkloadSurvey, target: &str, method: &str) -> String {
    let Some(r) = run(s, target, method).and_then(|r| r.result.as_ref()) else {
        return "-".into();
    };
    let random = s
        .workloads
        .iter()
        .find(|w| w.label() == target)
        .is_some_and(|w| w.rand);
    if !random {
        return format!("{:.0} MiB/s", r.mib_s);
    }
    match r.iops {
        v if v >= 1e4 => format!("{:.0}k IOPS", v / 1e3),
        v if v >= 1e3 => format!("{:.1}k IOPS", v / 1e3),
        v => format!("{v:.0} IOPS"),
    }
}

/// A run's p50 latency, or "-" where no op was timed on its own.
fn p50(r: &iolab_engine::result::RunResult) -> String {
    if r.latency.count > 0 {
        crate::rounds_text::short_ns(r.latency.p50_ns)
    } else {
        "-".into()
    }
}

/// A verdict's kind in a few letters: "device", "page-cache", "CPU", "unclear".
fn limited(kind: &str) -> String {
    match kind {
        "undecided" => "unclear".into(),
        k => k.trim_end_matches("-bound").replace("cpu", "CPU"),
    }
}

/// A run's p99 latency, or "-" where no op was timed on its own.
fn p99(r: &iolab_engine::result::RunResult) -> String {
    if r.latency.count > 0 {
        crate::rounds_text::short_ns(r.latency.p99_ns)
    } else {
        "-".into()
    }
}

/// The first lines: what was surveyed and how, emulated or pinned, how many runs were disturbed.
fn head(s: &WorkloadSurvey, d: &mut Doc) {
    d.line(format!(
        "iolab survey: {} ({}, {}): the fastest method per workload at equal requests in flight, its \
         run nearest the median of {}",
        s.target,
        // "a directory: reads share a file ...": what the files are, the plan said before the first run.
        s.target_kind.split(':').next().unwrap_or_default(),
        s.fs,
        crate::rounds_text::rounds_said(s.rounds_run.as_ref(), s.rounds)
    ));
    for l in crate::rounds_text::machine_lines(&s.host, s.rounds_run.as_ref()) {
        d.line(l);
    }
    if layers_missing(s) {
        d.line(s.layers.clone());
    }
    if let Some(n) = s.latency_sample.filter(|&n| n != 1) {
        d.line(match n {
            0 => format!(
                "timing: no op timed (--latency-sample 0){}: time per op from each run's span; no \
                 latency",
                match s.runs.iter().any(|r| {
                    r.result.is_some()
                        && r.method.info().exec == iolab_engine::method::Exec::OutOfProcess
                }) {
                    true => ", offload's round trips aside",
                    false => "",
                }
            ),
            n => format!(
                "timing: one op in {n} of a synchronous method timed on its own (--latency-sample {n}): \
                 time per op from each run's span; queued methods time every request"
            ),
        });
    }
}

/// Whether the survey has no time per layer (its `layers` says why).
fn layers_missing(s: &WorkloadSurvey) -> bool {
    s.layers.starts_with("no time per layer")
}

/// The failures at run time, grouped by their reason: "psync, io_uring (RND4K Q8 read): ENOSPC ...".
pub(crate) fn failures(s: &WorkloadSurvey) -> Vec<String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in s.runs.iter().filter(|r| r.failed_at_run_time()) {
        let why = r.unavailable.clone().unwrap_or_default();
        let name = r.method.name().to_string();
        match groups.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) if names.contains(&name) => {}
            Some((_, names)) => names.push(name),
            None => groups.push((why, vec![name])),
        }
    }
    groups
        .into_iter()
        .map(|(why, names)| format!("{}: {why}", names.join(", ")))
        .collect()
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

/// One workload's rows: rank, method, how its in-flight count was made, time per op, the ratio (with
/// the paired rounds' interval), IOPS, MiB/s, p99, the verdict; then the methods that did not run, with why (also when none ran).
fn table(s: &WorkloadSurvey, label: &str, d: &mut Doc) {
    use Align::{Left as L, Right as R};
    d.blank().heading(format!("== {label}"));
    let t = s.ranking.iter().find(|t| t.target == label);
    let base = t.map_or("the baseline", |t| t.baseline_label.as_str());
    let mut tb = Table::new(
        &[
            ("rank", R),
            ("method", L),
            ("in flight as", L),
            ("time/op", R),
            (format!("x {base}").as_str(), R),
            ("IOPS", R),
            ("MiB/s", R),
            ("p99", R),
            ("what limited it", L),
        ],
        2,
    );
    for row in t.iter().flat_map(|t| t.rows.iter()) {
        let Some(r) = run(s, label, &row.method) else {
            continue;
        };
        let Some(res) = r.result.as_ref() else {
            continue;
        };
        tb.row([
            row.rank.clone(),
            row.method.clone(),
            mapped(&res.spec),
            fmt_ns(row.median),
            x_write(row, t.map_or("", |t| t.baseline.as_str())),
            format!("{:.0}", res.iops),
            format!("{:.1}", res.mib_s),
            p99(res),
            r.verdict.as_ref().map_or("-".into(), |v| v.text.clone()),
        ]);
    }
    for u in s
        .runs
        .iter()
        .filter(|r| r.target == label && r.result.is_none())
    {
        tb.note(
            ["n/a".to_string(), u.method.name().to_string()],
            u.unavailable.as_deref().unwrap_or("unavailable"),
        );
    }
    d.table(tb);
    layers_table(s, t, d);
}

/// Each ranked row's time per op by layer (`--layers`), when any row has them.
fn layers_table(s: &WorkloadSurvey, t: Option<&iolab_lab::ranking::RankingTable>, d: &mut Doc) {
    use Align::{Left as L, Right as R};
    let Some(t) = t else { return };
    let rows: Vec<(&str, &iolab_engine::result::LayerFigures)> = t
        .rows
        .iter()
        .filter_map(|row| {
            let l = run(s, &t.target, &row.method)?
                .result
                .as_ref()?
                .layers
                .as_ref()?;
            Some((row.method.as_str(), l))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    d.blank().line(
        "Where an op's time went (mean per op, in an untimed pass traced at the block layer; the parts add up \
         to that pass's latency per op):",
    );
    let mut tb = Table::new(
        &[
            ("method", L),
            ("before", R),
            ("queued", R),
            ("device", R),
            ("after", R),
            ("latency", R),
            ("requests/op", R),
        ],
        2,
    );
    for (m, l) in rows {
        tb.row([
            m.to_string(),
            fmt_ns(l.before_ns),
            fmt_ns(l.queued_ns),
            fmt_ns(l.device_ns),
            fmt_ns(l.after_ns),
            fmt_ns(l.pass_mean_ns),
            format!("{:.2}", l.requests),
        ]);
    }
    d.table(tb);
}

/// How the requests in flight were made: "8 threads", "1 thread, qd 8", "batch 8".
fn mapped(spec: &iolab_engine::spec::Spec) -> String {
    let threads = if spec.threads == 1 {
        "1 thread".to_string()
    } else {
        format!("{} threads", spec.threads)
    };
    if spec.method.info().exec == iolab_engine::method::info::Exec::OutOfProcess {
        format!("a client, batch {}", spec.batch)
    } else if spec.qd > 1 {
        format!("{threads}, qd {}", spec.qd)
    } else {
        threads
    }
}
