//! `--layers`: each op's time split where the block layer's own tracepoints put it (bio queued, request
//! issued, completed), checked against what the kernel counted; reads from the page cache say so; an
//! interrupted or killed run leaves no ftrace instance that `iolab clean` cannot remove.

mod common;
use common::*;
use std::path::{Path, PathBuf};

/// One test at a time: each counts the disk's reads or looks for instances, which another test's run
/// (on the same disk, or killed and not yet cleaned) would add to.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The start of every test here: one at a time, in a fresh directory on a disk where the block layer can
/// be traced; `None` (and `SKIPPED` with the reason) otherwise.
fn traced_dir(test: &str) -> Option<(std::sync::MutexGuard<'static, ()>, tempfile::TempDir)> {
    let one = ONE.lock().unwrap_or_else(|p| p.into_inner());
    let dir = disk_dir();
    match cannot_trace(dir.path()) {
        Some((feature, why)) => {
            skip(feature, &format!("{test}: {why}"));
            None
        }
        None => Some((one, dir)),
    }
}

/// What this machine lacks to trace the block layer under `dir`, and why (not root, no tracefs, not a
/// block device).
fn cannot_trace(dir: &Path) -> Option<(&'static str, String)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some(("root", "not root (an ftrace instance needs root)".into()));
    }
    if !Path::new("/sys/kernel/tracing/instances").is_dir() {
        return Some((
            "tracepoints",
            "tracefs is not mounted at /sys/kernel/tracing".into(),
        ));
    }
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    (!Path::new(&format!("/sys/dev/block/{maj}:{min}")).exists()).then(|| {
        (
            "block-device",
            format!("{} is on no block device", dir.display()),
        )
    })
}

/// The whole disk a directory's filesystem is on (/sys/block/NAME), when it is not a partition.
fn disk_stat(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    if sys.join("partition").exists() {
        sys.parent().map(|p| p.join("stat"))
    } else {
        Some(sys.join("stat"))
    }
}

