//! One ring and what every design does with it: setup (`Core::new`, with the kernel's limits and a hint
//! when it refuses the parameters), pushing SQEs and entering the kernel with the submission bookkeeping
//! (batch and in-flight histograms), registration of files and buffers, and how a thread calls
//! io_uring_enter (`Enter`); and the lock-free hand-off `Lane` of the designs with a helper thread.

use super::super::api::op_err;
use crate::error::{Error, Result};
use crate::result::UringStats;
use crate::spec::RingOpts;
use crossbeam_queue::ArrayQueue;
use io_uring::{cqueue, squeue, IoUring};
use iolab_sys as sys;
use iolab_sys::SysErr;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::sync::{Mutex, MutexGuard};

/// Kernel limit on SQ entries (IORING_MAX_ENTRIES) and on registered buffers (IORING_MAX_REG_BUFFERS).
pub(crate) const MAX_ENTRIES: u32 = 32768;
pub(crate) const MAX_REG_BUFFERS: u32 = 16384;

pub(super) fn io_err(call: &'static str, e: std::io::Error) -> SysErr {
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

/// A ring with `o`'s setup flags, `entries` SQ entries and `cq` CQ entries.
fn build(o: &RingOpts, entries: u32, cq: u32) -> std::io::Result<IoUring> {
    let mut b = IoUring::<squeue::Entry, cqueue::Entry>::builder();
    b.setup_cqsize(cq);
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
    if o.no_sqarray {
        b.setup_no_sqarray();
    }
    if o.wait_region {
        // A wait region can only be registered before the ring is enabled.
        b.setup_r_disabled();
    }
    b.build(entries)
}

/// One wait's bound (the runner judges a stall; this only keeps a wait from lasting for ever).
const STALL_NS: u64 = 30_000_000_000;

/// `--wait-region`: one page holding the `io_uring_reg_wait` of --min-wait's waits (its minimum and the
/// STALL_NS timeout), registered on the disabled ring, which is then enabled (by the calling thread: the
/// submitting one, for SINGLE_ISSUER).
fn register_wait_region(ring: &IoUring, o: &RingOpts) -> Result<sys::Mapping> {
    let page = sys::page_size();
    let map = sys::Mapping::anonymous(page).map_err(Error::from)?;
    let w = sys::RegWait {
        ts_sec: (STALL_NS / 1_000_000_000) as i64,
        ts_nsec: (STALL_NS % 1_000_000_000) as i64,
        min_wait_usec: o.min_wait_usec,
        flags: sys::IORING_REG_WAIT_TS,
        ..Default::default()
    };
    // SAFETY: the mapping is one fresh, page-aligned, writable page, larger than a RegWait, owned here.
    unsafe { std::ptr::write(map.as_ptr().cast::<sys::RegWait>(), w) };
    // SAFETY: the page stays mapped as long as the Core that keeps `map` (and so the ring) lives.
    let reg = unsafe { sys::io_uring_register_wait_region(ring.as_raw_fd(), map.as_ptr(), page) };
    reg.map_err(|e| {
        Error::sys_hint(
            e,
            "--wait-region needs IORING_REGISTER_MEM_REGION with wait arguments (Linux 6.13+): run without \
             --wait-region",
        )
    })?;
    ring.submitter()
        .register_enable_rings()
        .map_err(|e| Error::from(io_err("io_uring_register(ENABLE_RINGS)", e)))?;
    Ok(map)
}

/// Does this kernel's io_uring know `code` (IORING_REGISTER_PROBE, 5.6+, on a one-entry ring of its own)?
/// `Err` names why it could not be asked.
pub(super) fn kernel_has_opcode(code: u8) -> std::result::Result<bool, String> {
    let ring = IoUring::new(1).map_err(|e| format!("io_uring_setup: {e}"))?;
    let mut probe = io_uring::Probe::new();
    ring.submitter()
        .register_probe(&mut probe)
        .map_err(|e| format!("io_uring_register(PROBE): {e}"))?;
    Ok(probe.is_supported(code))
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// How one thread calls io_uring_enter: by ring fd, or by the index IORING_REGISTER_RING_FDS gave this
/// thread (registered ring fds are per task).
#[derive(Clone, Copy)]
pub(super) struct Enter {
    pub(super) fd: i32,
    pub(super) flags: u32,
    /// The ring's own fd (what `release` unregisters the index against).
    ring_fd: i32,
}

impl Enter {
    /// The calling thread's way into `core`'s ring: its registered index where --registered-ring (or the
    /// recommended setup) asks for one; a recommended registration this kernel refuses falls back to the
    /// ring fd, said in the ring's `refused`.
    pub(super) fn for_thread(core: &mut Core) -> Result<Enter> {
        let fd = core.ring.as_raw_fd();
        let plain = Enter {
            fd,
            flags: 0,
            ring_fd: fd,
        };
        if !core.opts.registered_ring {
            return Ok(plain);
        }
        match sys::io_uring_register_ring_fd(fd) {
            Ok(idx) => Ok(Enter {
                fd: idx as i32,
                flags: sys::IORING_ENTER_REGISTERED_RING,
                ring_fd: fd,
            }),
            Err(e)
                if core
                    .opts
                    .recommended
                    .iter()
                    .any(|n| n == "REGISTER_RING_FDS") =>
            {
                let why = format!("REGISTER_RING_FDS ({})", sys::errno_name(e.errno));
                if !core.stats.refused.contains(&why) {
                    core.stats.refused.push(why);
                }
                core.stats.setup.retain(|n| n != "REGISTER_RING_FDS");
                Ok(plain)
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl Enter {
    /// Frees this thread's registered index, if it has one: a thread has 16, and a ring whose index stays
    /// registered lives until the thread exits. Called by the thread that registered it, before the ring
    /// is dropped.
    pub(super) fn release(&self) {
        if self.flags & sys::IORING_ENTER_REGISTERED_RING != 0 {
            let _ = sys::io_uring_unregister_ring_fd(self.ring_fd, self.fd as u32);
        }
    }
}

/// One worker's two queues (requests to a helper thread, completions back) and the futex word it sleeps on (1 = asleep or about to sleep).
pub(super) struct Lane {
    pub(super) requests: ArrayQueue<squeue::Entry>,
    pub(super) done: ArrayQueue<(u32, i32)>,
    pub(super) waiting: AtomicU32,
}

/// One ring and its submission bookkeeping, used the same way by every design.
pub(super) struct Core {
    pub(super) ring: IoUring,
    pub(super) opts: RingOpts,
    pub(super) path: PathBuf,
    /// Entries in the SQ the kernel has not taken yet.
    pub(super) queued: u32,
    /// Requests taken by the kernel and not yet reaped.
    pub(super) in_kernel: u32,
    pub(super) stats: UringStats,
    /// The batch and in-flight histograms of `stats`, counted here during the run (one table: every
    /// page a round writes costs the next system call on this machine's VM), moved there by `stats()`.
    hist: Box<[u64]>,
    /// The last submissions' batch and requests in flight while they repeat, and how many times: added
    /// to `hist` when they change (and by `stats`), so that the rounds of a steady run write no page of
    /// their own (at batch 32 the table's page was one of 14 a round touched).
    run: (u32, u32, u64),
    /// `--wait-region`: the registered page holding the wait's arguments (kept mapped while the ring lives).
    wait_region: Option<sys::Mapping>,
    /// The ring is entered by the plain call (no SQPOLL, no --min-wait): `enter`'s short path.
    plain_enter: bool,
    /// IORING_ENTER_GETEVENTS on every call, not only on waits (IOPOLL, DEFER_TASKRUN).
    always_getevents: u32,
}

impl Core {
    /// A ring for `total_qd` requests in flight (all threads together), with room for `extra` more (the
    /// submitter's doorbell), its files and buffers tables sparse with `slots` entries when registered
    /// per thread later.
    pub(super) fn new(
        o: &RingOpts,
        total_qd: u32,
        extra: u32,
        path: &Path,
        hist_len: usize,
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
        // The completion queue holds every request that can be in flight at once.
        let cq = (2 * entries).max((total_qd + extra).next_power_of_two());
        let mut opts = o.clone();
        let mut refused = Vec::new();
        let ring = loop {
            match build(&opts, entries, cq) {
                Ok(r) => break r,
                // A recommended flag this kernel lacks: drop it and say so, as fio does.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    match opts.drop_recommended_setup() {
                        Some(name) => refused.push(format!("{name} (EINVAL)")),
                        None => {
                            let se = io_err("io_uring_setup", e);
                            return Err(Error::sys_hint(se, setup_hint(&opts)));
                        }
                    }
                }
                Err(e) => return Err(Error::from(io_err("io_uring_setup", e))),
            }
        };
        if opts.min_wait_usec > 0 && !ring.params().is_feature_min_timeout() {
            return Err(Error::Runtime(
                "--min-wait needs IORING_FEAT_MIN_TIMEOUT (Linux 6.12+), which this kernel's io_uring lacks: \
                 run without --min-wait"
                    .into(),
            ));
        }
        let wait_region = if opts.wait_region {
            Some(register_wait_region(&ring, &opts)?)
        } else {
            None
        };
        let setup = setup_names(&opts);
        Ok(Core {
            plain_enter: !opts.sqpoll && opts.min_wait_usec == 0,
            // DEFER_TASKRUN: completions are only posted while the submitter is inside GETEVENTS.
            always_getevents: if opts.iopoll || opts.defer_taskrun {
                sys::IORING_ENTER_GETEVENTS
            } else {
                0
            },
            wait_region,
            ring,
            opts,
            path: path.to_path_buf(),
            queued: 0,
            in_kernel: 0,
            hist: vec![0; 2 * (hist_len + 1)].into_boxed_slice(),
            run: (0, 0, 0),
            stats: UringStats {
                setup,
                refused,
                design: o.design.name().into(),
                ..Default::default()
            },
        })
    }

    /// Moves `staged` SQEs into the submission queue (one tail update per call that finds room).
    pub(super) fn push(&mut self, staged: &mut Vec<squeue::Entry>, e: Enter) -> Result<()> {
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
    /// The plain ring's common case, one call that takes every queued entry, is a few instructions
    /// inline; SQPOLL, --min-wait, a partial submission and errors take `enter_general`.
    #[inline(always)]
    pub(super) fn enter(&mut self, min_complete: u32, e: Enter) -> Result<()> {
        if !self.plain_enter {
            return self.enter_general(min_complete, e);
        }
        let wait = if min_complete > 0 {
            sys::IORING_ENTER_GETEVENTS
        } else {
            self.always_getevents
        };
        self.stats.enters += 1;
        let r = sys::io_uring_enter(e.fd, self.queued, min_complete, e.flags | wait);
        match r {
            Ok(taken) if taken == self.queued => {
                self.account(taken);
                Ok(())
            }
            _ => self.enter_rest(r, min_complete, e),
        }
    }

    /// What the plain call left: a partial submission is accounted and the rest entered again; an
    /// interrupted call is made again; any other error is the run's.
    #[cold]
    #[inline(never)]
    fn enter_rest(&mut self, r: sys::SysResult<u32>, min_complete: u32, e: Enter) -> Result<()> {
        match r {
            Ok(taken) => {
                let taken = taken.min(self.queued);
                self.account(taken);
                if self.queued == 0 {
                    return Ok(());
                }
            }
            Err(err) if matches!(err.errno, libc::EINTR | libc::EAGAIN | libc::EBUSY) => {}
            Err(err) => return Err(op_err(err, &self.path)),
        }
        self.enter_general(min_complete, e)
    }

    /// `enter` for every ring: SQPOLL's wake-up or skipped call, --min-wait's extended argument, and the
    /// retries of a partial or interrupted submission.
    #[inline(never)]
    fn enter_general(&mut self, min_complete: u32, e: Enter) -> Result<()> {
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
        if min_complete > 0 && self.opts.min_wait_usec > 0 {
            return self.enter_min_wait(flags, e);
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

    /// `--min-wait`: submits what is queued and waits up to min_wait_usec for `wait_nr` completions (never
    /// more than are in flight), then for any; a wait that came back with fewer than it asked for is
    /// counted. The overall timeout (STALL_NS) only bounds one wait: the runner judges a stall.
    #[inline(never)]
    fn enter_min_wait(&mut self, flags: u32, e: Enter) -> Result<()> {
        let flags = flags | sys::IORING_ENTER_GETEVENTS;
        loop {
            self.stats.enters += 1;
            let to_submit = if self.opts.sqpoll { 0 } else { self.queued };
            let want = self.opts.wait_nr.min(self.in_kernel + self.queued).max(1);
            let min_us = self.opts.min_wait_usec;
            let r = if self.wait_region.is_some() {
                sys::io_uring_enter_reg_wait(e.fd, to_submit, want, flags, 0)
            } else {
                sys::io_uring_enter_ext(e.fd, to_submit, want, flags, min_us, STALL_NS)
            };
            match r {
                Ok(taken) => {
                    let taken = if self.opts.sqpoll {
                        self.queued
                    } else {
                        taken.min(self.queued)
                    };
                    self.account(taken);
                }
                Err(err) if err.errno == libc::ETIME => {}
                Err(err) if matches!(err.errno, libc::EINTR | libc::EAGAIN | libc::EBUSY) => {
                    continue
                }
                Err(err) => return Err(op_err(err, &self.path)),
            }
            if self.queued == 0 {
                self.stats.min_waits += 1;
                if (self.ring.completion().len() as u32) < want {
                    self.stats.min_waits_short += 1;
                }
                return Ok(());
            }
        }
    }

    /// `taken` queued requests passed to the kernel by one submission (with or without a syscall).
    #[inline(always)]
    fn account(&mut self, taken: u32) {
        self.queued -= taken;
        self.in_kernel += taken;
        self.stats.requests += u64::from(taken);
        if (self.run.0, self.run.1) == (taken, self.in_kernel) {
            self.run.2 += 1;
        } else {
            self.new_run(taken);
        }
    }

    /// Adds the repeated submissions to the histograms and starts counting those like this one.
    #[cold]
    #[inline(never)]
    fn new_run(&mut self, taken: u32) {
        let (batch, inflight, n) = self.run;
        add_run(&mut self.hist, batch, inflight, n);
        self.run = (taken, self.in_kernel, 1);
    }

    /// The ring's statistics so far, with the batch and in-flight histograms.
    pub(super) fn stats(&self) -> UringStats {
        let mut hist = self.hist.to_vec();
        let (batch, inflight, n) = self.run;
        add_run(&mut hist, batch, inflight, n);
        let (batch, inflight) = hist.split_at(hist.len() / 2);
        UringStats {
            batch_histogram: batch.to_vec(),
            inflight_histogram: inflight.to_vec(),
            ..self.stats.clone()
        }
    }

    /// Registers buffers at `offset` of a sparse table (or as the whole table with `sparse == false`).
    pub(super) fn register_bufs(
        &self,
        bufs: &[(*mut u8, usize)],
        offset: u32,
        sparse: bool,
    ) -> Result<()> {
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
    pub(super) fn unregister_bufs(&self, offset: u32, n: usize) {
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

    pub(super) fn register_file(&self, index: u32, fd: i32, sparse: bool) -> Result<()> {
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
    pub(super) fn register_sparse(&self, threads: u32, qd: u32) -> Result<()> {
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

pub(super) fn setup_names(o: &RingOpts) -> Vec<String> {
    let mut setup = Vec::new();
    for (on, name) in [
        (o.sqpoll, "SQPOLL"),
        (o.sq_cpu.is_some(), "SQ_AFF"),
        (o.iopoll, "IOPOLL"),
        (o.coop_taskrun, "COOP_TASKRUN"),
        (o.single_issuer, "SINGLE_ISSUER"),
        (o.defer_taskrun, "DEFER_TASKRUN"),
        (o.no_sqarray, "NO_SQARRAY"),
        (o.fixed_files, "REGISTER_FILES"),
        (o.fixed_bufs, "REGISTER_BUFFERS"),
        (o.registered_ring, "REGISTER_RING_FDS"),
        (o.wait_region, "REGISTER_MEM_REGION"),
        (o.nop_requests, "OP_NOP"),
    ] {
        if on {
            setup.push(name.to_string());
        }
    }
    setup
}

/// `n` submissions of `batch` requests with `inflight` in the kernel after each, in the batch and
/// in-flight histograms (`hist`'s halves; each one's last bucket takes everything above it).
fn add_run(hist: &mut [u64], batch: u32, inflight: u32, n: u64) {
    let half = hist.len() / 2;
    hist[(batch as usize).min(half - 1)] += n;
    hist[half + (inflight as usize).min(half - 1)] += n;
}
