//! `--warmup`: each worker's untimed operations before the timed pass (see `spec::warmup`). The worker
//! prepares an instance of the method of its own for them (its own ring, mapping, descriptor), on the same
//! target and region, runs the same loop with no progress and no clock bound but the warm-up's, and closes
//! the instance before it prepares the one that is timed; all this comes before the start barrier, so
//! the process and kernel snapshots of the timed span see none of it. Rings shared by the threads are
//! shared among the warm-up instances through a slot of their own, emptied by the last thread to finish
//! its warm-up (an SQPOLL thread of a warm-up ring does not outlive the warm-up).

use super::loops::{loop_async, loop_sync};
use super::work::prepare;
use super::work::WarmOut;
use super::work::WarmShared;
use super::work::{LoopParams, WorkerOut};
use crate::error::Result;
use crate::measure::clock::Clock;
use crate::measure::hist::FastHist;
use crate::method::api::{Method, ThreadCtx};
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs this thread's warm-up (nothing without `--warmup`).
pub(super) fn warm_up<M: Method, C: Clock>(
    ctx: &ThreadCtx,
    clk: &C,
    p: &LoopParams,
    abort: &AtomicBool,
) -> Result<WarmOut> {
    let Some(w) = p.warm else {
        return Ok(WarmOut::default());
    };
    let result = run::<M, C>(ctx, clk, p, w, abort);
    // The last thread out empties the slot: a shared warm-up ring goes before the timed pass starts.
    if w.left.fetch_sub(1, Ordering::AcqRel) == 1 {
        w.slot.clear();
    }
    result
}

fn run<M: Method, C: Clock>(
    ctx: &ThreadCtx,
    clk: &C,
    p: &LoopParams,
    w: &WarmShared,
    abort: &AtomicBool,
) -> Result<WarmOut> {
    let spec = ctx.spec;
    let max_ops = spec
        .warmup
        .ops_for_thread(ctx.thread, spec.threads)
        .unwrap_or(u64::MAX);
    if max_ops == 0 {
        return Ok(WarmOut::default());
    }
    let wctx = ThreadCtx {
        shared: &w.slot,
        ..*ctx
    };
    let mut wp = p.clone();
    wp.progress = None;
    wp.duration_ticks = w.ticks;
    wp.warm = None;
    // A clock read after every op, whatever --clock-every says for the timed span (as ever).
    wp.clock_every = 1;
    wp.sampled = false;
    let (mut m, mut bufs) = prepare::<M>(&wctx, &wp)?;
    let mut plan = super::drawn::plan(spec, ctx.target, ctx.thread, p.write);
    let mut out = WorkerOut::new();
    out.lat = FastHist::try_new()?;
    out.gap = FastHist::try_new()?;
    // M::QUEUED, a constant: only the loop the method runs is compiled for it (see worker.rs).
    let r = if !M::QUEUED {
        loop_sync(
            &mut m, clk, &wp, spec, &mut plan, &mut bufs, max_ops, &mut out, abort,
        )
    } else {
        loop_async(
            &mut m, clk, &wp, spec, &mut plan, &mut bufs, max_ops, &mut out, abort,
        )
    };
    drop(m);
    if out.leak_buffers {
        std::mem::forget(bufs);
    }
    r?;
    Ok(WarmOut {
        ops: out.ops,
        ticks: out.t_last.saturating_sub(out.t_first),
        bytes: 0,
    })
}
