//! [`SysErr`] and [`SysResult`], the one errno check every wrapper uses ([`result`]), and errno names.

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
    /// The error of `call` with the calling thread's errno, read now: call it right after the failed call.
    pub(super) fn last(call: &'static str) -> Self {
        SysErr {
            call,
            errno: std::io::Error::last_os_error().raw_os_error().unwrap_or(0),
        }
    }
}

pub type SysResult<T> = Result<T, SysErr>;

/// A raw return type whose values tell success from failure the C way: failure is one sentinel value (or
/// range) and the cause is left in errno. Implemented for the types the wrapped calls return.
pub(super) trait ErrnoSentinel: Copy {
    /// Does this return value say the call failed (and set errno)?
    fn is_error(self) -> bool;
}

/// `int` returns (open, fsync, ioctl, fcntl, socket ...): negative is failure (-1 by the C convention).
impl ErrnoSentinel for i32 {
    fn is_error(self) -> bool {
        self < 0
    }
}

/// `long` and `off_t` returns on 64-bit Linux (libc::syscall, lseek): negative is failure. `syscall(3)`
/// turns the kernel's -errno into -1 and errno, so this holds for raw syscalls too.
impl ErrnoSentinel for i64 {
    fn is_error(self) -> bool {
        self < 0
    }
}

/// `ssize_t` returns (read, write, pread, splice ...): negative is failure.
impl ErrnoSentinel for isize {
    fn is_error(self) -> bool {
        self < 0
    }
}

/// mmap(2)'s return: MAP_FAILED (not NULL) is failure.
impl ErrnoSentinel for *mut libc::c_void {
    fn is_error(self) -> bool {
        self == libc::MAP_FAILED
    }
}

/// fdopen(3)'s return: NULL is failure.
impl ErrnoSentinel for *mut libc::FILE {
    fn is_error(self) -> bool {
        self.is_null()
    }
}

/// Checks a raw return value, in the manner of nix's `Errno::result`: `Ok(r)` unless `r` is the failure
/// value, else the errno the call left, named `call`. Call it directly on the call's result (nothing may run
/// between the call and this check that could change errno).
#[inline]
pub(super) fn result<T: ErrnoSentinel>(call: &'static str, r: T) -> SysResult<T> {
    if r.is_error() {
        Err(SysErr::last(call))
    } else {
        Ok(r)
    }
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
