//! Profiles in the report and the suites: the report of a profiled run holds a static flame graph (of a
//! made-up profile on a real run's result always, of the run's own profile where `--profile` records one
//! here), and `suite blocksize --quick --profile` prints the storage paper's Figure 4 table and the report
//! draws it.

mod common;
use common::*;
use serde_json::{json, Value};

/// The flame graphs in an HTML page: each `<svg id="flame-N" ...>` element (with the svg nested in it),
/// as text.
fn flame_svgs(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = html[from..].find("<svg id=\"flame-").map(|i| i + from) {
        let mut depth = 0;
        let mut at = i;
        loop {
            let open = html[at..].find("<svg").map(|k| k + at);
            let close = html[at..].find("</svg>").map(|k| k + at).expect("closed");
            match open {
                Some(o) if o < close => {
                    depth += 1;
                    at = o + 4;
                }
                _ => {
                    depth -= 1;
                    at = close + 6;
                    if depth == 0 {
                        break;
                    }
                }
            }
        }
        out.push(html[i..at].to_string());
        from = at;
    }
    out
}

/// Checks a flame graph: XML, its id, a title naming the run, boxes with sample tooltips, and nothing
/// that runs (no script element, no event handler attribute).
fn check_flame(svg: &str, id: &str) {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{id}: {e}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.attribute("id"), Some(id));
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .collect();
    assert!(
        texts.iter().any(|t| t.starts_with("Flame graph: ")),
        "{texts:?}"
    );
    let tips = doc
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .filter(|t| t.contains(" samples, "))
        .count();
    assert!(tips > 0, "{id}: no box has a tooltip");
    for n in doc.descendants().filter(|n| n.is_element()) {
        assert!(!n.has_tag_name("script"), "{id} has a script");
        for a in n.attributes() {
            assert!(
                !a.name().starts_with("on"),
                "{id}: {}={}",
                a.name(),
                a.value()
            );
        }
    }
}

/// Writes `doc` as a JSON file and makes its report with --svg; returns the page and the svg dir.
fn report_of(dir: &tempfile::TempDir, name: &str, doc: &Value) -> (String, std::path::PathBuf) {
    let json = dir.path().join(format!("{name}.json"));
    std::fs::write(&json, serde_json::to_string(doc).unwrap()).unwrap();
    let html = dir.path().join(format!("{name}.html"));
    let svgs = dir.path().join(format!("{name}-svg"));
    (report(&json, &html, &svgs), svgs)
}

/// A profile of a buffered write as `--profile` records it, made up.
fn made_up_profile() -> Value {
    let share = |name: &str, kernel: bool, n: u64| json!({"name": name, "kernel": kernel, "samples": n, "share": n as f64 / 1000.0});
    json!({
        "pass": "separate", "event": "cpu-clock", "frequency_hz": 997, "samples": 1000, "lost": 0,
        "unsymbolized": [],
        "groups": [share("copy to/from user", true, 800), share("iolab", false, 200)],
        "top_self": [share("rep_movs_alternative", true, 800), share("iolab::runner", false, 200)],
        "top_inclusive": [share("vfs_write", true, 800)],
        "folded": [
            "iolab-w;entry_SYSCALL_64;do_syscall_64;ksys_write;vfs_write;ext4_buffered_write_iter;generic_perform_write;copy_folio_from_iter_atomic;rep_movs_alternative 800",
            "iolab-w;iolab::runner::loops 200"
        ],
        "notes": []
    })
}

/// Why `--profile` records no profile here, if it does not: a small profiled run.
fn no_profile_here(dir: &tempfile::TempDir) -> Option<String> {
    let target = path_str(&dir.path().join("probe.dat"));
    let r = iolab(&[
        "run",
        "--method",
        "psync",
        "--bs",
        "64k",
        "--size",
        "8m",
        "--target",
        &target,
        "--count",
        "none",
        "--profile",
        "--json",
        "-",
    ]);
    if r.code != 0 {
        let e = r.stderr.to_lowercase();
        assert!(
            e.contains("perf") || e.contains("permi") || e.contains("paranoid"),
            "a profiled run failed for another reason than sampling: {}",
            r.stderr
        );
        return Some(format!(
            "sampling is not permitted here: {}",
            r.stderr.trim()
        ));
    }
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let p = &v["profile"];
    if p.is_null() {
        return Some("this build's runs record no profile (result.profile is absent)".into());
    }
    if p["samples"].as_u64() == Some(0) {
        return Some(format!("the profile has no samples: {}", p["notes"]));
    }
    None
}

