//! io_uring options (issue: every method worth comparing, item 1, per-thread rings): each option runs end
//! to end with its data verified, batch statistics are exact, IOPOLL is refused with its reason when the
//! device cannot poll, and impossible combinations are refused before anything runs.

mod common;
use common::*;

fn uring(r: &serde_json::Value) -> &serde_json::Value {
    &r["uring"]
}

fn setup(r: &serde_json::Value) -> Vec<String> {
    uring(r)["setup"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_ring_option_writes_verified_data_to_tmpfs_and_dev_null() {
    let dir = tmpfs_dir();
    let cases: &[(&[&str], &[&str])] = &[
        (&["--sqpoll"], &["SQPOLL"]),
        (
            &[
                "--sqpoll",
                "--sq-cpu",
                "0",
                "--sq-idle-ms",
                "50",
                "--qd",
                "16",
                "--batch",
                "4",
            ],
            &["SQPOLL", "SQ_AFF"],
        ),
        (&["--fixed-files"], &["REGISTER_FILES"]),
        (
            &["--fixed-bufs", "--qd", "8", "--batch", "2"],
            &["REGISTER_BUFFERS"],
        ),
        (
            &["--fixed-files", "--fixed-bufs", "--registered-ring"],
            &["REGISTER_FILES", "REGISTER_BUFFERS", "REGISTER_RING_FDS"],
        ),
        (&["--coop-taskrun", "--qd", "4"], &["COOP_TASKRUN"]),
        (
            &[
                "--single-issuer",
                "--defer-taskrun",
                "--qd",
                "8",
                "--batch",
                "8",
            ],
            &["SINGLE_ISSUER", "DEFER_TASKRUN"],
        ),
        (&["--vectored", "--qd", "4"], &[]),
        (&["--nonvectored"], &[]),
    ];
    for (i, (opts, names)) in cases.iter().enumerate() {
        let f = file(&dir, &format!("u{i}.dat"));
        let mut args = vec![
            "--method",
            "io_uring",
            "--target",
            f.to_str().unwrap(),
            "--ops",
            "500",
            "--seed",
            "21",
            "--keep",
            "--verify",
        ];
        args.extend_from_slice(opts);
        let r = run_json(&args);
        assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0, "{opts:?}");
        assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), 500, "{opts:?}");
        assert_eq!(
            check_blocks(&f, 4096, 21, 0, 0..500),
            (500, 0),
            "{opts:?}: the bytes landed"
        );
        assert_eq!(u64_of(uring(&r), &["requests"]), 500, "{opts:?}");
        for n in *names {
            assert!(
                setup(&r).contains(&n.to_string()),
                "{opts:?}: setup {:?} lacks {n}",
                setup(&r)
            );
        }
        let mut args = vec![
            "--method",
            "io_uring",
            "--target",
            "/dev/null",
            "--ops",
            "2000",
        ];
        args.extend_from_slice(opts);
        let r = run_json(&args);
        assert_eq!(u64_of(&r, &["ops"]), 2000, "{opts:?} on /dev/null");
    }
}

#[test]
fn sqpoll_thread_is_reported_and_can_submit_without_syscalls() {
    let r = run_json(&[
        "--method",
        "io_uring",
        "--sqpoll",
        "--sq-idle-ms",
        "100",
        "--qd",
        "32",
        "--batch",
        "8",
        "--ops",
        "50000",
    ]);
    let helpers = r["cpu"]["helpers"].as_array().unwrap();
    assert!(
        helpers
            .iter()
            .any(|h| h["comm"].as_str().unwrap().starts_with("iou-sqp-")),
        "SQ thread listed: {helpers:?}"
    );
    let u = uring(&r);
    let enters = u64_of(u, &["enters"]);
    let nosys = u64_of(u, &["submissions_without_syscall"]);
    println!(
        "SQPOLL qd 32 batch 8: {enters} enters, {nosys} submissions without a syscall, {} wake-ups",
        u["sq_wakeups"]
    );
    assert_eq!(u64_of(u, &["requests"]), 50000);
    // Every wait for completions is an enter; submissions while the thread is awake need none.
    assert!(
        enters < 50000,
        "fewer enters than requests with SQPOLL and batching"
    );
}

