//! The `--fsync`/`--msync` flushes of the timed loops (`loops.rs`): timed one by one, due every N ops
//! or at the end.

use super::work::{LoopParams, WorkerOut};
use crate::error::Result;
use crate::measure::clock::Clock;
use crate::method::api::{Flush, Method};
use crate::spec::{Spec, SyncEvery};

// Out of line: a flush is a slow system call, and the loops are compiled per method and clock.
#[inline(never)]
pub(super) fn timed_flush<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    what: Flush,
    out: &mut WorkerOut,
) -> Result<()> {
    let s = clk.now();
    m.flush(what)?;
    let d = clk.now().saturating_sub(s);
    out.flush_calls += 1;
    out.flush_ticks += d;
    out.flush_max_ticks = out.flush_max_ticks.max(d);
    Ok(())
}

// Inlined into the loops, as when they were in loops.rs (see `loops::end_loop`).
#[inline(always)]
pub(super) fn end_flushes<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    spec: &Spec,
    out: &mut WorkerOut,
) -> Result<()> {
    m.finish()?;
    if spec.msync == SyncEvery::End {
        timed_flush(m, clk, Flush::Msync, out)?;
    }
    if spec.fsync == SyncEvery::End {
        timed_flush(m, clk, Flush::Fsync, out)?;
    }
    Ok(())
}

/// The --fsync/--msync flushes due at op count `done`; returns the op count of the next one.
pub(super) fn flushes_due<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    p: &LoopParams,
    done: u64,
    out: &mut WorkerOut,
) -> Result<u64> {
    if p.fsync_every != 0 && done.is_multiple_of(p.fsync_every) {
        timed_flush(m, clk, Flush::Fsync, out)?;
    }
    if p.msync_every != 0 && done.is_multiple_of(p.msync_every) {
        timed_flush(m, clk, Flush::Msync, out)?;
    }
    Ok(next_at(done, p.fsync_every).min(next_at(done, p.msync_every)))
}

/// The op count at which a flush every `every` ops is next due after `done` (u64::MAX: never).
pub(super) fn next_at(done: u64, every: u64) -> u64 {
    done.checked_div(every)
        .map_or(u64::MAX, |q| (q + 1) * every)
}
