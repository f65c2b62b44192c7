//! System calls by their instruction, for the hot paths (io_uring_enter, pwrite, pread): libc's
//! wrappers add a cancellation point and errno handling to every call (about 15 user instructions a call
//! for pwrite, measured by callgrind), and `syscall()` is variadic.

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use super::errno::{SysErr, SysResult};

/// The system call instruction: number `$n`, six arguments `$a`, the asm options given besides `nostack`;
/// evaluates to the kernel's value. The one place that writes each architecture's convention.
#[cfg(target_arch = "x86_64")]
macro_rules! syscall_insn {
    ($n:expr, $a:expr $(, $opt:ident)*) => {{
        let (n, a): (u64, [u64; 6]) = ($n, $a);
        let ret: i64;
        // The x86_64 Linux system call convention: number in rax, arguments in rdi, rsi, rdx, r10, r8,
        // r9; the kernel clobbers rcx and r11 and returns in rax.
        core::arch::asm!(
            "syscall",
            inlateout("rax") n as i64 => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2], in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack $(, $opt)*)
        );
        ret
    }};
}

#[cfg(target_arch = "aarch64")]
macro_rules! syscall_insn {
    ($n:expr, $a:expr $(, $opt:ident)*) => {{
        let (n, a): (u64, [u64; 6]) = ($n, $a);
        let ret: i64;
        // The aarch64 Linux system call convention: number in x8, arguments in x0-x5, the result in x0.
        core::arch::asm!(
            "svc 0",
            in("x8") n,
            inlateout("x0") a[0] => ret,
            in("x1") a[1], in("x2") a[2], in("x3") a[3], in("x4") a[4], in("x5") a[5],
            options(nostack $(, $opt)*)
        );
        ret
    }};
}

/// A six-argument system call by its instruction; returns the kernel's value (-errno on failure).
///
/// # Safety
/// The arguments must be what system call `n` expects: any pointer among them valid for what the call
/// reads or writes.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) unsafe fn raw_syscall6(n: u64, a: [u64; 6]) -> i64 {
    // SAFETY: the architecture's system call convention (in the macro), with the arguments the caller
    // vouches for. Memory is not declared untouched.
    unsafe { syscall_insn!(n, a) }
}

/// [`raw_syscall6`] for a call that changes no memory of the process (pwrite64 to a file the process
/// does not map): the compiler may keep values in registers across it, where a call that may write
/// memory makes it reload them (psync 4 B writes: 84.6 -> 83.1 user instructions per op, callgrind).
///
/// # Safety
/// As [`raw_syscall6`], and system call `n` must change no memory of the process.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) unsafe fn raw_syscall6_ro(n: u64, a: [u64; 6]) -> i64 {
    // SAFETY: as in `raw_syscall6`; `readonly`: the call may read memory (the buffer it writes out) but
    // changes none, as the caller promises.
    unsafe { syscall_insn!(n, a, readonly) }
}

/// The kernel's return value `r` of system call `name`: its errno (from -4095..-1) or the count.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) fn counted(name: &'static str, r: i64) -> SysResult<usize> {
    if (-4095..0).contains(&r) {
        Err(failed(name, r))
    } else {
        Ok(r as usize)
    }
}

/// The error of a failed call, out of line: the hot path does not prepare it.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[cold]
#[inline(never)]
fn failed(name: &'static str, r: i64) -> SysErr {
    SysErr::new(name, -r as i32)
}
