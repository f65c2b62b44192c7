//! `--latency-sample N`: one op in N timed on its own (its latency from a read just before it to the one
//! after it), throughput from the loop's span; 0 times no op; its bad values and combinations.

mod common;
use common::*;

/// One op in 16 of each thread is timed: 1,600 ops per thread give 100 samples each, every op still ran
/// (the kernel's write count), and the output says whose latency it is.
#[test]
fn one_op_in_n_is_timed_and_the_count_says_so() {
    for threads in ["1", "2"] {
        let per = 1600u64;
        let ops = (per * threads.parse::<u64>().unwrap()).to_string();
        let args = [
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--bs",
            "4",
            "--ops",
            &ops,
            "--threads",
            threads,
            "--latency-sample",
            "16",
        ];
        let r = run_json(&args);
        let n = threads.parse::<u64>().unwrap();
        assert_eq!(u64_of(&r, &["ops"]), per * n);
        assert_eq!(
            u64_of(&r, &["latency", "count"]),
            per / 16 * n,
            "{}",
            r["latency"]
        );
        assert!(f64_of(&r, &["latency", "p50_ns"]) > 0.0);
        assert!(f64_of(&r, &["iops"]) > 0.0);
        assert_eq!(r["sparse_clock"]["sampled"], true);
        assert_eq!(r["spec"]["latency_sample"], 16);
        // No gap: two ops' starts are never both timed.
        assert!(r.get("gap").is_none(), "{r}");
        assert!(
            r["gap_unavailable"]
                .as_str()
                .unwrap()
                .contains("one op in 16 is timed"),
            "{r}"
        );
        assert_eq!(u64_of(&r, &["syscalls", "kernel_rw", "syscw"]), per * n);
    }
    let mut a = vec!["run", "--method", "psync", "--target", "/dev/null"];
    a.extend(["--ops", "3200", "--latency-sample", "16", "--count", "none"]);
    let text = iolab(&a);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout.contains("(200 values)")
            && text
                .stdout
                .contains("of one op in 16 timed on its own (--latency-sample 16)"),
        "{}",
        text.stdout
    );
}

/// `--latency-sample 0`: no op is timed; throughput is there, latency absent with why.
#[test]
fn no_op_timed_gives_throughput_and_says_why_there_is_no_latency() {
    let r = run_json(&[
        "--method",
        "psync",
        "--target",
        "/dev/null",
        "--ops",
        "200k",
        "--latency-sample",
        "0",
    ]);
    assert_eq!(u64_of(&r, &["ops"]), 200_000);
    assert!(f64_of(&r, &["iops"]) > 0.0);
    untimed(&r);
    assert_eq!(u64_of(&r, &["syscalls", "kernel_rw", "syscw"]), 200_000);
}

/// `--latency-sample 0` with slow ops (4 MiB writes): the clock is read about every millisecond, so the
/// run ends within a few ms of its --duration (a read every 1,024 ops ran 0.3 s for 0.5 s), and the
/// ops it counts are the ones the kernel counted.
#[test]
fn an_untimed_run_of_slow_ops_ends_at_its_duration() {
    let d = disk_dir();
    let target = d.path().join("slow.dat");
    let r = run_json(&[
        "--method",
        "psync",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4m",
        "--file-size",
        "64m",
        "--duration",
        "0.3",
        "--latency-sample",
        "0",
    ]);
    untimed(&r);
    let (ops, wall, per_op) = (
        u64_of(&r, &["ops"]),
        f64_of(&r, &["wall_s"]),
        f64_of(&r, &["ns_per_op"]) * 1e-9,
    );
    assert!(ops > 0, "{r}");
    assert!(
        // 60 ms for a busy machine's preemptions (1,024 of these ops took 200 ms more).
        wall < 0.3 + 0.06 + 2.0 * per_op,
        "{wall} s for --duration 0.3 ({per_op} s an op)"
    );
    assert_eq!(u64_of(&r, &["syscalls", "kernel_rw", "syscw"]), ops);
}

/// A result of `--latency-sample 0`: no latency, and why.
fn untimed(r: &serde_json::Value) {
    assert!(r.get("latency").is_none(), "{r}");
    assert!(
        r["latency_unavailable"]
            .as_str()
            .unwrap()
            .contains("no op was timed (--latency-sample 0)"),
        "{r}"
    );
}

/// `--latency-sample 0` on the queued methods: no request is timed, and every one still went to the
/// kernel and landed (the file's blocks read back, the ring's own request count).
#[test]
fn queued_methods_time_no_request_and_every_write_lands() {
    let dir = tmpfs_dir();
    let mut methods = vec!["aio"];
    match probed("method io_uring") {
        Ok(()) => methods.push("io_uring"),
        Err(why) => skip("io_uring", &why),
    }
    for method in methods {
        let target = path_str(&file(&dir, &format!("{method}.dat")));
        let r = run_json(&[
            "--method",
            method,
            "--target",
            &target,
            "--bs",
            "4k",
            "--ops",
            "2000",
            "--qd",
            "8",
            "--batch",
            "4",
            "--latency-sample",
            "0",
            "--verify",
            "--keep",
        ]);
        assert_eq!(u64_of(&r, &["ops"]), 2000, "{method}");
        untimed(&r);
        assert!(r.get("gap").is_none(), "{r}");
        assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0, "{method}");
        assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), 2000, "{method}");
        assert_eq!(std::fs::metadata(&target).unwrap().len(), 2000 * 4096);
        if method == "io_uring" {
            assert_eq!(u64_of(&r, &["uring", "requests"]), 2000, "{}", r["uring"]);
        }
    }
    // A deadline is kept, and the time series keeps its ops without latencies it does not have.
    let r = run_json(&[
        "--method",
        "aio",
        "--target",
        "/dev/null",
        "--duration",
        "2.1",
        "--qd",
        "8",
        "--latency-sample",
        "0",
    ]);
    untimed(&r);
    let wall = f64_of(&r, &["wall_s"]);
    assert!((2.1..2.4).contains(&wall), "wall {wall}");
    let intervals = r["intervals"].as_array().expect("intervals");
    assert!(!intervals.is_empty(), "{r}");
    for i in intervals {
        assert!(
            u64_of(i, &["ops"]) > 0 && i.get("lat_p99_ns").is_none(),
            "{i}"
        );
    }
}

