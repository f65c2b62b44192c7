//! Were `--iopoll` completions really polled? IORING_SETUP_IOPOLL only asks: a device without poll queues
//! either refuses (6.18: completions fail with EOPNOTSUPP) or, on older kernels such as 6.1, silently
//! completes the requests by interrupt. So iolab does not trust the flag: it reads the device's
//! `queue/io_poll` (1 when the driver has poll queues, e.g. NVMe with `nvme.poll_queues=N`) and counts the
//! device's interrupts (its MSI/MSI-X lines in /proc/interrupts, summed over CPUs) just before and just
//! after the timed span. Polled completions raise none; completions by interrupt raise about one each.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The block device behind a target and its interrupt lines.
#[derive(Debug, Clone)]
pub struct IrqWatch {
    /// The whole disk's name (`nvme0n1`, `vda`, `loop0`).
    pub device: String,
    /// `queue/io_poll` of the disk, when it has one.
    pub io_poll: Option<bool>,
    /// The device's interrupt lines: (irq number, name in /proc/interrupts).
    pub lines: Vec<(u32, String)>,
}

/// One interrupt line's count over the timed span.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IrqLine {
    pub irq: u32,
    /// Its name in /proc/interrupts (`nvme0q1`, `virtio1-req.0`).
    pub name: String,
    pub before: u64,
    pub after: u64,
}

/// The evidence for or against polled completions (io_uring `--iopoll` runs).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IopollFigures {
    /// The block device the target is on (the whole disk).
    pub device: String,
    /// `/sys/block/DEV/queue/io_poll`: the device has poll queues (null: no such file).
    pub io_poll: Option<bool>,
    /// The device's interrupt lines, counted just before and after the timed span.
    pub lines: Vec<IrqLine>,
    /// Their total rise over the timed span (null: the device has no interrupt lines of its own, e.g. a
    /// loop device).
    pub interrupts: Option<u64>,
    /// Completions over the span (the run's ops).
    pub completions: u64,
    /// true: polled (io_poll set and no interrupt per completion); false: completed by interrupt (the kernel
    /// fell back); null: cannot be told here.
    pub polled: Option<bool>,
    /// The verdict in words.
    pub verdict: String,
}

/// (major, minor) of a Linux dev_t.
fn major_minor(dev: u64) -> (u64, u64) {
    (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    )
}

/// The sysfs directory of the whole disk holding `target` (a block device, a file on one, or an NVMe
/// generic device's namespace).
pub fn disk_dir(target: &Path) -> Option<PathBuf> {
    // A file not made yet: the directory it will be made in.
    let m = match std::fs::metadata(target) {
        Ok(m) => m,
        Err(_) => {
            let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
            std::fs::metadata(dir.unwrap_or(Path::new("."))).ok()?
        }
    };
    // An NVMe generic device: its namespace's disk.
    if m.file_type().is_char_device() {
        let block = super::device_io::generic_block(m.rdev())?;
        return std::fs::canonicalize(format!("/sys/block/{block}")).ok();
    }
    let dev = if m.file_type().is_block_device() {
        m.rdev()
    } else {
        m.dev()
    };
    let (ma, mi) = major_minor(dev);
    let d = std::fs::canonicalize(format!("/sys/dev/block/{ma}:{mi}")).ok()?;
    // A partition's disk is its parent directory.
    Some(if d.join("partition").exists() {
        d.parent()?.to_path_buf()
    } else {
        d
    })
}

