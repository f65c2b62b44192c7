//! The accelerator and the qemu command line of the guest.
//!
//! Hardware KVM only where the CPU shows vmx/svm in /proc/cpuinfo, /dev/kvm is read-writable and the KVM in
//! the kernel is not kvm-pvm (a software "PVM" KVM that runs only PVM-built guest kernels; with Debian's
//! kernel `-cpu host` aborts and other models hang): never by /dev/kvm's existence alone. Otherwise QEMU's
//! TCG (`-accel tcg,thread=multi -cpu max`), an emulator: figures from it show behaviour, not speed.
//! A guest of another architecture (arm64 on x86_64: the `virt` machine with a Cortex-A72) is always TCG.

use super::arch::Arch;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How the guest's CPU runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accel {
    Kvm,
    /// Emulated, and why KVM was not used.
    Tcg(String),
}

impl Accel {
    /// The word on the guest's kernel command line (`iolab.accel=`) and in results.
    pub fn name(&self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg(_) => "tcg",
        }
    }
}

/// Decides the accelerator from this host's CPU flags, /dev/kvm and /sys/module.
pub fn choose_accel() -> Accel {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or("");
    let virt = flags.split_whitespace().any(|f| f == "vmx" || f == "svm");
    decide(
        virt,
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/kvm")
            .is_ok(),
        Path::new("/sys/module/kvm_pvm").exists(),
    )
}

/// The accelerator of an `arch` guest: a foreign architecture is always emulated.
pub fn accel_for(arch: Arch) -> Accel {
    if arch.foreign() {
        return Accel::Tcg(format!(
            "an {} guest on an {} host: QEMU TCG emulates its CPU",
            arch.machine(),
            std::env::consts::ARCH
        ));
    }
    choose_accel()
}

fn decide(cpu_virt: bool, kvm_rw: bool, pvm: bool) -> Accel {
    if pvm {
        Accel::Tcg(
            "/dev/kvm is kvm-pvm (software, runs only PVM-built guest kernels): QEMU TCG emulates the CPU"
                .into(),
        )
    } else if !cpu_virt {
        Accel::Tcg(
            "the CPU shows no vmx/svm (no hardware virtualization): QEMU TCG emulates it".into(),
        )
    } else if !kvm_rw {
        Accel::Tcg(
            "/dev/kvm is missing or not read-writable for this user: QEMU TCG emulates the CPU"
                .into(),
        )
    } else {
        Accel::Kvm
    }
}

/// Where the extracted qemu lives and what it needs to run from there.
#[derive(Debug, Clone)]
pub struct Qemu {
    /// The cache's tree (`usr/bin/qemu-system-x86_64` ...).
    pub root: PathBuf,
    /// The guest's architecture (which emulator, machine and serial ports).
    pub arch: Arch,
}

/// Everything the guest is made of on the host side.
#[derive(Debug, Clone)]
pub struct Machine {
    pub accel: Accel,
    pub cpus: usize,
    pub memory_mib: u64,
    pub vmlinuz: PathBuf,
    pub initrd: PathBuf,
    pub cmdline: String,
    /// The NVMe disk (poll queues) and the virtio disk.
    pub nvme: PathBuf,
    pub disk: PathBuf,
    /// The disks can be opened O_DIRECT on the host (cache=none,aio=native), else cache=writeback.
    pub direct: bool,
    /// Shared with the guest (9p, tag `host`).
    pub share: PathBuf,
    /// Files the three serial ports write: the console, the command's stdout and stderr.
    pub serial: [PathBuf; 3],
    /// More options (devices), passed as they are.
    pub extra: Vec<OsString>,
}

/// A path inside a qemu option value (commas are doubled).
fn opt_path(p: &Path) -> String {
    p.to_string_lossy().replace(',', ",,")
}

impl Qemu {
    pub fn binary(&self) -> PathBuf {
        self.root.join("usr/bin").join(self.arch.qemu().1)
    }

