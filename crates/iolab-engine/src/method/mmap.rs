//! `mmap`: memcpy into (write) or out of (read) a MAP_SHARED mapping of the thread's region. No syscall per
//! op: the first touch of each page faults (counted as minor/major faults), and the kernel writes dirty
//! pages back later, or at `--msync` (msync(2) MS_SYNC of the region) / `--fsync` points, which are timed
//! and counted. The mapping starts at the page below the region, so any `--offset` works.
//!
//! A store to a page the filesystem has no block for cannot return ENOSPC: it faults with SIGBUS. So target
//! setup reserves a write run's file range with fallocate(2) first (`fault::reserve_for_mapping`), and the
//! mapping is registered with the SIGBUS handler (`fault::MappedTarget`) for the faults that remain.

use super::api::{op_err, Flush, Io, Method, ThreadCtx};
use super::info::SinkCalls;
use super::info::{Fit, MethodInfo, Targets};
use super::kind::MethodKind;
use crate::error::{Error, Result};
use crate::fault::MappedTarget;
use crate::spec::options::Applies;
use iolab_sys as sys;
use iolab_sys::Mapping;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The `mmap` method, as the registry (`registry::METHODS`) lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Mmap,
    name: "mmap",
    fio_engine: Some("mmap"),
    help: "memcpy into/out of a MAP_SHARED mapping (--msync)",
    maps: true,
    targets: Targets {
        dev_null: Fit::No("cannot map {t} (the kernel answers ENODEV); use a file, a block device or /dev/zero"),
        stream: Fit::No("maps files; {t} cannot be mapped (ENODEV)"),
        ..Targets::ANY
    },
    no_direct: Some("it copies through the page cache mapping"),
    syscall_note: "no syscall per op: data moves by page faults and writeback; counted calls are msync/fsync only",
    gap: |_, _, _| {
        "mmap: one memcpy into the mapping after the other (the p50 is the copy); the first touch of each \
         page adds a page fault (the tail), and no call is made"
            .into()
    },
    options: &[Applies::Msync],
    sink_calls: SinkCalls::Mapped,
    drawn_lengths: true,
    ..MethodInfo::PLAIN
};

pub struct Mmap {
    fd: OwnedFd,
    map: Mapping,
    /// The mapping, known to the SIGBUS handler while it exists (see `fault.rs`).
    _registered: MappedTarget,
    write: bool,
    /// Absolute file offset of the mapping's first byte.
    map_offset: u64,
    path: PathBuf,
    calls: u64,
}

const PAGE: u64 = 4096;

impl Method for Mmap {
    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let write = ctx.writes();
        let fd = ctx.target.open_for(ctx.spec, write)?;
        let path = ctx.target.path.clone();
        let map_offset = ctx.region_offset / PAGE * PAGE;
        crate::target::space::check_mapping_offset(
            map_offset,
            usize::BITS,
            crate::emulation::user_mode::detected().is_some(),
        )?;
        let len = crate::target::space::mapping_len(
            ctx.region_offset + ctx.region_len - map_offset,
            usize::BITS,
            "--file-size",
        )?;
        if write && ctx.target.kind == crate::target::TargetKind::File {
            // A file iolab created is already this long; one the user let us --overwrite may be shorter, and
            // storing beyond the end of a mapped file raises SIGBUS.
            let st = sys::fstat(fd.as_raw_fd()).map_err(|e| op_err(e, &path))?;
            let end = ctx.region_offset + ctx.region_len;
            if (st.st_size as u64) < end {
                sys::ftruncate(fd.as_raw_fd(), end).map_err(|e| op_err(e, &path))?;
            }
        }
        let map = Mapping::shared(fd.as_raw_fd(), len, map_offset, write).map_err(|e| {
            if e.errno == libc::ENODEV || e.errno == libc::EACCES {
                Error::usage(
                    "--method",
                    format!(
                        "mmap cannot map {} ({})",
                        path.display(),
                        sys::errno_name(e.errno)
                    ),
                )
            } else {
                op_err(e, &path)
            }
        })?;
        let registered = MappedTarget::register(map.as_ptr(), map.len(), &path);
        Ok(Mmap {
            fd,
            map,
            _registered: registered,
            write,
            map_offset,
            path,
            calls: 1,
        })
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        let at = (io.offset - self.map_offset) as usize;
        debug_assert!(at + io.len <= self.map.len());
        // SAFETY: the runner only plans offsets inside this thread's region, which the mapping covers
        // (at + len <= map.len()); the mapping is private to this thread's method and the op buffer is
        // a distinct allocation, so the ranges do not overlap.
        unsafe {
            let m = self.map.as_ptr().add(at);
            if self.write {
                std::ptr::copy_nonoverlapping(io.buf, m, io.len);
            } else {
                std::ptr::copy_nonoverlapping(m, io.buf, io.len);
            }
        }
        Ok(io.len)
    }

    fn flush(&mut self, what: Flush) -> Result<()> {
        self.calls += 1;
        match what {
            Flush::Msync => self.map.msync().map_err(|e| op_err(e, &self.path)),
            Flush::Fsync => sys::fsync(self.fd.as_raw_fd()).map_err(|e| op_err(e, &self.path)),
        }
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        // msync/fsync calls; the mmap(2) made in prepare is not part of the timed run.
        Some(self.calls - 1)
    }
}
