//! Fault injection, issue 15 class 5: output errors never panic. stdout, stderr and the result files
//! on a device that takes nothing (/dev/full, a full tmpfs): an output that cannot be written ends with
//! exit 1 and a line saying so (when stderr can take it), a stderr that cannot be written changes
//! nothing but the lost message, and no path panics (exit 101).

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};

fn full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full opens"),
    )
}

/// Where a stream goes in `ran`.
#[derive(Clone, Copy, PartialEq)]
enum To {
    Full,
    Kept,
}

/// Runs iolab with stdout and stderr each either on /dev/full or captured.
fn ran(args: &[&str], out: To, err: To) -> Ran {
    let mut c = Command::new(bin());
    c.args(args).stdin(Stdio::null());
    c.stdout(if out == To::Full {
        full()
    } else {
        Stdio::piped()
    });
    c.stderr(if err == To::Full {
        full()
    } else {
        Stdio::piped()
    });
    let o = c.output().expect("iolab starts");
    Ran {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

const RUN: [&str; 10] = [
    "run",
    "--method",
    "psync",
    "--target",
    "/dev/null",
    "--ops",
    "1000",
    "--bs",
    "4",
    "--count",
];

fn run_args(more: &[&str]) -> Vec<String> {
    RUN.iter()
        .chain(["none"].iter())
        .chain(more.iter())
        .map(|s| s.to_string())
        .collect()
}

fn s(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn no_panic(r: &Ran, what: &str) {
    assert_ne!(r.code, 101, "{what}: panicked: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{what}: {}", r.stderr);
}

#[test]
fn stderr_full_keeps_every_exit_code() {
    // Bad input: exit 2 (it panicked with 101 when eprintln! met ENOSPC).
    let r = ran(&["run", "--bs", "0"], To::Kept, To::Full);
    assert_eq!(r.code, 2, "bad input with stderr on /dev/full");
    let r = ran(&["run", "--ops", "x", "--no-such-flag"], To::Kept, To::Full);
    assert_eq!(r.code, 2, "clap's error with stderr on /dev/full");
    // A run-time error: exit 1 (stdout on /dev/full: the table cannot be written; an output place that
    // cannot take a file, procfs say, is bad input found before the run).
    let a = run_args(&[]);
    let r = ran(&s(&a), To::Full, To::Full);
    assert_eq!(r.code, 1, "run-time error with stderr on /dev/full");
    let r = ran(&s(&a), To::Full, To::Kept);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("cannot write to stdout"), "{}", r.stderr);
    let r = ran(
        &s(&run_args(&["--json", "/proc/iolab-no-such-file.json"])),
        To::Kept,
        To::Full,
    );
    assert_eq!(r.code, 2, "procfs as --json is bad input");
    // compare of files that are not there: bad input.
    let r = ran(
        &["compare", "/nonexistent-a", "/nonexistent-b"],
        To::Kept,
        To::Full,
    );
    assert_eq!(r.code, 2);
    // A good run with stderr full is still a good run.
    let r = ran(&s(&run_args(&[])), To::Kept, To::Full);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("psync"), "the table still on stdout");
}

#[test]
fn stdout_full_is_exit_1_with_a_line() {
    let cases: Vec<Vec<String>> = vec![
        run_args(&[]),
        run_args(&["--repeat", "2"]),
        run_args(&["--json", "-"]),
        vec!["suite".into(), "--list".into()],
        vec!["--help".into()],
        vec!["run".into(), "--help".into()],
    ];
    for a in &cases {
        let r = ran(&s(a), To::Full, To::Kept);
        no_panic(&r, &a.join(" "));
        assert_eq!(r.code, 1, "{a:?} with stdout on /dev/full: {}", r.stderr);
        assert!(
            r.stderr.contains("cannot write to stdout")
                && r.stderr.contains("no space left (ENOSPC)")
                && !r.stderr.contains("os error"),
            "{a:?}: {}",
            r.stderr
        );
        // Both on /dev/full: the exit code alone tells.
        let r = ran(&s(a), To::Full, To::Full);
        assert_eq!(r.code, 1, "{a:?} with stdout and stderr on /dev/full");
    }
}

#[test]
fn stdout_full_still_writes_the_result_files() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("r.json");
    let c = d.path().join("r.csv");
    let a = run_args(&["--json", j.to_str().unwrap(), "--csv", c.to_str().unwrap()]);
    let r = ran(&s(&a), To::Full, To::Kept);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&j).unwrap()).unwrap();
    assert_eq!(doc["spec"]["method"], "psync");
    assert!(std::fs::read_to_string(&c).unwrap().lines().count() == 2);

    // A sweep whose stdout takes nothing stops at its first line, before any point runs: exit 1.
    let out = d.path().join("sweep.jsonl");
    let r = ran(
        &[
            "sweep",
            "--vary",
            "bs=4,8",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--ops",
            "100",
            "--count",
            "none",
            "--out",
            out.to_str().unwrap(),
        ],
        To::Full,
        To::Kept,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("cannot write to stdout"), "{}", r.stderr);
}

