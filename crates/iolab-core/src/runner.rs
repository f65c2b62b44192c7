//! The runner: owns the workload loop, timing, accounting, buffers and verification.
//!
//! Per run: set up the target; start one worker per thread, each preparing its method (open, map, ring)
//! and its buffers; when all are ready, the main thread snapshots the process (getrusage, helper tasks,
//! /proc/self/io) and releases them; each worker times every op with two clock reads (before submit,
//! after completion) into two HdrHistograms (latency, gap between op starts); when all are done the main
//! thread snapshots again while the workers (and so their rings and helper threads) are still alive; then
//! the workers clean up, and `--verify` reads the target back.
//!
//! The loops are generic over the method and the clock, so each combination is compiled on its own and an
//! op costs the method's work plus two clock reads, two histogram records and a pattern stamp.

use crate::error::{Error, Result};
use crate::measure::clock::{Clock, ClockInfo, ClockKind, MockClock, MonoClock, TscClock};
use crate::measure::counters::{CountMode, CounterSet, CounterSnap, CounterValue, Family};
use crate::measure::cpu::{
    helper_deltas, read_tasks, run_delay_delta_s, steal_per_cpu, ProcIo, Rusage, RusageDelta,
};
use crate::measure::hist::{new_hist, summarize, FastHist};
use crate::method::{self, Flush, Io, Method, Run, ThreadCtx};
use crate::pattern::{self, OpPlan};
use crate::result::*;
use crate::spec::{OpKind, Spec, SyncEvery};
use crate::target::{self, PreparedTarget};
use std::alloc::Layout;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::Barrier;

/// A zeroed, aligned I/O buffer (O_DIRECT needs alignment; a page is always used).
struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is plain heap memory owned by this value.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    fn new(len: usize, align: usize) -> Result<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), align).map_err(|_| {
            Error::Runtime(format!(
                "cannot lay out a {len}-byte buffer aligned to {align}"
            ))
        })?;
        // SAFETY: the layout has a non-zero size (len.max(1)).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(Error::Runtime(format!(
                "out of memory for a {len}-byte I/O buffer"
            )));
        }
        Ok(AlignedBuf { ptr, layout })
    }

    fn slice_mut(&mut self, len: usize) -> &mut [u8] {
        debug_assert!(len <= self.layout.size());
        // SAFETY: `ptr` points to `layout.size() >= len` initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `alloc_zeroed` with this exact layout and is freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) };
    }
}

/// What one worker measured.
struct WorkerOut {
    lat: FastHist,
    gap: FastHist,
    flush_calls: u64,
    flush_ticks: u64,
    flush_max_ticks: u64,
    ops: u64,
    t_first: u64,
    t_last: u64,
    syscalls: Option<u64>,
    submissions: Option<(u64, u64)>,
    rusage: RusageDelta,
    error: Option<Error>,
    /// One clock read per op (synchronous methods): `gap` is not recorded, it equals `lat`.
    boundary_timing: bool,
    /// The CPU the worker ran on just before and just after its loop.
    cpus: (i32, i32),
    uring: Option<crate::result::UringStats>,
    aio: Option<crate::result::AioStats>,
    nowait: Option<crate::result::NowaitStats>,
    /// The kernel may still hold requests that point into this worker's buffers (it could not be drained
    /// after a failure): the buffers are leaked instead of freed.
    leak_buffers: bool,
}

impl WorkerOut {
    fn new() -> WorkerOut {
        WorkerOut {
            lat: FastHist::new(),
            gap: FastHist::new(),
            flush_calls: 0,
            flush_ticks: 0,
            flush_max_ticks: 0,
            ops: 0,
            t_first: 0,
            t_last: 0,
            syscalls: None,
            submissions: None,
            rusage: RusageDelta::default(),
            error: None,
            boundary_timing: false,
            cpus: (-1, -1),
            uring: None,
            aio: None,
            nowait: None,
            leak_buffers: false,
        }
    }
}

/// Ops finished in the timed pass, published for a progress display (null: nobody watches). Workers add
/// to it every 1024 ops (synchronous loop) or once 1024 more finished (asynchronous loop): no cost per op.
static PROGRESS: AtomicPtr<AtomicU64> = AtomicPtr::new(std::ptr::null_mut());
/// Set while the timed pass runs (the counting pass is not shown).
static PROGRESS_ON: AtomicBool = AtomicBool::new(false);

/// Publishes finished ops of every later timed pass to `counter` (for `iolab run`'s progress bar).
pub fn set_progress(counter: &'static AtomicU64) {
    PROGRESS.store(
        counter as *const AtomicU64 as *mut AtomicU64,
        Ordering::SeqCst,
    );
}

fn progress_counter() -> Option<&'static AtomicU64> {
    if !PROGRESS_ON.load(Ordering::SeqCst) {
        return None;
    }
    let p = PROGRESS.load(Ordering::SeqCst);
    // SAFETY: only `set_progress` stores here, from a `&'static AtomicU64`.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Loop parameters shared by all workers.
