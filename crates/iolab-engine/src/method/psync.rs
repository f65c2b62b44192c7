//! `psync`: pwrite(2)/pread(2) at explicit offsets, one syscall per op.

use super::api::{fsync_counted, op_err, Flush, Io, Method, ThreadCtx};
use super::info::gap_one_call_after_another;
use super::info::{MethodInfo, Targets};
use super::kind::MethodKind;
use crate::error::Result;
use crate::spec::OpKind;
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The `psync` method, as the registry (`registry::METHODS`) lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Psync,
    name: "psync",
    fio_engine: Some("psync"),
    help: "pwrite(2)/pread(2) at explicit offsets",
    targets: Targets::with_offsets(
        "reads and writes at file offsets (pwrite/pread); {t} has none (ESPIPE)",
    ),
    per_op_call: Some(("pwrite64", "pread64")),
    syscalls: &["pwrite64", "pread64"],
    syscall_note: "one pwrite(2)/pread(2) per op; the kernel's syscr/syscw count them too",
    plain: true,
    way: |_, s| {
        match s.op {
            OpKind::Write => "pwrite()",
            OpKind::Read => "pread()",
            OpKind::Mixed => "pread()/pwrite()",
        }
        .into()
    },
    gap: gap_one_call_after_another,
    mixed: true,
    drawn_lengths: true,
    ..MethodInfo::PLAIN
};

pub struct Psync {
    fd: OwnedFd,
    path: PathBuf,
    calls: u64,
}

impl Method for Psync {
    const LEAN: bool = true;

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        Ok(Psync {
            fd: ctx.target.open_for(ctx.spec, false)?,
            path: ctx.target.path.clone(),
            calls: 0,
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let fd = self.fd.as_raw_fd();
        let r = if io.write {
            // SAFETY: the runner's Io contract: `buf` holds `len` bytes nothing else touches during the call.
            // No memory of the process changes: a psync run maps no target (mmap is another method),
            // and targets under /proc are refused.
            unsafe { sys::pwrite_unmapped(fd, io.bytes(), io.offset) }
        } else {
            // SAFETY: as above.
            sys::pread(fd, unsafe { io.bytes_mut() }, io.offset)
        };
        r.map_err(|e| op_err(e, &self.path))
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        fsync_counted(&mut self.calls, self.fd.as_raw_fd(), &self.path)
    }

    fn syscalls(&self, ops: u64) -> Option<u64> {
        // One pwrite/pread per op, plus the fsyncs counted in `calls`.
        Some(ops + self.calls)
    }
}
