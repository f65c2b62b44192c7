//! `psync`: pwrite(2)/pread(2) at explicit offsets, one syscall per op.

use super::{fsync_counted, op_err, Caps, Flush, Io, Method, ThreadCtx};
use crate::error::Result;
use crate::sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

pub struct Psync {
    fd: OwnedFd,
    write: bool,
    path: PathBuf,
    calls: u64,
}

impl Method for Psync {
    fn caps() -> Caps {
        Caps::SYNC_SYSCALL
    }

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        Ok(Psync {
            fd: ctx.target.open_for(ctx.spec, false)?,
            write: ctx.writes(),
            path: ctx.target.path.clone(),
            calls: 0,
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let fd = self.fd.as_raw_fd();
        let r = if self.write {
            // SAFETY: the runner's Io contract: `buf` holds `len` bytes nothing else touches during the call.
            sys::pwrite(fd, unsafe { io.bytes() }, io.offset)
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
