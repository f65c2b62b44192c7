//! The broker path: the client writes requests in iolab's own format into a request ring in the shared
//! region; a broker thread of iolab copies each request into its own memory, checks the copy against the
//! policy, executes what passes through its own io_uring and posts every result to a completion ring.
//!
//! The copy is the point: the client can rewrite a request at any moment (its memory is shared), so the
//! broker never reads a request field twice from shared memory. Buffers are named by offset into the
//! region's data area, never by address, so a request cannot point into iolab's private memory.

use crate::spec::Doorbell;
use io_uring::{opcode, types, IoUring};
use iolab_sys as sys;
use std::cell::UnsafeCell;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use super::shm::Line;

/// Entries in each of the two rings.
pub const ENTRIES: usize = 4096;
const MASK: u32 = ENTRIES as u32 - 1;

/// A request, as the client writes it (40 bytes). `op` uses io_uring's opcode numbers.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Req {
    pub user_data: u64,
    pub op: u8,
    /// [`FIXED`]: `fd` is a file slot (the only accepted form).
    pub flags: u8,
    pub _pad: u16,
    pub fd: i32,
    /// Offset of the buffer in the data area.
    pub buf: u64,
    pub len: u32,
    pub _pad2: u32,
    pub file_off: u64,
}

pub const FIXED: u8 = 1;

/// A completion: the request's user_data and its result (bytes, or -errno).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Cmp {
    pub user_data: u64,
    pub res: i64,
}

/// One request slot, a cache line of its own. `seq` is the publication mark: the client writes the body,
/// then stores `seq = n + 1` (release) for its n-th request; the broker polls the slot at its head for
/// that value. So a request crosses between CPUs as one cache line, with no separate tail index.
#[repr(C, align(64))]
pub struct ReqSlot {
    pub seq: AtomicU32,
    /// Written by the client at any time (even after publication): only ever accessed through raw
    /// pointers, volatile, and copied once by the broker.
    pub body: UnsafeCell<Req>,
}

/// One completion slot (four per cache line), published the same way by the broker.
#[repr(C, align(32))]
pub struct CmpSlot {
    pub seq: AtomicU32,
    pub body: UnsafeCell<Cmp>,
}

/// The rings in the shared region. Each index is written by one side only.
#[repr(C)]
pub struct Rings {
    /// Broker: requests taken (read by the client only to decide on a doorbell).
    pub req_head: Line<AtomicU32>,
    /// Client: completions consumed (read by the broker only when the completion ring looks full).
    pub cmp_head: Line<AtomicU32>,
    /// Broker: 1 while it sleeps (or is about to) on the doorbell eventfd.
    pub sleeping: Line<AtomicU32>,
    pub reqs: [ReqSlot; ENTRIES],
    pub cmps: [CmpSlot; ENTRIES],
}

impl Rings {
    /// Is the client's request number `n` (0-based, wrapping) published?
    #[inline(always)]
    pub fn published(&self, n: u32) -> bool {
        self.reqs[(n & MASK) as usize].seq.load(Ordering::Acquire) == n.wrapping_add(1)
    }
}

pub const OP_NOP: u8 = opcode::Nop::CODE;
pub const OP_FSYNC: u8 = opcode::Fsync::CODE;
pub const OP_READ_FIXED: u8 = opcode::ReadFixed::CODE;
pub const OP_WRITE_FIXED: u8 = opcode::WriteFixed::CODE;
/// The one allowlist of both sandboxed paths: the kernel path's IORING_REGISTER_RESTRICTIONS and the
/// broker's policy.
pub const ALLOWED_OPS: [u8; 4] = [OP_NOP, OP_READ_FIXED, OP_WRITE_FIXED, OP_FSYNC];

/// What a request may do.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    /// File slots 0..files exist.
    pub files: u32,
    /// Bytes in the data area: a buffer must lie inside [0, data_len).
    pub data_len: u64,
    /// Largest transfer accepted.
    pub max_len: u32,
}