#[test]
fn batch_statistics_are_exact() {
    let r = run_json(&[
        "--method", "io_uring", "--qd", "64", "--batch", "32", "--ops", "6400",
    ]);
    let u = uring(&r);
    assert_eq!(u64_of(u, &["requests"]), 6400);
    assert_eq!(u64_of(u, &["enters"]), 200);
    assert_eq!(
        u64_of(u, &["big_batches"]),
        200,
        "every submission carried 32 (the seed report's big batch)"
    );
    assert!((f64_of(u, &["mean_batch"]) - 32.0).abs() < 1e-9);
    assert_eq!(u["batch_histogram"], serde_json::json!([[32, 200]]));
    let r = run_json(&["--method", "io_uring", "--ops", "1000"]);
    assert_eq!(
        uring(&r)["batch_histogram"],
        serde_json::json!([[1, 1000]]),
        "qd 1 batch 1: one request per enter"
    );
}

#[test]
fn iopoll_completes_with_real_figures_or_is_refused_with_its_reason() {
    // Never figures from failed completions. On this machine ext4 O_DIRECT reads cannot be polled
    // (EOPNOTSUPP per completion) and must be refused; writes may complete.
    let dir = disk_dir();
    for op in ["read", "write"] {
        let f = file(&dir, &format!("p-{op}.dat"));
        let r = iolab(&[
            "run",
            "--method",
            "io_uring",
            "--iopoll",
            "--direct",
            "--op",
            op,
            "--target",
            f.to_str().unwrap(),
            "--file-size",
            "256k",
            "--ops",
            "64",
            "--count",
            "none",
            "--json",
            "-",
        ]);
        match r.code {
            0 => {
                let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
                assert_eq!(
                    u64_of(&v, &["ops"]),
                    64,
                    "{op}: real figures count every op"
                );
                assert!(setup(&v).contains(&"IOPOLL".to_string()));
                println!(
                    "IOPOLL {op}: completed with real figures ({} ns/op)",
                    v["ns_per_op"]
                );
            }
            1 => {
                assert!(
                    r.stderr.contains("IOPOLL unsupported by this device/file"),
                    "{op}: {}",
                    r.stderr
                );
                assert!(
                    r.stdout.is_empty(),
                    "{op}: no figures printed after refused completions"
                );
                println!("IOPOLL {op}: refused: {}", r.stderr.trim());
            }
            c => panic!("IOPOLL {op}: unexpected exit {c}: {}", r.stderr),
        }
    }
    // A loop device has no poll queues here: refused (skipped where no loop device can be made).
    let img = file(&dir, "loop.img");
    std::fs::write(&img, vec![0u8; 1 << 20]).unwrap();
    let out = std::process::Command::new("losetup")
        .args(["--find", "--show", "--direct-io=on"])
        .arg(&img)
        .output();
    let Some(out) = out.ok().filter(|o| o.status.success()) else {
        skip(
            "loop-device",
            "IOPOLL on a loop device: losetup unavailable",
        );
        return;
    };
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let r = iolab(&[
        "run", "--method", "io_uring", "--iopoll", "--direct", "--op", "read", "--target", &dev,
        "--ops", "16", "--count", "none",
    ]);
    let _ = std::process::Command::new("losetup")
        .args(["-d", &dev])
        .status();
    if r.code == 0 {
        println!("IOPOLL on {dev}: completed (this kernel polls it)");
    } else {
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("IOPOLL unsupported"), "{}", r.stderr);
        assert!(r.stdout.is_empty());
    }
}

#[test]
fn impossible_ring_combinations_are_refused_before_running() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["--iopoll"], "--iopoll", "needs --direct"),
        (
            &["--defer-taskrun"],
            "--defer-taskrun",
            "needs --single-issuer",
        ),
        (
            &["--sqpoll", "--coop-taskrun"],
            "--coop-taskrun",
            "cannot be combined with --sqpoll",
        ),
        (&["--sq-cpu", "0"], "--sq-cpu", "applies to --sqpoll only"),
        (
            &["--sqpoll", "--sq-cpu", "999"],
            "--sq-cpu",
            "does not exist",
        ),
        (
            &["--iopoll", "--direct", "--min-wait", "50"],
            "--min-wait",
            "polled for",
        ),
    ];
    for (opts, flag, needle) in cases {
        let mut args = vec!["run", "--method", "io_uring", "--ops", "10"];
        args.extend_from_slice(opts);
        let r = iolab(&args);
        assert_eq!(r.code, 2, "{opts:?}: {}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!("iolab: {flag}")) && r.stderr.contains(needle),
            "{opts:?}: {}",
            r.stderr
        );
    }
    let r = iolab(&["run", "--method", "psync", "--sqpoll"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--sqpoll: applies to --method io_uring only"),
        "{}",
        r.stderr
    );
}

