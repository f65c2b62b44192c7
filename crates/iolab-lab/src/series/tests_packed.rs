//! What a reader that shows part of each record holds: items it finds nothing in left out, points and
//! long arrays packed (and given back as they were), a point that is a text in a file refused.

use super::records::records_of;
use super::*;
use std::path::Path;

#[test]
fn items_a_reader_finds_nothing_in_are_not_held_and_a_survey_runs_each_once() {
    use super::Keep;
    let paths: &[&[&str]] = &[&["intervals", "iops"]];
    let rec = serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 1.0,
        "intervals": [{}, [], 3, {"iops": 2.0, "ops": 1}, {"ops": 1}]}});
    let f = super::stream::read_from(
        format!("{rec}\n").as_bytes(),
        Path::new("k"),
        Keep::Paths(paths),
    )
    .unwrap();
    // Packed: the one item holding the figure.
    let mut held = f.records[0]["result"]["intervals"].clone();
    assert!(super::packed::is_packed(&held), "{held}");
    super::packed::unpack_all(&mut held);
    assert_eq!(held, serde_json::json!([{"iops": 2.0}]));
    let run = |m: &str| {
        serde_json::json!({"target": "/dev/null", "method": m, "bs": 4,
            "result": {"spec": {}, "iops": 1.0}})
    };
    let survey = |runs: Vec<serde_json::Value>| {
        serde_json::to_string_pretty(&serde_json::json!({"ranking": [], "runs": runs})).unwrap()
    };
    assert!(records_of(&survey(vec![run("psync"), run("sync")]), Path::new("s")).is_ok());
    let e = records_of(
        &survey(vec![run("psync"), run("sync"), run("psync")]),
        Path::new("s"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("runs 1 and 3 are of one target, method and block size"),
        "{e}"
    );
}

#[test]
fn a_packed_point_gives_back_every_key_and_value_in_order_and_a_text_point_in_a_file_is_refused() {
    let pairs = [
        ("step", "a:b"),
        ("target", "/tmp/ü 1:2"),
        ("seed", ""),
        ("12", "3:"),
        ("bs", "4k"),
    ];
    let point: serde_json::Map<String, serde_json::Value> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), (*v).into()))
        .collect();
    let line = serde_json::json!({"point": point, "error": "refused", "exit_code": 2});
    let text = format!("{line}\n{line}\n");
    for keep in [Keep::All, Keep::Paths(&[&["iops"]])] {
        let f = super::stream::read_from(text.as_bytes(), Path::new("k"), keep).unwrap();
        // Two records of one point that did not run: the later is kept.
        assert_eq!(f.records.len(), 1);
        let mut r = f.records[0].clone();
        // Packed only where a reader keeps part of each record.
        assert_eq!(r["point"].is_string(), matches!(keep, Keep::Paths(_)));
        let want: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(record_point(&r), want);
        assert_eq!(point_get(&r, "target").as_deref(), Some("/tmp/ü 1:2"));
        assert_eq!(point_get(&r, "seed").as_deref(), Some(""));
        assert_eq!(point_get(&r, "none"), None);
        point_remove(&mut r, "12");
        assert_eq!(r["point"].is_string(), matches!(keep, Keep::Paths(_)));
        let left: Vec<_> = want.iter().filter(|(k, _)| k != "12").cloned().collect();
        assert_eq!(record_point(&r), left);
    }
    // A point that is a text in the file is no record iolab wrote, whatever the reader keeps.
    let forged = r#"{"point": "4:step1:a", "error": "x", "exit_code": 2}"#;
    for keep in [Keep::All, Keep::Paths(&[&["iops"]])] {
        let Err(e) = super::stream::read_from(forged.as_bytes(), Path::new("k"), keep) else {
            panic!("a text point was read");
        };
        assert!(e.to_string().contains("its point is not an object"), "{e}");
    }
}

