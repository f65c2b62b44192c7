//! Files and block devices: open, read/write at the position or an offset (plain and vectored), seek,
//! fsync, truncate, stat/statx/statfs, the block-device ioctls, removal, and the kernel-side copies between
//! descriptors (copy_file_range, sendfile, splice).

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::errno::{result, SysErr, SysResult};
use super::lfs;

/// Converts a path to a C string; a path with an interior NUL cannot name a file.
pub fn cpath(path: &Path) -> SysResult<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SysErr::new("open", libc::EINVAL))
}

/// open(2). Returns an owned descriptor.
pub fn open(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> SysResult<OwnedFd> {
    let c = cpath(path)?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call; open has no other preconditions.
    let fd = result("open", unsafe {
        lfs::open(c.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// write(2) at the file position.
#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> SysResult<usize> {
    // SAFETY: `buf` is a valid readable slice of `buf.len()` bytes for the duration of the call.
    result("write", unsafe {
        libc::write(fd, buf.as_ptr().cast(), buf.len())
    })
    .map(|n| n as usize)
}

/// read(2) at the file position.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> SysResult<usize> {
    // SAFETY: `buf` is a valid writable slice of `buf.len()` bytes for the duration of the call.
    result("read", unsafe {
        libc::read(fd, buf.as_mut_ptr().cast(), buf.len())
    })
    .map(|n| n as usize)
}

/// pwrite(2).
#[inline]
pub fn pwrite(fd: RawFd, buf: &[u8], off: u64) -> SysResult<usize> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        // SAFETY: pwrite64 reads `buf.len()` bytes of `buf`, a valid readable slice for the call.
        crate::raw::counted("pwrite", unsafe {
            crate::raw::raw_syscall6(
                libc::SYS_pwrite64 as u64,
                positional_args(fd, buf.as_ptr(), buf.len(), off),
            )
        })
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        // SAFETY: `buf` is a valid readable slice for the duration of the call.
        result("pwrite", unsafe {
            lfs::pwrite(fd, buf.as_ptr().cast(), buf.len(), off as lfs::off_t)
        })
        .map(|n| n as usize)
    }
}

/// [`pwrite`] declared to change no memory of the process, so the compiler keeps values in registers
/// across it (psync's hot path).
///
/// # Safety
/// No memory of the process may change when `fd` is written: the file is not mapped shared by this
/// process (a pwrite changes the mapping's bytes), and `fd` is not /proc/self/mem or the like.
#[inline]
pub unsafe fn pwrite_unmapped(fd: RawFd, buf: &[u8], off: u64) -> SysResult<usize> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        // SAFETY: pwrite64 reads `buf.len()` bytes of `buf`, a valid readable slice for the call, and
        // changes no memory of the process (the caller's promise).
        crate::raw::counted("pwrite", unsafe {
            crate::raw::raw_syscall6_ro(
                libc::SYS_pwrite64 as u64,
                positional_args(fd, buf.as_ptr(), buf.len(), off),
            )
        })
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        pwrite(fd, buf, off)
    }
}

/// pwrite64's and pread64's arguments for the system call instruction: `len` bytes at `buf`, file
/// offset `off`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn positional_args(fd: RawFd, buf: *const u8, len: usize, off: u64) -> [u64; 6] {
    [fd as u32 as u64, buf as u64, len as u64, off, 0, 0]
}

/// pread(2).
#[inline]
pub fn pread(fd: RawFd, buf: &mut [u8], off: u64) -> SysResult<usize> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let a = positional_args(fd, buf.as_mut_ptr(), buf.len(), off);
        // SAFETY: pread64 writes at most `buf.len()` bytes into `buf`, a valid writable slice for the call.
        crate::raw::counted("pread", unsafe {
            crate::raw::raw_syscall6(libc::SYS_pread64 as u64, a)
        })
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        // SAFETY: `buf` is a valid writable slice for the duration of the call.
        result("pread", unsafe {
            lfs::pread(fd, buf.as_mut_ptr().cast(), buf.len(), off as lfs::off_t)
        })
        .map(|n| n as usize)
    }
}