/// Reads completed on the disk (the first field of its stat file).
fn reads_completed(stat: &Path) -> u64 {
    std::fs::read_to_string(stat)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn direct_reads_are_split_at_the_block_layer_and_their_requests_are_the_kernels() {
    let Some((_one, dir)) = traced_dir("direct_reads_are_split_at_the_block_layer") else {
        return;
    };
    let f = path_str(&dir.path().join("l.dat"));
    let stat = disk_stat(dir.path()).unwrap();
    let before = reads_completed(&stat);
    let v = run_json(&[
        "--method",
        "psync",
        "--op",
        "read",
        "--pattern",
        "rand",
        "--direct",
        "--bs",
        "4k",
        "--target",
        &f,
        "--file-size",
        "64m",
        "--inflight",
        "4",
        "--ops",
        "8000",
        "--layers",
    ]);
    let after = reads_completed(&stat);
    let l = &v["layers"];
    assert!(l.is_object(), "no layers: {:?}", v["notes"]);
    let ops = u64_of(l, &["ops"]);
    assert!(u64_of(l, &["ops_unmatched"]) * 100 <= ops, "{l}");
    assert_eq!(u64_of(l, &["ops_without_request"]), 0, "{l}");
    // A 4 KiB O_DIRECT read is one request of its own.
    let requests = f64_of(l, &["requests"]);
    assert!((requests - 1.0).abs() < 0.01, "{l}");
    // The kernel completed the timed pass's reads and the traced pass's, and (nearly) nothing else.
    let traced = (requests * ops as f64).round() as u64;
    let expected = u64_of(&v, &["ops"]) + traced;
    let done = after - before;
    assert!(
        done >= expected && done <= expected + expected / 50 + 20,
        "kernel {done}, iolab {expected}"
    );
    // The parts add up to the traced pass's latency per op; the device took most of a direct read.
    let parts: f64 = ["before_ns", "queued_ns", "device_ns", "after_ns"]
        .iter()
        .map(|k| f64_of(l, &[k]))
        .sum();
    let pass = f64_of(l, &["pass_mean_ns"]);
    assert!(
        (parts - pass).abs() <= pass * 1e-6 + 1.0,
        "{parts} vs {pass}"
    );
    assert!(
        f64_of(l, &["device_ns"]) > 0.0
            && f64_of(l, &["device_p99_ns"]) >= f64_of(l, &["device_ns"])
    );
    assert_eq!(
        f64_of(l, &["timed_mean_ns"]),
        f64_of(&v, &["latency", "mean_ns"])
    );
    assert!(
        l["source"].as_str().unwrap().contains("block_rq_issue"),
        "{l}"
    );
}

#[test]
fn buffered_reads_of_a_cached_file_have_no_device_time_and_a_target_without_a_disk_says_why() {
    let Some((_one, dir)) = traced_dir("buffered_reads_of_a_cached_file") else {
        return;
    };
    // The file iolab makes for a read run is written through the page cache, so its reads come from it.
    let f = path_str(&dir.path().join("c.dat"));
    let v = run_json(&[
        "--method",
        "psync",
        "--op",
        "read",
        "--pattern",
        "rand",
        "--bs",
        "4k",
        "--target",
        &f,
        "--file-size",
        "8m",
        "--ops",
        "4000",
        "--layers",
    ]);
    let l = &v["layers"];
    assert_eq!(
        u64_of(l, &["ops_without_request"]),
        u64_of(l, &["ops"]),
        "{l}"
    );
    assert_eq!(f64_of(l, &["device_ns"]), 0.0, "{l}");
    assert_eq!(f64_of(l, &["requests"]), 0.0, "{l}");
    if let Ok(shm) = std::panic::catch_unwind(tmpfs_dir) {
        let g = path_str(&shm.path().join("t.dat"));
        let v = run_json(&[
            "--method", "psync", "--target", &g, "--ops", "1000", "--layers",
        ]);
        assert!(v["layers"].is_null());
        let notes = v["notes"].to_string();
        assert!(
            notes.contains("no time per layer") && notes.contains("no block device"),
            "{notes}"
        );
    }
}

/// The ftrace instance of run `pid` ("iolab-PID-START"), if it exists.
fn instance(pid: u32) -> Option<PathBuf> {
    let prefix = format!("iolab-{pid}-");
    instances()
        .into_iter()
        .find(|n| n.starts_with(&prefix))
        .map(|n| Path::new("/sys/kernel/tracing/instances").join(n))
}

/// A long traced run on a file in `dir`, once its instance exists.
fn traced_run(dir: &Path) -> Option<std::process::Child> {
    let f = path_str(&dir.join("k.dat"));
    let mut child = std::process::Command::new(bin())
        .args([
            "run", "--method", "psync", "--op", "read", "--direct", "--target", &f,
        ])
        .args([
            "--file-size",
            "16m",
            "--duration",
            "30s",
            "--layers",
            "--count",
            "none",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..400 {
        std::thread::sleep(std::time::Duration::from_millis(25));
        if instance(child.id()).is_some() {
            return Some(child);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn an_interrupted_run_removes_its_instance_and_clean_removes_a_killed_ones() {
    let Some((_one, dir)) = traced_dir("an_interrupted_run_removes_its_instance") else {
        return;
    };
    let mut child = traced_run(dir.path()).expect("the run made its ftrace instance");
    // SAFETY: kill with a pid of a child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130));
    assert_eq!(instance(child.id()), None, "SIGINT left it");
    let mut child = traced_run(dir.path()).expect("the run made its ftrace instance");
    child.kill().unwrap();
    child.wait().unwrap();
    let left = instance(child.id()).expect("killed, its instance went anyway?");
    let c = iolab(&["clean"]);
    assert_eq!(c.code, 0, "{}\n{}", c.stdout, c.stderr);
    assert!(
        !left.exists(),
        "clean left {}: {}",
        left.display(),
        c.stdout
    );
}

/// The instances under tracefs now.
fn instances() -> Vec<String> {
    std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("iolab-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_signal_as_the_instance_is_made_leaves_none() {
    let Some((_one, dir)) = traced_dir("a_signal_as_the_instance_is_made_leaves_none") else {
        return;
    };
    if std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_err()
    {
        skip("strace", "no strace to inject the signal with");
        return;
    }
    let f = path_str(&dir.path().join("s.dat"));
    let before = instances();
    // SIGINT as each of the first mkdirs returns: one of them makes the instance.
    for when in 1..=4 {
        let inject = format!("inject=mkdir:signal=SIGINT:when={when}");
        let out = std::process::Command::new("strace")
            .args([
                "-f",
                "-qq",
                "-o",
                "/dev/null",
                "-e",
                "trace=mkdir",
                "-e",
                &inject,
            ])
            .arg(bin())
            .args([
                "run", "--method", "psync", "--op", "read", "--direct", "--target", &f,
            ])
            .args([
                "--file-size",
                "8m",
                "--ops",
                "2000",
                "--layers",
                "--count",
                "none",
            ])
            .output()
            .unwrap();
        let left: Vec<String> = instances()
            .into_iter()
            .filter(|n| !before.contains(n))
            .collect();
        if !left.is_empty() {
            iolab(&["clean"]);
        }
        assert!(
            left.is_empty(),
            "SIGINT at mkdir {when} (exit {:?}: {}) left {left:?}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
}

#[test]
fn an_instance_removed_under_the_run_gives_no_figures_and_says_why() {
    let Some((_one, dir)) = traced_dir("an_instance_removed_under_the_run") else {
        return;
    };
    let f = path_str(&dir.path().join("g.dat"));
    let child = std::process::Command::new(bin())
        .args([
            "run",
            "--method",
            "psync",
            "--op",
            "read",
            "--direct",
            "--pattern",
            "rand",
        ])
        .args([
            "--target",
            &f,
            "--file-size",
            "64m",
            "--ops",
            "20000",
            "--layers",
        ])
        .args(["--count", "none", "--json", "-"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut removed = false;
    for _ in 0..2000 {
        if let Some(p) = instance(pid) {
            removed = std::fs::remove_dir(&p).is_ok();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    if !removed {
        skip("timing", "the instance could not be caught to remove");
        return;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["layers"].is_null(),
        "figures from a lost trace: {}",
        v["layers"]
    );
    assert!(
        v["notes"].to_string().contains("no time per layer"),
        "{}",
        v["notes"]
    );
}
