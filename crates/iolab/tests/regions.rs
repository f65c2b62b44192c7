//! Where the threads' blocks lie and what a file holds before the timed span: `--share-region` (every
//! thread over one region, as fio's jobs sharing a filename), `--preallocate` (a new file's blocks
//! reserved before a write run, as fio's fallocate=native), a method that moves no data leaving a missing
//! file unmade (as fio's null engine), and a paced run bounded by `--duration` spanning the duration.

mod common;
use common::*;
use std::os::unix::fs::MetadataExt;

/// Three threads share an 8 MiB file: the file stays 8 MiB, the threads do 24 MiB of writes between them,
/// the access figures count the one region's blocks, and the read-back finds every block in it written
/// (the stamps depend on the block, not the thread, so the last writer's stamp is the one expected).
#[test]
fn threads_sharing_a_region_write_one_file_of_its_size() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "shared.dat"));
    let v = run_json(&[
        "--target",
        &t,
        "--op",
        "write",
        "--pattern",
        "rand",
        "--threads",
        "3",
        "--share-region",
        "--file-size",
        "8m",
        "--size",
        "24m",
        "--verify",
        "--keep",
    ]);
    assert_eq!(u64_of(&v, &["bytes"]), 24 << 20);
    assert_eq!(std::fs::metadata(&t).unwrap().len(), 8 << 20);
    assert_eq!(
        u64_of(&v, &["access", "region_blocks"]),
        2048,
        "{}",
        v["access"]
    );
    let checked = u64_of(&v, &["verify", "blocks_checked"]);
    assert!(
        checked <= 2048 && checked == u64_of(&v, &["access", "distinct_blocks"]),
        "each written block checked once: {} against {}",
        v["verify"],
        v["access"]
    );
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    let per: Vec<u64> = v["per_thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(per, [8 << 20; 3], "each thread did its own 8 MiB");
}

#[test]
fn share_region_is_refused_where_there_are_no_blocks_to_share() {
    refused_by(
        &["run", "--ops", "10"],
        &["--target", "pipe", "--op", "write", "--share-region"],
        "--share-region",
        "none to share",
    );
}

/// A write run into a new file: without --preallocate the file holds blocks only where the 16 writes
/// landed; with it, every block of the file is allocated before the run, and the notes say so.
#[test]
fn preallocate_reserves_a_new_files_blocks_before_the_run() {
    let dir = disk_dir();
    let blocks = |name: &str, extra: &[&str]| {
        let t = path_str(&file(&dir, name));
        let mut a = vec![
            "--target",
            &t,
            "--op",
            "write",
            "--file-size",
            "8m",
            "--ops",
            "16",
            "--keep",
        ];
        a.extend_from_slice(extra);
        let v = run_json(&a);
        (std::fs::metadata(&t).unwrap().blocks() * 512, v)
    };
    let (sparse, _) = blocks("sparse.dat", &[]);
    let (full, v) = blocks("full.dat", &["--preallocate"]);
    assert!(
        sparse < 1 << 20,
        "16 writes of 4 KiB allocated {sparse} bytes"
    );
    let notes = v["target"]["notes"].to_string() + &v["notes"].to_string();
    if !can_fallocate(dir.path()) {
        return skip(
            "fallocate",
            &format!("the test directory's filesystem has no fallocate(2): {notes}"),
        );
    }
    assert!(full >= 8 << 20, "preallocated file holds {full} bytes");
    assert!(notes.contains("fallocate"), "{notes}");
    refused_by(
        &["run", "--ops", "10"],
        &[
            "--target",
            &path_str(&file(&dir, "r.dat")),
            "--op",
            "read",
            "--preallocate",
        ],
        "--preallocate",
        "read run",
    );
}

/// `--method nop` makes no kernel call: on a path that does not exist it makes no file either (fio's null
/// engine touches none), and says so.
#[test]
fn a_method_that_moves_no_data_makes_no_file() {
    let dir = disk_dir();
    let t = file(&dir, "never.dat");
    let v = run_json(&["--method", "nop", "--target", &path_str(&t), "--size", "1g"]);
    assert_eq!(u64_of(&v, &["ops"]), (1 << 30) / 4096);
    assert!(!t.exists(), "nop made {}", t.display());
    assert!(v.to_string().contains("was not created"), "{}", v["target"]);
}

