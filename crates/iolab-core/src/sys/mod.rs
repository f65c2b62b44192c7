//! Every raw system call, ioctl and libc stdio call iolab makes, one function each.
//!
//! Each wrapper returns [`SysResult`], whose error names the call and keeps the errno, so that the caller
//! can turn it into a message for people (see `crate::error`). Kernel resources are owned by RAII types
//! ([`OwnedFd`], [`Mapping`], [`CFile`]); nothing outside this module calls `libc` for a syscall.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A failed system call: which one and the errno it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysErr {
    pub call: &'static str,
    pub errno: i32,
}

impl SysErr {
    pub fn new(call: &'static str, errno: i32) -> Self {
        SysErr { call, errno }
    }
    fn last(call: &'static str) -> Self {
        SysErr {
            call,
            errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        }
    }
}

pub type SysResult<T> = Result<T, SysErr>;

fn cvt(call: &'static str, r: libc::c_int) -> SysResult<libc::c_int> {
    if r < 0 {
        Err(SysErr::last(call))
    } else {
        Ok(r)
    }
}

fn cvt_size(call: &'static str, r: libc::ssize_t) -> SysResult<usize> {
    if r < 0 {
        Err(SysErr::last(call))
    } else {
        Ok(r as usize)
    }
}

/// Converts a path to a C string; a path with an interior NUL cannot name a file.
pub fn cpath(path: &Path) -> SysResult<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| SysErr::new("open", libc::EINVAL))
}

/// The symbolic name of an errno value ("ENOSPC"), for messages.
pub fn errno_name(errno: i32) -> &'static str {
    match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ENOTTY => "ENOTTY",
        libc::ETXTBSY => "ETXTBSY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::EPIPE => "EPIPE",
        libc::ERANGE => "ERANGE",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EDQUOT => "EDQUOT",
        libc::ETIME => "ETIME",
        libc::ECANCELED => "ECANCELED",
        _ => "E?",
    }
}

// ---------------------------------------------------------------------------------------------------------
// files

/// open(2). Returns an owned descriptor.
pub fn open(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> SysResult<OwnedFd> {
    let c = cpath(path)?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call; open has no other preconditions.
    let fd = cvt("open", unsafe {
        libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// write(2) at the file position.
#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> SysResult<usize> {
    // SAFETY: `buf` is a valid readable slice of `buf.len()` bytes for the duration of the call.
    cvt_size("write", unsafe {
        libc::write(fd, buf.as_ptr().cast(), buf.len())
    })
}

/// read(2) at the file position.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> SysResult<usize> {
    // SAFETY: `buf` is a valid writable slice of `buf.len()` bytes for the duration of the call.
    cvt_size("read", unsafe {
        libc::read(fd, buf.as_mut_ptr().cast(), buf.len())
    })
}

/// pwrite(2).
#[inline]
pub fn pwrite(fd: RawFd, buf: &[u8], off: u64) -> SysResult<usize> {
    // SAFETY: `buf` is a valid readable slice for the duration of the call.
    cvt_size("pwrite", unsafe {
        libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), off as libc::off_t)
    })
}

/// pread(2).
#[inline]
pub fn pread(fd: RawFd, buf: &mut [u8], off: u64) -> SysResult<usize> {
    // SAFETY: `buf` is a valid writable slice for the duration of the call.
    cvt_size("pread", unsafe {
        libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), off as libc::off_t)
    })
}

/// pwritev(2).
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is readable for its whole length during the call.
#[inline]
pub unsafe fn pwritev(fd: RawFd, iov: &[libc::iovec], off: u64) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is readable; the array itself is a valid slice.
    cvt_size("pwritev", unsafe {
        libc::pwritev(
            fd,
            iov.as_ptr(),
            iov.len() as libc::c_int,
            off as libc::off_t,
        )
    })
}

/// preadv(2).
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is writable for its whole length during the call.
#[inline]
pub unsafe fn preadv(fd: RawFd, iov: &[libc::iovec], off: u64) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is writable; the array itself is a valid slice.
    cvt_size("preadv", unsafe {
        libc::preadv(
            fd,
            iov.as_ptr(),
            iov.len() as libc::c_int,
            off as libc::off_t,
        )
    })
}

/// lseek(2) with SEEK_SET.
pub fn lseek_set(fd: RawFd, off: u64) -> SysResult<u64> {
    // SAFETY: lseek only reads its integer arguments.
    let r = unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_SET) };
    if r < 0 {
        Err(SysErr::last("lseek"))
    } else {
        Ok(r as u64)
    }
}

/// fsync(2).
pub fn fsync(fd: RawFd) -> SysResult<()> {
    // SAFETY: fsync only reads its integer argument.
    cvt("fsync", unsafe { libc::fsync(fd) }).map(|_| ())
}

/// ftruncate(2).
pub fn ftruncate(fd: RawFd, len: u64) -> SysResult<()> {
    // SAFETY: ftruncate only reads its integer arguments.
    cvt("ftruncate", unsafe {
        libc::ftruncate(fd, len as libc::off_t)
    })
    .map(|_| ())
}

/// stat(2) following symlinks.
pub fn stat(path: &Path) -> SysResult<libc::stat> {
    let c = cpath(path)?;
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `st` is a valid out-pointer for one `struct stat`.
    cvt("stat", unsafe { libc::stat(c.as_ptr(), &mut st) })?;
    Ok(st)
}

