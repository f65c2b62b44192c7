//! What people read: text wrapped to COLUMNS without splitting a word, tables aligned whatever the
//! method's name, human units in every view, help texts that say what the commands do, `--md` exports,
//! `compare --across`, and `--warmup`.

mod common;
use common::*;
use std::process::Command;

/// iolab with COLUMNS set (None: unset, so output to a pipe is not wrapped).
fn iolab_cols(cols: Option<usize>, args: &[&str]) -> Ran {
    let mut c = Command::new(bin());
    c.args(args).env_remove("COLUMNS");
    if let Some(n) = cols {
        c.env("COLUMNS", n.to_string());
    }
    let out = c.output().expect("iolab starts");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn words(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// Every line fits `width`, unless it is one word that alone is wider (never cut).
fn fits(text: &str, width: usize, what: &str) {
    for l in text.lines() {
        let n = l.chars().count();
        assert!(
            n <= width || words(l).len() == 1,
            "{what}: a line of {n} columns at COLUMNS={width}:\n{l}\n{text}"
        );
    }
}

/// Units that must never start a line: a number was split from its unit.
const UNITS: &[&str] = &[
    "ns", "µs", "ms", "s", "MiB/s", "GiB/s", "KiB/s", "ops/s", "KiB", "MiB",
];

fn no_unit_starts_a_line(text: &str, what: &str) {
    for l in text.lines() {
        if let Some(first) = words(l).first() {
            let w = first.trim_end_matches([',', ';', ')']);
            assert!(
                !UNITS.contains(&w),
                "{what}: a unit begins a line: {l:?}\n{text}"
            );
        }
    }
}

/// No figure in nanoseconds of 1000 or more ("p99 2574838 ns"), no MiB/s of 1024 or more: every view
/// scales its units.
fn human_units(text: &str, what: &str) {
    let w = words(text);
    for (i, unit) in w.iter().enumerate().skip(1) {
        let unit = unit.trim_end_matches([',', ';', ')', '/']);
        let n: Option<f64> = w[i - 1]
            .replace(',', "")
            .trim_start_matches('(')
            .parse()
            .ok();
        match (unit, n) {
            ("ns" | "ns/op", Some(v)) => {
                assert!(v < 1000.0, "{what}: raw ns '{} {}'\n{text}", w[i - 1], w[i])
            }
            ("MiB/s", Some(v)) => assert!(
                v < 1024.0,
                "{what}: unscaled '{} {}'\n{text}",
                w[i - 1],
                w[i]
            ),
            _ => {}
        }
    }
}

#[test]
fn a_run_wraps_at_80_columns_without_splitting_words() {
    let dir = tmpfs_dir();
    let json = dir.path().join("r.json");
    // The brief account fits a first screen at 80 columns, and names what -v adds.
    let brief = iolab_cols(
        Some(80),
        &[
            "run",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--ops",
            "20000",
        ],
    );
    assert_eq!(brief.code, 0, "{}", brief.stderr);
    fits(&brief.stdout, 80, "run");
    assert!(
        brief.stdout.lines().count() <= 25 && brief.stdout.contains("lines with -v"),
        "{}",
        brief.stdout
    );
    let r = iolab_cols(
        Some(80),
        &[
            "run",
            "-v",
            "--method",
            "psync",
            "--target",
            "/dev/null",
            "--ops",
            "20000",
            "--json",
            &path_str(&json),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    fits(&r.stdout, 80, "run");
    no_unit_starts_a_line(&r.stdout, "run");
    human_units(&r.stdout, "run");
    // Every sentence of the result (findings, notes, what was timed) is in the output whole: its words in
    // order, none split, whatever the line breaks.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let flat = words(&r.stdout).join(" ");
    let mut texts: Vec<String> = vec![
        doc["timed"].as_str().unwrap().into(),
        doc["excluded"].as_str().unwrap().into(),
    ];
    texts.extend(
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["text"].as_str().unwrap().to_string()),
    );
    texts.extend(
        doc["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string()),
    );
    texts.extend(
        doc["kernel"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string()),
    );
    assert!(texts.len() > 3);
    for t in texts {
        assert!(
            flat.contains(&words(&t).join(" ")),
            "not whole in the output: {t}\n{}",
            r.stdout
        );
    }
    // Unwrapped where not a terminal and COLUMNS is unset: each item one line.
    let plain = iolab_cols(
        None,
        &[
            "run",
            "-v",
            "--target",
            "/dev/null",
            "--ops",
            "2000",
            "--count",
            "none",
        ],
    );
    assert!(
        plain.stdout.lines().any(|l| l.chars().count() > 160),
        "{}",
        plain.stdout
    );
    let wide = iolab_cols(
        Some(160),
        &[
            "run",
            "-v",
            "--target",
            "/dev/null",
            "--ops",
            "2000",
            "--count",
            "none",
        ],
    );
    fits(&wide.stdout, 160, "run at 160");
}

#[test]
fn errors_and_help_wrap_too() {
    let r = iolab_cols(Some(80), &["run", "--method", "nosuch"]);
    assert_eq!(r.code, 2);
    fits(&r.stderr, 80, "error");
    assert!(
        words(&r.stderr)
            .join(" ")
            .contains("--method: unknown method 'nosuch'"),
        "{}",
        r.stderr
    );
    for args in [
        &["run", "--help"][..],
        &["sweep", "--help"],
        &["--help"],
        &["compare", "--help"],
        &["survey", "--help"],
    ] {
        let h = iolab_cols(Some(80), args);
        assert_eq!(h.code, 0);
        fits(&h.stdout, 80, &args.join(" "));
    }
    // Examples are pasted as printed: at 80 columns as at 200, never wrapped mid-command.
    for cmd in ["run", "survey"] {
        let examples = |cols| {
            let h = iolab_cols(Some(cols), &[cmd, "--help"]).stdout;
            h[h.find("Examples").expect("examples")..].to_string()
        };
        assert_eq!(examples(80), examples(200), "{cmd} --help");
    }
    // survey's options in the order a user sets them: the target and workload first.
    let h = iolab_cols(Some(80), &["survey", "--help"]).stdout;
    let first = h.lines().find(|l| l.trim_start().starts_with("--"));
    assert!(first.is_some_and(|l| l.contains("--target")), "{h}");
}

#[test]
fn help_texts_say_what_the_commands_do() {
    let run = iolab(&["run", "--help"]).stdout;
    let flat = words(&run).join(" ");
    assert!(
        flat.contains("producer-consumer (a ring per thread"),
        "--ring: {run}"
    );
    assert!(flat.contains("or pipe, socketpair, tcp"), "--target: {run}");
    assert!(
        flat.contains("--warmup <N|SECS>") && flat.contains("--md <FILE>"),
        "{run}"
    );
    for cmd in [
        "", "survey", "run", "sweep", "compare", "suite", "report", "clean", "probe", "man",
    ] {
        let args: Vec<&str> = [cmd, "--help"]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let h = iolab(&args).stdout;
        for l in h.lines() {
            assert!(
                l.matches("[default:").count() < 2,
                "{cmd}: a doubled default: {l}"
            );
        }
    }
    // A sweep refuses --json and --repeat (with the reason), so its help does not offer them.
    let sweep = iolab(&["sweep", "--help"]).stdout;
    assert!(
        !sweep.contains("--json") && !sweep.contains("--repeat"),
        "{sweep}"
    );
    assert!(sweep.contains("--csv") && sweep.contains("--md") && sweep.contains("--vary"));
    let e = iolab(&["sweep", "--vary", "bs=4k", "--repeat", "3"]);
    assert_eq!(e.code, 2);
    assert!(e.stderr.contains("--repeat"), "{}", e.stderr);
    // One survey time: the README's and --help's.
    let readme = include_str!("../../../README.md");
    let top = iolab(&["--help"]).stdout;
    let time = |t: &str| {
        let flat = words(t).join(" ");
        let i = flat.find("in rounds until decided (")?;
        let rest = &flat[i..];
        let open = rest.find('(')?;
        Some(rest[open + 1..rest.find(')')?].to_string())
    };
    assert_eq!(
        time(readme),
        time(&top),
        "the survey's time, README and --help"
    );
    assert!(
        time(readme).is_some_and(|t| t.starts_with("about ")),
        "{:?}",
        time(readme)
    );
}

/// A sweep of two methods, one with a long name, to a file in `dir`; the record file.
fn sweep(dir: &tempfile::TempDir, methods: &str, extra: &[&str]) -> (Ran, std::path::PathBuf) {
    let out = dir
        .path()
        .join(format!("{}.jsonl", methods.replace(',', "-")));
    let target = dir.path().join("sw.dat");
    let mut args = vec![
        "sweep", "--vary", methods, "--ops", "2000", "--count", "none", "--target",
    ];
    let (t, o) = (path_str(&target), path_str(&out));
    args.extend([t.as_str(), "--out", o.as_str()]);
    args.extend(extra);
    let r = iolab_cols(Some(160), &args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    (r, out)
}

/// The lines of the table that follows "in order:" (up to the result line).
fn final_table(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|l| !l.ends_with("in order:"))
        .skip(1)
        .take_while(|l| !l.starts_with("result:"))
        .collect()
}

#[test]
fn long_method_names_keep_columns_aligned_and_md_has_the_same_rows() {
    let dir = tmpfs_dir();
    let md = dir.path().join("t.md");
    let (r, rec) = sweep(
        &dir,
        "method=psync,copy_file_range,sync",
        &["--md", &path_str(&md)],
    );
    let t = final_table(&r.stdout);
    assert_eq!(t.len(), 4, "a head and 3 rows: {}", r.stdout);
    // The last column is right-aligned: every row ends where the head ends.
    let end = t[0].chars().count();
    for l in &t {
        assert_eq!(l.chars().count(), end, "not aligned:\n{}", t.join("\n"));
    }
    // Each column starts where its head starts: the IOPS cells end under "IOPS".
    let iops_end = t[0].find("IOPS").unwrap() + 4;
    for l in &t[1..] {
        assert!(l[..iops_end].ends_with("ops/s"), "{l}\n{}", t.join("\n"));
    }
    human_units(&r.stdout, "sweep");
    // The Markdown export: a head, the alignment row, and the terminal's rows, cell for cell.
    let text = std::fs::read_to_string(&md).unwrap();
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            assert!(l.ends_with(" |"), "{l}");
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 2 + 3, "{text}");
    assert!(rows[1].iter().all(|c| c == "---" || c == "---:"), "{text}");
    for (row, line) in rows.iter().skip(2).zip(&t[1..]) {
        assert_eq!(row.len(), rows[0].len(), "{text}");
        assert_eq!(words(&row.join(" ")), words(line), "{text}");
    }
    assert_eq!(words(&rows[0].join(" ")), words(t[0]));
    // An existing --md file is never replaced.
    let again = iolab(&[
        "compare",
        &path_str(&rec),
        "--across",
        "method",
        "--md",
        &path_str(&md),
    ]);
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stderr.contains("--md"), "{}", again.stderr);
    assert_eq!(std::fs::read_to_string(&md).unwrap(), text);
}

#[test]
fn compare_across_sets_methods_side_by_side() {
    let dir = tmpfs_dir();
    let (_, rec) = sweep(&dir, "method=psync,sync", &[]);
    let md = dir.path().join("c.md");
    let c = iolab_cols(
        Some(80),
        &[
            "compare",
            &path_str(&rec),
            "--across",
            "method",
            "--fail-on-regression",
            "100000",
            "--md",
            &path_str(&md),
        ],
    );
    assert_eq!(c.code, 0, "{}{}", c.stdout, c.stderr);
    fits(&c.stdout, 80, "compare");
    human_units(&c.stdout, "compare");
    let flat = words(&c.stdout).join(" ");
    assert!(
        flat.contains("method psync (A) vs sync (B): psync write bs=4 KiB"),
        "{}",
        c.stdout
    );
    assert!(
        flat.contains("IOPS") && flat.contains("ops/s") && flat.contains("(noise not measured)")
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("| figure | A | B | B/A | noise | verdict |"),
        "{md}"
    );
    // Without --across, psync and sync are different workloads: nothing in common, and a gate refuses.
    let plain = iolab(&[
        "compare",
        &path_str(&rec),
        &path_str(&rec),
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(plain.code, 0, "the same file: {}", plain.stderr);
    // Two files of one method each: only --across matches them.
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for (m, f) in [("psync", &a), ("sync", &b)] {
        let r = iolab(&[
            "run",
            "--method",
            m,
            "--ops",
            "2000",
            "--count",
            "none",
            "--json",
            &path_str(f),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let none = iolab(&[
        "compare",
        &path_str(&a),
        &path_str(&b),
        "--fail-on-regression",
        "5",
    ]);
    assert_eq!(none.code, 2, "{}", none.stdout);
    let across = iolab(&[
        "compare",
        &path_str(&a),
        &path_str(&b),
        "--across",
        "method",
    ]);
    assert_eq!(across.code, 0, "{}", across.stderr);
    assert!(
        across.stdout.contains("method psync (A) vs sync (B)"),
        "{}",
        across.stdout
    );
    let bad = iolab(&["compare", &path_str(&a), "--across", "colour"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--across"), "{}", bad.stderr);
}

#[test]
fn no_view_prints_raw_nanoseconds() {
    let dir = tmpfs_dir();
    let json = dir.path().join("rep.json");
    let rep = iolab(&[
        "run",
        "--target",
        "/dev/null",
        "--ops",
        "2000",
        "--repeat",
        "3",
        "--count",
        "none",
        "--json",
        &path_str(&json),
    ]);
    assert_eq!(rep.code, 0, "{}", rep.stderr);
    human_units(&rep.stdout, "run --repeat");
    assert!(rep.stdout.contains("latency p99"), "{}", rep.stdout);
    let cmp = iolab(&["compare", &path_str(&json), &path_str(&json)]);
    human_units(&cmp.stdout, "compare");
    // A run too short to time a rate says so instead of a rate.
    let short = iolab(&[
        "run",
        "--target",
        "/dev/null",
        "--bs",
        "1m",
        "--ops",
        "1",
        "--method",
        "nop",
        "--count",
        "none",
    ]);
    assert_eq!(short.code, 0, "{}", short.stderr);
    let line = short
        .stdout
        .lines()
        .find(|l| l.starts_with("throughput"))
        .unwrap();
    // One op usually takes under the threshold (2 µs here), but a preempted one may not: then its rate
    // is printed, over a span of microseconds, never of nanoseconds.
    if line.contains("no rate: too short to time") {
        assert!(!line.contains("MiB/s") && !line.contains("GiB/s"), "{line}");
    } else {
        assert!(line.contains(" µs: ") || line.contains(" ms: "), "{line}");
    }
}

#[test]
fn warmup_ops_happen_but_are_in_no_figure() {
    let dir = tmpfs_dir();
    let target = file(&dir, "w.dat");
    let json = dir.path().join("w.json");
    let r = iolab(&[
        "run",
        "--target",
        &path_str(&target),
        "--ops",
        "100",
        "--warmup",
        "300",
        "--file-size",
        "2m",
        "--seed",
        "42",
        "--keep",
        "--count",
        "none",
        "--json",
        &path_str(&json),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let head = r.stdout.lines().next().unwrap();
    assert!(
        head.contains("after a warm-up of 300 ops") && head.contains("in no figure"),
        "{head}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // The totals are the timed ops alone, in iolab's and the kernel's counts.
    assert_eq!(u64_of(&doc, &["ops"]), 100);
    assert_eq!(u64_of(&doc, &["bytes"]), 100 * 4096);
    assert_eq!(u64_of(&doc, &["syscalls", "kernel_rw", "syscw"]), 100);
    assert_eq!(u64_of(&doc, &["warmup", "ops"]), 300);
    assert_eq!(u64_of(&doc, &["warmup", "bytes"]), 300 * 4096);
    assert_eq!(doc["spec"]["warmup"]["ops"], 300);
    // ... and the warm-up did happen: blocks 100-299, which only it wrote, hold the pattern; past it, zeros.
    assert_eq!(check_blocks(&target, 4096, 42, 0, 0..300), (300, 0));
    let data = std::fs::read(&target).unwrap();
    assert!(data[300 * 4096..].iter().all(|&b| b == 0));
    // On a stream, the peer received the warm-up's bytes too, and the run's own bytes are counted apart.
    let s = run_json(&[
        "--target", "pipe", "--method", "sync", "--ops", "1000", "--warmup", "500", "--count",
        "none",
    ]);
    assert_eq!(u64_of(&s, &["bytes"]), 1000 * 4096);
    assert_eq!(u64_of(&s, &["target", "peer", "bytes"]), 1500 * 4096);
    // Seconds: the warm-up runs for about that long, with as many ops as fit.
    let t = run_json(&[
        "--target",
        "/dev/null",
        "--ops",
        "1000",
        "--warmup",
        "50ms",
        "--count",
        "none",
    ]);
    assert!(u64_of(&t, &["warmup", "ops"]) > 0, "{}", t["warmup"]);
    assert_eq!(u64_of(&t, &["ops"]), 1000);
    let bad = iolab(&["run", "--warmup", "1m"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("--warmup") && bad.stderr.contains("ambiguous"),
        "{}",
        bad.stderr
    );
}
