//! `--method offload`: a sandboxed client process does I/O without making system calls, through rings in
//! memory it shares with iolab (after the seed hypervisor thesis, which offloaded an isolated partition's
//! syscalls through an io_uring in shared memory).
//!
//! iolab forks the client, which enters seccomp strict mode (read, write and exit only), then performs the
//! workload by writing requests into shared memory and reading completions back. Three paths:
//! - `kernel`: an io_uring whose rings live in the shared memfd (IORING_SETUP_NO_MMAP), served by an SQPOLL
//!   kernel thread pinned away from the client. The ring is made R_DISABLED, the target is registered as
//!   fixed file 0 and the data area as fixed buffer 0, then IORING_REGISTER_RESTRICTIONS allows only NOP,
//!   READ_FIXED, WRITE_FIXED and FSYNC with IOSQE_FIXED_FILE, and no further registration. When the SQ
//!   thread sleeps the client writes an inherited eventfd (the doorbell) and an iolab thread wakes it.
//! - `broker`: iolab's own request format in a shared ring (`broker.rs`); a broker thread copies, checks
//!   and executes each request through its own io_uring.
//! - `native`: the same ring and requests from an unsandboxed client entering the kernel with
//!   io_uring_enter(2): the baseline.
//!
//! Timing: the client cannot read a clock, so iolab's thread sends "go", then samples the client's
//! completion counter every millisecond (CLOCK_MONOTONIC) until the client says "done".

pub mod broker;
pub mod client;
pub mod ring;
pub mod shm;

use crate::error::{Error, Result};
use crate::measure::clock::{ClockInfo, ClockKind};
use crate::measure::cpu::{self, Rusage, RusageDelta};
use crate::measure::hist::{new_hist, summarize};
use crate::result::*;
use crate::spec::{Attack, OffloadPath, OpKind, Spec, SyncEvery};
use crate::sys;
use crate::target;
use client::{Plan, Work};
use shm::{Layout, Region, PAGE};
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The seed thesis's NOP round trips (Jailhouse in QEMU, x86, its Figures 4.1-4.3).
pub const SEED_NATIVE_CYCLES: u64 = 4_137;
pub const SEED_OFFLOADED_CYCLES: u64 = 340_567;

/// Set (to anything) to skip IORING_SETUP_NO_MMAP and take the fallback that kernels before 6.5 need, so
/// the fallback can be tested on a kernel that has NO_MMAP.
pub const FORCE_RING_MMAP: &str = "IOLAB_FORCE_RING_MMAP";

/// How often iolab samples the client's progress.
const WINDOW_MS: i32 = 10;
/// A client that completes nothing for this long is declared hung and killed.
const STALL_S: f64 = 20.0;
const CANARY_BYTE: u8 = 0xC5;
const UNRELATED_BYTE: u8 = b'U';

/// Kills and reaps the client unless it was reaped already (every early return on the parent's side).
struct ClientGuard {
    pid: i32,
    reaped: Option<(i32, libc::rusage)>,
}

