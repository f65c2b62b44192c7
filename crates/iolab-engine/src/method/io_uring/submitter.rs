//! `--ring shared-submitter`: one ring owned by a submitter thread (`iolab-submit`, its CPU reported as a
//! helper task). Workers hand SQEs through a lock-free queue each (crossbeam's bounded `ArrayQueue`) and
//! take completions back from a second queue each. The submitter takes whatever all workers queued since
//! its last pass and submits it in one io_uring_enter, so batches form across threads. When it has nothing
//! to do it sleeps in io_uring_enter waiting for a completion; a multishot poll on an eventfd is in the
//! ring, so a worker that queues work while the submitter sleeps rings that doorbell (one 8-byte write). A
//! worker waiting for a completion sleeps on a futex the submitter wakes. Doorbells and worker sleeps are
//! counted; all of a ring's setup flags apply to the submitter's ring (SINGLE_ISSUER fits: one thread
//! submits).

use super::super::api::{op_err, ThreadCtx};
use super::core::{lock, Core, Enter, Lane};
use super::ring_api::{Design, Own};
use crate::error::{Error, Result};
use crate::result::UringStats;
use crate::spec::RingOpts;
use crossbeam_queue::ArrayQueue;
use io_uring::{cqueue, opcode, squeue, types};
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// user_data of the submitter's doorbell poll.
const DOORBELL: u64 = u64::MAX;

type Control = Box<dyn FnOnce(&mut Core) + Send>;

/// What the submitter thread reports when it stops.
struct SubmitterOut {
    stats: UringStats,
    /// Its syscalls: io_uring_enter calls and futex wakes.
    syscalls: u64,
}

struct Hub {
    lanes: Vec<Lane>,
    threads: u32,
    /// The submitter is (about to be) asleep in io_uring_enter: the next worker to queue work rings.
    sleeping: AtomicBool,
    doorbell: OwnedFd,
    stop: AtomicBool,
    /// Set when the submitter thread has stopped (after an error, or at the end); with `error` saying why.
    gone: AtomicBool,
    error: Mutex<Option<String>>,
    /// Work for the submitter thread outside the I/O path (registering a worker's file and buffers);
    /// `None` once it stopped.
    control: Mutex<Option<Vec<Control>>>,
    thread: Mutex<Option<std::thread::JoinHandle<SubmitterOut>>>,
    out: Mutex<Option<SubmitterOut>>,
    alive: AtomicU32,
    finished: AtomicU32,
}

/// A `Send` wrapper for buffer pointers handed to the submitter thread for registration.
struct BufList(Vec<(*mut u8, usize)>);
// SAFETY: the pointers are only read (to build iovecs for io_uring_register) on the submitter thread while
// the worker that owns the buffers waits for the reply; the buffers outlive their registration.
unsafe impl Send for BufList {}

impl Hub {
    fn start(o: &RingOpts, threads: u32, qd: u32, path: &Path) -> Result<Arc<Hub>> {
        let doorbell = sys::eventfd(0)?;
        let lanes = (0..threads)
            .map(|_| Lane {
                requests: ArrayQueue::new(qd as usize),
                done: ArrayQueue::new(qd as usize),
                waiting: AtomicU32::new(0),
            })
            .collect();
        let hub = Arc::new(Hub {
            lanes,
            threads,
            sleeping: AtomicBool::new(false),
            doorbell,
            stop: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            error: Mutex::new(None),
            control: Mutex::new(Some(Vec::new())),
            thread: Mutex::new(None),
            out: Mutex::new(None),
            alive: AtomicU32::new(0),
            finished: AtomicU32::new(0),
        });
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<()>>(1);
        let (o2, path2, h2) = (o.clone(), path.to_path_buf(), hub.clone());
        let handle = std::thread::Builder::new()
            .name("iolab-submit".into())
            .spawn(move || submitter_main(&h2, &o2, &path2, threads, qd, tx))
            .map_err(|e| {
                crate::budget::thread_failed("the io_uring submitter thread", &e, "lower --threads")
            })?;
        *lock(&hub.thread) = Some(handle);
        match rx.recv() {
            Ok(Ok(())) => Ok(hub),
            Ok(Err(e)) => {
                hub.join();
                Err(e)
            }
            Err(_) => {
                hub.join();
                Err(Error::Runtime(
                    "the io_uring submitter thread failed to start".into(),
                ))
            }
        }
    }

