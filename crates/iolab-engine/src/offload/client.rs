//! The client process: forked by iolab, it confines itself with a seccomp filter that allows only read,
//! write, exit and exit_group ([`ALLOWED`]; anything else kills it with SIGSYS) and then does its whole
//! workload through shared memory. The filter, unlike seccomp strict mode, leaves RDTSC usable, so the
//! client times itself: the cycle counter around each request and each round trip, into the shared
//! cycle area (`cycles.rs`). iolab also times it from outside by sampling `Ctl::completed`.
//!
//! Everything here runs in the forked child of a process that may have other threads: no allocation, no
//! locks, no panics on purpose; only memory operations and the raw calls the filter allows.

use super::broker::{self, Cmp, Req as BReq, Rings};
use super::cycles::CycleWriter;
use super::ring::SqCq;
use super::shm::Ctl;
use crate::pattern::{self, OpPlan};
use crate::spec::{Attack, Doorbell, Pattern};
use io_uring::{opcode, squeue, types};
use iolab_sys as sys;
use std::os::fd::RawFd;
use std::sync::atomic::{fence, AtomicU32, Ordering};

/// One request, whatever the path.
#[derive(Debug, Clone, Copy)]
pub struct Req {
    pub op: u8,
    /// `fd` is a fixed-file slot.
    pub fixed: bool,
    pub fd: i32,
    pub addr: u64,
    pub len: u32,
    pub off: u64,
    pub ud: u64,
}

/// The only system calls the sandboxed client may make (its seccomp filter kills it on any other).
pub const ALLOWED: [libc::c_long; 4] = [
    // iolab's commands on the go pipe ('A' attack, 'G' go).
    libc::SYS_read,
    // Its replies on the done pipe, and the eventfd doorbell (an 8-byte write).
    libc::SYS_write,
    // How the client ends (`sys::exit_thread`; it is single-threaded, so this ends the process).
    libc::SYS_exit,
    // The usual way a process ends (`_exit`), so that any ending is an exit and not a kill.
    libc::SYS_exit_group,
];

/// How the client talks to its server.
pub trait Transport {
    fn push(&mut self, r: &Req);
    /// `push` leaving the request's user_data unwritten (`--no-user-data`; SQE rings only).
    fn push_without_data(&mut self, r: &Req) {
        self.push(r)
    }
    /// Makes the `n` queued requests visible and rings the doorbell when needed. `ctl` counts syscalls.
    fn submit(&mut self, n: u32, ctl: &Ctl);
    /// Reports available completions as (user_data, result).
    fn reap<F: FnMut(u64, i64)>(&mut self, f: F) -> u32;
    /// Called now and then while waiting: ring again if the server sleeps with work pending.
    fn kick(&mut self, _ctl: &Ctl) {}
    /// Rewrites the last published request (the rewrite attack).
    fn rewrite_last(&mut self, _r: &Req) {}
    /// Before a round trip: wait until the server sleeps, when the design wakes it for every request
    /// (the kernel path with a sleeping SQ thread). Not timed.
    fn await_sleep(&mut self, _ctl: &Ctl) {}
}

fn ring_bell(fd: RawFd, ctl: &Ctl) {
    ctl.doorbells.fetch_add(1, Ordering::Relaxed);
    ctl.syscalls.fetch_add(1, Ordering::Relaxed);
    let _ = sys::eventfd_ring(fd);
}

/// An io_uring SQE for `r`, with the crate's builders.
fn sqe(r: &Req) -> squeue::Entry {
    macro_rules! on_file {
        ($mk:expr) => {
            if r.fixed {
                $mk(types::Fixed(r.fd as u32))
            } else {
                $mk(types::Fd(r.fd))
            }
        };
    }
    let buf = r.addr as *mut u8;
    let e = match r.op {
        broker::OP_NOP => {
            let e = opcode::Nop::new().build();
            if r.fixed {
                e.flags(squeue::Flags::FIXED_FILE)
            } else {
                e
            }
        }
        broker::OP_FSYNC => on_file!(|f| opcode::Fsync::new(f).build()),
        broker::OP_READ_FIXED => on_file!(|f| opcode::ReadFixed::new(f, buf, r.len, 0)
            .offset(r.off)
            .build()),
        broker::OP_WRITE_FIXED => on_file!(|f| opcode::WriteFixed::new(f, buf, r.len, 0)
            .offset(r.off)
            .build()),
        _ => on_file!(|f| opcode::Read::new(f, buf, r.len).offset(r.off).build()),
    };
    e.user_data(r.ud)
}

