//! A per-thread ring's queues used in place, through a second mapping of its memory: a round's SQEs are
//! written straight into their slots and its completions read where the kernel put them. The io-uring
//! crate's queues build each SQE zeroed and copy it in, and copy each completion out through a call per
//! entry (`cqueue::Entry::clone` is not inlined across crates). Used in place, a NOP at batch 32 under
//! `--latency-sample 0` takes 64 user instructions, not 86 (`bench/callgrind.sh`; 130 timed, not 146);
//! fio's t/io_uring takes 36.
//!
//! Nothing is cached between calls: the SQ tail and the CQ head are read from the ring at each one, so
//! the crate's queues (used by the paths this one leaves to them: SQPOLL's staging, `--min-wait`) and
//! these always agree. Only the mapping differs, and a round uses one of the two.

use crate::ring_ptrs::{pointers, RingPtrs};
use io_uring::{squeue, IoUring};
use iolab_sys as sys;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

pub(super) struct Direct {
    p: RingPtrs,
    /// The rings (SQ and CQ in one, IORING_FEAT_SINGLE_MMAP) and the SQEs, mapped again from the ring fd.
    _maps: [sys::Mapping; 2],
}

/// The parameters the io-uring crate kept of a ring it set up, as the kernel filled them in.
fn params_of(p: &io_uring::Parameters) -> sys::UringParams {
    const {
        assert!(size_of::<io_uring::Parameters>() == size_of::<sys::UringParams>());
    };
    // SAFETY: `Parameters` is repr(transparent) over the kernel's struct io_uring_params, which
    // `UringParams` lays out field for field (same size, checked above and by iolab-sys's abi_layout
    // test); both are plain integers, so any bytes are a valid value.
    unsafe { std::mem::transmute_copy(p) }
}

impl Direct {
    /// The ring's queues mapped again; None where its rings are not one mapping (before 5.4) or the
    /// mapping fails: the crate's queues serve then.
    pub(super) fn map(ring: &IoUring) -> Option<Direct> {
        let p = params_of(ring.params());
        if p.features & sys::IORING_FEAT_SINGLE_MMAP == 0 {
            return None;
        }
        let fd = ring.as_raw_fd();
        let sq_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * 16;
        let rings = sys::Mapping::shared(fd, sq_len.max(cq_len), 0, true).ok()?;
        let sqe_len = p.sq_entries as usize * size_of::<squeue::Entry>();
        let sqes = sys::Mapping::shared(fd, sqe_len, sys::IORING_OFF_SQES, true).ok()?;
        // SAFETY: the ring's own memory as the kernel set it up with `p`, mapped in full just above and
        // kept as long as the pointers (in `_maps`); the SQ index array, where the ring has one, is
        // already the identity (the crate set it), so writing it again changes nothing.
        let ptrs = unsafe { pointers(&p, rings.as_ptr(), sqes.as_ptr()) };
        Some(Direct {
            p: ptrs,
            _maps: [rings, sqes],
        })
    }

    /// The SQ's free slots and its tail.
    #[inline(always)]
    pub(super) fn room(&self) -> (u32, u32) {
        // SAFETY: valid pointers (`map`). Only this thread writes the tail; the kernel writes the head.
        let (head, tail) = unsafe {
            (
                (*self.p.sq_head).load(Ordering::Acquire),
                (*self.p.sq_tail).load(Ordering::Relaxed),
            )
        };
        (self.p.sq_entries - tail.wrapping_sub(head), tail)
    }

    /// Writes `e` into the SQ slot of `tail`.
    ///
    /// # Safety
    /// The slot must be free: `tail` at most `room()` past the tail `room()` gave, and no later tail
    /// published before this one.
    #[inline(always)]
    pub(super) unsafe fn write(&mut self, tail: u32, e: squeue::Entry) {
        // SAFETY: the slot lies in the SQE array (masked index) and is free (the caller's contract).
        unsafe { self.p.sqes.add((tail & self.p.sq_mask) as usize).write(e) };
    }

    /// Hands the SQEs written up to `tail` to the kernel's view (it takes them at the next enter).
    #[inline(always)]
    pub(super) fn publish(&self, tail: u32) {
        // SAFETY: valid pointer (`map`).
        unsafe { (*self.p.sq_tail).store(tail, Ordering::Release) };
    }

    /// Hands up to `max` completions to `f` as (user_data, result, flags), read in place, and frees
    /// their slots; returns how many.
    #[inline(always)]
    pub(super) fn reap(&mut self, max: u32, mut f: impl FnMut(u64, i32, u32)) -> u32 {
        // SAFETY: valid pointers (`map`). Only this thread moves the head; the tail is the kernel's,
        // acquired so that the entries before it are seen as written.
        let (head, tail) = unsafe {
            (
                (*self.p.cq_head).load(Ordering::Relaxed),
                (*self.p.cq_tail).load(Ordering::Acquire),
            )
        };
        let n = tail.wrapping_sub(head).min(max);
        for k in 0..n {
            let i = (head.wrapping_add(k) & self.p.cq_mask) as usize;
            // SAFETY: entry i lies before the tail acquired above: the kernel wrote it and will not
            // write it again until the head moves past it.
            let e = unsafe { &*self.p.cqes.add(i) };
            f(e.user_data(), e.result(), e.flags());
        }
        if n > 0 {
            // SAFETY: valid pointer (`map`).
            unsafe { (*self.p.cq_head).store(head.wrapping_add(n), Ordering::Release) };
        }
        n
    }
}
