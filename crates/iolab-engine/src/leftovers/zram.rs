//! zram devices in the journal. A suite that needs one makes it (zram-control's hot_add) and sizes it; a
//! kill leaves the device and the memory it holds. `clean` resets and removes (hot_remove) a recorded
//! device only while it is still the one iolab made: same boot, the size iolab gave it, not mounted, not a
//! swap, held by nothing; the kernel refuses the reset while anyone has it open. One in use stays in the
//! journal, so a later `clean` (after swapoff or umount) resets it; anything else is left as it is, with
//! the reason.

use super::format::Contents;
use super::format::ZramEntry;
use super::report::{CleanReport, Outcome, Verdict};
use std::path::{Path, PathBuf};

/// Each zram device of a gone process, newest first; returns those to keep in the journal (failed, or not
/// looked at because `clean` was given a directory: a device is under none).
pub(super) fn clean_zram(
    c: &Contents,
    under: Option<&Path>,
    rep: &mut CleanReport,
) -> Vec<ZramEntry> {
    let mut keep = Vec::new();
    let same_boot = c.owner.boot == super::format::boot_id();
    for z in c.zram.iter().rev() {
        if under.is_some() {
            rep.outside += 1;
            keep.push(z.clone());
            continue;
        }
        let verdict = reset_in(Path::new("/sys"), z, same_boot);
        if matches!(verdict, Verdict::Failed(_)) {
            keep.push(z.clone());
        }
        rep.outcomes.push(Outcome {
            path: PathBuf::from(format!("/dev/zram{}", z.dev)),
            is_dir: false,
            zram: true,
            pid: c.owner.pid,
            verdict,
        });
    }
    keep.reverse();
    keep
}

/// Resets and removes zram`z.dev` under the sysfs root `sys` if it is still iolab's.
fn reset_in(sys: &Path, z: &ZramEntry, same_boot: bool) -> Verdict {
    if !same_boot {
        return Verdict::Gone; // no zram device outlives a reboot
    }
    let blk = sys.join(format!("block/zram{}", z.dev));
    let size = match std::fs::read_to_string(blk.join("disksize")) {
        Ok(s) => s.trim().parse::<u64>().unwrap_or(0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Verdict::Gone,
        Err(e) => return Verdict::Failed(format!("cannot read its disksize: {e}")),
    };
    if size == 0 {
        // Reset already (by iolab, whose hot_remove then failed, or by someone): it holds no memory, and
        // an empty device cannot be told apart from another's.
        return Verdict::Refused(
            "it is empty now (reset, holding no memory): not removed, since an empty device is not \
             known to be iolab's"
                .into(),
        );
    }
    if size != z.disksize {
        return Verdict::Refused(format!(
            "its size is {size} bytes, not the {} iolab gave it: another's device now",
            z.disksize
        ));
    }
    if let Some(why) = in_use(&blk, z.dev) {
        // Still iolab's, only busy for now: kept in the journal (Failed), so a later `clean` (after
        // swapoff or umount) resets it.
        return Verdict::Failed(format!(
            "{why}: left as it is and kept in the journal; `iolab clean` resets it once it is free"
        ));
    }
    if let Err(e) = std::fs::write(blk.join("reset"), "1") {
        return Verdict::Failed(format!("reset: {e} (something has it open)"));
    }
    match std::fs::write(sys.join("class/zram-control/hot_remove"), z.dev.to_string()) {
        Ok(()) => Verdict::Removed,
        Err(e) => Verdict::Failed(format!("reset, but hot_remove: {e}")),
    }
}

/// Why the device is in use (held by another device, mounted, a swap), if it is.
fn in_use(blk: &Path, dev: u32) -> Option<String> {
    if let Some(h) = std::fs::read_dir(blk.join("holders"))
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
    {
        return Some(format!("it is held by {}", h.file_name().to_string_lossy()));
    }
    let numbers = std::fs::read_to_string(blk.join("dev")).unwrap_or_default();
    let numbers = numbers.trim();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    if let Some(at) = mountinfo.lines().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f.get(2) == Some(&numbers)).then(|| f.get(4).copied().unwrap_or("?"))
    }) {
        return Some(format!("it is mounted on {at}"));
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    let name = format!("/dev/zram{dev} ");
    swaps
        .lines()
        .any(|l| l.starts_with(&name))
        .then(|| "it is in use as swap".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sysfs of one zram device, `size` bytes, in a test directory.
    fn fake_sys(dev: u32, size: u64) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let blk = d.path().join(format!("block/zram{dev}"));
        std::fs::create_dir_all(blk.join("holders")).unwrap();
        std::fs::write(blk.join("disksize"), format!("{size}\n")).unwrap();
        std::fs::write(blk.join("dev"), "999:77\n").unwrap();
        std::fs::create_dir_all(d.path().join("class/zram-control")).unwrap();
        d
    }

    #[test]
    fn iolabs_device_is_reset_and_removed() {
        let s = fake_sys(7, 4096);
        let z = ZramEntry {
            id: 1,
            dev: 7,
            disksize: 4096,
        };
        assert_eq!(reset_in(s.path(), &z, true), Verdict::Removed);
        let read = |p: &str| std::fs::read_to_string(s.path().join(p)).unwrap();
        assert_eq!(read("block/zram7/reset"), "1");
        assert_eq!(read("class/zram-control/hot_remove"), "7");
    }

    #[test]
    fn another_size_a_holder_a_missing_device_or_a_reboot_leave_it() {
        let s = fake_sys(7, 8192);
        let z = ZramEntry {
            id: 1,
            dev: 7,
            disksize: 4096,
        };
        let v = reset_in(s.path(), &z, true);
        assert!(
            matches!(&v, Verdict::Refused(w) if w.contains("its size is 8192 bytes")),
            "{v:?}"
        );
        let s = fake_sys(7, 4096);
        std::fs::create_dir(s.path().join("block/zram7/holders/dm-0")).unwrap();
        let v = reset_in(s.path(), &z, true);
        // In use is not "another's": it stays in the journal (Failed) for a later clean.
        assert!(
            matches!(&v, Verdict::Failed(w) if w.contains("held by dm-0") && w.contains("kept in the journal")),
            "{v:?}"
        );
        assert!(!s.path().join("block/zram7/reset").exists(), "not reset");
        let other = ZramEntry {
            dev: 8,
            ..z.clone()
        };
        assert_eq!(reset_in(s.path(), &other, true), Verdict::Gone);
        assert_eq!(reset_in(s.path(), &z, false), Verdict::Gone);
    }
}
