//! The guest's architecture: Debian's amd64 kernel under qemu-system-x86_64 (the host's own), or Debian's
//! arm64 kernel under qemu-system-aarch64 (`-M virt`, a Cortex-A72, always TCG on an x86_64 host) for the
//! boards' static aarch64 binary (issue 20), or Debian's armhf kernel (`linux-image-armmp`) under
//! qemu-system-arm for the static armv7 binary, on one of two [`Board`]s: `virt` with a Cortex-A15 (the ARM
//! generic timer, readable from user space) or `vexpress-a9` (a Cortex-A9, the Zynq-7000's core: no generic
//! timer, no PCI; the kernel package's device tree, virtio devices over virtio-mmio, no NVMe disk).
//!
//! A foreign architecture's packages (the arm64 kernel and busybox) come from apt lists of that
//! architecture kept in the cache (`CACHE/apt-arm64/`: `apt-get update` with its own lists, package cache
//! and an empty dpkg status): the host's apt and dpkg configuration are never touched. qemu itself and its
//! libraries are the host's architecture and come from the host's lists.

use std::path::{Path, PathBuf};

/// The guest kernel's architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    Amd64,
    Arm64,
    Armhf,
}

/// The machine QEMU emulates: its standard one (a PC on x86_64, `virt` on ARM), or QEMU's `vexpress-a9`
/// (armv7 only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Board {
    Standard,
    VexpressA9,
}

impl Board {
    /// `--machine`'s words: `virt` (and `pc`) for the standard machine, `vexpress-a9`.
    pub fn parse(name: &str, arch: Arch) -> std::result::Result<Board, String> {
        match (name, arch) {
            ("virt", Arch::Arm64 | Arch::Armhf) | ("pc", Arch::Amd64) => Ok(Board::Standard),
            ("vexpress-a9", Arch::Armhf) => Ok(Board::VexpressA9),
            ("vexpress-a9", _) => Err(format!(
                "{name}: a 32-bit ARM board; it needs --arch armv7"
            )),
            _ => Err(format!(
                "{name}: iolab vm emulates virt (aarch64, armv7), vexpress-a9 (armv7) or pc (x86_64)"
            )),
        }
    }

    /// The PCI bus is there (the NVMe disk and virtio over PCI), else virtio over virtio-mmio only.
    pub fn has_pci(self) -> bool {
        self == Board::Standard
    }

    /// The most memory the machine takes (vexpress-a9: 1 GiB).
    pub fn max_memory_mib(self) -> u64 {
        match self {
            Board::Standard => u64::MAX,
            Board::VexpressA9 => 1024,
        }
    }

    /// The device tree the machine boots with, from the kernel package (`usr/lib/linux-image-R/`); the
    /// `virt` machine writes its own.
    pub fn dtb(self) -> Option<&'static str> {
        match self {
            Board::Standard => None,
            Board::VexpressA9 => Some("vexpress-v2p-ca9.dtb"),
        }
    }
}

impl Arch {
    /// `x86_64`/`amd64` and `aarch64`/`arm64`.
    pub fn parse(name: &str) -> Option<Arch> {
        match name {
            "x86_64" | "amd64" => Some(Arch::Amd64),
            "aarch64" | "arm64" => Some(Arch::Arm64),
            "armv7" | "armhf" => Some(Arch::Armhf),
            _ => None,
        }
    }

