//! `--ring producer-consumer`: each worker thread owns a ring and fills its submission queue (the
//! producer); a consumer thread per worker (`iolab-reap-N`) waits for the completions and hands them back
//! through a lock-free queue, waking the worker (futex) when it waits for one. The worker's io_uring_enter
//! calls only submit; the consumer's calls and the worker's sleeps are counted as the worker's syscalls.

use super::super::api::{op_err, ThreadCtx};
use super::core::{Core, Enter, Lane};
use super::ring_api::{Design, Own};
use crate::error::{Error, Result};
use crate::result::UringStats;
use crate::spec::RingOpts;
use crossbeam_queue::ArrayQueue;
use io_uring::{squeue, IoUring};
use iolab_sys as sys;
use iolab_sys::SysErr;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// A worker's ring and its consumer thread.
pub(super) struct ProducerConsumer {
    /// Boxed: the consumer thread holds the ring's address, which must not move with `Uring`.
    core: Box<Core>,
    enter: Enter,
    pc: Consumer,
}

impl ProducerConsumer {
    pub(super) fn open(
        ctx: &ThreadCtx,
        o: &RingOpts,
        fd: i32,
        path: &Path,
    ) -> Result<ProducerConsumer> {
        let qd = ctx.spec.qd;
        let mut core = Box::new(Core::new(o, qd, 0, path, qd as usize)?);
        if o.fixed_files {
            core.register_file(0, fd, false)?;
        }
        let enter = Enter::for_thread(&mut core)?;
        let pc = Consumer::start(&core.ring, qd, ctx.thread)?;
        Ok(ProducerConsumer { core, enter, pc })
    }
}

impl Drop for ProducerConsumer {
    fn drop(&mut self) {
        // A run that failed before `finish`: the consumer thread must be stopped and joined before the
        // ring it reads is closed and unmapped.
        let _ = self.pc.stop(&self.core.path);
        // The registered ring index goes with this thread's use of the ring.
        self.enter.release();
    }
}

impl Design for ProducerConsumer {
    #[inline(never)]
    fn commit(
        &mut self,
        staged: &mut Vec<squeue::Entry>,
        min_complete: u32,
        own: &mut Own,
    ) -> Result<()> {
        let core = &mut self.core;
        if !staged.is_empty() {
            core.push(staged, self.enter)?;
        }
        // Submission only: the consumer thread does the waiting for completions.
        if core.queued > 0 {
            core.enter(0, self.enter)?;
        }
        if min_complete > 0 {
            self.pc.wait(&mut own.calls, &mut own.worker_sleeps)?;
        }
        Ok(())
    }

    #[inline(always)]
    fn reap<F: FnMut(u32, i32)>(&mut self, max: u32, mut f: F) -> u32 {
        let mut n = 0;
        while n < max {
            let Some((slot, res)) = self.pc.lane.done.pop() else {
                break;
            };
            f(slot, res);
            n += 1;
        }
        let core = &mut self.core;
        core.in_kernel -= n.min(core.in_kernel);
        n
    }

    fn queued(&self) -> u32 {
        self.core.queued
    }

    fn register_buffers(&mut self, bufs: &[(*mut u8, usize)], _base: u32) -> Result<()> {
        self.core.register_bufs(bufs, 0, false)
    }