    /// Runs `f` on the submitter thread (which owns the ring) and waits for it.
    fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Core) -> R + Send + 'static,
    ) -> Result<R> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        {
            let mut c = lock(&self.control);
            let Some(list) = c.as_mut() else {
                return Err(self.failure());
            };
            list.push(Box::new(move |core: &mut Core| {
                let _ = tx.send(f(core));
            }));
        }
        sys::eventfd_ring(self.doorbell.as_raw_fd())?;
        rx.recv().map_err(|_| self.failure())
    }

    fn failure(&self) -> Error {
        Error::Runtime(format!(
            "the io_uring submitter thread stopped: {}",
            lock(&self.error)
                .clone()
                .unwrap_or_else(|| "it was shut down".into())
        ))
    }

    /// Stops the submitter after it has drained every request, and keeps what it reports.
    fn join(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = sys::eventfd_ring(self.doorbell.as_raw_fd());
        let handle = lock(&self.thread).take();
        if let Some(h) = handle {
            let out = h.join().unwrap_or(SubmitterOut {
                stats: UringStats::default(),
                syscalls: 0,
            });
            *lock(&self.out) = Some(out);
        }
    }
}

/// The submitter thread's life: make the ring (on this thread, so SINGLE_ISSUER and DEFER_TASKRUN name it
/// as the submitter task), report to `start` through `tx`, then run until stopped.
fn submitter_main(
    hub: &Hub,
    o: &RingOpts,
    path: &Path,
    threads: u32,
    qd: u32,
    tx: std::sync::mpsc::SyncSender<Result<()>>,
) -> SubmitterOut {
    let hist = (threads * qd) as usize;
    let made = Core::new(o, threads * qd, 1, path, hist)
        .and_then(|core| {
            core.register_sparse(threads, qd)?;
            Ok(core)
        })
        .and_then(|mut core| {
            let e = Enter::for_thread(&mut core)?;
            Ok((core, e))
        });
    match made {
        Ok((core, e)) => {
            let _ = tx.send(Ok(()));
            submitter_loop(hub, core, e)
        }
        Err(err) => {
            hub.gone.store(true, Ordering::SeqCst);
            *lock(&hub.control) = None;
            let _ = tx.send(Err(err));
            SubmitterOut {
                stats: UringStats::default(),
                syscalls: 0,
            }
        }
    }
}

/// The submitter thread: gather every lane's requests, submit them together, route completions back,
/// sleep in the kernel when there is nothing to do.
fn submitter_loop(hub: &Hub, mut core: Core, e: Enter) -> SubmitterOut {
    let ru0 = crate::measure::cpu::Rusage::thread();
    let mut syscalls = 0u64;
    if let Err(err) = pump(hub, &mut core, e, &mut syscalls) {
        *lock(&hub.error) = Some(err.to_string());
    }
    e.release();
    // Refuse further control work and wake every worker, so none waits for a completion that will not come.
    *lock(&hub.control) = None;
    hub.gone.store(true, Ordering::SeqCst);
    for lane in &hub.lanes {
        lane.waiting.store(0, Ordering::SeqCst);
        let _ = sys::futex_wake(&lane.waiting, u32::MAX);
    }
    let ru1 = crate::measure::cpu::Rusage::thread();
    core.stats.submitter_cpu = Some(crate::measure::cpu::RusageDelta::between(&ru0, &ru1));
    SubmitterOut {
        syscalls: syscalls + core.stats.enters,
        stats: core.stats(),
    }
}

/// The submitter's passes until it is stopped with nothing in flight (or fails); `syscalls` counts its
/// calls besides the ring's io_uring_enter (doorbell re-arms and futex wakes).
fn pump(hub: &Hub, core: &mut Core, e: Enter, syscalls: &mut u64) -> Result<()> {
    arm_doorbell(hub, core, e)?;
    let mut staged: Vec<squeue::Entry> = Vec::with_capacity((hub.threads as usize) * 64);
    let mut touched = vec![false; hub.lanes.len()];
    loop {
        let work = lock(&hub.control)
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        for f in work {
            f(core);
        }
        for lane in &hub.lanes {
            while let Some(sqe) = lane.requests.pop() {
                staged.push(sqe);
            }
        }
        let submitted = !staged.is_empty();
        if submitted {
            core.push(&mut staged, e)?;
            core.enter(0, e)?;
        }
        // Route completions to their lanes, then wake the workers that sleep on them.
        let (routed, rearm_needed) = route(hub, core, &mut touched);
        if rearm_needed {
            *syscalls += 1;
            arm_doorbell(hub, core, e)?;
        }
        if routed > 0 {
            wake(hub, &mut touched, syscalls)?;
        }
        if submitted || routed > 0 {
            continue;
        }
        let stopping = hub.stop.load(Ordering::SeqCst);
        if stopping && core.in_kernel == 0 {
            return Ok(());
        }
        sleep(hub, core, e, stopping)?;
    }
}

