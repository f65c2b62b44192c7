//! The combinations of a method and its options that the method's registry entry refuses (O_DIRECT,
//! reads, data checks on a method that moves none; `--op mixed` with io_uring's other request kinds).

use crate::error::{Error, Result};
use crate::spec::*;

/// What the method's registry entry refuses: O_DIRECT, reads, data checks on a method that moves none;
/// and uncached buffered I/O without the page cache it is about.
pub(super) fn check_method_combinations(s: &Spec) -> Result<()> {
    let m = s.method.info();
    if s.direct && s.rw_flags & libc::RWF_DONTCACHE as u32 != 0 {
        return Err(Error::usage(
            "--rw-flags",
            "dontcache is buffered I/O whose page cache pages are dropped after use; with --direct there is \
             no page cache: drop one of the two",
        ));
    }
    if let (true, Some(why)) = (s.direct, m.no_direct) {
        return Err(Error::usage(
            "--direct",
            if m.kernel_copy {
                format!("not supported with --method {} here; {why}", m.name)
            } else if m.targets.nvme_generic == crate::method::info::Fit::Yes {
                // Commands to a driver: no page cache to bypass, nothing for another method to do better.
                format!("not needed with --method {}: {why}; drop --direct", m.name)
            } else {
                format!(
                    "not possible with --method {}: {why}; use sync, psync, vectored or io_uring",
                    m.name
                )
            },
        ));
    }
    if m.no_data {
        if s.verify {
            return Err(Error::usage(
                "--verify",
                format!(
                    "--method {} moves no data, so there is nothing to verify",
                    m.name
                ),
            ));
        }
        if !s.fsync.is_none() {
            return Err(Error::usage(
                "--fsync",
                format!("--method {} makes no kernel call at all", m.name),
            ));
        }
    }
    if let (OpKind::Read, Some(why)) = (s.op, m.no_read) {
        return Err(Error::usage("--op", format!("--method {} {why}", m.name)));
    }
    check_mixed(s)?;
    Ok(())
}

/// `--op mixed` with io_uring: plain or fixed-file read and write requests of one ring per thread (the
/// opcode is chosen per request); the ways that build other requests go one way per run.
fn check_mixed(s: &Spec) -> Result<()> {
    if s.op != OpKind::Mixed || s.method != MethodKind::IoUring {
        return Ok(());
    }
    let r = &s.ring;
    let other = [
        (r.vectored, "--vectored"),
        (r.fixed_bufs, "--fixed-bufs"),
        (r.send_zc, "--send-zc"),
        (r.nop_requests, "--nop-requests"),
        (r.design != RingDesign::PerThread, "--ring"),
    ];
    match other.iter().find(|(on, _)| *on) {
        Some((_, flag)) => Err(Error::usage(
            *flag,
            "does not run with --op mixed, which io_uring runs as plain READ and WRITE requests of one \
             ring per thread",
        )),
        None => Ok(()),
    }
}
