//! What a result means: figures derived from the kernel's counts, and findings, short sentences each
//! carrying the figure that triggered it.
//!
//! Every rule lives here, works on [`Facts`] (a few numbers pulled out of a result, so each rule can be
//! tested with figures made up on the spot), and has one test that triggers it and one that does not.

mod derive;
pub(crate) mod facts;
mod partition;

pub use derive::{cpu_figures, derive};
pub use facts::{Facts, PartitionFacts, SinkFacts};

use iolab_engine::measure::profile::ProfileFacts;
use iolab_engine::result::{Finding, RunResult};
use iolab_engine::sink_device::Personality;
use iolab_engine::target::TargetKind;

/// A rule: its name, the figures its sentence prints as paths in a record's result (`a|b`: the first
/// the record has, as the rule reads them; cited by the suites' findings), and the rule.
type Rule = (
    &'static str,
    &'static [&'static str],
    fn(&Facts) -> Option<String>,
);

use iolab_engine::units::pct;

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
    f.method
        .is_some_and(|m| m.info().punts)
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
        "sparse_read",
        &["target.sparse.holes", "target.sparse.bytes"],
        |f| {
            let sp = f.sparse?;
            Some(format!(
                "{} of the {} region read are holes of a sparse file: zeros the kernel makes up without the device, so \
                 the rate is not the device's (write the file first)",
                iolab_engine::units::pct1(sp.share()),
                iolab_engine::units::fmt_size(sp.bytes)
            ))
        },
    ),
    (
        "partition_round_trip",
        &[
            "offload.round_trip_ns",
            "offload.round_trip_cycles",
            "offload.batch",
            "offload.partition.wake_requests",
            "offload.partition.host_wakeups",
            "offload.service_cpu_share",
        ],
        partition::round_trip,
    ),
    (
        "iopoll",
        &["iopoll.interrupts", "iopoll.completions"],
        |f| {
            let (polled, why) = f.iopoll.as_ref()?;
            Some(match polled {
                Some(true) => format!("IOPOLL worked: {why}"),
                Some(false) => format!("IOPOLL did not poll: {why}"),
                None => format!("IOPOLL unproven: {why}"),
            })
        },
    ),
    (
        "zero_copy_copied",
        &["uring.zc_copied", "uring.zc_notifs"],
        |f| {
            let (notifs, copied) = f.zero_copy?;
            (notifs > 0 && copied * 2 >= notifs).then(|| {
            let local = if f.target == Some(TargetKind::Tcp) && !f.remote_peer {
                ": iolab's peer is on this machine, and for sends delivered to a local socket the kernel copies \
                 the data after all (the kernel's msg_zerocopy documentation, loopback), so this run shows the \
                 notification's cost, not the copy's saving; a remote peer is needed for that"
            } else {
                ""
            };
            format!(
                "the kernel copied {} of {} zero-copy sends anyway (IORING_NOTIF_USAGE_ZC_COPIED){local}",
                pct(copied as f64 / notifs as f64),
                notifs
            )
        })
        },
    ),
    (
        "io_wq_punts",
        &[
            "derived.punted_fraction|sink.worker_share",
            "ns_per_op",
            "spec.qd",
        ],
        |f| {
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
        },
    ),
    ("sink_nowait_inline", &[], |f| {
        let s = f.sink.as_ref()?;
        let share = s.worker_share?;
        let inline = f.punted_fraction.unwrap_or(share) < 0.01 && share < 0.01;
        (f.method.is_some_and(|m| m.info().punts) && s.personality == Some(Personality::Nowait) && inline).then(|| {
            "io_uring completed every request to the sink driver inline (no io-wq punt; the driver saw no call \
             from an io-wq worker): its write_iter/read_iter and FMODE_NOWAIT (--sink nowait) let io_uring try \
             without blocking"
                .to_string()
        })
    }),
    ("sink_counts_disagree", &[], |f| {
        let s = f.sink.as_ref()?;
        (!s.disagree.is_empty()).then(|| {
            format!(
                "warning: the sink driver's counts disagree with iolab's ({}): another program used \
                 /dev/iolab_sink during the run, or ops did not reach the driver as iolab expects",
                s.disagree.join("; ")
            )
        })
    }),
    (
        "aio_not_asynchronous",
        &["aio.inline_fraction", "spec.qd"],
        |f| {
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
        },
    ),
    (
        "batching_worked",
        &[
            "derived.syscalls_per_op",
            "derived.kernel_requests_per_enter|derived.iolab_requests_per_enter",
        ],
        |f| {
            let s = f.syscalls_per_op?;
            let per_enter = f.kernel_requests_per_enter?;
            // With SQPOLL few syscalls say nothing about batches: see sqpoll_submitted.
            (f.info().is_some_and(|m| m.io_uring_requests) && !f.sqpoll && s <= 0.1).then(|| {
            format!("syscalls per op {s:.3}: batching worked ({per_enter:.1} requests per io_uring_enter)")
        })
        },
    ),
    (
        "sqpoll_submitted",
        &[
            "uring.submissions_without_syscall",
            "uring.requests",
            "uring.enters",
            "derived.syscalls_per_op",
        ],
        |f| {
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
        },
    ),
    (
        "one_enter_per_request",
        &["derived.kernel_requests_per_enter|derived.iolab_requests_per_enter"],
        |f| {
            let b = f.kernel_requests_per_enter?;
            (f.info().is_some_and(|m| m.io_uring_requests) && b <= 1.05).then(|| {
            format!(
                "{b:.2} requests per io_uring_enter: io_uring pays one syscall per op like write(), plus the ring's \
                 own work; raise --qd and --batch to amortise it"
            )
        })
        },
    ),
    (
        "helper_threads_did_the_work",
        &["derived.iowq_cpu_s", "derived.worker_cpu_s"],
        |f| {
            let h = f.iowq_cpu_s;
            (h >= 0.01 && h > f.worker_cpu_s).then(|| {
            format!(
                "io-wq worker threads used {h:.3} s of CPU, more than iolab's own threads ({:.3} s): the work moved to the kernel's helpers",
                f.worker_cpu_s
            )
        })
        },
    ),
    (
        "sqpoll_burns_a_core",
        &["derived.sqpoll_cpu_share", "derived.sqpoll_cpu_s"],
        |f| {
            let s = f.sqpoll_cpu_s;
            let share = f.sqpoll_cpu_share?;
            (s >= 0.01).then(|| {
            format!(
                "SQPOLL kept {share:.2} CPUs busy over the run ({s:.3} s of CPU): an SQ thread spins while awake"
            )
        })
        },
    ),
    (
        "context_switch_per_op",
        &["derived.ctx_switches_per_op"],
        |f| {
            let c = f.ctx_switches_per_op?;
            // A paced thread sleeps until each op is due: those switches are the pace's.
            (c >= 0.5 && !f.paced).then(|| {
            format!("{c:.2} context switches per op: ops sleep and wake (waiting for completions or hand-offs to helper threads)")
        })
        },
    ),
    (
        "page_fault_per_page",
        &["derived.page_faults_per_mib"],
        |f| {
            let p = f.page_faults_per_mib?;
            (p >= 128.0).then(|| {
            format!(
                "{p:.0} page faults per MiB (one per 4 KiB page is 256): the first touch of each page costs a fault{}",
                if f.info().is_some_and(|m| m.maps) { "; mmap pays them instead of syscalls" } else { "" }
            )
        })
        },
    ),
    ("stdio_coalesced", &["syscalls.kernel_rw_per_op"], |f| {
        (f.info().is_some_and(|m| m.user_buffered) && f.rw_syscalls_per_op > 0.0 && f.rw_syscalls_per_op < 0.5).then(|| {
            format!(
                "stdio turned {:.0} ops into one read/write syscall ({:.4} syscalls per op): the buffer, not the kernel, set the pace",
                1.0 / f.rw_syscalls_per_op,
                f.rw_syscalls_per_op
            )
        })
    }),
    (
        "syscall_is_the_cost",
        &["derived.syscalls_per_op", "ns_per_op"],
        |f| {
            let s = f.syscalls_per_op?;
            // Methods that make one system call per op.
            let sync = f.info().is_some_and(|m| m.per_op_call.is_some());
            // A paced run's time per op is its pace's interval, and several threads' their shared
            // rate (16 threads on 2 CPUs: half what each call takes): neither is a call's cost.
            let quiet = f.disturbed.is_none() && !f.paced && f.threads <= 1;
            (quiet && sync && (0.95..=1.1).contains(&s) && matches!(f.target, Some(TargetKind::DevNull | TargetKind::DevZero))).then(|| {
            format!(
                "{s:.3} syscalls per op on a device that does no work: the {} per op is the cost of one system call on this machine",
                iolab_engine::units::fmt_ns(f.ns_per_op)
            )
        })
        },
    ),
    (
        "machine_disturbed",
        &[
            "disturbance.runqueue_share|disturbance.psi_some|disturbance.steal_share",
            "disturbance.steal_share",
            "disturbance.others_cpus|disturbance.steal_share",
            "ns_per_op",
        ],
        |f| {
            let why = f.disturbed.as_deref()?;
            if f.paced {
                return Some(format!(
                    "disturbed: {why}, over the timed span: the latencies (timed from when each op was due) \
                     partly hold that wait; repeat on a quiet machine, or pin iolab to CPUs the other work \
                     leaves free (--cpus)"
                ));
            }
            Some(format!(
                "disturbed: {why}, over the timed span: the {} per op is partly that wait, not the cost of \
                 the method; repeat on a quiet machine, or pin iolab to CPUs the other work leaves free \
                 (--cpus)",
                iolab_engine::units::fmt_ns(f.ns_per_op)
            ))
        },
    ),
    (
        "hypervisor_steal",
        &[
            "derived.steal_share",
            "cpu.steal_worker_cpus_s|cpu.steal_all_cpus_s",
        ],
        |f| {
            let share = f.steal_share.filter(|s| *s >= 0.1)?;
            Some(format!(
                "the hypervisor stole {} of its CPUs' time during the run ({:.2} s, /proc/stat): times are \
                 inflated and CPU figures miss it; repeat before trusting a comparison",
                pct(share),
                f.steal_s
            ))
        },
    ),
    ("counters_unavailable", &[], |f| {
        f.tracepoints_unavailable.as_ref().map(|why| {
            format!("kernel tracepoints unavailable ({why}): syscall figures are iolab's own count")
        })
    }),
    (
        "profile_copy_bound",
        &[
            "profile.shares.copy_share",
            "profile.shares.kernel_share",
            "spec.bs",
        ],
        |f| {
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
        },
    ),
    (
        "profile_io_wq_work",
        &[
            "profile.shares.iowq_share",
            "profile.shares.iowq_focus_share",
        ],
        |f| {
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
        },
    ),
    (
        "profile_syscall_overhead",
        &["profile.shares.syscall_share"],
        |f| {
            let p = profiled(f)?;
            (p.syscall_share >= 0.3).then(|| {
            format!(
                "{} of the samples in syscall entry and exit: the cost of crossing into the kernel dominates; fewer, \
                 larger calls or batching (io_uring) pay it less often",
                pct(p.syscall_share)
            )
        })
        },
    ),
    ("profile_scheduler", &["profile.shares.sched_share"], |f| {
        let p = profiled(f)?;
        (p.sched_share >= 0.25).then(|| {
            format!(
                "{} of the samples in the scheduler (switching, waking, idling): threads sleep and wake instead of \
                 working",
                pct(p.sched_share)
            )
        })
    }),
    ("profile_inline_perturbs", &["profile.frequency_hz"], |f| {
        let p = f.profile.as_ref()?;
        p.inline.then(|| {
            format!(
                "the timed pass was sampled (--profile inline, {} Hz): its timings include the sampling's cost",
                p.hz
            )
        })
    }),
    ("inline_counting_perturbs", &[], |f| {
        f.inline_counting.then(|| {
            "tracepoints were on during the timed pass (--count inline): each system call paid for them, so the times are \
             higher than a plain pass's (`iolab bench overhead` measures by how much on this machine)".to_string()
        })
    }),
];

/// The figures rule `name` prints, as paths in a record's result (see [`Rule`]).
pub fn figures_of(name: &str) -> &'static [&'static str] {
    RULES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map_or(&[], |(_, f, _)| f)
}

/// Findings for a result, in rule order.
pub fn findings(r: &RunResult) -> Vec<Finding> {
    findings_of(&Facts::of(r))
}

pub fn findings_of(f: &Facts) -> Vec<Finding> {
    RULES
        .iter()
        .filter_map(|(name, _, rule)| {
            rule(f).map(|text| Finding {
                rule: (*name).to_string(),
                text,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
