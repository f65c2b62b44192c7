//! `uring_cmd`: one IORING_OP_URING_CMD (Linux 5.19+) per op, to one of two targets:
//! - iolab's sink driver, whose `.uring_cmd` copies the op's bytes into its buffer and counts them, as the
//!   Pi thesis's logmodule_uring_cmd did (64-byte SQEs: the command's 16 bytes carry the buffer's address,
//!   its length and where it lands in the driver's buffer; `sys::SinkCmd`). The driver completes a
//!   command inside the call that issues it (it never answers -EAGAIN), so io_uring never hands one to an
//!   io-wq worker, whatever the personality. Writes only.
//! - an NVMe namespace's generic device, /dev/ngXnY (NVMe passthrough, `target/nvme.rs`): each op is one
//!   NVMe Read or Write command (NVME_URING_CMD_IO, `sys::NvmeUringCmd`) in a 128-byte SQE, completed in a
//!   32-byte CQE whose result is 0 or the NVMe status. `--iopoll` polls for completions on the device's
//!   poll queues (Linux 6.1+). `--verify` on a read run checks each block read against iolab's pattern, so
//!   that a read through the passthrough path is shown to return what the block path wrote.
//!
//! `--qd` requests in flight per thread and `--batch` per io_uring_enter, on a plain ring per thread; iolab
//! makes every io_uring_enter itself and counts it, as for `io_uring`.

use super::api::{op_err, ThreadCtx};
use super::api::{Flush, Io, Method, MethodStats};
use super::info::SinkCalls;
use super::info::{Exec, Fit, MethodInfo, Targets};
use super::kind::MethodKind;
use crate::error::{Error, Result};
use crate::result::{UringStats, VerifyFigures};
use crate::spec::options::Applies;
use crate::target::prepared::NvmeTarget;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

const ONLY_COMMANDS: Fit = Fit::OtherTarget(
    "sends commands only iolab's sink driver (/dev/iolab_sink) or an NVMe generic device (/dev/ngXnY) \
     understands, not {t}",
);

fn describe(s: &crate::spec::Spec) -> Option<String> {
    let poll = if s.ring.iopoll { ", IOPOLL" } else { "" };
    Some(format!("qd {} batch {}{poll}", s.qd, s.batch))
}

/// `uring_cmd`, as the registry lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::UringCmd,
    name: "uring_cmd",
    fio_engine: Some("io_uring_cmd"),
    help: "one IORING_OP_URING_CMD per op: to iolab's sink driver, /dev/iolab_sink (writes), or NVMe \
           passthrough to /dev/ngXnY (reads and writes, --iopoll) (--qd, --batch)",
    exec: Exec::Queued,
    io_uring_requests: true,
    targets: Targets {
        file: ONLY_COMMANDS,
        block_device: ONLY_COMMANDS,
        dev_null: ONLY_COMMANDS,
        dev_zero: ONLY_COMMANDS,
        stream: ONLY_COMMANDS,
        sink: Fit::Yes,
        sink_legacy: Fit::Yes,
        nvme_generic: Fit::Yes,
    },
    no_direct: Some(
        "its commands never pass through the page cache (the sink driver has no O_DIRECT; NVMe commands go \
         to the device)",
    ),
    verifies_reads: true,
    syscalls: &["io_uring_enter"],
    syscall_note: "counted calls are io_uring_enter(2); the commands reach the driver's .uring_cmd, not \
                   .write or .read, so the kernel's syscr/syscw do not see them",
    describe,
    gap: |_, _, _| {
        "uring_cmd: between the starts of successive commands of one thread, so 0 within a batch queued in \
         one round, then the round's submission and wait"
            .into()
    },
    options: &[Applies::Depth, Applies::Batch, Applies::Polling],
    sink_calls: SinkCalls::UringCmd,
    ..MethodInfo::PLAIN
};

/// Where the commands go, on the ring their size needs.
enum Dev {
    Sink {
        ring: IoUring<squeue::Entry, cqueue::Entry>,
        /// The driver's buffer: an op's offset lands there modulo its size.
        buf_size: u64,
    },
    Nvme {
        ring: IoUring<squeue::Entry128, cqueue::Entry32>,
        ns: NvmeTarget,
        /// `--verify` of a read run.
        check: Option<ReadCheck>,
    },
}

pub struct UringCmd {
    dev: Dev,
    fd: OwnedFd,
    path: PathBuf,
    /// SQEs pushed that the kernel has not taken, and requests taken and not reaped.
    queued: u32,
    in_kernel: u32,
    /// The first NVMe status a command completed with (reported to the runner as EIO).
    nvme_status: Option<i32>,
    stats: UringStats,
}

