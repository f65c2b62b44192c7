//! Issue 15, classes 3 and 4: a full filesystem under an mmap run is an ENOSPC error (never SIGBUS), and
//! running out of memory is an error (never an abort): exit 1 with a message that names the errno, the
//! size or space asked for and what to do, the files iolab created removed, and a sweep's next point
//! unharmed. Sizes no machine like this one can hold are bad input (exit 2) before anything is created.
//! Tests that mount a small filesystem need root (and, for ext2, mkfs.ext2 and loop devices); they print
//! SKIPPED and why where these are missing.

mod common;
use common::*;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ----- helpers -----

/// `iolab` with ARGS given as one string of words, `{}` standing for `path` (paths here have no spaces).
fn iolab_w(args: &str, path: &str) -> Ran {
    let a = args.replace("{}", path);
    iolab(&a.split_whitespace().collect::<Vec<_>>())
}

/// [`run_json`] with ARGS given as in [`iolab_w`].
fn run_json_w(args: &str, path: &str) -> serde_json::Value {
    let a = args.replace("{}", path);
    run_json(&a.split_whitespace().collect::<Vec<_>>())
}

fn is_root() -> bool {
    // SAFETY: geteuid takes no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A filesystem mounted on a fresh directory for the length of a test, unmounted when dropped.
struct Mounted {
    dir: tempfile::TempDir,
}

impl Mounted {
    /// `mount ARGS DIR`; None (with the SKIPPED line printed) when not root or mount fails.
    fn new(test: &str, args: &[&str]) -> Option<Mounted> {
        if !is_root() {
            skip(
                "root",
                &format!("{test}: not root (mounting a small filesystem needs root)"),
            );
            return None;
        }
        let dir = disk_dir();
        let o = Command::new("mount")
            .args(args)
            .arg(dir.path())
            .output()
            .ok()?;
        if !o.status.success() {
            // A loop mount needs a loop device besides the mount itself.
            let loop_mount = args.contains(&"loop");
            skip(
                if loop_mount { "loop-device" } else { "mount" },
                &format!(
                    "{test}: mount {args:?} failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
            );
            return None;
        }
        Some(Mounted { dir })
    }

    /// An 8 MiB tmpfs.
    fn tmpfs_8m(test: &str) -> Option<Mounted> {
        Mounted::new(test, &["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
    }

    fn path(&self, name: &str) -> String {
        path_str(&self.dir.path().join(name))
    }

    /// The names in the mounted directory (lost+found aside).
    fn names(&self) -> Vec<String> {
        std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "lost+found")
            .collect()
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// `iolab ARGS` with the address-space limit (RLIMIT_AS, `ulimit -v`) set to `kib` KiB, killed (and the
/// test failed) if it has not ended after two minutes: a run that cannot get memory must end, not hang.
fn iolab_limited(kib: u64, args: &[&str]) -> Ran {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let bytes = kib * 1024;
    // SAFETY: the closure runs in the forked child before exec and only calls setrlimit, which is
    // async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let rl = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &rl) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let mut child = cmd.spawn().expect("iolab starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("iolab {args:?} under ulimit -v {kib} hung (a thread waiting for others that never started?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A run into DIR/f that must fail for want of memory: exit 1, "out of memory (ENOMEM)", the size asked
/// for in bytes, the RLIMIT_AS limit, what to lower; DIR left empty.
fn out_of_memory(dir: &tempfile::TempDir, args: &[&str], bytes: u64, flag: &str) {
    let target = file(dir, "f");
    let mut a = vec![
        "run",
        "--target",
        target.to_str().unwrap(),
        "--count",
        "none",
    ];
    a.extend_from_slice(args);
    let r = iolab_limited(200_000, &a);
    assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
    assert!(
        r.stderr
            .starts_with("iolab: out of memory (ENOMEM): cannot allocate")
            && r.stderr.contains(&format!("({bytes} bytes)")),
        "{args:?}: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("RLIMIT_AS) is 195.3 MiB") && r.stderr.contains(flag),
        "{args:?}: {}",
        r.stderr
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(!target.exists(), "{args:?} left {}", target.display());
}

// ----- class 3: mmap and a full filesystem -----

#[test]
fn mmap_into_a_full_tmpfs_is_enospc_not_sigbus() {
    let Some(fs) = Mounted::tmpfs_8m("mmap_into_a_full_tmpfs_is_enospc_not_sigbus") else {
        return;
    };
    let target = fs.path("f");
    for threads in ["1", "4"] {
        let r = iolab_w(
            &format!("run --method mmap --target {{}} --file-size 64m --bs 1m --ops 64 --threads {threads} --count none"),
            &target,
        );
        assert_eq!(r.code, 1, "{threads} threads: {}", r.stderr);
        assert!(
            r.stderr.contains("fallocate failed: ENOSPC") && r.stderr.contains("64 MiB"),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr
                .contains("free space, use a smaller --file-size or --ops"),
            "{}",
            r.stderr
        );
        assert!(fs.names().is_empty(), "left behind: {:?}", fs.names());
    }
    // What fits runs, says its blocks were reserved, and lands.
    let v = run_json_w(
        "--method mmap --target {} --file-size 4m --bs 1m --ops 8 --verify",
        &target,
    );
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    assert_eq!(u64_of(&v, &["verify", "blocks_checked"]), 4);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("reserved the mapped range's 4 MiB with fallocate(2)"),
        "{notes}"
    );
    assert!(fs.names().is_empty(), "left behind: {:?}", fs.names());
}

#[test]
fn a_sweep_goes_on_after_a_point_that_found_no_space_and_ends_with_exit_1() {
    let Some(fs) =
        Mounted::tmpfs_8m("a_sweep_goes_on_after_a_point_that_found_no_space_and_ends_with_exit_1")
    else {
        return;
    };
    let rec_dir = disk_dir();
    let rec = file(&rec_dir, "sweep.jsonl");
    let r = iolab_w(
        &format!(
            "sweep --vary file-size=64m,4m,5m --method mmap --target {{}} --bs 1m --ops 16 --count none --out {}",
            rec.display()
        ),
        &fs.path("f"),
    );
    // The other points ran; the sweep as a whole failed, and says which point and why.
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("iolab sweep: 1 of 3 points failed") && r.stderr.contains("ENOSPC"),
        "{}",
        r.stderr
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&rec)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let err = lines[0]["error"].as_str().unwrap_or_default();
    assert!(err.contains("ENOSPC"), "first point: {}", lines[0]);
    // It ran and failed: said so, not "not run".
    assert!(r.stdout.contains("failed: "), "{}", r.stdout);
    assert!(
        r.stdout.contains("1 without a result this time"),
        "{}",
        r.stdout
    );
    for l in &lines[1..] {
        assert!(l.get("error").is_none(), "a later point failed: {l}");
        assert!(u64_of(&l["result"], &["ops"]) > 0, "{l}");
    }
    assert!(fs.names().is_empty(), "left behind: {:?}", fs.names());
}

#[test]
fn without_fallocate_the_free_space_is_checked_and_the_result_says_so() {
    let test = "without_fallocate_the_free_space_is_checked_and_the_result_says_so";
    if Command::new("mkfs.ext2").arg("-V").output().is_err() {
        skip("mkfs", &format!("{test}: mkfs.ext2 is missing"));
        return;
    }
    // ext2 files have no extents: fallocate(2) answers EOPNOTSUPP.
    let img_dir = disk_dir();
    let img = file(&img_dir, "ext2.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let ok = Command::new("mkfs.ext2")
        .args(["-q", "-F"])
        .arg(&img)
        .status()
        .unwrap();
    assert!(ok.success(), "mkfs.ext2");
    let Some(fs) = Mounted::new(test, &["-o", "loop", img.to_str().unwrap()]) else {
        return;
    };
    let target = fs.path("f");
    let r = iolab_w(
        "run --method mmap --target {} --file-size 64m --bs 1m --ops 64 --count none",
        &target,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("no space for the mmap run (ENOSPC)")
            && r.stderr.contains("fallocate: EOPNOTSUPP")
            && r.stderr.contains("use a smaller --file-size"),
        "{}",
        r.stderr
    );
    assert!(fs.names().is_empty(), "left behind: {:?}", fs.names());
    let v = run_json_w(
        "--method mmap --target {} --file-size 4m --bs 1m --ops 8 --verify",
        &target,
    );
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("cannot reserve blocks (fallocate(2): EOPNOTSUPP)")
            && notes.contains("statvfs showed"),
        "{notes}"
    );
    assert!(fs.names().is_empty(), "left behind: {:?}", fs.names());
}

/// The fault that reservation cannot prevent (here: the file truncated under the run) ends the run with
/// exit 1 and a message, and the file is removed; no root needed.
#[test]
fn a_mapping_fault_mid_run_is_exit_1_with_a_message_and_the_file_removed() {
    let dir = disk_dir();
    let target = file(&dir, "m.dat");
    let mut child = Command::new(bin())
        .args([
            "run",
            "--method",
            "mmap",
            "--target",
            target.to_str().unwrap(),
            "--file-size",
            "64m",
            "--bs",
            "4k",
            "--duration",
            "30",
            "--count",
            "none",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the file is mapped (it shows in the process's maps), then cut it short.
    let maps = format!("/proc/{}/maps", child.id());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&maps)
        .unwrap_or_default()
        .contains(target.to_str().unwrap())
    {
        assert!(
            child.try_wait().unwrap().is_none(),
            "iolab ended before mapping"
        );
        assert!(Instant::now() < deadline, "the target was never mapped");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .open(&target)
        .unwrap()
        .set_len(0)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("iolab: SIGBUS: a page of the mapping of ")
            && stderr.contains(target.to_str().unwrap())
            && stderr.contains("full (ENOSPC)")
            && stderr.contains("truncated under iolab")
            && stderr.contains("removed what iolab created"),
        "{stderr}"
    );
    assert!(!target.exists(), "left {}", target.display());
}

// ----- class 4: memory -----

#[test]
fn a_stdio_buffer_beyond_1_gib_is_bad_input_before_anything_is_created() {
    let dir = disk_dir();
    let target = file(&dir, "f");
    let t = path_str(&target);
    let r = iolab_w(
        "run --method stdio --stdio-buffer 1t --target {} --ops 10",
        &t,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "iolab: --stdio-buffer: 1 TiB (1099511627776 bytes) is more than the 1 GiB accepted"
        ),
        "{}",
        r.stderr
    );
    assert!(!target.exists());
    let r = iolab_w("run --bs 2g --target {}", &t);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("iolab: --bs: 2 GiB (2147483648 bytes) is more than the 1 GiB"),
        "{}",
        r.stderr
    );
    assert!(!target.exists());
    // Beyond 64 bits is the same answer with the maximum, never "not a size".
    let r = iolab_w("run --bs 99999999999t --target {}", &t);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "iolab: --bs: '99999999999t' is more than the 1 GiB accepted per operation"
        ),
        "{}",
        r.stderr
    );
    let r = iolab_w("run --ops 99999999999999999999 --target {}", &t);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("is too large for a count; the largest is 18446744073709551615"),
        "{}",
        r.stderr
    );
    assert!(!target.exists());
}

#[test]
fn buffers_beyond_this_machines_memory_are_bad_input() {
    let total = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:").map(|v| v.trim().to_string()))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .expect("MemTotal")
        * 1024;
    if total >= 1 << 40 {
        skip("memory-size", "1 TiB of memory or more here");
        return;
    }
    let dir = disk_dir();
    let target = file(&dir, "f");
    let r = iolab_w(
        "run --bs 1g --threads 1024 --target {} --ops 1024",
        &path_str(&target),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "iolab: --bs: 1 GiB (1073741824 bytes) is more than this machine can hold"
        ) && r.stderr.contains("MemTotal")
            && r.stderr.contains("the most --bs can be here is"),
        "{}",
        r.stderr
    );
    assert!(!target.exists());
}

