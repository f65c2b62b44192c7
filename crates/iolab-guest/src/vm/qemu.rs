//! The accelerator and the qemu command line of the guest.
//!
//! Hardware KVM only where the CPU shows vmx/svm in /proc/cpuinfo, /dev/kvm is read-writable and the KVM in
//! the kernel is not kvm-pvm (a software "PVM" KVM that runs only PVM-built guest kernels; with Debian's
//! kernel `-cpu host` aborts and other models hang): never by /dev/kvm's existence alone. Otherwise QEMU's
//! TCG (`-accel tcg,thread=multi -cpu max`), an emulator: figures from it show behaviour, not speed.
//! A guest of another architecture (arm64 on x86_64: the `virt` machine with a Cortex-A72; armv7: `virt`
//! with a Cortex-A15, or `vexpress-a9`) is always TCG.

use super::arch::{Arch, Board};
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
    /// QEMU's machine (`--machine`), and the device tree it boots with where it needs one.
    pub board: Board,
    pub dtb: Option<PathBuf>,
    pub cpus: usize,
    pub memory_mib: u64,
    pub vmlinuz: PathBuf,
    pub initrd: PathBuf,
    pub cmdline: String,
    /// The NVMe disk (poll queues; not on a board without PCI) and the virtio disk.
    pub nvme: PathBuf,
    pub disk: PathBuf,
    /// The disks can be opened O_DIRECT on the host (cache=none,aio=native), else cache=writeback.
    pub direct: bool,
    /// Shared with the guest (9p, tag `host`); none for a guest that only serves ssh (its kernel command
    /// line then says `iolab.share=none`).
    pub share: Option<PathBuf>,
    /// Files the three serial ports write: the console, the command's stdout and stderr.
    pub serial: [PathBuf; 3],
    /// The port on 127.0.0.1 forwarded to the guest's ssh server (`--ssh`).
    pub ssh_port: Option<u16>,
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
        a.extend(self.cpu(&m.accel, m.board).into_iter().map(String::from));
        a.extend([
            "-m".into(),
            format!("{}M", m.memory_mib),
            "-smp".into(),
            m.cpus.to_string(),
            "-display".into(),
            "none".into(),
            "-monitor".into(),
            "none".into(),
            "-no-reboot".into(),
        ]);
        if let Some(dtb) = &m.dtb {
            a.extend(["-dtb".into(), dtb.to_string_lossy().into_owned()]);
        }
        a.extend(disks(m));
        a.extend(nic(self.arch, m.board, m.ssh_port));
        a.extend(self.serial_ports(&m.serial, bus(m.board)));
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

/// The guest's one network card on QEMU's user network, restricted (the guest reaches nothing of the
/// host's or beyond) but for a discard peer at [`DISCARD_PEER`] (RFC 863's port): each connection the
/// guest makes there runs `sh -c 'exec cat > /dev/null'` on the host, the far end of `--target
/// tcp:10.0.2.100:9`.
/// - x86_64: an e1000, whose checksum and scatter-gather offloads QEMU emulates itself, so a zero-copy
///   send leaves the guest's pages uncopied. A virtio NIC on the user network has no offloads (its
///   backend takes no virtio-net header), and the guest kernel copies every zero-copy send.
/// - ARM: virtio-net, which the guests' kernels load as every other virtio driver.
pub const DISCARD_PEER: &str = "10.0.2.100:9";

/// With `--ssh PORT`, 127.0.0.1:PORT on the host is forwarded to the guest's port 22 (forwards stay
/// open under `restrict=on`); nothing else of the guest is reachable.
fn nic(arch: Arch, board: Board, ssh_port: Option<u16>) -> Vec<String> {
    let hostfwd = ssh_port
        .map(|p| format!(",hostfwd=tcp:127.0.0.1:{p}-10.0.2.15:22"))
        .unwrap_or_default();
    vec![
        "-netdev".into(),
        // libslirp splits the command into words itself (no shell): the redirection needs sh.
        format!(
            "user,id=n0,restrict=on{hostfwd},guestfwd=tcp:{DISCARD_PEER}-cmd:sh -c 'exec cat > /dev/null'"
        ),
        "-device".into(),
        // No option ROM (network boot): Debian's qemu-system-data holds none iolab unpacks.
        match (arch, bus(board)) {
            (Arch::Amd64, _) => "e1000,netdev=n0,romfile=".into(),
            (_, "pci") => "virtio-net-pci,netdev=n0,romfile=".into(),
            (_, b) => format!("virtio-net-{b},netdev=n0"),
        },
    ]
}

/// How virtio devices attach: `pci`, or `device` (virtio-mmio) on a board without PCI.
fn bus(board: Board) -> &'static str {
    if board.has_pci() {
        "pci"
    } else {
        "device"
    }
}

