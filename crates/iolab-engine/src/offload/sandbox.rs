//! The sandbox side of an offload run: the client process (forked, sandboxed by itself, told what to do
//! through two pipes, watched and timed from outside), the bait its attacks aim at (iolab's private canary
//! page and an unrelated open file) and the checks that the sandbox held.

use super::broker;
use super::client::{self, Plan, Work};
use super::ring;
use super::server::Server;
use super::setup::{Shape, Span, CANARY_BYTE, STALL_S, UNRELATED_BYTE, WINDOW_MS};
use super::shm::{Ctl, Region, PAGE};
use super::watch::Seen;
use crate::error::{Error, Result};
use crate::measure::hist::Hist;
use crate::result::AttackOutcome;
use crate::spec::{Attack, OffloadPath, Spec, SyncEvery};
use iolab_sys as sys;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;

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
pub fn describe_status(status: i32, sandboxed: bool) -> String {
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        let why = match sig {
            libc::SIGSYS if sandboxed => {
                " (its seccomp filter killed it: it made a system call other than read, write, exit and \
                 exit_group)"
            }
            libc::SIGKILL => " (something killed it)",
            libc::SIGSEGV => " (it crashed: invalid memory access)",
            _ => "",
        };
        format!("was killed by signal {sig} ({}){why}", signal_name(sig))
    } else {
        let code = libc::WEXITSTATUS(status);
        let why = match code {
            client::EXIT_NO_SANDBOX => " (it could not install its seccomp filter)",
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
        libc::SIGSYS => "SIGSYS",
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
    path: std::path::PathBuf,
    /// Removes it at the end (and on a signal); journaled for `iolab clean` after a kill.
    _created: crate::cleanup::Created,
}

impl Unrelated {
    fn new() -> Result<Unrelated> {
        let (fd, _created) = crate::cleanup::Created::temp_file(
            &crate::paths::scratch_dir(),
            "iolab-offload-unrelated-",
            libc::O_RDWR,
            0o600,
        )?;
        let path = _created.path().to_path_buf();
        let mut file = std::fs::File::from(fd);
        file.write_all(&[UNRELATED_BYTE; PAGE])
            .map_err(|e| Error::Runtime(format!("cannot write the unrelated test file: {e}")))?;
        Ok(Unrelated {
            file,
            path,
            _created,
        })
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

/// What the client's attacks aim at: a private page of iolab's (the canary) and, when an attack leaves the
/// client alive, an unrelated open file.
pub struct Bait {
    canary: sys::Mapping,
    unrelated: Option<Unrelated>,
}

/// The sandbox's checks after the run (every one passed, or the run failed).
pub struct Checks {
    pub canary_intact: bool,
    pub unrelated_intact: Option<bool>,
    pub outcomes: Vec<AttackOutcome>,
    /// Requests refused: by the broker's policy (broker path) or attacks refused (the others).
    pub refusals: u64,
}

impl Bait {
    pub fn new(attacks: &[Attack]) -> Result<Bait> {
        let canary =
            sys::Mapping::anonymous(PAGE).map_err(|e| Error::sys_hint(e, "the canary page"))?;
        // SAFETY: the canary mapping is PAGE writable bytes owned here.
        unsafe { std::ptr::write_bytes(canary.as_ptr(), CANARY_BYTE, PAGE) };
        let unrelated = if attacks.iter().any(|a| !a.kills_client()) {
            Some(Unrelated::new()?)
        } else {
            None
        };
        Ok(Bait { canary, unrelated })
    }

    /// The canary page's address (a partition's guest aims its attacks at it).
    pub fn canary_addr(&self) -> u64 {
        self.canary.as_ptr() as u64
    }

    /// The unrelated file's descriptor, -1 when there is none.
    pub fn unrelated_fd(&self) -> i32 {
        self.unrelated.as_ref().map_or(-1, |u| u.file.as_raw_fd())
    }

    /// Are the canary and the unrelated file intact, and was every attack refused? Anything else is an
    /// error: the sandbox did not hold.
    pub fn check(
        &mut self,
        path: OffloadPath,
        attacks: &[Attack],
        ctl: &Ctl,
        shared: &broker::Shared,
    ) -> Result<Checks> {
        // SAFETY: the canary mapping is PAGE readable bytes; the client and the kernel are done with it.
        let canary_intact = unsafe { std::slice::from_raw_parts(self.canary.as_ptr(), PAGE) }
            .iter()
            .all(|&b| b == CANARY_BYTE);
        let unrelated_intact = self.unrelated.as_mut().map(|u| u.intact());
        let outcomes: Vec<AttackOutcome> = attacks
            .iter()
            .filter(|a| !a.kills_client())
            .map(|&a| outcome(path, a, ctl))
            .collect();
        let refusals = match path {
            OffloadPath::Broker => shared.refusals.load(Ordering::Relaxed),
            _ => outcomes.iter().filter(|x| x.refused).count() as u64,
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
                path.name(),
                breach.join("; ")
            )));
        }
        Ok(Checks {
            canary_intact,
            unrelated_intact,
            outcomes,
            refusals,
        })
    }
}