    fn lib_dir(&self) -> PathBuf {
        self.root.join("usr/lib/x86_64-linux-gnu")
    }

    /// The environment the extracted qemu needs: its libraries (some packages put them under /lib, some
    /// under /usr/lib) and its modules (else "could not load module for type 'tcg-accel-ops'").
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        let libs = std::env::join_paths([self.lib_dir(), self.root.join("lib/x86_64-linux-gnu")])
            .unwrap_or_else(|_| self.lib_dir().into_os_string());
        vec![
            ("LD_LIBRARY_PATH", libs),
            (
                "QEMU_MODULE_DIR",
                self.lib_dir().join("qemu").into_os_string(),
            ),
        ]
    }

    /// The arguments for `m`.
    pub fn args(&self, m: &Machine) -> Vec<OsString> {
        let mut a: Vec<String> = vec![
            "-L".into(),
            opt_path(&self.root.join("usr/share/seabios")),
            "-L".into(),
            opt_path(&self.root.join("usr/share/qemu")),
            "-nodefaults".into(),
            "-no-user-config".into(),
        ];
        a.extend(self.cpu(&m.accel).into_iter().map(String::from));
        let cache = if m.direct {
            "cache=none,aio=native"
        } else {
            "cache=writeback,aio=threads"
        };
        a.extend([
            "-m".into(),
            format!("{}M", m.memory_mib),
            "-smp".into(),
            m.cpus.to_string(),
            "-display".into(),
            "none".into(),
            "-nic".into(),
            "none".into(),
            "-monitor".into(),
            "none".into(),
            "-no-reboot".into(),
            "-drive".into(),
            format!(
                "file={},if=none,id=nv,format=raw,{cache}",
                opt_path(&m.nvme)
            ),
            "-device".into(),
            "nvme,drive=nv,serial=iolab1".into(),
            "-drive".into(),
            format!(
                "file={},if=none,id=vd,format=raw,{cache}",
                opt_path(&m.disk)
            ),
            "-device".into(),
            "virtio-blk-pci,drive=vd".into(),
            "-fsdev".into(),
            format!(
                "local,id=fs0,path={},security_model=none",
                opt_path(&m.share)
            ),
            "-device".into(),
            "virtio-9p-pci,fsdev=fs0,mount_tag=host".into(),
        ]);
        a.extend(self.serial_ports(&m.serial));
        let mut out: Vec<OsString> = a.into_iter().map(OsString::from).collect();
        out.extend(m.extra.iter().cloned());
        out.extend([
            OsString::from("-kernel"),
            m.vmlinuz.clone().into(),
            "-initrd".into(),
            m.initrd.clone().into(),
            "-append".into(),
            m.cmdline.clone().into(),
        ]);
        out
    }
}

impl Qemu {
    /// The machine, accelerator and CPU: on arm64 the `virt` machine with a Cortex-A72 (a Raspberry Pi 4's
    /// core; `max` would add features, pointer authentication among them, that make TCG slower).
    fn cpu(&self, accel: &Accel) -> Vec<&'static str> {
        let mut a = match self.arch {
            Arch::Amd64 => vec!["-vga", "none"],
            Arch::Arm64 => vec!["-machine", "virt"],
        };
        a.extend(match (accel, self.arch) {
            (Accel::Kvm, _) => ["-accel", "kvm", "-cpu", "host"],
            (Accel::Tcg(_), Arch::Amd64) => ["-accel", "tcg,thread=multi", "-cpu", "max"],
            (Accel::Tcg(_), Arch::Arm64) => ["-accel", "tcg,thread=multi", "-cpu", "cortex-a72"],
        });
        a
    }

    /// The console and the command's stdout and stderr, into the three files: three serial ports on x86;
    /// the `virt` machine has one UART (the console), so the other two are virtio serial ports named
    /// `iolab.out` and `iolab.err` (found by name in the guest's /sys/class/virtio-ports).
    fn serial_ports(&self, files: &[PathBuf; 3]) -> Vec<String> {
        let mut a = Vec::new();
        for (i, s) in files.iter().enumerate() {
            a.push("-chardev".into());
            a.push(format!("file,id=s{i},path={}", opt_path(s)));
            match (self.arch, i) {
                (Arch::Amd64, _) | (Arch::Arm64, 0) => {
                    a.push("-serial".into());
                    a.push(format!("chardev:s{i}"));
                }
                (Arch::Arm64, _) => {
                    if i == 1 {
                        a.push("-device".into());
                        a.push("virtio-serial-pci,id=vser".into());
                    }
                    let name = if i == 1 { "iolab.out" } else { "iolab.err" };
                    a.push("-device".into());
                    a.push(format!(
                        "virtserialport,bus=vser.0,chardev=s{i},name={name}"
                    ));
                }
            }
        }
        a
    }
}

