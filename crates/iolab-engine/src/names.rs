//! Names in a directory, opened through the directory's descriptor: the parent of a path, and a name
//! opened only while it is still the file iolab looked up (see `target::pin` and `cleanup`).

use crate::error::{Error, Result};
use iolab_sys as sys;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// The directories iolab made in this process (the path it gave and the identity it got): a target
/// joined to one is opened only while that path still leads to it.
static MADE_DIRS: std::sync::Mutex<Vec<(std::path::PathBuf, (u64, u64))>> =
    std::sync::Mutex::new(Vec::new());

/// Records a directory iolab just made at `path` (see [`open_parent`]).
pub fn register_made_dir(path: &Path, id: (u64, u64)) {
    let mut m = MADE_DIRS.lock().unwrap_or_else(|p| p.into_inner());
    m.push((path.to_path_buf(), id));
}

/// The directory of `path` (opened O_PATH, its own symbolic links followed as the user wrote them) and
/// the name `path` has in it. A directory iolab made is refused when its path now leads elsewhere (it was
/// renamed away and something, a symbolic link say, took its name).
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
    let made = {
        let m = MADE_DIRS.lock().unwrap_or_else(|p| p.into_inner());
        m.iter().rev().find(|(p, _)| p == parent).map(|(_, id)| *id)
    };
    if let Some(id) = made {
        let now = sys::fstat(dir.as_raw_fd()).map(|st| sys::identity(&st));
        if now.ok() != Some(id) {
            return Err(replaced(&parent.display().to_string()));
        }
    }
    Ok((dir, name))
}

/// Opens `name` in `dir` with `flags`, and only if it is still the file `id` (device, inode): else the
/// name was replaced after iolab looked it up, and nothing is opened. The name is looked at first without
/// opening what it is (O_PATH | O_NOFOLLOW: a FIFO or device put in its place is never opened, so never
/// blocks), then that very file is opened through its descriptor.
pub fn open_same(
    dir: &OwnedFd,
    name: &OsStr,
    flags: libc::c_int,
    id: (u64, u64),
    path: &Path,
) -> Result<OwnedFd> {
    let shown = path.display().to_string();
    let at = sys::openat(dir.as_raw_fd(), name, libc::O_PATH | libc::O_NOFOLLOW, 0)
        .map_err(|e| Error::sys_on(e, &shown))?;
    let st = sys::fstat(at.as_raw_fd()).map_err(|e| Error::sys_on(e, &shown))?;
    if st.st_mode & libc::S_IFMT == libc::S_IFLNK || sys::identity(&st) != id {
        return Err(replaced(&shown));
    }
    // /proc/self/fd/N of an O_PATH descriptor reopens the file it refers to, whatever its name is now.
    let fd = sys::open(&sys::fd_path(at.as_raw_fd()), flags & !libc::O_NOFOLLOW, 0)
        .map_err(|e| Error::sys_on(e, &shown))?;
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