/// fstat(2).
pub fn fstat(fd: RawFd) -> SysResult<libc::stat> {
    // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-pointer for one `struct stat`.
    cvt("fstat", unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

/// O_DIRECT alignment of an open file from statx(STATX_DIOALIGN) (Linux 6.1+): (memory, offset) in bytes.
/// `Ok(None)` when the kernel or filesystem does not report it.
pub fn statx_dio_align(fd: RawFd) -> SysResult<Option<(u32, u32)>> {
    // SAFETY: an all-zero `statx` is a valid value of this plain C struct.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: the empty path with AT_EMPTY_PATH refers to `fd` itself; `sx` is a valid out-pointer.
    cvt("statx", unsafe {
        libc::statx(
            fd,
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut sx,
        )
    })?;
    if sx.stx_mask & libc::STATX_DIOALIGN != 0 && sx.stx_dio_offset_align != 0 {
        Ok(Some((sx.stx_dio_mem_align, sx.stx_dio_offset_align)))
    } else {
        Ok(None)
    }
}

/// BLKGETSIZE64 = _IOR(0x12, 114, size_t); not exported by the libc crate.
const BLKGETSIZE64: libc::Ioctl = 0x8008_1272;

/// Size in bytes of a block device (ioctl BLKGETSIZE64).
pub fn blk_size(fd: RawFd) -> SysResult<u64> {
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which points to a live u64.
    cvt("ioctl(BLKGETSIZE64)", unsafe {
        libc::ioctl(fd, BLKGETSIZE64, &mut size as *mut u64)
    })?;
    Ok(size)
}

/// Logical sector size of a block device (ioctl BLKSSZGET): the O_DIRECT alignment it needs.
pub fn blk_logical_sector(fd: RawFd) -> SysResult<u32> {
    let mut v: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which points to a live c_int.
    cvt("ioctl(BLKSSZGET)", unsafe {
        libc::ioctl(fd, libc::BLKSSZGET, &mut v as *mut libc::c_int)
    })?;
    Ok(v as u32)
}

// ---------------------------------------------------------------------------------------------------------
// memory mappings

/// A MAP_SHARED file mapping, unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; moving it to another thread is sound.
unsafe impl Send for Mapping {}

impl Mapping {
    /// mmap(2) `len` bytes of `fd` at `off` (page aligned) with MAP_SHARED.
    pub fn shared(fd: RawFd, len: usize, off: u64, writable: bool) -> SysResult<Mapping> {
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a NULL hint lets the kernel choose the address; the result is checked for MAP_FAILED
        // and owned by the returned value, which unmaps it exactly once.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd,
                off as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(SysErr::last("mmap"));
        }
        Ok(Mapping { ptr: p.cast(), len })
    }

    /// mmap(2) of `len` zeroed anonymous bytes shared with children forked later (MAP_SHARED).
    pub fn shared_anonymous(len: usize) -> SysResult<Mapping> {
        Self::anonymous_with(len, libc::MAP_SHARED)
    }

    /// mmap(2) of `len` fresh private anonymous bytes (every page faults on its first touch).
    pub fn anonymous(len: usize) -> SysResult<Mapping> {
        Self::anonymous_with(len, libc::MAP_PRIVATE)
    }

    fn anonymous_with(len: usize, sharing: libc::c_int) -> SysResult<Mapping> {
        // SAFETY: a NULL hint and no descriptor; the result is checked for MAP_FAILED and owned by the
        // returned value, which unmaps it exactly once.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                sharing | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(SysErr::last("mmap"));
        }
        Ok(Mapping { ptr: p.cast(), len })
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// msync(2) with MS_SYNC over the whole mapping.
    pub fn msync(&self) -> SysResult<()> {
        // SAFETY: (ptr, len) is exactly the live mapping this value owns.
        cvt("msync", unsafe {
            libc::msync(self.ptr.cast(), self.len, libc::MS_SYNC)
        })
        .map(|_| ())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: (ptr, len) is the mapping created in `shared` and not unmapped before.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

// ---------------------------------------------------------------------------------------------------------
// C stdio streams (glibc's buffered FILE, as the seed program's fputs used)

/// A glibc `FILE*` stream over a descriptor, closed (and so flushed) on drop.
pub struct CFile {
    f: *mut libc::FILE,
    /// The buffer handed to setvbuf; must outlive the stream.
    _buf: Vec<u8>,
}

// SAFETY: the FILE is used by one thread at a time (it is owned); glibc streams may migrate threads.
unsafe impl Send for CFile {}

impl CFile {
    /// fdopen(3) the descriptor and make the stream fully buffered (_IOFBF) with a `bufsize`-byte buffer.
    /// Takes ownership of `fd`: fclose closes it.
    pub fn fdopen(fd: OwnedFd, write: bool, bufsize: usize) -> SysResult<CFile> {
        let mode: &CStr = if write { c"w" } else { c"r" };
        let raw = fd.as_raw_fd();
        // SAFETY: `raw` is an open descriptor and `mode` is NUL-terminated.
        let f = unsafe { libc::fdopen(raw, mode.as_ptr()) };
        if f.is_null() {
            return Err(SysErr::last("fdopen"));
        }
        // The stream owns the descriptor now.
        std::mem::forget(fd);
        let mut buf = vec![0u8; bufsize.max(1)];
        // SAFETY: `f` is a fresh stream with no I/O done yet (setvbuf's precondition); `buf` lives as long
        // as the stream because both are owned by the returned value and the stream is closed first in Drop.
        let r = unsafe { libc::setvbuf(f, buf.as_mut_ptr().cast(), libc::_IOFBF, buf.len()) };
        let file = CFile { f, _buf: buf };
        if r != 0 {
            return Err(SysErr::new("setvbuf", libc::EINVAL));
        }
        Ok(file)
    }

    /// fwrite(3) of the whole buffer; an error names fwrite with the errno glibc left.
    #[inline]
    pub fn write_all(&mut self, buf: &[u8]) -> SysResult<usize> {
        // SAFETY: `buf` is readable for its length and `self.f` is a live stream.
        let n = unsafe { libc::fwrite(buf.as_ptr().cast(), 1, buf.len(), self.f) };
        if n != buf.len() {
            return Err(SysErr::last("fwrite"));
        }
        Ok(n)
    }

    /// fread(3); returns bytes read (short at end of file).
    #[inline]
    pub fn read(&mut self, buf: &mut [u8]) -> SysResult<usize> {
        // SAFETY: `buf` is writable for its length and `self.f` is a live stream.
        let n = unsafe { libc::fread(buf.as_mut_ptr().cast(), 1, buf.len(), self.f) };
        // SAFETY: `self.f` is a live stream.
        if n != buf.len() && unsafe { libc::ferror(self.f) } != 0 {
            return Err(SysErr::last("fread"));
        }
        Ok(n)
    }

    /// fseek(3) to an absolute offset (also drops the read buffer).
    pub fn seek(&mut self, off: u64) -> SysResult<()> {
        // SAFETY: `self.f` is a live stream.
        cvt("fseeko", unsafe {
            libc::fseeko(self.f, off as libc::off_t, libc::SEEK_SET)
        })
        .map(|_| ())
    }

    /// fflush(3).
    pub fn flush(&mut self) -> SysResult<()> {
        // SAFETY: `self.f` is a live stream.
        cvt("fflush", unsafe { libc::fflush(self.f) }).map(|_| ())
    }

    /// The descriptor underneath (fileno(3)), for fsync.
    pub fn fd(&self) -> RawFd {
        // SAFETY: `self.f` is a live stream.
        unsafe { libc::fileno(self.f) }
    }
}

impl Drop for CFile {
    fn drop(&mut self) {
        // SAFETY: `self.f` is live and closed exactly once, here; the buffer is freed after this.
        unsafe { libc::fclose(self.f) };
    }
}

// ---------------------------------------------------------------------------------------------------------
// process and time

/// getrusage(2) for RUSAGE_SELF or RUSAGE_THREAD.
pub fn getrusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid out-pointer; RUSAGE_SELF/RUSAGE_THREAD cannot fail with a valid pointer.
    unsafe { libc::getrusage(who, &mut ru) };
    ru
}

/// clock_gettime(CLOCK_MONOTONIC) in nanoseconds (through the vDSO).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The time stamp counter (RDTSC), unserialized: the caller brackets syscalls, which order it enough.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC is available on every x86_64 CPU; iolab checks `constant_tsc` before trusting it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The thread id (gettid(2)).
pub fn gettid() -> i32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// sysconf(_SC_CLK_TCK): the unit of utime/stime in /proc/<pid>/task/<tid>/stat.
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf only reads its integer argument.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u64
    } else {
        100
    }
}

