//! `io_uring` (Linux 5.1+; IORING_OP_READ/WRITE 5.6+; unprivileged unless the sysctl
//! `kernel.io_uring_disabled` says otherwise): `--qd` requests in flight per thread, `--batch` requests per
//! submission. Options, each named after its kernel flag (see `RingOpts`): `--sqpoll` (`--sq-idle-ms`,
//! `--sq-cpu`), `--iopoll`, `--fixed-files`, `--fixed-bufs`, `--coop-taskrun`, `--single-issuer`,
//! `--defer-taskrun`, `--registered-ring`, `--vectored`, and `--ring`, which says who owns the ring:
//!
//! - `per-thread`: each worker thread owns a ring and submits to it (no sharing at all).
//! - `shared`: one ring for all threads, behind one mutex, as the seed course report built it. A thread
//!   holds the mutex while it pushes its batch, calls io_uring_enter, drains the completion queue (routing
//!   every completion to its thread's mailbox by the thread number in user_data) and, when it must wait for
//!   one of its own completions, while it sleeps in io_uring_enter. Times a thread found the mutex taken are
//!   counted (`lock_contended`).
//! - `shared-submitter`: one ring owned by a submitter thread (`iolab-submit`, its CPU reported as a helper
//!   task). Workers hand SQEs through a lock-free queue each (crossbeam's bounded `ArrayQueue`) and take
//!   completions back from a second queue each. The submitter takes whatever all workers queued since its
//!   last pass and submits it in one io_uring_enter, so batches form across threads. When it has nothing to
//!   do it sleeps in io_uring_enter waiting for a completion; a multishot poll on an eventfd is in the ring,
//!   so a worker that queues work while the submitter sleeps rings that doorbell (one 8-byte write). A worker
//!   waiting for a completion sleeps on a futex the submitter wakes. Doorbells and worker sleeps are
//!   counted; all of a ring's setup flags apply to the submitter's ring (SINGLE_ISSUER fits: one thread
//!   submits).
//!
//! iolab makes every io_uring_enter itself (sys::io_uring_enter) so each one is counted with the requests it
//! carried (the exact batch-size histogram) and the requests then in the kernel (the in-flight depth
//! histogram). With SQPOLL a submission needs no syscall while the SQ thread is awake: after publishing the
//! tail, a full fence (SeqCst), then IORING_SQ_NEED_WAKEUP is read (the io-uring crate's `need_wakeup`);
//! only if it is set, or completions are awaited, is io_uring_enter called (with IORING_ENTER_SQ_WAKEUP).
//!
//! The runner keeps each request's buffer untouched from `submit` until `reap` returns its slot.
//! `--fsync` points are plain fsync(2) calls made after the runner has drained the thread's requests.
//!
//! Stream targets: pipes take IORING_OP_WRITE/READ; sockets IORING_OP_SEND/RECV with MSG_WAITALL (the
//! kernel retries a partial transfer, 5.18+). A pipe may still take or give part of a block (a 100 KB
//! write into a 64 KiB pipe); iolab then queues the rest as a new request for the same slot and tells the
//! runner about the op once all its bytes moved, so `requests` counts these continuations too. With --qd above 1 several requests are in flight on one
//! stream, and the kernel does not promise their order: the bytes all arrive (the peer counts them), in
//! an order that may differ from submission order.
//!
//! Buffered writes to ext4/tmpfs usually cannot complete inline and are punted to io-wq worker threads
//! (`iou-wrk-*`); the SQPOLL thread is `iou-sqp-*`: the runner reports both separately.

use super::{op_err, Exec, Flush, Io, Method, MethodInfo, MethodKind, Run, Targets, ThreadCtx};
use crate::error::{Error, Result};
use crate::result::UringStats;
use crate::spec::{RingDesign, RingOpts};
use crate::sys::{self, SysErr};
use crossbeam_queue::ArrayQueue;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Kernel limit on SQ entries (IORING_MAX_ENTRIES) and on registered buffers (IORING_MAX_REG_BUFFERS).
const MAX_ENTRIES: u32 = 32768;
const MAX_REG_BUFFERS: u32 = 16384;
/// user_data of the submitter's doorbell poll.
const DOORBELL: u64 = u64::MAX;

fn io_err(call: &'static str, e: std::io::Error) -> SysErr {
    SysErr::new(call, e.raw_os_error().unwrap_or(libc::EIO))
}

