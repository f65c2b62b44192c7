//! An io_uring whose rings and SQEs live in the shared region (IORING_SETUP_NO_MMAP, Linux 6.5+), set up by
//! iolab and driven by the client through memory only: SQEs are written with the `io-uring` crate's opcode
//! builders (`squeue::Entry` is `repr(C)` over the kernel's SQE), completions read as `cqueue::Entry`.

pub use crate::ring_ptrs::{pointers, RingPtrs};
use io_uring::{cqueue, squeue};
use iolab_sys as sys;
use iolab_sys::{SysResult, UringParams};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{fence, Ordering};

/// Bytes of ring memory (struct io_rings, CQEs, SQ index array) and of SQE memory for `entries` SQEs and
/// 2 x `entries` CQEs, with room to spare for the header.
pub fn ring_bytes(entries: u32) -> (usize, usize) {
    let cq = 2 * entries as usize;
    let rings = 1024 + cq * std::mem::size_of::<cqueue::Entry>() + entries as usize * 4;
    (
        super::shm::page_up(rings),
        super::shm::page_up(entries as usize * 64),
    )
}

/// A ring iolab set up.
pub struct OwnedRing {
    pub fd: OwnedFd,
    pub ptrs: RingPtrs,
    pub params: UringParams,
    /// The kernel's own ring memory, mapped from the ring fd (the fallback when IORING_SETUP_NO_MMAP is
    /// refused); MAP_SHARED, so a client forked later shares it. Empty for rings in user memory.
    _maps: Vec<sys::Mapping>,
}

/// io_uring_setup with IORING_SETUP_NO_MMAP. `flags` adds SQPOLL, SQ_AFF, R_DISABLED ...
///
/// # Safety
/// `rings` and `sqes` must be page-aligned, zeroed, writable memory of the sizes [`ring_bytes`] gives for
/// `entries`, mapped for as long as the returned ring (and any copy of its pointers) is used.
pub unsafe fn setup(
    rings: *mut u8,
    sqes: *mut u8,
    entries: u32,
    flags: u32,
    sq_idle_ms: u32,
    sq_cpu: Option<u32>,
) -> SysResult<OwnedRing> {
    let mut p = params(
        flags | sys::IORING_SETUP_NO_MMAP,
        entries,
        sq_idle_ms,
        sq_cpu,
    );
    p.sq_off.user_addr = sqes as u64;
    p.cq_off.user_addr = rings as u64;
    let fd = sys::io_uring_setup(entries, &mut p)?;
    // SAFETY: the kernel accepted this memory for these parameters (the caller's contract keeps it valid).
    let ptrs = unsafe { pointers(&p, rings, sqes) };
    Ok(OwnedRing {
        fd,
        ptrs,
        params: p,
        _maps: Vec::new(),
    })
}

/// The fallback for kernels without IORING_SETUP_NO_MMAP (before 6.5): the kernel allocates the rings and
/// iolab maps them from the ring fd with MAP_SHARED, so the client it forks afterwards shares them.
pub fn setup_mapped(
    entries: u32,
    flags: u32,
    sq_idle_ms: u32,
    sq_cpu: Option<u32>,
) -> SysResult<OwnedRing> {
    let mut p = params(flags, entries, sq_idle_ms, sq_cpu);
    let fd = sys::io_uring_setup(entries, &mut p)?;
    let sq_len = p.sq_off.array as usize + p.sq_entries as usize * 4;
    let cq_len =
        p.cq_off.cqes as usize + p.cq_entries as usize * std::mem::size_of::<cqueue::Entry>();
    // One mapping for both rings (IORING_FEAT_SINGLE_MMAP, Linux 5.4+), one for the SQEs.
    let rings = sys::Mapping::shared(fd.as_raw_fd(), sq_len.max(cq_len), 0, true)?;
    let sqes = sys::Mapping::shared(
        fd.as_raw_fd(),
        p.sq_entries as usize * 64,
        sys::IORING_OFF_SQES,
        true,
    )?;
    // SAFETY: the kernel's own ring memory, mapped in full just above, alive as long as the ring.
    let ptrs = unsafe { pointers(&p, rings.as_ptr(), sqes.as_ptr()) };
    Ok(OwnedRing {
        fd,
        ptrs,
        params: p,
        _maps: vec![rings, sqes],
    })
}

