//! Kernel counters through perf_event_open(2): pid = this process, cpu = any, inherit = 1, so worker threads
//! and io_uring's kernel helper threads (created after the counters) are counted too.
//!
//! - Software events (context switches, CPU migrations, minor/major page faults, task clock) cost nothing
//!   measurable and are on in the timed pass.
//! - Hardware events (cycles, instructions, cache misses) where the machine has them; otherwise the reason.
//! - Tracepoints: raw_syscalls:sys_enter (syscalls made), io_uring:io_uring_submit_req (requests the kernel
//!   took), io_uring:io_uring_queue_async_work (requests punted to io-wq workers), io_uring:io_uring_complete,
//!   and every syscalls:sys_enter_<name> for a per-syscall breakdown. An enabled sys_enter tracepoint puts
//!   every syscall on the slow path (~30% on a 90 ns syscall), so by default they are counted in a separate
//!   pass of the same workload (`--count separate`).
//!
//! Values are deltas between two snapshots (PERF_EVENT_IOC_RESET would not clear what exited inherited
//! threads left behind). Both snapshots are taken with every counter stopped by one
//! prctl(PR_TASK_PERF_EVENTS_DISABLE), so reading hundreds of counters does not count the reads; the one
//! prctl that stops them is itself counted and subtracted.

use iolab_sys as sys;
use iolab_sys::perf;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::OnceLock;

/// How tracepoint counters are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CountMode {
    /// No tracepoints (software counters still on).
    None,
    /// A second, untimed pass with tracepoints on, over a sample of the workload (the default; see
    /// [`crate::spec::Spec::counting_sample`]).
    #[default]
    Separate,
    /// A second, untimed pass with tracepoints on, over the whole workload: exact totals.
    Full,
    /// Tracepoints on during the timed pass (timings perturbed; the output says so).
    Inline,
}

impl CountMode {
    /// A counting pass of its own, before the timed pass.
    pub fn separate_pass(self) -> bool {
        matches!(self, CountMode::Separate | CountMode::Full)
    }
}

/// Which family a counter belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Software,
    Hardware,
    Tracepoint,
    /// syscalls:sys_enter_<name>
    Syscall,
}

/// Tracepoint ids from tracefs, found once per process.
#[derive(Debug, Clone, Default)]
pub struct TraceIds {
    /// "raw_syscalls:sys_enter" -> id, "io_uring:io_uring_submit_req" -> id ...
    pub events: BTreeMap<String, u64>,
    /// syscall name ("pwrite64") -> id of syscalls:sys_enter_<name>.
    pub syscalls: BTreeMap<String, u64>,
    /// How tracefs was reached (or mounted for the purpose).
    pub source: String,
    /// raw_syscalls:sys_exit (counted for offload clients only).
    pub sys_exit: Option<u64>,
    /// The block layer's request events and their raw layouts (`--layers`).
    pub block: Option<super::tp_format::BlockFormats>,
}

/// Syscalls the runner itself (or any method's flushes and setup) can make during a run; a run's breakdown
/// names these and its method's own (`MethodInfo::syscalls`). The rest of raw_syscalls:sys_enter is
/// reported as "other". Not every syscalls:sys_enter_* tracepoint is opened because releasing a trace
/// event waits for an RCU grace period (0.1-0.3 s per event on this VM, measured): 360 of them made every
/// run 14 s longer.
/// (read and write: the peer thread of a stream target, and the eventfd doorbells of ring designs.)
pub const RUNNER_CALLS: [&str; 9] = [
    "write",
    "read",
    "lseek",
    "fsync",
    "msync",
    "futex",
    "getrusage",
    "mmap",
    "munmap",
];

const EVENTS: [&str; 4] = [
    "raw_syscalls:sys_enter",
    "io_uring:io_uring_submit_req",
    "io_uring:io_uring_queue_async_work",
    "io_uring:io_uring_complete",
];