fn setup_hint(o: &RingOpts) -> String {
    let mut flags = Vec::new();
    for (on, name) in [
        (o.sqpoll, "--sqpoll"),
        (o.iopoll, "--iopoll"),
        (o.coop_taskrun, "--coop-taskrun"),
        (o.single_issuer, "--single-issuer"),
        (o.defer_taskrun, "--defer-taskrun"),
    ] {
        if on {
            flags.push(name);
        }
    }
    if flags.is_empty() {
        "the kernel refused the ring parameters: lower --qd".into()
    } else {
        format!("the kernel refused the ring parameters: lower --qd, or drop {} (this kernel may not support it)", flags.join(", "))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How one thread calls io_uring_enter: by ring fd, or by the index IORING_REGISTER_RING_FDS gave this
/// thread (registered ring fds are per task).
#[derive(Clone, Copy)]
struct Enter {
    fd: i32,
    flags: u32,
}

impl Enter {
    fn for_thread(ring: &IoUring, o: &RingOpts) -> Result<Enter> {
        Ok(if o.registered_ring {
            let idx = sys::io_uring_register_ring_fd(ring.as_raw_fd())?;
            Enter {
                fd: idx as i32,
                flags: sys::IORING_ENTER_REGISTERED_RING,
            }
        } else {
            Enter {
                fd: ring.as_raw_fd(),
                flags: 0,
            }
        })
    }
}

/// One ring and its submission bookkeeping, used the same way by all three designs.
struct Core {
    ring: IoUring,
    opts: RingOpts,
    path: PathBuf,
    /// Entries in the SQ the kernel has not taken yet.
    queued: u32,
    /// Requests taken by the kernel and not yet reaped.
    in_kernel: u32,
    stats: UringStats,
}

impl Core {
    /// A ring for `total_qd` requests in flight (all threads together), with room for `extra` more (the
    /// submitter's doorbell), its files and buffers tables sparse with `slots` entries when registered
    /// per thread later.
    fn new(
        o: &RingOpts,
        total_qd: u32,
        extra: u32,
        path: &Path,
        hist_len: usize,
        setup_names: Vec<String>,
    ) -> Result<Core> {
        // SQPOLL: the SQ thread posts completions before it commits the SQ head, so right after reaping a
        // completion the ring can still look full; twice the room keeps pushes from waiting on that.
        let sq = if o.sqpoll { total_qd * 2 } else { total_qd } + extra;
        if sq > MAX_ENTRIES {
            return Err(Error::Runtime(format!(
                "io_uring: {sq} submission queue entries needed (--qd x --threads on one ring) exceed the kernel's {MAX_ENTRIES}: lower --qd or --threads"
            )));
        }
        let entries = sq.next_power_of_two();
        let mut b = IoUring::<squeue::Entry, cqueue::Entry>::builder();
        // The completion queue holds every request that can be in flight at once.
        b.setup_cqsize((2 * entries).max((total_qd + extra).next_power_of_two()));
        if o.sqpoll {
            b.setup_sqpoll(o.sq_idle_ms);
            if let Some(c) = o.sq_cpu {
                b.setup_sqpoll_cpu(c);
            }
        }
        if o.iopoll {
            b.setup_iopoll();
        }
        if o.coop_taskrun {
            b.setup_coop_taskrun();
        }
        if o.single_issuer {
            b.setup_single_issuer();
        }
        if o.defer_taskrun {
            b.setup_defer_taskrun();
        }
        let ring = b.build(entries).map_err(|e| {
            let se = io_err("io_uring_setup", e);
            if se.errno == libc::EINVAL {
                Error::sys_hint(se, setup_hint(o))
            } else {
                Error::from(se)
            }
        })?;
        Ok(Core {
            ring,
            opts: o.clone(),
            path: path.to_path_buf(),
            queued: 0,
            in_kernel: 0,
            stats: UringStats {
                batch_histogram: vec![0; hist_len + 1],
                inflight_histogram: vec![0; hist_len + 1],
                setup: setup_names,
                design: o.design.name().into(),
                ..Default::default()
            },
        })
    }

    /// Moves `staged` SQEs into the submission queue (one tail update per call that finds room).
    fn push(&mut self, staged: &mut Vec<squeue::Entry>, e: Enter) -> Result<()> {
        let mut waits = 0u64;
        while !staged.is_empty() {
            let pushed = {
                let mut sq = self.ring.submission();
                let room = sq.capacity() - sq.len();
                let n = room.min(staged.len());
                // SAFETY: every staged SQE's buffer (and iovec) stays valid and untouched until the runner
                // reaps its slot (Io contract); fds and registered resources live as long as the ring.
                unsafe { sq.push_multiple(&staged[..n]) }
                    .map_err(|_| Error::Runtime("io_uring: no room for staged requests".into()))?;
                n
            };
            staged.drain(..pushed);
            self.queued += pushed as u32;
            if staged.is_empty() {
                break;
            }
            // Without SQPOLL the ring is sized for every request that can be out, so a full queue means
            // the SQ thread has not consumed (or not yet committed its head). Wait for it, waking it if
            // it sleeps.
            if !self.opts.sqpoll || waits > 100_000_000 {
                return Err(Error::Runtime(
                    "io_uring submission queue stayed full (the SQPOLL thread is not consuming)"
                        .into(),
                ));
            }
            if self.ring.submission().need_wakeup() {
                self.stats.enters += 1;
                self.stats.sq_wakeups += 1;
                sys::io_uring_enter(e.fd, 0, 0, e.flags | sys::IORING_ENTER_SQ_WAKEUP)
                    .map_err(|err| op_err(err, &self.path))?;
            }
            // The SQ thread took what it found: those entries are in the kernel now.
            let left = self.ring.submission().len() as u32;
            let taken = self.queued.saturating_sub(left);
            if taken > 0 {
                self.account(taken);
            }
            waits += 1;
            self.stats.sq_full_waits += 1;
            std::hint::spin_loop();
        }
        Ok(())
    }

    /// Hands the queued entries to the kernel and waits for `min_complete` completions (any thread's).
    #[inline]
    fn enter(&mut self, min_complete: u32, e: Enter) -> Result<()> {
        let mut flags = e.flags;
        if min_complete > 0 || self.opts.iopoll || self.opts.defer_taskrun {
            // DEFER_TASKRUN: completions are only posted while the submitter is inside GETEVENTS.
            flags |= sys::IORING_ENTER_GETEVENTS;
        }
        if self.opts.sqpoll {
            // The tail was published (Release) when the push handle dropped. `need_wakeup` is a SeqCst
            // fence then a load of the SQ flags, so a thread that went to sleep cannot be missed.
            let sq = self.ring.submission();
            let wake = sq.need_wakeup();
            let pending_kernel_work = sq.cq_overflow() || sq.taskrun();
            drop(sq);
            if wake {
                flags |= sys::IORING_ENTER_SQ_WAKEUP;
                self.stats.sq_wakeups += 1;
            } else if min_complete == 0 && !pending_kernel_work {
                // The SQ thread is awake and will take the entries: no syscall.
                self.stats.submissions_without_syscall += 1;
                let n = self.queued;
                self.account(n);
                return Ok(());
            }
        }
        loop {
            self.stats.enters += 1;
            let to_submit = if self.opts.sqpoll { 0 } else { self.queued };
            match sys::io_uring_enter(e.fd, to_submit, min_complete, flags) {
                Ok(taken) => {
                    let taken = if self.opts.sqpoll {
                        self.queued
                    } else {
                        taken.min(self.queued)
                    };
                    self.account(taken);
                    if self.queued == 0 {
                        return Ok(());
                    }
                }
                Err(err)
                    if err.errno == libc::EINTR
                        || err.errno == libc::EAGAIN
                        || err.errno == libc::EBUSY =>
                {
                    continue
                }
                Err(err) => return Err(op_err(err, &self.path)),
            }
        }
    }

    /// `taken` queued requests passed to the kernel by one submission (with or without a syscall).
    fn account(&mut self, taken: u32) {
        self.queued -= taken;
        self.in_kernel += taken;
        self.stats.requests += taken as u64;
        let h = &mut self.stats.batch_histogram;
        let i = (taken as usize).min(h.len() - 1);
        h[i] += 1;
        let d = &mut self.stats.inflight_histogram;
        let j = (self.in_kernel as usize).min(d.len() - 1);
        d[j] += 1;
    }

    /// Registers buffers at `offset` of a sparse table (or as the whole table with `sparse == false`).
    fn register_bufs(&self, bufs: &[(*mut u8, usize)], offset: u32, sparse: bool) -> Result<()> {
        let iov: Vec<libc::iovec> = bufs
            .iter()
            .map(|&(p, l)| libc::iovec {
                iov_base: p.cast(),
                iov_len: l,
            })
            .collect();
        let total: usize = bufs.iter().map(|b| b.1).sum();
        let r = if sparse {
            // SAFETY: the buffers are owned by the runner and stay valid while registered: the worker that
            // owns them clears its slots (`unregister_bufs`) before it frees them.
            unsafe {
                self.ring
                    .submitter()
                    .register_buffers_update(offset, &iov, None)
            }
        } else {
            // SAFETY: as above; a per-thread ring is dropped (unregistering them) before its buffers.
            unsafe { self.ring.submitter().register_buffers(&iov) }
        };
        r.map_err(|e| {
            let se = io_err("io_uring_register(BUFFERS)", e);
            match (se.errno, sys::memlock_limit()) {
                (libc::ENOMEM, Some(lim)) | (libc::EFAULT, Some(lim)) => Error::sys_hint(
                    se,
                    format!(
                        "registering {} of buffers (--qd x --bs) exceeds RLIMIT_MEMLOCK ({}): lower --qd or --bs, or run as root",
                        crate::units::fmt_size(total as u64),
                        crate::units::fmt_size(lim)
                    ),
                ),
                _ => Error::from(se),
            }
        })
    }

    /// Clears `n` registered buffer slots from `offset` (a worker leaving a shared ring).
    fn unregister_bufs(&self, offset: u32, n: usize) {
        let empty = vec![
            libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0
            };
            n
        ];
        // SAFETY: null, zero-length iovecs clear the slots; no memory is referenced.
        let _ = unsafe {
            self.ring
                .submitter()
                .register_buffers_update(offset, &empty, None)
        };
    }

    fn register_file(&self, index: u32, fd: i32, sparse: bool) -> Result<()> {
        let r = if sparse {
            self.ring
                .submitter()
                .register_files_update(index, &[fd])
                .map(|_| ())
        } else {
            self.ring.submitter().register_files(&[fd])
        };
        r.map_err(|e| op_err(io_err("io_uring_register(FILES)", e), &self.path))
    }

    /// Makes the sparse file and buffer tables a shared ring's threads fill in.
    fn register_sparse(&self, threads: u32, qd: u32) -> Result<()> {
        if self.opts.fixed_files {
            self.ring
                .submitter()
                .register_files_sparse(threads)
                .map_err(|e| op_err(io_err("io_uring_register(FILES_SPARSE)", e), &self.path))?;
        }
        if self.opts.fixed_bufs {
            self.ring
                .submitter()
                .register_buffers_sparse(threads * qd)
                .map_err(|e| op_err(io_err("io_uring_register(BUFFERS_SPARSE)", e), &self.path))?;
        }
        Ok(())
    }
}

fn setup_names(o: &RingOpts) -> Vec<String> {
    let mut setup = Vec::new();
    for (on, name) in [
        (o.sqpoll, "SQPOLL"),
        (o.sq_cpu.is_some(), "SQ_AFF"),
        (o.iopoll, "IOPOLL"),
        (o.coop_taskrun, "COOP_TASKRUN"),
        (o.single_issuer, "SINGLE_ISSUER"),
        (o.defer_taskrun, "DEFER_TASKRUN"),
        (o.fixed_files, "REGISTER_FILES"),
        (o.fixed_bufs, "REGISTER_BUFFERS"),
        (o.registered_ring, "REGISTER_RING_FDS"),
        (o.nop_requests, "OP_NOP"),
    ] {
        if on {
            setup.push(name.to_string());
        }
    }
    setup
}

// ---------------------------------------------------------------------------------------------------
// --ring shared: one ring, one mutex.

struct SharedInner {
    core: Core,
    /// Completions reaped by any thread, per owning thread: (slot, result).
    mail: Vec<Vec<(u32, i32)>>,
}

struct SharedRing {
    inner: Mutex<SharedInner>,
    threads: u32,
    finished: AtomicU32,
}

impl SharedRing {
    /// Takes the mutex, counting the times another thread held it.
    fn lock(&self, contended: &mut u64) -> MutexGuard<'_, SharedInner> {
        match self.inner.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::WouldBlock) => {
                *contended += 1;
                lock(&self.inner)
            }
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        }
    }
}

