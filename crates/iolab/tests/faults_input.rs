//! Fault injection, issue 15 class 8: bad input is exit 2, found before work starts. Each case gives
//! iolab a value or a combination it cannot use, and checks the exit status (2), the one message line
//! (naming the flag and the value, and the limit where there is one), and that nothing was created: the
//! directory iolab would have written into (its target, record file, report directory, temporary
//! directories) keeps its listing and its modification time, which any file made and removed again
//! would have changed (it is set to a fixed past time before iolab runs).

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// A directory iolab is pointed into, and what it held before.
struct Watched {
    dir: tempfile::TempDir,
    listing: Vec<(PathBuf, Vec<u8>)>,
}

/// A fixed modification time in the past: a file created or removed in the directory replaces it.
fn past() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000)
}

/// Every path under `dir` with its contents (empty for directories), sorted.
fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.push((p.clone(), Vec::new()));
            out.extend(listing(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

fn set_past(dir: &Path) {
    std::fs::File::open(dir)
        .unwrap()
        .set_modified(past())
        .unwrap();
}

impl Watched {
    /// A new directory on tmpfs, writable by anyone (so a run as another user could create files in
    /// it), with what `fill` puts in it.
    fn new(fill: impl FnOnce(&Path)) -> Watched {
        use std::os::unix::fs::PermissionsExt;
        let dir = tmpfs_dir();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        fill(dir.path());
        Watched::settle(dir)
    }

    fn settle(dir: tempfile::TempDir) -> Watched {
        let listing = listing(dir.path());
        for (p, _) in &listing {
            if p.is_dir() {
                set_past(p);
            }
        }
        set_past(dir.path());
        Watched { dir, listing }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn join(&self, name: &str) -> String {
        path_str(&self.dir.path().join(name))
    }

    /// Nothing was created, removed or changed in the directory, not even for a moment.
    fn assert_untouched(&self, what: &str) {
        assert_eq!(
            listing(self.path()),
            self.listing,
            "{what}: the directory's files changed"
        );
        for p in std::iter::once(self.path().to_path_buf())
            .chain(self.listing.iter().map(|(p, _)| p.clone()))
            .filter(|p| p.is_dir())
        {
            let m = std::fs::metadata(&p).unwrap().modified().unwrap();
            assert_eq!(
                m,
                past(),
                "{what}: {} was written to (a file was created or removed in it)",
                p.display()
            );
        }
    }
}

/// `iolab ARGS` run in `dir` (so default output places are inside it).
fn iolab_in(dir: &Path, args: &[&str]) -> Ran {
    ran(Command::new(bin()).args(args).current_dir(dir))
}

fn ran(cmd: &mut Command) -> Ran {
    let out = cmd.output().expect("iolab starts");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Exit 2 and one line on stderr, `iolab: FLAG: ...` containing every one of `needles`.
fn assert_refused(r: &Ran, flag: &str, needles: &[&str]) {
    assert_eq!(
        r.code, 2,
        "should exit 2\nstdout: {}\nstderr: {}",
        r.stdout, r.stderr
    );
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected on stderr: {lines:?}");
    assert!(
        lines[0].starts_with(&format!("iolab: {flag}:")),
        "should name {flag}: {}",
        lines[0]
    );
    for n in needles {
        assert!(lines[0].contains(n), "should say '{n}': {}", lines[0]);
    }
}

/// `refused` for a command run in the watched directory, which must stay untouched.
fn refused_in(w: &Watched, args: &[&str], flag: &str, needles: &[&str]) {
    let r = iolab_in(w.path(), args);
    assert_refused(&r, flag, needles);
    assert!(
        r.stdout.is_empty(),
        "{args:?}: nothing on stdout: {}",
        r.stdout
    );
    w.assert_untouched(&format!("{args:?}"));
}

/// A command that runs iolab (a copy anyone may run, in `bin_dir`) as user nobody with RLIMIT_MEMLOCK
/// lowered to 4 MiB (by prlimit, which needs no privilege to lower a limit), or why it cannot be made.
fn as_nobody_with_4m_memlock(bin_dir: &Path, args: &[&str]) -> Result<Command, String> {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    // SAFETY: geteuid takes no arguments and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root, cannot run a child as another user".into());
    }
    if !Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Err("prlimit (util-linux) is not installed".into());
    }
    let copy = bin_dir.join("iolab");
    // Copied by cp(1), so that no descriptor open for writing the copy exists in this process: a child
    // forked meanwhile by another test's thread would hold it until its exec, and running the copy
    // would fail with ETXTBSY.
    assert!(Command::new("cp")
        .arg(bin())
        .arg(&copy)
        .status()
        .unwrap()
        .success());
    std::fs::set_permissions(bin_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = Command::new("prlimit");
    c.arg("--memlock=4194304:4194304")
        .arg(&copy)
        .args(args)
        .uid(65534)
        .gid(65534);
    Ok(c)
}

// ---------------------------------------------------------------------------------------------------
// Limits of the kernel, asked before the target is made.

#[test]
fn registered_buffers_beyond_memlock_are_refused_before_the_target_is_made() {
    let w = Watched::new(|_| {});
    let target = w.join("fb.dat");
    let args = [
        "run",
        "--method",
        "io_uring",
        "--fixed-bufs",
        "--qd",
        "8",
        "--bs",
        "1m",
        "--ops",
        "16",
        "--count",
        "none",
        "--target",
        &target,
    ];
    let bin_dir = tmpfs_dir();
    let mut cmd = match as_nobody_with_4m_memlock(bin_dir.path(), &args) {
        Ok(c) => c,
        Err(why) => {
            skip("root", &why);
            return;
        }
    };
    let r = ran(cmd.current_dir(w.path()));
    assert_refused(
        &r,
        "--fixed-bufs",
        &[
            "--qd 8 x --threads 1 x --bs 1048576",
            "8 MiB",
            "RLIMIT_MEMLOCK (4 MiB",
        ],
    );
    w.assert_untouched("--fixed-bufs beyond RLIMIT_MEMLOCK");
}

#[test]
fn offload_data_area_beyond_memlock_is_refused_before_the_target_is_made() {
    let w = Watched::new(|_| {});
    let target = w.join("o.dat");
    let args = [
        "run", "--method", "offload", "--batch", "8", "--bs", "1m", "--ops", "16", "--target",
        &target,
    ];
    let bin_dir = tmpfs_dir();
    let mut cmd = match as_nobody_with_4m_memlock(bin_dir.path(), &args) {
        Ok(c) => c,
        Err(why) => {
            skip("root", &why);
            return;
        }
    };
    let r = ran(cmd.current_dir(w.path()));
    assert_refused(
        &r,
        "--batch",
        &["--batch 8", "RLIMIT_MEMLOCK (4194304 bytes)"],
    );
    w.assert_untouched("offload --batch beyond RLIMIT_MEMLOCK");
}

#[test]
fn one_ring_of_more_registered_buffers_than_the_kernel_allows_is_refused() {
    let w = Watched::new(|_| {});
    let target = w.join("fb.dat");
    refused_in(
        &w,
        &[
            "run",
            "--method",
            "io_uring",
            "--ring",
            "shared",
            "--fixed-bufs",
            "--threads",
            "8",
            "--qd",
            "4096",
            "--bs",
            "512",
            "--ops",
            "100k",
            "--count",
            "none",
            "--target",
            &target,
        ],
        "--fixed-bufs",
        &[
            "--qd 4096 x --threads 8 = 32768 buffers",
            "16384",
            "IORING_MAX_REG_BUFFERS",
        ],
    );
}

#[test]
fn one_ring_of_more_entries_than_the_kernel_allows_is_refused() {
    let w = Watched::new(|_| {});
    let target = w.join("r.dat");
    refused_in(
        &w,
        &[
            "run",
            "--method",
            "io_uring",
            "--ring",
            "shared",
            "--threads",
            "16",
            "--qd",
            "4096",
            "--bs",
            "512",
            "--ops",
            "100k",
            "--count",
            "none",
            "--target",
            &target,
        ],
        "--qd",
        &[
            "--qd 4096 x --threads 16",
            "65536",
            "32768",
            "IORING_MAX_ENTRIES",
        ],
    );
}

// ---------------------------------------------------------------------------------------------------
// Values beyond what the option can take.

#[test]
fn a_duration_beyond_the_clock_is_refused_not_run_for_one_op() {
    let w = Watched::new(|_| {});
    let target = w.join("d.dat");
    refused_in(
        &w,
        &[
            "run",
            "--duration",
            "100000000000",
            "--ops",
            "10M",
            "--count",
            "none",
            "--target",
            &target,
        ],
        "--duration",
        &["'100000000000'", "at most 31536000 s"],
    );
}

#[test]
fn an_offset_near_2_to_the_64_is_refused() {
    let w = Watched::new(|_| {});
    let target = w.join("o.dat");
    refused_in(
        &w,
        &[
            "run",
            "--offset",
            "18446744073709547520",
            "--ops",
            "10",
            "--count",
            "none",
            "--target",
            &target,
        ],
        "--offset",
        &["18446744073709547520", "9223372036854775807"],
    );
}

#[test]
fn sq_idle_ms_beyond_32_bits_is_refused_not_cut() {
    let w = Watched::new(|_| {});
    let target = w.join("q.dat");
    refused_in(
        &w,
        &[
            "run",
            "--method",
            "io_uring",
            "--sqpoll",
            "--sq-idle-ms",
            "4294967296",
            "--ops",
            "10",
            "--count",
            "none",
            "--target",
            &target,
        ],
        "--sq-idle-ms",
        &["4294967296", "at most 4294967295"],
    );
}

#[test]
fn direct_with_a_block_size_the_filesystem_cannot_take_is_refused_before_the_file_is_made() {
    let w = Watched::new(|_| {});
    let target = w.join("n.dat");
    let r = iolab_in(
        w.path(),
        &[
            "run", "--direct", "--bs", "100", "--ops", "1", "--count", "none", "--target", &target,
        ],
    );
    // Where the filesystem has no O_DIRECT at all, that is the refusal.
    let flag = if r.stderr.contains("does not support O_DIRECT") {
        "--direct"
    } else {
        "--bs"
    };
    assert_refused(&r, flag, &[&target]);
    if flag == "--bs" {
        assert!(
            r.stderr.contains("100 bytes cannot be used with --direct"),
            "{}",
            r.stderr
        );
    }
    w.assert_untouched("--direct --bs 100 into a new file");
}

// ---------------------------------------------------------------------------------------------------
// Sweep and suite lists.

#[test]
fn the_same_vary_key_twice_is_refused() {
    let w = Watched::new(|_| {});
    let out = w.join("s.jsonl");
    refused_in(
        &w,
        &[
            "sweep", "--vary", "bs=4k,8k", "--vary", "bs=16k", "--ops", "100", "--count", "none",
            "--out", &out,
        ],
        "--vary",
        &["bs is varied twice", "bs=4k,8k", "bs=16k"],
    );
}

#[test]
fn a_value_listed_twice_in_one_vary_is_refused() {
    let w = Watched::new(|_| {});
    let out = w.join("s.jsonl");
    for (list, says) in [
        ("bs=4k,4k", "'4k' twice"),
        ("bs=4k,4096", "'4k' and '4096', which are the same value"),
    ] {
        refused_in(
            &w,
            &[
                "sweep", "--vary", list, "--ops", "100", "--count", "none", "--out", &out,
            ],
            "--vary",
            &[list, says],
        );
    }
}

/// A suite file of one step varying `vary`, in a directory of its own.
fn suite_file(vary: &str) -> (tempfile::TempDir, String) {
    let d = tmpfs_dir();
    let p = d.path().join("mine.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"mine\"\nabout = \"a\"\nreproduces = \"r\"\ntable = \"latency\"\n\n[defaults]\n\
             target = \"{{disk}}/m.dat\"\nops = \"100\"\ncount = \"none\"\n\n[[step]]\nlabel = \"one\"\n\
             spec = {{ method = \"psync\" }}\nvary = [\"{vary}\"]\n"
        ),
    )
    .unwrap();
    let shown = path_str(&p);
    (d, shown)
}

/// `iolab suite SUITE EXTRA` in the watched directory (its disk and tmpfs places inside it) is refused
/// naming `suite`, saying each of `says`, the directory untouched.
fn suite_refused(w: &Watched, suite: &str, extra: &[&str], says: &[&str]) {
    let (disk, shm, out) = (w.join(""), w.join("shm"), w.join("s.jsonl"));
    let mut args = vec!["suite", suite];
    args.extend_from_slice(extra);
    args.extend(["--disk-dir", &disk, "--tmpfs-dir", &shm, "--out", &out]);
    refused_in(w, &args, "suite", says);
}

/// A suite's points are bounded together, its steps and rounds (each point is resolved before the first
/// runs: 2 million points of 20 steps took 4.5 GB before), counted before any is made.
#[test]
fn a_suite_of_more_points_than_one_suite_runs_is_refused_before_any_is_made() {
    let w = Watched::new(|d| std::fs::create_dir(d.join("shm")).unwrap());
    let seeds: Vec<String> = (1..=70_000).map(|i| i.to_string()).collect();
    let (_keep, suite) = suite_file(&format!("seed={}", seeds.join(",")));
    suite_refused(
        &w,
        &suite,
        &["--repeat", "3"],
        &[&suite, "210,000 points (its steps x 3 rounds)", "200,000"],
    );
}

/// A value a suite file fixes for a step, which every point of the step refuses alike, is bad input as a
/// sweep's fixed flag is: refused before anything runs (the step was recorded as not run, exit 0).
#[test]
fn a_suite_step_fixing_a_value_no_point_takes_is_refused_before_it_runs() {
    let w = Watched::new(|d| std::fs::create_dir(d.join("shm")).unwrap());
    let (_keep, suite) = suite_file("bs=4k,8k");
    let text = std::fs::read_to_string(&suite).unwrap()
        + "\n[[step]]\nlabel = \"bad\"\nspec = { method = \"psync\", ops = \"0\" }\n";
    std::fs::write(&suite, text).unwrap();
    suite_refused(
        &w,
        &suite,
        &[],
        &[
            &suite,
            "step 'bad'",
            "ops = \"0\": --ops: 0 is not accepted",
        ],
    );
}

#[test]
fn a_suite_step_with_an_invalid_vary_value_is_refused_before_it_runs() {
    let w = Watched::new(|d| std::fs::create_dir(d.join("shm")).unwrap());
    let (_keep, suite) = suite_file("bs=4k,5q");
    suite_refused(
        &w,
        &suite,
        &[],
        &[&suite, "step 'one'", "bs=5q", "--bs: '5q'"],
    );
}

#[test]
fn a_suite_step_varying_a_key_twice_or_a_value_twice_is_refused() {
    let w = Watched::new(|d| std::fs::create_dir(d.join("shm")).unwrap());
    let (disk, shm, out) = (w.join(""), w.join("shm"), w.join("s.jsonl"));
    for (vary, says) in [
        ("bs=4k\", \"bs=8k", "bs is varied twice"),
        ("bs=4k,4096", "'4k' and '4096'"),
    ] {
        let (_keep, suite) = suite_file(vary);
        refused_in(
            &w,
            &[
                "suite",
                &suite,
                "--disk-dir",
                &disk,
                "--tmpfs-dir",
                &shm,
                "--out",
                &out,
            ],
            "suite",
            &[&suite, "step 'one'", says],
        );
    }
}

// ---------------------------------------------------------------------------------------------------
// Record files to resume.

#[test]
fn resume_of_a_missing_record_file_is_refused() {
    let w = Watched::new(|_| {});
    let out = w.join("missing.jsonl");
    refused_in(
        &w,
        &[
            "sweep", "--vary", "bs=4k,8k", "--ops", "100", "--count", "none", "--out", &out,
            "--resume",
        ],
        "--resume",
        &[&out, "does not exist"],
    );
}

#[test]
fn resume_of_a_symbolic_link_is_refused_as_one() {
    let w = Watched::new(|d| {
        std::fs::write(d.join("real.jsonl"), b"").unwrap();
        std::os::unix::fs::symlink("real.jsonl", d.join("link.jsonl")).unwrap();
    });
    let out = w.join("link.jsonl");
    refused_in(
        &w,
        &[
            "sweep", "--vary", "bs=4k,8k", "--ops", "100", "--count", "none", "--out", &out,
            "--resume",
        ],
        "--resume",
        &[&out, "is a symbolic link", "give --out the file itself"],
    );
}

/// A loop of symbolic links as the file to resume is bad input found before anything runs: exit 2,
/// naming --out (it was exit 1, "cannot read").
#[test]
fn resume_of_a_loop_of_symbolic_links_is_refused_naming_out() {
    let w = Watched::new(|d| {
        std::os::unix::fs::symlink("b.jsonl", d.join("a.jsonl")).unwrap();
        std::os::unix::fs::symlink("a.jsonl", d.join("b.jsonl")).unwrap();
    });
    let out = w.join("a.jsonl");
    refused_in(
        &w,
        &[
            "sweep", "--vary", "bs=4k,8k", "--ops", "100", "--count", "none", "--out", &out,
            "--resume",
        ],
        "--out",
        &[&out, "ELOOP"],
    );
}

#[test]
fn a_path_longer_than_linux_takes_is_refused_naming_its_flag() {
    let w = Watched::new(|_| {});
    let long = format!("{}/{}", w.path().display(), "a/".repeat(2100));
    let name = w.join(&"b".repeat(300));
    let out = format!("{name}.jsonl");
    let cases: [(&[&str], &str, &str); 4] = [
        (
            &["run", "--target", &long, "--ops", "1"],
            "--target",
            "bytes long, longer than the 4095",
        ),
        (
            &["survey", "--target", &name],
            "--target",
            "a name in the path is 300 bytes long",
        ),
        (
            &["run", "--target", &name, "--ops", "1"],
            "--target",
            "longer than the 255 Linux takes",
        ),
        (
            &["sweep", "--vary", "bs=4k,8k", "--out", &out],
            "--out",
            "a name in the path is 306",
        ),
    ];
    for (args, flag, says) in cases {
        refused_in(&w, args, flag, &[says]);
    }
}

#[test]
fn a_survey_of_a_kernel_interface_directory_is_refused_before_it_starts() {
    let w = Watched::new(|_| {});
    for dir in ["/proc", "/sys"] {
        refused_in(
            &w,
            &["survey", "--target", dir],
            "--target",
            &[dir, "not storage"],
        );
    }
}

#[test]
fn resume_of_a_file_that_holds_no_records_is_refused_and_left_as_it_was() {
    for (name, bytes, says) in [
        ("garbage.jsonl", &b"garbage\n{\"point\":{}}\n"[..], "line 1"),
        ("binary.jsonl", &b"\xff\xfe\n"[..], "not UTF-8"),
        (
            "run.json",
            &b"{\n  \"spec\": {\"method\": \"psync\"}\n}\n"[..],
            "a result document",
        ),
    ] {
        let w = Watched::new(|d| std::fs::write(d.join(name), bytes).unwrap());
        let out = w.join(name);
        refused_in(
            &w,
            &[
                "sweep", "--vary", "bs=4k,8k", "--ops", "100", "--count", "none", "--out", &out,
                "--resume",
            ],
            "--resume",
            &[&out, says, "not a sweep or suite record file"],
        );
    }
}

#[test]
fn a_suite_resuming_a_missing_file_makes_no_directories_first() {
    let w = Watched::new(|d| std::fs::create_dir(d.join("shm")).unwrap());
    let (disk, shm, out) = (w.join(""), w.join("shm"), w.join("missing.jsonl"));
    refused_in(
        &w,
        &[
            "suite",
            "offload",
            "--quick",
            "--disk-dir",
            &disk,
            "--tmpfs-dir",
            &shm,
            "--out",
            &out,
            "--resume",
        ],
        "--resume",
        &[&out, "does not exist"],
    );
}

// ---------------------------------------------------------------------------------------------------
// Result files that collide.

#[test]
fn json_and_csv_naming_one_file_are_refused() {
    let w = Watched::new(|d| std::fs::create_dir(d.join("sub")).unwrap());
    let json = w.join("x.out");
    let csv = w.join("sub/../x.out");
    refused_in(
        &w,
        &[
            "run", "--ops", "100", "--count", "none", "--json", &json, "--csv", &csv,
        ],
        "--csv",
        &[&csv, "also the --json path"],
    );
}

#[test]
fn json_naming_the_kept_target_is_refused() {
    let w = Watched::new(|_| {});
    let target = w.join("t.dat");
    refused_in(
        &w,
        &[
            "run", "--ops", "100", "--count", "none", "--target", &target, "--keep", "--json",
            "t.dat",
        ],
        "--json",
        &["t.dat is also the --target path"],
    );
}

#[test]
fn a_sweep_record_file_naming_a_target_or_the_csv_is_refused() {
    let w = Watched::new(|_| {});
    let (a, b) = (w.join("a.dat"), w.join("b.dat"));
    let vary = format!("target={a},{b}");
    refused_in(
        &w,
        &[
            "sweep", "--vary", &vary, "--ops", "100", "--count", "none", "--out", &b,
        ],
        "--out",
        &[&b, "also the --target path"],
    );
    let out = w.join("s.jsonl");
    refused_in(
        &w,
        &[
            "sweep", "--vary", "bs=4k,8k", "--ops", "100", "--count", "none", "--out", &out,
            "--csv", &out,
        ],
        "--csv",
        &[&out, "also the --out path"],
    );
}

/// A `run --json` document of `bs` in `dir`.
fn run_doc(dir: &Path, name: &str, bs: &str) -> String {
    let p = path_str(&dir.join(name));
    let r = iolab(&[
        "run", "--ops", "1000", "--bs", bs, "--count", "none", "--json", &p,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    p
}

#[test]
fn svg_into_a_directory_holding_its_charts_is_refused_before_any_file() {
    let src = tmpfs_dir();
    let doc = run_doc(src.path(), "r.json", "4k");
    let w = Watched::new(|d| {
        let svg = d.join("sv");
        common::report(Path::new(&doc), &d.join("first.html"), &svg);
        std::fs::remove_file(d.join("first.html")).unwrap();
        // One chart gone: a report that writes the others before it fails would add it back.
        let first = std::fs::read_dir(&svg).unwrap().next().unwrap().unwrap();
        std::fs::remove_file(first.path()).unwrap();
    });
    let (html, svg) = (w.join("rep.html"), w.join("sv"));
    refused_in(
        &w,
        &["report", &doc, "-o", &html, "--svg", &svg],
        "--svg",
        &["exists; iolab does not replace files"],
    );
}

#[test]
fn svg_naming_a_file_or_a_path_under_one_is_refused() {
    let src = tmpfs_dir();
    let doc = run_doc(src.path(), "r.json", "4k");
    let w = Watched::new(|d| std::fs::write(d.join("f"), b"x").unwrap());
    let (html, file, under) = (w.join("rep.html"), w.join("f"), w.join("f/charts"));
    for (svg, says) in [(&file, "is not a directory"), (&under, "(a parent of")] {
        refused_in(
            &w,
            &["report", &doc, "-o", &html, "--svg", svg],
            "--svg",
            &[&file, says],
        );
    }
}

#[test]
fn survey_results_dir_that_is_a_file_is_refused_before_the_survey() {
    let w = Watched::new(|d| std::fs::write(d.join("rf"), b"x").unwrap());
    let (rf, tmp) = (w.join("rf"), w.join(""));
    refused_in(
        &w,
        &[
            "survey",
            "--results-dir",
            &rf,
            "--tmp-dir",
            &tmp,
            "--ops",
            "100",
            "--max-seconds",
            "0.05",
        ],
        "--results-dir",
        &[&rf, "is not a directory"],
    );
}

// ---------------------------------------------------------------------------------------------------
// compare.

#[test]
fn compare_gate_with_nothing_in_common_does_not_pass() {
    let src = tmpfs_dir();
    let a = run_doc(src.path(), "a.json", "4k");
    let b = run_doc(src.path(), "b.json", "8k");
    let w = Watched::new(|_| {});
    let r = iolab_in(w.path(), &["compare", &a, &b, "--fail-on-regression", "5"]);
    assert_refused(&r, "--fail-on-regression", &[&a, &b, "no workload"]);
    assert!(
        r.stdout.contains("only in A") && r.stdout.contains("only in B"),
        "{}",
        r.stdout
    );
    w.assert_untouched("compare");
    // Without the gate it is a report: nothing in common is said, and the exit is 0.
    let r = iolab(&["compare", &a, &b]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("no workload appears in both files"),
        "{}",
        r.stdout
    );
    // With something in common the gate works as before.
    let r = iolab(&["compare", &a, &a, "--fail-on-regression", "5"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A plain directory is neither a record file nor a fleet's results: said so, not "give --across host".
    let plain = src.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let plain = plain.display().to_string();
    for args in [
        vec!["compare", &a, &plain],
        vec!["compare", &plain, &a, "--across", "host"],
    ] {
        let r = iolab(&args);
        assert_refused(
            &r,
            "compare",
            &[&plain, "not a fleet's results directory", "record file"],
        );
    }
}
