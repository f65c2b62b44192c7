//! Does this process run under a user-mode emulator (qemu-user, e.g. qemu-aarch64-static through
//! binfmt_misc), that is, ARM code translated on an x86_64 kernel? qemu-user implements neither
//! io_uring, nor native AIO, nor perf_event_open: they answer ENOSYS whatever the kernel has, and iolab must
//! say so instead of "this kernel has no io_uring".
//!
//! The signal: the machine the running kernel was built for differs from the one iolab was compiled
//! for, and is not its 64-bit parent (32-bit ARM code on an arm64 kernel, as on a Raspberry Pi with a
//! 32-bit OS, runs natively). The kernel's machine comes from /proc/sys/kernel/arch, which qemu-user
//! passes through untouched (it fakes uname(2), /proc/self/* and, in newer versions, /proc/cpuinfo, but
//! not sysctls); where that file is missing (kernels before 5.x), from the shape of /proc/cpuinfo
//! (x86 kernels list `vendor_id` and `flags`, ARM kernels `CPU architecture` and `Features`). Other
//! signals were rejected: /proc/self/exe and the auxiliary vector are the guest's under qemu-user, and a
//! registered binfmt_misc handler says qemu is installed, not that this process runs under it.

use std::sync::OnceLock;

/// The architecture family of a kernel machine name (uname -m, /proc/sys/kernel/arch), in Rust's
/// `std::env::consts::ARCH` names.
pub fn family(machine: &str) -> Option<&'static str> {
    let m = machine.trim();
    Some(match m {
        "aarch64" | "arm64" | "aarch64_be" => "aarch64",
        "x86_64" | "amd64" => "x86_64",
        "i386" | "i486" | "i586" | "i686" => "x86",
        "riscv64" => "riscv64",
        "ppc64le" | "ppc64" => "powerpc64",
        "s390x" => "s390x",
        _ if m.starts_with("arm") => "arm",
        _ => return None,
    })
}

/// Is code compiled for `ours` (a `std::env::consts::ARCH` name) running on a kernel for `machine`
/// only through a user-mode emulator? False when the machine is unknown.
pub fn emulated(ours: &str, machine: &str) -> bool {
    match family(machine) {
        None => false,
        Some(k) if k == ours => false,
        // 32-bit code on its own 64-bit kernel runs natively (compat mode).
        Some("aarch64") if ours == "arm" => false,
        Some("x86_64") if ours == "x86" => false,
        Some(_) => true,
    }
}

/// The kernel's machine family guessed from a /proc/cpuinfo text (its field names differ per architecture).
pub fn family_from_cpuinfo(cpuinfo: &str) -> Option<&'static str> {
    let has = |k: &str| cpuinfo.lines().any(|l| l.starts_with(k));
    if has("vendor_id") && has("flags") {
        Some("x86_64")
    } else if has("CPU architecture") || has("Features") {
        // arm and arm64 kernels list the same fields; the CPU architecture value tells them apart.
        let v8 = cpuinfo
            .lines()
            .find(|l| l.starts_with("CPU architecture"))
            .is_some_and(|l| l.trim_end().ends_with('8'));
        Some(if v8 { "aarch64" } else { "arm" })
    } else {
        None
    }
}

/// The running kernel's machine, as this process can learn it past an emulator.
fn kernel_machine() -> Option<String> {
    if let Ok(a) = std::fs::read_to_string("/proc/sys/kernel/arch") {
        if !a.trim().is_empty() {
            return Some(a.trim().to_string());
        }
    }
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    family_from_cpuinfo(&info).map(str::to_string)
}

/// `Some("aarch64 code on an x86_64 kernel")` when this process runs under a user-mode emulator.
pub fn detected() -> Option<&'static str> {
    static D: OnceLock<Option<String>> = OnceLock::new();
    D.get_or_init(|| {
        let ours = std::env::consts::ARCH;
        let k = kernel_machine()?;
        emulated(ours, &k).then(|| format!("{ours} code on an {k} kernel"))
    })
    .as_deref()
}

/// The accelerator name results carry for a process under qemu-user (`host.accelerator`).
pub const ACCEL: &str = "qemu-user";

/// What to say when `call` answers ENOSYS under qemu-user (None for calls qemu-user implements).
pub fn enosys_hint(call: &str) -> Option<&'static str> {
    Some(match call {
        "io_uring_setup" | "io_uring_enter" | "io_uring_register" => {
            "qemu-user does not implement io_uring (iolab runs under user-mode emulation, where every \
             io_uring call answers ENOSYS whatever the kernel has): run iolab on the board itself or in a \
             full-system guest"
        }
        "io_setup" | "io_submit" | "io_getevents" => {
            "qemu-user does not implement native AIO (io_setup answers ENOSYS under user-mode emulation, \
             whatever the kernel has): run iolab on the board itself or in a full-system guest"
        }
        "perf_event_open" => {
            "qemu-user does not implement perf_event_open (it answers ENOSYS under user-mode emulation, \
             whatever the kernel has): run iolab on the board itself or in a full-system guest"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_code_on_an_x86_kernel_is_emulated() {
        assert!(emulated("aarch64", "x86_64"));
        assert!(emulated("arm", "x86_64\n"));
        assert!(emulated("x86_64", "aarch64"));
        assert!(emulated("aarch64", "armv7l"));
    }

    #[test]
    fn native_and_compat_runs_are_not() {
        assert!(!emulated("x86_64", "x86_64"));
        assert!(!emulated("aarch64", "aarch64"));
        assert!(!emulated("arm", "armv7l"));
        // A Raspberry Pi OS 32-bit userland on its arm64 kernel.
        assert!(!emulated("arm", "aarch64"));
        assert!(!emulated("x86", "x86_64"));
        // An unknown machine says nothing.
        assert!(!emulated("aarch64", "sparc64"));
        assert!(!emulated("aarch64", ""));
    }

    #[test]
    fn cpuinfo_shapes_name_the_kernel() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme tsc\n";
        let a64 = "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd\nCPU architecture: 8\n";
        let a32 =
            "processor\t: 0\nmodel name\t: ARMv7 Processor rev 0 (v7l)\nFeatures\t: half thumb\n\
                   CPU architecture: 7\n";
        assert_eq!(family_from_cpuinfo(x86), Some("x86_64"));
        assert_eq!(family_from_cpuinfo(a64), Some("aarch64"));
        assert_eq!(family_from_cpuinfo(a32), Some("arm"));
        assert_eq!(family_from_cpuinfo(""), None);
    }

    #[test]
    fn the_enosys_hints_name_qemu_user() {
        for call in ["io_uring_setup", "io_setup", "perf_event_open"] {
            let h = enosys_hint(call).unwrap();
            assert!(h.starts_with("qemu-user does not implement"), "{h}");
        }
        assert_eq!(enosys_hint("write"), None);
    }

    #[test]
    fn this_test_process_is_detected_as_it_runs() {
        // Natively (cargo test on the host) nothing is emulated; under qemu-user (CI's ARM unit tests)
        // the detection names both architectures.
        if std::env::var_os("IOLAB_EXPECT_QEMU_USER").is_some() {
            assert!(detected().is_some(), "CI runs this test under qemu-user");
        }
        match detected() {
            None => println!("not under user-mode emulation"),
            Some(d) => assert!(d.contains(std::env::consts::ARCH), "{d}"),
        }
    }
}
