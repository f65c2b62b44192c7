//! A suite's zram device after a kill (`iolab clean` resets and removes it) and after Ctrl-C (the handler
//! does). Its own test binary: `iolab clean` without a directory looks at every journal of this user, and
//! must not take the files of the other leftovers tests' killed runs from under them.

mod common;
use common::*;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One suite at a time: each test tells its device apart as the one that appeared after it started.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn signal(child: &mut Child, sig: i32) -> std::process::ExitStatus {
    // SAFETY: kill takes integers only; the pid is our child's, not yet waited for.
    unsafe { libc::kill(child.id() as i32, sig) };
    child.wait().unwrap()
}

/// The zram devices as (N, disksize) of /sys/block/zramN.
fn zram_devices() -> Vec<(u32, u64)> {
    let mut v: Vec<(u32, u64)> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let n: u32 = e.file_name().to_str()?.strip_prefix("zram")?.parse().ok()?;
                    let size = std::fs::read_to_string(e.path().join("disksize")).ok()?;
                    Some((n, size.trim().parse().ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `iolab suite blocksize --quick` until it has made its zram device; returns the child and the device.
fn suite_with_zram(d: &Path, test: &str) -> Option<(Child, u32)> {
    // SAFETY: geteuid takes nothing and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !Path::new("/sys/class/zram-control").is_dir() || !root {
        skip(
            "zram",
            &format!("{test}: no zram-control here or not root (zram devices need both)"),
        );
        return None;
    }
    let before = zram_devices();
    let mut c = Command::new(bin())
        .args(["suite", "blocksize", "--quick", "--disk-dir"])
        .arg(d)
        .arg("--tmpfs-dir")
        .arg(d)
        .arg("--out")
        .arg(d.join("rec.jsonl"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iolab starts");
    let t0 = Instant::now();
    loop {
        let made = zram_devices()
            .into_iter()
            .find(|z| z.1 > 0 && !before.contains(z));
        if let Some((n, _)) = made {
            std::thread::sleep(Duration::from_millis(300));
            return Some((c, n));
        }
        if c.try_wait().unwrap().is_some() || t0.elapsed() > Duration::from_secs(60) {
            let _ = c.kill();
            skip(
                "zram",
                &format!("{test}: the suite made no zram device (zram refused here?)"),
            );
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A killed suite leaves its zram device (and the memory it holds); `iolab clean` resets and removes it.
#[test]
fn a_killed_suites_zram_device_is_reset_by_clean() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let d = disk_dir();
    let Some((mut c, n)) =
        suite_with_zram(d.path(), "a_killed_suites_zram_device_is_reset_by_clean")
    else {
        return;
    };
    signal(&mut c, libc::SIGKILL);
    let dev = format!("/dev/zram{n}");
    assert!(
        zram_devices().iter().any(|z| z.0 == n),
        "{dev} is left after the kill"
    );
    let r = iolab(&["clean"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(&format!(
            "removed {dev} (zram device, reset, left by iolab pid"
        )),
        "{}",
        r.stdout
    );
    assert!(
        !zram_devices().iter().any(|z| z.0 == n),
        "{dev} is gone: {}",
        r.stdout
    );
}

/// Ctrl-C (SIGINT) resets and removes the suite's zram device at once.
#[test]
fn an_interrupted_suite_resets_its_zram_device() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let d = disk_dir();
    let Some((mut c, n)) = suite_with_zram(d.path(), "an_interrupted_suite_resets_its_zram_device")
    else {
        return;
    };
    let st = signal(&mut c, libc::SIGINT);
    assert_eq!(st.code(), Some(130));
    assert!(
        !zram_devices().iter().any(|z| z.0 == n),
        "/dev/zram{n} is gone"
    );
}

/// Does the process hold /dev/zram`n` open (a link in /proc/PID/fd)?
fn holds_open(pid: u32, n: u32) -> bool {
    let dev = format!("/dev/zram{n}");
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .any(|e| std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy() == dev))
        })
        .unwrap_or(false)
}

/// Ctrl-C while a zram point runs (iolab holds the device open, so the kernel refuses a reset): the
/// handler lets go of its descriptors and resets and removes it all the same.
#[test]
fn an_interrupted_zram_point_still_resets_its_device() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let test = "an_interrupted_zram_point_still_resets_its_device";
    let d = disk_dir();
    let Some((mut c, n)) = suite_with_zram(d.path(), test) else {
        return;
    };
    let t0 = Instant::now();
    while !holds_open(c.id(), n) {
        if c.try_wait().unwrap().is_some() || t0.elapsed() > Duration::from_secs(240) {
            let _ = c.kill();
            let _ = c.wait();
            return skip(
                "zram",
                &format!("{test}: the suite never opened /dev/zram{n}"),
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let st = signal(&mut c, libc::SIGINT);
    assert_eq!(st.code(), Some(130));
    assert!(
        !zram_devices().iter().any(|z| z.0 == n),
        "/dev/zram{n} is gone although it was open at the signal"
    );
}