/// The kernel release (uname(2)).
pub fn kernel_release() -> String {
    // SAFETY: an all-zero utsname is a valid value of this plain C struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid out-pointer.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    // SAFETY: uname fills `release` with a NUL-terminated string.
    unsafe { CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// The effective user id.
pub fn geteuid() -> u32 {
    // SAFETY: geteuid takes no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// The filesystem type of a path (statfs(2) f_type), named where known ("ext4", "tmpfs" ...).
pub fn fs_type_name(path: &Path) -> SysResult<&'static str> {
    let c = cpath(path)?;
    // SAFETY: an all-zero statfs is a valid value of this plain C struct.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `s` is a valid out-pointer.
    cvt("statfs", unsafe { libc::statfs(c.as_ptr(), &mut s) })?;
    Ok(match s.f_type as u64 {
        0xEF53 => "ext4",
        0x0102_1994 => "tmpfs",
        0x9123_683E => "btrfs",
        0x5846_5342 => "xfs",
        0x2FC1_2FC1 => "zfs",
        0x6969 => "nfs",
        0x794C_7630 => "overlayfs",
        0xF2F5_2010 => "f2fs",
        0x4d44 => "vfat",
        _ => "unknown filesystem",
    })
}

/// Is this descriptor a terminal?
pub fn isatty(fd: RawFd) -> bool {
    // SAFETY: isatty only reads its integer argument.
    unsafe { libc::isatty(fd) == 1 }
}

/// The CPU the calling thread runs on now (sched_getcpu(3)), or -1.
pub fn current_cpu() -> i32 {
    // SAFETY: sched_getcpu takes no arguments; it returns -1 on failure.
    unsafe { libc::sched_getcpu() }
}

// ---------------------------------------------------------------------------------------------------------
// signals (async-signal-safe pieces for the cleanup handler)

/// sigaction(2): run `handler` on each of `signals` (SA_RESTART not set: the run is ending anyway).
pub fn set_signal_handler(
    signals: &[libc::c_int],
    handler: extern "C" fn(libc::c_int),
) -> SysResult<()> {
    for &sig in signals {
        // SAFETY: an all-zero sigaction is a valid value; the fields set below are the documented ones.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = handler as usize;
        // SAFETY: `sa.sa_mask` is a valid sigset_t to initialise.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: `sa` is fully initialised; a null old-action pointer is allowed.
        cvt("sigaction", unsafe {
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        })?;
    }
    Ok(())
}

/// Two zeroed counters in a MAP_SHARED anonymous page that children forked later see too; the page stays
/// mapped for the life of the process.
pub fn shared_counters() -> SysResult<&'static [std::sync::atomic::AtomicU64; 2]> {
    let m = Mapping::shared_anonymous(4096)?;
    let p = m.as_ptr() as *const [std::sync::atomic::AtomicU64; 2];
    // The mapping is never unmapped, so the reference below stays valid for the whole process.
    std::mem::forget(m);
    // SAFETY: the page is 4096 zeroed, page-aligned bytes (aligned and large enough for two AtomicU64,
    // whose all-zero bit pattern is a valid value), mapped until the process ends, and only ever accessed
    // through atomics.
    Ok(unsafe { &*p })
}

/// fork(2). Returns the child's pid in the parent and 0 in the child. Call it only while the process has
/// one thread: the child then may do anything the parent could.
pub fn fork() -> SysResult<i32> {
    // SAFETY: fork has no memory preconditions; callers fork a single-threaded process (documented above),
    // so the child's copy of every lock is consistent.
    cvt("fork", unsafe { libc::fork() })
}

/// In a child: be sent SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG), and take SIGINT, SIGTERM and
/// SIGHUP with their default action (the parent's handler removes the parent's files; the child has none).
pub fn child_dies_with_parent() -> SysResult<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number and reads no memory.
    cvt("prctl", unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)
    })?;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: SIG_DFL is a valid disposition for these signals.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    Ok(())
}