/// `--verify` of a passthrough read run: each slot's buffer and block, the expected block, the figures.
struct ReadCheck {
    slots: Vec<(usize, u64)>,
    expect: Vec<u8>,
    seed: u64,
    first_offset: u64,
    bs: u64,
    figures: VerifyFigures,
}

impl ReadCheck {
    fn new(spec: &crate::spec::Spec) -> ReadCheck {
        let mut expect = vec![0u8; spec.bs as usize];
        crate::pattern::fill_body(&mut expect, spec.seed);
        ReadCheck {
            slots: vec![(0, 0); spec.qd as usize],
            expect,
            seed: spec.seed,
            first_offset: spec.offset,
            bs: spec.bs,
            figures: VerifyFigures::default(),
        }
    }

    /// The block slot `slot`'s read brought, against the pattern.
    #[cold]
    fn check(&mut self, slot: u32) {
        let (buf, offset) = self.slots[slot as usize];
        crate::pattern::stamp(
            &mut self.expect,
            self.seed,
            (offset - self.first_offset) / self.bs,
        );
        // SAFETY: the runner's buffer of this slot holds bs bytes and the read into it has completed; it is
        // not reused before this reap returns.
        let got = unsafe { std::slice::from_raw_parts(buf as *const u8, self.expect.len()) };
        let f = &mut self.figures;
        f.blocks_checked += 1;
        f.bytes_checked += self.bs;
        if got != self.expect.as_slice() {
            f.mismatches += 1;
            if f.first_mismatch_offsets.len() < 10 {
                f.first_mismatch_offsets.push(offset);
            }
        }
    }
}

fn setup_err(e: std::io::Error) -> Error {
    Error::from(sys::SysErr::new(
        "io_uring_setup",
        e.raw_os_error().unwrap_or(libc::EIO),
    ))
}

