//! What passes between the runner's parts: a pass's settings and its method's runner (`Pass`, `Drive`),
//! what each worker is given (`LoopParams`, its buffers) and returns (`WorkerOut`), the gates between the
//! phases of the threads (`Phases`), and what a pass collects (`Collected`).

use super::assemble::Sample;
use super::intervals::IntervalLog;
use crate::error::{Error, Result};
use crate::measure::clock::ClockInfo;
use crate::measure::counters::CounterSet;
use crate::measure::counters::CounterSnap;
use crate::measure::cpu::read_tasks;
use crate::measure::cpu::steal_per_cpu;
use crate::measure::cpu::ProcIo;
use crate::measure::cpu::{Rusage, RusageDelta};
use crate::measure::hist::FastHist;
use crate::measure::iopoll::IrqWatch;
use crate::measure::profile::Sampler;
use crate::method::api::Method;
use crate::method::api::SharedSlot;
use crate::method::api::ThreadCtx;
use crate::pattern;
use crate::progress::Board;
use crate::progress::Stage;
use crate::spec::Spec;
use crate::target::PreparedTarget;
use std::alloc::Layout;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU32;

/// A zeroed, aligned I/O buffer (O_DIRECT needs alignment; a page is always used).
pub(super) struct AlignedBuf {
    pub(super) ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is plain heap memory owned by this value.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub(super) fn new(len: usize, align: usize) -> Result<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), align).map_err(|_| {
            Error::Runtime(format!(
                "cannot lay out a {len}-byte buffer aligned to {align}"
            ))
        })?;
        // SAFETY: the layout has a non-zero size (len.max(1)).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(crate::mem::out_of_memory(
                len as u64,
                "an I/O buffer (one per thread, --qd per thread for queued methods)",
                "lower --bs, --qd or --threads",
            ));
        }
        Ok(AlignedBuf { ptr, layout })
    }

    pub(super) fn slice_mut(&mut self, len: usize) -> &mut [u8] {
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
pub(super) struct WorkerOut {
    pub(super) lat: FastHist,
    pub(super) gap: FastHist,
    pub(super) flush_calls: u64,
    pub(super) flush_ticks: u64,
    pub(super) flush_max_ticks: u64,
    pub(super) ops: u64,
    pub(super) t_first: u64,
    pub(super) t_last: u64,
    pub(super) syscalls: Option<u64>,
    pub(super) submissions: Option<(u64, u64)>,
    pub(super) rusage: RusageDelta,
    pub(super) error: Option<Error>,
    /// One clock read per op (synchronous methods): `gap` is not recorded, it equals `lat`.
    pub(super) boundary_timing: bool,
    /// The CPU the worker ran on just before and just after its loop.
    pub(super) cpus: (i32, i32),
    pub(super) uring: Option<crate::result::UringStats>,
    pub(super) aio: Option<crate::result::AioStats>,
    pub(super) nowait: Option<crate::result::NowaitStats>,
    /// `--verify` of a read run, as the method checked the blocks it read.
    pub(super) read_check: Option<crate::result::VerifyFigures>,
    pub(super) figures: Vec<crate::spec::Figure>,
    /// The kernel may still hold requests that point into this worker's buffers (it could not be drained
    /// after a failure): the buffers are leaked instead of freed.
    pub(super) leak_buffers: bool,
    /// `--warmup`: what ran before the timed span (see warmup.rs).
    pub(super) warm: super::work::WarmOut,
    /// The pass over time (`--log-interval`; see intervals.rs).
    pub(super) log: IntervalLog,
    /// Clock reads over the timed span (counted apart from the method's calls where a read is one).
    pub(super) clock_reads: u64,
    /// `--op mixed`: the reads and writes apart; `--layers`' traced pass: the ops logged.
    pub(super) perop: Option<super::perop::PerOp>,
    /// `--rate-iops`: how the pace went.
    pub(super) pace: super::paced::PaceOut,
    /// With `--bs-split`: the bytes its ops read and wrote, replayed after the run (drawn.rs).
    pub(super) moved: Option<(u64, u64)>,
}

impl WorkerOut {
    pub(super) fn new() -> WorkerOut {
        WorkerOut {
            lat: FastHist::empty(),
            gap: FastHist::empty(),
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
            perop: None,
            pace: Default::default(),
            uring: None,
            aio: None,
            nowait: None,
            read_check: None,
            figures: Vec::new(),
            leak_buffers: false,
            warm: Default::default(),
            log: IntervalLog::off(),
            clock_reads: 0,
            moved: None,
        }
    }
}

/// Loop parameters shared by all workers.
#[derive(Clone)]
pub(super) struct LoopParams<'a> {
    /// The method completes each op inside `submit` (its registry entry's `exec`).
    pub(super) synchronous: bool,
    /// Where finished ops are published for a progress display (a watched run only), every
    /// `publish_ticks` (u64::MAX: never) at the comparison the loops make after every op or round anyway:
    /// no cost per op.
    pub(super) progress: Option<&'a crate::progress::Board>,
    pub(super) publish_ticks: u64,
    /// The clock's ticks per second.
    pub(super) hz: f64,
    pub(super) bs: usize,
    /// Each buffer's bytes: `bs`, or with `--bs-split` its largest length.
    pub(super) buf: usize,
    /// `--bs-split`: each op's length is its own (`PlannedOp::len`).
    pub(super) split: bool,
    pub(super) write: bool,
    /// `--rate-iops`: ticks between the due times of a thread's ops (0: not paced).
    pub(super) pace_ticks: f64,
    /// `--op mixed`: each op's direction comes from the plan; reads go to buffers of their own (after
    /// the writes' buffers), so a read never puts other bytes into a buffer a write sends.
    pub(super) mixed: bool,
    /// Stamp the pattern into each block: writes to a target that keeps data (a sink keeps nothing to
    /// verify, and the seed programs wrote a constant buffer there too).
    pub(super) stamp: bool,
    /// The target keeps data at positions, so the offset plan matters (asynchronous loop; without it
    /// every op is at offset 0, which is what positionless targets are given anyway).
    pub(super) planned: bool,
    pub(super) seed: u64,
    pub(super) duration_ticks: Option<u64>,
    pub(super) fsync_every: u64,
    pub(super) msync_every: u64,
    pub(super) qd: u32,
    pub(super) batch: u32,
    pub(super) target_path: std::path::PathBuf,
    /// `--warmup`: what the workers' warm-up instances share (`None`: no warm-up).
    pub(super) warm: Option<&'a WarmShared>,
    /// Clock ticks per interval of the time series (0: none), and how many intervals to make room for
    /// before the timed span.
    pub(super) interval_ticks: u64,
    pub(super) intervals_expected: u64,
    /// Ops per clock read of a synchronous loop (`--clock-every`; 1: a read after every op).
    pub(super) clock_every: u64,
    /// `--latency-sample N` (N above 1): of each `clock_every` ops, the last is timed on its own.
    pub(super) sampled: bool,
    /// `--latency-sample 0`: no op timed; a synchronous loop reads the clock after as many ops (at most
    /// `clock_every`) as take about [`super::loops::UNTIMED_READ_GAP_S`].
    pub(super) untimed: bool,
    /// The traced pass of `--layers` and `--op-log 0`: each worker logs up to this many ops (0: none).
    pub(super) log_ops: u64,
    /// `--op-log MS`: ticks per window and the windows each worker makes room for (zeros: none).
    pub(super) op_windows: (u64, u64),
}

