//! The timed pass's ops as `--op-log` keeps them (the runner's `perop.rs` fills them): the data fio's
//! per-I/O and windowed log files are written from. Here, below the runner, so that a result can hold
//! them without the result depending on the runner.

use crate::measure::blocktrace::OpRec;

/// The most memory an op log may take (all threads): 256 MiB, 8 Mi records of every op.
pub const OP_LOG_MAX_BYTES: u64 = 256 << 20;
/// The most windows a thread keeps for `--op-log MS` (18 hours of 1 s windows).
pub const OP_LOG_MAX_WINDOWS: u64 = 1 << 16;

/// The timed pass's ops as `--op-log` kept them, per thread. In memory only: never in the result's JSON.
#[derive(Debug, Clone, Default)]
pub struct OpLog {
    /// 0: every op's record (`ThreadOps::ops`); else the length of a window in ms (`ThreadOps::windows`).
    pub window_ms: u64,
    /// The run's clock: nanoseconds per tick.
    pub ns_per_tick: f64,
    /// Bytes per op.
    pub bs: u64,
    pub threads: Vec<ThreadOps>,
}

/// One thread's ops.
#[derive(Debug, Clone, Default)]
pub struct ThreadOps {
    pub thread: u32,
    /// The tick of the thread's first op start: time 0 of its records and windows.
    pub origin: u64,
    /// The tick of its last completion and final flush.
    pub end: u64,
    /// `--op-log 0`: every op, in completion order (ticks).
    pub ops: Vec<OpRec>,
    /// `--op-log MS`: the windows that had an op, in time order.
    pub windows: Vec<OpWindow>,
    /// Ops done but not kept: the room reserved was full.
    pub dropped: u64,
}

/// One window of `--op-log MS`: the ops that completed in it, by direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpWindow {
    /// Window k spans [k, k + 1) x MS ms from the thread's first op start (by completion time).
    pub index: u64,
    /// [reads, writes]: ops completed, and the sum of their latencies in ticks.
    pub ops: [u64; 2],
    pub lat_ticks: [u64; 2],
}