/// pwritev(2).
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is readable for its whole length during the call.
#[inline]
pub unsafe fn pwritev(fd: RawFd, iov: &[libc::iovec], off: u64) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is readable; the array itself is a valid slice.
    result("pwritev", unsafe {
        lfs::pwritev(
            fd,
            iov.as_ptr(),
            iov.len() as libc::c_int,
            off as lfs::off_t,
        )
    })
    .map(|n| n as usize)
}

/// preadv(2).
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is writable for its whole length during the call.
#[inline]
pub unsafe fn preadv(fd: RawFd, iov: &[libc::iovec], off: u64) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is writable; the array itself is a valid slice.
    result("preadv", unsafe {
        lfs::preadv(
            fd,
            iov.as_ptr(),
            iov.len() as libc::c_int,
            off as lfs::off_t,
        )
    })
    .map(|n| n as usize)
}

/// pwritev2(2) (Linux 4.6) with RWF_* `flags`.
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is readable for its whole length during the call.
#[inline]
pub unsafe fn pwritev2(fd: RawFd, iov: &[libc::iovec], off: u64, flags: i32) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is readable; the array itself is a valid slice.
    result("pwritev2", unsafe {
        lfs::pwritev2(
            fd,
            iov.as_ptr(),
            iov.len() as libc::c_int,
            off as lfs::off_t,
            flags,
        )
    })
    .map(|n| n as usize)
}

/// preadv2(2) (Linux 4.6) with RWF_* `flags`.
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is writable for its whole length during the call.
#[inline]
pub unsafe fn preadv2(fd: RawFd, iov: &[libc::iovec], off: u64, flags: i32) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is writable; the array itself is a valid slice.
    result("preadv2", unsafe {
        lfs::preadv2(
            fd,
            iov.as_ptr(),
            iov.len() as libc::c_int,
            off as lfs::off_t,
            flags,
        )
    })
    .map(|n| n as usize)
}

/// lseek(2) with SEEK_SET.
pub fn lseek_set(fd: RawFd, off: u64) -> SysResult<u64> {
    // SAFETY: lseek only reads its integer arguments.
    result("lseek", unsafe {
        lfs::lseek(fd, off as lfs::off_t, libc::SEEK_SET)
    })
    .map(|r| r as u64)
}

/// Bytes of holes in [start, end) of the file `fd` (lseek SEEK_DATA / SEEK_HOLE); `Ok(0)` where the
/// filesystem reports none (a filesystem without the calls reports the whole file as data).
pub fn hole_bytes(fd: RawFd, start: u64, end: u64) -> SysResult<u64> {
    let seek = |off: u64, whence: libc::c_int| {
        // SAFETY: lseek only reads its integer arguments.
        result("lseek", unsafe {
            lfs::lseek(fd, off as lfs::off_t, whence)
        })
        .map(|r| r as u64)
    };
    let (mut holes, mut at) = (0, start);
    while at < end {
        let data = match seek(at, libc::SEEK_DATA) {
            Ok(d) => d.min(end),
            // ENXIO: no data from `at` to the end of the file.
            Err(e) if e.errno == libc::ENXIO => end,
            Err(e) => return Err(e),
        };
        holes += data - at;
        if data >= end {
            break;
        }
        at = seek(data, libc::SEEK_HOLE)?.min(end);
    }
    Ok(holes)
}

/// fsync(2).
pub fn fsync(fd: RawFd) -> SysResult<()> {
    // SAFETY: fsync only reads its integer argument.
    result("fsync", unsafe { libc::fsync(fd) }).map(|_| ())
}

/// ftruncate(2).
pub fn ftruncate(fd: RawFd, len: u64) -> SysResult<()> {
    // SAFETY: ftruncate only reads its integer arguments.
    result("ftruncate", unsafe {
        lfs::ftruncate(fd, len as lfs::off_t)
    })
    .map(|_| ())
}

