//! Every method against /dev/null and a tmpfs file: the bytes that landed (content, checked with an
//! independent implementation of the pattern) and the kernel's own counts.

mod common;
use common::*;

const SYSCALL_METHODS: [&str; 3] = ["sync", "psync", "vectored"];

/// Kernel-side copies: writes only, from a source file.
const KCOPY: [&str; 3] = ["splice", "sendfile", "copy_file_range"];

#[test]
fn every_method_writes_to_dev_null_and_the_kernel_agrees() {
    for m in file_methods() {
        if m == "mmap" || m == "copy_file_range" {
            continue; // refused on /dev/null: see bad_input.rs
        }
        let r = run_json(&[
            "--method",
            m,
            "--target",
            "/dev/null",
            "--bs",
            "4k",
            "--ops",
            "3000",
        ]);
        assert_eq!(u64_of(&r, &["ops"]), 3000, "{m}");
        assert_eq!(u64_of(&r, &["bytes"]), 3000 * 4096, "{m}");
        let syscw = u64_of(&r, &["syscalls", "kernel_rw", "syscw"]);
        let wchar = u64_of(&r, &["syscalls", "kernel_rw", "wchar"]);
        match m {
            "sync" | "psync" | "pv2" | "vectored" => {
                assert_eq!(
                    syscw, 3000,
                    "{m}: one write syscall per op, by the kernel's count"
                );
                assert_eq!(wchar, 3000 * 4096, "{m}: every byte passed to the kernel");
                assert_eq!(u64_of(&r, &["syscalls", "method_count"]), 3000, "{m}");
            }
            "stdio" => {
                // glibc decides the calls, but every byte must reach write(2).
                assert_eq!(wchar, 3000 * 4096, "stdio: bytes through write(2)");
                assert!((1..=3000).contains(&syscw), "stdio syscw {syscw}");
                assert!(r["syscalls"]["method_count"].is_null());
            }
            "io_uring" => {
                assert_eq!(syscw, 0, "io_uring writes are not write(2) calls");
                assert_eq!(u64_of(&r, &["syscalls", "uring_requests"]), 3000);
                assert_eq!(
                    u64_of(&r, &["syscalls", "uring_enters"]),
                    3000,
                    "qd 1 batch 1: one enter per op"
                );
            }
            "splice" => {
                assert_eq!(
                    u64_of(&r, &["syscalls", "method_count"]),
                    6000,
                    "two splices per op"
                );
            }
            "sendfile" => {
                assert_eq!(syscw, 3000, "the kernel counts each sendfile as a write");
                assert_eq!(wchar, 3000 * 4096);
            }
            "aio" => {
                assert_eq!(syscw, 0, "AIO writes are not write(2) calls");
                assert_eq!(u64_of(&r, &["aio", "requests"]), 3000);
                assert_eq!(
                    u64_of(&r, &["aio", "io_submit_calls"]),
                    3000,
                    "qd 1 batch 1: one io_submit per op"
                );
            }
            "nop" => {
                assert_eq!(syscw, 0, "nop makes no kernel call");
                assert_eq!(u64_of(&r, &["syscalls", "method_count"]), 0);
            }
            _ => unreachable!(),
        }
        assert_eq!(
            u64_of(&r, &["latency", "count"]),
            3000,
            "{m}: one latency per op"
        );
    }
}

#[test]
fn every_method_lands_the_right_bytes_in_a_tmpfs_file() {
    let dir = tmpfs_dir();
    for m in file_methods() {
        for bs in [4usize, 4096] {
            let f = file(&dir, &format!("{m}-{bs}.dat"));
            let ops = 300u64;
            let bs_s = bs.to_string();
            let size = (ops * bs as u64).to_string();
            let mut args = vec![
                "--method",
                m,
                "--target",
                f.to_str().unwrap(),
                "--bs",
                &bs_s,
                "--ops",
                "300",
            ];
            args.extend_from_slice(&["--seed", "7", "--keep", "--file-size", &size]);
            if m != "nop" {
                args.push("--verify");
            }
            let r = run_json(&args);
            assert_eq!(u64_of(&r, &["ops"]), ops, "{m} {bs}");
            if m == "nop" {
                // nop moves no data: like fio's null engine, it makes no file at all.
                assert!(!f.exists(), "nop made {}", f.display());
                continue;
            }
            let (ok, bad) = check_blocks(&f, bs, 7, 0, 0..ops);
            {
                assert_eq!(
                    (ok, bad),
                    (ops, 0),
                    "{m} bs {bs}: blocks holding the expected bytes"
                );
                assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), ops);
                assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
            }
            assert_eq!(
                std::fs::metadata(&f).unwrap().len(),
                ops * bs as u64,
                "{m}: file sized by --file-size"
            );
        }
    }
}

