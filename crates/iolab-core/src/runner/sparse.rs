//! The loop for synchronous methods with one clock read every N ops (`--clock-every N`, or iolab's own
//! choice where a clock read is a system call, see `measure/clock.rs`): no per-op latency, throughput from
//! the span between the first and the last read. The deadline (`--duration`), the end of an interval
//! (`--log-interval`) and the progress display are looked at on those reads only.

use super::loops::{end_flushes, publish, short_transfer, timed_flush};
use super::worker::{AlignedBuf, LoopParams, WorkerOut};
use crate::error::Result;
use crate::measure::clock::Clock;
use crate::method::{Flush, Io, Method};
use crate::pattern::{self, OpPlan};
use crate::spec::Spec;
use std::sync::atomic::{AtomicBool, Ordering};

/// The op count at which a flush every `every` ops is next due after `done` (u64::MAX: never).
fn next_at(done: u64, every: u64) -> u64 {
    done.checked_div(every)
        .map_or(u64::MAX, |q| (q + 1) * every)
}

/// [`super::loops::loop_sync`] with a clock read every `p.clock_every` ops instead of after each.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) fn loop_sync_sparse<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    p: &LoopParams,
    spec: &Spec,
    plan: &mut OpPlan,
    buf: &mut AlignedBuf,
    max_ops: u64,
    out: &mut WorkerOut,
    abort: &AtomicBool,
) -> Result<()> {
    let (bs, every) = (p.bs, p.clock_every.max(1));
    let ptr = buf.ptr;
    let data = buf.slice_mut(bs);
    let mut next_flush = next_at(0, p.fsync_every).min(next_at(0, p.msync_every));
    let mut op = plan.next_op();
    if p.stamp {
        pattern::stamp(data, p.seed, op.block);
    }
    let start = clk.now();
    let mut reads = 1u64;
    out.t_first = start;
    let deadline = p
        .duration_ticks
        .map_or(u64::MAX, |d| start.saturating_add(d));
    out.log.begin(start);
    let mut next_pub = start.saturating_add(p.publish_ticks);
    let mut reported = 0u64;
    let mut next_read = every;
    let mut done = 0u64;
    while done < max_ops {
        let io = Io {
            slot: 0,
            offset: op.offset,
            buf: ptr,
            len: bs,
        };
        let n = m.submit(&io)?;
        if n != bs {
            return Err(short_transfer(p, n, op.offset));
        }
        done += 1;
        if done == next_flush {
            if p.fsync_every != 0 && done.is_multiple_of(p.fsync_every) {
                timed_flush(m, clk, Flush::Fsync, out)?;
            }
            if p.msync_every != 0 && done.is_multiple_of(p.msync_every) {
                timed_flush(m, clk, Flush::Msync, out)?;
            }
            next_flush = next_at(done, p.fsync_every).min(next_at(done, p.msync_every));
        }
        if done == next_read {
            next_read += every;
            let e = clk.now();
            reads += 1;
            if e >= deadline {
                break;
            }
            if e >= out.log.next {
                out.log.close(&mut out.lat, e, done);
            }
            if e >= next_pub {
                next_pub = publish(p, e, done, &mut reported);
            }
        }
        if done & 1023 == 0 && abort.load(Ordering::Relaxed) {
            break;
        }
        op = plan.next_op();
        if p.stamp {
            pattern::stamp(data, p.seed, op.block);
        }
    }
    out.ops = done;
    end_flushes(m, clk, spec, out)?;
    out.t_last = clk.now();
    // The last, and two per flush.
    out.clock_reads = reads + 1 + 2 * out.flush_calls;
    publish(p, out.t_last, done, &mut reported);
    Ok(())
}
