//! Raw pointers into an io_uring's ring memory at the kernel's offsets: what the offload paths (whose
//! rings live in shared memory) and a per-thread ring used in place (`method/io_uring/direct.rs`) read
//! and write the queues through.

use io_uring::{cqueue, squeue};
use iolab_sys as sys;
use iolab_sys::UringParams;
use std::sync::atomic::{AtomicU32, Ordering};

/// Raw pointers into a ring's shared memory. Plain addresses: valid in iolab and, after fork, at the same
/// addresses in the client, while the region is mapped.
#[derive(Clone, Copy)]
pub struct RingPtrs {
    pub(crate) sq_head: *const AtomicU32,
    pub(crate) sq_tail: *const AtomicU32,
    pub(crate) sq_flags: *const AtomicU32,
    pub(crate) sq_mask: u32,
    pub sq_entries: u32,
    pub(crate) sqes: *mut squeue::Entry,
    pub(crate) cq_head: *const AtomicU32,
    pub(crate) cq_tail: *const AtomicU32,
    pub(crate) cq_mask: u32,
    pub(crate) cqes: *const cqueue::Entry,
}

// SAFETY: the pointers name shared memory that outlives every user (the region is unmapped only after the
// client has exited and the threads that use it were joined).
unsafe impl Send for RingPtrs {}

/// The ring's fields at the kernel's offsets; identity-maps the SQ index array (SQE i from slot i).
///
/// # Safety
/// `rings` and `sqes` must be the ring memory the kernel set up with `p`, mapped and writable.
pub unsafe fn pointers(p: &UringParams, rings: *mut u8, sqes: *mut u8) -> RingPtrs {
    let at = |off: u32| -> *mut u8 {
        // SAFETY: the kernel's offsets lie inside the ring memory (the caller's contract).
        unsafe { rings.add(off as usize) }
    };
    // SAFETY: the kernel initialised ring_mask/ring_entries at these offsets.
    let (sq_mask, sq_entries, cq_mask) = unsafe {
        (
            *(at(p.sq_off.ring_mask) as *const u32),
            *(at(p.sq_off.ring_entries) as *const u32),
            *(at(p.cq_off.ring_mask) as *const u32),
        )
    };
    // A ring without the array (IORING_SETUP_NO_SQARRAY) takes SQE i from slot i itself.
    if p.flags & sys::IORING_SETUP_NO_SQARRAY == 0 {
        let array = at(p.sq_off.array) as *mut u32;
        for i in 0..sq_entries {
            // SAFETY: the SQ index array holds sq_entries u32s; SQE i is always used from array slot i.
            unsafe { array.add(i as usize).write(i) };
        }
    }
    RingPtrs {
        sq_head: at(p.sq_off.head) as *const AtomicU32,
        sq_tail: at(p.sq_off.tail) as *const AtomicU32,
        sq_flags: at(p.sq_off.flags) as *const AtomicU32,
        sq_mask,
        sq_entries,
        sqes: sqes as *mut squeue::Entry,
        cq_head: at(p.cq_off.head) as *const AtomicU32,
        cq_tail: at(p.cq_off.tail) as *const AtomicU32,
        cq_mask,
        cqes: at(p.cq_off.cqes) as *const cqueue::Entry,
    }
}

impl RingPtrs {
    /// The ring's indices and flags as this side sees them (for a stalled run's message).
    pub fn describe(&self) -> String {
        // SAFETY: valid pointers (RingPtrs contract).
        let (sh, st, fl, ch, ct) = unsafe {
            (
                (*self.sq_head).load(Ordering::Acquire),
                (*self.sq_tail).load(Ordering::Acquire),
                (*self.sq_flags).load(Ordering::Acquire),
                (*self.cq_head).load(Ordering::Acquire),
                (*self.cq_tail).load(Ordering::Acquire),
            )
        };
        format!("SQ head {sh} tail {st} flags {fl:#x}, CQ head {ch} tail {ct}")
    }
}
