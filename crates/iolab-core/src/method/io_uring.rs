//! `io_uring` (Linux 5.1+; IORING_OP_READ/WRITE 5.6+; no privilege needed unless the sysctl
//! `kernel.io_uring_disabled` says otherwise): a plain ring per thread, `--qd` requests in flight,
//! `--batch` requests per io_uring_enter(2). Every enter is counted. SQPOLL, IOPOLL, fixed files and
//! buffers, and shared rings are options of this file added by a later issue.
//!
//! The runner keeps each request's buffer untouched from `submit` until `reap` returns its slot.
//! `--fsync` points are plain fsync(2) calls made after the runner has drained the ring.
//!
//! Buffered writes to ext4/tmpfs usually cannot complete inline and are punted to io-wq worker threads
//! (`iou-wrk-*`): their CPU is reported separately by the runner.

use super::{op_err, Caps, Flush, Io, Method, ThreadCtx};
use crate::error::{Error, Result};
use crate::sys::{self, SysErr};
use io_uring::{opcode, types, IoUring};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

pub struct Uring {
    ring: IoUring,
    fd: OwnedFd,
    write: bool,
    positionless: bool,
    path: PathBuf,
    queued: u32,
    enters: u64,
    submitted: u64,
    other_calls: u64,
}

fn io_err(call: &'static str, e: std::io::Error) -> SysErr {
    SysErr::new(call, e.raw_os_error().unwrap_or(libc::EIO))
}

impl Method for Uring {
    fn caps() -> Caps {
        Caps {
            synchronous: false,
            needs_rdwr: false,
            no_syscall_per_op: false,
        }
    }

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let entries = ctx.spec.qd.next_power_of_two();
        let ring = IoUring::new(entries).map_err(|e| Error::from(io_err("io_uring_setup", e)))?;
        Ok(Uring {
            ring,
            fd: ctx.target.open_for(ctx.spec, false)?,
            write: ctx.writes(),
            positionless: ctx.positionless(),
            path: ctx.target.path.clone(),
            queued: 0,
            enters: 0,
            submitted: 0,
            other_calls: 0,
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let fd = types::Fd(self.fd.as_raw_fd());
        // Devices that ignore the position get offset 0, as the io_uring documentation asks.
        let off = if self.positionless { 0 } else { io.offset };
        let sqe = if self.write {
            opcode::Write::new(fd, io.buf, io.len as u32)
                .offset(off)
                .build()
        } else {
            opcode::Read::new(fd, io.buf, io.len as u32)
                .offset(off)
                .build()
        }
        .user_data(io.slot as u64);
        // SAFETY: the buffer stays valid and untouched until the runner reaps this slot (Io contract), and
        // the fd lives as long as the ring (both owned here; the ring is dropped first).
        unsafe { self.ring.submission().push(&sqe) }.map_err(|_| {
            Error::Runtime(
                "io_uring submission queue full (runner bug: more than --qd queued)".into(),
            )
        })?;
        self.queued += 1;
        Ok(0)
    }

    fn commit(&mut self, min_complete: u32) -> Result<()> {
        loop {
            self.enters += 1;
            match self.ring.submit_and_wait(min_complete as usize) {
                Ok(n) => {
                    self.submitted += n as u64;
                    self.queued -= (n as u32).min(self.queued);
                    if self.queued == 0 {
                        return Ok(());
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e)
                    if e.raw_os_error() == Some(libc::EAGAIN)
                        || e.raw_os_error() == Some(libc::EBUSY) =>
                {
                    continue
                }
                Err(e) => return Err(op_err(io_err("io_uring_enter", e), &self.path)),
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
        n
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        self.other_calls += 1;
        sys::fsync(self.fd.as_raw_fd()).map_err(|e| op_err(e, &self.path))
    }

    fn unsubmitted(&self) -> u32 {
        self.queued
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(self.enters + self.other_calls)
    }

    fn submissions(&self) -> Option<(u64, u64)> {
        Some((self.enters, self.submitted))
    }
}
