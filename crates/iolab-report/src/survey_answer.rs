//! The survey's answer, the first thing it prints: per target and block size the fastest methods with
//! their time against write()'s (from the ranking, so the labels and ties are the table's), the slowest,
//! and for each target the one reason its findings give for its largest gap. At most about 25 lines at 80
//! columns; the tables and every finding follow with `-v`, and are in the JSON and the report.

use crate::text::Doc;
use iolab_engine::units::fmt_size;
use iolab_lab::ranking::{RankRow, RankingTable};
use iolab_lab::survey::SurveyResult;

/// How many ranked methods each line names before the slowest.
const TOP: usize = 2;

pub(crate) fn answer_doc(s: &SurveyResult) -> Doc {
    let mut d = Doc::new();
    d.line(format!(
        "iolab survey: time per op and ratio to write()'s (lower is faster), {}",
        rounds_said(s)
    ));
    for l in crate::rounds_text::machine_lines(&s.host, s.rounds_run.as_ref()) {
        d.line(l);
    }
    for l in not_measured(s) {
        d.line(l);
    }
    if let Some(l) = timing_line(s) {
        d.line(l);
    }
    let tables = s.rankings();
    let mut targets: Vec<&str> = Vec::new();
    for t in &tables {
        if !targets.contains(&t.target.as_str()) {
            targets.push(&t.target);
        }
    }
    for target in targets {
        d.blank().line(title(target));
        let mine: Vec<&RankingTable> = tables.iter().filter(|t| t.target == target).collect();
        for t in &mine {
            d.line(format!("  {:<6} {}", fmt_size(t.bs), line(t)));
        }
        if let Some(why) = largest_gap(s, &mine) {
            d.line(format!("  {why}"));
        }
    }
    let open = crate::rounds_text::undecided_lines(s.rounds_run.as_ref(), &tables);
    if !open.is_empty() {
        d.blank();
        for l in open {
            d.line(l);
        }
    }
    d
}

fn rounds_said(s: &SurveyResult) -> String {
    crate::rounds_text::rounds_said(s.rounds_run.as_ref(), s.rounds)
}

/// The methods this machine could not run, grouped by the first clause of their reason: "not measured:
/// io_uring, sqpoll: qemu-user does not implement io_uring". A method that does not apply to a target
/// (mmap of a pipe: its refusal names the flag) is left to the tables. At most three lines; the rest
/// with -v.
fn not_measured(s: &SurveyResult) -> Vec<String> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for r in s.runs.iter().filter(|r| r.result.is_none()) {
        let why = r.unavailable.as_deref().unwrap_or("it did not run");
        if why.starts_with("--") {
            continue;
        }
        let why = first_clause(why);
        let name = r.method.name().to_string();
        match groups.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) if names.contains(&name) => {}
            Some((_, names)) => names.push(name),
            None => groups.push((why, vec![name])),
        }
    }
    let mut out: Vec<String> = groups
        .iter()
        .take(3)
        .map(|(why, names)| format!("not measured: {}: {why}", names.join(", ")))
        .collect();
    if groups.len() > 3 {
        out.push(format!(
            "not measured for {} more reasons: iolab survey -v lists them",
            groups.len() - 3
        ));
    }
    out
}

/// What a reason says first, or its hint's first clause where it has one, which names the cause:
/// "io_uring_setup failed: ENOSYS (Function not implemented); hint: qemu-user does not implement io_uring
/// (iolab runs ...)" is "qemu-user does not implement io_uring".
fn first_clause(why: &str) -> String {
    let said = why.split_once("; hint: ").map_or(why, |(_, hint)| hint);
    said.split([';', '('])
        .next()
        .unwrap_or(said)
        .trim()
        .to_string()
}

/// How the methods timed their ops, where not every op was, in one line at 80 columns: "timing:
/// synchronous methods time 1 op in 64 at 4 B: ops under 10 clock reads". One in N is a synchronous
/// method's (a queued one times every request, or none); none is every method's but offload's, whose
/// client times each round trip.
pub(crate) fn timing_line(s: &SurveyResult) -> Option<String> {
    use iolab_lab::survey_timing::{sampled_tables, CLOCK_READS};
    let first = sampled_tables(&s.timing).next()?;
    let places = sampled_places(&s.timing);
    let why = match first.cheapest {
        Some(_) => format!(": ops under {CLOCK_READS:.0} clock reads"),
        None => format!(" ({})", first.chosen),
    };
    Some(match first.latency_sample {
        0 => {
            let aside = match s.runs.iter().any(|r| {
                r.result.is_some()
                    && r.method.info().exec == iolab_engine::method::Exec::OutOfProcess
            }) {
                true => ", offload's round trips aside",
                false => "",
            };
            format!("timing: no op timed {places}{why}{aside}")
        }
        n => format!("timing: synchronous methods time 1 op in {n} {places}{why}"),
    })
}

