//! Every bad-input case of the foundation issue: exit status 2 and one line naming the flag and what is
//! accepted; kernel errors at run time: exit 1 naming the syscall, the errno and a hint.

mod common;
use common::*;

/// Asserts exit 2, exactly one line on stderr, starting with `iolab: <flag>` and containing `needle`.
fn refused(args: &[&str], flag: &str, needle: &str) {
    let r = iolab(args);
    assert_eq!(r.code, 2, "{args:?} should exit 2; stderr: {}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected, got {lines:?}");
    assert!(
        lines[0].starts_with(&format!("iolab: {flag}")),
        "{args:?}: should name {flag}: {}",
        lines[0]
    );
    assert!(
        lines[0].contains(needle),
        "{args:?}: should say '{needle}': {}",
        lines[0]
    );
    assert!(
        r.stdout.is_empty(),
        "{args:?}: nothing on stdout after a refusal"
    );
}

#[test]
fn sizes_counts_and_names() {
    refused(&["run", "--bs", "0"], "--bs", "0 is not accepted");
    refused(
        &["run", "--bs", "4q"],
        "--bs",
        "expected a byte count such as 4, 512, 4k, 4KiB, 1m or 1MiB",
    );
    refused(
        &["run", "--file-size", "lots"],
        "--file-size",
        "expected a byte count",
    );
    refused(
        &["run", "--threads", "0"],
        "--threads",
        "expected 1 or more threads",
    );
    refused(
        &["run", "--ops", "0"],
        "--ops",
        "expected 1 or more operations",
    );
    refused(
        &["run", "--ops", "many"],
        "--ops",
        "expected a whole number",
    );
    refused(
        &["run", "--method", "dma"],
        "--method",
        "accepted: sync, psync, pv2, vectored, stdio, mmap, io_uring, aio, uring_cmd, splice, sendfile, copy_file_range, epoll, offload, nop",
    );
    refused(
        &["run", "--op", "append"],
        "--op",
        "expected write, read or mixed",
    );
    refused(
        &["run", "--fsync", "sometimes"],
        "--fsync",
        "none, end or every:N",
    );
    refused(
        &["run", "--method", "psync", "--qd", "8"],
        "--qd",
        "applies to --method io_uring, aio or uring_cmd only",
    );
    refused(
        &["run", "--method", "io_uring", "--qd", "4", "--batch", "8"],
        "--batch",
        "--batch <= --qd",
    );
    refused(
        &["run", "--method", "stdio", "--direct"],
        "--direct",
        "not possible with --method stdio",
    );
    refused(&["run", "--repeat", "-1"], "--repeat", "-1");
    // A paced thread of one op runs it at once: its rate would be the op's speed, not the pace.
    refused(
        &[
            "run",
            "--rate-iops",
            "1",
            "--ops",
            "1",
            "--target",
            "/dev/null",
        ],
        "--ops",
        "a thread of 1 op spans no interval of the pace",
    );
    // Counts no run can reach: more ops than an op a nanosecond for a year, or a pace past a year.
    refused(
        &[
            "run",
            "--ops",
            "18446744073709551615",
            "--target",
            "/dev/null",
        ],
        "--ops",
        "beyond the longest run iolab times: at most 31536000000000000 ops",
    );
    refused(
        &[
            "run",
            "--rate-iops",
            "1",
            "--ops",
            "100000000",
            "--target",
            "/dev/null",
        ],
        "--ops",
        "paced at 1 ops/s take 100000000 s, beyond the longest run iolab times (31536000 s, 365 days)",
    );
    refused(
        &[
            "run",
            "--rate-iops",
            "18446744073709551615",
            "--target",
            "/dev/null",
        ],
        "--rate-iops",
        "at most 1,000,000,000 (an op a nanosecond)",
    );
    // A bench's rounds and ops are bounded (2^64-1 rounds ran on without a word).
    refused(
        &["bench", "--rounds", "18446744073709551615"],
        "--rounds",
        "at most 1000 rounds are accepted",
    );
    refused(
        &["bench", "--ops", "18446744073709551615"],
        "--ops",
        "at most 1,000,000,000 ops a round are accepted",
    );
    // A permission to write over what exists is not varied (a point of `overwrite=true` wrote over an
    // existing file though the sweep gave no --overwrite).
    for key in ["overwrite", "allow-device-writes"] {
        refused(
            &["sweep", "--vary", &format!("{key}=true"), "--ops", "1"],
            "--vary",
            &format!("--{key} is not varied"),
        );
    }
    // One document on stdout (two ran together into neither).
    refused(
        &["run", "--json", "-", "--csv", "-", "--ops", "1"],
        "--csv",
        "one document goes to stdout",
    );
    // A window past the longest run.
    for flag in ["--op-log", "--log-interval"] {
        refused(
            &["run", flag, "18446744073709551615", "--ops", "10"],
            flag,
            "18446744073709551615 ms is longer than the longest run iolab times (31,536,000,000 ms",
        );
    }
    // A count of runs past what is kept for the statistics: refused, not an allocation failure.
    refused(
        &["run", "--repeat", "1000000000", "--ops", "10"],
        "--repeat",
        "1000000000: at most 10,000 runs are accepted",
    );
    // Commands to a driver have no page cache to bypass: no other method is suggested.
    refused(
        &["run", "--method", "uring_cmd", "--direct"],
        "--direct",
        "not needed with --method uring_cmd: its commands never pass through the page cache",
    );
    refused(
        &[
            "run",
            "--method",
            "nop",
            "--verify",
            "--target",
            "/dev/shm/iolab-never.dat",
        ],
        "--verify",
        "moves no data",
    );
}

