//! What each entry of `jobs` holds of a run: fio writes one entry per job clone (each of `numjobs`, each
//! of iolab's threads), or with `group_reporting` one for them all. iolab counts each thread's ops, bytes
//! and wall time (`RunResult::per_thread`); the rest (the reads and writes of a mixed run, the CPU time,
//! the context switches) it counts for the whole run, and a clone gets its share of the ops of that.

use iolab_engine::result::RunResult;
use iolab_engine::spec::OpKind;

/// Ops and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moved {
    pub ops: u64,
    pub bytes: u64,
}

/// Which of a run's threads an entry stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// A run of one thread (or one without per-thread figures): the whole run.
    Run,
    /// `group_reporting`: the run's `threads` as one entry.
    Group { threads: usize },
    /// Thread `thread` of `threads`: one of fio's clones.
    Clone { thread: u32, threads: usize },
}

impl Who {
    /// What the entry is, for the `iolab` object.
    pub fn said(self) -> String {
        match self {
            Who::Run => "the run (one thread: fio's one job)".into(),
            Who::Group { threads } => format!(
                "the run's {threads} threads as one entry, as fio's group_reporting: bytes and ops summed, \
                 each direction's runtime the run's, job_runtime the threads' runtimes summed"
            ),
            Who::Clone { thread, threads } => format!(
                "thread {thread} of {threads}: one of fio's job clones (numjobs={threads}), its own ops, \
                 bytes and runtime"
            ),
        }
    }
}

/// One entry's part of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub who: Who,
    pub read: Moved,
    pub write: Moved,
    /// Seconds each direction ran (fio's `runtime`).
    pub runtime_s: f64,
    /// fio's `job_runtime`: the clone's runtime; a group's, its clones' added up.
    pub job_runtime_s: f64,
    /// The part's share of the run's ops and of its bytes (1 for the whole run).
    pub ops_share: f64,
    pub bytes_share: f64,
    /// Context switches, major and minor faults of the process, the part's share.
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
}

/// The run's reads and writes.
fn directions(r: &RunResult) -> (Moved, Moved) {
    let all = Moved {
        ops: r.ops,
        bytes: r.bytes,
    };
    match (&r.mixed, r.spec.op) {
        (Some(m), _) => (
            Moved {
                ops: m.reads.ops,
                bytes: m.reads.bytes,
            },
            Moved {
                ops: m.writes.ops,
                bytes: m.writes.bytes,
            },
        ),
        (None, OpKind::Read) => (all, Moved::default()),
        (None, _) => (Moved::default(), all),
    }
}

/// `total` split by `weights`, in whole units that add up to `total`: the running sum of the weights
/// times `total`, rounded down, differenced (each part within one of its exact share, and never more
/// than its weight when `total` is at most the weights' sum).
pub fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| w as u128).sum();
    if sum == 0 {
        let n = weights.len().max(1) as u64;
        return apportion(total, &vec![1; n as usize])[..weights.len()].to_vec();
    }
    let mut out = Vec::with_capacity(weights.len());
    let (mut upto, mut given) = (0u128, 0u64);
    for &w in weights {
        upto += w as u128;
        let here = (total as u128 * upto / sum) as u64;
        out.push(here - given);
        given = here;
    }
    out
}

