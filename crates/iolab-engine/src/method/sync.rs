//! `sync`: write(2)/read(2) at the file position, as the seed programs did. Sequential runs make one
//! syscall per op; where the next offset is not the current position (random pattern, or a region that
//! wraps) an lseek(2) comes first, as in fio's sync engine, and is counted. /dev/null and /dev/zero ignore
//! the position, so no lseek is ever made there.

use super::api::{fsync_counted, op_err, Flush, Io, Method, ThreadCtx};
use super::info::gap_one_call_after_another;
use super::info::MethodInfo;
use super::kind::MethodKind;
use crate::error::Result;
use crate::spec::OpKind;
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The `sync` method, as the registry (`registry::METHODS`) lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Sync,
    name: "sync",
    fio_engine: Some("sync"),
    help: "write(2)/read(2) at the file position",
    per_op_call: Some(("write", "read")),
    syscalls: &["write", "read", "lseek"],
    syscall_note: "one write(2)/read(2) per op (plus an lseek(2) where the offset jumps); the kernel's syscr/syscw count them too",
    plain: true,
    way: |_, s| (if s.op == OpKind::Write { "write()" } else { "read()" }).into(),
    gap: gap_one_call_after_another,
    drawn_lengths: true,
    ..MethodInfo::PLAIN
};

pub struct Sync {
    fd: OwnedFd,
    write: bool,
    positionless: bool,
    /// A pipe or socket: a transfer may be partial and is finished with more calls.
    stream: bool,
    /// The file position as the kernel has it.
    pos: u64,
    path: PathBuf,
    calls: u64,
}

impl Method for Sync {
    const LEAN: bool = true;

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        Ok(Sync {
            fd: ctx.target.open_for(ctx.spec, false)?,
            write: ctx.writes(),
            positionless: ctx.positionless(),
            stream: ctx.target.kind.is_stream(),
            pos: 0,
            path: ctx.target.path.clone(),
            calls: 0,
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let fd = self.fd.as_raw_fd();
        if !self.positionless && io.offset != self.pos {
            self.calls += 1;
            self.pos = sys::lseek_set(fd, io.offset).map_err(|e| op_err(e, &self.path))?;
        }
        let r = if self.write {
            // SAFETY: the runner's Io contract: `buf` holds `len` bytes nothing else touches during the call.
            sys::write(fd, unsafe { io.bytes() })
        } else {
            // SAFETY: as above.
            sys::read(fd, unsafe { io.bytes_mut() })
        };
        let mut n = r.map_err(|e| op_err(e, &self.path))?;
        if self.stream && n < io.len {
            n = super::api::finish_stream_io(fd, self.write, io, n, &mut self.calls, &self.path)?;
        }
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        fsync_counted(&mut self.calls, self.fd.as_raw_fd(), &self.path)
    }

    fn syscalls(&self, ops: u64) -> Option<u64> {
        // One write/read per op, plus the lseeks and fsyncs counted in `calls`.
        Some(ops + self.calls)
    }
}
