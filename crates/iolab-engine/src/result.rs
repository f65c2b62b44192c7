//! The result of a run: this struct IS the JSON schema (`iolab run --json FILE`), documented field by field.
//! Times are seconds (`_s`) or nanoseconds (`_ns`); sizes are bytes; rates say their unit in the name.

use crate::measure::clock::ClockInfo;
use crate::measure::counters::{CountMode, CounterValue};
use crate::measure::cpu::{HelperCpu, ProcIo, RusageDelta};
use crate::measure::hist::Summary;
pub use crate::measure::profile::share::{ProfileFigures, ProfileShare};
use crate::spec::Spec;
use crate::target_kind::TargetKind;
use serde::{Deserialize, Serialize};

pub use crate::measure::workload_figures::{
    AccessFigures, DirFigures, LayerFigures, MixedFigures, PacedFigures,
};

/// Version of this schema; bumped when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

pub use crate::host::Host;

/// The target as iolab used it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetInfo {
    pub kind: TargetKind,
    /// iolab created the file for this run.
    pub created: bool,
    /// The created file was left in place (`--keep`).
    pub kept: bool,
    /// Blocks (of `spec.bs` bytes) in each thread's region.
    pub region_blocks_per_thread: u64,
    /// O_DIRECT alignment (memory, offset) in bytes, when `--direct`.
    pub dio_align: Option<(u32, u32)>,
    /// Stream targets: what iolab's peer threads at the far ends moved, and their CPU.
    #[serde(default)]
    pub peer: Option<PeerFigures>,
    /// A regular file's filesystem ("ext4", "tmpfs"): whether its page cache is in front of a device.
    /// Absent in results of versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<String>,
    /// A path where no file exists and none was made: a method that moves no data (nop) touches none.
    /// Written only when so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untouched: bool,
    /// An existing file read where it has holes (zeros the kernel makes up without the device); absent
    /// where it has none, or was not looked at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse: Option<Sparse>,
}

/// What the peers at the far end of a stream target did, all threads together.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PeerFigures {
    /// Bytes the peers received (write runs) or sent (read runs: they write ahead of the reader, so this is
    /// more than the run read).
    pub bytes: u64,
    /// The peer threads' own CPU time (RUSAGE_THREAD), seconds: null for a remote peer.
    pub user_s: Option<f64>,
    pub sys_s: Option<f64>,
    /// The address of a peer iolab does not run (`--target tcp:ADDR:PORT`): `bytes` is what its TCP
    /// acknowledged (TCP_INFO), and its CPU is not known (null above, this the reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

/// The holes of the region a run read: `holes` of its `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sparse {
    pub holes: u64,
    pub bytes: u64,
}

impl Sparse {
    /// The share of the region that is holes.
    pub fn share(&self) -> f64 {
        self.holes as f64 / self.bytes.max(1) as f64
    }
}

/// CPU time and scheduler figures over the timed span.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CpuFigures {
    /// getrusage(RUSAGE_SELF) delta: every task of the process, kernel helper threads included.
    pub process: RusageDelta,
    /// Sum of the worker threads' own getrusage(RUSAGE_THREAD) deltas.
    pub workers: RusageDelta,
    /// io_uring kernel helper tasks (iou-sqp-*, iou-wrk-*) alive at the end of the run.
    pub helpers: Vec<HelperCpu>,
    pub helpers_user_s: f64,
    pub helpers_sys_s: f64,
    /// (user + sys of the process) / wall time: 1.0 is one core busy all the time. Null where the span is
    /// shorter than [`crate::units::MIN_CPU_SPAN_S`] (CPU time is sampled per tick: a share of a shorter
    /// span can exceed every core); at most the CPUs the process may run on (a note says when it was cut).
    #[serde(default)]
    pub cores_busy: Option<f64>,
    /// Time the process's tasks were runnable but waited on a runqueue (schedstat run_delay; null where
    /// the kernel keeps none, and then `runqueue_wait_unavailable` says so).
    pub runqueue_wait_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runqueue_wait_unavailable: Option<String>,
    /// Steal time on all CPUs during the run (/proc/stat, 10 ms ticks): the hypervisor ran something else
    /// on our virtual CPUs. Stolen time is in the wall time but in nobody's user/sys time.
    pub steal_all_cpus_s: f64,
    /// Steal on the CPUs the worker threads ran on, when each stayed on one CPU for the whole run.
    pub steal_worker_cpus_s: Option<f64>,
    /// How many CPUs `steal_worker_cpus_s` was summed over (the workers' distinct CPUs; for an offload run
    /// the client's and the server's). Absent in results of versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_worker_cpus: Option<u32>,
    /// Every CPU's kernel share over the timed span, system-wide (/proc/stat; kworkers, interrupts and
    /// other processes included): the storage paper's "busier core". Absent in results of versions
    /// before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_wide: Option<crate::measure::cpu::SystemCpu>,
    /// Wall time between the snapshots at which the process's CPU time, the perf counters and /proc/stat
    /// were read, seconds: the timed span and, with several threads, waking them and waiting for the last.
    /// Absent in results of versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_span_s: Option<f64>,
    /// Tasks (threads) of the process at the end of the run, io_uring helpers included. A one-thread run
    /// with a plain method has exactly one: iolab adds no thread that would make syscalls dearer.
    pub tasks: usize,
}

