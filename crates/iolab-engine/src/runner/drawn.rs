//! A thread's offset plan, and with `--bs-split` what its ops of drawn lengths come to: how many ops make
//! a thread's share of `--size`, and after the run the bytes its ops moved, by direction and by interval.
//! The plan is replayed from the seed (out of the timed span), so the loops count ops alone, as ever.

use super::intervals::Closed;
use super::work::WorkerOut;
use crate::pattern::OpPlan;
use crate::spec::Spec;
use crate::target::PreparedTarget;

/// The plan of thread `thread`'s ops: its region, the distribution, the lengths and the direction of
/// each op (`write`, or drawn for a mixed run).
pub(super) fn plan(spec: &Spec, target: &PreparedTarget, thread: u32, write: bool) -> OpPlan {
    OpPlan::new(
        spec.pattern,
        spec.offset,
        spec.bs,
        target.region_first_block(thread),
        target.region_blocks,
        spec.seed,
        thread,
    )
    .skewed(&spec.distribution)
    .sized(spec.bs_split.as_ref())
    .zoned(spec.zones)
    .skipping(spec.skip)
    .directed(write, spec.read_pct)
    .per_direction(spec.walk_per_direction)
}

/// The ops thread `thread` makes: `max_ops`, or with `--size` in bytes (`--bs-split`) as many of the plan's
/// as reach its share, the last one passing it where it does (as fio's last op of a job by size may).
pub(super) fn ops_for(spec: &Spec, plan: &OpPlan, thread: u32, max_ops: u64) -> u64 {
    let Some(share) = spec.bytes_for_thread(thread) else {
        return max_ops;
    };
    let mut p = plan.clone();
    let (mut ops, mut bytes) = (0u64, 0u64);
    while bytes < share && ops < max_ops {
        bytes += p.next_op().len as u64;
        ops += 1;
    }
    ops
}

/// With `--bs-split`: the bytes of the worker's ops read and written (`out.moved`), of each interval it
/// closed, and of its warm-up, from its plans replayed for the ops it did.
pub(super) fn account(
    spec: &Spec,
    target: &PreparedTarget,
    thread: u32,
    write: bool,
    out: &mut WorkerOut,
) {
    if spec.bs_split.is_none() {
        return;
    }
    let mut p = plan(spec, target, thread, write);
    let (mut read, mut written) = (0u64, 0u64);
    let mut take = |n: u64| {
        let before = read + written;
        for _ in 0..n {
            let op = p.next_op();
            let len = op.len as u64;
            if op.write {
                written += len;
            } else {
                read += len;
            }
        }
        read + written - before
    };
    let mut done = 0;
    for c in out.log.closed.iter_mut() {
        c.bytes = take(c.ops);
        done += c.ops;
    }
    take(out.ops.saturating_sub(done));
    out.moved = Some((read, written));
    let mut w = plan(spec, target, thread, write);
    out.warm.bytes = (0..out.warm.ops).map(|_| w.next_op().len as u64).sum();
}

/// A worker's bytes read and written: with `--bs-split` its ops' own, else its ops of `moved_per_op` in
/// the direction its mixed record or the run's says.
pub(super) fn bytes_of(out: &WorkerOut, moved_per_op: u64) -> u64 {
    match out.moved {
        Some((r, w)) => r + w,
        None => out.ops * moved_per_op,
    }
}

/// An interval's bytes: its ops' own with `--bs-split`, else its ops of `moved_per_op`.
pub(super) fn interval_bytes(c: &Closed, split: bool, moved_per_op: u64) -> u64 {
    if split {
        c.bytes
    } else {
        c.ops * moved_per_op
    }
}