#[test]
fn a_runs_memory_readings_are_packed_where_a_reader_draws_them_and_kept_whole_elsewhere() {
    let rec = serde_json::json!({"point": {"bs": "4"}, "result": {"spec": {}, "iops": 1.0,
        "memory": {"limit": 64, "over_time": [
            {"t_s": 0.1, "page_cache": 3.0, "limit_hits": 0},
            {"t_s": 0.2, "page_cache": 5.0, "limit_hits": 1}]}}});
    let text = format!("{rec}\n{rec}\n");
    let paths: &[&[&str]] = &[
        &["memory", "over_time"],
        &["memory", "over_time", "t_s"],
        &["memory", "over_time", "page_cache"],
    ];
    let f = super::stream::read_from(text.as_bytes(), Path::new("k"), Keep::Paths(paths)).unwrap();
    for r in &f.records {
        let held = &r["result"]["memory"]["over_time"];
        assert!(super::packed::is_packed(held), "{held}");
        assert_eq!(
            item_pairs(held, "t_s", "page_cache"),
            [(0.1, 3.0), (0.2, 5.0)]
        );
        assert!(item_pairs(held, "t_s", "limit_hits").is_empty());
    }
    let f = super::stream::read_from(text.as_bytes(), Path::new("k"), Keep::All).unwrap();
    let whole = &f.records[0]["result"]["memory"]["over_time"];
    assert_eq!(whole, &rec["result"]["memory"]["over_time"]);
}

#[test]
fn a_surveys_rounds_are_packed_for_a_reader_that_asks_for_them_and_not_held_for_others() {
    let round_runs: Vec<serde_json::Value> = (1..=1024)
        .map(|k| serde_json::json!({"round": k, "ns_per_op": 100.0 + k as f64 / 3.0, "disturbed": k % 5 == 0}))
        .collect();
    let rounds: Vec<f64> = (1..=1024).map(|k| 100.0 + k as f64 / 7.0).collect();
    let doc = |n: usize| {
        let run = serde_json::json!({"target": "file", "method": "psync", "bs": 4,
            "result": {"spec": {}, "iops": 1.0}, "rounds_ns_per_op": rounds,
            "round_runs": round_runs[..n.min(1024)].iter().chain(&round_runs[..n.saturating_sub(1024)]).collect::<Vec<_>>()});
        serde_json::json!({"ranking": [], "findings": [{"text": "t", "rule": "r"}], "runs": [run]})
            .to_string()
    };
    let report: &[&[&str]] = &[
        &["rounds_ns_per_op"],
        &["round_runs"],
        &["round_runs", "round"],
        &["round_runs", "ns_per_op"],
        &["round_runs", "disturbed"],
        &["findings", "text"],
    ];
    let read = |t: &str, keep| super::stream::read_from(t.as_bytes(), Path::new("s"), keep);
    let f = read(&doc(1024), Keep::Paths(report)).unwrap();
    let run = &f.records[0]["result"];
    // As a whole read holds them (parsed from the same text).
    let all = read(&doc(1024), Keep::All).unwrap();
    for k in ["round_runs", "rounds_ns_per_op"] {
        assert!(super::packed::is_packed(&run[k]), "{k} is not packed");
        let (got, want) = (items(&run[k]), items(&all.records[0]["result"][k]));
        assert_eq!(got.len(), 1024, "{k}");
        let differs = got.iter().zip(want.iter()).find(|(a, b)| a != b);
        assert!(differs.is_none(), "{k}: {differs:?}");
    }
    // The survey's own findings are kept whole, not cut to a run's finding's text.
    assert_eq!(f.document.unwrap()["findings"][0]["rule"], "r");
    // A reader that does not ask for them holds none.
    let f = read(&doc(1024), Keep::Paths(&[&["iops"]])).unwrap();
    assert!(f.records[0]["result"].get("round_runs").is_none());
    assert!(f.records[0]["result"].get("rounds_ns_per_op").is_none());
    // More rounds than a survey runs are refused, packed or not.
    let e = match read(&doc(1025), Keep::Paths(report)) {
        Ok(_) => panic!("1,025 rounds were read"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("`round_runs` holds more than 1024 items"), "{e}");
}

#[test]
fn a_long_value_where_iolab_writes_a_short_one_is_refused_naming_it() {
    let read = |v: serde_json::Value, keep| {
        super::stream::read_from(format!("{v}\n").as_bytes(), Path::new("k"), keep)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let zeros = |n: usize| serde_json::json!(vec![0; n]);
    // Where a reader's path ends: a CPU's model of 5,000 numbers (held whole where nothing is cut).
    let host = serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 1.0,
        "host": {"cpu_model": zeros(5000), "cpus_online": 2}}});
    let model: &[&[&str]] = &[&["iops"], &["host", "cpu_model"]];
    let e = read(host.clone(), Keep::Paths(model));
    assert!(e.contains("`cpu_model` holds more than 4096 values"), "{e}");
    assert_eq!(read(host, Keep::All), "");
    // An object forged where iolab writes a list it packs is bounded as well; the list itself is not
    // counted (a deep queue's batch sizes: 3,000 pairs).
    let uring = |h: serde_json::Value| {
        serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 1.0,
            "uring": {"batch_histogram": h}}})
    };
    let sizes: &[&[&str]] = &[&["iops"], &["uring", "batch_histogram"]];
    let e = read(
        uring(serde_json::json!({"a": zeros(5000)})),
        Keep::Paths(sizes),
    );
    assert!(
        e.contains("`batch_histogram` holds more than 4096 values"),
        "{e}"
    );
    let pairs: Vec<[u64; 2]> = (1..=3000).map(|k| [k, 1]).collect();
    assert_eq!(
        read(uring(serde_json::json!(pairs)), Keep::Paths(sizes)),
        ""
    );
    // A record's repeat, and a survey's findings, beyond what iolab writes in them.
    let iops: &[&[&str]] = &[&["iops"]];
    let repeat = serde_json::json!({"point": {}, "repeat": {"run": 1, "of": 2, "x": zeros(2000)},
        "result": {"spec": {}, "iops": 1.0}});
    let e = read(repeat, Keep::Paths(iops));
    assert!(e.contains("`repeat` holds more than 1024 values"), "{e}");
    let survey = serde_json::json!({"ranking": [], "runs": [],
        "findings": [{"rule": "r", "text": "t", "x": zeros(20_000)}]});
    let e = read(survey, Keep::Paths(iops));
    assert!(e.contains("`findings` holds more than 16384 values"), "{e}");
}

