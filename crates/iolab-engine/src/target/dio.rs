//! O_DIRECT alignment checks of a target: `--bs` and `--offset` against what its filesystem or device
//! takes, and, for a file iolab is about to create, the same asked before it exists.

use super::prepared::parent_of;
use crate::error::{Error, Result};
use crate::spec::Spec;
use iolab_sys as sys;
use std::os::fd::AsRawFd;
use std::path::Path;

/// --bs and --offset against the O_DIRECT offset alignment `off` of `shown`.
pub(super) fn check_direct_multiples(spec: &Spec, shown: &str, off: u32) -> Result<()> {
    let bs = spec.bs;
    if !bs.is_multiple_of(off as u64) {
        return Err(Error::usage(
            "--bs",
            format!("{bs} bytes cannot be used with --direct on {shown}: O_DIRECT there needs multiples of {off} bytes"),
        ));
    }
    if !spec.skip.unsigned_abs().is_multiple_of(off as u64) {
        return Err(Error::usage(
            "--skip",
            format!("{} cannot be used with --direct on {shown}: O_DIRECT there needs offsets that are multiples of {off} bytes", spec.skip),
        ));
    }
    if !spec.offset.is_multiple_of(off as u64) {
        return Err(Error::usage(
            "--offset",
            format!("{} cannot be used with --direct on {shown}: O_DIRECT there needs offsets that are multiples of {off} bytes", spec.offset),
        ));
    }
    Ok(())
}

/// A new file's O_DIRECT alignment, asked before it is made of an unnamed file in its directory
/// (O_TMPFILE: nothing appears in the directory), so --bs and --offset are refused before anything is
/// created. Where the filesystem cannot make one, `direct_align` asks the new file itself.
pub(super) fn check_direct_before_creating(spec: &Spec, path: &Path, shown: &str) -> Result<()> {
    let flags = libc::O_TMPFILE | libc::O_RDWR | libc::O_DIRECT;
    let fd = match sys::open(parent_of(path), flags, 0o600) {
        Ok(fd) => fd,
        // With O_RDWR given, EINVAL is the refusal of O_DIRECT (no O_TMPFILE is EOPNOTSUPP or EISDIR).
        Err(e) if e.errno == libc::EINVAL => {
            return Err(Error::usage(
                "--direct",
                format!("the filesystem of {shown} does not support O_DIRECT"),
            ))
        }
        Err(_) => return Ok(()),
    };
    let off = match sys::statx_dio_align(fd.as_raw_fd()) {
        Ok(Some((_, off))) => off,
        _ => 512,
    };
    check_direct_multiples(spec, shown, off)
}
