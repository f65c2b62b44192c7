//! Issue 15, class 10: what a SIGKILL or SIGQUIT leaves behind (the signals iolab cannot or does not
//! catch), and `iolab clean [DIR]`, which removes exactly what a gone iolab created and refuses anything else.

mod common;
use common::*;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `iolab run ARGS` in the background, with SIGQUIT at its default action and no core file.
fn start(args: &[&str]) -> Child {
    let mut c = Command::new(bin());
    c.arg("run").args(args).args(["--count", "none"]);
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: signal and setrlimit are async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            Ok(())
        });
    }
    c.spawn().expect("iolab starts")
}

/// Waits until every path exists with data in it (iolab journals a path before it sizes or fills it).
fn wait_for(child: &mut Child, paths: &[&Path]) {
    let t0 = Instant::now();
    while !paths
        .iter()
        .all(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0))
    {
        assert!(
            child.try_wait().unwrap().is_none(),
            "iolab ended before creating {paths:?}"
        );
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "{paths:?} never appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The run is under way (its files are journaled at creation, before they are sized).
    std::thread::sleep(Duration::from_millis(100));
}

fn signal(child: &mut Child, sig: i32) -> std::process::ExitStatus {
    // SAFETY: kill takes integers only; the pid is our child's, not yet waited for.
    unsafe { libc::kill(child.id() as i32, sig) };
    child.wait().unwrap()
}

/// A killed `iolab run --target DIR/NAME` (psync, long): returns the target, left behind.
fn killed_run(dir: &Path, name: &str) -> PathBuf {
    let t = dir.join(name);
    let mut c = start(&[
        "--method",
        "psync",
        "--target",
        &path_str(&t),
        "--duration",
        "60",
    ]);
    wait_for(&mut c, &[&t]);
    let st = signal(&mut c, libc::SIGKILL);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&st),
        Some(libc::SIGKILL)
    );
    assert!(t.exists(), "SIGKILL leaves the target behind");
    t
}

fn clean(dir: &Path) -> Ran {
    iolab(&["clean", &path_str(dir)])
}

fn canon(p: &Path) -> String {
    path_str(
        &std::fs::canonicalize(p.parent().unwrap())
            .unwrap()
            .join(p.file_name().unwrap()),
    )
}

/// The journal directory the README names for this user.
fn journal_dir() -> PathBuf {
    // SAFETY: geteuid takes no arguments and cannot fail.
    let uid = unsafe { libc::geteuid() };
    if uid == 0 {
        return PathBuf::from("/run/iolab");
    }
    let run = PathBuf::from(format!("/run/user/{uid}"));
    if run.is_dir() {
        run.join("iolab")
    } else {
        PathBuf::from(format!("/tmp/iolab-{uid}"))
    }
}

fn journals_of(pid: u32) -> Vec<String> {
    std::fs::read_dir(journal_dir())
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&format!("{pid}-")))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_killed_runs_target_is_left_and_clean_removes_it() {
    let d = disk_dir();
    let t = killed_run(d.path(), "x.dat");
    let r = clean(d.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(&format!("removed {}", canon(&t))),
        "{}",
        r.stdout
    );
    assert!(!t.exists(), "removed");
    let again = clean(d.path());
    assert_eq!(again.code, 0);
    assert!(
        again.stdout.contains("nothing to clean"),
        "{}",
        again.stdout
    );
}

/// The race a full test run once hit: one `iolab clean` rewrites a journal (truncate, then write, under its
/// lock) while another reads it. Here the test plays the rewriting clean: it empties the killed run's journal
/// under the lock, starts `iolab clean DIR`, and writes the journal back a moment later. The clean must wait
/// for the lock and read it again, not pass the journal over as a just-created one.
#[test]
fn a_journal_another_clean_is_rewriting_is_read_again_under_its_lock() {
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsRawFd;
    let d = disk_dir();
    let mut c = start(&[
        "--method",
        "psync",
        "--target",
        &path_str(&d.path().join("x.dat")),
        "--duration",
        "60",
    ]);
    let pid = c.id();
    wait_for(&mut c, &[&d.path().join("x.dat")]);
    signal(&mut c, libc::SIGKILL);
    let t = d.path().join("x.dat");
    let names = journals_of(pid);
    assert_eq!(names.len(), 1, "one journal for pid {pid}: {names:?}");
    let jpath = journal_dir().join(&names[0]);
    let mut j = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&jpath)
        .unwrap();
    // SAFETY: flock takes an fd we own and integer flags.
    assert_eq!(unsafe { libc::flock(j.as_raw_fd(), libc::LOCK_EX) }, 0);
    let mut text = Vec::new();
    j.read_to_end(&mut text).unwrap();
    assert!(!text.is_empty(), "the killed run's journal has its lines");
    j.set_len(0).unwrap();
    let cleaner = Command::new(bin())
        .args(["clean", &path_str(d.path())])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    j.seek(std::io::SeekFrom::Start(0)).unwrap();
    j.write_all(&text).unwrap();
    drop(j); // releases the lock
    let out = cleaner.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!("removed {}", canon(&t))),
        "{stdout}"
    );
    assert!(!t.exists(), "removed");
}

