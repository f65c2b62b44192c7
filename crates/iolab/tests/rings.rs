//! io_uring ring designs (`--ring per-thread|shared|shared-submitter|producer-consumer`, issue: every method worth
//! comparing, item 1): each design moves verified data on /dev/null, tmpfs and ext4 with several threads and
//! the options that change how rings are shared (registered files and buffers, SQPOLL, registered ring fds,
//! SINGLE_ISSUER); sharing a ring changes its batch statistics; impossible combinations are refused.

mod common;
use common::*;

const DESIGNS: [&str; 3] = ["per-thread", "shared", "shared-submitter"];
/// Every design, with the seed Pi thesis's producer-consumer rings (a ring per thread, reaped by a thread
/// of its own).
const ALL_DESIGNS: [&str; 4] = [
    "per-thread",
    "shared",
    "shared-submitter",
    "producer-consumer",
];

fn hist(r: &serde_json::Value, key: &str) -> Vec<(u64, u64)> {
    r["uring"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_u64().unwrap(), p[1].as_u64().unwrap()))
        .collect()
}

#[test]
fn every_design_writes_verified_data_with_several_threads() {
    let tmp = tmpfs_dir();
    let disk = disk_dir();
    let opts: &[&[&str]] = &[
        &[],
        &["--fixed-files", "--fixed-bufs"],
        &["--registered-ring", "--batch", "4"],
        &["--sqpoll", "--sq-idle-ms", "20"],
    ];
    for design in ALL_DESIGNS {
        for (i, extra) in opts.iter().enumerate() {
            for (where_, dir) in [("tmpfs", &tmp), ("ext4", &disk)] {
                let f = file(dir, &format!("{design}-{i}.dat"));
                let mut args = vec![
                    "--method",
                    "io_uring",
                    "--ring",
                    design,
                    "--threads",
                    "3",
                    "--qd",
                    "8",
                    "--target",
                    f.to_str().unwrap(),
                    "--ops",
                    "1200",
                    "--seed",
                    "33",
                    "--keep",
                    "--verify",
                ];
                args.extend_from_slice(extra);
                let r = run_json(&args);
                let what = format!("--ring {design} {extra:?} on {where_}");
                assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0, "{what}");
                assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), 1200, "{what}");
                assert_eq!(
                    check_blocks(&f, 4096, 33, 0, 0..1200),
                    (1200, 0),
                    "{what}: every thread's bytes landed"
                );
                assert_eq!(u64_of(&r, &["uring", "requests"]), 1200, "{what}");
                assert_eq!(r["uring"]["design"], design, "{what}");
            }
            let mut args = vec![
                "--method",
                "io_uring",
                "--ring",
                design,
                "--threads",
                "2",
                "--qd",
                "4",
                "--target",
                "/dev/null",
                "--ops",
                "4000",
            ];
            args.extend_from_slice(extra);
            let r = run_json(&args);
            assert_eq!(
                u64_of(&r, &["ops"]),
                4000,
                "--ring {design} {extra:?} on /dev/null"
            );
            assert_eq!(u64_of(&r, &["uring", "requests"]), 4000);
        }
    }
}

#[test]
fn the_submitter_ring_takes_single_issuer_and_defer_taskrun() {
    let dir = tmpfs_dir();
    let f = file(&dir, "si.dat");
    let r = run_json(&[
        "--method",
        "io_uring",
        "--ring",
        "shared-submitter",
        "--single-issuer",
        "--defer-taskrun",
        "--threads",
        "3",
        "--qd",
        "8",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "900",
        "--verify",
    ]);
    assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
    let setup = r["uring"]["setup"].to_string();
    assert!(
        setup.contains("SINGLE_ISSUER") && setup.contains("DEFER_TASKRUN"),
        "{setup}"
    );
    let cpu = &r["uring"]["submitter_cpu"];
    assert!(
        cpu["user_s"].as_f64().unwrap() + cpu["sys_s"].as_f64().unwrap() > 0.0,
        "the submitter thread's CPU is reported: {cpu}"
    );
}

