//! What the rules look at of a result: a few numbers pulled out of it ([`Facts`]), so that each rule
//! can be tested with figures made up on the spot.

use iolab_engine::measure::profile::ProfileFacts;
use iolab_engine::result::RunResult;
use iolab_engine::sink_device::Personality;
use iolab_engine::spec::{MethodKind, OpKind};
use iolab_engine::target::TargetKind;

/// CPU seconds of the kernel helper threads whose name starts with `prefix` ("iou-wrk-", "iou-sqp-").
pub fn helper_cpu_s(r: &RunResult, prefix: &str) -> f64 {
    r.cpu
        .helpers
        .iter()
        .filter(|h| h.comm.starts_with(prefix))
        .map(|h| h.oncpu_s.unwrap_or(h.user_s + h.sys_s))
        .sum()
}

/// `cpu_s` of a helper's CPU as CPUs kept busy, over the span its snapshots were read across (the timed
/// span and the threads' wake-up and join); none where that is more than the machine's CPUs could run,
/// where it was counted per tick (no schedstat) over a span too short for that, or nothing ran.
pub fn helper_share(r: &RunResult, cpu_s: f64) -> Option<f64> {
    let span = r.cpu.sampled_span_s.map_or(r.wall_s, |s| s.max(r.wall_s));
    let most = (r.host.cpus_online.max(1) as f64) * 1.1;
    // Exact where every helper's schedstat was read; else counted per tick, no share of a short span.
    let exact = r.cpu.helpers.iter().all(|h| h.oncpu_s.is_some());
    let timed = exact || iolab_engine::units::cpu_span_too_short(span).is_none();
    (cpu_s > 0.0 && span > 0.0 && timed)
        .then(|| cpu_s / span)
        .filter(|s| *s <= most)
}

/// CPU seconds of iolab's worker threads.
pub fn worker_cpu_s(r: &RunResult) -> f64 {
    let w = &r.cpu.workers;
    // Exact where recorded: the user/system split is sampled per tick and can read 0 over a short span.
    w.cpu_s.unwrap_or(w.user_s + w.sys_s)
}

/// Steal is counted in 10 ms ticks: below 5 ticks its share is mostly rounding.
const STEAL_MIN_S: f64 = 0.05;

/// How many CPUs a run's steal was summed over: the workers' distinct CPUs as the run recorded them
/// (older records: one per thread, at most as many as are online), or all online.
fn steal_cpus(r: &RunResult) -> u32 {
    match (r.cpu.steal_worker_cpus_s, r.cpu.steal_worker_cpus) {
        (Some(_), Some(n)) => n,
        (Some(_), None) => r.spec.threads.min(r.host.cpus_online as u32),
        (None, _) => r.host.cpus_online as u32,
    }
    .max(1)
}

/// The share of its CPUs' time the hypervisor took during the run (steal over the CPUs it was summed
/// over, against as many CPUs' time between the snapshots it was read at); `None` where too few ticks were
/// stolen to tell. At most all of it: steal is counted in 10 ms ticks.
pub fn steal_share(r: &RunResult) -> Option<f64> {
    let steal_s = r.cpu.steal_worker_cpus_s.unwrap_or(r.cpu.steal_all_cpus_s);
    let span = r.cpu.sampled_span_s.map_or(r.wall_s, |s| s.max(r.wall_s));
    let room = span * f64::from(steal_cpus(r));
    (steal_s >= STEAL_MIN_S && room > 0.0).then(|| (steal_s / room).min(1.0))
}

impl Facts {
    /// The run's method, from the registry.
    pub(crate) fn info(&self) -> Option<&'static iolab_engine::method::MethodInfo> {
        self.method.map(|m| m.info())
    }
}