/// The io_uring submission tracepoint, one hit per request the kernel takes from the SQ ring, and its
/// older name (kernels up to 6.1 among them, as Debian 12's guests run): counted under the name the kernel
/// has.
pub const SUBMIT: &str = "io_uring:io_uring_submit_req";
pub const SUBMIT_OLD: &str = "io_uring:io_uring_submit_sqe";

fn read_ids(root: &Path) -> TraceIds {
    let mut ids = TraceIds::default();
    let id = |e: &str| -> Option<u64> {
        let (cat, name) = e.split_once(':').expect("cat:name");
        let t =
            std::fs::read_to_string(root.join("events").join(cat).join(name).join("id")).ok()?;
        t.trim().parse().ok()
    };
    for e in EVENTS {
        if let Some(v) = id(e) {
            ids.events.insert(e.to_string(), v);
        }
    }
    if !ids.events.contains_key(SUBMIT) {
        if let Some(v) = id(SUBMIT_OLD) {
            ids.events.insert(SUBMIT_OLD.to_string(), v);
        }
    }
    ids.block = super::tp_format::block_formats(root);
    ids.sys_exit = std::fs::read_to_string(root.join("events/raw_syscalls/sys_exit/id"))
        .ok()
        .and_then(|t| t.trim().parse().ok());
    if let Ok(dir) = std::fs::read_dir(root.join("events/syscalls")) {
        for ent in dir.flatten() {
            let n = ent.file_name().to_string_lossy().into_owned();
            if let Some(sc) = n.strip_prefix("sys_enter_") {
                if let Some(v) = std::fs::read_to_string(ent.path().join("id"))
                    .ok()
                    .and_then(|t| t.trim().parse().ok())
                {
                    ids.syscalls.insert(sc.to_string(), v);
                }
            }
        }
    }
    ids
}

/// Finds tracepoint ids: in a mounted tracefs, or (as root) in a tracefs instance of iolab's own that is
/// mounted in no namespace iolab or anyone else lives in (see [`private_tracefs_ids`]). `Err` says why
/// there are none.
pub fn trace_ids() -> Result<&'static TraceIds, String> {
    static IDS: OnceLock<Result<TraceIds, String>> = OnceLock::new();
    IDS.get_or_init(|| {
        for root in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            let p = Path::new(root);
            if p.join("events").is_dir() {
                let mut ids = read_ids(p);
                ids.source = format!("tracefs at {root}");
                return Ok(ids);
            }
        }
        private_tracefs_ids()
    })
    .as_ref()
    .map_err(|e| e.clone())
}

/// Where the fallback for kernels without fsmount(2) mounts tracefs, in the helper's own namespace only.
const CHILD_MOUNTPOINT: &str = "/sys/kernel/tracing";

/// Tracepoint ids when tracefs is not mounted: never by mounting it where iolab lives (a mount there would
/// outlive an iolab killed before unmounting it). Linux 5.2+: a detached tracefs (fsmount), held by a
/// descriptor and mounted nowhere; older kernels: tracefs mounted by a child in a mount namespace of its
/// own, read through /proc/PID/root, gone with the child.
pub fn private_tracefs_ids() -> Result<TraceIds, String> {
    let hint = "tracepoint ids unknown; mount tracefs at /sys/kernel/tracing or run as root";
    match sys::tracefs_detached() {
        Ok(mnt) => {
            let root = std::path::PathBuf::from(format!("/proc/self/fd/{}", mnt.as_raw_fd()));
            let mut ids = checked_ids(&root)?;
            ids.source = "tracefs is not mounted: iolab read the ids from a tracefs instance of its own that is \
                          mounted nowhere (fsmount; it ended when iolab closed it)"
                .into();
            Ok(ids)
        }
        Err(e) if e.errno == libc::ENOSYS => match sys::tracefs_in_child(Path::new(CHILD_MOUNTPOINT)) {
            Ok(child) => {
                let mut ids = checked_ids(&child.root())?;
                ids.source = format!(
                    "tracefs is not mounted: a helper process of iolab's mounted it on {CHILD_MOUNTPOINT} in a \
                     mount namespace of its own (gone when the helper exited)"
                );
                Ok(ids)
            }
            Err(e) => Err(format!(
                "tracefs is not mounted and this kernel has no fsmount(2); a helper's {} failed ({}): {hint}",
                e.call,
                sys::errno_name(e.errno)
            )),
        },
        Err(e) => Err(format!(
            "tracefs is not mounted and mounting a private instance failed ({} {}): {hint}",
            e.call,
            sys::errno_name(e.errno)
        )),
    }
}

