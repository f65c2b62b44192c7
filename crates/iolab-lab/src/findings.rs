//! What a result means: figures derived from the kernel's counts, and findings, short sentences each
//! carrying the figure that triggered it.
//!
//! Every rule lives here, works on [`Facts`] (a few numbers pulled out of a result, so each rule can be
//! tested with figures made up on the spot), and has one test that triggers it and one that does not.

use iolab_engine::measure::profile::ProfileFacts;
use iolab_engine::result::{Derived, Finding, RunResult};
use iolab_engine::sink_device::Personality;
use iolab_engine::spec::{MethodKind, OpKind};
use iolab_engine::target::TargetKind;

/// Figures derived from the kernel's counters and iolab's own.
pub fn derive(r: &RunResult) -> Derived {
    let k = &r.kernel;
    let mut d = Derived::default();
    let tp_ops = k.tracepoint_pass_ops.unwrap_or(0);
    let per = |x: u64, n: u64| {
        if n > 0 {
            Some(x as f64 / n as f64)
        } else {
            None
        }
    };
    if let Some(se) = k.value("raw_syscalls:sys_enter") {
        // iolab's clock reads, where each was a system call, are not the method's.
        let clock = k.tracepoint_pass_clock_calls.unwrap_or(0);
        d.syscalls_per_op = per(se.saturating_sub(clock), tp_ops);
    }
    let submitted = k
        .value(iolab_engine::measure::counters::SUBMIT)
        .or(k.value(iolab_engine::measure::counters::SUBMIT_OLD));
    if let (Some(req), Some(enters)) = (submitted, k.syscall("io_uring_enter")) {
        if r.spec.method.info().io_uring_requests {
            d.kernel_requests_per_enter = per(req, enters);
        }
    }
    if let (Some(e), Some(q)) = (r.syscalls.uring_enters, r.syscalls.uring_requests) {
        d.iolab_requests_per_enter = per(q, e);
    }
    // Where the kernel has neither submission tracepoint, the requests iolab itself submitted in the
    // counted pass are the denominator.
    let requests = submitted.or(k
        .tracepoint_pass_uring_requests
        .filter(|_| r.spec.method.info().io_uring_requests));
    if let (Some(req), Some(punt)) = (requests, k.value("io_uring:io_uring_queue_async_work")) {
        if req > 0 {
            d.punted_fraction = Some(punt as f64 / req as f64);
        }
    }
    if let Some(cs) = k.value("context-switches") {
        d.ctx_switches_per_op = per(cs, r.ops);
    }
    if let (Some(mi), Some(ma)) = (k.value("minor-faults"), k.value("major-faults")) {
        let mib = r.bytes as f64 / (1u64 << 20) as f64;
        if mib > 0.0 {
            d.page_faults_per_mib = Some((mi + ma) as f64 / mib);
        }
    }
    // Cross-checks: what the kernel saw against what iolab knows it did in the counted pass.
    if let (Some(req), Some(mine)) = (submitted, k.tracepoint_pass_uring_requests) {
        d.crosscheck.push(if req == mine {
            format!("io_uring requests: the kernel took {req}, iolab submitted {mine}: agree")
        } else {
            format!("io_uring requests: the kernel took {req}, iolab submitted {mine}: DISAGREE")
        });
    }
    if let (Some(enters_k), Some(enters_mine)) =
        (k.syscall("io_uring_enter"), k.tracepoint_pass_uring_enters)
    {
        if r.spec.method.info().io_uring_requests {
            d.crosscheck.push(format!(
                "io_uring_enter calls: kernel {enters_k}, iolab {enters_mine}{}",
                if enters_k == enters_mine {
                    ": agree"
                } else {
                    ""
                }
            ));
        }
    }
    let call = r
        .spec
        .method
        .info()
        .per_op_call
        .map(|(w, rd)| match r.spec.op {
            OpKind::Write => w,
            OpKind::Read => rd,
        });
    if let (Some(name), Some(n)) = (call, call.and_then(|c| k.syscall(c))) {
        d.crosscheck.push(format!(
            "{name} calls: kernel {n}, ops {tp_ops}{}",
            if n >= tp_ops { "" } else { ": FEWER than ops" }
        ));
    }
    // The sink driver's own counts of the timed pass against iolab's.
    if let Some(s) = &r.sink {
        d.crosscheck.extend(s.checks.iter().map(|c| c.text()));
    }
    d
}

