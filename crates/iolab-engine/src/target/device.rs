//! Block devices as targets: what holds them (mounts in any namespace, swap, holders, loop backing), and
//! the exclusive claim iolab keeps while it writes one.

use crate::error::{Error, Result};
use iolab_sys as sys;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

pub(crate) fn major_minor(rdev: libc::dev_t) -> (u32, u32) {
    (libc::major(rdev), libc::minor(rdev))
}

/// A block device, a partition of it, or a device stacked on it: (major, minor, how to name it).
pub(crate) type DevIds = Vec<(u32, u32, String)>;

/// Why a block device must not be written now: mounted (in this or any other mount namespace iolab can
/// read), swap, held by another driver, or the backing of a loop device. `None` if none of these.
pub fn device_in_use(dev: &Path, rdev: libc::dev_t) -> Option<String> {
    let (ma, mi) = major_minor(rdev);
    let sys_dir = PathBuf::from(format!("/sys/dev/block/{ma}:{mi}"));
    let ids = device_ids(&sys_dir, dev, (ma, mi));
    if let Some(why) = std::fs::read_to_string("/proc/self/mountinfo")
        .ok()
        .and_then(|text| mounted_in(&text, &ids))
    {
        return Some(why);
    }
    if let Some(why) = mounted_elsewhere(&ids) {
        return Some(why);
    }
    if let Ok(sw) = std::fs::read_to_string("/proc/swaps") {
        for line in sw.lines().skip(1) {
            if let Some(name) = line.split_whitespace().next() {
                if let Ok(st) = sys::stat(Path::new(name)) {
                    if let Some(what) = named(&ids, major_minor(st.st_rdev)) {
                        return Some(format!("{what} is in use as swap"));
                    }
                }
            }
        }
    }
    if let Ok(h) = std::fs::read_dir(sys_dir.join("holders")) {
        let holders: Vec<String> = h
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            return Some(format!("it is held by {}", holders.join(", ")));
        }
    }
    loop_over(&ids)
}

/// The device itself and its partitions.
pub(crate) fn device_ids(sys_dir: &Path, dev: &Path, (ma, mi): (u32, u32)) -> DevIds {
    let mut ids = vec![(ma, mi, dev.display().to_string())];
    if let Ok(entries) = std::fs::read_dir(sys_dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.join("partition").exists() {
                if let Some((a, b)) = read_dev_numbers(&p.join("dev")) {
                    ids.push((
                        a,
                        b,
                        format!("partition {}", e.file_name().to_string_lossy()),
                    ));
                }
            }
        }
    }
    ids
}

/// A sysfs `dev` file: "major:minor".
pub(crate) fn read_dev_numbers(file: &Path) -> Option<(u32, u32)> {
    let d = std::fs::read_to_string(file).ok()?;
    let (a, b) = d.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

pub(crate) fn named(ids: &DevIds, (a, b): (u32, u32)) -> Option<&str> {
    ids.iter()
        .find(|(x, y, _)| *x == a && *y == b)
        .map(|(_, _, what)| what.as_str())
}

/// "X is mounted at M" if a mountinfo text mounts one of `ids`.
pub(crate) fn mounted_in(mountinfo: &str, ids: &DevIds) -> Option<String> {
    for line in mountinfo.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 {
            continue;
        }
        if let Some((a, b)) = f[2].split_once(':') {
            let ab = (a.parse().unwrap_or(u32::MAX), b.parse().unwrap_or(u32::MAX));
            if let Some(what) = named(ids, ab) {
                return Some(format!("{what} is mounted at {}", f[4]));
            }
        }
    }
    None
}

/// A mount of one of `ids` in another mount namespace: each namespace read once, from the first process
/// in it whose mountinfo iolab may read (all of them as root).
pub(crate) fn mounted_elsewhere(ids: &DevIds) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    if let Ok(own) = std::fs::read_link("/proc/self/ns/mnt") {
        seen.insert(own);
    }
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(ns) = std::fs::read_link(format!("/proc/{pid}/ns/mnt")) else {
            continue;
        };
        if !seen.insert(ns) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")) else {
            continue;
        };
        if let Some(m) = mounted_in(&text, ids) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            return Some(format!(
                "{m} in another mount namespace (that of process {pid}, {})",
                comm.trim()
            ));
        }
    }
    None
}

/// A loop device whose backing file is one of `ids` (loop devices do not appear in holders/; their
/// backing is in /sys/block/loopN/loop/backing_file), with what in turn uses that loop device.
pub(crate) fn loop_over(ids: &DevIds) -> Option<String> {
    for e in std::fs::read_dir("/sys/block").ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(back) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let back = back.trim_end_matches('\n');
        let back = back.strip_suffix(" (deleted)").unwrap_or(back);
        let Ok(bst) = sys::stat(Path::new(back)) else {
            continue;
        };
        if bst.st_mode & libc::S_IFMT != libc::S_IFBLK {
            continue;
        }
        let Some(what) = named(ids, major_minor(bst.st_rdev)) else {
            continue;
        };
        let loop_dev = format!("/dev/{name}");
        let used = read_dev_numbers(&e.path().join("dev"))
            .and_then(|(a, b)| device_in_use(Path::new(&loop_dev), libc::makedev(a, b)));
        return Some(match used {
            Some(why) => format!("the loop device {loop_dev} is stacked on {what}, and {why}"),
            None => {
                format!("the loop device {loop_dev} is stacked on {what} (losetup -d {loop_dev})")
            }
        });
    }
    None
}

