//! The ARM generic timer's virtual counter (CNTVCT) and its frequency register, the probe that tells
//! whether a 32-bit ARM process may read it, and clock_gettime as a plain system call (to tell what a
//! clock read costs when it is one). RDTSC, the x86 counter, is in `process`.

/// CNTVCT_EL0, the generic timer's virtual count. The ISB before it keeps the read from being taken
/// early, ahead of the instructions before it (the counter read is not ordered otherwise).
#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub fn cntvct() -> u64 {
    let v: u64;
    // SAFETY: Linux lets EL0 read CNTVCT_EL0 on every arm64 system (the vDSO relies on it; where an
    // erratum needs it, the kernel traps and emulates the read). ISB and MRS touch no memory.
    unsafe {
        core::arch::asm!("isb", "mrs {v}, cntvct_el0", v = out(reg) v, options(nostack, nomem, preserves_flags))
    };
    v
}

/// CNTFRQ_EL0: the counter's frequency in Hz as the firmware set it (0 when it did not).
#[cfg(target_arch = "aarch64")]
pub fn cntfrq() -> u64 {
    let v: u64;
    // SAFETY: CNTFRQ_EL0 is readable at EL0 wherever CNTVCT_EL0 is; MRS touches no memory.
    unsafe {
        core::arch::asm!("mrs {v}, cntfrq_el0", v = out(reg) v, options(nostack, nomem, preserves_flags))
    };
    v
}

/// CNTVCT read with MRRC from CP15 (ARMv7 with the generic timer extension), after an ISB.
///
/// Only call it after [`cntvct_readable`] said yes: on a CPU without the generic timer (Cortex-A9) or
/// where the kernel keeps it from user space, the read raises SIGILL.
#[cfg(target_arch = "arm")]
#[inline(always)]
pub fn cntvct() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: the caller checked with `cntvct_readable` that this read does not trap here; ISB and MRRC
    // touch no memory.
    unsafe {
        core::arch::asm!("isb", "mrrc p15, 1, {lo}, {hi}, c14", lo = out(reg) lo, hi = out(reg) hi,
            options(nostack, nomem, preserves_flags))
    };
    (u64::from(hi) << 32) | u64::from(lo)
}

/// CNTFRQ read with MRC from CP15 (0 when the firmware did not set it). Same condition as [`cntvct`].
#[cfg(target_arch = "arm")]
pub fn cntfrq() -> u64 {
    let v: u32;
    // SAFETY: as for `cntvct` (CNTFRQ is readable wherever CNTVCT is); MRC touches no memory.
    unsafe {
        core::arch::asm!("mrc p15, 0, {v}, c14, c0, 0", v = out(reg) v, options(nostack, nomem, preserves_flags))
    };
    u64::from(v)
}

#[cfg(target_arch = "arm")]
extern "C" fn exit_on_sigill(_: libc::c_int) {
    // SAFETY: _exit is async-signal-safe; this runs only in the probe's child.
    unsafe { libc::_exit(PROBE_TRAPPED) };
}

#[cfg(target_arch = "arm")]
const PROBE_TRAPPED: libc::c_int = 77;

/// Whether this process may read CNTVCT and CNTFRQ: a forked child reads both, with SIGILL turned into
/// an exit status, so a CPU without the generic timer (Cortex-A9) or a kernel that keeps it from user
/// space never kills iolab (and leaves no core file). `Err`: why not.
#[cfg(target_arch = "arm")]
pub fn cntvct_readable() -> Result<(), String> {
    // SAFETY: the child only installs a signal handler, reads two registers and calls _exit, all
    // async-signal-safe, so forking a process that may have other threads is sound.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!(
            "could not fork the probe of CNTVCT ({})",
            std::io::Error::last_os_error()
        ));
    }
    if pid == 0 {
        // SAFETY: a zeroed sigaction with a plain handler is valid; only this child is affected.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = exit_on_sigill as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigaction(libc::SIGILL, &sa, std::ptr::null_mut());
            libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut());
            libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
            let a = cntvct();
            let f = cntfrq();
            std::hint::black_box((a, f));
            libc::_exit(0);
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer; `pid` is our child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err("could not wait for the probe of CNTVCT".into());
        }
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, PROBE_TRAPPED) => Err(
            "reading CNTVCT (mrrc p15) traps here: this CPU has no generic timer (a Cortex-A9 has none) \
             or the kernel keeps it from user space"
                .into(),
        ),
        _ => Err(format!("the probe of CNTVCT ended with status {status:#x}")),
    }
}

/// clock_gettime(CLOCK_MONOTONIC) as a system call of its own, never through the vDSO: what a clock read
/// costs when the vDSO has no fast path and falls back to the call.
pub fn monotonic_ns_syscall() -> u64 {
    // The kernel's timespec for this call number is two longs on every architecture (time_t is 32-bit
    // on 32-bit ARM's clock_gettime, 64-bit on 64-bit ones).
    let mut ts: [libc::c_long; 2] = [0, 0];
    // SAFETY: `ts` is a valid out-pointer of the layout the kernel writes for SYS_clock_gettime.
    unsafe {
        libc::syscall(
            libc::SYS_clock_gettime,
            libc::CLOCK_MONOTONIC,
            ts.as_mut_ptr(),
        )
    };
    ts[0] as u64 * 1_000_000_000 + ts[1] as u64
}

/// Whether the kernel gave this process a vDSO (AT_SYSINFO_EHDR): without one every clock_gettime is a
/// system call.
pub fn has_vdso() -> bool {
    // SAFETY: getauxval reads the process's auxiliary vector and has no preconditions.
    unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) != 0 }
}
