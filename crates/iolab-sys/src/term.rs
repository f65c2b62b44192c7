//! Terminals: the window size of a descriptor (TIOCGWINSZ), for wrapping text to the screen.

use super::errno::{result, SysResult};
use std::os::fd::RawFd;

/// The window size of the terminal `fd` refers to (ioctl TIOCGWINSZ); an error where `fd` is no
/// terminal (ENOTTY).
fn window_size(fd: RawFd) -> SysResult<libc::winsize> {
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
    Ok(ws)
}

/// The columns of the terminal `fd` refers to; an error where `fd` is no terminal (ENOTTY), and `Ok(0)`
/// where the terminal does not know its size.
pub fn terminal_columns(fd: RawFd) -> SysResult<u16> {
    Ok(window_size(fd)?.ws_col)
}

/// The (columns, rows) of the terminal `fd` is on, when it is one and knows its size.
pub fn terminal_size(fd: RawFd) -> Option<(u16, u16)> {
    let ws = window_size(fd).ok()?;
    (ws.ws_col > 0).then_some((ws.ws_col, ws.ws_row))
}
