//! Answers to the seeds' questions. Each suite file lists its seed's open questions (`[[question]]`: an
//! id, the question, where the seed asks it, the steps whose rows answer it, the seed's own figures the
//! answer reads, and the function that answers it) and the seed's published throughputs
//! (`[[published-figure]]`, checked against the seed's own instruction counts, then this machine's memory copy rate). After the suite's table
//! iolab prints its findings (`findings_compare.rs`) and answers each question from this run's figures,
//! or says exactly what it would need; the same [`Summary`] goes into the suite's record file as one line
//! `{"summary": ...}` (readers of records skip it; `iolab report` shows it).
//!
//! The answer functions live in one table ([`ANSWERS`]), like the findings rules: each gets the rows and
//! records of its question's steps ([`Ctx`]) and returns a [`Reply`] whose text states the figures it used.
//! They are grouped by seed: `pi.rs` (the Pi thesis: writes, nowait), `storage.rs` (blocksize),
//! `course.rs` (uring, shared-ring), `offload.rs` (the hypervisor thesis), `lines.rs` (kernel-vs-user),
//! `modern.rs` (the interfaces of recent kernels).

mod course;
mod course_ring;
mod holds;
mod lines;
mod modern;
mod offload;
mod pi;
pub mod reply;
mod storage;

pub use crate::suite::question::{PublishedFigure, Question};
use reply::record_step;
pub use reply::{needed_by_all, Answer, Ctx, PublishedCheck, Reply, Status};
use std::collections::BTreeMap;

use crate::findings_compare::{self, Compared, Row};
use crate::suite::file::SuiteFile;
use iolab_engine::measure::memcopy::{gbps, MemCopy};
use iolab_engine::units::thousands;
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
    ("driver_gaps", pi::driver_gaps),
    ("older_techniques", pi::older_techniques),
    ("would_block", pi::would_block),
    ("offload_slowdown", offload::offload_slowdown),
    ("direct_crossover", storage::direct_crossover),
    ("cpu_bottleneck", storage::cpu_bottleneck),
    ("copy_share", storage::copy_share),
    ("sync_won", course::sync_won),
    ("iopoll_gain", course::iopoll_gain),
    ("syscall_reduction", course::syscall_reduction),
    ("shared_ring_lost", course::shared_ring_lost),
    ("future_work", course::future_work),
    ("kernel_module_slower", lines::kernel_module_slower),
    ("fixed_and_min_wait", modern::fixed_and_min_wait),
    ("dontcache_when", modern::dontcache_when),
    ("passthrough_saves", modern::passthrough_saves),
];

/// Refuses questions that name no known answer function (the suite's own checks are `suite::parse`'s).
pub fn check(s: &SuiteFile) -> Result<(), String> {
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
    }
    Ok(())
}

/// Suite text (`suite::parse`) whose questions each name a known answer function; `origin` names it in
/// errors.
pub fn parse(text: &str, origin: &str) -> iolab_engine::error::Result<SuiteFile> {
    let s = crate::suite::parse(text, origin)?;
    check(&s).map_err(|m| iolab_engine::error::Error::usage("suite", format!("{origin}: {m}")))?;
    Ok(s)
}

/// A built-in suite or a suite file (`suite::load`) whose questions each name a known answer function.
pub fn load(name: &str) -> iolab_engine::error::Result<SuiteFile> {
    let s = crate::suite::load(name)?;
    check(&s).map_err(|m| iolab_engine::error::Error::usage("suite", format!("{name}: {m}")))?;
    Ok(s)
}

/// The published figures checked: first against the seed's own instruction count, where it published
/// one (the same on every machine), then against what this machine's memory can copy, unless those rates
/// came from an emulated CPU (then they say nothing about the seed's hardware).
pub fn check_published(s: &SuiteFile, mem: &MemCopy) -> Vec<PublishedCheck> {
    s.published_figures
        .iter()
        .map(|p| {
            let rate = p.bytes / p.seconds;
            let (impossible, verdict) = match (by_instructions(p), &mem.emulated) {
                (Some(v), _) => (true, v),
                (None, Some(accel)) => (
                    false,
                    format!(
                        "not judged: {} moved, but this machine's memory rates were measured on an emulated \
                         CPU ({accel}), which says nothing of the seed's hardware",
                        gbps(rate)
                    ),
                ),
                (None, None) => {
                    let v = findings_compare::plausibility(p.bytes, p.seconds, None, p.cpus, mem);
                    (v.is_some(), v.unwrap_or_else(|| within(rate, p.cpus, mem)))
                }
            };
            let ceiling = mem.ceiling(None, p.cpus);
            let mut figures = BTreeMap::from([
                ("bytes".to_string(), p.bytes),
                ("seconds".to_string(), p.seconds),
                ("rate_bps".to_string(), rate),
                ("ceiling_bps".to_string(), ceiling.bps),
            ]);
            // The L1 copy rate, where the ceiling's words name it (below the rate beyond the caches).
            if let Some(l1) = ceiling.l1_named_bps {
                figures.insert("l1_copy_bps".into(), l1);
            }
            if let Some(n) = p.instructions.filter(|&n| n > 0.0) {
                figures.insert("instructions".into(), n);
                figures.insert("bytes_per_instruction".into(), p.bytes / n);
            }
            if let Some(w) = p.widest_store_bytes {
                figures.insert("widest_store_bytes".into(), w);
            }
            PublishedCheck {
                label: p.label.clone(),
                rate_bps: rate,
                impossible,
                verdict,
                figures,
            }
        })
        .collect()
}

