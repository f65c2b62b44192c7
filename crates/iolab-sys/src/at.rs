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

/// faccessat(2) with the effective ids (AT_EACCESS): may this process create and remove names in the
/// directory `dir` (W_OK | X_OK)? EROFS on a read-only filesystem, also for root.
pub fn access_writable_dir(dir: &Path) -> SysResult<()> {
    let c = cpath(dir)?;
    // SAFETY: `c` is NUL-terminated and outlives the call.
    result("faccessat", unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS,
        )
    })
    .map(|_| ())
}

/// mkdirat(2): a new directory `name` in `dir` (EEXIST when the name is taken, whatever it is).
pub fn mkdirat(dir: RawFd, name: &OsStr, mode: libc::mode_t) -> SysResult<()> {
    let c = cname(name)?;
    // SAFETY: `c` is NUL-terminated and outlives the call; `dir` is the caller's descriptor.
    result("mkdirat", unsafe { libc::mkdirat(dir, c.as_ptr(), mode) }).map(|_| ())
}

/// fstatat(2) of `name` in `dir` without following a symbolic link (AT_SYMLINK_NOFOLLOW): what the name
/// itself is now.
pub fn fstatat_nofollow(dir: RawFd, name: &OsStr) -> SysResult<lfs::Stat> {
    let c = cname(name)?;
    // SAFETY: a zeroed `struct stat` is a valid value for the kernel to fill.
    let mut st: lfs::Stat = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and outlives the call; `st` is a valid out pointer.
    result("fstatat", unsafe {
        lfs::fstatat(dir, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW)
    })?;
    Ok(st)
}

/// Removes `name` from `dir` only while it is still the file (device `dev`, inode `ino`) it was: fstatat
/// without following a link, then unlinkat (AT_REMOVEDIR for a directory: an empty one only). True when
/// it was removed or is already gone; false when the name now refers to another file (left alone) or the
/// removal failed. Async-signal-safe (fstatat and unlinkat only): the Ctrl-C handler calls it.
///
/// # Safety
/// `name` must be a valid NUL-terminated C string.
pub unsafe fn remove_same_at_raw(
    dir: RawFd,
    name: *const libc::c_char,
    dev: u64,
    ino: u64,
    is_dir: bool,
) -> bool {
    // SAFETY: a zeroed `struct stat` is a valid out value; `name` is the caller's C string; errno is this
    // thread's, read right after each call.
    unsafe {
        let mut st: lfs::Stat = std::mem::zeroed();
        if lfs::fstatat(dir, name, &mut st, libc::AT_SYMLINK_NOFOLLOW) != 0 {
            return *libc::__errno_location() == libc::ENOENT;
        }
        if lfs::identity(&st) != (dev, ino) {
            return false;
        }
        let flags = if is_dir { libc::AT_REMOVEDIR } else { 0 };
        libc::unlinkat(dir, name, flags) == 0 || *libc::__errno_location() == libc::ENOENT
    }
}

/// Unlinks the files directly in directory `name` of `dir` (not its subdirectories), only while the name
/// is still the directory (`dev`, `ino`) it was; the caller then removes the directory. Async-signal-safe
/// (openat, fstat, getdents64, unlinkat, close): the Ctrl-C handler empties iolab's directories of its
/// children's files with it. False when the directory could not be opened as itself.
///
/// # Safety
/// `name` must be a valid NUL-terminated C string.
pub unsafe fn empty_dir_files_raw(
    dir: RawFd,
    name: *const libc::c_char,
    dev: u64,
    ino: u64,
) -> bool {
    // SAFETY: `name` is the caller's C string; `buf` is a local buffer getdents64 fills within its
    // length, and each entry is read within the bytes it returned (d_reclen); the descriptor is closed here.
    unsafe {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let fd = libc::openat(dir, name, flags);
        if fd < 0 {
            return false;
        }
        let mut st: lfs::Stat = std::mem::zeroed();
        if lfs::fstat(fd, &mut st) != 0 || lfs::identity(&st) != (dev, ino) {
            libc::close(fd);
            return false;
        }
        let mut buf = [0u8; 4096];
        loop {
            let n = libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len());
            if n <= 0 {
                break;
            }
            let mut at = 0usize;
            while at + 19 < n as usize {
                // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name (NUL-terminated).
                let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
                let kind = buf[at + 18];
                let entry = buf.as_ptr().add(at + 19).cast::<libc::c_char>();
                let dots = *entry == b'.' as libc::c_char
                    && (*entry.add(1) == 0
                        || (*entry.add(1) == b'.' as libc::c_char && *entry.add(2) == 0));
                if !dots && kind != libc::DT_DIR {
                    libc::unlinkat(fd, entry, 0);
                }
                if reclen == 0 {
                    break;
                }
                at += reclen;
            }
        }
        libc::close(fd);
        true
    }
}