impl Facts {
    /// The run's method, from the registry.
    fn info(&self) -> Option<&'static iolab_engine::method::MethodInfo> {
        self.method.map(|m| m.info())
    }
}

/// The numbers the rules look at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub method: Option<MethodKind>,
    pub target: Option<TargetKind>,
    pub direct: bool,
    pub qd: u32,
    pub ns_per_op: f64,
    pub wall_s: f64,
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
    /// Kernel read/write-family syscalls per op (/proc/self/io).
    pub rw_syscalls_per_op: f64,
    pub steal_s: f64,
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
    pub partition: Option<crate::findings_partition::PartitionFacts>,
}

/// What the rules look at of a run on the sink driver.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SinkFacts {
    pub personality: Option<Personality>,
    pub worker_share: Option<f64>,
    pub disagree: Vec<String>,
}

impl Facts {
    pub fn of(r: &RunResult) -> Facts {
        let helper = |prefix: &str| -> f64 {
            r.cpu
                .helpers
                .iter()
                .filter(|h| h.comm.starts_with(prefix))
                .map(|h| h.oncpu_s.unwrap_or(h.user_s + h.sys_s))
                .sum()
        };
        let tp_missing = r
            .kernel
            .tracepoints
            .iter()
            .find(|c| c.name == "raw_syscalls:sys_enter" && c.value.is_none())
            .and_then(|c| c.unavailable.clone());
        Facts {
            method: Some(r.spec.method),
            target: Some(r.target.kind),
            direct: r.spec.direct,
            qd: r.spec.qd,
            ns_per_op: r.ns_per_op,
            wall_s: r.wall_s,
            syscalls_per_op: r.derived.syscalls_per_op,
            kernel_requests_per_enter: r
                .derived
                .kernel_requests_per_enter
                .or(r.derived.iolab_requests_per_enter),
            punted_fraction: r.derived.punted_fraction,
            ctx_switches_per_op: r.derived.ctx_switches_per_op,
            page_faults_per_mib: r.derived.page_faults_per_mib,
            worker_cpu_s: r.cpu.workers.user_s + r.cpu.workers.sys_s,
            iowq_cpu_s: helper("iou-wrk-"),
            sqpoll_cpu_s: helper("iou-sqp-"),
            rw_syscalls_per_op: r.syscalls.kernel_rw_per_op,
            steal_s: r.cpu.steal_worker_cpus_s.unwrap_or(r.cpu.steal_all_cpus_s),
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
                .map(|a| a.inline_fraction),
            write: r.spec.op == OpKind::Write,
            bs: r.spec.bs,
            profile: r.profile.as_ref().map(ProfileFacts::of),
            sqpoll: r.spec.ring.sqpoll,
            uring_enters: r.uring.as_ref().map(|u| u.enters),
            uring_requests: r.uring.as_ref().map(|u| u.requests),
            submissions_without_syscall: r.uring.as_ref().map(|u| u.submissions_without_syscall),
            sink: r.sink.as_ref().map(|s| SinkFacts {
                personality: s.personality,
                worker_share: s.worker_share,
                disagree: s
                    .checks
                    .iter()
                    .filter(|c| !c.agrees)
                    .map(|c| c.text())
                    .collect(),
            }),
            iopoll: r.iopoll.as_ref().map(|p| (p.polled, p.verdict.clone())),
            partition: crate::findings_partition::PartitionFacts::of(r),
        }
    }
}