/// The parent pid (getppid(2)).
pub fn getppid() -> i32 {
    // SAFETY: getppid takes no arguments and cannot fail.
    unsafe { libc::getppid() }
}

/// waitpid(2) for one child, retrying on EINTR; returns its raw wait status.
pub fn waitpid(pid: i32) -> SysResult<i32> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer for the duration of the call.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 {
            return Ok(status);
        }
        let e = SysErr::last("waitpid");
        if e.errno != libc::EINTR {
            return Err(e);
        }
    }
}

/// _exit(2): ends the process without running destructors or atexit handlers (a forked child's way out).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(code) }
}

/// unlink(2), or rmdir(2) for a directory; async-signal-safe (no allocation).
///
/// # Safety
/// `path` must point to a NUL-terminated string that stays valid during the call.
pub unsafe fn remove_path_raw(path: *const libc::c_char, dir: bool) {
    // SAFETY: the caller guarantees a valid C string.
    unsafe {
        if dir {
            libc::rmdir(path);
        } else {
            libc::unlink(path);
        }
    }
}

/// write(2) of a message to stderr and _exit(2); async-signal-safe.
pub fn write_stderr_and_exit(msg: &[u8], code: libc::c_int) -> ! {
    // SAFETY: `msg` is a valid slice; write and _exit are async-signal-safe.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(code)
    }
}

// ---------------------------------------------------------------------------------------------------------
// perf events and tracefs

pub use perf_event_open_sys::bindings as perf;

