//! The page cache of a file or block device: dropping its clean pages (posix_fadvise
//! POSIX_FADV_DONTNEED) and counting the pages it holds (mincore(2) of a mapping).

use std::os::fd::RawFd;

use super::errno::{SysErr, SysResult};
use super::lfs;
use super::memory::Mapping;

/// posix_fadvise(2) with POSIX_FADV_DONTNEED over `len` bytes from `off` (0: to the end): the kernel drops
/// the range's clean pages from the page cache (dirty ones are written back first only if already under
/// writeback; call fsync first to make them clean).
pub fn fadvise_dontneed(fd: RawFd, off: u64, len: u64) -> SysResult<()> {
    // SAFETY: posix_fadvise only reads its integer arguments.
    let r = unsafe {
        lfs::posix_fadvise(
            fd,
            off as lfs::off_t,
            len as lfs::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    // posix_fadvise returns the error number instead of setting errno.
    if r == 0 {
        Ok(())
    } else {
        Err(SysErr::new("posix_fadvise", r))
    }
}

/// mincore(2) over the whole of `m`: how many of its pages are in memory (for a file mapping: in the page
/// cache), and how many pages it spans.
pub fn resident_pages(m: &Mapping) -> SysResult<(u64, u64)> {
    // SAFETY: sysconf only reads its argument.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let pages = m.len().div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: the mapping is `m.len()` bytes at `m.as_ptr()` (page aligned, mmap's result) and stays
    // mapped while `m` is borrowed; `vec` holds one byte per page of that range, as mincore writes.
    let r = unsafe { libc::mincore(m.as_ptr().cast(), m.len(), vec.as_mut_ptr()) };
    super::errno::result("mincore", r)?;
    let resident = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
    Ok((resident, pages as u64))
}
