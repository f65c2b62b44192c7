//! The report's charts as a reader meets them: a sweep, a suite and a survey are run for real (small),
//! reported with --svg, and every chart is parsed as XML and measured: no legend box overlaps a
//! plotting area, every axis has a label with a unit, block-size ticks sit on the sizes measured (and
//! the points on the ticks), no chart is constant, legend names are unique, and the page names each
//! chart it left out, with the reason.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The units an axis label may name, as "(UNIT" or "(UNIT, ...)".
const UNITS: &[&str] = &[
    "ns",
    "µs",
    "ms",
    "s",
    "MiB/s",
    "GiB/s",
    "IOPS",
    "%",
    "% of one CPU",
    "bytes per op",
    "calls/op",
    "requests",
    "requests in flight",
    "requests per submission",
    "count",
    "ordinal, per method",
];

#[derive(Debug, Clone, Copy)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Rect {
    fn of(n: roxmltree::Node) -> Rect {
        let a = |k: &str| -> f64 {
            n.attribute(k)
                .unwrap_or_else(|| panic!("{k} of {n:?}"))
                .parse()
                .unwrap()
        };
        Rect {
            x: a("x"),
            y: a("y"),
            w: a("width"),
            h: a("height"),
        }
    }

    fn overlaps(&self, o: &Rect) -> bool {
        self.x < o.x + o.w && o.x < self.x + self.w && self.y < o.y + o.h && o.y < self.y + self.h
    }
}

fn has_class(n: &roxmltree::Node, c: &str) -> bool {
    n.attribute("class")
        .is_some_and(|v| v.split(' ').any(|x| x == c))
}