impl ClientGuard {
    /// Waits for the client to exit (it is about to), at most `limit_ms`; kills it after that.
    fn reap(&mut self, limit_ms: u64) -> Result<(i32, libc::rusage)> {
        if let Some(r) = self.reaped {
            return Ok(r);
        }
        let t0 = sys::monotonic_ns();
        loop {
            if let Some(r) = sys::wait4_nohang(self.pid).map_err(Error::from)? {
                self.reaped = Some(r);
                return Ok(r);
            }
            if sys::monotonic_ns() - t0 > limit_ms * 1_000_000 {
                let _ = sys::kill(self.pid, libc::SIGKILL);
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
}

impl Drop for ClientGuard {
    fn drop(&mut self) {
        if self.reaped.is_none() {
            let _ = sys::kill(self.pid, libc::SIGKILL);
            let _ = self.reap(0);
        }
    }
}

/// What the client's wait status means, for a message.
fn describe_status(status: i32, sandboxed: bool) -> String {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let why = match sig {
            libc::SIGKILL if sandboxed => {
                " (seccomp strict mode kills a client that makes a forbidden system call; or something else \
                 killed it)"
            }
            libc::SIGKILL => " (something killed it)",
            libc::SIGSEGV => " (it crashed: invalid memory access)",
            _ => "",
        };
        format!("was killed by signal {sig} ({}){why}", signal_name(sig))
    } else {
        let code = libc::WEXITSTATUS(status);
        let why = match code {
            client::EXIT_NO_SANDBOX => " (it could not enter seccomp strict mode)",
            client::EXIT_PARENT_GONE => " (it lost contact with iolab)",
            client::EXIT_ABORTED => " (iolab told it to abort)",
            _ => "",
        };
        format!("exited with status {code}{why}")
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGABRT => "SIGABRT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGILL => "SIGILL",
        _ => "signal",
    }
}

/// Reads one byte from the client's pipe within `timeout_ms`: Ok(Some(b)), Ok(None) on end of file (the
/// client is gone), Err on timeout.
fn read_byte(fd: &OwnedFd, timeout_ms: i32) -> std::result::Result<Option<u8>, ()> {
    let t0 = sys::monotonic_ns();
    loop {
        let left = timeout_ms as i64 - ((sys::monotonic_ns() - t0) / 1_000_000) as i64;
        if left <= 0 {
            return Err(());
        }
        if sys::poll_in(fd.as_raw_fd(), left as i32).unwrap_or(false) {
            let mut b = [0u8; 1];
            return match sys::read(fd.as_raw_fd(), &mut b) {
                Ok(1) => Ok(Some(b[0])),
                Ok(_) => Ok(None),
                Err(e) if e.errno == libc::EINTR => continue,
                Err(_) => Ok(None),
            };
        }
    }
}

/// The unrelated file of the parent's that attacks aim at.
struct Unrelated {
    file: std::fs::File,
    path: tempfile::TempPath,
}

impl Unrelated {
    fn new() -> Result<Unrelated> {
        let mut f = tempfile::Builder::new()
            .prefix("iolab-offload-unrelated-")
            .tempfile()
            .map_err(|e| Error::Runtime(format!("cannot create the unrelated test file: {e}")))?;
        f.write_all(&[UNRELATED_BYTE; PAGE])
            .map_err(|e| Error::Runtime(format!("cannot write the unrelated test file: {e}")))?;
        let (file, path) = f.into_parts();
        Ok(Unrelated { file, path })
    }

    fn intact(&mut self) -> bool {
        let mut v = Vec::new();
        let still_there = std::fs::metadata(&self.path).is_ok();
        still_there
            && self.file.seek(std::io::SeekFrom::Start(0)).is_ok()
            && self.file.read_to_end(&mut v).is_ok()
            && v == [UNRELATED_BYTE; PAGE]
    }
}

/// Which part of the sandbox refuses an attack, on each path.
fn refused_by(path: OffloadPath, a: Attack) -> &'static str {
    match (path, a) {
        (OffloadPath::Broker, Attack::Rewrite) => {
            "the broker's private copy: it checks and runs what it copied, never the shared slot again \
             (the unrelated file's check says whether the raw-fd write ever ran)"
        }
        (OffloadPath::Broker, _) => "the broker's policy",
        (_, Attack::Opcode) | (_, Attack::RawFd) => {
            "io_uring restrictions (IORING_REGISTER_RESTRICTIONS)"
        }
        (_, Attack::Slot) => "the ring's registered file table (one slot)",
        (_, Attack::BufAddr) | (_, Attack::BufLen) => {
            "the ring's registered buffer bounds (the data area)"
        }
        _ => "",
    }
}

fn describe_attack(a: Attack) -> &'static str {
    match a {
        Attack::Opcode => "IORING_OP_READ (not READ_FIXED) of file slot 0 into iolab's private canary page",
        Attack::RawFd => "WRITE_FIXED of 4 KiB to a raw descriptor: iolab's unrelated open file",
        Attack::Slot => "WRITE_FIXED of 4 KiB to file slot 1 (only slot 0 exists)",
        Attack::BufAddr => "READ_FIXED of 4 KiB into iolab's private canary page, outside the region",
        Attack::BufLen => "READ_FIXED of 8 KiB from the region's last page, running 4 KiB past its end",
        Attack::Rewrite => "a NOP published, then rewritten back and forth in the shared ring between itself and a raw-fd write of iolab's unrelated file until it completes (200 tries)",
        Attack::Syscall => "a forbidden system call (getppid) mid-run",
        Attack::Crash => "a wild memory access mid-run",
    }
}