type Rule = (&'static str, fn(&Facts) -> Option<String>);

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Fewer samples than this say little: the profile rules stay quiet.
const PROFILE_MIN_SAMPLES: u64 = 50;

/// The profile's facts, when it has enough samples to say something.
fn profiled(f: &Facts) -> Option<&ProfileFacts> {
    f.profile
        .as_ref()
        .filter(|p| p.samples >= PROFILE_MIN_SAMPLES)
}

/// What a copy-bound run copies, in words.
fn copy_words(f: &Facts) -> String {
    let size = iolab_engine::units::fmt_size(f.bs);
    let (what, way) = match (f.target, f.write) {
        (Some(TargetKind::File | TargetKind::BlockDevice), true) => {
            ("writes", "copying into the page cache")
        }
        (Some(TargetKind::File | TargetKind::BlockDevice), false) => {
            ("reads", "copying out of the page cache")
        }
        (_, true) => ("writes", "copying into the kernel's buffers"),
        (_, false) => ("reads", "copying out of the kernel's buffers"),
    };
    format!("{size} {what} are bound by {way}")
}

/// The sink driver's share of calls made by io-wq workers, for io_uring's requests (uring_cmd is never
/// punted: the driver completes each command when it is issued).
fn sink_punts(f: &Facts) -> Option<f64> {
    (f.method == Some(MethodKind::IoUring))
        .then(|| f.sink.as_ref()?.worker_share)
        .flatten()
}

/// Why io_uring punted requests to the sink driver, in the driver's terms.
fn sink_why(f: &Facts) -> &'static str {
    match f.sink.as_ref().and_then(|s| s.personality) {
        Some(Personality::Legacy) => {
            "the driver has no write_iter/FMODE_NOWAIT, as with --sink legacy and the Pi thesis's driver: io_uring \
             cannot complete it inline, so each request waits for an io-wq worker; --sink nowait completes them \
             inline"
        }
        _ => "the driver could not complete the requests inline",
    }
}