#[test]
fn sigquit_leaves_the_splice_sources_too_and_clean_removes_them() {
    let d = tmpfs_dir();
    let t = d.path().join("s.dat");
    let mut c = start(&[
        "--method",
        "splice",
        "--threads",
        "2",
        "--target",
        &path_str(&t),
        "--duration",
        "60",
    ]);
    let sources: Vec<PathBuf> = (0..2)
        .map(|i| d.path().join(format!(".s.dat.iolab-source-{}-{i}", c.id())))
        .collect();
    wait_for(&mut c, &[&t, &sources[0], &sources[1]]);
    let st = signal(&mut c, libc::SIGQUIT);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&st),
        Some(libc::SIGQUIT),
        "SIGQUIT keeps its default action"
    );
    assert!(
        t.exists() && sources.iter().all(|s| s.exists()),
        "left behind"
    );
    let r = clean(d.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("removed 3,"), "{}", r.stdout);
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left: {left:?}");
}

#[test]
fn a_file_the_user_made_afterwards_is_refused_and_kept() {
    let d = disk_dir();
    // A new file renamed over iolab's (another inode for certain).
    let t = killed_run(d.path(), "renamed.dat");
    let mine = d.path().join("mine.tmp");
    std::fs::write(&mine, b"the user's").unwrap();
    std::fs::rename(&mine, &t).unwrap();
    // iolab's removed and a new one made under the same name (ext4 often gives it the same inode number).
    let u = killed_run(d.path(), "recreated.dat");
    std::fs::remove_file(&u).unwrap();
    std::fs::write(&u, b"the user's too").unwrap();
    let r = clean(d.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for p in [&t, &u] {
        assert!(
            r.stdout.contains(&format!("refused {}:", canon(p))),
            "{}",
            r.stdout
        );
    }
    assert!(r.stdout.contains("removed 0, refused 2"), "{}", r.stdout);
    assert_eq!(std::fs::read(&t).unwrap(), b"the user's");
    assert_eq!(std::fs::read(&u).unwrap(), b"the user's too");
}

#[test]
fn a_symlink_swapped_in_is_refused_and_its_target_untouched() {
    let d = disk_dir();
    let other = disk_dir();
    let precious = other.path().join("precious");
    std::fs::write(&precious, b"keep me").unwrap();
    let t = killed_run(d.path(), "x.dat");
    let moved = d.path().join("moved.dat");
    std::fs::rename(&t, &moved).unwrap();
    std::os::unix::fs::symlink(&precious, &t).unwrap();
    let r = clean(d.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains(&format!("refused {}: it is now a symbolic link", canon(&t))),
        "{}",
        r.stdout
    );
    assert!(std::fs::symlink_metadata(&t)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&precious).unwrap(), b"keep me");
    assert!(
        moved.exists(),
        "iolab's file under another name is not looked for"
    );
}

#[test]
fn kept_files_and_running_iolabs_are_left_alone() {
    let d = disk_dir();
    // --keep: the user asked for the file; a kill does not make it a leftover.
    let k = d.path().join("kept.dat");
    let mut c = start(&[
        "--method",
        "psync",
        "--target",
        &path_str(&k),
        "--duration",
        "60",
        "--keep",
    ]);
    wait_for(&mut c, &[&k]);
    signal(&mut c, libc::SIGKILL);
    // A run still going.
    let t = d.path().join("running.dat");
    let mut c = start(&[
        "--method",
        "psync",
        "--target",
        &path_str(&t),
        "--duration",
        "60",
    ]);
    wait_for(&mut c, &[&t]);
    let r = clean(d.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("nothing to clean"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("iolab still running (pid {}", c.id()))
            || r.stdout.contains(&format!(", {}", c.id())),
        "{}",
        r.stdout
    );
    assert!(k.exists() && t.exists());
    // Ctrl-C: iolab removes its file and its journal itself.
    let pid = c.id();
    let st = signal(&mut c, libc::SIGINT);
    assert_eq!(st.code(), Some(130));
    assert!(!t.exists());
    assert!(journals_of(pid).is_empty(), "{:?}", journals_of(pid));
}