/// Runs one offload workload and measures it.
pub fn run(spec: &Spec, clock: &ClockInfo) -> Result<RunResult> {
    let host = Host::current();
    let o = &spec.offload;
    let sandboxed = o.path != OffloadPath::Native;
    let target = target::setup(spec)?;
    if target.kind.is_stream() {
        return Err(Error::usage(
            "--target",
            "--method offload registers the target as an io_uring fixed file: use a regular file, /dev/null, \
             /dev/zero or a block device, not a stream",
        ));
    }
    if spec.verify
        && spec.op == OpKind::Read
        && !(target.kind == crate::target::TargetKind::File && target.created)
    {
        return Err(Error::usage(
            "--verify",
            "a read run is checked against iolab's pattern, which only a file iolab creates (and fills) holds: \
             give a new file as --target",
        ));
    }
    let file = target.open_for(spec, spec.op == OpKind::Write)?;
    let work = if spec.ring.nop_requests {
        Work::Nop
    } else if spec.op == OpKind::Write {
        Work::Write
    } else {
        Work::Read
    };
    let bs = spec.bs as usize;
    let batch = spec.batch;
    let entries = batch.next_power_of_two().max(8);
    let (rings_len, sqes_len) = ring::ring_bytes(entries);
    let ring_len = match o.path {
        OffloadPath::Broker => std::mem::size_of::<broker::Rings>(),
        _ => rings_len + sqes_len,
    };
    let layout = Layout {
        ring_len,
        slot: shm::page_up(bs.max(1)),
        buffers: batch as usize,
    };
    if let Some(lim) = sys::memlock_limit() {
        if sys::geteuid() != 0 && layout.data_len() as u64 > lim {
            return Err(Error::usage(
                "--batch",
                format!(
                    "the data area ({} bytes: --batch + 1 blocks of --bs, and a page) is registered with io_uring and \
                     would exceed RLIMIT_MEMLOCK ({lim} bytes): lower --batch or --bs",
                    layout.data_len()
                ),
            ));
        }
    }
    // Declared before every ring and thread that uses it, so it is unmapped last.
    let region = Region::new(layout)?;
    let ctl = region.ctl();
    if work != Work::Nop {
        for i in 0..=layout.buffers {
            // SAFETY: block i (i == buffers: the scratch block) holds `slot` >= bs bytes of the region,
            // which nothing else uses yet.
            let b = unsafe { std::slice::from_raw_parts_mut(region.buffer(i), bs) };
            crate::pattern::fill_body(b, spec.seed);
        }
    }
    let canary =
        sys::Mapping::anonymous(PAGE).map_err(|e| Error::sys_hint(e, "the canary page"))?;
    // SAFETY: the canary mapping is PAGE writable bytes owned here.
    unsafe { std::ptr::write_bytes(canary.as_ptr(), CANARY_BYTE, PAGE) };
    let mut unrelated = if o.attacks.iter().any(|a| !a.kills_client()) {
        Some(Unrelated::new()?)
    } else {
        None
    };

    // CPUs: the client on the last allowed CPU, the server (SQ thread or broker) on the first.
    let cpus = sys::allowed_cpus();
    let (client_cpu, service_cpu) = if cpus.len() >= 2 {
        (cpus.last().copied(), cpus.first().copied())
    } else {
        (None, None)
    };
    let sq_cpu = spec.ring.sq_cpu.or(service_cpu);
    let mut notes = target.notes.clone();
    let mut fallbacks = Vec::new();
    if cpus.len() < 2 && o.path != OffloadPath::Native {
        notes.push(
            "only one CPU is usable: the client and its server share it, so every round trip waits for \
             the scheduler"
                .into(),
        );
    }
    if o.path == OffloadPath::Kernel && sq_cpu.is_some() && sq_cpu == client_cpu {
        notes.push(format!(
            "--sq-cpu {} is the client's CPU: the SQ thread and the spinning client take turns at scheduler ticks",
            sq_cpu.unwrap_or(0)
        ));
    }
    let bell = sys::eventfd(0).map_err(|e| Error::sys_hint(e, "the doorbell eventfd"))?;
    let data_len = layout.data_len();
    let fd = file.as_raw_fd();

    // The server side.
    let mut uring: Option<ring::OwnedRing> = None;
    let mut rings_in = "the shared memfd (IORING_SETUP_NO_MMAP)";
    let mut broker_ring: Option<io_uring::IoUring> = None;
    let service;
    match o.path {
        OffloadPath::Kernel | OffloadPath::Native => {
            let (rings, sqes) = (region.ring_ptr(), {
                // SAFETY: the SQE part follows the rings part inside the ring area.
                unsafe { region.ring_ptr().add(rings_len) }
            });
            let flags = if o.path == OffloadPath::Kernel {
                sys::IORING_SETUP_SQPOLL | sys::IORING_SETUP_R_DISABLED
            } else {
                0
            };
            let sq = if o.path == OffloadPath::Kernel {
                sq_cpu
            } else {
                None
            };
            let idle = spec.ring.sq_idle_ms;
            let forced = std::env::var_os(FORCE_RING_MMAP).is_some();
            let tried = if forced {
                Err(sys::SysErr::new("io_uring_setup", libc::EINVAL))
            } else {
                // SAFETY: `rings` and `sqes` are the page-aligned, zeroed ring area of the region, sized
                // by ring_bytes(entries); the region outlives the ring (declared before it).
                unsafe { ring::setup(rings, sqes, entries, flags, idle, sq) }
            };
            let r = match tried {
                Ok(r) => r,
                Err(e) if e.errno == libc::EINVAL => {
                    let r = ring::setup_mapped(entries, flags, idle, sq).map_err(Error::from)?;
                    fallbacks.push(if forced {
                        format!("rings: IORING_SETUP_NO_MMAP not tried ({FORCE_RING_MMAP} is set): the rings are the kernel's own, mapped from the ring fd (MAP_SHARED) and shared with the client over fork")
                    } else {
                        "rings: IORING_SETUP_NO_MMAP refused (EINVAL; it needs Linux 6.5+): the rings are the kernel's own, mapped from the ring fd (MAP_SHARED) and shared with the client over fork".into()
                    });
                    rings_in = "the kernel's ring memory, mapped from the ring fd (MAP_SHARED) before fork";
                    r
                }
                Err(e) => return Err(Error::from(e)),
            };
            r.register(fd, region.data_ptr(), data_len).map_err(|e| {
                Error::sys_hint(
                    e,
                    format!(
                        "registering the target and the {data_len}-byte data area (ENOMEM: RLIMIT_MEMLOCK; lower --batch or --bs)"
                    ),
                )
            })?;
            if o.path == OffloadPath::Kernel {
                r.restrict_and_enable(&broker::ALLOWED_OPS).map_err(|e| {
                    Error::sys_hint(e, "IORING_REGISTER_RESTRICTIONS (Linux 5.10+)")
                })?;
                service = format!(
                    "io_uring, rings and SQEs in {rings_in}, SQPOLL thread{} \
                     (sq_thread_idle {} ms), created R_DISABLED; target = fixed file 0, data area ({data_len} \
                     bytes) = fixed buffer 0; restrictions: only NOP, READ_FIXED, WRITE_FIXED, FSYNC, \
                     IOSQE_FIXED_FILE required and no other flag, no register operation; doorbell = eventfd \
                     -> iolab thread -> IORING_ENTER_SQ_WAKEUP",
                    sq_cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default(),
                    spec.ring.sq_idle_ms
                );
            } else {
                service = format!(
                    "io_uring, rings and SQEs in {rings_in}, no SQPOLL; target = \
                     fixed file 0, data area ({data_len} bytes) = fixed buffer 0; the client calls \
                     io_uring_enter(submit {batch}, wait {batch}) per batch; no restrictions"
                );
            }
            uring = Some(r);
        }
        OffloadPath::Broker => {
            let r = io_uring::IoUring::builder()
                .build(entries)
                .map_err(|e| Error::Runtime(format!("the broker's io_uring: {e}")))?;
            r.submitter().register_files(&[fd]).map_err(|e| {
                Error::Runtime(format!(
                    "the broker's io_uring: registering the target: {e}"
                ))
            })?;
            let iov = [libc::iovec {
                iov_base: region.data_ptr().cast(),
                iov_len: data_len,
            }];
            // SAFETY: the data area stays mapped until after the broker's ring is dropped (the region is
            // declared first, so it is dropped last).
            unsafe { r.submitter().register_buffers(&iov) }.map_err(|e| {
                Error::Runtime(format!(
                    "the broker's io_uring: registering the {data_len}-byte data area: {e} (ENOMEM: RLIMIT_MEMLOCK)"
                ))
            })?;
            service = format!(
                "iolab's request ring ({} entries of 40 bytes) and completion ring in the shared memfd; broker \
                 thread{} copies each request, checks it (ops NOP, READ_FIXED, WRITE_FIXED, FSYNC; file slot \
                 0 only; buffer inside the {data_len}-byte data area; length <= {} bytes) and runs it through \
                 its own io_uring (target and data area registered); doorbell: {}",
                broker::ENTRIES,
                service_cpu.map(|c| format!(" on CPU {c}")).unwrap_or_default(),
                layout.slot,
                o.doorbell.name()
            );
            broker_ring = Some(r);
        }
    }

    let (go_r, go_w) = sys::pipe().map_err(Error::from)?;
    let (done_r, done_w) = sys::pipe().map_err(Error::from)?;
    let mut attacks = [None; 8];
    for (i, a) in o.attacks.iter().enumerate().take(8) {
        attacks[i] = Some(*a);
    }
    let plan = Plan {
        work,
        bs,
        slot: layout.slot,
        batch,
        total: spec.ops.unwrap_or(u64::MAX),
        pattern: spec.pattern,
        offset: spec.offset,
        nblocks: target.region_blocks,
        seed: spec.seed,
        verify_reads: spec.verify && work == Work::Read,
        fsync_every: match spec.fsync {
            SyncEvery::Every(k) => k,
            _ => 0,
        },
        fsync_end: spec.fsync == SyncEvery::End,
        data: region.data_ptr(),
        scratch: region.buffer(layout.buffers),
        attack_page: region.attack_page(),
        canary: canary.as_ptr(),
        unrelated_fd: unrelated.as_ref().map_or(-1, |u| u.file.as_raw_fd()),
        attacks,
        ctl,
        go_fd: go_r.as_raw_fd(),
        done_fd: done_w.as_raw_fd(),
        cpu: client_cpu,
        sandbox: sandboxed,
        parent: std::process::id() as i32,
    };
    let pid = match o.path {
        OffloadPath::Kernel => {
            let t = client::KernelT {
                q: ring::SqCq::new(uring.as_ref().expect("set above").ptrs),
                bell: bell.as_raw_fd(),
            };
            fork_client(plan, t)?
        }
        OffloadPath::Native => {
            let r = uring.as_ref().expect("set above");
            let t = client::NativeT {
                q: ring::SqCq::new(r.ptrs),
                fd: r.raw_fd(),
            };
            fork_client(plan, t)?
        }
        OffloadPath::Broker => {
            let t = client::BrokerT {
                rings: region.ring_ptr() as *const broker::Rings,
                tail: 0,
                head: 0,
                data: region.data_ptr() as u64,
                doorbell: o.doorbell,
                bell: bell.as_raw_fd(),
            };
            fork_client(plan, t)?
        }
    };
    let mut guard = ClientGuard { pid, reaped: None };
    drop(go_r);
    drop(done_w);
    // The kernel's count of the client's system calls, opened before it may make any in its sandbox.
    let (kcount, kcount_note) = match crate::measure::counters::trace_ids() {
        Err(why) => (None, why),
        Ok(ids) => match ids.sys_exit {
            None => (None, "no raw_syscalls:sys_exit tracepoint in tracefs".to_string()),
            Some(id) => match sys::perf_event_open_task(sys::perf::PERF_TYPE_TRACEPOINT, id, pid) {
                Ok(fd) => (
                    Some(fd),
                    format!(
                        "raw_syscalls:sys_exit on the client pid, opened before it entered {}: that read, {}every call after",
                        if sandboxed { "its sandbox" } else { "its workload" },
                        if sandboxed { "the prctl that sandboxed it and " } else { "" }
                    ),
                ),
                Err(e) => (None, format!("perf_event_open of the client's tracepoint failed: {}", sys::errno_name(e.errno))),
            },
        },
    };
    sys::write(go_w.as_raw_fd(), b"S").map_err(Error::from)?;
    let died = |guard: &mut ClientGuard, when: &str| -> Error {
        let done = ctl.completed.0.load(Ordering::Relaxed);
        let status = guard
            .reap(2000)
            .map(|(s, _)| describe_status(s, sandboxed))
            .unwrap_or_else(|e| format!("could not be waited for ({e})"));
        let errno = ctl.sandbox_errno.load(Ordering::Relaxed);
        let extra = if errno != 0 {
            format!(
                ": prctl(PR_SET_SECCOMP) failed with {}",
                sys::errno_name(errno as i32)
            )
        } else {
            String::new()
        };
        Error::Runtime(format!(
            "the offload client (pid {pid}) {status}{extra} {when}, after {done} of {} ops",
            spec.ops.map_or("?".to_string(), |n| n.to_string())
        ))
    };
    match read_byte(&done_r, 10_000) {
        Ok(Some(b'R')) => {}
        Ok(_) => return Err(died(&mut guard, "while entering its sandbox")),
        Err(()) => {
            return Err(Error::Runtime(format!(
                "the offload client (pid {pid}) did not report ready within 10 s"
            )))
        }
    }

    let bell_stop = AtomicBool::new(false);
    let wakeups = AtomicU64::new(0);
    let shared = broker::Shared::default();
    let send = |b: u8| sys::write(go_w.as_raw_fd(), &[b]).map(|_| ());
    let m = std::thread::scope(|s| -> Result<Measured> {
        // Start the server threads, stopped on every way out of this scope.
        let stopper = Stopper {
            bell_stop: &bell_stop,
            shared: &shared,
            bell: bell.as_raw_fd(),
        };
        match o.path {
            OffloadPath::Kernel => {
                let ring_fd = uring.as_ref().expect("set above").raw_fd();
                let (bell_fd, stop, wk) = (bell.as_raw_fd(), &bell_stop, &wakeups);
                std::thread::Builder::new()
                    .name("iolab-bell".into())
                    .spawn_scoped(s, move || doorbell_thread(bell_fd, ring_fd, stop, wk))
                    .map_err(|e| {
                        Error::Runtime(format!("cannot start the doorbell thread: {e}"))
                    })?;
            }
            OffloadPath::Broker => {
                let b = broker::Broker {
                    rings: region.ring_ptr() as *const broker::Rings,
                    data: region.data_ptr(),
                    policy: broker::Policy {
                        files: 1,
                        data_len: data_len as u64,
                        max_len: layout.slot as u32,
                    },
                    ring: broker_ring.take().expect("set above"),
                    doorbell: o.doorbell,
                    bell_fd: bell.as_raw_fd(),
                    cpu: service_cpu,
                };
                let sh = &shared;
                std::thread::Builder::new()
                    .name("iolab-broker".into())
                    .spawn_scoped(s, move || b.serve(sh))
                    .map_err(|e| Error::Runtime(format!("cannot start the broker thread: {e}")))?;
            }
            OffloadPath::Native => {}
        }
        let sq_ring =
            (o.path == OffloadPath::Kernel).then(|| uring.as_ref().expect("set above").raw_fd());
        let link = Link {
            send: &send,
            done_r: &done_r,
            died: &died,
        };
        let out = drive(spec, ctl, &link, &mut guard, &shared, sq_ring);
        stopper.stop();
        out
    })?;

    let ops = m.ops;
    let (_, client_ru) = guard.reap(5000)?;
    let client_syscalls_kernel = kcount
        .as_ref()
        .and_then(|fd| sys::perf_read(fd.as_raw_fd()).ok());
    drop(uring);
    let wall_ns = m.t1.saturating_sub(m.t0) as f64;
    let wall_s = wall_ns * 1e-9;
    if let Some(msg) = shared
        .failure
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        return Err(Error::Runtime(msg));
    }
    let errors = ctl.errors.load(Ordering::Relaxed);
    if errors > 0 {
        let res = ctl.first_error_res.load(Ordering::Relaxed);
        return Err(Error::Runtime(format!(
            "{errors} offloaded request(s) failed; the first, at byte offset {} of {}, with {}",
            ctl.first_error_offset.load(Ordering::Relaxed),
            target.path.display(),
            if res < 0 {
                format!("{} ({})", sys::errno_name(-res as i32), -res)
            } else {
                format!("a short transfer of {res} bytes (expected {bs})")
            }
        )));
    }

    // The sandbox's checks.
    // SAFETY: the canary mapping is PAGE readable bytes; the client and the kernel are done with it.
    let canary_intact = unsafe { std::slice::from_raw_parts(canary.as_ptr(), PAGE) }
        .iter()
        .all(|&b| b == CANARY_BYTE);
    let unrelated_intact = unrelated.as_mut().map(|u| u.intact());
    let mut outcomes = Vec::new();
    let mut attack_refusals = 0u64;
    for a in o.attacks.iter().filter(|a| !a.kills_client()) {
        let idx = Attack::ALL.iter().position(|x| x == a).unwrap_or(0);
        let res = ctl.attack_res[idx].load(Ordering::Relaxed);
        let mut out = AttackOutcome {
            attack: a.name().into(),
            request: describe_attack(*a).into(),
            result: res,
            refused: res < 0 && res != shm::NOT_RUN,
            refused_by: String::new(),
            ..Default::default()
        };
        if *a == Attack::Rewrite {
            let tries = ctl.rewrite_tries.load(Ordering::Relaxed);
            let refused = ctl.rewrite_refused.load(Ordering::Relaxed);
            let orig = ctl.rewrite_ran_original.load(Ordering::Relaxed);
            let other = ctl.rewrite_other.load(Ordering::Relaxed);
            out.tries = Some(tries);
            out.refused_tries = Some(refused);
            out.original_ran = Some(orig);
            out.other_allowed_ran = Some(other);
            // The rewritten request was refused whenever the broker saw it; whether a raw-fd write ever ran
            // anyway is what the unrelated file's check below says.
            out.refused = tries > 0 && refused > 0 && res < 0;
        }
        if out.refused {
            out.refused_by = refused_by(o.path, *a).into();
            attack_refusals += 1;
        }
        outcomes.push(out);
    }
    let refusals = match o.path {
        OffloadPath::Broker => shared.refusals.load(Ordering::Relaxed),
        _ => attack_refusals,
    };
    let mut breach = Vec::new();
    if !canary_intact {
        breach.push("iolab's private canary page was changed".to_string());
    }
    if unrelated_intact == Some(false) {
        breach.push("iolab's unrelated open file was changed or removed".to_string());
    }
    for out in outcomes.iter().filter(|x| !x.refused) {
        breach.push(format!(
            "attack {} was not refused (result {})",
            out.attack, out.result
        ));
    }
    if !breach.is_empty() {
        return Err(Error::Runtime(format!(
            "the {} path's sandbox did not hold: {}",
            o.path.name(),
            breach.join("; ")
        )));
    }

    // Figures.
    let verify = if spec.verify {
        match work {
            Work::Write => Some(crate::verify::verify(spec, &target, &[ops])?),
            Work::Read => {
                let checked = ctl.blocks_checked.load(Ordering::Relaxed);
                let mism = ctl.mismatches.load(Ordering::Relaxed);
                Some(VerifyFigures {
                    blocks_checked: checked,
                    bytes_checked: checked * spec.bs,
                    mismatches: mism,
                    first_mismatch_offsets: if mism > 0 {
                        vec![ctl.first_mismatch_offset.load(Ordering::Relaxed)]
                    } else {
                        Vec::new()
                    },
                })
            }
            Work::Nop => None,
        }
    } else {
        None
    };
    let service_tasks = cpu::task_deltas(&m.tasks0, &m.tasks1, |c| match o.path {
        OffloadPath::Kernel => {
            c.starts_with("iou-sqp-") || c.starts_with("iou-wrk-") || c == "iolab-bell"
        }
        OffloadPath::Broker => c == "iolab-broker" || c.starts_with("iou-wrk-"),
        OffloadPath::Native => false,
    });
    let punted: f64 = service_tasks
        .iter()
        .filter(|h| h.comm.starts_with("iou-wrk-"))
        .map(|h| h.oncpu_s.unwrap_or(h.user_s + h.sys_s))
        .sum();
    if punted > 0.0 {
        notes.push(format!(
            "io_uring punted these requests to io-wq worker threads (iou-wrk, {punted:.3} s on CPU): the kernel \
             cannot complete buffered file I/O inline here, so each request waits for a worker"
        ));
    }
    // fold from +0.0: an empty f64 sum is -0.0, which JSON would carry as "-0.0".
    let service_cpu_s: f64 = service_tasks
        .iter()
        .map(|h| h.oncpu_s.unwrap_or(h.user_s + h.sys_s))
        .fold(0.0, |a, b| a + b);
    let tsc_ghz = (clock.kind == ClockKind::Tsc).then_some(clock.hz * 1e-9);
    let ns_per_op = if ops > 0 { wall_ns / ops as f64 } else { 0.0 };
    let batches = ops.div_ceil(u64::from(batch)).max(1);
    let round_trip_ns = wall_ns / batches as f64;
    let moved = if work == Work::Nop { 0 } else { spec.bs };
    let bytes = ops * moved;
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    let process = RusageDelta::between(&m.ru0, &m.ru1);
    let window_ns = summarize(&m.hist, 0.1);
    let figures = OffloadFigures {
        path: o.path.name().into(),
        doorbell: (o.path == OffloadPath::Broker).then(|| o.doorbell.name().into()),
        sandbox: if sandboxed {
            "seccomp strict mode (read, write, exit only), entered by the client after fork".into()
        } else {
            "none (native baseline: the client may make any system call)".into()
        },
        service,
        client_pid: pid,
        client_cpu,
        service_cpu: match o.path {
            OffloadPath::Kernel => sq_cpu,
            OffloadPath::Broker => service_cpu,
            OffloadPath::Native => None,
        },
        batch,
        timing: format!(
            "iolab's thread takes CLOCK_MONOTONIC just before writing 'go' to the client's pipe and just after \
             reading its 'done' byte (each crossing wakes a sleeping task: ~10-50 us here, inside the wall \
             time); in between it samples the client's shared completion counter every {WINDOW_MS} ms. The \
             client cannot read a clock (seccomp strict mode forbids it). Setup, attacks and the sandbox entry \
             are outside the timed span"
        ),
        ns_per_op,
        round_trip_ns,
        tsc_ghz,
        cycles_per_op: tsc_ghz.map(|g| ns_per_op * g),
        round_trip_cycles: tsc_ghz.map(|g| round_trip_ns * g),
        ops_per_s: if wall_s > 0.0 { ops as f64 / wall_s } else { 0.0 },
        window_ns: window_ns.clone(),
        window_ms: f64::from(WINDOW_MS),
        windows: m.windows,
        doorbells: ctl.doorbells.load(Ordering::Relaxed)
            - ctl.doorbells_at_go.load(Ordering::Relaxed),
        doorbells_total: ctl.doorbells.load(Ordering::Relaxed),
        server_wakeups: match o.path {
            OffloadPath::Kernel => wakeups.load(Ordering::Relaxed),
            OffloadPath::Broker => shared.wakeups.load(Ordering::Relaxed),
            OffloadPath::Native => 0,
        },
        client_syscalls_timed: ctl.timed_syscalls.load(Ordering::Relaxed),
        client_syscalls_total: ctl.syscalls.load(Ordering::Relaxed),
        client_syscalls_kernel,
        client_syscalls_kernel_note: kcount_note,
        service_cpu_s,
        service_cpu_share: if wall_s > 0.0 { service_cpu_s / wall_s } else { 0.0 },
        service_tasks: service_tasks.clone(),
        client_user_s: tv(client_ru.ru_utime),
        client_sys_s: tv(client_ru.ru_stime),
        refusals,
        broker_executed: (o.path == OffloadPath::Broker)
            .then(|| shared.executed.load(Ordering::Relaxed)),
        attacks: outcomes,
        canary_intact,
        unrelated_file_intact: unrelated_intact,
        seed_native_cycles: SEED_NATIVE_CYCLES,
        seed_offloaded_cycles: SEED_OFFLOADED_CYCLES,
        seed_note: "Reichenbach's thesis (Jailhouse hypervisor emulated in QEMU on x86, 2 cores): NOP round trip \
                    4,137 cycles from plain user space, 340,567 cycles offloaded from the isolated partition \
                    through the shared-memory io_uring; batch 1"
            .into(),
    };
    if let Some(r) = &clock.fallback_reason {
        fallbacks.push(format!(
            "clock: TSC not used ({r}); cycles are not given, only ns"
        ));
    }
    let client_cpu_delta = RusageDelta {
        user_s: figures.client_user_s,
        sys_s: figures.client_sys_s,
        voluntary_ctx_switches: client_ru.ru_nvcsw.max(0) as u64,
        involuntary_ctx_switches: client_ru.ru_nivcsw.max(0) as u64,
        minor_faults: client_ru.ru_minflt.max(0) as u64,
        major_faults: client_ru.ru_majflt.max(0) as u64,
    };
    let cpu_total = process.user_s + process.sys_s + figures.client_user_s + figures.client_sys_s;
    // Steal time over the timed span: the hypervisor ran something else on our virtual CPUs.
    let steal = cpu::Steal {
        before: &m.steal0,
        after: &m.steal1,
    };
    let steal_all = steal.all();
    // The client's and the server's CPUs, when both are pinned.
    let steal_pinned = match (client_cpu, figures.service_cpu) {
        (Some(c), Some(s)) if c != s => Some(steal.on(c as usize) + steal.on(s as usize)),
        (Some(c), None) if o.path == OffloadPath::Native => Some(steal.on(c as usize)),
        _ => None,
    };
    notes.extend(steal.note(wall_s));
    let mut result = RunResult {
        schema_version: SCHEMA_VERSION,
        host,
        spec: spec.clone(),
        target: TargetInfo::of(&target, None),
        clock: clock.clone(),
        timed: figures.timing.clone(),
        excluded: format!(
            "file creation, the shared region, ring and broker setup, fork, the client's entry into its sandbox, \
             the attack phase, {}and --verify of writes",
            if o.path == OffloadPath::Kernel {
                "the SQPOLL thread's first wake-up (iolab wakes it just before 'go'), "
            } else {
                ""
            }
        ),
        wall_s,
        ops,
        bytes,
        iops: figures.ops_per_s,
        mib_s: if wall_s > 0.0 { bytes as f64 / wall_s / (1 << 20) as f64 } else { 0.0 },
        ns_per_op,
        latency: window_ns,
        gap: Default::default(),
        flushes: FlushFigures {
            calls: ctl.flushes.load(Ordering::Relaxed),
            ..Default::default()
        },
        cpu: CpuFigures {
            process,
            workers: client_cpu_delta,
            helpers_user_s: service_tasks.iter().map(|h| h.user_s).sum(),
            helpers_sys_s: service_tasks.iter().map(|h| h.sys_s).sum(),
            helpers: service_tasks,
            cores_busy: if wall_s > 0.0 { cpu_total / wall_s } else { 0.0 },
            runqueue_wait_s: cpu::run_delay_delta_s(&m.tasks0, &m.tasks1),
            steal_all_cpus_s: steal_all,
            steal_worker_cpus_s: steal_pinned,
            tasks: m.tasks1.len(),
        },
        syscalls: SyscallFigures {
            method_count: Some(figures.client_syscalls_timed),
            method_per_op: (ops > 0).then(|| figures.client_syscalls_timed as f64 / ops as f64),
            uring_enters: (o.path == OffloadPath::Native).then_some(batches),
            uring_requests: (o.path == OffloadPath::Native).then_some(ops),
            kernel_rw: Default::default(),
            kernel_rw_per_op: 0.0,
            note: match o.path {
                OffloadPath::Native => "the client's io_uring_enter(2) calls (one per batch) and its done signal",
                _ => "the client's own system calls while timed: doorbells (eventfd writes) and its done signal; \
                      nothing else is possible in seccomp strict mode",
            }
            .into(),
        },
        uring: None,
        aio: None,
        nowait: None,
        per_thread: vec![ThreadFigures {
            thread: 0,
            ops,
            bytes,
            wall_s,
        }],
        verify,
        kernel: KernelFigures {
            count_mode: spec.count,
            notes: vec![
                "tracepoints are not counted for --method offload: the client's system calls are counted by the \
                 client itself (all it can make are read, write and exit)"
                    .into(),
            ],
            ..Default::default()
        },
        derived: Default::default(),
        findings: Vec::new(),
        fallbacks,
        notes,
        offload: Some(figures),
    };
    result.findings = crate::findings::findings(&result);
    Ok(result)
}

