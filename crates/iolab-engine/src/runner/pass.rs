//! One pass of a workload: set up the target, run the threads, put their figures together.

use super::assemble::{assemble, Measured};
use super::work::Collected;
use super::work::Pass;
use super::work::WorkerOut;
use crate::error::{Error, Result};
use crate::measure::clock::ClockInfo;
use crate::measure::counters::CounterValue;
use crate::measure::cpu::{helper_deltas, HelperCpu, ProcIo, RusageDelta};
use crate::measure::hist::{new_hist, summarize, Hist};
use crate::result::*;
use crate::spec::{OpKind, Spec};
use crate::target::{self, PeerFigures, PreparedTarget};

const TIMED_BOUNDARY: &str = "each thread from just before its first op to after its last completion, including --fsync/--msync \
     flushes and stdio's final fflush. Per-op latency (synchronous method, one clock read per op): from the \
     previous op's completion to this op's completion, so it includes iolab's few ns of bookkeeping between \
     ops (--method nop measures that floor) and excludes flushes; ops run back to back, so the gap between \
     op starts is the same series";

const TIMED_ROUNDS: &str = "each thread from just before its first op to after its last completion, including --fsync flushes. \
     Per-op latency (asynchronous method, one clock read per submission): from the clock read just before \
     iolab builds the request's batch and submits it (fio's lat, slat + clat) to the read right after the \
     io_uring_enter/io_getevents that returned the completion; free slots are filled, a batch per \
     submission, before completions are reaped, a batch of them at a time (the others wait in the queue, \
     in their latency), so --qd requests stay in flight, as with fio; gap: between the starts of \
     successive requests of one thread, so 0 within a batch";

const TIMED_PACED: &str = "each thread from just before its first op to after its last completion, including --fsync/--msync \
     flushes. Paced (--rate-iops): op k of a thread is due k intervals after its start and waits for that \
     time (sleeping, then spinning on the clock); its latency runs from when it was due to its completion, \
     so an op a slower one delayed carries the delay (coordinated omission is not hidden)";

const TIMED_SPARSE: &str = "each thread from just before its first op to after its last completion, including --fsync/--msync \
     flushes. One clock read every N ops (see sparse_clock), so there is no per-op latency: throughput is \
     the ops over that span";

const TIMED_UNTIMED_QUEUED: &str =
    "each thread from just before its first request to after its last completion, \
     including --fsync flushes: throughput is the requests over that span. No request is timed \
     (--latency-sample 0): the clock is read only for the deadline, progress and stalls (see \
     latency_unavailable)";

const TIMED_SAMPLED: &str = "each thread from just before its first op to after its last completion, including --fsync/--msync \
     flushes: throughput is the ops over that span. One op in N (--latency-sample N) is timed on its own, \
     from a clock read just before it to the read just after it (iolab's few ns of bookkeeping between \
     ops included, as with a read per op); the others are not timed, and the latency percentiles are \
     those sampled ops' (latency.count says how many)";

const EXCLUDED: &str = "process start-up, target checks, file creation/sizing/prefill, open, mmap and ring setup, buffer \
     allocation, the final close/munmap, and --verify";

/// What a pass's result says was timed, by how its loops read the clock.
fn timed(
    sparse: Option<&crate::measure::clock::SparseClock>,
    spec: &Spec,
    outs: &[WorkerOut],
) -> &'static str {
    match sparse {
        Some(s) if s.sampled => TIMED_SAMPLED,
        Some(_) if !spec.method.info().synchronous() => TIMED_UNTIMED_QUEUED,
        Some(_) => TIMED_SPARSE,
        None if spec.rate_iops.is_some() => TIMED_PACED,
        None if outs.iter().any(|o| o.boundary_timing) => TIMED_BOUNDARY,
        None => TIMED_ROUNDS,
    }
}

