//! CPU, scheduler and kernel I/O accounting of the whole process, its threads and the kernel helper
//! threads serving it.
//!
//! - Process figures come from getrusage(RUSAGE_SELF) deltas: user/system seconds of every task of the
//!   process, including io_uring's helper threads and tasks that exited during the run; context switches;
//!   page faults.
//! - Worker figures come from getrusage(RUSAGE_THREAD) inside each worker.
//! - Kernel helper threads (`iou-sqp-*` SQPOLL threads and `iou-wrk-*` io-wq workers) are tasks under
//!   /proc/self/task; their utime/stime (in clock ticks, typically 10 ms) and their exact on-CPU time
//!   (schedstat, ns) are read at the start and the end. A helper that exited before the end is counted in
//!   the process figures only; the result says so.
//! - /proc/self/io gives the kernel's own count of read/write-family syscalls and bytes (syscr, syscw,
//!   rchar, wchar): an independent check of what the methods claim. io_uring and mmap I/O does not
//!   appear there; the result explains that.

use iolab_sys as sys;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn tv_secs(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 * 1e-6
}

/// A getrusage snapshot, and for a thread its exact CPU time (CLOCK_THREAD_CPUTIME_ID, seconds).
#[derive(Debug, Clone, Copy)]
pub struct Rusage(pub libc::rusage, pub Option<f64>);

impl Rusage {
    pub fn process() -> Rusage {
        Rusage(sys::getrusage(libc::RUSAGE_SELF), None)
    }
    pub fn thread() -> Rusage {
        Rusage(
            sys::getrusage(libc::RUSAGE_THREAD),
            Some(sys::thread_cpu_s()),
        )
    }
}

/// Differences between two getrusage snapshots.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct RusageDelta {
    /// The kernel's split of the CPU time between user and system, sampled per scheduler tick and kept
    /// from going backwards: over a span of few ticks either can read 0 (a thread's 200 µs of CPU read
    /// 0.000 s of each) or more than the span.
    pub user_s: f64,
    pub sys_s: f64,
    /// A thread's CPU time (a sum of threads' for the workers), exact (CLOCK_THREAD_CPUTIME_ID, the
    /// scheduler's own count); none for the process, and in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
    pub voluntary_ctx_switches: u64,
    pub involuntary_ctx_switches: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}

impl RusageDelta {
    pub fn between(a: &Rusage, b: &Rusage) -> RusageDelta {
        let cpu_s = a.1.zip(b.1).map(|(x, y)| (y - x).max(0.0));
        let (a, b) = (&a.0, &b.0);
        RusageDelta {
            cpu_s,
            user_s: tv_secs(b.ru_utime) - tv_secs(a.ru_utime),
            sys_s: tv_secs(b.ru_stime) - tv_secs(a.ru_stime),
            voluntary_ctx_switches: (b.ru_nvcsw - a.ru_nvcsw).max(0) as u64,
            involuntary_ctx_switches: (b.ru_nivcsw - a.ru_nivcsw).max(0) as u64,
            minor_faults: (b.ru_minflt - a.ru_minflt).max(0) as u64,
            major_faults: (b.ru_majflt - a.ru_majflt).max(0) as u64,
        }
    }

    /// Adds `o`'s counts; `cpu_s` the caller sums (none where any part has none).
    pub fn add(&mut self, o: &RusageDelta) {
        self.user_s += o.user_s;
        self.sys_s += o.sys_s;
        self.voluntary_ctx_switches += o.voluntary_ctx_switches;
        self.involuntary_ctx_switches += o.involuntary_ctx_switches;
        self.minor_faults += o.minor_faults;
        self.major_faults += o.major_faults;
    }
}

/// CPU times of one task from /proc/self/task/<tid>.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskTimes {
    pub tid: i32,
    pub comm: String,
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    /// Exact on-CPU nanoseconds (first field of schedstat), when the kernel provides it.
    pub oncpu_ns: Option<u64>,
    /// Nanoseconds spent runnable but waiting on a runqueue (second field of schedstat).
    pub run_delay_ns: Option<u64>,
}

