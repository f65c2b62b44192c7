//! The files iolab reads as input (spec and suite files, record files, scripts): regular files only, read
//! with a bound stated in the message. A device (`/dev/zero`), a FIFO or a socket is refused before it is
//! read: opened O_NONBLOCK, so that even a FIFO without a writer never blocks the open.

use crate::error::{Error, Result};
use crate::units::fmt_size;
use iolab_sys as sys;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::Path;

/// The most iolab reads of a spec, suite or script file.
pub const SMALL_INPUT: u64 = 1 << 20;
/// The most iolab reads of a file of records (a sweep's or suite's JSON lines, a result document).
pub const RECORDS_INPUT: u64 = 1 << 30;

/// The whole text of the input file `path` given by `flag` (a `what` of at most `limit` bytes): refused,
/// naming the flag, when it is not a regular file, larger than `limit`, or not UTF-8 text.
pub fn read_text(path: &Path, flag: &str, what: &str, limit: u64) -> Result<String> {
    let shown = path.display();
    let mut bytes = Vec::new();
    open_regular(path, flag, what, limit)?
        .read_to_end(&mut bytes)
        .map_err(|e| Error::usage(flag, format!("cannot read {shown}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(path, flag, what, limit, bytes.len() as u64));
    }
    String::from_utf8(bytes)
        .map_err(|_| Error::usage(flag, format!("{shown} is not UTF-8 text; a {what} is text")))
}

/// The input file `path` given by `flag` (a `what` of at most `limit` bytes), open to be read as a
/// stream: refused, naming the flag, when it is not a regular file or larger than `limit`. The file may
/// grow while it is read: the reader ends after `limit` + 1 bytes, so reading more than `limit` is
/// noticed (a caller reading it all compares what it read with the limit; [`read_text`] does).
pub fn open_regular(
    path: &Path,
    flag: &str,
    what: &str,
    limit: u64,
) -> Result<std::io::Take<std::fs::File>> {
    crate::paths::check_length(flag, path)?;
    let shown = path.display();
    let fd = sys::open(
        path,
        libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
        0,
    )
    .map_err(|e| {
        Error::usage(
            flag,
            format!("cannot read {shown}: {}", sys::errno_name(e.errno)),
        )
    })?;
    let st = sys::fstat(fd.as_raw_fd()).map_err(|e| Error::sys_on(e, shown.to_string()))?;
    let kind = match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => None,
        libc::S_IFDIR => Some("a directory"),
        libc::S_IFCHR => Some("a character device"),
        libc::S_IFBLK => Some("a block device"),
        libc::S_IFIFO => Some("a FIFO"),
        libc::S_IFSOCK => Some("a socket"),
        _ => Some("not a regular file"),
    };
    if let Some(k) = kind {
        return Err(Error::usage(
            flag,
            format!("{shown} is {k}; iolab reads a {what} from a regular file only"),
        ));
    }
    // A kernel interface's file is made as it is read (its size says nothing), and reading some takes
    // what others wait for (/proc/kmsg consumes the kernel's log).
    if let Some(fs) = sys::fd_fs_magic(fd.as_raw_fd())
        .ok()
        .and_then(sys::pseudo_fs_name)
    {
        return Err(Error::usage(
            flag,
            format!(
                "{shown} is on {fs}, a kernel interface, not storage; iolab reads a {what} from a \
                 regular file of a filesystem only"
            ),
        ));
    }
    if st.st_size as u64 > limit {
        return Err(too_big(path, flag, what, limit, st.st_size as u64));
    }
    Ok(std::fs::File::from(fd).take(limit + 1))
}

fn too_big(path: &Path, flag: &str, what: &str, limit: u64, n: u64) -> Error {
    Error::usage(
        flag,
        format!(
            "{} is {} or more; iolab reads at most {} of a {what}",
            path.display(),
            fmt_size(n),
            fmt_size(limit)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel interface's file is refused unread (/proc/kmsg would give up the kernel's log to iolab).
    #[test]
    fn kernel_interface_files_are_refused_unread() {
        // (Files anyone may open: refused for where they are, not for a permission.)
        for p in [
            "/proc/self/status",
            "/sys/kernel/mm/transparent_hugepage/enabled",
        ] {
            if !Path::new(p).exists() {
                continue;
            }
            let e = read_text(Path::new(p), "--spec", "spec file", SMALL_INPUT).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{p}");
            assert!(
                e.to_string().contains("a kernel interface, not storage"),
                "{p}: {e}"
            );
        }
    }

    #[test]
    fn devices_fifos_and_large_files_are_refused_before_they_are_read() {
        let e = read_text(Path::new("/dev/zero"), "--spec", "spec file", SMALL_INPUT).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("a character device"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string; mkfifo makes a FIFO node in a directory of this test's.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, "--spec", "spec file", SMALL_INPUT).unwrap_err();
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let big = d.path().join("big");
        std::fs::write(&big, vec![b'a'; 2048]).unwrap();
        let e = read_text(&big, "--script", "script", 1024).unwrap_err();
        assert!(e.to_string().contains("at most 1 KiB"), "{e}");
        assert_eq!(read_text(&big, "x", "y", 4096).unwrap().len(), 2048);
    }
}
