//! `io_uring` (Linux 5.1+; IORING_OP_READ/WRITE 5.6+; unprivileged unless the sysctl
//! `kernel.io_uring_disabled` says otherwise): a ring per thread, `--qd` requests in flight, `--batch`
//! requests per io_uring_enter(2). Options, each named after its kernel flag (see `RingOpts`): `--sqpoll`
//! (`--sq-idle-ms`, `--sq-cpu`), `--iopoll`, `--fixed-files`, `--fixed-bufs`, `--coop-taskrun`,
//! `--single-issuer`, `--defer-taskrun`, `--registered-ring`, `--vectored`.
//!
//! iolab makes every io_uring_enter itself (sys::io_uring_enter) so each one is counted with the requests it
//! carried (the exact batch-size histogram) and the requests then in the kernel (the in-flight depth
//! histogram). With SQPOLL a submission needs no syscall while the SQ thread is awake: after publishing the
//! tail, a full fence (SeqCst), then IORING_SQ_NEED_WAKEUP is read (the io-uring crate's `need_wakeup`);
//! only if it is set, or completions are awaited, is io_uring_enter called (with IORING_ENTER_SQ_WAKEUP).
//!
//! The runner keeps each request's buffer untouched from `submit` until `reap` returns its slot.
//! `--fsync` points are plain fsync(2) calls made after the runner has drained the ring.
//!
//! Buffered writes to ext4/tmpfs usually cannot complete inline and are punted to io-wq worker threads
//! (`iou-wrk-*`); the SQPOLL thread is `iou-sqp-*`: the runner reports both separately.

use super::{op_err, Caps, Flush, Io, Method, ThreadCtx};
use crate::error::{Error, Result};
use crate::result::UringStats;
use crate::spec::RingOpts;
use crate::sys::{self, SysErr};
use io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

pub struct Uring {
    ring: IoUring,
    fd: OwnedFd,
    opts: RingOpts,
    write: bool,
    positionless: bool,
    path: PathBuf,
    /// The fd or registered index io_uring_enter is called with, and the flag that says which.
    enter_fd: i32,
    enter_flags: u32,
    /// One iovec per slot for --vectored (pointing into the runner's buffer while the request is in flight).
    iovecs: Vec<libc::iovec>,
    /// SQEs built by `submit`, pushed to the ring in one go (one tail update) at `commit`.
    staged: Vec<squeue::Entry>,
    queued: u32,
    in_kernel: u32,
    stats: UringStats,
    other_calls: u64,
}

// SAFETY: the iovecs only point into the runner's buffers (owned by the same worker thread); the ring and
// fd are owned; nothing here is shared between threads.
unsafe impl Send for Uring {}

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

