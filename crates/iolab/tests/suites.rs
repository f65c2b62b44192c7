//! Suites (every built-in one with --quick) and the report they make: the HTML is self-contained and each
//! chart, written alone with --svg, parses as XML and holds the series the records say it should.

mod common;
use common::*;

fn svg_texts(p: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(p).unwrap();
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} is not XML: {e}", p.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// The suites `iolab suite --list` names.
fn suite_names() -> Vec<String> {
    let r = iolab(&["suite", "--list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
        .lines()
        .filter(|l| l.starts_with("  ") && !l.trim_start().starts_with("reproduces:"))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn list_names_every_suite_and_its_seed() {
    let names = suite_names();
    for want in [
        "writes",
        "blocksize",
        "uring",
        "shared-ring",
        "kernel-user",
        "offload",
        "nowait",
        "modern",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    let r = iolab(&["suite", "--list"]);
    assert_eq!(r.stdout.matches("reproduces:").count(), names.len());
}

#[test]
fn every_suite_runs_quick_and_reports_charts_with_its_series() {
    let dir = tmpfs_dir();
    // The "disk" files on a disk filesystem: the blocksize suite's cold-cache reads must reach a device.
    let disk = disk_dir();
    for name in suite_names() {
        let out = dir.path().join(format!("{name}.jsonl"));
        let csv = dir.path().join(format!("{name}.csv"));
        let r = iolab(&[
            "suite",
            &name,
            "--quick",
            "--out",
            &path_str(&out),
            "--csv",
            &path_str(&csv),
            "--disk-dir",
            &path_str(disk.path()),
            "--tmpfs-dir",
            &path_str(dir.path()),
        ]);
        assert_eq!(r.code, 0, "{name}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("reproduces"), "{name}: {}", r.stdout);
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // The points, then one summary: the findings and an answer (or what it needs) per question.
        let (summaries, recs): (Vec<_>, Vec<_>) = lines
            .iter()
            .cloned()
            .partition(|l| l.get("summary").is_some());
        assert!(!recs.is_empty(), "{name}");
        assert_eq!(summaries.len(), 1, "{name}");
        // Every cited figure is its record's field, on the line named.
        let traced = cites::check_cites(&name, &lines, &summaries[0]["summary"]);
        assert!(
            traced.uncited.is_empty(),
            "{name}: figures printed without cites: {:?}",
            traced.uncited
        );
        // Every number a sentence prints is a cited figure, or two of them combined.
        assert!(
            traced.unexplained.is_empty(),
            "{name}: numbers without a cite: {:#?}",
            traced.unexplained
        );
        println!("{name}: {} cites checked", traced.cites);
        let answers = summaries[0]["summary"]["answers"].as_array().unwrap();
        assert!(!answers.is_empty(), "{name}: no question answered");
        for a in answers {
            let said = |k: &str| a[k].as_str().is_some_and(|t| t.len() > 20);
            assert!(said("text") || said("needs"), "{name}: {a}");
            // A --quick run is a smoke test: no answer from it says "answered".
            assert_ne!(a["status"], "answered", "{name}: a --quick answer: {a}");
            if a["status"] != "answered" {
                assert!(
                    said("needs"),
                    "{name}: an answer short of the seed's setup says what it needs: {a}"
                );
            }
            assert!(
                r.stdout.contains(&a["question"].as_str().unwrap()[..20]),
                "{name}: {}",
                r.stdout
            );
        }
        assert!(
            r.stdout.contains("\nAnswers (the seed's questions"),
            "{name}: {}",
            r.stdout
        );
        assert!(
            r.stdout.contains("\nFindings, each cause once"),
            "{name}: {}",
            r.stdout
        );
        // The copy rate beyond the caches where the suite's working sets lie beyond them, else null
        // with the reason beside it: never a 0 that reads as a measurement.
        let memory = &summaries[0]["summary"]["memory"];
        assert!(
            memory["memory_copy_bps"].as_f64().is_some_and(|r| r > 0.0)
                || (memory["memory_copy_bps"].is_null()
                    && memory["beyond_caches_not_measured"].is_string()),
            "{name}: {memory}"
        );
        // One CSV row per record, after the header.
        assert_eq!(
            std::fs::read_to_string(&csv).unwrap().lines().count(),
            recs.len() + 1,
            "{name}"
        );
        let with_result: Vec<&serde_json::Value> =
            recs.iter().filter(|r| r.get("result").is_some()).collect();
        assert!(!with_result.is_empty(), "{name}: nothing ran: {}", r.stdout);
        // Every record says which machine made it and whether its CPU was emulated (the answers' status
        // reads that): runs, the clock and the decimal-lines ways alike.
        for rec in &with_result {
            assert!(
                rec["result"]["host"]["kernel_release"].is_string(),
                "{name}: a record without its host: {}",
                rec["point"]
            );
        }
        // A missing method or device is said, never faked.
        for rec in recs.iter().filter(|r| r.get("error").is_some()) {
            let e = rec["error"].as_str().unwrap();
            assert!(!e.is_empty(), "{name}: {rec}");
        }
        redesigned(
            &name,
            &r.stdout,
            &with_result,
            &summaries[0]["summary"],
            disk.path(),
        );
        if name == "offload" {
            // Every path ran at batch 1 and 32, NOPs only, with cycles beside the thesis's.
            for path in ["native", "kernel", "broker"] {
                for batch in [1, 32] {
                    assert!(
                        with_result
                            .iter()
                            .any(|r| r["result"]["offload"]["path"] == path
                                && r["result"]["offload"]["batch"] == batch
                                && r["result"]["bytes"] == 0),
                        "{name}: no {path} batch {batch}: {}",
                        r.stdout
                    );
                }
            }
            assert!(r.stdout.contains("offloaded: kernel path"), "{}", r.stdout);
        }
        if name == "nowait" {
            // Every RWF_NOWAIT op either finished at once or was counted as would-block.
            let pv2: Vec<_> = with_result
                .iter()
                .filter(|r| r["result"]["spec"]["method"] == "pv2")
                .collect();
            assert!(
                pv2.len() >= 3,
                "{name}: the pv2 write points ran: {}",
                r.stdout
            );
            for rec in pv2 {
                let (res, n) = (&rec["result"], &rec["result"]["nowait"]);
                assert_eq!(
                    n["would_block"].as_u64().unwrap() + n["completed_nowait"].as_u64().unwrap(),
                    res["ops"].as_u64().unwrap(),
                    "{rec}"
                );
            }
            assert!(r.stdout.contains("would block"), "{}", r.stdout);
        }
        if name == "kernel-user" {
            // Every method wrote the lines and they were checked.
            for rec in &with_result {
                assert_eq!(rec["result"]["verified"], true, "{rec}");
                assert_eq!(rec["result"]["bytes"], 2 * 10 + 90 * 3 + 900 * 4 + 1000 * 5);
            }
        }

        let html = dir.path().join(format!("{name}.html"));
        let svgs = dir.path().join(format!("{name}-svg"));
        let page = report(&out, &html, &svgs);
        assert!(
            page.starts_with("<!DOCTYPE html>") && page.contains("<svg"),
            "{name}"
        );
        // The page opens with the answers, each question's status at a glance, and says what every
        // answer needs once (a --quick run's "a full run of the suite" was in each of them).
        let head = &page[..page.find("<h2>Runs</h2>").unwrap()];
        assert!(
            head.contains(&format!("<h2>The answers: suite {name}</h2>"))
                && head.contains("<table class=\"answers\">"),
            "{name}: the report opens with the suite's answers"
        );
        assert_eq!(
            page.matches("this one ran --quick").count(),
            1,
            "{name}: the --quick reason is said once"
        );
        assert!(
            !page.contains("<script") && !page.contains("<link") && !page.contains("src=\"http"),
            "{name}: the report loads nothing"
        );
        let charts: Vec<std::path::PathBuf> = std::fs::read_dir(&svgs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(!charts.is_empty(), "{name}: no charts");
        for c in &charts {
            svg_texts(c);
        }
        let chart = |stem: &str| svgs.join(format!("{stem}.svg"));
        match name.as_str() {
            "writes" => {
                // Figure 21's normalized split, one bar per run, and the time between writes.
                let t = svg_texts(&chart("cpu-split"));
                assert!(t.iter().any(|x| x.starts_with("systemcall bs=4 ")), "{t:?}");
                assert!(t.iter().any(|x| x.starts_with("mmap bs=4 KiB ")), "{t:?}");
                assert!(t.contains(&"user".to_string()) && t.contains(&"system".to_string()));
                let t = svg_texts(&chart("time-between-ops"));
                assert!(t.iter().any(|x| x.starts_with("io_uring (thesis")), "{t:?}");
                let t = svg_texts(&chart("uring-batches"));
                assert!(
                    t.iter().any(|x| x.starts_with("io_uring (batched")),
                    "{t:?}"
                );
                // Every way of each workload side by side: the mmap rows beside write() and io_uring.
                for ways in ["ways-time-per-op", "ways-cpu-per-op"] {
                    let t = svg_texts(&chart(ways));
                    for want in ["mmap", "systemcall", "io_uring in a blocking loop"] {
                        assert!(
                            t.iter().any(|x| x.starts_with(want)),
                            "{ways} {want}: {t:?}"
                        );
                    }
                }
            }
            "blocksize" => {
                // One throughput line per op and direct setting over the block sizes, a panel per
                // target.
                let t = svg_texts(&chart("throughput-vs-bs"));
                for want in [
                    "disk: writes, fsync inside the timed span",
                    "disk: reads from a cold cache (pages dropped first)",
                    "tmpfs (the RAM disk): writes",
                    "direct=false",
                    "direct=true",
                ] {
                    assert!(t.contains(&want.to_string()), "{want}: {t:?}");
                }
            }
            "shared-ring" => {
                let t = svg_texts(&chart("uring-batches"));
                for ring in ["per-thread", "shared", "shared-submitter"] {
                    assert!(
                        t.iter()
                            .any(|x| x.split_whitespace().any(|w| w == format!("ring={ring}"))),
                        "{ring}: {t:?}"
                    );
                }
            }
            "kernel-user" => {
                let t = svg_texts(&chart("lines-runs"));
                for m in ["stdio", "write-per-line", "mmap", "sendfile"] {
                    assert!(t.contains(&m.to_string()), "{m}: {t:?}");
                }
            }
            "uring" => {
                let t = svg_texts(&chart("latency-cdf"));
                assert!(t.iter().any(|x| x.starts_with("Table 2: sync")), "{t:?}");
            }
            _ => {}
        }
    }
}

#[test]
fn report_refuses_an_existing_output_and_unknown_suites_name_the_choices() {
    let dir = tmpfs_dir();
    let out = dir.path().join("r.html");
    std::fs::write(&out, "mine").unwrap();
    let recs = dir.path().join("x.jsonl");
    std::fs::write(&recs, "").unwrap();
    let r = iolab(&["report", &path_str(&recs), "-o", &path_str(&out)]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--out"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
    let r = iolab(&["report"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("<RESULTS>"),
        "names what is missing: {}",
        r.stderr
    );
    let r = iolab(&["suite", "nosuch"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("nosuch") && r.stderr.contains("blocksize"),
        "{}",
        r.stderr
    );
}

/// The results of one step, by the start of its label.
fn step_results<'a>(recs: &[&'a serde_json::Value], step: &str) -> Vec<&'a serde_json::Value> {
    recs.iter()
        .filter(|r| {
            r["point"]["step"]
                .as_str()
                .is_some_and(|s| s.starts_with(step))
        })
        .map(|r| &r["result"])
        .collect()
}

/// What each redesigned suite (issue 17, item 3) must show in a --quick run: its new rows and columns,
/// with figures the kernel gave.
fn redesigned(
    name: &str,
    out: &str,
    recs: &[&serde_json::Value],
    summary: &serde_json::Value,
    disk: &std::path::Path,
) {
    let answer = |id: &str| {
        summary["answers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("{name}: no answer {id}"))
            .clone()
    };
    match name {
        "blocksize" => blocksize_checks(out, recs, disk),
        "shared-ring" => {
            for col in ["in flight", "mutex waits"] {
                assert!(out.contains(col), "{col}: {out}");
            }
            let one = step_results(recs, "one request in flight per thread");
            assert_eq!(one.len(), 6, "{out}");
            for r in &one {
                assert_eq!(r["spec"]["qd"], 1);
                // A ring of its own per thread holds that one request at most.
                if r["spec"]["ring"]["design"] == "per-thread" {
                    assert!(f64_of(r, &["uring", "mean_inflight"]) <= 1.0 + 1e-9, "{r}");
                }
            }
            for r in step_results(recs, "CPU-bound: NOP") {
                assert_eq!(
                    (
                        r["bytes"].as_u64(),
                        r["spec"]["ring"]["nop_requests"].as_bool()
                    ),
                    (Some(0), Some(true))
                );
            }
            let cached = step_results(recs, "CPU-bound: page-cache reads");
            assert_eq!(cached.len(), 6);
            assert!(cached.iter().all(|r| r["spec"]["direct"] == false));
            // Batch equal to the QD as well as 8.
            let batches: Vec<u64> = step_results(recs, "Table 5")
                .iter()
                .map(|r| u64_of(r, &["spec", "batch"]))
                .collect();
            assert!(batches.contains(&8) && batches.contains(&64), "{batches:?}");
            // The shared ring's mutex waits are counted where threads share it.
            for r in recs
                .iter()
                .map(|r| &r["result"])
                .filter(|r| r["spec"]["ring"]["design"] == "shared")
            {
                assert!(r["uring"]["lock_contended"].is_u64(), "{r}");
            }
            let a = answer("shared-lost");
            assert_eq!(a["status"], "indicative", "{a}");
            assert!(a["needs"].as_str().unwrap().contains("--quick"), "{a}");
            assert!(
                a["text"]
                    .as_str()
                    .unwrap()
                    .contains("Table 6 from this run's own counts"),
                "{a}"
            );
        }
        "uring" => {
            let sync = step_results(recs, "Table 3: sync");
            let uring = step_results(recs, "Table 3: io_uring");
            assert_eq!((sync.len(), uring.len()), (1, 1), "{out}");
            let by_name = |r: &serde_json::Value, call: &str| {
                r["kernel"]["syscalls_by_name"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p[0] == call)
                    .and_then(|p| p[1].as_u64())
                    .unwrap_or_else(|| panic!("{call} not counted: {r}"))
            };
            let total = |r: &serde_json::Value| {
                r["kernel"]["tracepoints"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["name"] == "raw_syscalls:sys_enter")
                    .and_then(|c| c["value"].as_u64())
                    .unwrap()
            };
            // The whole workload was counted: one pread64 per op, and the kernel's io_uring_enter count is
            // iolab's own count of its calls in that pass.
            let (s, u) = (sync[0], uring[0]);
            assert_eq!(s["kernel"]["count_mode"], "full");
            assert_eq!(
                by_name(s, "pread64"),
                u64_of(s, &["kernel", "tracepoint_pass_ops"])
            );
            assert_eq!(by_name(s, "pread64"), u64_of(s, &["ops"]));
            assert_eq!(
                by_name(u, "io_uring_enter"),
                u64_of(u, &["kernel", "tracepoint_pass_uring_enters"])
            );
            assert!(
                total(s) >= by_name(s, "pread64") && total(u) < total(s),
                "{s}\n{u}"
            );
            assert!(
                out.contains(&format!("pread64 {}", thousands(by_name(s, "pread64")))),
                "{out}"
            );
            assert!(out.contains("main call"), "{out}");
            // Table 1 from the page cache beside the O_DIRECT one.
            for r in step_results(recs, "Table 1 from the page cache") {
                assert_eq!(r["spec"]["direct"], false);
            }
            assert!(answer("syscalls")["text"]
                .as_str()
                .unwrap()
                .contains("Table 3 in this run"));
            assert!(answer("sync-won")["text"]
                .as_str()
                .unwrap()
                .contains("From the page cache"));
        }
        "writes" => {
            let blocking = step_results(recs, "io_uring in a blocking loop");
            assert_eq!(blocking.len(), 2, "{out}");
            for r in blocking {
                assert_eq!(
                    (
                        r["spec"]["qd"].as_u64(),
                        r["spec"]["ring"]["sqpoll"].as_bool()
                    ),
                    (Some(1), Some(true))
                );
                assert!(f64_of(r, &["gap", "p50_ns"]) > 0.0, "{r}");
            }
            for want in [
                "gap p50",
                "gap p99",
                "Time between writes",
                "io_uring at qd 1",
            ] {
                assert!(out.contains(want), "{want}: {out}");
            }
            assert!(answer("io_uring-lost")["text"]
                .as_str()
                .unwrap()
                .contains("In a blocking loop"));
        }
        "kernel-user" => {
            for col in ["writes ms", "fsync ms", "write calls", "cpu ms"] {
                assert!(out.contains(col), "{col}: {out}");
            }
            let published = step_results(recs, "the note's user program as published");
            assert_eq!(published.len(), 3, "{out}");
            for r in &published {
                // No fsync, timed to the final fflush: its writes are its whole span.
                assert!(r["fsync_s"].is_null(), "{r}");
                assert_eq!(r["wall_s"], r["write_s"]);
                assert!(u64_of(r, &["write_calls"]) >= 1);
            }
            for r in recs.iter().map(|r| &r["result"]) {
                let m = r["spec"]["method"].as_str().unwrap();
                if m != "stdio-as-published" {
                    assert!(f64_of(r, &["fsync_s"]) >= 0.0, "{r}");
                }
                // The kernel counted one write(2) per line for the way that makes one per line.
                if m == "write-per-line" {
                    assert_eq!(r["write_calls"], r["spec"]["lines"], "{r}");
                }
            }
            assert!(answer("kernel-slower")["text"]
                .as_str()
                .unwrap()
                .contains("as published"));
        }
        _ => {}
    }
}

fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut o = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            o.push(',');
        }
        o.push(c);
    }
    o
}

/// blocksize: writes fsynced inside the timed span, reads from a cold cache that the device served, the
/// busier core's kernel share system-wide, the second author's name.
fn blocksize_checks(out: &str, recs: &[&serde_json::Value], disk: &std::path::Path) {
    assert!(
        out.contains("Joyce and Audsley") && !out.contains("Aspinall"),
        "{out}"
    );
    assert!(out.contains("core kern") && out.contains("device"), "{out}");
    for r in recs.iter().map(|r| &r["result"]) {
        let sw = &r["cpu"]["system_wide"];
        if !sw.is_null() {
            let n = sw["kernel_share"].as_array().unwrap().len() as u64;
            assert_eq!(n, u64_of(r, &["host", "cpus_online"]), "{r}");
            let s = f64_of(sw, &["busiest_kernel_share"]);
            assert!((0.0..=1.0).contains(&s), "{sw}");
        }
    }
    let writes = step_results(recs, "disk: writes");
    assert_eq!(writes.len(), 6);
    for r in writes {
        assert_eq!(r["spec"]["fsync"], "end");
        assert!(u64_of(r, &["flushes", "calls"]) >= 1, "{r}");
    }
    let cold = step_results(recs, "disk: reads from a cold cache");
    assert_eq!(cold.len(), 6);
    for r in &cold {
        assert_eq!(r["spec"]["cold_cache"], true);
        let note = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .find(|n| n.starts_with("--cold-cache"));
        assert!(note.is_some_and(|n| n.contains("pages")), "{r}");
    }
    let fs = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(disk)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if fs == "tmpfs" {
        skip(
            "block-device",
            &format!(
                "cold-cache reads from the device: {} is on tmpfs (no device behind its pages)",
                disk.display()
            ),
        );
        return;
    }
    // The buffered reads came from the device: the kernel fetched at least the bytes read; a read of the
    // RAM disk fetched nothing.
    for r in cold.iter().filter(|r| r["spec"]["direct"] == false) {
        assert!(
            u64_of(r, &["syscalls", "kernel_rw", "read_bytes"]) >= u64_of(r, &["bytes"]),
            "{r}"
        );
    }
    for r in step_results(recs, "tmpfs (the RAM disk): reads") {
        assert_eq!(
            u64_of(r, &["syscalls", "kernel_rw", "read_bytes"]),
            0,
            "{r}"
        );
        assert!(r.get("device_io").is_none(), "no disk behind tmpfs: {r}");
    }
    device_bytes_checks(recs, &cold);
}

/// The disk's own count: a buffered cold read took at least 90% of its bytes from the device and is no
/// page-cache row; an fsynced write put at least 90% of its bytes on the device.
fn device_bytes_checks(recs: &[&serde_json::Value], cold: &[&serde_json::Value]) {
    if cold.iter().any(|r| r.get("device_io").is_none()) {
        skip(
            "block-device",
            "the device's bytes: the disk files' filesystem has no block device iolab can count",
        );
        return;
    }
    for r in cold.iter().filter(|r| r["spec"]["direct"] == false) {
        let dev = u64_of(r, &["device_io", "read_bytes"]) as f64;
        assert!(dev >= 0.9 * u64_of(r, &["bytes"]) as f64, "{r}");
        assert_ne!(r["verdict"]["kind"], "page-cache", "{r}");
    }
    for r in step_results(recs, "disk: writes") {
        let dev = u64_of(r, &["device_io", "written_bytes"]) as f64;
        assert!(dev >= 0.9 * u64_of(r, &["bytes"]) as f64, "{r}");
    }
}

/// The traceability check over record files of full runs (`IOLAB_CHECK_RECORDS`: paths separated by
/// `:`), as the quick runs above are checked; skipped without them.
#[test]
fn record_files_named_are_traced() {
    let Ok(files) = std::env::var("IOLAB_CHECK_RECORDS") else {
        skip("record-files", "IOLAB_CHECK_RECORDS names no record files");
        return;
    };
    for f in files.split(':').filter(|f| !f.is_empty()) {
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(f)
            .unwrap_or_else(|e| panic!("{f}: {e}"))
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let summary = lines.iter().rev().find_map(|l| l.get("summary")).unwrap();
        let traced = cites::check_cites(f, &lines, summary);
        assert!(traced.uncited.is_empty(), "{f}: {:#?}", traced.uncited);
        assert!(
            traced.unexplained.is_empty(),
            "{f}: numbers without a cite: {:#?}",
            traced.unexplained
        );
        println!("{f}: {} cites checked, every number traced", traced.cites);
    }
}

/// The check itself: a number no cite explains is caught; a cited figure, a ratio of two, a seed reference,
/// a step's name and a file's path are not.
#[test]
fn the_traceability_check_catches_a_number_without_a_cite() {
    let cited = [250.0, 500.0, 1.0004];
    let ok = "io_uring (qd 8) took 500.0 ns, 2.0x write()'s 250.0 ns (Figure 4.3, Table 1: sync, 8 threads, \
              QD1: x), pread64 at /tmp/iolab-suite-27890/a.dat, 249.9 ns per system call";
    assert_eq!(
        cites::unexplained(ok, &cited, &["io_uring (qd 8)".into()]),
        Vec::<String>::new()
    );
    let loose = "io_uring took 500.0 ns against 123.4 ns, 3.1x";
    assert_eq!(
        cites::unexplained(loose, &cited, &[]),
        vec!["123.4".to_string(), "3.1".to_string()]
    );
    // An entry without cites may hold no number, whatever its status (a not-here answer once said "at
    // most 2 samples" unchecked); digits in words, paths and releases are not numbers.
    let summary = |text: &str| serde_json::json!({"answers": [{"id": "q", "status": "not-here", "text": text, "cites": []}]});
    let t = cites::check_cites("x", &[], &summary("at most 2 samples each"));
    assert_eq!(t.uncited.len(), 1, "{:?}", t.uncited);
    let t = cites::check_cites(
        "x",
        &[],
        &summary("pwritev2 refused /var/tmp/a-27/b.dat: needs Linux 6.14+"),
    );
    assert!(t.uncited.is_empty(), "{:?}", t.uncited);
}
