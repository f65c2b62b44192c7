//! Workloads in fio's terms: access distributions for random offsets (`--distribution`), paced runs
//! (`--rate-iops`, `--rate`) and mixed reads and writes (`--op mixed --read-pct`). Each test checks what
//! landed or what the kernel counted, not what iolab says of itself.

mod common;
use common::*;

/// A usage error: exit 2, the flag named with the reason.
fn refused(args: &[&str], flag: &str, word: &str) {
    refused_by(&["run", "--ops", "10"], args, flag, word);
}

/// 20,000 random 4 KiB writes over a 64 MiB file (16,384 blocks), verified: the distinct blocks the
/// read-back found.
fn distinct_blocks(
    dir: &tempfile::TempDir,
    name: &str,
    dist: &str,
    seed: &str,
) -> (u64, serde_json::Value) {
    let t = path_str(&file(dir, name));
    let v = run_json(&[
        "--target",
        &t,
        "--pattern",
        "rand",
        "--distribution",
        dist,
        "--ops",
        "20000",
        "--file-size",
        "64m",
        "--seed",
        seed,
        "--verify",
        "--count",
        "none",
    ]);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0, "{dist}: {v}");
    (u64_of(&v, &["verify", "blocks_checked"]), v)
}

/// zipf:1.2 sends most writes to a few blocks: the verified read-back finds far fewer distinct blocks
/// than a uniform plan's (which touches about 1 - e^-1.22 = 70% of them), every one with the bytes the
/// plan put there; the same seed replays the same blocks; the spec records the distribution.
#[test]
fn zipf_writes_land_on_few_blocks_and_replay_from_the_seed() {
    let dir = disk_dir();
    let (uniform, _) = distinct_blocks(&dir, "u.dat", "uniform", "7");
    let (zipf, v) = distinct_blocks(&dir, "z.dat", "zipf:1.2", "7");
    let (again, _) = distinct_blocks(&dir, "z2.dat", "zipf:1.2", "7");
    assert!(
        uniform > 10_000,
        "uniform touched {uniform} of 16,384 blocks"
    );
    assert!(
        zipf * 3 < uniform,
        "zipf:1.2 touched {zipf} blocks, uniform {uniform}"
    );
    assert_eq!(zipf, again, "the same seed replays the same blocks");
    assert_eq!(v["spec"]["distribution"], "zipf:1.2", "{}", v["spec"]);
}

#[test]
fn distribution_refusals_name_the_flag() {
    refused(
        &["--distribution", "zipf:1.2"],
        "--distribution",
        "--pattern rand",
    );
    refused(
        &["--pattern", "rand", "--distribution", "zipf:1"],
        "--distribution",
        "not 1",
    );
    refused(
        &["--pattern", "rand", "--distribution", "pareto"],
        "--distribution",
        "needs its parameter",
    );
    refused(
        &[
            "--pattern",
            "rand",
            "--distribution",
            "zipf:1.2",
            "--method",
            "offload",
        ],
        "--distribution",
        "uniformly",
    );
}

/// The kernel's count of the tracepoint named `name` in a run's JSON.
fn tracepoint(v: &serde_json::Value, name: &str) -> u64 {
    v["kernel"]["tracepoints"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == name))
        .and_then(|t| t["value"].as_u64())
        .unwrap_or_else(|| panic!("no count of {name}: {}", v["kernel"]))
}

