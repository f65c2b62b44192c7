//! What `iolab vm`'s guest (or every host of `iolab fleet`) would refuse of its command is refused on
//! this machine first, with the line the guest would print, before anything is downloaded or booted
//! (or Ansible is started): a run's or a sweep's spec, a script's lines, a suite's name and places. What
//! only the other machine can answer (a target that is a directory here, its CPUs, its memory, a
//! `--spec` file it reads as its own) is left to it. No guest is booted: a refusal comes before the
//! cache is made, and a command that passes is stopped by a refusal that comes after the check (a
//! `--cache` in /proc, a missing inventory).

mod common;

use common::{bin, path_str};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

struct Ran {
    code: i32,
    stderr: String,
    took: Duration,
}

/// `iolab ARGS` run in `dir`, with the default cache (`suite --vm`'s) inside `dir`.
fn iolab_in(dir: &Path, args: &[&str]) -> Ran {
    let t0 = Instant::now();
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env("XDG_CACHE_HOME", dir.join("xdg"))
        .env_remove("COLUMNS")
        .output()
        .expect("iolab starts");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: t0.elapsed(),
    }
}

/// `iolab vm --cache DIR/cache ARGS` is refused: exit 2, one line naming `flag`, within 5 s, and no
/// cache was made (nothing fetched). Returns the line.
fn refused_before_the_download(dir: &Path, args: &[&str], flag: &str) -> String {
    let cache = path_str(&dir.join("cache"));
    let mut all = vec!["vm", "--cache", &cache];
    all.extend_from_slice(args);
    let r = iolab_in(dir, &all);
    assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line: {lines:?}");
    assert!(
        lines[0].starts_with(&format!("iolab: {flag}: ")),
        "{args:?}: names {flag}: {}",
        lines[0]
    );
    assert!(
        r.took < Duration::from_secs(5),
        "{args:?}: took {:?}",
        r.took
    );
    assert!(!dir.join("cache").exists(), "{args:?}: nothing fetched");
    assert!(!dir.join("xdg").exists(), "{args:?}: no default cache made");
    lines[0].to_string()
}

/// What `iolab ARGS` itself says here (the guest's iolab is this one): its one line.
fn said_here(dir: &Path, args: &[&str]) -> String {
    let r = iolab_in(dir, args);
    assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
    r.stderr.trim_end().to_string()
}

#[test]
fn a_spec_the_guest_would_refuse_is_refused_with_its_line_before_the_download() {
    let d = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--method", "nosuch"], "--method"),
        (&["run", "--ops", "-1"], "--ops"),
        (&["run", "--bs", "2G"], "--bs"),
        (&["run", "--ops", "0"], "--ops"),
        (&["run", "--method", "psync", "--qd", "8"], "--qd"),
        (&["run", "--inflight", "0"], "--inflight"),
        (&["run", "--repeat", "0"], "--repeat"),
        (&["sweep", "--vary", "bs=4k,2G"], "--vary"),
        (&["sweep", "--vary", "qd=1,2", "--ops", "0"], "--ops"),
    ];
    for (args, flag) in cases {
        let mut guest = vec!["--"];
        guest.extend_from_slice(args);
        let line = refused_before_the_download(d.path(), &guest, flag);
        assert_eq!(line, said_here(d.path(), args), "{args:?}");
    }
}

/// A fio job file in the shared directory is read as the guest reads it: a file it cannot parse, or
/// without the section asked for, is refused before the download with the line `iolab run` prints. Its
/// options are the guest's to map (they read its targets' sizes): a job on the guest's NVMe disk passes.
#[test]
fn a_fio_job_file_the_guest_cannot_read_is_refused_before_the_download() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("bad.fio"), "[a]\nrw=read\nnot a line\n").unwrap();
    std::fs::write(
        d.path().join("nvme.fio"),
        "[a]\nrw=read\nfilename=/dev/nvme0n1\nbs=4k\n",
    )
    .unwrap();
    for args in [
        &["run", "--fio", "bad.fio"][..],
        &["run", "--fio", "nvme.fio", "--fio-section", "b"],
    ] {
        let mut guest = vec!["--"];
        guest.extend_from_slice(args);
        let line = refused_before_the_download(d.path(), &guest, "--fio");
        assert_eq!(line, said_here(d.path(), args), "{args:?}");
    }
    // Refused here (no such disk), passed to the guest: the cache in /proc stops it after the check.
    let r = iolab_in(
        d.path(),
        &[
            "vm",
            "--cache",
            "/proc/iolab-cache",
            "--",
            "run",
            "--fio",
            "nvme.fio",
        ],
    );
    assert!(
        r.code == 2 && r.stderr.starts_with("iolab: --cache: "),
        "{}",
        r.stderr
    );
}

