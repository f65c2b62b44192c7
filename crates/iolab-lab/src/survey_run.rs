//! What a survey runs and keeps of each method on each target: the cell each round runs, every round of
//! it, and the row the survey's JSON holds (`runs[]`).

use iolab_engine::result::RunResult;
use iolab_engine::spec::MethodKind;
use serde::{Deserialize, Serialize};

/// One method on one target at one block size: what each round runs.
pub struct Cell {
    /// "/dev/null", "file", "pipe", or a workload's label.
    pub target: String,
    pub method: MethodKind,
    pub bs: u64,
    pub(crate) spec: iolab_engine::spec::Spec,
}

/// Progress callback: (runs done, runs in all, the cell just run, its round counting from 1).
pub type OnRun = Box<dyn Fn(usize, usize, &Cell, u32)>;

/// One round of one cell, in a survey's JSON (`runs[].round_runs`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct RoundRun {
    /// The round, from 1.
    pub round: u32,
    pub ns_per_op: f64,
    /// The machine disturbed it ([`iolab_engine::disturbance`]): kept out of the ranking's tests.
    pub disturbed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SurveyRun {
    /// "/dev/null", "file" or "pipe".
    pub target: String,
    pub method: MethodKind,
    pub bs: u64,
    /// Present when the run happened: the round with the median ns/op.
    pub result: Option<RunResult>,
    /// Why the method could not run on this target (the refusal iolab or the kernel gave).
    pub unavailable: Option<String>,
    /// ns/op of every round, in the order they ran (empty in results of versions before rounds).
    #[serde(default)]
    pub rounds_ns_per_op: Vec<f64>,
    /// Every round it ran: which, its ns/op, and whether the machine disturbed it (empty in results
    /// before it, whose rounds were all one round each).
    #[serde(default)]
    pub round_runs: Vec<RoundRun>,
    /// How many of its rounds the machine disturbed (run again, kept out of the ranking's tests).
    #[serde(default)]
    pub rounds_disturbed: u32,
    /// Hypervisor steal on all CPUs during this method's rounds, seconds (null where no round's figures
    /// were kept: the method did not run, or a round failed and its row was dropped).
    #[serde(default)]
    pub steal_s: Option<f64>,
    /// What limited its median round ([`crate::verdict`]); absent in older results.
    #[serde(default)]
    pub verdict: Option<crate::verdict::Verdict>,
}

/// What the ranking reads of a survey's run (a report reads it from a record cut down to it).
#[derive(Debug, Clone)]
pub struct Ranked<'a> {
    /// Borrowed from the run it is read from (a target's path may be long, and a survey has many rows).
    pub target: &'a str,
    pub method: MethodKind,
    pub bs: u64,
    /// The median round's time per op, ns (none where the method did not run).
    pub median: Option<f64>,
    pub round_runs: Vec<RoundRun>,
    pub rounds_ns_per_op: Vec<f64>,
}

impl SurveyRun {
    /// What the ranking reads of it.
    pub fn ranked(&self) -> Ranked<'_> {
        Ranked {
            target: &self.target,
            method: self.method,
            bs: self.bs,
            median: self.result.as_ref().map(|r| r.ns_per_op),
            round_runs: self.round_runs.clone(),
            rounds_ns_per_op: self.rounds_ns_per_op.clone(),
        }
    }

    /// Did a round fail at run time (no space, an I/O error, a replaced file, data that did not
    /// verify)? A method this machine cannot run, or that cannot do the workload, is not a failure.
    pub fn failed_at_run_time(&self) -> bool {
        self.unavailable
            .as_deref()
            .is_some_and(|u| u.starts_with("failed in round"))
    }
}