    /// Debian's name of the architecture.
    pub fn debian(self) -> &'static str {
        match self {
            Arch::Amd64 => "amd64",
            Arch::Arm64 => "arm64",
            Arch::Armhf => "armhf",
        }
    }

    /// The name users give it (`scripts/build-board NAME`; the kernel's `uname -m` but for armv7l).
    pub fn machine(self) -> &'static str {
        match self {
            Arch::Amd64 => "x86_64",
            Arch::Arm64 => "aarch64",
            Arch::Armhf => "armv7",
        }
    }

    /// Rust's name (`std::env::consts::ARCH`).
    fn rust_arch(self) -> &'static str {
        match self {
            Arch::Armhf => "arm",
            a => a.machine(),
        }
    }

    /// 64-bit ELF binaries (else ELF32).
    pub fn elf64(self) -> bool {
        self != Arch::Armhf
    }

    /// The ELF `e_machine` of its binaries.
    pub fn elf_machine(self) -> u16 {
        match self {
            Arch::Amd64 => 62,
            Arch::Arm64 => 183,
            Arch::Armhf => 40,
        }
    }

    /// Not the host's own: its packages need apt lists of their own, and the guest is always emulated.
    pub fn foreign(self) -> bool {
        self.rust_arch() != std::env::consts::ARCH
    }

    /// The kernel metapackage whose dependency is today's kernel image.
    pub fn kernel_meta(self) -> String {
        match self {
            Arch::Armhf => "linux-image-armmp".into(),
            a => format!("linux-image-{}", a.debian()),
        }
    }

    /// What a kernel image package's name ends with (`linux-image-6.1.0-NN-armmp`).
    pub fn kernel_flavour(self) -> &'static str {
        match self {
            Arch::Armhf => "armmp",
            a => a.debian(),
        }
    }

    /// The package holding qemu's system emulator for this architecture, and the binary's name.
    pub fn qemu(self) -> (&'static str, &'static str) {
        match self {
            Arch::Amd64 => ("qemu-system-x86", "qemu-system-x86_64"),
            Arch::Arm64 => ("qemu-system-arm", "qemu-system-aarch64"),
            Arch::Armhf => ("qemu-system-arm", "qemu-system-arm"),
        }
    }

    /// qemu's packages besides the emulator's own (the host's architecture): the x86 guest boots through
    /// SeaBIOS; the arm64 `virt` machine loads the kernel itself.
    pub fn qemu_tools(self) -> &'static [&'static str] {
        match self {
            Arch::Amd64 => &["qemu-system-common", "qemu-system-data", "seabios"],
            Arch::Arm64 | Arch::Armhf => &["qemu-system-common", "qemu-system-data"],
        }
    }

    /// The modules the guest loads (with their dependencies): virtio (PCI transport, block), NVMe, the 9p
    /// share over virtio, ext4 (which also mounts ext2) with the crc32c it asks the crypto API for at mount
    /// time ("Cannot load crc32c driver" without it; a soft dependency, not in `depends=`); on arm64 also
    /// virtio_console: the `virt` machine has one UART (the console), so the command's stdout and stderr
    /// go through virtio serial ports; the network card's driver (`qemu.rs`: e1000 on x86_64, virtio_net
    /// on ARM); on armhf also virtio_mmio (vexpress-a9 has no PCI: its virtio
    /// devices sit on virtio-mmio transports).
    pub fn roots(self) -> &'static [&'static str] {
        const COMMON: &[&str] = &[
            "virtio_pci",
            "virtio_blk",
            "nvme",
            "9pnet_virtio",
            "9p",
            "crc32c_generic",
            "ext4",
            "e1000",
        ];
        const ARM64: &[&str] = &[
            "virtio_pci",
            "virtio_blk",
            "nvme",
            "9pnet_virtio",
            "9p",
            "crc32c_generic",
            "ext4",
            "virtio_console",
            "virtio_net",
        ];
        const ARMHF: &[&str] = &[
            "virtio_mmio",
            "virtio_pci",
            "virtio_blk",
            "nvme",
            "9pnet_virtio",
            "9p",
            "crc32c_generic",
            "ext4",
            "virtio_console",
            "virtio_net",
        ];
        match self {
            Arch::Amd64 => COMMON,
            Arch::Arm64 => ARM64,
            Arch::Armhf => ARMHF,
        }
    }

    /// The device trees kept from the kernel package: those of the boards that need one (`Board::dtb`).
    pub fn dtbs(self) -> &'static [&'static str] {
        match self {
            Arch::Armhf => &["vexpress-v2p-ca9.dtb"],
            _ => &[],
        }
    }

    /// Where the guest-architecture packages other than the kernel (busybox) are extracted: the shared
    /// tree for the host's architecture, a tree of their own for a foreign one (its busybox would replace
    /// the amd64 guest's).
    pub fn guest_root(self, cache: &Path) -> PathBuf {
        if self.foreign() {
            cache.join(format!("guest-{}", self.debian()))
        } else {
            cache.join("root")
        }
    }

    /// The name of the saved resolution for `--kernel asked` (see `fetch::saved_resolution`).
    pub fn resolution_name(self, asked: Option<&str>) -> String {
        let base = match self {
            Arch::Amd64 => "resolution".to_string(),
            arch => format!("resolution-{}", arch.debian()),
        };
        match asked {
            None => base,
            Some(k) => format!("{base}-{}", k.replace('/', "%2f")),
        }
    }
}

