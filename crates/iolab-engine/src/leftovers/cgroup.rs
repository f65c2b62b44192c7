//! Memory cgroups in the journal (`--memory-limit`): iolab makes one as a child of its own cgroup, moves
//! itself in, and at exit moves back and removes it; a kill leaves it behind, empty. The ftrace instance
//! of `--layers` (tracefs instances/iolab-PID) is journaled the same way and removed alike. `clean` removes a
//! recorded cgroup of a gone process once no process is in it (the kernel refuses otherwise); one that
//! still holds processes is someone's now and is left, with the reason.

use super::format::{CgroupEntry, Contents};
use super::report::{CleanReport, Outcome, Verdict};
use std::path::Path;

/// Each cgroup of a gone process; returns those to keep in the journal (failed, or outside `under`).
pub(super) fn clean_cgroups(
    c: &Contents,
    under: Option<&Path>,
    rep: &mut CleanReport,
) -> Vec<CgroupEntry> {
    let mut keep = Vec::new();
    for g in c.cgroups.iter().rev() {
        if under.is_some_and(|u| !g.path.starts_with(u)) {
            rep.outside += 1;
            keep.push(g.clone());
            continue;
        }
        let names = (
            format!("iolab-{}", c.owner.pid),
            format!("iolab-{}-{}", c.owner.pid, c.owner.start),
        );
        let name = g.path.file_name().map(|n| n.to_string_lossy().into_owned());
        let verdict = match name {
            Some(n) if n == names.0 || n == names.1 => remove(&g.path, n == names.1),
            _ => Verdict::Refused(format!(
                "not named {} (a cgroup) or {} (an ftrace instance), as iolab names them",
                names.0, names.1
            )),
        };
        if matches!(verdict, Verdict::Failed(_)) {
            keep.push(g.clone());
        }
        rep.outcomes.push(Outcome {
            path: g.path.clone(),
            is_dir: true,
            zram: false,
            pid: c.owner.pid,
            verdict,
        });
    }
    keep.reverse();
    keep
}

/// Removes the cgroup at `p` if it is one (a directory of a cgroup filesystem) and no process is in it,
/// or, named as one (`instance`), the ftrace instance at `p` (a directory of tracefs's instances:
/// `--layers`).
fn remove(p: &Path, instance: bool) -> Verdict {
    const CGROUP_SUPER_MAGIC: u64 = 0x0027_e0eb;
    const CGROUP2_SUPER_MAGIC: u64 = 0x6367_7270;
    // Where tracefs is not mounted, an instance made through iolab's own detached tracefs is reached
    // the same way (instances are the kernel's: the journal names it where tracefs is normally mounted).
    let held = instance.then(|| unmounted_tracefs(p)).flatten();
    let p = held.as_ref().map_or(p, |(_, at)| at.as_path());
    match iolab_sys::fs_magic(p) {
        Ok(CGROUP_SUPER_MAGIC | CGROUP2_SUPER_MAGIC) if !instance => {}
        Ok(TRACEFS_MAGIC)
            if instance && p.parent().and_then(Path::file_name) == Some("instances".as_ref()) =>
        {
            return match std::fs::remove_dir(p) {
                Ok(()) => Verdict::Removed,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Verdict::Gone,
                Err(e) => Verdict::Failed(format!("rmdir: {e}")),
            };
        }
        Ok(_) if instance => {
            return Verdict::Refused(
                "it is not an ftrace instance (not in tracefs's instances)".into(),
            )
        }
        Ok(_) => return Verdict::Refused("it is not a cgroup (not on a cgroup filesystem)".into()),
        Err(e) if e.errno == libc::ENOENT => return Verdict::Gone,
        Err(e) => return Verdict::Failed(format!("statfs: {}", iolab_sys::errno_name(e.errno))),
    }
    let procs = match std::fs::read_to_string(p.join("cgroup.procs")) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Verdict::Gone,
        Err(e) => return Verdict::Failed(format!("cannot read its cgroup.procs: {e}")),
    };
    if !procs.trim().is_empty() {
        return Verdict::Refused(format!(
            "processes are in it now ({}): it is not iolab's any more",
            procs.split_whitespace().collect::<Vec<_>>().join(", ")
        ));
    }
    match std::fs::remove_dir(p) {
        Ok(()) => Verdict::Removed,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Verdict::Gone,
        Err(e) => Verdict::Failed(format!("rmdir: {e}")),
    }
}

const TRACEFS_MAGIC: u64 = 0x7472_6163;

/// For an instance journaled under /sys/kernel/tracing while no tracefs is mounted there: a detached
/// tracefs of iolab's own (held by the descriptor returned) and the instance's path through it.
fn unmounted_tracefs(p: &Path) -> Option<(std::os::fd::OwnedFd, std::path::PathBuf)> {
    use std::os::fd::AsRawFd;
    let rel = p.strip_prefix("/sys/kernel/tracing").ok()?;
    if iolab_sys::fs_magic(Path::new("/sys/kernel/tracing")).ok() == Some(TRACEFS_MAGIC) {
        return None;
    }
    let fd = iolab_sys::tracefs_detached().ok()?;
    let at = Path::new(&format!("/proc/self/fd/{}", fd.as_raw_fd())).join(rel);
    Some((fd, at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_line_reads_back_and_only_a_cgroup_is_removed() {
        let g = CgroupEntry {
            id: 7,
            path: PathBuf::from("/sys/fs/cgroup/memory/a b/iolab-12"),
        };
        assert_eq!(CgroupEntry::parse(g.line().trim_end()), Some(g));
        assert_eq!(CgroupEntry::parse("g 7"), None);
        // An empty directory that is no cgroup (a journal line pointing elsewhere) is never removed.
        let d = tempfile::tempdir().unwrap();
        let plain = d.path().join("iolab-1");
        std::fs::create_dir(&plain).unwrap();
        assert!(matches!(remove(&plain, false), Verdict::Refused(_)));
        // Nor one named as an ftrace instance outside tracefs's instances.
        let inst = d.path().join("instances");
        std::fs::create_dir(&inst).unwrap();
        let fake = inst.join("iolab-1-2");
        std::fs::create_dir(&fake).unwrap();
        assert!(matches!(remove(&fake, true), Verdict::Refused(_)));
        assert!(plain.exists() && fake.exists());
        assert_eq!(remove(&d.path().join("none"), false), Verdict::Gone);
    }
}
