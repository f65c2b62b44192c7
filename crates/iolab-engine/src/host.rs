//! The machine a result was produced on, as every record states it (`host` in the JSON).

use serde::{Deserialize, Serialize};

/// Where and with what a result was produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub iolab_version: String,
    pub kernel_release: String,
    /// The kernel's preemption model as its version string names it: "PREEMPT_RT" (a real-time kernel),
    /// "PREEMPT_DYNAMIC" (chosen at boot), "PREEMPT" or "none" (voluntary or no forced preemption);
    /// absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_preempt: Option<String>,
    pub cpu_model: String,
    /// The CPUs iolab may run on (its affinity: with `--cpus`, those it was given).
    pub cpus_online: usize,
    /// The CPUs `--cpus` pinned iolab's threads to (absent where it did not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_pinned: Option<Vec<u32>>,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix_s: u64,
    /// Whether iolab ran as root (some kernel features depend on it).
    pub root: bool,
    /// The CPU was emulated (QEMU TCG, e.g. a guest of `iolab vm`, or qemu-user): the figures show how the kernel
    /// behaves (counts, bytes, punts, polled completions), not how fast real hardware is.
    #[serde(default)]
    pub emulated: bool,
    /// How the CPU ran when iolab knows it: "tcg" (emulated by QEMU) or "kvm" (a hardware-virtualized guest
    /// of `iolab vm`), from the guest kernel's `iolab.accel=` (or QEMU TCG's CPUID signature), or
    /// "qemu-user" (ARM code translated on an x86_64 kernel by a user-mode emulator); null otherwise.
    #[serde(default)]
    pub accelerator: Option<String>,
}

/// The preemption model a kernel's version string (`uname -v`) names.
pub fn preempt_of(version: &str) -> &'static str {
    let words: Vec<&str> = version.split_whitespace().collect();
    ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"]
        .into_iter()
        .find(|m| words.contains(m))
        .unwrap_or("none")
}

impl Host {
    pub fn current() -> Host {
        let accelerator = crate::emulation::guest::accelerator();
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        Host {
            iolab_version: env!("CARGO_PKG_VERSION").to_string(),
            kernel_release: iolab_sys::kernel_release(),
            kernel_preempt: Some(preempt_of(&iolab_sys::kernel_version()).into()),
            cpu_model,
            cpus_online: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            cpus_pinned: crate::cpus::pinned(),
            started_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            root: iolab_sys::geteuid() == 0,
            emulated: crate::emulation::guest::is_emulated(accelerator.as_deref()),
            accelerator,
        }
    }

    /// "iolab's threads ran on CPU 1 only (--cpus) ...", where `--cpus` pinned them.
    pub fn pinned_line(&self) -> Option<String> {
        self.cpus_pinned.as_ref().map(|c| {
            let list: Vec<String> = c.iter().map(u32::to_string).collect();
            format!(
                "iolab's threads ran on CPU {} only (--cpus); other work could still run there",
                list.join(",")
            )
        })
    }

    /// The line tables print for figures from an emulated CPU, if these are.
    pub fn emulated_line(&self) -> Option<String> {
        self.emulated.then(|| {
            if self.accelerator.as_deref() == Some(crate::emulation::user_mode::ACCEL) {
                return format!(
                    "figures from user-mode emulation (qemu-user: {}): behaviour, not speed; io_uring, \
                     native AIO and perf counters are not emulated",
                    crate::emulation::user_mode::detected().unwrap_or("foreign code")
                );
            }
            format!(
                "figures from an emulated guest (QEMU {}): behaviour, not speed",
                self.accelerator.as_deref().unwrap_or("tcg").to_uppercase()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_preemption_model_is_read_from_the_version_string() {
        for (v, m) in [
            (
                "#1 SMP PREEMPT_RT Debian 6.1.158-1 (2025-11-09)",
                "PREEMPT_RT",
            ),
            (
                "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)",
                "PREEMPT_DYNAMIC",
            ),
            ("#1 SMP PREEMPT Fri Jan 3 2025", "PREEMPT"),
            ("#1 SMP Debian 6.1.158-1 (2025-11-09)", "none"),
        ] {
            assert_eq!(super::preempt_of(v), m, "{v}");
        }
    }
}
