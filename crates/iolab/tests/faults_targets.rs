//! Issue 15, classes 1 and 2: block devices in use are never written (whatever the mount namespace, and with
//! loop devices stacked on them), and pseudo-files (procfs, sysfs, debugfs, cgroupfs ...) are never
//! targets. Root-only cases print SKIPPED and why where root, losetup, /dev/loop-control or mkfs.ext4 is
//! missing.

mod common;
use common::*;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ----- class 2: pseudo-files -----

/// A write run (with --overwrite) and a read run of `target` are refused with exit 2 naming the
/// filesystem, and the file, if it exists, keeps its content.
fn refused_pseudo(target: &str, fs: &str) {
    let before = std::fs::read(target).ok();
    for op in ["write", "read"] {
        let r = iolab(&[
            "run",
            "--target",
            target,
            "--op",
            op,
            "--overwrite",
            "--ops",
            "1",
            "--bs",
            "4k",
            "--count",
            "none",
        ]);
        assert_eq!(r.code, 2, "{op} {target}: {}", r.stderr);
        assert!(
            r.stderr.starts_with("iolab: --target:") && r.stderr.contains(fs),
            "{op} {target}: {}",
            r.stderr
        );
        assert!(r.stderr.contains("not storage"), "{}", r.stderr);
    }
    assert_eq!(std::fs::read(target).ok(), before, "{target} unchanged");
    if before.is_none() {
        assert!(!Path::new(target).exists(), "{target} not created");
    }
}