/// Removes the directory `name` of `dir` and everything in it, only while the name is still the directory
/// (`dev`, `ino`) it was, descending through descriptors opened with O_NOFOLLOW (a symbolic link inside is
/// removed, never followed). Entries that cannot be removed stay; the first error is returned.
pub fn remove_tree_at(dir: RawFd, name: &OsStr, dev: u64, ino: u64) -> SysResult<()> {
    let st = fstatat_nofollow(dir, name)?;
    if lfs::identity(&st) != (dev, ino) {
        return Err(SysErr::new("fstatat", libc::ESTALE));
    }
    let d = openat(
        dir,
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        0,
    )?;
    // The name may have been given to another directory between the look and the open (a rename
    // exchange): only the directory that was looked at is emptied.
    if lfs::identity(&super::files::fstat(std::os::fd::AsRawFd::as_raw_fd(&d))?) != (dev, ino) {
        return Err(SysErr::new("open", libc::ESTALE));
    }
    for entry in read_dir_fd(std::os::fd::AsRawFd::as_raw_fd(&d))? {
        let est = match fstatat_nofollow(std::os::fd::AsRawFd::as_raw_fd(&d), &entry) {
            Ok(s) => s,
            Err(_) => continue,
        };
        // Never below a mount point (a bind mount of someone's directory in it): left, so the
        // directory's own removal fails and says so.
        if est.st_dev != st.st_dev || is_mount_root(std::os::fd::AsRawFd::as_raw_fd(&d), &entry) {
            continue;
        }
        if est.st_mode & libc::S_IFMT == libc::S_IFDIR {
            let (edev, eino) = lfs::identity(&est);
            remove_tree_at(std::os::fd::AsRawFd::as_raw_fd(&d), &entry, edev, eino)?;
        } else {
            unlinkat(std::os::fd::AsRawFd::as_raw_fd(&d), &entry, false)?;
        }
    }
    drop(d);
    unlinkat(dir, name, true)
}

/// Whether `name` in `dir` is the root of a mount (statx STATX_ATTR_MOUNT_ROOT, Linux 5.8+; a kernel that
/// does not say is taken at its word).
fn is_mount_root(dir: RawFd, name: &OsStr) -> bool {
    let Ok(c) = cname(name) else {
        return false;
    };
    // SAFETY: a zeroed statx is a valid out value; `c` is NUL-terminated and outlives the call.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: as above; statx writes only `sx`.
    let r = unsafe {
        libc::statx(
            dir,
            c.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            libc::STATX_BASIC_STATS,
            &mut sx,
        )
    };
    r == 0
        && sx.stx_attributes_mask & libc::STATX_ATTR_MOUNT_ROOT as u64 != 0
        && sx.stx_attributes & libc::STATX_ATTR_MOUNT_ROOT as u64 != 0
}

/// The names in the directory open at `fd` ("." and ".." left out), read through a duplicate of it.
fn read_dir_fd(fd: RawFd) -> SysResult<Vec<std::ffi::OsString>> {
    // SAFETY: dup of a descriptor the caller owns; the duplicate is owned by the DIR stream below.
    let dupfd = result("dup", unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) })?;
    // SAFETY: `dupfd` is a new descriptor of a directory; on success the stream owns it.
    let dirp = unsafe { libc::fdopendir(dupfd) };
    if dirp.is_null() {
        let e = SysErr::last("fdopendir");
        // SAFETY: the stream was not made, so the duplicate is still ours to close.
        unsafe { libc::close(dupfd) };
        return Err(e);
    }
    let mut out = Vec::new();
    loop {
        // SAFETY: `dirp` is a valid stream until closedir below.
        let ent = unsafe { libc::readdir(dirp) };
        if ent.is_null() {
            break;
        }
        // SAFETY: readdir returned a valid entry whose d_name is NUL-terminated.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
        let b = name.to_bytes();
        if b != b"." && b != b".." {
            out.push(OsStr::from_bytes(b).to_os_string());
        }
    }
    // SAFETY: `dirp` came from fdopendir and is closed once.
    unsafe { libc::closedir(dirp) };
    Ok(out)
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