/// System calls: what the method counted, and what the kernel counted (/proc/self/io).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SyscallFigures {
    /// Syscalls the method made during the timed span (including fsync/msync/lseek), when it knows.
    pub method_count: Option<u64>,
    pub method_per_op: Option<f64>,
    /// io_uring: io_uring_enter calls and requests they submitted.
    pub uring_enters: Option<u64>,
    pub uring_requests: Option<u64>,
    /// The kernel's read/write-family counters for the whole process over the timed span (null where
    /// the kernel did not count them for this run: `kernel_rw_unavailable` says why).
    pub kernel_rw: Option<ProcIo>,
    /// (syscr + syscw) / ops (null with `kernel_rw`, or with no op).
    pub kernel_rw_per_op: Option<f64>,
    /// Why `kernel_rw` is null; absent where it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_rw_unavailable: Option<String>,
    /// How to read these numbers for this method.
    pub note: String,
    /// Clock reads that were system calls of their own (clock_gettime without a vDSO fast path; see
    /// `ClockInfo::read_is_syscall`), counted apart from the method's: `None` where a read is no call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_calls: Option<u64>,
}

/// Flushes made at `--fsync`/`--msync` points (timed, not in per-op latency).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FlushFigures {
    pub calls: u64,
    pub total_s: f64,
    pub max_ns: f64,
}

/// One thread's share.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ThreadFigures {
    pub thread: u32,
    pub ops: u64,
    pub bytes: u64,
    /// From this thread's first op start to its last completion (and final flush).
    pub wall_s: f64,
}

/// `--verify` outcome.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct VerifyFigures {
    /// Distinct blocks that were written and read back.
    pub blocks_checked: u64,
    pub bytes_checked: u64,
    pub mismatches: u64,
    /// Byte offsets of the first mismatching blocks (at most 10).
    pub first_mismatch_offsets: Vec<u64>,
    /// A write run's read-back: its wall time in seconds (after the timed span, in no other figure);
    /// written only where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_back_s: Option<f64>,
}

/// The kernel's side of a run: perf_event counters and tracepoints.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KernelFigures {
    pub count_mode: CountMode,
    /// Software and hardware counters over the timed pass (unavailable ones carry the reason).
    pub timed_pass: Vec<CounterValue>,
    /// Where the tracepoint figures come from: "separate counting pass" or "timed pass (inline)"; `None`
    /// when they were not counted.
    pub tracepoint_pass: Option<String>,
    /// raw_syscalls:sys_enter and the io_uring tracepoints.
    pub tracepoints: Vec<CounterValue>,
    /// Syscalls made, by name, most first (syscalls:sys_enter_* tracepoints), like `strace -c`.
    pub syscalls_by_name: Vec<(String, u64)>,
    /// Ops, and iolab's own io_uring counts, of the pass the tracepoints counted (a separate pass bounded by
    /// --duration may do a different number of ops than the timed one).
    pub tracepoint_pass_ops: Option<u64>,
    pub tracepoint_pass_uring_enters: Option<u64>,
    pub tracepoint_pass_uring_requests: Option<u64>,
    /// iolab's clock reads in that pass, when each was a system call: taken out of its per-op figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracepoint_pass_clock_calls: Option<u64>,
    pub notes: Vec<String>,
}

impl KernelFigures {
    /// A counter's value by name, when it was counted.
    pub fn value(&self, name: &str) -> Option<u64> {
        self.timed_pass
            .iter()
            .chain(self.tracepoints.iter())
            .find(|c| c.name == name)
            .and_then(|c| c.value)
    }

    /// A syscall's count in the breakdown (0 when absent from a breakdown that exists).
    pub fn syscall(&self, name: &str) -> Option<u64> {
        if self.syscalls_by_name.is_empty() {
            return None;
        }
        Some(
            self.syscalls_by_name
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| *v)
                .unwrap_or(0),
        )
    }
}

