//! Answers to the seeds' questions. Each suite file lists its seed's open questions (`[[question]]`: an
//! id, the question, where the seed asks it, the steps whose rows answer it, the seed's own figures the
//! answer reads, and the function that answers it) and the seed's published throughputs
//! (`[[published-figure]]`, checked against this machine's memory copy rate). After the suite's table
//! iolab prints its findings (`findings_compare.rs`) and answers each question from this run's figures,
//! or says exactly what it would need; the same [`Summary`] goes into the suite's record file as one line
//! `{"summary": ...}` (readers of records skip it; `iolab report` shows it).
//!
//! The answer functions live in one table ([`ANSWERS`]), like the findings rules: each gets the rows and
//! records of its question's steps ([`Ctx`]) and returns a [`Reply`] whose text states the figures it used.
//! They are grouped by seed: `pi.rs` (the Pi thesis: writes, nowait), `storage.rs` (blocksize),
//! `course.rs` (uring, shared-ring), `offload.rs` (the hypervisor thesis), `lines.rs` (kernel-vs-user).

mod course;
mod lines;
mod offload;
mod pi;
mod storage;

use crate::findings_compare::{self, Compared, Row};
use crate::suite::SuiteFile;
use iolab_engine::measure::memcopy::{gbps, MemCopy};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One of a seed's questions, as a suite file lists it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Question {
    pub id: String,
    pub text: String,
    /// Where the seed asks it ("§5 Conclusion").
    #[serde(default)]
    pub source: String,
    /// The function that answers it: a name in [`ANSWERS`].
    pub answer_by: String,
    /// The steps whose rows answer it (empty: every step).
    #[serde(default)]
    pub steps: Vec<String>,
    /// The seed's own figures the answer reads, by name.
    #[serde(default)]
    pub seed: BTreeMap<String, f64>,
}

/// A throughput the seed published: `bytes` moved in `seconds`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PublishedFigure {
    /// What it is ("Figure 18, dma 4kb: 1M writes of 4 KiB in 0.010 s").
    pub label: String,
    pub bytes: f64,
    pub seconds: f64,
    /// CPUs that could have copied at once (the seed's threads; default 1).
    #[serde(default = "one")]
    pub cpus: u32,
}

fn one() -> u32 {
    1
}

/// A published figure checked against this machine's memory copy rate.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct PublishedCheck {
    pub label: String,
    pub rate_bps: f64,
    pub impossible: bool,
    pub verdict: String,
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
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Answered => "answered",
            Status::Partly => "answered with a stand-in",
            Status::NotHere => "cannot be answered here",
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

/// The findings and answers of one suite run: printed after its table, recorded as a line of its own.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Summary {
    pub suite: String,
    /// What this machine's memory can copy (measured once, outside any timed span).
    pub memory: MemCopy,
    pub findings: Vec<Compared>,
    pub published: Vec<PublishedCheck>,
    pub answers: Vec<Answer>,
}

/// What an answer function sees: its question, the rows and records of its steps, the published figures
/// checked, and the machine's memory rates.
pub struct Ctx<'a> {
    pub q: &'a Question,
    pub rows: Vec<&'a Row>,
    /// Every record of its steps: iolab runs, points not run (with their reason), decimal lines, the clock.
    pub recs: Vec<&'a Value>,
    pub published: &'a [PublishedCheck],
    pub mem: &'a MemCopy,
}