/// The text of a label: its whole text where it was cut (the tooltip), else what is shown.
fn label_text(n: &roxmltree::Node) -> String {
    n.children()
        .find(|c| c.has_tag_name("title"))
        .and_then(|t| t.text())
        .or_else(|| n.text())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// "4 KiB" as 4096.
fn parse_bytes(s: &str) -> Option<f64> {
    let (n, u) = s.split_once(' ')?;
    let m = match u {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1048576.0,
        "GiB" => 1073741824.0,
        _ => return None,
    };
    Some(n.parse::<f64>().ok()? * m)
}

/// Whether an axis label names a unit: "name (UNIT)" or "name (UNIT, log scale)".
fn names_a_unit(label: &str) -> bool {
    let Some(open) = label.rfind('(') else {
        return false;
    };
    let inside = label[open + 1..].trim_end_matches(')');
    UNITS.contains(&inside) || UNITS.contains(&inside.split(", ").next().unwrap_or(""))
}

/// Every check that holds for any chart; returns the chart's parsed text for more checks.
fn check_chart(path: &Path, measured_bs: &BTreeSet<u64>) {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{name}: not XML: {e}"));
    let nodes: Vec<roxmltree::Node> = doc.descendants().filter(|n| n.is_element()).collect();
    let of = |c: &str| -> Vec<roxmltree::Node> {
        nodes.iter().copied().filter(|n| has_class(n, c)).collect()
    };
    let plots = of("plot-area");
    assert!(!plots.is_empty(), "{name}: no plotting area");
    // The legend sits beside the plots, never on one.
    for l in of("legend-box") {
        let lb = Rect::of(l);
        for p in &plots {
            assert!(
                !lb.overlaps(&Rect::of(*p)),
                "{name}: legend {lb:?} on a plot"
            );
        }
        let width: f64 = doc
            .root_element()
            .attribute("width")
            .unwrap()
            .parse()
            .unwrap();
        assert!(lb.x + lb.w <= width, "{name}: legend past the edge");
    }
    // Every axis is labelled with its unit: an x label per plot, a y label per x-y plot.
    let xl = of("x-label");
    let yl = of("y-label");
    let xy = plots
        .iter()
        .filter(|p| p.attribute("data-kind") == Some("xy"))
        .count();
    assert_eq!(xl.len(), plots.len(), "{name}: x labels");
    assert_eq!(yl.len(), xy, "{name}: y labels");
    for l in xl.iter().chain(&yl) {
        let t = label_text(l);
        assert!(names_a_unit(&t), "{name}: axis label without a unit: {t:?}");
    }
    // Bars are measured from zero, or on a log axis only where their values span a factor of 100 or more
    // (a linear one would squash the small ones to slivers); either way every bar starts at the plot's
    // left edge.
    if let Some(area) = plots
        .iter()
        .find(|p| p.attribute("data-kind") == Some("bars"))
    {
        let vals: Vec<f64> = of("bar")
            .iter()
            .filter_map(|b| b.attribute("data-x")?.parse().ok())
            .collect();
        let (lo, hi) = vals
            .iter()
            .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(*v), b.max(*v)));
        let log = xl.iter().any(|l| label_text(l).contains("log scale"));
        assert_eq!(
            log,
            lo > 0.0 && hi >= 100.0 * lo,
            "{name}: bars from {lo} to {hi}, log axis {log}"
        );
        let left: f64 = area.attribute("x").unwrap().parse().unwrap();
        for b in of("bar") {
            let x: f64 = b.attribute("x").unwrap().parse().unwrap();
            assert!(
                (x - left).abs() <= 1.0,
                "{name}: a bar starts at {x}, the axis at {left}"
            );
        }
    }
    // No chart is constant: its points have two or more values (y), its bars two or more (where they
    // span and how high).
    let num =
        |n: &roxmltree::Node, k: &str| -> Option<String> { n.attribute(k).map(str::to_string) };
    let ys: BTreeSet<String> = of("point")
        .iter()
        .filter_map(|p| num(p, "data-y"))
        .collect();
    let bars: BTreeSet<(Option<String>, Option<String>, Option<String>)> = of("bar")
        .iter()
        .map(|b| (num(b, "data-x"), num(b, "data-x1"), num(b, "data-y")))
        .collect();
    assert!(
        ys.len() >= 2 || bars.len() >= 2,
        "{name}: a constant chart ({ys:?} {bars:?})"
    );
    // Legend names are unique.
    let legend: Vec<String> = of("legend-entry").iter().map(label_text).collect();
    let unique: BTreeSet<&String> = legend.iter().collect();
    assert_eq!(unique.len(), legend.len(), "{name}: legend {legend:?}");
    // Block-size axes are ticked at the sizes measured, and every point sits on a tick.
    if xl.iter().any(|l| label_text(l).starts_with("block size")) {
        let ticks: Vec<(f64, f64)> = of("tick-x")
            .iter()
            .map(|t| {
                let v = parse_bytes(t.text().unwrap().trim())
                    .unwrap_or_else(|| panic!("{name}: tick {:?} is no size", t.text()));
                (v, t.attribute("x").unwrap().parse().unwrap())
            })
            .collect();
        let tick_sizes: BTreeSet<u64> = ticks.iter().map(|t| t.0 as u64).collect();
        assert_eq!(
            &tick_sizes, measured_bs,
            "{name}: ticks at the sizes measured"
        );
        for p in of("point") {
            let cx: f64 = p.attribute("cx").unwrap().parse().unwrap();
            let bs: f64 = p.attribute("data-x").unwrap().parse().unwrap();
            assert!(
                ticks.iter().any(|t| t.0 == bs && (t.1 - cx).abs() <= 1.0),
                "{name}: a point of bs {bs} at x={cx} off its tick {ticks:?}"
            );
        }
    }
}

/// The block sizes of the records in `file` that have results (sweep and suite record files).
fn measured_sizes(records: &[serde_json::Value]) -> BTreeSet<u64> {
    records
        .iter()
        .filter_map(|r| r["result"]["spec"]["bs"].as_u64())
        .collect()
}

fn records(file: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Reports `inputs` into `dir/NAME.html` and `dir/NAME-svg/`; returns the page and each chart's path.
fn report_of(dir: &Path, name: &str, inputs: &[&Path]) -> (String, Vec<PathBuf>) {
    let html = dir.join(format!("{name}.html"));
    let svgs = dir.join(format!("{name}-svg"));
    let mut args = vec!["report".to_string()];
    args.extend(inputs.iter().map(|p| path_str(p)));
    args.extend([
        "-o".into(),
        path_str(&html),
        "--svg".into(),
        path_str(&svgs),
    ]);
    let r = iolab(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.code, 0, "report {name}: {}", r.stderr);
    // Flame graphs (profiled points: the blocksize suite's Figure 4 steps) are no charts with axes; the
    // profile tests check them.
    let mut charts: Vec<PathBuf> = std::fs::read_dir(&svgs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("flame-")
        })
        .collect();
    charts.sort();
    (std::fs::read_to_string(&html).unwrap(), charts)
}

