//! `--memory-limit SIZE`: the run inside a memory cgroup of iolab's own, so the page cache the workload
//! makes cannot grow beyond SIZE and buffered I/O meets reclaim as on a machine with that little memory.
//!
//! The cgroup is made as a child of the cgroup iolab runs in (cgroup v1's memory hierarchy, or cgroup v2
//! where the memory controller can be enabled for children there), limited (v1 memory.limit_in_bytes, v2
//! memory.max), and the whole process moved into it before the passes; afterwards the process goes back
//! and the cgroup is removed. Its path is journaled, so `iolab clean` removes it after a kill. Pages
//! charged before the move stay charged where they were (v1 moves no charges by default; v2 never does).

use crate::error::{Error, Result};
use crate::units::fmt_size;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What the cgroup saw of one pass, for the result.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemoryLimit {
    /// The limit asked for, bytes.
    pub limit: u64,
    /// "cgroup v1" or "cgroup v2", and the cgroup's path.
    pub cgroup: String,
    /// Page cache charged to the cgroup at the end of the timed pass, bytes (v1 `cache`, v2 `file`).
    pub page_cache_end: u64,
    /// The most the cgroup held at once over the run, bytes (v1 max_usage_in_bytes, v2 memory.peak).
    pub peak: Option<u64>,
    /// Over the timed pass: times the cgroup hit its limit (v1 failcnt, v2 memory.events `max`).
    pub limit_hits: u64,
    /// Over the timed pass: page-cache pages read back after reclaim had evicted them
    /// (workingset_refault_file; null where the cgroup's memory.stat has no such line: cgroup v1, kernels
    /// before 5.9).
    pub refaults: Option<u64>,
    /// Why `refaults` is null; absent where it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refaults_unavailable: Option<String>,
    /// The timed pass every 100 ms (see `memwatch.rs`): the page cache, the limit's hits and reclaim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_time: Vec<crate::memwatch::MemPoint>,
    /// What `over_time`'s reclaimed pages count: the cgroup's pgsteal (v2), or the pages that left it,
    /// reclaimed or freed (v1 memory.stat pgpgout: v1 counts no reclaim apart).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reclaim_scope: String,
}

/// A memory cgroup of iolab's own that this process is in, left (and removed) on drop.
pub struct MemCgroup {
    dir: PathBuf,
    v2: bool,
    /// The cgroup.procs of the cgroup the process came from.
    home: PathBuf,
    limit: u64,
    journal: Option<u64>,
    /// The timed pass's sampler, between `start_watch` and `figures`.
    watch: std::sync::Mutex<Option<crate::memwatch::MemWatch>>,
}

/// Counters of the cgroup at one moment.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemSnap {
    page_cache: u64,
    hits: u64,
    refaults: Option<u64>,
}