/// perf_event_open(2) of a counting event for this process (pid 0, any CPU), inherited by threads created
/// afterwards (and so by io_uring's kernel helper threads), counting from the start.
pub fn perf_event_open_counter(type_: u32, config: u64) -> SysResult<OwnedFd> {
    let mut attr = perf::perf_event_attr {
        type_,
        size: std::mem::size_of::<perf::perf_event_attr>() as u32,
        config,
        ..Default::default()
    };
    attr.set_inherit(1);
    attr.set_disabled(0);
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` matches the struct; pid 0 / cpu -1
    // / group -1 ask for a counter on this process; the result is checked and owned below.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(
            &mut attr,
            0,
            -1,
            -1,
            perf::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    let fd = cvt("perf_event_open", fd)?;
    // SAFETY: the kernel just returned `fd` as a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// perf_event_open(2) of a counting event on one other process `pid` (not inherited), counting from now.
pub fn perf_event_open_task(type_: u32, config: u64, pid: i32) -> SysResult<OwnedFd> {
    let mut attr = perf::perf_event_attr {
        type_,
        size: std::mem::size_of::<perf::perf_event_attr>() as u32,
        config,
        ..Default::default()
    };
    attr.set_disabled(0);
    // SAFETY: `attr` is a fully initialised perf_event_attr whose `size` matches the struct; `pid` names
    // one task, cpu -1 any CPU, group -1 none; the result is checked and owned below.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(
            &mut attr,
            pid,
            -1,
            -1,
            perf::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    let fd = cvt("perf_event_open", fd)?;
    // SAFETY: the kernel just returned `fd` as a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads a counting perf event's value (read_format 0: one u64, inherited children included).
pub fn perf_read(fd: RawFd) -> SysResult<u64> {
    let mut v = [0u8; 8];
    let n = read(fd, &mut v)?;
    if n != 8 {
        return Err(SysErr::new("read(perf)", libc::EIO));
    }
    Ok(u64::from_ne_bytes(v))
}

/// prctl(PR_TASK_PERF_EVENTS_DISABLE / _ENABLE): stops or restarts, in one call, every counter this task
/// created (and their inherited copies), so reading them does not count the reads.
pub fn perf_task_events(enable: bool) -> SysResult<()> {
    let op = if enable {
        libc::PR_TASK_PERF_EVENTS_ENABLE
    } else {
        libc::PR_TASK_PERF_EVENTS_DISABLE
    };
    // SAFETY: these prctl options take no pointer arguments.
    cvt("prctl", unsafe { libc::prctl(op, 0, 0, 0, 0) }).map(|_| ())
}

/// mount(2) a tracefs instance on `dir`.
pub fn mount_tracefs(dir: &Path) -> SysResult<()> {
    let d = cpath(dir)?;
    // SAFETY: all strings are NUL-terminated and outlive the call; no data argument.
    cvt("mount(tracefs)", unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            d.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    })
    .map(|_| ())
}

/// umount2(2) with MNT_DETACH.
pub fn umount_detach(dir: &Path) -> SysResult<()> {
    let d = cpath(dir)?;
    // SAFETY: `d` is NUL-terminated and outlives the call.
    cvt("umount2", unsafe {
        libc::umount2(d.as_ptr(), libc::MNT_DETACH)
    })
    .map(|_| ())
}

// ---------------------------------------------------------------------------------------------------------
// io_uring pieces the io-uring crate does not expose in the form iolab needs

pub const IORING_ENTER_GETEVENTS: u32 = 1 << 0;
pub const IORING_ENTER_SQ_WAKEUP: u32 = 1 << 1;
pub const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;
const IORING_REGISTER_RING_FDS: u32 = 20;

/// io_uring_enter(2) without a signal mask. `fd` is the ring fd, or its registered index when `flags`
/// holds IORING_ENTER_REGISTERED_RING.
pub fn io_uring_enter(fd: i32, to_submit: u32, min_complete: u32, flags: u32) -> SysResult<u32> {
    // SAFETY: io_uring_enter with a null argument pointer and size 0 reads no user memory besides the
    // rings, which the ring's owner keeps mapped for its whole life.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            to_submit,
            min_complete,
            flags,
            std::ptr::null::<libc::c_void>(),
            0usize,
        )
    };
    if r < 0 {
        Err(SysErr::last("io_uring_enter"))
    } else {
        Ok(r as u32)
    }
}

/// io_uring_enter(2) that only waits: for `min_complete` completions or `timeout_ns`, whichever comes first
/// (IORING_ENTER_EXT_ARG, Linux 5.11+). Submits nothing, so it may run on a thread other than the one
/// filling the submission queue. A timeout is `Ok(false)`.
pub fn io_uring_wait_timeout(fd: i32, min_complete: u32, timeout_ns: u64) -> SysResult<bool> {
    #[repr(C)]
    struct KernelTimespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    #[repr(C)]
    struct GetEventsArg {
        sigmask: u64,
        sigmask_sz: u32,
        pad: u32,
        ts: u64,
    }
    const IORING_ENTER_EXT_ARG: u32 = 1 << 3;
    let ts = KernelTimespec {
        tv_sec: (timeout_ns / 1_000_000_000) as i64,
        tv_nsec: (timeout_ns % 1_000_000_000) as i64,
    };
    let arg = GetEventsArg {
        sigmask: 0,
        sigmask_sz: 0,
        pad: 0,
        ts: &ts as *const KernelTimespec as u64,
    };
    // SAFETY: `arg` and the timespec it points to are locals alive for the whole call; the size passed is
    // exactly that of `arg`; to_submit is 0, so no SQE memory is read.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            0u32,
            min_complete,
            IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
            &arg as *const GetEventsArg,
            std::mem::size_of::<GetEventsArg>(),
        )
    };
    if r < 0 {
        let e = SysErr::last("io_uring_enter");
        if e.errno == libc::ETIME {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(true)
}

/// IORING_REGISTER_RING_FDS for `ring_fd` (Linux 5.18+): returns the registered index to pass to
/// io_uring_enter with IORING_ENTER_REGISTERED_RING, which skips the fd lookup on every call.
pub fn io_uring_register_ring_fd(ring_fd: i32) -> SysResult<u32> {
    #[repr(C)]
    struct RsrcUpdate {
        offset: u32,
        resv: u32,
        data: u64,
    }
    let mut up = RsrcUpdate {
        offset: u32::MAX,
        resv: 0,
        data: ring_fd as u64,
    };
    // SAFETY: `up` is a valid io_uring_rsrc_update the kernel reads and writes (the chosen index) during
    // the call; nr_args 1 matches.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring_fd,
            IORING_REGISTER_RING_FDS,
            &mut up as *mut RsrcUpdate,
            1u32,
        )
    };
    if r < 0 {
        Err(SysErr::last("io_uring_register(RING_FDS)"))
    } else {
        Ok(up.offset)
    }
}

/// RLIMIT_MEMLOCK soft limit in bytes (None: unlimited).
pub fn memlock_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut rl) } != 0
        || rl.rlim_cur == libc::RLIM_INFINITY
    {
        None
    } else {
        Some(rl.rlim_cur)
    }
}

// ---------------------------------------------------------------------------------------------------------
// Linux native AIO (io_setup/io_submit/io_getevents, <linux/aio_abi.h>), no libaio needed

pub const IOCB_CMD_PREAD: u16 = 0;
pub const IOCB_CMD_PWRITE: u16 = 1;

/// struct iocb (little-endian layout: aio_key before aio_rw_flags).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Iocb {
    pub aio_data: u64,
    pub aio_key: u32,
    pub aio_rw_flags: i32,
    pub aio_lio_opcode: u16,
    pub aio_reqprio: i16,
    pub aio_fildes: u32,
    pub aio_buf: u64,
    pub aio_nbytes: u64,
    pub aio_offset: i64,
    pub aio_reserved2: u64,
    pub aio_flags: u32,
    pub aio_resfd: u32,
}

/// struct io_event.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

/// An AIO context (io_setup), destroyed on drop (io_destroy waits for requests still in flight).
pub struct AioContext(libc::c_ulong);

impl AioContext {
    pub fn new(nr_events: u32) -> SysResult<AioContext> {
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: `ctx` is a valid, zero-initialised aio_context_t out-pointer, as io_setup requires.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                nr_events,
                &mut ctx as *mut libc::c_ulong,
            )
        };
        if r < 0 {
            return Err(SysErr::last("io_setup"));
        }
        Ok(AioContext(ctx))
    }

    /// io_submit(2) of the iocbs behind `iocbs`; returns how many the kernel took.
    ///
    /// # Safety
    /// Every pointer in `iocbs` must point to a valid Iocb whose buffer stays valid (and, for reads, not
    /// otherwise accessed) until its completion is reaped.
    pub unsafe fn submit(&self, iocbs: &[*mut Iocb]) -> SysResult<usize> {
        // SAFETY: the caller guarantees the iocbs and their buffers; the array is a valid slice.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_submit,
                self.0,
                iocbs.len() as libc::c_long,
                iocbs.as_ptr(),
            )
        };
        if r < 0 {
            Err(SysErr::last("io_submit"))
        } else {
            Ok(r as usize)
        }
    }

    /// io_getevents(2): at least `min` events into `out`; with `nowait` a zero timeout (poll).
    pub fn getevents(&self, min: usize, out: &mut [IoEvent], nowait: bool) -> SysResult<usize> {
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let t: *const libc::timespec = if nowait { &zero } else { std::ptr::null() };
        // SAFETY: `out` is a valid writable array of `out.len()` io_events; `t` is null or points to `zero`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.0,
                min as libc::c_long,
                out.len() as libc::c_long,
                out.as_mut_ptr(),
                t,
            )
        };
        if r < 0 {
            Err(SysErr::last("io_getevents"))
        } else {
            Ok(r as usize)
        }
    }
}

impl Drop for AioContext {
    fn drop(&mut self) {
        // SAFETY: the context was created by io_setup and is destroyed once.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.0) };
    }
}

// ---------------------------------------------------------------------------------------------------------
// kernel-side copies

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
    cvt_size("copy_file_range", unsafe {
        libc::copy_file_range(src, &mut i, dst, &mut o, len, 0)
    })
}

/// memfd_create(2): an anonymous tmpfs file, closed on exec.
pub fn memfd_create(name: &CStr) -> SysResult<OwnedFd> {
    // SAFETY: `name` is NUL-terminated and outlives the call.
    let fd = cvt("memfd_create", unsafe {
        libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// sendfile(2) of `len` bytes from `src` at `off_in` to `dst` at its file position.
pub fn sendfile(dst: RawFd, src: RawFd, off_in: u64, len: usize) -> SysResult<usize> {
    let mut i = off_in as libc::off_t;
    // SAFETY: `i` is a valid in/out pointer to a local for the duration of the call.
    cvt_size("sendfile", unsafe { libc::sendfile(dst, src, &mut i, len) })
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
    cvt_size("splice", unsafe {
        libc::splice(fd_in, pa, fd_out, pb, len, libc::SPLICE_F_MOVE)
    })
}

/// pipe2(2) with O_CLOEXEC: (read end, write end).
pub fn pipe() -> SysResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
    cvt("pipe2", unsafe {
        libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned two new descriptors nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// fcntl(F_SETPIPE_SZ): asks for a pipe of `size` bytes; returns the size the kernel gave.
pub fn set_pipe_size(fd: RawFd, size: usize) -> SysResult<usize> {
    // SAFETY: F_SETPIPE_SZ takes an integer argument.
    cvt("fcntl(F_SETPIPE_SZ)", unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, size as libc::c_int)
    })
    .map(|v| v as usize)
}

/// eventfd2(2) with EFD_CLOEXEC (and `flags`, e.g. EFD_NONBLOCK).
pub fn eventfd(flags: libc::c_int) -> SysResult<OwnedFd> {
    // SAFETY: eventfd takes an initial value and flags; no pointers.
    let fd = cvt("eventfd2", unsafe {
        libc::eventfd(0, flags | libc::EFD_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Adds 1 to an eventfd's counter (a doorbell): one write(2) of 8 bytes.
pub fn eventfd_ring(fd: RawFd) -> SysResult<()> {
    let one = 1u64.to_ne_bytes();
    write(fd, &one).map(|_| ())
}

/// FUTEX_WAIT_PRIVATE: sleeps while `word` holds `expected` (returns at once if it does not).
/// EAGAIN (the value changed) and EINTR are normal returns for a caller that re-checks its condition.
pub fn futex_wait(word: &std::sync::atomic::AtomicU32, expected: u32) -> SysResult<()> {
    // SAFETY: `word` is a live, aligned u32 for the duration of the call; the timeout is null (no pointer
    // read), the other arguments are unused by FUTEX_WAIT.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
    if r < 0 {
        let e = SysErr::last("futex(FUTEX_WAIT)");
        if e.errno == libc::EAGAIN || e.errno == libc::EINTR {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

/// FUTEX_WAKE_PRIVATE of up to `n` waiters on `word`.
pub fn futex_wake(word: &std::sync::atomic::AtomicU32, n: u32) -> SysResult<u32> {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE reads no other pointer.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        )
    };
    if r < 0 {
        Err(SysErr::last("futex(FUTEX_WAKE)"))
    } else {
        Ok(r as u32)
    }
}

/// socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC).
pub fn socketpair_stream() -> SysResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` is a valid array of two ints for the kernel to fill.
    cvt("socketpair", unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    })?;
    // SAFETY: the kernel just returned two new descriptors nothing else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn loopback(port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// A connected TCP pair over 127.0.0.1 (an ephemeral port, listener closed afterwards), with
