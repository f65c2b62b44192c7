//! Errors for people. Exit codes: 2 for bad input (the message names the flag and what it accepts),
//! 1 for kernel errors at run time (the message names the syscall, the errno name and a hint) and for
//! verification failures and for output that could not be written (stdout, a --json/--csv/--out file).

use iolab_sys::{errno_name, SysErr};
use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: names the flag (`--bs`) or spec key and what would be accepted.
    #[error("{flag}: {}", os_words(msg))]
    Usage { flag: String, msg: String },
    /// A kernel call failed while running.
    #[error("{0}")]
    Sys(SysFailure),
    /// The data read back did not match what was written.
    #[error("verify: {}", os_words(.0))]
    Verify(String),
    /// Anything else that went wrong at run time (I/O on result files, a short transfer ...).
    #[error("{}", os_words(.0))]
    Runtime(String),
    /// A result could not be written: stdout or a result file (a full disk, a closed pipe). Exit 1.
    #[error("{}", os_words(.0))]
    Output(String),
    /// A suite step this build or machine cannot run (a method not built yet, a device that cannot be made).
    #[error("not available {}", os_words(.0))]
    Unavailable(String),
}

impl Error {
    pub fn usage(flag: impl Into<String>, msg: impl Into<String>) -> Error {
        Error::Usage {
            flag: flag.into(),
            msg: msg.into(),
        }
    }

    /// A syscall failure with a context-specific hint (replaces the generic one).
    pub fn sys_hint(e: SysErr, hint: impl Into<String>) -> Error {
        Error::Sys(SysFailure {
            err: e,
            context: None,
            hint: Some(hint.into()),
        })
    }

    /// A syscall failure on a named object ("/tmp/x").
    pub fn sys_on(e: SysErr, what: impl Into<String>) -> Error {
        Error::Sys(SysFailure {
            err: e,
            context: Some(what.into()),
            hint: None,
        })
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } => 2,
            _ => 1,
        }
    }
}

impl From<SysErr> for Error {
    fn from(e: SysErr) -> Self {
        Error::Sys(SysFailure {
            err: e,
            context: None,
            hint: None,
        })
    }
}