impl SharedInner {
    /// Drains the completion queue into the owners' mailboxes.
    fn route(&mut self) {
        let mut n = 0;
        for cqe in self.core.ring.completion() {
            let ud = cqe.user_data();
            self.mail[(ud >> 32) as usize].push((ud as u32, cqe.result()));
            n += 1;
        }
        self.core.in_kernel -= n.min(self.core.in_kernel);
    }
}

// ---------------------------------------------------------------------------------------------------
// --ring shared-submitter: one ring owned by a submitter thread, lock-free hand-off queues.

/// One worker's two queues and the futex word it sleeps on (1 = asleep or about to sleep).
struct Lane {
    requests: ArrayQueue<squeue::Entry>,
    done: ArrayQueue<(u32, i32)>,
    waiting: AtomicU32,
}

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
            .spawn(move || {
                let hist = (threads * qd) as usize;
                // The ring is made on this thread, so SINGLE_ISSUER and DEFER_TASKRUN name it as the
                // submitter task.
                let made = Core::new(&o2, threads * qd, 1, &path2, hist, setup_names(&o2))
                    .and_then(|core| {
                        core.register_sparse(threads, qd)?;
                        Ok(core)
                    })
                    .and_then(|core| {
                        let e = Enter::for_thread(&core.ring, &core.opts)?;
                        Ok((core, e))
                    });
                match made {
                    Ok((core, e)) => {
                        let _ = tx.send(Ok(()));
                        submitter_loop(&h2, core, e)
                    }
                    Err(err) => {
                        h2.gone.store(true, Ordering::SeqCst);
                        *lock(&h2.control) = None;
                        let _ = tx.send(Err(err));
                        SubmitterOut {
                            stats: UringStats::default(),
                            syscalls: 0,
                        }
                    }
                }
            })
            .map_err(|e| {
                Error::Runtime(format!("cannot start the io_uring submitter thread: {e}"))
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

/// The submitter thread: gather every lane's requests, submit them together, route completions back,
/// sleep in the kernel when there is nothing to do.
fn submitter_loop(hub: &Hub, mut core: Core, e: Enter) -> SubmitterOut {
    let ru0 = crate::measure::cpu::Rusage::thread();
    let mut syscalls = 0u64;
    let r = (|| -> Result<()> {
        // The doorbell: a multishot poll of the eventfd (5.13+) posts a completion for every write.
        let arm = opcode::PollAdd::new(types::Fd(hub.doorbell.as_raw_fd()), libc::POLLIN as u32)
            .multi(true)
            .build()
            .user_data(DOORBELL);
        let rearm = |core: &mut Core, calls: &mut u64| -> Result<()> {
            // SAFETY: the poll references only the eventfd, which the hub keeps open longer than the ring.
            unsafe { core.ring.submission().push(&arm) }
                .map_err(|_| Error::Runtime("io_uring: no room for the doorbell poll".into()))?;
            *calls += 1;
            sys::io_uring_enter(e.fd, 1, 0, e.flags).map_err(|err| op_err(err, &core.path))?;
            Ok(())
        };
        let mut setup_calls = 0;
        rearm(&mut core, &mut setup_calls)?;
        let mut staged: Vec<squeue::Entry> = Vec::with_capacity((hub.threads as usize) * 64);
        let mut touched = vec![false; hub.lanes.len()];
        loop {
            let work = lock(&hub.control)
                .as_mut()
                .map(std::mem::take)
                .unwrap_or_default();
            for f in work {
                f(&mut core);
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
            if rearm_needed {
                rearm(&mut core, &mut syscalls)?;
            }
            if routed > 0 {
                fence(Ordering::SeqCst);
                for (t, lane) in hub.lanes.iter().enumerate() {
                    if std::mem::take(&mut touched[t])
                        && lane.waiting.swap(0, Ordering::SeqCst) == 1
                    {
                        syscalls += 1;
                        sys::futex_wake(&lane.waiting, 1)?;
                    }
                }
            }
            if submitted || routed > 0 {
                continue;
            }
            let stopping = hub.stop.load(Ordering::SeqCst);
            if stopping && core.in_kernel == 0 {
                return Ok(());
            }
            // Nothing to do: announce the sleep, look once more (a worker that queued before seeing the
            // flag is seen here), then wait in the kernel for a completion or the doorbell.
            hub.sleeping.store(true, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            let pending = hub.lanes.iter().any(|l| !l.requests.is_empty())
                || lock(&hub.control).as_ref().is_some_and(|c| !c.is_empty())
                || (hub.stop.load(Ordering::SeqCst) && !stopping);
            if !pending {
                core.enter(1, e)?;
            }
            hub.sleeping.store(false, Ordering::SeqCst);
        }
    })();
    if let Err(err) = r {
        *lock(&hub.error) = Some(err.to_string());
    }
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
        stats: core.stats,
    }
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

// ---------------------------------------------------------------------------------------------------
// The method.

// One per worker thread: the per-thread ring stays inline (no pointer chase on the hot path).
#[allow(clippy::large_enum_variant)]
enum Mode {
    PerThread {
        core: Core,
        enter: Enter,
    },
    Shared {
        ring: Arc<SharedRing>,
        enter: Enter,
        /// This thread's completions taken from its mailbox, handed out by `reap`.
        local: Vec<(u32, i32)>,
    },
    Submitter {
        hub: HubRef,
    },
    /// The worker fills its own ring; a consumer thread waits for completions and hands them back.
    ProducerConsumer {
        /// Boxed: the consumer thread holds the ring's address, which must not move with `Uring`.
        core: Box<Core>,
        enter: Enter,
        pc: Consumer,
    },
}

pub struct Uring {
    mode: Mode,
    fd: OwnedFd,
    opts: RingOpts,
    /// How this thread's SQEs are built.
    sqes: SqeShape,
    /// A stream target: partial transfers are finished by continuation requests (see `settle`).
    stream: bool,
    /// Streams: per slot, the op's buffer, its length and the bytes moved so far.
    parts: Vec<(*mut u8, u32, u32)>,
    /// Streams: continuation requests queued for partial transfers.
    continuations: u64,
    reaped: Vec<(u32, i32)>,
    path: PathBuf,
    thread: u32,
    qd: u32,
    /// SQEs built by `submit`, handed over in one go at `commit`.
    staged: Vec<squeue::Entry>,
    /// Syscalls this thread made besides those in a per-thread ring's stats (fsync; shared: its own
    /// io_uring_enter calls; submitter: doorbells and futex sleeps).
    own_calls: u64,
    /// This thread's share of the statistics of a shared ring (mutex waits, sleeps, doorbells).
    mine: UringStats,
    /// Shared designs: the whole ring's statistics and the submitter's syscalls, kept by the thread that
    /// finished last.
    ring_totals: Option<(UringStats, u64)>,
}

// SAFETY: the iovecs only point into the runner's buffers (owned by the same worker thread); the ring, fd
// and queues are owned or shared through Arc/Mutex/atomics; SQEs hold plain addresses.
unsafe impl Send for Uring {}

impl Method for Uring {
    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let o = ctx.spec.ring.clone();
        let qd = ctx.spec.qd;
        let threads = ctx.spec.threads;
        let t = ctx.thread;
        let fd = ctx.target.open_for(ctx.spec, false)?;
        let path = ctx.target.path.clone();
        if o.fixed_bufs && o.design != RingDesign::PerThread && threads * qd > MAX_REG_BUFFERS {
            return Err(Error::Runtime(format!(
                "io_uring --fixed-bufs on one shared ring registers --qd x --threads = {} buffers; the kernel allows {MAX_REG_BUFFERS}",
                threads * qd
            )));
        }
        let (mode, file_index, buf_base) = match o.design {
            RingDesign::PerThread => {
                let core = Core::new(&o, qd, 0, &path, qd as usize, setup_names(&o))?;
                if o.fixed_files {
                    core.register_file(0, fd.as_raw_fd(), false)?;
                }
                let enter = Enter::for_thread(&core.ring, &o)?;
                (Mode::PerThread { core, enter }, 0, 0)
            }
            RingDesign::Shared => {
                let ring = ctx.shared.get_or_init(|| {
                    let total = threads * qd;
                    let core = Core::new(&o, total, 0, &path, total as usize, setup_names(&o))?;
                    core.register_sparse(threads, qd)?;
                    Ok(SharedRing {
                        inner: Mutex::new(SharedInner {
                            core,
                            mail: vec![Vec::with_capacity(qd as usize); threads as usize],
                        }),
                        threads,
                        finished: AtomicU32::new(0),
                    })
                })?;
                let enter = {
                    let g = lock(&ring.inner);
                    if o.fixed_files {
                        g.core.register_file(t, fd.as_raw_fd(), true)?;
                    }
                    Enter::for_thread(&g.core.ring, &o)?
                };
                (
                    Mode::Shared {
                        ring,
                        enter,
                        local: Vec::with_capacity(qd as usize),
                    },
                    t,
                    t * qd,
                )
            }
            RingDesign::SharedSubmitter => {
                let hub = ctx
                    .shared
                    .get_or_init(|| Ok(HubHolder(Hub::start(&o, threads, qd, &path)?)))?;
                let hub = HubRef::new(hub.0.clone());
                if o.fixed_files {
                    let raw = fd.as_raw_fd();
                    hub.0
                        .call(move |core: &mut Core| core.register_file(t, raw, true))??;
                }
                (Mode::Submitter { hub }, t, t * qd)
            }
            RingDesign::ProducerConsumer => {
                let core = Box::new(Core::new(&o, qd, 0, &path, qd as usize, setup_names(&o))?);
                if o.fixed_files {
                    core.register_file(0, fd.as_raw_fd(), false)?;
                }
                let enter = Enter::for_thread(&core.ring, &o)?;
                let pc = Consumer::start(&core.ring, qd, t)?;
                (Mode::ProducerConsumer { core, enter, pc }, 0, 0)
            }
        };
        let sqes = SqeShape {
            write: ctx.writes(),
            positionless: ctx.positionless(),
            socket: matches!(
                ctx.target.kind,
                crate::target::TargetKind::Socketpair | crate::target::TargetKind::Tcp
            ),
            nop: o.nop_requests,
            fixed_bufs: o.fixed_bufs,
            vectored: o.vectored,
            fixed_files: o.fixed_files,
            fd: fd.as_raw_fd(),
            file_index,
            buf_base,
            tag: (t as u64) << 32,
            iovecs: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                qd as usize
            ],
        };
        Ok(Uring {
            mode,
            fd,
            sqes,
            stream: ctx.target.kind.is_stream(),
            parts: vec![(std::ptr::null_mut(), 0, 0); qd as usize],
            continuations: 0,
            reaped: Vec::with_capacity(qd as usize),
            path,
            thread: t,
            qd,
            staged: Vec::with_capacity(qd as usize),
            own_calls: 0,
            mine: UringStats::default(),
            ring_totals: None,
            opts: o,
        })
    }

    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)]) -> Result<()> {
        if !self.opts.fixed_bufs {
            return Ok(());
        }
        let base = self.sqes.buf_base;
        match &self.mode {
            Mode::PerThread { core, .. } => core.register_bufs(bufs, 0, false),
            Mode::ProducerConsumer { core, .. } => core.register_bufs(bufs, 0, false),
            Mode::Shared { ring, .. } => lock(&ring.inner).core.register_bufs(bufs, base, true),
            Mode::Submitter { hub } => {
                let list = BufList(bufs.to_vec());
                hub.0.call(move |core: &mut Core| {
                    let l = list;
                    core.register_bufs(&l.0, base, true)
                })?
            }
        }
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        if self.stream {
            self.parts[io.slot as usize] = (io.buf, io.len as u32, 0);
        }
        self.submit_round(std::slice::from_ref(io)).1.map(|_| 0)
    }

    /// A per-thread ring without SQPOLL takes the round's SQEs straight into its SQ, built in one tight
    /// loop (the kernel sees nothing before the io_uring_enter of `commit`; with SQPOLL, publishing the
    /// tail would hand requests over early, so they are staged until `commit`).
    #[inline(always)]
    fn submit_round(&mut self, ios: &[Io]) -> (usize, Result<()>) {
        if self.stream {
            for io in ios {
                self.parts[io.slot as usize] = (io.buf, io.len as u32, 0);
            }
        }
        let Uring {
            mode,
            sqes,
            staged,
            opts,
            ..
        } = self;
        if let Mode::PerThread { core, .. } = mode {
            if !opts.sqpoll && staged.is_empty() {
                let mut sq = core.ring.submission();
                if sq.capacity() - sq.len() >= ios.len() {
                    sqes.build_round(ios, |sqe| {
                        // SAFETY: as in `Core::push`: the buffer (and iovec) stays valid and untouched
                        // until the runner reaps this slot; fds and registered resources live as long
                        // as the ring. There is room (checked above), so nothing is dropped.
                        if unsafe { sq.push(&sqe) }.is_err() {
                            staged.push(sqe);
                        }
                    });
                    drop(sq);
                    core.queued += (ios.len() - staged.len()) as u32;
                    return (ios.len(), Ok(()));
                }
            }
        }
        sqes.build_round(ios, |sqe| staged.push(sqe));
        (ios.len(), Ok(()))
    }

    fn commit(&mut self, min_complete: u32) -> Result<()> {
        match &mut self.mode {
            Mode::PerThread { core, enter } => {
                if !self.staged.is_empty() {
                    core.push(&mut self.staged, *enter)?;
                }
                core.enter(min_complete, *enter)
            }
            Mode::Shared { ring, enter, local } => {
                let mut g = ring.lock(&mut self.mine.lock_contended);
                let inner = &mut *g;
                let before = inner.core.stats.enters;
                let r = (|| -> Result<()> {
                    inner.core.push(&mut self.staged, *enter)?;
                    if inner.core.queued > 0 {
                        inner.core.enter(0, *enter)?;
                    }
                    loop {
                        inner.route();
                        local.append(&mut inner.mail[self.thread as usize]);
                        if local.len() >= min_complete as usize {
                            return Ok(());
                        }
                        // Wait (holding the mutex, as the report's design does) for any completion; one
                        // of ours is in flight, so one will come.
                        inner.core.enter(1, *enter)?;
                    }
                })();
                self.own_calls += inner.core.stats.enters - before;
                r
            }
            Mode::ProducerConsumer { core, enter, pc } => {
                if !self.staged.is_empty() {
                    core.push(&mut self.staged, *enter)?;
                }
                // Submission only: the consumer thread does the waiting for completions.
                if core.queued > 0 {
                    core.enter(0, *enter)?;
                }
                if min_complete > 0 {
                    pc.wait(&mut self.own_calls, &mut self.mine.worker_sleeps)?;
                }
                Ok(())
            }
            Mode::Submitter { hub } => {
                let hub = &hub.0;
                let lane = &hub.lanes[self.thread as usize];
                for sqe in self.staged.drain(..) {
                    // A lane holds --qd requests and the runner never has more out.
                    lane.requests
                        .push(sqe)
                        .map_err(|_| Error::Runtime("io_uring: hand-off queue full".into()))?;
                }
                fence(Ordering::SeqCst);
                if hub.sleeping.load(Ordering::SeqCst) && hub.sleeping.swap(false, Ordering::SeqCst)
                {
                    self.own_calls += 1;
                    self.mine.doorbells += 1;
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
                        self.own_calls += 1;
                        self.mine.worker_sleeps += 1;
                        sys::futex_wait(&lane.waiting, 1)?;
                    }
                }
                Ok(())
            }
        }
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) -> u32 {
        if !self.stream {
            return self.reap_raw(f);
        }
        let mut got = std::mem::take(&mut self.reaped);
        self.reap_raw(|slot, res| got.push((slot, res)));
        let before = self.continuations;
        let n = got.len() as u64;
        for (slot, res) in got.drain(..) {
            self.settle(slot, res, &mut f);
        }
        self.reaped = got;
        (n - (self.continuations - before)) as u32
    }

    fn unsubmitted(&self) -> u32 {
        let in_sq = match &self.mode {
            Mode::PerThread { core, .. } => core.queued,
            Mode::ProducerConsumer { core, .. } => core.queued,
            _ => 0,
        };
        self.staged.len() as u32 + in_sq
    }

    fn expected_result(&self, len: usize) -> i32 {
        if self.opts.nop_requests {
            0
        } else {
            len as i32
        }
    }

    fn describe_failure(&self, errno: i32) -> Option<String> {
        (self.opts.iopoll && errno == libc::EOPNOTSUPP).then(|| {
            format!(
                "IOPOLL unsupported by this device/file ({}): completions fail with EOPNOTSUPP (no poll queues); \
                 run without --iopoll",
                self.path.display()
            )
        })
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        self.own_calls += 1;
        sys::fsync(self.fd.as_raw_fd()).map_err(|e| op_err(e, &self.path))
    }

    /// The thread that finishes last collects the shared ring's statistics (after stopping the submitter,
    /// which has drained every request by then).
    fn finish(&mut self) -> Result<()> {
        match &mut self.mode {
            Mode::PerThread { .. } => {}
            Mode::ProducerConsumer { core, pc, .. } => {
                let calls = pc.stop(&core.path)?;
                self.own_calls += calls;
            }
            Mode::Shared { ring, .. } => {
                if ring.finished.fetch_add(1, Ordering::SeqCst) + 1 == ring.threads {
                    let g = lock(&ring.inner);
                    self.ring_totals = Some((g.core.stats.clone(), 0));
                }
            }
            Mode::Submitter { hub } => {
                let h = &hub.0;
                if h.finished.fetch_add(1, Ordering::SeqCst) + 1 == h.threads {
                    h.join();
                    if let Some(err) = lock(&h.error).clone() {
                        return Err(Error::Runtime(format!(
                            "the io_uring submitter thread stopped: {err}"
                        )));
                    }
                    let out = lock(&h.out).take();
                    if let Some(o) = out {
                        self.ring_totals = Some((o.stats, o.syscalls));
                    }
                }
            }
        }
        Ok(())
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(match &self.mode {
            Mode::PerThread { core, .. } => core.stats.enters + self.own_calls,
            Mode::ProducerConsumer { core, .. } => core.stats.enters + self.own_calls,
            _ => self.own_calls + self.ring_totals.as_ref().map_or(0, |r| r.1),
        })
    }

    fn submissions(&self) -> Option<(u64, u64)> {
        match &self.mode {
            Mode::PerThread { core, .. } => Some((core.stats.enters, core.stats.requests)),
            Mode::ProducerConsumer { core, .. } => Some((core.stats.enters, core.stats.requests)),
            _ => self
                .ring_totals
                .as_ref()
                .map(|(s, _)| (s.enters, s.requests)),
        }
    }

    fn stats(&self) -> super::MethodStats {
        super::MethodStats {
            uring: self.uring_stats(),
            ..Default::default()
        }
    }
}

