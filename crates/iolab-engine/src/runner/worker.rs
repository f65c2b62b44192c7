//! One worker thread: it prepares its method and buffers, waits for the others, runs the loop and
//! reports what it measured.

use super::intervals::IntervalLog;
use super::loops::{loop_async, loop_sync};
use super::threads::Phases;
use crate::error::{Error, Result};
use crate::measure::clock::Clock;
use crate::measure::cpu::{Rusage, RusageDelta};
use crate::measure::hist::FastHist;
use crate::method::{Method, ThreadCtx};
use crate::pattern::{self, OpPlan};
use std::alloc::Layout;
use std::sync::atomic::{AtomicBool, Ordering};

/// A zeroed, aligned I/O buffer (O_DIRECT needs alignment; a page is always used).
pub(super) struct AlignedBuf {
    pub(super) ptr: *mut u8,
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
    /// The kernel may still hold requests that point into this worker's buffers (it could not be drained
    /// after a failure): the buffers are leaked instead of freed.
    pub(super) leak_buffers: bool,
    /// `--warmup`: what ran before the timed span (see warmup.rs).
    pub(super) warm: super::warmup::WarmOut,
    /// The pass over time (`--log-interval`; see intervals.rs).
    pub(super) log: IntervalLog,
    /// Clock reads over the timed span (counted apart from the method's calls where a read is one).
    pub(super) clock_reads: u64,
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
            uring: None,
            aio: None,
            nowait: None,
            leak_buffers: false,
            warm: Default::default(),
            log: IntervalLog::off(),
            clock_reads: 0,
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
    pub(super) write: bool,
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
    pub(super) warm: Option<&'a super::warmup::WarmShared>,
    /// Clock ticks per interval of the time series (0: none), and how many intervals to make room for
    /// before the timed span.
    pub(super) interval_ticks: u64,
    pub(super) intervals_expected: u64,
    /// Ops per clock read of a synchronous loop (`--clock-every`; 1: a read after every op).
    pub(super) clock_every: u64,
}

pub(super) fn worker<M: Method, C: Clock>(
    ctx: ThreadCtx,
    clk: &C,
    p: &LoopParams,
    sh: &dyn Phases,
    max_ops: u64,
) -> WorkerOut {
    let mut out = WorkerOut::new();
    let hists = FastHist::try_new().and_then(|l| Ok((l, FastHist::try_new()?)));
    let log = || match p.interval_ticks {
        0 => Ok(IntervalLog::off()),
        every => IntervalLog::new(every, p.intervals_expected),
    };
    let mut prepared = match hists.and_then(|(lat, gap)| {
        (out.lat, out.gap) = (lat, gap);
        out.warm = super::warmup::warm_up::<M, C>(&ctx, clk, p, sh.abort())?;
        out.log = log()?;
        prepare::<M>(&ctx, p)
    }) {
        Ok(x) => Some(x),
        Err(e) => {
            out.error = Some(e);
            sh.abort().store(true, Ordering::Relaxed);
            None
        }
    };
    sh.start();
    if let Some(prepared) = prepared.as_mut() {
        if !sh.abort().load(Ordering::Relaxed) {
            measure(prepared, &ctx, clk, p, sh.abort(), max_ops, &mut out);
        }
    }
    sh.finish();
    // After the "after" sample, so that its CPU time is not the run's.
    out.log.finish(&mut out.lat, out.t_last, out.ops);
    // The method (fd, mapping, ring and with it the ring's helper threads) goes away here, after sampling.
    if let Some((m, bufs)) = prepared {
        drop(m);
        if out.leak_buffers {
            std::mem::forget(bufs);
        }
    }
    out
}

/// The method, prepared for this thread, and its buffers (one per slot), registered with it.
pub(super) fn prepare<M: Method>(ctx: &ThreadCtx, p: &LoopParams) -> Result<(M, Vec<AlignedBuf>)> {
    let slots = if p.synchronous {
        1
    } else {
        ctx.spec.qd as usize
    };
    M::prepare(ctx).and_then(|mut m| {
        let mut bufs = Vec::with_capacity(slots);
        for _ in 0..slots {
            let mut b = AlignedBuf::new(p.bs, ctx.target.buf_align)?;
            pattern::fill_body(b.slice_mut(p.bs), p.seed);
            bufs.push(b);
        }
        let ptrs: Vec<(*mut u8, usize)> = bufs.iter().map(|b| (b.ptr, p.bs)).collect();
        m.register_buffers(&ptrs)?;
        Ok((m, bufs))
    })
}

/// Runs the method's loop between two samples of the thread's CPU, then takes what the method counted.
fn measure<M: Method, C: Clock>(
    (m, bufs): &mut (M, Vec<AlignedBuf>),
    ctx: &ThreadCtx,
    clk: &C,
    p: &LoopParams,
    abort: &AtomicBool,
    max_ops: u64,
    out: &mut WorkerOut,
) {
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
    let cpu0 = iolab_sys::current_cpu();
    // M::QUEUED, a constant: each method's runner holds only the loops it runs (p.synchronous says the
    // same, from the method's INFO).
    let r = if M::QUEUED {
        loop_async(m, clk, p, ctx.spec, &mut plan, bufs, max_ops, out, abort)
    } else {
        loop_sync(
            m,
            clk,
            p,
            ctx.spec,
            &mut plan,
            &mut bufs[0],
            max_ops,
            out,
            abort,
        )
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
    if let Err(e) = r {
        out.error = Some(e);
        abort.store(true, Ordering::Relaxed);
    }
}
