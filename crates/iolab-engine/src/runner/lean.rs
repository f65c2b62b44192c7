//! The ops of a plain run of a [`Method::LEAN`] method (no per-op record, no pace), each loop in a
//! function of its own so that its state stays in registers: with a clock read per op
//! ([`dense_ops`]), and with none (a sparse clock, `--latency-sample`: [`sparse_ops`]).

use super::work::LoopParams;
use crate::error::{Error, Result};
use crate::measure::clock::Clock;
use crate::measure::hist::FastHist;
use crate::method::api::{Io, Method};
use crate::pattern::{self, OpPlan, PlannedOp};

/// The ops of a plain run of a [`Method::LEAN`] method (a clock read per op, no per-op record, no pace),
/// up to op count `until` or clock `check_at`, in a function of its own so that its state stays in
/// registers (inlined into the worker's one body it lived on the stack: psync 4 B writes 83 -> 70 user
/// instructions per op, callgrind). `st`: the last clock read, the ops done and the next op, as the loop
/// left them.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn dense_ops<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    p: &LoopParams,
    plan: &mut OpPlan,
    lat: &mut FastHist,
    (ptr, read_ptr): (*mut u8, *mut u8),
    (until, check_at): (u64, u64),
    st: &mut (u64, u64, PlannedOp),
) -> Result<()> {
    let (stamp, seed) = (p.stamp, p.seed);
    let (mut t, mut done, mut op) = *st;
    loop {
        submit_planned(m, p, op, (ptr, read_ptr))?;
        done += 1;
        let e = clk.now();
        lat.record(e.saturating_sub(t));
        t = e;
        // The next op is planned (and its block stamped) before what the loop does between ops.
        op = plan.next_op();
        if stamp && op.write {
            stamp_at(ptr, op.len, seed, op.block);
        }
        if done == until || e >= check_at {
            break;
        }
    }
    *st = (t, done, op);
    Ok(())
}

/// The ops of a plain run of a [`Method::LEAN`] method that reads no clock per op (a sparse clock), up
/// to op count `until`. `st`: the ops done and the next op, as the loop left them.
#[inline(never)]
pub(super) fn sparse_ops<M: Method>(
    m: &mut M,
    p: &LoopParams,
    plan: &mut OpPlan,
    (ptr, read_ptr): (*mut u8, *mut u8),
    until: u64,
    st: &mut (u64, PlannedOp),
) -> Result<()> {
    let (stamp, seed) = (p.stamp, p.seed);
    let (mut done, mut op) = *st;
    loop {
        submit_planned(m, p, op, (ptr, read_ptr))?;
        done += 1;
        op = plan.next_op();
        if stamp && op.write {
            stamp_at(ptr, op.len, seed, op.block);
        }
        if done >= until {
            break;
        }
    }
    *st = (done, op);
    Ok(())
}

/// A transfer of `n` bytes where `want` were asked (0: not known, a queued request of a drawn length).
pub(super) fn short_transfer(p: &LoopParams, n: usize, want: usize, offset: u64) -> Error {
    let of = if want > 0 {
        format!(" of {want}")
    } else {
        ", fewer than asked,".into()
    };
    Error::Runtime(format!(
        "short {}: {n}{of} bytes at offset {offset} of {} (is the filesystem full, or the file shorter than its region?)",
        if p.write { "write" } else { "read" },
        p.target_path.display()
    ))
}

/// Stamps block `block` into the first `bs` bytes of the write buffer at `ptr` (the op's length). The buffer is reached only through
/// this one pointer, which the system calls are handed too: no reference to it lives across them, so
/// the compiler cannot take the stamp's stores to be unseen by the call that writes the buffer out.
#[inline(always)]
pub(super) fn stamp_at(ptr: *mut u8, bs: usize, seed: u64, block: u64) {
    // SAFETY: `ptr` is the run's first buffer (AlignedBuf), at least `bs` bytes, alive for the loop; the
    // slice lives for this call only, and no request holds the buffer (the previous op completed).
    pattern::stamp(
        unsafe { std::slice::from_raw_parts_mut(ptr, bs) },
        seed,
        block,
    );
}

/// Performs planned op `op` with the write buffer `ptr` or the read buffer `read_ptr`; a short transfer
/// is an error.
#[inline(always)]
pub(super) fn submit_planned<M: Method>(
    m: &mut M,
    p: &LoopParams,
    op: PlannedOp,
    (ptr, read_ptr): (*mut u8, *mut u8),
) -> Result<()> {
    let io = Io {
        slot: 0,
        offset: op.offset,
        buf: if op.write { ptr } else { read_ptr },
        len: op.len,
        write: op.write,
    };
    let n = m.submit(&io)?;
    if n != op.len {
        return Err(short_transfer(p, n, op.len, op.offset));
    }
    Ok(())
}