/// fallocate(2) with mode 0: gives [off, off + len) real blocks (extending the file if it is shorter), so
/// later writes there cannot fail for want of space. Data already there is unchanged.
pub fn fallocate(fd: RawFd, off: u64, len: u64) -> SysResult<()> {
    // SAFETY: fallocate only reads its integer arguments.
    result("fallocate", unsafe {
        lfs::fallocate(fd, 0, off as lfs::off_t, len as lfs::off_t)
    })
    .map(|_| ())
}

/// fallocate(2) with FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE: drops the pages of [off, off + len) from
/// the file (it reads as zeros there again, the size unchanged). A page someone still holds (an io_uring's
/// pinned ring) stays theirs, no longer the file's.
pub fn punch_hole(fd: RawFd, off: u64, len: u64) -> SysResult<()> {
    // SAFETY: fallocate only reads its integer arguments.
    result("fallocate", unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            off as libc::off_t,
            len as libc::off_t,
        )
    })
    .map(|_| ())
}

/// statvfs(2): bytes an unprivileged writer may still allocate on the filesystem of `path`
/// (f_bavail x f_frsize).
pub fn fs_free_bytes(path: &Path) -> SysResult<u64> {
    let c = cpath(path)?;
    // SAFETY: an all-zero statvfs is a valid value of this plain C struct.
    let mut s: lfs::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `s` is a valid out-pointer.
    result("statvfs", unsafe { lfs::statvfs(c.as_ptr(), &mut s) })?;
    Ok((s.f_bavail as u64).saturating_mul(s.f_frsize as u64))
}

/// flock(2) LOCK_EX | LOCK_NB: takes the exclusive lock on the open file `fd` refers to, held until every
/// descriptor of that open file is closed. `Ok(false)`: another open file holds a lock on it (EWOULDBLOCK).
pub fn flock_exclusive_nb(fd: RawFd) -> SysResult<bool> {
    // SAFETY: flock only reads its integer arguments.
    match result("flock", unsafe {
        libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB)
    }) {
        Ok(_) => Ok(true),
        Err(e) if e.errno == libc::EWOULDBLOCK => Ok(false),
        Err(e) => Err(e),
    }
}

/// stat(2) following symlinks.
pub fn stat(path: &Path) -> SysResult<lfs::stat> {
    let c = cpath(path)?;
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut st: lfs::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `st` is a valid out-pointer for one `struct stat`.
    result("stat", unsafe { lfs::stat(c.as_ptr(), &mut st) })?;
    Ok(st)
}

/// fstat(2).
pub fn fstat(fd: RawFd) -> SysResult<lfs::stat> {
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut st: lfs::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-pointer for one `struct stat`.
    result("fstat", unsafe { lfs::fstat(fd, &mut st) })?;
    Ok(st)
}

/// statx(2) of an open file (O_PATH included) for the fields in `mask`; the kernel says in `stx_mask`
/// which it filled.
pub(crate) fn statx_fd(fd: RawFd, mask: u32) -> SysResult<libc::statx> {
    // SAFETY: an all-zero `statx` is a valid value of this plain C struct.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: the empty path with AT_EMPTY_PATH refers to `fd` itself; `sx` is a valid out-pointer.
    result("statx", unsafe {
        libc::statx(fd, c"".as_ptr(), libc::AT_EMPTY_PATH, mask, &mut sx)
    })?;
    Ok(sx)
}

/// O_DIRECT alignment of an open file from statx(STATX_DIOALIGN) (Linux 6.1+): (memory, offset) in bytes.
/// `Ok(None)` when the kernel or filesystem does not report it.
pub fn statx_dio_align(fd: RawFd) -> SysResult<Option<(u32, u32)>> {
    let sx = statx_fd(fd, libc::STATX_DIOALIGN)?;
    if sx.stx_mask & libc::STATX_DIOALIGN != 0 && sx.stx_dio_offset_align != 0 {
        Ok(Some((sx.stx_dio_mem_align, sx.stx_dio_offset_align)))
    } else {
        Ok(None)
    }
}