/// A tmpfs of 64 KiB mounted on a new directory, unmounted when dropped.
struct SmallFs(tempfile::TempDir);

impl SmallFs {
    fn mount() -> Result<SmallFs, String> {
        SmallFs::mount_sized("64k")
    }

    fn mount_sized(size: &str) -> Result<SmallFs, String> {
        if euid() != 0 {
            return Err("not root".into());
        }
        let d = tempfile::tempdir().map_err(|e| e.to_string())?;
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(d.path())
            .status()
            .map_err(|e| e.to_string())?;
        if !st.success() {
            return Err(format!("mount -t tmpfs failed: {st}"));
        }
        Ok(SmallFs(d))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

fn euid() -> u32 {
    // Read from /proc: the tests take no libc dependency for one call.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(str::to_string))
        })
        .and_then(|u| u.parse().ok())
        .unwrap_or(u32::MAX)
}

#[test]
fn result_file_on_a_full_filesystem_is_exit_1_and_removed() {
    let fs = match SmallFs::mount() {
        Ok(f) => f,
        Err(why) => {
            skip("mount", &format!("a small tmpfs is needed ({why})"));
            return;
        }
    };
    // Fill it: a 64 KiB tmpfs takes 16 pages.
    let filler = fs.path().join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 64 * 1024]);
    let j = fs.path().join("r.json");
    let a = run_args(&["--json", j.to_str().unwrap()]);
    let r = ran(&s(&a), To::Kept, To::Kept);
    no_panic(&r, "--json on a full tmpfs");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("--json")
            && r.stderr.contains("no space left (ENOSPC)")
            && !r.stderr.contains("os error"),
        "{}",
        r.stderr
    );
    assert!(!j.exists(), "the partial --json file is removed");
    assert!(r.stdout.contains("psync"), "the table was shown");
}

/// stdout closed (`>&-`) is refused before any work: the answer would have nowhere to go, and exit 0
/// would say it went somewhere.
#[test]
fn a_closed_stdout_is_refused_before_the_work() {
    let script = format!(
        "exec {} run --method psync --target /dev/null --ops 100 >&-",
        bin()
    );
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("iolab: stdout: it is closed (>&-)"),
        "{err}"
    );
    // A closed stdin or stderr changes nothing: the table is printed.
    let script = format!(
        "exec {} run --method psync --target /dev/null --ops 100 <&- 2>&-",
        bin()
    );
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("psync"));
}

/// A sweep that can record nothing (the disk is full, or its first line cannot be printed) leaves no
/// empty record file and no empty ./iolab-results behind.
#[test]
fn a_sweep_that_records_nothing_leaves_no_empty_file_or_directory() {
    let fs = match SmallFs::mount() {
        Ok(f) => f,
        Err(why) => {
            skip("mount", &format!("a small tmpfs is needed ({why})"));
            return;
        }
    };
    let _ = std::fs::write(fs.path().join("filler"), vec![0u8; 64 * 1024]);
    let sweep = [
        "sweep",
        "--vary",
        "bs=4,8",
        "--ops",
        "10",
        "--target",
        "/dev/null",
    ];
    let o = Command::new(bin())
        .args(sweep)
        .current_dir(fs.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no space left (ENOSPC)") && !err.contains("os error"),
        "{err}"
    );
    assert!(!fs.path().join("iolab-results").exists(), "{err}");

    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("s.jsonl");
    let mut a: Vec<&str> = sweep.to_vec();
    let out_s = path_str(&out);
    a.extend(["--out", &out_s]);
    let r = ran(&a, To::Full, To::Kept);
    no_panic(&r, "sweep with stdout on /dev/full");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!out.exists(), "no empty --out left: {}", r.stderr);
}