/// Kernel path: an SQPOLL ring; the client never enters the kernel except to ring the doorbell.
pub struct KernelT {
    pub q: SqCq,
    pub bell: RawFd,
    /// `--sq-sleep`: before each round trip, wait until the SQ thread has idled out
    /// (IORING_SQ_NEED_WAKEUP), so that every request wakes it through the doorbell.
    pub sleep_first: bool,
}

impl Transport for KernelT {
    #[inline(always)]
    fn push(&mut self, r: &Req) {
        self.q.push(sqe(r));
    }
    #[inline(always)]
    fn push_without_data(&mut self, r: &Req) {
        self.q.push_without_data(sqe(r));
    }
    #[inline(always)]
    fn submit(&mut self, _n: u32, ctl: &Ctl) {
        self.q.publish();
        if self.q.needs_wakeup() {
            ring_bell(self.bell, ctl);
        }
    }
    #[inline(always)]
    fn reap<F: FnMut(u64, i64)>(&mut self, mut f: F) -> u32 {
        self.q.reap(|ud, res| f(ud, i64::from(res)))
    }
    fn kick(&mut self, ctl: &Ctl) {
        // With `sleep_first` every request already rang once, after the SQ thread had said it sleeps
        // (it sets NEED_WAKEUP once on its wait queue, then looks at the ring again): that bell cannot be
        // lost, and ringing again while the wake-up is on its way would only count bells nobody needed.
        if !self.sleep_first && self.q.unconsumed() && self.q.needs_wakeup() {
            ring_bell(self.bell, ctl);
        }
    }
    fn await_sleep(&mut self, ctl: &Ctl) {
        if !self.sleep_first {
            return;
        }
        let mut spins = 0u32;
        while !self.q.needs_wakeup() {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins & 4095 == 0 && ctl.stop.0.load(Ordering::Relaxed) >= 2 {
                sys::exit_thread(EXIT_ABORTED);
            }
        }
    }
}

/// Native path: the same ring without SQPOLL, entered with io_uring_enter(2) per batch.
pub struct NativeT {
    pub q: SqCq,
    pub fd: RawFd,
}

impl Transport for NativeT {
    #[inline(always)]
    fn push(&mut self, r: &Req) {
        self.q.push(sqe(r));
    }
    #[inline(always)]
    fn push_without_data(&mut self, r: &Req) {
        self.q.push_without_data(sqe(r));
    }
    #[inline(always)]
    fn submit(&mut self, n: u32, ctl: &Ctl) {
        self.q.publish();
        ctl.syscalls.fetch_add(1, Ordering::Relaxed);
        loop {
            match sys::io_uring_enter(self.fd, n, n, sys::IORING_ENTER_GETEVENTS) {
                Err(e) if e.errno == libc::EINTR => continue,
                _ => break,
            }
        }
    }
    #[inline(always)]
    fn reap<F: FnMut(u64, i64)>(&mut self, mut f: F) -> u32 {
        self.q.reap(|ud, res| f(ud, i64::from(res)))
    }
}

/// Broker path: iolab's request ring.
pub struct BrokerT {
    pub rings: *const Rings,
    pub tail: u32,
    pub head: u32,
    pub data: u64,
    pub doorbell: Doorbell,
    pub bell: RawFd,
}

