//! The timed loops: one for methods that complete every op inside `submit`, one for methods that queue
//! ops and complete them later. They are generic over the method and the clock, so each combination is
//! compiled on its own. What they call per op is inlined, except where fewer code pages or registers
//! kept across the system call cost less: the lean methods' plain loop (`dense_ops`), and, for io_uring,
//! the ring designs other than per-thread and, off x86_64, the SQE builder (see `bench/pages.sh`).
//!
//! The queued methods' loop reads the clock once per submission (queue a batch, commit): the requests of
//! a batch start at the read just before it is built, the one that ended the previous round or the one
//! before a refill. A read per request cost ~12 ns each in this VM, as much as the rest of iolab's
//! per-request work at batch 32. Under `--latency-sample 0` (`clock_every` above 1 only then, for a
//! queued method) no request is timed, and the clock is still read before each reap, for the deadline,
//! progress and stalls: one read every 1,024 completions overran a --duration of 0.3 s by 2.2 s on a TCP
//! peer that read slowly after its buffer filled fast. A traced pass times every request.

use super::flushes::{end_flushes, flushes_due, next_at, timed_flush};
use super::lean::{dense_ops, short_transfer, sparse_ops, stamp_at, submit_planned};
use super::slots::Slots;
use super::work::{AlignedBuf, LoopParams, WorkerOut};
use crate::error::{Error, Result};
use crate::measure::clock::Clock;
use crate::measure::hist::{FastHist, Pending};
use crate::method::api::{Flush, Method};
use crate::pattern::{OpPlan, PlannedOp};
use crate::spec::Spec;
use std::sync::atomic::{AtomicBool, Ordering};

