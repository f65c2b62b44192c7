//! The main job (`iolab` with no arguments), in its own test binary so it runs alone.

mod common;
use common::*;

#[test]
fn main_job_ranks_every_method_and_touches_no_existing_file() {
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
        .env("COLUMNS", "80")
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
    // Its time is printed, not asserted: this machine is shared (the README quotes a measured figure).
    first_screen_answers(&stdout);
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
    assert_eq!(
        runs.len(),
        78,
        "13 methods x 2 block sizes on /dev/null and a file (with offload), 13 on a pipe (with epoll, without offload)"
    );
    let unavailable: Vec<String> = runs
        .iter()
        .filter(|r| r["result"].is_null())
        .map(|r| {
            format!(
                "{} {}",
                r["method"].as_str().unwrap(),
                r["target"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        unavailable.len(),
        14,
        "mmap and copy_file_range on /dev/null; psync, pv2, aio, mmap and copy_file_range on a pipe: {unavailable:?}"
    );
    // Every method ran the first 6 rounds; then the undecided ran more, until decided or the budget.
    let rr = &v["rounds_run"];
    assert_eq!(rr["first"], 6, "{rr}");
    assert!(
        v["rounds"].as_u64() >= Some(6) && v["rounds"] == rr["rounds"],
        "{rr}"
    );
    assert!(
        ["decided", "budget", "rounds"].contains(&rr["stopped"].as_str().unwrap()),
        "{rr}"
    );
    // Its own peak memory, as the kernel counted it, in the JSON and the text.
    let peak = v["peak_rss_bytes"].as_u64().unwrap();
    let file = v["file_size"].as_u64().unwrap();
    assert!(
        peak > file,
        "peak RSS {peak} holds at least the mapped {file}-byte file"
    );
    let (mut all, mut disturbed) = (0, 0);
    for r in runs.iter().filter(|r| !r["result"].is_null()) {
        let rounds = r["round_runs"].as_array().unwrap();
        assert!(rounds.len() >= 6, "{} {}", r["method"], r["target"]);
        let round = |x: &serde_json::Value| x["round"].as_u64().unwrap();
        assert!((1..=6).all(|n| rounds.iter().any(|x| round(x) == n)), "{r}");
        let quiet: Vec<f64> = rounds
            .iter()
            .filter(|x| x["disturbed"] == false)
            .map(|x| x["ns_per_op"].as_f64().unwrap())
            .collect();
        let n_disturbed = rounds.len() - quiet.len();
        assert_eq!(r["rounds_disturbed"], n_disturbed as u64);
        (all, disturbed) = (all + rounds.len(), disturbed + n_disturbed);
        // The result is the median quiet round, and says how quiet it was.
        let mut ns = quiet.clone();
        ns.sort_by(f64::total_cmp);
        if !ns.is_empty() {
            assert_eq!(
                r["result"]["ns_per_op"].as_f64().unwrap(),
                ns[(ns.len() - 1) / 2],
                "the median quiet round is the result"
            );
            assert_eq!(r["result"]["disturbance"]["verdict"], "quiet", "{r}");
        }
    }
    assert_eq!(rr["disturbed"], disturbed as u64, "{rr}");
    assert!(rr["runs"].as_u64().unwrap() >= all as u64, "{rr}");
    ranking_cannot_contradict_itself(&v);
    nothing_unmeasured_reads_as_zero(&v);
    cheap_tables_are_sampled(&v, &stdout);
    // nop touches no target (it is the harness's floor), so no pipe and no peer.
    for r in runs
        .iter()
        .filter(|r| r["target"] == "pipe" && r["method"] != "nop" && !r["result"].is_null())
    {
        let res = &r["result"];
        assert_eq!(
            res["target"]["peer"]["bytes"], res["bytes"],
            "every byte written into the pipe reached the peer: {}",
            r["method"]
        );
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "the temporary directory is gone"
    );
}

/// A table whose cheapest synchronous op (nop aside) took less than ten clock reads in its probe times one
/// op in 64 of every synchronous method, and says so; the others time every op; queued methods are timed
/// by their rounds either way.
fn cheap_tables_are_sampled(v: &serde_json::Value, stdout: &str) {
    let read_ns = v["clock"]["overhead_ns"].as_f64().unwrap();
    let timing = v["timing"].as_array().unwrap();
    assert_eq!(timing.len(), 6, "a timing per table: {timing:?}");
    let mut sampled = 0;
    for t in timing {
        let (method, ns) = (&t["cheapest"][0], t["cheapest"][1].as_f64().unwrap());
        assert_ne!(method, "nop", "{t}");
        let every = match ns < 10.0 * read_ns {
            true => 64,
            false => 1,
        };
        assert_eq!(
            t["latency_sample"], every,
            "{t} (a clock read {read_ns} ns)"
        );
        sampled += usize::from(every == 64);
        let sync = ["sync", "psync", "stdio", "mmap", "nop"];
        for r in
            v["runs"].as_array().unwrap().iter().filter(|r| {
                r["target"] == t["target"] && r["bs"] == t["bs"] && !r["result"].is_null()
            })
        {
            let spec = &r["result"]["spec"];
            let timed_apart = spec["latency_sample"] == 64;
            if sync.contains(&r["method"].as_str().unwrap()) {
                assert_eq!(timed_apart, every == 64, "{}", r["method"]);
            }
            if r["method"] == "io_uring" {
                assert!(spec.get("latency_sample").is_none(), "{spec}");
            }
        }
    }
    assert_eq!(
        stdout.contains("timing: synchronous methods time 1 op in 64 ")
            && stdout.contains(": ops under 10 clock reads"),
        sampled > 0,
        "{stdout}"
    );
}

/// A figure the survey did not measure is null or absent with its reason beside it, never a 0 that reads
/// as a measurement: the memory rates beyond the caches, steal in rows that did not run, the kernel's
/// read/write counts of the offload client (another process), and distributions with no value in them.
fn nothing_unmeasured_reads_as_zero(v: &serde_json::Value) {
    let memory = &v["memory"];
    assert!(
        memory["memory_copy_bps"].as_f64().is_some_and(|r| r > 0.0)
            || (memory["memory_copy_bps"].is_null()
                && memory["buffer_bytes"].is_null()
                && memory["beyond_caches_not_measured"].is_string()),
        "{memory}"
    );
    for r in v["runs"].as_array().unwrap() {
        let row = format!("{} {} {}", r["method"], r["target"], r["bs"]);
        let res = &r["result"];
        if res.is_null() {
            assert!(
                r["steal_s"].is_null(),
                "{row}: steal of rounds that never ran"
            );
            continue;
        }
        assert!(r["steal_s"].as_f64().is_some(), "{row}");
        for k in ["latency", "gap"] {
            match res.get(k) {
                Some(s) => assert!(s["count"].as_u64() > Some(0), "{row}: an empty {k}: {s}"),
                None => assert!(res[format!("{k}_unavailable")].is_string(), "{row}: {k}"),
            }
        }
        let sc = &res["syscalls"];
        let offload = r["method"] == "offload";
        assert_eq!(sc["kernel_rw"].is_null(), offload, "{row}: {sc}");
        assert_eq!(
            sc["kernel_rw_unavailable"].is_string(),
            offload,
            "{row}: {sc}"
        );
        assert_eq!(sc["kernel_rw_per_op"].is_null(), offload, "{row}: {sc}");
    }
}

/// The answer is the first screen: stdout is not a terminal here, so the progress lines come first (a
/// growing log), then the answer, whose first 25 lines at 80 columns name every target, say no sentence
/// twice (numbers aside), and end with where the rest is.
fn first_screen_answers(stdout: &str) {
    let lines: Vec<&str> = stdout.lines().collect();
    let progress = lines
        .iter()
        .filter(|l| l.starts_with("progress: run "))
        .count();
    assert!(
        (5..=11).contains(&progress),
        "a line per tenth of the runs: {stdout}"
    );
    let answer: Vec<&str> = lines
        .iter()
        .copied()
        .skip_while(|l| l.starts_with("progress: "))
        .collect();
    let first: String = answer
        .iter()
        .take(25)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    for target in ["/dev/null:", "a new file", "a pipe"] {
        assert!(
            first.contains(target),
            "{target} in the first 25 lines:\n{first}"
        );
    }
    assert!(answer.len() <= 27, "about 25 lines: {}", answer.join("\n"));
    assert!(
        answer.iter().any(|l| l.contains("iolab survey -v")),
        "{stdout}"
    );
    let text = answer.join(" ");
    let mut seen = std::collections::HashSet::new();
    for sentence in text.split(": ").flat_map(|s| s.split("; ")) {
        let words: String = sentence
            .chars()
            .filter(|c| !c.is_ascii_digit() && *c != '.')
            .collect();
        let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
        // A row's label ("io_uring at 4 KiB, 76x write()'s time") names the row a figure is about; two
        // targets' largest gaps may be the same method and size with other figures. On a loaded machine
        // two targets may each have no ranking ("no ranking: 9 methods, 22.6 ns-1.8 µs"): each its own
        // figures, under its own target.
        let figures_only = words.ends_with("write()'s time") || words.starts_with("methods, ");
        if words.len() > 30 && !figures_only {
            assert!(seen.insert(words.clone()), "said twice: {words}\n{stdout}");
        }
    }
}

/// Rows sharing a rank label are not separated, `tied_with` names exactly the rows a row is not
/// separated from (the table's `pairs`), every separated pair is ordered as its medians are, and every row
/// is put against write() with the interval of the same paired test.
fn ranking_cannot_contradict_itself(v: &serde_json::Value) {
    let tables = v["ranking"].as_array().expect("ranking");
    assert_eq!(tables.len(), 6, "3 targets x 2 block sizes");
    for t in tables {
        let rows: Vec<&serde_json::Value> = t["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["rank"] != "floor")
            .collect();
        let name = |r: &serde_json::Value| r["method"].as_str().unwrap().to_string();
        let tied = |a: &serde_json::Value, b: &serde_json::Value| {
            a["tied_with"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m.as_str() == Some(&name(b)))
        };
        let pair = |a: &serde_json::Value, b: &serde_json::Value| {
            t["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| {
                    (p["a"] == a["method"] && p["b"] == b["method"])
                        || (p["a"] == b["method"] && p["b"] == a["method"])
                })
                .cloned()
                .unwrap_or_else(|| panic!("no pair {a} {b}"))
        };
        for a in &rows {
            if let (Some(lo), Some(hi)) = (a["ratio_lo"].as_f64(), a["ratio_hi"].as_f64()) {
                let r = f64_of(a, &["ratio_to_write"]);
                assert!(lo <= r && r <= hi, "{a}");
            }
            for b in &rows {
                if name(a) == name(b) {
                    continue;
                }
                let p = pair(a, b);
                let separated = p["outcome"] == "separated";
                assert_eq!(tied(a, b), !separated, "{a} {b} {p}");
                assert_eq!(tied(a, b), tied(b, a), "{a} {b}");
                if a["rank"] == b["rank"] {
                    assert!(!separated, "same label, separated: {a} {b}");
                }
                // The faster by median is the pair's first, and a separated pair's ratio says so.
                let (fa, fb) = (f64_of(a, &["median"]), f64_of(b, &["median"]));
                if p["a"] == a["method"] {
                    assert!(fa <= fb, "{p}");
                    if separated {
                        assert!(f64_of(&p, &["hi"]) < 1.0, "{p}");
                    }
                }
            }
        }
    }
}

/// `survey -v` follows the answer with every table: each method, the floor in every section, the
/// methods that cannot run on a target with the reason, iolab's own peak memory; one round ranks
/// nothing, and says so.
#[test]
fn verbose_survey_shows_every_table() {
    let work = disk_dir();
    let tmp = disk_dir();
    let out = std::process::Command::new(bin())
        .args([
            "survey",
            "-v",
            "--ops",
            "2000",
            "--max-seconds",
            "0.05",
            "--rounds",
            "1",
            "--max-time",
            "0",
        ])
        .arg("--tmp-dir")
        .arg(tmp.path())
        .current_dir(work.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    surveys_compare_per_row(&work.path().join("iolab-results"));
    // Every figure a finding prints is cited: the field of one of the document's runs.
    let doc = std::fs::read_dir(work.path().join("iolab-results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| json_file(&p))
        .unwrap();
    let traced = cites::check_survey_cites(&doc);
    assert!(traced.cites > 0, "{}", doc["findings"]);
    assert!(
        traced.uncited.is_empty(),
        "printed without cites: {:?}",
        traced.uncited
    );
    // Every number a finding prints is a cited figure of its runs, or two of them combined.
    assert!(
        traced.unexplained.is_empty(),
        "numbers without a cite: {:#?}",
        traced.unexplained
    );
    // One round decides no order: every table says so, and the last lines what would decide them.
    assert!(stdout.contains("no ranking: "), "{stdout}");
    assert!(stdout.contains("undecided: "), "{stdout}");
    assert!(
        stdout.contains("to decide them: more rounds (--max-time 30 or more)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("== /dev/null (write sink)") && stdout.contains("== a fresh 4 MiB file on"),
        "{stdout}"
    );
    for m in methods() {
        assert!(stdout.contains(&format!(" {m} ")), "{m} in the tables");
    }
    assert!(
        stdout.contains("n/a  mmap"),
        "mmap on /dev/null is unavailable, with its reason"
    );
    assert_eq!(
        stdout.matches("floor  nop").count(),
        6,
        "nop is the floor in every section"
    );
    assert!(stdout.contains("iolab's own peak memory: "), "{stdout}");
}

/// Two surveys compare per target, method and block size: the survey in `dir` against itself is every
/// row within noise, each row named by its method and target.
fn surveys_compare_per_row(dir: &std::path::Path) {
    let f = std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let f = path_str(&f);
    let c = iolab(&["compare", &f, &f]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    // First what changed in the orders: against itself, nothing.
    assert!(
        c.stdout.contains("0 of 6 tables changed order")
            && c.stdout.contains("No row's time per op moved"),
        "{}",
        c.stdout
    );
    assert!(c.stdout.lines().count() <= 30, "{}", c.stdout);
    // Every row with -v.
    let c = iolab(&["compare", "-v", &f, &f]);
    assert_eq!(c.code, 0, "{}", c.stderr);
    // One group per run that ran, none merged: as many workload headings as target, method and block
    // size rows with a result.
    let v = json_file(std::path::Path::new(&f));
    let ran = ran_runs(&v).len();
    let groups = c.stdout.lines().filter(|l| l.contains(" (A: ")).count();
    assert_eq!(groups, ran, "{}", c.stdout);
    for row in [
        "psync write bs=4 B ",
        "-> dev_null",
        "stdio write bs=4 KiB ",
    ] {
        assert!(c.stdout.contains(row), "{row} in {}", c.stdout);
    }
    assert!(c.stdout.contains("within noise"), "{}", c.stdout);
    let verdicts = c.stdout.lines().filter(|l| l.starts_with("  "));
    assert!(
        verdicts.clone().count() > 100
            && verdicts
                .clone()
                .all(|l| !l.contains("slower") && !l.contains("faster")),
        "a survey against itself: {}",
        c.stdout
    );
}

#[test]
fn interrupted_survey_leaves_nothing_behind() {
    let tmp = disk_dir();
    let work = disk_dir();
    let mut child = std::process::Command::new(bin())
        .args(["survey", "--no-json", "--tmp-dir"])
        .arg(tmp.path())
        .current_dir(work.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while std::fs::read_dir(tmp.path()).unwrap().count() == 0 && t.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(1200)); // into the file runs
                                                                // SAFETY: kill(2) only reads its integer arguments; the pid is our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "temporary directory and files removed"
    );
    assert_eq!(
        std::fs::read_dir(work.path()).unwrap().count(),
        0,
        "no results written with --no-json"
    );
}

/// Every file of a survey's runs goes where --tmp-dir says, the helper files of the /dev/null runs (the
/// splice source) included: with TMPDIR naming nowhere, no run is refused for it, and nothing is left.
#[test]
fn survey_helper_files_go_to_tmp_dir() {
    let work = disk_dir();
    let tmp = disk_dir();
    let out = std::process::Command::new(bin())
        .args([
            "survey",
            "-v",
            "--ops",
            "2000",
            "--max-seconds",
            "0.05",
            "--rounds",
            "1",
            "--max-time",
            "0",
            "--no-json",
        ])
        .arg("--tmp-dir")
        .arg(tmp.path())
        .current_dir(work.path())
        .env("TMPDIR", "/nonexistent-iolab-tmpdir")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // Table rows: rank (or n/a), method, block size ...
    let splice_rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("splice"))
        .collect();
    assert!(!splice_rows.is_empty(), "{stdout}");
    assert!(
        splice_rows
            .iter()
            .all(|l| !l.trim_start().starts_with("n/a")),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "nothing left in --tmp-dir"
    );
}