/// One pass: set up the target, run the threads with the pass's counters open, and assemble the result.
pub(super) fn run_once(
    spec: &Spec,
    clock: &ClockInfo,
    pass: &Pass,
) -> Result<(RunResult, Vec<CounterValue>)> {
    let host = Host::current();
    if let Some((b, stage)) = pass.progress {
        b.begin(stage, Some(crate::progress::Goal::of_spec(spec)));
    }
    let target = target::setup(spec)?;
    let sink_before = target.sink_begin()?;
    let c = (pass.drive)(spec, &target, clock, pass);
    if let Some((b, _)) = pass.progress {
        b.ended();
    }
    let c = c?;
    let sink_after = target.sink_end()?;
    target.nvme_end();
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
    // --nop-requests: IORING_OP_NOP moves no data, so no bytes are counted (and no MiB/s claimed).
    let moved_per_op = if spec.ring.nop_requests { 0 } else { spec.bs };
    let w = Merged::of(&outs, clock.ns_per_tick, moved_per_op)?;
    let bytes: u64 = outs
        .iter()
        .map(|o| super::drawn::bytes_of(o, moved_per_op))
        .sum();
    let warmup = warmup_figures(spec, &outs, moved_per_op, clock.ns_per_tick);
    let warm_bytes = warmup.as_ref().map_or(0, |w| w.bytes);
    check_peer(spec, peer.as_ref(), bytes + warm_bytes)?;
    let kernel_rw = match (&before.io, &after.io) {
        (Some((a, n)), Some((b, _))) => Some(ProcIo::delta(a, *n, b)),
        _ => None,
    };
    let helpers = helper_deltas(&before.proc.tasks, &after.proc.tasks);
    let mut notes = notes(spec, &target, &helpers, &kernel_rw);
    if warm_bytes > 0 && peer.is_some() {
        notes.push(format!(
            "the stream peer's figures include the warm-up's {}: its warm-up streams had peers of their own, \
             which ran before the timed span",
            crate::units::fmt_size(warm_bytes)
        ));
    }
    let base = assemble(
        spec,
        clock,
        Measured {
            host,
            target: TargetInfo::of(&target, peer),
            wall_s: w.wall_s,
            ops: w.ops,
            bytes,
            before: &before.proc,
            after: &after.proc,
            workers: w.workers,
            workers_apart: false,
            helpers,
            steal_cpus: worker_cpus(&outs),
            notes,
            fallbacks: Vec::new(),
            without_tsc: "timed with clock_gettime(CLOCK_MONOTONIC)",
        },
    );
    let verify = verify_figures(spec, &target, &outs)?;
    let ns = clock.ns_per_tick;
    let sparse = crate::measure::clock::sparse_clock(
        (spec.clock_every, spec.latency_sample),
        clock,
        spec.method.info().synchronous(),
    );
    let timed_ops = sparse.as_ref().is_none_or(|s| s.sampled);
    let (iopoll, memory, device_io) = around_span(pass, &before, &after, w.ops);
    let mut result = RunResult {
        timed: timed(sparse.as_ref(), spec, &outs).into(),
        excluded: EXCLUDED.into(),
        latency: summarize(&w.lat, ns),
        gap: summarize(&w.gap, ns),
        syscalls: SyscallFigures {
            clock_calls: clock.read_is_syscall().then_some(w.clock_reads),
            ..syscall_figures(spec, &target, &w, kernel_rw)
        },
        sparse_clock: sparse,
        uring: UringFigures::merge(
            &outs
                .iter()
                .filter_map(|o| o.uring.clone())
                .collect::<Vec<_>>(),
        ),
        aio: AioStats::merge(
            &outs
                .iter()
                .filter_map(|o| o.aio.clone())
                .collect::<Vec<_>>(),
        ),
        nowait: crate::result::NowaitStats::merge(
            &outs
                .iter()
                .filter_map(|o| o.nowait.clone())
                .collect::<Vec<_>>(),
            outs.iter().map(|o| o.ops).sum(),
        ),
        method_figures: method_figures(&outs),
        flushes: w.flushes,
        paced: paced_figures(spec, &outs, &w.per_thread, ns),
        access: crate::access::figures(spec, &target, &ops_done(&outs)),
        per_thread: w.per_thread,
        verify,
        warmup,
        intervals: super::merge::merge(&outs, (spec, timed_ops), ns, moved_per_op, w.wall_s),
        iopoll,
        memory,
        mixed: mixed_figures(&outs, spec, ns, w.wall_s)?,
        device_io,
        ..base
    };
    if let Some(t) = pass.layers {
        match super::layers::figures(t, spec, &target, &outs) {
            Ok(l) => result.layers = Some(l),
            Err(why) => result.notes.push(format!("{}{why}", super::layers::NOTE)),
        }
    }
    let workers = outs
        .iter_mut()
        .map(|o| (o.t_first, o.t_last, o.perop.as_mut()));
    super::perop::collect(spec, clock.ns_per_tick, workers, &mut result);
    result.sink = target.sink_figures(sink_before, sink_after).map(|mut f| {
        f.check_against(&result);
        f
    });
    let counter_values = pass
        .counters
        .iter()
        .zip(before.counters.iter().zip(&after.counters))
        .flat_map(|(set, (b, a))| set.deltas(b, a))
        .collect();
    Ok((result, counter_values))
}