/// The entries of a run: one per thread, or one (a single thread, no per-thread figures, or `grouped`).
pub fn parts(r: &RunResult, grouped: bool) -> Vec<Part> {
    let (read, write) = directions(r);
    let cpu = &r.cpu.process;
    let threads = &r.per_thread;
    if threads.len() <= 1 || grouped {
        let job_runtime_s = if threads.len() > 1 {
            threads.iter().map(|t| t.wall_s).sum()
        } else {
            r.wall_s
        };
        return vec![Part {
            who: if threads.len() > 1 {
                Who::Group {
                    threads: threads.len(),
                }
            } else {
                Who::Run
            },
            read,
            write,
            runtime_s: r.wall_s,
            job_runtime_s,
            ops_share: 1.0,
            bytes_share: 1.0,
            ctx: cpu.voluntary_ctx_switches + cpu.involuntary_ctx_switches,
            majf: cpu.major_faults,
            minf: cpu.minor_faults,
        }];
    }
    let ops: Vec<u64> = threads.iter().map(|t| t.ops).collect();
    let bytes: Vec<u64> = threads.iter().map(|t| t.bytes).collect();
    let (all_ops, all_bytes) = (ops.iter().sum::<u64>(), bytes.iter().sum::<u64>());
    // A mixed run's reads and writes are counted for the run: a clone's are its ops in the run's
    // proportion (the read ops and bytes apportioned by the clones' ops and bytes).
    let reads = apportion(read.ops.min(all_ops), &ops);
    let read_bytes = apportion(read.bytes.min(all_bytes), &bytes);
    let ctx = apportion(
        cpu.voluntary_ctx_switches + cpu.involuntary_ctx_switches,
        &ops,
    );
    let majf = apportion(cpu.major_faults, &ops);
    let minf = apportion(cpu.minor_faults, &ops);
    let share = |v: u64, all: u64| if all > 0 { v as f64 / all as f64 } else { 0.0 };
    threads
        .iter()
        .enumerate()
        .map(|(i, t)| Part {
            who: Who::Clone {
                thread: t.thread,
                threads: threads.len(),
            },
            read: Moved {
                ops: reads[i],
                bytes: read_bytes[i],
            },
            write: Moved {
                ops: t.ops - reads[i],
                bytes: t.bytes - read_bytes[i],
            },
            runtime_s: t.wall_s,
            job_runtime_s: t.wall_s,
            ops_share: share(t.ops, all_ops),
            bytes_share: share(t.bytes, all_bytes),
            ctx: ctx[i],
            majf: majf[i],
            minf: minf[i],
        })
        .collect()
}

/// fio's usr_cpu and sys_cpu of a part (CPU time over job_runtime, in %).
pub struct CpuPct {
    pub usr: f64,
    pub sys: f64,
    /// The figures before the clamp where they passed 100% (getrusage counts in ticks and may give a
    /// short run more CPU time than wall time; a thread cannot be busier than 100%).
    pub before: Option<(f64, f64)>,
    /// Why there are none (fio's zeros written): a span shorter than CPU accounting resolves, or a
    /// process CPU time beyond what its CPUs could spend in the span.
    pub unmeasured: Option<String>,
}

/// A part's [`CpuPct`].
pub fn cpu_pct(r: &RunResult, p: &Part) -> CpuPct {
    let cpu = &r.cpu.process;
    let none = |why: String| CpuPct {
        usr: 0.0,
        sys: 0.0,
        before: None,
        unmeasured: Some(why),
    };
    if let Some(t) = iolab_engine::units::cpu_span_too_short(p.job_runtime_s) {
        return none(format!(
            "the job's span is {t}, shorter than the 0.1 s CPU accounting resolves"
        ));
    }
    let cpus = r.host.cpus_online as f64;
    if let Some(why) = iolab_engine::units::cpu_beyond_span(cpu.user_s + cpu.sys_s, r.wall_s, cpus)
    {
        return none(why);
    }
    let pct = |s: f64| s * p.ops_share / p.job_runtime_s * 100.0;
    let (usr, sys) = (pct(cpu.user_s), pct(cpu.sys_s));
    if usr + sys <= 100.0 {
        return CpuPct {
            usr,
            sys,
            before: None,
            unmeasured: None,
        };
    }
    let k = 100.0 / (usr + sys);
    CpuPct {
        usr: usr * k,
        sys: sys * k,
        before: Some((usr, sys)),
        unmeasured: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apportioned_parts_add_up_and_stay_within_their_weights() {
        assert_eq!(apportion(10, &[1, 1, 1]), vec![3, 3, 4]);
        assert_eq!(apportion(7, &[7, 0]), vec![7, 0]);
        assert_eq!(apportion(5, &[0, 0]), vec![2, 3]);
        assert_eq!(apportion(0, &[3, 4]), vec![0, 0]);
        // 70% reads of clones of 999 and 1,001 ops: each at most its ops, together exactly the reads.
        let r = apportion(1400, &[999, 1001]);
        assert_eq!(r.iter().sum::<u64>(), 1400);
        assert!(r[0] <= 999 && r[1] <= 1001, "{r:?}");
        let all = apportion(2000, &[999, 1001]);
        assert_eq!(all, vec![999, 1001]);
    }
}
