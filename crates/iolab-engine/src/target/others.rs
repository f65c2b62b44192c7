//! Targets that another party uses: a file a running iolab measures on, the file iolab's own stdout or
//! stderr goes to.

use crate::error::{Error, Result};
use crate::target::pin::Pin;
use crate::target::prepared::target_err;
use iolab_sys as sys;

/// An existing file that a running iolab (another process: a run's own passes find their own mark) made
/// and measures on is refused, for reads as for writes.
pub(super) fn check_not_measured(pin: &Pin, shown: &str) -> Result<()> {
    let owner = pin.iolab_owner();
    match owner.filter(|p| p.alive() && p.pid as u32 != std::process::id()) {
        Some(p) => Err(running(shown, p.pid)),
        None => Ok(()),
    }
}

pub(super) fn running(shown: &str, pid: i32) -> Error {
    target_err(format!(
        "{shown} is the target of a running iolab (pid {pid}); wait for it to finish or choose a new path \
         (two runs on one file measure each other)"
    ))
}

/// A target that is the file iolab's own stdout or stderr goes to (`--target /dev/stdout > file`) would
/// have the run's data written into its own report, or read its report as data: refused.
pub(super) fn check_not_own_output(pin: &Pin, shown: &str) -> Result<()> {
    let kind = pin.st.st_mode & libc::S_IFMT;
    if kind != libc::S_IFREG && kind != libc::S_IFBLK {
        return Ok(());
    }
    let same = |fd: i32| {
        sys::fstat(fd).is_ok_and(|o| {
            o.st_mode & libc::S_IFMT == kind
                && if kind == libc::S_IFBLK {
                    o.st_rdev == pin.st.st_rdev
                } else {
                    sys::identity(&o) == sys::identity(&pin.st)
                }
        })
    };
    let Some(stream) = [(1, "stdout"), (2, "stderr")]
        .into_iter()
        .find(|&(fd, _)| same(fd))
        .map(|(_, name)| name)
    else {
        return Ok(());
    };
    Err(target_err(format!(
        "{shown} is the file iolab's {stream} goes to: the run would write its data into its own report \
         (or read the report as data); give another target, or send {stream} elsewhere"
    )))
}
