//! `io_uring` (Linux 5.1+; IORING_OP_READ/WRITE 5.6+; unprivileged unless the sysctl
//! `kernel.io_uring_disabled` says otherwise): `--qd` requests in flight per thread, `--batch` requests per
//! submission. Options, each named after its kernel flag (see `RingOpts`): `--sqpoll` (`--sq-idle-ms`,
//! `--sq-cpu`), `--iopoll`, `--fixed-files`, `--fixed-bufs`, `--coop-taskrun`, `--single-issuer`,
//! `--defer-taskrun`, `--registered-ring`, `--vectored`, and `--ring`, which says who owns the ring. Each
//! design is a type in its own file, with its locking and waiting protocol described there, behind one
//! small trait (`design::Design`):
//!
//! - `per-thread` (`per_thread.rs`): each worker thread owns a ring and submits to it (no sharing at all).
//! - `shared` (`shared.rs`): one ring for all threads, behind one mutex, as the seed course report built it;
//!   times a thread found the mutex taken are counted (`lock_contended`).
//! - `shared-submitter` (`submitter.rs`): one ring owned by a submitter thread (`iolab-submit`); workers hand
//!   SQEs and take completions back through lock-free queues, and ring an eventfd doorbell when the
//!   submitter sleeps. Doorbells and worker sleeps are counted.
//! - `producer-consumer` (`producer_consumer.rs`): each worker fills its own ring; a consumer thread per
//!   worker (`iolab-reap-N`) waits for its completions and hands them back.
//!
//! What every design shares is in `core.rs` (one ring, its setup, submission bookkeeping and registration)
//! and `sqe.rs` (how a thread's SQEs are built); this file is the method the runner drives.
//!
//! iolab makes every io_uring_enter itself (sys::io_uring_enter) so each one is counted with the requests it
//! carried (the exact batch-size histogram) and the requests then in the kernel (the in-flight depth
//! histogram). With SQPOLL a submission needs no syscall while the SQ thread is awake: after publishing the
//! tail, a full fence (SeqCst), then IORING_SQ_NEED_WAKEUP is read (the io-uring crate's `need_wakeup`);
//! only if it is set, or completions are awaited, is io_uring_enter called (with IORING_ENTER_SQ_WAKEUP).
//!
//! The runner keeps each request's buffer untouched from `submit` until `reap` returns its slot.
//! `--fsync` points are plain fsync(2) calls made after the runner has drained the thread's requests.
//!
//! Stream targets: pipes take IORING_OP_WRITE/READ; sockets IORING_OP_SEND/RECV with MSG_WAITALL (the
//! kernel retries a partial transfer, 5.18+). A pipe may still take or give part of a block (a 100 KB
//! write into a 64 KiB pipe); iolab then queues the rest as a new request for the same slot and tells the
//! runner about the op once all its bytes moved, so `requests` counts these continuations too. With --qd above 1 several requests are in flight on one
//! stream, and the kernel does not promise their order: the bytes all arrive (the peer counts them), in
//! an order that may differ from submission order.
//!
//! Buffered writes to ext4/tmpfs usually cannot complete inline and are punted to io-wq worker threads
//! (`iou-wrk-*`); the SQPOLL thread is `iou-sqp-*`: the runner reports both separately.

mod checks;
mod core;
mod design;
mod direct;
mod per_thread;
mod producer_consumer;
mod provided;
mod ring_api;
mod shared;
mod sqe;
mod submitter;

use self::core::setup_names;
/// The kernel's limit on one ring's registered buffers (also checked with the spec: checks.rs).
use self::core::MAX_REG_BUFFERS;
use self::design::Ring;
use self::ring_api::{Design, Own};
use self::sqe::SqeShape;
use super::api::{op_err, Flush, Io, Method, MethodStats, ThreadCtx};
use super::info::SinkCalls;
use super::info::{Exec, MethodInfo};
use super::kind::MethodKind;
use crate::error::{Error, Result};
use crate::result::UringStats;
use crate::spec::options::Applies;
use crate::spec::{RingDesign, RingOpts, Spec};
use crate::target::TargetKind;
use io_uring::squeue;
use iolab_sys as sys;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