/// [`read_ids`] of a tracefs that must have an events directory.
fn checked_ids(root: &Path) -> Result<TraceIds, String> {
    if !root.join("events").is_dir() {
        return Err(format!(
            "the private tracefs instance has no events directory at {}",
            root.display()
        ));
    }
    Ok(read_ids(root))
}

/// Why perf_event_open failed, for people.
pub(crate) fn open_reason(errno: i32) -> String {
    let paranoid =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    match errno {
        libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV => {
            "not supported here (the CPU or hypervisor exposes no such counter)".into()
        }
        libc::EACCES | libc::EPERM => format!(
            "not permitted ({}: perf_event_paranoid={} and not root/CAP_PERFMON)",
            sys::errno_name(errno),
            paranoid.trim()
        ),
        libc::ENOSYS => crate::emulation::user_mode::detected()
            .and(crate::emulation::user_mode::enosys_hint("perf_event_open"))
            .unwrap_or("this kernel has no perf_event_open (CONFIG_PERF_EVENTS off)")
            .into(),
        e => format!("perf_event_open failed: {}", sys::errno_name(e)),
    }
}

/// An open set of counters.
#[derive(Default)]
pub struct CounterSet {
    open: Vec<(String, Family, OwnedFd)>,
    /// Counters that could not be opened, with the reason.
    pub unavailable: Vec<(String, Family, String)>,
    /// How tracepoint ids were found, or why the breakdown is missing.
    pub notes: Vec<String>,
}

/// Counter values at one moment, in the order of the set.
#[derive(Debug, Clone, Default)]
pub struct CounterSnap(pub Vec<u64>);

/// One counter's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CounterValue {
    pub name: String,
    pub family: Family,
    /// The delta over the counted span; `None` when unavailable.
    pub value: Option<u64>,
    /// Why it is unavailable.
    pub unavailable: Option<String>,
}

impl CounterSet {
    fn add(&mut self, name: &str, family: Family, type_: u32, config: u64) {
        match sys::perf_event_open_counter(type_, config) {
            Ok(fd) => self.open.push((name.to_string(), family, fd)),
            Err(e) => self
                .unavailable
                .push((name.to_string(), family, open_reason(e.errno))),
        }
    }

    /// One syscall's count as raw_syscalls:sys_enter filtered on its number (`id == nr`), rather than its
    /// own syscalls:sys_enter_* tracepoint: closing the last counter of a tracepoint waits for RCU grace
    /// periods (~45 ms each here), and counters of one tracepoint share that wait, so the breakdown's ~12
    /// counters cost one wait instead of ~12 (0.5 s per counted run here). A name this kernel's filter
    /// refuses falls back to its own tracepoint.
    fn add_filtered(&mut self, name: &str, sys_enter_id: u64, nr: i64) -> bool {
        let filtered = sys::perf_event_open_counter(perf::PERF_TYPE_TRACEPOINT, sys_enter_id)
            .and_then(|fd| {
                let f = std::ffi::CString::new(format!("id == {nr}")).expect("no NUL in a number");
                sys::perf_set_filter(&fd, &f).map(|()| fd)
            });
        match filtered {
            Ok(fd) => {
                self.open.push((name.to_string(), Family::Syscall, fd));
                true
            }
            Err(_) => false,
        }
    }