/// Figures derived from the kernel's counts.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Derived {
    /// raw_syscalls:sys_enter / ops of the counting pass (every syscall of the process, iolab's own few
    /// included).
    pub syscalls_per_op: Option<f64>,
    /// io_uring:io_uring_submit_req / io_uring_enter calls (syscalls:sys_enter_io_uring_enter): the seed
    /// report's avg_batch, from the kernel's side.
    pub kernel_requests_per_enter: Option<f64>,
    /// The same from iolab's own count (timed pass).
    pub iolab_requests_per_enter: Option<f64>,
    /// io_uring:io_uring_queue_async_work / io_uring:io_uring_submit_req (where the kernel has no such
    /// tracepoint, as 6.1: / the requests iolab submitted in the counted pass).
    pub punted_fraction: Option<f64>,
    /// context switches (perf software counter) / ops.
    pub ctx_switches_per_op: Option<f64>,
    /// (minor + major page faults) / MiB moved.
    pub page_faults_per_mib: Option<f64>,
    /// CPU seconds of iolab's worker threads (user + system), and of the kernel's io_uring helper
    /// threads over the run: io-wq workers (iou-wrk-*) and SQPOLL threads (iou-sqp-*), each summed.
    #[serde(default)]
    pub worker_cpu_s: f64,
    #[serde(default)]
    pub iowq_cpu_s: f64,
    #[serde(default)]
    pub sqpoll_cpu_s: f64,
    /// The SQPOLL threads' CPU as CPUs kept busy: `sqpoll_cpu_s` over the span it was read across (the
    /// snapshots', `cpu.sampled_span_s`); none where that is more than the machine's CPUs could run
    /// (CPU time counted per tick, over a span of a few) or no SQPOLL thread ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll_cpu_share: Option<f64>,
    /// The process's CPU seconds (user + system, all its threads) per op, in ns; none where the timed
    /// span was too short to time (`rate_withheld`): its CPU time is then iolab's own bracketing.
    #[serde(default)]
    pub cpu_ns_per_op: Option<f64>,
    /// Why `iops` and `mib_s` are no rate: the timed span was too short to time
    /// (`units::too_short`); they are then ops and bytes over that span, which no view prints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_withheld: Option<String>,
    /// Why `cpu_ns_per_op` is none where the span could be timed: the process's CPU time was more than
    /// its CPUs could spend in the span (`units::cpu_beyond_span`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_withheld: Option<String>,
    /// The share of its CPUs' time the hypervisor stole during the run: steal (10 ms ticks) over the CPUs
    /// it was summed over against as many CPUs' wall time; none where under 5 ticks were stolen.
    #[serde(default)]
    pub steal_share: Option<f64>,
    /// Time per op in the TSC's cycles, where iolab's clock is the TSC.
    #[serde(default)]
    pub cycles_per_op: Option<f64>,
    /// Where the kernel's counts and iolab's disagree, or "agree" statements.
    pub crosscheck: Vec<String>,
}

/// One sentence explaining a result, with the figure that triggered it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// The rule's name (see `findings.rs`).
    pub rule: String,
    pub text: String,
}

/// io_uring submission statistics of one ring, counted on iolab's side.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct UringStats {
    /// Setup and registration flags in use (SQPOLL, IOPOLL, REGISTER_FILES ...).
    pub setup: Vec<String>,
    /// Flags of the recommended ring this kernel refused, dropped before the run (name and errno).
    #[serde(default)]
    pub refused: Vec<String>,
    /// The opcode of the workload's requests as the kernel names it (WRITE, WRITEV_FIXED, NOP ...).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub opcode: String,
    /// io_uring_enter calls (submitting, waiting, or waking the SQ thread).
    pub enters: u64,
    /// Requests handed to the kernel.
    pub requests: u64,
    /// SQPOLL: submissions the SQ thread picked up with no syscall at all.
    pub submissions_without_syscall: u64,
    /// SQPOLL: io_uring_enter calls made because the SQ thread was asleep (IORING_ENTER_SQ_WAKEUP).
    pub sq_wakeups: u64,
    /// SQPOLL: spins waiting for the SQ thread to consume a full submission queue.
    pub sq_full_waits: u64,
    /// Index = requests handed over in one submission (an io_uring_enter, or with SQPOLL a tail update);
    /// index 0 counts enters that only waited for completions. The last index collects anything larger.
    pub batch_histogram: Vec<u64>,
    /// Index = requests in the kernel right after a submission.
    pub inflight_histogram: Vec<u64>,
    /// --ring design: per-thread, shared or shared-submitter.
    pub design: String,
    /// --ring shared: times a thread found the ring's mutex held by another thread and had to wait.
    pub lock_contended: u64,
    /// --ring shared-submitter: times a worker slept (futex) waiting for its completions.
    pub worker_sleeps: u64,
    /// --ring shared-submitter: times a worker rang the sleeping submitter's doorbell (eventfd write).
    pub doorbells: u64,
    /// --min-wait: waits for a batch of completions with a minimum wait time.
    #[serde(default)]
    pub min_waits: u64,
    /// --send-zc: notifications that the kernel let go of a send's buffer.
    #[serde(default)]
    pub zc_notifs: u64,
    /// --send-zc: of those, the sends the kernel copied after all (IORING_NOTIF_USAGE_ZC_COPIED).
    #[serde(default)]
    pub zc_copied: u64,
    /// --min-wait: those that came back with fewer completions than they asked for (the minimum wait ran
    /// out first).
    #[serde(default)]
    pub min_waits_short: u64,
    /// --ring shared-submitter: the submitter thread's own CPU (RUSAGE_THREAD over its life: the run plus
    /// its short setup; it has exited before the process snapshot, so it is not among the helpers).
    pub submitter_cpu: Option<crate::measure::cpu::RusageDelta>,
}

