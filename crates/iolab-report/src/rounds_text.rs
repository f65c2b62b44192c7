//! What a survey's rounds say beside its ranking, on the first screen: a table's line with its groups
//! (or "no ranking" where every row is in one), how many runs the machine disturbed, which orders the
//! rounds left undecided, and, where the time ran out first, what would decide them.

use iolab_engine::units::pct;
use iolab_lab::pairs::Outcome;
use iolab_lab::ranking::{RankRow, RankingTable};
use iolab_lab::rounds::RoundsRun;

/// "6-11 rounds" where rounds were added until decided (a method ran 6 of them or more), else "5 rounds".
pub(crate) fn rounds_said(r: Option<&RoundsRun>, rounds: u32) -> String {
    match r {
        Some(r) if r.rounds > r.first => format!("{}-{} rounds", r.first, r.rounds),
        Some(r) if r.rounds == 1 => "1 round".into(),
        Some(r) => format!("{} rounds", r.rounds),
        None if rounds == 1 => "1 round".into(),
        None => format!("{rounds} rounds"),
    }
}

/// A time with two or three significant figures: "3.2 ns", "183 ns", "1.2 µs", "59 µs".
pub(crate) fn short_ns(ns: f64) -> String {
    let (v, unit) = match ns {
        n if n < 1e3 => (n, "ns"),
        n if n < 1e6 => (n / 1e3, "µs"),
        n if n < 1e9 => (n / 1e6, "ms"),
        n => (n / 1e9, "s"),
    };
    if v < 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// The name a row goes by: the baseline by its label ("write()").
pub(crate) fn name(t: &RankingTable, r: &RankRow) -> String {
    if r.method == t.baseline {
        t.baseline_label.clone()
    } else {
        r.method.clone()
    }
}

/// "no ranking: 7 methods, 22.6 ns-1.8 µs, all tied within 5%" where every ranked row is in one group
/// (more than one row): the rounds told none of them apart (the last lines say why and what would).
pub(crate) fn no_ranking(t: &RankingTable) -> Option<String> {
    let rows: Vec<&RankRow> = t.ranked().collect();
    // A result before pairs were tested: its labels stand as they were.
    if rows.len() < 2 || t.groups().len() > 1 || t.pairs.is_empty() {
        return None;
    }
    let lo = rows.iter().map(|r| r.median).fold(f64::INFINITY, f64::min);
    let hi = rows.iter().map(|r| r.median).fold(0.0, f64::max);
    let tied = if t.pairs.iter().all(|p| p.outcome == Outcome::Tied) {
        ", all tied within 5%"
    } else {
        ""
    };
    Some(format!(
        "no ranking: {} methods, {}-{}{tied}",
        rows.len(),
        short_ns(lo),
        short_ns(hi)
    ))
}

/// What the machine did to a survey, under its first line: emulated, pinned (`--cpus`), runs disturbed.
pub(crate) fn machine_lines(
    host: &iolab_engine::result::Host,
    r: Option<&RoundsRun>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = host.emulated_line() {
        out.push(format!("emulated (indicative only): {e}"));
    }
    if let Some(p) = host.pinned_line() {
        out.push(format!("pinned: {p}"));
    }
    out.extend(r.and_then(disturbed_line));
    out
}

/// "disturbed: 19 of 611 runs ...", where the machine disturbed any.
pub(crate) fn disturbed_line(r: &RoundsRun) -> Option<String> {
    (r.disturbed > 0).then(|| {
        format!(
            "disturbed: {} of {} runs (other work held a CPU), left out of the ranking",
            r.disturbed, r.runs
        )
    })
}

/// The pairs next to each other in `t` that the rounds left undecided, as "psync/write()".
pub(crate) fn undecided_pairs(t: &RankingTable) -> Vec<String> {
    let rows: Vec<&RankRow> = t.ranked().collect();
    if t.pairs.is_empty() {
        // A result before pairs were tested.
        return Vec::new();
    }
    rows.windows(2)
        .filter(|w| {
            t.pair(&w[0].method, &w[1].method)
                .is_none_or(|p| p.outcome == Outcome::Undecided)
        })
        .map(|w| format!("{}/{}", name(t, w[0]), name(t, w[1])))
        .collect()
}

/// The last lines: how many orders the rounds left undecided (the tables show which: 2=), and what
/// would decide them.
pub(crate) fn undecided_lines(r: Option<&RoundsRun>, tables: &[RankingTable]) -> Vec<String> {
    let open: Vec<(&RankingTable, Vec<String>)> = tables
        .iter()
        .map(|t| (t, undecided_pairs(t)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if open.is_empty() {
        return Vec::new();
    }
    let pairs: usize = open.iter().map(|(_, p)| p.len()).sum();
    let after = r
        .map(|r| format!(" after {} rounds in {:.0} s", r.rounds, r.elapsed_s))
        .unwrap_or_default();
    let mut out = vec![format!(
        "undecided: {pairs} orders of neighbours in {} of {} tables{after}",
        open.len(),
        tables.len(),
    )];
    if let Some(r) = r {
        out.push(to_decide(r));
    }
    out
}

/// What would decide the undecided orders, with the numbers of this survey.
fn to_decide(r: &RoundsRun) -> String {
    let more = match r.stopped.as_str() {
        "first rounds only" => "more rounds (--max-time 30 or more), ".to_string(),
        // The most rounds a survey runs: only the machine can help.
        "rounds" => String::new(),
        // The runs left would write past what the plan said: more first rounds allow more.
        "writes" => format!("--rounds {} (it allows more writes), ", r.first * 2),
        _ => format!("--max-time {:.0}, ", (r.max_time_s * 2.0).max(60.0)),
    };
    let busy = r
        .others_busy_share
        .filter(|b| *b >= 0.05)
        .map(|b| format!(" (others held {})", pct(b)))
        .unwrap_or_default();
    format!("to decide them: {more}a quieter machine{busy}, or --cpus")
}
