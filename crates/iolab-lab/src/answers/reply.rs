//! What an answer function sees ([`Ctx`]) and returns ([`Reply`]), the answers' statuses, and the
//! small helpers the answer functions share.

use crate::findings_compare::row::Row;
use crate::suite::question::Question;
use iolab_engine::measure::memcopy::MemCopy;
use iolab_engine::method::MethodInfo;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A published figure checked against the seed's own instruction counts, then this machine's memory copy rate.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct PublishedCheck {
    pub label: String,
    pub rate_bps: f64,
    pub impossible: bool,
    pub verdict: String,
    /// The figures the verdict prints, by name: the seed's (`bytes`, `seconds`, `instructions`,
    /// `widest_store_bytes`), the rate and, per instruction, the bytes; and this machine's ceiling it was
    /// held against (`ceiling_bps`, from the summary's `memory`), and the L1 copy rate where the verdict
    /// names it (`l1_copy_bps`).
    #[serde(default)]
    pub figures: std::collections::BTreeMap<String, f64>,
}

/// How far a question is answered.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// From this run's figures.
    Answered,
    /// From this run's figures, with a stand-in: `needs` says what the seed's own setup would need.
    Partly,
    /// Not from this run: `needs` says what is missing.
    NotHere,
    /// From this run's figures, but figures that cannot carry a verdict: a `--quick` run, timings of an
    /// emulated CPU, or rows that lost much of their time to the hypervisor; `needs` says which.
    Indicative,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Answered => "answered",
            Status::Partly => "answered with a stand-in",
            Status::NotHere => "cannot be answered from this run",
            Status::Indicative => "indicative",
        }
    }
}

/// A question and its answer.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Answer {
    pub id: String,
    pub question: String,
    pub source: String,
    pub status: Status,
    /// The answer, with the figures it used.
    pub text: String,
    /// What this suite or machine would need to answer it fully.
    pub needs: Option<String>,
    /// The figures the answer used, each from a field of a record ([`crate::cite`]).
    #[serde(default)]
    pub cites: Vec<crate::cite::Cite>,
    /// The seed's own figures the question names (the suite file's `seed` table): what a cite of field
    /// `seed.NAME` without a line points to.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub seed: std::collections::BTreeMap<String, f64>,
}

impl Answer {
    /// What it needs besides `shared` (what every answer of its suite run needs, said once): None when
    /// that is all it needs.
    pub fn needs_besides(&self, shared: Option<&str>) -> Option<&str> {
        let n = self.needs.as_deref()?;
        let Some(w) = shared else { return Some(n) };
        if n == w {
            return None;
        }
        Some(
            n.strip_suffix(w)
                .and_then(|h| h.strip_suffix("; and "))
                .unwrap_or(n),
        )
    }
}

/// What every one of `answers` needs (the last thing each one's `needs` names: a full run where the run
/// was `--quick`, real hardware where the CPU was emulated), to be said once instead of in each; None
/// unless there are two or more answers and all of them need it.
pub fn needed_by_all(answers: &[Answer]) -> Option<&str> {
    let first = answers.first()?.needs.as_deref()?;
    let last = first.rsplit("; and ").next().unwrap_or(first);
    let all = answers.iter().all(|a| {
        a.needs
            .as_deref()
            .is_some_and(|n| n == last || n.ends_with(&format!("; and {last}")))
    });
    (answers.len() > 1 && all).then_some(last)
}

/// What an answer function returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub status: Status,
    pub text: String,
    pub needs: Option<String>,
}

impl Reply {
    pub fn answered(text: String) -> Reply {
        Reply {
            status: Status::Answered,
            text,
            needs: None,
        }
    }
    pub fn partly(text: String, needs: impl Into<String>) -> Reply {
        Reply {
            status: Status::Partly,
            text,
            needs: Some(needs.into()),
        }
    }
    pub fn not_here(text: String, needs: impl Into<String>) -> Reply {
        Reply {
            status: Status::NotHere,
            text,
            needs: Some(needs.into()),
        }
    }
}

/// What an answer function sees: its question, the rows and records of its steps, the published figures
/// checked, and the machine's memory rates.
pub struct Ctx<'a> {
    pub q: &'a Question,
    pub rows: Vec<&'a Row>,
    /// Every record of its steps: iolab runs, points not run (with their reason), decimal lines, the clock.
    pub recs: Vec<&'a Value>,
    /// The record file's line holding each of `recs` (empty or 0: not known), for the cites.
    pub rec_lines: Vec<usize>,
    pub published: &'a [PublishedCheck],
    pub mem: &'a MemCopy,
}