#[test]
fn a_read_that_keeps_records_whole_packs_nothing() {
    // Readers of whole records read them as iolab's types (a suite's rows, a kernels summary, a resumed
    // sweep): a packed quantile list or batch-size list there made every io_uring row unreadable.
    let rec = serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 1.0,
        "latency": {"p99_ns": 2.0, "cdf": [[0.5, 1.0], [1.0, 2.0]]}, "gap": {"buckets": [[1.0, 2]]},
        "uring": {"batch_histogram": [[1, 2], [4, 5]]}, "profile": {"folded": ["a;b 1"]}}});
    let text = format!("{rec}\n");
    let read = |keep| super::stream::read_from(text.as_bytes(), Path::new("k"), keep).unwrap();
    let whole = read(Keep::All);
    assert_eq!(whole.records[0], rec);
    let paths: &[&[&str]] = &[
        &["latency", "cdf"],
        &["gap", "buckets"],
        &["uring", "batch_histogram"],
        &["profile", "folded"],
    ];
    let cut = read(Keep::Paths(paths));
    let r = &cut.records[0]["result"];
    for (at, key) in [
        ("latency", "cdf"),
        ("gap", "buckets"),
        ("uring", "batch_histogram"),
        ("profile", "folded"),
    ] {
        assert!(
            super::packed::is_packed(&r[at][key]),
            "{at}.{key} is not packed: {r}"
        );
        assert_eq!(
            items(&r[at][key]).into_owned(),
            *rec["result"][at][key].as_array().unwrap()
        );
    }
}