/// Every rule, in the order findings are printed.
pub const RULES: &[Rule] = &[
    (
        "partition_round_trip",
        crate::findings_partition::round_trip,
    ),
    ("iopoll", |f| {
        let (polled, why) = f.iopoll.as_ref()?;
        Some(match polled {
            Some(true) => format!("IOPOLL worked: {why}"),
            Some(false) => format!("IOPOLL did not poll: {why}"),
            None => format!("IOPOLL unproven: {why}"),
        })
    }),
    ("io_wq_punts", |f| {
        let p = f.punted_fraction.or(sink_punts(f))?;
        (p >= 0.5).then(|| {
            let why = match (f.target, f.direct) {
                (Some(TargetKind::Sink), _) => sink_why(f),
                (Some(TargetKind::File), false) => "buffered file I/O cannot complete inline",
                (Some(TargetKind::File), true) => {
                    "O_DIRECT into blocks the filesystem must still allocate, or that are still in the page cache, \
                     cannot be issued without blocking: preallocate or overwrite"
                }
                _ => "the target could not complete the requests inline",
            };
            format!(
                "{} of requests were punted to io-wq worker threads ({why}): every such op pays a hand-off to a \
                 kernel thread and a wake-up (measured {:.1} µs per op at queue depth {})",
                pct(p),
                f.ns_per_op / 1e3,
                f.qd
            )
        })
    }),
    ("sink_nowait_inline", |f| {
        let s = f.sink.as_ref()?;
        let share = s.worker_share?;
        let inline = f.punted_fraction.unwrap_or(share) < 0.01 && share < 0.01;
        (f.method == Some(MethodKind::IoUring) && s.personality == Some(Personality::Nowait) && inline).then(|| {
            "io_uring completed every request to the sink driver inline (no io-wq punt; the driver saw no call \
             from an io-wq worker): its write_iter/read_iter and FMODE_NOWAIT (--sink nowait) let io_uring try \
             without blocking"
                .to_string()
        })
    }),
    ("sink_counts_disagree", |f| {
        let s = f.sink.as_ref()?;
        (!s.disagree.is_empty()).then(|| {
            format!(
                "warning: the sink driver's counts disagree with iolab's ({}): another program used \
                 /dev/iolab_sink during the run, or ops did not reach the driver as iolab expects",
                s.disagree.join("; ")
            )
        })
    }),
    ("aio_not_asynchronous", |f| {
        let x = f.aio_inline_fraction?;
        (x >= 0.95).then(|| {
            let why = if f.direct {
                "this target completes even O_DIRECT requests while submitting them"
            } else {
                "buffered I/O: native AIO is only asynchronous with O_DIRECT"
            };
            format!(
                "native AIO completed {} of requests inside io_submit: not asynchronous on this target ({why}); the \
                 --qd {} requests were never in flight together",
                pct(x),
                f.qd
            )
        })
    }),
    ("batching_worked", |f| {
        let s = f.syscalls_per_op?;
        let per_enter = f.kernel_requests_per_enter?;
        // With SQPOLL few syscalls say nothing about batches: see sqpoll_submitted.
        (f.info().is_some_and(|m| m.io_uring_requests) && !f.sqpoll && s <= 0.1).then(|| {
            format!("syscalls per op {s:.3}: batching worked ({per_enter:.1} requests per io_uring_enter)")
        })
    }),
    ("sqpoll_submitted", |f| {
        let (req, free) = (f.uring_requests?, f.submissions_without_syscall?);
        (f.sqpoll && req > 0 && free > 0).then(|| {
            format!(
                "the SQPOLL kernel thread took {free} of {req} requests ({}) from the ring without any \
                 io_uring_enter: SQPOLL submits without a syscall, it does not batch; the {} io_uring_enter \
                 calls iolab made woke the thread or waited for completions{}",
                pct(free as f64 / req as f64),
                f.uring_enters.unwrap_or(0),
                f.syscalls_per_op
                    .map(|s| format!(" ({s:.3} syscalls per op in all)"))
                    .unwrap_or_default()
            )
        })
    }),
    ("one_enter_per_request", |f| {
        let b = f.kernel_requests_per_enter?;
        (f.info().is_some_and(|m| m.io_uring_requests) && b <= 1.05).then(|| {
            format!(
                "{b:.2} requests per io_uring_enter: io_uring pays one syscall per op like write(), plus the ring's \
                 own work; raise --qd and --batch to amortise it"
            )
        })
    }),
    ("helper_threads_did_the_work", |f| {
        let h = f.iowq_cpu_s;
        (h >= 0.01 && h > f.worker_cpu_s).then(|| {
            format!(
                "io-wq worker threads used {h:.3} s of CPU, more than iolab's own threads ({:.3} s): the work moved to the kernel's helpers",
                f.worker_cpu_s
            )
        })
    }),
    ("sqpoll_burns_a_core", |f| {
        let s = f.sqpoll_cpu_s;
        (s >= 0.01 && f.wall_s > 0.0).then(|| {
            format!(
                "the SQPOLL thread used {:.2} CPU over the run ({s:.3} s of {:.3} s): it spins while awake",
                s / f.wall_s,
                f.wall_s
            )
        })
    }),
    ("context_switch_per_op", |f| {
        let c = f.ctx_switches_per_op?;
        (c >= 0.5).then(|| {
            format!("{c:.2} context switches per op: ops sleep and wake (waiting for completions or hand-offs to helper threads)")
        })
    }),
    ("page_fault_per_page", |f| {
        let p = f.page_faults_per_mib?;
        (p >= 128.0).then(|| {
            format!(
                "{p:.0} page faults per MiB (one per 4 KiB page is 256): the first touch of each page costs a fault{}",
                if f.info().is_some_and(|m| m.maps) { "; mmap pays them instead of syscalls" } else { "" }
            )
        })
    }),
    ("stdio_coalesced", |f| {
        (f.info().is_some_and(|m| m.user_buffered) && f.rw_syscalls_per_op > 0.0 && f.rw_syscalls_per_op < 0.5).then(|| {
            format!(
                "stdio turned {:.0} ops into one read/write syscall ({:.4} syscalls per op): the buffer, not the kernel, set the pace",
                1.0 / f.rw_syscalls_per_op,
                f.rw_syscalls_per_op
            )
        })
    }),
    ("syscall_is_the_cost", |f| {
        let s = f.syscalls_per_op?;
        // Methods that make one system call per op.
        let sync = f.info().is_some_and(|m| m.per_op_call.is_some());
        (sync && (0.95..=1.1).contains(&s) && matches!(f.target, Some(TargetKind::DevNull | TargetKind::DevZero))).then(|| {
            format!(
                "{s:.3} syscalls per op on a device that does no work: the {} per op is the cost of one system call on this machine",
                iolab_engine::units::fmt_ns(f.ns_per_op)
            )
        })
    }),
    ("hypervisor_steal", |f| {
        // Steal is counted in 10 ms ticks: below 5 ticks the share is mostly rounding.
        (f.wall_s > 0.0 && f.steal_s >= 0.05 && f.steal_s / f.wall_s >= 0.1).then(|| {
            format!(
                "the hypervisor stole {} of the run's time ({:.2} s, /proc/stat): times are inflated and CPU figures miss it; repeat before trusting a comparison",
                pct(f.steal_s / f.wall_s),
                f.steal_s
            )
        })
    }),
    ("counters_unavailable", |f| {
        f.tracepoints_unavailable.as_ref().map(|why| {
            format!("kernel tracepoints unavailable ({why}): syscall figures are iolab's own count")
        })
    }),
    ("profile_copy_bound", |f| {
        let p = profiled(f)?;
        (p.kernel_share > 0.0 && p.copy_share / p.kernel_share >= 0.3).then(|| {
            format!(
                "{} of system time in copying to/from user memory ({}, {} of all samples): {}{}",
                pct(p.copy_share / p.kernel_share),
                p.top_copy.as_deref().unwrap_or("copy functions"),
                pct(p.copy_share),
                copy_words(f),
                if f.direct || f.target != Some(TargetKind::File) {
                    ""
                } else {
                    "; O_DIRECT avoids the copy"
                }
            )
        })
    }),
    ("profile_io_wq_work", |f| {
        let p = profiled(f)?;
        let (func, share) = p.iowq_focus.as_ref()?;
        (p.iowq_share >= 0.2).then(|| {
            format!(
                "io-wq workers took {} of the samples and spent {} of theirs in {func}: the requests ran in the \
                 kernel's helper threads, not in the thread that submitted them",
                pct(p.iowq_share),
                pct(*share)
            )
        })
    }),
    ("profile_syscall_overhead", |f| {
        let p = profiled(f)?;
        (p.syscall_share >= 0.3).then(|| {
            format!(
                "{} of the samples in syscall entry and exit: the cost of crossing into the kernel dominates; fewer, \
                 larger calls or batching (io_uring) pay it less often",
                pct(p.syscall_share)
            )
        })
    }),
    ("profile_scheduler", |f| {
        let p = profiled(f)?;
        (p.sched_share >= 0.25).then(|| {
            format!(
                "{} of the samples in the scheduler (switching, waking, idling): threads sleep and wake instead of \
                 working",
                pct(p.sched_share)
            )
        })
    }),
    ("profile_inline_perturbs", |f| {
        let p = f.profile.as_ref()?;
        p.inline.then(|| {
            format!(
                "the timed pass was sampled (--profile inline, {} Hz): its timings include the sampling's cost",
                p.hz
            )
        })
    }),
    ("inline_counting_perturbs", |f| {
        f.inline_counting.then(|| {
            "tracepoints were on during the timed pass (--count inline): each syscall cost more (~30% on a 90 ns syscall)".to_string()
        })
    }),
];

