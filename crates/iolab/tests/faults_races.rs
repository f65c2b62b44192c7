//! A target is its descriptor (nothing destroyed, ever): a name renamed and replaced during a run, a
//! symbolic link swapped in during setup, a symbolic link flipping between two block devices, and inputs
//! that are devices or FIFOs. Each case reproduces the race or the input; before targets were pinned by
//! descriptor, the first three destroyed a file or device iolab did not create.

mod common;
use common::*;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn spawn(args: &[&str]) -> Child {
    Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iolab starts")
}

/// Waits until `p` exists as a regular file (not a link), at most 20 s.
fn wait_for_file(p: &Path) {
    let t = Instant::now();
    while !std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()) {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            p.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn finish(c: Child) -> (i32, String) {
    let o = c.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// During a run, the target is renamed away and a new file takes its name: at the end (exit and Ctrl-C
/// alike) the new file is left as it is, and iolab says where its own went.
#[test]
fn a_target_renamed_and_replaced_during_the_run_is_not_removed() {
    for interrupt in [false, true] {
        let dir = disk_dir();
        let t = file(&dir, "t.dat");
        let t_str = path_str(&t);
        let c = spawn(&[
            "run",
            "--method",
            "psync",
            "--target",
            &t_str,
            "--duration",
            "3",
            "--count",
            "none",
        ]);
        wait_for_file(&t);
        std::thread::sleep(Duration::from_millis(300));
        std::fs::rename(&t, dir.path().join("t.old")).unwrap();
        std::fs::write(&t, b"precious\n").unwrap();
        if interrupt {
            // SAFETY: kill of the child this test started.
            unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
        }
        let (code, stderr) = finish(c);
        assert_eq!(
            std::fs::read(&t).unwrap(),
            b"precious\n",
            "interrupt {interrupt}: the new file is untouched; stderr: {stderr}"
        );
        if interrupt {
            assert_eq!(code, 130, "{stderr}");
        } else {
            assert_eq!(code, 0, "{stderr}");
            assert!(stderr.contains("is not iolab's any more"), "{stderr}");
            assert!(stderr.contains("renamed"), "{stderr}");
        }
    }
}

/// A helper busy-waits for the target iolab creates, renames it away and puts a symbolic link to a
/// victim file in its place, while iolab sets up and writes: the victim is never written.
#[test]
fn a_symlink_swapped_in_during_setup_never_receives_writes() {
    let dir = disk_dir();
    let victim = file(&dir, "victim");
    std::fs::write(&victim, b"VICTIM").unwrap();
    let t = file(&dir, "t.dat");
    let mut swapped = 0;
    for round in 0..8 {
        let stop = Arc::new(AtomicBool::new(false));
        let (s, t2, v2, d2) = (
            stop.clone(),
            t.clone(),
            victim.clone(),
            dir.path().to_path_buf(),
        );
        let helper = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if std::fs::symlink_metadata(&t2).is_ok_and(|m| m.is_file()) {
                    let away: PathBuf = d2.join(format!("moved-{round}"));
                    if std::fs::rename(&t2, &away).is_ok() {
                        let _ = symlink(&v2, &t2);
                        return true;
                    }
                }
                std::hint::spin_loop();
            }
            false
        });
        let r = iolab(&[
            "run",
            "--method",
            "psync",
            "--target",
            &path_str(&t),
            "--ops",
            "4000",
            "--bs",
            "4k",
            "--count",
            "none",
        ]);
        stop.store(true, Ordering::Relaxed);
        swapped += usize::from(helper.join().unwrap());
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"VICTIM",
            "round {round}: {}",
            r.stderr
        );
        let _ = std::fs::remove_file(&t);
    }
    println!("the swap happened during {swapped} of 8 runs");
}