/// The table header's word on the run's queue.
fn describe(s: &crate::spec::Spec) -> Option<String> {
    let rwf = crate::spec::rw_flags::words(s.rw_flags);
    let rwf = if rwf.is_empty() {
        rwf
    } else {
        format!(" RWF {rwf}")
    };
    Some(format!("qd {} batch {}{rwf}", s.qd, s.batch))
}

/// `io_uring`, as the registry lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::IoUring,
    name: "io_uring",
    fio_engine: Some("io_uring"),
    help: "one SQE per op on a ring per thread (--qd, --batch, --ring and the ring options)",
    exec: Exec::Queued,
    io_uring_requests: true,
    syscalls: &["io_uring_enter"],
    syscall_note:
        "counted calls are io_uring_enter(2) (plus fsync); the kernel's syscr/syscw do not see \
                   io_uring requests",
    describe,
    way,
    gap,
    mixed: true,
    drawn_lengths: true,
    punts: true,
    options: &[
        Applies::Depth,
        Applies::Batch,
        Applies::Ring,
        Applies::SqThread,
        Applies::NopRequests,
        Applies::RwFlags,
        Applies::Polling,
    ],
    sink_calls: SinkCalls::PerRequest,
    ..MethodInfo::PLAIN
};

/// "io_uring (SQPOLL, shared ring, qd 64 batch 1)".
fn way(_: &MethodInfo, s: &Spec) -> String {
    let mut o = Vec::new();
    if s.ring.sqpoll {
        o.push("SQPOLL".to_string());
    }
    if s.ring.iopoll {
        o.push("IOPOLL".to_string());
    }
    if s.ring.design != RingDesign::PerThread {
        o.push(format!("{} ring", s.ring.design.name()));
    }
    for (on, word) in [
        (s.ring.vectored, "vectored"),
        (s.ring.fixed_bufs, "fixed buffers"),
        (s.ring.send_zc, "zero-copy send"),
        (s.method_opts.flag(provided::KEY), "provided buffers"),
    ] {
        if on {
            o.push(word.to_string());
        }
    }
    if s.ring.min_wait_usec > 0 {
        o.push(format!("min-wait {} µs", s.ring.min_wait_usec));
    }
    if s.ring.wait_region {
        o.push("wait region".to_string());
    }
    o.push(format!("qd {} batch {}", s.qd, s.batch));
    let rwf = crate::spec::rw_flags::words(s.rw_flags);
    if !rwf.is_empty() {
        o.push(format!("RWF {rwf}"));
    }
    format!("io_uring ({})", o.join(", "))
}

/// What the gap between request starts is at qd 1 (a whole round trip) and deeper.
fn gap(_: &MethodInfo, one: bool, sqpoll: bool) -> String {
    if one {
        return format!(
            "io_uring at qd 1: one request submitted and waited for at a time (the thesis's Figure 36 \
             blocking loop), so a gap is a whole round trip: queueing, {}the kernel's write, the completion \
             and the wake-up",
            if sqpoll { "the SQPOLL thread noticing it, " } else { "io_uring_enter, " }
        );
    }
    "io_uring: between the starts of successive requests of one thread, so 0 within a batch queued in one \
     round, then the round's submission and wait; with SQPOLL and the producer-consumer ring it is how fast \
     the producer queues, not when the kernel wrote (the thesis's Figure 19)"
        .into()
}

/// In the order declared (repr(C)): what a round reads first, next to the ring's own state, so that a
/// round's reads of the method fall on as few pages as they can (one data page fewer a NOP round at
/// batch 1, by bench/pages.sh's trace); `provided` is dropped after `ring`.
#[repr(C)]
pub struct Uring {
    /// This thread's ring, of the run's design.
    ring: Ring,
    /// A stream target: partial transfers are finished by continuation requests (see `settle`).
    stream: bool,
    /// --provided-buffers: the buffer ring the reads take their buffers from (after `ring`: dropped
    /// after it).
    provided: Option<provided::BufRing>,
    /// How this thread's SQEs are built.
    sqes: SqeShape,
    /// SQEs built by `submit`, handed over in one go at `commit`.
    staged: Vec<squeue::Entry>,
    fd: OwnedFd,
    opts: RingOpts,
    /// Streams: per slot, the op's buffer, its length and the bytes moved so far.
    parts: Vec<(*mut u8, u32, u32)>,
    /// Streams: continuation requests queued for partial transfers.
    continuations: u64,
    reaped: Vec<(u32, i32)>,
    path: PathBuf,
    qd: u32,
    /// What this thread counts itself: syscalls besides those in its own ring's stats, and its share of a
    /// shared ring's statistics (mutex waits, sleeps, doorbells).
    own: Own,
    /// An opcode asked for that this kernel lacks, and what ran instead.
    fallback: Option<String>,
    /// RWF_* of every request (`--rw-flags`).
    rw_flags: u32,
    /// --send-zc: per slot, the send's result until its notification comes.
    zc_results: Vec<i32>,
    /// --send-zc: notifications, and those saying the kernel copied after all.
    zc: (u64, u64),
}