/// BLKGETSIZE64 = _IOR(0x12, 114, size_t), computed with the kernel's macro arithmetic (libc's `_IOR`):
/// 0x80081272 on 64-bit targets, 0x80041272 on 32-bit ones (the size field is sizeof(size_t) although the
/// kernel writes a u64 either way). The libc crate does not export the constant, and a literal overflows
/// musl's signed request type.
pub(crate) const BLKGETSIZE64: libc::Ioctl = libc::_IOR::<libc::size_t>(0x12, 114);

/// Size in bytes of a block device (ioctl BLKGETSIZE64).
pub fn blk_size(fd: RawFd) -> SysResult<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points to a live u64.
    result("ioctl(BLKGETSIZE64)", unsafe {
        libc::ioctl(fd, BLKGETSIZE64, &mut size as *mut u64)
    })?;
    Ok(size)
}

/// BLKROGET = _IO(0x12, 94) (libc does not export it).
const BLKROGET: libc::Ioctl = libc::_IO(0x12, 94);

/// Is the block device read-only (ioctl BLKROGET: `losetup -r`, `blockdev --setro`, a write-protected
/// disk)?
pub fn blk_read_only(fd: RawFd) -> SysResult<bool> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKROGET writes one int through the pointer, which points to a live c_int.
    result("ioctl(BLKROGET)", unsafe {
        libc::ioctl(fd, BLKROGET, &mut v as *mut libc::c_int)
    })?;
    Ok(v != 0)
}

/// FS_IMMUTABLE_FL and FS_APPEND_FL of <linux/fs.h> (`chattr +i`, `chattr +a`).
pub const FS_IMMUTABLE_FL: u32 = 0x10;
pub const FS_APPEND_FL: u32 = 0x20;

/// The inode flags of the file `fd` (ioctl FS_IOC_GETFLAGS; `lsattr` shows them). ENOTTY where the
/// filesystem keeps none.
pub fn inode_flags(fd: RawFd) -> SysResult<u32> {
    // The kernel reads and writes an int, whatever the request's size field says.
    let mut v: libc::c_int = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one int through the pointer, which points to a live c_int.
    result("ioctl(FS_IOC_GETFLAGS)", unsafe {
        libc::ioctl(fd, libc::FS_IOC_GETFLAGS, &mut v as *mut libc::c_int)
    })?;
    Ok(v as u32)
}

/// Logical sector size of a block device (ioctl BLKSSZGET): the O_DIRECT alignment it needs.
pub fn blk_logical_sector(fd: RawFd) -> SysResult<u32> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which points to a live c_int.
    result("ioctl(BLKSSZGET)", unsafe {
        libc::ioctl(fd, libc::BLKSSZGET, &mut v as *mut libc::c_int)
    })?;
    Ok(v as u32)
}

/// statfs(2) f_type of the filesystem a path is on (following symlinks).
pub fn fs_magic(path: &Path) -> SysResult<u64> {
    let c = cpath(path)?;
    // SAFETY: an all-zero statfs is a valid value of this plain C struct.
    let mut s: lfs::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `s` is a valid out-pointer.
    result("statfs", unsafe { lfs::statfs(c.as_ptr(), &mut s) })?;
    Ok(s.f_type as u64)
}

/// The filesystem type (statfs f_type) of an open descriptor: fstatfs(2), so a path swapped after the open
/// cannot answer for it.
pub fn fd_fs_magic(fd: RawFd) -> SysResult<u64> {
    // SAFETY: an all-zero statfs is a valid value of this plain C struct.
    let mut s: lfs::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is only read by the call and `s` is a valid out-pointer.
    result("fstatfs", unsafe { lfs::fstatfs(fd, &mut s) })?;
    Ok(s.f_type as u64)
}