#[test]
fn unknown_option_is_one_line_naming_it() {
    let r = iolab(&["run", "--frobnicate", "3"]);
    assert_eq!(r.code, 2);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("--frobnicate"), "{}", lines[0]);
    let r = iolab(&["explode"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("explode"), "{}", r.stderr);
}

#[test]
fn targets_that_cannot_be_used() {
    let dir = tmpfs_dir();
    let d = path_str(dir.path());
    refused(&["run", "--target", &d], "--target", "is a directory");
    refused(
        &["run", "--target", "/nonexistent-iolab-dir/x.dat"],
        "--target",
        "parent directory /nonexistent-iolab-dir does not exist",
    );
    refused(
        &["run", "--op", "read", "--target", "/dev/null"],
        "--op",
        "read from /dev/zero instead",
    );
    refused(
        &["run", "--method", "mmap", "--target", "/dev/null"],
        "--method",
        "mmap cannot map /dev/null",
    );
    refused(
        &[
            "run",
            "--method",
            "copy_file_range",
            "--target",
            "/dev/null",
        ],
        "--method",
        "copy_file_range copies between regular files",
    );
    refused(
        &[
            "run",
            "--method",
            "splice",
            "--op",
            "read",
            "--target",
            "/dev/zero",
        ],
        "--op",
        "use --op write",
    );
    refused(
        &["run", "--target", "/dev/null", "--verify"],
        "--verify",
        "keeps no data",
    );
    refused(
        &["run", "--target", "/dev/tty"],
        "--target",
        "character device other than /dev/null or /dev/zero",
    );
}

#[test]
fn o_direct_alignment_is_named() {
    // ext4 (the disk) reports its O_DIRECT alignment through statx; iolab names it.
    let dir = disk_dir();
    let f = file(&dir, "d.dat");
    let fs = f.to_str().unwrap();
    refused(
        &["run", "--direct", "--bs", "100", "--target", fs],
        "--bs",
        "O_DIRECT there needs multiples of",
    );
    refused(
        &["run", "--direct", "--offset", "100", "--target", fs],
        "--offset",
        "offsets that are multiples of",
    );
    assert!(
        !f.exists(),
        "a file created before the refusal is removed again"
    );
}