impl Facts {
    pub fn of(r: &RunResult) -> Facts {
        let helper = |prefix: &str| helper_cpu_s(r, prefix);
        let tp_missing = r
            .kernel
            .tracepoints
            .iter()
            .find(|c| c.name == "raw_syscalls:sys_enter" && c.value.is_none())
            .and_then(|c| c.unavailable.clone());
        Facts {
            method: Some(r.spec.method),
            target: Some(r.target.kind),
            sparse: r.target.sparse,
            remote_peer: r
                .target
                .peer
                .as_ref()
                .and_then(|p| p.remote.as_deref())
                .is_some_and(|a| !a.starts_with("127.")),
            direct: r.spec.direct,
            qd: r.spec.qd,
            ns_per_op: r.ns_per_op,
            wall_s: r.wall_s,
            paced: r.spec.rate_iops.is_some(),
            threads: r.spec.threads,
            syscalls_per_op: r.derived.syscalls_per_op,
            kernel_requests_per_enter: r
                .derived
                .kernel_requests_per_enter
                .or(r.derived.iolab_requests_per_enter),
            punted_fraction: r.derived.punted_fraction,
            ctx_switches_per_op: r.derived.ctx_switches_per_op,
            page_faults_per_mib: r.derived.page_faults_per_mib,
            worker_cpu_s: worker_cpu_s(r),
            iowq_cpu_s: helper("iou-wrk-"),
            sqpoll_cpu_s: helper("iou-sqp-"),
            sqpoll_cpu_share: helper_share(r, helper("iou-sqp-")),
            // 0 where the kernel did not count them: every rule that reads it asks for more than 0.
            rw_syscalls_per_op: r.syscalls.kernel_rw_per_op.unwrap_or(0.0),
            steal_s: r.cpu.steal_worker_cpus_s.unwrap_or(r.cpu.steal_all_cpus_s),
            steal_share: steal_share(r),
            disturbed: r
                .disturbance
                .as_ref()
                .filter(|d| d.disturbed())
                .map(|d| d.why.clone().unwrap_or_else(|| "disturbed".into())),
            tracepoints_unavailable: tp_missing,
            inline_counting: r
                .kernel
                .tracepoint_pass
                .as_deref()
                .is_some_and(|p| p.contains("inline")),
            aio_inline_fraction: r
                .aio
                .as_ref()
                .filter(|a| a.requests > 0)
                .and_then(|a| a.inline_fraction),
            write: r.spec.op == OpKind::Write,
            bs: r.spec.bs,
            profile: r.profile.as_ref().map(ProfileFacts::of),
            sqpoll: r.spec.ring.sqpoll,
            uring_enters: r.uring.as_ref().map(|u| u.enters),
            uring_requests: r.uring.as_ref().map(|u| u.requests),
            submissions_without_syscall: r.uring.as_ref().map(|u| u.submissions_without_syscall),
            sink: r.sink.as_ref().map(|s| SinkFacts {
                personality: s.personality,
                log: r.spec.sink_log,
                driver_gaps: s.driver_gaps.clone(),
                gap_p50_ns: r.gap.p50_ns,
                worker_share: s.worker_share,
                disagree: s
                    .checks
                    .iter()
                    .filter(|c| !c.agrees)
                    .map(|c| c.text())
                    .collect(),
            }),
            iopoll: r.iopoll.as_ref().map(|p| (p.polled, p.verdict.clone())),
            partition: PartitionFacts::of(r),
            zero_copy: r
                .uring
                .as_ref()
                .filter(|u| u.opcode == "SEND_ZC")
                .map(|u| (u.zc_notifs, u.zc_copied)),
            opcode: r
                .uring
                .as_ref()
                .map(|u| u.opcode.clone())
                .filter(|o| !o.is_empty()),
            min_wait_us: r.spec.ring.min_wait_usec,
            wait_region: r.spec.ring.wait_region,
            rw_flags: r.spec.rw_flags,
        }
    }
}

