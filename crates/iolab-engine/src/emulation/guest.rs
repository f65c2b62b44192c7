//! Inside a guest: does iolab run emulated? `iolab vm` says so on the guest kernel's command line
//! (`iolab.accel=tcg` or `kvm`, on every architecture); elsewhere the CPU answers where QEMU's TCG signs
//! it: on x86_64 the hypervisor leaf (CPUID 0x40000000 = "TCGTCGTCGTCG"), on aarch64 the MIDR_EL1 of
//! QEMU's `max` CPU (implementer 0, "reserved for software use", part number 0x051, 'Q'), which the kernel
//! shows in /sys/devices/system/cpu/cpu0/regs/identification/midr_el1. A TCG guest with a real CPU model
//! (`-cpu cortex-a72`, as `iolab vm --arch aarch64` boots) is told only by the command line. Figures from
//! an emulated CPU show behaviour, not speed.

/// How this system's CPU runs, when it is known: `"tcg"` (emulated by QEMU), `"kvm"` (a hardware-virtualized
/// guest of iolab vm), `"qemu-user"` (this process's code translated by a user-mode emulator), or None
/// (nothing says it is emulated).
pub fn accelerator() -> Option<String> {
    let cmdline = std::fs::read_to_string("/proc/cmdline").unwrap_or_default();
    from_cmdline(&cmdline)
        .or_else(from_cpuid)
        .or_else(from_midr)
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
    let (_, _, ecx, _) = iolab_sys::cpuid(1);
    // ECX bit 31: running under a hypervisor.
    if ecx & (1 << 31) == 0 {
        return None;
    }
    let (_, b, c, d) = iolab_sys::cpuid(0x4000_0000);
    let sig: Vec<u8> = [b, c, d].iter().flat_map(|r| r.to_le_bytes()).collect();
    (&sig[..] == b"TCGTCGTCGTCG").then(|| "tcg".to_string())
}

#[cfg(not(target_arch = "x86_64"))]
fn from_cpuid() -> Option<String> {
    None
}

/// QEMU's `max` CPU under TCG, by its MIDR_EL1 (sysfs, as the kernel read it at boot).
#[cfg(target_arch = "aarch64")]
fn from_midr() -> Option<String> {
    let p = "/sys/devices/system/cpu/cpu0/regs/identification/midr_el1";
    midr_is_qemu_max(&std::fs::read_to_string(p).ok()?).then(|| "tcg".to_string())
}

#[cfg(not(target_arch = "aarch64"))]
fn from_midr() -> Option<String> {
    None
}

/// A MIDR_EL1 value as sysfs prints it ("0x00000000000f0510"): implementer 0 and part 0x051 are QEMU's `max`.
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
fn midr_is_qemu_max(text: &str) -> bool {
    let t = text.trim();
    let Ok(v) = u64::from_str_radix(t.strip_prefix("0x").unwrap_or(t), 16) else {
        return false;
    };
    (v >> 24) & 0xff == 0 && (v >> 4) & 0xfff == 0x051
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

    #[test]
    fn qemu_max_by_its_midr() {
        assert!(midr_is_qemu_max("0x00000000000f0510\n"));
        // A Cortex-A72 (a Raspberry Pi 4, or QEMU's cortex-a72 model) and garbage are not.
        assert!(!midr_is_qemu_max("0x00000000410fd083\n"));
        assert!(!midr_is_qemu_max("zz"));
    }
}