/// A published figure whose bytes are more than its own run's instructions could have stored.
fn by_instructions(p: &PublishedFigure) -> Option<String> {
    let n = p.instructions.filter(|&n| n > 0.0)?;
    let widest = p.widest_store_bytes?;
    let per = p.bytes / n;
    (per > widest).then(|| {
        format!(
            "impossible by the seed's own count: its run executed {} instructions{} for {} bytes, {per:.0} \
             bytes per instruction, where its CPU stores at most {widest:.0} bytes per instruction: the \
             bytes were not copied",
            thousands(n),
            p.instructions_source
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default(),
            thousands(p.bytes)
        )
    })
}

/// "possible: 0.4 GB/s is within what one CPU can copy even within the L1 cache (81.0 GB/s), measured on
/// this machine".
fn within(rate: f64, cpus: u32, mem: &MemCopy) -> String {
    let c = mem.ceiling(None, cpus);
    format!(
        "possible: {} is within {} ({}), {}",
        gbps(rate),
        c.what,
        gbps(c.bps),
        if cpus > 1 {
            "at this machine's rate per CPU"
        } else {
            "on this machine"
        }
    )
}

/// The suite's findings, published figures checked and answers, over its records (`recs`, in file
/// order) and this machine's memory rates.
/// `lines[i]`: the line of the record file holding `recs[i]`, for the cites (empty: not known).
pub fn summarize(s: &SuiteFile, recs: &[Value], lines: &[usize], mem: &MemCopy) -> Summary {
    // One row per point: repeated runs (`--repeat`) are the median run, with their spread.
    let mut rows: Vec<Row> = crate::suite_rows::rows_at(recs, lines);
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
                rec_lines: recs
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| mine(&record_step(r)))
                    .map(|(i, _)| lines.get(i).copied().unwrap_or(0))
                    .collect(),
                published: &published,
                mem,
            };
            let (reply, cites) = match ANSWERS.iter().find(|(n, _)| *n == q.answer_by) {
                Some((_, f)) => crate::cite::collect(|| f(&ctx)),
                None => (
                    Reply::not_here(
                        String::new(),
                        format!("an answer function named '{}'", q.answer_by),
                    ),
                    Vec::new(),
                ),
            };
            let (status, needs) = match (reply.status, indicative(&ctx)) {
                (Status::Answered, Some(why)) => (Status::Indicative, Some(why)),
                (Status::Partly, Some(why)) => (
                    Status::Indicative,
                    Some(
                        reply
                            .needs
                            .map_or(why.clone(), |n| format!("{n}; and {why}")),
                    ),
                ),
                (_, Some(why)) => (
                    reply.status,
                    Some(
                        reply
                            .needs
                            .map_or(why.clone(), |n| format!("{n}; and {why}")),
                    ),
                ),
                (s, None) => (s, reply.needs),
            };
            Answer {
                id: q.id.clone(),
                question: q.text.clone(),
                source: q.source.clone(),
                status,
                text: reply.text,
                needs,
                cites,
                seed: q.seed.clone(),
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

/// A row loses this share of its wall time to the hypervisor (steal) and its figures are indicative.
const HIGH_STEAL: f64 = 0.10;

/// Why the figures an answer read cannot carry a verdict, if they cannot: a `--quick` run (a smoke
/// test), timings of an emulated CPU, rows other work disturbed, or rows with high hypervisor steal.
fn indicative(c: &Ctx) -> Option<String> {
    let quick = c.recs.iter().any(|r| {
        crate::series::record_point(r)
            .iter()
            .any(|(k, v)| k == "quick" && v == "true")
    });
    if quick {
        return Some(
            "a full run of the suite: this one ran --quick, a smoke test, not a measurement".into(),
        );
    }
    let emulated = c.recs.iter().find_map(|r| {
        let a = r.pointer("/result/host/accelerator")?.as_str()?;
        iolab_engine::emulation::guest::is_emulated(Some(a)).then(|| a.to_string())
    });
    if let Some(a) = emulated {
        return Some(format!(
            "a run on real hardware: these timings come from an emulated CPU ({a}), behaviour not speed"
        ));
    }
    let disturbed: Vec<(&str, &str)> = c
        .rows
        .iter()
        .filter_map(|r| Some((r.step.as_str(), r.facts.disturbed.as_deref()?)))
        .collect();
    if let Some((step, why)) = disturbed.first() {
        return Some(format!(
            "a quieter machine: {} of the rows it read were disturbed (in '{step}', {why})",
            disturbed.len()
        ));
    }
    let stolen: Vec<&str> = c
        .rows
        .iter()
        .filter(|r| r.facts.steal_share.is_some_and(|s| s > HIGH_STEAL))
        .map(|r| r.step.as_str())
        .collect();
    (!stolen.is_empty()).then(|| {
        format!(
            "a quieter machine: the hypervisor took more than {:.0}% of the run's time from {} of its rows",
            HIGH_STEAL * 100.0,
            stolen.len()
        )
    })
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