impl Method for Uring {
    fn caps() -> Caps {
        Caps::ASYNC
    }

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let o = ctx.spec.ring.clone();
        // SQPOLL: the SQ thread posts completions before it commits the SQ head, so right after reaping a
        // completion the ring can still look full; twice the room keeps pushes from waiting on that.
        let entries = if o.sqpoll {
            ctx.spec.qd * 2
        } else {
            ctx.spec.qd
        }
        .next_power_of_two();
        let mut b = IoUring::<squeue::Entry, io_uring::cqueue::Entry>::builder();
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
                Error::sys_hint(se, setup_hint(&o))
            } else {
                Error::from(se)
            }
        })?;
        let fd = ctx.target.open_for(ctx.spec, false)?;
        let path = ctx.target.path.clone();
        if o.fixed_files {
            ring.submitter()
                .register_files(&[fd.as_raw_fd()])
                .map_err(|e| op_err(io_err("io_uring_register(FILES)", e), &path))?;
        }
        let (enter_fd, enter_flags) = if o.registered_ring {
            let idx = sys::io_uring_register_ring_fd(ring.as_raw_fd())?;
            (idx as i32, sys::IORING_ENTER_REGISTERED_RING)
        } else {
            (ring.as_raw_fd(), 0)
        };
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
        let qd = ctx.spec.qd as usize;
        Ok(Uring {
            ring,
            fd,
            write: ctx.writes(),
            positionless: ctx.positionless(),
            path,
            enter_fd,
            enter_flags,
            iovecs: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                qd
            ],
            staged: Vec::with_capacity(qd),
            queued: 0,
            in_kernel: 0,
            stats: UringStats {
                batch_histogram: vec![0; qd + 1],
                inflight_histogram: vec![0; qd + 1],
                setup,
                ..Default::default()
            },
            other_calls: 0,
            opts: o,
        })
    }

    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)]) -> Result<()> {
        if !self.opts.fixed_bufs {
            return Ok(());
        }
        let iov: Vec<libc::iovec> = bufs
            .iter()
            .map(|&(p, l)| libc::iovec {
                iov_base: p.cast(),
                iov_len: l,
            })
            .collect();
        let total: usize = bufs.iter().map(|b| b.1).sum();
        // SAFETY: the buffers are owned by the runner and outlive the ring: the runner drops this method
        // (and with it the ring, which unregisters them) before it frees the buffers.
        unsafe { self.ring.submitter().register_buffers(&iov) }.map_err(|e| {
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

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        // Devices that ignore the position get offset 0, as the io_uring documentation asks.
        let off = if self.positionless { 0 } else { io.offset };
        let len = io.len as u32;
        macro_rules! build {
            ($fd:expr) => {{
                if self.opts.fixed_bufs {
                    if self.write {
                        opcode::WriteFixed::new($fd, io.buf, len, io.slot as u16)
                            .offset(off)
                            .build()
                    } else {
                        opcode::ReadFixed::new($fd, io.buf, len, io.slot as u16)
                            .offset(off)
                            .build()
                    }
                } else if self.opts.vectored {
                    let v = &mut self.iovecs[io.slot as usize];
                    v.iov_base = io.buf.cast();
                    v.iov_len = io.len;
                    if self.write {
                        opcode::Writev::new($fd, v, 1).offset(off).build()
                    } else {
                        opcode::Readv::new($fd, v, 1).offset(off).build()
                    }
                } else if self.write {
                    opcode::Write::new($fd, io.buf, len).offset(off).build()
                } else {
                    opcode::Read::new($fd, io.buf, len).offset(off).build()
                }
            }};
        }
        let sqe = if self.opts.nop_requests {
            opcode::Nop::new().build()
        } else if self.opts.fixed_files {
            build!(types::Fixed(0))
        } else {
            build!(types::Fd(self.fd.as_raw_fd()))
        }
        .user_data(io.slot as u64);
        self.staged.push(sqe);
        self.queued += 1;
        Ok(0)
    }

    fn commit(&mut self, min_complete: u32) -> Result<()> {
        self.push_staged()?;
        let n = self.queued;
        let mut flags = self.enter_flags;
        if min_complete > 0 || self.opts.iopoll {
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
                self.account(n);
                return Ok(());
            }
        }
        loop {
            self.stats.enters += 1;
            match sys::io_uring_enter(
                self.enter_fd,
                if self.opts.sqpoll { 0 } else { self.queued },
                min_complete,
                flags,
            ) {
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
                Err(e)
                    if e.errno == libc::EINTR
                        || e.errno == libc::EAGAIN
                        || e.errno == libc::EBUSY =>
                {
                    continue
                }
                Err(e) => return Err(op_err(e, &self.path)),
            }
        }
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, mut f: F) -> u32 {
        let mut n = 0;
        for cqe in self.ring.completion() {
            f(cqe.user_data() as u32, cqe.result());
            n += 1;
        }
        self.in_kernel -= n.min(self.in_kernel);
        n
    }

    fn unsubmitted(&self) -> u32 {
        self.queued
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
        self.other_calls += 1;
        sys::fsync(self.fd.as_raw_fd()).map_err(|e| op_err(e, &self.path))
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(self.stats.enters + self.other_calls)
    }

    fn submissions(&self) -> Option<(u64, u64)> {
        Some((self.stats.enters, self.stats.requests))
    }

    fn uring_stats(&self) -> Option<UringStats> {
        Some(self.stats.clone())
    }
}

impl Uring {
    /// Moves the staged SQEs into the submission queue with one tail update.
    fn push_staged(&mut self) -> Result<()> {
        let mut waits = 0u64;
        while !self.staged.is_empty() {
            let pushed = {
                let mut sq = self.ring.submission();
                let room = sq.capacity() - sq.len();
                let n = room.min(self.staged.len());
                // SAFETY: every staged SQE's buffer (and iovec) stays valid and untouched until the runner
                // reaps its slot (Io contract); the fd lives as long as the ring (the ring drops first).
                unsafe { sq.push_multiple(&self.staged[..n]) }
                    .map_err(|_| Error::Runtime("io_uring: no room for staged requests".into()))?;
                n
            };
            self.staged.drain(..pushed);
            if self.staged.is_empty() {
                break;
            }
            // Only SQPOLL can find the queue full with fewer than --qd requests out: the SQ thread has not
            // consumed (or not yet committed its head). Wait for it, waking it if it sleeps.
            if !self.opts.sqpoll || waits > 100_000_000 {
                return Err(Error::Runtime(
                    "io_uring submission queue stayed full (the SQPOLL thread is not consuming)"
                        .into(),
                ));
            }
            if self.ring.submission().need_wakeup() {
                self.stats.enters += 1;
                self.stats.sq_wakeups += 1;
                sys::io_uring_enter(
                    self.enter_fd,
                    0,
                    0,
                    self.enter_flags | sys::IORING_ENTER_SQ_WAKEUP,
                )
                .map_err(|e| op_err(e, &self.path))?;
            }
            waits += 1;
            self.stats.sq_full_waits += 1;
            std::hint::spin_loop();
        }
        Ok(())
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
}
