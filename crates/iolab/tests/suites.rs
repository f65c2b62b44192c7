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
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    let r = iolab(&["suite", "--list"]);
    assert_eq!(r.stdout.matches("reproduces:").count(), names.len());
}

#[test]
fn every_suite_runs_quick_and_reports_charts_with_its_series() {
    let dir = tmpfs_dir();
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
            &path_str(dir.path()),
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
        let (summaries, recs): (Vec<_>, Vec<_>) =
            lines.into_iter().partition(|l| l.get("summary").is_some());
        assert!(!recs.is_empty(), "{name}");
        assert_eq!(summaries.len(), 1, "{name}");
        let answers = summaries[0]["summary"]["answers"].as_array().unwrap();
        assert!(!answers.is_empty(), "{name}: no question answered");
        for a in answers {
            let said = |k: &str| a[k].as_str().is_some_and(|t| t.len() > 20);
            assert!(said("text") || said("needs"), "{name}: {a}");
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
            r.stdout.contains("\nFindings (comparing the rows"),
            "{name}: {}",
            r.stdout
        );
        assert!(
            summaries[0]["summary"]["memory"]["memory_copy_bps"]
                .as_f64()
                .unwrap()
                > 0.0
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
        // A missing method or device is said, never faked.
        for rec in recs.iter().filter(|r| r.get("error").is_some()) {
            let e = rec["error"].as_str().unwrap();
            assert!(!e.is_empty(), "{name}: {rec}");
        }
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
        assert!(
            page.contains(&format!("<h2>Findings and answers: suite {name}</h2>")),
            "{name}: the report shows the suite's answers"
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
            }
            "blocksize" => {
                // One throughput line per op and direct setting over the block sizes, a panel per
                // target.
                let t = svg_texts(&chart("throughput-vs-bs"));
                for want in [
                    "disk",
                    "tmpfs",
                    "op=write direct=false",
                    "op=read direct=false",
                ] {
                    assert!(t.contains(&want.to_string()), "{want}: {t:?}");
                }
            }
            "shared-ring" => {
                let t = svg_texts(&chart("uring-batches"));
                for ring in ["per-thread", "shared", "shared-submitter"] {
                    assert!(
                        t.iter().any(|x| x.ends_with(&format!("ring={ring}"))),
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