/// The filesystem type of a directory as stat(1) names it ("sysfs", "cgroupfs", "cgroup2fs" ...), found
/// independently of iolab.
fn fs_type(dir: &str) -> Option<String> {
    let o = Command::new("stat")
        .args(["-f", "-c", "%T", dir])
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

#[test]
fn proc_sysctl_is_refused_even_with_overwrite() {
    refused_pseudo("/proc/sys/vm/swappiness", "procfs");
    // A symlink into procfs is the file it names.
    let dir = tmpfs_dir();
    let link = file(&dir, "swappiness");
    std::os::unix::fs::symlink("/proc/sys/vm/swappiness", &link).unwrap();
    refused_pseudo(&path_str(&link), "procfs");
}

#[test]
fn sysfs_files_and_new_paths_under_sys_are_refused() {
    let existing = [
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/block/loop0/queue/read_ahead_kb",
        "/sys/kernel/uevent_helper",
    ];
    match existing.iter().find(|p| Path::new(p).is_file()) {
        Some(p) => refused_pseudo(p, "sysfs"),
        None => skip(
            "pseudo-fs",
            &format!("an existing sysfs file: none of {existing:?} is here"),
        ),
    }
    // A new path in a sysfs directory (/sys/kernel/debug is sysfs's own directory when debugfs is not
    // mounted on it, debugfs when it is).
    let fs = match fs_type("/sys/kernel/debug").as_deref() {
        Some("debugfs") => "debugfs",
        _ => "sysfs",
    };
    let new = if Path::new("/sys/kernel/debug").is_dir() {
        "/sys/kernel/debug/iolab-test.dat"
    } else {
        "/sys/kernel/iolab-test.dat"
    };
    refused_pseudo(new, fs);
}

#[test]
fn cgroup_and_tracefs_files_are_refused() {
    let mut tried = 0;
    for dir in [
        "/sys/fs/cgroup",
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup/cpu",
        "/sys/kernel/tracing",
        "/sys/kernel/debug/tracing",
    ] {
        let fs = match fs_type(dir).as_deref() {
            Some("cgroupfs") => "cgroupfs (v1)",
            Some("cgroup2fs") => "cgroupfs (v2)",
            Some("tracefs") => "tracefs",
            _ => continue,
        };
        tried += 1;
        refused_pseudo(&format!("{dir}/iolab-test.dat"), fs);
        let existing = ["cgroup.controllers", "notify_on_release", "tracing_on"]
            .iter()
            .map(|f| format!("{dir}/{f}"))
            .find(|p| Path::new(p).is_file());
        if let Some(p) = existing {
            refused_pseudo(&p, fs);
        }
    }
    if tried == 0 {
        skip(
            "pseudo-fs",
            "cgroupfs/tracefs: neither is mounted at its usual place here",
        );
    }
}

// ----- class 1: block devices in use -----

/// A loop device, detached when dropped.
struct Loop(String);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// Why loop-device tests cannot run here, if they cannot.
fn loop_unavailable(test: &str) -> bool {
    // SAFETY: geteuid takes no arguments and cannot fail.
    let why = if unsafe { libc::geteuid() } != 0 {
        Some(("root", "not root"))
    } else if !Path::new("/dev/loop-control").exists() {
        Some(("loop-device", "/dev/loop-control is missing"))
    } else if Command::new("losetup").arg("--version").output().is_err() {
        Some(("loop-device", "losetup is missing"))
    } else if Command::new("mkfs.ext4").arg("-V").output().is_err() {
        Some(("mkfs", "mkfs.ext4 is missing"))
    } else {
        None
    };
    if let Some((feature, why)) = why {
        skip(feature, &format!("{test}: {why}"));
    }
    why.is_some()
}

fn attach(backing: &Path) -> Loop {
    let o = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(backing)
        .output()
        .expect("losetup runs");
    assert!(o.status.success(), "losetup {}: {:?}", backing.display(), o);
    Loop(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// A 32 MiB file on disk with an ext4 filesystem, attached to a loop device.
fn ext4_loop(dir: &tempfile::TempDir) -> Loop {
    let img = file(dir, "fs.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    let l = attach(&img);
    let ok = Command::new("mkfs.ext4")
        .args(["-q", "-F", &l.0])
        .status()
        .unwrap();
    assert!(ok.success());
    l
}

/// The first 1 MiB of a device, read through the device (its page cache sees iolab's writes at once).
fn head(dev: &str) -> Vec<u8> {
    let mut b = vec![0u8; 1 << 20];
    std::fs::File::open(dev)
        .unwrap()
        .read_exact(&mut b)
        .unwrap();
    b
}

fn write_16(dev: &str) -> Ran {
    iolab(&[
        "run",
        "--target",
        dev,
        "--allow-device-writes",
        "--ops",
        "16",
        "--bs",
        "4k",
        "--count",
        "none",
    ])
}

#[test]
fn device_mounted_only_in_another_namespace_is_refused() {
    if loop_unavailable("device_mounted_only_in_another_namespace_is_refused") {
        return;
    }
    let dir = disk_dir();
    let l = ext4_loop(&dir);
    let mnt = file(&dir, "mnt");
    let ready = file(&dir, "ready");
    std::fs::create_dir(&mnt).unwrap();
    // unshare -m makes the new namespace's mounts private: the host namespace never sees this one.
    let script = format!(
        "mount -o ro {} {} && touch {} && exec sleep 20",
        l.0,
        mnt.display(),
        ready.display()
    );
    let mut ns = match Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .stdin(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            skip("unshare", &format!("unshare: {e}"));
            return;
        }
    };
    let t0 = Instant::now();
    while !ready.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(ready.exists(), "the other namespace mounted the device");
    let own = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!own.contains(&path_str(&mnt)), "not mounted here");
    let before = head(&l.0);
    let r = write_16(&l.0);
    let after = head(&l.0);
    let _ = ns.kill();
    let _ = ns.wait();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("is mounted at {}", mnt.display()))
            && r.stderr.contains("in another mount namespace"),
        "{}",
        r.stderr
    );
    assert!(before == after, "the device is unchanged");
}

#[test]
fn device_under_a_mounted_loop_device_is_refused() {
    if loop_unavailable("device_under_a_mounted_loop_device_is_refused") {
        return;
    }
    let dir = disk_dir();
    let lower = ext4_loop(&dir);
    let upper = attach(Path::new(&lower.0));
    let mnt = file(&dir, "mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-o", "ro", &upper.0])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount {}", upper.0);
    let before = head(&lower.0);
    let r = write_16(&lower.0);
    let after = head(&lower.0);
    let _ = Command::new("umount").arg(&mnt).status();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "the loop device {} is stacked on {}, and {} is mounted at {}",
            upper.0,
            lower.0,
            upper.0,
            mnt.display()
        )),
        "{}",
        r.stderr
    );
    assert!(before == after, "the device is unchanged");
    // Unmounted, the stacked loop device still uses it.
    let r = write_16(&lower.0);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("losetup -d"), "{}", r.stderr);
    drop(upper);
}