#[test]
fn fixed_buffers_over_the_memlock_limit_name_the_limit() {
    // 64 x 1 MiB = 64 MiB of registered buffers for an unprivileged user.
    let args = [
        "run",
        "--method",
        "io_uring",
        "--fixed-bufs",
        "--qd",
        "64",
        "--bs",
        "1m",
        "--ops",
        "64",
        "--count",
        "none",
    ];
    let Some((out, _dir)) = iolab_as_nobody(&args) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(0) {
        skip(
            "memlock",
            "RLIMIT_MEMLOCK is high enough here for 64 MiB of registered buffers",
        );
        return;
    }
    // Bad input, found before the ring (or the target) is made (issue 15 class 8): exit 2.
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("iolab: --fixed-bufs:")
            && err.contains("= 64 MiB of buffers")
            && err.contains("RLIMIT_MEMLOCK ("),
        "{err}"
    );
    println!("{}", err.trim());
}

#[test]
fn aio_says_when_it_was_not_asynchronous() {
    // Buffered tmpfs: every request completes inside io_submit, and the result says so.
    let dir = tmpfs_dir();
    let f = file(&dir, "a.dat");
    let r = run_json(&[
        "--method",
        "aio",
        "--qd",
        "16",
        "--batch",
        "8",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "2000",
        "--seed",
        "5",
        "--keep",
        "--verify",
    ]);
    assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
    assert_eq!(check_blocks(&f, 4096, 5, 0, 0..2000), (2000, 0));
    assert_eq!(u64_of(&r, &["aio", "requests"]), 2000);
    assert!(
        (f64_of(&r, &["aio", "inline_fraction"]) - 1.0).abs() < 1e-9,
        "{}",
        r["aio"]
    );
    let fired = rules(&r);
    assert!(
        fired.contains(&"aio_not_asynchronous".to_string()),
        "{fired:?}"
    );
    // O_DIRECT over allocated ext4 blocks at depth 16: mostly asynchronous; the finding follows the figure.
    let dir = disk_dir();
    let g = direct_allocated_file(&dir, "d.dat", "64");
    let r = run_json(&[
        "--method",
        "aio",
        "--direct",
        "--overwrite",
        "--qd",
        "16",
        "--batch",
        "8",
        "--target",
        g.to_str().unwrap(),
        "--ops",
        "64",
        "--verify",
    ]);
    assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
    let x = f64_of(&r, &["aio", "inline_fraction"]);
    let fired = rules(&r);
    println!(
        "aio O_DIRECT ext4 qd 16: {:.0}% completed inside io_submit",
        x * 100.0
    );
    assert_eq!(
        fired.contains(&"aio_not_asynchronous".to_string()),
        x >= 0.95,
        "finding matches the figure {x}: {fired:?}"
    );
}

#[test]
fn nop_requests_measure_the_ring_alone() {
    let r = run_json(&[
        "--method",
        "io_uring",
        "--nop-requests",
        "--qd",
        "32",
        "--batch",
        "32",
        "--ops",
        "64000",
    ]);
    assert_eq!(u64_of(&r, &["ops"]), 64000);
    assert_eq!(u64_of(&r, &["uring", "requests"]), 64000);
    assert_eq!(u64_of(&r, &["uring", "enters"]), 2000);
    assert!(setup(&r).contains(&"OP_NOP".to_string()));
    // A NOP moves no data: no bytes and no MiB/s are claimed for it.
    assert_eq!(u64_of(&r, &["bytes"]), 0);
    assert_eq!(f64_of(&r, &["mib_s"]), 0.0);
    let bad = iolab(&[
        "run",
        "--method",
        "io_uring",
        "--nop-requests",
        "--target",
        "/dev/shm/iolab-nop.dat",
        "--verify",
    ]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.starts_with("iolab: --verify:"), "{}", bad.stderr);
}