/// The numbers the rules look at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub method: Option<MethodKind>,
    pub target: Option<TargetKind>,
    /// An existing file read where it has holes.
    pub sparse: Option<iolab_engine::result::Sparse>,
    /// The stream's peer is not iolab's and not on this machine (`--target tcp:ADDR:PORT`, ADDR not loopback).
    pub remote_peer: bool,
    pub direct: bool,
    pub qd: u32,
    pub ns_per_op: f64,
    pub wall_s: f64,
    /// Paced (`--rate-iops`, `--rate`): the time per op is the pace's interval, and the thread sleeps
    /// between ops, not the method's cost.
    pub paced: bool,
    /// The run's threads (0 where not known: one): with several, the time per op is their shared rate,
    /// not what one op took.
    pub threads: u32,
    pub syscalls_per_op: Option<f64>,
    pub kernel_requests_per_enter: Option<f64>,
    pub punted_fraction: Option<f64>,
    pub ctx_switches_per_op: Option<f64>,
    pub page_faults_per_mib: Option<f64>,
    /// CPU seconds of iolab's own worker threads.
    pub worker_cpu_s: f64,
    /// CPU seconds of io-wq workers (iou-wrk-*) and SQPOLL threads (iou-sqp-*).
    pub iowq_cpu_s: f64,
    pub sqpoll_cpu_s: f64,
    /// The SQPOLL threads' CPUs kept busy ([`helper_share`]).
    pub sqpoll_cpu_share: Option<f64>,
    /// Kernel read/write-family syscalls per op (/proc/self/io).
    pub rw_syscalls_per_op: f64,
    pub steal_s: f64,
    /// The share of its CPUs' time stolen ([`steal_share`]).
    pub steal_share: Option<f64>,
    /// What disturbed the run ([`iolab_engine::disturbance`]), where something did.
    pub disturbed: Option<String>,
    pub tracepoints_unavailable: Option<String>,
    pub inline_counting: bool,
    /// Native AIO: fraction of requests complete when io_submit returned.
    pub aio_inline_fraction: Option<f64>,
    pub write: bool,
    pub bs: u64,
    /// `--profile`: the profile's shares.
    pub profile: Option<ProfileFacts>,
    /// io_uring with IORING_SETUP_SQPOLL: a kernel thread submits, no io_uring_enter needed while it
    /// is awake.
    pub sqpoll: bool,
    /// io_uring: iolab's io_uring_enter calls, the requests it queued, and how many of those the SQPOLL
    /// thread took without any call.
    pub uring_enters: Option<u64>,
    pub uring_requests: Option<u64>,
    pub submissions_without_syscall: Option<u64>,
    /// The sink driver's target: its personality, the share of its calls io-wq workers made, and the
    /// counts that disagree with iolab's.
    pub sink: Option<SinkFacts>,
    /// io_uring `--iopoll`: whether the completions were polled, and why it is said.
    pub iopoll: Option<(Option<bool>, String)>,
    /// `--offload-partition vm`: the guest client's round trips and where their cost went.
    pub partition: Option<PartitionFacts>,
    /// io_uring `--send-zc`: the notifications, and how many said the kernel copied anyway.
    pub zero_copy: Option<(u64, u64)>,
    /// io_uring: the opcode of the workload's requests (WRITEV_FIXED ...), and `--min-wait` in µs.
    pub opcode: Option<String>,
    pub min_wait_us: u32,
    /// io_uring `--wait-region`: the waits' arguments in a registered region.
    pub wait_region: bool,
    /// RWF_* flags of every call (`--rw-flags`).
    pub rw_flags: u32,
}

/// What the rules look at of a run on the sink driver.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SinkFacts {
    pub personality: Option<Personality>,
    /// `--sink-log`: the driver also logged a line and fired a tracepoint per write (the thesis's LM_LOG).
    pub log: bool,
    /// With the log switch: the time between writes as the driver saw them.
    pub driver_gaps: Option<iolab_engine::sink_device::DriverGaps>,
    /// iolab's own time between op starts (p50), the same series timed by iolab's clock.
    pub gap_p50_ns: f64,
    pub worker_share: Option<f64>,
    pub disagree: Vec<String>,
}

/// What the rule looks at of a partition run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartitionFacts {
    pub emulated: bool,
    pub accelerator: String,
    /// "kernel" or "broker".
    pub path: String,
    pub batch: u32,
    pub round_trip_ns: f64,
    pub round_trip_cycles: Option<f64>,
    pub ops: u64,
    /// Kernel path: the guest's wake requests (the SQ thread slept) and the host thread's SQ_WAKEUPs.
    pub wake_requests: u64,
    pub host_wakeups: u64,
    /// CPU of the serving threads (SQ thread or broker) as a share of the run's wall time (none where the
    /// run was too short to say).
    pub server_share: Option<f64>,
}

impl PartitionFacts {
    pub fn of(r: &RunResult) -> Option<PartitionFacts> {
        let o = r.offload.as_ref()?;
        let p = o.partition.as_ref()?;
        Some(PartitionFacts {
            emulated: p.emulated,
            accelerator: p.accelerator.clone(),
            path: o.path.clone(),
            batch: o.batch,
            round_trip_ns: o.round_trip_ns,
            round_trip_cycles: o.round_trip_cycles,
            ops: r.ops,
            wake_requests: p.wake_requests,
            host_wakeups: p.host_wakeups,
            server_share: o.service_cpu_share,
        })
    }
}