/// The page's list of charts left out: each names a chart and a reason, and no chart of that title
/// was drawn.
fn check_left_out(page: &str, charts: &[PathBuf]) -> Vec<String> {
    let Some(start) = page.find("<ul class=\"left-out\">") else {
        return Vec::new();
    };
    let list = &page[start..start + page[start..].find("</ul>").unwrap()];
    let items: Vec<String> = list
        .split("<li>")
        .skip(1)
        .map(|i| i.split("</li>").next().unwrap().to_string())
        .collect();
    for i in &items {
        let (title, why) = i.split_once(": ").unwrap();
        assert!(
            why.contains("are equal")
                || why.contains("one value")
                || why.contains("one bucket")
                || why.contains("carried"),
            "{i}"
        );
        for c in charts {
            let svg = std::fs::read_to_string(c).unwrap();
            assert!(
                !svg.contains(&format!(">{title}</text>")),
                "{title} is left out but drawn in {}",
                c.display()
            );
        }
    }
    items
}

fn names(charts: &[PathBuf]) -> Vec<String> {
    charts
        .iter()
        .map(|c| c.file_stem().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// The page opens with its answer before the runs: a row per line (qd and threads), each naming the block
/// size of the line's highest throughput among the records.
fn check_sweep_answer(page: &str, recs: &[serde_json::Value]) {
    let (Some(at), Some(runs)) = (page.find("<h2>The answer</h2>"), page.find("<h2>Runs</h2>"))
    else {
        panic!("no answer before the runs");
    };
    assert!(at < runs, "the answer comes after the runs");
    let table = &page[at..runs];
    let mut best: std::collections::BTreeMap<String, (f64, u64)> = Default::default();
    for r in recs.iter().filter_map(|r| r.get("result")) {
        let n = |k: &str| r["spec"][k].as_u64().unwrap();
        let line = format!("qd={} threads={}", n("qd"), n("threads"));
        let mib = r["mib_s"].as_f64().unwrap();
        let e = best.entry(line).or_insert((f64::MIN, 0));
        if mib > e.0 {
            *e = (mib, n("bs"));
        }
    }
    let rows: Vec<Vec<String>> = table
        .split("<tr><td>")
        .skip(1)
        .map(|r| {
            r.split("</td><td>")
                .map(|c| c.split("</td>").next().unwrap().to_string())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), best.len(), "a row per line: {rows:?}");
    for row in &rows {
        let (_, bs) = best[&row[0]];
        assert_eq!(row[1], format!("{} KiB", bs / 1024), "best bs of {row:?}");
        assert!(
            row[5].contains("over ") || row[5].starts_with("within noise of "),
            "{row:?}"
        );
    }
}

/// One colour per series name across the page's charts, and no two of a chart's series alike.
fn check_colours(charts: &[PathBuf]) {
    let mut of: std::collections::HashMap<String, String> = Default::default();
    for c in charts {
        let svg = std::fs::read_to_string(c).unwrap();
        let d = roxmltree::Document::parse(&svg).unwrap();
        let mut here = BTreeSet::new();
        for e in d.descendants().filter(|n| has_class(n, "legend-entry")) {
            let name = e.descendants().find(|n| n.has_tag_name("title")).unwrap();
            let swatch = e
                .descendants()
                .find_map(|n| n.attribute("stroke").or(n.attribute("fill")))
                .unwrap();
            let name = label_text(&name);
            assert!(
                here.insert(swatch.to_string()),
                "{name}: colour twice in {c:?}"
            );
            let first = of.entry(name.clone()).or_insert(swatch.to_string());
            assert_eq!(first, swatch, "{name} in two colours ({c:?})");
        }
    }
    assert!(of.len() > 3, "legends: {of:?}");
}

#[test]
fn a_sweep_report_charts_each_figure_against_each_swept_key() {
    let dir = tmpfs_dir();
    let out = dir.path().join("sweep.jsonl");
    let target = dir.path().join("s.dat");
    let r = iolab(&[
        "sweep",
        "--method",
        "io_uring",
        "--target",
        &path_str(&target),
        "--vary",
        "bs=4k,64k,256k",
        "--vary",
        "qd=1,4",
        "--vary",
        "threads=1,2",
        "--ops",
        "200",
        "--count",
        "none",
        "--out",
        &path_str(&out),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let recs = records(&out);
    if recs.iter().all(|r| r.get("result").is_none()) {
        skip(
            "io_uring",
            &format!("sweep report: io_uring ran no point here: {}", r.stdout),
        );
        return;
    }
    let sizes = measured_sizes(&recs);
    let (page, charts) = report_of(dir.path(), "sweep", &[&out]);
    check_sweep_answer(&page, &recs);
    check_colours(&charts);
    let n = names(&charts);
    // A qd x threads x bs sweep gets IOPS (and the other figures) against each key.
    for want in [
        "throughput-vs-bs",
        "iops-vs-qd",
        "iops-vs-threads",
        "p99-latency-vs-bs",
        "latency-percentiles",
        "latency-cdf",
        "time-between-ops",
    ] {
        assert!(n.iter().any(|x| x == want), "{want} missing from {n:?}");
    }
    for c in &charts {
        check_chart(c, &sizes);
    }
    check_left_out(&page, &charts);
    // The percentiles are on a nines axis: p50 to p99 (and further where the op count resolves it).
    let pct =
        std::fs::read_to_string(dir.path().join("sweep-svg/latency-percentiles.svg")).unwrap();
    let d = roxmltree::Document::parse(&pct).unwrap();
    let ticks: Vec<String> = d
        .descendants()
        .filter(|n| has_class(n, "tick-x"))
        .map(|n| label_text(&n))
        .collect();
    for t in ["p50", "p90", "p99"] {
        assert!(ticks.iter().any(|x| x == t), "{t}: {ticks:?}");
    }

    // The same records from a second file: every label says which file it is from.
    let copy = dir.path().join("again.jsonl");
    std::fs::copy(&out, &copy).unwrap();
    let (page, charts) = report_of(dir.path(), "mixed", &[&out, &copy]);
    let tp = std::fs::read_to_string(dir.path().join("mixed-svg/throughput-vs-bs.svg")).unwrap();
    assert!(
        tp.contains("file=sweep.jsonl") && tp.contains("file=again.jsonl"),
        "the legend names the files"
    );
    let rows: Vec<&str> = page
        .split("<tr><td>")
        .skip(1)
        .map(|r| r.split("</td>").next().unwrap())
        .collect();
    let unique: BTreeSet<&&str> = rows.iter().collect();
    assert_eq!(unique.len(), rows.len(), "table labels: {rows:?}");
    for c in &charts {
        check_chart(c, &sizes);
    }
}

#[test]
fn a_suite_report_draws_small_multiples_per_step() {
    let dir = tmpfs_dir();
    let out = dir.path().join("blocksize.jsonl");
    let r = iolab(&[
        "suite",
        "blocksize",
        "--quick",
        "--out",
        &path_str(&out),
        "--disk-dir",
        &path_str(dir.path()),
        "--tmpfs-dir",
        &path_str(dir.path()),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let recs = records(&out);
    let sizes = measured_sizes(&recs);
    // The copy share is drawn for the profiled points only (the Figure 4 steps): ticked at their sizes.
    let profiled: Vec<serde_json::Value> = recs
        .iter()
        .filter(|r| r["result"]["profile"].is_object())
        .cloned()
        .collect();
    let profiled_sizes = measured_sizes(&profiled);
    let (page, charts) = report_of(dir.path(), "suite", &[&out]);
    check_colours(&charts);
    for c in &charts {
        let copy_share = c.file_stem().is_some_and(|s| s == "copy-share-vs-bs");
        check_chart(c, if copy_share { &profiled_sizes } else { &sizes });
    }
    // Every run is drawn (none left out for being twelfth or later), each step in a panel or a legend.
    let tp = std::fs::read_to_string(dir.path().join("suite-svg/throughput-vs-bs.svg")).unwrap();
    let doc = roxmltree::Document::parse(&tp).unwrap();
    let named: Vec<String> = doc
        .descendants()
        .filter(|n| has_class(n, "panel-title") || n.has_tag_name("text"))
        .map(|n| label_text(&n))
        .collect();
    let ran: Vec<&serde_json::Value> = recs
        .iter()
        .filter(|r| r["result"]["mib_s"].as_f64().is_some_and(|v| v > 0.0))
        .collect();
    let points = doc.descendants().filter(|n| has_class(n, "point")).count();
    assert_eq!(points, ran.len(), "a point per run");
    let steps: BTreeSet<&str> = ran
        .iter()
        .filter_map(|r| r["point"]["step"].as_str())
        .collect();
    for s in &steps {
        assert!(
            named
                .iter()
                .any(|p| p == s || p.starts_with(&format!("{s} "))),
            "{s}: {named:?}"
        );
    }
    // Syscalls are not counted in this suite (psync makes one per op): that chart says why it is not there.
    let left = check_left_out(&page, &charts);
    let counted: BTreeSet<String> = recs
        .iter()
        .filter_map(|r| r["result"]["syscalls"]["method_per_op"].as_f64())
        .map(|v| format!("{v:.6}"))
        .collect();
    if counted.len() == 1 {
        assert!(
            left.iter().any(|l| l.starts_with("System calls per op")),
            "{left:?}"
        );
        assert!(!names(&charts).iter().any(|n| n.starts_with("syscalls")));
    }
}

#[test]
fn a_survey_report_ranks_the_methods_per_target() {
    let dir = tmpfs_dir();
    let results = dir.path().join("results");
    let r = iolab(&[
        "survey",
        "--ops",
        "300",
        "--max-seconds",
        "1",
        "--max-time",
        "0",
        "--results-dir",
        &path_str(&results),
        "--tmp-dir",
        &path_str(dir.path()),
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let json = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let sizes: BTreeSet<u64> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["result"].is_null())
        .filter_map(|r| r["bs"].as_u64())
        .collect();
    let (page, charts) = report_of(dir.path(), "survey", &[&json]);
    check_colours(&charts);
    let n = names(&charts);
    assert!(n.iter().any(|x| x == "iops-vs-method"), "{n:?}");
    for c in &charts {
        check_chart(c, &sizes);
    }
    check_left_out(&page, &charts);
    // The page opens with the answer: the ranking per target and block size, on a log axis.
    let answer = page
        .find("<h2>The answer</h2>")
        .expect("the answer section");
    assert!(
        answer < page.find("<h2>Runs</h2>").unwrap(),
        "the answer comes first"
    );
    for t in ["writes to /dev/null", "writes to file", "writes to pipe"] {
        assert!(page[answer..].contains(t), "{t}");
    }
    assert!(page.contains("log axis: "), "the bars' axis is named");
    // A section per target, each ranking the methods that ran on it.
    let svg = std::fs::read_to_string(dir.path().join("survey-svg/iops-vs-method.svg")).unwrap();
    let d = roxmltree::Document::parse(&svg).unwrap();
    let sections: Vec<String> = d
        .descendants()
        .filter(|n| has_class(n, "section-title"))
        .map(|n| label_text(&n))
        .collect();
    for t in ["target=/dev/null", "target=file", "target=pipe"] {
        assert!(sections.iter().any(|s| s == t), "{t}: {sections:?}");
    }
    let rows: Vec<String> = d
        .descendants()
        .filter(|n| has_class(n, "bar-label"))
        .map(|n| label_text(&n))
        .collect();
    assert!(
        rows.iter().any(|r| r == "psync") && rows.iter().any(|r| r == "io_uring"),
        "{rows:?}"
    );
    // The runs that could not run are in the table with the reason.
    assert!(
        page.contains("not run: --method: mmap cannot map /dev/null"),
        "mmap on /dev/null"
    );
}