/// What was counted just before and after the timed span: the device's interrupts (`--iopoll`), the
/// memory cgroup (`--memory-limit`) and the bytes the block device moved.
fn around_span(
    pass: &Pass,
    before: &super::work::Snap,
    after: &super::work::Snap,
    ops: u64,
) -> (
    Option<crate::measure::iopoll::IopollFigures>,
    Option<crate::memlimit::MemoryLimit>,
    Option<crate::measure::device_io::DeviceIo>,
) {
    (
        pass.irqs.map(|i| i.figures(&before.irqs, &after.irqs, ops)),
        pass.memory
            .zip(before.mem.zip(after.mem))
            .map(|(g, (b, a))| g.figures(b, a)),
        pass.disk
            .zip(before.disk.zip(after.disk))
            .map(|(d, (b, a))| d.delta(b, a)),
    )
}

/// `--verify`: the blocks each worker's ops wrote (or, in a read run, read), read back; a read run of a
/// method that checks its reads as they arrive, its own figures.
fn verify_figures(
    spec: &Spec,
    target: &target::PreparedTarget,
    outs: &[WorkerOut],
) -> Result<Option<crate::result::VerifyFigures>> {
    if !spec.verify {
        return Ok(None);
    }
    if spec.op == crate::spec::OpKind::Read && spec.method.info().verifies_reads {
        // A read run's blocks, as the method checked them against the pattern when they arrived.
        let mut v = crate::result::VerifyFigures::default();
        for c in outs.iter().filter_map(|o| o.read_check.as_ref()) {
            v.blocks_checked += c.blocks_checked;
            v.bytes_checked += c.bytes_checked;
            v.mismatches += c.mismatches;
            v.first_mismatch_offsets.extend(
                c.first_mismatch_offsets
                    .iter()
                    .take(10 - v.first_mismatch_offsets.len().min(10)),
            );
        }
        return Ok(Some(v));
    }
    crate::verify::verify(spec, target, &ops_done(outs)).map(Some)
}

/// Each worker's completed ops.
fn ops_done(outs: &[WorkerOut]) -> Vec<u64> {
    outs.iter().map(|o| o.ops).collect()
}

/// `--rate-iops`: the pace asked and met, over the workers.
fn paced_figures(
    spec: &Spec,
    outs: &[WorkerOut],
    threads: &[ThreadFigures],
    ns: f64,
) -> Option<PacedFigures> {
    let spans: Vec<(u64, f64)> = threads.iter().map(|t| (t.ops, t.wall_s)).collect();
    let paces: Vec<_> = outs.iter().map(|o| &o.pace).collect();
    super::paced::figures(spec.rate_iops, &spans, &paces, ns)
}

