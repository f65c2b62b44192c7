//! Where `iolab probe` tries its files on this machine (the tries themselves are `crate::probe`).

use crate::probe::ProbeResult;
use iolab_engine::error::Result;
use iolab_engine::measure::clock::ClockInfo;
use std::path::{Path, PathBuf};

/// (tmpfs, disk): /dev/shm when it is a directory (else the temporary directory), and the temporary
/// directory ($TMPDIR or /tmp).
pub fn dirs() -> (PathBuf, PathBuf) {
    let shm = Path::new("/dev/shm");
    let tmpfs = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    (tmpfs, std::env::temp_dir())
}

/// Every try of `crate::probe::probe`, in [`dirs`].
pub fn probe_here(clock: &ClockInfo) -> Result<ProbeResult> {
    let (tmpfs, disk) = dirs();
    crate::probe::probe(&tmpfs, &disk, clock)
}