fn params(flags: u32, entries: u32, sq_idle_ms: u32, sq_cpu: Option<u32>) -> UringParams {
    let mut p = UringParams {
        flags: flags | sys::IORING_SETUP_CQSIZE,
        cq_entries: 2 * entries,
        sq_thread_idle: sq_idle_ms,
        ..Default::default()
    };
    if let Some(c) = sq_cpu {
        p.flags |= sys::IORING_SETUP_SQ_AFF;
        p.sq_thread_cpu = c;
    }
    p
}

impl OwnedRing {
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Registers the target as fixed file 0 and the data area as fixed buffer 0.
    pub fn register(&self, file: i32, data: *mut u8, data_len: usize) -> SysResult<()> {
        // SAFETY: FILES takes an array of i32 descriptors.
        unsafe { sys::io_uring_register(self.raw_fd(), sys::IORING_REGISTER_FILES, &[file]) }?;
        let iov = [libc::iovec {
            iov_base: data.cast(),
            iov_len: data_len,
        }];
        // SAFETY: BUFFERS takes iovecs; the data area stays mapped until the ring is closed (the region
        // outlives the ring: see offload::run).
        unsafe { sys::io_uring_register(self.raw_fd(), sys::IORING_REGISTER_BUFFERS, &iov) }
    }

    /// IORING_REGISTER_RESTRICTIONS then IORING_REGISTER_ENABLE_RINGS (the ring was made R_DISABLED):
    /// only `ops` are accepted, every SQE must carry IOSQE_FIXED_FILE and no other flag, and no register
    /// operation is allowed afterwards.
    pub fn restrict_and_enable(&self, ops: &[u8]) -> SysResult<()> {
        let mut r: Vec<sys::UringRestriction> = ops
            .iter()
            .map(|&op| sys::UringRestriction {
                opcode: sys::IORING_RESTRICTION_SQE_OP,
                arg: op,
                ..Default::default()
            })
            .collect();
        for kind in [
            sys::IORING_RESTRICTION_SQE_FLAGS_ALLOWED,
            sys::IORING_RESTRICTION_SQE_FLAGS_REQUIRED,
        ] {
            r.push(sys::UringRestriction {
                opcode: kind,
                arg: sys::IOSQE_FIXED_FILE,
                ..Default::default()
            });
        }
        // SAFETY: RESTRICTIONS takes an array of io_uring_restriction.
        unsafe { sys::io_uring_register(self.raw_fd(), sys::IORING_REGISTER_RESTRICTIONS, &r) }?;
        // SAFETY: ENABLE_RINGS takes no argument.
        unsafe {
            sys::io_uring_register::<u8>(self.raw_fd(), sys::IORING_REGISTER_ENABLE_RINGS, &[])
        }
    }
}

/// One side's view of the submission and completion queues: the client fills SQEs and reaps CQEs.
pub struct SqCq {
    p: RingPtrs,
    tail: u32,
    head: u32,
}

impl SqCq {
    pub fn new(p: RingPtrs) -> SqCq {
        // SAFETY: the pointers are valid (RingPtrs contract); a fresh ring starts at 0 anyway.
        let (tail, head) = unsafe {
            (
                (*p.sq_tail).load(Ordering::Relaxed),
                (*p.cq_head).load(Ordering::Relaxed),
            )
        };
        SqCq { p, tail, head }
    }

    /// Queues one SQE (not yet visible to the kernel). The caller keeps at most `sq_entries` in flight.
    #[inline(always)]
    pub fn push(&mut self, e: squeue::Entry) {
        let i = (self.tail & self.p.sq_mask) as usize;
        // SAFETY: slot i of the SQE array (sq_entries long) is free: the caller never has more than
        // sq_entries requests between publication and completion.
        unsafe { self.p.sqes.add(i).write(e) };
        self.tail = self.tail.wrapping_add(1);
    }