/// Opens `dev` with O_EXCL, the kernel's exclusive claim of a block device.
fn open_excl(dev: &str) -> std::io::Result<std::fs::File> {
    std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
}

#[test]
fn device_claimed_by_another_program_is_refused() {
    if loop_unavailable("device_claimed_by_another_program_is_refused") {
        return;
    }
    let dir = disk_dir();
    let l = ext4_loop(&dir);
    let before = head(&l.0);
    let held = open_excl(&l.0).unwrap();
    let r = write_16(&l.0);
    drop(held);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("O_EXCL: EBUSY"), "{}", r.stderr);
    assert!(before == head(&l.0), "the device is unchanged");
}

#[test]
fn device_stays_claimed_while_iolab_writes() {
    if loop_unavailable("device_stays_claimed_while_iolab_writes") {
        return;
    }
    let dir = disk_dir();
    let l = ext4_loop(&dir);
    let mut run = Command::new(bin())
        .args([
            "run",
            "--target",
            &l.0,
            "--allow-device-writes",
            "--duration",
            "3",
            "--bs",
            "4k",
            "--count",
            "none",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The claim is iolab's first open of the device that is not O_PATH (its lookup and checks are O_PATH
    // descriptors, which claim nothing; the kernel keeps no O_EXCL in a file's flags to look for).
    let fds = format!("/proc/{}/fd", run.id());
    let pid = run.id();
    let claims = move |e: &std::fs::DirEntry| {
        let flags = std::fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            e.file_name().to_string_lossy()
        ))
        .ok()
        .and_then(|t| {
            let v = t
                .lines()
                .find_map(|l| l.strip_prefix("flags:"))?
                .trim()
                .to_string();
            u32::from_str_radix(&v, 8).ok()
        })
        .unwrap_or(0);
        flags & libc::O_PATH as u32 == 0
    };
    let t0 = Instant::now();
    let opened = loop {
        let any = std::fs::read_dir(&fds)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                std::fs::read_link(e.path()).is_ok_and(|p| p == Path::new(&l.0)) && claims(&e)
            });
        // A loaded machine may take a while to start the run; its 3 s count from its open on.
        if any || t0.elapsed() > Duration::from_secs(30) {
            break any;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(opened, "iolab opened the device");
    // A second iolab is told which process holds the device, not that iolab cannot name it.
    let second = write_16(&l.0);
    let during = open_excl(&l.0).map(drop);
    let mount_during = Command::new("mount")
        .args(["-o", "ro", &l.0])
        .arg(dir.path())
        .output()
        .unwrap();
    let status = run.wait().unwrap();
    if mount_during.status.success() {
        let _ = Command::new("umount").arg(dir.path()).status();
    }
    assert!(status.success(), "the run itself succeeds");
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains(&format!("another iolab (pid {pid}) has it open"))
            && !second.stderr.contains("cannot name"),
        "{}",
        second.stderr
    );
    assert_eq!(
        during.map_err(|e| e.raw_os_error()),
        Err(Some(libc::EBUSY)),
        "no one else can claim it during the run"
    );
    assert!(!mount_during.status.success(), "no mount during the run");
    open_excl(&l.0).expect("released when iolab ends");
}

