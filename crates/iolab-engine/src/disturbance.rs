//! Whether something else took the CPU from a run while it was timed: its tasks waiting on a runqueue
//! (schedstat's run delay), other work's CPU time over the span, the hypervisor's steal, and the
//! machine's CPU pressure (PSI). A run is *disturbed* where its threads waited for a CPU more than
//! [`RUNQUEUE_LIMIT`] of its timed span while other work ran at least [`OTHERS_LIMIT`] of a CPU, or
//! where the hypervisor stole more than [`STEAL_LIMIT`] of it: its time is then partly someone else's,
//! and no sentence calls it the cost of anything. A wait with no other work beside it is the run's own
//! (its threads waiting for each other, a virtual CPU waking from halt) and leaves it quiet.

use crate::measure::cpu::{CpuTicks, TaskTimes};
use serde::{Deserialize, Serialize};

/// The share of the timed span a run's tasks may wait on a runqueue and still be quiet.
pub const RUNQUEUE_LIMIT: f64 = 0.05;
/// The CPU time other work must take over the span, in CPUs (0.25: a quarter of one CPU's time), before
/// a wait counts as theirs: kernel threads serving the run's own I/O take a few percent.
pub const OTHERS_LIMIT: f64 = 0.25;
/// The share of its CPUs' time the hypervisor may steal from a run that is still quiet.
pub const STEAL_LIMIT: f64 = 0.05;
/// Steal below this many seconds is not told apart from the 10 ms ticks /proc/stat counts it in.
const STEAL_MIN_S: f64 = 0.02;
/// Where the kernel has no schedstat: the CPU pressure that makes a run disturbed instead.
const PSI_LIMIT: f64 = 0.10;

/// What the machine did to one run, as shares of its timed span's wall time (of the span between the
/// snapshots around it, where the threads' wake-up and join make that longer).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Disturbance {
    /// Time the process's tasks (iolab's threads; not the kernel's io_uring helpers, which iolab itself
    /// keeps busy) were runnable but waited for a CPU inside the timed span, summed over them, over the
    /// timed span's wall time: their run delay between the snapshots less all the time outside the timed
    /// span (each task could have waited all of it), so what is left waited inside; null where the kernel
    /// keeps no run delay (CONFIG_SCHED_INFO), or the span of several threads is too short to hold it
    /// (under `units::MIN_CPU_SPAN_S`: the delay then is mostly their start); at most the tasks.
    pub runqueue_share: Option<f64>,
    /// Steal on the workers' CPUs (on all CPUs where they moved) over as many CPUs' wall time; 0 where
    /// under 2 ticks (20 ms) were stolen, which /proc/stat cannot tell from rounding.
    pub steal_share: f64,
    /// /proc/pressure/cpu "some" over the span: the share of it in which any task on the machine waited
    /// for a CPU (iolab's own included); null where the kernel has no PSI.
    pub psi_some: Option<f64>,
    /// CPU time of everything but iolab (other processes, kernel threads) over the span's wall time, in
    /// CPUs (1.0: one CPU's time, at most the machine's CPUs); from the root cgroup's CPU time
    /// (cpuacct.usage, or cpu.stat's usage_usec), else /proc/stat's 10 ms ticks; null where none could be
    /// read. The kernel accounts a running task's time at ticks and switches, so over a span of a few
    /// ticks (a few ms) this is rough.
    #[serde(default)]
    pub others_cpus: Option<f64>,
    /// "disturbed" or "quiet".
    pub verdict: String,
    /// What made it disturbed, with the figures: "its threads waited for a CPU 38% of the time while
    /// other work ran 0.9 CPUs".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Disturbance {
    pub fn disturbed(&self) -> bool {
        self.verdict == "disturbed"
    }
}

/// The figures of one end of a timed span that [`of`] reads.
pub struct Ends<'a> {
    pub tasks: &'a [TaskTimes],
    pub cpus: &'a [CpuTicks],
    pub psi_some_us: Option<u64>,
    /// CPU time of every task on the machine, ns ([`system_cpu_ns`]).
    pub system_cpu_ns: Option<u64>,
}