impl BrokerT {
    fn rings(&self) -> &Rings {
        // SAFETY: `rings` points into the shared region, mapped for the client's whole life.
        unsafe { &*self.rings }
    }
    fn write_slot(&self, idx: u32, r: &Req) {
        let q = BReq {
            user_data: r.ud,
            op: r.op,
            flags: if r.fixed { broker::FIXED } else { 0 },
            _pad: 0,
            fd: r.fd,
            buf: r.addr.wrapping_sub(self.data),
            len: r.len,
            _pad2: 0,
            file_off: r.off,
        };
        let slot = &self.rings().reqs[(idx as usize) & (broker::ENTRIES - 1)];
        // SAFETY: plain data into a request slot of live shared memory.
        unsafe { std::ptr::write_volatile(slot.body.get(), q) };
    }
    fn sleeping(&self) -> &AtomicU32 {
        &self.rings().sleeping.0
    }
}

impl Transport for BrokerT {
    #[inline(always)]
    fn push(&mut self, r: &Req) {
        self.write_slot(self.tail, r);
        self.tail = self.tail.wrapping_add(1);
    }
    #[inline(always)]
    fn submit(&mut self, n: u32, ctl: &Ctl) {
        // Publish each slot (its body was written by push): the broker polls these marks.
        let first = self.tail.wrapping_sub(n);
        for k in 0..n {
            let idx = first.wrapping_add(k);
            self.rings().reqs[(idx as usize) & (broker::ENTRIES - 1)]
                .seq
                .store(idx.wrapping_add(1), Ordering::Release);
        }
        match self.doorbell {
            Doorbell::Spin => {}
            Doorbell::Eventfd => ring_bell(self.bell, ctl),
            Doorbell::SpinThenSleep => {
                fence(Ordering::SeqCst);
                if self.sleeping().load(Ordering::Relaxed) != 0 {
                    ring_bell(self.bell, ctl);
                }
            }
        }
    }
    #[inline(always)]
    fn reap<F: FnMut(u64, i64)>(&mut self, mut f: F) -> u32 {
        let mut n = 0;
        loop {
            let slot = &self.rings().cmps[(self.head as usize) & (broker::ENTRIES - 1)];
            if slot.seq.load(Ordering::Acquire) != self.head.wrapping_add(1) {
                break;
            }
            // SAFETY: a completion the broker published (its mark was acquire-loaded above).
            let c: Cmp = unsafe { std::ptr::read_volatile(slot.body.get()) };
            f(c.user_data, c.res);
            self.head = self.head.wrapping_add(1);
            n += 1;
        }
        if n > 0 {
            self.rings().cmp_head.0.store(self.head, Ordering::Release);
        }
        n
    }
    fn kick(&mut self, ctl: &Ctl) {
        if self.doorbell == Doorbell::SpinThenSleep
            && self.rings().req_head.0.load(Ordering::Acquire) != self.tail
            && self.sleeping().load(Ordering::SeqCst) != 0
        {
            ring_bell(self.bell, ctl);
        }
    }
    fn rewrite_last(&mut self, r: &Req) {
        self.write_slot(self.tail.wrapping_sub(1), r);
    }
}

/// The workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    Nop,
    Read,
    Write,
}

/// Everything the client needs, copied into it by fork.
#[derive(Clone, Copy)]
pub struct Plan {
    pub work: Work,
    pub bs: usize,
    pub slot: usize,
    pub batch: u32,
    /// Ops to do (u64::MAX: until iolab says stop).
    pub total: u64,
    pub pattern: Pattern,
    pub offset: u64,
    pub nblocks: u64,
    pub seed: u64,
    pub verify_reads: bool,
    pub fsync_every: u64,
    pub fsync_end: bool,
    pub data: *mut u8,
    pub scratch: *mut u8,
    pub attack_page: *mut u8,
    pub canary: *mut u8,
    pub unrelated_fd: i32,
    pub attacks: [Option<Attack>; 8],
    pub ctl: *const Ctl,
    /// The shared cycle area (`cycles::Area`) and the cycle counter to read (None: none on this target).
    pub cycles: *mut u8,
    pub cycle_read: Option<fn() -> u64>,
    pub go_fd: RawFd,
    pub done_fd: RawFd,
    pub cpu: Option<u32>,
    pub sandbox: bool,
    pub parent: i32,
    /// `--no-user-data`: NOP SQEs are written without their user_data (batch 1).
    pub no_user_data: bool,
}