/// A read run with --verify checks each block it read against the pattern a write run of the same seed
/// left (every method that reads, fio's read job with verify): a kept file written with seed 7 passes;
/// one changed byte is found in its block, named by offset, exit 1; another seed finds every block unlike.
#[test]
fn a_read_run_checks_the_blocks_an_earlier_write_run_left() {
    let dir = tmpfs_dir();
    let f = file(&dir, "written.dat");
    let t = path_str(&f);
    run_json(&["--target", &t, "--ops", "64", "--seed", "7", "--keep"]);
    let read = |m: &str, seed: &str| {
        let a = [
            "run",
            "--op",
            "read",
            "--method",
            m,
            "--target",
            &t,
            "--pattern",
            "rand",
            "--ops",
            "200",
            "--seed",
            seed,
            "--verify",
            "--count",
            "none",
            "--json",
            "-",
        ];
        iolab(&a)
    };
    for m in file_methods().into_iter().filter(|m| *m != "nop") {
        let r = read(m, "7");
        if r.code == 2 && r.stderr.contains("--op") {
            println!("{m}: reads nothing: {}", r.stderr.trim());
            continue;
        }
        assert_eq!(r.code, 0, "{m}: {}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let checked = u64_of(&v, &["verify", "blocks_checked"]);
        // 200 random reads of 64 blocks reach nearly all of them (64 x (1 - e^-3.1), 61), none twice counted.
        assert!((50..=64).contains(&checked), "{m}: {checked} blocks");
        assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0, "{m}");
    }
    let mut data = std::fs::read(&f).unwrap();
    data[5 * 4096 + 700] ^= 0xff;
    std::fs::write(&f, &data).unwrap();
    let r = iolab(&[
        "run", "--op", "read", "--target", &t, "--ops", "64", "--seed", "7", "--verify", "--count",
        "none", "--json", "-",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 1, "{}", v["verify"]);
    assert_eq!(v["verify"]["first_mismatch_offsets"][0], 5 * 4096);
    assert!(
        r.stderr
            .contains("1 of 64 blocks differ from iolab's pattern for seed 7"),
        "{}",
        r.stderr
    );
    let r = read("psync", "8");
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let checked = u64_of(&v, &["verify", "blocks_checked"]);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), checked);
}

#[test]
fn vectored_uneven_split_random_offsets_threads_and_offset() {
    let dir = tmpfs_dir();
    // 3 iovecs over 4096 bytes (1365 + 1365 + 1366).
    let f = file(&dir, "v.dat");
    run_json(&[
        "--method",
        "vectored",
        "--iovecs",
        "3",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "64",
        "--seed",
        "3",
        "--keep",
        "--verify",
    ]);
    assert_eq!(check_blocks(&f, 4096, 3, 0, 0..64), (64, 0));

    // Random pattern: every block that was written holds its own pattern; unwritten ones are zero.
    let f = file(&dir, "r.dat");
    let r = run_json(&[
        "--method",
        "psync",
        "--pattern",
        "rand",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "200",
        "--file-size",
        "256k",
        "--seed",
        "5",
        "--keep",
        "--verify",
    ]);
    let checked = u64_of(&r, &["verify", "blocks_checked"]);
    assert!(
        checked > 40 && checked <= 64,
        "distinct random blocks {checked}"
    );
    let data = std::fs::read(&f).unwrap();
    let mut written = 0;
    for b in 0..64u64 {
        let blk = &data[(b * 4096) as usize..((b + 1) * 4096) as usize];
        if blk.iter().any(|&x| x != 0) {
            assert_eq!(blk, expected_block(4096, 5, b).as_slice(), "block {b}");
            written += 1;
        }
    }
    assert_eq!(
        written, checked,
        "verify checked exactly the written blocks"
    );

    // Four threads, each its own region; and a start offset.
    let f = file(&dir, "t.dat");
    let r = run_json(&[
        "--method",
        "io_uring",
        "--qd",
        "4",
        "--threads",
        "4",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "400",
        "--offset",
        "8192",
        "--seed",
        "9",
        "--keep",
        "--verify",
    ]);
    assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), 400);
    assert_eq!(r["per_thread"].as_array().unwrap().len(), 4);
    assert_eq!(check_blocks(&f, 4096, 9, 8192, 0..400), (400, 0));
    let data = std::fs::read(&f).unwrap();
    assert!(
        data[..8192].iter().all(|&x| x == 0),
        "nothing written before --offset"
    );
}

