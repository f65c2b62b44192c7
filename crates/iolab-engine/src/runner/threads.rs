//! The workers' threads and the process-wide snapshots taken around their timed span.

use super::work::Collected;
use super::work::LoopParams;
use super::work::Pass;
use super::work::Phases;
use super::work::Snap;
use super::worker::worker;
use crate::error::{Error, Result};
use crate::measure::clock::ClockKind;
use crate::measure::clock::CounterClock;
#[cfg(test)]
use crate::measure::clock::MockClock;
use crate::measure::clock::MonoClock;
use crate::measure::clock::{Clock, ClockInfo};
use crate::measure::counters::CounterSet;
use crate::method::api::{Method, ThreadCtx};
use crate::progress::Board;
use crate::spec::{OpKind, Spec, SyncEvery};
use crate::target::PreparedTarget;
use std::sync::atomic::AtomicBool;
use std::sync::Barrier;

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
    pass: &'a Pass<'a>,
    /// A progress display's board, told when the ops start (at which tick of `clk`, of `hz`).
    board: Option<&'a Board>,
    clk: &'a dyn Clock,
    hz: f64,
}

impl Phases for Inline<'_> {
    fn start(&self) {
        *self.before.lock().unwrap_or_else(|p| p.into_inner()) = Some(Snap::take_before(self.pass));
        if let Some(b) = self.board {
            b.started(self.clk.now(), self.hz);
        }
    }
    fn finish(&self) {
        *self.after.lock().unwrap_or_else(|p| p.into_inner()) = Some(Snap::take_after(self.pass));
    }
    fn abort(&self) -> &AtomicBool {
        &self.abort
    }
}

thread_local! {
    /// Software and hardware counters, opened once per thread that runs workloads and kept open: releasing
    /// a software event's last user patches kernel text (a static key), which took 0.1-0.4 s per counter on
    /// this VM, so a survey of 28 runs spent 20 s in close(2). Open, they cost nothing measurable. pid 0
    /// attaches them to this thread and the threads it creates later (workers, io_uring helpers).
    pub(super) static SOFTWARE: CounterSet = {
        let mut s = CounterSet::default();
        s.add_software_and_hardware();
        s
    };
}

/// What the workers' warm-ups share (out of line: `drive` is compiled once per method).
#[inline(never)]
fn warm_shared(spec: &Spec, info: &ClockInfo) -> super::work::WarmShared {
    super::work::WarmShared::new(
        spec.threads,
        match spec.warmup {
            crate::spec::Warmup::Seconds(s) => Some(s),
            _ => None,
        },
        info.hz,
    )
}

/// The loop parameters every worker shares (out of line: `drive` is compiled once per method, and none
/// of this depends on the method).
#[inline(never)]
fn loop_params<'a>(
    spec: &Spec,
    target: &PreparedTarget,
    info: &ClockInfo,
    pass: &'a Pass,
    warm: &'a super::work::WarmShared,
) -> LoopParams<'a> {
    let every = |s: SyncEvery| if let SyncEvery::Every(k) = s { k } else { 0 };
    LoopParams {
        synchronous: spec.method.info().synchronous(),
        progress: pass.progress.map(|(b, _)| b),
        hz: info.hz,
        publish_ticks: match pass.progress {
            Some(_) => ((crate::progress::PUBLISH_S * info.hz) as u64).max(1),
            None => u64::MAX,
        },
        bs: spec.bs as usize,
        buf: spec.buf_len() as usize,
        split: spec.bs_split.is_some(),
        write: spec.op == OpKind::Write,
        mixed: spec.op == OpKind::Mixed,
        pace_ticks: spec.rate_iops.map_or(0.0, |r| info.hz / r),
        stamp: spec.op.writes() && target.kind.keeps_data() && !spec.method.is_kernel_copy(),
        planned: target.kind.keeps_data(),
        seed: spec.seed,
        duration_ticks: spec.duration_s.map(|d| (d * info.hz) as u64),
        fsync_every: every(spec.fsync),
        msync_every: every(spec.msync),
        qd: spec.qd,
        batch: spec.batch,
        target_path: target.path.clone(),
        warm: (!spec.warmup.is_none()).then_some(warm),
        interval_ticks: interval_ticks(spec, info.hz),
        intervals_expected: intervals_expected(spec),
        clock_every: crate::measure::clock::sparse_clock(
            (spec.clock_every, spec.latency_sample),
            info,
            spec.method.info().synchronous(),
        )
        .map_or(1, |s| s.every),
        sampled: spec.latency_sample.is_some_and(|n| n > 1),
        untimed: spec.latency_sample == Some(0),
        log_ops: match (pass.layers, spec.op_log_ms) {
            (Some(_), _) | (None, Some(0)) => spec.ops_for_thread(0).unwrap_or(0),
            _ => 0,
        },
        op_windows: super::perop::op_windows(spec, info.hz),
    }
}

pub(super) fn run_threads<M: Method, C: Clock>(
    spec: &Spec,
    target: &PreparedTarget,
    clk: &C,
    info: &ClockInfo,
    pass: &Pass,
) -> Result<Collected> {
    let warm = warm_shared(spec, info);
    let p = loop_params(spec, target, info, pass, &warm);
    let region_len = target.region_blocks * spec.bs;
    let shared = crate::method::api::SharedSlot::default();
    let ctx_for = |t: u32| ThreadCtx {
        spec,
        // With a file per thread, the thread's own file.
        target: target.for_thread(t),
        thread: t,
        region_offset: spec.offset + target.region_first_block(t) * spec.bs,
        region_len,
        shared: &shared,
        content: None,
    };
    if spec.threads == 1 {
        Ok(one_thread::<M, C>(ctx_for(0), clk, &p, pass))
    } else {
        threads::<M, C>(spec, ctx_for, clk, &p, pass)
    }
}

