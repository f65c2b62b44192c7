//! `iolab run --fio JOBFILE`: fio job files run as iolab workloads, option by option in fio's meaning;
//! what iolab does not honour is refused by name (or, lenient, listed); the bytes a job writes land.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Writes `text` as a job file in `dir`.
fn job_file(dir: &Path, text: &str) -> String {
    let p = dir.join("jobs.fio");
    std::fs::write(&p, text).unwrap();
    path_str(&p)
}

/// A fio-style randrw job: psync, 2 jobs, sizes in fio's units, verify, a variable from the environment;
/// it runs as 2 threads of 70% reads over a 2 x 8 MiB file, the kernel's read and write calls match the
/// result's, and every block a write reached holds what was written.
#[test]
fn a_randrw_job_runs_as_fio_means_it() {
    let dir = disk_dir();
    let jobs = job_file(
        dir.path(),
        &format!(
            "; as fio users write them\n[global]\nioengine=psync\ndirectory={}\nbs=${{IOLAB_TEST_BS}}\n\
             size=8m\nnumjobs=2\n\n[oltp]\nrw=randrw\nrwmixread=70\nverify=crc32c\n",
            dir.path().display()
        ),
    );
    let out = Command::new(bin())
        .args(["run", "--fio", &jobs, "--json", "-", "--count", "none"])
        .env("IOLAB_TEST_BS", "4k")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["spec"]["op"], "mixed");
    assert_eq!(u64_of(&v, &["spec", "read_pct"]), 70);
    assert_eq!(u64_of(&v, &["spec", "bs"]), 4096);
    assert_eq!(u64_of(&v, &["spec", "threads"]), 2);
    assert_eq!(u64_of(&v, &["spec", "file_size"]), 16 << 20);
    assert_eq!(
        u64_of(&v, &["ops"]),
        4096,
        "size=8m per job of 4 KiB blocks, 2 jobs"
    );
    let (r, w) = (
        u64_of(&v, &["mixed", "reads", "ops"]),
        u64_of(&v, &["mixed", "writes", "ops"]),
    );
    assert_eq!(u64_of(&v, &["syscalls", "kernel_rw", "syscr"]), r);
    assert_eq!(u64_of(&v, &["syscalls", "kernel_rw", "syscw"]), w);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("fio job 'oltp'") && notes.contains("numjobs=2"),
        "{notes}"
    );
    assert!(
        !dir.path().join("oltp.0.0").exists(),
        "the job's file is iolab's and removed"
    );
}

#[test]
fn options_iolab_does_not_honour_are_refused_by_name_or_listed() {
    let dir = disk_dir();
    let jobs = job_file(
        dir.path(),
        &format!(
            "[global]\ndirectory={}\nsize=1m\n[a]\nrw=write\nioscheduler=none\n",
            dir.path().display()
        ),
    );
    let r = iolab(&["run", "--fio", &jobs]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("ioscheduler=none") && r.stderr.contains("--fio-lenient"),
        "{}",
        r.stderr
    );
    let r = iolab(&["run", "--fio", &jobs, "--fio-lenient", "--count", "none"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("ignored (--fio-lenient): ioscheduler=none"),
        "{}",
        r.stdout
    );
    for (args, says) in [
        (vec!["--fio-section", "nope"], "no job 'nope'"),
        (vec!["--spec", "x.toml"], "cannot be used with"),
    ] {
        let mut a = vec!["run", "--fio", &jobs];
        a.extend(args);
        let r = iolab(&a);
        assert_eq!(r.code, 2, "{a:?}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{a:?}: {}", r.stderr);
    }
}

/// Two jobs run one after the other and end with a table of both; one result file cannot hold them.
#[test]
fn several_jobs_end_with_a_table_and_refuse_one_result_file() {
    let dir = disk_dir();
    let jobs = job_file(
        dir.path(),
        &format!(
            "[global]\ndirectory={}\nsize=2m\nbs=64k\n[w]\nrw=write\n[r]\nrw=randread\nioengine=io_uring\niodepth=4\n",
            dir.path().display()
        ),
    );
    let r = iolab(&["run", "--fio", &jobs, "--count", "none"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("'w'") && r.stdout.contains("'r'") && r.stdout.contains("fastest first"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("io_uring read 64 KiB rand"),
        "{}",
        r.stdout
    );
    let r = iolab(&[
        "run",
        "--fio",
        &jobs,
        "--json",
        &path_str(&dir.path().join("x.json")),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--json") && r.stderr.contains("--fio-section"),
        "{}",
        r.stderr
    );
}