/// `--op mixed`: the workers' reads and writes apart, put together.
fn mixed_figures(
    outs: &[WorkerOut],
    spec: &Spec,
    ns: f64,
    wall_s: f64,
) -> Result<Option<crate::result::MixedFigures>> {
    let mixes: Vec<_> = outs
        .iter()
        .filter_map(|o| o.perop.as_ref()?.mix.as_ref())
        .collect();
    let moved = outs
        .iter()
        .filter_map(|o| o.moved)
        .fold(None, |a: Option<[u64; 2]>, (r, w)| {
            let [ar, aw] = a.unwrap_or_default();
            Some([ar + r, aw + w])
        });
    super::mixed::figures(&mixes, spec.read_pct, (spec.bs, moved), ns, wall_s)
}

/// The workers' figures, put together.
struct Merged {
    lat: Hist,
    gap: Hist,
    per_thread: Vec<ThreadFigures>,
    workers: RusageDelta,
    flushes: FlushFigures,
    ops: u64,
    /// From the earliest first op to the latest last completion.
    wall_s: f64,
    /// The method's own count of its calls (None if any worker's method does not count).
    method_count: Option<u64>,
    /// io_uring_enter calls and requests submitted through them.
    uring: Option<(u64, u64)>,
    /// The workers' clock reads over the timed span.
    clock_reads: u64,
}

impl Merged {
    fn of(outs: &[WorkerOut], ns: f64, moved_per_op: u64) -> Result<Merged> {
        let mut w = Merged {
            lat: new_hist(),
            gap: new_hist(),
            per_thread: Vec::new(),
            workers: RusageDelta::default(),
            flushes: FlushFigures::default(),
            ops: 0,
            wall_s: 0.0,
            method_count: Some(0),
            uring: None,
            clock_reads: outs.iter().map(|o| o.clock_reads).sum(),
        };
        w.workers.cpu_s = outs.iter().map(|o| o.rusage.cpu_s).sum();
        let (mut t0, mut t1) = (u64::MAX, 0u64);
        for (i, o) in outs.iter().enumerate() {
            let l = o.lat.into_hdr();
            let g = if o.boundary_timing {
                l.clone()
            } else {
                o.gap.into_hdr()
            };
            w.lat
                .add(l)
                .map_err(|e| Error::Runtime(format!("histogram merge: {e}")))?;
            w.gap
                .add(g)
                .map_err(|e| Error::Runtime(format!("histogram merge: {e}")))?;
            w.workers.add(&o.rusage);
            w.flushes.calls += o.flush_calls;
            w.flushes.total_s += o.flush_ticks as f64 * ns * 1e-9;
            w.flushes.max_ns = w.flushes.max_ns.max(o.flush_max_ticks as f64 * ns);
            t0 = t0.min(o.t_first);
            t1 = t1.max(o.t_last);
            w.method_count = match (w.method_count, o.syscalls) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
            if let Some((e, r)) = o.submissions {
                let u = w.uring.get_or_insert((0, 0));
                u.0 += e;
                u.1 += r;
            }
            w.per_thread.push(ThreadFigures {
                thread: i as u32,
                ops: o.ops,
                bytes: super::drawn::bytes_of(o, moved_per_op),
                wall_s: o.t_last.saturating_sub(o.t_first) as f64 * ns * 1e-9,
            });
        }
        w.ops = outs.iter().map(|o| o.ops).sum();
        w.wall_s = t1.saturating_sub(t0) as f64 * ns * 1e-9;
        Ok(w)
    }
}

/// A write run into a stream: iolab's peer must have received every byte.
/// `--warmup`: the workers' untimed operations before the timed span, added up (`None` without it).
fn warmup_figures(
    spec: &Spec,
    outs: &[WorkerOut],
    moved_per_op: u64,
    ns_per_tick: f64,
) -> Option<WarmupFigures> {
    if spec.warmup.is_none() {
        return None;
    }
    let ops: u64 = outs.iter().map(|o| o.warm.ops).sum();
    let ticks = outs.iter().map(|o| o.warm.ticks).max().unwrap_or(0);
    Some(WarmupFigures {
        ops,
        bytes: if spec.bs_split.is_some() {
            outs.iter().map(|o| o.warm.bytes).sum()
        } else {
            ops * moved_per_op
        },
        wall_s: ticks as f64 * ns_per_tick / 1e9,
        asked: spec.warmup.describe(),
    })
}