#[test]
fn reads_from_dev_zero_and_from_files() {
    for m in file_methods().into_iter().filter(|m| !KCOPY.contains(m)) {
        let r = run_json(&[
            "--method",
            m,
            "--op",
            "read",
            "--target",
            "/dev/zero",
            "--bs",
            "4k",
            "--ops",
            "1000",
        ]);
        assert_eq!(u64_of(&r, &["ops"]), 1000, "{m}");
        if SYSCALL_METHODS.contains(&m) {
            assert_eq!(u64_of(&r, &["syscalls", "kernel_rw", "syscr"]), 1000, "{m}");
            assert_eq!(
                u64_of(&r, &["syscalls", "kernel_rw", "rchar"]),
                1000 * 4096,
                "{m}"
            );
        }
    }
    let dir = tmpfs_dir();
    let f = file(&dir, "read.dat");
    // iolab creates, prefills and removes the file it reads.
    let r = run_json(&[
        "--method",
        "psync",
        "--op",
        "read",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "500",
        "--file-size",
        "1m",
    ]);
    assert_eq!(u64_of(&r, &["syscalls", "kernel_rw", "rchar"]), 500 * 4096);
    assert!(
        r["notes"].to_string().contains("filled"),
        "the prefill is stated: {}",
        r["notes"]
    );
    assert!(!f.exists(), "the file iolab created is removed at exit");
    // An existing file may be read without --overwrite and is left as it was.
    std::fs::write(&f, vec![0xabu8; 65536]).unwrap();
    let r = run_json(&[
        "--method",
        "mmap",
        "--op",
        "read",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "100",
    ]);
    assert_eq!(u64_of(&r, &["target", "region_blocks_per_thread"]), 16);
    assert_eq!(std::fs::read(&f).unwrap(), vec![0xabu8; 65536]);
}

#[test]
fn flushes_are_counted_and_io_uring_batches() {
    let dir = tmpfs_dir();
    let f = file(&dir, "fs.dat");
    let r = run_json(&[
        "--method",
        "psync",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "1000",
        "--fsync",
        "every:100",
    ]);
    assert_eq!(u64_of(&r, &["flushes", "calls"]), 10);
    assert_eq!(
        u64_of(&r, &["syscalls", "method_count"]),
        1010,
        "pwrites plus fsyncs"
    );
    let r = run_json(&[
        "--method",
        "mmap",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "100",
        "--msync",
        "end",
        "--fsync",
        "end",
        "--overwrite",
        "--verify",
    ]);
    assert_eq!(u64_of(&r, &["flushes", "calls"]), 2);
    assert_eq!(
        u64_of(&r, &["syscalls", "method_count"]),
        2,
        "mmap: only msync and fsync"
    );
    let r = run_json(&[
        "--method",
        "io_uring",
        "--target",
        "/dev/null",
        "--ops",
        "4000",
        "--qd",
        "8",
        "--batch",
        "4",
    ]);
    let enters = u64_of(&r, &["syscalls", "uring_enters"]);
    assert_eq!(u64_of(&r, &["syscalls", "uring_requests"]), 4000);
    assert!(
        (1000..=1010).contains(&enters),
        "batch 4: about one enter per 4 requests, got {enters}"
    );
    let r = run_json(&[
        "--method",
        "io_uring",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "300",
        "--qd",
        "16",
        "--batch",
        "8",
        "--overwrite",
        "--verify",
        "--fsync",
        "every:64",
    ]);
    assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0);
    assert_eq!(u64_of(&r, &["flushes", "calls"]), 4);
}

#[test]
fn stdio_four_byte_writes_land_and_use_few_syscalls() {
    // The seed thesis's 4-byte writes: glibc's 4096-byte buffer makes one write(2) per 1024 ops.
    let dir = tmpfs_dir();
    let f = file(&dir, "s.dat");
    let r = run_json(&[
        "--method",
        "stdio",
        "--target",
        f.to_str().unwrap(),
        "--bs",
        "4",
        "--ops",
        "10240",
        "--seed",
        "11",
        "--keep",
        "--verify",
    ]);
    let syscw = u64_of(&r, &["syscalls", "kernel_rw", "syscw"]);
    assert!(
        (10..=12).contains(&syscw),
        "10 buffer flushes expected, kernel counted {syscw}"
    );
    assert_eq!(check_blocks(&f, 4, 11, 0, 0..10240), (10240, 0));
}

