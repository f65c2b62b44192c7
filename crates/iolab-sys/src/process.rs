//! The process and its threads: resource usage, clocks and the TSC, ids, the kernel release, CPU affinity,
//! signal dispositions (including the async-signal-safe pieces the cleanup handler uses), fork and wait,
//! kill and the ways out of a process or thread.

use std::ffi::CStr;

use super::errno::{result, SysResult};

/// getrusage(2) for RUSAGE_SELF or RUSAGE_THREAD.
pub fn getrusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: an all-zero rusage is a valid value of this plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid out-pointer; RUSAGE_SELF/RUSAGE_THREAD cannot fail with a valid pointer.
    unsafe { libc::getrusage(who, &mut ru) };
    ru
}

/// clock_gettime(CLOCK_MONOTONIC) in nanoseconds (through the vDSO).
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The time stamp counter (RDTSC), unserialized: the caller brackets syscalls, which order it enough.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC is available on every x86_64 CPU; iolab checks `constant_tsc` before trusting it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// CPUID leaf `leaf` (sub-leaf 0): (eax, ebx, ecx, edx).
#[cfg(target_arch = "x86_64")]
pub fn cpuid(leaf: u32) -> (u32, u32, u32, u32) {
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86_64 CPU and only writes registers; a leaf the CPU does not know
    // answers with the highest basic leaf's values.
    let r = unsafe { core::arch::x86_64::__cpuid_count(leaf, 0) };
    (r.eax, r.ebx, r.ecx, r.edx)
}

/// In a child about to exec `cmd`: be sent SIGKILL when this process dies, whatever kills it (SIGKILL
/// included), so that a helper such as qemu in a process group of its own never outlives iolab.
pub fn kill_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and makes only async-signal-safe calls
    // (prctl, signal); it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(|| {
            child_dies_with_parent().map_err(|e| std::io::Error::from_raw_os_error(e.errno))
        });
    }
}

/// As [`kill_with_parent`], and the child's address space bounded to `bytes` (setrlimit RLIMIT_AS, soft
/// and hard, before exec; a bound the target cannot hold leaves it unbounded): a helper that reads
/// without end (Ansible given an inventory script) fails its allocation instead of filling memory.
pub fn bound_child(cmd: &mut std::process::Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    let bound = libc::rlim_t::try_from(bytes).unwrap_or(libc::RLIM_INFINITY);
    let rl = libc::rlimit {
        rlim_cur: bound,
        rlim_max: bound,
    };
    // SAFETY: the closure runs in the forked child before exec and makes only async-signal-safe calls
    // (prctl, signal, setrlimit on a copied value); it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            child_dies_with_parent().map_err(|e| std::io::Error::from_raw_os_error(e.errno))?;
            // SAFETY: `rl` is a valid rlimit that lives across the call.
            result(
                "setrlimit(RLIMIT_AS)",
                libc::setrlimit(libc::RLIMIT_AS, &rl),
            )
            .map(|_| ())
            .map_err(|e| std::io::Error::from_raw_os_error(e.errno))
        });
    }
}

/// In a child about to exec `cmd`: be sent `sig` when the thread that starts it dies (PR_SET_PDEATHSIG),
/// whatever kills it; a child that catches `sig` can end the others of its process group then.
pub fn signal_at_parent_death(cmd: &mut std::process::Command, sig: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the forked child before exec and makes one async-signal-safe call
    // (prctl); it allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            // SAFETY: PR_SET_PDEATHSIG takes a signal number and reads no memory.
            result(
                "prctl",
                libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong),
            )
            .map(|_| ())
            .map_err(|e| std::io::Error::from_raw_os_error(e.errno))
        });
    }
}

/// The thread id (gettid(2)).
pub fn gettid() -> i32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::gettid() }
}

/// sysconf(_SC_CLK_TCK): the unit of utime/stime in /proc/<pid>/task/<tid>/stat.
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf only reads its integer argument.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as u64
    } else {
        100
    }
}