/// The NVMe disk (where there is PCI), the virtio disk and the 9p share.
fn disks(m: &Machine) -> Vec<String> {
    let cache = if m.direct {
        "cache=none,aio=native"
    } else {
        "cache=writeback,aio=threads"
    };
    let drive =
        |p: &Path, id: &str| format!("file={},if=none,id={id},format=raw,{cache}", opt_path(p));
    let mut a = Vec::new();
    if m.board.has_pci() {
        a.extend([
            "-drive".into(),
            drive(&m.nvme, "nv"),
            "-device".into(),
            "nvme,drive=nv,serial=iolab1".into(),
        ]);
    }
    let bus = bus(m.board);
    a.extend([
        "-drive".into(),
        drive(&m.disk, "vd"),
        "-device".into(),
        format!("virtio-blk-{bus},drive=vd"),
    ]);
    if let Some(share) = &m.share {
        a.extend([
            "-fsdev".into(),
            format!("local,id=fs0,path={},security_model=none", opt_path(share)),
            "-device".into(),
            format!("virtio-9p-{bus},fsdev=fs0,mount_tag=host"),
        ]);
    }
    a
}

impl Qemu {
    /// The machine, accelerator and CPU: on arm64 the `virt` machine with a Cortex-A72 (a Raspberry Pi 4's
    /// core; `max` would add features, pointer authentication among them, that make TCG slower); on armv7
    /// `virt` with a Cortex-A15 (the generic timer; `highmem=off` keeps PCI's windows below 4 GiB, where a
    /// kernel without LPAE reaches them) or `vexpress-a9` with its Cortex-A9.
    fn cpu(&self, accel: &Accel, board: Board) -> Vec<&'static str> {
        let (machine, cpu) = match (self.arch, board) {
            (Arch::Amd64, _) => (["-vga", "none"], "max"),
            (Arch::Arm64, _) => (["-machine", "virt"], "cortex-a72"),
            (Arch::Armhf, Board::Standard) => (["-machine", "virt,highmem=off"], "cortex-a15"),
            (Arch::Armhf, Board::VexpressA9) => (["-machine", "vexpress-a9"], "cortex-a9"),
        };
        let mut a = machine.to_vec();
        a.extend(match accel {
            Accel::Kvm => ["-accel", "kvm", "-cpu", "host"],
            Accel::Tcg(_) => ["-accel", "tcg,thread=multi", "-cpu", cpu],
        });
        a
    }

    /// The console and the command's stdout and stderr, into the three files: three serial ports on x86;
    /// the `virt` machine has one UART (the console), so the other two are virtio serial ports named
    /// `iolab.out` and `iolab.err` (found by name in the guest's /sys/class/virtio-ports).
    fn serial_ports(&self, files: &[PathBuf; 3], bus: &str) -> Vec<String> {
        let mut a = Vec::new();
        for (i, s) in files.iter().enumerate() {
            a.push("-chardev".into());
            a.push(format!("file,id=s{i},path={}", opt_path(s)));
            match (self.arch, i) {
                (Arch::Amd64, _) | (_, 0) => {
                    a.push("-serial".into());
                    a.push(format!("chardev:s{i}"));
                }
                (_, _) => {
                    if i == 1 {
                        a.push("-device".into());
                        a.push(format!("virtio-serial-{bus},id=vser"));
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

/// The guest kernel's command line: the console on the first serial port, a panic ends the guest at once
/// and so does an oops (`oops=panic`: an oops that killed a kernel thread, such as one TCG's emulation
/// caused in RCU's, left the guest hung until the timeout, hours for `--kernels`), on x86 the TSC as the
/// clock (else every clock_gettime is a real system call on hpet; arm64 reads the generic timer), two NVMe poll queues, and how the guest runs (read by iolab in the guest:
/// `host.emulated`); `iolab.nvme=none` tells /init not to wait for an NVMe disk on a board without PCI.
pub fn cmdline(accel: &Accel, arch: Arch, board: Board) -> String {
    let (console, clock) = match arch {
        Arch::Amd64 => ("ttyS0", " tsc=reliable clocksource=tsc"),
        Arch::Arm64 | Arch::Armhf => ("ttyAMA0", ""),
    };
    let nvme = if board.has_pci() {
        "nvme.poll_queues=2"
    } else {
        "iolab.nvme=none"
    };
    format!(
        "console={console} panic=-1 oops=panic quiet{clock} {nvme} iolab.accel={}",
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
        let cpu = q.cpu(&Accel::Tcg("x".into()), Board::Standard);
        assert_eq!(cpu[..2], ["-machine", "virt"]);
        assert_eq!(cpu.last(), Some(&"cortex-a72"));
        let files = [
            PathBuf::from("/t/c"),
            PathBuf::from("/t/o"),
            PathBuf::from("/t/e"),
        ];
        let a = q.serial_ports(&files, "pci").join(" ");
        assert!(a.contains("-serial chardev:s0"), "{a}");
        assert!(!a.contains("chardev:s1"), "{a}");
        assert!(
            a.contains("virtserialport,bus=vser.0,chardev=s2,name=iolab.err"),
            "{a}"
        );
        let c = cmdline(&Accel::Tcg("x".into()), Arch::Arm64, Board::Standard);
        assert!(c.starts_with("console=ttyAMA0 "), "{c}");
        assert!(c.contains(" panic=-1 oops=panic "), "{c}");
        assert!(!c.contains("tsc"), "{c}");
        assert!(c.ends_with("iolab.accel=tcg"), "{c}");
        let x = Qemu {
            root: PathBuf::from("/c/root"),
            arch: Arch::Amd64,
        };
        assert_eq!(
            x.serial_ports(&files, "pci")
                .join(" ")
                .matches("-serial")
                .count(),
            3
        );
    }

    #[test]
    fn an_armv7_guest_on_virt_or_vexpress_a9() {
        let q = Qemu {
            root: PathBuf::from("/c/root"),
            arch: Arch::Armhf,
        };
        assert_eq!(q.binary(), Path::new("/c/root/usr/bin/qemu-system-arm"));
        let tcg = Accel::Tcg("x".into());
        let virt = q.cpu(&tcg, Board::Standard).join(" ");
        assert!(virt.contains("-machine virt,highmem=off") && virt.ends_with("-cpu cortex-a15"));
        let a9 = q.cpu(&tcg, Board::VexpressA9).join(" ");
        assert!(a9.contains("-machine vexpress-a9") && a9.ends_with("-cpu cortex-a9"));
        let mut m = Machine {
            accel: tcg.clone(),
            board: Board::VexpressA9,
            dtb: Some(PathBuf::from("/k/vexpress-v2p-ca9.dtb")),
            cpus: 2,
            memory_mib: 1024,
            vmlinuz: PathBuf::from("/k/vmlinuz"),
            initrd: PathBuf::from("/t/i"),
            cmdline: cmdline(&tcg, Arch::Armhf, Board::VexpressA9),
            nvme: PathBuf::from("/t/n"),
            disk: PathBuf::from("/t/d"),
            direct: false,
            share: Some(PathBuf::from("/s")),
            serial: [
                PathBuf::from("/t/c"),
                PathBuf::from("/t/o"),
                PathBuf::from("/t/e"),
            ],
            ssh_port: None,
            extra: Vec::new(),
        };
        let args = |m: &Machine| {
            q.args(m)
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        // No PCI on vexpress-a9: virtio over virtio-mmio, no NVMe, the kernel package's device tree.
        let a = args(&m);
        assert!(a.contains("-dtb /k/vexpress-v2p-ca9.dtb"), "{a}");
        assert!(a.contains("virtio-blk-device,drive=vd"), "{a}");
        assert!(a.contains("virtio-9p-device,fsdev=fs0"), "{a}");
        assert!(a.contains("virtio-serial-device,id=vser"), "{a}");
        assert!(a.contains("-device virtio-net-device,netdev=n0"), "{a}");
        assert!(!a.contains("nvme,drive") && !a.contains("-pci"), "{a}");
        assert!(
            a.contains("iolab.nvme=none") && !a.contains("poll_queues"),
            "{a}"
        );
        m.board = Board::Standard;
        m.dtb = None;
        let a = args(&m);
        assert!(
            a.contains("nvme,drive=nv") && a.contains("virtio-blk-pci"),
            "{a}"
        );
        assert!(!a.contains("-dtb"), "{a}");
        assert!(a.contains("-fsdev local,id=fs0,path=/s,"), "{a}");
        m.share = None;
        assert!(!args(&m).contains("-fsdev"));
        assert!(
            a.contains("-device virtio-net-pci,netdev=n0,romfile="),
            "{a}"
        );
    }

    #[test]
    fn the_network_reaches_only_the_discard_peer_and_x86_has_offloads() {
        let x = nic(Arch::Amd64, Board::Standard, None).join(" ");
        assert!(x.contains("user,id=n0,restrict=on,"), "{x}");
        assert!(
            x.contains("guestfwd=tcp:10.0.2.100:9-cmd:sh -c 'exec cat > /dev/null'"),
            "{x}"
        );
        assert!(!x.contains("hostfwd"), "{x}");
        assert!(x.ends_with("-device e1000,netdev=n0,romfile="), "{x}");
        let a = nic(Arch::Arm64, Board::Standard, None).join(" ");
        assert!(
            a.ends_with("-device virtio-net-pci,netdev=n0,romfile="),
            "{a}"
        );
        // --ssh: the one forward, from the host's loopback only, to the guest's ssh port.
        let s = nic(Arch::Arm64, Board::Standard, Some(40022)).join(" ");
        assert!(
            s.contains("restrict=on,hostfwd=tcp:127.0.0.1:40022-10.0.2.15:22,guestfwd="),
            "{s}"
        );
        assert_eq!(s.matches("hostfwd").count(), 1, "{s}");
    }

    #[test]
    fn commas_in_paths_are_doubled_in_option_values() {
        assert_eq!(opt_path(Path::new("/a,b/c")), "/a,,b/c");
    }
}