/// What became of one attack that leaves the client alive, as the client recorded it.
fn outcome(path: OffloadPath, a: Attack, ctl: &Ctl) -> AttackOutcome {
    let idx = Attack::ALL.iter().position(|x| *x == a).unwrap_or(0);
    let res = ctl.attack_res[idx].load(Ordering::Relaxed);
    let mut out = AttackOutcome {
        attack: a.name().into(),
        request: describe_attack(a).into(),
        result: res,
        refused: res < 0 && res != super::shm::NOT_RUN,
        refused_by: String::new(),
        ..Default::default()
    };
    if a == Attack::Rewrite {
        let tries = ctl.rewrite_tries.load(Ordering::Relaxed);
        let refused = ctl.rewrite_refused.load(Ordering::Relaxed);
        let orig = ctl.rewrite_ran_original.load(Ordering::Relaxed);
        let other = ctl.rewrite_other.load(Ordering::Relaxed);
        out.tries = Some(tries);
        out.refused_tries = Some(refused);
        out.original_ran = Some(orig);
        out.other_allowed_ran = Some(other);
        // The rewritten request was refused whenever the broker saw it; where it never did (the copy
        // was taken first every time: a race the client may lose in all its tries, as under TCG) only
        // what the policy allows ran. Whether a raw-fd write ever ran is what the unrelated file's check
        // says, and that check is the breach: so the attack held once it was tried.
        let _ = (refused, other);
        out.refused = tries > 0 && res < 0;
    }
    if out.refused {
        out.refused_by = refused_by(path, a).into();
    }
    out
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

/// The client process, iolab's ends of its pipes, and the kernel's count of its system calls.
pub struct Client<'a> {
    /// raw_syscalls:sys_exit counted on the client's pid (None: not available), and what that counts or
    /// why it is missing.
    kcount: Option<OwnedFd>,
    kcount_note: String,
    guard: ClientGuard,
    /// The client's replies ('R' ready, 'a' attacks made, 'D' done) and iolab's commands ('S' sandbox,
    /// 'A' attack, 'G' go).
    done_r: OwnedFd,
    go_w: OwnedFd,
    ctl: &'a Ctl,
    sandboxed: bool,
    /// --ops, for messages.
    ops: Option<u64>,
}

/// What the client left behind.
pub struct Ended {
    pub pid: i32,
    /// Its CPU use, from wait4.
    pub rusage: libc::rusage,
    /// The kernel's count of its system calls, and what that counts or why it is missing.
    pub syscalls_kernel: Option<u64>,
    pub syscalls_kernel_note: String,
}