/// Parses /proc/<pid>/task/<tid>/stat: utime and stime are fields 14 and 15, after the `(comm)` field
/// which may itself hold spaces and parentheses (so split after the last ')').
pub fn parse_stat(text: &str) -> Option<(String, u64, u64)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    // rest[0] is field 3 (state); utime is field 14 -> rest[11], stime field 15 -> rest[12].
    let ut = rest.get(11)?.parse().ok()?;
    let st = rest.get(12)?.parse().ok()?;
    Some((comm, ut, st))
}

/// All tasks of this process now.
pub fn read_tasks() -> Vec<TaskTimes> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(tid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let p = e.path();
        let Some((comm, ut, st)) = std::fs::read_to_string(p.join("stat"))
            .ok()
            .and_then(|s| parse_stat(&s))
        else {
            continue;
        };
        let sched = std::fs::read_to_string(p.join("schedstat")).unwrap_or_default();
        let mut f = sched.split_whitespace().map(|v| v.parse::<u64>().ok());
        let oncpu_ns = f.next().flatten();
        let run_delay_ns = f.next().flatten();
        out.push(TaskTimes {
            tid,
            comm,
            utime_ticks: ut,
            stime_ticks: st,
            oncpu_ns,
            run_delay_ns,
        });
    }
    out
}

/// Is this task one of the kernel's io_uring helpers serving the process?
pub fn is_helper(comm: &str) -> bool {
    comm.starts_with("iou-sqp-") || comm.starts_with("iou-wrk-")
}

/// CPU used by one helper task during the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HelperCpu {
    pub tid: i32,
    pub comm: String,
    /// utime/stime deltas in seconds (clock-tick resolution, usually 10 ms).
    pub user_s: f64,
    pub sys_s: f64,
    /// Exact on-CPU seconds from schedstat, when available.
    pub oncpu_s: Option<f64>,
}

/// Helper-task deltas between two task snapshots. A helper born during the run counts from zero.
pub fn helper_deltas(before: &[TaskTimes], after: &[TaskTimes]) -> Vec<HelperCpu> {
    task_deltas(before, after, is_helper)
}

/// CPU deltas of the tasks whose name `keep` accepts (a task born during the run counts from zero).
pub fn task_deltas(
    before: &[TaskTimes],
    after: &[TaskTimes],
    keep: impl Fn(&str) -> bool,
) -> Vec<HelperCpu> {
    let hz = sys::clock_ticks_per_sec() as f64;
    let prev: BTreeMap<i32, &TaskTimes> = before.iter().map(|t| (t.tid, t)).collect();
    let mut out = Vec::new();
    for t in after.iter().filter(|t| keep(&t.comm)) {
        let zero = TaskTimes::default();
        let p = prev.get(&t.tid).copied().unwrap_or(&zero);
        out.push(HelperCpu {
            tid: t.tid,
            comm: t.comm.clone(),
            user_s: t.utime_ticks.saturating_sub(p.utime_ticks) as f64 / hz,
            sys_s: t.stime_ticks.saturating_sub(p.stime_ticks) as f64 / hz,
            oncpu_s: t
                .oncpu_ns
                .map(|n| n.saturating_sub(p.oncpu_ns.unwrap_or(0)) as f64 * 1e-9),
        });
    }
    out
}

/// Runqueue waiting of all tasks present in both snapshots (and new ones from zero), in seconds.
pub fn run_delay_delta_s(before: &[TaskTimes], after: &[TaskTimes]) -> Option<f64> {
    // No task's schedstat was read (a kernel without CONFIG_SCHED_INFO): nothing was measured.
    after.iter().find_map(|t| t.run_delay_ns)?;
    let prev: BTreeMap<i32, &TaskTimes> = before.iter().map(|t| (t.tid, t)).collect();
    let ns: u64 = after
        .iter()
        .map(|t| {
            let b = prev.get(&t.tid).and_then(|p| p.run_delay_ns).unwrap_or(0);
            t.run_delay_ns.unwrap_or(0).saturating_sub(b)
        })
        .sum();
    Some(ns as f64 * 1e-9)
}

/// Steal time between two [`per_cpu_times`] snapshots: the hypervisor running something else on our
/// virtual CPUs (the eighth value of each `cpuN` line of /proc/stat).
pub struct Steal<'a> {
    pub before: &'a [CpuTicks],
    pub after: &'a [CpuTicks],
}