    /// The kernel's count of the requests it took with opcode `code` (`name`, as its tracepoint prints it):
    /// the submission tracepoint filtered on `opcode == code`, named "<tracepoint> opcode <name>". Says
    /// nothing when the tracepoint or its filter is missing (the unfiltered count still stands).
    pub fn add_opcode(&mut self, name: &str, code: u8) {
        let Ok(ids) = trace_ids() else { return };
        let Some((tp, &id)) = [SUBMIT, SUBMIT_OLD]
            .into_iter()
            .find_map(|t| ids.events.get(t).map(|id| (t, id)))
        else {
            return;
        };
        let label = format!("{tp} opcode {name}");
        let opened = sys::perf_event_open_counter(perf::PERF_TYPE_TRACEPOINT, id).and_then(|fd| {
            let f =
                std::ffi::CString::new(format!("opcode == {code}")).expect("no NUL in a number");
            sys::perf_set_filter(&fd, &f).map(|()| fd)
        });
        match opened {
            Ok(fd) => self.open.push((label, Family::Tracepoint, fd)),
            Err(e) => self
                .unavailable
                .push((label, Family::Tracepoint, open_reason(e.errno))),
        }
    }

    /// Software and hardware counters (the timed pass).
    pub fn add_software_and_hardware(&mut self) {
        let sw = perf::PERF_TYPE_SOFTWARE;
        self.add(
            "context-switches",
            Family::Software,
            sw,
            perf::PERF_COUNT_SW_CONTEXT_SWITCHES as u64,
        );
        self.add(
            "cpu-migrations",
            Family::Software,
            sw,
            perf::PERF_COUNT_SW_CPU_MIGRATIONS as u64,
        );
        self.add(
            "minor-faults",
            Family::Software,
            sw,
            perf::PERF_COUNT_SW_PAGE_FAULTS_MIN as u64,
        );
        self.add(
            "major-faults",
            Family::Software,
            sw,
            perf::PERF_COUNT_SW_PAGE_FAULTS_MAJ as u64,
        );
        self.add(
            "task-clock-ns",
            Family::Software,
            sw,
            perf::PERF_COUNT_SW_TASK_CLOCK as u64,
        );
        let hw = perf::PERF_TYPE_HARDWARE;
        self.add(
            "cycles",
            Family::Hardware,
            hw,
            perf::PERF_COUNT_HW_CPU_CYCLES as u64,
        );
        self.add(
            "instructions",
            Family::Hardware,
            hw,
            perf::PERF_COUNT_HW_INSTRUCTIONS as u64,
        );
        self.add(
            "cache-misses",
            Family::Hardware,
            hw,
            perf::PERF_COUNT_HW_CACHE_MISSES as u64,
        );
    }