/// The interrupt lines of the device at sysfs path `dir`: the MSI/MSI-X vectors of the nearest ancestor
/// that has any (the PCI function), else its legacy `irq`.
fn irq_numbers(dir: &Path) -> Vec<u32> {
    let mut d = Some(dir);
    while let Some(p) = d {
        let msi: Vec<u32> = std::fs::read_dir(p.join("msi_irqs"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        if !msi.is_empty() {
            return msi;
        }
        if let Some(irq) = std::fs::read_to_string(p.join("irq"))
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
            .filter(|&i| i > 0)
        {
            return vec![irq];
        }
        d = p.parent().filter(|q| q.starts_with("/sys/devices"));
    }
    Vec::new()
}

/// /proc/interrupts as (irq, total over CPUs, name).
pub fn interrupts(text: &str) -> Vec<(u32, u64, String)> {
    let mut lines = text.lines();
    let cpus = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|l| {
            let (irq, rest) = l.trim_start().split_once(':')?;
            let irq: u32 = irq.trim().parse().ok()?;
            let words: Vec<&str> = rest.split_whitespace().collect();
            let counts = words.iter().take(cpus).map_while(|w| w.parse::<u64>().ok());
            let n = counts.clone().count();
            let name = words
                .get(n..)
                .map(|w| w.last().copied().unwrap_or(""))
                .unwrap_or("");
            Some((irq, counts.sum(), name.to_string()))
        })
        .collect()
}

impl IrqWatch {
    /// The device `target` is on, or None when it is on no block device (tmpfs, /dev/null).
    pub fn for_target(target: &Path) -> Option<IrqWatch> {
        let dir = disk_dir(target)?;
        let device = dir.file_name()?.to_string_lossy().into_owned();
        let io_poll = std::fs::read_to_string(dir.join("queue/io_poll"))
            .ok()
            .map(|s| s.trim() == "1");
        let mut numbers = irq_numbers(&dir);
        numbers.sort_unstable();
        let table = interrupts(&std::fs::read_to_string("/proc/interrupts").unwrap_or_default());
        let lines = numbers
            .iter()
            .map(|n| {
                let name = table
                    .iter()
                    .find(|t| t.0 == *n)
                    .map(|t| t.2.clone())
                    .unwrap_or_default();
                (*n, name)
            })
            .collect();
        Some(IrqWatch {
            device,
            io_poll,
            lines,
        })
    }

    /// The device's lines' counts now, in the order of `lines`.
    pub fn snapshot(&self) -> Vec<u64> {
        if self.lines.is_empty() {
            return Vec::new();
        }
        let table = interrupts(&std::fs::read_to_string("/proc/interrupts").unwrap_or_default());
        self.lines
            .iter()
            .map(|(n, _)| table.iter().find(|t| t.0 == *n).map_or(0, |t| t.1))
            .collect()
    }

    /// The figures between two snapshots over `completions` completions.
    pub fn figures(&self, before: &[u64], after: &[u64], completions: u64) -> IopollFigures {
        let lines: Vec<IrqLine> = self
            .lines
            .iter()
            .zip(before.iter().zip(after))
            .map(|((irq, name), (b, a))| IrqLine {
                irq: *irq,
                name: name.clone(),
                before: *b,
                after: *a,
            })
            .collect();
        let interrupts = (!lines.is_empty())
            .then(|| lines.iter().map(|l| l.after.saturating_sub(l.before)).sum());
        let mut f = IopollFigures {
            device: self.device.clone(),
            io_poll: self.io_poll,
            lines,
            interrupts,
            completions,
            ..Default::default()
        };
        (f.polled, f.verdict) = verdict(&f);
        f
    }
}

/// Polled, fell back to interrupts, or cannot be told, and why, in words.
pub fn verdict(f: &IopollFigures) -> (Option<bool>, String) {
    let dev = &f.device;
    let flag = match f.io_poll {
        Some(true) => format!("/sys/block/{dev}/queue/io_poll is 1 (the device has poll queues)"),
        Some(false) => {
            format!("/sys/block/{dev}/queue/io_poll is 0 (the device has no poll queues)")
        }
        None => format!("{dev} has no queue/io_poll"),
    };
    let n = f.completions;
    match f.interrupts {
        None => (
            None,
            format!(
                "{flag}, and no interrupt lines of its own (a loop or memory device): polled completions cannot \
                 be told from others here"
            ),
        ),
        Some(i) if f.io_poll == Some(true) && i.saturating_mul(10) < n.max(1) => (
            Some(true),
            format!(
                "completions were polled: {flag} and its interrupts rose by {i} during {n} completions"
            ),
        ),
        Some(i) => (
            Some(false),
            format!(
                "completions were NOT polled: {flag}, and its interrupts rose by {i} during {n} completions: this \
                 kernel (Linux {}) accepted IORING_SETUP_IOPOLL and completed the requests by interrupt, \
                 silently (where it cannot poll, Linux 6.1 does so for reads; Linux 6.18 refuses reads with \
                 EOPNOTSUPP but not ext4 O_DIRECT writes)",
                iolab_sys::kernel_release()
            ),
        ),
    }
}

/// For an IOPOLL refusal (EOPNOTSUPP): what the device's queue says, when `target` is on a block device.
pub fn refusal_text(target: &Path) -> Option<String> {
    let w = IrqWatch::for_target(target)?;
    Some(match w.io_poll {
        Some(true) => format!(
            "/sys/block/{}/queue/io_poll is 1, yet the kernel refused the polled completions",
            w.device
        ),
        Some(false) => format!(
            "/sys/block/{}/queue/io_poll is 0, and this kernel refuses IOPOLL there rather than falling back \
             to interrupts",
            w.device
        ),
        None => format!("{} has no queue/io_poll: it cannot poll", w.device),
    })
}

/// Why `target` is not a block device with poll queues (a suite step's `needs = "poll-queues"`), if it
/// is not.
pub fn poll_queues_unmet(target: &Path) -> Option<String> {
    let guest = "the guest of `iolab vm` has them: run the suite with --vm";
    match std::fs::metadata(target) {
        Err(_) => {
            return Some(format!(
                "{} does not exist here ({guest})",
                target.display()
            ))
        }
        Ok(m) if m.file_type().is_block_device() => {}
        Ok(m)
            if m.file_type().is_char_device()
                && super::device_io::generic_block(m.rdev()).is_some() => {}
        _ => {
            return Some(format!(
                "{} is neither a block device nor an NVMe generic device here ({guest})",
                target.display()
            ))
        }
    }
    match IrqWatch::for_target(target).and_then(|w| w.io_poll.map(|p| (w.device, p))) {
        Some((_, true)) => None,
        Some((dev, false)) => Some(format!(
            "/sys/block/{dev}/queue/io_poll is 0: the device has no poll queues ({guest})"
        )),
        None => Some(format!(
            "{} has no queue/io_poll ({guest})",
            target.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERRUPTS: &str = "           CPU0       CPU1       \n  \
        24:          1          0  IO-APIC   5-edge      ACPI:Ged\n  \
        30:         10          5  PCI-MSIX-0000:00:04.0   0-edge      nvme0q0\n  \
        31:       4990          0  PCI-MSIX-0000:00:04.0   1-edge      nvme0q1\n\
        NMI:          0          0   Non-maskable interrupts\n";

    #[test]
    fn proc_interrupts_totals_per_line() {
        let t = interrupts(INTERRUPTS);
        assert_eq!(t[1], (30, 15, "nvme0q0".to_string()));
        assert_eq!(t[2], (31, 4990, "nvme0q1".to_string()));
        assert_eq!(t.len(), 3, "NMI is no numbered line: {t:?}");
    }

    fn watch(io_poll: Option<bool>, lines: usize) -> IrqWatch {
        IrqWatch {
            device: "nvme0n1".into(),
            io_poll,
            lines: (0..lines)
                .map(|i| (30 + i as u32, format!("nvme0q{i}")))
                .collect(),
        }
    }

    #[test]
    fn polled_only_with_poll_queues_and_flat_interrupts() {
        let f = watch(Some(true), 2).figures(&[15, 7], &[15, 7], 5000);
        assert_eq!((f.interrupts, f.polled), (Some(0), Some(true)));
        assert!(f.verdict.contains("rose by 0 during 5000"), "{}", f.verdict);
        let f = watch(Some(false), 2).figures(&[15, 7], &[15, 5007], 5000);
        assert_eq!(f.polled, Some(false));
        assert!(
            f.verdict.contains("NOT polled") && f.verdict.contains("io_poll is 0"),
            "{}",
            f.verdict
        );
        // Poll queues, but the completions still came by interrupt.
        let f = watch(Some(true), 1).figures(&[0], &[4000], 5000);
        assert_eq!(f.polled, Some(false));
        let f = watch(Some(false), 0).figures(&[], &[], 5000);
        assert_eq!((f.interrupts, f.polled), (None, None));
        assert!(f.verdict.contains("cannot be told"));
    }

    #[test]
    fn poll_queues_are_needed_on_a_block_device() {
        let why = poll_queues_unmet(Path::new("/nonexistent/nvme9n9")).unwrap();
        assert!(
            why.contains("/nonexistent/nvme9n9 does not exist here") && why.contains("--vm"),
            "{why}"
        );
        let why = poll_queues_unmet(Path::new("/dev/null")).unwrap();
        assert!(
            why.contains("/dev/null is neither a block device nor an NVMe generic device"),
            "{why}"
        );
    }

    #[test]
    fn dev_t_halves() {
        assert_eq!(major_minor(65024), (254, 0));
        assert_eq!(major_minor(259 << 8 | 3), (259, 3));
    }
}