/// The kernel release (uname(2)).
pub fn kernel_release() -> String {
    // SAFETY: an all-zero utsname is a valid value of this plain C struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid out-pointer.
    if result("uname", unsafe { libc::uname(&mut u) }).is_err() {
        return "unknown".into();
    }
    // SAFETY: uname fills `release` with a NUL-terminated string.
    unsafe { CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// The kernel's version string (`uname -v`: "#1 SMP PREEMPT_RT Debian 6.1.158-1 (2025-11-09)").
pub fn kernel_version() -> String {
    // SAFETY: an all-zero utsname is a valid value of this plain C struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid out-pointer.
    if result("uname", unsafe { libc::uname(&mut u) }).is_err() {
        return String::new();
    }
    // SAFETY: uname fills `version` with a NUL-terminated string.
    unsafe { CStr::from_ptr(u.version.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// The effective user id.
pub fn geteuid() -> u32 {
    // SAFETY: geteuid takes no arguments and cannot fail.
    unsafe { libc::geteuid() }
}

/// The CPU the calling thread runs on now (sched_getcpu(3)), or -1.
pub fn current_cpu() -> i32 {
    // SAFETY: sched_getcpu takes no arguments; it returns -1 on failure.
    unsafe { libc::sched_getcpu() }
}

/// sigaction(2): run `handler` on each of `signals` (SA_RESTART not set: the run is ending anyway).
pub fn set_signal_handler(
    signals: &[libc::c_int],
    handler: extern "C" fn(libc::c_int),
) -> SysResult<()> {
    for &sig in signals {
        // SAFETY: an all-zero sigaction is a valid value; the fields set below are the documented ones.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = handler as usize;
        // SAFETY: `sa.sa_mask` is a valid sigset_t to initialise.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: `sa` is fully initialised; a null old-action pointer is allowed.
        result("sigaction", unsafe {
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        })?;
    }
    Ok(())
}

static INTERRUPTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

extern "C" fn note_interrupt(_sig: libc::c_int) {
    INTERRUPTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

/// SIGINT, SIGTERM and SIGHUP no longer end the process: each is noted for [`interrupted`], so that a
/// parent waiting for a child that got the same Ctrl-C can clean up after it.
pub fn note_interrupts() -> SysResult<()> {
    set_signal_handler(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP], note_interrupt)
}

/// Whether a signal [`note_interrupts`] watches has come.
pub fn interrupted() -> bool {
    interrupts() > 0
}

/// How many signals [`note_interrupts`] watches have come (a second Ctrl-C: stop waiting at once).
pub fn interrupts() -> usize {
    INTERRUPTS.load(std::sync::atomic::Ordering::SeqCst)
}

/// SIGINT to every process of process group `pgid` (a child started in a group of its own), as Ctrl-C
/// would send it.
pub fn interrupt_group(pgid: i32) -> SysResult<()> {
    kill(-pgid, libc::SIGINT)
}

/// A fault handler (SA_SIGINFO): it is given the siginfo, whose si_addr is the faulting address.
pub type FaultHandler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

/// sigaction(2) installing `handler` (SA_SIGINFO, on the alternate stack Rust gives every thread) for
/// `sig`; returns the action it replaces, for [`chain_signal`].
pub fn set_fault_handler(sig: libc::c_int, handler: FaultHandler) -> SysResult<libc::sigaction> {
    // SAFETY: an all-zero sigaction is a valid value; the fields set below are the documented ones.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = handler as usize;
    sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
    // SAFETY: `sa.sa_mask` is a valid sigset_t to initialise.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    // SAFETY: an all-zero sigaction is a valid out-value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: `sa` is fully initialised and `old` is a valid out-pointer.
    result("sigaction", unsafe { libc::sigaction(sig, &sa, &mut old) })?;
    Ok(old)
}

/// From a fault handler: hands the signal to the action `old` that was installed before it (Rust's
/// stack-overflow handler, for one), or, when that was the default or ignore, restores the default action
/// so that the faulting instruction, run again on return, ends the process as it would have.
///
/// # Safety
/// Call only from a signal handler for `sig`, with the `info` and `ctx` the kernel passed it; `old` must
/// be an action sigaction(2) returned.
pub unsafe fn chain_signal(
    old: &libc::sigaction,
    sig: libc::c_int,
    info: *mut libc::siginfo_t,
    ctx: *mut libc::c_void,
) {
    let h = old.sa_sigaction;
    if h == libc::SIG_DFL || h == libc::SIG_IGN {
        default_signal(sig);
    } else if old.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: sigaction returned this as an SA_SIGINFO handler, so it has this signature; the caller
        // passes the kernel's arguments through.
        let f: FaultHandler = unsafe { std::mem::transmute::<usize, FaultHandler>(h) };
        f(sig, info, ctx);
    } else {
        // SAFETY: sigaction returned this as a plain handler, so it takes the signal number only.
        let f: extern "C" fn(libc::c_int) =
            unsafe { std::mem::transmute::<usize, extern "C" fn(libc::c_int)>(h) };
        f(sig);
    }
}

/// write(2) of a message to stderr, ignoring failure; async-signal-safe.
pub fn write_stderr_raw(msg: &[u8]) {
    // SAFETY: `msg` is a valid slice; write is async-signal-safe.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

/// fork(2). Returns the child's pid in the parent and 0 in the child. Call it while the process has one
/// thread (the child then may do anything the parent could), or keep the child to raw system calls (no
/// allocation, no locks: another thread may have held them at the fork) until it exits.
pub fn fork() -> SysResult<i32> {
    // SAFETY: fork has no memory preconditions; callers either fork a single-threaded process, so the
    // child's copy of every lock is consistent, or keep the child to raw system calls (documented above).
    result("fork", unsafe { libc::fork() })
}

/// In a child: be sent SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG), and take SIGINT, SIGTERM and
/// SIGHUP with their default action (the parent's handler removes the parent's files; the child has none).
pub fn child_dies_with_parent() -> SysResult<()> {
    // SAFETY: PR_SET_PDEATHSIG takes a signal number and reads no memory.
    result("prctl", unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong)
    })?;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: SIG_DFL is a valid disposition for these signals.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    Ok(())
}

/// setrlimit(RLIMIT_CORE, 0) in the calling process: a child that may be killed on purpose (the offload
/// client's seccomp filter ends it with SIGSYS, whose default action dumps core) leaves no core file of a
/// process that mapped iolab's shared region. One raw system call, async-signal-safe.
pub fn no_core_dumps() -> SysResult<()> {
    let zero = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `zero` is a valid rlimit that lives across the call.
    result("setrlimit(RLIMIT_CORE)", unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &zero)
    })
    .map(|_| ())
}

/// pthread_sigmask(SIG_BLOCK) of `signals` on the calling thread; returns the mask before, for
/// [`restore_signal_mask`]. Around a fork, so that the child cannot run the parent's handlers before it has
/// reset them.
pub fn block_signals(signals: &[libc::c_int]) -> SysResult<libc::sigset_t> {
    // SAFETY: all-zero sigset_t values are valid; sigemptyset/sigaddset initialise `set` before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t to initialise and fill with valid signal numbers.
    unsafe {
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
    }
    // SAFETY: both pointers are valid sigset_t values for the duration of the call.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) };
    if r != 0 {
        return Err(super::errno::SysErr::new("pthread_sigmask", r));
    }
    Ok(old)
}

/// pthread_sigmask(SIG_SETMASK) back to a mask [`block_signals`] returned; a plain system call, also safe
/// in a forked child.
pub fn restore_signal_mask(old: &libc::sigset_t) {
    // SAFETY: `old` is a valid sigset_t; a null old-mask pointer is allowed.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut()) };
}

/// The parent pid (getppid(2)).
pub fn getppid() -> i32 {
    // SAFETY: getppid takes no arguments and cannot fail.
    unsafe { libc::getppid() }
}

/// waitpid(2) for one child, retrying on EINTR; returns its raw wait status.
pub fn waitpid(pid: i32) -> SysResult<i32> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer for the duration of the call.
        match result("waitpid", unsafe { libc::waitpid(pid, &mut status, 0) }) {
            Ok(_) => return Ok(status),
            Err(e) if e.errno == libc::EINTR => continue,
            Err(e) => return Err(e),
        }
    }
}