/// The loop for methods that complete every op inside `submit`. Boundary timing (`p.clock_every` 1): one
/// clock read per op, after its completion; an op's latency runs from the previous op's completion (or
/// the loop start, or a flush's end) to its own, so it includes iolab's few ns of bookkeeping between
/// ops (`--method nop` measures them), and the gap between op starts is the same series (not recorded
/// twice). Sparse timing (`--clock-every N`, `--latency-sample`, or iolab's choice where a clock read is
/// a system call: `measure/clock.rs`): a read every N ops (or as `Stride` says), throughput from the
/// span, the deadline, an interval's end and progress looked at on those reads only. One loop for both,
/// so each method and clock compile one copy (a branch on a value fixed for the run).
// #[inline]: `worker` (another module, maybe another codegen unit) may inline it.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) fn loop_sync<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    p: &LoopParams,
    spec: &Spec,
    plan: &mut OpPlan,
    bufs: &mut [AlignedBuf],
    max_ops: u64,
    out: &mut WorkerOut,
    abort: &AtomicBool,
) -> Result<()> {
    let every = p.clock_every.max(1);
    let dense = every == 1;
    let ptr = bufs[0].ptr;
    // A mixed run reads into a buffer of its own; the others have one buffer.
    let read_ptr = bufs.get(usize::from(p.mixed)).map_or(ptr, |b| b.ptr);
    // Fixed for the run, read once (so the ops loop keeps them in registers, not behind `p`).
    let (stamp, seed, paced) = (p.stamp, p.seed, p.pace_ticks > 0.0);
    // The next op count at which an --fsync/--msync flush is due (u64::MAX: never), so the hot loop
    // makes one comparison for both.
    let mut next_flush = next_at(0, p.fsync_every).min(next_at(0, p.msync_every));
    out.boundary_timing = dense;
    let mut op = plan.next_op();
    if stamp && op.write {
        stamp_at(ptr, op.len, seed, op.block);
    }
    let start = clk.now();
    out.t_first = start;
    let deadline = p
        .duration_ticks
        .map_or(u64::MAX, |d| start.saturating_add(d));
    out.log.begin(start);
    // One comparison per read for the deadline, the end of an interval (--log-interval) and the next
    // publication of progress.
    let mut next_pub = start.saturating_add(p.publish_ticks);
    let mut reported = 0u64;
    let mut check_at = deadline.min(out.log.next).min(next_pub);
    let (mut t, mut e) = (start, start);
    let mut done = 0u64;
    // --latency-sample: the sampled op drawn anew in each `every` ops, out of step with any period of
    // the method's own (a stdio buffer flushed every other op was never sampled at N = 4).
    let sampled = p.sampled && !dense;
    let mut draws = Samples::new(every, p.seed);
    // Untimed (--latency-sample 0): the ops between reads adapt to the ops' cost (see `Stride`).
    let mut untimed = (p.untimed && !dense && !sampled).then(|| Stride::new(p.hz, start));
    // The op count of the next clock read: every `every`-th (dense: each), the sampled op's, or the first.
    let mut next_read = match (sampled, untimed.is_some()) {
        (true, _) => draws.next(),
        (false, true) => 1,
        (false, false) => every,
    };
    // A first op sampled is timed from the loop's start.
    let mut pre: Option<u64> = (sampled && next_read == 1).then_some(start);
    // Clock reads besides the one per op (after flushes and interval closes; dense timing only).
    let mut rare_reads = 0u64;
    while done < max_ops {
        if paced {
            // --rate-iops: the op waits for its time, and its latency runs from then (none past the deadline).
            let Some(due) = paced_op(clk, p, (start, done, deadline), out) else {
                break;
            };
            t = due;
            check_at = deadline.min(out.log.next).min(next_pub);
        }
        // The ops run in an inner loop up to the next op count with something else to do (a flush, the
        // end, the abort flag every 1024 ops, a sparse read, a paced op), or, read per op, to `check_at`.
        let until = if paced {
            done + 1
        } else {
            // Sampled: the ops stop one short of the read, for the read before the sampled op.
            let sparse_read = match (dense, sampled && pre.is_none()) {
                (true, _) => u64::MAX,
                (false, true) => next_read - 1,
                (false, false) => next_read,
            };
            next_flush
                .min(max_ops)
                .min((done | 1023) + 1)
                .min(sparse_read)
        };
        let mut st = (t, e, done, op);
        ops_until(
            m,
            clk,
            p,
            plan,
            out,
            (ptr, read_ptr),
            (until, check_at, dense, paced),
            &mut st,
        )?;
        (t, e, done, op) = st;
        let read = dense || done == next_read;
        if !dense && read {
            e = clk.now();
            next_read = match (sampled, &mut untimed) {
                (true, _) => draws.next(),
                (false, Some(u)) => next_read + u.after_read(e, every),
                (false, None) => next_read + every,
            };
            if let Some(t0) = pre.take() {
                out.lat.record(e.saturating_sub(t0));
            }
        }
        if done == next_flush {
            next_flush = flushes_due(m, clk, p, done, out)?;
            if dense {
                // The flush is in no op's latency.
                t = clk.now();
                rare_reads += 1;
            }
        }
        if read && e >= check_at {
            if e >= deadline {
                break;
            }
            if close_and_publish(p, (e, done), out, (&mut next_pub, &mut reported)) && dense {
                // The close is in no op's latency.
                t = clk.now();
                rare_reads += 1;
            }
            check_at = deadline.min(out.log.next).min(next_pub);
        }
        // Another thread's failure is noticed within 1024 ops.
        if done & 1023 == 0 && abort.load(Ordering::Relaxed) {
            break;
        }
        // The read just before the sampled op (the ops stopped one short of it).
        if sampled && pre.is_none() && done + 1 == next_read {
            pre = Some(clk.now());
        }
    }
    // An untimed loop's reads counted as made, in place of one per `every` ops.
    let rare_reads = rare_reads + untimed.map_or(0, |u| u.reads);
    end_loop(m, clk, (p, spec), out, (start, deadline, done), rare_reads)?;
    // The last ops, for the display (after the timed span).
    publish(p, out.t_last, done, &mut reported);
    Ok(())
}

/// Seconds between an untimed synchronous loop's clock reads it aims at: its deadline is overrun by
/// about this much at most, whatever an op costs.
pub(super) const UNTIMED_READ_GAP_S: f64 = 0.001;