impl Ctx<'_> {
    /// The seed's figure `name` from the question's `seed` table, cited as the answer's own `seed.NAME`.
    pub fn seed(&self, name: &str) -> Option<f64> {
        let v = self.q.seed.get(name).copied()?;
        crate::cite::note(crate::cite::Cite {
            value: v,
            line: None,
            run: None,
            field: format!("seed.{name}"),
        });
        Some(v)
    }

    /// The published figures checked that `f` accepts, the figures each prints cited (`published.N.figures.NAME`
    /// of the summary).
    pub fn published_where(&self, f: impl Fn(&PublishedCheck) -> bool) -> Vec<&PublishedCheck> {
        let mut out = Vec::new();
        for (i, p) in self.published.iter().enumerate().filter(|(_, p)| f(p)) {
            for (k, v) in &p.figures {
                crate::cite::note(crate::cite::Cite {
                    value: *v,
                    line: None,
                    run: None,
                    field: format!("published.{i}.figures.{k}"),
                });
            }
            out.push(p);
        }
        out
    }

    /// The first row that `f` accepts.
    pub fn row(&self, f: impl Fn(&Row) -> bool) -> Option<&Row> {
        self.rows.iter().copied().find(|r| f(r))
    }

    /// Every row that `f` accepts.
    pub fn rows_where(&self, f: impl Fn(&Row) -> bool) -> Vec<&Row> {
        self.rows.iter().copied().filter(|r| f(r)).collect()
    }

    /// Figure `path` of record `rec`'s result (one of `recs`), cited where its line is known.
    pub fn num(&self, rec: &Value, path: &[&str]) -> Option<f64> {
        let v = crate::series::num(rec.get("result")?, path)?;
        let line = self
            .recs
            .iter()
            .position(|r| std::ptr::eq(*r, rec))
            .and_then(|i| self.rec_lines.get(i).copied())
            .unwrap_or(0);
        if let Some(c) = crate::cite::Source::Line(line)
            .cite(v, format!("result.{}", path.join(".")))
            .filter(|_| v.is_finite())
        {
            crate::cite::note(c);
        }
        Some(v)
    }

    /// The reason a point of a step whose label contains `step` was not run, if one was not.
    pub fn not_run(&self, step: &str) -> Option<String> {
        self.recs
            .iter()
            .filter(|r| record_step(r).contains(step))
            .find_map(|r| r.get("error").and_then(|e| e.as_str()).map(String::from))
    }
}

/// The step of a record's point.
pub fn record_step(rec: &Value) -> String {
    crate::series::record_point(rec)
        .into_iter()
        .find(|(k, _)| k == "step")
        .map(|(_, v)| v)
        .unwrap_or_default()
}

/// Two rows closer than this in IOPS, each run once, are tied: one run cannot tell them apart.
pub const TIE_FRACTION: f64 = 0.05;

/// Which of two rows of one workload made more IOPS: `Some(true)` for `a`, `Some(false)` for `b`, `None`
/// when they are tied (their repeated runs overlap, or, run once, they are within [`TIE_FRACTION`]).
pub fn faster(a: &Row, b: &Row) -> Option<bool> {
    let (ia, ib) = (a.iops(), b.iops());
    let tied = match (a.spread, b.spread) {
        (Some(_), Some(_)) => crate::findings_compare::row::within_noise(a, b),
        _ => (ia - ib).abs() <= TIE_FRACTION * ia.max(ib),
    };
    (!tied).then_some(ia > ib)
}

/// "3.4x".
pub fn x(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}x")
    } else if r >= 1.0 {
        format!("{r:.1}x")
    } else if r >= 0.1 {
        format!("{r:.2}x")
    } else {
        format!("{r:.3}x")
    }
}

/// "614.0 ns" or "21.9 µs": `units::fmt_ns`, the unit every view uses.
pub fn ns(v: f64) -> String {
    iolab_engine::units::fmt_ns(v)
}

pub use iolab_engine::units::thousands;

pub use iolab_engine::units::pct;

/// The median of `xs` (None when empty).
pub fn median(xs: &mut [f64]) -> Option<f64> {
    iolab_engine::stats::median(xs)
}

/// Is `r` a row of the method whose registry entry is `m` (`&io_uring::INFO`)? The seeds name their
/// methods; the answers name them through the registry, never by a string of their own.
pub fn is(r: &Row, m: &MethodInfo) -> bool {
    r.method() == Some(m.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(needs: Option<&str>) -> Answer {
        Answer {
            id: "q".into(),
            question: "?".into(),
            source: String::new(),
            status: Status::Indicative,
            text: String::new(),
            needs: needs.map(str::to_string),
            cites: Vec::new(),
            seed: Default::default(),
        }
    }

    /// A need every answer shares is found once, and each answer keeps only its own.
    #[test]
    fn what_every_answer_needs_is_said_once() {
        let quick = "a full run of the suite: this one ran --quick";
        let a = [
            answer(Some(&format!("the driver; and {quick}"))),
            answer(Some(quick)),
            answer(Some(&format!("poll queues; and more; and {quick}"))),
        ];
        assert_eq!(needed_by_all(&a), Some(quick));
        let own: Vec<Option<&str>> = a.iter().map(|x| x.needs_besides(Some(quick))).collect();
        assert_eq!(
            own,
            [Some("the driver"), None, Some("poll queues; and more")]
        );
        // An answer without it: nothing is shared, each says its own.
        let whole = format!("x; and {quick}");
        let b = [answer(Some(&whole)), answer(None)];
        assert_eq!(needed_by_all(&b), None);
        assert_eq!(b[0].needs_besides(None), Some(whole.as_str()));
        // One answer alone says it where it is.
        assert_eq!(needed_by_all(&a[..1]), None);
    }
}