impl Uring {
    fn uring_stats(&self) -> Option<UringStats> {
        match &self.mode {
            Mode::PerThread { core, .. } => Some(core.stats.clone()),
            Mode::ProducerConsumer { core, .. } => {
                let mut st = core.stats.clone();
                st.worker_sleeps += self.mine.worker_sleeps;
                Some(st)
            }
            // Every thread reports its own waits; the last one adds the ring's totals.
            _ => {
                let mut s = match &self.ring_totals {
                    Some((t, _)) => t.clone(),
                    None => UringStats {
                        design: self.opts.design.name().into(),
                        setup: setup_names(&self.opts),
                        ..Default::default()
                    },
                };
                s.lock_contended += self.mine.lock_contended;
                s.worker_sleeps += self.mine.worker_sleeps;
                s.doorbells += self.mine.doorbells;
                Some(s)
            }
        }
    }
}

/// What a thread's SQEs look like (kept apart from the ring so a round can be built straight into the SQ).
struct SqeShape {
    write: bool,
    positionless: bool,
    /// A socket target: IORING_OP_SEND/RECV with MSG_WAITALL, so the kernel finishes a partial transfer.
    socket: bool,
    nop: bool,
    fixed_bufs: bool,
    vectored: bool,
    fixed_files: bool,
    /// The thread's target fd (owned by `Uring::fd`).
    fd: i32,
    /// Fixed-file index of this thread's target fd, and fixed-buffer index of its slot 0.
    file_index: u32,
    buf_base: u32,
    /// This thread's number in the high half of user_data (shared rings route completions by it).
    tag: u64,
    /// One iovec per slot for --vectored (pointing into the runner's buffer while the request is in flight).
    iovecs: Vec<libc::iovec>,
}

