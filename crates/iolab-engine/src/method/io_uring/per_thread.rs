//! `--ring per-thread`: each worker thread owns a ring and submits to it (no sharing at all). Without
//! SQPOLL a round's SQEs are built straight into the submission queue; `commit` makes one io_uring_enter
//! that submits them and waits for the completions the runner asks for.

use super::super::api::{Io, ThreadCtx};
use super::core::{Core, Enter};
use super::direct::Direct;
use super::ring_api::{Design, Own};
use super::sqe::SqeShape;
use crate::error::Result;
use crate::result::UringStats;
use crate::spec::RingOpts;
use io_uring::squeue;
use std::path::Path;

pub(super) struct PerThread {
    core: Core,
    enter: Enter,
    /// The ring's queues used in place (None: through the crate's, where the ring cannot be mapped so).
    direct: Option<Direct>,
}

impl PerThread {
    pub(super) fn open(ctx: &ThreadCtx, o: &RingOpts, fd: i32, path: &Path) -> Result<PerThread> {
        let qd = ctx.spec.qd;
        let mut core = Core::new(o, qd, 0, path, qd as usize)?;
        if o.fixed_files {
            core.register_file(0, fd, false)?;
        }
        let enter = Enter::for_thread(&mut core)?;
        let direct = Direct::map(&core.ring);
        Ok(PerThread {
            core,
            enter,
            direct,
        })
    }

    /// `reap` with each completion's flags (`--provided-buffers`: the buffer the kernel picked).
    #[inline(always)]
    pub(super) fn reap_max_flagged<F: FnMut(u32, i32, u32)>(&mut self, max: u32, f: F) -> u32 {
        let n = self.take(max, f);
        self.core.in_kernel -= n.min(self.core.in_kernel);
        n
    }

    /// Hands up to `max` completions to `f` as (request slot, result, flags); returns how many. The
    /// completions not taken stay in the queue.
    #[inline(always)]
    fn take<F: FnMut(u32, i32, u32)>(&mut self, max: u32, mut f: F) -> u32 {
        if let Some(d) = &mut self.direct {
            return d.reap(max, |ud, res, flags| f(ud as u32, res, flags));
        }
        let mut n = 0;
        for cqe in self.core.ring.completion().take(max as usize) {
            f(cqe.user_data() as u32, cqe.result(), cqe.flags());
            n += 1;
        }
        n
    }

    /// The thread's ring, to register more with it.
    pub(super) fn io_uring(&self) -> &io_uring::IoUring {
        &self.core.ring
    }
}

impl Drop for PerThread {
    /// The registered ring index goes with the thread's use of the ring.
    fn drop(&mut self) {
        self.enter.release();
    }
}

impl Design for PerThread {
    /// A per-thread ring without SQPOLL takes the round's SQEs straight into its SQ, built in one tight
    /// loop (the kernel sees nothing before the io_uring_enter of `commit`; with SQPOLL, publishing the
    /// tail would hand requests over early, so they are staged until `commit`).
    #[inline(always)]
    fn submit_round(&mut self, sqes: &mut SqeShape, ios: &[Io], staged: &mut Vec<squeue::Entry>) {
        let core = &mut self.core;
        if !core.opts.sqpoll && staged.is_empty() {
            if let Some(d) = &mut self.direct {
                let (room, mut tail) = d.room();
                if room as usize >= ios.len() {
                    sqes.build_round(ios, |sqe| {
                        // SAFETY: as in `Core::push`: the buffer (and iovec) stays valid and untouched
                        // until the runner reaps this slot; fds and registered resources live as long
                        // as the ring. The slot is free: there is room for the round (checked above).
                        unsafe { d.write(tail, sqe) };
                        tail = tail.wrapping_add(1);
                    });
                    d.publish(tail);
                    core.queued += ios.len() as u32;
                    return;
                }
            } else {
                let mut sq = core.ring.submission();
                if sq.capacity() - sq.len() >= ios.len() {
                    sqes.build_round(ios, |sqe| {
                        // SAFETY: as above; there is room (checked), so nothing is dropped.
                        if unsafe { sq.push(&sqe) }.is_err() {
                            staged.push(sqe);
                        }
                    });
                    drop(sq);
                    core.queued += (ios.len() - staged.len()) as u32;
                    return;
                }
            }
        }
        sqes.build_round(ios, |sqe| staged.push(sqe));
    }

    #[inline(always)]
    fn commit(
        &mut self,
        staged: &mut Vec<squeue::Entry>,
        min_complete: u32,
        _own: &mut Own,
    ) -> Result<()> {
        if !staged.is_empty() {
            self.core.push(staged, self.enter)?;
        }
        self.core.enter(min_complete, self.enter)
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) -> u32 {
        self.reap_max_flagged(max, |slot, res, _| f(slot, res))
    }

    /// Every completion with its flags; a request is out of the kernel at its last completion (the one
    /// without IORING_CQE_F_MORE).
    fn reap_flagged<F: FnMut(u32, i32, u32)>(&mut self, mut f: F) {
        let mut last = 0;
        self.take(u32::MAX, |slot, res, flags| {
            f(slot, res, flags);
            last += u32::from(!io_uring::cqueue::more(flags));
        });
        self.core.in_kernel -= last.min(self.core.in_kernel);
    }

    fn queued(&self) -> u32 {
        self.core.queued
    }

    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)], _base: u32) -> Result<()> {
        self.core.register_bufs(bufs, 0, false)
    }

    fn finish(&mut self, _own: &mut Own) -> Result<()> {
        Ok(())
    }

    fn totals(&self) -> Option<UringStats> {
        Some(self.core.stats())
    }

    /// Its io_uring_enter calls, counted in its ring's statistics.
    fn ring_syscalls(&self) -> u64 {
        self.core.stats.enters
    }
}