/// What the timed span measured.
struct Measured {
    t0: u64,
    t1: u64,
    ops: u64,
    hist: crate::measure::hist::Hist,
    windows: u64,
    tasks0: Vec<cpu::TaskTimes>,
    tasks1: Vec<cpu::TaskTimes>,
    ru0: Rusage,
    ru1: Rusage,
    /// Steal ticks per CPU (/proc/stat) at go and at done.
    steal0: Vec<u64>,
    steal1: Vec<u64>,
}

/// Stops the server threads (they are joined when the scope ends).
struct Stopper<'a> {
    bell_stop: &'a AtomicBool,
    shared: &'a broker::Shared,
    bell: i32,
}

impl Stopper<'_> {
    fn stop(&self) {
        self.bell_stop.store(true, Ordering::SeqCst);
        self.shared.stop.store(true, Ordering::SeqCst);
        let _ = sys::eventfd_ring(self.bell);
    }
}

/// Kernel path: wakes the SQPOLL thread each time the client rings.
fn doorbell_thread(bell: i32, ring_fd: i32, stop: &AtomicBool, wakeups: &AtomicU64) {
    let mut v = [0u8; 8];
    loop {
        match sys::read(bell, &mut v) {
            Ok(_) => {}
            Err(e) if e.errno == libc::EINTR => continue,
            Err(_) => return,
        }
        if stop.load(Ordering::SeqCst) {
            return;
        }
        wakeups.fetch_add(1, Ordering::Relaxed);
        let _ = sys::io_uring_enter(ring_fd, 0, 0, sys::IORING_ENTER_SQ_WAKEUP);
    }
}