#[test]
fn sharing_a_ring_changes_its_batch_statistics() {
    // The same multi-thread workload on the three designs: 4 threads, 16 requests in flight each, one
    // request per submission from each thread, buffered writes to a tmpfs file (io_uring punts them to
    // io-wq, so requests stay in flight and pile up in a shared ring).
    let dir = tmpfs_dir();
    let mut got = Vec::new();
    for design in DESIGNS {
        let f = file(&dir, &format!("{design}.dat"));
        let r = run_json(&[
            "--method",
            "io_uring",
            "--ring",
            design,
            "--threads",
            "4",
            "--qd",
            "16",
            "--batch",
            "1",
            "--target",
            f.to_str().unwrap(),
            "--ops",
            "40000",
        ]);
        let u = &r["uring"];
        let batches = hist(&r, "batch_histogram");
        let depth = hist(&r, "inflight_histogram");
        let max_batch = batches.iter().map(|p| p.0).max().unwrap_or(0);
        let max_depth = depth.iter().map(|p| p.0).max().unwrap_or(0);
        println!(
            "--ring {design:16} enters {:>6}  requests {}  mean batch {:.2}  big batches {:>4}  largest batch {max_batch:>3}  \
             mean in flight {:.1}  deepest {max_depth:>3}  mutex found taken {}  doorbells {}  worker sleeps {}",
            u["enters"], u["requests"], f64_of(u, &["mean_batch"]), u["big_batches"],
            f64_of(u, &["mean_inflight"]), u["lock_contended"], u["doorbells"], u["worker_sleeps"]
        );
        assert_eq!(u64_of(u, &["requests"]), 40000, "{design}");
        got.push((f64_of(u, &["mean_batch"]), max_batch, max_depth));
    }
    let (per_thread, shared, submitter) = (got[0], got[1], got[2]);
    // Per-thread rings: each ring sees one thread, one request per submission, at most 16 in flight.
    assert_eq!(per_thread.0, 1.0, "per-thread mean batch");
    assert_eq!(per_thread.1, 1, "per-thread largest batch");
    assert!(
        per_thread.2 <= 16,
        "a per-thread ring never holds more than --qd"
    );
    // One ring behind a mutex: each thread still submits its own single request, but the ring holds
    // every thread's requests: deeper than any per-thread ring can be.
    assert_eq!(
        shared.1, 1,
        "shared (mutex) rings keep each thread's batch of 1"
    );
    assert!(
        shared.2 > 16,
        "a shared ring holds more than one thread's --qd in flight (deepest {})",
        shared.2
    );
    // The submitter gathers requests from all threads into one submission.
    assert!(
        submitter.0 > 1.0 && submitter.1 > 1,
        "the submitter's batches span threads: mean {:.2}, largest {}",
        submitter.0,
        submitter.1
    );
}

#[test]
fn ring_designs_refuse_what_cannot_work() {
    let r = iolab(&["run", "--method", "psync", "--ring", "shared"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--ring") && r.stderr.contains("io_uring"),
        "{}",
        r.stderr
    );
    let r = iolab(&["run", "--method", "io_uring", "--ring", "pooled"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--ring") && r.stderr.contains("'pooled'"),
        "{}",
        r.stderr
    );
    let r = iolab(&[
        "run",
        "--method",
        "io_uring",
        "--ring",
        "shared",
        "--threads",
        "2",
        "--single-issuer",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--single-issuer") && r.stderr.contains("shared-submitter"),
        "{}",
        r.stderr
    );
}

#[test]
fn producer_consumer_rings_reap_on_their_own_thread() {
    // The thesis's shape: SQPOLL, one request per submission; the consumer thread does the waiting, so
    // the worker's own submissions need no syscall while the SQ thread is awake.
    let dir = tmpfs_dir();
    let f = file(&dir, "pc.dat");
    let r = run_json(&[
        "--method",
        "io_uring",
        "--ring",
        "producer-consumer",
        "--sqpoll",
        "--qd",
        "32",
        "--batch",
        "1",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "5000",
        "--verify",
    ]);
    assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
    assert_eq!(u64_of(&r, &["uring", "requests"]), 5000);
    assert_eq!(r["uring"]["design"], "producer-consumer");
    assert_eq!(
        hist(&r, "batch_histogram").iter().map(|b| b.0).max(),
        Some(1)
    );
    assert!(
        u64_of(&r, &["uring", "submissions_without_syscall"]) > 0,
        "{}",
        r["uring"]
    );
    let e = iolab(&[
        "run",
        "--method",
        "io_uring",
        "--ring",
        "producer-consumer",
        "--single-issuer",
        "--defer-taskrun",
    ]);
    assert_eq!(e.code, 2);
    assert!(e.stderr.contains("--defer-taskrun"), "{}", e.stderr);
}