/// A script's sweeps are bounded together, as one sweep is: each is resolved here to be checked, and 20
/// lines of 100,000 points were checked for 15 s before the line that was refused.
#[test]
fn a_scripts_sweeps_are_bounded_together() {
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("s.txt");
    let seeds: Vec<String> = (1..=60_000).map(|i| i.to_string()).collect();
    let line = format!("sweep --vary seed={} --ops 10\n", seeds.join(","));
    std::fs::write(&script, line.repeat(2) + "run --ops 0\n").unwrap();
    let said = refused_before_the_download(d.path(), &["--script", &path_str(&script)], "--script");
    assert!(
        said.contains("command 2: the sweeps of these commands hold more than 100,000 points"),
        "{said}"
    );
}

#[test]
fn a_script_line_the_guest_would_refuse_is_named_by_its_number() {
    let d = tempfile::tempdir().unwrap();
    let script = d.path().join("s.txt");
    std::fs::write(
        &script,
        "run --ops 10\n# a comment\niolab sweep --vary method=psync,nosuch --ops 10\n",
    )
    .unwrap();
    let line = refused_before_the_download(d.path(), &["--script", &path_str(&script)], "--script");
    let here = said_here(
        d.path(),
        &["sweep", "--vary", "method=psync,nosuch", "--ops", "10"],
    );
    let guest = here.strip_prefix("iolab: ").unwrap();
    assert_eq!(
        line,
        format!("iolab: --script: {}: command 2: {guest}", script.display())
    );
    assert!(
        guest.starts_with("--vary: method=nosuch: --method: "),
        "{guest}"
    );
}

#[test]
fn a_suite_the_guest_would_refuse_is_refused_before_the_download() {
    let d = tempfile::tempdir().unwrap();
    refused_before_the_download(d.path(), &["--", "suite", "nosuch"], "suite");
    refused_before_the_download(
        d.path(),
        &["--", "suite", "writes", "--repeat", "0"],
        "--repeat",
    );
    let line = refused_before_the_download(
        d.path(),
        &["--", "suite", "writes", "--disk-dir", "/proc"],
        "--disk-dir",
    );
    assert!(line.contains("procfs"), "{line}");
    let line = refused_before_the_download(
        d.path(),
        &["--", "suite", "writes", "--tmpfs-dir", "/sys/kernel/../fs"],
        "--tmpfs-dir",
    );
    assert!(line.contains("sysfs"), "{line}");
    // `suite --vm` checks the same, with the default cache (here inside the test's directory).
    let r = iolab_in(
        d.path(),
        &["suite", "writes", "--quick", "--vm", "--disk-dir", "/proc"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.starts_with("iolab: --disk-dir: "), "{}", r.stderr);
    assert!(r.took < Duration::from_secs(5), "took {:?}", r.took);
    assert!(!d.path().join("xdg").exists(), "no cache made");
}

/// What only the guest can answer is left to it: the command passes the check and is stopped by the
/// `--cache` refusal that follows it (a directory in /proc).
#[test]
fn what_only_the_guest_can_answer_is_left_to_it() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("uring.toml"), "method = \"io_uring\"\n").unwrap();
    std::fs::write(d.path().join("bad.toml"), "method = \"nosuch\"\n").unwrap();
    // A directory here outside the shared one (the current directory): in the guest, whose /tmp is a
    // tmpfs of its own, the path names a new file.
    let elsewhere = tempfile::tempdir().unwrap();
    let here_a_dir = path_str(elsewhere.path());
    let outside = elsewhere.path().join("bad.toml");
    std::fs::write(&outside, "method = \"nosuch\"\n").unwrap();
    let passes: &[&[&str]] = &[
        &["run", "--target", &here_a_dir, "--ops", "10"],
        &[
            "sweep",
            "--vary",
            &format!("target={here_a_dir},x.dat"),
            "--ops",
            "10",
        ],
        // The guest's CPUs and memory, not this machine's.
        &[
            "run", "--method", "io_uring", "--sqpoll", "--sq-cpu", "100000",
        ],
        &["run", "--bs", "1g", "--threads", "1024", "--ops", "1024"],
        // A spec file in the shared directory is read here: its method takes --qd.
        &["run", "--spec", "uring.toml", "--qd", "8", "--ops", "10"],
        // One outside it is the guest's own file (its /tmp), left to it.
        &["run", "--spec", &path_str(&outside), "--ops", "10"],
    ];
    for args in passes {
        let mut all = vec!["vm", "--cache", "/proc/iolab-no-cache", "--"];
        all.extend_from_slice(args);
        let r = iolab_in(d.path(), &all);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr
                .starts_with("iolab: --cache: /proc is a directory of procfs"),
            "{args:?}: passed the check: {}",
            r.stderr
        );
    }
    // The shared spec file's own refusal is the guest's too.
    refused_before_the_download(
        d.path(),
        &["--", "run", "--spec", "bad.toml", "--ops", "10"],
        "--method",
    );
}