/// One end of a span timed outside iolab's runner (the decimal-lines ways), with what [`of`] reads.
pub struct Snapshot {
    ru: crate::measure::cpu::Rusage,
    tasks: Vec<TaskTimes>,
    cpus: Vec<CpuTicks>,
    psi_some_us: Option<u64>,
    system_cpu_ns: Option<u64>,
}

impl Snapshot {
    pub fn take() -> Snapshot {
        Snapshot {
            tasks: crate::measure::cpu::read_tasks(),
            cpus: crate::measure::cpu::steal_per_cpu(),
            psi_some_us: psi_cpu_some_us(),
            system_cpu_ns: system_cpu_ns(),
            ru: crate::measure::cpu::Rusage::process(),
        }
    }

    fn ends(&self) -> Ends<'_> {
        Ends {
            tasks: &self.tasks,
            cpus: &self.cpus,
            psi_some_us: self.psi_some_us,
            system_cpu_ns: self.system_cpu_ns,
        }
    }

    /// The disturbance of the `wall_s` seconds between `self` and `after`: the process's own CPU time
    /// from getrusage, the steal of every CPU (/proc/stat's ticks, 100 a second).
    pub fn until(&self, after: &Snapshot, wall_s: f64) -> Disturbance {
        let own = crate::measure::cpu::RusageDelta::between(&self.ru, &after.ru);
        let ticks: u64 = self
            .cpus
            .iter()
            .zip(&after.cpus)
            .map(|(b, a)| a.steal.saturating_sub(b.steal))
            .sum();
        let steal = (ticks as f64 / 100.0, self.cpus.len().max(1) as u32);
        of(
            (wall_s, wall_s),
            &self.ends(),
            &after.ends(),
            own.user_s + own.sys_s,
            steal,
        )
    }
}

/// The span's disturbance: `spans` are the timed span's wall time and that of the span between the
/// snapshots around it (at least as long: the figures are read, and threads woken and joined, outside
/// the timed one); `own_cpu_s` is the CPU time of the process (and of a client process it ran the
/// workload in), `steal` the steal in seconds over that many CPUs.
pub fn of(
    spans: (f64, f64),
    before: &Ends,
    after: &Ends,
    own_cpu_s: f64,
    steal: (f64, u32),
) -> Disturbance {
    let (timed, wall_s) = (spans.0.max(1e-9), spans.1.max(spans.0));
    let wall = wall_s.max(1e-9);
    // The threads' run delay is read before they start and after they are joined: over a span much
    // longer than that it is the span's, over a short one it is mostly their start (a 12 us run of two
    // threads "waited 4,529% of the time"). Where it cannot be the span's it is not put as a share. Of
    // the rest, only what cannot have been outside the timed span counts (each task waited at most all
    // of the time outside it), as a share of the timed span: so a wait while the figures were read is
    // never called the run's.
    let tasks = after
        .tasks
        .iter()
        .filter(|t| !t.comm.starts_with("iou-"))
        .count();
    let started = tasks > 1 && wall_s < crate::units::MIN_CPU_SPAN_S;
    let outside = (wall_s - timed).max(0.0) * tasks.max(1) as f64;
    let runqueue_share = run_delay_s(before.tasks, after.tasks)
        .filter(|_| !started)
        .map(|s| ((s - outside).max(0.0) / timed).min(tasks.max(1) as f64));
    // The kernel adds a running task's time when it next accounts it (a tick, a switch): over a span of a
    // few ticks the others' time can come out beyond every CPU, and is held to the machine's CPUs.
    let all_cpus = if after.cpus.is_empty() {
        f64::INFINITY
    } else {
        after.cpus.len() as f64
    };
    let others_cpus = match (before.system_cpu_ns, after.system_cpu_ns) {
        (Some(b), Some(a)) => Some((a.saturating_sub(b) as f64 * 1e-9 - own_cpu_s) / wall),
        _ => others_by_ticks(before.cpus, after.cpus, own_cpu_s, wall),
    }
    // What iolab itself ran is not the others': with it they hold at most every CPU.
    .map(|o| o.clamp(0.0, (all_cpus - own_cpu_s / wall).max(0.0)));
    let (steal_s, steal_cpus) = steal;
    let steal_share = if steal_s >= STEAL_MIN_S {
        steal_s / (wall * f64::from(steal_cpus.max(1)))
    } else {
        0.0
    };
    let psi_some = match (before.psi_some_us, after.psi_some_us) {
        (Some(b), Some(a)) => Some((a.saturating_sub(b) as f64 * 1e-6 / wall).min(1.0)),
        _ => None,
    };
    let others_ran = others_cpus.is_none_or(|o| o >= OTHERS_LIMIT);
    let beside = others_cpus
        .map(|o| format!(" while other work ran {o:.2} CPUs"))
        .unwrap_or_default();
    let why = if let Some(q) = runqueue_share.filter(|&q| q > RUNQUEUE_LIMIT && others_ran) {
        // Summed over its tasks: past 1, more than one waited at once (never "130% of the time").
        Some(match q > 1.0 {
            false => format!(
                "its threads waited for a CPU {:.0}% of the time{beside}",
                100.0 * q
            ),
            true => format!(
                "its threads waited for a CPU {q:.2} times the timed span in all (summed over its \
                 tasks){beside}"
            ),
        })
    } else if steal_share > STEAL_LIMIT {
        Some(format!(
            "the hypervisor took {:.0}% of its CPUs",
            100.0 * steal_share
        ))
    } else if runqueue_share.is_none() && !started {
        psi_some.filter(|&p| p > PSI_LIMIT && others_ran).map(|p| {
            format!(
                "tasks waited for a CPU {:.0}% of the time (CPU pressure){beside}",
                100.0 * p
            )
        })
    } else {
        None
    };
    Disturbance {
        runqueue_share,
        steal_share,
        psi_some,
        others_cpus,
        verdict: if why.is_some() { "disturbed" } else { "quiet" }.into(),
        why,
    }
}