    /// Stops the consumer thread and counts its syscalls as this thread's.
    fn finish(&mut self, own: &mut Own) -> Result<()> {
        own.calls += self.pc.stop(&self.core.path)?;
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

/// How long the consumer thread sleeps in one wait before it looks at its stop flag.
const CONSUMER_WAIT_NS: u64 = 50_000_000;

/// The completion side of a producer-consumer ring: a thread (`iolab-reap-N`, its CPU in the process
/// figures) that sleeps in io_uring_enter(GETEVENTS) until a completion arrives (or 50 ms pass), moves
/// every completion into the worker's lock-free queue, and wakes the worker (futex) when it waits for one.
/// It submits nothing; the worker alone fills the submission queue.
struct Consumer {
    lane: Arc<Lane>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<std::result::Result<u64, SysErr>>>,
}

/// The ring as the consumer thread sees it: only its completion queue is touched there.
struct RingRef(*const IoUring);
// SAFETY: the consumer thread reads only the completion queue (the worker never does, in this design) and
// is joined (`Consumer::stop`, called by `finish` and by ProducerConsumer's Drop) before the ring it points
// to (boxed, so it does not move) is dropped.
unsafe impl Send for RingRef {}

impl Consumer {
    fn start(ring: &IoUring, qd: u32, t: u32) -> Result<Consumer> {
        let lane = Arc::new(Lane {
            requests: ArrayQueue::new(1),
            done: ArrayQueue::new(qd as usize),
            waiting: AtomicU32::new(0),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (l, st) = (lane.clone(), stop.clone());
        let r = RingRef(ring as *const IoUring);
        let thread = std::thread::Builder::new()
            .name(format!("iolab-reap-{t}"))
            .spawn(move || {
                let r = r;
                // SAFETY: see RingRef: the ring outlives this thread, and only this thread uses its CQ.
                let ring = unsafe { &*r.0 };
                consume(ring, &l, &st)
            })
            .map_err(|e| {
                crate::budget::thread_failed(
                    &format!("the io_uring consumer thread of worker {t}"),
                    &e,
                    "lower --threads, or use another --ring design",
                )
            })?;
        Ok(Consumer {
            lane,
            stop,
            thread: Some(thread),
        })
    }

    /// Sleeps until the consumer has handed back at least one completion.
    fn wait(&self, calls: &mut u64, sleeps: &mut u64) -> Result<()> {
        let l = &self.lane;
        while l.done.is_empty() {
            if l.waiting.load(Ordering::SeqCst) == 2 {
                return Err(Error::Runtime(
                    "the io_uring consumer thread stopped (io_uring_enter failed)".into(),
                ));
            }
            l.waiting.store(1, Ordering::SeqCst);
            if !l.done.is_empty() {
                l.waiting.store(0, Ordering::SeqCst);
                continue;
            }
            *calls += 1;
            *sleeps += 1;
            sys::futex_wait(&l.waiting, 1)?;
        }
        Ok(())
    }

    /// Stops and joins the consumer (within one 50 ms wait); returns its syscalls.
    fn stop(&mut self, path: &Path) -> Result<u64> {
        let Some(h) = self.thread.take() else {
            return Ok(0);
        };
        self.stop.store(true, Ordering::SeqCst);
        match h.join() {
            Ok(Ok(calls)) => Ok(calls),
            Ok(Err(err)) => Err(op_err(err, path)),
            Err(_) => Err(Error::Runtime(
                "the io_uring consumer thread panicked".into(),
            )),
        }
    }
}

/// The consumer thread: moves completions into the worker's lane and wakes the worker when it sleeps,
/// until `stop` is set; returns its syscalls (a failure is handed to the worker through the lane, too).
fn consume(ring: &IoUring, l: &Lane, st: &AtomicBool) -> std::result::Result<u64, SysErr> {
    let fd = ring.as_raw_fd();
    let mut calls = 0u64;
    let fail = |l: &Lane, e: SysErr| {
        // Wake the worker so it sees the failure instead of sleeping forever.
        l.waiting.store(2, Ordering::SeqCst);
        let _ = sys::futex_wake(&l.waiting, 1);
        Err(e)
    };
    loop {
        let mut got = 0;
        // SAFETY: this thread is the only one touching the completion queue.
        for cqe in unsafe { ring.completion_shared() } {
            // The worker never has more than --qd requests out, so there is room.
            let _ = l.done.push((cqe.user_data() as u32, cqe.result()));
            got += 1;
        }
        if got > 0 && l.waiting.swap(0, Ordering::SeqCst) == 1 {
            calls += 1;
            if let Err(e) = sys::futex_wake(&l.waiting, 1) {
                return fail(l, e);
            }
        }
        if st.load(Ordering::SeqCst) {
            return Ok(calls);
        }
        calls += 1;
        match sys::io_uring_wait_timeout(fd, 1, CONSUMER_WAIT_NS) {
            Ok(_) => {}
            Err(e) if e.errno == libc::EINTR || e.errno == libc::EAGAIN => {}
            Err(e) => return fail(l, e),
        }
    }
}