#[test]
fn spec_files() {
    let dir = tmpfs_dir();
    let spec = file(&dir, "s.toml");
    std::fs::write(&spec, "bs = \"4k\"\nblocksize = 8\n").unwrap();
    refused(
        &["run", "--spec", spec.to_str().unwrap()],
        "--spec",
        "unknown key 'blocksize'",
    );
    std::fs::write(&spec, "bs = [1, 2]\n").unwrap();
    refused(&["run", "--spec", spec.to_str().unwrap()], "--spec", "");
    refused(
        &["run", "--spec", "/nonexistent-iolab.toml"],
        "--spec",
        "cannot read",
    );
    // A good file, overridden by a flag.
    std::fs::write(
        &spec,
        "method = \"io_uring\"\nqd = 4\nbs = 512\nops = 100\ntarget = \"/dev/null\"\n",
    )
    .unwrap();
    let r = run_json(&["--spec", spec.to_str().unwrap(), "--bs", "1k"]);
    assert_eq!(r["spec"]["method"], "io_uring");
    assert_eq!(u64_of(&r, &["spec", "qd"]), 4);
    assert_eq!(
        u64_of(&r, &["spec", "bs"]),
        1024,
        "the flag overrides the file"
    );
    assert_eq!(u64_of(&r, &["ops"]), 100);
}

#[test]
fn kernel_errors_name_syscall_errno_and_hint() {
    // ENOSPC: a 64 KiB tmpfs, 1 MiB of writes. Needs root and mount(2).
    let dir = disk_dir();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let m = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .status();
    if !matches!(m, Ok(s) if s.success()) {
        skip("mount", "cannot mount a small tmpfs (needs root)");
        return;
    }
    let f = mnt.join("f.dat");
    let r = iolab(&[
        "run",
        "--target",
        f.to_str().unwrap(),
        "--file-size",
        "1m",
        "--ops",
        "256",
    ]);
    let removed = !f.exists();
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    assert!(
        removed,
        "the file iolab created is removed after a run-time failure too"
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let line = r.stderr.trim();
    assert!(line.contains("pwrite failed: ENOSPC"), "{line}");
    assert!(line.contains("hint: the filesystem is full"), "{line}");
}

#[test]
fn existing_json_file_is_not_replaced() {
    let dir = tmpfs_dir();
    let j = file(&dir, "r.json");
    std::fs::write(&j, "keep me").unwrap();
    refused(
        &["run", "--ops", "10", "--json", j.to_str().unwrap()],
        "--json",
        "does not replace files",
    );
    assert_eq!(std::fs::read_to_string(&j).unwrap(), "keep me");
}

/// A fresh directory with a read-only tmpfs mounted on it (unmounted by the caller), or None with the
/// SKIPPED line printed.
fn read_only_tmpfs() -> Option<tempfile::TempDir> {
    let d = tempfile::tempdir().unwrap();
    let ro = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs"])
        .arg(d.path())
        .status();
    if !ro.is_ok_and(|s| s.success()) {
        skip(
            "mount",
            "a read-only tmpfs could not be mounted (not root?)",
        );
        return None;
    }
    Some(d)
}

/// `vm --cache` in a place iolab cannot write is bad input naming --cache, before anything is fetched.
#[test]
fn a_vm_cache_iolab_cannot_write_in_names_the_flag() {
    let Some(d) = read_only_tmpfs() else {
        return;
    };
    let cache = path_str(&d.path().join("cache"));
    let r = iolab(&["vm", "--cache", &cache, "--", "run"]);
    let _ = std::process::Command::new("umount").arg(d.path()).status();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("iolab: --cache: iolab cannot write in")
            && r.stderr.contains("read-only filesystem")
            && !r.stderr.contains("the target"),
        "{}",
        r.stderr
    );
}

/// A new target on a read-only filesystem is refused before the run, naming --target (it failed with
/// EROFS when the file was made: exit 1).
#[test]
fn a_target_on_a_read_only_filesystem_is_refused_before_the_run() {
    let Some(d) = read_only_tmpfs() else {
        return;
    };
    let t = path_str(&d.path().join("x.dat"));
    let r = iolab(&["run", "--target", &t, "--ops", "10"]);
    let _ = std::process::Command::new("umount").arg(d.path()).status();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("iolab: --target: ") && r.stderr.contains("read-only filesystem"),
        "{}",
        r.stderr
    );
}