/// Findings for a result, in rule order.
pub fn findings(r: &RunResult) -> Vec<Finding> {
    findings_of(&Facts::of(r))
}

pub fn findings_of(f: &Facts) -> Vec<Finding> {
    RULES
        .iter()
        .filter_map(|(name, rule)| {
            rule(f).map(|text| Finding {
                rule: (*name).to_string(),
                text,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fired(f: &Facts) -> Vec<String> {
        findings_of(f).into_iter().map(|x| x.rule).collect()
    }

    /// A quiet baseline that triggers nothing.
    fn base() -> Facts {
        Facts {
            method: Some(MethodKind::Psync),
            target: Some(TargetKind::File),
            qd: 1,
            ns_per_op: 1000.0,
            wall_s: 1.0,
            syscalls_per_op: Some(1.0),
            rw_syscalls_per_op: 1.0,
            worker_cpu_s: 0.9,
            ..Default::default()
        }
    }

    fn check(rule: &str, on: Facts, off: Facts) {
        assert!(
            fired(&on).contains(&rule.to_string()),
            "{rule} should fire: {on:?}"
        );
        assert!(
            !fired(&off).contains(&rule.to_string()),
            "{rule} should not fire: {off:?}"
        );
    }

    #[test]
    fn baseline_is_quiet() {
        assert!(fired(&base()).is_empty(), "{:?}", findings_of(&base()));
    }

    #[test]
    fn io_wq_punts() {
        let on = Facts {
            method: Some(MethodKind::IoUring),
            punted_fraction: Some(0.98),
            ..base()
        };
        let text = &findings_of(&on)[0].text;
        assert!(
            text.starts_with("98% of requests were punted to io-wq"),
            "{text}"
        );
        assert!(text.contains("buffered file I/O cannot complete inline"));
        check(
            "io_wq_punts",
            on.clone(),
            Facts {
                punted_fraction: Some(0.0),
                ..on
            },
        );
    }

    #[test]
    fn sink_personalities_say_why_io_uring_punted_or_not() {
        let sink = |p: Personality, share: f64| Facts {
            method: Some(MethodKind::IoUring),
            target: Some(TargetKind::Sink),
            sink: Some(SinkFacts {
                personality: Some(p),
                worker_share: Some(share),
                disagree: vec![],
            }),
            ..base()
        };
        // Without tracepoints the driver's own count of io-wq calls says it.
        let legacy = sink(Personality::Legacy, 1.0);
        let text = &findings_of(&legacy)[0].text;
        assert!(
            text.starts_with("100% of requests were punted to io-wq"),
            "{text}"
        );
        assert!(
            text.contains("the driver has no write_iter/FMODE_NOWAIT"),
            "{text}"
        );
        check(
            "io_wq_punts",
            legacy.clone(),
            sink(Personality::Nowait, 0.0),
        );
        check("sink_nowait_inline", sink(Personality::Nowait, 0.0), legacy);
        // uring_cmd is never punted: the rule is about io_uring's reads and writes.
        let cmd = Facts {
            method: Some(MethodKind::UringCmd),
            ..sink(Personality::Legacy, 1.0)
        };
        assert!(!fired(&cmd).contains(&"io_wq_punts".to_string()));
    }

    #[test]
    fn sink_counts_disagree() {
        let on = Facts {
            target: Some(TargetKind::Sink),
            sink: Some(SinkFacts {
                personality: Some(Personality::Legacy),
                worker_share: Some(0.0),
                disagree: vec!["sink driver write calls: driver 7, iolab 5: DISAGREE".into()],
            }),
            ..base()
        };
        let text = &findings_of(&on)[0].text;
        assert!(
            text.starts_with("warning: the sink driver's counts disagree"),
            "{text}"
        );
        let mut off = on.clone();
        off.sink.as_mut().unwrap().disagree.clear();
        check("sink_counts_disagree", on, off);
    }

    #[test]
    fn aio_not_asynchronous() {
        let a = Facts {
            method: Some(MethodKind::Aio),
            qd: 32,
            ..base()
        };
        let on = Facts {
            aio_inline_fraction: Some(1.0),
            ..a.clone()
        };
        assert!(findings_of(&on)[0]
            .text
            .starts_with("native AIO completed 100% of requests inside io_submit"));
        check(
            "aio_not_asynchronous",
            on,
            Facts {
                aio_inline_fraction: Some(0.04),
                ..a
            },
        );
    }

    #[test]
    fn batching_and_its_absence() {
        let u = Facts {
            method: Some(MethodKind::IoUring),
            ..base()
        };
        check(
            "batching_worked",
            Facts {
                syscalls_per_op: Some(0.03),
                kernel_requests_per_enter: Some(32.0),
                ..u.clone()
            },
            Facts {
                syscalls_per_op: Some(1.0),
                ..u.clone()
            },
        );
        // SQPOLL saves the syscalls without batching: said so, never "batching worked".
        let sq = Facts {
            sqpoll: true,
            syscalls_per_op: Some(0.0),
            kernel_requests_per_enter: Some(1_000_000.0),
            uring_enters: Some(1),
            uring_requests: Some(20_000),
            submissions_without_syscall: Some(19_999),
            ..u.clone()
        };
        let fired_sq = fired(&sq);
        assert!(
            !fired_sq.contains(&"batching_worked".to_string()),
            "{fired_sq:?}"
        );
        let text = findings_of(&sq)
            .into_iter()
            .find(|x| x.rule == "sqpoll_submitted")
            .unwrap()
            .text;
        assert!(
            text.starts_with("the SQPOLL kernel thread took 19999 of 20000 requests (100%) from the ring without any io_uring_enter")
                && text.contains("it does not batch"),
            "{text}"
        );
        check(
            "sqpoll_submitted",
            sq.clone(),
            Facts {
                sqpoll: false,
                ..sq
            },
        );
        check(
            "one_enter_per_request",
            Facts {
                kernel_requests_per_enter: Some(1.0),
                ..u.clone()
            },
            Facts {
                kernel_requests_per_enter: Some(8.0),
                ..u
            },
        );
    }

    #[test]
    fn helper_threads_and_sqpoll() {
        check(
            "helper_threads_did_the_work",
            Facts {
                iowq_cpu_s: 0.5,
                worker_cpu_s: 0.1,
                ..base()
            },
            Facts {
                iowq_cpu_s: 0.05,
                worker_cpu_s: 0.1,
                ..base()
            },
        );
        check(
            "sqpoll_burns_a_core",
            Facts {
                sqpoll_cpu_s: 1.0,
                ..base()
            },
            Facts {
                sqpoll_cpu_s: 0.0,
                ..base()
            },
        );
    }

    #[test]
    fn switches_faults_stdio_syscalls() {
        check(
            "context_switch_per_op",
            Facts {
                ctx_switches_per_op: Some(2.0),
                ..base()
            },
            Facts {
                ctx_switches_per_op: Some(0.001),
                ..base()
            },
        );
        check(
            "page_fault_per_page",
            Facts {
                page_faults_per_mib: Some(256.0),
                method: Some(MethodKind::Mmap),
                ..base()
            },
            Facts {
                page_faults_per_mib: Some(0.5),
                ..base()
            },
        );
        let st = Facts {
            method: Some(MethodKind::Stdio),
            ..base()
        };
        check(
            "stdio_coalesced",
            Facts {
                rw_syscalls_per_op: 0.001,
                ..st.clone()
            },
            Facts {
                rw_syscalls_per_op: 1.0,
                ..st
            },
        );
        let null = Facts {
            target: Some(TargetKind::DevNull),
            ..base()
        };
        check(
            "syscall_is_the_cost",
            null.clone(),
            Facts {
                syscalls_per_op: Some(2.0),
                ..null
            },
        );
    }

    #[test]
    fn steal_and_counting() {
        check(
            "hypervisor_steal",
            Facts {
                steal_s: 0.3,
                ..base()
            },
            Facts {
                steal_s: 0.01,
                ..base()
            },
        );
        // One 10 ms tick over a 14 ms run is rounding, not a 71% steal.
        check(
            "hypervisor_steal",
            Facts {
                steal_s: 0.5,
                ..base()
            },
            Facts {
                steal_s: 0.01,
                wall_s: 0.014,
                ..base()
            },
        );
        check(
            "counters_unavailable",
            Facts {
                tracepoints_unavailable: Some("EACCES".into()),
                ..base()
            },
            base(),
        );
        check(
            "inline_counting_perturbs",
            Facts {
                inline_counting: true,
                ..base()
            },
            base(),
        );
    }

    fn profile(p: ProfileFacts) -> Facts {
        Facts {
            profile: Some(ProfileFacts {
                samples: 1000,
                hz: 997,
                ..p
            }),
            ..base()
        }
    }

    #[test]
    fn profile_rules() {
        let copy = ProfileFacts {
            kernel_share: 0.9,
            copy_share: 0.52,
            top_copy: Some("copy_folio_from_iter_atomic".into()),
            ..Default::default()
        };
        let on = Facts {
            bs: 1 << 20,
            write: true,
            ..profile(copy.clone())
        };
        let text = &findings_of(&on)[0].text;
        assert!(
            text.starts_with("58% of system time in copying to/from user memory (copy_folio_from_iter_atomic, 52% of all samples): 1 MiB writes are bound by copying into the page cache"),
            "{text}"
        );
        let few = Facts {
            profile: Some(ProfileFacts {
                samples: 10,
                ..on.profile.clone().unwrap()
            }),
            ..on.clone()
        };
        assert!(!fired(&few).contains(&"profile_copy_bound".to_string()));
        let little = ProfileFacts {
            copy_share: 0.05,
            ..copy
        };
        check("profile_copy_bound", on, profile(little));
        let wq = ProfileFacts {
            iowq_share: 0.8,
            iowq_focus: Some(("ext4_buffered_write_iter".into(), 0.71)),
            ..Default::default()
        };
        let text = &findings_of(&profile(wq.clone()))[0].text;
        assert!(
            text.starts_with("io-wq workers took 80% of the samples and spent 71% of theirs in ext4_buffered_write_iter"),
            "{text}"
        );
        let idle = ProfileFacts {
            iowq_share: 0.01,
            ..wq.clone()
        };
        check("profile_io_wq_work", profile(wq), profile(idle));
        let sys = |s| ProfileFacts {
            syscall_share: s,
            ..Default::default()
        };
        check(
            "profile_syscall_overhead",
            profile(sys(0.45)),
            profile(sys(0.1)),
        );
        let sched = |s| ProfileFacts {
            sched_share: s,
            ..Default::default()
        };
        check(
            "profile_scheduler",
            profile(sched(0.4)),
            profile(sched(0.05)),
        );
        let inline = ProfileFacts {
            inline: true,
            ..Default::default()
        };
        check(
            "profile_inline_perturbs",
            profile(inline),
            profile(ProfileFacts::default()),
        );
    }

    #[test]
    fn iopoll() {
        let on = Facts {
            method: Some(MethodKind::IoUring),
            iopoll: Some((Some(false), "completions were NOT polled: ...".into())),
            ..base()
        };
        assert!(findings_of(&on)[0]
            .text
            .starts_with("IOPOLL did not poll: completions were NOT"));
        check("iopoll", on.clone(), Facts { iopoll: None, ..on });
    }

    #[test]
    fn a_partition_run_is_read_against_the_thesis() {
        use crate::findings_partition::PartitionFacts;
        let p = PartitionFacts {
            emulated: true,
            accelerator: "tcg".into(),
            path: "kernel".into(),
            batch: 1,
            round_trip_ns: 690_000.0,
            round_trip_cycles: Some(1_791_000.0),
            ops: 2000,
            wake_requests: 2,
            host_wakeups: 2,
            server_share: 0.38,
        };
        let on = Facts {
            partition: Some(p.clone()),
            ..base()
        };
        let text = &findings_of(&on)[0].text;
        assert!(
            text.contains("690.0 µs per round trip = 1791000 cycles (3.67x the thesis's offloaded 487,894, 429x its native 4,170"),
            "{text}"
        );
        assert!(
            text.contains("emulated (QEMU TCG)") && text.contains("slept 2 times"),
            "{text}"
        );
        let kvm = Facts {
            partition: Some(PartitionFacts {
                emulated: false,
                accelerator: "kvm".into(),
                ..p
            }),
            ..base()
        };
        assert!(findings_of(&kvm)[0]
            .text
            .contains("under KVM (hardware virtualization)"));
        check("partition_round_trip", on, base());
    }

    #[test]
    fn every_rule_is_tested() {
        let src = include_str!("findings.rs");
        for (name, _) in RULES {
            assert!(
                src.matches(&format!("\"{name}\"")).count() >= 2,
                "rule {name} has no test"
            );
        }
    }
}
