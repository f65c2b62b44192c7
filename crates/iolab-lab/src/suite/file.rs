//! A suite file: its steps, tables, questions and published figures, as TOML (suites/*.toml are built
//! into the binary).

use super::question::{PublishedFigure, Question};
use iolab_engine::error::{Error, Result};
use serde::Deserialize;

/// The checked-in suites, in the order `--list` shows them.
pub const BUILTIN: &[(&str, &str)] = &[
    ("writes", include_str!("../../../../suites/writes.toml")),
    (
        "blocksize",
        include_str!("../../../../suites/blocksize.toml"),
    ),
    ("uring", include_str!("../../../../suites/uring.toml")),
    (
        "shared-ring",
        include_str!("../../../../suites/shared-ring.toml"),
    ),
    (
        "kernel-user",
        include_str!("../../../../suites/kernel-user.toml"),
    ),
    ("offload", include_str!("../../../../suites/offload.toml")),
    ("nowait", include_str!("../../../../suites/nowait.toml")),
    ("modern", include_str!("../../../../suites/modern.toml")),
];

/// How a suite's results are tabled (after the seed's own tables).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKind {
    /// User, sys, total seconds, user %, sys % (the Pi thesis's Figures 18 and 20).
    Cpu,
    /// MiB/s and kernel CPU % per block size (the storage paper's Figures 2 and 3).
    Throughput,
    /// Runtime, average latency, IOPS, MiB/s, syscalls (the course report's Tables 1-3).
    Latency,
    /// IOPS and io_uring batch statistics (the course report's Tables 4-6).
    Batches,
    /// The distribution of run times (first write until fsync returned) per method (the kernel-vs-user note).
    Lines,
    /// NOP round trips in ns and cycles (the offload thesis).
    Nop,
    /// Ops that would have blocked (RWF_NOWAIT) beside io_uring's io-wq punts.
    Nowait,
    /// The kernel's count of every system call over the same ops, like `strace -c` without its cost in
    /// the timed pass (the course report's Table 3).
    Syscalls,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SuiteFile {
    pub name: String,
    /// One line, for `--list`.
    pub about: String,
    /// The seed document and the tables or figures this suite reproduces.
    pub reproduces: String,
    pub table: TableKind,
    /// Where and why the setup differs from the seed's.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The seed's published figures, printed under iolab's table for comparison.
    #[serde(default)]
    pub published: Option<String>,
    /// Spec keys every step starts from.
    #[serde(default)]
    pub defaults: toml::Table,
    /// Spec keys that replace any other under `--quick` (smaller amounts).
    #[serde(default)]
    pub quick: toml::Table,
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
    /// What the profile table reproduces, when the points carry profiles (`--profile`).
    #[serde(default)]
    pub profile_figure: Option<String>,
    /// The seed's open questions, answered after the table (`answers.rs`).
    #[serde(default, rename = "question")]
    pub questions: Vec<Question>,
    /// The seed's published throughputs, checked against the seed's own instruction counts, then this machine's memory copy rate.
    #[serde(default, rename = "published-figure")]
    pub published_figures: Vec<PublishedFigure>,
    /// Spec keys set on every point over everything the file says (from the command line).
    #[serde(skip)]
    pub overrides: toml::Table,
    /// `--repeat N`: every point runs N times, in rounds (0 or 1: once).
    #[serde(skip)]
    pub repeat: u32,
    /// The file this suite was read from ("suites/NAME.toml" for a built-in one), named in errors.
    #[serde(skip)]
    pub origin: String,
}

impl SuiteFile {
    /// Sets spec key `key` to `value` on every point (over the defaults, steps, vary lists and quick
    /// keys), and marks each point with it.
    pub fn set_on_every_point(&mut self, key: &str, value: &str) {
        self.overrides.insert(key.to_string(), toml_of(value));
    }

    /// Runs every point `n` times (`iolab suite --repeat N`): in `n` rounds over all the points, each
    /// round in the other order (as the survey's rounds), each run a point of its own (`repeat=K`).
    pub fn set_repeat(&mut self, n: u32) {
        self.repeat = n;
    }
}

/// The profile group of the kernel copying between user and kernel memory (the storage paper's Figure 4
/// is about it); `ProfileFigures::groups` names it so.
pub const COPY_GROUP: &str = "copy to/from user";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Step {
    pub label: String,
    #[serde(default)]
    pub spec: toml::Table,
    /// "KEY=V1,V2,..." lists, as `iolab sweep --vary`.
    #[serde(default)]
    pub vary: Vec<String>,
    /// Replaces `vary` under `--quick`.
    #[serde(default)]
    pub quick_vary: Option<Vec<String>>,
    /// Runs of each point (records with a `run` key).
    #[serde(default)]
    pub runs: Option<u32>,
    #[serde(default)]
    pub quick_runs: Option<u32>,
    /// "lines" or "clock"; absent: an iolab run.
    #[serde(default)]
    pub workload: Option<String>,
    /// "offload", "zram", "sink", "guest" (a guest of `iolab vm` can be built here) or "poll-queues" (the
    /// step's target is a block device with poll queues).
    #[serde(default)]
    pub needs: Option<String>,
    /// The step's own table, when it is not the suite's (`table = "syscalls"`: Table 3 beside Tables 1-2).
    #[serde(default)]
    pub table: Option<TableKind>,
}

impl Step {
    /// Its vary lists, those for `--quick` where it has them.
    pub fn vary_lists(&self, quick: bool) -> &[String] {
        match (&self.quick_vary, quick) {
            (Some(q), true) => q,
            _ => &self.vary,
        }
    }

    /// Runs of each point (at least one), those for `--quick` where it has them.
    pub fn runs_of_each(&self, quick: bool) -> u32 {
        match (self.quick_runs, quick) {
            (Some(q), true) => q,
            _ => self.runs.unwrap_or(1),
        }
        .max(1)
    }
}

/// Parses suite text; `origin` names it in errors (with the line and column of a TOML error). The
/// questions are checked against the answer table by [`super::parse`].
pub fn parse_file(text: &str, origin: &str) -> Result<SuiteFile> {
    let mut s = toml::from_str::<SuiteFile>(text).map_err(|e| {
        Error::usage(
            "suite",
            format!(
                "{origin}: {}",
                iolab_engine::spec::options::toml_error(text, &e)
            ),
        )
    })?;
    s.origin = origin.to_string();
    Ok(s)
}

/// A spec value as TOML: a number where it reads as one, else a string.
pub(super) fn toml_of(v: &str) -> toml::Value {
    match v {
        "true" => toml::Value::Boolean(true),
        "false" => toml::Value::Boolean(false),
        _ => toml::Value::String(v.to_string()),
    }
}

/// Refuses a question whose steps are not the suite's, a question id given twice, and a published
/// figure without positive bytes and seconds.
pub(super) fn check_questions(s: &SuiteFile) -> std::result::Result<(), String> {
    let mut ids = Vec::new();
    for q in &s.questions {
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