/// Run delay of the process's own threads between two samples, seconds; the io_uring helpers left out.
fn run_delay_s(before: &[TaskTimes], after: &[TaskTimes]) -> Option<f64> {
    let mine = |t: &&TaskTimes| !t.comm.starts_with("iou-");
    let b: Vec<TaskTimes> = before.iter().filter(mine).cloned().collect();
    let a: Vec<TaskTimes> = after.iter().filter(mine).cloned().collect();
    crate::measure::cpu::run_delay_delta_s(&b, &a)
}

/// Other work's CPU from /proc/stat's ticks (busy ticks of all CPUs less iolab's own CPU), in CPUs.
fn others_by_ticks(
    before: &[CpuTicks],
    after: &[CpuTicks],
    own_cpu_s: f64,
    wall: f64,
) -> Option<f64> {
    if after.is_empty() || before.len() != after.len() {
        return None;
    }
    let tick = 1.0 / iolab_sys::clock_ticks_per_sec() as f64;
    let busy: u64 = after
        .iter()
        .zip(before)
        .map(|(a, b)| {
            let d = a.minus(b);
            d.total() - d.idle - d.iowait - d.steal
        })
        .sum();
    Some(((busy as f64 * tick - own_cpu_s) / wall).max(0.0))
}

/// CPU time of every task on the machine, ns: the root cgroup's (cgroup v1 cpuacct.usage, counted by
/// the scheduler to the ns; or cgroup v2's cpu.stat usage_usec).
pub fn system_cpu_ns() -> Option<u64> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    if let Some(ns) =
        read("/sys/fs/cgroup/cpuacct/cpuacct.usage").and_then(|t| t.trim().parse().ok())
    {
        return Some(ns);
    }
    ["/sys/fs/cgroup/cpu.stat", "/sys/fs/cgroup/unified/cpu.stat"]
        .iter()
        .find_map(|p| read(p).as_deref().and_then(usage_usec))
        .map(|us| us * 1000)
}

fn usage_usec(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("usage_usec "))?
        .trim()
        .parse()
        .ok()
}

/// /proc/pressure/cpu's "some" total, microseconds; None where the kernel has no PSI.
pub fn psi_cpu_some_us() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/pressure/cpu").ok()?;
    parse_psi_some(&text)
}

