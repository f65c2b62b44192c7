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

/// Every errno Linux defines (include/uapi/asm-generic/errno-base.h and errno.h; the aliases EWOULDBLOCK,
/// EDEADLOCK and ENOTSUP share their values with EAGAIN, EDEADLK and EOPNOTSUPP).
const NAMES: &[(i32, &str)] = &[
    (libc::EPERM, "EPERM"),
    (libc::ENOENT, "ENOENT"),
    (libc::ESRCH, "ESRCH"),
    (libc::EINTR, "EINTR"),
    (libc::EIO, "EIO"),
    (libc::ENXIO, "ENXIO"),
    (libc::E2BIG, "E2BIG"),
    (libc::ENOEXEC, "ENOEXEC"),
    (libc::EBADF, "EBADF"),
    (libc::ECHILD, "ECHILD"),
    (libc::EAGAIN, "EAGAIN"),
    (libc::ENOMEM, "ENOMEM"),
    (libc::EACCES, "EACCES"),
    (libc::EFAULT, "EFAULT"),
    (libc::ENOTBLK, "ENOTBLK"),
    (libc::EBUSY, "EBUSY"),
    (libc::EEXIST, "EEXIST"),
    (libc::EXDEV, "EXDEV"),
    (libc::ENODEV, "ENODEV"),
    (libc::ENOTDIR, "ENOTDIR"),
    (libc::EISDIR, "EISDIR"),
    (libc::EINVAL, "EINVAL"),
    (libc::ENFILE, "ENFILE"),
    (libc::EMFILE, "EMFILE"),
    (libc::ENOTTY, "ENOTTY"),
    (libc::ETXTBSY, "ETXTBSY"),
    (libc::EFBIG, "EFBIG"),
    (libc::ENOSPC, "ENOSPC"),
    (libc::ESPIPE, "ESPIPE"),
    (libc::EROFS, "EROFS"),
    (libc::EMLINK, "EMLINK"),
    (libc::EPIPE, "EPIPE"),
    (libc::EDOM, "EDOM"),
    (libc::ERANGE, "ERANGE"),
    (libc::EDEADLK, "EDEADLK"),
    (libc::ENAMETOOLONG, "ENAMETOOLONG"),
    (libc::ENOLCK, "ENOLCK"),
    (libc::ENOSYS, "ENOSYS"),
    (libc::ENOTEMPTY, "ENOTEMPTY"),
    (libc::ELOOP, "ELOOP"),
    (libc::ENOMSG, "ENOMSG"),
    (libc::EIDRM, "EIDRM"),
    (libc::ECHRNG, "ECHRNG"),
    (libc::EL2NSYNC, "EL2NSYNC"),
    (libc::EL3HLT, "EL3HLT"),
    (libc::EL3RST, "EL3RST"),
    (libc::ELNRNG, "ELNRNG"),
    (libc::EUNATCH, "EUNATCH"),
    (libc::ENOCSI, "ENOCSI"),
    (libc::EL2HLT, "EL2HLT"),
    (libc::EBADE, "EBADE"),
    (libc::EBADR, "EBADR"),
    (libc::EXFULL, "EXFULL"),
    (libc::ENOANO, "ENOANO"),
    (libc::EBADRQC, "EBADRQC"),
    (libc::EBADSLT, "EBADSLT"),
    (libc::EBFONT, "EBFONT"),
    (libc::ENOSTR, "ENOSTR"),
    (libc::ENODATA, "ENODATA"),
    (libc::ETIME, "ETIME"),
    (libc::ENOSR, "ENOSR"),
    (libc::ENONET, "ENONET"),
    (libc::ENOPKG, "ENOPKG"),
    (libc::EREMOTE, "EREMOTE"),
    (libc::ENOLINK, "ENOLINK"),
    (libc::EADV, "EADV"),
    (libc::ESRMNT, "ESRMNT"),
    (libc::ECOMM, "ECOMM"),
    (libc::EPROTO, "EPROTO"),
    (libc::EMULTIHOP, "EMULTIHOP"),
    (libc::EDOTDOT, "EDOTDOT"),
    (libc::EBADMSG, "EBADMSG"),
    (libc::EOVERFLOW, "EOVERFLOW"),
    (libc::ENOTUNIQ, "ENOTUNIQ"),
    (libc::EBADFD, "EBADFD"),
    (libc::EREMCHG, "EREMCHG"),
    (libc::ELIBACC, "ELIBACC"),
    (libc::ELIBBAD, "ELIBBAD"),
    (libc::ELIBSCN, "ELIBSCN"),
    (libc::ELIBMAX, "ELIBMAX"),
    (libc::ELIBEXEC, "ELIBEXEC"),
    (libc::EILSEQ, "EILSEQ"),
    (libc::ERESTART, "ERESTART"),
    (libc::ESTRPIPE, "ESTRPIPE"),
    (libc::EUSERS, "EUSERS"),
    (libc::ENOTSOCK, "ENOTSOCK"),
    (libc::EDESTADDRREQ, "EDESTADDRREQ"),
    (libc::EMSGSIZE, "EMSGSIZE"),
    (libc::EPROTOTYPE, "EPROTOTYPE"),
    (libc::ENOPROTOOPT, "ENOPROTOOPT"),
    (libc::EPROTONOSUPPORT, "EPROTONOSUPPORT"),
    (libc::ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT"),
    (libc::EOPNOTSUPP, "EOPNOTSUPP"),
    (libc::EPFNOSUPPORT, "EPFNOSUPPORT"),
    (libc::EAFNOSUPPORT, "EAFNOSUPPORT"),
    (libc::EADDRINUSE, "EADDRINUSE"),
    (libc::EADDRNOTAVAIL, "EADDRNOTAVAIL"),
    (libc::ENETDOWN, "ENETDOWN"),
    (libc::ENETUNREACH, "ENETUNREACH"),
    (libc::ENETRESET, "ENETRESET"),
    (libc::ECONNABORTED, "ECONNABORTED"),
    (libc::ECONNRESET, "ECONNRESET"),
    (libc::ENOBUFS, "ENOBUFS"),
    (libc::EISCONN, "EISCONN"),
    (libc::ENOTCONN, "ENOTCONN"),
    (libc::ESHUTDOWN, "ESHUTDOWN"),
    (libc::ETOOMANYREFS, "ETOOMANYREFS"),
    (libc::ETIMEDOUT, "ETIMEDOUT"),
    (libc::ECONNREFUSED, "ECONNREFUSED"),
    (libc::EHOSTDOWN, "EHOSTDOWN"),
    (libc::EHOSTUNREACH, "EHOSTUNREACH"),
    (libc::EALREADY, "EALREADY"),
    (libc::EINPROGRESS, "EINPROGRESS"),
    (libc::ESTALE, "ESTALE"),
    (libc::EUCLEAN, "EUCLEAN"),
    (libc::ENOTNAM, "ENOTNAM"),
    (libc::ENAVAIL, "ENAVAIL"),
    (libc::EISNAM, "EISNAM"),
    (libc::EREMOTEIO, "EREMOTEIO"),
    (libc::EDQUOT, "EDQUOT"),
    (libc::ENOMEDIUM, "ENOMEDIUM"),
    (libc::EMEDIUMTYPE, "EMEDIUMTYPE"),
    (libc::ECANCELED, "ECANCELED"),
    (libc::ENOKEY, "ENOKEY"),
    (libc::EKEYEXPIRED, "EKEYEXPIRED"),
    (libc::EKEYREVOKED, "EKEYREVOKED"),
    (libc::EKEYREJECTED, "EKEYREJECTED"),
    (libc::EOWNERDEAD, "EOWNERDEAD"),
    (libc::ENOTRECOVERABLE, "ENOTRECOVERABLE"),
    (libc::ERFKILL, "ERFKILL"),
    (libc::EHWPOISON, "EHWPOISON"),
];

/// The kernel's internal errnos (include/linux/errno.h) that can still reach user space, ENOTSUPP (524)
/// from some io_uring and NFS paths above all.
const KERNEL_NAMES: &[(i32, &str)] = &[
    (512, "ERESTARTSYS"),
    (513, "ERESTARTNOINTR"),
    (514, "ERESTARTNOHAND"),
    (515, "ENOIOCTLCMD"),
    (516, "ERESTART_RESTARTBLOCK"),
    (517, "EPROBE_DEFER"),
    (518, "EOPENSTALE"),
    (519, "ENOPARAM"),
    (521, "EBADHANDLE"),
    (522, "ENOTSYNC"),
    (523, "EBADCOOKIE"),
    (524, "ENOTSUPP"),
    (525, "ETOOSMALL"),
    (526, "ESERVERFAULT"),
    (527, "EBADTYPE"),
    (528, "EJUKEBOX"),
    (529, "EIOCBQUEUED"),
    (530, "ERECALLCONFLICT"),
    (531, "ENOGRACE"),
];

/// The symbolic name of an errno value ("ENOSPC"), for messages. Every errno Linux has is named; any
/// other value (none should come) is "errno N", never a bare placeholder.
pub fn errno_name(errno: i32) -> std::borrow::Cow<'static, str> {
    NAMES
        .iter()
        .chain(KERNEL_NAMES)
        .find(|(v, _)| *v == errno)
        .map(|(_, n)| std::borrow::Cow::Borrowed(*n))
        .unwrap_or_else(|| std::borrow::Cow::Owned(format!("errno {errno}")))
}

#[cfg(test)]
mod errno_name_tests {
    use super::errno_name;

    #[test]
    fn every_linux_errno_has_its_name() {
        // 1..=133 on Linux (41 and 58 are unused: the aliases' slots).
        for e in (1..=133).filter(|e| *e != 41 && *e != 58) {
            let n = errno_name(e);
            assert!(n.starts_with('E') && n != "E?", "errno {e}: {n}");
        }
        assert_eq!(errno_name(libc::ENOSPC), "ENOSPC");
        assert_eq!(errno_name(libc::EHWPOISON), "EHWPOISON");
        assert_eq!(errno_name(524), "ENOTSUPP");
        assert_eq!(errno_name(4000), "errno 4000");
    }

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for (v, n) in super::NAMES.iter().chain(super::KERNEL_NAMES) {
            assert!(seen.insert(*v), "{n}: value {v} twice");
        }
    }
}