impl Steal<'_> {
    /// Seconds stolen from CPU `c`.
    pub fn on(&self, c: usize) -> f64 {
        let tick = 1.0 / sys::clock_ticks_per_sec() as f64;
        let at = |v: &[CpuTicks]| v.get(c).map_or(0, |t| t.steal);
        at(self.after).saturating_sub(at(self.before)) as f64 * tick
    }

    /// Seconds stolen from all CPUs.
    pub fn all(&self) -> f64 {
        (0..self.after.len())
            .map(|c| self.on(c))
            .fold(0.0, |a, b| a + b)
    }

    /// A note for the reader when the steal is worth mentioning (over 5% of `wall_s`, and 20 ms).
    pub fn note(&self, wall_s: f64) -> Option<String> {
        let s = self.all();
        (s > 0.05 * wall_s.max(1e-9) && s >= 0.02).then(|| {
            format!(
                "the hypervisor stole {s:.2} s of CPU during this {wall_s:.2} s run (steal time): timings include it and CPU figures do not"
            )
        })
    }
}

/// One CPU's times from its `cpuN` line of /proc/stat, in USER_HZ ticks (100 a second): the whole
/// machine's, every process and kernel thread (kworkers) and interrupt included.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTicks {
    /// Ticks in the kernel: system time, hard and soft interrupts.
    pub fn kernel(&self) -> u64 {
        self.system + self.irq + self.softirq
    }

    /// Every tick the CPU counted.
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    pub fn minus(&self, o: &CpuTicks) -> CpuTicks {
        CpuTicks {
            user: self.user.saturating_sub(o.user),
            nice: self.nice.saturating_sub(o.nice),
            system: self.system.saturating_sub(o.system),
            idle: self.idle.saturating_sub(o.idle),
            iowait: self.iowait.saturating_sub(o.iowait),
            irq: self.irq.saturating_sub(o.irq),
            softirq: self.softirq.saturating_sub(o.softirq),
            steal: self.steal.saturating_sub(o.steal),
        }
    }
}

/// The `cpuN` lines of /proc/stat text, indexed by N (a CPU missing from the text is all zeros).
pub fn parse_cpu_lines(text: &str) -> Vec<CpuTicks> {
    let mut v = Vec::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(name) = f.next() else { continue };
        let Some(n) = name
            .strip_prefix("cpu")
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let x: Vec<u64> = f.take(8).map(|x| x.parse().unwrap_or(0)).collect();
        let at = |i: usize| x.get(i).copied().unwrap_or(0);
        if v.len() <= n {
            v.resize(n + 1, CpuTicks::default());
        }
        v[n] = CpuTicks {
            user: at(0),
            nice: at(1),
            system: at(2),
            idle: at(3),
            iowait: at(4),
            irq: at(5),
            softirq: at(6),
            steal: at(7),
        };
    }
    v
}

/// Every CPU's times now (/proc/stat). Empty where /proc/stat is unreadable.
pub fn per_cpu_times() -> Vec<CpuTicks> {
    std::fs::read_to_string("/proc/stat")
        .map(|t| parse_cpu_lines(&t))
        .unwrap_or_default()
}

/// [`per_cpu_times`], under the name of the days when only the steal was kept.
pub fn steal_per_cpu() -> Vec<CpuTicks> {
    per_cpu_times()
}

/// The busiest CPU counted fewer ticks than this over the run: its kernel share ([`SystemCpu`]) is rough
/// (marked * in a table, compared nowhere).
pub const FEW_TICKS: f64 = 10.0;

/// The kernel's share of every CPU over a span, system-wide (/proc/stat): what the storage paper's dstat
/// showed as each core's "sys" (its Figure 3 plots the busier of two cores), kworkers, interrupts and
/// other processes included, where the process's own system time leaves them out.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SystemCpu {
    /// Per CPU: ticks in the kernel (system, irq, softirq) over all its ticks of the span.
    pub kernel_share: Vec<f64>,
    /// Per CPU: ticks in interrupts (irq, softirq) over all its ticks.
    pub irq_share: Vec<f64>,
    /// The CPU with the largest kernel share (the paper's "busier core"), and that share.
    pub busiest_cpu: usize,
    pub busiest_kernel_share: f64,
    /// All CPUs together: kernel ticks over all ticks.
    pub kernel_share_all: f64,
    /// Ticks the busiest CPU counted over the span (USER_HZ, 100 a second): with a few, every share is
    /// mostly rounding.
    pub ticks: u64,
}