/// pv2 with RWF_NOWAIT: every op is counted either as finished by its non-blocking try or as one that
/// would have blocked (EAGAIN, a short transfer or EOPNOTSUPP) and was finished with a plain call; the
/// bytes land either way.
#[test]
fn pv2_nowait_counts_the_ops_that_would_have_blocked_and_lands_every_byte() {
    let disk = disk_dir();
    let tmp = tmpfs_dir();
    let ext4 = file(&disk, "pv2.dat");
    let shm = file(&tmp, "pv2.dat");
    for (target, verify) in [
        (path_str(&ext4), true),
        (path_str(&shm), true),
        ("/dev/null".to_string(), false),
    ] {
        let mut args = vec![
            "--method",
            "pv2",
            "--rw-flags",
            "nowait",
            "--target",
            &target,
            "--ops",
            "3000",
            "--bs",
            "4k",
        ];
        if verify {
            args.push("--verify");
        }
        let r = run_json(&args);
        let ops = u64_of(&r, &["ops"]);
        let blocked = u64_of(&r, &["nowait", "would_block"]);
        let fine = u64_of(&r, &["nowait", "completed_nowait"]);
        let share = f64_of(&r, &["nowait", "would_block_share"]);
        println!(
            "pv2 nowait on {target}: {blocked} of {ops} would have blocked ({:.1}%)",
            share * 100.0
        );
        assert_eq!(ops, 3000);
        assert_eq!(
            blocked + fine,
            ops,
            "would-block ops plus plain ops equal --ops"
        );
        assert!((share - blocked as f64 / ops as f64).abs() < 1e-9);
        // Each would-block op took one more call than the others.
        assert_eq!(u64_of(&r, &["syscalls", "method_count"]), ops + blocked);
        if verify {
            assert_eq!(u64_of(&r, &["verify", "mismatches"]), 0, "{target}");
            assert_eq!(u64_of(&r, &["verify", "blocks_checked"]), 3000, "{target}");
        }
    }
    let bad = iolab(&["run", "--method", "pv2", "--rw-flags", "nowait,later"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("--rw-flags: 'later' is not accepted"),
        "{}",
        bad.stderr
    );
    // RWF_APPEND grows the file by every op: only a bounded run into a file iolab creates.
    for (extra, words) in [
        (&["--duration", "1"][..], "give --ops or --size"),
        (
            &["--overwrite"][..],
            "never writes into a file iolab did not create",
        ),
        (&["--verify"][..], "--verify cannot find its blocks"),
    ] {
        let mut a = vec!["run", "--method", "pv2", "--rw-flags", "append"];
        a.extend_from_slice(extra);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}");
        assert!(r.stderr.contains(words), "{a:?}: {}", r.stderr);
    }
    let other = iolab(&["run", "--method", "psync", "--rw-flags", "nowait"]);
    assert_eq!(other.code, 2);
    assert!(
        other
            .stderr
            .contains("--rw-flags: applies to --method pv2 or io_uring only"),
        "{}",
        other.stderr
    );
}

/// pv2 with RWF_DONTCACHE (uncached buffered I/O, Linux 6.14+): the bytes land (`--verify`) on a filesystem
/// that supports it (the disk's), and tmpfs, which does not, is refused with the kernel's EOPNOTSUPP and
/// the flag named, never silently buffered.
#[test]
fn pv2_dontcache_lands_its_bytes_where_supported_and_is_refused_on_tmpfs() {
    let disk = disk_dir();
    let target = file(&disk, "dontcache.dat");
    let r = iolab(&[
        "run",
        "--method",
        "pv2",
        "--rw-flags",
        "dontcache",
        "--target",
        &path_str(&target),
        "--ops",
        "2000",
        "--bs",
        "4k",
        "--verify",
        "--count",
        "none",
        "--json",
        "-",
    ]);
    if let Err(why) = probed("pv2 --rw-flags dontcache") {
        skip("dontcache", &format!("the landing half: {why}"));
    } else {
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON on stdout");
        assert_eq!(u64_of(&v, &["ops"]), 2000);
        assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
        assert_eq!(u64_of(&v, &["verify", "blocks_checked"]), 2000);
        assert_eq!(v["spec"]["rw_flags"], libc::RWF_DONTCACHE);
    }
    let tmp = tmpfs_dir();
    let shm = file(&tmp, "dontcache.dat");
    let r = iolab(&[
        "run",
        "--method",
        "pv2",
        "--rw-flags",
        "dontcache",
        "--target",
        &path_str(&shm),
        "--ops",
        "10",
    ]);
    assert_ne!(
        r.code, 0,
        "tmpfs has no uncached buffered I/O: {}",
        r.stdout
    );
    assert!(
        r.stderr.contains("EOPNOTSUPP") && r.stderr.contains("dontcache"),
        "{}",
        r.stderr
    );
    let both = iolab(&[
        "run",
        "--method",
        "pv2",
        "--rw-flags",
        "dontcache",
        "--direct",
    ]);
    assert_eq!(both.code, 2);
    assert!(
        both.stderr.contains("--rw-flags") && both.stderr.contains("--direct"),
        "{}",
        both.stderr
    );
}