/// An offload data area io_uring will not register is bad input naming --bs and why (EFAULT beyond the
/// 1 GiB a fixed buffer may span), not the locked-memory hint; the target file is removed.
#[test]
fn an_offload_data_area_io_uring_will_not_register_names_bs_and_why() {
    let dir = disk_dir();
    let target = file(&dir, "f");
    let r = iolab_w(
        "run --method offload --bs 600m --ops 2 --target {}",
        &path_str(&target),
    );
    if let Err(why) = probed("method io_uring") {
        skip("io_uring", &format!("no io_uring here: {why}"));
        return;
    }
    if r.code == 0 {
        skip(
            "memlock",
            "this kernel's io_uring registers a 1.2 GiB fixed buffer",
        );
        return;
    }
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with(
            "iolab: --bs: the offload data area (1.2 GiB: --batch + 1 blocks of --bs)"
        ) && r.stderr.contains("1 GiB")
            && !r.stderr.contains("RLIMIT_MEMLOCK"),
        "{}",
        r.stderr
    );
    assert!(!target.exists(), "the target is removed");
}

#[test]
fn the_issues_out_of_memory_cases_exit_1_and_remove_the_file() {
    let dir = disk_dir();
    // A stdio buffer, the --verify buffers and a read run's prefill chunk larger than what is left.
    out_of_memory(
        &dir,
        &["--method", "stdio", "--stdio-buffer", "512m", "--ops", "10"],
        512 << 20,
        "lower --stdio-buffer",
    );
    out_of_memory(
        &dir,
        &["--bs", "64m", "--verify", "--ops", "2"],
        64 << 20,
        "--verify",
    );
    out_of_memory(
        &dir,
        &["--bs", "256m", "--op", "read", "--ops", "1"],
        256 << 20,
        "lower --bs",
    );
    // 32 threads fit in 200 MB now (glibc's per-thread malloc arenas are kept within the limit).
    let target = file(&dir, "t");
    let r = iolab_limited(
        200_000,
        &[
            "run",
            "--threads",
            "32",
            "--target",
            target.to_str().unwrap(),
            "--ops",
            "1000",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!target.exists());
    // 300 threads do not: the thread that cannot start is named, the others are let go (no hang).
    let r = iolab_limited(
        200_000,
        &[
            "run",
            "--threads",
            "300",
            "--target",
            target.to_str().unwrap(),
            "--ops",
            "1000",
            "--count",
            "none",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        (r.stderr.contains("cannot start worker thread") && r.stderr.contains("EAGAIN"))
            || r.stderr.contains("out of memory (ENOMEM)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("RLIMIT_AS"), "{}", r.stderr);
    assert!(!target.exists());
}

/// At every address-space limit from where iolab starts up to where the run fits, each way of running
/// ends with 0 or 1 (never an abort or a hang) and leaves nothing behind; every failure says what ran out.
#[test]
fn no_memory_limit_makes_a_run_abort_or_leave_files() {
    let dir = disk_dir();
    let target = file(&dir, "x");
    let t = target.to_str().unwrap();
    let runs = [
        "--threads 4 --verify --bs 256k --ops 64",
        "--method io_uring --ring producer-consumer --threads 2 --qd 4 --bs 256k --ops 64 --count none",
        "--method mmap --threads 2 --bs 256k --ops 64 --count none",
        "--method stdio --stdio-buffer 4m --op read --bs 1m --ops 8 --count none",
    ];
    // Below the limit where `iolab --version` runs, the binary's own mappings and the Rust runtime's
    // start-up (before main) do not fit: iolab never started, as with the dynamic loader.
    let floor = (12_000..=44_000)
        .step_by(2_000)
        .find(|&kib| iolab_limited(kib, &["--version"]).code == 0)
        .expect("iolab --version runs under a 44 MB address-space limit");
    println!("iolab starts from ulimit -v {floor} KiB");
    let mut started = 0;
    for extra in runs {
        for kib in (floor..=44_000).step_by(2_000) {
            let mut a = vec!["run", "--target", t];
            a.extend(extra.split_whitespace());
            let r = iolab_limited(kib, &a);
            if r.code == 127 && r.stderr.contains("error while loading shared libraries") {
                continue; // the dynamic loader itself did not fit: iolab never started
            }
            started += 1;
            assert!(
                r.code == 0 || r.code == 1,
                "{a:?} under ulimit -v {kib}: exit {}: {}",
                r.code,
                r.stderr
            );
            if r.code == 1 {
                assert!(
                    ["ENOMEM", "EAGAIN", "out of memory"]
                        .iter()
                        .any(|w| r.stderr.contains(w)),
                    "{a:?} under ulimit -v {kib}: {}",
                    r.stderr
                );
            }
            assert!(
                !target.exists(),
                "{a:?} under ulimit -v {kib} left {}",
                target.display()
            );
            let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
            assert!(left.is_empty(), "{a:?} under ulimit -v {kib} left {left:?}");
        }
    }
    assert!(started > 20, "iolab started under only {started} limits");
}