struct LoopParams {
    /// The method completes each op inside `submit` (its `INFO.exec`).
    synchronous: bool,
    /// Where finished ops are published (the timed pass of a watched run only).
    progress: Option<&'static AtomicU64>,
    bs: usize,
    write: bool,
    /// Stamp the pattern into each block: writes to a target that keeps data (a sink keeps nothing to
    /// verify, and the seed programs wrote a constant buffer there too).
    stamp: bool,
    /// The target keeps data at positions, so the offset plan matters (asynchronous loop; without it
    /// every op is at offset 0, which is what positionless targets are given anyway).
    planned: bool,
    seed: u64,
    duration_ticks: Option<u64>,
    fsync_every: u64,
    msync_every: u64,
    qd: u32,
    batch: u32,
    target_path: std::path::PathBuf,
}

/// The two hand-overs between a worker and whoever samples the process around the timed span.
trait Phases: Sync {
    /// The worker is prepared (or failed to): sample "before", then let it run.
    fn start(&self);
    /// The worker finished its loop: sample "after" while its method (ring, helpers) still exists.
    fn finish(&self);
    fn abort(&self) -> &AtomicBool;
}

/// Several workers on their own threads: the main thread samples between barriers.
struct Barriers {
    ready: Barrier,
    go: Barrier,
    done: Barrier,
    sampled: Barrier,
    abort: AtomicBool,
}

impl Phases for Barriers {
    fn start(&self) {
        self.ready.wait();
        self.go.wait();
    }
    fn finish(&self) {
        self.done.wait();
        self.sampled.wait();
    }
    fn abort(&self) -> &AtomicBool {
        &self.abort
    }
}

/// One worker on the calling thread (a one-thread run, like the seed programs): it samples itself.
struct Inline<'a> {
    before: std::sync::Mutex<Option<Snap>>,
    after: std::sync::Mutex<Option<Snap>>,
    abort: AtomicBool,
    counters: &'a [&'a CounterSet],
}

impl Phases for Inline<'_> {
    fn start(&self) {
        *self.before.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Snap::take_before(self.counters));
    }
    fn finish(&self) {
        *self.after.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Snap::take_after(self.counters));
    }
    fn abort(&self) -> &AtomicBool {
        &self.abort
    }
}