impl UringStats {
    /// One submission that passed `taken` requests to the kernel, leaving `in_kernel` there: counted in
    /// `requests` and in the batch and in-flight histograms (their last bucket takes everything above).
    pub fn count_submission(&mut self, taken: u32, in_kernel: u32) {
        self.requests += taken as u64;
        let h = &mut self.batch_histogram;
        let i = (taken as usize).min(h.len() - 1);
        h[i] += 1;
        let d = &mut self.inflight_histogram;
        let j = (in_kernel as usize).min(d.len() - 1);
        d[j] += 1;
    }
}

/// `--method pv2 --rw-flags nowait`: how many ops the kernel refused to do without blocking, of one
/// thread (or, in a result, all threads).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NowaitStats {
    /// RWF_NOWAIT was set on the first try of every op.
    pub nowait: bool,
    /// Ops whose first try answered EAGAIN or EOPNOTSUPP, or moved only part of the block: each was
    /// finished with a plain call (RWF_NOWAIT dropped).
    pub would_block: u64,
    /// Of those, the ones that had moved part of the block first.
    pub partial: u64,
    /// Of those, the ones the file refused to try without blocking at all (EOPNOTSUPP).
    #[serde(default)]
    pub unsupported: u64,
    /// Ops the first try finished (ops - would_block); filled in by the merge.
    #[serde(default)]
    pub completed_nowait: u64,
    /// would_block / ops.
    #[serde(default)]
    pub would_block_share: f64,
}

impl NowaitStats {
    /// The threads' counts added up, with the share over `ops` completed ops.
    pub fn merge(all: &[NowaitStats], ops: u64) -> Option<NowaitStats> {
        let first = all.first()?;
        let mut t = NowaitStats {
            nowait: first.nowait,
            ..Default::default()
        };
        for s in all {
            t.would_block += s.would_block;
            t.partial += s.partial;
            t.unsupported += s.unsupported;
        }
        t.completed_nowait = ops.saturating_sub(t.would_block);
        t.would_block_share = if ops > 0 {
            t.would_block as f64 / ops as f64
        } else {
            0.0
        };
        Some(t)
    }
}

/// Native AIO counts of one thread (or, in a result, all threads).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AioStats {
    pub io_submit_calls: u64,
    pub io_getevents_calls: u64,
    pub requests: u64,
    /// Requests already complete when io_submit returned (seen by a non-blocking io_getevents right after);
    /// absent where no thread looked (`--reap-at-most`, fio's way of reaping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_inside_submit: Option<u64>,
    /// completed_inside_submit / requests: 1.0 means io_submit did the I/O synchronously; absent with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_fraction: Option<f64>,
}

impl AioStats {
    pub fn merge(all: &[AioStats]) -> Option<AioStats> {
        if all.is_empty() {
            return None;
        }
        let mut t = AioStats {
            completed_inside_submit: Some(0),
            ..AioStats::default()
        };
        for s in all {
            t.io_submit_calls += s.io_submit_calls;
            t.io_getevents_calls += s.io_getevents_calls;
            t.requests += s.requests;
            t.completed_inside_submit = t
                .completed_inside_submit
                .zip(s.completed_inside_submit)
                .map(|(a, b)| a + b);
        }
        t.inline_fraction = t.completed_inside_submit.map(|n| match t.requests {
            0 => 0.0,
            r => n as f64 / r as f64,
        });
        Some(t)
    }
}