/// TCP_NODELAY on both ends so small writes are not held back by Nagle's algorithm: (accepted, connected).
pub fn tcp_loopback_pair() -> SysResult<(OwnedFd, OwnedFd)> {
    let sock = |call| -> SysResult<OwnedFd> {
        // SAFETY: socket takes no pointers.
        let fd = cvt(call, unsafe {
            libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0)
        })?;
        // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let salen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let listener = sock("socket")?;
    let mut addr = loopback(0);
    // SAFETY: `addr` is a valid sockaddr_in of `salen` bytes.
    cvt("bind(127.0.0.1)", unsafe {
        libc::bind(
            listener.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            salen,
        )
    })?;
    // SAFETY: listen takes no pointers.
    cvt("listen", unsafe { libc::listen(listener.as_raw_fd(), 1) })?;
    let mut len = salen;
    // SAFETY: `addr` and `len` are valid for the kernel to fill with the bound address.
    cvt("getsockname", unsafe {
        libc::getsockname(
            listener.as_raw_fd(),
            (&mut addr as *mut libc::sockaddr_in).cast(),
            &mut len,
        )
    })?;
    let client = sock("socket")?;
    // SAFETY: `addr` is the listener's valid sockaddr_in; connect to a listening loopback socket completes
    // without the accept (the backlog holds it).
    cvt("connect(127.0.0.1)", unsafe {
        libc::connect(
            client.as_raw_fd(),
            (&addr as *const libc::sockaddr_in).cast(),
            salen,
        )
    })?;
    // SAFETY: null address pointers are allowed: the peer address is not wanted.
    let a = cvt("accept4", unsafe {
        libc::accept4(
            listener.as_raw_fd(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_CLOEXEC,
        )
    })?;
    // SAFETY: the kernel just returned `a` as a new descriptor that nothing else owns.
    let accepted = unsafe { OwnedFd::from_raw_fd(a) };
    for fd in [&accepted, &client] {
        let one: libc::c_int = 1;
        // SAFETY: `one` is a valid c_int of the stated size.
        cvt("setsockopt(TCP_NODELAY)", unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        })?;
    }
    Ok((accepted, client))
}

