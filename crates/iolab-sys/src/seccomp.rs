//! seccomp: the offload client's sandbox, a classic-BPF filter that allows a fixed list of system calls
//! and kills the whole process on any other (SECCOMP_SET_MODE_FILTER after PR_SET_NO_NEW_PRIVS).
//!
//! Unlike SECCOMP_MODE_STRICT, a filter leaves the time stamp counter readable: strict mode also disables
//! the TSC for the task (CR4.TSD: RDTSC, RDTSCP and the vDSO's clock_gettime then raise SIGSEGV, as a probe
//! here showed), a filter does not.

use super::errno::{result, SysErr, SysResult};

/// The kernel's <linux/audit.h> bits of an AUDIT_ARCH_* value (libc has the ELF machine numbers, EM_*,
/// but not these): a 64-bit ABI, and a little-endian one.
const AUDIT_ARCH_64BIT: u32 = 0x8000_0000;
const AUDIT_ARCH_LE: u32 = 0x4000_0000;

/// AUDIT_ARCH of the build target (`seccomp_data.arch` of its native system calls), composed as
/// <linux/audit.h> does from libc's ELF machine number; `None` on a target this table does not know.
pub const fn audit_arch() -> Option<u32> {
    let width = if cfg!(target_pointer_width = "64") {
        AUDIT_ARCH_64BIT
    } else {
        0
    };
    let endian = if cfg!(target_endian = "little") {
        AUDIT_ARCH_LE
    } else {
        0
    };
    let em = if cfg!(target_arch = "x86_64") {
        libc::EM_X86_64
    } else if cfg!(target_arch = "aarch64") {
        libc::EM_AARCH64
    } else if cfg!(target_arch = "riscv64") {
        libc::EM_RISCV
    } else if cfg!(target_arch = "x86") {
        libc::EM_386
    } else if cfg!(target_arch = "arm") {
        libc::EM_ARM
    } else {
        return None;
    };
    Some(em as u32 | width | endian)
}

/// The most system calls an allow list may name (the jump offsets are 8 bits).
const MAX_ALLOWED: usize = 200;

/// Offsets of `struct seccomp_data`'s fields the filter loads.
const NR_OFF: u32 = std::mem::offset_of!(libc::seccomp_data, nr) as u32;
const ARCH_OFF: u32 = std::mem::offset_of!(libc::seccomp_data, arch) as u32;

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jeq(k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    }
}

/// The filter: the architecture must be `arch` (a call through another ABI, say 32-bit int 0x80 on
/// x86_64, has other numbers and is killed), then the number must be one of `allowed`, else the process is
/// killed. Numbers of the x32 ABI (`__X32_SYSCALL_BIT` set, same arch) match none of `allowed`, so they
/// are killed too.
pub fn allow_list_program(arch: u32, allowed: &[libc::c_long]) -> Vec<libc::sock_filter> {
    let n = allowed.len();
    let kill = stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_KILL_PROCESS);
    let allow = stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW);
    let mut p = vec![
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, ARCH_OFF),
        jeq(arch, 1, 0),
        kill,
        stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, NR_OFF),
    ];
    for (i, &nr) in allowed.iter().enumerate() {
        // Equal: jump over the rest of the list and the kill, to the allow.
        p.push(jeq(nr as u32, (n - i) as u8, 0));
    }
    p.push(kill);
    p.push(allow);
    p
}

/// Confines the calling process for good: prctl(PR_SET_NO_NEW_PRIVS) (which lets an unprivileged process
/// install a filter), then seccomp(SECCOMP_SET_MODE_FILTER) of [`allow_list_program`]. From then on any
/// system call outside `allowed` kills the process (SIGSYS, SECCOMP_RET_KILL_PROCESS). Two system calls.
pub fn seccomp_allow_only(allowed: &[libc::c_long]) -> SysResult<()> {
    let arch = audit_arch().ok_or(SysErr::new("seccomp", libc::ENOSYS))?;
    if allowed.len() > MAX_ALLOWED {
        return Err(SysErr::new("seccomp", libc::E2BIG));
    }
    // The program is copied to the stack and its vector freed before the filter is installed: a free
    // after it may itself be a system call (musl's malloc unmaps and madvises freed groups), which the
    // filter would kill. The static musl build's client died so, by SIGSYS, in one run of ten.
    let mut prog = [stmt(0, 0); 4 + MAX_ALLOWED + 2];
    let len = {
        let v = allow_list_program(arch, allowed);
        prog[..v.len()].copy_from_slice(&v);
        v.len()
    };
    let prog = &prog[..len];
    // SAFETY: the prctl takes integers only.
    result("prctl(PR_SET_NO_NEW_PRIVS)", unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0)
    })?;
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: `fprog` points to `prog`, `len` instructions that live across the call (the kernel copies
    // them); flags 0.
    result("seccomp(SECCOMP_SET_MODE_FILTER)", unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER as libc::c_ulong,
            0 as libc::c_ulong,
            &fprog as *const libc::sock_fprog,
        )
    })
    .map(|_| ())
}

/// exit_group(2): ends every thread of the process (allowed by the offload client's filter).
pub fn exit_group(code: i32) -> ! {
    // SAFETY: SYS_exit_group never returns and reads no memory.
    unsafe {
        libc::syscall(libc::SYS_exit_group, code);
    }
    loop {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_checks_the_arch_then_each_allowed_number() {
        let p = allow_list_program(0xC000_003E, &[0, 1, 60]);
        assert_eq!(p.len(), 4 + 3 + 2);
        assert_eq!(p[1].k, 0xC000_003E);
        assert_eq!(p[2].k, libc::SECCOMP_RET_KILL_PROCESS);
        // Each match jumps to the last instruction, the allow.
        for i in 0..3 {
            assert_eq!(4 + i + 1 + p[4 + i].jt as usize, p.len() - 1);
        }
        assert_eq!(p[p.len() - 1].k, libc::SECCOMP_RET_ALLOW);
        assert_eq!(p[p.len() - 2].k, libc::SECCOMP_RET_KILL_PROCESS);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn audit_arch_is_the_kernels_x86_64_value() {
        // <linux/audit.h>: AUDIT_ARCH_X86_64 = EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE.
        assert_eq!(audit_arch(), Some(0xC000_003E));
    }
}
