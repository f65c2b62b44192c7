//! `epoll`: the event-loop way of doing stream I/O. The thread's pipe or socket is non-blocking
//! (O_NONBLOCK) and registered once (level-triggered EPOLLOUT for writes, EPOLLIN for reads); each op
//! calls write(2)/read(2) and, whenever the kernel answers EAGAIN (the pipe or socket buffer is full, or
//! nothing has arrived), waits in epoll_wait(2) and tries again, until the op's bytes have moved. Every one
//! of those calls is counted, so syscalls/op above 1 shows how often the thread had to wait. Files and
//! devices are always ready and epoll refuses them (EPERM), so this method takes stream targets only.

use super::api::{op_err, Flush, Io, Method, ThreadCtx};
use super::info::{Fit, MethodInfo, Targets};
use super::kind::MethodKind;
use crate::error::{Error, Result};
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

const NOT_A_STREAM: Fit = Fit::Never(
    "waits for pipes and sockets to become ready; files and devices are always ready (epoll_ctl refuses them \
     with EPERM): use --target pipe, socketpair or tcp",
);

/// The `epoll` method, as the registry (`registry::METHODS`) lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Epoll,
    name: "epoll",
    help: "write(2)/read(2) on a non-blocking stream, epoll_wait(2) after each EAGAIN (streams only)",
    targets: Targets {
        file: NOT_A_STREAM,
        block_device: NOT_A_STREAM,
        dev_null: NOT_A_STREAM,
        dev_zero: NOT_A_STREAM,
        stream: Fit::Yes,
        sink: NOT_A_STREAM,
        sink_legacy: NOT_A_STREAM,
        nvme_generic: super::info::NVME_COMMANDS_ONLY,
    },
    syscalls: &["write", "read", "epoll_wait"],
    syscall_note: "every write(2)/read(2) (several when the stream takes part of a block) and every epoll_wait(2) after EAGAIN",
    gap: |_, _, _| {
        "epoll: write(2) after write(2) on a non-blocking stream; where the stream was full, the epoll_wait \
         for the reader is in the gap (the tail)"
            .into()
    },
    ..MethodInfo::PLAIN
};

pub struct Epoll {
    fd: OwnedFd,
    ep: OwnedFd,
    write: bool,
    path: PathBuf,
    /// write/read and epoll_wait calls made by ops.
    calls: u64,
    events: [libc::epoll_event; 1],
}

impl Method for Epoll {
    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let fd = ctx.target.open_for(ctx.spec, false)?;
        let path = ctx.target.path.clone();
        sys::set_nonblocking(fd.as_raw_fd(), true).map_err(|e| op_err(e, &path))?;
        let ep = sys::epoll_create()?;
        let write = ctx.writes();
        let ev = if write { libc::EPOLLOUT } else { libc::EPOLLIN } as u32;
        sys::epoll_add(ep.as_raw_fd(), fd.as_raw_fd(), ev).map_err(|e| {
            if e.errno == libc::EPERM {
                Error::Runtime(format!(
                    "epoll cannot watch {} (EPERM: it is always ready); use a pipe or socket target",
                    path.display()
                ))
            } else {
                op_err(e, &path)
            }
        })?;
        Ok(Epoll {
            fd,
            ep,
            write,
            path,
            calls: 0,
            events: [libc::epoll_event { events: 0, u64: 0 }],
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let fd = self.fd.as_raw_fd();
        let mut done = 0usize;
        while done < io.len {
            self.calls += 1;
            let r = if self.write {
                // SAFETY: the runner's Io contract: `buf` holds `len` bytes nothing else touches meanwhile.
                sys::write(fd, &unsafe { io.bytes() }[done..])
            } else {
                // SAFETY: as above.
                sys::read(fd, &mut unsafe { io.bytes_mut() }[done..])
            };
            match r {
                Ok(0) if !self.write => break,
                Ok(n) => done += n,
                Err(e) if e.errno == libc::EAGAIN => {
                    self.calls += 1;
                    sys::epoll_wait(self.ep.as_raw_fd(), &mut self.events)
                        .map_err(|e| op_err(e, &self.path))?;
                }
                Err(e) if e.errno == libc::EINTR => {}
                Err(e) => return Err(op_err(e, &self.path)),
            }
        }
        Ok(done)
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        Ok(())
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(self.calls)
    }
}