/// Sets or clears O_NONBLOCK on `fd`.
pub fn set_nonblocking(fd: RawFd, on: bool) -> SysResult<()> {
    // SAFETY: F_GETFL takes no argument.
    let fl = cvt("fcntl(F_GETFL)", unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    let fl = if on {
        fl | libc::O_NONBLOCK
    } else {
        fl & !libc::O_NONBLOCK
    };
    // SAFETY: F_SETFL takes an integer argument.
    cvt("fcntl(F_SETFL)", unsafe {
        libc::fcntl(fd, libc::F_SETFL, fl)
    })
    .map(|_| ())
}

/// epoll_create1(EPOLL_CLOEXEC).
pub fn epoll_create() -> SysResult<OwnedFd> {
    // SAFETY: epoll_create1 takes only flags.
    let fd = cvt("epoll_create1", unsafe {
        libc::epoll_create1(libc::EPOLL_CLOEXEC)
    })?;
    // SAFETY: the kernel just returned `fd` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// epoll_ctl(EPOLL_CTL_ADD) of `fd` for `events`, with `fd` as the event's data.
pub fn epoll_add(ep: RawFd, fd: RawFd, events: u32) -> SysResult<()> {
    let mut ev = libc::epoll_event {
        events,
        u64: fd as u64,
    };
    // SAFETY: `ev` is a valid epoll_event for the duration of the call.
    cvt("epoll_ctl(ADD)", unsafe {
        libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev)
    })
    .map(|_| ())
}

/// epoll_wait(2) for up to `evs.len()` events, blocking without timeout; EINTR returns 0 events.
pub fn epoll_wait(ep: RawFd, evs: &mut [libc::epoll_event]) -> SysResult<usize> {
    // SAFETY: `evs` is a valid writable array of `evs.len()` events.
    let r = unsafe { libc::epoll_wait(ep, evs.as_mut_ptr(), evs.len() as libc::c_int, -1) };
    if r < 0 {
        let e = SysErr::last("epoll_wait");
        if e.errno == libc::EINTR {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(r as usize)
}

/// writev(2) at the stream position (pipes and sockets have no offsets).
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is readable for its whole length during the call.
#[inline]
pub unsafe fn writev(fd: RawFd, iov: &[libc::iovec]) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is readable; the array itself is a valid slice.
    cvt_size("writev", unsafe {
        libc::writev(fd, iov.as_ptr(), iov.len() as libc::c_int)
    })
}

/// readv(2) at the stream position.
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is writable for its whole length during the call and
/// that nothing else accesses meanwhile.
#[inline]
pub unsafe fn readv(fd: RawFd, iov: &[libc::iovec]) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is writable and unaliased; the array is a valid slice.
    cvt_size("readv", unsafe {
        libc::readv(fd, iov.as_ptr(), iov.len() as libc::c_int)
    })
}

// ---------------------------------------------------------------------------------------------------------
// System-call offload: io_uring rings in user memory (IORING_SETUP_NO_MMAP), restrictions, seccomp strict
// mode and the process control around a sandboxed client (see `crate::offload`).

/// struct io_sqring_offsets (6.5+ layout: `user_addr` is where older headers have resv2).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SqringOffsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub flags: u32,
    pub dropped: u32,
    pub array: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

/// struct io_cqring_offsets (6.5+ layout).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CqringOffsets {
    pub head: u32,
    pub tail: u32,
    pub ring_mask: u32,
    pub ring_entries: u32,
    pub overflow: u32,
    pub cqes: u32,
    pub flags: u32,
    pub resv1: u32,
    pub user_addr: u64,
}

/// struct io_uring_params.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct UringParams {
    pub sq_entries: u32,
    pub cq_entries: u32,
    pub flags: u32,
    pub sq_thread_cpu: u32,
    pub sq_thread_idle: u32,
    pub features: u32,
    pub wq_fd: u32,
    pub resv: [u32; 3],
    pub sq_off: SqringOffsets,
    pub cq_off: CqringOffsets,
}

pub const IORING_SETUP_SQPOLL: u32 = 1 << 1;
pub const IORING_SETUP_SQ_AFF: u32 = 1 << 2;
pub const IORING_SETUP_CQSIZE: u32 = 1 << 3;
pub const IORING_SETUP_R_DISABLED: u32 = 1 << 6;
pub const IORING_SETUP_NO_MMAP: u32 = 1 << 14;
pub const IORING_SQ_NEED_WAKEUP: u32 = 1;
pub const IOSQE_FIXED_FILE: u8 = 1;
pub const IORING_REGISTER_BUFFERS: u32 = 0;
pub const IORING_REGISTER_FILES: u32 = 2;
pub const IORING_REGISTER_RESTRICTIONS: u32 = 11;
pub const IORING_REGISTER_ENABLE_RINGS: u32 = 12;
pub const IORING_RESTRICTION_SQE_OP: u16 = 1;
pub const IORING_RESTRICTION_SQE_FLAGS_ALLOWED: u16 = 2;
pub const IORING_RESTRICTION_SQE_FLAGS_REQUIRED: u16 = 3;

/// struct io_uring_restriction: `arg` is the opcode (SQE_OP) or the flag bits (SQE_FLAGS_*).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct UringRestriction {
    pub opcode: u16,
    pub arg: u8,
    pub resv: u8,
    pub resv2: [u32; 3],
}