/// io_uring figures of a run, all rings together.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct UringFigures {
    /// The opcode of the workload's requests (with what was asked for where this kernel lacked it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub opcode: String,
    pub setup: Vec<String>,
    /// Flags of the recommended ring this kernel refused, dropped before the run (name and errno).
    #[serde(default)]
    pub refused: Vec<String>,
    pub enters: u64,
    pub requests: u64,
    pub submissions_without_syscall: u64,
    pub sq_wakeups: u64,
    pub sq_full_waits: u64,
    pub design: String,
    pub lock_contended: u64,
    pub worker_sleeps: u64,
    pub doorbells: u64,
    /// --send-zc: notifications, and the sends the kernel copied after all.
    #[serde(default)]
    pub zc_notifs: u64,
    #[serde(default)]
    pub zc_copied: u64,
    /// --min-wait: waits with a minimum wait time, and those that came back short.
    #[serde(default)]
    pub min_waits: u64,
    #[serde(default)]
    pub min_waits_short: u64,
    pub submitter_cpu: Option<crate::measure::cpu::RusageDelta>,
    /// requests / submissions that carried at least one request (the seed report's avg_batch).
    pub mean_batch: f64,
    /// Submissions of 32 requests or more (the seed report's "big batch" threshold).
    pub big_batches: u64,
    /// (requests in one submission, how many submissions), nonzero entries only.
    pub batch_histogram: Vec<(u32, u64)>,
    /// (requests in the kernel after a submission, how often), nonzero entries only.
    pub inflight_histogram: Vec<(u32, u64)>,
    /// Requests in one ring after a submission, mean over every ring's submissions (per ring: with a
    /// ring per thread, each ring's own depth).
    pub mean_inflight: f64,
    /// Requests in all rings together: the sum of each ring's own mean (absent in older results, where
    /// [`UringFigures::inflight_all_rings`] estimates it from the ring design).
    #[serde(default)]
    pub mean_inflight_all_rings: Option<f64>,
}

impl UringFigures {
    pub fn merge(stats: &[UringStats]) -> Option<UringFigures> {
        let first = stats.first()?;
        let len = stats
            .iter()
            .map(|s| s.batch_histogram.len())
            .max()
            .unwrap_or(0);
        let mut batch = vec![0u64; len];
        let mut depth = vec![0u64; len];
        let mut f = UringFigures {
            opcode: first.opcode.clone(),
            setup: first.setup.clone(),
            refused: first.refused.clone(),
            design: first.design.clone(),
            ..Default::default()
        };
        let mut all_rings = 0.0;
        for s in stats {
            all_rings += mean_depth(&s.inflight_histogram);
            f.enters += s.enters;
            f.requests += s.requests;
            f.submissions_without_syscall += s.submissions_without_syscall;
            f.sq_wakeups += s.sq_wakeups;
            f.sq_full_waits += s.sq_full_waits;
            f.lock_contended += s.lock_contended;
            f.worker_sleeps += s.worker_sleeps;
            f.doorbells += s.doorbells;
            f.min_waits += s.min_waits;
            f.zc_notifs += s.zc_notifs;
            f.zc_copied += s.zc_copied;
            f.min_waits_short += s.min_waits_short;
            if s.submitter_cpu.is_some() {
                f.submitter_cpu = s.submitter_cpu;
            }
            for (i, v) in s.batch_histogram.iter().enumerate() {
                batch[i] += v;
            }
            for (i, v) in s.inflight_histogram.iter().enumerate() {
                depth[i] += v;
            }
        }
        let carrying: u64 = batch.iter().skip(1).sum();
        f.mean_batch = if carrying > 0 {
            f.requests as f64 / carrying as f64
        } else {
            0.0
        };
        f.big_batches = batch.iter().skip(32).sum();
        f.mean_inflight = mean_depth(&depth);
        f.mean_inflight_all_rings = Some(all_rings);
        let nz = |h: Vec<u64>| {
            h.into_iter()
                .enumerate()
                .filter(|(_, v)| *v > 0)
                .map(|(i, v)| (i as u32, v))
                .collect()
        };
        f.batch_histogram = nz(batch);
        f.inflight_histogram = nz(depth);
        Some(f)
    }
}

impl UringFigures {
    /// Requests in flight in all the rings of a run of `threads` threads: the sum of each ring's mean, or
    /// for older results the per-ring mean times the rings the design makes (one ring shared by every
    /// thread, else one per thread).
    pub fn inflight_all_rings(&self, threads: u32) -> f64 {
        self.mean_inflight_all_rings.unwrap_or_else(|| {
            let rings = match self.design.as_str() {
                "shared" | "shared-submitter" => 1,
                _ => threads.max(1),
            };
            self.mean_inflight * rings as f64
        })
    }
}

/// The mean of a histogram indexed by depth: sum of depth x count over the counts (0 when empty).
fn mean_depth(h: &[u64]) -> f64 {
    let n: u64 = h.iter().sum();
    if n == 0 {
        return 0.0;
    }
    h.iter()
        .enumerate()
        .map(|(i, v)| i as f64 * *v as f64)
        .sum::<f64>()
        / n as f64
}