impl Method for UringCmd {
    const QUEUED: bool = true;

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let (spec, qd) = (ctx.spec, ctx.spec.qd);
        let entries = qd.next_power_of_two();
        let dev = match (ctx.target.sink(), ctx.target.nvme()) {
            (Some(s), _) => {
                let ring = IoUring::builder()
                    .setup_cqsize(2 * entries)
                    .build(entries)
                    .map_err(setup_err)?;
                Dev::Sink {
                    ring,
                    buf_size: s.buf_size(),
                }
            }
            (None, Some(ns)) => {
                let mut b = IoUring::<squeue::Entry128, cqueue::Entry32>::builder();
                b.setup_cqsize(2 * entries);
                if spec.ring.iopoll {
                    b.setup_iopoll();
                }
                Dev::Nvme {
                    ring: b.build(entries).map_err(setup_err)?,
                    ns: ns.clone(),
                    check: (spec.verify && spec.op.reads()).then(|| ReadCheck::new(spec)),
                }
            }
            (None, None) => return Err(Error::usage(
                "--target",
                "uring_cmd sends commands to iolab's sink driver or an NVMe generic device only",
            )),
        };
        let fd = ctx.target.open_for(spec, false)?;
        let mut setup = vec!["OP_URING_CMD".to_string()];
        if let Dev::Nvme { .. } = dev {
            setup.extend(["SQE128".into(), "CQE32".into(), "NVME_URING_CMD_IO".into()]);
        }
        if spec.ring.iopoll {
            setup.push("IOPOLL".into());
        }
        Ok(UringCmd {
            dev,
            fd,
            path: ctx.target.path.clone(),
            queued: 0,
            in_kernel: 0,
            nvme_status: None,
            stats: UringStats {
                design: "per-thread".into(),
                setup,
                batch_histogram: vec![0; qd as usize + 1],
                inflight_histogram: vec![0; qd as usize + 1],
                ..Default::default()
            },
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let fd = types::Fd(self.fd.as_raw_fd());
        let pushed = match &mut self.dev {
            Dev::Sink { ring, buf_size } => {
                let cmd = sys::SinkCmd {
                    addr: io.buf as u64,
                    len: io.len as u32,
                    offset: (io.offset % *buf_size) as u32,
                };
                let sqe = opcode::UringCmd16::new(fd, sys::IOLAB_SINK_CMD_WRITE)
                    .cmd(cmd.to_bytes())
                    .build()
                    .user_data(io.slot as u64);
                // SAFETY: the op's buffer stays valid and untouched until the runner reaps its slot (Io
                // contract); the fd lives as long as this method, which outlives the ring's requests
                // (drained before drop).
                unsafe { ring.submission().push(&sqe) }
            }
            Dev::Nvme { ring, ns, check } => {
                if let Some(c) = check {
                    c.slots[io.slot as usize] = (io.buf as usize, io.offset);
                }
                let cmd = sys::NvmeUringCmd::rw(
                    io.write,
                    ns.nsid,
                    io.buf as u64,
                    io.len as u32,
                    io.offset >> ns.lba_shift,
                    ns.lba_shift,
                );
                let sqe = opcode::UringCmd80::new(fd, sys::NVME_URING_CMD_IO)
                    .cmd(cmd.to_bytes())
                    .build()
                    .user_data(io.slot as u64);
                // SAFETY: the op's buffer stays valid and untouched until the runner reaps its slot (Io
                // contract); the fd lives as long as this method, which outlives the ring's requests
                // (drained before drop).
                unsafe { ring.submission().push(&sqe) }
            }
        };
        pushed.map_err(|_| Error::Runtime("uring_cmd: the submission queue is full".into()))?;
        self.queued += 1;
        Ok(0)
    }

    fn commit(&mut self, min_complete: u32) -> Result<()> {
        let flags = if min_complete > 0 {
            sys::IORING_ENTER_GETEVENTS
        } else {
            0
        };
        let ring_fd = match &self.dev {
            Dev::Sink { ring, .. } => ring.as_raw_fd(),
            Dev::Nvme { ring, .. } => ring.as_raw_fd(),
        };
        loop {
            self.stats.enters += 1;
            match sys::io_uring_enter(ring_fd, self.queued, min_complete, flags) {
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

    fn expected_result(&self, len: usize) -> i32 {
        match self.dev {
            Dev::Sink { .. } => len as i32,
            // An NVMe command completes with its status: 0 is success.
            Dev::Nvme { .. } => 0,
        }
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) -> u32 {
        let mut n = 0;
        match &mut self.dev {
            Dev::Sink { ring, .. } => {
                for cqe in ring.completion().take(max as usize) {
                    f(cqe.user_data() as u32, cqe.result());
                    n += 1;
                }
            }
            Dev::Nvme { ring, check, .. } => {
                for cqe in ring.completion().take(max as usize) {
                    let (slot, mut res) = (cqe.user_data() as u32, cqe.result());
                    if res > 0 {
                        // A positive result is the NVMe status of a command the device failed.
                        self.nvme_status.get_or_insert(res);
                        res = -libc::EIO;
                    } else if let (0, Some(c)) = (res, check.as_mut()) {
                        c.check(slot);
                    }
                    f(slot, res);
                    n += 1;
                }
            }
        }
        self.in_kernel -= n.min(self.in_kernel);
        n
    }

    fn describe_failure(&self, errno: i32) -> Option<String> {
        let shown = self.path.display();
        match (errno, self.nvme_status, &self.dev) {
            (libc::EIO, Some(s), _) => Some(format!(
                "{shown}: the device failed an NVMe command with status {s:#x} (status code type {}, status \
                 code {:#x})",
                (s >> 8) & 0x7,
                s & 0xff
            )),
            (libc::EOPNOTSUPP, _, Dev::Nvme { ns, .. }) if self.stats.setup.iter().any(|s| s == "IOPOLL") => {
                Some(format!(
                    "IOPOLL unsupported for {shown}'s commands (the kernel answered EOPNOTSUPP): \
                     /sys/block/{}/queue/io_poll is {}; run without --iopoll, or give the nvme module poll \
                     queues (nvme.poll_queues=N)",
                    ns.block,
                    std::fs::read_to_string(format!("/sys/block/{}/queue/io_poll", ns.block))
                        .map(|s| s.trim().to_string())
                        .unwrap_or_else(|_| "unreadable".into())
                ))
            }
            _ => None,
        }
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        Err(Error::Runtime(
            "uring_cmd has nothing to flush (refused before the run)".into(),
        ))
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(self.stats.enters)
    }

    fn submissions(&self) -> Option<(u64, u64)> {
        Some((self.stats.enters, self.stats.requests))
    }

    fn stats(&self) -> MethodStats {
        let read_check = match &self.dev {
            Dev::Nvme { check: Some(c), .. } => Some(c.figures.clone()),
            _ => None,
        };
        MethodStats {
            uring: Some(self.stats.clone()),
            read_check,
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
