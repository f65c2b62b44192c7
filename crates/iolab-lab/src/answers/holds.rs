//! A conclusion as a rule over rows (the design's rule 18): "X beat Y" holds on every row of the run
//! where X and Y both ran, or the sentence names the rows where it did not. [`Holds::over`] pairs every
//! row of one way with each row of the other way of the same workload and judges the pair; an answer
//! may say "on every workload" only where [`Holds::everywhere`], and otherwise prints
//! [`Holds::sentence`], which names each pair by its outcome and its ratio of times.
//!
//! A pair is judged on time per op. A difference inside the rows' noise is no win or loss: where both
//! ran repeatedly (`--repeat`), the middle runs' ranges of ns/op overlap ([`within_noise`]); run once
//! each, the two are within [`TIE_FRACTION`] of each other. A pair either of whose runs other work
//! disturbed is not judged.

use super::reply::{x, Ctx, TIE_FRACTION};
use crate::findings_compare::{within_noise, Row};
use iolab_engine::units::{fmt_ns, fmt_range, fmt_size};

/// How one pair came out, for the first way (X) against the second (Y).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// X took less time per op than Y, beyond the noise.
    Won,
    /// X took more.
    Lost,
    /// The difference is inside the noise of the two rows.
    WithinNoise,
    /// Other work disturbed one of the two runs: its time is partly someone else's.
    Disturbed,
}

impl Outcome {
    /// The words that introduce the workloads of this outcome.
    fn words(self) -> &'static str {
        match self {
            Outcome::Won => "won on",
            Outcome::Lost => "lost on",
            Outcome::WithinNoise => "was too close to call on",
            Outcome::Disturbed => "was not judged on",
        }
    }
}

/// One pair of rows of one workload, judged.
pub struct Judged<'a> {
    pub x: &'a Row,
    pub y: &'a Row,
    /// X's time per op over Y's.
    pub ratio: f64,
    pub outcome: Outcome,
}

/// Every pair of rows where both ways ran, judged.
pub struct Holds<'a> {
    pub pairs: Vec<Judged<'a>>,
}

/// The outcome of row `x` against row `y` of the same workload (their times cited).
pub fn judge<'a>(x: &'a Row, y: &'a Row) -> Judged<'a> {
    let (a, b) = (x.ns(), y.ns());
    let tied = match (x.spread, y.spread) {
        (Some(_), Some(_)) => within_noise(x, y),
        _ => (a - b).abs() <= TIE_FRACTION * a.max(b),
    } || x.not_separated_from(y);
    let outcome = if x.facts.disturbed.is_some() || y.facts.disturbed.is_some() {
        Outcome::Disturbed
    } else if tied {
        Outcome::WithinNoise
    } else if a < b {
        Outcome::Won
    } else {
        Outcome::Lost
    };
    Judged {
        x,
        y,
        ratio: a / b,
        outcome,
    }
}

impl<'a> Holds<'a> {
    /// Every row `is_x` accepts against every row `is_y` accepts of the same workload, in the order of
    /// the `is_y` rows.
    pub fn over(
        rows: &[&'a Row],
        is_x: impl Fn(&Row) -> bool,
        is_y: impl Fn(&Row) -> bool,
    ) -> Holds<'a> {
        let mut pairs = Vec::new();
        for y in rows.iter().copied().filter(|r| is_y(r)) {
            for x in rows.iter().copied() {
                if !std::ptr::eq(x, y) && is_x(x) && x.same_workload(y) {
                    pairs.push(judge(x, y));
                }
            }
        }
        Holds { pairs }
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// X won on every pair (and there was one).
    pub fn everywhere(&self) -> bool {
        !self.pairs.is_empty() && self.pairs.iter().all(|p| p.outcome == Outcome::Won)
    }

    /// The pairs that came out `o`.
    pub fn of(&self, o: Outcome) -> Vec<&Judged<'a>> {
        self.pairs.iter().filter(|p| p.outcome == o).collect()
    }

