//! Terminals: the size of the one a descriptor is on, and a new pseudo-terminal pair (for tests that
//! watch what iolab draws on a terminal).

use super::errno::{result, SysResult};
use std::os::fd::{FromRawFd, OwnedFd};

/// A new pseudo-terminal of `cols` x `rows` (posix_openpt, grantpt, unlockpt, TIOCSWINSZ): (the
/// controller's end, the terminal's end, opened without becoming anyone's controlling terminal).
pub fn openpty(cols: u16, rows: u16) -> SysResult<(OwnedFd, OwnedFd)> {
    // SAFETY: posix_openpt takes flags and returns a new descriptor or -1.
    let m = result("posix_openpt", unsafe {
        libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC)
    })?;
    // SAFETY: `m` was just returned by the kernel and nothing else owns it.
    let master = unsafe { OwnedFd::from_raw_fd(m) };
    // SAFETY: grantpt and unlockpt take the descriptor only.
    result("grantpt", unsafe { libc::grantpt(m) })?;
    // SAFETY: as above.
    result("unlockpt", unsafe { libc::unlockpt(m) })?;
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: ptsname_r writes at most `name.len()` bytes, NUL-terminated, into the buffer.
    let r = unsafe { libc::ptsname_r(m, name.as_mut_ptr(), name.len()) };
    if r != 0 {
        return Err(super::errno::SysErr::new("ptsname_r", r));
    }
    // SAFETY: `name` is NUL-terminated (ptsname_r succeeded) and outlives the call.
    let s = result("open", unsafe {
        libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    })?;
    // SAFETY: `s` was just returned by the kernel and nothing else owns it.
    let slave = unsafe { OwnedFd::from_raw_fd(s) };
    let ws = libc::winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCSWINSZ reads one `winsize` through the pointer, valid for the call.
    result("ioctl(TIOCSWINSZ)", unsafe {
        libc::ioctl(m, libc::TIOCSWINSZ, &ws)
    })?;
    Ok((master, slave))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal_size;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_new_pty_has_the_size_asked_for() {
        let (m, s) = openpty(97, 31).expect("a pseudo-terminal");
        assert_eq!(terminal_size(s.as_raw_fd()), Some((97, 31)));
        assert_eq!(terminal_size(m.as_raw_fd()), Some((97, 31)));
        let f = std::fs::File::open("/dev/null").unwrap();
        assert_eq!(terminal_size(f.as_raw_fd()), None);
    }
}