/// pread()/pwrite() mixed 70/30 on a new file: the kernel's read and write calls (/proc/self/io) are
/// exactly the reads and writes iolab reports, the share is the one asked for, each direction has its own
/// latencies, and every block a write reached holds the write's bytes (the file was filled with another
/// generation of stamps, so a write that did not land would show).
#[test]
fn mixed_psync_reads_and_writes_are_the_kernels_and_land() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "mixed.dat"));
    let v = run_json(&[
        "--target",
        &t,
        "--op",
        "mixed",
        "--read-pct",
        "70",
        "--pattern",
        "rand",
        "--ops",
        "20000",
        "--file-size",
        "64m",
        "--verify",
    ]);
    let (reads, writes) = (
        u64_of(&v, &["mixed", "reads", "ops"]),
        u64_of(&v, &["mixed", "writes", "ops"]),
    );
    assert_eq!(reads + writes, 20_000, "{}", v["mixed"]);
    assert_eq!(u64_of(&v, &["syscalls", "kernel_rw", "syscr"]), reads);
    assert_eq!(u64_of(&v, &["syscalls", "kernel_rw", "syscw"]), writes);
    let share = f64_of(&v, &["mixed", "reads", "share"]);
    assert!((share - 0.70).abs() < 0.02, "read share {share}");
    assert_eq!(u64_of(&v, &["mixed", "reads", "latency", "count"]), reads);
    assert_eq!(u64_of(&v, &["mixed", "writes", "latency", "count"]), writes);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    assert!(
        u64_of(&v, &["verify", "blocks_checked"]) > 1000,
        "{}",
        v["verify"]
    );
    assert_eq!(u64_of(&v, &["spec", "read_pct"]), 70);
}

/// io_uring mixed: each request's opcode is its own, and the kernel's submissions of READ and WRITE
/// (io_uring_submit_req filtered by opcode, in the counting pass) add up to the pass's ops in the share
/// asked for; the timed pass's bytes are verified.
#[test]
fn mixed_io_uring_requests_are_reads_and_writes_as_the_kernel_counts() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "mixed-uring.dat"));
    let v = run_json_counted(&[
        "--method",
        "io_uring",
        "--qd",
        "16",
        "--batch",
        "4",
        "--target",
        &t,
        "--op",
        "mixed",
        "--read-pct",
        "25",
        "--pattern",
        "rand",
        "--ops",
        "20000",
        "--file-size",
        "64m",
        "--verify",
    ]);
    let counted = u64_of(&v, &["kernel", "tracepoint_pass_ops"]);
    let (r, w) = (
        tracepoint(&v, "io_uring:io_uring_submit_req opcode READ"),
        tracepoint(&v, "io_uring:io_uring_submit_req opcode WRITE"),
    );
    assert_eq!(
        r + w,
        counted,
        "READ {r} + WRITE {w} against {counted} ops counted"
    );
    let share = r as f64 / counted as f64;
    assert!(
        (share - 0.25).abs() < 0.05,
        "READ share {share} of the counting pass"
    );
    let reads = u64_of(&v, &["mixed", "reads", "ops"]);
    assert_eq!(reads + u64_of(&v, &["mixed", "writes", "ops"]), 20_000);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    assert_eq!(v["uring"]["opcode"], "READ and WRITE");
}

/// Native AIO runs a mixed workload as fio's libaio does, a direction per request: O_DIRECT random reads
/// and writes at depth 8, every write landed (read back), the reads' share as asked, and the device read
/// at least the bytes the reads asked for (O_DIRECT: none came from the page cache).
#[test]
fn mixed_aio_requests_read_and_write_per_request() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "mixed-aio.dat"));
    let v = run_json(&[
        "--method",
        "aio",
        "--qd",
        "8",
        "--target",
        &t,
        "--op",
        "mixed",
        "--read-pct",
        "70",
        "--pattern",
        "rand",
        "--ops",
        "4000",
        "--file-size",
        "16m",
        "--direct",
        "--verify",
    ]);
    let (reads, writes) = (
        u64_of(&v, &["mixed", "reads", "ops"]),
        u64_of(&v, &["mixed", "writes", "ops"]),
    );
    assert_eq!(reads + writes, 4000, "{}", v["mixed"]);
    assert!((reads as f64 / 4000.0 - 0.7).abs() < 0.05, "{}", v["mixed"]);
    assert_eq!(u64_of(&v, &["aio", "requests"]), 4000, "{}", v["aio"]);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    assert!(u64_of(&v, &["verify", "blocks_checked"]) > 0);
    match v["device_io"]["read_bytes"].as_u64() {
        Some(b) => assert!(b >= reads * 4096, "device read {b} bytes for {reads} reads"),
        None => eprintln!("device read bytes not checked: the test directory has no block device"),
    }
}