impl<'a> Client<'a> {
    /// Forks the client, opens the kernel's count of its system calls, tells it to enter its sandbox and
    /// waits (10 s at most) until it says it is ready.
    pub fn start(
        spec: &Spec,
        shape: &Shape,
        region: &'a Region,
        bait: &Bait,
        server: &Server,
        cpu: Option<u32>,
    ) -> Result<Client<'a>> {
        let sandboxed = spec.offload.path != OffloadPath::Native;
        let (go_r, go_w) = sys::pipe().map_err(Error::from)?;
        let (done_r, done_w) = sys::pipe().map_err(Error::from)?;
        let fds = (go_r.as_raw_fd(), done_w.as_raw_fd());
        let pid = fork(
            plan(spec, shape, region, bait, cpu, fds),
            spec,
            server,
            region,
        )?;
        let guard = ClientGuard { pid, reaped: None };
        let go_fd = go_r.as_raw_fd();
        drop(go_r);
        drop(done_w);
        // The kernel's count of the client's system calls, opened once it waits in its start read (its
        // setup calls before that are not counted by the client, so they must not be by the kernel) and
        // before it may make any in its sandbox.
        let waited = wait_in_start_read(pid, go_fd, 10_000);
        let (mut kcount, mut kcount_note) = kernel_count(pid, sandboxed);
        if let Err(why) = waited {
            kcount = None;
            kcount_note = format!("not counted: {why}");
        }
        let mut c = Client {
            kcount,
            kcount_note,
            guard,
            done_r,
            go_w,
            ctl: region.ctl(),
            sandboxed,
            ops: spec.ops,
        };
        c.send(b'S')?;
        match read_byte(&c.done_r, 10_000) {
            Ok(Some(b'R')) => Ok(c),
            Ok(_) => Err(c.died("while entering its sandbox")),
            Err(()) => Err(Error::Runtime(format!(
                "the offload client (pid {pid}) did not report ready within 10 s"
            ))),
        }
    }

    fn send(&self, b: u8) -> Result<()> {
        sys::write(self.go_w.as_raw_fd(), &[b])
            .map(|_| ())
            .map_err(Error::from)
    }

    /// The error for a client that died `when`: how it ended (it is reaped, or killed after 2 s), and
    /// how far it got.
    fn died(&mut self, when: &str) -> Error {
        let done = self.ctl.completed.0.load(Ordering::Relaxed);
        let status = self
            .guard
            .reap(2000)
            .map(|(s, _)| describe_status(s, self.sandboxed))
            .unwrap_or_else(|e| format!("could not be waited for ({e})"));
        let errno = self.ctl.sandbox_errno.load(Ordering::Relaxed);
        let extra = if errno != 0 {
            format!(
                ": its seccomp filter (prctl(PR_SET_NO_NEW_PRIVS), seccomp(SECCOMP_SET_MODE_FILTER)) failed with {}",
                sys::errno_name(errno as i32)
            )
        } else {
            String::new()
        };
        Error::Runtime(format!(
            "the offload client (pid {}) {status}{extra} {when}, after {done} of {} ops",
            self.guard.pid,
            self.ops.map_or("?".to_string(), |n| n.to_string())
        ))
    }

    /// Attack phase, then the timed workload with sampling, watchdog and duration.
    pub fn drive(
        &mut self,
        spec: &Spec,
        shared: &broker::Shared,
        sq_ring: Option<i32>,
    ) -> Result<Span> {
        if spec.offload.attacks.iter().any(|a| !a.kills_client()) {
            self.attack_phase()?;
        }
        let ctl = self.ctl;
        super::watch::timed_span(spec, ctl, sq_ring, |t0, hist| {
            self.send(b'G')?;
            self.watch(spec, shared, t0, hist)
        })
    }

    /// Tells the client to make its attacks, and waits (60 s at most) until it has.
    fn attack_phase(&mut self) -> Result<()> {
        self.send(b'A')?;
        match read_byte(&self.done_r, 60_000) {
            Ok(Some(b'a')) => Ok(()),
            Ok(_) => Err(self.died("during the attack phase")),
            Err(()) => Err(Error::Runtime(
                "the offload client did not finish its attack phase within 60 s".into(),
            )),
        }
    }

    /// Samples the client's completion counter every `WINDOW_MS` (each window's per-request time into
    /// `hist`) until it says it is done; tells it to stop at --duration; fails when it dies, when the
    /// broker stops, or when it completes nothing for `STALL_S` (it is killed). Returns the time of its
    /// 'done' and the number of windows that saw completions.
    fn watch(
        &mut self,
        spec: &Spec,
        shared: &broker::Shared,
        t0: u64,
        hist: &mut Hist,
    ) -> Result<(u64, u64)> {
        let mut w = super::watch::Watch::new(t0, 0);
        loop {
            let ready = sys::poll_in(self.done_r.as_raw_fd(), WINDOW_MS).map_err(Error::from)?;
            let now = sys::monotonic_ns();
            // The sample first (the last window counts), but a 'done' read below wins over what it saw.
            let seen = w.step(now, self.ctl, spec, shared, hist);
            if ready {
                let mut b = [0u8; 1];
                match sys::read(self.done_r.as_raw_fd(), &mut b) {
                    Ok(1) if b[0] == b'D' => return Ok((now, w.windows)),
                    Err(e) if e.errno == libc::EINTR => continue,
                    _ => return Err(self.died("mid-run")),
                }
            }
            if let Seen::Stalled { completed } = seen? {
                self.ctl.stop.0.store(2, Ordering::SeqCst);
                let _ = sys::kill(self.guard.pid, libc::SIGKILL);
                let _ = self.guard.reap(2000);
                return Err(Error::Runtime(format!(
                    "the offload client completed nothing for {STALL_S} s (after {completed} ops): it \
                     was killed; its server may have stopped"
                )));
            }
        }
    }

    /// Reaps the client (it kills it after 5 s) and reads the kernel's count of its system calls.
    pub fn end(&mut self) -> Result<Ended> {
        let (_, rusage) = self.guard.reap(5000)?;
        let syscalls_kernel = self
            .kcount
            .as_ref()
            .and_then(|fd| sys::perf_read(fd.as_raw_fd()).ok());
        Ok(Ended {
            pid: self.guard.pid,
            rusage,
            syscalls_kernel,
            syscalls_kernel_note: self.kcount_note.clone(),
        })
    }
}