/// A message with the standard library's words for an OS error ("No space left on device (os error
/// 28)", from an `io::Error` put in with `{e}`) in iolab's: "no space left (ENOSPC)", the errno's name
/// where the number was. Everything an [`Error`] shows goes through it.
pub fn os_words(text: &str) -> std::borrow::Cow<'_, str> {
    const MARK: &str = " (os error ";
    if !text.contains(MARK) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let errno = after[..digits].parse::<i32>().ok();
        match errno.filter(|_| after[digits..].starts_with(')')) {
            Some(n) => {
                let mut before = &rest[..at];
                // The C library's sentence for the errno, just before the number, said in iolab's words.
                let sentence = std::io::Error::from_raw_os_error(n).to_string();
                let sentence = sentence.split(MARK).next().unwrap_or("");
                let own = match n {
                    libc::ENOSPC => Some("no space left"),
                    libc::EDQUOT => Some("over the disk quota"),
                    _ => None,
                };
                if let Some(words) =
                    own.filter(|_| !sentence.is_empty() && before.ends_with(sentence))
                {
                    before = &before[..before.len() - sentence.len()];
                    out.push_str(before);
                    out.push_str(words);
                } else {
                    out.push_str(before);
                }
                out.push_str(&format!(" ({})", errno_name(n)));
                rest = &after[digits + 1..];
            }
            None => {
                out.push_str(&rest[..at + MARK.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// A failed syscall, rendered as "pwrite failed: ENOSPC (No space left on device) on /x; hint: ...".
#[derive(Debug)]
pub struct SysFailure {
    pub err: SysErr,
    pub context: Option<String>,
    pub hint: Option<String>,
}

impl fmt::Display for SysFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let SysErr { call, errno } = self.err;
        let text = std::io::Error::from_raw_os_error(errno).to_string();
        let text = text.split(" (os error").next().unwrap_or(&text).to_string();
        write!(f, "{call} failed: {} ({text})", errno_name(errno))?;
        if let Some(c) = &self.context {
            write!(f, " on {c}")?;
        }
        let hint = self
            .hint
            .clone()
            .or_else(|| self.context.as_deref().and_then(|c| path_hint(errno, c)))
            .or_else(|| default_hint(call, errno).map(str::to_string));
        if let Some(h) = hint {
            write!(f, "; hint: {h}")?;
        }
        Ok(())
    }
}

/// What the path an error names says about it: a dangling symlink makes creating a new file fail with
/// EEXIST (O_EXCL never follows a symlink) and opening fail with ENOENT, which alone would mislead.
fn path_hint(errno: i32, path: &str) -> Option<String> {
    let p = std::path::Path::new(path);
    if let Some(Ok(to)) = crate::tcp_peer::tcp_remote(p) {
        return crate::tcp_peer::tcp_failure(errno, &to.to_string());
    }
    if errno != libc::EEXIST && errno != libc::ENOENT && errno != libc::ELOOP {
        return None;
    }
    let link = std::fs::read_link(p).ok()?;
    if std::fs::metadata(p).is_ok() && errno != libc::ELOOP {
        return None;
    }
    let what = if errno == libc::ELOOP {
        "which leads back into a loop of symlinks"
    } else {
        "which does not exist (a dangling symlink)"
    };
    Some(format!(
        "{path} is a symlink to {}, {what}: iolab does not create files through a symlink; remove it \
         or give the path it should point to",
        link.display()
    ))
}

/// What a user can do about an errno from a given call.
pub fn default_hint(call: &str, errno: i32) -> Option<&'static str> {
    if errno == libc::ENOSYS && crate::emulation::user_mode::detected().is_some() {
        if let Some(h) = crate::emulation::user_mode::enosys_hint(call) {
            return Some(h);
        }
    }
    Some(match (call, errno) {
        ("io_uring_setup", libc::EINVAL) => {
            "the kernel refused the ring parameters: lower --qd (max 32768) or drop ring options"
        }
        ("io_uring_setup", libc::EPERM) => {
            "io_uring is disabled for this process (sysctl kernel.io_uring_disabled or a seccomp filter)"
        }
        ("io_uring_setup", libc::ENOSYS) => "this kernel has no io_uring (CONFIG_IO_URING off)",
        ("io_setup", libc::ENOSYS) => "this kernel has no native AIO (CONFIG_AIO off)",
        ("io_uring_setup", libc::ENOMEM) => {
            "ring memory is capped by RLIMIT_MEMLOCK (unless root) and mapping the rings by the address-space \
             limit (ulimit -v): lower --qd or --threads, or raise the limit"
        }
        (_, libc::ENOSPC) | (_, libc::EDQUOT) => {
            "the filesystem is full: use a smaller --file-size/--size or a target on another filesystem"
        }
        (_, libc::EOPNOTSUPP) => "the target or its filesystem does not support this operation",
        (_, libc::EPERM) | (_, libc::EACCES) if iolab_sys::geteuid() == 0 => {
            "not permitted even for root: an immutable or append-only file or directory (lsattr shows 'i' \
             or 'a'), a read-only bind mount, or a security module; choose another place"
        }
        (_, libc::EPERM) | (_, libc::EACCES) => {
            "permission denied: run as a user who may access it, or choose another place"
        }
        (_, libc::EINVAL) if call.contains("write") || call.contains("read") || call == "io_uring" => {
            "the kernel refused the request: with --direct, --bs and --offset must be multiples of the \
             device's O_DIRECT alignment"
        }
        (_, libc::EROFS) => "it is on a read-only filesystem: choose a place on a writable one",
        (_, libc::ENODEV) => "this target does not support the operation (e.g. it cannot be mapped)",
        (_, libc::EFBIG) => {
            "the file would exceed the filesystem's maximum size: lower --file-size, or --ops or --size \
             where the writes are what grows it"
        }
        (_, libc::EIO) => "the device reported an I/O error: check dmesg",
        (_, libc::EMFILE) => {
            "too many open files for ulimit -n: besides the target, the counting pass's per-syscall breakdown \
             opens a tracepoint descriptor per traced syscall and thread (a one-thread run needs about 20): \
             add --no-breakdown (or --count none), lower --threads, or raise ulimit -n"
        }
        (_, libc::ENFILE) => {
            "the system's open-file table is full (fs.file-max): lower --threads, add --no-breakdown, or \
             close other programs' files"
        }
        _ => return None,
    })
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_os_error_number_is_said_by_its_name() {
        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let e = Error::Output(format!(
            "cannot write --json x.json: {full}; the partial file was removed"
        ));
        assert_eq!(
            e.to_string(),
            "cannot write --json x.json: no space left (ENOSPC); the partial file was removed"
        );
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        let e = Error::usage("--out", format!("cannot open: {denied}"));
        assert_eq!(
            e.to_string(),
            "--out: cannot open: Permission denied (EACCES)"
        );
        let quota = std::io::Error::from_raw_os_error(libc::EDQUOT).to_string();
        assert_eq!(os_words(&quota), "over the disk quota (EDQUOT)");
        assert_eq!(os_words("a (os error x) b"), "a (os error x) b");
        assert_eq!(os_words("no number"), "no number");
    }
}