#[test]
fn mixed_refusals_name_the_flag() {
    refused(&["--read-pct", "50"], "--read-pct", "--op mixed");
    refused(
        &["--op", "mixed", "--method", "sync"],
        "--op",
        "psync, pv2, io_uring, aio",
    );
    refused(
        &[
            "--op",
            "mixed",
            "--read-pct",
            "101",
            "--target",
            "/tmp/x.dat",
        ],
        "--read-pct",
        "0 to 100",
    );
    refused(&["--op", "mixed"], "--op", "regular file or a block device");
    refused(
        &["--op", "mixed", "--target", "pipe"],
        "--op",
        "goes one way",
    );
    refused(
        &[
            "--op",
            "mixed",
            "--method",
            "io_uring",
            "--vectored",
            "--target",
            "/tmp/x.dat",
        ],
        "--vectored",
        "--op mixed",
    );
}

/// A paced run never starts an op before it is due: 2 threads of 600 ops at 2,000 ops/s each take at
/// least 600 intervals (0.3 s, its last op's included) whatever the machine, the result says the pace was met exactly when the
/// slowest thread reached 99% of it, and every op's latency was recorded.
#[test]
fn paced_ops_wait_for_their_time() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "paced.dat"));
    let v = run_json(&[
        "--target",
        &t,
        "--rate-iops",
        "2000",
        "--ops",
        "1200",
        "--threads",
        "2",
    ]);
    let p = &v["paced"];
    assert_eq!(p["rate_iops"].as_f64(), Some(2000.0), "{p}");
    // A thread waits out its last op's interval: its 600 ops span 600 intervals, and no rate taken over
    // its span (the thread's, the run's) beats the pace.
    for th in v["per_thread"].as_array().unwrap() {
        let wall = th["wall_s"].as_f64().unwrap();
        assert!(
            wall >= 600.0 / 2000.0 * (1.0 - 1e-6),
            "a thread ran 600 ops in {wall} s: faster than its pace"
        );
    }
    let achieved = p["achieved_iops"].as_f64().unwrap();
    assert!(achieved <= 2000.0 * (1.0 + 1e-6), "achieved {achieved}");
    let iops = f64_of(&v, &["iops"]);
    assert!(
        iops <= 2.0 * 2000.0 * (1.0 + 1e-6),
        "the run's {iops} ops/s"
    );
    assert_eq!(p["met"].as_bool(), Some(achieved >= 0.99 * 2000.0), "{p}");
    assert_eq!(u64_of(&v, &["latency", "count"]), 1200);
    assert!(
        v["timed"].as_str().unwrap().contains("when it was due"),
        "{}",
        v["timed"]
    );
}

/// A pace no thread can keep (ten million 4 KiB writes a second): the result says it was not met, ops
/// started late, and the latencies run from when each op was due, so the last ops carry the whole lag
/// (about the run's length less the paced length), not the few microseconds of their own write.
#[test]
fn an_unmet_pace_shows_in_the_latencies() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "unmet.dat"));
    let v = run_json(&["--target", &t, "--rate-iops", "10000000", "--ops", "20000"]);
    let p = &v["paced"];
    assert_eq!(p["met"].as_bool(), Some(false), "{p}");
    assert!(u64_of(&v, &["paced", "late_ops"]) > 0, "{p}");
    let lag_ns = f64_of(&v, &["wall_s"]) * 1e9 - 20_000.0 / 10_000_000.0 * 1e9;
    let max = f64_of(&v, &["latency", "max_ns"]);
    assert!(
        max > 0.5 * lag_ns,
        "latency max {max} ns against a lag of {lag_ns} ns by the end"
    );
    assert!(f64_of(&v, &["paced", "max_lag_ns"]) > 0.5 * lag_ns, "{p}");
}

#[test]
fn pace_refusals_name_the_flag() {
    refused(
        &["--rate-iops", "100", "--method", "io_uring"],
        "--rate-iops",
        "queues its requests",
    );
    refused(
        &["--rate-iops", "100", "--rate", "1m"],
        "--rate",
        "give one",
    );
    refused(&["--rate-iops", "0"], "--rate-iops", "less than one op");
    refused(
        &["--rate", "100", "--bs", "4k"],
        "--rate",
        "less than one op",
    );
    refused(
        &["--rate-iops", "100", "--clock-every", "8"],
        "--clock-every",
        "clock read per op",
    );
    // 50 ms holds no interval of 10 ops/s: refused, not "1 op in 2 µs".
    refused(
        &["--rate-iops", "10", "--duration", "0.05"],
        "--duration",
        "shorter than one interval",
    );
}