/// The two hand-overs between a worker and whoever samples the process around the timed span.
pub(super) trait Phases: Sync {
    /// The worker is prepared (or failed to): sample "before", then let it run.
    fn start(&self);
    /// The worker finished its loop: sample "after" while its method (ring, helpers) still exists.
    fn finish(&self);
    fn abort(&self) -> &AtomicBool;
}

/// Process-wide snapshots around the timed span.
pub(super) struct Snap {
    pub(super) proc: Sample,
    pub(super) io: Option<(ProcIo, u64)>,
    /// The disk behind the target: its sectors read and written (none where no disk is behind it).
    pub(super) disk: Option<crate::measure::device_io::DiskSnap>,
    pub(super) counters: Vec<CounterSnap>,
    /// `--iopoll`: the target device's interrupt counts (empty otherwise).
    pub(super) irqs: Vec<u64>,
    /// `--memory-limit`: the cgroup's counters.
    pub(super) mem: Option<crate::memlimit::MemSnap>,
}

impl Snap {
    /// /proc/self/io is read last before the span and first after it, so only the one read that made the
    /// "before" snapshot falls inside (and is subtracted by `ProcIo::delta`). The perf counters are stopped
    /// while sampling and restarted last, so the span they count starts after every read made here; the
    /// `--profile` sampler, if any, starts after them and stops first.
    pub(super) fn take_before(pass: &Pass) -> Snap {
        let (c, sampler) = (pass.counters, pass.sampler);
        pause_counters(c);
        let irqs = pass.irqs.map(|w| w.snapshot()).unwrap_or_default();
        let mem = pass.memory.map(|g| g.snap());
        let counters = c.iter().map(|s| s.snapshot()).collect();
        // Before the machine's figures are read, and `take_after`'s after them: the span between holds
        // every wait and CPU time they count (a thread preempted while reading them waited 4.25 ms in a
        // span of 3.97 ms taken inside the reads: "100% of the time" beside 2.15 ms of its own CPU).
        let at = std::time::Instant::now();
        let steal = steal_per_cpu();
        let psi_some_us = crate::disturbance::psi_cpu_some_us();
        let system_cpu_ns = crate::disturbance::system_cpu_ns();
        let tasks = read_tasks();
        let ru = Rusage::process();
        let disk = pass.disk.and_then(|d| d.snapshot());
        let io = ProcIo::read_self();
        resume_counters(c);
        if let Some(g) = pass.memory {
            g.start_watch();
        }
        if let Some(s) = sampler {
            s.start();
        }
        if let Some(t) = pass.layers {
            t.switch(true);
        }
        Snap {
            proc: Sample {
                ru,
                tasks,
                steal,
                psi_some_us,
                system_cpu_ns,
                at,
            },
            io,
            disk,
            counters,
            irqs,
            mem,
        }
    }
    pub(super) fn take_after(pass: &Pass) -> Snap {
        let (c, sampler) = (pass.counters, pass.sampler);
        if let Some(t) = pass.layers {
            t.switch(false);
        }
        if let Some(s) = sampler {
            s.stop();
        }
        pause_counters(c);
        let irqs = pass.irqs.map(|w| w.snapshot()).unwrap_or_default();
        let mem = pass.memory.map(|g| g.snap());
        let io = ProcIo::read_self();
        let disk = pass.disk.and_then(|d| d.snapshot());
        let counters = c.iter().map(|s| s.snapshot()).collect();
        let ru = Rusage::process();
        let tasks = read_tasks();
        if let Some(s) = sampler {
            s.note_threads(&tasks);
        }
        let steal = steal_per_cpu();
        let psi_some_us = crate::disturbance::psi_cpu_some_us();
        let system_cpu_ns = crate::disturbance::system_cpu_ns();
        let at = std::time::Instant::now();
        Snap {
            proc: Sample {
                ru,
                tasks,
                steal,
                psi_some_us,
                system_cpu_ns,
                at,
            },
            io,
            disk,
            counters,
            irqs,
            mem,
        }
    }
}

