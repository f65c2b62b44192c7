//! `iolab suite NAME --repeat N` (every point N times, in rounds; a table row per point with the range of
//! its middle runs; findings that say when a difference is within that noise) and `--cold-cache`'s bad
//! input.

mod common;
use common::*;

#[test]
fn repeat_3_runs_every_point_3_times_and_the_findings_know_the_noise() {
    let dir = tmpfs_dir();
    let disk = disk_dir();
    let out = dir.path().join("sr.jsonl");
    let r = iolab(&[
        "suite",
        "shared-ring",
        "--quick",
        "--repeat",
        "3",
        "--out",
        &path_str(&out),
        "--disk-dir",
        &path_str(disk.path()),
        "--tmpfs-dir",
        &path_str(dir.path()),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let recs: Vec<&serde_json::Value> = lines.iter().filter(|l| l.get("point").is_some()).collect();
    // Every point three times, as repeat=1,2,3, each a run of its own.
    let mut points: Vec<(String, Vec<String>)> = Vec::new();
    for rec in &recs {
        let p = rec["point"].as_object().unwrap();
        let key = p
            .iter()
            .filter(|(k, _)| *k != "repeat")
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let k = p["repeat"].as_str().unwrap().to_string();
        match points.iter_mut().find(|(x, _)| *x == key) {
            Some((_, ks)) => ks.push(k),
            None => points.push((key, vec![k])),
        }
        assert!(rec.get("result").is_some(), "{rec}");
    }
    assert_eq!(points.len(), 30, "{points:?}");
    for (p, mut ks) in points {
        ks.sort();
        assert_eq!(ks, ["1", "2", "3"], "{p}");
    }
    // Rounds: the second runs the points backwards, so its first record is the first round's last point.
    let key = |r: &serde_json::Value| {
        let mut p = r["point"].as_object().unwrap().clone();
        p.remove("repeat");
        p
    };
    assert_eq!(key(recs[30]), key(recs[29]));
    assert_eq!(recs[30]["point"]["repeat"], "2");
    // The table: one row per point, with its runs and middle range.
    assert!(r.stdout.contains("middle runs IOPS"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Each point ran 3 times, in rounds"),
        "{}",
        r.stdout
    );
    // The progress lines name each run; the table shows each point once.
    let table = r.stdout.split("\nshared-ring: reproduces").nth(1).unwrap();
    assert!(!table.contains("repeat="), "{table}");
    assert!(
        r.stdout.contains("--repeat 3 (every point 3 times"),
        "{}",
        r.stdout
    );
    // Every comparison of two rows says whether the difference is beyond the noise.
    let summary = &lines.last().unwrap()["summary"];
    let pairs = [
        "slower_than_reference",
        "faster_than_reference",
        "batched_vs_single",
        "shared_vs_own_ring",
    ];
    for f in summary["findings"].as_array().unwrap() {
        if pairs.contains(&f["rule"].as_str().unwrap()) {
            let t = f["text"].as_str().unwrap();
            assert!(
                t.contains("within the noise") || t.contains("beyond the noise"),
                "{t}"
            );
        }
    }
    let a = &summary["answers"][0]["text"];
    assert!(a.as_str().unwrap().contains("the noise"), "{a}");
}

#[test]
fn a_repeat_of_0_and_cold_cache_where_there_is_no_cache_are_refused() {
    let dir = tmpfs_dir();
    let out = dir.path().join("x.jsonl");
    for n in ["0", "x", "1001"] {
        let r = iolab(&[
            "suite",
            "nowait",
            "--quick",
            "--repeat",
            n,
            "--out",
            &path_str(&out),
        ]);
        assert_eq!(r.code, 2, "{n}: {}", r.stderr);
        assert!(r.stderr.contains("--repeat"), "{}", r.stderr);
        assert!(!out.exists(), "nothing is made on bad input");
    }
    let f = dir.path().join("c.dat");
    let r = iolab(&[
        "run",
        "--target",
        &path_str(&f),
        "--cold-cache",
        "--ops",
        "10",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--cold-cache") && r.stderr.contains("--fsync end"),
        "{}",
        r.stderr
    );
    assert!(!f.exists());
    for target in ["/dev/zero", "pipe"] {
        let r = iolab(&[
            "run",
            "--target",
            target,
            "--op",
            "read",
            "--cold-cache",
            "--ops",
            "10",
        ]);
        assert_eq!(r.code, 2, "{target}: {}", r.stderr);
        assert!(
            r.stderr.contains("--cold-cache") && r.stderr.contains("no page cache"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn cold_cache_reads_come_from_the_device() {
    let disk = disk_dir();
    let fs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(disk.path())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if fs == "tmpfs" {
        skip(
            "block-device",
            &format!("{} is on tmpfs", disk.path().display()),
        );
        return;
    }
    let read = |cold: bool| {
        let f = disk.path().join(format!("r-{cold}.dat"));
        let mut args = vec![
            "--op",
            "read",
            "--bs",
            "64k",
            "--file-size",
            "8m",
            "--ops",
            "128",
        ];
        if cold {
            args.push("--cold-cache");
        }
        let t = path_str(&f);
        args.extend(["--target", t.as_str()]);
        run_json(&args)
    };
    // The file iolab has just filled is cached: its reads fetch nothing from the device.
    let warm = read(false);
    assert_eq!(
        u64_of(&warm, &["syscalls", "kernel_rw", "read_bytes"]),
        0,
        "{warm}"
    );
    // Dropped first, every byte read comes from the device, and the note counts the pages left cached.
    let cold = read(true);
    assert!(
        u64_of(&cold, &["syscalls", "kernel_rw", "read_bytes"]) >= 8 << 20,
        "{cold}"
    );
    let note = cold["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .find(|n| n.starts_with("--cold-cache"))
        .unwrap()
        .to_string();
    assert!(note.contains("of its 2048 pages"), "{note}");
    assert_eq!(cold["spec"]["cold_cache"], true);
    // The run's JSON carries its verdict and, where a block device counts the run, the device's bytes:
    // the warm read is page-cache, the cold one is not.
    assert_eq!(warm["verdict"]["kind"], "page-cache", "{warm}");
    assert_ne!(cold["verdict"]["kind"], "page-cache", "{cold}");
    match cold.get("device_io") {
        Some(d) => assert!(d["read_bytes"].as_u64().unwrap() >= 8 << 20, "{d}"),
        None => skip(
            "block-device",
            &format!("no block device counts {}", disk.path().display()),
        ),
    }
}
