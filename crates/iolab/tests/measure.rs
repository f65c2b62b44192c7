//! Measurement: CPU accounting against wall time, the JSON result document, and the main job.
//! (Its own test binary, so the CPU-bound run does not share the CPUs with the other test files.)

mod common;
use common::*;

#[test]
fn cpu_accounting_matches_wall_time_on_a_cpu_bound_run() {
    // psync to /dev/null never sleeps: the process is on a CPU for the whole wall time, except when the
    // hypervisor steals the vCPU or the task waits on a runqueue, which iolab measures and reports.
    let r = run_json(&["--method", "psync", "--bs", "4", "--duration", "1.5"]);
    let wall = f64_of(&r, &["wall_s"]);
    let cpu = f64_of(&r, &["cpu", "process", "user_s"]) + f64_of(&r, &["cpu", "process", "sys_s"]);
    let rq = f64_of(&r, &["cpu", "runqueue_wait_s"]);
    let steal = r["cpu"]["steal_worker_cpus_s"]
        .as_f64()
        .unwrap_or_else(|| f64_of(&r, &["cpu", "steal_all_cpus_s"]));
    let available = (wall - rq - steal).max(0.0);
    println!("wall {wall:.3} s, user+sys {cpu:.3} s, runqueue wait {rq:.3} s, steal {steal:.3} s, available {available:.3} s");
    assert!(
        cpu <= wall * 1.10,
        "CPU time cannot exceed the wall time of one busy thread by >10%"
    );
    assert!(
        cpu >= available * 0.90 - 0.02,
        "user+sys {cpu:.3} s is not within 10% of the {available:.3} s the task had (wall {wall:.3} minus steal and runqueue wait)"
    );
    // The worker thread's own figures are part of the process figures.
    let w = f64_of(&r, &["cpu", "workers", "user_s"]) + f64_of(&r, &["cpu", "workers", "sys_s"]);
    assert!(
        w <= cpu + 0.02 && w >= cpu * 0.9 - 0.02,
        "worker {w} vs process {cpu}"
    );
    // Its exact CPU time (the scheduler's count) agrees with the kernel's tick-sampled split over 1.5 s.
    let exact = f64_of(&r, &["cpu", "workers", "cpu_s"]);
    assert!(
        (exact - w).abs() <= 0.05 * w + 0.02,
        "worker CPU {exact} exact vs {w} by ticks"
    );
    // A one-thread run is a one-task process: no helper thread makes its syscalls dearer.
    assert_eq!(
        u64_of(&r, &["cpu", "tasks"]),
        1,
        "tasks during a one-thread psync run"
    );
    // And the kernel counted one write per op.
    assert_eq!(
        u64_of(&r, &["syscalls", "kernel_rw", "syscw"]),
        u64_of(&r, &["ops"])
    );
}

/// Threads of a few hundred µs each: the kernel's user/system split reads 0 for them (it is sampled per
/// tick), their exact CPU time does not, and it is no more than the threads could have spent.
#[test]
fn short_worker_threads_have_their_cpu_time() {
    // Two threads of 2,000 4-byte writes to /dev/null each.
    let args = [
        "--method",
        "psync",
        "--bs",
        "4",
        "--threads",
        "2",
        "--ops",
        "4000",
        "--target",
        "/dev/null",
    ];
    let r = run_json(&args);
    let exact = f64_of(&r, &["cpu", "workers", "cpu_s"]);
    let wall = f64_of(&r, &["wall_s"]);
    println!("2 workers: {exact:.6} s of CPU over {wall:.6} s");
    assert!(exact > 0.0, "workers' CPU time is 0");
    // Each thread's span brackets its loop by a few µs beyond the timed span.
    assert!(
        exact <= 2.0 * wall + 0.001,
        "{exact} s of CPU in 2 x {wall} s"
    );
    let text = iolab(&[&["run"][..], &args].concat());
    assert!(
        text.stdout.contains("worker threads ") && text.stdout.contains(" of CPU (user "),
        "{}",
        text.stdout
    );
}

