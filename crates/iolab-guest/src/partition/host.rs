//! The host side of `--offload-partition vm`: the guest (booted once per iolab process by the `iolab vm`
//! machinery with the ivshmem device added, powered off at exit), and each run's session in it: the
//! region laid out in the shared file, the server set up as for a forked client, the plan published, the
//! client driven and timed from outside through the header's words, and the checks of a forked client.

use super::layout::{
    encode_attacks, Header, Session, Words, BAR_BYTES, MAGIC, REGION_OFF, VERSION,
};
use crate::vm::qemu::{self, Accel};
use crate::vm::{Report, VmRequest};
use iolab_engine::cleanup::Created;
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::measure::hist::Hist;
use iolab_engine::offload::sandbox::{self, Bait, Ended};
use iolab_engine::offload::server::Server;
use iolab_engine::offload::shm::{Ctl, Region};
use iolab_engine::offload::watch::{Seen, Watch};
use iolab_engine::offload::{broker, figures, Cpus, Shape, Span, STALL_S, WINDOW_MS};
use iolab_engine::result::{Host, PartitionFigures, RunResult};
use iolab_engine::spec::{OffloadPath, OpKind, Spec, SyncEvery};
use iolab_sys as sys;
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a boot may take before its guest is declared hung (a first run fetches the parts, ~100 MB).
const BOOT_LIMIT_S: u64 = 900;
/// The guest's safety net: `iolab vm` kills it after this even if iolab never says quit.
const GUEST_LIFE_S: u64 = 6 * 3600;
/// Lines of the guest's output kept for messages.
const LOG_LINES: usize = 30;

type Log = Arc<Mutex<VecDeque<String>>>;

fn push(log: &Log, line: String) {
    let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
    if l.len() == LOG_LINES {
        l.pop_front();
    }
    l.push_back(line);
}

/// Keeps what the machinery and the guest's session loop say, for messages.
struct Keep(Log);

impl Report for Keep {
    fn say(&mut self, line: &str) {
        push(&self.0, format!("iolab vm: {line}"));
    }
    fn out(&mut self, bytes: &[u8]) -> Result<()> {
        self.err(bytes);
        Ok(())
    }
    fn err(&mut self, bytes: &[u8]) {
        for l in String::from_utf8_lossy(bytes).lines() {
            push(&self.0, format!("guest: {l}"));
        }
    }
}

/// The guest of this process: the shared file, its header, the thread that runs `iolab vm`'s boot.
struct Partition {
    /// Dropped after `fd` and `hdr`: the file is removed last.
    _file: Created,
    path: PathBuf,
    fd: OwnedFd,
    hdr: sys::Mapping,
    accel: Accel,
    boot_s: f64,
    thread: Option<JoinHandle<Result<Vec<i32>>>>,
    log: Log,
}

static GUEST: Mutex<Option<Partition>> = Mutex::new(None);
static AT_EXIT: AtomicBool = AtomicBool::new(false);

extern "C" fn shutdown_at_exit() {
    shutdown();
}

/// Powers the guest off (if one runs) and removes its files: at exit, or after a run that broke it.
pub fn shutdown() {
    let p = GUEST.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(p) = p {
        p.stop();
    }
}

impl Partition {
    fn header(&self) -> &Header {
        // SAFETY: `hdr` maps the file's first REGION_OFF bytes for as long as `self` lives.
        unsafe { Header::at(self.hdr.as_ptr()) }
    }

