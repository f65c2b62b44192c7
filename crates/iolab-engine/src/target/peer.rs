//! The peer thread at the far end of a stream target (`iolab-peer`): it drains what a write run sends, or
//! feeds a read run the pattern, and counts the bytes and its own CPU.

use crate::error::Error;
use crate::pattern;
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};

pub use crate::result::PeerFigures;

/// The peer of a write run: reads until the writer closes its end; returns what arrived.
pub(super) fn drain(fd: OwnedFd) -> std::result::Result<PeerFigures, String> {
    let ru0 = sys::getrusage(libc::RUSAGE_THREAD);
    // 256 KiB: four times a pipe's default capacity and more than a socket's read usually returns; a
    // smaller peer buffer keeps the main job's memory down (it runs stream targets beside 8 MiB maps).
    let mut buf = vec![0u8; 256 << 10];
    let mut total = 0u64;
    loop {
        match sys::read(fd.as_raw_fd(), &mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if e.errno == libc::EINTR => continue,
            Err(e) => {
                return Err(format!(
                    "the stream's reading peer failed: {}",
                    Error::from(e)
                ))
            }
        }
    }
    Ok(peer_figures(total, &ru0))
}

/// The peer of a read run: writes `bs`-byte pattern chunks until the reader closes its end.
pub(super) fn feed(fd: OwnedFd, bs: usize, seed: u64) -> std::result::Result<PeerFigures, String> {
    let ru0 = sys::getrusage(libc::RUSAGE_THREAD);
    let mut chunk = crate::mem::zeroed::<u8>(bs, "the stream peer's block", "lower --bs")
        .map_err(|e| e.to_string())?;
    pattern::fill_body(&mut chunk, seed);
    let mut total = 0u64;
    loop {
        let mut at = 0;
        while at < bs {
            match sys::write(fd.as_raw_fd(), &chunk[at..]) {
                Ok(n) => at += n,
                Err(e) if e.errno == libc::EINTR => continue,
                // The reader closed its end: the run is over.
                Err(e) if e.errno == libc::EPIPE || e.errno == libc::ECONNRESET => {
                    return Ok(peer_figures(total + at as u64, &ru0))
                }
                Err(e) => {
                    return Err(format!(
                        "the stream's writing peer failed: {}",
                        Error::from(e)
                    ))
                }
            }
        }
        total += bs as u64;
    }
}

fn peer_figures(bytes: u64, ru0: &libc::rusage) -> PeerFigures {
    let ru1 = sys::getrusage(libc::RUSAGE_THREAD);
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    PeerFigures {
        bytes,
        user_s: Some(s(ru1.ru_utime) - s(ru0.ru_utime)),
        sys_s: Some(s(ru1.ru_stime) - s(ru0.ru_stime)),
        remote: None,
    }
}
