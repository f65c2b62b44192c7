//! The kernel's counts agree with what iolab knows it did (issue: kernel's-eye view).

mod common;
use common::*;

fn tracepoint(r: &serde_json::Value, name: &str) -> Option<u64> {
    r["kernel"]["tracepoints"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)?["value"]
        .as_u64()
}

fn by_name(r: &serde_json::Value, name: &str) -> u64 {
    r["kernel"]["syscalls_by_name"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[0] == name)
        .map(|p| p[1].as_u64().unwrap())
        .unwrap_or(0)
}

/// Tracepoints need root (or CAP_PERFMON) and tracefs; say so and skip otherwise.
fn tracepoints_here(r: &serde_json::Value) -> bool {
    if tracepoint(r, "raw_syscalls:sys_enter").is_some() {
        return true;
    }
    skip(
        "tracepoints",
        &format!("unavailable here: {}", r["kernel"]["tracepoints"]),
    );
    false
}

#[test]
fn psync_writes_are_all_seen_by_sys_enter() {
    let n = 5000u64;
    let r = run_json_counted(&[
        "--method", "psync", "--bs", "4", "--ops", "5000", "--count", "full",
    ]);
    if !tracepoints_here(&r) {
        return;
    }
    assert_eq!(
        r["kernel"]["tracepoint_pass_ops"], 5000,
        "--count full counts all"
    );
    let se = tracepoint(&r, "raw_syscalls:sys_enter").unwrap();
    assert!(se >= n && se < n + 100, "sys_enter {se} for {n} pwrites");
    assert_eq!(by_name(&r, "pwrite64"), n, "the breakdown names the calls");
    assert!(r["kernel"]["tracepoint_pass"]
        .as_str()
        .unwrap()
        .contains("separate"));
    assert!((f64_of(&r, &["derived", "syscalls_per_op"]) - 1.0).abs() < 0.02);
    // Software counters were on in the timed pass.
    let sw = r["kernel"]["timed_pass"].as_array().unwrap();
    assert!(sw
        .iter()
        .any(|c| c["name"] == "context-switches" && c["value"].is_u64()));
    assert!(
        sw.iter().any(|c| c["name"] == "cycles"),
        "hardware counters are listed, available or not"
    );
}

#[test]
fn io_uring_requests_are_counted_exactly_and_batches_seen_from_the_kernel() {
    let r = run_json_counted(&[
        "--method", "io_uring", "--qd", "8", "--batch", "4", "--ops", "3000", "--count", "full",
    ]);
    if !tracepoints_here(&r) {
        return;
    }
    assert_eq!(tracepoint(&r, "io_uring:io_uring_submit_req"), Some(3000));
    assert_eq!(tracepoint(&r, "io_uring:io_uring_complete"), Some(3000));
    let enters = by_name(&r, "io_uring_enter");
    assert!(
        (750..=760).contains(&enters),
        "batch 4: about 750 enters, kernel counted {enters}"
    );
    let k = f64_of(&r, &["derived", "kernel_requests_per_enter"]);
    assert!((k - 4.0).abs() < 0.1, "kernel-side avg batch {k}");
    assert!(r["derived"]["crosscheck"].to_string().contains("agree"));
    // /dev/null completes inline: nothing punted.
    assert_eq!(
        tracepoint(&r, "io_uring:io_uring_queue_async_work"),
        Some(0)
    );
}