/// `man --dir` on a filesystem that fills up halfway writes all pages or none: the pages already
/// written are removed, so the rerun (with room) is not refused for them.
#[test]
fn man_pages_on_a_full_filesystem_are_all_or_none() {
    let fs = match SmallFs::mount_sized("160k") {
        Ok(f) => f,
        Err(why) => {
            skip("mount", &format!("a small tmpfs is needed ({why})"));
            return;
        }
    };
    let filler = fs.path().join("filler");
    // 140 of its 160 KiB taken: a few pages fit, not all.
    std::fs::write(&filler, vec![0u8; 140 * 1024]).unwrap();
    let dir = fs.path().join("man");
    let d = path_str(&dir);
    let r = iolab(&["man", "--dir", &d]);
    no_panic(&r, "man --dir on a full tmpfs");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("no space left (ENOSPC)") && !r.stderr.contains("os error"),
        "{}",
        r.stderr
    );
    assert!(!dir.exists(), "no page and no directory left: {}", r.stderr);
    std::fs::remove_file(&filler).unwrap();
    let r = iolab(&["man", "--dir", &d]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(dir.join("iolab-run.1").exists() && dir.join("iolab.1").exists());
}

/// A suite on a full filesystem: its points that failed for want of space are said to have failed, with
/// ENOSPC, and the suite exits 1; a point this machine cannot run is not a failure.
#[test]
fn a_suite_whose_points_failed_for_space_exits_1_naming_enospc() {
    let fs = match SmallFs::mount_sized("256k") {
        Ok(f) => f,
        Err(why) => {
            skip("mount", &format!("a small tmpfs is needed ({why})"));
            return;
        }
    };
    // Room for the suite's directory, not for its 4 MiB file.
    std::fs::write(fs.path().join("filler"), vec![0u8; 200 * 1024]).unwrap();
    let d = tempfile::tempdir().unwrap();
    let suite = d.path().join("full.toml");
    std::fs::write(
        &suite,
        "name = \"full\"\nabout = \"a\"\nreproduces = \"r\"\ntable = \"latency\"\n\n[defaults]\n\
         ops = \"1024\"\nbs = \"4k\"\ncount = \"none\"\n\n[[step]]\nlabel = \"one\"\n\
         spec = { method = \"psync\" }\nvary = [\"target=/dev/null,{disk}/w.dat\"]\n",
    )
    .unwrap();
    let (suite, disk) = (path_str(&suite), path_str(fs.path()));
    let out = path_str(&d.path().join("s.jsonl"));
    let shm = path_str(d.path());
    let r = iolab(&[
        "suite",
        &suite,
        "--disk-dir",
        &disk,
        "--tmpfs-dir",
        &shm,
        "--out",
        &out,
    ]);
    no_panic(&r, "a suite on a full tmpfs");
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("1 of 2 points failed") && r.stderr.contains("ENOSPC"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("failed: ") && !r.stdout.contains("not run: "),
        "{}",
        r.stdout
    );
    let records = std::fs::read_to_string(d.path().join("s.jsonl")).unwrap();
    assert_eq!(
        records.lines().filter(|l| l.contains("\"result\"")).count(),
        1,
        "the /dev/null point ran: {records}"
    );
}