/// An untimed loop's ops between clock reads: doubled while a read comes sooner than
/// [`UNTIMED_READ_GAP_S`] after the one before, halved while later, from 1 up to the loop's `every`
/// (a read every 1,024 ops overran --duration by 1,024 slow ops).
struct Stride {
    gap: u64,
    ops: u64,
    last: u64,
    /// Reads made.
    reads: u64,
}

impl Stride {
    fn new(hz: f64, start: u64) -> Stride {
        Stride {
            gap: (UNTIMED_READ_GAP_S * hz) as u64,
            ops: 1,
            last: start,
            reads: 0,
        }
    }

    /// The ops to the next read, after one at tick `e`.
    fn after_read(&mut self, e: u64, every: u64) -> u64 {
        self.ops = match e.saturating_sub(self.last) < self.gap {
            true => (self.ops * 2).min(every),
            false => (self.ops / 2).max(1),
        };
        self.last = e;
        self.reads += 1;
        self.ops
    }
}

/// `--latency-sample`'s draws: in each window of `every` ops, which one is timed.
struct Samples {
    every: u64,
    window: u64,
    draw: u64,
}

impl Samples {
    fn new(every: u64, seed: u64) -> Samples {
        Samples {
            every,
            window: 0,
            draw: seed | 1,
        }
    }

    /// The op count after the next window's sampled op, any of its ops alike. The read before it is
    /// taken at the end of the loop's turn that reaches it: the first op of a window is read for in the
    /// turn whose read ended the window before.
    fn next(&mut self) -> u64 {
        self.window += self.every;
        self.draw ^= self.draw << 13;
        self.draw ^= self.draw >> 7;
        self.draw ^= self.draw << 17;
        self.window - self.draw % self.every
    }
}

/// The end of [`loop_sync`]'s timed span, after `done` ops from tick `start`: a paced thread waits out
/// its last op's interval (or up to the deadline), the final flushes, the span's last tick, and the
/// clock reads made (`rare_reads` besides the one per op and the pace's). Inlined: the loop's end runs
/// on the loop's own code pages (a page first touched inside the timed span is a fault timed with it).
#[inline(always)]
fn end_loop<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    (p, spec): (&LoopParams, &Spec),
    out: &mut WorkerOut,
    (start, deadline, done): (u64, u64, u64),
    rare_reads: u64,
) -> Result<()> {
    if p.pace_ticks > 0.0 && !out.pace.rested {
        let pace = (p.pace_ticks, p.hz);
        super::paced::last_interval(clk, pace, start, done, deadline, &mut out.pace);
    }
    out.ops = done;
    end_flushes(m, clk, spec, out)?;
    out.t_last = clk.now();
    // The start, one per op (or per `every` ops), the rare ones, the pace's waits, the end, and two per
    // flush.
    let every = p.clock_every.max(1);
    // A sampled op is timed by two reads: the one before it, and the loop's read after it. An untimed
    // loop counted its own reads (in `rare_reads`).
    let per_every = 1 + u64::from(p.sampled && every > 1);
    let sparse = match p.untimed && every > 1 && !p.sampled {
        true => 0,
        false => done / every * per_every,
    };
    out.clock_reads = 2 + sparse + rare_reads + out.pace.clock_reads + 2 * out.flush_calls;
    Ok(())
}

/// The ops of [`loop_sync`] up to op count `until` (or clock `check_at`, reading it per op): a lean
/// method's plain run in a loop of its own, with a clock read per op ([`dense_ops`]) or none
/// ([`sparse_ops`]); else in the loop's body ([`ops_in_line`]). `st` as `ops_in_line`'s.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn ops_until<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    p: &LoopParams,
    plan: &mut OpPlan,
    out: &mut WorkerOut,
    bufs: (*mut u8, *mut u8),
    (until, check_at, dense, paced): (u64, u64, bool, bool),
    st: &mut (u64, u64, u64, PlannedOp),
) -> Result<()> {
    let lean = M::LEAN && !paced && out.perop.is_none();
    if lean && dense {
        let mut s = (st.0, st.2, st.3);
        dense_ops(
            m,
            clk,
            p,
            plan,
            &mut out.lat,
            bufs,
            (until, check_at),
            &mut s,
        )?;
        *st = (s.0, s.0, s.1, s.2);
    } else if lean {
        let mut s = (st.2, st.3);
        sparse_ops(m, p, plan, bufs, until, &mut s)?;
        (st.2, st.3) = s;
    } else {
        ops_in_line(m, clk, p, plan, out, bufs, (until, check_at, dense), st)?;
    }
    Ok(())
}