/// The 4 KiB blocks of `path` that hold anything but zeros.
fn written_blocks(path: &std::path::Path) -> Vec<u64> {
    let data = std::fs::read(path).unwrap();
    data.chunks(4096)
        .enumerate()
        .filter(|(_, b)| b.iter().any(|&x| x != 0))
        .map(|(i, _)| i as u64)
        .collect()
}

/// --skip (fio's rw=write:N): 8 writes of 4 KiB with 12 KiB holes land on every fourth block of a
/// 256 KiB file and nowhere else; backwards (-8k) they land on block 0, then from 8 KiB before the
/// region's end down, one block apart, as fio's walk goes (the kernel's write count is the ops').
#[test]
fn skipped_writes_land_with_holes_or_backwards() {
    let dir = disk_dir();
    for (skip, bytes, name, want) in [
        ("12k", 12288, "holes.dat", vec![0, 4, 8, 12, 16, 20, 24, 28]),
        ("-8k", -8192, "back.dat", vec![0, 57, 58, 59, 60, 61, 62]),
    ] {
        let t = path_str(&file(&dir, name));
        let ops = want.len().to_string();
        let v = run_json(&[
            "--target",
            &t,
            "--file-size",
            "256k",
            "--skip",
            skip,
            "--ops",
            &ops,
            "--keep",
        ]);
        assert_eq!(v["spec"]["skip"], bytes, "{}", v["spec"]);
        assert_eq!(written_blocks(&file(&dir, name)), want, "--skip {skip}");
        assert_eq!(
            u64_of(&v, &["syscalls", "kernel_rw", "syscw"]),
            want.len() as u64,
            "{}",
            v["kernel"]
        );
    }
    refused(
        &["--skip", "4k", "--pattern", "rand"],
        "--skip",
        "--pattern seq",
    );
    refused(
        &["--skip", "4k", "--op", "mixed", "--method", "psync"],
        "--skip",
        "one direction",
    );
    refused(&["--skip", "4k", "--zone-size", "8k"], "--skip", "give one");
    refused(&["--skip", "4k", "--verify"], "--skip", "--verify");
    refused(&["--skip", "4q"], "--skip", "unknown unit");
    // 16 ops with 8 KiB holes over 64 KiB: the walk's end after 6, said; a new file holds the walk whole.
    let t = path_str(&file(&dir, "wrap.dat"));
    let a = [
        "--target", &t, "--skip", "8k", "--ops", "16", "--count", "none",
    ];
    let r = iolab(&[&["run", "-v", "--file-size", "64k"][..], &a].concat());
    assert!(
        r.stdout.contains("after 6 ops and starts over"),
        "{}",
        r.stdout
    );
    let r = iolab(&[&["run", "-v"][..], &a, &["--keep"]].concat());
    assert!(!r.stdout.contains("starts over"), "{}", r.stdout);
    assert_eq!(written_blocks(&file(&dir, "wrap.dat")).len(), 16);
}

/// The 4 KiB blocks of `path` that hold only zeros.
fn zero_blocks(path: &std::path::Path) -> usize {
    let data = std::fs::read(path).unwrap();
    data.chunks(4096)
        .filter(|b| b.iter().all(|&x| x == 0))
        .count()
}

