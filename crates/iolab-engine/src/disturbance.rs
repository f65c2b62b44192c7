//! Whether something else took the CPU from a run while it was timed: its tasks waiting on a runqueue
//! (schedstat's run delay), the hypervisor's steal, the machine's CPU pressure (PSI) and how busy the
//! other processes kept the CPUs. A run whose tasks waited for a CPU for more than [`RUNQUEUE_LIMIT`] of
//! its timed span, or lost more than [`STEAL_LIMIT`] of it to the hypervisor, is *disturbed*: its time
//! is partly someone else's, and no sentence calls it the cost of anything. Where two or more of its own
//! tasks were busy they may have waited for each other, which is the method's own cost: their wait then
//! counts only where other work held at least [`OTHERS_LIMIT`] of the CPUs.

use crate::measure::cpu::{CpuTicks, TaskTimes};
use serde::{Deserialize, Serialize};

/// The share of the timed span a run's tasks may wait on a runqueue and still be quiet.
pub const RUNQUEUE_LIMIT: f64 = 0.05;
/// The share of its CPUs' time the hypervisor may steal from a run that is still quiet.
pub const STEAL_LIMIT: f64 = 0.05;
/// Steal below this many seconds is not told apart from the 10 ms ticks /proc/stat counts it in.
const STEAL_MIN_S: f64 = 0.02;
/// Where the kernel has no schedstat: the CPU pressure that makes a run disturbed instead.
const PSI_LIMIT: f64 = 0.10;
/// With two or more of iolab's tasks busy, the others' share of all CPUs beyond which a wait is theirs.
pub const OTHERS_LIMIT: f64 = 0.25;

/// What the machine did to one run, as shares of its timed span's wall time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Disturbance {
    /// Time the process's tasks (iolab's threads; not the kernel's io_uring helpers, which iolab itself
    /// keeps busy) were runnable but waited for a CPU, summed over them, over the span's wall time; null
    /// where the kernel keeps no run delay (CONFIG_SCHED_INFO).
    pub runqueue_share: Option<f64>,
    /// Steal on the workers' CPUs (on all CPUs where they moved) over as many CPUs' wall time; 0 where
    /// under 2 ticks (20 ms) were stolen, which /proc/stat cannot tell from rounding.
    pub steal_share: f64,
    /// /proc/pressure/cpu "some" over the span: the share of it in which any task on the machine waited
    /// for a CPU (iolab's own included); null where the kernel has no PSI.
    pub psi_some: Option<f64>,
    /// CPU time of everything but this process (other processes, kernel threads, interrupts) over all
    /// CPUs' wall time (/proc/stat, 10 ms ticks: rounding dominates a span of a few ticks).
    #[serde(default)]
    pub others_busy_share: Option<f64>,
    /// How many of the process's tasks were on a CPU over a tenth of the span. With two or more, its
    /// threads may have waited for each other, and their wait counts as a disturbance only where
    /// `others_busy_share` reached [`OTHERS_LIMIT`].
    #[serde(default)]
    pub own_busy_tasks: u32,
    /// "disturbed" or "quiet".
    pub verdict: String,
    /// What made it disturbed, with the figure: "its threads waited for a CPU 38% of the time".
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
}

