use super::*;
use iolab_engine::spec::MethodKind;

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
fn a_sparse_read_says_its_holes() {
    let on = Facts {
        sparse: Some(iolab_engine::result::Sparse {
            holes: 48 << 20,
            bytes: 64 << 20,
        }),
        ..base()
    };
    check("sparse_read", on.clone(), base());
    let text = &findings_of(&on)[0].text;
    assert!(
        text.starts_with("75.0% of the 64 MiB region read are holes"),
        "{text}"
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
            log: false,
            personality: Some(p),
            worker_share: Some(share),
            disagree: vec![],
            ..Default::default()
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
            log: false,
            personality: Some(Personality::Legacy),
            worker_share: Some(0.0),
            disagree: vec!["sink driver write calls: driver 7, iolab 5: DISAGREE".into()],
            ..Default::default()
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
    // A share beyond the machine's CPUs is no share (`helper_share`): nothing is said of it.
    check(
        "sqpoll_burns_a_core",
        Facts {
            sqpoll_cpu_s: 1.0,
            sqpoll_cpu_share: Some(1.0),
            ..base()
        },
        Facts {
            sqpoll_cpu_s: 0.06,
            sqpoll_cpu_share: None,
            ..base()
        },
    );
}

/// The SQPOLL threads' CPU over the span the snapshots were read across, and none beyond the machine's
/// CPUs (8 SQPOLL threads, 60 ms of CPU read 18 ms apart on 2 CPUs said "3.29 CPU").
#[test]
fn helper_share_is_over_the_sampled_span_and_within_the_cpus() {
    let raw = iolab_engine::spec::RawSpec::new()
        .with("ops", 100u64)
        .with("count", "none");
    let clock = iolab_engine::measure::clock::calibrate(1);
    let mut r = crate::run::run(&raw.resolve().unwrap(), &clock).unwrap();
    // Read 18 ms apart, whatever this run's own snapshots took (under qemu-user, reading /proc between
    // them took over 30 ms).
    (r.wall_s, r.host.cpus_online, r.cpu.sampled_span_s) = (0.018, 2, Some(0.018));
    assert_eq!(crate::findings::facts::helper_share(&r, 0.060), None);
    r.cpu.sampled_span_s = Some(0.040);
    assert_eq!(crate::findings::facts::helper_share(&r, 0.060), Some(1.5));
    assert_eq!(crate::findings::facts::helper_share(&r, 0.0), None);
    // Counted per tick (a helper without schedstat) over a span too short for ticks: no share.
    r.cpu.helpers = vec![iolab_engine::measure::cpu::HelperCpu {
        comm: "iou-sqp-1".into(),
        sys_s: 0.06,
        ..Default::default()
    }];
    assert_eq!(crate::findings::facts::helper_share(&r, 0.060), None);
    r.cpu.helpers[0].oncpu_s = Some(0.06);
    assert_eq!(crate::findings::facts::helper_share(&r, 0.060), Some(1.5));
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
            ..null.clone()
        },
    );
    // A run that waited for a CPU another process held: its time is not the cost of a call.
    let disturbed = Facts {
        disturbed: Some("its threads waited for a CPU 75% of the time".into()),
        ..null.clone()
    };
    check("machine_disturbed", disturbed.clone(), null.clone());
    assert!(!fired(&disturbed).contains(&"syscall_is_the_cost".to_string()));
    // Several threads' time per op is their shared rate, not what one call took.
    let threads = Facts {
        threads: 16,
        ..null.clone()
    };
    assert!(!fired(&threads).contains(&"syscall_is_the_cost".to_string()));
    // A paced run's time per op is its pace's interval and its switches the pace's sleeps: neither is
    // called the cost of a call or of the I/O.
    let paced = Facts {
        paced: true,
        ns_per_op: 9.5e6,
        ctx_switches_per_op: Some(0.95),
        ..null
    };
    let said = fired(&paced);
    assert!(
        !said.contains(&"syscall_is_the_cost".to_string())
            && !said.contains(&"context_switch_per_op".to_string()),
        "{said:?}"
    );
    let text = findings_of(&disturbed)
        .into_iter()
        .find(|f| f.rule == "machine_disturbed")
        .unwrap()
        .text;
    assert!(
        text.contains("75% of the time") && text.contains("not the cost"),
        "{text}"
    );
}

#[test]
fn steal_and_counting() {
    check(
        "hypervisor_steal",
        Facts {
            steal_s: 0.3,
            steal_share: Some(0.3),
            ..base()
        },
        Facts {
            steal_s: 0.06,
            steal_share: Some(0.06),
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
    use crate::findings::PartitionFacts;
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
        server_share: Some(0.38),
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
fn zero_copy_copied() {
    let on = Facts {
        method: Some(MethodKind::IoUring),
        target: Some(TargetKind::Tcp),
        zero_copy: Some((2000, 2000)),
        ..base()
    };
    let text = &findings_of(&on)[0].text;
    assert!(
        text.starts_with("the kernel copied 100% of 2000 zero-copy sends anyway"),
        "{text}"
    );
    assert!(text.contains("a local socket"), "{text}");
    check(
        "zero_copy_copied",
        on.clone(),
        Facts {
            zero_copy: Some((2000, 10)),
            ..on
        },
    );
}

#[test]
fn every_rule_is_tested() {
    // The rules live in mod.rs, their tests here: each rule's name appears in a test.
    let src = include_str!("tests.rs");
    for (name, _, _) in RULES {
        assert!(
            src.matches(&format!("\"{name}\"")).count() >= 1,
            "rule {name} has no test"
        );
    }
}