/// atexit(3): `f` runs when the process calls exit(3) (std::process::exit), not on _exit or a signal.
pub fn at_exit(f: extern "C" fn()) -> bool {
    // SAFETY: `f` is a plain function with the C ABI, valid for the whole process.
    unsafe { libc::atexit(f) == 0 }
}

/// _exit(2): ends the process without running destructors or atexit handlers (a forked child's way out).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and has no preconditions.
    unsafe { libc::_exit(code) }
}

/// write(2) of a message to stderr and _exit(2); async-signal-safe.
pub fn write_stderr_and_exit(msg: &[u8], code: libc::c_int) -> ! {
    // SAFETY: `msg` is a valid slice; write and _exit are async-signal-safe.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(code)
    }
}

/// exit(2) of the calling thread (glibc's _exit calls exit_group instead). In a single-threaded process
/// this ends the process.
pub fn exit_thread(code: i32) -> ! {
    // SAFETY: SYS_exit never returns and reads no memory.
    unsafe {
        libc::syscall(libc::SYS_exit, code);
    }
    // SYS_exit does not return; keep the type checker satisfied without an unsafe hint.
    loop {
        std::hint::spin_loop();
    }
}

/// sched_setaffinity(2) of the calling thread to one CPU.
pub fn pin_to_cpu(cpu: u32) -> SysResult<()> {
    pin_task_to_cpu(0, cpu)
}

