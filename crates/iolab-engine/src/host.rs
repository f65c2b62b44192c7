//! The machine a result was produced on, as every record states it (`host` in the JSON).

use serde::{Deserialize, Serialize};

/// Where and with what a result was produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Host {
    pub iolab_version: String,
    pub kernel_release: String,
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