/// user_data of attack requests (workload requests use their index in the batch).
const ATTACK_UD: u64 = 1 << 40;
/// Rewrite attempts in the rewrite attack.
pub const REWRITE_TRIES: u64 = 200;

/// Exit codes of the client (iolab explains them).
pub const EXIT_OK: i32 = 0;
pub const EXIT_NO_SANDBOX: i32 = 90;
pub const EXIT_PARENT_GONE: i32 = 91;
pub const EXIT_ABORTED: i32 = 92;

/// How the client and iolab talk outside the rings: the handshake ('R' ready, 'A' attack, 'a' attacks
/// made, 'G' go, 'D' done) and the client's way out. A forked client uses pipes ([`Pipes`]); a client in a
/// guest partition uses words in the shared region (`partition/guest.rs`).
pub trait Channel {
    /// Before the handshake: Err(exit code) when the client cannot go on.
    fn enter(&mut self, p: &Plan, ctl: &Ctl) -> Result<(), i32>;
    fn say(&mut self, ctl: &Ctl, b: u8);
    /// The next command, None when iolab is gone.
    fn hear(&mut self, ctl: &Ctl) -> Option<u8>;
    fn exit(&mut self, code: i32) -> !;
}

/// The forked client's channel: two pipes (`Plan::go_fd`, `Plan::done_fd`), the seccomp filter installed
/// after iolab's start byte; every read and write counted in `Ctl::syscalls`.
pub struct Pipes {
    go: RawFd,
    done: RawFd,
}

impl Channel for Pipes {
    fn enter(&mut self, p: &Plan, _ctl: &Ctl) -> Result<(), i32> {
        // Die with iolab (the thread that forked us): never spin on a ring nobody serves.
        if sys::child_dies_with_parent().is_err() || sys::getppid() != p.parent {
            return Err(EXIT_PARENT_GONE);
        }
        // Killed by its filter on purpose (the syscall attack): SIGSYS dumps core by default.
        let _ = sys::no_core_dumps();
        // iolab's start byte: it has opened its kernel counter of this process's system calls by now, so
        // the exit of this read and every call after it are counted (by raw_syscalls:sys_exit).
        let mut b = [0u8; 1];
        if !matches!(sys::read(self.go, &mut b), Ok(1)) || b[0] != b'S' {
            return Err(EXIT_PARENT_GONE);
        }
        Ok(())
    }
    fn say(&mut self, ctl: &Ctl, b: u8) {
        ctl.syscalls.fetch_add(1, Ordering::Relaxed);
        let _ = sys::write(self.done, &[b]);
    }
    fn hear(&mut self, ctl: &Ctl) -> Option<u8> {
        ctl.syscalls.fetch_add(1, Ordering::Relaxed);
        let mut b = [0u8; 1];
        match sys::read(self.go, &mut b) {
            Ok(1) => Some(b[0]),
            _ => None,
        }
    }
    fn exit(&mut self, code: i32) -> ! {
        sys::exit_thread(code)
    }
}

/// The forked client's life (see [`run`]), over its pipes. Never returns.
pub fn main<T: Transport>(p: Plan, t: T) -> ! {
    let pipes = Pipes {
        go: p.go_fd,
        done: p.done_fd,
    };
    run(p, t, pipes)
}