    fn alive(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    fn tail(&self) -> String {
        let l = self.log.lock().unwrap_or_else(|p| p.into_inner());
        l.iter()
            .map(|x| format!("  | {x}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Why the guest is gone (it must have ended): `iolab vm`'s error, or how it powered off.
    fn gone(&mut self) -> String {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(Err(e))) => e.to_string(),
            Some(Ok(Ok(st))) => format!(
                "the guest powered off (its session loop exited with status {}); its last output:\n{}",
                st.first().copied().unwrap_or(-1),
                self.tail()
            ),
            _ => "the guest's boot thread ended abnormally".into(),
        }
    }

    /// Boots a guest with the shared file as its ivshmem device and waits until its session loop runs.
    fn boot() -> Result<Partition> {
        // A constant off x86_64, as in `vm::run`: the boards' binaries carry no guest machinery.
        if !cfg!(target_arch = "x86_64") {
            let why = crate::vm::unsupported().unwrap_or_default();
            return Err(Error::Runtime(format!(
                "{}: {why}",
                crate::vm::CANNOT_BUILD
            )));
        }
        if let Some(why) = crate::vm::unsupported() {
            return Err(Error::Runtime(format!(
                "{}: {why}",
                crate::vm::CANNOT_BUILD
            )));
        }
        let (path, fd, file) = shared_file()?;
        let hdr = sys::Mapping::shared(fd.as_raw_fd(), REGION_OFF, 0, true)
            .map_err(|e| Error::sys_hint(e, "mapping the partition's header"))?;
        let log: Log = Arc::default();
        let req = VmRequest {
            arch: crate::vm::arch::Arch::Amd64,
            board: crate::vm::arch::Board::Standard,
            kernel: None,
            cache: crate::vm::default_cache()?,
            timeout: Duration::from_secs(GUEST_LIFE_S),
            commands: vec![vec!["offload-guest".into()]],
            exe: Some(
                std::env::current_exe()
                    .map_err(|e| Error::Runtime(format!("cannot find iolab's own binary: {e}")))?,
            ),
            ssh: None,
            share: std::env::current_dir()
                .and_then(std::fs::canonicalize)
                .map_err(|e| Error::Runtime(format!("cannot tell the current directory: {e}")))?,
            devices: crate::vm::ivshmem::qemu_args(&path, BAR_BYTES),
        };
        let mut p = Partition {
            _file: file,
            path,
            fd,
            hdr,
            accel: qemu::choose_accel(),
            boot_s: 0.0,
            thread: None,
            log,
        };
        p.header().version.store(VERSION, Ordering::Relaxed);
        p.header().magic.store(MAGIC, Ordering::Release);
        let mut report = Keep(p.log.clone());
        let t0 = Instant::now();
        p.thread = Some(
            std::thread::Builder::new()
                .name("iolab-vm".into())
                .spawn(move || crate::vm::run(&req, &mut report))
                .map_err(|e| Error::Runtime(format!("cannot start the guest's thread: {e}")))?,
        );
        while p.header().guest_ready.load(Ordering::Acquire) == 0 {
            if !p.alive() {
                return Err(Error::Runtime(format!(
                    "the partition's guest did not start: {}",
                    p.gone()
                )));
            }
            if t0.elapsed().as_secs() > BOOT_LIMIT_S {
                let tail = p.tail();
                p.stop();
                return Err(Error::Runtime(format!(
                    "the partition's guest was not ready within {BOOT_LIMIT_S} s; its last output:\n{tail}"
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        p.boot_s = t0.elapsed().as_secs_f64();
        Ok(p)
    }

    /// Tells the guest's session loop to end and waits (60 s at most) for the guest to power off; its
    /// files go then. A guest that does not stop dies with iolab (qemu's parent-death signal) and
    /// `iolab clean` removes its temporary files.
    fn stop(mut self) {
        self.header().quit.store(1, Ordering::Release);
        let t0 = Instant::now();
        while self.alive() && t0.elapsed().as_secs() < 60 {
            std::thread::sleep(Duration::from_millis(50));
        }
        if let Some(t) = self.thread.take().filter(|t| t.is_finished()) {
            let _ = t.join();
        }
    }
}

/// The file behind the ivshmem BAR: in /dev/shm (tmpfs: memory, as the memfd of a forked client is),
/// journaled for `iolab clean`, `BAR_BYTES` long and sparse.
fn shared_file() -> Result<(PathBuf, OwnedFd, Created)> {
    let dir = [PathBuf::from("/dev/shm"), std::env::temp_dir()]
        .into_iter()
        .find(|d| d.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    let path = dir.join(format!(
        "iolab-partition-{}-{}",
        std::process::id(),
        sys::monotonic_ns()
    ));
    let (fd, created) = Created::new_file(&path, libc::O_RDWR, 0o600, false)?;
    let f = std::fs::File::from(fd);
    f.set_len(BAR_BYTES)
        .map_err(|e| Error::Runtime(format!("cannot size {}: {e}", path.display())))?;
    Ok((path, f.into(), created))
}

/// Runs one offload workload with its client in the guest (booted now if this process has none).
pub fn run(spec: &Spec, clock: &ClockInfo) -> Result<RunResult> {
    let host = Host::current();
    let target = iolab_engine::target::setup(spec)?;
    iolab_engine::offload::check_target(spec, &target)?;
    let file = target.open_for(spec, spec.op == OpKind::Write)?;
    let shape = Shape::of(spec, &target)?;
    if REGION_OFF + shape.layout.total() > BAR_BYTES as usize {
        return Err(Error::usage(
            "--bs",
            format!(
                "the shared region of --bs {} and --batch {} ({} bytes) does not fit the partition's {} MiB \
                 ivshmem BAR: lower --bs or --batch",
                spec.bs,
                spec.batch,
                shape.layout.total(),
                BAR_BYTES >> 20
            ),
        ));
    }
    let mut slot = GUEST.lock().unwrap_or_else(|p| p.into_inner());
    if slot.as_ref().is_some_and(|p| !p.alive()) {
        slot.take();
    }
    if slot.is_none() {
        if !AT_EXIT.swap(true, Ordering::SeqCst) {
            sys::at_exit(shutdown_at_exit);
        }
        *slot = Some(Partition::boot()?);
    }
    let guest = slot.as_mut().expect("booted above");
    let out = session(spec, clock, host, &target, &file, &shape, guest);
    if out.is_err() && !guest.alive() {
        let why = guest.gone();
        slot.take();
        return Err(Error::Runtime(format!(
            "{}; the guest is gone: {why}",
            out.err().map(|e| e.to_string()).unwrap_or_default()
        )));
    }
    if let Err(Error::Runtime(m)) = &out {
        if m.contains(BROKEN) {
            // The guest's session loop does not answer: a new guest for the next run.
            if let Some(p) = slot.take() {
                p.stop();
            }
        }
    }
    out
}

/// Marks errors after which the guest cannot serve another session.
const BROKEN: &str = "the guest no longer answers";

fn session(
    spec: &Spec,
    clock: &ClockInfo,
    mut host: Host,
    target: &iolab_engine::target::PreparedTarget,
    file: &OwnedFd,
    shape: &Shape,
    guest: &Partition,
) -> Result<RunResult> {
    let fd = guest.fd.try_clone().map_err(|e| {
        Error::Runtime(format!(
            "cannot duplicate the shared file's descriptor: {e}"
        ))
    })?;
    // Fresh pages for this session's region. An earlier kernel-path session's io_uring is torn down by the
    // kernel asynchronously after its fd is closed, and until then its exit work may still commit its cached
    // SQ head and CQ tail into the ring memory it pinned: the same bytes of this file where this session's
    // ring lies. Zeroing them is not enough (a late commit lands after); punched out, they stay the old
    // ring's alone and this session (iolab, the kernel, the guest through QEMU's mapping) faults in new ones.
    sys::punch_hole(
        fd.as_raw_fd(),
        REGION_OFF as u64,
        shape.layout.total() as u64,
    )
    .map_err(|e| Error::sys_hint(e, "dropping the last session's pages of the shared file"))?;
    let region = shape.fill(
        Region::in_file(fd, REGION_OFF as u64, shape.layout)?,
        spec.seed,
    )?;
    let ctl = region.ctl();
    let mut bait = Bait::new(&spec.offload.attacks)?;
    let cpus = Cpus::choose(spec);
    let mut notes = target.notes.clone();
    notes.extend(cpus.notes(spec));
    notes.extend(place_guest(cpus.client));
    let mut server = Server::setup(spec, shape, &region, file.as_raw_fd(), &cpus)?;
    let kernel = spec.offload.path == OffloadPath::Kernel;
    if kernel && !server.fallbacks.is_empty() {
        return Err(Error::Runtime(
            "the kernel path from a guest needs the ring's memory in the shared file, which takes \
             IORING_SETUP_NO_MMAP (Linux 6.5+; refused here, or IOLAB_FORCE_RING_MMAP is set): use \
             --offload-path broker"
                .into(),
        ));
    }
    let plan = session_plan(spec, shape, &region, &bait, &server);
    let hdr = guest.header();
    let ring = kernel.then(|| server.ring().ptrs);
    let mut client = GuestClient::start(guest, ctl, &plan, spec.ops, ring)?;
    let wakes = AtomicU64::new(0);
    let span = server.serve(&region, &shape.layout, |shared, sq_ring| {
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            if let Some(ring_fd) = sq_ring {
                let (stop, wakes, word) = (&stop, &wakes, &hdr.wake.0);
                std::thread::Builder::new()
                    .name("iolab-wake".into())
                    .spawn_scoped(s, move || wake_thread(word, ring_fd, stop, wakes))
                    .map_err(|e| Error::Runtime(format!("cannot start the wake thread: {e}")))?;
            }
            let out = client.drive(spec, shared, sq_ring);
            stop.store(true, Ordering::SeqCst);
            out
        })
    });
    let span = span.map_err(|e| client.fail(e))?;
    let ended = client.end()?;
    server.close_ring();
    iolab_engine::offload::check_requests(&server, ctl, target, shape.bs).map_err(|e| {
        match (e, ring) {
            (Error::Runtime(m), Some(r)) => Error::Runtime(format!(
                "{m} (session {}; the ring, as iolab sees it: {})",
                client.session,
                r.describe()
            )),
            (e, _) => e,
        }
    })?;
    let checks = bait.check(
        spec.offload.path,
        &spec.offload.attacks,
        ctl,
        &server.shared,
    )?;
    host.accelerator = Some(guest.accel.name().into());
    host.emulated = iolab_engine::emulation::guest::is_emulated(host.accelerator.as_deref());
    notes.push(wake_note(kernel));
    let mut res = figures::result(figures::Parts {
        spec,
        clock,
        host,
        target,
        shape,
        cpus: &cpus,
        ctl,
        cycles: region.cycles(),
        server: &server,
        span,
        client: ended,
        checks,
        notes,
    })?;
    let wake_requests = ctl.doorbells.load(Ordering::Relaxed);
    label(
        &mut res,
        guest,
        client.session,
        kernel,
        wake_requests,
        &wakes,
    );
    Ok(res)
}

fn wake_note(kernel: bool) -> String {
    if kernel {
        format!(
            "partition: the guest cannot write iolab's eventfd; when the SQPOLL thread sleeps (NEED_WAKEUP in \
             the shared ring) the guest client sets a wake word in the shared file, and an iolab thread that \
             looks at it every {} µs calls io_uring_enter(IORING_ENTER_SQ_WAKEUP)",
            super::layout::WAKE_POLL_US
        )
    } else {
        "partition: the guest cannot write iolab's eventfd; the broker spins for the whole run (--doorbell \
         spin), so it never needs waking"
            .into()
    }
}

/// The partition's facts on the result: where the client ran, that the host kernel does not see its
/// calls, how its server was woken.
fn label(
    res: &mut RunResult,
    guest: &Partition,
    session: u64,
    kernel: bool,
    wake_requests: u64,
    wakes: &AtomicU64,
) {
    let Some(o) = res.offload.as_mut() else {
        return;
    };
    let accel = guest.accel.name();
    o.sandbox = format!(
        "a QEMU guest partition ({accel}{}): the client is a process of the guest's kernel, the shared region \
         the guest's ivshmem BAR",
        if iolab_engine::emulation::guest::is_emulated(Some(accel)) {
            ", emulated"
        } else {
            ""
        }
    );
    o.client_pid = guest.header().guest_ready.load(Ordering::Relaxed) as i32;
    o.client_cpu = None;
    o.client_syscalls_timed = 0;
    o.client_syscalls_total = 0;
    o.client_syscalls_kernel = None;
    o.client_syscalls_kernel_note =
        "the client runs in the guest: it makes no system call to this kernel (its handshake is words in the \
         shared file)"
            .into();
    o.client_user_s = 0.0;
    o.client_sys_s = 0.0;
    if o.client_cycles.is_some() {
        o.client_cycles_note = format!(
            "{}; counted by RDTSC in the guest ({accel}){}",
            o.client_cycles_note,
            if iolab_engine::emulation::guest::is_emulated(Some(accel)) {
                ": the TSC of an emulated CPU, whose cycles include the emulation (emulated cycles, not \
                 hardware's)"
            } else {
                ""
            }
        );
    }
    let host_wakeups = wakes.load(Ordering::Relaxed);
    if kernel {
        o.server_wakeups = host_wakeups;
    }
    o.partition = Some(PartitionFigures {
        accelerator: accel.into(),
        emulated: iolab_engine::emulation::guest::is_emulated(Some(accel)),
        boot_s: guest.boot_s,
        shared_file: guest.path.display().to_string(),
        bar_bytes: BAR_BYTES,
        session,
        wake: wake_note(kernel),
        wake_requests,
        host_wakeups,
    });
}

/// Pins qemu's threads (the guest's vCPUs among them) to the client's CPU, as a forked client is pinned:
/// else a vCPU that lands on the server's CPU takes turns with the spinning server at scheduler ticks.
/// qemu is a child of one of this process's threads (the one that booted it).
fn place_guest(cpu: Option<u32>) -> Option<String> {
    let cpu = cpu?;
    let mut pinned = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for pid in children.split_whitespace() {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if !comm.starts_with("qemu") {
                continue;
            }
            for t in std::fs::read_dir(format!("/proc/{pid}/task"))
                .into_iter()
                .flatten()
                .flatten()
            {
                let tid = t.file_name().to_string_lossy().parse::<i32>().unwrap_or(0);
                if tid > 0 && sys::pin_task_to_cpu(tid, cpu).is_ok() {
                    pinned += 1;
                }
            }
        }
    }
    Some(format!(
        "partition: qemu's {pinned} threads (the guest's vCPUs among them) pinned to CPU {cpu}, the client's; \
         the server runs on another"
    ))
}

/// Kernel path: wakes the SQPOLL thread whenever the guest asks (the wake word), until `stop`.
fn wake_thread(word: &AtomicU32, ring_fd: i32, stop: &AtomicBool, wakes: &AtomicU64) {
    while !stop.load(Ordering::Relaxed) {
        if word.swap(0, Ordering::AcqRel) != 0 {
            wakes.fetch_add(1, Ordering::Relaxed);
            let _ = sys::io_uring_enter(ring_fd, 0, 0, sys::IORING_ENTER_SQ_WAKEUP);
        } else {
            std::thread::sleep(Duration::from_micros(super::layout::WAKE_POLL_US));
        }
    }
}

/// The session's plan: the workload, the layout, the host's addresses the guest needs.
fn session_plan(
    spec: &Spec,
    shape: &Shape,
    region: &Region,
    bait: &Bait,
    server: &Server,
) -> Session {
    let kernel = spec.offload.path == OffloadPath::Kernel;
    Session {
        seq: 0,
        path: u32::from(!kernel),
        work: match shape.work {
            iolab_engine::offload::client::Work::Nop => 0,
            iolab_engine::offload::client::Work::Read => 1,
            iolab_engine::offload::client::Work::Write => 2,
        },
        pattern: u32::from(spec.pattern != iolab_engine::pattern::Pattern::Seq),
        verify_reads: u32::from(spec.verify && spec.op == OpKind::Read && !spec.ring.nop_requests),
        fsync_end: u32::from(spec.fsync == SyncEvery::End),
        batch: shape.batch,
        unrelated_fd: bait.unrelated_fd(),
        attacks: encode_attacks(&spec.offload.attacks),
        sq_sleep: u32::from(spec.offload.sq_sleep),
        bs: shape.bs as u64,
        slot: shape.layout.slot as u64,
        buffers: shape.layout.buffers as u64,
        ring_len: shape.layout.ring_len as u64,
        rings_len: shape.rings_len as u64,
        total: spec.ops.unwrap_or(u64::MAX),
        offset: spec.offset,
        nblocks: shape.nblocks,
        seed: spec.seed,
        fsync_every: match spec.fsync {
            SyncEvery::Every(k) => k,
            _ => 0,
        },
        host_data: region.data_ptr() as u64,
        host_canary: bait.canary_addr(),
        params: if kernel {
            server.ring().params
        } else {
            Default::default()
        },
    }
}

/// The host's end of a session: the channel words, the client's progress, its exit status.
struct GuestClient<'a> {
    guest: &'a Partition,
    ctl: &'a Ctl,
    words: Words,
    session: u64,
    ops: Option<u64>,
    /// Kernel path: the ring, for a stalled run's message.
    ring: Option<iolab_engine::offload::ring::RingPtrs>,
}

/// What ended a wait on the guest.
enum Gone {
    /// This session's client exited, with this wait status.
    Exited(i32),
    /// qemu exited.
    Guest,
}

impl<'a> GuestClient<'a> {
    /// Publishes the session and waits (60 s at most: a fork in an emulated guest) for the client's 'R'.
    fn start(
        guest: &'a Partition,
        ctl: &'a Ctl,
        plan: &Session,
        ops: Option<u64>,
        ring: Option<iolab_engine::offload::ring::RingPtrs>,
    ) -> Result<Self> {
        let session = guest.header().publish(plan);
        let mut c = GuestClient {
            guest,
            ctl,
            words: Words::default(),
            session,
            ops,
            ring,
        };
        if let Err(e) = c.expect(b'R', 60, "to start") {
            return Err(c.fail(e));
        }
        Ok(c)
    }

    fn send(&mut self, b: u8) {
        self.words.send(&self.guest.header().to_guest.0, b);
    }

    /// The client's exit status for this session, if it has exited.
    fn status(&self) -> Option<i32> {
        let v = self.guest.header().status.0.load(Ordering::Acquire);
        (v >> 32 == self.session).then_some(v as u32 as i32)
    }

    /// A byte from the client, or why none can come: Ok(None) when nothing came yet.
    fn poll(&mut self) -> std::result::Result<Option<u8>, Gone> {
        if let Some(b) = self.words.try_hear(&self.guest.header().to_host.0) {
            return Ok(Some(b));
        }
        if let Some(st) = self.status() {
            return Err(Gone::Exited(st));
        }
        if !self.guest.alive() {
            return Err(Gone::Guest);
        }
        Ok(None)
    }

    fn why(&self, g: Gone, when: &str) -> Error {
        let done = self.ctl.completed.0.load(Ordering::Relaxed);
        let what = match g {
            Gone::Exited(st) => format!(
                "the offload client in the guest {}",
                sandbox::describe_status(st, false)
            ),
            Gone::Guest => "the guest stopped (qemu exited)".into(),
        };
        Error::Runtime(format!(
            "{what} {when}, after {done} of {} ops",
            self.ops.map_or("?".to_string(), |n| n.to_string())
        ))
    }

    /// Waits `limit_s` at most for byte `want`.
    fn expect(&mut self, want: u8, limit_s: u64, when: &str) -> Result<()> {
        let t0 = Instant::now();
        loop {
            match self.poll() {
                Ok(Some(b)) if b == want => return Ok(()),
                Ok(Some(b)) => {
                    return Err(Error::Runtime(format!(
                        "the offload client in the guest said {:?} instead of {:?} {when}",
                        b as char, want as char
                    )))
                }
                Ok(None) => {}
                Err(g) => return Err(self.why(g, when)),
            }
            if t0.elapsed().as_secs() >= limit_s {
                return Err(Error::Runtime(format!(
                    "the offload client in the guest did not answer within {limit_s} s {when}: {BROKEN}"
                )));
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// Attack phase, then the timed workload, timed from outside as a forked client is.
    fn drive(
        &mut self,
        spec: &Spec,
        shared: &broker::Shared,
        sq_ring: Option<i32>,
    ) -> Result<Span> {
        if spec.offload.attacks.iter().any(|a| !a.kills_client()) {
            self.send(b'A');
            self.expect(b'a', 300, "during the attack phase")?;
        }
        // As a forked client's run (offload/watch.rs).
        let ctl = self.ctl;
        iolab_engine::offload::watch::timed_span(spec, ctl, sq_ring, |t0, hist| {
            self.send(b'G');
            self.watch(spec, shared, t0, hist)
        })
    }

    /// Samples the completion counter every `WINDOW_MS` until 'D'; stops the client at --duration; fails
    /// when the client or the guest dies, when the broker stops, or after `STALL_S` without progress.
    fn watch(
        &mut self,
        spec: &Spec,
        shared: &broker::Shared,
        t0: u64,
        hist: &mut Hist,
    ) -> Result<(u64, u64)> {
        let mut w = Watch::new(t0, WINDOW_MS as u64 * 1_000_000);
        loop {
            std::thread::sleep(Duration::from_micros(100));
            let now = sys::monotonic_ns();
            match self.poll() {
                Ok(Some(b'D')) => return Ok((now, w.windows)),
                Ok(Some(b)) => {
                    return Err(Error::Runtime(format!(
                        "the offload client in the guest said {:?} mid-run",
                        b as char
                    )))
                }
                Ok(None) => {}
                Err(g) => return Err(self.why(g, "mid-run")),
            }
            if let Seen::Stalled { completed } = w.step(now, self.ctl, spec, shared, hist)? {
                return Err(self.hung(completed));
            }
        }
    }

    /// A client that made no progress for `STALL_S`: told to abort; a guest that does not even report
    /// its exit then is broken (powered off by the caller).
    fn hung(&mut self, c: u64) -> Error {
        let ring = self.ring.map(|r| r.describe());
        self.abort();
        let broken = if self.wait_exit(10).is_none() {
            format!("; it did not exit when told to abort either: {BROKEN}")
        } else {
            String::new()
        };
        let ring = ring
            .map(|r| format!(" (the ring, as iolab sees it: {r})"))
            .unwrap_or_default();
        Error::Runtime(format!(
            "the offload client in the guest completed nothing for {STALL_S} s (after {c} ops){ring}{broken}"
        ))
    }

    /// Tells the client to abort, wherever it waits (its workload loop, or the channel).
    fn abort(&mut self) {
        self.ctl.stop.0.store(2, Ordering::SeqCst);
        self.send(b'Q');
    }

    /// A session that failed while its client may still run: told to abort and waited for (10 s at most),
    /// so that the next session never starts beside it (it would write into the next session's words,
    /// rings and control block, which are the same bytes of the shared file). One that does not exit leaves
    /// the guest broken: the caller powers it off and the next run boots another.
    fn fail(&mut self, e: Error) -> Error {
        self.abort();
        if self.status().is_some() || self.wait_exit(10).is_some() || !self.guest.alive() {
            return e;
        }
        Error::Runtime(format!(
            "{e}; the client did not exit within 10 s of being told to abort: {BROKEN}"
        ))
    }

    fn wait_exit(&self, limit_s: u64) -> Option<i32> {
        let t0 = Instant::now();
        while t0.elapsed().as_secs() < limit_s && self.guest.alive() {
            if let Some(st) = self.status() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        self.status()
    }

    /// Waits (30 s at most) for the client's exit; anything but status 0 is an error.
    fn end(&mut self) -> Result<Ended> {
        match self.wait_exit(30) {
            Some(0) => Ok(Ended {
                pid: self.guest.header().guest_ready.load(Ordering::Relaxed) as i32,
                // SAFETY: rusage is plain integers; all-zero is a valid value (the guest's CPU is not
                // this kernel's to count).
                rusage: unsafe { std::mem::zeroed() },
                syscalls_kernel: None,
                syscalls_kernel_note: String::new(),
            }),
            Some(st) => Err(self.why(Gone::Exited(st), "at its end")),
            None if !self.guest.alive() => Err(self.why(Gone::Guest, "at its end")),
            None => Err(Error::Runtime(format!(
                "the offload client in the guest said done but did not exit within 30 s: {BROKEN}"
            ))),
        }
    }
}