/// The loop device whose backing file is the file `id` (device, inode), with what uses it: writing the
/// file writes that device's contents, behind the loop driver and whatever is mounted on it.
pub(crate) fn loop_backed_by(id: (u64, u64)) -> Option<String> {
    for e in std::fs::read_dir("/sys/block").ok()?.flatten() {
        let Ok(back) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let back = back.trim_end_matches('\n');
        let back = back.strip_suffix(" (deleted)").unwrap_or(back);
        let same = sys::stat(Path::new(back)).is_ok_and(|st| sys::identity(&st) == id);
        if !same {
            continue;
        }
        let loop_dev = format!("/dev/{}", e.file_name().to_string_lossy());
        let used = read_dev_numbers(&e.path().join("dev"))
            .and_then(|(a, b)| device_in_use(Path::new(&loop_dev), libc::makedev(a, b)));
        return Some(match used {
            Some(why) => format!("it is the backing file of the loop device {loop_dev}, and {why}"),
            None => format!("it is the backing file of the loop device {loop_dev}"),
        });
    }
    None
}

/// Claims a block device about to be written: the checks of [`device_in_use`] (before any open), then the
/// kernel's exclusive open (O_EXCL fails with EBUSY while anything mounts or claims the device or a
/// partition of it, in any namespace), then the checks again. The returned descriptor keeps the claim:
/// nothing can mount or claim the device while it is open.
pub(crate) fn claim_device(pin: &super::pin::Pin, shown: &str) -> Result<OwnedFd> {
    let (path, rdev) = (pin.path.as_path(), pin.st.st_rdev);
    let refuse = |why: String| {
        let undo = if why.contains("is mounted at") {
            "unmount it"
        } else if why.contains("as swap") {
            "swapoff it"
        } else if why.contains("stacked on") {
            "detach it"
        } else if why.contains("another iolab") {
            "wait for it to finish"
        } else {
            "free it"
        };
        Error::usage(
            "--target",
            format!("refusing to write to {shown}: {why}; {undo} or choose another device"),
        )
    };
    if let Some(why) = device_in_use(path, rdev) {
        return Err(refuse(why));
    }
    // Through the pin: the very device whose number was checked, never another behind a swapped name.
    let claim = match pin.open(libc::O_RDONLY | libc::O_EXCL) {
        Ok(fd) => fd,
        Err(Error::Sys(f)) if f.err.errno == libc::EBUSY => {
            return Err(refuse(
                device_in_use(path, rdev)
                    .or_else(|| iolab_holding(rdev))
                    .unwrap_or_else(|| {
                        "the kernel refuses iolab an exclusive open (O_EXCL: EBUSY), so something holds it \
                         that iolab cannot name (a mount in a mount namespace it cannot read, another \
                         program's exclusive open, or a driver; see lsblk and fuser -m)"
                            .into()
                    }),
            ))
        }
        Err(e) => return Err(e),
    };
    // Again with the claim held: what started using it since the first look (a stacked loop device, say).
    match device_in_use(path, rdev) {
        Some(why) => Err(refuse(why)),
        None => Ok(claim),
    }
}

/// "another iolab (pid N) is writing it" when a running iolab other than this one has the block device
/// `rdev` open: an iolab writing a device keeps an exclusive open of it (what makes the kernel refuse a
/// second one EBUSY), and its descriptors show which process it is.
pub(crate) fn iolab_holding(rdev: libc::dev_t) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let me = std::process::id().to_string();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| *n != me && n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if !comm.trim_end().starts_with("iolab") {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::metadata(fd.path())
                .is_ok_and(|m| m.file_type().is_block_device() && m.rdev() == rdev)
        });
        if holds {
            return Some(format!(
                "another iolab (pid {pid}) has it open for its own run; two runs on one device measure each \
                 other"
            ));
        }
    }
    None
}

/// The file system on the block device `rdev` (this mount namespace's view): its type and where it is
/// mounted, if it is.
pub fn mounted_fs(rdev: libc::dev_t) -> Option<(String, String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounted_fs_in(&text, major_minor(rdev))
}

/// [`mounted_fs`] from a mountinfo text: "36 25 7:0 / /mnt rw,relatime shared:1 - ext4 /dev/loop0 rw".
pub(crate) fn mounted_fs_in(mountinfo: &str, (ma, mi): (u32, u32)) -> Option<(String, String)> {
    let want = format!("{ma}:{mi}");
    mountinfo.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(2) != Some(&want.as_str()) {
            return None;
        }
        let dash = f.iter().position(|w| *w == "-")?;
        Some((f.get(dash + 1)?.to_string(), f.get(4)?.to_string()))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_mounted_devices_file_system_and_mount_point_are_read_from_mountinfo() {
        let text = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n\
                    36 25 7:0 / /mnt/a\\040b rw,relatime shared:1 - xfs /dev/loop0 rw\n";
        assert_eq!(
            super::mounted_fs_in(text, (7, 0)),
            Some(("xfs".to_string(), "/mnt/a\\040b".to_string()))
        );
        assert_eq!(super::mounted_fs_in(text, (7, 1)), None);
    }
}