/// A directory of a kernel-interface filesystem as a run's target is refused as such, never with a
/// suggestion of a file inside it (which iolab refuses too); `sweep --out` at a symbolic link says so.
#[test]
fn a_proc_directory_target_and_a_linked_sweep_out_are_named_for_what_they_are() {
    refused(
        &["run", "--target", "/proc", "--ops", "1"],
        "--target",
        "not storage",
    );
    let r = iolab(&["run", "--target", "/proc", "--ops", "1"]);
    assert!(
        !r.stderr.contains("give a file path inside it"),
        "{}",
        r.stderr
    );
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("real.jsonl"), "").unwrap();
    std::os::unix::fs::symlink("real.jsonl", d.path().join("l.jsonl")).unwrap();
    let out = path_str(&d.path().join("l.jsonl"));
    refused(
        &["sweep", "--vary", "bs=4k,8k", "--out", &out],
        "--out",
        "is a symbolic link",
    );
}

/// What the guest would refuse is refused before the guest boots (no cache is made, nothing fetched):
/// a command that is not iolab's, a script line that is not, `vm` inside the guest, a taken --ssh port.
#[test]
fn vm_commands_and_ports_are_checked_before_the_boot() {
    let d = tempfile::tempdir().unwrap();
    let cache = path_str(&d.path().join("cache"));
    refused(
        &["vm", "--cache", &cache, "--", "frobnicate"],
        "--",
        "not an iolab command line",
    );
    refused(
        &["vm", "--cache", &cache, "--", "vm", "--", "run"],
        "--",
        "no QEMU",
    );
    // Nor a command that boots guests of its own.
    for own in [
        &["suite", "nowait", "--vm"][..],
        &["suite", "nowait", "--kernels", "host,6.1"],
        &["sweep", "--vary", "bs=4k,8k", "--kernels", "host,6.1"],
    ] {
        let args: Vec<&str> = ["vm", "--cache", &cache, "--"]
            .iter()
            .chain(own)
            .copied()
            .collect();
        refused(&args, "--", "the guest has no QEMU for");
    }
    let script = d.path().join("s.txt");
    std::fs::write(&script, "run --ops 10\niolab run --no-such-flag\n").unwrap();
    refused(
        &["vm", "--cache", &cache, "--script", &path_str(&script)],
        "--script",
        "command 2: not an iolab command line",
    );
    // A kernel is a release by its short name or an image package.
    refused(
        &["vm", "--cache", &cache, "--kernel", "7.0", "--", "run"],
        "--kernel",
        "7.0 is neither a release (6.1, 6.1-rt, 6.12, 6.12-rt) nor a kernel image package",
    );
    let taken = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    refused(
        &["vm", "--cache", &cache, "--ssh", &port, "--", "run"],
        "--ssh",
        "is in use",
    );
    assert!(!d.path().join("cache").exists(), "nothing was fetched");
}

/// `suite --kernels`: each kernel a release, a package or `host`, each once, two or more; refused before
/// anything runs or is fetched (no record file, no ./iolab-results).
#[test]
fn suite_kernels_are_checked_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let in_dir = |args: &[&str], flag: &str, needle: &str| {
        let out = std::process::Command::new(common::bin())
            .args(args)
            .current_dir(d.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("iolab: {flag}")) && err.contains(needle),
            "{args:?}: {err}"
        );
    };
    for (list, needle) in [
        ("6.1", "names one kernel"),
        ("host,6.1,host", "host is named twice"),
        ("host,,6.1", "has an empty name"),
        (
            "host,5.10",
            "5.10 is neither a release (6.1, 6.1-rt, 6.12, 6.12-rt)",
        ),
    ] {
        in_dir(&["suite", "nowait", "--kernels", list], "--kernels", needle);
    }
    in_dir(
        &["suite", "nowait", "--kernels", "host,6.1", "--vm"],
        "the argument '--kernels <LIST>'",
        "cannot be used with '--vm'",
    );
    in_dir(
        &[
            "suite",
            "nowait",
            "--kernels",
            "host,6.1",
            "--disk-dir",
            "/proc",
        ],
        "--disk-dir",
        "procfs",
    );
    // A guest sees the current directory as its 9p share: no disk or tmpfs of its own there.
    std::fs::create_dir(d.path().join("here")).unwrap();
    in_dir(
        &[
            "suite",
            "nowait",
            "--kernels",
            "host,6.1",
            "--disk-dir",
            "here",
        ],
        "--disk-dir",
        "9p share",
    );
    let toml = d.path().join("my.toml");
    let nowait = concat!(env!("CARGO_MANIFEST_DIR"), "/../../suites/nowait.toml");
    std::fs::copy(nowait, &toml).unwrap();
    let toml = toml.display().to_string();
    in_dir(
        &["suite", &toml, "--kernels", "host,6.1"],
        "suite",
        "relative to the current directory",
    );
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names.len(), 2, "nothing was made: {names:?}");
}