#[inline(always)]
fn timed_flush<M: Method, C: Clock>(
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

fn short_transfer(p: &LoopParams, n: usize, offset: u64) -> Error {
    Error::Runtime(format!(
        "short {}: {n} of {} bytes at offset {offset} of {} (is the filesystem full, or the file shorter than its region?)",
        if p.write { "write" } else { "read" },
        p.bs,
        p.target_path.display()
    ))
}

fn end_flushes<M: Method, C: Clock>(
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

/// The loop for methods that complete every op inside `submit`.
///
/// Boundary timing: one clock read per op, after its completion. An op's latency runs from the previous
/// op's completion (or the loop start, or the end of a flush) to its own completion, so it includes
/// iolab's bookkeeping between ops (record one value, plan the next offset, stamp the next block: a few ns,
/// which `--method nop` measures on its own). Ops run back to back, so the gap between op starts is the
/// same series and is not recorded twice. A second read per op would cost one more RDTSC (~12 ns in a VM)
/// on every op.
#[allow(clippy::too_many_arguments)]
fn loop_sync<M: Method, C: Clock>(
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
    let bs = p.bs;
    let ptr = buf.ptr;
    let data = buf.slice_mut(bs);
    // The next op count at which an --fsync/--msync flush is due (u64::MAX: never), so the hot loop
    // makes one comparison for both.
    let next_at = |done: u64, every: u64| {
        done.checked_div(every)
            .map_or(u64::MAX, |q| (q + 1) * every)
    };
    let mut next_flush = next_at(0, p.fsync_every).min(next_at(0, p.msync_every));
    out.boundary_timing = true;
    let mut op = plan.next_op();
    if p.stamp {
        pattern::stamp(data, p.seed, op.block);
    }
    let start = clk.now();
    out.t_first = start;
    let deadline = p.duration_ticks.map(|d| start + d).unwrap_or(u64::MAX);
    let mut t = start;
    let mut done = 0u64;
    while done < max_ops {
        let io = Io {
            slot: 0,
            offset: op.offset,
            buf: ptr,
            len: bs,
        };
        let n = m.submit(&io)?;
        let e = clk.now();
        if n != bs {
            return Err(short_transfer(p, n, op.offset));
        }
        out.lat.record(e.saturating_sub(t));
        t = e;
        done += 1;
        if done == next_flush {
            if p.fsync_every != 0 && done.is_multiple_of(p.fsync_every) {
                timed_flush(m, clk, Flush::Fsync, out)?;
            }
            if p.msync_every != 0 && done.is_multiple_of(p.msync_every) {
                timed_flush(m, clk, Flush::Msync, out)?;
            }
            next_flush = next_at(done, p.fsync_every).min(next_at(done, p.msync_every));
            t = clk.now();
        }
        if e >= deadline {
            break;
        }
        if done & 1023 == 0 {
            if let Some(pr) = p.progress {
                pr.fetch_add(1024, Ordering::Relaxed);
            }
            // Another thread's failure is noticed within 1024 ops.
            if abort.load(Ordering::Relaxed) {
                break;
            }
        }
        op = plan.next_op();
        if p.stamp {
            pattern::stamp(data, p.seed, op.block);
        }
    }
    out.ops = done;
    end_flushes(m, clk, spec, out)?;
    out.t_last = clk.now();
    Ok(())
}

/// The first unexpected completion result of a reap (kept out of line: it is the rare case).
#[cold]
#[inline(never)]
fn note_bad(bad: &mut Option<(i32, u64)>, res: i32, offset: u64) {
    bad.get_or_insert((res, offset));
}

/// The loop for methods that queue ops and complete them later (io_uring, aio).
#[allow(clippy::too_many_arguments)]
fn loop_async<M: Method, C: Clock>(
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
    let bs = p.bs;
    let qd = p.qd;
    let batch = p.batch;
    // Free slots as a fixed stack (no growth checks on the hot path), and per slot the request's
    // (start tick, file offset) side by side.
    let mut free: Box<[u32]> = (0..qd).rev().collect();
    let mut nfree = qd as usize;
    let mut slots: Box<[(u64, u64)]> = vec![(0u64, 0u64); qd as usize].into_boxed_slice();
    let mut round: Box<[Io]> = vec![
        Io {
            slot: 0,
            offset: 0,
            buf: std::ptr::null_mut(),
            len: 0,
        };
        qd as usize
    ]
    .into_boxed_slice();
    // Consecutive failed io_uring_enter calls while draining after a failure.
    let mut failed_commits = 0u32;
    const MAX_FAILED_COMMITS: u32 = 1000;
    let (mut inflight, mut queued) = (0u32, 0u32);
    let (mut issued, mut done) = (0u64, 0u64);
    let mut since_sync = 0u64;
    let sync_every = p.fsync_every;
    let mut stop = false;
    let mut failure: Option<Error> = None;
    let start = clk.now();
    out.t_first = start;
    let deadline = p.duration_ticks.map(|d| start + d).unwrap_or(u64::MAX);
    let mut prev = start;
    // One clock read per round (queue a batch, commit, reap): the requests queued in a round start at the
    // read that ended the previous round. A read per request cost ~12 ns each in this VM, as much as the
    // rest of iolab's per-request work at batch 32.
    let mut round_start = start;
    let mut zero_gaps = 0u64;
    let mut reported = 0u64;
    let expected = m.expected_result(bs);
    loop {
        let sync_due = sync_every != 0 && since_sync >= sync_every;
        // Queue up to a batch, never more than qd in flight. Requests of one round share their start
        // (round_start): the gap to the previous round is recorded once, the zeros inside the round as a
        // run after it.
        let round_first = issued;
        let s = round_start;
        let n = if stop || sync_due {
            0
        } else {
            (max_ops - issued).min(u64::from((batch - queued).min(qd - inflight - queued))) as usize
        };
        // The round takes the top `n` slots of the free stack, in place. Its requests are laid out
        // first, then handed to the method in one call (two short loops keep the hot state in registers;
        // one interleaved loop spilled it).
        nfree -= n;
        if p.planned {
            for (io, &slot) in round[..n].iter_mut().zip(&free[nfree..nfree + n]) {
                let op = plan.next_op();
                let b = &mut bufs[slot as usize];
                if p.stamp {
                    pattern::stamp(b.slice_mut(bs), p.seed, op.block);
                }
                slots[slot as usize] = (s, op.offset);
                *io = Io {
                    slot,
                    offset: op.offset,
                    buf: b.ptr,
                    len: bs,
                };
            }
        } else {
            // A target without positions (a sink, a stream) and nothing to stamp: offset 0, no plan.
            for (io, &slot) in round[..n].iter_mut().zip(&free[nfree..nfree + n]) {
                slots[slot as usize] = (s, 0);
                *io = Io {
                    slot,
                    offset: 0,
                    buf: bufs[slot as usize].ptr,
                    len: bs,
                };
            }
        }
        if n > 0 {
            let (took, r) = m.submit_round(&round[..n]);
            if let Err(e) = r {
                // The requests not taken keep their places at the top of the free stack.
                nfree += n - took;
                failure = Some(e);
                stop = true;
            }
            queued += took as u32;
            issued += took as u64;
        }
        let n_round = issued - round_first;
        if n_round > 0 {
            since_sync += n_round;
            if round_first > 0 {
                if s == prev {
                    zero_gaps += 1;
                } else {
                    out.gap.record(s.saturating_sub(prev));
                }
            }
            zero_gaps += n_round - 1;
            prev = s;
        }
        let sync_due = sync_every != 0 && since_sync >= sync_every;
        let more = !stop && !sync_due && issued < max_ops;
        let full = inflight + queued == qd;
        let committed = if queued > 0 && (queued == batch || full || !more) {
            let wait = u32::from(full || !more);
            let r = m.commit(wait);
            // Requests the kernel took are in flight (their buffers must outlive them); those it did not
            // take are abandoned with the ring.
            inflight += queued - m.unsubmitted().min(queued);
            queued = 0;
            Some(r)
        } else if queued == 0 && inflight > 0 && (full || !more) {
            Some(m.commit(1))
        } else {
            None
        };
        if let Some(Err(e)) = committed {
            failure.get_or_insert(e);
            stop = true;
            failed_commits += 1;
            if failed_commits >= MAX_FAILED_COMMITS {
                // The kernel cannot be waited for: keep the buffers alive for the rest of the process.
                out.leak_buffers = true;
                return Err(failure.take().expect("set above"));
            }
        } else if committed.is_some() {
            failed_commits = 0;
        }
        if zero_gaps > 0 {
            out.gap.record_n(0, zero_gaps);
            zero_gaps = 0;
        }
        let e = clk.now();
        round_start = e;
        let mut bad: Option<(i32, u64)> = None;
        // Completions reaped together mostly share one latency (same round, same reap): equal values are
        // counted in a register and recorded as a run.
        let (mut run_v, mut run_n) = (0u64, 0u64);
        let reaped = m.reap(|slot, res| {
            let (start, offset) = slots[slot as usize];
            let v = e.saturating_sub(start);
            if v == run_v {
                run_n += 1;
            } else {
                if run_n > 0 {
                    out.lat.record_n(run_v, run_n);
                }
                (run_v, run_n) = (v, 1);
            }
            if res != expected {
                note_bad(&mut bad, res, offset);
            }
            free[nfree] = slot;
            nfree += 1;
        });
        inflight -= reaped;
        done += u64::from(reaped);
        if run_n > 0 {
            out.lat.record_n(run_v, run_n);
        }
        if let (Some((res, off)), None) = (bad, &failure) {
            failure = Some(if res < 0 {
                match m.describe_failure(-res) {
                    Some(msg) => Error::Runtime(msg),
                    None => Error::sys_on(
                        crate::sys::SysErr::new(
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
                short_transfer(p, res as usize, off)
            });
        }
        if failure.is_some() || e >= deadline || abort.load(Ordering::Relaxed) {
            stop = true;
        }
        if done >= reported + 1024 {
            if let Some(pr) = p.progress {
                pr.fetch_add(done - reported, Ordering::Relaxed);
            }
            reported = done;
        }
        if inflight == 0 && queued == 0 {
            if let Some(f) = failure.take() {
                return Err(f);
            }
            if sync_due {
                timed_flush(m, clk, Flush::Fsync, out)?;
                // Flushes are not in per-request latency.
                round_start = clk.now();
                since_sync = 0;
                continue;
            }
            if stop || issued >= max_ops {
                break;
            }
        }
    }
    out.ops = done;
    end_flushes(m, clk, spec, out)?;
    out.t_last = clk.now();
    Ok(())
}

fn worker<M: Method, C: Clock>(
    ctx: ThreadCtx,
    clk: &C,
    p: &LoopParams,
    sh: &dyn Phases,
    max_ops: u64,
) -> WorkerOut {
    let mut out = WorkerOut::new();
    let slots = if p.synchronous {
        1
    } else {
        ctx.spec.qd as usize
    };
    let prepared = M::prepare(&ctx).and_then(|mut m| {
        let mut bufs = Vec::with_capacity(slots);
        for _ in 0..slots {
            let mut b = AlignedBuf::new(p.bs, ctx.target.buf_align)?;
            pattern::fill_body(b.slice_mut(p.bs), p.seed);
            bufs.push(b);
        }
        let ptrs: Vec<(*mut u8, usize)> = bufs.iter().map(|b| (b.ptr, p.bs)).collect();
        m.register_buffers(&ptrs)?;
        Ok((m, bufs))
    });
    let mut prepared = match prepared {
        Ok(x) => Some(x),
        Err(e) => {
            out.error = Some(e);
            sh.abort().store(true, Ordering::Relaxed);
            None
        }
    };
    sh.start();
    if let Some((m, bufs)) = prepared.as_mut() {
        if !sh.abort().load(Ordering::Relaxed) {
            let mut plan = OpPlan::new(
                ctx.spec.pattern,
                ctx.spec.offset,
                ctx.spec.bs,
                ctx.target.region_first_block(ctx.thread),
                ctx.target.region_blocks,
                ctx.spec.seed,
                ctx.thread,
            );
            let ru0 = Rusage::thread();
            let cpu0 = crate::sys::current_cpu();
            let r = if p.synchronous {
                loop_sync(
                    m,
                    clk,
                    p,
                    ctx.spec,
                    &mut plan,
                    &mut bufs[0],
                    max_ops,
                    &mut out,
                    sh.abort(),
                )
            } else {
                loop_async(
                    m,
                    clk,
                    p,
                    ctx.spec,
                    &mut plan,
                    bufs,
                    max_ops,
                    &mut out,
                    sh.abort(),
                )
            };
            let ru1 = Rusage::thread();
            out.cpus = (cpu0, crate::sys::current_cpu());
            out.rusage = RusageDelta::between(&ru0, &ru1);
            out.syscalls = m.syscalls(out.ops);
            out.submissions = m.submissions();
            let st = m.stats();
            out.uring = st.uring;
            out.aio = st.aio;
            out.nowait = st.nowait;
            if let Err(e) = r {
                out.error = Some(e);
                sh.abort().store(true, Ordering::Relaxed);
            }
        }
    }
    sh.finish();
    // The method (fd, mapping, ring and with it the ring's helper threads) goes away here, after sampling.
    if let Some((m, bufs)) = prepared {
        drop(m);
        if out.leak_buffers {
            std::mem::forget(bufs);
        }
    }
    out
}

/// Process-wide snapshots around the timed span.
struct Snap {
    ru: Rusage,
    tasks: Vec<crate::measure::cpu::TaskTimes>,
    io: Option<(ProcIo, u64)>,
    steal: Vec<u64>,
    counters: Vec<CounterSnap>,
}

/// One prctl stops (or restarts) every counter this thread created, in all the sets.
fn pause_counters(c: &[&CounterSet]) {
    if let Some(s) = c.iter().find(|s| !s.is_empty()) {
        s.pause();
    }
}

fn resume_counters(c: &[&CounterSet]) {
    if let Some(s) = c.iter().find(|s| !s.is_empty()) {
        s.resume();
    }
}

thread_local! {
    /// Software and hardware counters, opened once per thread that runs workloads and kept open: releasing
    /// a software event's last user patches kernel text (a static key), which took 0.1-0.4 s per counter on
    /// this VM, so a survey of 28 runs spent 20 s in close(2). Open, they cost nothing measurable. pid 0
    /// attaches them to this thread and the threads it creates later (workers, io_uring helpers).
    static SOFTWARE: CounterSet = {
        let mut s = CounterSet::default();
        s.add_software_and_hardware();
        s
    };
}

impl Snap {
    /// /proc/self/io is read last before the span and first after it, so only the one read that made the
    /// "before" snapshot falls inside (and is subtracted by `ProcIo::delta`). The perf counters are stopped
    /// while sampling and restarted last, so the span they count starts after every read made here.
    fn take_before(c: &[&CounterSet]) -> Snap {
        pause_counters(c);
        let counters = c.iter().map(|s| s.snapshot()).collect();
        let steal = steal_per_cpu();
        let tasks = read_tasks();
        let ru = Rusage::process();
        let io = ProcIo::read_self();
        resume_counters(c);
        Snap {
            ru,
            tasks,
            io,
            steal,
            counters,
        }
    }
    fn take_after(c: &[&CounterSet]) -> Snap {
        pause_counters(c);
        let io = ProcIo::read_self();
        let counters = c.iter().map(|s| s.snapshot()).collect();
        let ru = Rusage::process();
        let tasks = read_tasks();
        let steal = steal_per_cpu();
        Snap {
            ru,
            tasks,
            io,
            steal,
            counters,
        }
    }
}

/// What one pass's threads measured, before it becomes a result.
pub struct Collected {
    outs: Vec<WorkerOut>,
    before: Snap,
    after: Snap,
}

fn run_threads<M: Method, C: Clock>(
    spec: &Spec,
    target: &PreparedTarget,
    clk: &C,
    info: &ClockInfo,
    counters: &[&CounterSet],
) -> Result<Collected> {
    let n = spec.threads as usize;
    let every = |s: SyncEvery| if let SyncEvery::Every(k) = s { k } else { 0 };
    let p = LoopParams {
        synchronous: spec.method.info().synchronous(),
        progress: progress_counter(),
        bs: spec.bs as usize,
        write: spec.op == OpKind::Write,
        stamp: spec.op == OpKind::Write
            && target.kind.keeps_data()
            && !spec.method.is_kernel_copy(),
        planned: target.kind.keeps_data(),
        seed: spec.seed,
        duration_ticks: spec.duration_s.map(|d| (d * info.hz) as u64),
        fsync_every: every(spec.fsync),
        msync_every: every(spec.msync),
        qd: spec.qd,
        batch: spec.batch,
        target_path: target.path.clone(),
    };
    let region_len = target.region_blocks * spec.bs;
    let shared = method::SharedSlot::default();
    let ctx_for = |t: u32| ThreadCtx {
        spec,
        target,
        thread: t,
        region_offset: spec.offset + target.region_first_block(t) * spec.bs,
        region_len,
        shared: &shared,
    };
    if n == 1 {
        let ph = Inline {
            before: std::sync::Mutex::new(None),
            after: std::sync::Mutex::new(None),
            abort: AtomicBool::new(false),
            counters,
        };
        let out = worker::<M, C>(
            ctx_for(0),
            clk,
            &p,
            &ph,
            spec.ops_for_thread(0).unwrap_or(u64::MAX),
        );
        let take =
            |m: std::sync::Mutex<Option<Snap>>| m.into_inner().unwrap_or_else(|p| p.into_inner());
        let before = take(ph.before).unwrap_or_else(|| Snap::take_before(counters));
        let after = take(ph.after).unwrap_or_else(|| Snap::take_after(counters));
        return Ok(Collected {
            outs: vec![out],
            before,
            after,
        });
    }
    let sh = Barriers {
        ready: Barrier::new(n + 1),
        go: Barrier::new(n + 1),
        done: Barrier::new(n + 1),
        sampled: Barrier::new(n + 1),
        abort: AtomicBool::new(false),
    };
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for t in 0..spec.threads {
            let ctx = ctx_for(t);
            let max_ops = spec.ops_for_thread(t).unwrap_or(u64::MAX);
            let (p, sh) = (&p, &sh);
            let h = std::thread::Builder::new()
                .name(format!("iolab-w{t}"))
                .spawn_scoped(s, move || worker::<M, C>(ctx, clk, p, sh, max_ops))
                .map_err(|e| Error::Runtime(format!("cannot start worker thread {t}: {e}")))?;
            handles.push(h);
        }
        sh.ready.wait();
        let before = Snap::take_before(counters);
        sh.go.wait();
        sh.done.wait();
        let after = Snap::take_after(counters);
        sh.sampled.wait();
        let outs = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| Error::Runtime("a worker thread panicked".into()))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Collected {
            outs,
            before,
            after,
        })
    })
}

/// How a method's file names its runner (`Run::Threads(runner::drive::<M>)` in its `INFO`).
pub type Drive = fn(&Spec, &PreparedTarget, &ClockInfo, &[&CounterSet]) -> Result<Collected>;

/// The runner of method `M`, with the clock the calibration chose.
pub fn drive<M: Method>(
    spec: &Spec,
    target: &PreparedTarget,
    info: &ClockInfo,
    k: &[&CounterSet],
) -> Result<Collected> {
    match info.kind {
        ClockKind::Tsc => run_threads::<M, TscClock>(spec, target, &TscClock, info, k),
        ClockKind::Monotonic => run_threads::<M, MonoClock>(spec, target, &MonoClock, info, k),
        ClockKind::Mock => run_threads::<M, MockClock>(spec, target, &MockClock::new(100), info, k),
    }
}

fn run_method(
    spec: &Spec,
    target: &PreparedTarget,
    info: &ClockInfo,
    k: &[&CounterSet],
) -> Result<Collected> {
    match spec.method.info().run {
        Run::Threads(drive) => drive(spec, target, info, k),
        Run::Process(_) => Err(Error::Runtime(format!(
            "internal: --method {} runs as a process of its own",
            spec.method.name()
        ))),
    }
}

/// Runs one workload with an already calibrated clock: with `--count separate` (the default) first an
/// untimed pass of the same workload with the kernel tracepoints on, then the timed pass with the software
/// and hardware counters; then the derived figures and findings.
pub fn run(spec: &Spec, clock: &ClockInfo) -> Result<RunResult> {
    if let Run::Process(run) = spec.method.info().run {
        // A client process of its own, timed from outside (see offload/mod.rs).
        return run(spec, clock);
    }
    let mut kernel = KernelFigures {
        count_mode: spec.count,
        ..Default::default()
    };
    let mut tp: Option<(Vec<CounterValue>, RunResult)> = None;
    if spec.count == CountMode::Separate {
        let mut set = CounterSet::default();
        set.add_tracepoints(spec.breakdown, spec.method.info().io_uring_requests);
        kernel.notes.extend(set.notes.iter().cloned());
        if set.has_tracepoints() {
            let (r, vals) = run_once(&spec.for_counting_pass(), clock, &[&set])?;
            tp = Some((vals, r));
            kernel.tracepoint_pass = Some("a separate, untimed counting pass of the same workload, run just before the timed pass".into());
        } else {
            kernel.tracepoints = set.deltas(&CounterSnap::default(), &CounterSnap::default());
        }
    }
    let (mut r, vals) = SOFTWARE.with(|sw| {
        let mut tp = CounterSet::default();
        if spec.count == CountMode::Inline {
            tp.add_tracepoints(spec.breakdown, spec.method.info().io_uring_requests);
            kernel.notes.extend(tp.notes.iter().cloned());
            if tp.has_tracepoints() {
                kernel.tracepoint_pass =
                    Some("the timed pass itself (--count inline): every syscall was slowed by the tracepoints".into());
            }
        }
        PROGRESS_ON.store(true, Ordering::SeqCst);
        let r = run_once(spec, clock, &[sw, &tp]);
        PROGRESS_ON.store(false, Ordering::SeqCst);
        r
    })?;
    let (timed, inline_tp): (Vec<CounterValue>, Vec<CounterValue>) = vals
        .into_iter()
        .partition(|c| matches!(c.family, Family::Software | Family::Hardware));
    kernel.timed_pass = timed;
    let (tp_vals, tp_run) = match tp {
        Some((v, run)) => (v, Some(run)),
        None if spec.count == CountMode::Inline => (inline_tp, None),
        None => (Vec::new(), None),
    };
    let (by_name, tps): (Vec<CounterValue>, Vec<CounterValue>) = tp_vals
        .into_iter()
        .partition(|c| c.family == Family::Syscall);
    if !tps.is_empty() {
        kernel.tracepoints = tps;
    }
    let mut names: Vec<(String, u64)> = by_name
        .into_iter()
        .filter_map(|c| c.value.filter(|&v| v > 0).map(|v| (c.name, v)))
        .collect();
    if !names.is_empty() {
        if let Some(total) = kernel.value("raw_syscalls:sys_enter") {
            let named: u64 = names.iter().map(|(_, v)| v).sum();
            if total > named {
                names.push(("other".to_string(), total - named));
            }
        }
    }
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    kernel.syscalls_by_name = names;
    let src = tp_run.as_ref().unwrap_or(&r);
    if kernel.tracepoint_pass.is_some() {
        kernel.tracepoint_pass_ops = Some(src.ops);
        kernel.tracepoint_pass_uring_enters = src.syscalls.uring_enters;
        kernel.tracepoint_pass_uring_requests = src.syscalls.uring_requests;
    }
    if spec.count == CountMode::None {
        kernel
            .notes
            .push("tracepoints not counted (--count none): syscall figures are iolab's own".into());
    }
    r.kernel = kernel;
    r.derived = crate::findings::derive(&r);
    r.findings = crate::findings::findings(&r);
    Ok(r)
}

/// One pass: set up the target, run the threads with `counters` open, and assemble the result.
fn run_once(
    spec: &Spec,
    clock: &ClockInfo,
    counters: &[&CounterSet],
) -> Result<(RunResult, Vec<CounterValue>)> {
    let host = Host::current();
    let target = target::setup(spec)?;
    let c = run_method(spec, &target, clock, counters)?;
    let Collected {
        mut outs,
        before,
        after,
    } = c;
    // Every thread has closed its end of a stream target by now, so the peers have finished.
    let peer = target.join_peers()?;
    if let Some(i) = outs.iter().position(|o| o.error.is_some()) {
        return Err(outs[i].error.take().expect("checked"));
    }

    let ns = clock.ns_per_tick;
    let mut lat = new_hist();
    let mut gap = new_hist();
    let mut per_thread = Vec::new();
    // --nop-requests: IORING_OP_NOP moves no data, so no bytes are counted (and no MiB/s claimed).
    let moved_per_op = if spec.ring.nop_requests { 0 } else { spec.bs };
    let mut workers_ru = RusageDelta::default();
    let mut flushes = FlushFigures::default();
    let (mut t0, mut t1) = (u64::MAX, 0u64);
    let mut method_count = Some(0u64);
    let mut uring: Option<(u64, u64)> = None;
    for (i, o) in outs.iter().enumerate() {
        let l = o.lat.into_hdr();
        let g = if o.boundary_timing {
            l.clone()
        } else {
            o.gap.into_hdr()
        };
        lat.add(l)
            .map_err(|e| Error::Runtime(format!("histogram merge: {e}")))?;
        gap.add(g)
            .map_err(|e| Error::Runtime(format!("histogram merge: {e}")))?;
        workers_ru.add(&o.rusage);
        flushes.calls += o.flush_calls;
        flushes.total_s += o.flush_ticks as f64 * ns * 1e-9;
        flushes.max_ns = flushes.max_ns.max(o.flush_max_ticks as f64 * ns);
        t0 = t0.min(o.t_first);
        t1 = t1.max(o.t_last);
        method_count = match (method_count, o.syscalls) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        if let Some((e, r)) = o.submissions {
            let u = uring.get_or_insert((0, 0));
            u.0 += e;
            u.1 += r;
        }
        per_thread.push(ThreadFigures {
            thread: i as u32,
            ops: o.ops,
            bytes: o.ops * moved_per_op,
            wall_s: o.t_last.saturating_sub(o.t_first) as f64 * ns * 1e-9,
        });
    }
    let ops: u64 = outs.iter().map(|o| o.ops).sum();
    let bytes = ops * moved_per_op;
    if let (Some(p), OpKind::Write) = (peer, spec.op) {
        if p.bytes != bytes {
            return Err(Error::Runtime(format!(
                "the run wrote {bytes} bytes into {} but iolab's peer received {}: data was lost",
                spec.target.display(),
                p.bytes
            )));
        }
    }
    let wall_s = t1.saturating_sub(t0) as f64 * ns * 1e-9;
    let process = RusageDelta::between(&before.ru, &after.ru);
    let helpers = helper_deltas(&before.tasks, &after.tasks);
    let kernel_rw = match (&before.io, &after.io) {
        (Some((a, n)), Some((b, _))) => ProcIo::delta(a, *n, b),
        _ => ProcIo::default(),
    };
    let per_op = |x: u64| if ops > 0 { x as f64 / ops as f64 } else { 0.0 };
    let mut notes = target.notes.clone();
    let mut fallbacks = Vec::new();
    if let Some(r) = &clock.fallback_reason {
        fallbacks.push(format!(
            "clock: TSC not used ({r}); timed with clock_gettime(CLOCK_MONOTONIC)"
        ));
    }
    if !helpers.is_empty() {
        notes.push(
            "helper CPU is read from /proc/self/task at the end (clock-tick resolution); helpers that exited \
             during the run are in the process total only"
                .into(),
        );
    }
    if spec.method.info().io_uring_requests && kernel_rw.syscw + kernel_rw.syscr == 0 {
        notes.push("io_uring requests are not counted in /proc/self/io syscr/syscw".into());
    }
    let cpu_total = process.user_s + process.sys_s;
    let steal = crate::measure::cpu::Steal {
        before: &before.steal,
        after: &after.steal,
    };
    let steal_all = steal.all();
    let steal_workers = if outs.iter().all(|o| o.cpus.0 >= 0 && o.cpus.0 == o.cpus.1) {
        let mut cpus: Vec<usize> = outs.iter().map(|o| o.cpus.0 as usize).collect();
        cpus.sort_unstable();
        cpus.dedup();
        Some(cpus.into_iter().map(|c| steal.on(c)).sum::<f64>())
    } else {
        None
    };
    notes.extend(steal.note(wall_s));
    let boundary = outs.iter().any(|o| o.boundary_timing);
    let timed = if boundary {
        "each thread from just before its first op to after its last completion, including --fsync/--msync \
         flushes and stdio's final fflush. Per-op latency (synchronous method, one clock read per op): from the \
         previous op's completion to this op's completion, so it includes iolab's few ns of bookkeeping between \
         ops (--method nop measures that floor) and excludes flushes; ops run back to back, so the gap between \
         op starts is the same series"
    } else {
        "each thread from just before its first op to after its last completion, including --fsync flushes. \
         Per-op latency (asynchronous method, one clock read per submission round): from the clock read that \
         ended the previous round (iolab then builds the batch and submits it) to the read right after the \
         io_uring_enter/io_getevents that returned the completion; gap: between the starts of successive \
         requests of one thread, so 0 within a batch"
    };
    let verify = if spec.verify {
        let done: Vec<u64> = outs.iter().map(|o| o.ops).collect();
        Some(crate::verify::verify(spec, &target, &done)?)
    } else {
        None
    };
    let result = RunResult {
        schema_version: SCHEMA_VERSION,
        host,
        spec: spec.clone(),
        target: TargetInfo::of(&target, peer),
        clock: clock.clone(),
        timed: timed.into(),
        excluded: "process start-up, target checks, file creation/sizing/prefill, open, mmap and ring setup, buffer \
                   allocation, the final close/munmap, and --verify"
            .into(),
        wall_s,
        ops,
        bytes,
        iops: if wall_s > 0.0 { ops as f64 / wall_s } else { 0.0 },
        mib_s: if wall_s > 0.0 { bytes as f64 / wall_s / (1 << 20) as f64 } else { 0.0 },
        ns_per_op: if ops > 0 { wall_s * 1e9 / ops as f64 } else { 0.0 },
        latency: summarize(&lat, ns),
        gap: summarize(&gap, ns),
        flushes,
        cpu: CpuFigures {
            process,
            workers: workers_ru,
            helpers_user_s: helpers.iter().map(|h| h.user_s).sum(),
            helpers_sys_s: helpers.iter().map(|h| h.sys_s).sum(),
            helpers,
            cores_busy: if wall_s > 0.0 { cpu_total / wall_s } else { 0.0 },
            runqueue_wait_s: run_delay_delta_s(&before.tasks, &after.tasks),
            steal_all_cpus_s: steal_all,
            steal_worker_cpus_s: steal_workers,
            tasks: after.tasks.len(),
        },
        syscalls: SyscallFigures {
            method_count,
            method_per_op: method_count.map(per_op),
            uring_enters: uring.map(|u| u.0),
            uring_requests: uring.map(|u| u.1),
            kernel_rw,
            // On a stream the peer thread's calls are in the process's counters, but only in the other
            // direction (it reads what a write run sends, writes what a read run takes): count one side.
            kernel_rw_per_op: per_op(match (target.kind.is_stream(), spec.op) {
                (false, _) => kernel_rw.syscr + kernel_rw.syscw,
                (true, OpKind::Write) => kernel_rw.syscw,
                (true, OpKind::Read) => kernel_rw.syscr,
            }),
            note: spec.method.info().syscall_note.into(),
        },
        uring: crate::result::UringFigures::merge(&outs.iter().filter_map(|o| o.uring.clone()).collect::<Vec<_>>()),
        aio: crate::result::AioStats::merge(&outs.iter().filter_map(|o| o.aio.clone()).collect::<Vec<_>>()),
        nowait: crate::result::NowaitStats::merge(&outs.iter().filter_map(|o| o.nowait.clone()).collect::<Vec<_>>(), ops),
        per_thread,
        verify,
        kernel: KernelFigures::default(),
        derived: Derived::default(),
        findings: Vec::new(),
        fallbacks,
        notes,
        offload: None,
    };
    let counter_values = counters
        .iter()
        .zip(before.counters.iter().zip(&after.counters))
        .flat_map(|(set, (b, a))| set.deltas(b, a))
        .collect();
    Ok((result, counter_values))
}