#[test]
fn debugfs_and_tracefs_in_a_private_namespace_are_refused() {
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skip("root", "not root");
        return;
    }
    // debugfs and tracefs mounted in a namespace of their own, so the host's mounts stay as they are
    // (where the host has them mounted already, as systemd does, those are the ones used).
    let script = format!(
        "mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug || exit 77; \
         mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing || exit 77; \
         B=$(cat /sys/kernel/tracing/tracing_on); \
         {bin} run --target /sys/kernel/debug/iolab-test.dat --ops 1 --count none; echo debugfs=$?; \
         test -e /sys/kernel/debug/iolab-test.dat && echo created; \
         {bin} run --target /sys/kernel/tracing/tracing_on --overwrite --ops 1 --count none; echo tracefs=$?; \
         test \"$B\" = \"$(cat /sys/kernel/tracing/tracing_on)\" || echo changed",
        bin = bin()
    );
    let o = match Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            skip("unshare", &format!("unshare: {e}"));
            return;
        }
    };
    if o.status.code() == Some(77) {
        skip("mount", "cannot mount debugfs/tracefs");
        return;
    }
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("debugfs=2") && out.contains("tracefs=2"),
        "{out}{err}"
    );
    assert!(
        !out.contains("created") && !out.contains("changed"),
        "{out}"
    );
    assert!(
        err.contains("a directory of debugfs") && err.contains("is a file of tracefs"),
        "{err}"
    );
}

/// Reading a sparse file says how much of what was read is holes (zeros the kernel makes up without
/// reading the device); a file written in full gets no such note.
#[test]
fn reading_the_holes_of_a_sparse_file_is_said() {
    let dir = disk_dir();
    let sparse = file(&dir, "sparse.dat");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let r = run_json(&[
        "--method",
        "psync",
        "--op",
        "read",
        "--bs",
        "1m",
        "--ops",
        "16",
        "--target",
        &path_str(&sparse),
    ]);
    let notes = r["notes"].to_string();
    if !notes.contains("is sparse")
        && std::fs::metadata(&sparse)
            .map(|m| std::os::unix::fs::MetadataExt::blocks(&m))
            .unwrap_or(0)
            > 0
    {
        skip(
            "sparse",
            &format!(
                "the filesystem of {} allocates what truncate extends",
                sparse.display()
            ),
        );
        return;
    }
    assert!(
        notes.contains("is sparse: 16 MiB of the 16 MiB region read (100.0%) are holes"),
        "{notes}"
    );
    let full = file(&dir, "full.dat");
    std::fs::write(&full, vec![1u8; 16 << 20]).unwrap();
    let r = run_json(&[
        "--method",
        "psync",
        "--op",
        "read",
        "--bs",
        "1m",
        "--ops",
        "16",
        "--target",
        &path_str(&full),
    ]);
    assert!(
        !r["notes"].to_string().contains("is sparse"),
        "{}",
        r["notes"]
    );
}

/// An immutable or append-only file is refused before the work, naming the attribute (not as a
/// permission another user could have).
#[test]
fn an_immutable_target_names_its_attribute() {
    let dir = disk_dir();
    let t = file(&dir, "imm.dat");
    std::fs::write(&t, vec![0u8; 1 << 20]).unwrap();
    for (flag, letter, what) in [("+i", "i", "immutable"), ("+a", "a", "append-only")] {
        let set = Command::new("chattr").arg(flag).arg(&t).status();
        if !set.is_ok_and(|s| s.success()) {
            skip("chattr", &format!("chattr {flag} failed (not root, no chattr, or a filesystem without attributes)"));
            return;
        }
        let r = iolab(&[
            "run",
            "--target",
            &path_str(&t),
            "--overwrite",
            "--ops",
            "10",
        ]);
        // A survey of writes to it runs nothing: refused as the run is, exit 2. With reads beside them,
        // the writes' rows say why nothing ran.
        let s = survey_of(&dir, &path_str(&t), &["--overwrite", "--workload", "write"]);
        let both = survey_of(
            &dir,
            &path_str(&t),
            &["--overwrite", "--workload", "read,write", "--inflight", "1"],
        );
        let _ = Command::new("chattr")
            .arg(format!("-{letter}"))
            .arg(&t)
            .status();
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("is {what} (lsattr shows '{letter}')"))
                && r.stderr.contains(&format!("`chattr -{letter}`"))
                && !r.stderr.contains("run as a user"),
            "{}",
            r.stderr
        );
        assert_eq!(s.code, 2, "{}", s.stderr);
        assert!(
            s.stderr.starts_with("iolab: --target:") && s.stderr.contains(&format!("is {what}")),
            "{}",
            s.stderr
        );
        assert_eq!(both.code, 0, "{}", both.stderr);
        let said = both.stdout.replace('\n', " ");
        assert!(
            said.contains("nothing ran on 2 workloads:")
                && said.contains("refused runs, for:")
                && said.contains(&format!("is {what}")),
            "{}",
            both.stdout
        );
    }
}