/// A write run's bytes (with the warm-up's) all reached the stream's peers.
fn check_peer(spec: &Spec, peer: Option<&PeerFigures>, bytes: u64) -> Result<()> {
    if let (Some(p), OpKind::Write) = (peer, spec.op) {
        if p.bytes != bytes && p.remote.is_some() {
            return Err(Error::Runtime(format!(
                "the run wrote {bytes} bytes into {} but the peer's TCP acknowledged {} within {} s of the \
                 end: data was lost or the peer stopped reading",
                spec.target.display(),
                p.bytes,
                crate::target::REMOTE_ACK_WAIT.as_secs()
            )));
        }
        if p.bytes != bytes {
            return Err(Error::Runtime(format!(
                "the run wrote {bytes} bytes into {} but iolab's peer received {}: data was lost",
                spec.target.display(),
                p.bytes
            )));
        }
    }
    Ok(())
}

/// The runner's own notes: the target's, then what the helper and /proc/self/io figures leave out.
fn notes(
    spec: &Spec,
    target: &PreparedTarget,
    helpers: &[HelperCpu],
    kernel_rw: &Option<ProcIo>,
) -> Vec<String> {
    let mut notes = target.notes.clone();
    if !helpers.is_empty() {
        notes.push(
            "helper CPU is read from /proc/self/task at the end (clock-tick resolution); helpers that exited \
             during the run are in the process total only"
                .into(),
        );
    }
    if spec.method.info().io_uring_requests
        && kernel_rw.as_ref().is_some_and(|k| k.syscw + k.syscr == 0)
    {
        notes.push("io_uring requests are not counted in /proc/self/io syscr/syscw".into());
    }
    notes
}

/// The CPUs the workers ran on, when each stayed on one CPU over its loop.
fn worker_cpus(outs: &[WorkerOut]) -> Option<Vec<usize>> {
    if outs.iter().all(|o| o.cpus.0 >= 0 && o.cpus.0 == o.cpus.1) {
        let mut cpus: Vec<usize> = outs.iter().map(|o| o.cpus.0 as usize).collect();
        cpus.sort_unstable();
        cpus.dedup();
        Some(cpus)
    } else {
        None
    }
}

fn syscall_figures(
    spec: &Spec,
    target: &PreparedTarget,
    w: &Merged,
    kernel_rw: Option<ProcIo>,
) -> SyscallFigures {
    let ops = w.ops;
    let per_op = |x: u64| (ops > 0).then(|| x as f64 / ops as f64);
    SyscallFigures {
        method_count: w.method_count,
        method_per_op: w.method_count.and_then(per_op),
        uring_enters: w.uring.map(|u| u.0),
        uring_requests: w.uring.map(|u| u.1),
        clock_calls: None,
        // On a stream the peer thread's calls are in the process's counters, but only in the other
        // direction (it reads what a write run sends, writes what a read run takes): count one side.
        kernel_rw_per_op: kernel_rw.as_ref().and_then(|k| {
            per_op(match (target.kind.is_stream(), spec.op) {
                (false, _) => k.syscr + k.syscw,
                (true, OpKind::Write) => k.syscw,
                (true, OpKind::Read) => k.syscr,
                // Refused at resolve: a stream goes one way.
                (true, OpKind::Mixed) => k.syscr + k.syscw,
            })
        }),
        kernel_rw_unavailable: kernel_rw.is_none().then(|| {
            "/proc/self/io could not be read (a kernel built without CONFIG_TASK_IO_ACCOUNTING has none)"
                .into()
        }),
        kernel_rw,
        note: spec.method.info().syscall_note.into(),
    }
}

/// The threads' method figures as one (counts added by name).
fn method_figures(outs: &[WorkerOut]) -> Vec<crate::spec::Figure> {
    let mut all = Vec::new();
    for o in outs {
        crate::spec::method_opts::add_up(&mut all, o.figures.clone());
    }
    all
}