impl MemCgroup {
    /// Makes the cgroup, limits it to `limit` bytes and moves this process into it.
    pub fn enter(limit: u64) -> Result<MemCgroup> {
        let (parent, v2) = current_memory_cgroup()?;
        if v2 {
            enable_memory(&parent)?;
        }
        let dir = parent.join(format!("iolab-{}", std::process::id()));
        let home = parent.join("cgroup.procs");
        // Journaled and handed to the signal handler before it exists, so no moment leaves it unrecorded;
        // the handler removes it only once it is made (and clean finds an unmade one gone).
        let journal = crate::leftovers::record_cgroup(&dir);
        crate::cleanup::register_cgroup(&home, &dir);
        if let Err(e) = std::fs::create_dir(&dir) {
            crate::cleanup::unregister_cgroup();
            if let Some(id) = journal {
                crate::leftovers::forget(id);
            }
            return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::Runtime(format!(
                    "--memory-limit: {} exists already (left by another process, or made by someone): iolab \
                     makes its own and never uses one it did not make; remove it, or run again",
                    dir.display()
                ))
            } else {
                refused(&dir, "making", &e)
            });
        }
        crate::cleanup::cgroup_made();
        let g = MemCgroup {
            home,
            dir,
            v2,
            limit,
            journal,
            watch: Default::default(),
        };
        let file = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        g.write(file, &limit.to_string())?;
        g.write("cgroup.procs", &std::process::id().to_string())?;
        Ok(g)
    }

    fn write(&self, name: &str, value: &str) -> Result<()> {
        let p = self.dir.join(name);
        std::fs::write(&p, value).map_err(|e| refused(&p, "writing", &e))
    }

    fn read(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name)).ok()
    }

    /// The cgroup's counters now.
    pub fn snap(&self) -> MemSnap {
        read_snap(&self.dir, self.v2).0
    }

    /// Starts sampling the cgroup every 100 ms (the timed pass's start).
    pub fn start_watch(&self) {
        let (dir, v2) = (self.dir.clone(), self.v2);
        let w = crate::memwatch::MemWatch::start(Box::new(move || {
            let (s, reclaimed) = read_snap(&dir, v2);
            (s.page_cache, s.hits, reclaimed)
        }));
        *self.watch.lock().unwrap_or_else(|p| p.into_inner()) = w;
    }

    /// The figures of the span from `before` to `now` (the timed pass's).
    pub fn figures(&self, before: MemSnap, now: MemSnap) -> MemoryLimit {
        let peak = self
            .read(if self.v2 {
                "memory.peak"
            } else {
                "memory.max_usage_in_bytes"
            })
            .and_then(|t| t.trim().parse().ok());
        MemoryLimit {
            limit: self.limit,
            cgroup: format!(
                "cgroup {} {}",
                if self.v2 { "v2" } else { "v1" },
                self.dir.display()
            ),
            page_cache_end: now.page_cache,
            peak,
            limit_hits: now.hits.saturating_sub(before.hits),
            refaults: now.refaults.zip(before.refaults).map(|(n, b)| n.saturating_sub(b)),
            refaults_unavailable: now.refaults.is_none().then(|| {
                "the cgroup's memory.stat has no workingset_refault_file line (cgroup v1, or a kernel \
                 before 5.9)"
                    .into()
            }),
            over_time: self
                .watch
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .map(|w| w.finish())
                .unwrap_or_default(),
            reclaim_scope: if self.v2 {
                "the cgroup's (memory.stat pgsteal)"
            } else {
                "the cgroup's pages uncharged (v1 memory.stat pgpgout: reclaimed or freed; v1 counts no reclaim apart)"
            }
            .into(),
        }
    }
}

/// A number of a "key value" line of `text` (0 when missing).
fn field(text: &str, key: &str) -> u64 {
    counted(text, key).unwrap_or(0)
}

/// A number of a "key value" line of `text`, where there is one.
fn counted(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The counters of the cgroup at `dir` now, and the pages reclaim took so far (v2; on v1 the pages that
/// left the cgroup).
fn read_snap(dir: &Path, v2: bool) -> (MemSnap, u64) {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let stat = read("memory.stat");
    let hits = if v2 {
        field(&read("memory.events"), "max")
    } else {
        read("memory.failcnt").trim().parse().unwrap_or(0)
    };
    // v1 counts no reclaim per cgroup (and the system's pgsteal_* leave a cgroup's own reclaim out): its
    // pages uncharged stand for it, the pages that left the cgroup, reclaimed or freed.
    let reclaimed = field(&stat, if v2 { "pgsteal" } else { "pgpgout" });
    let snap = MemSnap {
        page_cache: field(&stat, if v2 { "file" } else { "cache" }),
        hits,
        refaults: counted(&stat, "workingset_refault_file"),
    };
    (snap, reclaimed)
}

impl Drop for MemCgroup {
    /// Back to the cgroup the process came from, then the cgroup goes (its charged pages move to the
    /// parent).
    fn drop(&mut self) {
        crate::cleanup::unregister_cgroup();
        let _ = std::fs::write(&self.home, std::process::id().to_string());
        if remove_when_empty(&self.dir) {
            if let Some(id) = self.journal {
                crate::leftovers::forget(id);
            }
        }
    }
}

/// Removes the cgroup `dir` the process has just left. A thread of ours that has exited (joined) can stay
/// in it until its last switch off a CPU (the kernel moves no exiting task), so the kernel answers EBUSY
/// for a moment: asked again every 2 ms, for at most a second. True when it is gone.
fn remove_when_empty(dir: &Path) -> bool {
    for _ in 0..500 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return true,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(2))
            }
            Err(_) => return false,
        }
    }
    false
}

