//! The ring designs behind one small trait, `Design`: each design (`per_thread`, `shared`, `submitter`,
//! `producer_consumer`) keeps its locking and waiting protocol in its own file, and `Ring` picks one per
//! run with one `match` per trait method (static dispatch: the per-thread hot path inlines into the
//! runner's loop as it did before the designs were split, with no indirect call).

use super::super::api::{Io, ThreadCtx};
use super::per_thread::PerThread;
use super::producer_consumer::ProducerConsumer;
use super::ring_api::{Design, Own};
use super::shared::Shared;
use super::sqe::SqeShape;
use super::submitter::Submitter;
use crate::error::Result;
use crate::result::UringStats;
use crate::spec::{RingDesign, RingOpts};
use io_uring::squeue;
use std::path::Path;

// One per worker thread: the per-thread ring stays inline (no pointer chase on the hot path).
#[allow(clippy::large_enum_variant)]
pub(super) enum Ring {
    PerThread(PerThread),
    Shared(Shared),
    Submitter(Submitter),
    /// The worker fills its own ring; a consumer thread waits for completions and hands them back.
    ProducerConsumer(ProducerConsumer),
}

/// `$body` with `$d` bound to the design inside `$ring`: the one place that matches on the design.
macro_rules! on_design {
    ($ring:expr, $d:ident => $body:expr) => {
        match $ring {
            Ring::PerThread($d) => $body,
            Ring::Shared($d) => $body,
            Ring::Submitter($d) => $body,
            Ring::ProducerConsumer($d) => $body,
        }
    };
}

impl Ring {
    /// Thread `ctx.thread`'s ring of design `o.design` for target `fd`, with the index of its file and of
    /// its first buffer in the ring's registered tables (a ring of its own starts at 0; on a shared ring,
    /// thread t has file t and buffers from t x --qd).
    pub(super) fn open(
        ctx: &ThreadCtx,
        o: &RingOpts,
        fd: i32,
        path: &Path,
    ) -> Result<(Ring, u32, u32)> {
        let (t, qd) = (ctx.thread, ctx.spec.qd);
        Ok(match o.design {
            RingDesign::PerThread => (Ring::PerThread(PerThread::open(ctx, o, fd, path)?), 0, 0),
            RingDesign::Shared => (Ring::Shared(Shared::open(ctx, o, fd, path)?), t, t * qd),
            RingDesign::SharedSubmitter => {
                let s = Submitter::open(ctx, o, fd, path)?;
                (Ring::Submitter(s), t, t * qd)
            }
            RingDesign::ProducerConsumer => {
                let pc = ProducerConsumer::open(ctx, o, fd, path)?;
                (Ring::ProducerConsumer(pc), 0, 0)
            }
        })
    }
}

impl Ring {
    /// The per-thread ring's `reap` with each completion's flags; the other designs never take
    /// `--provided-buffers` (its check refuses them).
    #[inline(always)]
    pub(super) fn reap_max_flagged<F: FnMut(u32, i32, u32)>(&mut self, max: u32, f: F) -> u32 {
        match self {
            Ring::PerThread(d) => d.reap_max_flagged(max, f),
            _ => unreachable!("provided buffers are refused on shared rings"),
        }
    }

    /// The thread's own ring (the per-thread design's), to register a buffer ring with.
    pub(super) fn own_ring(&self) -> Option<&io_uring::IoUring> {
        match self {
            Ring::PerThread(d) => Some(d.io_uring()),
            _ => None,
        }
    }
}

/// `$body` for the designs other than per-thread, whose calls the hot path makes inline.
macro_rules! others {
    ($ring:expr, $d:ident => $body:expr) => {
        match $ring {
            Ring::PerThread(_) => unreachable!("the per-thread ring's calls are made inline"),
            Ring::Shared($d) => $body,
            Ring::Submitter($d) => $body,
            Ring::ProducerConsumer($d) => $body,
        }
    };
}

/// The per-round calls of the other designs, out of line: only the per-thread ring's code is inlined into
/// the runner's loop, so that a round's code stays on few pages (each page a round touches costs the next
/// system call on a VM that refills its TLB after every call: 8 code pages per NOP round cost ~40 ns).
impl Ring {
    #[inline(never)]
    fn submit_round_other(
        &mut self,
        sqes: &mut SqeShape,
        ios: &[Io],
        staged: &mut Vec<squeue::Entry>,
    ) {
        others!(self, d => d.submit_round(sqes, ios, staged))
    }
    #[inline(never)]
    fn commit_other(
        &mut self,
        staged: &mut Vec<squeue::Entry>,
        min_complete: u32,
        own: &mut Own,
    ) -> Result<()> {
        others!(self, d => d.commit(staged, min_complete, own))
    }
    #[inline(never)]
    fn reap_other<F: FnMut(u32, i32)>(&mut self, max: u32, f: F) -> u32 {
        others!(self, d => d.reap(max, f))
    }
}

impl Design for Ring {
    #[inline(always)]
    fn submit_round(&mut self, sqes: &mut SqeShape, ios: &[Io], staged: &mut Vec<squeue::Entry>) {
        match self {
            Ring::PerThread(d) => d.submit_round(sqes, ios, staged),
            other => other.submit_round_other(sqes, ios, staged),
        }
    }
    #[inline(always)]
    fn commit(
        &mut self,
        staged: &mut Vec<squeue::Entry>,
        min_complete: u32,
        own: &mut Own,
    ) -> Result<()> {
        match self {
            Ring::PerThread(d) => d.commit(staged, min_complete, own),
            other => other.commit_other(staged, min_complete, own),
        }
    }
    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, f: F) -> u32 {
        match self {
            Ring::PerThread(d) => d.reap(max, f),
            other => other.reap_other(max, f),
        }
    }
    fn reap_flagged<F: FnMut(u32, i32, u32)>(&mut self, f: F) {
        on_design!(self, d => d.reap_flagged(f))
    }
    #[inline(always)]
    fn queued(&self) -> u32 {
        on_design!(self, d => d.queued())
    }
    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)], base: u32) -> Result<()> {
        on_design!(self, d => d.register_buffers(bufs, base))
    }
    fn unregister_buffers(&mut self, base: u32, n: usize) {
        on_design!(self, d => d.unregister_buffers(base, n))
    }
    fn finish(&mut self, own: &mut Own) -> Result<()> {
        on_design!(self, d => d.finish(own))
    }
    fn totals(&self) -> Option<UringStats> {
        on_design!(self, d => d.totals())
    }
    fn ring_syscalls(&self) -> u64 {
        on_design!(self, d => d.ring_syscalls())
    }
}