/// The opcodes `spec`'s requests ask for (what the counting pass counts the kernel's submissions of; a
/// mixed run's reads and writes, one each otherwise); the kernel may lack one (`vectored_fixed` then falls
/// back, and the count says so by staying 0).
pub fn requested_opcodes(spec: &Spec) -> Vec<(&'static str, u8)> {
    use self::sqe::ReqKind;
    let o = &spec.ring;
    let socket = matches!(
        TargetKind::stream_named(&spec.target),
        Some(TargetKind::Socketpair | TargetKind::Tcp)
    );
    let kind = if o.nop_requests {
        ReqKind::Nop
    } else if o.vectored && o.fixed_bufs {
        ReqKind::VectoredFixed
    } else if o.fixed_bufs {
        ReqKind::Fixed
    } else if o.vectored {
        ReqKind::Vectored
    } else if socket && o.send_zc {
        ReqKind::SendZc
    } else if socket {
        ReqKind::Socket
    } else {
        ReqKind::Plain
    };
    match spec.op {
        crate::spec::OpKind::Mixed => vec![kind.opcode(false), kind.opcode(true)],
        op => vec![kind.opcode(op == crate::spec::OpKind::Write)],
    }
}

/// `--vectored --fixed-bufs`: IORING_OP_WRITEV_FIXED/READV_FIXED (6.15+) where this kernel has them (its
/// opcode probe says), else WRITEV/READV with the buffers still registered, said beside the opcode.
fn vectored_fixed(o: &RingOpts, write: bool) -> (bool, Option<String>) {
    if !(o.vectored && o.fixed_bufs) {
        return (false, None);
    }
    let (code, name) = if write {
        (io_uring::opcode::WritevFixed::CODE, "WRITEV_FIXED")
    } else {
        (io_uring::opcode::ReadvFixed::CODE, "READV_FIXED")
    };
    match self::core::kernel_has_opcode(code) {
        Ok(true) => (true, None),
        Ok(false) => (
            false,
            Some(format!(
                "{name} asked for, not in this kernel's opcode probe (Linux 6.15+)"
            )),
        ),
        Err(why) => (
            false,
            Some(format!("{name} asked for; the opcode probe failed: {why}")),
        ),
    }
}

// SAFETY: the iovecs only point into the runner's buffers (owned by the same worker thread); the ring, fd
// and queues are owned or shared through Arc/Mutex/atomics; SQEs hold plain addresses.
unsafe impl Send for Uring {}

impl Method for Uring {
    const QUEUED: bool = true;

