//! Nothing is destroyed that the user did not ask to: existing files need --overwrite, block devices need
//! --allow-device-writes and are refused while mounted, and created files go away at exit and on Ctrl-C.

mod common;
use common::*;
use std::time::{Duration, Instant};

#[test]
fn existing_file_needs_overwrite_and_is_untouched_without_it() {
    let dir = tmpfs_dir();
    let f = file(&dir, "precious.dat");
    std::fs::write(&f, b"precious").unwrap();
    let r = iolab(&["run", "--target", f.to_str().unwrap(), "--ops", "10"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.starts_with("iolab: --overwrite:"), "{}", r.stderr);
    assert_eq!(std::fs::read(&f).unwrap(), b"precious");
    // With --overwrite it is written, and not removed afterwards (iolab did not create it). Its writes
    // stay within the file unless --file-size says how far: 4 blocks here.
    let r = run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "4",
        "--file-size",
        "16k",
        "--overwrite",
        "--seed",
        "2",
        "--verify",
    ]);
    assert_eq!(r["target"]["created"], false);
    assert_eq!(check_blocks(&f, 4096, 2, 0, 0..4), (4, 0));
}

/// Only the command line may ask to write over a file or a device: a spec file or a suite file (perhaps
/// someone else's) that sets `overwrite` or `allow-device-writes` is refused, the file untouched; a suite
/// step may set them for a target iolab makes for the run.
#[test]
fn a_spec_or_suite_file_cannot_grant_overwrite_or_device_writes() {
    let dir = tmpfs_dir();
    let f = file(&dir, "precious.dat");
    std::fs::write(&f, b"precious").unwrap();
    let target = f.to_str().unwrap();
    for key in ["overwrite", "allow-device-writes"] {
        let spec = file(&dir, "evil.toml");
        std::fs::write(
            &spec,
            format!("target = \"{target}\"\n{key} = true\nops = 4\n"),
        )
        .unwrap();
        let r = iolab(&["run", "--spec", spec.to_str().unwrap()]);
        assert_eq!(r.code, 2, "{key}: {}", r.stderr);
        assert!(
            r.stderr.starts_with("iolab: --spec:") && r.stderr.contains(&format!("give --{key}")),
            "{}",
            r.stderr
        );
    }
    let suite = |step: &str| {
        let p = file(&dir, "evil-suite.toml");
        let _ = std::fs::remove_file(&p);
        std::fs::write(
            &p,
            format!(
                "name = \"evil\"\nabout = \"x\"\nreproduces = \"x\"\ntable = \"throughput\"\n\
                 [defaults]\nops = 4\nbs = 4\n[quick]\nops = 4\n[[step]]\nlabel = \"w\"\n{step}\n"
            ),
        )
        .unwrap();
        let out = file(&dir, "ev.jsonl");
        let _ = std::fs::remove_file(&out);
        iolab(&[
            "suite",
            p.to_str().unwrap(),
            "--quick",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    for step in [
        format!("spec = {{ target = \"{target}\", op = \"write\", overwrite = true }}"),
        format!("spec = {{ target = \"{target}\", op = \"write\" }}\nvary = [\"overwrite=true\"]"),
        "spec = { target = \"{disk}/../x\", op = \"write\", allow-device-writes = true }".into(),
        // The point's own target decides, wherever it and the key come from.
        format!(
            "spec = {{ target = \"{{disk}}/w.dat\", op = \"write\", overwrite = true }}\n\
             vary = [\"target={target}\"]"
        ),
        format!("spec = {{ target = \"{target}\", op = \"write\" }}\nvary = [\"--overwrite=true\"]"),
        format!("spec = {{ target = \"{{disk}}/w.dat\", op = \"write\", overwrite = true }}\nvary = [\"bs=4\"]\nquick-vary = [\"target={target}\"]"),
    ] {
        let r = suite(&step);
        assert_eq!(r.code, 2, "{step}: {}", r.stderr);
        assert!(r.stderr.contains("step 'w': "), "{}", r.stderr);
    }
    assert_eq!(std::fs::read(&f).unwrap(), b"precious");
    // A step's own scratch file may say it.
    let r = suite("spec = { target = \"{disk}/w.dat\", op = \"write\", overwrite = true }");
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn created_files_are_removed_unless_kept() {
    let dir = tmpfs_dir();
    let f = file(&dir, "tmp.dat");
    run_json(&["--target", f.to_str().unwrap(), "--ops", "10"]);
    assert!(!f.exists(), "removed at exit");
    let r = run_json(&["--target", f.to_str().unwrap(), "--ops", "10", "--keep"]);
    assert!(f.exists(), "--keep keeps it");
    assert_eq!(r["target"]["kept"], true);
    // A refused run creates nothing.
    let g = file(&dir, "fail.dat");
    let r = iolab(&[
        "run",
        "--target",
        g.to_str().unwrap(),
        "--method",
        "io_uring",
        "--qd",
        "5000",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!g.exists());
}

#[test]
fn ctrl_c_removes_created_files() {
    let dir = tmpfs_dir();
    let f = file(&dir, "int.dat");
    let mut child = std::process::Command::new(bin())
        .args([
            "run",
            "--target",
            f.to_str().unwrap(),
            "--duration",
            "30",
            "--file-size",
            "1m",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !f.exists() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(f.exists(), "the run created its file");
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill(2) only reads its integer arguments; the pid is our own child, not yet reaped.
    let rc = unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(rc, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!f.exists(), "Ctrl-C removed the file iolab created");
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("interrupted; removed"), "{err}");
}

#[test]
fn block_devices_need_the_flag_and_are_refused_while_mounted() {
    // The root filesystem's device: mounted, so refused even with the flag (checked before any open).
    let root_dev = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .find(|l| l.split_whitespace().nth(4) == Some("/"))
        .and_then(|l| {
            l.split(" - ")
                .nth(1)
                .and_then(|r| r.split_whitespace().nth(1))
                .map(str::to_string)
        });
    match root_dev.filter(|d| d.starts_with("/dev/") && std::path::Path::new(d).exists()) {
        Some(dev) => {
            let r = iolab(&["run", "--target", &dev, "--ops", "1"]);
            assert_eq!(r.code, 2);
            assert!(
                r.stderr.starts_with("iolab: --allow-device-writes:"),
                "{}",
                r.stderr
            );
            let r = iolab(&[
                "run",
                "--target",
                &dev,
                "--ops",
                "1",
                "--allow-device-writes",
            ]);
            assert_eq!(r.code, 2, "{}", r.stderr);
            assert!(r.stderr.contains("is mounted at /"), "{}", r.stderr);
        }
        None => skip(
            "root-device",
            "mounted-device check: the root filesystem is not on a /dev block device here",
        ),
    }
}

#[test]
fn loop_device_write_and_verify() {
    // A loop device over a file: writes need --allow-device-writes; O_DIRECT uses its sector size.
    let dir = disk_dir();
    let backing = file(&dir, "loop.img");
    std::fs::write(&backing, vec![0u8; 4 << 20]).unwrap();
    let out = std::process::Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&backing)
        .output();
    let dev = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => {
            skip("loop-device", "losetup cannot attach a loop device here");
            return;
        }
    };
    let r = iolab(&[
        "run",
        "--target",
        &dev,
        "--ops",
        "16",
        "--allow-device-writes",
        "--direct",
        "--bs",
        "4k",
        "--seed",
        "4",
        "--verify",
        "--json",
        "-",
    ]);
    let _ = std::process::Command::new("losetup")
        .args(["-d", &dev])
        .status();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["target"]["kind"], "block_device");
    assert_eq!(u64_of(&v, &["verify", "blocks_checked"]), 16);
    assert_eq!(
        check_blocks(&backing, 4096, 4, 0, 0..16),
        (16, 0),
        "the bytes reached the backing file"
    );
}

#[test]
fn reading_a_file_leaves_its_access_time_as_it_was() {
    // An access time older than the file's modification: the mount's relatime rule updates it at the
    // first read that does not say O_NOATIME.
    let dir = tmpfs_dir();
    let f = file(&dir, "read-only.dat");
    std::fs::write(&f, vec![7u8; 64 * 1024]).unwrap();
    let old = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let set_old = || {
        let h = std::fs::File::options().write(true).open(&f).unwrap();
        h.set_times(std::fs::FileTimes::new().set_accessed(old))
            .unwrap();
    };
    let accessed = || std::fs::metadata(&f).unwrap().accessed().unwrap();
    set_old();
    // The rule holds on this mount: a plain read moves the access time.
    std::fs::read(&f).unwrap();
    assert_ne!(
        accessed(),
        old,
        "relatime did not update the access time of {f:?}"
    );
    for method in ["psync", "io_uring", "mmap"] {
        set_old();
        let r = run_json(&[
            "--target",
            f.to_str().unwrap(),
            "--op",
            "read",
            "--method",
            method,
            "--ops",
            "64",
        ]);
        assert_eq!(r["ops"], 64, "{method}");
        assert_eq!(accessed(), old, "{method} changed the access time");
        let notes = r["notes"].to_string();
        assert!(notes.contains("O_NOATIME"), "{method}: {notes}");
    }
    // Writes move the modification time past the old access time, so --verify's read-back would move
    // it too without the flag.
    set_old();
    let r = run_json(&[
        "--target",
        f.to_str().unwrap(),
        "--op",
        "mixed",
        "--read-pct",
        "50",
        "--overwrite",
        "--verify",
        "--ops",
        "64",
    ]);
    assert_eq!(r["ops"], 64);
    assert_eq!(
        accessed(),
        old,
        "a mixed run with --verify changed the access time"
    );
    // A user who does not own the file may not ask for O_NOATIME (EPERM): the run reads it all the
    // same and says that its reads move the access time.
    if !std::path::Path::new("/usr/bin/setpriv").exists() {
        skip(
            "setpriv",
            "a read by another user (no setpriv to run iolab as nobody)",
        );
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    set_old();
    let out = std::process::Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run", "--op", "read", "--ops", "64", "--count", "none", "--json", "-",
        ])
        .arg("--target")
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["ops"], 64);
    let notes = r["notes"].to_string();
    assert!(notes.contains("O_NOATIME refused"), "{notes}");
    assert_ne!(
        accessed(),
        old,
        "nobody's reads moved the access time, as the note says"
    );
}
