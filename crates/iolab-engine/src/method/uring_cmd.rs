//! `uring_cmd`: one IORING_OP_URING_CMD (Linux 5.19+) per op to iolab's sink driver, whose `.uring_cmd`
//! copies the op's bytes into its buffer and counts them, as the Pi thesis's logmodule_uring_cmd did.
//! `--qd` requests in flight per thread and `--batch` per io_uring_enter, on a plain ring per thread (64-byte
//! SQEs: the command's 16 bytes carry the buffer's address, its length and where it lands in the driver's
//! buffer; `sys::SinkCmd`). iolab makes every io_uring_enter itself and counts it, as for `io_uring`.
//!
//! The driver completes a command inside the call that issues it (it returns the byte count; it never
//! answers -EAGAIN), so io_uring never hands one to an io-wq worker, whatever the personality.

use super::api::{op_err, ThreadCtx};
use super::api::{Flush, Io, Method, MethodStats};
use super::info::SinkCalls;
use super::info::{Exec, Fit, MethodInfo, Targets};
use super::kind::MethodKind;
use crate::error::{Error, Result};
use crate::result::UringStats;
use crate::spec::options::Applies;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

const ONLY_SINK: Fit = Fit::OtherTarget(
    "sends commands only iolab's sink driver understands, not {t}: use --target /dev/iolab_sink",
);

fn describe(s: &crate::spec::Spec) -> Option<String> {
    Some(format!("qd {} batch {}", s.qd, s.batch))
}

/// `uring_cmd`, as the registry lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::UringCmd,
    name: "uring_cmd",
    help: "one IORING_OP_URING_CMD per op to iolab's sink driver, /dev/iolab_sink (--qd, --batch; writes only)",
    exec: Exec::Queued,
    io_uring_requests: true,
    targets: Targets {
        file: ONLY_SINK,
        block_device: ONLY_SINK,
        dev_null: ONLY_SINK,
        dev_zero: ONLY_SINK,
        stream: ONLY_SINK,
        sink: Fit::Yes,
        sink_legacy: Fit::Yes,
    },
    no_direct: Some("the sink driver has no O_DIRECT"),
    no_read: Some("the sink driver's command only writes"),
    syscalls: &["io_uring_enter"],
    syscall_note: "counted calls are io_uring_enter(2); the commands reach the driver's .uring_cmd, not \
                   .write, so the kernel's syscr/syscw do not see them",
    describe,
    gap: |_, _, _| {
        "uring_cmd: between the starts of successive commands of one thread, so 0 within a batch queued in \
         one round, then the round's submission and wait"
            .into()
    },
    options: &[Applies::Depth, Applies::Batch],
    sink_calls: SinkCalls::UringCmd,
    ..MethodInfo::PLAIN
};

pub struct UringCmd {
    ring: IoUring<squeue::Entry, cqueue::Entry>,
    fd: OwnedFd,
    path: PathBuf,
    /// The driver's buffer: an op's offset lands there modulo its size.
    buf_size: u64,
    /// SQEs pushed that the kernel has not taken, and requests taken and not reaped.
    queued: u32,
    in_kernel: u32,
    stats: UringStats,
}

impl Method for UringCmd {
    const QUEUED: bool = true;

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let qd = ctx.spec.qd;
        let buf_size = ctx.target.sink().map(|s| s.buf_size()).ok_or_else(|| {
            Error::usage("--target", "uring_cmd writes to iolab's sink driver only")
        })?;
        let fd = ctx.target.open_for(ctx.spec, false)?;
        let entries = qd.next_power_of_two();
        let ring = IoUring::builder()
            .setup_cqsize(2 * entries)
            .build(entries)
            .map_err(|e| {
                Error::from(sys::SysErr::new(
                    "io_uring_setup",
                    e.raw_os_error().unwrap_or(libc::EIO),
                ))
            })?;
        Ok(UringCmd {
            ring,
            fd,
            path: ctx.target.path.clone(),
            buf_size,
            queued: 0,
            in_kernel: 0,
            stats: UringStats {
                design: "per-thread".into(),
                setup: vec!["OP_URING_CMD".into()],
                batch_histogram: vec![0; qd as usize + 1],
                inflight_histogram: vec![0; qd as usize + 1],
                ..Default::default()
            },
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let cmd = sys::SinkCmd {
            addr: io.buf as u64,
            len: io.len as u32,
            offset: (io.offset % self.buf_size) as u32,
        };
        let sqe =
            opcode::UringCmd16::new(types::Fd(self.fd.as_raw_fd()), sys::IOLAB_SINK_CMD_WRITE)
                .cmd(cmd.to_bytes())
                .build()
                .user_data(io.slot as u64);
        // SAFETY: the op's buffer stays valid and untouched until the runner reaps its slot (Io contract);
        // the fd lives as long as this method, which outlives the ring's requests (drained before drop).
        unsafe { self.ring.submission().push(&sqe) }
            .map_err(|_| Error::Runtime("uring_cmd: the submission queue is full".into()))?;
        self.queued += 1;
        Ok(0)
    }

    fn commit(&mut self, min_complete: u32) -> Result<()> {
        let flags = if min_complete > 0 {
            sys::IORING_ENTER_GETEVENTS
        } else {
            0
        };
        loop {
            self.stats.enters += 1;
            match sys::io_uring_enter(self.ring.as_raw_fd(), self.queued, min_complete, flags) {
                Ok(taken) => {
                    self.account(taken.min(self.queued));
                    if self.queued == 0 {
                        return Ok(());
                    }
                }
                Err(e) if matches!(e.errno, libc::EINTR | libc::EAGAIN | libc::EBUSY) => continue,
                Err(e) => return Err(op_err(e, &self.path)),
            }
        }
    }

    fn unsubmitted(&self) -> u32 {
        self.queued
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) -> u32 {
        let mut n = 0;
        for cqe in self.ring.completion().take(max as usize) {
            f(cqe.user_data() as u32, cqe.result());
            n += 1;
        }
        self.in_kernel -= n.min(self.in_kernel);
        n
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        Err(Error::Runtime(
            "the sink driver has nothing to flush (refused before the run)".into(),
        ))
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(self.stats.enters)
    }

    fn submissions(&self) -> Option<(u64, u64)> {
        Some((self.stats.enters, self.stats.requests))
    }

    fn stats(&self) -> MethodStats {
        MethodStats {
            uring: Some(self.stats.clone()),
            ..Default::default()
        }
    }
}

impl UringCmd {
    /// `taken` queued requests handed to the kernel by one io_uring_enter.
    fn account(&mut self, taken: u32) {
        self.queued -= taken;
        self.in_kernel += taken;
        self.stats.count_submission(taken, self.in_kernel);
    }
}
