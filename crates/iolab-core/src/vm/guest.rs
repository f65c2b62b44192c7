//! Inside a guest: does iolab run emulated? `iolab vm` says so on the guest kernel's command line
//! (`iolab.accel=tcg` or `kvm`); elsewhere the CPU's hypervisor leaf answers where QEMU's TCG signs it
//! (CPUID 0x40000000 = "TCGTCGTCGTCG"). Figures from an emulated CPU show behaviour, not speed.

/// How this system's CPU runs, when it is known: `"tcg"` (emulated by QEMU), `"kvm"` (a hardware-virtualized
/// guest of iolab vm), `"qemu-user"` (this process's code translated by a user-mode emulator), or None
/// (nothing says it is emulated).
pub fn accelerator() -> Option<String> {
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    from_cmdline(&cmdline)
        .or_else(from_cpuid)
        .or_else(|| super::user_mode::detected().map(|_| super::user_mode::ACCEL.to_string()))
}

/// The `iolab.accel=` word of a kernel command line.
pub fn from_cmdline(cmdline: &str) -> Option<String> {
    cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("iolab.accel="))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// QEMU's TCG signs the hypervisor CPUID leaf "TCGTCGTCGTCG" (when the CPU model exposes it).
#[cfg(target_arch = "x86_64")]
fn from_cpuid() -> Option<String> {
    let (_, _, ecx, _) = crate::sys::cpuid(1);
    // ECX bit 31: running under a hypervisor.
    if ecx & (1 << 31) == 0 {
        return None;
    }
    let (_, b, c, d) = crate::sys::cpuid(0x4000_0000);
    let sig: Vec<u8> = [b, c, d].iter().flat_map(|r| r.to_le_bytes()).collect();
    (&sig[..] == b"TCGTCGTCGTCG").then(|| "tcg".to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn from_cpuid() -> Option<String> {
    None
}

/// Is an accelerator an emulator (its figures not the hardware's speed)?
pub fn is_emulated(accel: Option<&str>) -> bool {
    accel == Some("tcg") || accel == Some(super::user_mode::ACCEL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accelerator_word_of_the_command_line() {
        assert_eq!(
            from_cmdline("console=ttyS0 quiet iolab.accel=tcg nvme.poll_queues=2\n").as_deref(),
            Some("tcg")
        );
        assert_eq!(from_cmdline("console=ttyS0 quiet"), None);
        assert_eq!(from_cmdline("iolab.accel="), None);
        assert!(is_emulated(Some("tcg")));
        assert!(is_emulated(Some("qemu-user")));
        assert!(!is_emulated(Some("kvm")));
        assert!(!is_emulated(None));
    }
}
