//! An ivshmem-plain PCI device: a host file QEMU maps into the guest as the device's memory BAR (BAR 2),
//! the way Jailhouse's ivshmem shares memory between cells. The host side is two qemu options; the guest
//! side finds the device under /sys/bus/pci/devices (vendor 0x1af4, device 0x1110) and maps its
//! `resource2` file, which is that BAR.

use iolab_engine::error::{Error, Result};
use iolab_sys as sys;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Red Hat's PCI vendor id and ivshmem's device id.
pub const VENDOR: u32 = 0x1af4;
pub const DEVICE: u32 = 0x1110;

/// The qemu options that give the guest `file` (`bytes` long, a power of two: a PCI BAR's size) as an
/// ivshmem-plain device; `share=on` makes the guest's writes land in the file, where the host sees them.
pub fn qemu_args(file: &Path, bytes: u64) -> Vec<OsString> {
    let path = file.to_string_lossy().replace(',', ",,");
    [
        "-object".to_string(),
        format!("memory-backend-file,id=iolabshm,mem-path={path},size={bytes},share=on"),
        "-device".to_string(),
        "ivshmem-plain,memdev=iolabshm".to_string(),
    ]
    .into_iter()
    .map(OsString::from)
    .collect()
}

/// The device as the guest's sysfs shows it.
#[derive(Debug, Clone)]
pub struct Device {
    /// /sys/bus/pci/devices/<address>.
    pub dir: PathBuf,
    /// The size of BAR 2 (the shared memory).
    pub bytes: u64,
}

fn hex_file(p: &Path) -> Option<u32> {
    let t = std::fs::read_to_string(p).ok()?;
    u32::from_str_radix(t.trim().trim_start_matches("0x"), 16).ok()
}

/// The first ivshmem device under `root` (/sys/bus/pci/devices), with its BAR 2 enabled.
pub fn find(root: &Path) -> Result<Device> {
    let entries = std::fs::read_dir(root)
        .map_err(|e| Error::Runtime(format!("cannot list {}: {e}", root.display())))?;
    let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    dirs.sort();
    for dir in dirs {
        if hex_file(&dir.join("vendor")) != Some(VENDOR)
            || hex_file(&dir.join("device")) != Some(DEVICE)
        {
            continue;
        }
        // No driver claims the device: enable its memory decoding (the firmware usually has already).
        let _ = std::fs::write(dir.join("enable"), "1");
        let bytes = std::fs::metadata(dir.join("resource2"))
            .map(|m| m.len())
            .map_err(|e| {
                Error::Runtime(format!(
                    "{}: the ivshmem device has no BAR 2 ({e})",
                    dir.display()
                ))
            })?;
        return Ok(Device { dir, bytes });
    }
    Err(Error::Runtime(format!(
        "no ivshmem device (PCI {VENDOR:04x}:{DEVICE:04x}) under {}: was the guest started with \
         -device ivshmem-plain?",
        root.display()
    )))
}

impl Device {
    /// Maps the whole of BAR 2, read-write and shared (uncached through `resource2`: it is the host's
    /// memory either way, so only speed differs, and under TCG not even that).
    pub fn map(&self) -> Result<sys::Mapping> {
        let p = self.dir.join("resource2");
        let fd = sys::open(&p, libc::O_RDWR | libc::O_SYNC | libc::O_CLOEXEC, 0)
            .map_err(|e| Error::sys_hint(e, format!("opening {}", p.display())))?;
        sys::Mapping::shared(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            self.bytes as usize,
            0,
            true,
        )
        .map_err(|e| Error::sys_hint(e, format!("mapping {}", p.display())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_device_by_its_ids_in_a_sysfs_tree() {
        let d = tempfile::tempdir().unwrap();
        let mk = |name: &str, vendor: &str, device: &str, bar: usize| {
            let dir = d.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::write(dir.join("vendor"), vendor).unwrap();
            std::fs::write(dir.join("device"), device).unwrap();
            std::fs::write(dir.join("resource2"), vec![0u8; bar]).unwrap();
        };
        mk("0000:00:02.0", "0x1af4\n", "0x1001\n", 16);
        assert!(find(d.path())
            .unwrap_err()
            .to_string()
            .contains("no ivshmem device"));
        mk("0000:00:05.0", "0x1af4\n", "0x1110\n", 8192);
        let dev = find(d.path()).unwrap();
        assert!(dev.dir.ends_with("0000:00:05.0"));
        assert_eq!(dev.bytes, 8192);
        let a = qemu_args(Path::new("/dev/shm/a,b"), 1 << 20);
        assert_eq!(
            a[1],
            OsString::from(
                "memory-backend-file,id=iolabshm,mem-path=/dev/shm/a,,b,size=1048576,share=on"
            )
        );
    }
}