impl SqeShape {
    /// The SQE for `len` bytes at `buf` (inside slot `slot`'s buffer) at file offset `offset`.
    #[inline(always)]
    fn build(&mut self, slot: u32, buf: *mut u8, len: u32, offset: u64) -> squeue::Entry {
        let mut out = None;
        let io = Io {
            slot,
            offset,
            buf,
            len: len as usize,
        };
        self.build_round(std::slice::from_ref(&io), |e| out = Some(e));
        out.expect("one request gives one SQE")
    }

    /// Hands `sink` the SQE of each request of `ios`, in order. The opcode (and fd kind) is chosen once per
    /// round, so each loop builds one kind of SQE with no per-request branching on the options.
    #[inline(always)]
    fn build_round(&mut self, ios: &[Io], mut sink: impl FnMut(squeue::Entry)) {
        let tag = self.tag;
        // Devices that ignore the position get offset 0, as the io_uring documentation asks.
        let positional = !self.positionless;
        let off = |io: &Io| if positional { io.offset } else { 0 };
        let base = self.buf_base;
        let write = self.write;
        macro_rules! each {
            (|$io:ident| $e:expr) => {
                for $io in ios {
                    sink(($e).user_data(tag | $io.slot as u64));
                }
            };
        }
        // The write or the read opcode of a pair, with the same arguments.
        macro_rules! by_dir {
            ($w:ident / $r:ident, |$io:ident| $($rest:tt)*) => {
                if write {
                    each!(|$io| opcode::$w::new $($rest)*)
                } else {
                    each!(|$io| opcode::$r::new $($rest)*)
                }
            };
        }
        macro_rules! ops {
            ($fd:expr) => {{
                let fd = $fd;
                if self.fixed_bufs {
                    by_dir!(WriteFixed / ReadFixed, |io| (
                        fd,
                        io.buf,
                        io.len as u32,
                        (base + io.slot) as u16
                    )
                        .offset(off(io))
                        .build())
                } else if self.vectored {
                    let iov = &mut self.iovecs;
                    each!(|io| {
                        let v = &mut iov[io.slot as usize];
                        v.iov_base = io.buf.cast();
                        v.iov_len = io.len;
                        if write {
                            opcode::Writev::new(fd, v, 1).offset(off(io)).build()
                        } else {
                            opcode::Readv::new(fd, v, 1).offset(off(io)).build()
                        }
                    })
                } else if self.socket {
                    by_dir!(Send / Recv, |io| (fd, io.buf, io.len as u32)
                        .flags(libc::MSG_WAITALL)
                        .build())
                } else {
                    by_dir!(Write / Read, |io| (fd, io.buf, io.len as u32)
                        .offset(off(io))
                        .build())
                }
            }};
        }
        if self.nop {
            each!(|io| opcode::Nop::new().build())
        } else if self.fixed_files {
            ops!(types::Fixed(self.file_index))
        } else {
            ops!(types::Fd(self.fd))
        }
    }
}