/// The ops of a synchronous loop up to op count `until` or, reading the clock per op (`dense`), clock
/// `check_at`, in the loop's body (the per-op records, the pace, sparse clock reads). `st`: the start of
/// the next op's latency, the last clock read, the ops done and the next op, as the loop left them.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn ops_in_line<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    p: &LoopParams,
    plan: &mut OpPlan,
    out: &mut WorkerOut,
    (ptr, read_ptr): (*mut u8, *mut u8),
    (until, check_at, dense): (u64, u64, bool),
    st: &mut (u64, u64, u64, PlannedOp),
) -> Result<()> {
    let (stamp, seed) = (p.stamp, p.seed);
    let (mut t, mut e, mut done, mut op) = *st;
    loop {
        submit_planned(m, p, op, (ptr, read_ptr))?;
        done += 1;
        if dense {
            e = clk.now();
            out.lat.record(e.saturating_sub(t));
        }
        if let Some(po) = out.perop.as_mut() {
            po.op(op.write, op.offset, dense.then_some((t, e)));
        }
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
    *st = (t, e, done, op);
    Ok(())
}

/// At clock read `e` after `done` ops (of a synchronous loop): closes the interval that ended, if one did
/// (true), and publishes progress that is due.
fn close_and_publish(
    p: &LoopParams,
    (e, done): (u64, u64),
    out: &mut WorkerOut,
    (next_pub, reported): (&mut u64, &mut u64),
) -> bool {
    let closed = e >= out.log.next;
    if closed {
        out.log.close(&mut out.lat, e, done);
    }
    if e >= *next_pub {
        *next_pub = publish(p, e, done, reported);
    }
    closed
}

/// The result every request completes with; with drawn lengths none (each request's own is in its slot,
/// and no result is i32::MIN).
fn expected_result<M: Method>(m: &M, p: &LoopParams) -> i32 {
    if p.split {
        i32::MIN
    } else {
        m.expected_result(p.bs)
    }
}

/// What an unexpected completion result means: the method's reading of the errno, or the errno itself,
/// or a short transfer.
#[cold]
#[inline(never)]
fn reap_failure<M: Method>(m: &M, p: &LoopParams, res: i32, offset: u64) -> Error {
    if res < 0 {
        match m.describe_failure(-res) {
            Some(msg) => Error::Runtime(msg),
            None => Error::sys_on(
                iolab_sys::SysErr::new(
                    if p.write {
                        "io_uring write"
                    } else {
                        "io_uring read"
                    },
                    -res,
                ),
                p.target_path.display().to_string(),
            ),
        }
    } else {
        short_transfer(p, res as usize, if p.split { 0 } else { p.bs }, offset)
    }
}

/// The gaps between request starts. Requests of one round share their start: the gap to the previous
/// round is recorded once, the zeros inside the round as a run after it.
struct Gaps {
    prev: u64,
    zeros: u64,
    held: Pending,
    /// The requests are timed (none recorded otherwise).
    timed: bool,
}

impl Gaps {
    fn new(start: u64, timed: bool) -> Gaps {
        Gaps {
            prev: start,
            zeros: 0,
            held: Pending::default(),
            timed,
        }
    }

    /// A round of `n` > 0 requests started at `s`; `first`: the thread's first round.
    #[inline(always)]
    fn round(&mut self, gap: &mut FastHist, s: u64, n: u64, first: bool) {
        if !self.timed {
            return;
        }
        if !first {
            if s == self.prev {
                self.zeros += 1;
            } else {
                self.held.add(gap, s.saturating_sub(self.prev), 1);
            }
        }
        self.zeros += n - 1;
        self.prev = s;
    }

    #[inline(always)]
    fn record_zeros(&mut self, gap: &mut FastHist) {
        if self.zeros > 0 {
            self.held.add(gap, 0, self.zeros);
            self.zeros = 0;
        }
    }
}

/// Requests handed to the method and not yet committed (`queued`), and committed but not yet reaped
/// (`inflight`).
#[derive(Default)]
struct Flight {
    inflight: u32,
    queued: u32,
}

impl Flight {
    /// Commits the queued requests when the batch is full, the queue is full or no more will come, or
    /// waits for completions when only those remain (`more`: more requests will be queued). Returns the
    /// commit's result and whether it waited for a completion.
    #[inline(always)]
    fn commit<M: Method>(
        &mut self,
        m: &mut M,
        qd: u32,
        batch: u32,
        more: bool,
    ) -> Option<(Result<()>, bool)> {
        let full = self.inflight + self.queued == qd;
        if self.queued > 0 && (self.queued == batch || full || !more) {
            let wait = full || !more;
            let r = m.commit(u32::from(wait));
            // Requests the kernel took are in flight (their buffers must outlive them); those it did not
            // take are abandoned with the ring.
            self.inflight += self.queued - m.unsubmitted().min(self.queued);
            self.queued = 0;
            Some((r, wait))
        } else if self.queued == 0 && self.inflight > 0 && (full || !more) {
            Some((m.commit(1), true))
        } else {
            None
        }
    }
}

/// Adds the ops finished since the last time (`reported`) to the progress display's count, at tick `e`;
/// returns when to do it next.
#[cold]
#[inline(never)]
pub(super) fn publish(p: &LoopParams, e: u64, done: u64, reported: &mut u64) -> u64 {
    if let Some(b) = p.progress {
        b.publish(done - *reported, e);
    }
    *reported = done;
    e.saturating_add(p.publish_ticks)
}

/// Closes the time series' interval at `e`; the close is in no request's latency and no gap: their starts
/// move by its time. Returns the clock read after it, the next round's start.
fn close_interval<C: Clock>(
    clk: &C,
    e: u64,
    done: u64,
    out: &mut WorkerOut,
    slots: &mut Slots,
    gaps: &mut Gaps,
    held_lat: &mut Pending,
) -> u64 {
    held_lat.flush(&mut out.lat);
    out.log.close(&mut out.lat, e, done);
    let after = clk.now();
    slots.shift(after - e);
    gaps.prev += after - e;
    after
}

/// Waits until op `done` of a paced loop that started at `start` is due and returns that tick (None: it
/// would end past the deadline). The intervals that end by then end on their own boundaries with the ops
/// done (none ends between two paced ops), so that the op is the next interval's, not the one whose end
/// it crosses (2 ops a second over 2 s: 2 and 2 a second, not 3 and 1).
fn paced_op<C: Clock>(
    clk: &C,
    p: &LoopParams,
    (start, done, deadline): (u64, u64, u64),
    out: &mut WorkerOut,
) -> Option<u64> {
    let pace = (p.pace_ticks, p.hz);
    let due = super::paced::until(clk, pace, start, done, deadline, &mut out.pace)?;
    while due >= out.log.next {
        let at = out.log.next;
        out.log.close(&mut out.lat, at, done);
    }
    Some(due)
}

/// Seconds between an asynchronous loop's looks at the run's abort flag (another thread failed, or
/// the run was interrupted).
const ABORT_CHECK_S: f64 = 0.001;

/// Seconds without a completion, requests in flight, after which the kernel is taken to have lost them.
const STALL_S: f64 = 30.0;

/// Why a run whose requests stopped completing ended.
fn stalled(p: &LoopParams, inflight: u32, done: u64) -> Error {
    Error::Runtime(format!(
        "no request completed for {STALL_S:.0} s while {inflight} were in flight on {} ({done} had \
         completed): the kernel did not complete them (with --iopoll: the device's poll queue lost a \
         completion, as QEMU's emulated NVMe sometimes does under TCG)",
        p.target_path.display()
    ))
}

/// The loop for methods that queue ops and complete them later (io_uring, aio): see the module's
/// documentation for its clock reads.
// #[inline]: `worker` (another module, maybe another codegen unit) may inline it.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) fn loop_async<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    p: &LoopParams,
    spec: &Spec,
    plan: &mut OpPlan,
    bufs: &mut [AlignedBuf],
    max_ops: u64,
    out: &mut WorkerOut,
    abort: &AtomicBool,
) -> Result<()> {
    let (qd, batch) = (p.qd, p.batch);
    let mut slots = Slots::new(qd, bufs);
    // A run whose requests stop completing ends with the reason after STALL_S, not spinning for ever.
    let stall_ticks = (STALL_S * p.hz) as u64;
    // Consecutive failed io_uring_enter calls while draining after a failure.
    let mut failed_commits = 0u32;
    let mut fl = Flight::default();
    let (mut issued, mut done, mut since_sync) = (0u64, 0u64, 0u64);
    let sync_every = p.fsync_every;
    let mut stop = false;
    let mut failure: Option<Error> = None;
    let start = clk.now();
    out.t_first = start;
    let deadline = p
        .duration_ticks
        .map_or(u64::MAX, |d| start.saturating_add(d));
    let timed = p.clock_every <= 1 || out.perop.is_some();
    let mut gaps = Gaps::new(start, timed);
    // The latencies of the last rounds, on their way to out.lat (flushed before anything reads it).
    let mut held_lat = Pending::default();
    out.log.begin(start);
    // One comparison per round for the deadline, the end of an interval (--log-interval) and the next
    // publication of progress.
    let mut next_pub = start.saturating_add(p.publish_ticks);
    // The abort flag is read every ABORT_CHECK_S, not every round (it is in the caller's frame).
    let abort_ticks = ((ABORT_CHECK_S * p.hz) as u64).max(1);
    let mut next_abort = start.saturating_add(abort_ticks);
    let mut check_at = deadline.min(out.log.next).min(next_pub).min(next_abort);
    let mut round_start = start;
    let mut last_done_at = start;
    let mut reported = 0u64;
    // Clock reads: the start, then one per round and the rare ones (interval closes, after flushes).
    let mut reads = 1u64;
    let expected = expected_result(m, p);
    loop {
        let sync_due = sync_every != 0 && since_sync >= sync_every;
        // Queue up to a batch, never more than qd in flight.
        let round_first = issued;
        let s = round_start;
        let n = if stop || sync_due {
            0
        } else {
            let room = (batch - fl.queued).min(qd - fl.inflight - fl.queued);
            (max_ops - issued).min(u64::from(room)) as usize
        };
        let (took, r) = slots.queue(m, n, p, plan, bufs, (s, timed));
        if let Err(e) = r {
            failure = Some(e);
            stop = true;
        }
        fl.queued += took as u32;
        issued += took as u64;
        let n_round = issued - round_first;
        if n_round > 0 {
            since_sync += n_round;
            gaps.round(&mut out.gap, s, n_round, round_first == 0);
        }
        let sync_due = sync_every != 0 && since_sync >= sync_every;
        let more = !stop && !sync_due && issued < max_ops;
        let committed = fl.commit(m, qd, batch, more);
        let submitted_only = matches!(committed, Some((Ok(()), false)));
        if let Some((r, _)) = committed {
            stop |= failed_commit(r, &mut failure, &mut failed_commits, out)?;
        }
        gaps.record_zeros(&mut out.gap);
        if submitted_only && more && fl.inflight < qd {
            // Free slots are filled before anything is reaped, a batch per submission (as fio does), so
            // that --qd requests stay in flight; each batch starts at its own clock read.
            if timed {
                (round_start, reads) = (clk.now(), reads + 1);
            }
            continue;
        }
        round_start = clk.now();
        reads += 1;
        let e = round_start;
        // A batch while its slots will be filled again; all of them when the run drains.
        let max = if more { batch } else { qd };
        let (reaped, bad) = slots.reap(m, out, &mut held_lat, (e, max, timed), expected);
        fl.inflight -= reaped;
        done += u64::from(reaped);
        if reaped > 0 {
            last_done_at = e;
        } else if fl.inflight > 0 && e.saturating_sub(last_done_at) > stall_ticks {
            // The kernel still holds requests that point into the buffers: keep them alive.
            out.leak_buffers = true;
            return Err(stalled(p, fl.inflight, done));
        }
        if let (Some((res, off)), None) = (bad, &failure) {
            failure = Some(reap_failure(m, p, res, off));
        }
        if e >= check_at {
            if e >= deadline {
                stop = true;
            } else {
                if e >= out.log.next {
                    round_start =
                        close_interval(clk, e, done, out, &mut slots, &mut gaps, &mut held_lat);
                    reads += 1;
                }
                if e >= next_pub {
                    next_pub = publish(p, e, done, &mut reported);
                }
                if e >= next_abort {
                    stop |= abort.load(Ordering::Relaxed);
                    next_abort = e.saturating_add(abort_ticks);
                }
                check_at = deadline.min(out.log.next).min(next_pub).min(next_abort);
            }
        }
        if failure.is_some() {
            stop = true;
        }
        if fl.inflight == 0 && fl.queued == 0 {
            if let Some(f) = failure.take() {
                return Err(f);
            }
            if sync_due {
                timed_flush(m, clk, Flush::Fsync, out)?;
                // Flushes are not in per-request latency.
                round_start = clk.now();
                reads += 1;
                since_sync = 0;
                continue;
            }
            if stop || issued >= max_ops {
                break;
            }
        }
    }
    held_lat.flush(&mut out.lat);
    gaps.held.flush(&mut out.gap);
    end_async(m, clk, (p, spec), out, (done, reads, reported))
}