/// `iolab fleet` checks its hosts' command the same way, before the inventory is read or Ansible
/// started; a `--spec` file is each host's own.
#[test]
fn a_fleet_refuses_a_spec_every_host_would_refuse_before_ansible() {
    let d = tempfile::tempdir().unwrap();
    let inv = path_str(&d.path().join("no-such-hosts.ini"));
    let here_a_dir = path_str(d.path());
    std::fs::write(d.path().join("bad.toml"), "method = \"nosuch\"\n").unwrap();
    for (args, flag) in [
        (&["run", "--ops", "0"][..], "--ops"),
        (&["run", "--method", "nosuch"][..], "--method"),
        (&["sweep", "--vary", "bs=4k,2G"][..], "--vary"),
        (
            &["suite", "writes", "--disk-dir", "/proc"][..],
            "--disk-dir",
        ),
    ] {
        let mut all = vec!["fleet", &inv, "--"];
        all.extend_from_slice(args);
        let r = iolab_in(d.path(), &all);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!("iolab: {flag}: ")),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.took < Duration::from_secs(5),
            "{args:?}: took {:?}",
            r.took
        );
    }
    for args in [
        &["run", "--target", &here_a_dir, "--ops", "10"][..],
        &["run", "--spec", "bad.toml", "--ops", "10"][..],
    ] {
        let mut all = vec!["fleet", &inv, "--"];
        all.extend_from_slice(args);
        let r = iolab_in(d.path(), &all);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.starts_with("iolab: INVENTORY: "),
            "{args:?}: passed the check: {}",
            r.stderr
        );
    }
}

/// The guest's time limit is bounded as the fleet's: 1 s to 365 days, refused before anything is fetched.
#[test]
fn a_timeout_past_a_year_is_refused_before_the_download() {
    let d = tempfile::tempdir().unwrap();
    let cache = path_str(&d.path().join("cache"));
    for t in ["0", "31536001", "18446744073709551615"] {
        let r = iolab_in(
            d.path(),
            &["vm", "--cache", &cache, "--timeout", t, "--", "run"],
        );
        assert_eq!(r.code, 2, "{t}: {}", r.stderr);
        assert!(
            r.stderr.contains("--timeout") && r.stderr.contains("1..=31536000"),
            "{t}: {}",
            r.stderr
        );
        assert!(!d.path().join("cache").exists(), "{t}: nothing fetched");
    }
}