    /// `push`, leaving the slot's user_data (bytes 32-39 of the SQE) as it was: the thesis's SQE without
    /// io_uring_sqe_set_data (its Figure 4.2).
    #[inline(always)]
    pub fn push_without_data(&mut self, e: squeue::Entry) {
        const USER_DATA_WORD: usize = 4;
        let i = (self.tail & self.p.sq_mask) as usize;
        // SAFETY: squeue::Entry is the kernel's 64-byte struct io_uring_sqe (repr(C)), so it reads as
        // eight u64 words, the fifth being user_data; slot i is free as in `push`, and is written word by
        // word through a pointer to its eight words.
        unsafe {
            let words: [u64; 8] = std::mem::transmute(e);
            let slot = self.p.sqes.add(i).cast::<u64>();
            for (w, v) in words.iter().enumerate() {
                if w != USER_DATA_WORD {
                    slot.add(w).write(*v);
                }
            }
        }
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes the queued SQEs visible (release store of the SQ tail).
    #[inline(always)]
    pub fn publish(&self) {
        // SAFETY: valid pointer (RingPtrs contract).
        unsafe { (*self.p.sq_tail).store(self.tail, Ordering::Release) };
    }

    /// Is the SQPOLL thread asleep (IORING_SQ_NEED_WAKEUP)? Call after `publish`: the full fence orders
    /// the tail store before the flag load, the kernel's side of the protocol does the reverse.
    #[inline(always)]
    pub fn needs_wakeup(&self) -> bool {
        fence(Ordering::SeqCst);
        // SAFETY: valid pointer (RingPtrs contract).
        unsafe { (*self.p.sq_flags).load(Ordering::Relaxed) & sys::IORING_SQ_NEED_WAKEUP != 0 }
    }

    /// Published SQEs the kernel has not consumed yet?
    #[inline(always)]
    pub fn unconsumed(&self) -> bool {
        // SAFETY: valid pointer (RingPtrs contract).
        unsafe { (*self.p.sq_head).load(Ordering::Acquire) != self.tail }
    }

    /// Reports every available completion as (user_data, result) and frees their slots.
    #[inline(always)]
    pub fn reap(&mut self, mut f: impl FnMut(u64, i32)) -> u32 {
        // SAFETY: valid pointer (RingPtrs contract).
        let tail = unsafe { (*self.p.cq_tail).load(Ordering::Acquire) };
        let mut n = 0;
        while self.head != tail {
            let i = (self.head & self.p.cq_mask) as usize;
            // SAFETY: CQE i was published by the kernel (before `tail`, acquire-loaded above).
            let e = unsafe { self.p.cqes.add(i).read() };
            f(e.user_data(), e.result());
            self.head = self.head.wrapping_add(1);
            n += 1;
        }
        if n > 0 {
            // SAFETY: valid pointer (RingPtrs contract).
            unsafe { (*self.p.cq_head).store(self.head, Ordering::Release) };
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use io_uring::opcode;
    use std::sync::atomic::AtomicU32;

    fn words(e: squeue::Entry) -> [u64; 8] {
        // SAFETY: squeue::Entry is the kernel's 64-byte struct io_uring_sqe, plain data.
        unsafe { std::mem::transmute(e) }
    }

    #[test]
    fn an_sqe_pushed_without_data_keeps_the_slots_user_data_and_takes_the_rest() {
        let counters: [AtomicU32; 5] = Default::default();
        let mut sqes: Vec<squeue::Entry> = (0..2)
            .map(|_| opcode::Nop::new().build().user_data(0xdead))
            .collect();
        let p = RingPtrs {
            sq_head: &counters[0],
            sq_tail: &counters[1],
            sq_flags: &counters[2],
            sq_mask: 1,
            sq_entries: 2,
            sqes: sqes.as_mut_ptr(),
            cq_head: &counters[3],
            cq_tail: &counters[4],
            cq_mask: 0,
            cqes: std::ptr::null(),
        };
        let mut q = SqCq::new(p);
        let sent = || {
            opcode::Nop::new()
                .build()
                .flags(squeue::Flags::IO_LINK)
                .user_data(7)
        };
        q.push_without_data(sent());
        q.push(sent());
        assert_eq!(sqes[0].get_user_data(), 0xdead, "left as it was");
        assert_eq!(sqes[1].get_user_data(), 7, "a plain push writes it");
        let (got, want) = (words(sqes[0].clone()), words(sent()));
        for w in (0..8).filter(|&w| w != 4) {
            assert_eq!(got[w], want[w], "word {w} of the SQE");
        }
        assert_ne!(
            want[0],
            words(opcode::Nop::new().build())[0],
            "the flags are in word 0"
        );
    }
}