/// A survey of `target` with `args`, a round of tiny runs, its results in `dir`.
fn survey_of(dir: &tempfile::TempDir, target: &str, args: &[&str]) -> Ran {
    let results = path_str(&file(dir, "results"));
    let mut a = vec![
        "survey",
        "--target",
        target,
        "--rounds",
        "1",
        "--max-time",
        "0",
        "--max-seconds",
        "0.05",
        "--ops",
        "16",
        "--results-dir",
        &results,
    ];
    a.extend_from_slice(args);
    iolab(&a)
}

/// A survey whose every row is refused did nothing it was asked: exit 2 with the refusal, as `run` says
/// it for the same input (a mounted device with --allow-device-writes, a mounted loop device's backing
/// file with --overwrite, --bs 3 with O_DIRECT on a device); and the survey of a mounted device names
/// its file system and where it is mounted.
#[test]
fn a_survey_that_ran_nothing_exits_2_with_the_refusal() {
    if loop_unavailable("a_survey_that_ran_nothing_exits_2_with_the_refusal") {
        return;
    }
    let dir = disk_dir();
    let l = ext4_loop(&dir);
    let mnt = file(&dir, "mnt");
    std::fs::create_dir(&mnt).unwrap();
    // Read-only: a file system mounted read-write writes its own metadata (lazy inode-table init, the
    // journal) while the test runs, and the device would change without iolab writing it.
    let mounted = Command::new("mount")
        .args(["-o", "ro"])
        .arg(&l.0)
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(mounted.success(), "mount {}", l.0);
    let img = path_str(&file(&dir, "fs.img"));
    let cases: [(&str, &[&str], &str, &str); 3] = [
        (
            &l.0,
            &["--allow-device-writes", "--workload", "write"],
            "--target:",
            "is mounted at",
        ),
        (
            &img,
            &["--overwrite", "--workload", "write"],
            "--target:",
            "backing file of the loop device",
        ),
        (
            &l.0,
            &["--bs", "3", "--direct", "--workload", "read"],
            "--bs:",
            "O_DIRECT",
        ),
    ];
    let before = head(&l.0);
    let mut seen = Vec::new();
    for (target, args, flag, why) in cases {
        let r = survey_of(&dir, target, args);
        seen.push(r);
        let r = seen.last().unwrap();
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!("iolab: {flag}")) && r.stderr.contains(why),
            "{args:?}: {}",
            r.stderr
        );
        assert_eq!(r.stderr.lines().count(), 1, "one line: {}", r.stderr);
    }
    let reads = survey_of(
        &dir,
        &l.0,
        &[
            "--workload",
            "read",
            "--bs",
            "4k",
            "--inflight",
            "1",
            "--buffered",
        ],
    );
    let after = head(&l.0);
    let _ = Command::new("umount").arg(&mnt).status();
    assert!(before == after, "the device is unchanged");
    assert_eq!(reads.code, 0, "{}", reads.stderr);
    let results = std::fs::read_dir(file(&dir, "results")).unwrap();
    let doc = results
        .flatten()
        .map(|e| json_file(&e.path()))
        .find(|d| d["target"] == l.0.as_str())
        .expect("the survey's result");
    let fs = doc["fs"].as_str().unwrap_or_default();
    assert!(
        fs.starts_with(&format!("ext4, mounted at {}", mnt.display())),
        "{fs}"
    );
}

