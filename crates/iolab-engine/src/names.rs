//! Names in a directory, opened through the directory's descriptor: the parent of a path, and a name
//! opened only while it is still the file iolab looked up (see `target::pin` and `cleanup`).

use crate::error::{Error, Result};
use iolab_sys as sys;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// The directory of `path` (opened O_PATH, its own symbolic links followed as the user wrote them) and
/// the name `path` has in it.
pub fn open_parent(path: &Path) -> Result<(OwnedFd, OsString)> {
    let shown = path.display().to_string();
    let name = path
        .file_name()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| Error::Runtime(format!("{shown}: no file name to create")))?
        .to_os_string();
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = sys::open(
        parent,
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    )
    .map_err(|e| Error::sys_on(e, parent.display().to_string()))?;
    Ok((dir, name))
}

/// Opens `name` in `dir` with `flags` (| O_NOFOLLOW), and only if it is still the file `id` (device,
/// inode): else the name was replaced after iolab looked it up, and nothing is opened.
pub fn open_same(
    dir: &OwnedFd,
    name: &OsStr,
    flags: libc::c_int,
    id: (u64, u64),
    path: &Path,
) -> Result<OwnedFd> {
    let shown = path.display().to_string();
    let fd = sys::openat(dir.as_raw_fd(), name, flags | libc::O_NOFOLLOW, 0).map_err(|e| {
        if e.errno == libc::ELOOP {
            replaced(&shown)
        } else {
            Error::sys_on(e, &shown)
        }
    })?;
    let st = sys::fstat(fd.as_raw_fd()).map_err(|e| Error::sys_on(e, &shown))?;
    if sys::identity(&st) != id {
        return Err(replaced(&shown));
    }
    Ok(fd)
}

pub fn replaced(shown: &str) -> Error {
    Error::Runtime(format!(
        "{shown} was replaced after iolab looked it up (the name now refers to another file or a symbolic \
         link): iolab opens nothing else under that name; run again"
    ))
}