impl SystemCpu {
    /// The shares between two [`per_cpu_times`] snapshots; None when there is nothing to divide by.
    pub fn between(before: &[CpuTicks], after: &[CpuTicks]) -> Option<SystemCpu> {
        let d: Vec<CpuTicks> = after
            .iter()
            .enumerate()
            .map(|(i, a)| a.minus(&before.get(i).copied().unwrap_or_default()))
            .collect();
        let share = |x: u64, t: u64| if t > 0 { x as f64 / t as f64 } else { 0.0 };
        let kernel_share: Vec<f64> = d.iter().map(|t| share(t.kernel(), t.total())).collect();
        let (busiest_cpu, busiest_kernel_share) = kernel_share
            .iter()
            .copied()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(&b.1))?;
        let all: u64 = d.iter().map(CpuTicks::total).sum();
        (all > 0).then(|| SystemCpu {
            irq_share: d
                .iter()
                .map(|t| share(t.irq + t.softirq, t.total()))
                .collect(),
            kernel_share_all: share(d.iter().map(CpuTicks::kernel).sum(), all),
            ticks: d[busiest_cpu].total(),
            kernel_share,
            busiest_cpu,
            busiest_kernel_share,
        })
    }
}

/// The kernel's per-process I/O accounting (/proc/self/io).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct ProcIo {
    /// Bytes passed to read-family syscalls (read, pread, readv, preadv, sendfile ...).
    pub rchar: u64,
    /// Bytes passed to write-family syscalls.
    pub wchar: u64,
    /// Read-family syscalls.
    pub syscr: u64,
    /// Write-family syscalls.
    pub syscw: u64,
    /// Bytes the storage layer fetched for the process.
    pub read_bytes: u64,
    /// Bytes the process caused to be sent to the storage layer (dirtied page cache included).
    pub write_bytes: u64,
}

impl ProcIo {
    pub fn parse(text: &str) -> Option<ProcIo> {
        let mut io = ProcIo::default();
        for line in text.lines() {
            let (k, v) = line.split_once(':')?;
            let v: u64 = v.trim().parse().ok()?;
            match k {
                "rchar" => io.rchar = v,
                "wchar" => io.wchar = v,
                "syscr" => io.syscr = v,
                "syscw" => io.syscw = v,
                "read_bytes" => io.read_bytes = v,
                "write_bytes" => io.write_bytes = v,
                _ => {}
            }
        }
        Some(io)
    }

    /// Reads /proc/self/io with exactly one read(2) and returns the counters and the bytes that read
    /// returned (it is itself accounted in the next snapshot: one syscr and that many rchar).
    pub fn read_self() -> Option<(ProcIo, u64)> {
        let fd = sys::open(std::path::Path::new("/proc/self/io"), libc::O_RDONLY, 0).ok()?;
        let mut buf = [0u8; 1024];
        let n = sys::read(std::os::fd::AsRawFd::as_raw_fd(&fd), &mut buf).ok()?;
        let text = std::str::from_utf8(&buf[..n]).ok()?;
        ProcIo::parse(text).map(|io| (io, n as u64))
    }