pub struct Collected {
    pub(super) outs: Vec<WorkerOut>,
    pub(super) before: Snap,
    pub(super) after: Snap,
}

/// What one pass gives its threads.
pub struct Pass<'a> {
    /// Opened counters, read around the timed span.
    pub(super) counters: &'a [&'a CounterSet],
    /// A progress display's board and the name of this pass on it (a watched run only).
    pub(super) progress: Option<(&'a Board, Stage)>,
    /// `--profile`: the sampler, opened before the pass, started and stopped around the timed span.
    pub(super) sampler: Option<&'a Sampler>,
    /// `--iopoll`: the target's device, whose interrupts are counted around the timed span.
    pub(super) irqs: Option<&'a IrqWatch>,
    /// `--memory-limit`: the run's memory cgroup, whose counters are read around the timed span.
    pub(super) memory: Option<&'a crate::memlimit::MemCgroup>,
    /// `--layers`: the block tracepoints, enabled around the timed span, and the ops each worker logs.
    pub(super) layers: Option<&'a crate::measure::blocktrace::BlockTrace>,
    /// The disk behind the target, whose counters are read around the timed span (the timed pass only).
    pub(super) disk: Option<&'a crate::measure::device_io::DiskWatch>,
    /// The method's runner (its registry line's `drive`).
    pub(super) drive: Drive,
}

/// A method's runner, as its registry line names it (`runner::drive::<M>`).
pub type Drive = fn(&Spec, &PreparedTarget, &ClockInfo, &Pass) -> Result<Collected>;

/// What one worker's warm-up did.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WarmOut {
    pub(crate) ops: u64,
    pub(crate) ticks: u64,
    /// With `--bs-split`: the bytes of its ops (see drawn.rs).
    pub(crate) bytes: u64,
}

/// One prctl stops (or restarts) every counter this thread created, in all the sets.
pub(super) fn pause_counters(c: &[&CounterSet]) {
    if let Some(s) = c.iter().find(|s| !s.is_empty()) {
        s.pause();
    }
}

pub(super) fn resume_counters(c: &[&CounterSet]) {
    if let Some(s) = c.iter().find(|s| !s.is_empty()) {
        s.resume();
    }
}

/// The method, prepared for this thread, and its buffers (one per slot), registered with it.
pub(super) fn prepare<M: Method>(ctx: &ThreadCtx, p: &LoopParams) -> Result<(M, Vec<AlignedBuf>)> {
    let slots = if p.synchronous {
        1
    } else {
        ctx.spec.qd as usize
    };
    // A mixed run's reads have buffers of their own (registered too, after the writes').
    let nbufs = if p.mixed { 2 * slots } else { slots };
    M::prepare(ctx).and_then(|mut m| {
        let mut bufs = Vec::with_capacity(nbufs);
        for _ in 0..nbufs {
            let mut b = AlignedBuf::new(p.buf, ctx.target.buf_align)?;
            pattern::fill_body(b.slice_mut(p.buf), p.seed);
            bufs.push(b);
        }
        let ptrs: Vec<(*mut u8, usize)> = bufs.iter().map(|b| (b.ptr, p.buf)).collect();
        m.register_buffers(&ptrs)?;
        Ok((m, bufs))
    })
}

/// What the warm-up instances of one pass share.
pub(crate) struct WarmShared {
    pub(super) slot: SharedSlot,
    /// Threads whose warm-up has not finished yet.
    pub(super) left: AtomicU32,
    /// Ticks of a warm-up bounded by time.
    pub(super) ticks: Option<u64>,
}

impl WarmShared {
    pub(super) fn new(threads: u32, seconds: Option<f64>, hz: f64) -> WarmShared {
        WarmShared {
            slot: SharedSlot::default(),
            left: AtomicU32::new(threads),
            ticks: seconds.map(|s| (s * hz) as u64),
        }
    }
}