#[test]
fn bad_latency_sample_is_refused_naming_the_flag() {
    for (args, why) in [
        (vec!["--latency-sample", "1000001"], "up to 1,000,000"),
        (vec!["--latency-sample", "some"], "--latency-sample"),
        (
            vec!["--method", "io_uring", "--latency-sample", "8"],
            "by its submission rounds",
        ),
        (
            vec!["--method", "offload", "--latency-sample", "0"],
            "a process of its own",
        ),
        (
            vec!["--latency-sample", "8", "--clock-every", "4"],
            "--clock-every sets the clock reads itself",
        ),
        (
            vec!["--latency-sample", "8", "--rate-iops", "1000"],
            "--rate-iops times every op",
        ),
        (
            vec!["--latency-sample", "1", "--clock-every", "4"],
            "--clock-every sets the clock reads itself",
        ),
        (
            vec!["--latency-sample", "4", "--log-interval", "100"],
            "--log-interval gives each interval's latency",
        ),
    ] {
        let mut a = vec!["run", "--target", "/dev/null", "--ops", "1000"];
        a.extend(args.iter());
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("--latency-sample") && r.stderr.contains(why),
            "{a:?}: {}",
            r.stderr
        );
    }
}

/// `survey --latency-sample 0`: every method of every table times no op (its time per op from the run's
/// span, every op still done: the kernel's write count), the queued ones no request, and the answer says
/// so, naming offload, whose client times its round trips; a bad value names the flag before anything
/// runs.
#[test]
fn a_survey_told_to_time_no_op_times_none_and_says_so() {
    let (tmp, out) = (disk_dir(), disk_dir());
    let (t, o) = (tmp.path().to_str().unwrap(), out.path().to_str().unwrap());
    let a = [
        "survey",
        "--latency-sample",
        "0",
        "--rounds",
        "1",
        "--max-time",
        "0",
    ];
    let r = iolab(
        &[
            &a[..],
            &["--ops", "2000", "--tmp-dir", t, "--results-dir", o],
        ]
        .concat(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(
            "timing: no op timed everywhere (--latency-sample 0), offload's round trips aside"
        ),
        "{}",
        r.stdout
    );
    let v = only_json_in(out.path());
    let ran = ran_runs(&v);
    assert!(ran.len() > 30, "{}", ran.len());
    for run in ran {
        let res = &run["result"];
        match run["method"].as_str().unwrap() {
            "psync" | "sync" | "stdio" => {
                assert_eq!(res["spec"]["latency_sample"], 0, "{}", run["method"]);
                // The spec as `run` takes it back: no --clock-every beside it.
                assert!(res["spec"].get("clock_every").is_none(), "{}", res["spec"]);
                assert!(res.get("latency").is_none(), "{res}");
                if run["target"] == "/dev/null" && run["method"] == "psync" {
                    assert_eq!(res["syscalls"]["kernel_rw"]["syscw"], res["ops"], "{res}");
                }
            }
            "io_uring" | "aio" => {
                assert_eq!(res["spec"]["latency_sample"], 0, "{}", run["method"]);
                assert!(res.get("latency").is_none(), "{res}");
                assert!(res["ops"].as_u64().unwrap() > 0, "{res}");
            }
            "offload" => assert!(res["spec"].get("latency_sample").is_none(), "{res}"),
            _ => {}
        }
    }
    let bad = iolab(&["survey", "--latency-sample", "2000000", "--no-json"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("--latency-sample") && bad.stderr.contains("up to 1,000,000"),
        "{}",
        bad.stderr
    );
}

/// `survey --target` takes `--latency-sample` (0: for its queued methods too) and says so; it never picks
/// one itself (a device's ops cost far more than a clock read).
#[test]
fn a_survey_of_a_target_says_the_sampling_it_was_given() {
    let (dir, out) = (disk_dir(), disk_dir());
    let (d, o) = (dir.path().to_str().unwrap(), out.path().to_str().unwrap());
    let a = [
        "survey",
        "--target",
        d,
        "--workload",
        "randread",
        "--bs",
        "4k",
        "--inflight",
        "1",
    ];
    let b = [
        "--rounds",
        "1",
        "--max-time",
        "0",
        "--max-seconds",
        "0.05",
        "--latency-sample",
        "0",
    ];
    let r = iolab(&[&a[..], &b[..], &["--results-dir", o]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("timing: no op timed (--latency-sample 0)"),
        "{}",
        r.stdout
    );
    let v = only_json_in(out.path());
    assert_eq!(v["latency_sample"], 0);
    let psync = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["method"] == "psync")
        .unwrap();
    assert_eq!(psync["result"]["spec"]["latency_sample"], 0, "{psync}");
    let queued: Vec<&serde_json::Value> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| ["io_uring", "aio"].contains(&r["method"].as_str().unwrap()))
        .filter(|r| !r["result"].is_null())
        .collect();
    assert!(!queued.is_empty(), "{}", v["runs"]);
    for r in queued {
        assert_eq!(r["result"]["spec"]["latency_sample"], 0, "{r}");
    }
}
