//! Issue 15, class 6: the tracefs instance iolab uses for tracepoint ids when tracefs is not mounted never
//! appears in the mount namespace iolab runs in, so no signal at any moment can leave it mounted there (nor
//! a temporary directory for it).
//!
//! The tests run iolab in a private mount namespace of their own where tracefs and debugfs are unmounted (a
//! `sleep` holds the namespace; iolab enters it with nsenter), watch that namespace's mountinfo while iolab
//! runs, and kill iolab at a series of moments. Root, unshare and nsenter are needed; without them the tests
//! say SKIPPED and why.

mod common;
use common::*;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A private mount namespace without tracefs or debugfs, held by a sleeping process.
struct Namespace {
    holder: Child,
}

impl Namespace {
    fn new(test: &str, dir: &Path) -> Option<Namespace> {
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            skip(
                "root",
                &format!("{test}: not root (tracefs can only be mounted by root)"),
            );
            return None;
        }
        let ready = dir.join("ready");
        let script = format!(
            "for m in /sys/kernel/debug/tracing /sys/kernel/tracing /sys/kernel/debug; do umount -l $m 2>/dev/null; done; \
             grep -q ' - tracefs ' /proc/self/mountinfo && exit 77; touch {}; exec sleep 600",
            ready.display()
        );
        let holder = match Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c", &script])
            .stdin(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                skip("unshare", &format!("{test}: unshare: {e}"));
                return None;
            }
        };
        let mut ns = Namespace { holder };
        let t0 = Instant::now();
        while !ready.exists() {
            if let Ok(Some(st)) = ns.holder.try_wait() {
                skip(
                    "unshare",
                    &format!(
                        "{test}: no private namespace without tracefs (unshare exited with {st})"
                    ),
                );
                return None;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "the namespace never got ready"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        if Command::new("nsenter").arg("--version").output().is_err() {
            skip("unshare", &format!("{test}: no nsenter"));
            return None;
        }
        Some(ns)
    }

    /// The tracefs lines of the namespace's mountinfo now.
    fn tracefs_lines(&self) -> Vec<String> {
        std::fs::read_to_string(format!("/proc/{}/mountinfo", self.holder.id()))
            .expect("the holder is alive")
            .lines()
            .filter(|l| l.contains(" - tracefs ") || l.contains("iolab-tracefs"))
            .map(str::to_string)
            .collect()
    }

    /// `iolab ARGS` inside the namespace, with TMPDIR set to `tmp`.
    fn spawn(&self, tmp: &Path, args: &[&str]) -> Child {
        Command::new("nsenter")
            .arg("-t")
            .arg(self.holder.id().to_string())
            .args(["-m", "--", "env"])
            .arg(format!("TMPDIR={}", tmp.display()))
            .arg(bin())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nsenter starts")
    }

    /// Waits for `child`, reading the namespace's mountinfo as often as it can meanwhile; kills it with `sig`
    /// after `kill_after` if given. Returns every tracefs line seen and the child's output.
    fn watch(
        &self,
        mut child: Child,
        kill_after: Option<(Duration, i32)>,
    ) -> (Vec<String>, std::process::Output) {
        let t0 = Instant::now();
        let mut seen = Vec::new();
        let mut killed = false;
        while child.try_wait().expect("wait").is_none() {
            for l in self.tracefs_lines() {
                if !seen.contains(&l) {
                    seen.push(l);
                }
            }
            if let Some((after, sig)) = kill_after {
                if !killed && t0.elapsed() >= after {
                    // SAFETY: kill takes integers only; the pid is our child's, not yet waited for.
                    unsafe { libc::kill(child.id() as i32, sig) };
                    killed = true;
                }
            }
            assert!(t0.elapsed() < Duration::from_secs(60), "iolab ended");
        }
        (seen, child.wait_with_output().expect("output"))
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

fn tracepoint(r: &serde_json::Value, name: &str) -> Option<u64> {
    r["kernel"]["tracepoints"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)?["value"]
        .as_u64()
}

/// What is left in the temporary directory iolab was given.
fn left_in(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn counters_work_without_tracefs_and_nothing_is_mounted() {
    let test = "counters_work_without_tracefs_and_nothing_is_mounted";
    let dir = disk_dir();
    let Some(ns) = Namespace::new(test, dir.path()) else {
        return;
    };
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    assert!(ns.tracefs_lines().is_empty(), "{:?}", ns.tracefs_lines());
    let child = ns.spawn(
        &tmp,
        &[
            "run", "--method", "psync", "--bs", "4", "--ops", "3000", "--count", "full", "--json",
            "-",
        ],
    );
    let (seen, out) = ns.watch(child, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let se = tracepoint(&r, "raw_syscalls:sys_enter");
    assert!(
        se.is_some_and(|n| n >= 3000),
        "sys_enter counted without a mounted tracefs: {}",
        r["kernel"]["tracepoints"]
    );
    assert!(
        seen.is_empty(),
        "iolab's namespace saw tracefs mounted: {seen:?}"
    );
    let notes = r["kernel"]["notes"].to_string();
    assert!(
        notes.contains("tracefs is not mounted") && notes.contains("mounted nowhere"),
        "the result says where the ids came from: {notes}"
    );
    assert!(ns.tracefs_lines().is_empty());
    assert!(
        left_in(&tmp).is_empty(),
        "left in TMPDIR: {:?}",
        left_in(&tmp)
    );
}

#[test]
fn no_signal_at_any_moment_leaves_a_tracefs_mount_or_directory() {
    let test = "no_signal_at_any_moment_leaves_a_tracefs_mount_or_directory";
    let dir = disk_dir();
    let Some(ns) = Namespace::new(test, dir.path()) else {
        return;
    };
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // The ids are read when the counting pass opens its tracepoints, some tens of ms after the start: kill
    // before, around and after that moment.
    let mut outcomes = Vec::new();
    for ms in [0u64, 5, 15, 30, 50, 80, 120, 200, 350] {
        for sig in [libc::SIGKILL, libc::SIGINT] {
            let child = ns.spawn(
                &tmp,
                &["run", "--method", "psync", "--bs", "4", "--duration", "3"],
            );
            let (seen, out) = ns.watch(child, Some((Duration::from_millis(ms), sig)));
            assert!(
                seen.is_empty(),
                "signal {sig} after {ms} ms: iolab's namespace saw {seen:?}"
            );
            let now = ns.tracefs_lines();
            assert!(now.is_empty(), "signal {sig} after {ms} ms left {now:?}");
            assert!(
                left_in(&tmp).is_empty(),
                "signal {sig} after {ms} ms left in TMPDIR: {:?}",
                left_in(&tmp)
            );
            outcomes.push(format!("{sig}@{ms}ms:{:?}", out.status.code()));
        }
    }
    println!("{}", outcomes.join(" "));
}

/// iolab's ftrace instances ("iolab-PID-START") as the kernel has them, seen through a tracefs mounted in a
/// throwaway private namespace (instances are the kernel's, the same under every mount of tracefs).
fn kernel_instances() -> Vec<String> {
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(
            "umount -l /sys/kernel/tracing 2>/dev/null; mount -t tracefs nodev /sys/kernel/tracing && \
             ls /sys/kernel/tracing/instances",
        )
        .output()
        .expect("unshare runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|n| n.starts_with("iolab-"))
        .map(str::to_string)
        .collect()
}

/// Whether the run `pid` has an instance now.
fn has_instance(pid: u32) -> bool {
    let prefix = format!("iolab-{pid}-");
    kernel_instances().iter().any(|n| n.starts_with(&prefix))
}

/// Why `dir` cannot be traced at the block layer, if it cannot (a file system on no block device).
fn no_block_device(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    (!Path::new(&format!("/sys/dev/block/{maj}:{min}")).exists())
        .then(|| format!("{} is on no block device", dir.display()))
}

/// A traced run of direct reads on `f` inside the namespace, with `more` flags.
fn traced(ns: &Namespace, tmp: &Path, f: &str, more: &[&str]) -> Child {
    let mut args = vec![
        "run",
        "--method",
        "psync",
        "--op",
        "read",
        "--direct",
        "--target",
        f,
        "--file-size",
        "16m",
        "--layers",
        "--count",
        "none",
    ];
    args.extend_from_slice(more);
    ns.spawn(tmp, &args)
}

/// Waits until run `child` has made its instance (up to 20 s).
fn until_instance(child: &Child) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        if has_instance(child.id()) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    false
}

#[test]
fn layers_work_without_tracefs_and_no_instance_outlives_a_run() {
    let test = "layers_work_without_tracefs_and_no_instance_outlives_a_run";
    let dir = disk_dir();
    if let Some(why) = no_block_device(dir.path()) {
        skip("block-device", &format!("{test}: {why}"));
        return;
    }
    let Some(ns) = Namespace::new(test, dir.path()) else {
        return;
    };
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let f = path_str(&dir.path().join("l.dat"));
    // A whole run: the split is there, each direct read one request of the disk's, and nothing mounted.
    let before = kernel_instances();
    let (seen, out) = ns.watch(
        traced(&ns, &tmp, &f, &["--ops", "3000", "--json", "-"]),
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let requests = r["layers"]["requests"].as_f64();
    assert!(
        requests.is_some_and(|n| (0.9..=1.1).contains(&n)) && r["layers"]["ops"].as_u64() > Some(0),
        "no split without a mounted tracefs: {} {}",
        r["layers"],
        r["notes"]
    );
    assert!(
        seen.is_empty(),
        "iolab's namespace saw tracefs mounted: {seen:?}"
    );
    let after = kernel_instances();
    assert!(
        after.iter().all(|n| before.contains(n)),
        "the run left its instance: {after:?}"
    );
    // Interrupted while its instance exists: the handler removes it through iolab's own tracefs.
    let mut child = traced(&ns, &tmp, &f, &["--duration", "30"]);
    assert!(until_instance(&child), "the run made no instance");
    // SAFETY: kill takes integers only; the pid is our child's, not yet waited for.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(!has_instance(child.id()), "SIGINT left the instance");
    // Killed: its instance stays in the kernel, and `clean` (tracefs still unmounted) removes it.
    let mut child = traced(&ns, &tmp, &f, &["--duration", "30"]);
    assert!(until_instance(&child), "the run made no instance");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        has_instance(child.id()),
        "killed, its instance went anyway?"
    );
    let (_, out) = ns.watch(ns.spawn(&tmp, &["clean"]), None);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(!has_instance(child.id()), "clean left the instance: {said}");
    assert!(ns.tracefs_lines().is_empty());
}