/// The kernel-interface filesystems by statfs f_type (linux/magic.h): their files are settings, counters
/// and controls, not storage, so they are never targets.
const PSEUDO_FS: &[(u64, &str)] = &[
    (0x9FA0, "procfs"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x0027_E0EB, "cgroupfs (v1)"),
    (0x6367_7270, "cgroupfs (v2)"),
    (0x6265_6570, "configfs"),
    (0x7363_6673, "securityfs"),
    (0xDE5E_81E4, "efivarfs"),
    (0xCAFE_4A11, "bpffs"),
    (0x6165_676C, "pstore"),
    (0x6573_5543, "fusectl"),
    (0x4249_4E4D, "binfmt_misc"),
    (0xF97C_FF8C, "selinuxfs"),
    (0x4341_5D53, "smackfs"),
    (0x6E73_6673, "nsfs"),
];

/// The name of the kernel-interface filesystem (procfs, sysfs, debugfs, tracefs, cgroupfs, configfs,
/// securityfs, efivarfs ...) a statfs f_type stands for; `None` for every other filesystem.
pub fn pseudo_fs_name(magic: u64) -> Option<&'static str> {
    PSEUDO_FS
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, name)| *name)
}

/// The filesystem type of a path (statfs(2) f_type), named where known ("ext4", "tmpfs" ...).
pub fn fs_type_name(path: &Path) -> SysResult<&'static str> {
    let magic = fs_magic(path)?;
    Ok(match magic {
        0xEF53 => "ext4",
        0x0102_1994 => "tmpfs",
        0x9123_683E => "btrfs",
        0x5846_5342 => "xfs",
        0x2FC1_2FC1 => "zfs",
        0x6969 => "nfs",
        0x794C_7630 => "overlayfs",
        0xF2F5_2010 => "f2fs",
        0x4d44 => "vfat",
        m => pseudo_fs_name(m).unwrap_or("unknown filesystem"),
    })
}

/// Is this descriptor a terminal?
pub fn isatty(fd: RawFd) -> bool {
    // SAFETY: isatty only reads its integer argument.
    unsafe { libc::isatty(fd) == 1 }
}

/// unlink(2), or rmdir(2) for a directory; async-signal-safe (no allocation). True when the path is gone
/// (removed now, or already absent: ENOENT).
///
/// # Safety
/// `path` must point to a NUL-terminated string that stays valid during the call.
pub unsafe fn remove_path_raw(path: *const libc::c_char, dir: bool) -> bool {
    // SAFETY: the caller guarantees a valid C string; errno is this thread's, read right after the call.
    unsafe {
        let r = if dir {
            libc::rmdir(path)
        } else {
            libc::unlink(path)
        };
        r == 0 || *libc::__errno_location() == libc::ENOENT
    }
}

