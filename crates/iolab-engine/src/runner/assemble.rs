//! The figures every runner derives the same way from what it measured: the rates (IOPS, MiB/s, ns per
//! op), the process's CPU figures (helpers, cores busy, runqueue wait, steal), the clock's fallback line and
//! the shared notes.
//!
//! The runner (its workers read the clock around every op) and offload (a client process timed from
//! outside) each time their span their own way and hand over a [`Measured`]. [`assemble`] returns a result
//! whose runner-specific parts (what was timed and excluded, latency, flushes, syscalls, per-thread
//! figures, verify, kernel counters, offload's section) are empty, for the runner to fill in.

use crate::measure::clock::ClockInfo;
use crate::measure::cpu::{
    run_delay_delta_s, CpuTicks, HelperCpu, Rusage, RusageDelta, Steal, SystemCpu, TaskTimes,
};
use crate::result::*;
use crate::spec::Spec;

/// The process as sampled at one end of the timed span.
pub struct Sample {
    pub ru: Rusage,
    pub tasks: Vec<TaskTimes>,
    /// Every CPU's times (/proc/stat): its steal, and its kernel share system-wide.
    pub steal: Vec<CpuTicks>,
    /// /proc/pressure/cpu's "some" total, microseconds (None without PSI).
    pub psi_some_us: Option<u64>,
    /// CPU time of every task on the machine, ns (None where no cgroup counts it).
    pub system_cpu_ns: Option<u64>,
    /// Just before the figures above were read (before), or just after (after): the span between the
    /// two holds everything they count.
    pub at: std::time::Instant,
}

impl Sample {
    /// The figures [`crate::disturbance::of`] reads.
    fn ends(&self) -> crate::disturbance::Ends<'_> {
        crate::disturbance::Ends {
            tasks: &self.tasks,
            cpus: &self.steal,
            psi_some_us: self.psi_some_us,
            system_cpu_ns: self.system_cpu_ns,
        }
    }
}

/// What one timed span measured, and what the runner has to say about it so far.
pub(crate) struct Measured<'a> {
    /// Taken when the run started.
    pub host: Host,
    pub target: TargetInfo,
    pub wall_s: f64,
    pub ops: u64,
    pub bytes: u64,
    pub before: &'a Sample,
    pub after: &'a Sample,
    /// The CPU of whatever did the workload: the worker threads, or offload's client process.
    pub workers: RusageDelta,
    /// The workers are another process (offload's client): their CPU is not in this process's, and is
    /// added to it for `cores_busy`.
    pub workers_apart: bool,
    /// The helper tasks of this process (kernel helpers, offload's server threads) and their CPU.
    pub helpers: Vec<HelperCpu>,
    /// The CPUs the workload ran on, when they are known for the whole span: their steal time is the
    /// workers' (`steal_worker_cpus_s`).
    pub steal_cpus: Option<Vec<usize>>,
    /// The runner's own notes and fallbacks; the shared ones are appended.
    pub notes: Vec<String>,
    pub fallbacks: Vec<String>,
    /// The end of the clock's fallback line: what follows from not using the TSC.
    pub without_tsc: &'static str,
}

/// The result of a run as far as every runner measures it alike; the rest is empty or zero.
pub(crate) fn assemble(spec: &Spec, clock: &ClockInfo, mut m: Measured) -> RunResult {
    let (wall_s, ops, bytes) = (m.wall_s, m.ops, m.bytes);
    let cpu = m.cpu_figures();
    let disturbance = m.disturbance(&cpu);
    let steal_note = m.steal().note(wall_s);
    let mut notes = m.notes;
    notes.extend(steal_note);
    let mut fallbacks = m.fallbacks;
    if let Some(r) = &clock.fallback_reason {
        fallbacks.push(format!(
            "clock: {} not used ({r}); {}",
            crate::measure::clock::counter_name(),
            m.without_tsc
        ));
    }
    RunResult {
        schema_version: SCHEMA_VERSION,
        host: m.host,
        spec: spec.clone(),
        target: m.target,
        clock: clock.clone(),
        timed: String::new(),
        excluded: String::new(),
        warmup: None,
        wall_s,
        ops,
        bytes,
        iops: if wall_s > 0.0 {
            ops as f64 / wall_s
        } else {
            0.0
        },
        mib_s: if wall_s > 0.0 {
            bytes as f64 / wall_s / (1 << 20) as f64
        } else {
            0.0
        },
        ns_per_op: if ops > 0 {
            wall_s * 1e9 / ops as f64
        } else {
            0.0
        },
        latency: Default::default(),
        gap: Default::default(),
        latency_unavailable: None,
        gap_unavailable: None,
        flushes: Default::default(),
        cpu,
        disturbance: Some(disturbance),
        syscalls: Default::default(),
        uring: None,
        aio: None,
        nowait: None,
        method_figures: Vec::new(),
        memory: None,
        mixed: None,
        paced: None,
        access: None,
        layers: None,
        device_io: None,
        per_thread: Vec::new(),
        verify: None,
        kernel: Default::default(),
        derived: Default::default(),
        findings: Vec::new(),
        fallbacks,
        notes,
        offload: None,
        profile: None,
        intervals: Vec::new(),
        sink: None,
        iopoll: None,
        sparse_clock: None,
        op_log: None,
    }
}