/// The client's life: sandbox, handshake, attacks, workload, exit. Never returns.
pub fn run<T: Transport, C: Channel>(p: Plan, mut t: T, mut ch: C) -> ! {
    if let Some(c) = p.cpu {
        let _ = sys::pin_to_cpu(c);
    }
    for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE] {
        sys::default_signal(sig);
    }
    // SAFETY: `ctl` points into the shared region (Plan contract).
    let ctl = unsafe { &*p.ctl };
    if let Err(code) = ch.enter(&p, ctl) {
        ch.exit(code);
    }
    if p.sandbox {
        if let Err(e) = sys::seccomp_allow_only(&ALLOWED) {
            ctl.sandbox_errno
                .store(i64::from(e.errno), Ordering::Relaxed);
            sys::exit_now(EXIT_NO_SANDBOX);
        }
    }
    ch.say(ctl, b'R');
    // 'A': run the attacks; 'G': run the workload (iolab starts timing just before sending it).
    let mut cmd = ch.hear(ctl);
    if cmd == Some(b'A') {
        attacks(&p, &mut t, ctl);
        ch.say(ctl, b'a');
        cmd = ch.hear(ctl);
    }
    if cmd != Some(b'G') {
        ch.exit(EXIT_PARENT_GONE);
    }
    let before = ctl.syscalls.load(Ordering::Relaxed);
    ctl.doorbells_at_go
        .store(ctl.doorbells.load(Ordering::Relaxed), Ordering::Relaxed);
    workload(&p, &mut t, ctl);
    ctl.timed_syscalls.store(
        ctl.syscalls.load(Ordering::Relaxed) - before + 1,
        Ordering::Relaxed,
    );
    ch.say(ctl, b'D');
    ch.exit(EXIT_OK)
}

/// Waits for `n` completions, reporting each; exits if iolab aborts.
#[inline(always)]
fn wait<T: Transport, F: FnMut(u64, i64)>(t: &mut T, ctl: &Ctl, n: u32, mut f: F) {
    let mut got = 0;
    let mut spins = 0u32;
    while got < n {
        let k = t.reap(&mut f);
        got += k;
        if k == 0 {
            spins = spins.wrapping_add(1);
            // PAUSE only now and then: it costs ~40-140 cycles, which would add itself to the round trip.
            if spins & 63 == 0 {
                std::hint::spin_loop();
            }
            if spins & 65535 == 0 {
                t.kick(ctl);
                if ctl.stop.0.load(Ordering::Relaxed) >= 2 {
                    sys::exit_thread(EXIT_ABORTED);
                }
            }
        }
    }
}

fn one<T: Transport>(t: &mut T, ctl: &Ctl, r: &Req) -> i64 {
    t.push(r);
    t.submit(1, ctl);
    let mut res = 0;
    wait(t, ctl, 1, &mut |_, v| res = v);
    res
}

fn attacks<T: Transport>(p: &Plan, t: &mut T, ctl: &Ctl) {
    let data = p.data as u64;
    for (k, a) in p.attacks.iter().enumerate() {
        let Some(a) = *a else { break };
        let idx = crate::spec::Attack::ALL
            .iter()
            .position(|x| *x == a)
            .unwrap_or(0);
        let ud = ATTACK_UD + k as u64;
        let req = |op, fixed, fd, addr, len| Req {
            op,
            fixed,
            fd,
            addr,
            len,
            off: 0,
            ud,
        };
        let r = match a {
            Attack::Opcode => req(opcode::Read::CODE, true, 0, p.canary as u64, 4096),
            Attack::RawFd => req(broker::OP_WRITE_FIXED, false, p.unrelated_fd, data, 4096),
            Attack::Slot => req(broker::OP_WRITE_FIXED, true, 1, data, 4096),
            Attack::BufAddr => req(broker::OP_READ_FIXED, true, 0, p.canary as u64, 4096),
            Attack::BufLen => req(broker::OP_READ_FIXED, true, 0, p.attack_page as u64, 8192),
            Attack::Rewrite => {
                rewrite(p, t, ctl, ud);
                continue;
            }
            // These end the client during the workload.
            Attack::Syscall | Attack::Crash => continue,
        };
        let res = one(t, ctl, &r);
        ctl.attack_res[idx].store(res, Ordering::Relaxed);
    }
}

