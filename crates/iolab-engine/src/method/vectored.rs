//! `vectored`: pwritev(2)/preadv(2), each op's block split into `--iovecs` pieces of equal size (the last
//! takes the remainder). One syscall per op. On a pipe or socket (no offsets): writev(2)/readv(2), and a
//! partial transfer is finished with write(2)/read(2) calls, counted.

use super::api::{fsync_counted, op_err, Flush, Io, Method, ThreadCtx};
use super::info::MethodInfo;
use super::info::{gap_one_call_after_another, SinkCalls};
use super::kind::MethodKind;
use crate::error::Result;
use crate::spec::options::Applies;
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The table header's word on the run's split.
fn describe(s: &crate::spec::Spec) -> Option<String> {
    Some(format!("{} iovecs", s.iovecs))
}

/// The `vectored` method, as the registry (`registry::METHODS`) lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Vectored,
    name: "vectored",
    fio_engine: Some("pvsync"),
    help: "pwritev(2)/preadv(2) (--iovecs)",
    per_op_call: Some(("pwritev", "preadv")),
    syscalls: &["pwritev", "preadv", "writev", "readv", "write", "read"],
    syscall_note: "one pwritev(2)/preadv(2) per op; the kernel's syscr/syscw count them too",
    describe,
    gap: gap_one_call_after_another,
    options: &[Applies::Iovecs],
    sink_calls: SinkCalls::PerIovecOnLegacy,
    ..MethodInfo::PLAIN
};

pub struct Vectored {
    fd: OwnedFd,
    write: bool,
    /// Piece lengths; the iovec array is rebuilt per op from the op's buffer.
    lens: Vec<usize>,
    iov: Vec<libc::iovec>,
    path: PathBuf,
    calls: u64,
    stream: bool,
}

// SAFETY: the iovec array only ever holds pointers into the runner's buffers for the duration of one
// call; between calls it is plain data owned by this value.
unsafe impl Send for Vectored {}

impl Method for Vectored {
    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let n = ctx.spec.iovecs as usize;
        let bs = ctx.spec.bs as usize;
        let piece = bs / n;
        let mut lens = vec![piece; n];
        lens[n - 1] = bs - piece * (n - 1);
        Ok(Vectored {
            fd: ctx.target.open_for(ctx.spec, false)?,
            write: ctx.writes(),
            iov: lens
                .iter()
                .map(|_| libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                })
                .collect(),
            lens,
            path: ctx.target.path.clone(),
            calls: 0,
            stream: ctx.target.kind.is_stream(),
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let mut p = io.buf;
        for (v, &l) in self.iov.iter_mut().zip(&self.lens) {
            v.iov_base = p.cast();
            v.iov_len = l;
            // SAFETY: the pieces add up to `io.len`, so `p` stays within (or one past) the op's buffer.
            p = unsafe { p.add(l) };
        }
        let fd = self.fd.as_raw_fd();
        // Every iovec points into the op's buffer, which the runner keeps valid during the call, and
        // nothing else accesses it while the kernel fills it.
        let r = match (self.write, self.stream) {
            // SAFETY: the iovecs cover the op's buffer (above).
            (true, false) => unsafe { sys::pwritev(fd, &self.iov, io.offset) },
            // SAFETY: the iovecs cover the op's buffer (above).
            (false, false) => unsafe { sys::preadv(fd, &self.iov, io.offset) },
            // SAFETY: the iovecs cover the op's buffer (above).
            (true, true) => unsafe { sys::writev(fd, &self.iov) },
            // SAFETY: the iovecs cover the op's buffer (above).
            (false, true) => unsafe { sys::readv(fd, &self.iov) },
        };
        let n = r.map_err(|e| op_err(e, &self.path))?;
        if self.stream && n < io.len {
            return super::api::finish_stream_io(
                fd,
                self.write,
                io,
                n,
                &mut self.calls,
                &self.path,
            );
        }
        Ok(n)
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        fsync_counted(&mut self.calls, self.fd.as_raw_fd(), &self.path)
    }

    fn syscalls(&self, ops: u64) -> Option<u64> {
        // One pwritev/preadv per op, plus the fsyncs counted in `calls`.
        Some(ops + self.calls)
    }
}