/// A record is checked whole, then held with only what its reader reads: a decimal-lines run's
/// disturbance and bytes (read by the check alone) are let go, on the first line (parsed whole) and on
/// the lines after it (cut down as parsed), while a disturbance no run can have is still refused.
#[test]
fn what_only_the_check_reads_is_let_go_once_checked() {
    use super::Keep;
    let rec = |run: u32, runqueue: f64| {
        serde_json::json!({"point": {"run": run.to_string()}, "result": {"workload": "decimal-lines",
            "spec": {"method": "stdio", "lines": 10}, "wall_s": 0.5, "bytes": 40,
            "host": {"cpus_online": 2, "cpu_model": "x"},
            "disturbance": {"runqueue_share": runqueue, "steal_share": 0.0, "psi_some": 0.1,
                "others_cpus": 1.0}}})
    };
    let paths: &[&[&str]] = &[&["wall_s"], &["spec", "method"], &["host", "cpu_model"]];
    let read = |recs: &[serde_json::Value]| {
        let text: String = recs.iter().map(|r| format!("{r}\n")).collect();
        super::stream::read_from(text.as_bytes(), Path::new("l"), Keep::Paths(paths))
    };
    let f = read(&[rec(1, 0.5), rec(2, 0.5), rec(3, 0.5)]).unwrap();
    assert_eq!(f.records.len(), 3);
    for r in &f.records {
        let res = &r["result"];
        assert_eq!(res["wall_s"], 0.5, "{r}");
        assert_eq!(res["spec"], serde_json::json!({"method": "stdio"}), "{r}");
        assert_eq!(res["host"], serde_json::json!({"cpu_model": "x"}), "{r}");
        for gone in ["disturbance", "bytes", "lines"] {
            assert!(res.get(gone).is_none(), "{gone} held: {r}");
        }
    }
    // Read whole (--resume, a fleet), nothing is let go.
    let whole = format!("{}\n{}\n", rec(1, 0.5), rec(2, 0.5));
    let f = super::stream::read_from(whole.as_bytes(), Path::new("l"), Keep::All).unwrap();
    assert_eq!(f.records[1]["result"]["disturbance"]["runqueue_share"], 0.5);
    for at in [0, 2] {
        let mut recs = vec![rec(1, 0.5), rec(2, 0.5), rec(3, 0.5)];
        recs[at] = rec(at as u32 + 1, 1e9);
        let Err(e) = read(&recs) else {
            panic!("a run queue share of 1e9 on line {} was taken", at + 1)
        };
        let e = e.to_string();
        assert!(
            e.contains(&format!("line {}", at + 1)) && e.contains("runqueue_share"),
            "{e}"
        );
    }
}

/// A forged value is refused by every reader, whichever parts of the record it keeps: `report` took a
/// spec of 2,000 values, a number past a float's range and a lone surrogate in what it passes over, and
/// `compare` a CPU model of 100,000 bytes and a latency CDF of 65 quantiles, each refused by the other.
#[test]
fn a_forged_value_is_refused_whichever_parts_a_reader_keeps() {
    use super::Keep;
    let line = |result_more: &str, spec_more: &str, model: &str| {
        format!(
            "{{\"point\":{{\"bs\":\"4k\"}},\"result\":{{\"spec\":{{\"method\":\"psync\",\"bs\":4096\
             {spec_more}}},\"wall_s\":0.5,\"ops\":10,\"host\":{{\"cpus_online\":2,\"cpu_model\":\
             \"{model}\"}}{result_more}}}}}\n"
        )
    };
    let shows: &[&[&str]] = &[&["wall_s"], &["spec", "method"]];
    let whole_spec: &[&[&str]] = &[&["wall_s"], &["spec"], &["host", "cpu_model"]];
    let read = |text: &str, paths| {
        super::stream::read_from(text.as_bytes(), Path::new("l"), Keep::Paths(paths))
    };
    let good = line("", "", "x");
    for paths in [shows, whole_spec] {
        assert_eq!(read(&good, paths).unwrap().records.len(), 1, "{good}");
    }
    let zeros = vec!["0"; 2000].join(",");
    let forged = [
        (
            line("", &format!(",\"ring\":{{\"recommended\":[{zeros}]}}"), "x"),
            "`spec` holds more than 128 values",
        ),
        (
            line("", "", &"A".repeat(2000)),
            "host.cpu_model is 2,000 bytes long",
        ),
        (line(",\"unread\":\"\\ud800\"", "", "x"), "not whole JSON"),
        (
            line(&format!(",\"unread\":{}", "9".repeat(400)), "", "x"),
            "number out of range",
        ),
        (
            line(
                &format!(",\"latency\":{{\"cdf\":[{}]}}", vec!["[1,2]"; 65].join(",")),
                "",
                "x",
            ),
            "`cdf` holds more than 64 items",
        ),
    ];
    for (text, why) in &forged {
        for paths in [shows, whole_spec] {
            let Err(e) = read(text, paths) else {
                panic!("taken by a reader of {paths:?}: {why}")
            };
            assert!(e.to_string().contains(why), "{paths:?}: {e}");
        }
    }
}