impl Policy {
    /// Ok, or the errno the request is refused with (the kernel's own choices: EACCES for what
    /// restrictions forbid, EBADF for a missing file slot, EFAULT for memory outside the buffer, EINVAL
    /// for a bad length).
    pub fn check(&self, q: &Req) -> Result<(), i32> {
        if !ALLOWED_OPS.contains(&q.op) {
            return Err(libc::EACCES);
        }
        if q.flags != FIXED {
            return Err(libc::EACCES);
        }
        if q.fd < 0 || q.fd as u32 >= self.files {
            return Err(libc::EBADF);
        }
        if matches!(q.op, OP_READ_FIXED | OP_WRITE_FIXED) {
            let end = q.buf.checked_add(u64::from(q.len));
            if end.is_none_or(|e| e > self.data_len) {
                return Err(libc::EFAULT);
            }
            if q.len == 0 || q.len > self.max_len {
                return Err(libc::EINVAL);
            }
        }
        Ok(())
    }
}

/// Figures and state the broker shares with the rest of iolab.
#[derive(Default)]
pub struct Shared {
    pub stop: AtomicBool,
    /// Requests refused by the policy.
    pub refusals: AtomicU64,
    /// Requests executed through the broker's io_uring.
    pub executed: AtomicU64,
    /// Times the broker went to sleep on the doorbell and was woken.
    pub wakeups: AtomicU64,
    /// Why the broker stopped serving, if it did.
    pub failure: Mutex<Option<String>>,
}

/// What the broker thread needs.
pub struct Broker {
    pub rings: *const Rings,
    pub data: *mut u8,
    pub policy: Policy,
    pub ring: IoUring,
    pub doorbell: Doorbell,
    pub bell_fd: i32,
    pub cpu: Option<u32>,
}

// SAFETY: `rings` and `data` point into the shared region, which iolab unmaps only after joining the
// broker thread; the IoUring is owned.
unsafe impl Send for Broker {}

/// Spin this long before sleeping (spin-then-sleep).
const SPIN_NS: u64 = 50_000;

impl Broker {
    /// The broker thread's body: serves until `shared.stop`.
    pub fn serve(mut self, shared: &Shared) {
        if let Some(c) = self.cpu {
            let _ = sys::pin_to_cpu(c);
        }
        if let Err(msg) = self.serve_inner(shared) {
            *shared.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(msg);
        }
    }