/// Puts the doorbell in the ring and submits it: a multishot poll of the eventfd (5.13+) posts a
/// completion for every write.
fn arm_doorbell(hub: &Hub, core: &mut Core, e: Enter) -> Result<()> {
    let arm = opcode::PollAdd::new(types::Fd(hub.doorbell.as_raw_fd()), libc::POLLIN as u32)
        .multi(true)
        .build()
        .user_data(DOORBELL);
    // SAFETY: the poll references only the eventfd, which the hub keeps open longer than the ring.
    unsafe { core.ring.submission().push(&arm) }
        .map_err(|_| Error::Runtime("io_uring: no room for the doorbell poll".into()))?;
    sys::io_uring_enter(e.fd, 1, 0, e.flags).map_err(|err| op_err(err, &core.path))?;
    Ok(())
}

/// Moves the ring's completions into their workers' lanes, marking those lanes in `touched`. Returns how
/// many it moved, and whether the doorbell's poll ended (it must be armed again).
fn route(hub: &Hub, core: &mut Core, touched: &mut [bool]) -> (u32, bool) {
    let mut routed = 0u32;
    let mut rearm_needed = false;
    for cqe in core.ring.completion() {
        let ud = cqe.user_data();
        if ud == DOORBELL {
            rearm_needed |= !cqueue::more(cqe.flags());
            continue;
        }
        let t = (ud >> 32) as usize;
        // A lane holds at most --qd completions: its worker has no more requests out.
        let _ = hub.lanes[t].done.push((ud as u32, cqe.result()));
        touched[t] = true;
        routed += 1;
    }
    core.in_kernel -= routed.min(core.in_kernel);
    (routed, rearm_needed)
}

/// Wakes the workers asleep on the `touched` lanes (and clears the marks); each wake counts in `syscalls`.
fn wake(hub: &Hub, touched: &mut [bool], syscalls: &mut u64) -> Result<()> {
    fence(Ordering::SeqCst);
    for (t, lane) in hub.lanes.iter().enumerate() {
        if std::mem::take(&mut touched[t]) && lane.waiting.swap(0, Ordering::SeqCst) == 1 {
            *syscalls += 1;
            sys::futex_wake(&lane.waiting, 1)?;
        }
    }
    Ok(())
}

/// Nothing to do: announce the sleep, look once more (a worker that queued before seeing the flag is seen
/// here), then wait in the kernel for a completion or the doorbell. `stopping`: the stop flag as the pass
/// saw it (a stop that came since is work: the pass must run again).
fn sleep(hub: &Hub, core: &mut Core, e: Enter, stopping: bool) -> Result<()> {
    hub.sleeping.store(true, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    let pending = hub.lanes.iter().any(|l| !l.requests.is_empty())
        || lock(&hub.control).as_ref().is_some_and(|c| !c.is_empty())
        || (hub.stop.load(Ordering::SeqCst) && !stopping);
    if !pending {
        core.enter(1, e)?;
    }
    hub.sleeping.store(false, Ordering::SeqCst);
    Ok(())
}

/// A worker's hold on the hub; the last one to let go stops the submitter thread.
struct HubRef(Arc<Hub>);

impl HubRef {
    fn new(h: Arc<Hub>) -> HubRef {
        h.alive.fetch_add(1, Ordering::SeqCst);
        HubRef(h)
    }
}

impl Drop for HubRef {
    fn drop(&mut self) {
        if self.0.alive.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.join();
        }
    }
}

/// The submitter hub as stored in the run's shared slot.
struct HubHolder(Arc<Hub>);

