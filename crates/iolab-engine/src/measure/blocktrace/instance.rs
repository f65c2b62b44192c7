//! An ftrace instance of iolab's own (tracefs instances/iolab-PID): its own ring buffer on CLOCK_MONOTONIC
//! with only the block events on, filtered on the target's disk, so that nobody else's tracing is touched.
//! ftrace rather than perf sampling: on this kind of VM a perf sampling event loses the completions that
//! run in softirq on an idle CPU (measured with perf record itself: 17 of 5,000 block_rq_complete kept
//! while perf stat counted all 5,000; ftrace kept every one).
//!
//! An instance outlives the process that made it, so it is journaled before it is made (`iolab clean`
//! removes it after a kill) and handed to the signal handler, and removed at drop.

use super::pages::{self, PageLayout};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub(super) struct Instance {
    dir: PathBuf,
    layout: PageLayout,
    journal: Option<u64>,
    /// The detached tracefs `dir` is reached through, if tracefs is not mounted: a field, so it is closed
    /// after Drop removed the instance.
    _mount: Option<std::os::fd::OwnedFd>,
}

/// Per-CPU buffer of the instance, in KiB: each event takes 40-70 bytes, a traced pass of 10,000 ops
/// makes 30,000 (2 MiB if one CPU takes them all): 4 MiB per CPU up to 32 CPUs, then 128 MiB shared out,
/// but never under 2 MiB a CPU (so 2 MiB x CPUs beyond 64). A ring that fills loses events: the result
/// counts them, and the ops they belonged to are left out, never read as served without a request.
fn buffer_kb() -> usize {
    let cpus = crate::measure::profile::online_cpus().len().max(1);
    (131_072 / cpus).clamp(2048, 4096)
}

/// Where the canonical tracefs lives: an instance is journaled under it, whichever mount made it.
const CANONICAL: &str = "/sys/kernel/tracing";

/// The tracefs an instance is made in: a mounted one or, where none is (no systemd, a container), one
/// of iolab's own mounted nowhere (fsmount, as the counting pass's tracepoint ids), reached through its
/// descriptor and gone with it. Instances are the kernel's, not the mount's: one made through either is
/// the same directory under every tracefs mount, so a kill leaves it for `iolab clean` alike.
struct Root {
    path: PathBuf,
    /// The detached mount's descriptor, held while the instance exists.
    mount: Option<std::os::fd::OwnedFd>,
}

/// A mounted tracefs, or a detached one of iolab's own; `Err` says why neither.
fn tracefs_root() -> Result<Root, String> {
    let mounted = [CANONICAL, "/sys/kernel/debug/tracing"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.join("instances").is_dir());
    if let Some(path) = mounted {
        return Ok(Root { path, mount: None });
    }
    match iolab_sys::tracefs_detached() {
        Ok(fd) => Ok(Root {
            path: PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())),
            mount: Some(fd),
        }),
        Err(e) => Err(format!(
            "tracefs is not mounted and iolab could not mount one of its own ({}: {}{}); mount it with \
             `mount -t tracefs nodev {CANONICAL}`",
            e.call,
            iolab_sys::errno_name(e.errno),
            if e.errno == libc::EPERM {
                ", it takes root"
            } else {
                ""
            }
        )),
    }
}