#[test]
fn a_normal_exit_leaves_no_journal() {
    let d = tmpfs_dir();
    let t = d.path().join("x.dat");
    let mut c = start(&[
        "--method",
        "splice",
        "--threads",
        "2",
        "--target",
        &path_str(&t),
        "--ops",
        "2000",
    ]);
    let pid = c.id();
    assert!(c.wait().unwrap().success());
    assert!(journals_of(pid).is_empty(), "{:?}", journals_of(pid));
}

#[test]
fn clean_with_nothing_to_do_says_so_and_a_missing_dir_is_bad_input() {
    let d = disk_dir();
    let r = clean(d.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("nothing to clean")
            && r.stdout.contains(&format!("under {}", d.path().display())),
        "{}",
        r.stdout
    );
    let missing = d.path().join("missing");
    let r = clean(&missing);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("DIR") && r.stderr.contains("missing"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_left_directory_holding_a_users_file_is_exit_1_and_kept_for_another_try() {
    let d = disk_dir();
    // TMPDIR too: a splice or sendfile run on /dev/null keeps its source file there, and the kill may
    // leave it; `clean DIR` below must find everything the survey left under DIR.
    let mut c = Command::new(bin())
        .args(["survey", "--no-json", "--tmp-dir", &path_str(d.path())])
        .env("TMPDIR", d.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let survey_dir = loop {
        let found = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("iolab-survey-")
            });
        if let Some(p) = found {
            break p;
        }
        assert!(c.try_wait().unwrap().is_none(), "the survey ended early");
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no survey directory"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));
    signal(&mut c, libc::SIGKILL);
    let users = survey_dir.join("users-notes.txt");
    std::fs::write(&users, b"mine").unwrap();
    let r = clean(d.path());
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains(&format!("could not remove {}", canon(&survey_dir)))
            && r.stdout.contains("not empty"),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read(&users).unwrap(),
        b"mine",
        "the user's file is kept"
    );
    // Once the user has taken their file away, the directory goes.
    std::fs::remove_file(&users).unwrap();
    let r = clean(d.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains(&format!("removed {}", canon(&survey_dir))),
        "{}",
        r.stdout
    );
    assert!(!survey_dir.exists());
    let left: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        left.is_empty(),
        "nothing of the killed survey is left: {left:?}"
    );
}

/// The offload sandbox's unrelated test file (the attacks' bait, in $TMPDIR) is journaled like a target: a
/// killed offload run leaves both, and `iolab clean` removes both.
#[test]
fn a_killed_offload_runs_bait_file_is_cleaned_too() {
    let d = tmpfs_dir();
    let t = d.path().join("o.dat");
    let mut c = Command::new(bin());
    c.args([
        "run",
        "--method",
        "offload",
        "--offload-attack",
        "buf-addr",
        "--count",
        "none",
        "--duration",
        "60",
    ])
    .arg("--target")
    .arg(&t)
    .env("TMPDIR", d.path())
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut c = c.spawn().expect("iolab starts");
    let bait = || {
        std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().contains("iolab-offload-unrelated-"))
    };
    let t0 = Instant::now();
    let b = loop {
        if let (Some(b), true) = (bait(), t.exists()) {
            break b;
        }
        if c.try_wait().unwrap().is_some() {
            return skip(
                "io_uring",
                "the offload run ended at once \
                 (no io_uring here?)",
            );
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the bait never appeared: {:?}",
            std::fs::read_dir(d.path())
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(300));
    if c.try_wait().unwrap().is_some() {
        return skip("timing", "the offload run ended before the kill");
    }
    signal(&mut c, libc::SIGKILL);
    assert!(t.exists() && b.exists(), "a SIGKILL leaves both");
    let r = clean(d.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!t.exists() && !b.exists(), "{}", r.stdout);
    assert!(r.stdout.contains("removed 2,"), "{}", r.stdout);
}
