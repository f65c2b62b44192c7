//! One worker thread: it prepares its method and buffers, waits for the others, runs the loop and
//! reports what it measured.

use super::intervals::IntervalLog;
use super::loops::{loop_async, loop_sync};
use super::work::prepare;
use super::work::AlignedBuf;
use super::work::LoopParams;
use super::work::Phases;
use super::work::WorkerOut;
use crate::measure::clock::Clock;
use crate::measure::cpu::{Rusage, RusageDelta};
use crate::measure::hist::FastHist;
use crate::method::api::{Method, ThreadCtx};
use crate::pattern::OpPlan;
use std::sync::atomic::{AtomicBool, Ordering};

pub(super) fn worker<M: Method, C: Clock>(
    ctx: ThreadCtx,
    clk: &C,
    p: &LoopParams,
    sh: &dyn Phases,
    max_ops: u64,
) -> WorkerOut {
    let mut out = WorkerOut::new();
    let mut prepared = match fill_out(&mut out, p).and_then(|()| {
        out.warm = super::warmup::warm_up::<M, C>(&ctx, clk, p, sh.abort())?;
        prepare::<M>(&ctx, p)
    }) {
        Ok(x) => Some(x),
        Err(e) => {
            out.error = Some(e);
            sh.abort().store(true, Ordering::Relaxed);
            None
        }
    };
    // The plan is made before the start (a Zipf plan sums its constants over the region's blocks).
    let mut plan = prepared.as_ref().map(|_| plan_of(&ctx, p));
    let max_ops = plan.as_ref().map_or(max_ops, |pl| {
        super::drawn::ops_for(ctx.spec, pl, ctx.thread, max_ops)
    });
    sh.start();
    if let (Some(prepared), Some(plan)) = (prepared.as_mut(), plan.as_mut()) {
        if !sh.abort().load(Ordering::Relaxed) {
            measure(prepared, &ctx, clk, p, plan, sh.abort(), max_ops, &mut out);
        }
    }
    sh.finish();
    // After the "after" sample, so that its CPU time is not the run's.
    out.log.finish(&mut out.lat, out.t_last, out.ops);
    super::drawn::account(ctx.spec, ctx.target, ctx.thread, p.write, &mut out);
    // The method (fd, mapping, ring and with it the ring's helper threads) goes away here, after sampling.
    if let Some((m, bufs)) = prepared {
        drop(m);
        if out.leak_buffers {
            std::mem::forget(bufs);
        }
    }
    out
}

/// A worker's histograms, interval log and per-op record, made before its method is prepared (out of
/// line: the worker is compiled once per method and clock).
#[inline(never)]
fn fill_out(out: &mut WorkerOut, p: &LoopParams) -> crate::error::Result<()> {
    out.lat = FastHist::try_new()?;
    out.gap = FastHist::try_new()?;
    out.log = match p.interval_ticks {
        0 => IntervalLog::off(),
        every => IntervalLog::new(every, p.intervals_expected)?,
    };
    out.perop = super::perop::PerOp::for_worker(p.mixed, p.log_ops, p.op_windows)?;
    Ok(())
}

/// The thread's offset plan: its region, the distribution, the direction of each op (out of line: the
/// worker is compiled once per method and clock).
#[inline(never)]
fn plan_of(ctx: &ThreadCtx, p: &LoopParams) -> OpPlan {
    super::drawn::plan(ctx.spec, ctx.target, ctx.thread, p.write)
}

/// Runs the method's loop between two samples of the thread's CPU, then takes what the method counted.
#[allow(clippy::too_many_arguments)]
fn measure<M: Method, C: Clock>(
    (m, bufs): &mut (M, Vec<AlignedBuf>),
    ctx: &ThreadCtx,
    clk: &C,
    p: &LoopParams,
    plan: &mut OpPlan,
    abort: &AtomicBool,
    max_ops: u64,
    out: &mut WorkerOut,
) {
    let ru0 = Rusage::thread();
    let cpu0 = iolab_sys::current_cpu();
    // M::QUEUED, a constant: each method's runner holds only the loops it runs (p.synchronous says the
    // same, from the method's INFO).
    let r = if M::QUEUED {
        loop_async(m, clk, p, ctx.spec, plan, bufs, max_ops, out, abort)
    } else {
        loop_sync(m, clk, p, ctx.spec, plan, bufs, max_ops, out, abort)
    };
    let ru1 = Rusage::thread();
    out.cpus = (cpu0, iolab_sys::current_cpu());
    out.rusage = RusageDelta::between(&ru0, &ru1);
    out.syscalls = m.syscalls(out.ops);
    out.submissions = m.submissions();
    let st = m.stats();
    out.uring = st.uring;
    out.aio = st.aio;
    out.nowait = st.nowait;
    out.read_check = st.read_check;
    out.figures = st.figures;
    if let Err(e) = r {
        out.error = Some(e);
        abort.store(true, Ordering::Relaxed);
    }
}