/// --bs-split (fio's bssplit): 8 MiB written in ops of 4 or 64 KiB drawn per op land whole, the kernel
/// counting the bytes and a write per op; the lengths' mean puts the ops near 8 MiB / 34 KiB; the
/// intervals and the threads add up to the run's bytes.
#[test]
fn drawn_lengths_land_and_count_as_the_kernel_counts() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "split.dat"));
    let v = run_json(&[
        "--target",
        &t,
        "--bs-split",
        "4k/50:64k/50",
        "--size",
        "8m",
        "--file-size",
        "8m",
        "--keep",
        "--threads",
        "2",
        "--log-interval",
        "10",
    ]);
    let ops = u64_of(&v, &["ops"]);
    assert_eq!(u64_of(&v, &["bytes"]), 8 << 20, "{}", v["spec"]);
    assert_eq!(u64_of(&v, &["syscalls", "kernel_rw", "wchar"]), 8 << 20);
    assert_eq!(u64_of(&v, &["syscalls", "kernel_rw", "syscw"]), ops);
    assert!(
        (150..400).contains(&ops),
        "{ops} ops of a mean 34 KiB for 8 MiB"
    );
    assert_eq!(
        (v["spec"]["bs"].as_u64(), v["spec"]["bs_split"].as_str()),
        (Some(4096), Some("4k/50:64k/50"))
    );
    assert_eq!(
        zero_blocks(&file(&dir, "split.dat")),
        0,
        "every block written"
    );
    let sum = |k: &str| -> u64 {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x["bytes"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(sum("per_thread"), 8 << 20);
    // A timed run of queued ops: its intervals' bytes and its threads' add up to its bytes.
    let v = run_json(&[
        "--target",
        &t,
        "--bs-split",
        "4k/50:64k/50",
        "--duration",
        "0.3",
        "--log-interval",
        "20",
        "--threads",
        "2",
        "--method",
        "io_uring",
        "--qd",
        "4",
        "--overwrite",
    ]);
    let sum = |k: &str| -> u64 {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x["bytes"].as_u64().unwrap())
            .sum()
    };
    assert!(
        v["intervals"].as_array().unwrap().len() > 3,
        "{}",
        v["intervals"]
    );
    assert_eq!(sum("intervals"), u64_of(&v, &["bytes"]));
    assert_eq!(sum("per_thread"), u64_of(&v, &["bytes"]));
}

/// fio's bsrange over its random map (--distribution once): io_uring's random ops of 4 to 16 KiB cover
/// every block of the file once a pass, an op cut at a block already covered, so the pass is the file's
/// bytes exactly; a mixed aio run's reads and writes add up to its bytes, the last op passing 16 MiB.
#[test]
fn drawn_lengths_cover_each_block_once_a_pass_and_mix() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "once.dat"));
    let v = run_json(&[
        "--target",
        &t,
        "--bs-split",
        "4k-16k",
        "--pattern",
        "rand",
        "--distribution",
        "once",
        "--size",
        "4m",
        "--file-size",
        "4m",
        "--method",
        "io_uring",
        "--qd",
        "8",
        "--keep",
    ]);
    assert_eq!(u64_of(&v, &["bytes"]), 4 << 20);
    assert_eq!(zero_blocks(&file(&dir, "once.dat")), 0, "each block once");
    let t = path_str(&file(&dir, "mixed.dat"));
    let v = run_json(&[
        "--target",
        &t,
        "--bs-split",
        "4k/30:32k/70",
        "--op",
        "mixed",
        "--method",
        "aio",
        "--pattern",
        "rand",
        "--size",
        "16m",
        "--file-size",
        "4m",
    ]);
    let dir_bytes = |d: &str| u64_of(&v, &["mixed", d, "bytes"]);
    let total = u64_of(&v, &["bytes"]);
    assert!((16 << 20..(16 << 20) + 32768).contains(&total), "{total}");
    assert_eq!(dir_bytes("reads") + dir_bytes("writes"), total);
    for (flags, says) in [
        (&["--verify"][..], "not with --verify"),
        (&["--method", "vectored"][..], "--method vectored"),
        (&["--skip", "4k"][..], "not with --skip"),
        (
            &["--method", "io_uring", "--nop-requests"][..],
            "not with --nop-requests",
        ),
        (
            &["--pattern", "rand", "--distribution", "zipf:1.2"][..],
            "uniform or once",
        ),
        (&["--bs", "8k"][..], "drop --bs"),
        (&["--target", "/dev/null"][..], "no offsets"),
    ] {
        refused(
            &[&["--bs-split", "4k-16k"][..], flags].concat(),
            "--bs-split",
            says,
        );
    }
}
