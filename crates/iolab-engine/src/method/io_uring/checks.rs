//! io_uring's checks of a resolved spec: its ring against the kernel's limits, `--rw-flags` on its
//! requests and `--send-zc`'s target. Registered in the spec's checks (`SPEC_CHECKS`), which
//! `RawSpec::resolve` runs after the common ones; the ring options' values are read in `resolve/`.

use super::core::{MAX_ENTRIES, MAX_REG_BUFFERS};
use crate::error::{Error, Result};
use crate::spec::method_opts::SPEC_CHECKS;
use crate::spec::options::Applies;
use crate::spec::{OpKind, RingDesign, RunsOn, Spec};
use crate::target_kind::TargetKind;
use linkme::distributed_slice;

#[distributed_slice(SPEC_CHECKS)]
static CHECK: fn(&Spec, RunsOn) -> Result<()> = check;

/// The three, in this order (the first refusal is the one named).
fn check(s: &Spec, at: RunsOn) -> Result<()> {
    check_ring_limits(s, at)?;
    check_ring_rw_flags(s)?;
    check_send_zc(s)
}

/// `--send-zc` needs a TCP target to write to (AF_UNIX sockets have no zero-copy send: the kernel answers
/// EOPNOTSUPP), known from the target's name before anything is made.
fn check_send_zc(s: &Spec) -> Result<()> {
    if !s.ring.send_zc {
        return Ok(());
    }
    let why = match TargetKind::stream_named(&s.target) {
        Some(TargetKind::Tcp) if s.op == OpKind::Write => return Ok(()),
        Some(TargetKind::Tcp) => "a zero-copy send writes: use --op write",
        Some(TargetKind::Socketpair) => {
            "AF_UNIX sockets have no zero-copy send (the kernel answers EOPNOTSUPP to IORING_OP_SEND_ZC): use \
             --target tcp"
        }
        _ => "IORING_OP_SEND_ZC sends on a socket: use --target tcp with --op write",
    };
    Err(Error::usage("--send-zc", why))
}

/// `--rw-flags` on io_uring requests: in each read or write SQE's rw_flags. RWF_NOWAIT is io_uring's own
/// first try (a request that would block goes to io-wq, counted as punts); RWF_HIPRI on a ring without
/// IOPOLL is refused by the kernel (EINVAL); a NOP carries no flags.
fn check_ring_rw_flags(s: &Spec) -> Result<()> {
    if s.rw_flags == 0 || !s.method.info().takes(Applies::Ring) {
        return Ok(());
    }
    let why = if s.rw_flags & libc::RWF_NOWAIT as u32 != 0 {
        "nowait is what io_uring tries first on every request (IOCB_NOWAIT); a request that would block \
         goes to an io-wq worker, counted as punts: drop nowait (or use --method pv2 --rw-flags nowait)"
    } else if s.rw_flags & libc::RWF_HIPRI as u32 != 0 {
        "hipri on io_uring is --iopoll (the kernel refuses RWF_HIPRI on a ring without IOPOLL): drop hipri"
    } else if s.ring.nop_requests {
        "--nop-requests sends IORING_OP_NOP, which moves no data and takes no RWF flags: drop one of the two"
    } else if matches!(
        TargetKind::stream_named(&s.target),
        Some(TargetKind::Socketpair | TargetKind::Tcp)
    ) {
        "a socket target takes IORING_OP_SEND/RECV, which carry no RWF flags: drop --rw-flags"
    } else if s.rw_flags & libc::RWF_DONTCACHE as u32 != 0
        && TargetKind::stream_named(&s.target).is_some()
    {
        "dontcache is about a file's page cache, and a pipe has none: drop it"
    } else {
        return Ok(());
    };
    Err(Error::usage("--rw-flags", why))
}

/// What the kernel holds in one ring, asked before anything is set up: the submission queue entries a
/// `--ring shared`/`shared-submitter` ring needs for every thread's `--qd` (IORING_MAX_ENTRIES), the
/// buffers `--fixed-bufs` registers in it (IORING_MAX_REG_BUFFERS), and, without root, the registered
/// buffers' bytes against RLIMIT_MEMLOCK (the kernel counts them against it for every ring of the user,
/// so this is a lower bound: the kernel's refusal at run time stays the last word).
fn check_ring_limits(s: &Spec, at: RunsOn) -> Result<()> {
    if !s.method.info().takes(Applies::Ring) {
        return Ok(());
    }
    let o = &s.ring;
    let (threads, qd) = (s.threads as u64, s.qd as u64);
    let one_ring = matches!(o.design, RingDesign::Shared | RingDesign::SharedSubmitter);
    let per_ring = if one_ring { threads * qd } else { qd };
    // As Core::new sizes it: SQPOLL twice the room, the submitter one entry for its doorbell.
    let sq = per_ring * if o.sqpoll { 2 } else { 1 }
        + u64::from(o.design == RingDesign::SharedSubmitter);
    if sq > MAX_ENTRIES as u64 {
        return Err(Error::usage(
            "--qd",
            format!(
                "--qd {qd} x --threads {threads} on one --ring {} ring needs {sq} submission queue entries{}; the \
                 kernel allows {MAX_ENTRIES} (IORING_MAX_ENTRIES): lower --qd or --threads, or use --ring per-thread",
                o.design.name(),
                if o.sqpoll { " (twice the requests with --sqpoll)" } else { "" }
            ),
        ));
    }
    if o.fixed_bufs && one_ring && threads * qd > MAX_REG_BUFFERS as u64 {
        return Err(Error::usage(
            "--fixed-bufs",
            format!(
                "one --ring {} ring registers --qd {qd} x --threads {threads} = {} buffers; the kernel allows \
                 {MAX_REG_BUFFERS} (IORING_MAX_REG_BUFFERS): lower --qd or --threads, or use --ring per-thread",
                o.design.name(),
                threads * qd
            ),
        ));
    }
    // This machine's user and limit: another machine checks its own.
    if o.fixed_bufs && at == RunsOn::Here && iolab_sys::geteuid() != 0 {
        check_memlock(s)?;
    }
    Ok(())
}

/// The registered buffers of every thread (a user without CAP_IPC_LOCK) against RLIMIT_MEMLOCK.
fn check_memlock(s: &Spec) -> Result<()> {
    let Some(lim) = iolab_sys::memlock_limit() else {
        return Ok(());
    };
    let bytes = s.threads as u64 * s.qd as u64 * s.buf_len();
    if bytes <= lim {
        return Ok(());
    }
    let size = crate::units::fmt_size;
    Err(Error::usage(
        "--fixed-bufs",
        format!(
            "registers --qd {} x --threads {} x --bs {} = {} of buffers, beyond RLIMIT_MEMLOCK ({}, `ulimit -l`), \
             which registered buffers count against unless root: lower --qd, --threads or --bs, raise the \
             limit, or run as root",
            s.qd,
            s.threads,
            s.buf_len(),
            size(bytes),
            size(lim)
        ),
    ))
}