/// The end of [`loop_async`]'s timed span after `done` ops and `reads` clock reads (`reported` of them
/// shown so far): the flushes due at the end, the span's last tick, the display's last ops.
fn end_async<M: Method, C: Clock>(
    m: &mut M,
    clk: &C,
    (p, spec): (&LoopParams, &Spec),
    out: &mut WorkerOut,
    (done, reads, mut reported): (u64, u64, u64),
) -> Result<()> {
    out.ops = done;
    end_flushes(m, clk, spec, out)?;
    out.t_last = clk.now();
    // The end, and two per flush.
    out.clock_reads = reads + 1 + 2 * out.flush_calls;
    // The last ops, for the display (after the timed span).
    publish(p, out.t_last, done, &mut reported);
    Ok(())
}

/// A commit's result `r`: a failure is the run's (the first one kept) and stops it (true); after
/// MAX_FAILED_COMMITS failures in a row the kernel cannot be waited for, and the run ends with the first,
/// its buffers kept alive for the rest of the process. A commit that worked resets the count.
fn failed_commit(
    r: Result<()>,
    failure: &mut Option<Error>,
    failed_commits: &mut u32,
    out: &mut WorkerOut,
) -> Result<bool> {
    const MAX_FAILED_COMMITS: u32 = 1000;
    let Err(e) = r else {
        *failed_commits = 0;
        return Ok(false);
    };
    failure.get_or_insert(e);
    *failed_commits += 1;
    if *failed_commits >= MAX_FAILED_COMMITS {
        out.leak_buffers = true;
        return Err(failure.take().expect("set above"));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    /// Each window of `every` ops has one sampled op, any of its ops alike: a period of 2 or 4 in the
    /// method's own costs is sampled in every phase.
    #[test]
    fn each_window_samples_one_op_drawn_evenly() {
        let mut d = super::Samples::new(4, 9);
        let mut phase = [0u32; 4];
        for w in 0..4000u64 {
            let at = d.next();
            assert!((w * 4 + 1..=w * 4 + 4).contains(&at), "window {w}: {at}");
            phase[(at % 4) as usize] += 1;
        }
        assert!(phase.iter().all(|&n| (850..1150).contains(&n)), "{phase:?}");
    }
}