/// io_uring_setup(2). With IORING_SETUP_NO_MMAP, `p.sq_off.user_addr` and `p.cq_off.user_addr` must point
/// to page-aligned memory large enough for the SQEs and for the rings; the kernel pins those pages.
pub fn io_uring_setup(entries: u32, p: &mut UringParams) -> SysResult<OwnedFd> {
    // SAFETY: `p` is a valid, exclusively borrowed io_uring_params the kernel reads and fills during the
    // call. The user memory it may name is checked by the kernel (EFAULT when unmapped or too small).
    let r = unsafe { libc::syscall(libc::SYS_io_uring_setup, entries, p as *mut UringParams) };
    if r < 0 {
        return Err(SysErr::last("io_uring_setup"));
    }
    // SAFETY: the kernel just returned `r` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}

/// io_uring_register(2) with an argument array of `nr` elements of `T`.
///
/// # Safety
/// `arg` must be the array of `nr` elements that the register opcode `op` expects (iovecs for BUFFERS, i32
/// fds for FILES, restrictions for RESTRICTIONS, empty for ENABLE_RINGS), and registered buffers must stay
/// mapped while the ring can use them.
pub unsafe fn io_uring_register<T>(fd: RawFd, op: u32, arg: &[T]) -> SysResult<()> {
    let ptr = if arg.is_empty() {
        std::ptr::null()
    } else {
        arg.as_ptr()
    };
    // SAFETY: the caller guarantees `arg` matches `op`; the slice is alive for the whole call.
    let r = unsafe { libc::syscall(libc::SYS_io_uring_register, fd, op, ptr, arg.len() as u32) };
    if r < 0 {
        Err(SysErr::last("io_uring_register"))
    } else {
        Ok(())
    }
}

/// prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT): from now on only read(2), write(2), _exit(2) and
/// sigreturn(2) are allowed; any other syscall kills the process with SIGKILL.
pub fn seccomp_strict() -> SysResult<()> {
    // SAFETY: the prctl takes integers only.
    cvt("prctl(PR_SET_SECCOMP)", unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_STRICT as libc::c_ulong,
        )
    })
    .map(|_| ())
}

/// exit(2) of the calling thread, the only way out under seccomp strict mode (glibc's _exit calls
/// exit_group, which strict mode forbids). In a single-threaded process this ends the process.
pub fn exit_thread(code: i32) -> ! {
    // SAFETY: SYS_exit never returns and reads no memory.
    unsafe {
        libc::syscall(libc::SYS_exit, code);
    }
    // SYS_exit does not return; keep the type checker satisfied without an unsafe hint.
    loop {
        std::hint::spin_loop();
    }
}

/// sched_setaffinity(2) of the calling thread to one CPU.
pub fn pin_to_cpu(cpu: u32) -> SysResult<()> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes one bit of `set`; CPU numbers are bounded by the caller (checked against
    // the CPUs online).
    unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    cvt("sched_setaffinity", unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    })
    .map(|_| ())
}

/// The CPUs the calling thread may run on (sched_getaffinity(2)).
pub fn allowed_cpus() -> Vec<u32> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid out-buffer of the size passed.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Vec::new();
    }
    // SAFETY: CPU_ISSET only reads `set`.
    (0..libc::CPU_SETSIZE as u32)
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect()
}

/// wait4(2) for one child without blocking: `None` while it runs, else its wait status and rusage.
pub fn wait4_nohang(pid: i32) -> SysResult<Option<(i32, libc::rusage)>> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `ru` are valid out-pointers for the call.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == 0 {
            return Ok(None);
        }
        if r > 0 {
            return Ok(Some((status, ru)));
        }
        let e = SysErr::last("wait4");
        if e.errno != libc::EINTR {
            return Err(e);
        }
    }
}

/// kill(2).
pub fn kill(pid: i32, sig: i32) -> SysResult<()> {
    // SAFETY: kill takes integers only.
    cvt("kill", unsafe { libc::kill(pid, sig) }).map(|_| ())
}

/// poll(2) of one descriptor for input, `timeout_ms` at most: true when readable or hung up.
pub fn poll_in(fd: RawFd, timeout_ms: i32) -> SysResult<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one valid pollfd for the duration of the call.
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if r < 0 {
        let e = SysErr::last("poll");
        if e.errno == libc::EINTR {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(r > 0)
}

/// Restores the default action of `sig` (an inherited handler, like Rust's SIGSEGV stack-overflow handler,
/// would make system calls that seccomp strict mode forbids).
pub fn default_signal(sig: i32) {
    // SAFETY: SIG_DFL is a valid disposition for any catchable signal.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// pwritev2(2) (Linux 4.6) with RWF_* `flags`.
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is readable for its whole length during the call.
#[inline]
pub unsafe fn pwritev2(fd: RawFd, iov: &[libc::iovec], off: u64, flags: i32) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is readable; the array itself is a valid slice.
    cvt_size("pwritev2", unsafe {
        libc::pwritev2(
            fd,
            iov.as_ptr(),
            iov.len() as libc::c_int,
            off as libc::off_t,
            flags,
        )
    })
}

/// preadv2(2) (Linux 4.6) with RWF_* `flags`.
///
/// # Safety
/// Every `iovec` in `iov` must describe memory that is writable for its whole length during the call.
#[inline]
pub unsafe fn preadv2(fd: RawFd, iov: &[libc::iovec], off: u64, flags: i32) -> SysResult<usize> {
    // SAFETY: the caller guarantees each iovec is writable; the array itself is a valid slice.
    cvt_size("preadv2", unsafe {
        libc::preadv2(
            fd,
            iov.as_ptr(),
            iov.len() as libc::c_int,
            off as libc::off_t,
            flags,
        )
    })
}