/// Publishes a harmless NOP, then keeps rewriting its slot, back and forth, between the NOP and a write of
/// the parent's unrelated file through a raw descriptor, until the completion arrives. Whatever the broker
/// read, it must have checked and run that same copy: the NOP, a refusal, or (a copy torn between the two
/// versions) some other request the policy allows. Never the raw-fd write.
fn rewrite<T: Transport>(p: &Plan, t: &mut T, ctl: &Ctl, ud: u64) {
    let nop = Req {
        op: broker::OP_NOP,
        fixed: true,
        fd: 0,
        addr: p.data as u64,
        len: 0,
        off: 0,
        ud,
    };
    let evil = Req {
        op: broker::OP_WRITE_FIXED,
        fixed: false,
        fd: p.unrelated_fd,
        addr: p.data as u64,
        len: 4096,
        off: 0,
        ud,
    };
    for _ in 0..REWRITE_TRIES {
        t.push(&nop);
        t.submit(1, ctl);
        let mut res = None;
        let mut flip = true;
        while res.is_none() {
            t.rewrite_last(if flip { &evil } else { &nop });
            flip = !flip;
            t.reap(&mut |_, v| res = Some(v));
        }
        let res = res.unwrap_or(0);
        ctl.rewrite_tries.fetch_add(1, Ordering::Relaxed);
        let counter = if res == 0 {
            &ctl.rewrite_ran_original
        } else if res < 0 {
            &ctl.rewrite_refused
        } else {
            &ctl.rewrite_other
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
    let idx = Attack::ALL
        .iter()
        .position(|x| *x == Attack::Rewrite)
        .unwrap_or(0);
    ctl.attack_res[idx].store(-(libc::EACCES as i64), Ordering::Relaxed);
}

fn die_now(a: Attack) -> ! {
    match a {
        Attack::Syscall => {
            // Not in the filter's list: the kernel kills the client (SIGSYS, SECCOMP_RET_KILL_PROCESS).
            let _ = sys::getppid();
            sys::exit_thread(EXIT_OK)
        }
        _ => {
            // SAFETY: deliberately invalid: page 0 is never mapped (vm.mmap_min_addr), so this write raises
            // SIGSEGV and the client dies, which is what the crash attack is for. No memory is changed.
            unsafe { std::ptr::write_volatile(std::ptr::without_provenance_mut::<u64>(8), 0) };
            sys::exit_thread(EXIT_OK)
        }
    }
}

/// One batch's bookkeeping: each request's block and offset, and when the client saw its completion.
struct Batch {
    blocks: [u64; 4096],
    offs: [u64; 4096],
    seen: [u64; 4096],
}

fn workload<T: Transport>(p: &Plan, t: &mut T, ctl: &Ctl) {
    let mut plan = OpPlan::new(p.pattern, p.offset, p.bs as u64, 0, p.nblocks, p.seed, 0);
    let killer = p
        .attacks
        .iter()
        .flatten()
        .find(|a| a.kills_client())
        .copied();
    let kill_at = if p.total == u64::MAX {
        1000
    } else {
        p.total / 2
    };
    // SAFETY: `cycles` is the shared region's cycle area (Plan contract), which only this client writes
    // and which stays mapped for the client's life.
    let cw = unsafe { CycleWriter::new(p.cycles, p.cycle_read) };
    cw.time_clock_reads();
    let mut b = Batch {
        blocks: [0; 4096],
        offs: [0; 4096],
        seen: [0; 4096],
    };
    let mut done = 0u64;
    let mut synced = 0u64;
    while done < p.total && ctl.stop.0.load(Ordering::Relaxed) == 0 {
        if let Some(a) = killer {
            if done >= kill_at {
                die_now(a);
            }
        }
        let n = (p.total - done).min(u64::from(p.batch)) as u32;
        if !round_trip(p, t, ctl, &cw, &mut plan, &mut b, n) {
            break;
        }
        if p.verify_reads && p.work == Work::Read {
            check_reads(p, ctl, &b, n as usize);
        }
        done += u64::from(n);
        ctl.completed.0.store(done, Ordering::Release);
        if p.fsync_every > 0 && done / p.fsync_every > synced {
            synced = done / p.fsync_every;
            fsync(t, ctl);
        }
    }
    if p.fsync_end && ctl.errors.load(Ordering::Relaxed) == 0 {
        fsync(t, ctl);
    }
}

/// One round trip of `n` requests, timed by the client in cycles: from before the first request is
/// written to after the last completion is seen (each request: to its own completion). False when a
/// request failed.
fn round_trip<T: Transport>(
    p: &Plan,
    t: &mut T,
    ctl: &Ctl,
    cw: &CycleWriter,
    plan: &mut OpPlan,
    b: &mut Batch,
    n: u32,
) -> bool {
    let op = match p.work {
        Work::Nop => broker::OP_NOP,
        Work::Read => broker::OP_READ_FIXED,
        Work::Write => broker::OP_WRITE_FIXED,
    };
    t.await_sleep(ctl);
    let t0 = cw.now();
    for i in 0..n as usize {
        // SAFETY: buffer i of the data area: `slot` bytes at data + i * slot, i < batch.
        let buf = unsafe { p.data.add(i * p.slot) };
        let (addr, len, off) = if p.work == Work::Nop {
            (0, 0, 0)
        } else {
            let o = plan.next_op();
            b.blocks[i] = o.block;
            b.offs[i] = o.offset;
            if p.work == Work::Write {
                // SAFETY: the buffer holds bs bytes of the body pattern that only this client writes.
                pattern::stamp(
                    unsafe { std::slice::from_raw_parts_mut(buf, p.bs) },
                    p.seed,
                    o.block,
                );
            }
            (buf as u64, p.bs as u32, o.offset)
        };
        let r = Req {
            op,
            fixed: true,
            fd: 0,
            addr,
            len,
            off,
            ud: i as u64,
        };
        if p.no_user_data {
            t.push_without_data(&r);
        } else {
            t.push(&r);
        }
    }
    t.submit(n, ctl);
    let want = if p.work == Work::Nop { 0 } else { p.bs as i64 };
    let mut bad = false;
    let mut k = 0usize;
    let (seen, offs) = (&mut b.seen, &b.offs);
    wait(t, ctl, n, &mut |ud, res| {
        seen[k & 4095] = cw.now();
        k += 1;
        if res != want {
            bad = true;
            if ctl.errors.fetch_add(1, Ordering::Relaxed) == 0 {
                ctl.first_error_res.store(res, Ordering::Relaxed);
                ctl.first_error_offset
                    .store(offs[(ud as usize) & 4095], Ordering::Relaxed);
            }
        }
    });
    let t1 = cw.now();
    cw.round_trip(t1.wrapping_sub(t0));
    for s in &b.seen[..n as usize] {
        cw.request(s.wrapping_sub(t0));
    }
    !bad
}

/// A read batch's blocks against the pattern (--verify), counted in the control block.
fn check_reads(p: &Plan, ctl: &Ctl, b: &Batch, n: usize) {
    for i in 0..n {
        // SAFETY: the scratch block holds bs bytes of the body pattern; buffer i holds what the read
        // brought; nothing else touches either now.
        let (want, got) = unsafe {
            (
                std::slice::from_raw_parts_mut(p.scratch, p.bs),
                std::slice::from_raw_parts(p.data.add(i * p.slot), p.bs),
            )
        };
        pattern::stamp(want, p.seed, b.blocks[i]);
        ctl.blocks_checked.fetch_add(1, Ordering::Relaxed);
        if want != got && ctl.mismatches.fetch_add(1, Ordering::Relaxed) == 0 {
            ctl.first_mismatch_offset
                .store(b.offs[i], Ordering::Relaxed);
        }
    }
}

fn fsync<T: Transport>(t: &mut T, ctl: &Ctl) {
    let r = Req {
        op: broker::OP_FSYNC,
        fixed: true,
        fd: 0,
        addr: 0,
        len: 0,
        off: 0,
        ud: ATTACK_UD - 1,
    };
    let res = one(t, ctl, &r);
    if res < 0 && ctl.errors.fetch_add(1, Ordering::Relaxed) == 0 {
        ctl.first_error_res.store(res, Ordering::Relaxed);
    }
    ctl.flushes.fetch_add(1, Ordering::Relaxed);
}