    /// `after - before`, less the one read that produced `before` (`before_read_len` bytes).
    pub fn delta(before: &ProcIo, before_read_len: u64, after: &ProcIo) -> ProcIo {
        ProcIo {
            rchar: after.rchar.saturating_sub(before.rchar + before_read_len),
            wchar: after.wchar.saturating_sub(before.wchar),
            syscr: after.syscr.saturating_sub(before.syscr + 1),
            syscw: after.syscw.saturating_sub(before.syscw),
            read_bytes: after.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: after.write_bytes.saturating_sub(before.write_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_spaces_and_parens_in_comm() {
        let s = "123 (iou-wrk-1 (x)) S 1 2 3 4 5 6 7 8 9 10 77 88 0 0 20 0 1 0";
        let (comm, ut, st) = parse_stat(s).unwrap();
        assert_eq!(comm, "iou-wrk-1 (x)");
        assert_eq!((ut, st), (77, 88));
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn helper_deltas_only_count_helpers_and_new_ones_from_zero() {
        let hz = sys::clock_ticks_per_sec() as f64;
        let t = |tid, comm: &str, u, s| TaskTimes {
            tid,
            comm: comm.into(),
            utime_ticks: u,
            stime_ticks: s,
            oncpu_ns: Some(u * 1000),
            run_delay_ns: Some(s),
        };
        let before = vec![t(1, "iolab", 5, 5), t(2, "iou-sqp-1", 1, 10)];
        let after = vec![
            t(1, "iolab", 50, 50),
            t(2, "iou-sqp-1", 1, 30),
            t(3, "iou-wrk-1", 0, 4),
        ];
        let d = helper_deltas(&before, &after);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].sys_s, 20.0 / hz);
        assert_eq!(d[1].sys_s, 4.0 / hz);
        // run delay: tid 1 5->50, tid 2 10->30, tid 3 new 4 => 45 + 20 + 4 ns.
        assert!((run_delay_delta_s(&before, &after).unwrap() - 69e-9).abs() < 1e-15);
        // A kernel without schedstat gave no task's run delay: not measured, not 0 s.
        let unread: Vec<TaskTimes> = after
            .into_iter()
            .map(|t| TaskTimes {
                run_delay_ns: None,
                ..t
            })
            .collect();
        assert_eq!(run_delay_delta_s(&before, &unread), None);
    }

    #[test]
    fn steal_is_read_per_cpu() {
        let v = steal_per_cpu();
        assert_eq!(
            v.len(),
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(v.len())
                .max(v.len())
        );
    }

    #[test]
    fn the_busier_cores_kernel_share_counts_interrupts() {
        let before = parse_cpu_lines(
            "cpu  9 9 9 9 9 9 9 9 0 0\ncpu0 100 0 50 800 0 10 10 0 0 0\ncpu1 100 0 20 850 0 0 0 0 0 0\n",
        );
        // cpu0: 100 ticks, 60 system + 10 irq + 10 softirq; cpu1: 100 ticks, 10 system.
        let after = parse_cpu_lines(
            "cpu0 110 0 110 810 0 20 20 0 0 0\ncpu1 150 0 30 890 0 0 0 0 0 0\nintr 1 2 3\n",
        );
        let s = SystemCpu::between(&before, &after).unwrap();
        assert_eq!(s.busiest_cpu, 0);
        assert!((s.busiest_kernel_share - 0.8).abs() < 1e-9, "{s:?}");
        assert!((s.irq_share[0] - 0.2).abs() < 1e-9);
        assert!((s.kernel_share[1] - 0.1).abs() < 1e-9);
        assert!((s.kernel_share_all - 0.45).abs() < 1e-9);
        assert_eq!(s.ticks, 100);
        // Nothing counted: no shares.
        assert!(SystemCpu::between(&after, &after).is_none());
        assert!(SystemCpu::between(&[], &[]).is_none());
        // The steal is the eighth value.
        let st = Steal {
            before: &parse_cpu_lines("cpu0 0 0 0 0 0 0 0 5\n"),
            after: &parse_cpu_lines("cpu0 0 0 0 0 0 0 0 9\n"),
        };
        assert!((st.on(0) - 4.0 / sys::clock_ticks_per_sec() as f64).abs() < 1e-12);
    }

    #[test]
    fn proc_io_counts_our_own_writes() {
        let (a, n) = ProcIo::read_self().expect("/proc/self/io is readable");
        let f = sys::open(std::path::Path::new("/dev/null"), libc::O_WRONLY, 0).unwrap();
        for _ in 0..10 {
            sys::write(std::os::fd::AsRawFd::as_raw_fd(&f), &[0u8; 7]).unwrap();
        }
        let (b, _) = ProcIo::read_self().unwrap();
        let d = ProcIo::delta(&a, n, &b);
        // Other test threads may write concurrently, so these are lower bounds.
        assert!(d.syscw >= 10 && d.wchar >= 70, "{d:?}");
    }
}
