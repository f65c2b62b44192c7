//! Names relative to a directory descriptor, and what identifies a file beyond its name: mkdir, openat
//! (O_PATH, O_NOFOLLOW), unlinkat, fstatat, statx birth time, extended attributes. The leftovers journal
//! (`crate::leftovers`) uses them so that it never follows a symbolic link it did not expect and removes a
//! name only in the directory it checked.

use std::ffi::{CString, OsStr};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::errno::{result, SysErr, SysResult};
use super::files::cpath;
use super::lfs;

fn cname(name: &OsStr) -> SysResult<CString> {
    CString::new(name.as_bytes()).map_err(|_| SysErr::new("openat", libc::EINVAL))
}

/// mkdir(2).
pub fn mkdir(path: &Path, mode: libc::mode_t) -> SysResult<()> {
    let c = cpath(path)?;
    // SAFETY: `c` is NUL-terminated and outlives the call.
    result("mkdir", unsafe { libc::mkdir(c.as_ptr(), mode) }).map(|_| ())
}

/// openat(2) of `name` in the directory `dir` (O_CLOEXEC added). Owned descriptor.
pub fn openat(
    dir: RawFd,
    name: &OsStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> SysResult<OwnedFd> {
    let c = cname(name)?;
    // SAFETY: `c` is NUL-terminated and outlives the call; `dir` is the caller's descriptor.
    let fd = result("openat", unsafe {
        lfs::openat(
            dir,
            c.as_ptr(),
            flags | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// unlinkat(2) of `name` in `dir`; AT_REMOVEDIR when `is_dir` (an empty directory only).
pub fn unlinkat(dir: RawFd, name: &OsStr, is_dir: bool) -> SysResult<()> {
    let c = cname(name)?;
    let flags = if is_dir { libc::AT_REMOVEDIR } else { 0 };
    // SAFETY: `c` is NUL-terminated and outlives the call.
    result("unlinkat", unsafe {
        libc::unlinkat(dir, c.as_ptr(), flags)
    })
    .map(|_| ())
}

/// The birth time (seconds, nanoseconds) of an open file from statx(STATX_BTIME) (Linux 4.11), `None` where
/// the filesystem does not keep one. Works on O_PATH descriptors.
pub fn statx_btime(fd: RawFd) -> SysResult<Option<(i64, u32)>> {
    let sx = super::files::statx_fd(fd, libc::STATX_BTIME)?;
    Ok((sx.stx_mask & libc::STATX_BTIME != 0)
        .then_some((sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec)))
}

/// The path that reaches the file an open descriptor (O_PATH included) refers to, through procfs.
pub fn fd_path(fd: RawFd) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/proc/self/fd/{fd}"))
}

/// setxattr(2) of `name` = `value` on the file `fd` refers to (through [`fd_path`], so that an O_PATH
/// descriptor works; the procfs link always leads to that very file). EOPNOTSUPP where the filesystem has
/// no user attributes.
pub fn set_xattr(fd: RawFd, name: &str, value: &[u8]) -> SysResult<()> {
    let p = cpath(&fd_path(fd))?;
    let n = CString::new(name).map_err(|_| SysErr::new("setxattr", libc::EINVAL))?;
    // SAFETY: both strings are NUL-terminated and `value` is a valid buffer of its length; all outlive the
    // call.
    result("setxattr", unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    })
    .map(|_| ())
}

/// getxattr(2) of `name` on the file `fd` refers to (as [`set_xattr`]); `Ok(None)` when it has none
/// (ENODATA).
pub fn get_xattr(fd: RawFd, name: &str) -> SysResult<Option<Vec<u8>>> {
    let p = cpath(&fd_path(fd))?;
    let n = CString::new(name).map_err(|_| SysErr::new("getxattr", libc::EINVAL))?;
    let mut buf = vec![0u8; 256];
    // SAFETY: both strings are NUL-terminated; `buf` is a valid out-buffer of its length.
    match result("getxattr", unsafe {
        libc::getxattr(p.as_ptr(), n.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
    }) {
        Ok(len) => {
            buf.truncate(len as usize);
            Ok(Some(buf))
        }
        Err(e) if e.errno == libc::ENODATA => Ok(None),
        Err(e) => Err(e),
    }
}

/// readlinkat(2) of a symbolic link opened with O_PATH|O_NOFOLLOW (the empty name: the link itself).
pub fn read_link_fd(fd: RawFd) -> SysResult<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: the empty path names `fd` itself (Linux 2.6.39); `buf` is a valid out-buffer of its length.
    let n = result("readlinkat", unsafe {
        libc::readlinkat(fd, c"".as_ptr(), buf.as_mut_ptr().cast(), buf.len())
    })?;
    buf.truncate(n as usize);
    Ok(buf)
}