/// Results are never written into a kernel-interface filesystem, even by root (for whom the permission
/// bits there allow it): refused before the run, naming the flag.
#[test]
fn outputs_on_proc_and_sys_are_refused_before_the_run() {
    refused(
        &[
            "run",
            "--target",
            "/dev/null",
            "--ops",
            "1000",
            "--json",
            "/proc/x.json",
        ],
        "--json",
        "a kernel-interface filesystem",
    );
    refused(
        &["survey", "--tmp-dir", "/sys/kernel", "--no-json"],
        "--tmp-dir",
        "/sys/kernel is a directory of sysfs",
    );
}

/// A bare file name as target (`t.dat`): the kernel-side copies' source file goes beside it in the
/// current directory (copy_file_range needs one filesystem), not to $TMPDIR.
#[test]
fn a_bare_targets_copy_source_is_beside_it() {
    let d = disk_dir();
    let out = std::process::Command::new(bin())
        .args([
            "run",
            "--method",
            "copy_file_range",
            "--target",
            "t.dat",
            "--ops",
            "100",
            "--count",
            "none",
        ])
        .current_dir(d.path())
        .env("TMPDIR", "/nonexistent-iolab-tmpdir")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "target and source removed"
    );
}

/// An error that quotes its input says one line of at most 2,000 characters, the input's ends shown (a
/// 100 kB `bs` in a spec file was quoted whole).
#[test]
fn an_error_quoting_a_huge_input_shows_its_ends_in_one_short_line() {
    let d = tempfile::tempdir().unwrap();
    let spec = d.path().join("s.toml");
    std::fs::write(&spec, format!("bs = \"{}\"\n", "9".repeat(100_000))).unwrap();
    let r = iolab(&["run", "--spec", &path_str(&spec)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1);
    assert!(lines[0].chars().count() <= 2_000, "{}", lines[0].len());
    assert!(
        lines[0].starts_with("iolab: --bs: '999") && lines[0].ends_with("accepted per operation"),
        "{}",
        lines[0]
    );
}

/// Not run by itself: the skip that `a_skip_is_listed_and_fails_where_its_feature_is_expected` runs.
#[test]
#[ignore = "run by a_skip_is_listed_and_fails_where_its_feature_is_expected"]
fn a_test_that_skips() {
    skip("fio-plot", "a made-up reason");
}

/// A skip is printed and logged with its feature and test; where CI's machine has the feature
/// (IOLAB_EXPECT names it), the same skip fails the test.
#[test]
fn a_skip_is_listed_and_fails_where_its_feature_is_expected() {
    let dir = disk_dir();
    let log = dir.path().join("skips");
    let run = |expect: &str| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "a_test_that_skips", "--nocapture"])
            .env("IOLAB_EXPECT", expect)
            .env("IOLAB_SKIP_LOG", &log)
            .output()
            .unwrap()
    };
    let o = run("root,fio");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("SKIPPED fio-plot (a_test_that_skips): a made-up reason"),
        "{out}"
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged, "fio-plot\ta_test_that_skips\ta made-up reason\n");
    let o = run("root,fio-plot");
    let err = String::from_utf8_lossy(&o.stderr).to_string() + &String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("IOLAB_EXPECT names fio-plot, but it cannot run: a made-up reason"),
        "{err}"
    );
}