/// Where the tables of `timing` were sampled: "everywhere", "at 4 B", "at 4 B on /dev/null and a pipe".
fn sampled_places(timing: &[iolab_lab::survey_timing::TableTiming]) -> String {
    let sampled: Vec<_> = iolab_lab::survey_timing::sampled_tables(timing).collect();
    if sampled.len() == timing.len() {
        return "everywhere".into();
    }
    let mut sizes: Vec<u64> = sampled.iter().map(|t| t.bs).collect();
    sizes.dedup();
    let mut parts = Vec::new();
    for bs in sizes {
        let on: Vec<&str> = sampled
            .iter()
            .filter(|t| t.bs == bs)
            .map(|t| match t.target.as_str() {
                "file" => "a new file",
                "pipe" => "a pipe",
                other => other,
            })
            .collect();
        let all = timing.iter().filter(|t| t.bs == bs).count() == on.len();
        parts.push(match all {
            true => format!("at {}", fmt_size(bs)),
            false => format!("at {} on {}", fmt_size(bs), on.join(" and ")),
        });
    }
    parts.join(", ")
}

fn title(target: &str) -> String {
    match target {
        "file" => "a new file (buffered, no fsync):".into(),
        "pipe" => "a pipe to a reading thread:".into(),
        t => format!("{t}:"),
    }
}

/// "1 stdio 22 ns 0.08x, 2= psync 205 ns 0.73x ... 9 aio 1.6 µs 5.7x" (the slowest after the dots), or
/// "no ranking: ..." where the rounds told no row apart.
pub(crate) fn line(t: &RankingTable) -> String {
    if let Some(l) = crate::rounds_text::no_ranking(t) {
        return l;
    }
    line_of(t, TOP, &|r| crate::rounds_text::short_ns(r.median))
}

/// As [`line`], naming `top` rows before the slowest, each with `abs` (its absolute figures).
pub(crate) fn line_of(t: &RankingTable, top: usize, abs: &dyn Fn(&RankRow) -> String) -> String {
    let ranked: Vec<&RankRow> = t.ranked().collect();
    let named = |r: &RankRow| {
        let name = crate::rounds_text::name(t, r);
        let x = match r.ratio_to_write {
            _ if r.method == t.baseline => String::new(),
            Some(x) => format!(" {}", ratio(x)),
            None => String::new(),
        };
        format!("{} {name} {}{x}", r.rank, abs(r))
    };
    let first: Vec<String> = ranked.iter().take(top).map(|r| named(r)).collect();
    let mut o = first.join(", ");
    if ranked.len() > top {
        if let Some(last) = ranked.last() {
            let gap = if ranked.len() > top + 1 {
                " ... "
            } else {
                ", "
            };
            o.push_str(&format!("{gap}{}", named(last)));
        }
    }
    o
}

/// For the target's slowest row of all its block sizes, the first reason its finding gives:
/// "offload at 4 KiB, 11x write(): its SQPOLL thread kept 99% of a CPU busy".
fn largest_gap(s: &SurveyResult, tables: &[&RankingTable]) -> Option<String> {
    let (t, r) = tables
        .iter()
        .flat_map(|t| t.rows.iter().map(move |r| (t, r)))
        .filter(|(_, r)| r.rank != "floor")
        .max_by(|a, b| {
            let x = |r: &RankRow| r.ratio_to_write.unwrap_or(0.0);
            x(a.1).total_cmp(&x(b.1))
        })?;
    let gap = r.ratio_to_write.filter(|&x| x > 1.0)?;
    let about = format!("{} writes to {}", fmt_size(t.bs), t.target);
    let text = s
        .findings
        .iter()
        .find(|f| f.about == about && f.text.starts_with(&format!("{} ", r.method)))?
        .text
        .as_str();
    let reason = text
        .split_once("): ")
        .map(|(_, rest)| rest.split("; ").next().unwrap_or(rest))?;
    let reason = if reason.starts_with("no counter of this run explains it") {
        format!(
            "no counter the survey keeps explains it; `iolab run --method {} --count separate` (or --profile) shows where the time goes",
            r.method
        )
    } else {
        reason.to_string()
    };
    Some(format!(
        "largest gap: {} at {}, {} write()'s time: {reason}",
        r.method,
        fmt_size(t.bs),
        ratio(gap)
    ))
}

/// Time per op against the baseline's with the interval the paired rounds give it: "1.8x (1.6-2.0)";
/// "1x" for the baseline itself, the ratio alone where they share too few rounds.
pub(crate) fn x_write(row: &RankRow, baseline: &str) -> String {
    match (row.ratio_to_write, row.ratio_lo, row.ratio_hi) {
        _ if row.method == baseline => "1x".into(),
        (Some(r), Some(lo), Some(hi)) => {
            let d = decimals(r);
            format!("{r:.d$}x ({lo:.d$}-{hi:.d$})")
        }
        (Some(r), _, _) => ratio(r),
        _ => "-".into(),
    }
}

/// Decimals for a ratio of about `r`, two significant figures: 0.09, 1.8, 27.
fn decimals(r: f64) -> usize {
    if r >= 10.0 {
        0
    } else if r >= 0.95 {
        1
    } else {
        2
    }
}

/// A ratio with two significant figures: "0.09x", "1.8x", "27x".
pub(crate) fn ratio(r: f64) -> String {
    format!("{r:.d$}x", d = decimals(r))
}

#[cfg(test)]
mod tests {
    use super::first_clause;

    #[test]
    fn a_reason_says_its_hint_where_it_has_one() {
        assert_eq!(
            first_clause(
                "io_uring_setup failed: ENOSYS (Function not implemented); hint: qemu-user does not \
                 implement io_uring (iolab runs under user-mode emulation)"
            ),
            "qemu-user does not implement io_uring"
        );
        assert_eq!(first_clause("no poll queues; use --vm"), "no poll queues");
    }
}