    fn serve_inner(&mut self, shared: &Shared) -> Result<(), String> {
        // SAFETY: `rings` points to a live, initialised Rings in the shared region (Broker contract).
        let r = unsafe { &*self.rings };
        let cap = self.ring.params().sq_entries() as usize;
        let mut head = r.req_head.0.load(Ordering::Relaxed);
        let mut ctail = head;
        let mut chead = r.cmp_head.0.load(Ordering::Acquire);
        let mut copies = vec![Req::default(); cap];
        let mut res = vec![0i64; cap];
        loop {
            if shared.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let mut n = 0usize;
            while n < cap && r.published(head.wrapping_add(n as u32)) {
                n += 1;
            }
            if n == 0 {
                self.idle(r, head, shared)?;
                continue;
            }
            // Room for n completions (the client frees them; a client that never does only stalls itself).
            while (ctail.wrapping_sub(chead) as usize) + n > ENTRIES {
                chead = r.cmp_head.0.load(Ordering::Acquire);
                if shared.stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                std::hint::spin_loop();
            }
            let mut valid = 0u32;
            for i in 0..n {
                let slot = &r.reqs[(head.wrapping_add(i as u32) & MASK) as usize];
                // SAFETY: a plain-data read of a slot in live shared memory; volatile because the client may
                // write it concurrently (any bit pattern is a valid Req). This is the one read of it.
                let q = unsafe { std::ptr::read_volatile(slot.body.get()) };
                copies[i] = q;
                match self.policy.check(&q) {
                    Err(e) => {
                        res[i] = -(e as i64);
                        shared.refusals.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(()) => match self.sqe(&q, i as u64) {
                        Some(e) => {
                            // SAFETY: the SQE's buffer lies in the data area (checked above), which
                            // outlives the request: it completes before this round ends.
                            unsafe { self.ring.submission().push(&e) }
                                .map_err(|_| "the broker's own ring is full".to_string())?;
                            valid += 1;
                        }
                        None => res[i] = -(libc::EINVAL as i64),
                    },
                }
            }
            if valid > 0 {
                let mut got = 0u32;
                let mut first = true;
                while got < valid {
                    let want = if first { valid as usize } else { 1 };
                    first = false;
                    match self.ring.submit_and_wait(want) {
                        Ok(_) => {}
                        Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                        Err(e) => return Err(format!("the broker's io_uring_enter failed: {e}")),
                    }
                    for c in self.ring.completion() {
                        res[c.user_data() as usize] = i64::from(c.result());
                        got += 1;
                    }
                }
                shared
                    .executed
                    .fetch_add(u64::from(valid), Ordering::Relaxed);
            }
            for i in 0..n {
                let c = Cmp {
                    user_data: copies[i].user_data,
                    res: res[i],
                };
                let k = ctail.wrapping_add(i as u32);
                let slot = &r.cmps[(k & MASK) as usize];
                // SAFETY: the completion slot is free (room checked above); plain data in live shared memory.
                unsafe { std::ptr::write_volatile(slot.body.get(), c) };
                slot.seq.store(k.wrapping_add(1), Ordering::Release);
            }
            head = head.wrapping_add(n as u32);
            ctail = ctail.wrapping_add(n as u32);
            r.req_head.0.store(head, Ordering::Release);
        }
    }

    /// The SQE for a checked copy; None for an opcode the broker does not execute at all.
    fn sqe(&self, q: &Req, ud: u64) -> Option<io_uring::squeue::Entry> {
        let addr = (self.data as u64).wrapping_add(q.buf) as *mut u8;
        macro_rules! on_file {
            ($mk:expr) => {
                if q.flags & FIXED != 0 {
                    $mk(types::Fixed(q.fd as u32))
                } else {
                    $mk(types::Fd(q.fd))
                }
            };
        }
        let e = match q.op {
            OP_NOP => opcode::Nop::new().build(),
            OP_FSYNC => on_file!(|f| opcode::Fsync::new(f).build()),
            OP_READ_FIXED => on_file!(|f| opcode::ReadFixed::new(f, addr, q.len, 0)
                .offset(q.file_off)
                .build()),
            OP_WRITE_FIXED => on_file!(|f| opcode::WriteFixed::new(f, addr, q.len, 0)
                .offset(q.file_off)
                .build()),
            opcode::Read::CODE => {
                on_file!(|f| opcode::Read::new(f, addr, q.len).offset(q.file_off).build())
            }
            opcode::Write::CODE => on_file!(|f| opcode::Write::new(f, addr, q.len)
                .offset(q.file_off)
                .build()),
            _ => return None,
        };
        Some(e.user_data(ud))
    }

    /// No request waiting: spin, or sleep on the doorbell, as the mode says.
    fn idle(&self, r: &Rings, head: u32, shared: &Shared) -> Result<(), String> {
        match self.doorbell {
            Doorbell::Spin => {
                // Poll the tail without PAUSE in between: PAUSE costs ~40-140 cycles on recent cores, which
                // would add itself to every round trip.
                for _ in 0..1024 {
                    if r.published(head) {
                        return Ok(());
                    }
                }
                std::hint::spin_loop();
                Ok(())
            }
            Doorbell::Eventfd => self.sleep(shared),
            Doorbell::SpinThenSleep => {
                let t0 = sys::monotonic_ns();
                loop {
                    for _ in 0..1024 {
                        if r.published(head) {
                            return Ok(());
                        }
                    }
                    std::hint::spin_loop();
                    if shared.stop.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    if sys::monotonic_ns() - t0 > SPIN_NS {
                        break;
                    }
                }
                r.sleeping.0.store(1, Ordering::SeqCst);
                fence(Ordering::SeqCst);
                // A request published before the flag was visible: serve it (the client saw no flag).
                if r.published(head) {
                    r.sleeping.0.store(0, Ordering::Relaxed);
                    return Ok(());
                }
                let out = self.sleep(shared);
                r.sleeping.0.store(0, Ordering::Relaxed);
                out
            }
        }
    }

    /// Blocks on the doorbell eventfd until the client (or iolab, to stop the broker) rings it.
    fn sleep(&self, shared: &Shared) -> Result<(), String> {
        let mut v = [0u8; 8];
        match sys::read(self.bell_fd, &mut v) {
            Ok(_) => {
                shared.wakeups.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) if e.errno == libc::EINTR => Ok(()),
            Err(e) => Err(format!(
                "the broker's doorbell read failed: {}",
                sys::errno_name(e.errno)
            )),
        }
    }
}