impl Uring {
    /// Hands every completion the ring (or this thread's mailbox or lane) holds to `f`.
    #[inline(always)]
    fn reap_raw<F: FnMut(u32, i32)>(&mut self, mut f: F) -> u32 {
        let mut n = 0;
        match &mut self.mode {
            Mode::PerThread { core, .. } => {
                for cqe in core.ring.completion() {
                    f(cqe.user_data() as u32, cqe.result());
                    n += 1;
                }
                core.in_kernel -= n.min(core.in_kernel);
            }
            Mode::Shared { local, .. } => {
                for (slot, res) in local.drain(..) {
                    f(slot, res);
                    n += 1;
                }
            }
            Mode::Submitter { hub } => {
                while let Some((slot, res)) = hub.0.lanes[self.thread as usize].done.pop() {
                    f(slot, res);
                    n += 1;
                }
            }
            Mode::ProducerConsumer { core, pc, .. } => {
                while let Some((slot, res)) = pc.lane.done.pop() {
                    f(slot, res);
                    n += 1;
                }
                core.in_kernel -= n.min(core.in_kernel);
            }
        }
        n
    }

    /// Streams: a completion that moved part of its slot's bytes queues the rest as a new request for the
    /// same slot; the runner hears of the slot once, when all its bytes moved (or at an error or end of
    /// stream, with the bytes moved so far).
    #[inline(always)]
    fn settle<F: FnMut(u32, i32)>(&mut self, slot: u32, res: i32, f: &mut F) {
        if !self.stream {
            return f(slot, res);
        }
        let (buf, len, done) = self.parts[slot as usize];
        if res > 0 && done + (res as u32) < len {
            let d = done + res as u32;
            self.parts[slot as usize].2 = d;
            self.continuations += 1;
            // SAFETY: d < len, so the pointer stays inside the slot's buffer.
            let rest = unsafe { buf.add(d as usize) };
            let sqe = self.sqes.build(slot, rest, len - d, 0);
            self.staged.push(sqe);
            return;
        }
        self.parts[slot as usize].2 = 0;
        f(slot, if res >= 0 { done as i32 + res } else { res });
    }
}