impl Measured<'_> {
    /// Steal time over the timed span: the hypervisor ran something else on our virtual CPUs.
    fn steal(&self) -> Steal<'_> {
        Steal {
            before: &self.before.steal,
            after: &self.after.steal,
        }
    }

    /// What the machine did to the span: run delay, steal, CPU pressure, the others' CPU.
    fn disturbance(&self, cpu: &CpuFigures) -> crate::disturbance::Disturbance {
        let mut own = cpu.process.user_s + cpu.process.sys_s;
        if self.workers_apart {
            own += self.workers.user_s + self.workers.sys_s;
        }
        let steal = match (cpu.steal_worker_cpus_s, cpu.steal_worker_cpus) {
            (Some(s), Some(n)) => (s, n),
            _ => (cpu.steal_all_cpus_s, self.before.steal.len().max(1) as u32),
        };
        let (before, after) = (self.before.ends(), self.after.ends());
        // Every figure of it is read at the snapshots: over the span between them (the timed span and,
        // with several threads, their wake-up and join), never the shorter timed span alone.
        let span = cpu
            .sampled_span_s
            .map_or(self.wall_s, |s| s.max(self.wall_s));
        crate::disturbance::of((self.wall_s, span), &before, &after, own, steal)
    }

    /// `cpu_total` over the wall time, where the span is long enough to hold a share (see
    /// [`CpuFigures::cores_busy`]), cut to the CPUs the process may run on (a note says so).
    fn cores_busy(&mut self, cpu_total: f64) -> Option<f64> {
        if crate::units::cpu_span_too_short(self.wall_s).is_some() {
            return None;
        }
        let busy = cpu_total / self.wall_s;
        let cpus = iolab_sys::allowed_cpus().len().max(1) as f64;
        if busy <= cpus {
            return Some(busy);
        }
        self.notes.push(format!(
            "CPU: the process's CPU time was {busy:.2} times the wall time, more than the {cpus} CPUs it may \
             run on (CPU time is sampled per tick); cores busy shown as {cpus}"
        ));
        Some(cpus)
    }

    /// The CPU figures (the helpers are moved into them).
    fn cpu_figures(&mut self) -> CpuFigures {
        let process = RusageDelta::between(&self.before.ru, &self.after.ru);
        let mut cpu_total = process.user_s + process.sys_s;
        if self.workers_apart {
            cpu_total = cpu_total + self.workers.user_s + self.workers.sys_s;
        }
        let steal = self.steal();
        let steal_all_cpus_s = steal.all();
        let steal_worker_cpus_s = self
            .steal_cpus
            .as_ref()
            .map(|cpus| cpus.iter().map(|&c| steal.on(c)).sum::<f64>());
        let steal_worker_cpus = self.steal_cpus.as_ref().map(|cpus| cpus.len() as u32);
        let helpers = std::mem::take(&mut self.helpers);
        let runqueue_wait_s = run_delay_delta_s(&self.before.tasks, &self.after.tasks);
        CpuFigures {
            process,
            workers: self.workers,
            helpers_user_s: helpers.iter().map(|h| h.user_s).sum(),
            helpers_sys_s: helpers.iter().map(|h| h.sys_s).sum(),
            helpers,
            cores_busy: self.cores_busy(cpu_total),
            runqueue_wait_s,
            runqueue_wait_unavailable: runqueue_wait_s.is_none().then(|| {
                "the kernel keeps no run delay per task (/proc/PID/task/TID/schedstat: \
                     CONFIG_SCHED_INFO)"
                    .into()
            }),
            steal_all_cpus_s,
            steal_worker_cpus_s,
            steal_worker_cpus,
            system_wide: SystemCpu::between(&self.before.steal, &self.after.steal),
            sampled_span_s: Some(
                self.after
                    .at
                    .saturating_duration_since(self.before.at)
                    .as_secs_f64(),
            ),
            tasks: self.after.tasks.len(),
        }
    }
}