/// How apt is run: the host's configuration, or lists of a foreign architecture kept in the cache.
#[derive(Debug, Clone)]
pub struct Apt {
    /// `-o` options put before apt's command.
    pub opts: Vec<String>,
    /// The lists' directory (`/var/lib/apt/lists` for the host).
    pub lists: PathBuf,
    /// Apt's lists are this tool's own (any user may update them).
    pub private: bool,
}

impl Apt {
    pub fn host() -> Apt {
        Apt {
            opts: Vec::new(),
            lists: PathBuf::from("/var/lib/apt/lists"),
            private: false,
        }
    }

    /// The apt that finds the guest's kernel and busybox.
    pub fn guest(cache: &Path, arch: Arch) -> Apt {
        if !arch.foreign() {
            return Apt::host();
        }
        let dir = cache.join(format!("apt-{}", arch.debian()));
        let lists = dir.join("lists");
        let o = |k: &str, v: String| format!("-o{k}={v}");
        Apt {
            opts: vec![
                o("Dir::State::Lists", lists.display().to_string()),
                o("Dir::Cache", dir.join("cache").display().to_string()),
                o(
                    "Dir::State::status",
                    dir.join("status").display().to_string(),
                ),
                o("APT::Architecture", arch.debian().into()),
                o("APT::Architectures", arch.debian().into()),
                o("Acquire::Languages", "none".into()),
            ],
            lists,
            private: true,
        }
    }

    /// The private state's directories and the empty dpkg status they need.
    pub fn make_dirs(&self) -> iolab_engine::error::Result<()> {
        if !self.private {
            return Ok(());
        }
        let dir = self.lists.parent().expect("lists under the apt directory");
        for d in [
            self.lists.join("partial"),
            dir.join("cache/archives/partial"),
        ] {
            std::fs::create_dir_all(&d).map_err(|e| {
                iolab_engine::error::Error::Runtime(format!("cannot create {}: {e}", d.display()))
            })?;
        }
        let status = dir.join("status");
        if !status.exists() {
            std::fs::write(&status, b"").map_err(|e| {
                iolab_engine::error::Error::Runtime(format!(
                    "cannot write {}: {e}",
                    status.display()
                ))
            })?;
        }
        Ok(())
    }

    /// `opts` followed by `args`.
    pub fn args<'a>(&'a self, args: &[&'a str]) -> Vec<&'a str> {
        self.opts
            .iter()
            .map(String::as_str)
            .chain(args.iter().copied())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_the_foreign_apt() {
        assert_eq!(Arch::parse("aarch64"), Some(Arch::Arm64));
        assert_eq!(Arch::parse("amd64"), Some(Arch::Amd64));
        assert_eq!(Arch::parse("armv7"), Some(Arch::Armhf));
        assert_eq!(Arch::parse("riscv64"), None);
        assert_eq!(Arch::Armhf.kernel_meta(), "linux-image-armmp");
        assert!(!Arch::Armhf.elf64());
        assert_eq!(
            Board::parse("vexpress-a9", Arch::Armhf),
            Ok(Board::VexpressA9)
        );
        assert_eq!(Board::parse("virt", Arch::Armhf), Ok(Board::Standard));
        assert!(Board::parse("vexpress-a9", Arch::Arm64)
            .unwrap_err()
            .contains("--arch armv7"));
        assert!(Board::parse("zynq", Arch::Armhf).is_err());
        assert_eq!(Board::VexpressA9.dtb(), Some("vexpress-v2p-ca9.dtb"));
        assert_eq!(Arch::Arm64.kernel_meta(), "linux-image-arm64");
        assert_eq!(
            Arch::Arm64.resolution_name(Some("linux-image-x")),
            "resolution-arm64-linux-image-x"
        );
        assert_eq!(Arch::Amd64.resolution_name(None), "resolution");
        if cfg!(target_arch = "x86_64") {
            let a = Apt::guest(Path::new("/c"), Arch::Arm64);
            assert!(a.private);
            assert_eq!(a.lists, Path::new("/c/apt-arm64/lists"));
            assert!(a.opts.contains(&"-oAPT::Architecture=arm64".to_string()));
            assert_eq!(a.args(&["update"]).last(), Some(&"update"));
            assert!(!Apt::guest(Path::new("/c"), Arch::Amd64).private);
            assert_eq!(
                Arch::Arm64.guest_root(Path::new("/c")),
                Path::new("/c/guest-arm64")
            );
        }
    }
}