#[test]
fn buffered_ext4_io_uring_writes_are_punted_and_o_direct_ones_are_not() {
    let dir = disk_dir();
    let fs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir.path())
        .output()
        .unwrap();
    let fs = String::from_utf8_lossy(&fs.stdout).trim().to_string();
    if fs != "ext2/ext3" && fs != "ext4" {
        skip(
            "ext4",
            &format!("{} is on {fs}, not ext4", dir.path().display()),
        );
        return;
    }
    let f = file(&dir, "b.dat");
    let r = run_json_counted(&[
        "--method",
        "io_uring",
        "--target",
        f.to_str().unwrap(),
        "--ops",
        "300",
    ]);
    if !tracepoints_here(&r) {
        return;
    }
    let p = f64_of(&r, &["derived", "punted_fraction"]);
    assert!(p > 0.5, "buffered ext4 writes punted: {p}");
    assert!(
        rules(&r).contains(&"io_wq_punts".to_string()),
        "{:?}",
        r["findings"]
    );
    // O_DIRECT over blocks already allocated by O_DIRECT writes: issued inline, no punts.
    // (Few ops: this VM's disk can take milliseconds per O_DIRECT write.)
    let g = direct_allocated_file(&dir, "d.dat", "32");
    let r = run_json_counted(&[
        "--method",
        "io_uring",
        "--direct",
        "--overwrite",
        "--target",
        g.to_str().unwrap(),
        "--ops",
        "32",
    ]);
    assert_eq!(tracepoint(&r, "io_uring:io_uring_submit_req"), Some(32));
    assert_eq!(
        tracepoint(&r, "io_uring:io_uring_queue_async_work"),
        Some(0),
        "O_DIRECT overwrite not punted"
    );
    assert!(!rules(&r).contains(&"io_wq_punts".to_string()));
}

#[test]
fn the_counting_pass_samples_a_tenth_of_a_large_workload() {
    let r = run_json_counted(&["--method", "psync", "--bs", "4", "--ops", "20000"]);
    if !tracepoints_here(&r) {
        return;
    }
    assert_eq!(r["ops"], 20000, "the timed pass ran it all");
    assert_eq!(
        r["kernel"]["tracepoint_pass_ops"], 2000,
        "the sample is a tenth"
    );
    assert_eq!(
        by_name(&r, "pwrite64"),
        2000,
        "the kernel counted the sample's calls"
    );
    let pass = r["kernel"]["tracepoint_pass"].as_str().unwrap();
    assert!(
        pass.contains("sample") && pass.contains("--count full"),
        "{pass}"
    );
    assert!((f64_of(&r, &["derived", "syscalls_per_op"]) - 1.0).abs() < 0.02);
    assert!(r["derived"]["crosscheck"]
        .to_string()
        .contains("pwrite64 calls: kernel 2000, ops 2000"));
    // Small workloads are counted whole; a duration-bound one for a tenth of its time.
    let r = run_json_counted(&["--method", "psync", "--bs", "4", "--ops", "800"]);
    assert_eq!(r["kernel"]["tracepoint_pass_ops"], 800);
    assert!(r["kernel"]["tracepoint_pass"]
        .as_str()
        .unwrap()
        .contains("whole"));
    let r = run_json_counted(&["--method", "psync", "--bs", "4", "--duration", "1"]);
    let (timed, counted) = (
        r["ops"].as_u64().unwrap(),
        r["kernel"]["tracepoint_pass_ops"].as_u64().unwrap(),
    );
    assert!(
        counted > 0 && counted < timed / 2,
        "0.1 s sampled ({counted} ops) against 1 s timed ({timed} ops)"
    );
}