/// A read-only block device (losetup -r) is refused once, up front, naming it read-only: by a write run,
/// and by a survey with writes; not as an EPERM per method with a hint about immutable files.
#[test]
fn a_read_only_device_is_refused_as_such() {
    if loop_unavailable("a_read_only_device_is_refused_as_such") {
        return;
    }
    let dir = disk_dir();
    let img = file(&dir, "ro.img");
    std::fs::write(&img, vec![7u8; 8 << 20]).unwrap();
    let o = Command::new("losetup")
        .args(["--find", "--show", "--read-only"])
        .arg(&img)
        .output()
        .unwrap();
    assert!(o.status.success(), "losetup -r: {o:?}");
    let l = Loop(String::from_utf8_lossy(&o.stdout).trim().to_string());
    let r = write_16(&l.0);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("iolab: --target:")
            && r.stderr.contains("is a read-only block device"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("EPERM") && !r.stderr.contains("immutable"),
        "{}",
        r.stderr
    );
    let r = survey_of(&dir, &l.0, &["--allow-device-writes"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("iolab: --workload:")
            && r.stderr.contains("is a read-only block device"),
        "{}",
        r.stderr
    );
    assert!(
        std::fs::read(&img).unwrap().iter().all(|&b| b == 7),
        "the backing file is unchanged"
    );
}

/// A fio job writing a /proc or /sys file is refused as no storage, not told to add --overwrite (which
/// would be refused too).
#[test]
fn a_fio_job_writing_a_kernel_interface_file_is_refused_as_such() {
    let dir = disk_dir();
    for (target, fs) in [
        ("/proc/sys/vm/drop_caches", "procfs"),
        ("/sys/kernel/mm/transparent_hugepage/enabled", "sysfs"),
    ] {
        if !Path::new(target).exists() {
            skip("pseudo-fs", &format!("{target}: not here"));
            continue;
        }
        let before = std::fs::read(target).ok();
        let job = file(&dir, "j.fio");
        std::fs::write(
            &job,
            format!("[job]\nfilename={target}\nrw=write\nbs=4\nsize=4\n"),
        )
        .unwrap();
        for extra in [&[][..], &["--overwrite"][..]] {
            let mut a = vec!["run", "--fio"];
            let j = path_str(&job);
            a.push(&j);
            a.extend_from_slice(extra);
            let r = iolab(&a);
            assert_eq!(r.code, 2, "{}", r.stderr);
            assert!(
                r.stderr.contains(&format!("{target} is a file of {fs}"))
                    && !r.stderr.contains("--overwrite"),
                "{}",
                r.stderr
            );
        }
        assert_eq!(std::fs::read(target).ok(), before, "{target} unchanged");
    }
}

/// A remote TCP peer's failures are said in words with its address: nothing listening, and a peer that
/// drops the connection while iolab writes (closed with unread data: the kernel resets it).
#[test]
fn a_remote_tcp_peers_failures_are_said_in_words() {
    let gone = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let free = gone.local_addr().unwrap();
    drop(gone);
    let target = format!("tcp:{free}");
    let args = ["--method", "sync", "--op", "write", "--count", "none"];
    let mut a = vec!["run", "--target", &target, "--ops", "10"];
    a.extend_from_slice(&args);
    let r = iolab(&a);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("nothing listens at {free}")),
        "{}",
        r.stderr
    );
    // A peer that drops the connection with data unread (the kernel resets it).
    let (at, r) = against_peer(&args, Some(Duration::from_millis(300)));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "the connection to {at} was reset: the peer closed it"
        )),
        "{}",
        r.stderr
    );
    // A peer that takes the connection and never reads: once the buffers are full, nothing sent is
    // taken, and the kernel gives the connection up after its user timeout (ETIMEDOUT, about 10 s).
    let (at, r) = against_peer(&args, None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("the peer at {at} stopped taking data")),
        "{}",
        r.stderr
    );
}

/// A 64 KiB write run of up to 30 s (with `args`) to a peer on this host that accepts the connection and
/// reads nothing, then closes it after `hold` (None: once the run ended); its address and the run.
fn against_peer(args: &[&str], hold: Option<Duration>) -> (std::net::SocketAddr, Ran) {
    let peer = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = peer.local_addr().unwrap();
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let (c, _) = peer.accept().unwrap();
        let _ = wait.recv_timeout(hold.unwrap_or(Duration::from_secs(60)));
        drop(c);
    });
    let target = format!("tcp:{at}");
    let mut a = vec![
        "run",
        "--target",
        &target,
        "--duration",
        "30",
        "--bs",
        "64k",
    ];
    a.extend_from_slice(args);
    let r = iolab(&a);
    let _ = done.send(());
    holder.join().unwrap();
    (at, r)
}