    fn prepare(ctx: &ThreadCtx) -> Result<Self> {
        let o = ctx.spec.ring.clone();
        let qd = ctx.spec.qd;
        let threads = ctx.spec.threads;
        let fd = ctx.target.open_for(ctx.spec, false)?;
        let path = ctx.target.path.clone();
        if o.fixed_bufs && o.design != RingDesign::PerThread && threads * qd > MAX_REG_BUFFERS {
            return Err(Error::Runtime(format!(
                "io_uring --fixed-bufs on one shared ring registers --qd x --threads = {} buffers; the kernel allows {MAX_REG_BUFFERS}",
                threads * qd
            )));
        }
        let socket = matches!(ctx.target.kind, TargetKind::Socketpair | TargetKind::Tcp);
        let o_send_zc = o.send_zc;
        if o.send_zc && !(socket && ctx.writes()) {
            return Err(Error::usage(
                "--send-zc",
                "IORING_OP_SEND_ZC sends on a TCP socket: use --target tcp with --op write",
            ));
        }
        if socket && ctx.spec.rw_flags != 0 {
            return Err(Error::usage(
                "--rw-flags",
                "a socket target takes IORING_OP_SEND/RECV, which carry no RWF flags: drop --rw-flags",
            ));
        }
        let (ring, file_index, buf_base) = Ring::open(ctx, &o, fd.as_raw_fd(), &path)?;
        let (vectored_fixed, fallback) = vectored_fixed(&o, ctx.writes());
        let sqes = SqeShape::new(
            ctx,
            &o,
            (fd.as_raw_fd(), file_index, buf_base),
            vectored_fixed,
        );
        Ok(Uring {
            ring,
            fd,
            sqes,
            stream: ctx.target.kind.is_stream(),
            parts: vec![(std::ptr::null_mut(), 0, 0); qd as usize],
            continuations: 0,
            reaped: Vec::with_capacity(qd as usize),
            path,
            qd,
            staged: Vec::with_capacity(qd as usize),
            own: Own::default(),
            opts: o,
            fallback,
            rw_flags: ctx.spec.rw_flags,
            zc_results: vec![0; if o_send_zc { qd as usize } else { 0 }],
            zc: (0, 0),
            provided: None,
        })
    }

    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)]) -> Result<()> {
        if self.sqes.provided {
            let ring = self
                .ring
                .own_ring()
                .expect("provided buffers: a ring per thread");
            self.provided = Some(provided::BufRing::register(ring, bufs)?);
            return Ok(());
        }
        if !self.opts.fixed_bufs {
            return Ok(());
        }
        self.ring.register_buffers(bufs, self.sqes.buf_base)
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        if self.stream {
            self.parts[io.slot as usize] = (io.buf, io.len as u32, 0);
        }
        self.submit_round(std::slice::from_ref(io)).1.map(|_| 0)
    }

    /// The design queues the round's SQEs: a per-thread ring builds them straight into its SQ (see
    /// `PerThread`), the others stage them until `commit`.
    #[inline(always)]
    fn submit_round(&mut self, ios: &[Io]) -> (usize, Result<()>) {
        if self.stream {
            for io in ios {
                self.parts[io.slot as usize] = (io.buf, io.len as u32, 0);
            }
        }
        self.ring
            .submit_round(&mut self.sqes, ios, &mut self.staged);
        (ios.len(), Ok(()))
    }

    #[inline(always)]
    fn commit(&mut self, min_complete: u32) -> Result<()> {
        self.ring
            .commit(&mut self.staged, min_complete, &mut self.own)
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) -> u32 {
        if !self.stream {
            if let Some(b) = self.provided.as_mut() {
                let n = self.ring.reap_max_flagged(max, |slot, res, flags| {
                    b.give_back(flags);
                    f(slot, res)
                });
                b.publish();
                return n;
            }
            return self.ring.reap(max, f);
        }
        self.reap_stream(f)
    }

    fn unsubmitted(&self) -> u32 {
        self.staged.len() as u32 + self.ring.queued()
    }

    fn expected_result(&self, len: usize) -> i32 {
        if self.opts.nop_requests {
            0
        } else {
            len as i32
        }
    }

    fn describe_failure(&self, errno: i32) -> Option<String> {
        if errno == libc::EOPNOTSUPP && self.rw_flags & libc::RWF_DONTCACHE as u32 != 0 {
            return Some(format!(
                "{} refuses --rw-flags dontcache (the kernel answered EOPNOTSUPP): {}",
                self.path.display(),
                crate::spec::rw_flags::DONTCACHE_REFUSED
            ));
        }
        if errno == libc::EOPNOTSUPP && self.opts.send_zc {
            return Some(format!(
                "{}: this socket has no zero-copy send (the kernel answered EOPNOTSUPP to IORING_OP_SEND_ZC; AF_UNIX \
                 sockets have none): use --target tcp, or drop --send-zc",
                self.path.display()
            ));
        }
        (self.opts.iopoll && errno == libc::EOPNOTSUPP).then(|| {
            let queue = crate::measure::iopoll::refusal_text(&self.path)
                .unwrap_or_else(|| "it is on no block device that polls".into());
            format!(
                "IOPOLL unsupported by this device/file ({}): completions fail with EOPNOTSUPP (no poll queues): \
                 {queue}; run without --iopoll",
                self.path.display()
            )
        })
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        self.own.calls += 1;
        sys::fsync(self.fd.as_raw_fd()).map_err(|e| op_err(e, &self.path))
    }

    /// The thread that finishes last collects the shared ring's statistics (after stopping the submitter,
    /// which has drained every request by then).
    fn finish(&mut self) -> Result<()> {
        self.ring.finish(&mut self.own)
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(self.own.calls + self.ring.ring_syscalls())
    }

    fn submissions(&self) -> Option<(u64, u64)> {
        self.ring.totals().map(|s| (s.enters, s.requests))
    }

    fn stats(&self) -> MethodStats {
        MethodStats {
            uring: Some(self.uring_stats()),
            figures: self.provided.as_ref().map_or(Vec::new(), |b| b.figures()),
            ..Default::default()
        }
    }
}