#[test]
fn count_modes() {
    let r = run_json_counted(&["--method", "psync", "--ops", "1000", "--count", "none"]);
    assert!(r["kernel"]["tracepoint_pass"].is_null());
    assert!(r["kernel"]["notes"].to_string().contains("--count none"));
    let r = run_json_counted(&["--method", "psync", "--ops", "1000", "--count", "inline"]);
    if tracepoints_here(&r) {
        assert!(r["kernel"]["tracepoint_pass"]
            .as_str()
            .unwrap()
            .contains("inline"));
        assert!(rules(&r).contains(&"inline_counting_perturbs".to_string()));
        assert_eq!(by_name(&r, "pwrite64"), 1000);
    }
    let bad = iolab(&["run", "--count", "sometimes"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.starts_with("iolab: --count:"), "{}", bad.stderr);
}

#[test]
fn unprivileged_runs_complete_with_counters_marked_unavailable() {
    // Drop privileges in a child: iolab run as nobody.
    for mode in ["separate", "inline"] {
        let args = [
            "run", "--method", "io_uring", "--ops", "500", "--count", mode, "--json", "-",
        ];
        let Some((out, _dir)) = iolab_as_nobody(&args) else {
            return;
        };
        assert_eq!(
            out.status.code(),
            Some(0),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["host"]["root"], false);
        assert_eq!(u64_of(&r, &["ops"]), 500);
        let se = r["kernel"]["tracepoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "raw_syscalls:sys_enter")
            .cloned();
        let se = se.expect("sys_enter is listed even when unavailable");
        assert!(
            se["value"].is_null(),
            "{mode}: an unprivileged process cannot count tracepoints here: {se}"
        );
        assert!(
            !se["unavailable"].as_str().unwrap().is_empty(),
            "the reason is given"
        );
        assert!(
            rules(&r).contains(&"counters_unavailable".to_string()),
            "{:?}",
            r["findings"]
        );
        println!("{mode}: {}", se["unavailable"]);
    }
}

#[test]
fn kernel_copies_are_counted_by_name_and_agree_with_iolab() {
    // 2 MiB blocks do not fit a pipe in one go, so splice takes several rounds per op: iolab's count of
    // them must be the kernel's.
    let dir = tmpfs_dir();
    let f = file(&dir, "s.dat");
    let r = run_json_counted(&[
        "--method",
        "splice",
        "--bs",
        "2m",
        "--ops",
        "20",
        "--target",
        f.to_str().unwrap(),
    ]);
    if !tracepoints_here(&r) {
        return;
    }
    let mine = u64_of(&r, &["syscalls", "method_count"]);
    assert!(mine > 40, "more than two splices per 2 MiB op: {mine}");
    assert_eq!(
        by_name(&r, "splice"),
        mine,
        "iolab's splice count is the kernel's"
    );
    let r = run_json_counted(&[
        "--method", "aio", "--qd", "4", "--batch", "4", "--ops", "400",
    ]);
    assert_eq!(
        by_name(&r, "io_submit"),
        u64_of(&r, &["aio", "io_submit_calls"])
    );
    assert_eq!(
        by_name(&r, "io_getevents"),
        u64_of(&r, &["aio", "io_getevents_calls"])
    );
}

/// Sixteen threads of one op each: their task clock is read around their wake-up and join, far beyond
/// the microseconds of the timed span. The result records how far apart the counters were read, the task
/// clock fits in that (never more than the CPUs could run), and the text says so; the verdict's request
/// time is the measured latency, not the span per op times sixteen threads.
#[test]
fn counters_read_around_the_threads_say_how_far_apart() {
    let dir = tmpfs_dir();
    let rec = dir.path().join("r.json");
    let text = iolab(&[
        "run",
        "--threads",
        "16",
        "--ops",
        "16",
        "-v",
        "--json",
        &path_str(&rec),
    ]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
    let sampled = f64_of(&r, &["cpu", "sampled_span_s"]);
    let wall = f64_of(&r, &["wall_s"]);
    assert!(sampled >= wall, "read {sampled} s apart, span {wall} s");
    let cpus = r["host"]["cpus_online"].as_f64().unwrap();
    if let Some(tc) = r["kernel"]["timed_pass"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "task-clock-ns")
        .and_then(|c| c["value"].as_f64())
    {
        assert!(
            tc <= sampled * 1e9 * cpus * 1.1,
            "task clock {tc} ns in {sampled} s on {cpus} CPUs"
        );
    }
    // A span this short has no CPU share: the verdict is the requests' time, as measured.
    let took = r["verdict"]["text"].as_str().unwrap_or_default();
    let mean = iolab_engine::units::fmt_ns(f64_of(&r, &["latency", "mean_ns"]));
    assert!(
        took.contains(&format!("a request took {mean} on average")),
        "{took} (latency mean {mean})"
    );
    let said = text
        .stdout
        .contains("and the wake-up and join of its 16 threads");
    assert_eq!(said, sampled > wall * 1.25, "{}", text.stdout);
}
