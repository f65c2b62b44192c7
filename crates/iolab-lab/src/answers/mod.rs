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
pub mod question;
pub mod reply;
mod storage;

pub use question::{PublishedFigure, Question};
use reply::record_step;
pub use reply::{Answer, Ctx, PublishedCheck, Reply, Status};

use crate::findings_compare::{self, Compared, Row};
use crate::suite::file::SuiteFile;
use iolab_engine::measure::memcopy::{gbps, MemCopy};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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

#[cfg(test)]
mod tests;