impl Ctx<'_> {
    /// The seed's figure `name` from the question's `seed` table.
    pub fn seed(&self, name: &str) -> Option<f64> {
        self.q.seed.get(name).copied()
    }

    /// The first row that `f` accepts.
    pub fn row(&self, f: impl Fn(&Row) -> bool) -> Option<&Row> {
        self.rows.iter().copied().find(|r| f(r))
    }

    /// Every row that `f` accepts.
    pub fn rows_where(&self, f: impl Fn(&Row) -> bool) -> Vec<&Row> {
        self.rows.iter().copied().filter(|r| f(r)).collect()
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

type AnswerFn = fn(&Ctx) -> Reply;

/// Every answer function, by the name a question's `answer-by` gives.
pub const ANSWERS: &[(&str, AnswerFn)] = &[
    ("uring_vs_write", pi::uring_vs_write),
    ("mmap_vs_write", pi::mmap_vs_write),
    ("tracepoint_cost", pi::tracepoint_cost),
    ("older_techniques", pi::older_techniques),
    ("would_block", pi::would_block),
    ("offload_slowdown", offload::offload_slowdown),
    ("direct_crossover", storage::direct_crossover),
    ("cpu_bottleneck", storage::cpu_bottleneck),
    ("sync_won", course::sync_won),
    ("iopoll_gain", course::iopoll_gain),
    ("syscall_reduction", course::syscall_reduction),
    ("shared_ring_lost", course::shared_ring_lost),
    ("kernel_module_slower", lines::kernel_module_slower),
];

/// Refuses questions that name no known answer function or an unknown step, and repeated ids.
pub fn check(s: &SuiteFile) -> Result<(), String> {
    let mut ids = Vec::new();
    for q in &s.questions {
        if !ANSWERS.iter().any(|(n, _)| *n == q.answer_by) {
            return Err(format!(
                "question '{}': answer-by = '{}' is not known; accepted: {}",
                q.id,
                q.answer_by,
                ANSWERS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(st) = q
            .steps
            .iter()
            .find(|st| !s.steps.iter().any(|x| &x.label == *st))
        {
            return Err(format!(
                "question '{}': steps names '{st}', which is no step of this suite",
                q.id
            ));
        }
        if ids.contains(&&q.id) {
            return Err(format!("question id '{}' appears twice", q.id));
        }
        ids.push(&q.id);
    }
    for p in &s.published_figures {
        if !(p.bytes > 0.0 && p.seconds > 0.0) {
            return Err(format!(
                "published-figure '{}': bytes and seconds must be positive",
                p.label
            ));
        }
    }
    Ok(())
}

/// The published figures checked against `mem`.
pub fn check_published(s: &SuiteFile, mem: &MemCopy) -> Vec<PublishedCheck> {
    s.published_figures
        .iter()
        .map(|p| {
            let rate = p.bytes / p.seconds;
            let v = findings_compare::plausibility(p.bytes, p.seconds, None, p.cpus, mem);
            PublishedCheck {
                label: p.label.clone(),
                rate_bps: rate,
                impossible: v.is_some(),
                verdict: v.unwrap_or_else(|| {
                    let c = mem.ceiling(None, p.cpus);
                    format!(
                        "possible: {} is within {} ({})",
                        gbps(rate),
                        c.what,
                        gbps(c.bps)
                    )
                }),
            }
        })
        .collect()
}

/// The suite's findings, published figures checked and answers, over its records (`recs`, in file
/// order) and this machine's memory rates.
pub fn summarize(s: &SuiteFile, recs: &[Value], mem: &MemCopy) -> Summary {
    // One row per point: repeated runs (`--repeat`) are the median run, with their spread.
    let mut rows: Vec<Row> = crate::suite_rows::rows_of(recs);
    let findings = findings_compare::compare(&mut rows, mem);
    let published = check_published(s, mem);
    let answers = s
        .questions
        .iter()
        .map(|q| {
            let mine = |step: &str| q.steps.is_empty() || q.steps.iter().any(|x| x == step);
            let ctx = Ctx {
                q,
                rows: rows.iter().filter(|r| mine(&r.step)).collect(),
                recs: recs.iter().filter(|r| mine(&record_step(r))).collect(),
                published: &published,
                mem,
            };
            let reply = match ANSWERS.iter().find(|(n, _)| *n == q.answer_by) {
                Some((_, f)) => f(&ctx),
                None => Reply::not_here(
                    String::new(),
                    format!("an answer function named '{}'", q.answer_by),
                ),
            };
            Answer {
                id: q.id.clone(),
                question: q.text.clone(),
                source: q.source.clone(),
                status: reply.status,
                text: reply.text,
                needs: reply.needs,
            }
        })
        .collect();
    Summary {
        suite: s.name.clone(),
        memory: mem.clone(),
        findings,
        published,
        answers,
    }
}

/// `text` as one line after `indent` spaces, its whitespace made single spaces: the printer wraps it to
/// the terminal (`iolab_report::text`), continuation lines hanging under the text (after a "- " bullet).
pub fn line(text: &str, indent: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    format!("{:indent$}{}\n", "", words.join(" "))
}

/// The findings, the published figures checked and the answers, as printed after a suite's table.
pub fn render(sum: &Summary) -> String {
    let mut o = String::new();
    render_findings(&sum.findings, &sum.memory, &mut o);
    if !sum.published.is_empty() {
        o.push_str("\nThe seed's published throughputs, checked against this machine's memory copy rate:\n");
        for p in &sum.published {
            o.push_str(&line(&format!("- {}: {}", p.label, p.verdict), 2));
        }
    }
    if !sum.answers.is_empty() {
        o.push_str("\nAnswers (the seed's questions, answered from this run's figures):\n");
    }
    for (i, a) in sum.answers.iter().enumerate() {
        let src = if a.source.is_empty() {
            String::new()
        } else {
            format!(" ({})", a.source)
        };
        o.push_str(&line(
            &format!("{}. {}{src} [{}]", i + 1, a.question, a.status.word()),
            2,
        ));
        if !a.text.is_empty() {
            o.push_str(&line(&a.text, 5));
        }
        if let Some(n) = &a.needs {
            o.push_str(&line(&format!("Needs: {n}"), 5));
        }
    }
    o
}

/// The comparative findings, then each row's own, after the memory rates they were checked against.
pub fn render_findings(fs: &[Compared], mem: &MemCopy, o: &mut String) {
    let _ = writeln!(
        o,
        "\nFindings (comparing the rows of this table, then each row's own):"
    );
    o.push_str(&line(
        &format!("Throughputs are checked against what {}.", mem.describe()),
        2,
    ));
    if fs.is_empty() {
        o.push_str("  none: no rule found anything to say\n");
    }
    let mut last = None;
    for f in fs {
        if last != Some(&f.about) {
            if !f.about.is_empty() {
                let _ = writeln!(o, "  {}:", f.about);
            }
            last = Some(&f.about);
        }
        o.push_str(&line(&format!("- {}", f.text), 4));
    }
}

/// The record-file line of a summary.
pub fn record(sum: &Summary) -> Value {
    serde_json::json!({ "summary": sum })
}

/// The summaries in a file of records (a suite's .jsonl): one per run of the suite, the last the latest.
pub fn summaries_in(text: &str) -> Vec<Summary> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("summary").cloned())
        .filter_map(|s| serde_json::from_value(s).ok())
        .collect()
}

// ---------------------------------------------------------------------------------------------------
// Small helpers the answer functions share.

/// "3.4x".
pub(crate) fn x(r: f64) -> String {
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
pub(crate) fn ns(v: f64) -> String {
    iolab_engine::units::fmt_ns(v)
}

pub(crate) use iolab_engine::units::thousands;

pub(crate) fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

/// The median of `xs` (None when empty).
pub(crate) fn median(xs: &mut [f64]) -> Option<f64> {
    iolab_engine::stats::median(xs)
}

#[cfg(test)]
mod tests;