/// One run of one workload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub host: Host,
    /// The resolved workload.
    pub spec: Spec,
    pub target: TargetInfo,
    /// The clock that timed every op, and its own cost.
    pub clock: ClockInfo,
    /// What the wall time and latencies include.
    pub timed: String,
    /// What they leave out.
    pub excluded: String,
    /// `--warmup`: the operations run before timing started, counted here and in no other figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupFigures>,
    /// From the earliest op start to the latest completion over all threads.
    pub wall_s: f64,
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    /// Mebibytes (2^20 bytes) per second.
    pub mib_s: f64,
    /// wall time / ops: the inverse of throughput, all threads together.
    pub ns_per_op: f64,
    /// Per-op latency. Synchronous methods: from the previous op's completion to this op's completion (one
    /// clock read per op; includes iolab's bookkeeping between ops, see `timed`). Asynchronous methods: from
    /// just before the request was queued to just after iolab saw its completion. Absent where no op was
    /// timed on its own (`latency_unavailable` says why).
    #[serde(default, skip_serializing_if = "Summary::is_empty")]
    pub latency: Summary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_unavailable: Option<String>,
    /// Time between the starts of successive ops of one thread (the seed thesis's "time between writes").
    /// For synchronous methods this is the same series as `latency`. Absent as `latency` is.
    #[serde(default, skip_serializing_if = "Summary::is_empty")]
    pub gap: Summary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_unavailable: Option<String>,
    pub flushes: FlushFigures,
    pub cpu: CpuFigures,
    /// What the machine did to the timed span ([`crate::disturbance`]); absent in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<crate::disturbance::Disturbance>,
    pub syscalls: SyscallFigures,
    /// io_uring rings: setup flags, submissions, batch and in-flight histograms (io_uring runs only).
    pub uring: Option<UringFigures>,
    /// Native AIO counts (aio runs only).
    pub aio: Option<AioStats>,
    /// pwritev2/preadv2 with --rw-flags nowait: ops that would have blocked (pv2 runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nowait: Option<NowaitStats>,
    /// Figures of the method's own, by name, each with its unit and what it counts (see
    /// `spec::method_opts::Figure`): the report shows them as they are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub method_figures: Vec<crate::spec::Figure>,
    /// `--memory-limit`: what the run's memory cgroup saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::memlimit::MemoryLimit>,
    /// `--op mixed`: the reads and the writes apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixed: Option<MixedFigures>,
    /// `--rate-iops` / `--rate`: the pace asked and the pace met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced: Option<PacedFigures>,
    /// Random offsets: how the accesses spread over the blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessFigures>,
    /// `--layers`: where an op's time went, by layer (block-device targets and files on one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<LayerFigures>,
    /// The bytes the block layer moved to and from the disk behind the target over the timed span (its
    /// `/sys/block/DEV/stat`); absent where no disk is behind the target, and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_io: Option<crate::measure::device_io::DeviceIo>,
    pub per_thread: Vec<ThreadFigures>,
    pub verify: Option<VerifyFigures>,
    /// Kernel counters (perf_event_open) and where they came from.
    pub kernel: KernelFigures,
    pub derived: Derived,
    /// What the figures mean, one sentence each.
    pub findings: Vec<Finding>,
    /// Downgrades and fallbacks taken (a feature the kernel refused, the clock used instead of the TSC ...).
    pub fallbacks: Vec<String>,
    /// Other things the reader should know about this run.
    pub notes: Vec<String>,
    /// `--method offload`: the sandboxed client, its path to the kernel and the sandbox's checks.
    #[serde(default)]
    pub offload: Option<OffloadFigures>,
    /// `--profile`: where the CPU time went, from sampled call stacks (see `measure/profile.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileFigures>,
    /// The timed pass over time (`--log-interval MS`; by default 1 s intervals, kept when the pass took
    /// 2 s or more): one entry per interval, in time order, all threads together. Each worker closes its
    /// interval at its first completion at or past the boundary (no thread is added to time them), so
    /// an interval runs from that completion to the next such one; the threads' intervals of the same
    /// number are added up. Their ops add up to `ops` exactly. Absent (not written) when none were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalFigures>,
    /// The sink driver's target (/dev/iolab_sink): its personality and counters over the pass, checked
    /// against iolab's own counts (see `driver/sink.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<crate::sink_device::SinkFigures>,
    /// io_uring `--iopoll`: whether the completions were really polled (the device's `queue/io_poll` and
    /// its interrupts around the timed span; see `measure/iopoll.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iopoll: Option<crate::measure::iopoll::IopollFigures>,
    /// One clock read every N ops (`--clock-every`, or iolab's choice where a read is a system call): why
    /// the result has no per-op latency. Written only when so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sparse_clock: Option<crate::measure::clock::SparseClock>,
    /// `--op-log`: the timed pass's ops per thread, for per-op log files (fio's write_*_log); in memory
    /// only, never in the JSON.
    #[serde(skip)]
    pub op_log: Option<std::sync::Arc<crate::measure::op_log::OpLog>>,
}