/// Clock ticks per interval of the time series (`--log-interval`; 0: none).
fn interval_ticks(spec: &Spec, hz: f64) -> u64 {
    match spec.log_interval().0 {
        0 => 0,
        ms => ((ms as f64 * 1e-3 * hz) as u64).max(1),
    }
}

/// Intervals to make room for before the timed span: a --duration run's number (at most the number a
/// thread keeps), else a few.
fn intervals_expected(spec: &Spec) -> u64 {
    match (spec.duration_s, spec.log_interval().0) {
        (_, 0) => 0,
        (Some(d), ms) => (d * 1000.0 / ms as f64) as u64 + 2,
        (None, _) => 16,
    }
}

/// One worker, on the calling thread.
fn one_thread<M: Method, C: Clock>(
    ctx: ThreadCtx,
    clk: &C,
    p: &LoopParams,
    pass: &Pass,
) -> Collected {
    let ph = Inline {
        before: std::sync::Mutex::new(None),
        after: std::sync::Mutex::new(None),
        abort: AtomicBool::new(false),
        pass,
        board: pass.progress.map(|(b, _)| b),
        clk,
        hz: p.hz,
    };
    let max_ops = ctx.spec.ops_for_thread(0).unwrap_or(u64::MAX);
    let out = worker::<M, C>(ctx, clk, p, &ph, max_ops);
    let take =
        |m: std::sync::Mutex<Option<Snap>>| m.into_inner().unwrap_or_else(|p| p.into_inner());
    let before = take(ph.before).unwrap_or_else(|| Snap::take_before(pass));
    let after = take(ph.after).unwrap_or_else(|| Snap::take_after(pass));
    Collected {
        outs: vec![out],
        before,
        after,
    }
}

/// Opened once every worker thread has started: `false` (one could not be started) sends the started
/// ones home before they wait at barriers that would never fill.
#[derive(Default)]
struct Gate {
    state: std::sync::Mutex<Option<bool>>,
    cv: std::sync::Condvar,
}

impl Gate {
    fn open(&self, go: bool) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(go);
        self.cv.notify_all();
    }
    fn wait(&self) -> bool {
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match *g {
                Some(go) => return go,
                None => g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }
}

/// One worker per thread, sampled from the calling thread.
fn threads<'a, M: Method, C: Clock>(
    spec: &Spec,
    ctx_for: impl Fn(u32) -> ThreadCtx<'a>,
    clk: &C,
    p: &LoopParams,
    pass: &Pass,
) -> Result<Collected> {
    let n = spec.threads as usize;
    let sh = Barriers {
        ready: Barrier::new(n + 1),
        go: Barrier::new(n + 1),
        done: Barrier::new(n + 1),
        sampled: Barrier::new(n + 1),
        abort: AtomicBool::new(false),
    };
    let gate = Gate::default();
    std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(n);
        for t in 0..spec.threads {
            let ctx = ctx_for(t);
            let max_ops = spec.ops_for_thread(t).unwrap_or(u64::MAX);
            let (sh, gate) = (&sh, &gate);
            let h = std::thread::Builder::new()
                .name(format!("iolab-w{t}"))
                .spawn_scoped(s, move || {
                    gate.wait()
                        .then(|| worker::<M, C>(ctx, clk, p, sh, max_ops))
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    gate.open(false);
                    return Err(crate::budget::thread_failed(
                        &format!("worker thread {t} of {n}"),
                        &e,
                        "lower --threads",
                    ));
                }
            }
        }
        gate.open(true);
        sh.ready.wait();
        let before = Snap::take_before(pass);
        if let Some((b, _)) = pass.progress {
            b.started(clk.now(), p.hz);
        }
        sh.go.wait();
        sh.done.wait();
        let after = Snap::take_after(pass);
        sh.sampled.wait();
        let outs = handles
            .into_iter()
            .map(|h| match h.join() {
                Ok(Some(out)) => Ok(out),
                _ => Err(Error::Runtime("a worker thread panicked".into())),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Collected {
            outs,
            before,
            after,
        })
    })
}

/// The runner of method `M`, with the clock the calibration chose.
pub fn drive<M: Method>(
    spec: &Spec,
    target: &PreparedTarget,
    info: &ClockInfo,
    pass: &Pass,
) -> Result<Collected> {
    match info.kind {
        ClockKind::Tsc | ClockKind::Cntvct => {
            run_threads::<M, CounterClock>(spec, target, &CounterClock, info, pass)
        }
        ClockKind::Monotonic => run_threads::<M, MonoClock>(spec, target, &MonoClock, info, pass),
        #[cfg(test)]
        ClockKind::Mock => {
            run_threads::<M, MockClock>(spec, target, &MockClock::new(100), info, pass)
        }
        #[cfg(not(test))]
        ClockKind::Mock => Err(mock_outside_tests()),
    }
}

/// The mock clock drives the runner in iolab-engine's unit tests only: compiled into them, and not into
/// iolab itself, where it would be a third copy of every method's loops (the calibration never picks it).
#[cfg(not(test))]
pub(super) fn mock_outside_tests() -> Error {
    Error::Runtime("internal: the mock clock runs only in iolab-engine's unit tests".into())
}