fn parse_psi_some(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(tid: i32, comm: &str, delay_ms: u64) -> TaskTimes {
        TaskTimes {
            tid,
            comm: comm.into(),
            utime_ticks: 0,
            stime_ticks: 0,
            oncpu_ns: Some(0),
            run_delay_ns: Some(delay_ms * 1_000_000),
        }
    }

    /// One end: its tasks, the machine's CPU time in ms, the PSI total in µs.
    fn ends(tasks: &[TaskTimes], cpu_ms: Option<u64>, psi: Option<u64>) -> Ends<'_> {
        Ends {
            tasks,
            cpus: &[],
            psi_some_us: psi,
            system_cpu_ns: cpu_ms.map(|m| m * 1_000_000),
        }
    }

    #[test]
    fn a_wait_beside_other_work_is_disturbed_and_says_how_much() {
        let b = [task(1, "iolab", 0), task(2, "iou-sqp-1", 0)];
        let a = [task(1, "iolab", 380), task(2, "iou-sqp-1", 900)];
        // 1 s: iolab ran 0.5 s, the machine 1.4 s: others 0.9 CPUs.
        let d = of(
            (1.0, 1.0),
            &ends(&b, Some(0), Some(0)),
            &ends(&a, Some(1400), Some(400_000)),
            0.5,
            (0.0, 1),
        );
        assert!(d.disturbed());
        assert!((d.runqueue_share.unwrap() - 0.38).abs() < 1e-9, "{d:?}");
        assert!((d.others_cpus.unwrap() - 0.9).abs() < 1e-9, "{d:?}");
        assert!((d.psi_some.unwrap() - 0.4).abs() < 1e-9);
        assert_eq!(
            d.why.as_deref(),
            Some("its threads waited for a CPU 38% of the time while other work ran 0.90 CPUs")
        );
        // Several tasks waiting at once are summed: said as a total, never "130% of the time".
        let b3 = [task(1, "iolab", 0), task(3, "iolab-w1", 0)];
        let a3 = [task(1, "iolab", 700), task(3, "iolab-w1", 600)];
        let d = of(
            (1.0, 1.0),
            &ends(&b3, Some(0), None),
            &ends(&a3, Some(1400), None),
            0.5,
            (0.0, 1),
        );
        assert_eq!(
            d.why.as_deref(),
            Some("its threads waited for a CPU 1.30 times the timed span in all (summed over its tasks) while other work ran 0.90 CPUs")
        );
        // The helper's wait is iolab's own doing, not the machine's.
        let a = [task(1, "iolab", 10), task(2, "iou-sqp-1", 900)];
        let d = of(
            (1.0, 1.0),
            &ends(&b, Some(0), None),
            &ends(&a, Some(1400), None),
            0.5,
            (0.0, 1),
        );
        assert!(!d.disturbed(), "{d:?}");
        assert_eq!(d.psi_some, None);
    }

    /// Two threads over a 12 µs span waited 0.5 ms to start: no share of the span (it would read 4,000%),
    /// and no verdict from it; over a long span the share is held to the tasks there are.
    #[test]
    fn a_share_is_never_more_than_the_span_holds() {
        let b = [task(1, "iolab", 0), task(2, "iolab", 0)];
        let a = [task(1, "iolab", 0), task(2, "iolab", 1)];
        let d = of(
            (12e-6, 12e-6),
            &ends(&b, Some(0), Some(0)),
            &ends(&a, Some(5), Some(900)),
            0.0,
            (0.0, 2),
        );
        assert_eq!((d.runqueue_share, d.disturbed()), (None, false), "{d:?}");
        let a = [task(1, "iolab", 900), task(2, "iolab", 3000)];
        let d = of(
            (1.0, 1.0),
            &ends(&b, Some(0), None),
            &ends(&a, Some(2000), None),
            0.5,
            (0.0, 2),
        );
        assert_eq!(d.runqueue_share, Some(2.0), "{d:?}");
        assert!(d.disturbed(), "{d:?}");
    }

    /// Eight threads of iolab's waiting for each other (or for a virtual CPU to wake) with nothing else
    /// running: the run's own cost, quiet.
    #[test]
    fn a_wait_with_no_other_work_is_the_runs_own() {
        let b = [task(1, "iolab", 0), task(2, "iolab", 0)];
        let a = [task(1, "iolab", 900), task(2, "iolab", 1000)];
        let d = of(
            (1.0, 1.0),
            &ends(&b, Some(0), None),
            &ends(&a, Some(520), None),
            0.5,
            (0.0, 2),
        );
        assert!(!d.disturbed() && d.runqueue_share.unwrap() > 1.8, "{d:?}");
        assert!(d.others_cpus.unwrap() < OTHERS_LIMIT);
    }

    #[test]
    fn steal_counts_only_beyond_rounding() {
        let t = [task(1, "iolab", 0)];
        let d = of(
            (0.1, 0.1),
            &ends(&t, None, None),
            &ends(&t, None, None),
            0.1,
            (0.01, 1),
        );
        assert_eq!((d.steal_share, d.verdict.as_str()), (0.0, "quiet"));
        let d = of(
            (0.1, 0.1),
            &ends(&t, None, None),
            &ends(&t, None, None),
            0.1,
            (0.03, 1),
        );
        assert!(d.disturbed() && (d.steal_share - 0.3).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn without_schedstat_the_pressure_decides() {
        let mut t = task(1, "iolab", 0);
        t.run_delay_ns = None;
        let t = [t];
        let d = of(
            (1.0, 1.0),
            &ends(&t, Some(0), Some(0)),
            &ends(&t, Some(1500), Some(200_000)),
            0.5,
            (0.0, 1),
        );
        assert_eq!(d.runqueue_share, None);
        assert!(d.disturbed(), "{d:?}");
    }

    #[test]
    fn the_machines_figures_are_read_from_their_lines() {
        let text = "some avg10=5.83 avg60=4.33 avg300=8.26 total=1496270840\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_psi_some(text), Some(1_496_270_840));
        assert_eq!(parse_psi_some("full total=3\n"), None);
        assert_eq!(
            usage_usec("usage_usec 17953329315\nuser_usec 1\n"),
            Some(17_953_329_315)
        );
    }

    /// A single thread that waited 2.3 ms between the snapshots of a 4.5 ms span whose timed part took
    /// 2.08 ms may have waited all of it outside the timed part (while the figures were read): no share,
    /// quiet. One that waited 0.5 s in a 1.1 s span timed for 1.0 s waited at least 0.4 s inside it.
    /// Beside iolab's own CPU the others hold at most what is left of the machine's.
    #[test]
    fn only_a_wait_that_cannot_be_outside_the_timed_span_is_the_runs() {
        let cpus = [CpuTicks::default(); 2];
        let e = |t, cpu_ms: u64| Ends {
            tasks: t,
            cpus: &cpus,
            psi_some_us: None,
            system_cpu_ns: Some(cpu_ms * 1_000_000),
        };
        let (b, a) = ([task(1, "iolab", 0)], [task(1, "iolab", 0)]);
        let mut a_late = a.clone();
        a_late[0].run_delay_ns = Some(2_300_000);
        let d = of(
            (0.00208, 0.0045),
            &e(&b, 0),
            &e(&a_late, 20),
            0.00215,
            (0.0, 1),
        );
        assert_eq!(d.runqueue_share, Some(0.0), "{d:?}");
        assert!(!d.disturbed(), "{d:?}");
        // 20 ms of CPU in 4.5 ms is beyond the machine: held to 2 CPUs less iolab's 0.48.
        let o = d.others_cpus.unwrap();
        assert!((o - (2.0 - 0.00215 / 0.0045)).abs() < 1e-9, "{d:?}");
        let mut a_long = a.clone();
        a_long[0].run_delay_ns = Some(500_000_000);
        let d = of((1.0, 1.1), &e(&b, 0), &e(&a_long, 1600), 0.5, (0.0, 1));
        assert!((d.runqueue_share.unwrap() - 0.4).abs() < 1e-9, "{d:?}");
        assert!(d.disturbed(), "{d:?}");
    }
}