impl Instance {
    /// Makes the instance with `events` (names under events/block) on, each filtered with `filter`,
    /// tracing off.
    pub(super) fn make(events: &[&str], filter: &str) -> Result<Instance, String> {
        let root = tracefs_root()?;
        let layout = read_whole(&root.path.join("events/header_page"))
            .and_then(|t| PageLayout::parse(&t))
            .ok_or("tracefs has no readable events/header_page")?;
        let name = crate::leftovers::trace_instance_name();
        let dir = root.path.join("instances").join(&name);
        // Journaled and handed to the signal handler before it exists, as the memory cgroup is. Its name
        // is this process's alone (pid and start time), so the handler may remove it from before mkdir
        // returns: a signal while the kernel makes it (about 1.5 ms, the directory visible before the
        // call returns) removes it too, and one before finds nothing. The journal names it where tracefs
        // is normally mounted (a descriptor's path means nothing after a kill).
        let canonical = match root.mount {
            Some(_) => Path::new(CANONICAL).join("instances").join(&name),
            None => dir.clone(),
        };
        let journal = crate::leftovers::record_cgroup(&canonical);
        let fd = root.mount.as_ref().map(|m| m.as_raw_fd());
        crate::cleanup::register_trace_instance(&dir, fd);
        crate::cleanup::trace_instance_made();
        if let Err(e) = std::fs::create_dir(&dir) {
            crate::cleanup::unregister_trace_instance();
            if let Some(id) = journal {
                crate::leftovers::forget(id);
            }
            let why = if e.kind() == std::io::ErrorKind::PermissionDenied {
                " (an ftrace instance needs root)"
            } else {
                ""
            };
            return Err(format!(
                "making the ftrace instance {}: {e}{why}",
                dir.display()
            ));
        }
        let inst = Instance {
            dir,
            layout,
            journal,
            _mount: root.mount,
        };
        inst.write("tracing_on", "0")?;
        inst.write("trace_clock", "mono")?;
        inst.write("buffer_size_kb", &buffer_kb().to_string())?;
        for e in events {
            let ev = format!("events/block/{e}");
            // Without the filter every disk's events come, and are dropped when read.
            let _ = inst.write(&format!("{ev}/filter"), filter);
            inst.write(&format!("{ev}/enable"), "1")?;
        }
        Ok(inst)
    }

    fn write(&self, name: &str, value: &str) -> Result<(), String> {
        let p = self.dir.join(name);
        std::fs::write(&p, value).map_err(|e| format!("writing {}: {e}", p.display()))
    }

    /// Starts or stops recording.
    pub(super) fn tracing(&self, on: bool) {
        let _ = self.write("tracing_on", if on { "1" } else { "0" });
    }

    /// Reads every CPU's ring to its end, calling `each(time, record)` per event; returns the events the
    /// rings lost (overwritten or dropped).
    pub(super) fn drain(&self, mut each: impl FnMut(u64, &[u8])) -> Result<u64, String> {
        let mut lost = 0;
        let mut page = vec![0u8; iolab_sys::page_size()];
        for cpu in crate::measure::profile::online_cpus() {
            let d = self.dir.join(format!("per_cpu/cpu{cpu}"));
            let stats = read_whole(&d.join("stats")).unwrap_or_default();
            lost += stat_of(&stats, "overrun:") + stat_of(&stats, "dropped events:");
            // A ring that cannot be read (the instance removed under iolab) is a lost trace, never an
            // empty one: its ops would read as served without a request.
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(d.join("trace_pipe_raw"))
                .map_err(|e| {
                    format!("the trace of CPU {cpu} is gone ({e}): was the instance removed?")
                })?;
            // One page per read; end of data (0) or EAGAIN once the ring is empty.
            while let Ok(n) = f.read(&mut page) {
                if n == 0 {
                    break;
                }
                pages::events(&page[..n], &self.layout, &mut each);
            }
        }
        Ok(lost)
    }
}

/// A tracefs file read in one read(2): events/header_page answers a second, continuing read with end of
/// file, so std's read_to_string (which starts with a 32-byte probe) gets only its first 32 bytes.
fn read_whole(p: &Path) -> Option<String> {
    let mut buf = vec![0u8; 64 << 10];
    let n = std::fs::File::open(p).ok()?.read(&mut buf).ok()?;
    buf.truncate(n);
    String::from_utf8(buf).ok()
}

/// A counter of a per-CPU stats file's text ("overrun: 12").
fn stat_of(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
        .unwrap_or(0)
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.tracing(false);
        let _ = self.write("events/enable", "0");
        // The kernel refuses while a reader still holds a file of it; readers here are closed already.
        let gone = std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists();
        crate::cleanup::unregister_trace_instance();
        if let (true, Some(id)) = (gone, self.journal) {
            crate::leftovers::forget(id);
        }
    }
}
