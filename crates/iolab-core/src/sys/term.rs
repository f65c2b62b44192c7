//! Terminals: the window size of a descriptor (TIOCGWINSZ), for wrapping text to the screen.

use super::errno::{result, SysResult};
use std::os::fd::RawFd;

/// The columns of the terminal `fd` refers to (ioctl TIOCGWINSZ); an error where `fd` is no terminal
/// (ENOTTY), and `Ok(0)` where the terminal does not know its size.
pub fn terminal_columns(fd: RawFd) -> SysResult<u16> {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `struct winsize` through the pointer, which points to `ws`, a live
    // value of that type; the descriptor is only read.
    let r = unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws as *mut libc::winsize) };
    result("ioctl(TIOCGWINSZ)", r)?;
    Ok(ws.ws_col)
}