/// One interval of a run's time series (`RunResult::intervals`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IntervalFigures {
    /// Seconds from the run's first op start (over all threads) to the interval's start and end: the
    /// earliest start and the latest end of the threads' intervals of this number. The end is the
    /// completion that crossed the boundary (or the thread's last op and final flush).
    pub start_s: f64,
    pub end_s: f64,
    /// Ops completed in the interval (all threads) and the bytes they moved.
    pub ops: u64,
    pub bytes: u64,
    /// ops and bytes over (end_s - start_s).
    pub iops: f64,
    pub mib_s: f64,
    /// Per-op latency of the ops completed in the interval (as `latency`), from a histogram of 32
    /// buckets per power of two (within 1.6%), each read at its middle; max within 0.1%. Zero when the
    /// interval has no ops; absent when the run timed no op (`latency_unavailable` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p50_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p90_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p99_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_max_ns: Option<f64>,
}

/// `--warmup`: what ran before the timed span, on the same target and region, with an instance of the
/// method of its own per thread (made, used and closed before the timed pass's own).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct WarmupFigures {
    /// Operations over all threads.
    pub ops: u64,
    /// Bytes they moved (a stream's peer received these too: its byte count is the run's plus these).
    pub bytes: u64,
    /// The longest thread's warm-up, in seconds (iolab's clock).
    pub wall_s: f64,
    /// What was asked: "N ops" or "S s".
    pub asked: String,
}

/// What an offload run measured (see `offload/mod.rs`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OffloadFigures {
    /// kernel, broker or native.
    pub path: String,
    /// Broker path: spin, spin-then-sleep or eventfd.
    pub doorbell: Option<String>,
    /// What confined the client: "seccomp filter (read, write, exit, exit_group ...)" or "none".
    pub sandbox: String,
    /// How its requests reached the kernel: ring setup, registrations, restrictions or policy.
    pub service: String,
    pub client_pid: i32,
    pub client_cpu: Option<u32>,
    /// The CPU of the SQPOLL thread or the broker thread.
    pub service_cpu: Option<u32>,
    pub batch: u32,
    /// How the client was timed (it cannot read a clock).
    pub timing: String,
    /// Mean time per request (wall / ops) and per round trip of one batch (wall / batches), ns.
    pub ns_per_op: f64,
    pub round_trip_ns: f64,
    /// The same in TSC cycles (ns x the calibrated TSC rate), when iolab's clock is the TSC.
    pub tsc_ghz: Option<f64>,
    pub cycles_per_op: Option<f64>,
    pub round_trip_cycles: Option<f64>,
    /// Requests completed per second.
    pub ops_per_s: f64,
    /// Per-request time of each sampling window (every request gets its window's mean), ns.
    pub window_ns: crate::measure::hist::Summary,
    pub window_ms: f64,
    pub windows: u64,
    /// Doorbells the client rang while timed (eventfd writes because the server slept), and how often the
    /// server was woken over the run (the kernel path's SQ_WAKEUP calls, the broker's returns from its
    /// sleep; a burst of bells while it wakes counts once: the eventfd adds them up).
    pub doorbells: u64,
    /// Doorbells over the client's whole life (start-up and the attack phase included).
    #[serde(default)]
    pub doorbells_total: u64,
    pub server_wakeups: u64,
    /// System calls the client made during the timed workload (counted by the client itself: doorbells and
    /// the done signal; io_uring_enter on the native path), and in its whole sandboxed life.
    pub client_syscalls_timed: u64,
    pub client_syscalls_total: u64,
    /// The same, counted by the kernel: raw_syscalls:sys_exit on the client from just before it entered
    /// the sandbox (the read of iolab's start byte and the prctl that sandboxed it, then every call
    /// inside; exit(2) never returns, so it is not counted). `None` with the reason when not countable.
    #[serde(default)]
    pub client_syscalls_kernel: Option<u64>,
    #[serde(default)]
    pub client_syscalls_kernel_note: String,
    /// CPU of the serving threads (SQPOLL thread and doorbell thread, or broker thread and its io-wq
    /// workers) over the timed span, exact on-CPU seconds from schedstat, and as a share of the wall time.
    pub service_tasks: Vec<HelperCpu>,
    pub service_cpu_s: f64,
    /// None where the span is too short to put CPU time against it (`units::MIN_CPU_SPAN_S`), or the
    /// threads' on-CPU time is more than they could spend in it (a run of 0.2 ms showed 2.13 of a core
    /// for one thread: its schedstat reads are around the span, not at its ends).
    #[serde(default)]
    pub service_cpu_share: Option<f64>,
    /// The client's own CPU over its life (wait4), seconds.
    pub client_user_s: f64,
    pub client_sys_s: f64,
    /// Requests refused: by the broker's policy (broker path), or attack requests that got an error
    /// completion (kernel path).
    pub refusals: u64,
    /// Broker path: requests executed through the broker's io_uring.
    pub broker_executed: Option<u64>,
    pub attacks: Vec<AttackOutcome>,
    /// The parent's private canary page was unchanged after the run.
    pub canary_intact: bool,
    /// The parent's unrelated open file (made only when attacks run) was unchanged.
    pub unrelated_file_intact: Option<bool>,
    /// The seed thesis's figures, to read ours against (Figure 4.3, with user_data).
    pub seed_native_cycles: u64,
    pub seed_offloaded_cycles: u64,
    pub seed_note: String,
    /// What the client measured of itself: cycles around each request and each round trip (`None`, with
    /// the reason in the note, where it has no cycle counter or never reached its workload).
    #[serde(default)]
    pub client_cycles: Option<crate::measure::client_cycles::ClientCycles>,
    #[serde(default)]
    pub client_cycles_note: String,
    /// Times the server thread (SQPOLL or broker) went to sleep over the timed span: its voluntary context
    /// switches. A request that finds the server asleep needs a wake-up.
    #[serde(default)]
    pub server_sleeps: Option<u64>,
    /// Kernel path, `--sq-sleep`: the client let the SQ thread idle out before every round trip.
    #[serde(default)]
    pub sq_sleep: bool,
    /// `--no-user-data`: the client's NOP SQEs were written without their user_data (Figure 4.2).
    #[serde(default)]
    pub no_user_data: bool,
    /// `--offload-partition vm`: the guest the client ran in (null for a forked client).
    #[serde(default)]
    pub partition: Option<PartitionFigures>,
}