/// The guest kernel's command line: the console on the first serial port, a panic ends the guest at once,
/// on x86 the TSC as the clock (else every clock_gettime is a real system call on hpet; arm64 reads the
/// generic timer), two NVMe poll queues, and how the guest runs (read by iolab in the guest:
/// `host.emulated`).
pub fn cmdline(accel: &Accel, arch: Arch) -> String {
    let (console, clock) = match arch {
        Arch::Amd64 => ("ttyS0", " tsc=reliable clocksource=tsc"),
        Arch::Arm64 => ("ttyAMA0", ""),
    };
    format!(
        "console={console} panic=-1 quiet{clock} nvme.poll_queues=2 iolab.accel={}",
        accel.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kvm_only_with_hardware_virtualization_and_a_real_kvm() {
        assert_eq!(decide(true, true, false), Accel::Kvm);
        assert!(matches!(decide(true, true, true), Accel::Tcg(w) if w.contains("kvm-pvm")));
        assert!(matches!(decide(false, true, false), Accel::Tcg(w) if w.contains("vmx/svm")));
        assert!(matches!(decide(true, false, false), Accel::Tcg(w) if w.contains("read-writable")));
    }

    #[test]
    fn an_arm64_guest_is_a_virt_machine_with_virtio_serial_ports() {
        let q = Qemu {
            root: PathBuf::from("/c/root"),
            arch: Arch::Arm64,
        };
        assert_eq!(q.binary(), Path::new("/c/root/usr/bin/qemu-system-aarch64"));
        let cpu = q.cpu(&Accel::Tcg("x".into()));
        assert_eq!(cpu[..2], ["-machine", "virt"]);
        assert_eq!(cpu.last(), Some(&"cortex-a72"));
        let files = [
            PathBuf::from("/t/c"),
            PathBuf::from("/t/o"),
            PathBuf::from("/t/e"),
        ];
        let a = q.serial_ports(&files).join(" ");
        assert!(a.contains("-serial chardev:s0"), "{a}");
        assert!(!a.contains("chardev:s1"), "{a}");
        assert!(
            a.contains("virtserialport,bus=vser.0,chardev=s2,name=iolab.err"),
            "{a}"
        );
        let c = cmdline(&Accel::Tcg("x".into()), Arch::Arm64);
        assert!(c.starts_with("console=ttyAMA0 "), "{c}");
        assert!(!c.contains("tsc"), "{c}");
        assert!(c.ends_with("iolab.accel=tcg"), "{c}");
        let x = Qemu {
            root: PathBuf::from("/c/root"),
            arch: Arch::Amd64,
        };
        assert_eq!(
            x.serial_ports(&files).join(" ").matches("-serial").count(),
            3
        );
    }

    #[test]
    fn commas_in_paths_are_doubled_in_option_values() {
        assert_eq!(opt_path(Path::new("/a,b/c")), "/a,,b/c");
    }
}