#[test]
fn json_document_has_the_documented_fields() {
    let dir = tmpfs_dir();
    let j = file(&dir, "r.json");
    let r = iolab(&[
        "run",
        "--method",
        "io_uring",
        "--qd",
        "2",
        "--ops",
        "100",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("iolab run: io_uring write"),
        "table on stdout"
    );
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&j).unwrap()).unwrap();
    for k in [
        "schema_version",
        "host",
        "spec",
        "target",
        "clock",
        "timed",
        "excluded",
        "wall_s",
        "ops",
        "bytes",
        "iops",
        "mib_s",
        "latency",
        "gap",
        "cpu",
        "syscalls",
        "fallbacks",
        "notes",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    for k in ["iolab_version", "kernel_release", "cpu_model"] {
        assert!(
            v["host"][k].as_str().is_some_and(|s| !s.is_empty()),
            "host.{k}"
        );
    }
    for k in ["mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"] {
        assert!(v["latency"][k].as_f64().unwrap() > 0.0, "latency.{k}");
    }
    let clock = &v["clock"];
    assert!(clock["overhead_ns"].as_f64().unwrap() > 0.0);
    assert!(matches!(
        clock["kind"].as_str(),
        Some("tsc") | Some("cntvct") | Some("monotonic")
    ));
    if clock["kind"] == "monotonic" {
        assert!(
            v["fallbacks"].to_string().contains(" not used ("),
            "the clock fallback is recorded"
        );
    }
    let lat = &v["latency"];
    assert!(
        lat["p50_ns"].as_f64() <= lat["p99_ns"].as_f64()
            && lat["p99_ns"].as_f64() <= lat["max_ns"].as_f64()
    );
    assert_eq!(v["spec"]["qd"], 2);
}

/// A bench whose rounds are too short to time gives its ratios but no verdict against its target.
#[test]
fn a_bench_of_rounds_too_short_gives_no_verdict() {
    let r = iolab(&["bench", "--ops", "1", "--rounds", "3"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("ratio iolab/bare"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        line.contains("(target <= 1.15x: no verdict: a round lasted")
            && !line.contains("met")
            && !line.contains("MISSED"),
        "{line}"
    );
}

/// A count per op of a run of too few ops (two threads, one op each) would be the threads' own start and
/// end: it is left out and said why, and no finding reads it; a run of enough ops has it.
#[test]
fn per_op_counts_of_too_few_ops_are_left_out_and_said_so() {
    let r = run_json_counted(&["--method", "nop", "--ops", "2", "--threads", "2"]);
    let d = &r["derived"];
    assert!(d["syscalls_per_op"].is_null(), "{d}");
    assert!(d["ctx_switches_per_op"].is_null(), "{d}");
    let said = d["crosscheck"].to_string();
    assert!(said.contains("2 ops on 2 thread(s) are too few"), "{said}");
    let findings = r["findings"].to_string();
    assert!(!findings.contains("context switches per op"), "{findings}");
    let r = run_json_counted(&[
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--ops",
        "2000",
    ]);
    match r["derived"]["syscalls_per_op"].as_f64() {
        Some(s) => assert!((0.99..1.1).contains(&s), "{s}"),
        None => skip(
            "tracepoints",
            &format!(
                "the kernel's syscall count is not available: {}",
                r["kernel"]
            ),
        ),
    }
}

/// A rate of bytes to /dev/null or from /dev/zero says no data moved: 3 GiB in 5 µs is no bandwidth.
#[test]
fn sink_and_source_rates_say_no_data_moved() {
    let null = iolab(&[
        "run",
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--bs",
        "1m",
        "--ops",
        "2000",
    ]);
    assert!(
        null.stdout
            .contains("/s (handed to /dev/null, which copies none of it)"),
        "{}",
        null.stdout
    );
    let zero = iolab(&[
        "run",
        "--method",
        "psync",
        "--target",
        "/dev/zero",
        "--op",
        "read",
        "--ops",
        "2000",
    ]);
    assert!(
        zero.stdout
            .contains("/s (of zeros the kernel wrote, no device read)"),
        "{}",
        zero.stdout
    );
    // nop makes no call: nothing was handed to /dev/null either.
    let nop = iolab(&["run", "--method", "nop", "--ops", "100000"]);
    assert!(
        nop.stdout
            .contains("/s (no data moved: the ops are no-ops)")
            && !nop.stdout.contains("handed to"),
        "{}",
        nop.stdout
    );
}
