//! The result's figures of fio-like workloads: `--op mixed` (reads and writes apart) and paced runs
//! (`--rate-iops`). Kept apart from result.rs, which re-exports them.

use super::hist::Summary;
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

/// `--layers`: where an op's time went, from the block layer's tracepoints in a separate untimed pass
/// (per op means and 99th percentiles, ns): before its first bio reached the block layer (the syscall,
/// filesystem, page cache, io-wq hand-off), queued in the block layer, on the device, and after the
/// completion until iolab saw it. An op no request of its own served counts all its time as before.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LayerFigures {
    pub before_ns: f64,
    pub queued_ns: f64,
    pub device_ns: f64,
    pub after_ns: f64,
    pub before_p99_ns: f64,
    pub queued_p99_ns: f64,
    pub device_p99_ns: f64,
    pub after_p99_ns: f64,
    /// Block requests per op (0: every op was served without one, as from the page cache).
    pub requests: f64,
    /// Ops whose time was split, and of them those no request of their own served.
    pub ops: u64,
    pub ops_without_request: u64,
    /// Ops left out: their request's events were not all seen (lost samples, or a stacked device).
    pub ops_unmatched: u64,
    /// The mean latency of the traced pass's ops (the four parts add up to it) and of the timed pass's
    /// ops (the difference is what tracing cost each op, with the runs' own noise).
    pub pass_mean_ns: f64,
    /// Null where the timed pass had no per-op latency (a sparse clock).
    pub timed_mean_ns: Option<f64>,
    /// Samples the kernel could not write into the rings (the ops they belonged to are left out).
    pub lost_samples: u64,
    /// Which events, on which disk, through what, in which pass.
    pub source: String,
}