/// removexattr(2) of `name` on the file `fd` refers to (as [`set_xattr`]); none to remove is no error.
pub fn remove_xattr(fd: RawFd, name: &str) -> SysResult<()> {
    let p = cpath(&fd_path(fd))?;
    let n = CString::new(name).map_err(|_| SysErr::new("removexattr", libc::EINVAL))?;
    // SAFETY: both strings are NUL-terminated and outlive the call.
    match result("removexattr", unsafe {
        libc::removexattr(p.as_ptr(), n.as_ptr())
    }) {
        Err(e) if e.errno != libc::ENODATA => Err(e),
        _ => Ok(()),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_directory_is_emptied_of_its_files_only_while_it_is_itself() {
        let base = std::env::temp_dir().join(format!("iolab-at-empty-{}", std::process::id()));
        let t = base.join("t");
        std::fs::create_dir_all(t.join("sub")).unwrap();
        for n in ["a.jsonl", "b.json", ".hidden"] {
            std::fs::write(t.join(n), b"x").unwrap();
        }
        let parent = std::fs::File::open(&base).unwrap();
        let name = CString::new("t").unwrap();
        let m = std::fs::metadata(&t).unwrap();
        // Another directory's identity: nothing is touched.
        // SAFETY: `name` is a valid C string.
        assert!(!unsafe {
            empty_dir_files_raw(parent.as_raw_fd(), name.as_ptr(), m.dev(), m.ino() + 1)
        });
        assert_eq!(std::fs::read_dir(&t).unwrap().count(), 4);
        // SAFETY: as above.
        assert!(unsafe {
            empty_dir_files_raw(parent.as_raw_fd(), name.as_ptr(), m.dev(), m.ino())
        });
        let left: Vec<_> = std::fs::read_dir(&t)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["sub"], "the files went, the subdirectory stayed");
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A directory exchanged with the tree's name while the tree is removed (renameat2 RENAME_EXCHANGE in
    /// a loop) keeps everything it holds: only the directory looked at is emptied.
    #[test]
    fn a_directory_swapped_in_under_the_name_is_not_emptied() {
        let base = std::env::temp_dir().join(format!("iolab-at-test-{}", std::process::id()));
        std::fs::create_dir(&base).unwrap();
        let dir = crate::files::open(&base, libc::O_RDONLY | libc::O_DIRECTORY, 0).unwrap();
        for attempt in 0..30 {
            let (t, v) = (
                base.join(format!("t{attempt}")),
                base.join(format!("v{attempt}")),
            );
            std::fs::create_dir_all(t.join("sub")).unwrap();
            std::fs::write(t.join("sub/a"), b"iolab's").unwrap();
            std::fs::create_dir(&v).unwrap();
            std::fs::write(v.join("keep"), b"someone else's").unwrap();
            let (tm, vm) = (
                std::fs::metadata(&t).unwrap(),
                std::fs::metadata(&v).unwrap(),
            );
            let (tc, vc) = (cname(t.as_os_str()).unwrap(), cname(v.as_os_str()).unwrap());
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let started = std::sync::Arc::new(std::sync::Barrier::new(2));
            let (s2, b2) = (stop.clone(), started.clone());
            let swapper = std::thread::spawn(move || {
                b2.wait();
                while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                    // SAFETY: two valid NUL-terminated paths; renameat2 reads only them (the system
                    // call itself: musl has no renameat2 wrapper).
                    unsafe {
                        libc::syscall(
                            libc::SYS_renameat2,
                            libc::AT_FDCWD,
                            tc.as_ptr(),
                            libc::AT_FDCWD,
                            vc.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        )
                    };
                }
            });
            started.wait();
            let name = t.file_name().unwrap();
            for _ in 0..100_000 {
                if remove_tree_at(dir.as_raw_fd(), name, tm.dev(), tm.ino()).is_ok() {
                    break;
                }
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            swapper.join().unwrap();
            // Whichever name the other directory has now, its file is there.
            let theirs = [&t, &v]
                .into_iter()
                .find(|p| std::fs::metadata(p).is_ok_and(|m| m.ino() == vm.ino()))
                .expect("the other directory still exists");
            assert_eq!(
                std::fs::read(theirs.join("keep")).unwrap(),
                b"someone else's",
                "attempt {attempt}"
            );
        }
        std::fs::remove_dir_all(&base).unwrap();
    }
}
