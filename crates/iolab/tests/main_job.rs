//! The main job (`iolab` with no arguments), in its own test binary so it runs alone.

mod common;
use common::*;

#[test]
fn main_job_runs_under_40_s_ranks_every_method_and_touches_no_existing_file() {
    let work = disk_dir();
    let results = work.path().join("iolab-results");
    std::fs::create_dir(&results).unwrap();
    let old = results.join("old.json");
    std::fs::write(&old, "earlier result").unwrap();
    let tmp = disk_dir();
    let t = std::time::Instant::now();
    let out = std::process::Command::new(bin())
        .current_dir(work.path())
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}\nsurvey took {secs:.1} s");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(secs < 40.0, "the main job took {secs:.1} s");
    assert!(
        stdout.contains("== /dev/null (write sink)")
            && stdout.contains("== a fresh 64 MiB file on")
    );
    for m in [
        "sync", "psync", "vectored", "stdio", "mmap", "io_uring", "nop",
    ] {
        assert!(stdout.contains(&format!(" {m} ")), "{m} in the tables");
    }
    assert!(
        stdout.contains("n/a  mmap"),
        "mmap on /dev/null is reported unavailable with its reason"
    );
    assert_eq!(
        std::fs::read_to_string(&old).unwrap(),
        "earlier result",
        "existing results untouched"
    );
    let new: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name() != "old.json")
        .collect();
    assert_eq!(new.len(), 1, "one new JSON file");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(new[0].path()).unwrap()).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 28, "7 methods x 2 block sizes x 2 targets");
    assert_eq!(
        runs.iter().filter(|r| r["result"].is_null()).count(),
        2,
        "only mmap on /dev/null is unavailable"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "the temporary directory is gone"
    );
}