fn refused(p: &Path, doing: &str, e: &std::io::Error) -> Error {
    let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
        "; a memory cgroup of iolab's own needs root (or a delegated cgroup)"
    } else {
        ""
    };
    Error::Runtime(format!(
        "--memory-limit: {doing} {} failed: {e}{hint}",
        p.display()
    ))
}

/// The least memory a run of `threads` threads holding `buffers` bytes of I/O buffers each needs inside
/// its cgroup: iolab's own (32 MiB) plus, per thread, its buffers and 2 MiB for its stack, histograms and
/// interval log. Below it the kernel's OOM killer would end the run without a word (measured: 32
/// psync threads died under 32 MiB and ran under 64 MiB).
pub fn least_limit(threads: u64, buffers: u64) -> u64 {
    (32 << 20) + threads * (buffers + (2 << 20))
}

/// The directory of this process's memory cgroup, and whether it is cgroup v2's.
fn current_memory_cgroup() -> Result<(PathBuf, bool)> {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    // v1: the hierarchy with the memory controller.
    let v1 = own.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctl, path) = (f.next()?, f.next()?, f.next()?);
        ctl.split(',')
            .any(|c| c == "memory")
            .then(|| path.to_string())
    });
    let mount_of = |fstype: &str, opt: Option<&str>| {
        mounts.lines().find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let mut r = right.split(' ');
            let (t, _src, opts) = (r.next()?, r.next()?, r.next().unwrap_or(""));
            if t != fstype || opt.is_some_and(|o| !opts.split(',').any(|x| x == o)) {
                return None;
            }
            left.split(' ').nth(4).map(PathBuf::from)
        })
    };
    if let Some(path) = v1 {
        if let Some(m) = mount_of("cgroup", Some("memory")) {
            return Ok((m.join(path.trim_start_matches('/')), false));
        }
    }
    let v2 = own
        .lines()
        .find_map(|l| l.strip_prefix("0::").map(str::to_string));
    match (v2, mount_of("cgroup2", None)) {
        (Some(path), Some(m)) => Ok((m.join(path.trim_start_matches('/')), true)),
        _ => Err(Error::Runtime(
            "--memory-limit: this system mounts no memory cgroup (neither cgroup v1's memory hierarchy nor \
             cgroup v2)"
                .into(),
        )),
    }
}

/// cgroup v2: the memory controller for the children of `dir` (cgroup.subtree_control).
fn enable_memory(dir: &Path) -> Result<()> {
    let ctl = dir.join("cgroup.subtree_control");
    let on = std::fs::read_to_string(&ctl).unwrap_or_default();
    if on.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    std::fs::write(&ctl, "+memory").map_err(|e| {
        Error::Runtime(format!(
            "--memory-limit: enabling the memory controller for {}'s children failed ({e}): cgroup v2 allows it \
             only in a cgroup with no processes of its own; run iolab in a cgroup of its own (e.g. `systemd-run \
             --scope iolab ...`) or under a limit given that way",
            dir.display()
        ))
    })
}

/// "128 MiB (cgroup v1 ...)": the limit as the output names it.
pub fn describe(m: &MemoryLimit) -> String {
    format!("{} ({})", fmt_size(m.limit), m.cgroup)
}