impl Uring {
    /// The ring's statistics (a shared ring's only from the thread that collected them) with this thread's
    /// own waits added: every thread reports its own.
    fn uring_stats(&self) -> UringStats {
        let mut s = match self.ring.totals() {
            Some(t) => t,
            None => UringStats {
                design: self.opts.design.name().into(),
                setup: setup_names(&self.opts),
                ..Default::default()
            },
        };
        s.opcode = match &self.fallback {
            Some(f) => format!("{} ({f})", self.sqes.opcode().0),
            None => self.sqes.opcode().0.into(),
        };
        if self.sqes.provided {
            s.opcode.push_str(", buffer select");
        }
        s.zc_notifs += self.zc.0;
        s.zc_copied += self.zc.1;
        s.lock_contended += self.own.lock_contended;
        s.worker_sleeps += self.own.worker_sleeps;
        s.doorbells += self.own.doorbells;
        s
    }
}

impl Uring {
    /// `reap` for a stream target: each completion goes through `settle`, which may queue a continuation
    /// instead of reporting it.
    #[inline(always)]
    fn reap_stream<F: FnMut(u32, i32)>(&mut self, mut f: F) -> u32 {
        let mut got = std::mem::take(&mut self.reaped);
        if self.opts.send_zc {
            self.reap_zc(&mut got);
        } else {
            self.ring.reap(u32::MAX, |slot, res| got.push((slot, res)));
        }
        let before = self.continuations;
        let n = got.len() as u64;
        for (slot, res) in got.drain(..) {
            self.settle(slot, res, &mut f);
        }
        self.reaped = got;
        (n - (self.continuations - before)) as u32
    }

    /// SEND_ZC: a send's result comes first (with IORING_CQE_F_MORE), then the notification that the
    /// kernel let go of the buffer; the send is finished (into `got`) at the notification, with its result.
    /// A send that failed has no notification.
    fn reap_zc(&mut self, got: &mut Vec<(u32, i32)>) {
        let (results, zc) = (&mut self.zc_results, &mut self.zc);
        self.ring.reap_flagged(|slot, res, flags| {
            if io_uring::cqueue::notif(flags) {
                zc.0 += 1;
                zc.1 += u64::from(res as u32 & sys::IORING_NOTIF_USAGE_ZC_COPIED != 0);
                got.push((slot, results[slot as usize]));
            } else if io_uring::cqueue::more(flags) {
                results[slot as usize] = res;
            } else {
                got.push((slot, res));
            }
        });
    }

    /// Streams: a completion that moved part of its slot's bytes queues the rest as a new request for the
    /// same slot; the runner hears of the slot once, when all its bytes moved (or at an error or end of
    /// stream, with the bytes moved so far).
    #[inline(always)]
    fn settle<F: FnMut(u32, i32)>(&mut self, slot: u32, res: i32, f: &mut F) {
        if !self.stream {
            return f(slot, res);
        }
        let (buf, len, done) = self.parts[slot as usize];
        if res > 0 && done + (res as u32) < len {
            let d = done + res as u32;
            self.parts[slot as usize].2 = d;
            self.continuations += 1;
            // SAFETY: d < len, so the pointer stays inside the slot's buffer.
            let rest = unsafe { buf.add(d as usize) };
            let sqe = self.sqes.build(slot, rest, len - d, 0);
            self.staged.push(sqe);
            return;
        }
        self.parts[slot as usize].2 = 0;
        f(slot, if res >= 0 { done as i32 + res } else { res });
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        // A shared ring outlives this thread's buffers: clear their registration first.
        if self.opts.fixed_bufs {
            self.ring
                .unregister_buffers(self.sqes.buf_base, self.qd as usize);
        }
    }
}