/// sched_setaffinity(2) of thread `tid` (0: the calling thread) to one CPU.
pub fn pin_task_to_cpu(tid: i32, cpu: u32) -> SysResult<()> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET writes one bit of `set`; CPU numbers are bounded by the caller (checked against
    // the CPUs online).
    unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; tid 0 is the calling thread.
    result("sched_setaffinity", unsafe {
        libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set)
    })
    .map(|_| ())
}

/// sched_setaffinity(2) of the calling thread to `cpus` (threads it starts later inherit the set).
pub fn set_allowed_cpus(cpus: &[u32]) -> SysResult<()> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as u32) {
        // SAFETY: CPU_SET writes one bit of `set`, within CPU_SETSIZE (filtered above).
        unsafe { libc::CPU_SET(c as usize, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is the calling thread.
    result("sched_setaffinity", unsafe {
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    })
    .map(|_| ())
}

/// The CPUs the calling thread may run on (sched_getaffinity(2)).
pub fn allowed_cpus() -> Vec<u32> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid out-buffer of the size passed.
    let r = result("sched_getaffinity", unsafe {
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set)
    });
    if r.is_err() {
        return Vec::new();
    }
    // SAFETY: CPU_ISSET only reads `set`.
    (0..libc::CPU_SETSIZE as u32)
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect()
}

/// wait4(2) for one child without blocking: `None` while it runs, else its wait status and rusage.
pub fn wait4_nohang(pid: i32) -> SysResult<Option<(i32, libc::rusage)>> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `ru` are valid out-pointers for the call.
        match result("wait4", unsafe {
            libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru)
        }) {
            Ok(0) => return Ok(None),
            Ok(_) => return Ok(Some((status, ru))),
            Err(e) if e.errno == libc::EINTR => continue,
            Err(e) => return Err(e),
        }
    }
}

/// kill(2).
pub fn kill(pid: i32, sig: i32) -> SysResult<()> {
    // SAFETY: kill takes integers only.
    result("kill", unsafe { libc::kill(pid, sig) }).map(|_| ())
}

/// Restores the default action of `sig` (an inherited handler, like Rust's SIGSEGV stack-overflow handler,
/// would make system calls that the offload client's seccomp filter forbids).
pub fn default_signal(sig: i32) {
    // SAFETY: SIG_DFL is a valid disposition for any catchable signal.
    unsafe { libc::signal(sig, libc::SIG_DFL) };
}

/// CPU time the calling thread has used, in seconds (clock_gettime(CLOCK_THREAD_CPUTIME_ID)).
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_THREAD_CPUTIME_ID needs nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Bit N set: descriptor N (0, 1, 2) was closed when the process started (a shell's `>&-`).
static CLOSED_AT_START: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Runs before Rust's runtime, which opens /dev/null on a closed standard descriptor (so that no file
/// takes its number) and so hides that it was closed.
extern "C" fn note_closed_standard_fds() {
    for fd in 0..3 {
        // SAFETY: F_GETFD only reads the descriptor's flags; EBADF says it is not open.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            CLOSED_AT_START.fetch_or(1 << fd, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

#[used]
#[link_section = ".init_array"]
static NOTE_CLOSED_STANDARD_FDS: extern "C" fn() = note_closed_standard_fds;

/// Which of the standard descriptors 0, 1 and 2 were closed when the process started (Rust's runtime
/// has since put /dev/null there).
pub fn closed_at_start() -> [bool; 3] {
    let b = CLOSED_AT_START.load(std::sync::atomic::Ordering::Relaxed);
    [b & 1 != 0, b & 2 != 0, b & 4 != 0]
}
