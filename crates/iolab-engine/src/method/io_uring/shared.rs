//! `--ring shared`: one ring for all threads, behind one mutex, as the seed course report built it. A
//! thread holds the mutex while it pushes its batch, calls io_uring_enter, drains the completion queue
//! (routing every completion to its thread's mailbox by the thread number in user_data) and, when it must
//! wait for one of its own completions, while it sleeps in io_uring_enter. Times a thread found the mutex
//! taken are counted (`lock_contended`).

use super::super::api::ThreadCtx;
use super::core::{lock, Core, Enter};
use super::ring_api::{Design, Own};
use crate::error::Result;
use crate::result::UringStats;
use crate::spec::RingOpts;
use io_uring::squeue;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

struct SharedInner {
    core: Core,
    /// Completions reaped by any thread, per owning thread: (slot, result).
    mail: Vec<Vec<(u32, i32)>>,
}

/// The run's one ring, kept in its shared slot.
struct SharedRing {
    inner: Mutex<SharedInner>,
    threads: u32,
    finished: AtomicU32,
}

impl SharedRing {
    /// Takes the mutex, counting the times another thread held it.
    fn lock(&self, contended: &mut u64) -> MutexGuard<'_, SharedInner> {
        match self.inner.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::WouldBlock) => {
                *contended += 1;
                lock(&self.inner)
            }
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        }
    }
}

impl SharedInner {
    /// Drains the completion queue into the owners' mailboxes.
    fn route(&mut self) {
        let mut n = 0;
        for cqe in self.core.ring.completion() {
            let ud = cqe.user_data();
            self.mail[(ud >> 32) as usize].push((ud as u32, cqe.result()));
            n += 1;
        }
        self.core.in_kernel -= n.min(self.core.in_kernel);
    }
}

/// One worker's use of the shared ring.
pub(super) struct Shared {
    ring: Arc<SharedRing>,
    enter: Enter,
    /// This thread's completions taken from its mailbox, handed out by `reap`.
    local: Vec<(u32, i32)>,
    /// This thread's number: its mailbox.
    thread: u32,
    /// The whole ring's statistics, kept by the thread that finished last.
    totals: Option<UringStats>,
}

impl Shared {
    /// Joins the run's ring (the first thread makes it, with sparse file and buffer tables for all) and
    /// registers this thread's file at index `ctx.thread`.
    pub(super) fn open(ctx: &ThreadCtx, o: &RingOpts, fd: i32, path: &Path) -> Result<Shared> {
        let (threads, qd, t) = (ctx.spec.threads, ctx.spec.qd, ctx.thread);
        let ring = ctx.shared.get_or_init(|| {
            let total = threads * qd;
            let core = Core::new(o, total, 0, path, total as usize)?;
            core.register_sparse(threads, qd)?;
            Ok(SharedRing {
                inner: Mutex::new(SharedInner {
                    core,
                    mail: vec![Vec::with_capacity(qd as usize); threads as usize],
                }),
                threads,
                finished: AtomicU32::new(0),
            })
        })?;
        let enter = {
            let mut g = lock(&ring.inner);
            if o.fixed_files {
                g.core.register_file(t, fd, true)?;
            }
            Enter::for_thread(&mut g.core)?
        };
        Ok(Shared {
            ring,
            enter,
            local: Vec::with_capacity(qd as usize),
            thread: t,
            totals: None,
        })
    }
}

impl Drop for Shared {
    /// The registered ring index goes with the thread's use of the ring.
    fn drop(&mut self) {
        self.enter.release();
    }
}

impl Design for Shared {
    /// Under the mutex: push, submit, route completions to their mailboxes, and sleep in the kernel (still
    /// holding the mutex) until this thread has `min_complete` completions.
    #[inline(never)]
    fn commit(
        &mut self,
        staged: &mut Vec<squeue::Entry>,
        min_complete: u32,
        own: &mut Own,
    ) -> Result<()> {
        let mut g = self.ring.lock(&mut own.lock_contended);
        let inner = &mut *g;
        let (enter, local, thread) = (self.enter, &mut self.local, self.thread as usize);
        let before = inner.core.stats.enters;
        let r = (|| -> Result<()> {
            inner.core.push(staged, enter)?;
            if inner.core.queued > 0 {
                inner.core.enter(0, enter)?;
            }
            loop {
                inner.route();
                local.append(&mut inner.mail[thread]);
                if local.len() >= min_complete as usize {
                    return Ok(());
                }
                // Wait (holding the mutex, as the report's design does) for any completion; one
                // of ours is in flight, so one will come.
                inner.core.enter(1, enter)?;
            }
        })();
        own.calls += inner.core.stats.enters - before;
        r
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) -> u32 {
        let mut n = 0;
        let take = self.local.len().min(max as usize);
        for (slot, res) in self.local.drain(..take) {
            f(slot, res);
            n += 1;
        }
        n
    }

    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)], base: u32) -> Result<()> {
        lock(&self.ring.inner).core.register_bufs(bufs, base, true)
    }

    /// The ring outlives this thread's buffers: clear their registration first.
    fn unregister_buffers(&mut self, base: u32, n: usize) {
        lock(&self.ring.inner).core.unregister_bufs(base, n)
    }

    /// The thread that finishes last collects the ring's statistics.
    fn finish(&mut self, _own: &mut Own) -> Result<()> {
        let ring = &self.ring;
        if ring.finished.fetch_add(1, Ordering::SeqCst) + 1 == ring.threads {
            let g = lock(&ring.inner);
            self.totals = Some(g.core.stats());
        }
        Ok(())
    }

    fn totals(&self) -> Option<UringStats> {
        self.totals.clone()
    }

    /// None: every io_uring_enter is counted by the thread that made it (`Own::calls`).
    fn ring_syscalls(&self) -> u64 {
        0
    }
}
