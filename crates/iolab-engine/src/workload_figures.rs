//! The result's figures of fio-like workloads: `--op mixed` (reads and writes apart) and paced runs
//! (`--rate-iops`). Kept apart from result.rs, which re-exports them.

use crate::measure::hist::Summary;
use serde::{Deserialize, Serialize};

/// `--op mixed`: what was read and what was written, each timed apart.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MixedFigures {
    /// The share of reads asked for, in percent.
    pub read_pct: u32,
    pub reads: DirFigures,
    pub writes: DirFigures,
}

/// One direction of a mixed run: its ops, their share of all ops, rates over the pass's wall time (the
/// other direction's ops ran in the same span), and their latency as the run timed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DirFigures {
    pub ops: u64,
    pub bytes: u64,
    pub share: f64,
    pub iops: f64,
    pub mib_s: f64,
    pub latency: Summary,
}

/// A paced run: each thread's ops per second asked and the slowest thread's achieved (its ops over its
/// own span), met when that is at least 99% of the asked; ops that started more than one interval after
/// they were due, and the largest such lag. Latency runs from each op's due time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PacedFigures {
    pub rate_iops: f64,
    pub achieved_iops: f64,
    pub met: bool,
    pub late_ops: u64,
    pub max_lag_ns: f64,
}

/// Random offsets: how the run's accesses spread over the blocks, from each thread's plan replayed for
/// the ops it completed (the plan is what was issued).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AccessFigures {
    /// `--distribution` ("uniform", "zipf:1.2").
    pub distribution: String,
    pub accesses: u64,
    /// Blocks of the threads' regions, and those hit at least once.
    pub region_blocks: u64,
    pub distinct_blocks: u64,
    /// The share of the accesses that went to the hottest tenth of the blocks hit (fio-genzipf's "Top
    /// 10%" row).
    pub hottest_tenth_share: f64,
}
