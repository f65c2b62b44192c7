//! What every ring design offers a worker thread (`Design`), and what the thread counts itself (`Own`).

use super::super::api::Io;
use super::sqe::SqeShape;
use crate::error::Result;
use crate::result::UringStats;
use io_uring::squeue;

/// What a worker thread counts itself, whatever its ring's design.
#[derive(Default)]
pub(super) struct Own {
    /// Syscalls this thread made besides those in its own ring's stats (fsync; shared: its io_uring_enter
    /// calls; submitter: doorbells and futex sleeps; producer-consumer: futex sleeps and the consumer
    /// thread's calls).
    pub(super) calls: u64,
    /// This thread's share of the statistics of a shared ring: mutex waits, sleeps, doorbells.
    pub(super) lock_contended: u64,
    pub(super) worker_sleeps: u64,
    pub(super) doorbells: u64,
}

/// One ring design as a worker thread uses it: how a round's SQEs reach the ring, how the thread hands
/// them to the kernel and waits, where its completions come from, and what it reports.
pub(super) trait Design {
    /// Queues the SQEs of `ios` (built by `sqes`): by default into `staged`, handed over at `commit`.
    #[inline(always)]
    fn submit_round(&mut self, sqes: &mut SqeShape, ios: &[Io], staged: &mut Vec<squeue::Entry>) {
        sqes.build_round(ios, |sqe| staged.push(sqe));
    }
    /// Hands the queued requests (`staged`, and any already in the SQ) to the kernel and waits until at
    /// least `min_complete` of this thread's completions can be reaped.
    fn commit(
        &mut self,
        staged: &mut Vec<squeue::Entry>,
        min_complete: u32,
        own: &mut Own,
    ) -> Result<()>;
    /// Hands every completion of this thread that is available (in its ring, mailbox or lane) to `f`.
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, f: F) -> u32;
    /// `reap` with each completion's flags, for requests that end with a second completion (SEND_ZC's
    /// notification): only a ring of the thread's own has them (the spec refuses --send-zc elsewhere).
    fn reap_flagged<F: FnMut(u32, i32, u32)>(&mut self, _f: F) {
        unreachable!("--send-zc is refused for ring designs other than per-thread")
    }
    /// Requests in this thread's own submission queue the kernel has not taken yet.
    fn queued(&self) -> u32 {
        0
    }
    /// Registers this thread's buffers at `base` of its ring's buffer table (--fixed-bufs).
    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)], base: u32) -> Result<()>;
    /// Clears `n` registered buffers at `base` of a ring that outlives this thread's buffers.
    fn unregister_buffers(&mut self, _base: u32, _n: usize) {}
    /// Called once after the thread's last operation.
    fn finish(&mut self, own: &mut Own) -> Result<()>;
    /// The ring's statistics as this thread reports them: its own ring's, or a shared ring's totals once
    /// this thread (the last to finish) collected them.
    fn totals(&self) -> Option<UringStats>;
    /// Syscalls of the ring this thread reports besides its own (`Own::calls`).
    fn ring_syscalls(&self) -> u64;
}