/// What the client is to do, and where everything is in its copy of iolab's memory (`fds`: its ends of
/// the pipes, go and done).
fn plan(
    spec: &Spec,
    shape: &Shape,
    region: &Region,
    bait: &Bait,
    cpu: Option<u32>,
    (go_fd, done_fd): (i32, i32),
) -> Plan {
    let mut attacks = [None; 8];
    for (i, a) in spec.offload.attacks.iter().enumerate().take(8) {
        attacks[i] = Some(*a);
    }
    Plan {
        work: shape.work,
        bs: shape.bs,
        slot: shape.layout.slot,
        batch: shape.batch,
        total: spec.ops.unwrap_or(u64::MAX),
        pattern: spec.pattern,
        offset: spec.offset,
        nblocks: shape.nblocks,
        seed: spec.seed,
        verify_reads: spec.verify && shape.work == Work::Read,
        fsync_every: match spec.fsync {
            SyncEvery::Every(k) => k,
            _ => 0,
        },
        fsync_end: spec.fsync == SyncEvery::End,
        data: region.data_ptr(),
        scratch: region.buffer(shape.layout.buffers),
        attack_page: region.attack_page(),
        canary: bait.canary.as_ptr(),
        unrelated_fd: bait.unrelated.as_ref().map_or(-1, |u| u.file.as_raw_fd()),
        attacks,
        ctl: region.ctl(),
        cycles: region.cycles_ptr(),
        cycle_read: super::cycles::counter(),
        go_fd,
        done_fd,
        cpu,
        sandbox: spec.offload.path != OffloadPath::Native,
        parent: std::process::id() as i32,
        no_user_data: spec.offload.no_user_data,
    }
}

/// Forks the client with its path's transport: the shared ring and the doorbell (kernel path), the
/// shared ring and its fd (native), iolab's request rings (broker).
fn fork(plan: Plan, spec: &Spec, server: &Server, region: &Region) -> Result<i32> {
    match spec.offload.path {
        OffloadPath::Kernel => {
            let t = client::KernelT {
                q: ring::SqCq::new(server.ring().ptrs),
                bell: server.bell_fd(),
                sleep_first: spec.offload.sq_sleep,
            };
            fork_client(plan, t)
        }
        OffloadPath::Native => {
            let r = server.ring();
            let t = client::NativeT {
                q: ring::SqCq::new(r.ptrs),
                fd: r.raw_fd(),
            };
            fork_client(plan, t)
        }
        OffloadPath::Broker => {
            let t = client::BrokerT {
                rings: region.ring_ptr() as *const broker::Rings,
                tail: 0,
                head: 0,
                data: region.data_ptr() as u64,
                doorbell: spec.offload.doorbell,
                bell: server.bell_fd(),
            };
            fork_client(plan, t)
        }
    }
}

/// Waits until the client sleeps in read(2) on its start pipe (`/proc/PID/syscall` names the call and
/// its first argument), at most `limit_ms`.
fn wait_in_start_read(pid: i32, fd: i32, limit_ms: u64) -> std::result::Result<(), String> {
    let path = format!("/proc/{pid}/syscall");
    let want = format!("{} 0x{fd:x} ", libc::SYS_read);
    let t0 = std::time::Instant::now();
    loop {
        match std::fs::read_to_string(&path) {
            Ok(s) if s.starts_with(&want) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(format!("{path} cannot be read ({e})")),
        }
        if t0.elapsed().as_millis() as u64 >= limit_ms {
            return Err(format!(
                "the client did not reach its start read within {limit_ms} ms"
            ));
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

/// The kernel's count of the client's system calls (raw_syscalls:sys_exit on its pid), and what it
/// counts or why there is none.
fn kernel_count(pid: i32, sandboxed: bool) -> (Option<OwnedFd>, String) {
    match crate::measure::counters::trace_ids() {
        Err(why) => (None, why),
        Ok(ids) => match ids.sys_exit {
            None => (None, "no raw_syscalls:sys_exit tracepoint in tracefs".to_string()),
            Some(id) => match sys::perf_event_open_task(sys::perf::PERF_TYPE_TRACEPOINT, id, pid) {
                Ok(fd) => (
                    Some(fd),
                    format!(
                        "raw_syscalls:sys_exit on the client pid, opened before it entered {}: that read, {}every call after",
                        if sandboxed { "its sandbox" } else { "its workload" },
                        if sandboxed { "the prctl(PR_SET_NO_NEW_PRIVS) and seccomp(2) that sandboxed it and " } else { "" }
                    ),
                ),
                Err(e) => (None, format!("perf_event_open of the client's tracepoint failed: {}", sys::errno_name(e.errno))),
            },
        },
    }
}
/// Forks the client, which runs `client::main` and never returns.
fn fork_client<T: client::Transport>(plan: Plan, t: T) -> Result<i32> {
    match sys::fork().map_err(Error::from)? {
        0 => client::main(plan, t),
        pid => Ok(pid),
    }
}