/// Writes the C string `text` (without its NUL) into the existing file `path` (a sysfs attribute); true
/// when the whole text was written. Async-signal-safe: open, write, close.
///
/// # Safety
/// `path` and `text` must be valid NUL-terminated C strings.
pub unsafe fn write_file_raw(path: *const libc::c_char, text: *const libc::c_char) -> bool {
    // SAFETY: the caller guarantees both C strings; the descriptor is this function's and closed here.
    unsafe {
        let fd = libc::open(path, libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let n = libc::strlen(text);
        let ok = libc::write(fd, text.cast(), n) == n as isize;
        libc::close(fd);
        ok
    }
}

/// close_range(first, ~0, 0): closes every descriptor from `first` on (for a signal handler that ends
/// the process and must first let go of a device it holds open). Async-signal-safe: one system call; where
/// the kernel lacks it (before 5.9) nothing is closed.
pub fn close_from_raw(first: u32) {
    // SAFETY: close_range takes integers only; the caller ends the process, so no code uses the closed
    // descriptors afterwards (other threads may see EBADF in the moment before the exit).
    unsafe {
        libc::syscall(libc::SYS_close_range, first, u32::MAX, 0u32);
    }
}

/// [`close_from_raw`] of every descriptor from `first` on but `keep` (a descriptor the handler still needs,
/// such as the detached mount an ftrace instance is reached through). Async-signal-safe: two system calls.
pub fn close_from_except_raw(first: u32, keep: u32) {
    if keep < first {
        return close_from_raw(first);
    }
    // SAFETY: close_range takes integers only; as in `close_from_raw`, the caller ends the process. The
    // first range is empty (first > last: EINVAL, nothing closed) when `keep` is `first`.
    unsafe {
        if keep > first {
            libc::syscall(libc::SYS_close_range, first, keep - 1, 0u32);
        }
        libc::syscall(
            libc::SYS_close_range,
            keep.saturating_add(1),
            u32::MAX,
            0u32,
        );
    }
}

/// Sleeps `ms` milliseconds (nanosleep; async-signal-safe).
pub fn sleep_ms_raw(ms: u32) {
    let ts = libc::timespec {
        tv_sec: (ms / 1000) as _,
        tv_nsec: ((ms % 1000) * 1_000_000) as _,
    };
    // SAFETY: `ts` is a valid timespec for the call; the remainder pointer may be null.
    unsafe {
        libc::nanosleep(&ts, std::ptr::null_mut());
    }
}

/// copy_file_range(2) of `len` bytes from `src` at `off_in` to `dst` at `off_out`.
pub fn copy_file_range(
    src: RawFd,
    off_in: u64,
    dst: RawFd,
    off_out: u64,
    len: usize,
) -> SysResult<usize> {
    let mut i = off_in as libc::loff_t;
    let mut o = off_out as libc::loff_t;
    // SAFETY: both offsets are valid in/out pointers to locals for the duration of the call.
    result("copy_file_range", unsafe {
        libc::copy_file_range(src, &mut i, dst, &mut o, len, 0)
    })
    .map(|n| n as usize)
}

/// sendfile(2) of `len` bytes from `src` at `off_in` to `dst` at its file position.
pub fn sendfile(dst: RawFd, src: RawFd, off_in: u64, len: usize) -> SysResult<usize> {
    let mut i = off_in as lfs::off_t;
    // SAFETY: `i` is a valid in/out pointer to a local for the duration of the call.
    result("sendfile", unsafe { lfs::sendfile(dst, src, &mut i, len) }).map(|n| n as usize)
}

/// splice(2) between a file (with offset) and a pipe (without): `file_off` applies to the file side.
pub fn splice(
    fd_in: RawFd,
    off_in: Option<u64>,
    fd_out: RawFd,
    off_out: Option<u64>,
    len: usize,
) -> SysResult<usize> {
    let mut a = off_in.unwrap_or(0) as libc::loff_t;
    let mut b = off_out.unwrap_or(0) as libc::loff_t;
    let pa: *mut libc::loff_t = if off_in.is_some() {
        &mut a
    } else {
        std::ptr::null_mut()
    };
    let pb: *mut libc::loff_t = if off_out.is_some() {
        &mut b
    } else {
        std::ptr::null_mut()
    };
    // SAFETY: the offset pointers are null or point to locals that outlive the call.
    result("splice", unsafe {
        libc::splice(fd_in, pa, fd_out, pb, len, libc::SPLICE_F_MOVE)
    })
    .map(|n| n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_interface_filesystems_are_named_and_storage_is_not() {
        let name = |p: &str| fs_magic(Path::new(p)).ok().and_then(pseudo_fs_name);
        assert_eq!(name("/proc/sys/vm"), Some("procfs"));
        assert_eq!(name("/sys/kernel"), Some("sysfs"));
        assert_eq!(name("/dev/shm"), None);
        assert_eq!(name("/"), None);
        assert_eq!(fs_type_name(Path::new("/proc")).unwrap(), "procfs");
    }
}