/// A paced run bounded by --duration spans the duration, as fio's runtime does: 5 ops a second for 2 s
/// is 10 ops over 2 s (5.0 ops/s), not over the 1.8 s from the first op to the last.
#[test]
fn a_paced_run_spans_its_duration() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "paced.dat"));
    let v = run_json(&[
        "--target",
        &t,
        "--op",
        "write",
        "--rate-iops",
        "5",
        "--duration",
        "2",
    ]);
    assert_eq!(u64_of(&v, &["ops"]), 10);
    let wall = f64_of(&v, &["wall_s"]);
    assert!((2.0..2.2).contains(&wall), "wall {wall} s");
    let achieved = f64_of(&v, &["paced", "achieved_iops"]);
    assert!(achieved <= 5.0 + 1e-9 && achieved > 4.5, "{}", v["paced"]);
    assert!(f64_of(&v, &["iops"]) <= 5.0 + 1e-9, "{}", v["iops"]);
    // A duration that is no whole number of intervals: no op starts whose interval ends past it, so the
    // rate stays at or below the pace (3 a second for 0.5 s: one op, not two, 4 a second), and two threads
    // at 7 a second for 0.5 s run 3 each.
    for (rate, threads, ops) in [("3", "1", 1), ("7", "2", 6)] {
        let v = run_json(&[
            "--target",
            "/dev/null",
            "--rate-iops",
            rate,
            "--threads",
            threads,
            "--duration",
            "0.5",
        ]);
        assert_eq!(u64_of(&v, &["ops"]), ops, "{}", v["paced"]);
        let pace: f64 = rate.parse().unwrap();
        assert!(
            f64_of(&v, &["paced", "achieved_iops"]) <= pace,
            "{}",
            v["paced"]
        );
        assert_eq!(v["paced"]["met"], true, "{}", v["paced"]);
    }
    // The text says a verdict over so few ops shows nothing, and a plain "met" over ten.
    let said = |rate: &str, secs: &str| {
        let r = iolab(&[
            "run",
            "--target",
            "/dev/null",
            "--rate-iops",
            rate,
            "--duration",
            secs,
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    };
    let one = said("3", "0.5");
    assert!(
        one.contains(": not judged, over 1 op a thread only: too few to show that a pace holds")
            && !one.contains(": met"),
        "{one}"
    );
    let ten = said("5", "2");
    assert!(
        ten.contains("reached by the slowest thread: met;") && !ten.contains("too few"),
        "{ten}"
    );
}

/// A target holding `{thread}` gives each thread a file of its own (fio's clones without a filename):
/// three files of --file-size, each thread's writes in its own (read back), removed after the run; one
/// thread's file existing without --overwrite refuses the run and leaves no file iolab made.
#[test]
fn a_file_per_thread() {
    let dir = disk_dir();
    let t = path_str(&file(&dir, "f.{thread}.0"));
    let v = run_json(&[
        "--target",
        &t,
        "--op",
        "write",
        "--threads",
        "3",
        "--file-size",
        "1m",
        "--ops",
        "768",
        "--verify",
    ]);
    assert_eq!(u64_of(&v, &["verify", "blocks_checked"]), 768);
    assert_eq!(u64_of(&v, &["verify", "mismatches"]), 0);
    for th in v["per_thread"].as_array().unwrap() {
        assert_eq!(th["bytes"].as_u64(), Some(1 << 20), "{th}");
    }
    let names = |d: &tempfile::TempDir| {
        let mut n: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    assert!(
        names(&dir).is_empty(),
        "removed after the run: {:?}",
        names(&dir)
    );
    let v = run_json(&[
        "--target",
        &t,
        "--op",
        "write",
        "--threads",
        "3",
        "--file-size",
        "1m",
        "--ops",
        "768",
        "--keep",
    ]);
    assert_eq!(u64_of(&v, &["bytes"]), 3 << 20);
    assert_eq!(names(&dir), ["f.0.0", "f.1.0", "f.2.0"]);
    for n in names(&dir) {
        assert_eq!(
            std::fs::metadata(dir.path().join(&n)).unwrap().len(),
            1 << 20,
            "{n}"
        );
    }
    std::fs::remove_file(dir.path().join("f.0.0")).unwrap();
    std::fs::remove_file(dir.path().join("f.2.0")).unwrap();
    let r = iolab(&[
        "run",
        "--target",
        &t,
        "--op",
        "write",
        "--threads",
        "3",
        "--ops",
        "30",
        "--count",
        "none",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("f.1.0") && r.stderr.contains("--overwrite"),
        "{}",
        r.stderr
    );
    assert_eq!(
        names(&dir),
        ["f.1.0"],
        "thread 0's new file was removed with the refusal"
    );
    refused_by(
        &["run", "--ops", "10"],
        &[
            "--target",
            &t,
            "--threads",
            "2",
            "--share-region",
            "--op",
            "write",
        ],
        "--share-region",
        "a file of its own",
    );
}

/// Zones (`--zone-size`, fio's zonemode=strided): the blocks written are the zones', checked by `--verify`
/// where they are (not the first blocks in a row), for a synchronous and a queued method and two threads.
#[test]
fn zoned_writes_land_in_their_zones_and_verify() {
    let dir = disk_dir();
    for (method, threads) in [("psync", "1"), ("io_uring", "1"), ("psync", "2")] {
        let t = path_str(&dir.path().join(format!("z-{method}-{threads}.dat")));
        let v = run_json(&[
            "--method",
            method,
            "--target",
            &t,
            "--file-size",
            "256k",
            "--bs",
            "4k",
            "--ops",
            "16",
            "--threads",
            threads,
            "--zone-size",
            "8k",
            "--zone-skip",
            "24k",
            "--verify",
            "--keep",
        ]);
        let ver = &v["verify"];
        assert_eq!(
            (ver["mismatches"].as_u64(), ver["blocks_checked"].as_u64()),
            (Some(0), Some(16)),
            "{ver}"
        );
        let data = std::fs::read(&t).unwrap();
        let written: Vec<usize> = (0..data.len() / 4096)
            .filter(|b| data[b * 4096..(b + 1) * 4096].iter().any(|x| *x != 0))
            .collect();
        // One thread: zones of its 64 blocks; two: each its 8 ops in its own 32 (from 0 and from 32).
        let want = [0, 1, 8, 9, 16, 17, 24, 25, 32, 33, 40, 41, 48, 49, 56, 57];
        assert_eq!(written, want, "{method} x{threads}");
        std::fs::remove_file(&t).unwrap();
    }
}