/// The span's disturbance: `own_cpu_s` is the CPU time of the process (and of a client process it ran
/// the workload in), `steal` the steal in seconds over that many CPUs, `busy_apart` the busy tasks of
/// iolab's outside the process (an offload client: 1).
pub fn of(
    wall_s: f64,
    before: &Ends,
    after: &Ends,
    own_cpu_s: f64,
    steal: (f64, u32),
    busy_apart: u32,
) -> Disturbance {
    let wall = wall_s.max(1e-9);
    let runqueue_share = run_delay_s(before.tasks, after.tasks).map(|s| s / wall);
    let others_busy_share = others_busy(before.cpus, after.cpus, own_cpu_s, wall);
    // With two or more of its tasks busy, iolab's threads may have waited for each other (the scheduler
    // often puts a pipe's writer and reader on one CPU): the wait counts only where the others' CPU
    // time (coarse: /proc/stat's ticks) shows someone else was there.
    let own_busy = busy_tasks(before.tasks, after.tasks, wall) + busy_apart;
    let external = match runqueue_share {
        Some(q) if own_busy <= 1 || others_busy_share.is_some_and(|b| b >= OTHERS_LIMIT) => Some(q),
        Some(_) => Some(0.0),
        None => None,
    };
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
    let why = if let Some(q) = external.filter(|&q| q > RUNQUEUE_LIMIT) {
        Some(format!(
            "its threads waited for a CPU {:.0}% of the time",
            100.0 * q
        ))
    } else if steal_share > STEAL_LIMIT {
        Some(format!(
            "the hypervisor took {:.0}% of its CPUs",
            100.0 * steal_share
        ))
    } else if runqueue_share.is_none() {
        psi_some.filter(|&p| p > PSI_LIMIT).map(|p| {
            format!(
                "tasks waited for a CPU {:.0}% of the time (CPU pressure)",
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
        others_busy_share,
        own_busy_tasks: own_busy,
        verdict: if why.is_some() { "disturbed" } else { "quiet" }.into(),
        why,
    }
}

/// How many of the process's tasks (its threads and the kernel's io_uring helpers) were on a CPU for
/// more than a tenth of the span.
fn busy_tasks(before: &[TaskTimes], after: &[TaskTimes], wall: f64) -> u32 {
    after
        .iter()
        .filter(|a| {
            let b = before
                .iter()
                .find(|b| b.tid == a.tid)
                .and_then(|b| b.oncpu_ns);
            let ran = a.oncpu_ns.unwrap_or(0).saturating_sub(b.unwrap_or(0));
            ran as f64 * 1e-9 > 0.1 * wall
        })
        .count() as u32
}

/// Run delay of the process's own threads between two samples, seconds; the io_uring helpers left out.
fn run_delay_s(before: &[TaskTimes], after: &[TaskTimes]) -> Option<f64> {
    let mine = |t: &&TaskTimes| !t.comm.starts_with("iou-");
    let b: Vec<TaskTimes> = before.iter().filter(mine).cloned().collect();
    let a: Vec<TaskTimes> = after.iter().filter(mine).cloned().collect();
    crate::measure::cpu::run_delay_delta_s(&b, &a)
}

/// The busy share of all CPUs that was not this process's.
fn others_busy(before: &[CpuTicks], after: &[CpuTicks], own_cpu_s: f64, wall: f64) -> Option<f64> {
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
    let room = wall * after.len() as f64;
    Some(((busy as f64 * tick - own_cpu_s) / room).clamp(0.0, 1.0))
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

    fn ends<'a>(tasks: &'a [TaskTimes], psi: Option<u64>) -> Ends<'a> {
        Ends {
            tasks,
            cpus: &[],
            psi_some_us: psi,
        }
    }

    #[test]
    fn a_wait_beyond_the_limit_is_disturbed_and_says_how_much() {
        let b = [task(1, "iolab", 0), task(2, "iou-sqp-1", 0)];
        let a = [task(1, "iolab", 380), task(2, "iou-sqp-1", 900)];
        let d = of(
            1.0,
            &ends(&b, Some(0)),
            &ends(&a, Some(400_000)),
            0.5,
            (0.0, 1),
            0,
        );
        assert!(d.disturbed());
        assert!((d.runqueue_share.unwrap() - 0.38).abs() < 1e-9, "{d:?}");
        assert!((d.psi_some.unwrap() - 0.4).abs() < 1e-9);
        assert_eq!(
            d.why.as_deref(),
            Some("its threads waited for a CPU 38% of the time")
        );
        // The helper's wait is iolab's own doing, not the machine's.
        let a = [task(1, "iolab", 10), task(2, "iou-sqp-1", 900)];
        let d = of(1.0, &ends(&b, None), &ends(&a, None), 0.5, (0.0, 1), 0);
        assert!(!d.disturbed(), "{d:?}");
        assert_eq!(d.psi_some, None);
    }

    /// A pipe's writer and reader, both busy, waited 20% of the time: for each other on an idle machine
    /// (quiet), for someone else where the others kept half of the CPUs busy (disturbed).
    #[test]
    fn two_busy_threads_of_its_own_are_disturbed_only_beside_others_work() {
        let busy = |tid, delay_ms| TaskTimes {
            oncpu_ns: Some(800_000_000),
            ..task(tid, "iolab", delay_ms)
        };
        let (b, a) = (
            [task(1, "iolab", 0), task(2, "iolab", 0)],
            [busy(1, 100), busy(2, 100)],
        );
        let tick = iolab_sys::clock_ticks_per_sec();
        let cpu = |busy_s: f64| CpuTicks {
            user: (busy_s * tick as f64) as u64,
            idle: ((1.0 - busy_s) * tick as f64) as u64,
            ..CpuTicks::default()
        };
        let zero = [CpuTicks::default(), CpuTicks::default()];
        let idle = [cpu(0.8), cpu(0.8)];
        let loaded = [cpu(1.0), cpu(1.0)];
        let at = |tasks, cpus| Ends {
            tasks,
            cpus,
            psi_some_us: None,
        };
        let d = of(1.0, &at(&b, &zero), &at(&a, &idle), 1.6, (0.0, 2), 0);
        assert_eq!(
            (d.own_busy_tasks, d.verdict.as_str()),
            (2, "quiet"),
            "{d:?}"
        );
        assert!((d.runqueue_share.unwrap() - 0.2).abs() < 1e-9);
        let d = of(1.0, &at(&b, &zero), &at(&a, &loaded), 1.0, (0.0, 2), 0);
        assert!(
            d.disturbed() && d.others_busy_share.unwrap() >= OTHERS_LIMIT,
            "{d:?}"
        );
    }

    #[test]
    fn steal_counts_only_beyond_rounding() {
        let t = [task(1, "iolab", 0)];
        let d = of(0.1, &ends(&t, None), &ends(&t, None), 0.1, (0.01, 1), 0);
        assert_eq!((d.steal_share, d.verdict.as_str()), (0.0, "quiet"));
        let d = of(0.1, &ends(&t, None), &ends(&t, None), 0.1, (0.03, 1), 0);
        assert!(d.disturbed() && (d.steal_share - 0.3).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn without_schedstat_the_pressure_decides() {
        let mut t = task(1, "iolab", 0);
        t.run_delay_ns = None;
        let t = [t];
        let d = of(
            1.0,
            &ends(&t, Some(0)),
            &ends(&t, Some(200_000)),
            0.5,
            (0.0, 1),
            0,
        );
        assert_eq!(d.runqueue_share, None);
        assert!(d.disturbed(), "{d:?}");
    }

    #[test]
    fn psi_some_is_read_from_its_line() {
        let text = "some avg10=5.83 avg60=4.33 avg300=8.26 total=1496270840\n\
                    full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_psi_some(text), Some(1_496_270_840));
        assert_eq!(parse_psi_some("full total=3\n"), None);
    }
}