/// The flags of the recommended ring this kernel took, and those it refused (the output names those).
fn recommended_split(r: &serde_json::Value) -> (Vec<String>, Vec<String>) {
    let refused: Vec<String> = uring(r)["refused"]
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default();
    (setup(r), refused)
}

#[test]
fn the_default_ring_is_the_recommended_one_and_plain_asks_for_none_of_it() {
    let all = [
        "COOP_TASKRUN",
        "SINGLE_ISSUER",
        "DEFER_TASKRUN",
        "NO_SQARRAY",
        "REGISTER_RING_FDS",
    ];
    let base = [
        "--method",
        "io_uring",
        "--target",
        "/dev/null",
        "--ops",
        "3000",
        "--qd",
        "8",
        "--batch",
        "4",
    ];
    let r = run_json(&base);
    assert_eq!(u64_of(&r, &["ops"]), 3000);
    let (setup, refused) = recommended_split(&r);
    for f in all {
        // Each flag ran, or the kernel refused it and the record says so (never silently dropped).
        let said = refused.iter().any(|x| x.starts_with(f));
        assert!(
            setup.contains(&f.to_string()) != said,
            "{f}: setup {setup:?}, refused {refused:?}"
        );
        if said {
            println!("note: this kernel refused {f} ({refused:?}), as the record says");
        }
    }
    let mut plain = base.to_vec();
    plain.extend(["--ring-setup", "plain"]);
    let r = run_json(&plain);
    let (setup, refused) = recommended_split(&r);
    assert!(refused.is_empty(), "{refused:?}");
    for f in all {
        assert!(
            !setup.contains(&f.to_string()),
            "plain ring has {f}: {setup:?}"
        );
    }
    // The design decides: SQPOLL takes no task-run flags, a ring shared by threads no single issuer.
    let mut sq = base.to_vec();
    sq.push("--sqpoll");
    let setup = recommended_split(&run_json(&sq)).0;
    assert!(setup.contains(&"SQPOLL".to_string()), "{setup:?}");
    for f in ["COOP_TASKRUN", "SINGLE_ISSUER", "DEFER_TASKRUN"] {
        assert!(
            !setup.contains(&f.to_string()),
            "SQPOLL ring has {f}: {setup:?}"
        );
    }
    let mut shared = base.to_vec();
    shared.extend(["--ring", "shared", "--threads", "2"]);
    let r = run_json(&shared);
    assert_eq!(u64_of(&r, &["ops"]), 3000);
    let setup = recommended_split(&r).0;
    assert!(!setup.contains(&"SINGLE_ISSUER".to_string()), "{setup:?}");
    assert!(!setup.contains(&"DEFER_TASKRUN".to_string()), "{setup:?}");
    let bad = iolab(&[
        "run",
        "--method",
        "io_uring",
        "--target",
        "/dev/null",
        "--ring-setup",
        "best",
    ]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--ring-setup"), "{}", bad.stderr);
}

#[test]
fn more_rings_than_a_thread_can_register_run_one_after_another() {
    // A thread registers at most 16 ring fds; each run's ring gives its index back, so a sweep of 20
    // io_uring points in one process keeps the registered ring on every point.
    let dir = tmpfs_dir();
    let out = dir.path().join("sweep.jsonl");
    let qds: Vec<String> = (1..=20).map(|q| q.to_string()).collect();
    let vary = format!("qd={}", qds.join(","));
    let ran = iolab(&[
        "sweep",
        "--method",
        "io_uring",
        "--target",
        "/dev/null",
        "--ops",
        "200",
        "--vary",
        &vary,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let text = std::fs::read_to_string(&out).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["result"].clone())
        .filter(|v| v.get("uring").is_some_and(|u| !u.is_null()))
        .collect();
    assert_eq!(
        recs.len(),
        20,
        "{} records with io_uring figures",
        recs.len()
    );
    for r in &recs {
        let (setup, refused) = recommended_split(r);
        assert!(
            setup.contains(&"REGISTER_RING_FDS".to_string()) || !refused.is_empty(),
            "qd {}: {setup:?} {refused:?}",
            r["spec"]["qd"]
        );
        assert!(
            !refused.iter().any(|x| x.contains("EBUSY")),
            "a ring found the thread's registered slots full: {refused:?}"
        );
    }
}