/// Attack phase, then the timed workload with sampling, watchdog and duration.
/// iolab's end of the client's pipes, and how to explain its death.
struct Link<'a> {
    send: &'a dyn Fn(u8) -> sys::SysResult<()>,
    done_r: &'a OwnedFd,
    died: &'a dyn Fn(&mut ClientGuard, &str) -> Error,
}

fn drive(
    spec: &Spec,
    ctl: &shm::Ctl,
    link: &Link,
    guard: &mut ClientGuard,
    shared: &broker::Shared,
    sq_ring: Option<i32>,
) -> Result<Measured> {
    let Link { send, done_r, died } = *link;
    if spec.offload.attacks.iter().any(|a| !a.kills_client()) {
        send(b'A').map_err(Error::from)?;
        match read_byte(done_r, 60_000) {
            Ok(Some(b'a')) => {}
            Ok(_) => return Err(died(guard, "during the attack phase")),
            Err(()) => {
                return Err(Error::Runtime(
                    "the offload client did not finish its attack phase within 60 s".into(),
                ))
            }
        }
    }
    if let Some(fd) = sq_ring {
        // The SQPOLL thread sleeps since setup (or the attack phase): wake it now, so the timed span does
        // not start with the client's first doorbell (its cost is in every later doorbell's figures).
        let _ = sys::io_uring_enter(fd, 0, 0, sys::IORING_ENTER_SQ_WAKEUP);
    }
    let tasks0 = cpu::read_tasks();
    let steal0 = cpu::steal_per_cpu();
    let ru0 = Rusage::process();
    let mut hist = new_hist();
    let mut windows = 0u64;
    let t0 = sys::monotonic_ns();
    send(b'G').map_err(Error::from)?;
    let (mut last_t, mut last_c) = (t0, 0u64);
    let mut stall_since = t0;
    let mut stopped = false;
    let t1 = loop {
        let ready = sys::poll_in(done_r.as_raw_fd(), WINDOW_MS).map_err(Error::from)?;
        let now = sys::monotonic_ns();
        let c = ctl.completed.0.load(Ordering::Acquire);
        if c > last_c {
            let per_op_tenths = ((now - last_t) as f64 * 10.0 / (c - last_c) as f64).round() as u64;
            let _ = hist.record_n(per_op_tenths.max(1), c - last_c);
            windows += 1;
            last_t = now;
            last_c = c;
            stall_since = now;
        }
        if ready {
            let mut b = [0u8; 1];
            match sys::read(done_r.as_raw_fd(), &mut b) {
                Ok(1) if b[0] == b'D' => break now,
                Err(e) if e.errno == libc::EINTR => continue,
                _ => return Err(died(guard, "mid-run")),
            }
        }
        if let Some(msg) = shared
            .failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            ctl.stop.0.store(2, Ordering::SeqCst);
            return Err(Error::Runtime(format!("the broker stopped: {msg}")));
        }
        if let Some(d) = spec.duration_s {
            if !stopped && (now - t0) as f64 * 1e-9 >= d {
                ctl.stop.0.store(1, Ordering::SeqCst);
                stopped = true;
            }
        }
        if (now - stall_since) as f64 * 1e-9 > STALL_S {
            ctl.stop.0.store(2, Ordering::SeqCst);
            let _ = sys::kill(guard.pid, libc::SIGKILL);
            let _ = guard.reap(2000);
            return Err(Error::Runtime(format!(
                "the offload client completed nothing for {STALL_S} s (after {c} ops): it was killed; \
                 its server may have stopped"
            )));
        }
    };
    let tasks1 = cpu::read_tasks();
    let steal1 = cpu::steal_per_cpu();
    let ru1 = Rusage::process();
    Ok(Measured {
        t0,
        t1,
        ops: ctl.completed.0.load(Ordering::Acquire),
        hist,
        windows,
        tasks0,
        tasks1,
        ru0,
        ru1,
        steal0,
        steal1,
    })
}

/// Forks the client, which runs `client::main` and never returns.
fn fork_client<T: client::Transport>(plan: Plan, t: T) -> Result<i32> {
    match sys::fork().map_err(Error::from)? {
        0 => client::main(plan, t),
        pid => Ok(pid),
    }
}