/// Where a partition run's client ran: the guest, the shared file, how its server was woken.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PartitionFigures {
    /// "tcg" (emulated: the client's figures show behaviour, not speed) or "kvm".
    pub accelerator: String,
    pub emulated: bool,
    /// Seconds from qemu's start to the guest's session loop being ready (once per iolab process).
    pub boot_s: f64,
    /// The host file behind the guest's ivshmem BAR, and the BAR's size.
    pub shared_file: String,
    pub bar_bytes: u64,
    /// Which session of this guest the run was (1 = the guest's first).
    pub session: u64,
    /// How the guest wakes its server.
    pub wake: String,
    /// Kernel path: wake requests the guest wrote (the SQ thread slept), and the host thread's SQ_WAKEUPs.
    pub wake_requests: u64,
    pub host_wakeups: u64,
}

/// One forbidden request and what became of it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AttackOutcome {
    pub attack: String,
    /// What the client asked for.
    pub request: String,
    /// Its completion result (-errno when refused).
    pub result: i64,
    pub refused: bool,
    /// What refused it.
    pub refused_by: String,
    /// Rewrite attack: tries, refused (the broker copied the rewritten request), ran as first published
    /// (the broker copied it before the rewrite).
    pub tries: Option<u64>,
    pub refused_tries: Option<u64>,
    pub original_ran: Option<u64>,
    /// Rewrite attack: tries where the broker's copy was torn between the two versions into some other
    /// request its policy allows, which it ran (harmless by the policy's definition).
    #[serde(default)]
    pub other_allowed_ran: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(depth: usize, submissions: u64) -> UringStats {
        let mut h = vec![0; 129];
        h[depth] = submissions;
        UringStats {
            inflight_histogram: h,
            batch_histogram: vec![0; 129],
            ..Default::default()
        }
    }

    #[test]
    fn requests_in_flight_are_per_ring_and_summed_over_the_rings() {
        // The course report's case: 8 rings of QD 128, each 81 deep on average. Little's law needs all
        // eight (648), not one ring's 81.
        let f = UringFigures::merge(&vec![ring(81, 1000); 8]).unwrap();
        assert_eq!(f.mean_inflight, 81.0);
        assert_eq!(f.mean_inflight_all_rings, Some(648.0));
        assert_eq!(f.inflight_all_rings(8), 648.0);
        // A shared ring: one thread collects the ring's figures, the others report none.
        let mut shared = vec![ring(40, 500)];
        shared.extend(vec![ring(0, 0); 7]);
        let f = UringFigures::merge(&shared).unwrap();
        assert_eq!((f.mean_inflight, f.inflight_all_rings(8)), (40.0, 40.0));
        // Older results carry the per-ring mean only: the design says how many rings there were.
        let old = |design: &str| UringFigures {
            design: design.into(),
            mean_inflight: 81.0,
            ..Default::default()
        };
        assert_eq!(old("per-thread").inflight_all_rings(8), 648.0);
        assert_eq!(old("shared").inflight_all_rings(8), 81.0);
    }
}
