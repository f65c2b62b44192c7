//! `pv2`: pwritev2(2)/preadv2(2) (Linux 4.6) with per-call flags, `--rw-flags` (RWF_*): `nowait` (4.14:
//! fail with EAGAIN instead of blocking), `hipri` (4.6: poll for the completion), `dsync`/`sync` (4.7:
//! O_DSYNC/O_SYNC for this call), `append` (4.16: write at the end of the file). One syscall per op.
//!
//! With `nowait`, an op the kernel would have to block for (a page-cache miss, a block allocation,
//! writeback throttling, a lock) returns EAGAIN at once, or moves only part of the block. iolab counts
//! such an op as "would have blocked" and finishes it with a plain call (the same flags without
//! RWF_NOWAIT), so every op still moves its whole block. The share of ops that would have blocked is the
//! question behind io_uring's io-wq punts, asked of the kernel directly: io_uring first tries each request
//! with IOCB_NOWAIT and punts it to a worker thread exactly when this call would answer EAGAIN.

use super::api::ThreadCtx;
use super::api::{fsync_counted, op_err, Flush, Io, Method, MethodStats};
use super::info::gap_one_call_after_another;
use super::info::MethodInfo;
use super::info::Targets;
use super::kind::MethodKind;
use crate::error::{Error, Result};
use crate::result::NowaitStats;
use crate::spec::options::Applies;
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The table header's word on the run's flags.
fn describe(s: &crate::spec::Spec) -> Option<String> {
    let on = crate::spec::rw_flags::words(s.rw_flags);
    (!on.is_empty()).then(|| format!("RWF {on}"))
}

/// `pv2`, as the registry lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Pv2,
    name: "pv2",
    fio_engine: Some("pvsync2"),
    help: "pwritev2(2)/preadv2(2) with --rw-flags (RWF_NOWAIT: ops that would block are counted, then \
           finished with a plain call)",
    targets: Targets::with_offsets(
        "reads and writes at file offsets (pwritev2/preadv2); {t} has none (ESPIPE)",
    ),
    per_op_call: Some(("pwritev2", "preadv2")),
    syscalls: &["pwritev2", "preadv2"],
    syscall_note: "one pwritev2(2)/preadv2(2) per op, plus one plain call for each op that would have \
                   blocked (--rw-flags nowait); the kernel's syscr/syscw count them too",
    describe,
    gap: gap_one_call_after_another,
    mixed: true,
    options: &[Applies::RwFlags],
    drawn_lengths: true,
    ..MethodInfo::PLAIN
};

pub struct Pv2 {
    fd: OwnedFd,
    /// RWF_* for the first try of every op.
    flags: i32,
    /// The same without RWF_NOWAIT, for finishing an op that would have blocked.
    plain: i32,
    iov: [libc::iovec; 1],
    path: PathBuf,
    calls: u64,
    stats: NowaitStats,
}

// SAFETY: the iovec only ever points into the runner's buffer during one call; between calls it is plain
// data owned by this value.
unsafe impl Send for Pv2 {}

impl Pv2 {
    /// One pwritev2/preadv2 of `iov` at `offset` with `flags`.
    #[inline(always)]
    fn call(
        &self,
        write: bool,
        iov: &[libc::iovec],
        offset: u64,
        flags: i32,
    ) -> sys::SysResult<usize> {
        let fd = self.fd.as_raw_fd();
        if write {
            // SAFETY: the iovec points into the op's buffer (or its unfinished tail), which the runner
            // keeps valid and untouched during the call.
            unsafe { sys::pwritev2(fd, iov, offset, flags) }
        } else {
            // SAFETY: as for the write: the op's buffer, valid and untouched during the call.
            unsafe { sys::preadv2(fd, iov, offset, flags) }
        }
    }

    /// Finishes an op from byte `done` with plain calls (RWF_NOWAIT dropped), each counted.
    fn finish_plain(&mut self, io: &Io, mut done: usize) -> Result<usize> {
        while done < io.len {
            let tail = [libc::iovec {
                // SAFETY: `done < io.len`, so the tail stays inside the op's buffer.
                iov_base: unsafe { io.buf.add(done) }.cast(),
                iov_len: io.len - done,
            }];
            self.calls += 1;
            match self.call(io.write, &tail, io.offset + done as u64, self.plain) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.errno == libc::EINTR => continue,
                Err(e) => return Err(self.refusal(e)),
            }
        }
        Ok(done)
    }

    /// A failed call's error; the kernel's EOPNOTSUPP names the flag it refused.
    fn refusal(&self, e: sys::SysErr) -> Error {
        if e.errno != libc::EOPNOTSUPP || self.flags == 0 {
            return op_err(e, &self.path);
        }
        let why = if self.flags & libc::RWF_DONTCACHE != 0 {
            crate::spec::rw_flags::DONTCACHE_REFUSED
        } else {
            "RWF_NOWAIT needs a file or device whose driver supports non-blocking I/O; RWF_HIPRI needs \
             O_DIRECT on some kernels"
        };
        Error::sys_hint(
            e,
            format!("{} refuses these --rw-flags: {why}", self.path.display()),
        )
    }
}

impl Method for Pv2 {
    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let flags = ctx.spec.rw_flags as i32;
        Ok(Pv2 {
            fd: ctx.target.open_for(ctx.spec, false)?,
            flags,
            plain: flags & !libc::RWF_NOWAIT,
            iov: [libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }],
            path: ctx.target.path.clone(),
            calls: 0,
            stats: NowaitStats {
                nowait: flags & libc::RWF_NOWAIT != 0,
                ..Default::default()
            },
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        self.iov[0] = libc::iovec {
            iov_base: io.buf.cast(),
            iov_len: io.len,
        };
        match self.call(io.write, &self.iov, io.offset, self.flags) {
            Ok(n) if n == io.len || !self.stats.nowait => Ok(n),
            // End of file: nothing would have blocked.
            Ok(0) if !io.write => Ok(0),
            Ok(n) => {
                // Part of the block moved: either the kernel would have had to wait for the rest, or a read
                // met the end of the file (then the plain call moves nothing more, and nothing is counted).
                let done = self.finish_plain(io, n)?;
                if done > n {
                    self.stats.would_block += 1;
                    self.stats.partial += 1;
                }
                Ok(done)
            }
            Err(e) if e.errno == libc::EAGAIN && self.stats.nowait => {
                self.stats.would_block += 1;
                self.finish_plain(io, 0)
            }
            // The file cannot even try without blocking (ext4 and tmpfs buffered writes on many kernels):
            // every op would block, and io_uring punts every such request to io-wq.
            Err(e) if e.errno == libc::EOPNOTSUPP && self.stats.nowait => {
                self.stats.would_block += 1;
                self.stats.unsupported += 1;
                self.finish_plain(io, 0)
            }
            Err(e) => Err(self.refusal(e)),
        }
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        fsync_counted(&mut self.calls, self.fd.as_raw_fd(), &self.path)
    }

    fn syscalls(&self, ops: u64) -> Option<u64> {
        // One pwritev2/preadv2 per op, plus the plain finishing calls and fsyncs counted in `calls`.
        Some(ops + self.calls)
    }

    fn stats(&self) -> MethodStats {
        MethodStats {
            nowait: Some(self.stats.clone()),
            ..Default::default()
        }
    }
}