/// /dev/stdout when stdout is a pipe is named for what it leads to (it was called a dangling symlink).
#[test]
fn dev_stdout_on_a_pipe_is_named_a_pipe() {
    let o = Command::new(bin())
        .args([
            "run",
            "--target",
            "/dev/stdout",
            "--ops",
            "4",
            "--count",
            "none",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("iolab: --target: /dev/stdout leads to pipe:[")
            && !err.contains("dangling"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

/// A target that is the file iolab's own stdout or stderr goes to is refused before anything is written:
/// the pattern never lands in the report.
#[test]
fn a_target_that_is_iolabs_own_output_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let report = d.path().join("report.txt");
    for (target, op, stream) in [
        ("/dev/stdout".to_string(), "write", "stdout"),
        (path_str(&report), "write", "stdout"),
        ("/dev/stderr".to_string(), "read", "stderr"),
    ] {
        let f = std::fs::File::create(&report).unwrap();
        let (out, err) = if stream == "stdout" {
            (Stdio::from(f), Stdio::piped())
        } else {
            (Stdio::piped(), Stdio::from(f))
        };
        let o = Command::new(bin())
            .args(["run", "--target", &target, "--op", op, "--overwrite"])
            .args(["--ops", "4", "--count", "none"])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .output()
            .unwrap();
        let said = std::fs::read_to_string(&report).unwrap();
        let said = if stream == "stdout" {
            String::from_utf8_lossy(&o.stderr).into_owned()
        } else {
            said
        };
        assert_eq!(o.status.code(), Some(2), "{target}: {said}");
        assert!(
            said.contains(&format!("is the file iolab's {stream} goes to")),
            "{target}: {said}"
        );
        if stream == "stdout" {
            assert_eq!(std::fs::metadata(&report).unwrap().len(), 0, "{target}");
        }
    }
}

/// A --results-dir that is a symbolic link to nowhere is refused before the survey runs anything.
#[test]
fn a_dangling_results_dir_is_refused_before_the_survey() {
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("results");
    std::os::unix::fs::symlink(d.path().join("nowhere/at/all"), &link).unwrap();
    let l = path_str(&link);
    let r = iolab(&[
        "survey",
        "--results-dir",
        &l,
        "--rounds",
        "1",
        "--max-time",
        "0",
        "--ops",
        "10",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.starts_with("iolab: --results-dir:") && r.stderr.contains("symbolic link"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.is_empty(),
        "nothing ran before the refusal: {}",
        r.stdout
    );
}

/// A suite's target written `{disk}/...` is the real file in each result and "the disk file ..." in the
/// tables and the HTML report: the placeholder is never shown.
#[test]
fn a_suites_disk_placeholder_is_never_shown() {
    let d = tempfile::tempdir().unwrap();
    let disk = disk_dir();
    let suite = d.path().join("two.toml");
    std::fs::write(
        &suite,
        "name = \"two\"\nabout = \"a\"\nreproduces = \"r\"\ntable = \"latency\"\n\n[defaults]\n\
         ops = \"64\"\nbs = \"4k\"\ncount = \"none\"\n\n[[step]]\nlabel = \"one\"\n\
         spec = { method = \"psync\" }\nvary = [\"target=/dev/null,{disk}/w.dat\"]\n\n[[step]]\n\
         label = \"two\"\nspec = { method = \"sync\" }\nvary = [\"target=/dev/null,{disk}/w.dat\"]\n",
    )
    .unwrap();
    let out = d.path().join("s.jsonl");
    let (suite_s, disk_s, out_s) = (path_str(&suite), path_str(disk.path()), path_str(&out));
    let shm = path_str(d.path());
    let r = iolab(&[
        "suite",
        &suite_s,
        "--disk-dir",
        &disk_s,
        "--tmpfs-dir",
        &shm,
        "--out",
        &out_s,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stdout.contains("{disk}") && r.stdout.contains("the disk file w.dat"),
        "{}",
        r.stdout
    );
    let records = std::fs::read_to_string(&out).unwrap();
    let real: Vec<String> = records
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["result"]["spec"]["target"].as_str().map(str::to_string))
        .filter(|t| t.ends_with("/w.dat"))
        .collect();
    assert_eq!(real.len(), 2, "{records}");
    assert!(real.iter().all(|t| t.starts_with(&disk_s)), "{real:?}");
    let html = report(&out, &d.path().join("r.html"), &d.path().join("svg"));
    assert!(!html.contains("{disk}"), "the placeholder in the report");
    assert!(html.contains("the disk file w.dat"));
}

/// A fio job file whose second job fails at run time (its filesystem is full): the other jobs run, as
/// fio runs them, and --fio-json holds what ran; the failed job is named and the exit status is 1. A job
/// whose target no run takes (/dev/full) is refused before any job runs.
#[test]
fn a_fio_job_that_fails_leaves_the_others_and_their_fio_json() {
    let fs = match SmallFs::mount() {
        Ok(f) => f,
        Err(e) => {
            skip("mount", &e);
            return;
        }
    };
    let dir = tmpfs_dir();
    let full = path_str(&fs.path().join("b.dat"));
    let job = dir.path().join("j.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nrw=write\nbs=4k\nsize=1m\n[a]\nfilename=/dev/null\n[b]\nfilename={full}\n\
             [c]\nfilename=/dev/null\n"
        ),
    )
    .unwrap();
    let out = path_str(&dir.path().join("out.json"));
    let r = iolab(&["run", "--fio", &path_str(&job), "--fio-json", &out]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("fio job 'b': failed"), "{}", r.stderr);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let names: Vec<&str> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|j| j["jobname"].as_str())
        .collect();
    assert_eq!(names, ["a", "c"]);
    std::fs::write(
        &job,
        "[global]\nrw=write\nbs=4k\nsize=64k\n[a]\nfilename=/dev/null\n[b]\nfilename=/dev/full\n",
    )
    .unwrap();
    let out = path_str(&dir.path().join("out2.json"));
    let r = iolab(&["run", "--fio", &path_str(&job), "--fio-json", &out]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("job 'b'") && r.stderr.contains("/dev/full is a character device"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "nothing ran: {}", r.stdout);
}