/// One worker's use of the submitter's ring: its lane, and the hold that keeps the submitter running.
pub(super) struct Submitter {
    hub: HubRef,
    /// This thread's number: its lane.
    thread: u32,
    /// The ring's statistics and the submitter thread's syscalls, kept by the thread that finished last.
    totals: Option<(UringStats, u64)>,
}

impl Submitter {
    /// Joins the run's hub (the first thread starts the submitter thread) and has the submitter register
    /// this thread's file at index `ctx.thread`.
    pub(super) fn open(ctx: &ThreadCtx, o: &RingOpts, fd: i32, path: &Path) -> Result<Submitter> {
        let (threads, qd, t) = (ctx.spec.threads, ctx.spec.qd, ctx.thread);
        let hub = ctx
            .shared
            .get_or_init(|| Ok(HubHolder(Hub::start(o, threads, qd, path)?)))?;
        let hub = HubRef::new(hub.0.clone());
        if o.fixed_files {
            hub.0
                .call(move |core: &mut Core| core.register_file(t, fd, true))??;
        }
        Ok(Submitter {
            hub,
            thread: t,
            totals: None,
        })
    }
}

impl Design for Submitter {
    /// Hands the staged SQEs to this thread's lane, rings the doorbell if the submitter sleeps, and sleeps
    /// on the lane's futex until a completion comes back when `min_complete` asks for one.
    #[inline(never)]
    fn commit(
        &mut self,
        staged: &mut Vec<squeue::Entry>,
        min_complete: u32,
        own: &mut Own,
    ) -> Result<()> {
        let hub = &self.hub.0;
        let lane = &hub.lanes[self.thread as usize];
        for sqe in staged.drain(..) {
            // A lane holds --qd requests and the runner never has more out.
            lane.requests
                .push(sqe)
                .map_err(|_| Error::Runtime("io_uring: hand-off queue full".into()))?;
        }
        fence(Ordering::SeqCst);
        if hub.sleeping.load(Ordering::SeqCst) && hub.sleeping.swap(false, Ordering::SeqCst) {
            own.calls += 1;
            own.doorbells += 1;
            sys::eventfd_ring(hub.doorbell.as_raw_fd())?;
        }
        if min_complete > 0 {
            while lane.done.is_empty() {
                if hub.gone.load(Ordering::SeqCst) {
                    return Err(hub.failure());
                }
                lane.waiting.store(1, Ordering::SeqCst);
                if !lane.done.is_empty() || hub.gone.load(Ordering::SeqCst) {
                    lane.waiting.store(0, Ordering::SeqCst);
                    continue;
                }
                own.calls += 1;
                own.worker_sleeps += 1;
                sys::futex_wait(&lane.waiting, 1)?;
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) -> u32 {
        let mut n = 0;
        let lane = &self.hub.0.lanes[self.thread as usize];
        while n < max {
            let Some((slot, res)) = lane.done.pop() else {
                break;
            };
            f(slot, res);
            n += 1;
        }
        n
    }

    /// The submitter thread owns the ring: it registers the buffers while this thread waits.
    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)], base: u32) -> Result<()> {
        let list = BufList(bufs.to_vec());
        self.hub.0.call(move |core: &mut Core| {
            let l = list;
            core.register_bufs(&l.0, base, true)
        })?
    }

    /// The ring outlives this thread's buffers: clear their registration first.
    fn unregister_buffers(&mut self, base: u32, n: usize) {
        let _ = self
            .hub
            .0
            .call(move |core: &mut Core| core.unregister_bufs(base, n));
    }

    /// The thread that finishes last stops the submitter (which has drained every request by then) and
    /// collects the ring's statistics.
    fn finish(&mut self, _own: &mut Own) -> Result<()> {
        let h = &self.hub.0;
        if h.finished.fetch_add(1, Ordering::SeqCst) + 1 == h.threads {
            h.join();
            if let Some(err) = lock(&h.error).clone() {
                return Err(Error::Runtime(format!(
                    "the io_uring submitter thread stopped: {err}"
                )));
            }
            let out = lock(&h.out).take();
            if let Some(o) = out {
                self.totals = Some((o.stats, o.syscalls));
            }
        }
        Ok(())
    }

    fn totals(&self) -> Option<UringStats> {
        self.totals.as_ref().map(|t| t.0.clone())
    }

    /// The submitter thread's syscalls, once collected.
    fn ring_syscalls(&self) -> u64 {
        self.totals.as_ref().map_or(0, |t| t.1)
    }
}