    /// "won on 4 B writes to /dev/null (0.67x); lost on 4 KiB writes to /dev/null (2.2x) and 4 B (5.2x,
    /// 100% punted) and 4 KiB (3.4x, 100% punted) writes to /dev/iolab_sink (legacy)": every pair by its
    /// outcome, the ratio of X's time to Y's and what `note` says of the pair; pairs within noise with
    /// the noise (repeated runs' ranges, their ends cited from the records in `c`).
    pub fn sentence(&self, c: &Ctx, note: impl Fn(&Judged) -> Option<String>) -> String {
        [
            Outcome::Won,
            Outcome::Lost,
            Outcome::WithinNoise,
            Outcome::Disturbed,
        ]
        .iter()
        .filter_map(|o| {
            let pairs = self.of(*o);
            (!pairs.is_empty()).then(|| format!("{} {}", o.words(), grouped(c, &pairs, &note)))
        })
        .collect::<Vec<_>>()
        .join("; ")
    }
}

/// The pairs' workloads, those that differ only in block size together: "4 B (0.67x) and 4 KiB (2.2x)
/// writes to /dev/null, 4 B writes to {disk}/writes.dat (1.8x)".
fn grouped(c: &Ctx, pairs: &[&Judged], note: &impl Fn(&Judged) -> Option<String>) -> String {
    // (the workload without its size, [(size, figures)]), in first-seen order.
    let mut groups: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for p in pairs {
        let w = p.y.workload();
        let size = fmt_size(p.y.facts.bs);
        let (size, rest) = match w.strip_prefix(&size) {
            Some(rest) => (size, rest.trim_start().to_string()),
            None => (String::new(), w),
        };
        let figures = figures(c, p, note);
        match groups.iter_mut().find(|(r, _)| *r == rest) {
            Some((_, items)) => items.push((size, figures)),
            None => groups.push((rest, vec![(size, figures)])),
        }
    }
    let each: Vec<String> = groups
        .into_iter()
        .map(|(rest, items)| match items.as_slice() {
            [(size, f)] if size.is_empty() => format!("{rest} ({f})"),
            [(size, f)] => format!("{size} {rest} ({f})"),
            _ => format!(
                "{} {rest}",
                items
                    .iter()
                    .map(|(s, f)| format!("{s} ({f})"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        })
        .collect();
    and_list(&each)
}

/// "0.67x", "5.2x, 100% punted", "0.98x; the middle runs 570.0-590.0 ns against 560.0-600.0 ns per op",
/// "0.67x; the write() run disturbed".
fn figures(c: &Ctx, p: &Judged, note: &impl Fn(&Judged) -> Option<String>) -> String {
    let mut f = x(p.ratio);
    if let Some(n) = note(p) {
        f += &format!(", {n}");
    }
    match p.outcome {
        Outcome::WithinNoise => match (range(c, p.x), range(c, p.y)) {
            (Some(a), Some(b)) => {
                f += &format!(
                    "; within noise: the middle runs of their repeats {a} against {b} per op"
                )
            }
            _ if p.x.not_separated_from(p.y) => f += "; the paired rounds did not separate them",
            _ if p.x.spread.is_none() && p.y.spread.is_none() => {
                f += "; within 5% in one run each, no noise measured"
            }
            _ => f += "; within 5%, and only one of them repeated",
        },
        Outcome::Disturbed => {
            let who: Vec<&str> = [p.x, p.y]
                .iter()
                .filter(|r| r.facts.disturbed.is_some())
                .map(|r| r.way())
                .collect();
            f += &format!(
                "; the {} run disturbed by other work",
                who.join(" and the ")
            );
        }
        _ => {}
    }
    f
}

/// "570.0-590.0 ns": the middle runs' range of ns/op of a row's repeats, its two ends cited from the
/// records of `c` they came from.
fn range(c: &Ctx, r: &Row) -> Option<String> {
    let s = r.spread?;
    let point = crate::suite_rows::shared_point(r.record.as_deref()?);
    let ns = |rec: &serde_json::Value| crate::series::num(rec.get("result")?, &["ns_per_op"]);
    let of = |end: f64| {
        c.recs
            .iter()
            .copied()
            .find(|rec| ns(rec) == Some(end) && crate::suite_rows::shared_point(rec) == point)
    };
    let (low, high) = (of(s.low_ns)?, of(s.high_ns)?);
    c.num(low, &["ns_per_op"]);
    c.num(high, &["ns_per_op"]);
    Some(fmt_range(s.low_ns, s.high_ns, fmt_ns))
}

/// "a, b and c".
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