#[test]
fn the_report_of_a_profiled_run_holds_a_static_flame_graph() {
    let dir = tmpfs_dir();
    let target = path_str(&dir.path().join("x.dat"));
    // A real run's result with a made-up profile: the report of every run it could record.
    let mut r = run_json(&[
        "--method", "psync", "--bs", "4k", "--ops", "2000", "--target", &target,
    ]);
    r["profile"] = made_up_profile();
    let (page, svgs) = report_of(&dir, "made-up", &r);
    assert!(page.contains("<h2>Where the time goes</h2>"), "{page}");
    assert!(page.contains("rep_movs_alternative [k]"));
    assert!(!page.contains("<script") && !page.contains(" onload="));
    let flames = flame_svgs(&page);
    assert_eq!(flames.len(), 1, "one profiled run, one flame graph");
    check_flame(&flames[0], "flame-1");
    let file = std::fs::read_to_string(svgs.join("flame-1.svg")).unwrap();
    check_flame(&file, "flame-1");
    let groups = std::fs::read_to_string(svgs.join("profile-groups-1.svg")).unwrap();
    assert!(groups.contains("copy to/from user"));

    // The run's own profile, where this machine and build record one.
    if let Some(why) = no_profile_here(&dir) {
        skip("sampling", &format!("real profile in the report: {why}"));
        return;
    }
    let r = run_json(&[
        "--method",
        "psync",
        "--bs",
        "64k",
        "--size",
        "16m",
        "--target",
        &target,
        "--profile",
    ]);
    let (page, svgs) = report_of(&dir, "real", &r);
    let flames = flame_svgs(&page);
    assert_eq!(flames.len(), 1, "{page}");
    check_flame(&flames[0], "flame-1");
    check_flame(
        &std::fs::read_to_string(svgs.join("flame-1.svg")).unwrap(),
        "flame-1",
    );
}

#[test]
fn blocksize_with_profile_prints_figure_4_and_the_report_draws_it() {
    let dir = tmpfs_dir();
    let r = iolab(&["suite", "blocksize", "--quick", "--profile", "bogus"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("separate"),
        "names the choices: {}",
        r.stderr
    );
    if let Some(why) = no_profile_here(&dir) {
        skip("sampling", &format!("blocksize --profile: {why}"));
        return;
    }
    let out = dir.path().join("b.jsonl");
    let r = iolab(&[
        "suite",
        "blocksize",
        "--quick",
        "--profile",
        "--out",
        &path_str(&out),
        "--disk-dir",
        &path_str(dir.path()),
        "--tmpfs-dir",
        &path_str(dir.path()),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Figure 4"), "{}", r.stdout);
    let recs: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let profiled: Vec<&Value> = recs
        .iter()
        .filter(|r| r["result"]["profile"].is_object())
        .collect();
    assert!(!profiled.is_empty(), "{}", r.stdout);
    // A row per profiled point in the profile table, after the suite's own table.
    let table = &r.stdout[r.stdout.find("Where the time goes").unwrap()..];
    for rec in &profiled {
        // The point without the step, the quick mark and the key --profile set on every point.
        let row: String = rec["point"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| !["step", "quick", "profile"].contains(&k.as_str()))
            .map(|(k, v)| format!("{k}={} ", v.as_str().unwrap()))
            .collect();
        assert!(table.contains(&row), "{row}: {table}");
    }
    let html = dir.path().join("b.html");
    let svgs = dir.path().join("b-svg");
    let page = report(&out, &html, &svgs);
    assert!(!page.contains("<script"));
    // The chart's disk-writes line needs two block sizes whose profiles took a sample: --quick runs
    // last milliseconds, and on a busy machine (tests in parallel) some take none.
    let sampled = profiled
        .iter()
        .filter(|r| {
            r["point"]["step"] == "disk: writes, fsync inside the timed span"
                && r["point"]["direct"] == "false"
                && r["result"]["profile"]["samples"].as_u64() > Some(0)
        })
        .count();
    if sampled < 2 {
        skip("timing", &format!(
            "the copy-share chart: {sampled} of the disk-writes points' profiles took a sample (--quick runs are too short here)"
        ));
    } else {
        let copy = std::fs::read_to_string(svgs.join("copy-share-vs-bs.svg")).unwrap();
        // A line per direct setting, in a panel per step (a target and direction each), or named with
        // it where one panel holds them all.
        assert!(
            copy.contains(">direct=false</text>")
                && (copy.contains(">disk: writes, fsync inside the timed span</text>")
                    || copy.contains(
                        ">disk: writes, fsync inside the timed span direct=false</text>"
                    )),
            "one line per step and direct setting: {copy}"
        );
    }
    // flame-N counts the profiled runs; a run whose profile holds no stacks (too short to be sampled)
    // has none.
    let flames = flame_svgs(&page);
    assert!(!flames.is_empty());
    for f in &flames {
        let id = &f[9..f[9..].find('"').unwrap() + 9];
        check_flame(f, id);
        assert!(svgs.join(format!("{id}.svg")).exists(), "{id}");
    }
}