/// A symbolic link flips between a free loop device and one that backs a stacked loop device while
/// iolab is asked to write through it: the backing device is never written.
#[test]
fn a_link_flipping_between_two_devices_never_writes_the_one_in_use() {
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0
        || !Path::new("/dev/loop-control").exists()
        || Command::new("losetup").arg("--version").output().is_err()
    {
        skip("loop-device", "needs root and losetup");
        return;
    }
    let dir = disk_dir();
    let attach = |p: &Path| -> String {
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(p)
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let img = |n: &str| {
        let p = file(&dir, n);
        std::fs::write(&p, vec![0xABu8; 4 << 20]).unwrap();
        p
    };
    let free = attach(&img("free.img"));
    let busy = attach(&img("busy.img"));
    let stacked = attach(Path::new(&busy));
    let link = file(&dir, "dev-link");
    let stop = Arc::new(AtomicBool::new(false));
    let (s, l2, f2, b2) = (stop.clone(), link.clone(), free.clone(), busy.clone());
    let flipper = std::thread::spawn(move || {
        let tmp = l2.with_extension("new");
        let mut n = 0u64;
        while !s.load(Ordering::Relaxed) {
            let to = if n.is_multiple_of(2) { &f2 } else { &b2 };
            let _ = std::fs::remove_file(&tmp);
            let _ = symlink(to, &tmp);
            let _ = std::fs::rename(&tmp, &l2);
            n += 1;
        }
    });
    let before = std::fs::read(&busy).unwrap()[..1 << 20].to_vec();
    for _ in 0..12 {
        let _ = iolab(&[
            "run",
            "--target",
            &path_str(&link),
            "--allow-device-writes",
            "--ops",
            "64",
            "--bs",
            "4k",
            "--count",
            "none",
        ]);
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    let after = std::fs::read(&busy).unwrap()[..1 << 20].to_vec();
    for d in [&stacked, &busy, &free] {
        let _ = Command::new("losetup").args(["-d", d]).status();
    }
    assert!(
        before == after,
        "the device a loop device is stacked on was never written"
    );
}

/// Runs iolab with `args` and a 30 s bound: a device or FIFO as an input never hangs or grows.
fn refused_quickly(args: &[&str], flag: &str) {
    let t = Instant::now();
    let mut c = spawn(args);
    loop {
        if c.try_wait().unwrap().is_some() {
            break;
        }
        if t.elapsed() > Duration::from_secs(30) {
            let _ = c.kill();
            panic!("{args:?} still running after 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, stderr) = finish(c);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stderr.contains(flag), "{args:?}: {stderr}");
    assert!(stderr.contains("regular file"), "{args:?}: {stderr}");
}

#[test]
fn devices_and_fifos_as_inputs_are_refused_at_once() {
    let dir = tmpfs_dir();
    let fifo = file(&dir, "fifo");
    let c = std::ffi::CString::new(path_str(&fifo)).unwrap();
    // SAFETY: a valid C string; mkfifo makes a FIFO in this test's directory.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let real = file(&dir, "r.jsonl");
    std::fs::write(&real, b"").unwrap();
    for input in ["/dev/zero", &path_str(&fifo)] {
        refused_quickly(&["run", "--spec", input], "--spec");
        refused_quickly(
            &["report", input, "-o", &path_str(&file(&dir, "x.html"))],
            "report",
        );
        refused_quickly(&["compare", input, &path_str(&real)], "compare");
        refused_quickly(&["vm", "--script", input], "--script");
        let toml = file(&dir, "s.toml");
        let _ = std::fs::remove_file(&toml);
        symlink(input, &toml).unwrap();
        refused_quickly(&["suite", &path_str(&toml)], "suite");
    }
}

/// A second iolab pointed at the file a running iolab measures on is told so (with --overwrite too, and
/// to read it, in a run or a survey: two runs on one file measure each other); once that iolab is killed,
/// the file is named as its leftover, which `iolab clean` removes.
#[test]
fn a_running_iolabs_target_is_not_written_by_a_second_and_a_killed_ones_is_named() {
    let dir = disk_dir();
    let t = file(&dir, "t.dat");
    let t_str = path_str(&t);
    let c = spawn(&[
        "run",
        "--method",
        "psync",
        "--target",
        &t_str,
        "--duration",
        "30",
        "--count",
        "none",
    ]);
    wait_for_file(&t);
    std::thread::sleep(Duration::from_millis(300));
    let pid = c.id();
    let marked = xattr_of(&t);
    if marked.is_none() {
        // SAFETY: kill of the child this test started.
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
        finish(c);
        skip(
            "xattr",
            &format!(
                "the filesystem of {} keeps no user.* attributes, so iolab cannot mark its files",
                t.display()
            ),
        );
        return;
    }
    // A reader is refused too (a run and a survey of reads), as the docs say.
    let results = file(&dir, "results");
    let results = path_str(&results);
    let survey = [
        "survey",
        "--target",
        &t_str,
        "--workload",
        "read",
        "--bs",
        "4k",
        "--inflight",
        "1",
        "--buffered",
        "--rounds",
        "1",
        "--max-time",
        "0",
        "--max-seconds",
        "0.05",
        "--results-dir",
        &results,
    ];
    let runs: [&[&str]; 4] = [
        &["run", "--target", &t_str, "--ops", "10"],
        &["run", "--target", &t_str, "--ops", "10", "--overwrite"],
        &["run", "--target", &t_str, "--ops", "10", "--op", "read"],
        &survey,
    ];
    for extra in runs {
        let r = iolab(extra);
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "is the target of a running iolab (pid {pid}); wait for it"
            )),
            "{extra:?}: {}",
            r.stderr
        );
    }
    // SAFETY: kill of the child this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    finish(c);
    let r = iolab(&["run", "--target", &t_str, "--ops", "10"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "exists, left by an iolab that was killed (pid {pid}); `iolab clean` removes it"
        )),
        "{}",
        r.stderr
    );
    let r = iolab(&["clean", &path_str(dir.path())]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !t.exists(),
        "clean removed the killed run's file: {}",
        r.stdout
    );
}

/// The user.iolab attribute of `p`, if it carries one.
fn xattr_of(p: &Path) -> Option<Vec<u8>> {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let mut buf = [0u8; 256];
    // SAFETY: both strings are NUL-terminated; `buf` is a valid out-buffer of its length.
    let n = unsafe {
        libc::getxattr(
            c.as_ptr(),
            c"user.iolab".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    (n >= 0).then(|| buf[..n as usize].to_vec())
}

/// Between the counting pass and the timed pass iolab removes its own file, and the name is free for a
/// moment: a symbolic link to a victim put there is refused (the name meant nothing at the first look),
/// even with --overwrite, and the victim is never written.
#[test]
fn a_symlink_put_between_passes_is_refused() {
    let dir = disk_dir();
    let victim = file(&dir, "victim");
    let t = file(&dir, "t.dat");
    let mut caught = 0;
    for round in 0..4 {
        std::fs::write(&victim, b"VICTIM").unwrap();
        let (t2, v2) = (t.clone(), victim.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let helper = std::thread::spawn(move || {
            // The first pass's file appears, then goes: the link takes the free name at once.
            while !s.load(Ordering::Relaxed) && std::fs::symlink_metadata(&t2).is_err() {
                std::hint::spin_loop();
            }
            while !s.load(Ordering::Relaxed) && std::fs::symlink_metadata(&t2).is_ok() {
                std::hint::spin_loop();
            }
            !s.load(Ordering::Relaxed) && symlink(&v2, &t2).is_ok()
        });
        let r = iolab(&[
            "run",
            "--target",
            &path_str(&t),
            "--bs",
            "4",
            "--ops",
            "300000",
            "--duration",
            "1",
            "--overwrite",
        ]);
        stop.store(true, Ordering::Relaxed);
        let linked = helper.join().unwrap();
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"VICTIM",
            "round {round}: {}",
            r.stderr
        );
        if linked && r.code != 0 {
            assert_eq!(r.code, 1, "{}", r.stderr);
            assert!(
                r.stderr
                    .contains("appeared after iolab first found nothing there"),
                "{}",
                r.stderr
            );
            caught += 1;
        }
        let _ = std::fs::remove_file(&t);
    }
    println!("the link came between the passes in {caught} of 4 runs");
}

/// A FIFO put in the target's place while the run writes: --verify's open never blocks on it (the name
/// is looked at without opening what it is), and the run ends saying the name was replaced.
#[test]
fn a_fifo_swapped_in_before_verify_never_blocks() {
    let dir = disk_dir();
    let t = file(&dir, "t.dat");
    let t_str = path_str(&t);
    let c = spawn(&[
        "run",
        "--method",
        "psync",
        "--target",
        &t_str,
        "--duration",
        "3",
        "--count",
        "none",
        "--verify",
    ]);
    // 300 ms into a 3 s run: well inside it even where a loaded machine wakes this thread late.
    wait_for_file(&t);
    std::thread::sleep(Duration::from_millis(300));
    std::fs::rename(&t, dir.path().join("t.away")).unwrap();
    let fifo = std::ffi::CString::new(t_str.as_str()).unwrap();
    // SAFETY: mkfifo of a NUL-terminated path in the test's own directory.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let pid = c.id();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(20));
        // SAFETY: kill of the child this test started (a no-op when it has ended and been reaped).
        unsafe { libc::kill(pid as i32, libc::SIGKILL) }
    });
    let (code, stderr) = finish(c);
    assert_ne!(
        code, -1,
        "killed by the watchdog: the open blocked; {stderr}"
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("was replaced after iolab looked it up"),
        "{stderr}"
    );
    drop(watchdog);
}

/// Files that are not iolab's in its temporary directory (a user's note, a bind mount of another
/// directory) are left as they are when the survey ends, and iolab says it left the directory.
#[test]
fn a_surveys_temporary_directory_keeps_what_iolab_did_not_make() {
    let tmp = disk_dir();
    let work = disk_dir();
    let c = Command::new(bin())
        .args([
            "survey",
            "--ops",
            "20000",
            "--max-seconds",
            "0.5",
            "--rounds",
            "1",
            "--max-time",
            "0",
            "--no-json",
            "--tmp-dir",
        ])
        .arg(tmp.path())
        .current_dir(work.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let made = loop {
        if let Some(e) = std::fs::read_dir(tmp.path()).unwrap().flatten().next() {
            break e.path();
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no survey directory");
        std::thread::sleep(Duration::from_millis(5));
    };
    let note = made.join("users-notes.txt");
    std::fs::write(&note, b"mine").unwrap();
    let (code, stderr) = finish(c);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read(&note).unwrap(), b"mine", "{stderr}");
    assert!(
        stderr.contains(&format!("left {} as it is", made.display())),
        "{stderr}"
    );
    std::fs::remove_dir_all(&made).unwrap();
}

/// A hard link made to iolab's file during a run keeps the file after iolab removes its own name; the
/// file is then not taken for a killed iolab's leftover.
#[test]
fn a_hard_link_to_a_finished_runs_file_is_not_a_leftover() {
    let dir = disk_dir();
    let t = file(&dir, "t.dat");
    let link = file(&dir, "link.dat");
    let c = spawn(&[
        "run",
        "--method",
        "psync",
        "--target",
        &path_str(&t),
        "--duration",
        "2",
        "--count",
        "none",
    ]);
    wait_for_file(&t);
    std::fs::hard_link(&t, &link).unwrap();
    let (code, stderr) = finish(c);
    assert_eq!(code, 0, "{stderr}");
    let r = iolab(&["run", "--target", &path_str(&link), "--ops", "10"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("exists and was not made by this run"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("killed"), "{}", r.stderr);
}