/// How long the consumer thread sleeps in one wait before it looks at its stop flag.
const CONSUMER_WAIT_NS: u64 = 50_000_000;

/// The completion side of a producer-consumer ring: a thread (`iolab-reap-N`, its CPU in the process
/// figures) that sleeps in io_uring_enter(GETEVENTS) until a completion arrives (or 50 ms pass), moves
/// every completion into the worker's lock-free queue, and wakes the worker (futex) when it waits for one.
/// It submits nothing; the worker alone fills the submission queue.
struct Consumer {
    lane: Arc<Lane>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<std::result::Result<u64, SysErr>>>,
}

/// The ring as the consumer thread sees it: only its completion queue is touched there.
struct RingRef(*const IoUring);
// SAFETY: the consumer thread reads only the completion queue (the worker never does, in this design) and
// is joined (`Consumer::stop`, called by `finish` and by Uring's Drop) before the ring it points to (boxed,
// so it does not move) is dropped.
unsafe impl Send for RingRef {}

impl Consumer {
    fn start(ring: &IoUring, qd: u32, t: u32) -> Result<Consumer> {
        let lane = Arc::new(Lane {
            requests: ArrayQueue::new(1),
            done: ArrayQueue::new(qd as usize),
            waiting: AtomicU32::new(0),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (l, st) = (lane.clone(), stop.clone());
        let r = RingRef(ring as *const IoUring);
        let thread = std::thread::Builder::new()
            .name(format!("iolab-reap-{t}"))
            .spawn(move || {
                let r = r;
                // SAFETY: see RingRef: the ring outlives this thread, and only this thread uses its CQ.
                let ring = unsafe { &*r.0 };
                let fd = ring.as_raw_fd();
                let mut calls = 0u64;
                let fail = |l: &Lane, e: SysErr| {
                    // Wake the worker so it sees the failure instead of sleeping forever.
                    l.waiting.store(2, Ordering::SeqCst);
                    let _ = sys::futex_wake(&l.waiting, 1);
                    Err(e)
                };
                loop {
                    let mut got = 0;
                    // SAFETY: this thread is the only one touching the completion queue.
                    for cqe in unsafe { ring.completion_shared() } {
                        // The worker never has more than --qd requests out, so there is room.
                        let _ = l.done.push((cqe.user_data() as u32, cqe.result()));
                        got += 1;
                    }
                    if got > 0 && l.waiting.swap(0, Ordering::SeqCst) == 1 {
                        calls += 1;
                        if let Err(e) = sys::futex_wake(&l.waiting, 1) {
                            return fail(&l, e);
                        }
                    }
                    if st.load(Ordering::SeqCst) {
                        return Ok(calls);
                    }
                    calls += 1;
                    match sys::io_uring_wait_timeout(fd, 1, CONSUMER_WAIT_NS) {
                        Ok(_) => {}
                        Err(e) if e.errno == libc::EINTR || e.errno == libc::EAGAIN => {}
                        Err(e) => return fail(&l, e),
                    }
                }
            })
            .map_err(|e| {
                Error::Runtime(format!("cannot start the io_uring consumer thread: {e}"))
            })?;
        Ok(Consumer {
            lane,
            stop,
            thread: Some(thread),
        })
    }

    /// Sleeps until the consumer has handed back at least one completion.
    fn wait(&self, calls: &mut u64, sleeps: &mut u64) -> Result<()> {
        let l = &self.lane;
        while l.done.is_empty() {
            if l.waiting.load(Ordering::SeqCst) == 2 {
                return Err(Error::Runtime(
                    "the io_uring consumer thread stopped (io_uring_enter failed)".into(),
                ));
            }
            l.waiting.store(1, Ordering::SeqCst);
            if !l.done.is_empty() {
                l.waiting.store(0, Ordering::SeqCst);
                continue;
            }
            *calls += 1;
            *sleeps += 1;
            sys::futex_wait(&l.waiting, 1)?;
        }
        Ok(())
    }

    /// Stops and joins the consumer (within one 50 ms wait); returns its syscalls.
    fn stop(&mut self, path: &Path) -> Result<u64> {
        let Some(h) = self.thread.take() else {
            return Ok(0);
        };
        self.stop.store(true, Ordering::SeqCst);
        match h.join() {
            Ok(Ok(calls)) => Ok(calls),
            Ok(Err(err)) => Err(op_err(err, path)),
            Err(_) => Err(Error::Runtime(
                "the io_uring consumer thread panicked".into(),
            )),
        }
    }
}

/// The submitter hub as stored in the run's shared slot.
struct HubHolder(Arc<Hub>);

impl Drop for Uring {
    fn drop(&mut self) {
        // A producer-consumer run that failed before `finish`: the consumer thread must be stopped and
        // joined before the ring it reads is closed and unmapped.
        if let Mode::ProducerConsumer { core, pc, .. } = &mut self.mode {
            let _ = pc.stop(&core.path);
        }
        if !self.opts.fixed_bufs {
            return;
        }
        // A shared ring outlives this thread's buffers: clear their registration first.
        let (base, n) = (self.sqes.buf_base, self.qd as usize);
        match &self.mode {
            Mode::PerThread { .. } | Mode::ProducerConsumer { .. } => {}
            Mode::Shared { ring, .. } => lock(&ring.inner).core.unregister_bufs(base, n),
            Mode::Submitter { hub } => {
                let _ = hub
                    .0
                    .call(move |core: &mut Core| core.unregister_bufs(base, n));
            }
        }
    }
}

/// `io_uring`, as the registry lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::IoUring,
    name: "io_uring",
    help: "one SQE per op on a ring per thread (--qd, --batch, --ring and the ring options)",
    exec: Exec::Queued,
    kernel_copy: false,
    no_data: false,
    maps: false,
    user_buffered: false,
    targets: Targets::ANY,
    no_direct: None,
    no_read: None,
    verifies_reads: false,
    per_op_call: None,
    io_uring_requests: true,
    syscall_note: "counted calls are io_uring_enter(2) (plus fsync); the kernel's syscr/syscw do not see io_uring requests",
    run: Run::Threads(crate::runner::drive::<Uring>),
};
