//! `--cold-cache`: before each pass of a read run, the target's range is written back (fsync) and its
//! pages dropped from the page cache (posix_fadvise POSIX_FADV_DONTNEED), so buffered reads come from the
//! device, as the storage paper's reads of 20 GiB files did on a board with 1 GiB of memory. The pages
//! still cached afterwards are counted (mincore of a read-only mapping of the range) and said in the
//! run's notes: tmpfs keeps every page (its pages are the file), a busy file may keep some.

use crate::error::{Error, Result};
use crate::spec::Spec;
use crate::target_kind::TargetKind;
use iolab_sys as sys;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;

/// Refuses `--cold-cache` on a target without a page cache of its own (a stream, /dev/zero).
pub(super) fn check(spec: &Spec, kind: TargetKind, shown: &str) -> Result<()> {
    if spec.cold_cache && !matches!(kind, TargetKind::File | TargetKind::BlockDevice) {
        return Err(Error::usage(
            "--cold-cache",
            format!(
                "{shown} has no page cache to drop; --cold-cache applies to a regular file or a block device"
            ),
        ));
    }
    Ok(())
}

/// Writes back and drops the cached pages of [off, end) of the target open at `fd`; returns the note saying so, with the
/// pages still cached after the drop.
pub(super) fn drop_pages(fd: OwnedFd, off: u64, end: u64, shown: &str) -> Result<String> {
    let raw = fd.as_raw_fd();
    // Dirty pages (a file iolab has just filled) are not dropped: write them back first.
    sys::fsync(raw).map_err(|e| Error::sys_on(e, shown))?;
    sys::fadvise_dontneed(raw, off, end - off).map_err(|e| Error::sys_on(e, shown))?;
    let page = 4096u64;
    let start = off / page * page;
    let counted = sys::Mapping::shared(raw, (end - start) as usize, start, false)
        .and_then(|m| sys::resident_pages(&m));
    let tmpfs = sys::fs_type_name(&sys::fd_path(raw)).is_ok_and(|t| t == "tmpfs");
    Ok(match counted {
        Ok((cached, pages)) => format!(
            "--cold-cache: iolab wrote {shown} back (fsync) and dropped its pages from the page cache \
             (posix_fadvise DONTNEED) before the pass (not timed); {cached} of its {pages} pages ({:.0}%) were \
             still cached{}",
            cached as f64 / pages.max(1) as f64 * 100.0,
            if tmpfs && cached > 0 {
                ": tmpfs keeps them (its pages are the file), so its reads stay in memory"
            } else {
                ""
            }
        ),
        Err(e) => format!(
            "--cold-cache: iolab wrote {shown} back (fsync) and dropped its pages from the page cache \
             (posix_fadvise DONTNEED) before the pass (not timed); the pages still cached could not be \
             counted ({} failed: {})",
            e.call,
            sys::errno_name(e.errno)
        ),
    })
}