    /// raw_syscalls:sys_enter, the io_uring tracepoints when `io_uring` (other methods make no requests),
    /// and a per-syscall count of each of `breakdown` (none when it is `None`).
    pub fn add_tracepoints(&mut self, breakdown: Option<&[&'static str]>, io_uring: bool) {
        let ids = match trace_ids() {
            Ok(ids) => ids,
            Err(why) => {
                for e in EVENTS {
                    self.unavailable
                        .push((e.to_string(), Family::Tracepoint, why.clone()));
                }
                self.notes
                    .push(format!("per-syscall breakdown unavailable: {why}"));
                return;
            }
        };
        self.notes.push(format!("tracepoint ids: {}", ids.source));
        for e in EVENTS {
            if e.starts_with("io_uring:") && !io_uring {
                self.unavailable.push((
                    e.to_string(),
                    Family::Tracepoint,
                    "not counted: this method makes no io_uring requests".into(),
                ));
                continue;
            }
            let old = (e == SUBMIT).then(|| ids.events.get(SUBMIT_OLD)).flatten();
            match (ids.events.get(e), old) {
                (Some(&id), _) => self.add(e, Family::Tracepoint, perf::PERF_TYPE_TRACEPOINT, id),
                (None, Some(&id)) => {
                    self.add(
                        SUBMIT_OLD,
                        Family::Tracepoint,
                        perf::PERF_TYPE_TRACEPOINT,
                        id,
                    );
                    self.notes.push(format!(
                        "io_uring requests counted by {SUBMIT_OLD}: this kernel's name for {SUBMIT}"
                    ));
                }
                (None, None) => self.unavailable.push((
                    e.to_string(),
                    Family::Tracepoint,
                    "this kernel has no such tracepoint".into(),
                )),
            }
        }
        let Some(breakdown) = breakdown else {
            self.notes
                .push("per-syscall breakdown off (breakdown = false)".into());
            return;
        };
        if ids.syscalls.is_empty() {
            self.notes.push(
                "per-syscall breakdown unavailable: this kernel has no syscalls:sys_enter_* tracepoints \
                 (CONFIG_FTRACE_SYSCALLS); the BPF fallback is not built yet, so only the raw_syscalls total is counted"
                    .into(),
            );
            return;
        }
        if self
            .open
            .iter()
            .all(|(n, ..)| n != "raw_syscalls:sys_enter")
        {
            return; // if the total cannot be counted, neither can the parts
        }
        let before = self.unavailable.len();
        let sys_enter = ids.events.get("raw_syscalls:sys_enter").copied();
        for &name in breakdown {
            let filtered = match (sys_enter, sys::syscall_nr(name)) {
                (Some(id), Some(nr)) => self.add_filtered(name, id, nr),
                _ => false,
            };
            if !filtered {
                if let Some(&id) = ids.syscalls.get(name) {
                    self.add(name, Family::Syscall, perf::PERF_TYPE_TRACEPOINT, id);
                }
            }
        }
        let failed = self.unavailable.len() - before;
        if failed > 0 {
            let why = self.unavailable[before].2.clone();
            self.unavailable.truncate(before);
            self.notes.push(format!("{failed} syscall tracepoints could not be opened ({why}); the breakdown misses them"));
        } else {
            self.notes.push(format!(
                "per-syscall breakdown: the {} syscalls this method and the runner make ({}), each from its \
                 raw_syscalls:sys_enter counter filtered on its number (its own syscalls:sys_enter_* tracepoint where \
                 the filter is refused); the rest of raw_syscalls:sys_enter is 'other'",
                breakdown.len(),
                breakdown.join(", ")
            ));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    pub fn has_tracepoints(&self) -> bool {
        self.open
            .iter()
            .any(|(_, f, _)| matches!(f, Family::Tracepoint | Family::Syscall))
    }

    /// Stops every counter of this task (one prctl), so the snapshots that follow do not count themselves.
    pub fn pause(&self) {
        if !self.open.is_empty() {
            let _ = sys::perf_task_events(false);
        }
    }

    /// Restarts them.
    pub fn resume(&self) {
        if !self.open.is_empty() {
            let _ = sys::perf_task_events(true);
        }
    }

    /// Reads every open counter (call between `pause` and `resume`).
    pub fn snapshot(&self) -> CounterSnap {
        CounterSnap(
            self.open
                .iter()
                .map(|(_, _, fd)| sys::perf_read(fd.as_raw_fd()).unwrap_or(0))
                .collect(),
        )
    }

    /// Deltas between two snapshots, less the one prctl(DISABLE) that stopped the counters for `after`
    /// (its sys_enter fires while they still run).
    pub fn deltas(&self, before: &CounterSnap, after: &CounterSnap) -> Vec<CounterValue> {
        let mut v: Vec<CounterValue> = self
            .open
            .iter()
            .enumerate()
            .map(|(i, (name, family, _))| {
                let mut d = after
                    .0
                    .get(i)
                    .copied()
                    .unwrap_or(0)
                    .saturating_sub(before.0.get(i).copied().unwrap_or(0));
                if (name == "raw_syscalls:sys_enter"
                    || (*family == Family::Syscall && name == "prctl"))
                    && d > 0
                {
                    d -= 1;
                }
                CounterValue {
                    name: name.clone(),
                    family: *family,
                    value: Some(d),
                    unavailable: None,
                }
            })
            .collect();
        v.extend(
            self.unavailable
                .iter()
                .map(|(name, family, why)| CounterValue {
                    name: name.clone(),
                    family: *family,
                    value: None,
                    unavailable: Some(why.clone()),
                }),
        );
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_counters_count_our_own_page_faults() {
        let mut set = CounterSet::default();
        set.add_software_and_hardware();
        let Some(i) = set.open.iter().position(|(n, ..)| n == "minor-faults") else {
            println!(
                "SKIPPED: software counters unavailable: {:?}",
                set.unavailable
            );
            return;
        };
        set.pause();
        let a = set.snapshot();
        set.resume();
        // Touch 64 fresh pages: a new anonymous mapping, not the heap (whose pages other tests running
        // in parallel may have faulted in already).
        let m = iolab_sys::Mapping::anonymous(64 * 4096).unwrap();
        for i in 0..64 {
            // SAFETY: byte i * 4096 lies inside the live 64-page mapping `m` owns.
            unsafe { std::ptr::write_volatile(m.as_ptr().add(i * 4096), 1) };
        }
        set.pause();
        let b = set.snapshot();
        set.resume();
        let d = set.deltas(&a, &b);
        let faults = d[i].value.unwrap();
        assert!(
            faults >= 60,
            "64 fresh pages should fault; counted {faults}"
        );
        assert!(
            d.iter().any(|c| c.family == Family::Hardware),
            "hardware counters are listed, available or not"
        );
    }

    /// The mount points of tracefs mounts in a mountinfo.
    fn tracefs_mounts(mountinfo: &str) -> Vec<String> {
        mountinfo
            .lines()
            .filter(|l| l.contains(" - tracefs "))
            .filter_map(|l| l.split(' ').nth(4).map(str::to_string))
            .collect()
    }

    #[test]
    fn a_detached_tracefs_gives_the_ids_and_is_mounted_nowhere() {
        if iolab_sys::geteuid() != 0 {
            println!("SKIPPED a_detached_tracefs_gives_the_ids_and_is_mounted_nowhere: not root");
            return;
        }
        let ids = match private_tracefs_ids() {
            Ok(ids) => ids,
            Err(e) if e.contains("ENOSYS") => {
                println!("SKIPPED a_detached_tracefs_gives_the_ids_and_is_mounted_nowhere: {e}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        assert!(ids.events.contains_key("raw_syscalls:sys_enter"), "{ids:?}");
        assert!(ids.syscalls.contains_key("pwrite64"), "{ids:?}");
        assert!(ids.source.contains("mounted nowhere"), "{}", ids.source);
        // Its descriptor is closed: no descriptor of this process is a tracefs any more.
        for e in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
            if let Ok(m) = iolab_sys::fs_type_name(&e.path()) {
                assert_ne!(m, "tracefs", "{} still open", e.path().display());
            }
        }
    }

    #[test]
    fn the_child_fallback_mounts_only_in_its_own_namespace_and_ends_with_it() {
        if iolab_sys::geteuid() != 0 {
            println!("SKIPPED the_child_fallback_mounts_only_in_its_own_namespace_and_ends_with_it: not root");
            return;
        }
        let mp = Path::new(CHILD_MOUNTPOINT);
        if !mp.is_dir() {
            println!("SKIPPED the_child_fallback_mounts_only_in_its_own_namespace_and_ends_with_it: no {CHILD_MOUNTPOINT}");
            return;
        }
        let ours = || std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let here_before = tracefs_mounts(&ours())
            .iter()
            .filter(|m| m.as_str() == CHILD_MOUNTPOINT)
            .count();
        let child = sys::tracefs_in_child(mp).expect("the helper mounts tracefs");
        let pid = child
            .root()
            .components()
            .nth(2)
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .into_owned();
        let theirs = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
        assert!(
            tracefs_mounts(&theirs)
                .iter()
                .any(|m| m.as_str() == CHILD_MOUNTPOINT),
            "the helper's namespace has it: {theirs}"
        );
        let here = tracefs_mounts(&ours())
            .iter()
            .filter(|m| m.as_str() == CHILD_MOUNTPOINT)
            .count();
        assert_eq!(here, here_before, "this namespace does not");
        let ids = checked_ids(&child.root()).expect("ids through /proc/PID/root");
        assert!(ids.events.contains_key("raw_syscalls:sys_enter"), "{ids:?}");
        drop(child);
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "the helper exited and was reaped, and its namespace with it"
        );
    }
}
