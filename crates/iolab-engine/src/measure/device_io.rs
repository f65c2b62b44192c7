//! What the device did for a run: the bytes the block layer moved to and from the disk behind the target
//! over the timed span, from the disk's own counters (`/sys/block/DEV/stat`: sectors read and written,
//! 512 bytes each, as /proc/diskstats shows them). A buffered read whose bytes did not come from here came
//! from the page cache; a write with `--fsync end` shows here what reached the device inside the span.
//! The counters are the device's (a partition's own): other processes' I/O to it in the span is counted too.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The bytes the block layer moved for the disk behind a target over the timed span.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceIo {
    /// Bytes read from the device (sectors read x 512).
    pub read_bytes: u64,
    /// Bytes written to the device (sectors written x 512).
    pub written_bytes: u64,
    /// Where the figures came from, the disk named.
    pub source: String,
}

/// The disk behind a target, whose counters are read around the timed span.
#[derive(Debug, Clone)]
pub struct DiskWatch {
    name: String,
    stat: PathBuf,
}

/// Sectors read and written, as the disk's stat file counts them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskSnap {
    read_sectors: u64,
    written_sectors: u64,
}

impl DiskWatch {
    /// The block device behind `target` (a block device, a file on one, or the directory a file will be
    /// made in): a partition's own counters, not its disk's. None where no block device counts the run's
    /// I/O: tmpfs and other filesystems without one, streams (pipe, socketpair, tcp), character devices
    /// (/dev/null, and NVMe generic devices, whose passthrough commands diskstats counts only with
    /// `queue/iostats_passthrough`, off by default).
    pub fn for_target(target: &Path) -> Option<DiskWatch> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        if crate::target_kind::TargetKind::stream_named(target).is_some() {
            return None;
        }
        let m = match std::fs::metadata(target) {
            Ok(m) => m,
            Err(_) => {
                let dir = target.parent().filter(|d| !d.as_os_str().is_empty());
                std::fs::metadata(dir.unwrap_or(Path::new("."))).ok()?
            }
        };
        let dev = match m.file_type() {
            t if t.is_block_device() => m.rdev(),
            t if t.is_file() || t.is_dir() => m.dev(),
            _ => return None,
        };
        let (ma, mi) = (
            libc::major(dev as libc::dev_t),
            libc::minor(dev as libc::dev_t),
        );
        let dir = std::fs::canonicalize(format!("/sys/dev/block/{ma}:{mi}")).ok()?;
        let name = dir.file_name()?.to_string_lossy().into_owned();
        let w = DiskWatch {
            name,
            stat: dir.join("stat"),
        };
        w.snapshot().map(|_| w)
    }

    pub fn snapshot(&self) -> Option<DiskSnap> {
        parse_stat(&std::fs::read_to_string(&self.stat).ok()?)
    }

    /// What moved between two snapshots.
    pub fn delta(&self, before: DiskSnap, after: DiskSnap) -> DeviceIo {
        DeviceIo {
            read_bytes: after.read_sectors.saturating_sub(before.read_sectors) * 512,
            written_bytes: after.written_sectors.saturating_sub(before.written_sectors) * 512,
            source: format!(
                "{}'s stat over the timed span: its sectors read and written (other processes' I/O to it in \
                 the span included){}",
                self.name,
                if self.name.starts_with("loop") {
                    "; a loop device counts its own requests, which its backing file's page cache may serve"
                } else {
                    ""
                }
            ),
        }
    }
}

/// The stat file's sectors read (third field) and written (seventh).
fn parse_stat(text: &str) -> Option<DiskSnap> {
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    Some(DiskSnap {
        read_sectors: *f.get(2)?,
        written_sectors: *f.get(6)?,
    })
}

/// The block device ("nvme0n1") whose namespace the character device `rdev` is the generic device of,
/// if it is one (its sysfs subsystem is the class nvme-generic).
pub fn generic_block(rdev: libc::dev_t) -> Option<String> {
    let dir = std::fs::canonicalize(format!(
        "/sys/dev/char/{}:{}",
        libc::major(rdev),
        libc::minor(rdev)
    ))
    .ok()?;
    let class = std::fs::canonicalize(dir.join("subsystem")).ok()?;
    if class.file_name()? != "nvme-generic" {
        return None;
    }
    // ngXnY is the generic device of nvmeXnY (with multipath, of the head's disk of the same name).
    let name = dir.file_name()?.to_str()?.strip_prefix("ng")?;
    let block = format!("nvme{name}");
    Path::new("/sys/block")
        .join(&block)
        .exists()
        .then_some(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_sectors_read_and_written() {
        let s = "    4123      17   329466     1234    9000     100  7340032    555 0 0 0 0 0 0 0 0 0\n";
        let a = parse_stat(s).unwrap();
        assert_eq!(a.read_sectors, 329466);
        assert_eq!(a.written_sectors, 7340032);
        assert_eq!(parse_stat("1 2"), None);
        assert_eq!(parse_stat("1 x 3 4 5 6 7"), None);
    }

    #[test]
    fn delta_is_bytes_and_names_the_disk() {
        let w = DiskWatch {
            name: "vda".into(),
            stat: PathBuf::new(),
        };
        let before = parse_stat("0 0 100 0 0 0 10").unwrap();
        let after = parse_stat("0 0 300 0 0 0 2058").unwrap();
        let d = w.delta(before, after);
        assert_eq!((d.read_bytes, d.written_bytes), (102_400, 1_048_576));
        assert!(d.source.starts_with("vda's stat"), "{}", d.source);
    }

    #[test]
    fn no_disk_behind_a_character_device_or_a_stream() {
        for t in ["/dev/null", "/dev/zero", "pipe", "socketpair", "tcp"] {
            assert!(DiskWatch::for_target(Path::new(t)).is_none(), "{t}");
        }
    }
}
