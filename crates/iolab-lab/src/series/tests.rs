use super::records::{records_of, settings_diff};
use super::*;
use crate::series::records::retried;
use crate::series::records::TARGET_EXISTS;
use iolab_engine::stats::stat;
use std::path::Path;

#[test]
fn stats_are_exact() {
    let s = stat(&[3.0, 1.0, 2.0, 10.0]).unwrap();
    assert_eq!((s.n, s.median, s.min, s.max), (4, 2.5, 1.0, 10.0));
    assert!((s.spread_pct - 360.0).abs() < 1e-9);
    // Mean 4, squared deviations 1 + 9 + 4 + 36 = 50, population variance 12.5.
    assert!((s.stdev - 12.5f64.sqrt()).abs() < 1e-12);
    let one = stat(&[5.0]).unwrap();
    assert_eq!((one.stdev, one.spread_pct), (0.0, 0.0));
    assert!(stat(&[]).is_none());
}

#[test]
fn points_are_the_product_in_flag_order() {
    let v = vec![
        parse_vary("method=psync,io_uring").unwrap(),
        parse_vary("bs=4k,64k,1m").unwrap(),
    ];
    let p = points(&v);
    assert_eq!(p.len(), 6);
    assert_eq!(point_label(&p[0]), "method=psync bs=4k");
    assert_eq!(point_label(&p[1]), "method=psync bs=64k");
    assert_eq!(point_label(&p[5]), "method=io_uring bs=1m");
    let e = parse_vary("colour=red").unwrap_err().to_string();
    assert!(e.contains("--vary") && e.contains("colour"), "{e}");
    assert!(parse_vary("bs")
        .unwrap_err()
        .to_string()
        .contains("KEY=V1,V2"));
    assert!(point_raw(&[("direct".into(), "true".into())]).is_ok());
}

#[test]
fn settings_name_what_differs_and_later_records_replace_refusals() {
    let fixed =
        |ops: &str| std::collections::BTreeMap::from([("ops".to_string(), ops.to_string())]);
    let pts = |vals: &[&str]| -> Vec<Vec<(String, String)>> {
        vals.iter()
            .map(|v| vec![("bs".to_string(), v.to_string())])
            .collect()
    };
    let a = settings(&fixed("100"), &pts(&["4k", "64k"]));
    assert!(settings_diff(&a, &a.clone()).is_empty());
    let b = settings(&fixed("200"), &pts(&["4k", "1m"]));
    assert_eq!(
        settings_diff(&a, &b),
        vec![
            "ops (recorded 100, now 200)".to_string(),
            "vary bs (recorded 4k,64k, now 4k,1m)".to_string()
        ]
    );
    // A long list by its first values and its length.
    let seeds: Vec<String> = (1..=20_000).map(|n| n.to_string()).collect();
    let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
    let long = settings(&fixed("100"), &pts(&seeds));
    assert_eq!(
        settings_diff(&long, &a),
        vec!["vary bs (recorded 1,2,3,4,5,6,7,8,... (20000 values), now 4k,64k)".to_string()]
    );
    let p = vec![("bs".to_string(), "4k".to_string())];
    let refused = record(
        &p,
        Err((
            2,
            format!("--overwrite: /x {TARGET_EXISTS}; add --overwrite"),
        )),
    );
    assert!(retried(&refused));
    assert!(!retried(&record(
        &p,
        Err((2, "--qd: psync has none".into()))
    )));
    // Failed at run time (no space), or refused for its target's state: run again; not available: done.
    assert!(retried(&record(
        &p,
        Err((1, "pwrite failed: ENOSPC".into()))
    )));
    let ro = "--target: /m/x is on a read-only filesystem".to_string();
    assert!(retried(&record(&p, Err((2, ro)))));
    let na = "not available on this machine: ENOSYS".to_string();
    assert!(!retried(&record(&p, Err((1, na)))));
    let ran = record(&p, Ok(serde_json::json!({"spec": {}})));
    let text = format!("{refused}\n{ran}\n");
    let (recs, cut) = records_of(&text, Path::new("x")).unwrap();
    assert_eq!((recs, cut), (vec![ran], 0));
    // A point is the same whatever its keys' order; another point's refusal between them stays, and so
    // does a refusal of the point recorded again after it ran.
    let ab: Vec<(String, String)> = [("a", "1"), ("b", "2")]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
    let ba: Vec<(String, String)> = ab.iter().rev().cloned().collect();
    let other = vec![("a".to_string(), "3".to_string())];
    let no = |p: &[(String, String)]| record(p, Err((1, "pwrite failed: ENOSPC".into())));
    let yes = record(&ba, Ok(serde_json::json!({"spec": {}})));
    let text = format!("{}\n{}\n{yes}\n{}\n", no(&ab), no(&other), no(&ba));
    let (recs, _) = records_of(&text, Path::new("x")).unwrap();
    assert_eq!(recs, vec![no(&other), yes, no(&ba)]);
}

#[test]
fn the_recorder_knows_each_record_line_across_a_resume() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    let settings = serde_json::json!({"ops": "10"});
    let rec = |n: u32| serde_json::json!({"point": {"n": n.to_string()}, "result": {"ns_per_op": 0.1 + n as f64 / 3.0}});
    {
        let mut r = Recorder::open(Some(&out), false, "t", settings.clone(), &[], None).unwrap();
        r.push(rec(1)).unwrap();
        r.push(rec(2)).unwrap();
        r.push(rec(9)).unwrap();
        r.push(serde_json::json!({"summary": {"answers": []}}))
            .unwrap();
        assert_eq!(r.line_of(r.last().unwrap()), 3, "the summary is not held");
    }
    // A cut-short line, dropped at the resume.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&out)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"{\"point\": {\"n\""))
        .unwrap();
    let point = |n: u32| vec![("n".to_string(), n.to_string())];
    let mut r =
        Recorder::open(Some(&out), true, "t", settings, &[point(1), point(2)], None).unwrap();
    r.push(rec(3)).unwrap();
    // Point 1 recorded again (run again): its latest record is held, on the line it went to.
    r.push(rec(1)).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let at = |n: u32| r.line_of(r.latest(&point(n)).unwrap());
    for n in 1..=3 {
        let line: serde_json::Value = serde_json::from_str(lines[at(n) - 1]).unwrap();
        assert_eq!(line["point"], rec(n)["point"], "line {}", at(n));
    }
    // Two records read back, the summary skipped, the new ones after it; a point this resume does not
    // run is not held.
    assert_eq!((at(1), at(2), at(3)), (6, 2, 5));
    assert!(r.has(&point(2)) && !r.has(&point(4)));
    assert!(r.latest(&point(9)).is_none());
    assert_eq!(r.line_of(&rec(1)), 0, "a value the recorder does not hold");
    // The settings are written whole once, in the file's first record, and named in each one after
    // (a record's size does not grow with the points); none is held with a record.
    let settings: Vec<serde_json::Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("point").is_some())
        .map(|v| v["settings"].clone())
        .collect();
    assert_eq!(settings[0], serde_json::json!({"ops": "10"}));
    assert!(
        settings[1..]
            .iter()
            .all(|s| s == super::check::SAME_SETTINGS),
        "{settings:?}"
    );
    assert!(r.latest(&point(3)).unwrap().get("settings").is_none());
    // Without the record that holds them, the records after it are no file iolab wrote as it is.
    drop(r);
    let rest: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&out, rest).unwrap();
    let settings = serde_json::json!({"ops": "10"});
    let e = Recorder::open(Some(&out), true, "t", settings, &[point(1)], None).err();
    let e = e.map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("no record before it holds them"), "{e}");
}

#[test]
fn a_byte_no_json_holds_is_refused_at_its_offset_and_a_file_of_records_starts_with_an_object() {
    let good = "{\"point\": {}, \"result\": {\"spec\": {}}}\n";
    let e = records_of(&format!("{good}\0\0\0"), Path::new("x")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "x: not JSON text: byte {} is 0x00, which no JSON text holds",
            good.len()
        )
    );
    let e = records_of("hello\n", Path::new("x")).unwrap_err();
    assert!(e.to_string().contains("starts with 'h'"), "{e}");
}

#[test]
fn a_survey_run_with_an_impossible_figure_is_refused() {
    let survey = |iops: f64| {
        serde_json::json!({"runs": [{"target": "/dev/null", "method": "psync", "bs": 4,
            "result": {"spec": {}, "iops": iops, "latency": {"p99_ns": 5.0}}, "unavailable": null}],
            "ranking": []})
        .to_string()
    };
    let (recs, _) = records_of(&survey(10.0), Path::new("s")).unwrap();
    assert_eq!(recs.len(), 1);
    let e = records_of(&survey(-1e308), Path::new("s")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("s: record 1: iops is -1e+308; not a record iolab wrote"),
        "{e}"
    );
    // A result with nothing of a run's (a garbage line) is refused too, naming its line.
    let text =
        "{\"point\": {}, \"result\": {\"spec\": {}}}\n{\"point\": {}, \"result\": {\"x\": 1}}\n";
    let e = records_of(text, Path::new("g")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("g: line 2: its result is not a run's"),
        "{e}"
    );
    // Percentiles no distribution has: p50 above p99.
    let lat = |p50: f64| {
        serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 1.0,
            "latency": {"p50_ns": p50, "p99_ns": 5.0, "max_ns": 9.0}}})
        .to_string()
    };
    assert!(records_of(&format!("{}\n", lat(5.0)), Path::new("p")).is_ok());
    let e = records_of(&format!("{}\n", lat(6.0)), Path::new("p")).unwrap_err();
    assert!(
        e.to_string()
            .contains("latency.p50_ns (6) is above latency.p99_ns (5); not a record iolab wrote"),
        "{e}"
    );
}

#[test]
fn a_figure_beyond_its_runs_ops_and_time_or_any_machine_is_refused() {
    let rec = |fig: serde_json::Value| {
        let mut r = serde_json::json!({"spec": {}, "ops": 1000, "bytes": 4096000, "wall_s": 0.2,
            "iops": 5000.0, "mib_s": 19.5, "latency": {"p99_ns": 900.0},
            "cpu": {"process": {"user_s": 0.1, "sys_s": 0.1}}});
        crate::series::tests::merge(&mut r, fig);
        format!("{}\n", serde_json::json!({"point": {}, "result": r}))
    };
    assert!(records_of(&rec(serde_json::json!({})), Path::new("f")).is_ok());
    // /dev/null moves no data: 1 GiB blocks at 9 M ops/s are a rate iolab writes.
    let fast = serde_json::json!({"ops": 9_000_000u64, "wall_s": 1.0, "iops": 9e6,
        "bytes": 9_000_000u64 << 30, "mib_s": 9e6 * 1024.0, "spec": {"seed": u64::MAX}});
    assert!(records_of(&rec(fast), Path::new("f")).is_ok());
    for (fig, says) in [
        (
            serde_json::json!({"iops": 1e15}),
            "iops is 1.000e15, more than its ops and wall time",
        ),
        (serde_json::json!({"iops": 1e308}), "iops is 1.000e308"),
        (
            serde_json::json!({"mib_s": 1e6}),
            "mib_s is 1000000, more than its ops and wall",
        ),
        (
            serde_json::json!({"latency": {"p99_ns": 1e300}}),
            "latency.p99_ns is 1.000e300",
        ),
        (
            serde_json::json!({"cpu": {"process": {"user_s": 1e6}}}),
            "cpu.process.user_s is 1000000",
        ),
        // Without its span: bounded by what any machine does.
        (
            serde_json::json!({"wall_s": null, "iops": 1e13}),
            "iops is 1.000e13, more than any machine",
        ),
        (
            serde_json::json!({"latency": {"max_ns": 1e15}}),
            "latency.max_ns is 1.000e15, more than its",
        ),
        // Any number beyond a 64-bit count, wherever it is (a gap's, a call count's).
        (
            serde_json::json!({"gap": {"p50_ns": 1e300}}),
            "gap.p50_ns is 1.000e300, more than any count",
        ),
        (
            serde_json::json!({"syscalls": {"method_per_op": 1e7}}),
            "method_per_op is 10000000, more than",
        ),
    ] {
        let e = records_of(&rec(fig), Path::new("f"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(says) && e.contains("not a record iolab wrote"),
            "{e}"
        );
        assert!(e.len() < 200, "{e}");
    }
}

/// What the checks read stays with what a reader keeps: a forged gap or slowest op is refused by a
/// reader that shows neither (report's cut) as by one that keeps all (a suite's --resume shows gaps).
#[test]
fn a_forged_gap_is_refused_whatever_the_reader_keeps() {
    use super::Keep;
    let paths: &[&[&str]] = &[&["iops"]];
    for (fig, says) in [
        (
            serde_json::json!({"max_ns": 5e9}),
            "gap.max_ns is 5000000000, more than its ops and wall time",
        ),
        (
            serde_json::json!({"p99_ns": 1e300}),
            "gap.p99_ns is 1.000e300",
        ),
    ] {
        let line = serde_json::json!({"point": {}, "result": {"spec": {}, "ops": 1000, "wall_s": 0.002,
            "iops": 5e5, "gap": fig}});
        for keep in [Keep::All, Keep::Paths(paths)] {
            let text = format!("{line}\n");
            let e = super::stream::read_from(text.as_bytes(), Path::new("k"), keep)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(says), "{e}");
        }
    }
}

/// Settings, machine facts and CPU time no run has are refused by every reader, whatever it keeps
/// (compare's cut once dropped the CPUs that bound CPU time, and let 1,000 s of CPU in 173 µs pass).
#[test]
fn settings_and_facts_no_run_has_are_refused_whatever_the_reader_keeps() {
    use super::Keep;
    let paths: &[&[&str]] = &[&["iops"], &["host", "kernel_release"]];
    let base = serde_json::json!({"schema_version": 1, "spec": {"bs": 4096, "threads": 1, "qd": 1, "method": "psync"},
        "host": {"cpus_online": 2, "kernel_release": "6.18"}, "ops": 1000, "wall_s": 0.001,
        "iops": 1e6, "cpu": {"process": {"user_s": 0.0005, "sys_s": 0.0005}},
        "disturbance": {"steal_share": 0.0, "runqueue_share": 0.1}});
    let forged: [(&str, serde_json::Value, &str); 8] = [
        (
            "/spec/bs",
            0.into(),
            "spec.bs is 0, where a run's is 1 to 1073741824",
        ),
        (
            "/spec/threads",
            1e12.into(),
            "spec.threads is 1.000e12, where a run's is 1 to 1024",
        ),
        (
            "/host/cpus_online",
            0.into(),
            "host.cpus_online is 0, where a run's is 1 to 8192",
        ),
        (
            "/disturbance/steal_share",
            (-3).into(),
            "disturbance.steal_share is -3, where a run's is 0 to 1",
        ),
        (
            "/disturbance/runqueue_share",
            50.into(),
            "disturbance.runqueue_share is 50, where a run's is 0 to 17",
        ),
        (
            "/ops",
            0.into(),
            "iops is 1000000, more than its ops and wall time allow",
        ),
        (
            "/schema_version",
            999.into(),
            "schema_version is 999, which no iolab up to this one",
        ),
        (
            "/cpu/process/user_s",
            1000.into(),
            "cpu.process.user_s is 1000, more than its ops and wall time allow",
        ),
    ];
    let line =
        |r: &serde_json::Value| format!("{}\n", serde_json::json!({"point": {}, "result": r}));
    for keep in [Keep::All, Keep::Paths(paths)] {
        let whole = super::stream::read_from(line(&base).as_bytes(), Path::new("k"), keep);
        assert!(whole.is_ok(), "{:?}", whole.err().map(|e| e.to_string()));
        for (at, v, says) in &forged {
            let mut r = base.clone();
            *r.pointer_mut(at).unwrap() = v.clone();
            let e = super::stream::read_from(line(&r).as_bytes(), Path::new("k"), keep)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(says), "{at}: {e}");
        }
    }
}

/// What a read makes is bounded by the text it read, as the file is read (not line by line): a line of
/// many `[]` (3 bytes each, 144 of memory), lines of small objects each under a line's own share (the
/// text of a whole file of them is what bounds them), a one-line document whose refusal names why; a
/// suite's summary is bounded in all, and so is a value a reader's path ends at. The largest shape iolab writes, a sweep's settings of 100,000
/// seeds, is read whole.
#[test]
fn what_a_read_makes_is_bounded_by_the_text_it_read() {
    use super::Keep;
    let paths: &[&[&str]] = &[&["notes"]];
    let read = |text: &str, keep| {
        super::stream::read_from(text.as_bytes(), Path::new("k"), keep)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let junk = vec![serde_json::json!([]); 200_000];
    let line = serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 5.0, "notes": junk}});
    // Where a reader's path ends (a profile's notes), a value holds at most what iolab writes there; read
    // whole, the line's text bounds it.
    let e = read(&format!("{line}\n"), Keep::Paths(paths));
    assert!(e.contains("`notes` holds more than 4096 values"), "{e}");
    let e = read(&format!("{line}\n"), Keep::All);
    assert!(
        e.contains("more than 16 times the memory of its text"),
        "{e}"
    );
    let small = vec![serde_json::json!({"": {"": {}}}); 300];
    let line =
        serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 5.0, "notes": small}});
    let text = format!("{line}\n").repeat(2_000);
    for (keep, says) in [(Keep::Paths(paths), "10 times"), (Keep::All, "16 times")] {
        let e = read(&text, keep);
        assert!(e.contains(&format!("more than {says} the memory")), "{e}");
        assert!(e.starts_with("k: line "), "{e}");
    }
    let doc = serde_json::json!({"runs": [{"target": "t", "method": "psync", "bs": 4096,
        "result": {"spec": {}, "iops": 5.0, "notes": vec![serde_json::json!({"": {}}); 200_000]}}]});
    let e = read(&doc.to_string(), Keep::Paths(paths));
    assert!(e.contains("`notes` holds more than 4096 values"), "{e}");
    let e = read(&doc.to_string(), Keep::All);
    assert!(e.contains("more than 16 times the memory"), "{e}");
    // Texts of 20 bytes: within the memory a text gives, beyond the values a summary holds.
    let junk = vec!["abcdefghijklmnopqrst"; 70_000];
    let summary = serde_json::json!({"summary": {"memory": {"junk": junk}}});
    let text = format!(
        "{}\n{summary}\n",
        serde_json::json!({"point": {}, "error": "x"})
    );
    let e = read(&text, Keep::Paths(paths));
    assert!(e.contains("`summary` holds more than 65536"), "{e}");
    let seeds: Vec<String> = (1..=100_000).map(|i| i.to_string()).collect();
    let line = serde_json::json!({"point": {"seed": "1"}, "settings": {"vary": {"seed": seeds}},
        "result": {"spec": {}, "iops": 5.0}});
    let f = super::stream::read_from(format!("{line}\n").as_bytes(), Path::new("k"), Keep::All);
    assert_eq!(f.unwrap().records.len(), 1);
}

/// `into` with `from`'s keys set (objects merged key by key).
fn merge(into: &mut serde_json::Value, from: serde_json::Value) {
    match (into, from) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (a, b) => *a = b,
    }
}

#[test]
fn records_are_cut_down_to_what_the_reader_keeps_as_they_are_read() {
    use super::{Keep, RecordFile};
    let line = serde_json::json!({"point": {"bs": "4"}, "settings": {"vary": {}},
        "result": {"spec": {"bs": 4, "seed": 7}, "iops": 5.0, "clock": {"hz": 1.0},
                   "latency": {"p99_ns": 9.0, "cdf": [[0.5, 1.0]], "buckets": [[1.0, 2]]}}});
    let text = format!("{line}\n{line}\n{{\"summary\": {{\"suite\": \"s\", \"a\": 1}}}}\n");
    let paths: &[&[&str]] = &[
        &["spec", "bs"],
        &["iops"],
        &["latency"],
        &["latency", "cdf"],
    ];
    let read = |t: &str| -> RecordFile {
        super::stream::read_from(t.as_bytes(), Path::new("k"), Keep::Paths(paths)).unwrap()
    };
    let f = read(&text);
    // What the records are checked by (p99), and what tells a rate's span (the clock, none of it here),
    // stays with what the reader keeps.
    let want = serde_json::json!({"point": {"bs": "4"},
        "result": {"spec": {"bs": 4}, "iops": 5.0, "clock": {},
                   "latency": {"p99_ns": 9.0, "cdf": [[0.5, 1.0]]}}});
    // The first line (parsed whole, then cut) and the second (cut as it is parsed) alike, each point
    // held packed and given back as it was.
    let mut got = f.records.clone();
    for r in &mut got {
        assert!(r["point"].is_string(), "{r}");
        assert!(
            super::packed::is_packed(&r["result"]["latency"]["cdf"]),
            "{r}"
        );
        super::packed::unpack_all(r);
        assert_eq!(record_point(r), [("bs".to_string(), "4".to_string())]);
        r["point"] = serde_json::Value::Object(point_object(r).unwrap());
    }
    assert_eq!(got, vec![want.clone(), want]);
    // Of a summary, the fields a summary has (another key is not made).
    assert_eq!(f.summaries, vec![serde_json::json!({"suite": "s"})]);
}

#[test]
fn arrays_pass_paths_to_their_items_and_documents_are_cut_as_they_are_parsed() {
    use super::{Keep, RecordFile};
    let result = serde_json::json!({"spec": {"bs": 4}, "iops": 5.0,
        "intervals": [{"end_s": 1.0, "iops": 5.0, "ops": 5, "lat_max_ns": 9.0},
                      {"end_s": 2.0, "iops": 6.0, "ops": 6, "lat_max_ns": 8.0}],
        "per_thread": [{"thread": 0, "ops": 11}]});
    let paths: &[&[&str]] = &[
        &["spec", "bs"],
        &["intervals", "end_s"],
        &["intervals", "iops"],
    ];
    // Read, the intervals given back as the objects they were packed from.
    let read = |t: &str| -> RecordFile {
        let mut f =
            super::stream::read_from(t.as_bytes(), Path::new("k"), Keep::Paths(paths)).unwrap();
        f.records.iter_mut().for_each(super::packed::unpack_all);
        f
    };
    let want = serde_json::json!({"point": {}, "result": {"spec": {"bs": 4}, "iops": 5.0,
        "intervals": [{"end_s": 1.0, "iops": 5.0}, {"end_s": 2.0, "iops": 6.0}]}});
    // A record on a line, and a run's result as `run --json` prints it (a document over many lines).
    let line = serde_json::json!({"point": {}, "result": result});
    let doc = serde_json::to_string_pretty(&result).unwrap();
    for text in [format!("{line}\n"), doc] {
        assert_eq!(read(&text).records, vec![want.clone()], "{text}");
    }
    // A `run --repeat` document's runs are cut; a survey's runs keep their own keys, their results cut
    // as a record's, and its ranking.
    let repeat = serde_json::json!({"repeat": 2, "runs": [result, result]});
    let f = read(&serde_json::to_string_pretty(&repeat).unwrap());
    assert_eq!(f.records.len(), 2);
    assert_eq!(f.records[1]["result"], want["result"]);
    let survey = serde_json::json!({"ranking": [1], "other": {"x": 1},
        "runs": [{"target": "file", "method": "psync", "bs": 4, "result": result}]});
    let f = read(&serde_json::to_string_pretty(&survey).unwrap());
    let run = &f.records[0]["result"];
    assert_eq!(run["method"], "psync");
    assert_eq!(run["result"], want["result"]);
    let doc = f.document.unwrap();
    assert_eq!(doc["ranking"], serde_json::json!([1]));
    assert!(doc.get("other").is_none(), "{doc}");
}

#[test]
fn an_array_longer_than_iolab_writes_is_refused_as_it_is_parsed() {
    use super::Keep;
    let cdf: Vec<[f64; 2]> = (0..65)
        .map(|i| [i as f64 / 65.0, 100.0 + i as f64])
        .collect();
    let rec = |cdf: &[[f64; 2]]| {
        serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 1.0,
            "latency": {"p99_ns": 9.0, "cdf": cdf}}})
    };
    let paths: &[&[&str]] = &[&["latency", "cdf"]];
    let read =
        |t: String| super::stream::read_from(t.as_bytes(), Path::new("k"), Keep::Paths(paths));
    // 64 points are kept, on the first line (parsed before it is known to be a record) and after it.
    let ok = rec(&cdf[..64]);
    assert_eq!(read(format!("{ok}\n{ok}\n")).unwrap().records.len(), 2);
    for (text, at) in [
        (format!("{}\n", rec(&cdf)), "k: line 1: "),
        (format!("{ok}\n{}\n", rec(&cdf)), "k: line 2: "),
    ] {
        let Err(e) = read(text) else {
            panic!("a 65-point cdf was read")
        };
        let e = e.to_string();
        assert!(e.starts_with(at), "{e}");
        assert!(e.contains("`cdf` holds more than 64 items"), "{e}");
    }
    // A reader keeping all (a test's records_of) refuses it too, as does --resume's.
    let all = super::stream::read_text(&format!("{}\n", rec(&cdf)), Path::new("k"));
    let e = all.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("`cdf` holds more than 64 items"), "{e}");
    let text = format!("{ok}\n{}\n", rec(&cdf));
    let e = super::stream::scan_records(
        text.as_bytes(),
        u64::MAX,
        &mut |_, _| Ok(true),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(e.contains("`cdf` holds more than 64 items"), "{e}");
    // A record --resume does not hold (another point's) is checked all the same.
    let forged = serde_json::json!({"point": {"bs": "9"}, "result": {"spec": {}, "iops": -1.0}});
    let text = format!("{ok}\n{forged}\n");
    let e = super::stream::scan_records(
        text.as_bytes(),
        u64::MAX,
        &mut |_, _| Ok(false),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(e.starts_with("line 2: "), "{e}");
    // A suite's summary line: its cites bounded too.
    let cite = serde_json::json!({"value": 1.0, "line": 1, "field": "result.iops"});
    let summary =
        |n: usize| serde_json::json!({"summary": {"answers": [{"cites": vec![cite.clone(); n]}]}});
    for (n, fine) in [(4096, true), (4097, false)] {
        let read = read(format!("{ok}\n{}\n", summary(n)));
        assert_eq!(
            read.is_ok(),
            fine,
            "{n} cites: {:?}",
            read.err().map(|e| e.to_string())
        );
    }
}

#[test]
fn a_records_own_keys_and_spec_texts_are_what_iolab_writes() {
    let base = serde_json::json!({"point": {"bs": "4"}, "result": {"spec": {"target": "/x"},
        "iops": 1.0, "ops": 10, "wall_s": 0.5}});
    assert!(records_of(&format!("{base}\n"), Path::new("r")).is_ok());
    let long = "a".repeat(5000);
    let cases: [(&str, serde_json::Value, &str); 8] = [
        (
            "/point/x",
            serde_json::json!([0, 0]),
            "its point is not an object of at most 20 texts",
        ),
        (
            "/point/bs",
            serde_json::json!(long),
            "its point is not an object of at most 20 texts",
        ),
        ("/error", serde_json::json!([[]]), "its error is not a text"),
        (
            "/exit_code",
            serde_json::json!("x"),
            "its exit_code is not a number",
        ),
        (
            "/repeat",
            serde_json::json!([0]),
            "its repeat is not {run, of}",
        ),
        (
            "/repeats",
            serde_json::json!({"of": 2}),
            "only a report makes",
        ),
        (
            "/result/spec/target",
            serde_json::json!(long),
            "spec.target is longer than 4,096 bytes",
        ),
        (
            "/result/wall_s",
            serde_json::json!(0.0),
            "it ran ops in a wall time of 0 s",
        ),
    ];
    for (at, v, why) in cases {
        let mut r = base.clone();
        let (parent, key) = at.rsplit_once('/').unwrap();
        let holder = if parent.is_empty() {
            &mut r
        } else {
            r.pointer_mut(parent).unwrap()
        };
        holder[key] = v;
        let e = records_of(&format!("{r}\n"), Path::new("r"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(why) && e.contains("not a record iolab wrote"),
            "{at}: {e}"
        );
    }
}

#[test]
fn a_spec_and_a_survey_run_keep_their_own_keys_and_a_spec_is_bounded_in_all() {
    use super::Keep;
    let paths: &[&[&str]] = &[&["spec"]];
    let read =
        |t: String| super::stream::read_from(t.as_bytes(), Path::new("k"), Keep::Paths(paths));
    // Keys iolab never writes in a spec are passed over; its own are kept.
    let junk: serde_json::Map<String, serde_json::Value> =
        (0..1000).map(|i| (format!("k{i}"), i.into())).collect();
    let mut spec = serde_json::json!({"method": "psync", "bs": 4096, "ring": {"sqpoll": false}});
    spec.as_object_mut().unwrap().extend(junk);
    let rec = |spec: &serde_json::Value| serde_json::json!({"point": {}, "result": {"spec": spec}});
    let f = read(format!("{}\n{}\n", rec(&spec), rec(&spec))).unwrap();
    for r in &f.records {
        let kept = &r["result"]["spec"];
        let want = serde_json::json!({"method": "psync", "bs": 4096, "ring": {"sqpoll": false}});
        assert_eq!(kept, &want);
    }
    // 131 values under a spec's own keys (a spec holds about 60): refused, on any line; 128 are read.
    let forged = serde_json::json!({"method": "psync", "ring": {"recommended": vec![0; 128]}});
    for text in [
        format!("{}\n", rec(&forged)),
        format!("{}\n{}\n", rec(&spec), rec(&forged)),
    ] {
        let e = read(text)
            .err()
            .expect("a spec of 130 values was read")
            .to_string();
        assert!(e.contains("`spec` holds more than 128 values"), "{e}");
    }
    let fits = serde_json::json!({"method": "psync", "ring": {"recommended": vec![0; 125]}});
    assert_eq!(read(format!("{}\n", rec(&fits))).unwrap().records.len(), 1);
    // A survey's run's result is cut as a record's: what the reader keeps and the figures.
    let result = serde_json::json!({"iops": 1.0, "notes": ["a"], "junk": [1, 2, 3]});
    let survey = serde_json::json!({"ranking": [],
        "runs": [{"target": "file", "method": "psync", "bs": 4, "result": result}]});
    let f = read(survey.to_string()).unwrap();
    let run = &f.records[0]["result"]["result"];
    assert_eq!(run, &serde_json::json!({"iops": 1.0}));
}

#[test]
fn a_point_of_more_values_than_iolab_writes_is_refused_as_it_is_parsed() {
    let paths: &[&[&str]] = &[&["iops"]];
    let read = |t: String| {
        super::stream::read_from(t.as_bytes(), Path::new("k"), super::Keep::Paths(paths))
    };
    let rec = |point: serde_json::Value| serde_json::json!({"point": point, "result": {"spec": {}, "iops": 1.0}});
    let ok = rec(serde_json::json!({"bs": "4k"}));
    let forged = rec(serde_json::json!({"bs": vec!["4k"; 100]}));
    for text in [format!("{forged}\n"), format!("{ok}\n{forged}\n")] {
        let e = read(text)
            .err()
            .expect("a forged point was read")
            .to_string();
        assert!(e.contains("`point` holds more than 20 values"), "{e}");
    }
}

#[test]
fn a_file_of_more_records_than_iolab_writes_is_refused_at_the_first_too_many() {
    // Records of a few hundred bytes, as small as iolab writes them are not (7 KB and more): the
    // memory their text gives holds what is kept of them.
    let line = format!(
        "{}\n",
        serde_json::json!({"point": {"x": "1"}, "result": {"spec": {}, "iops": 1.0,
            "host": "h".repeat(150)}})
    );
    let most = super::stream::MAX_RECORDS;
    let paths: &[&[&str]] = &[&["iops"]];
    let read = |n: usize| {
        let text = line.repeat(n);
        super::stream::read_from(text.as_bytes(), Path::new("k"), super::Keep::Paths(paths))
    };
    assert_eq!(read(most).unwrap().records.len(), most);
    let e = read(most + 1)
        .err()
        .expect("one record too many was read")
        .to_string();
    assert!(
        e.contains(&format!("line {}: more than 250,000 records", most + 1)),
        "{e}"
    );
}

/// A line that is not whole JSON and is not the last (a cut write is only ever the last) is refused as
/// not iolab's, placed in the line, not by the parser's count of the line's own lines.
#[test]
fn a_broken_line_is_refused_as_not_iolabs_and_placed_in_it() {
    let good = serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 5.0}});
    let text = format!("{good}\n{{\"point\":{{}},\"notes\":[[[[\n{good}\n");
    let e = super::stream::read_from(text.as_bytes(), Path::new("k"), super::Keep::All)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.starts_with("k: line 2: not whole JSON (EOF while parsing a list, at its end)"),
        "{e}"
    );
    assert!(
        e.contains("not a record iolab wrote") && !e.contains("line 2 column"),
        "{e}"
    );
}

/// A last line cut short is told apart as a point's record (that point runs again) or a suite's summary
/// (written again at the end); a spec that is not an object of settings is refused.
#[test]
fn a_cut_summary_is_told_from_a_cut_record_and_a_spec_is_an_object() {
    let ok = serde_json::json!({"point": {"bs": "4"}, "result": {"spec": {}, "iops": 5.0}});
    let summary = serde_json::json!({"summary": {"answers": []}}).to_string();
    let rec = ok.to_string();
    for (cut, is_summary) in [(&summary, true), (&rec, false)] {
        let text = format!("{ok}\n{}", &cut[..cut.len() / 2]);
        let s = super::stream::scan_records(
            text.as_bytes(),
            u64::MAX,
            &mut |_, _| Ok(false),
            &mut |_, _| {},
        )
        .unwrap();
        assert!(s.cut > 0);
        assert_eq!(s.cut_summary, is_summary);
    }
    let forged = serde_json::json!({"point": {"bs": "4"}, "result": {"spec": [1, 2, 3]}});
    let e = records_of(&format!("{forged}\n"), Path::new("s")).unwrap_err();
    assert!(e.to_string().contains("its spec is not an object"), "{e}");
}

/// A file whose points name more keys than a point holds (a key of its own in each record: a report
/// drawn by every pair of them took 24 s for 250) is refused at the first key too many.
#[test]
fn points_naming_more_keys_than_a_point_holds_are_refused() {
    let rec = |i: usize| serde_json::json!({"point": {format!("k{i}"): "1"}, "result": {"spec": {}, "iops": 5.0}});
    let text = |n: usize| (0..n).map(|i| format!("{}\n", rec(i))).collect::<String>();
    let paths: &[&[&str]] = &[&["iops"]];
    let read = |t: String| {
        super::stream::read_from(t.as_bytes(), Path::new("k"), super::Keep::Paths(paths))
    };
    assert_eq!(read(text(20)).unwrap().records.len(), 20);
    let e = read(text(21))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("line 21: its points name more than 20 different keys"),
        "{e}"
    );
}

/// A file whose only line was cut short (a run killed while writing its first record) says so, not that
/// it is empty.
#[test]
fn a_file_whose_only_line_is_cut_says_so() {
    let e = records_of("{\"point\": {\"bs\": \"4k\"}, \"resu", Path::new("c"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("holds no whole record: its only line is cut short (29 bytes"),
        "{e}"
    );
    // A whole line holding what no reader takes (a 400-digit number) is refused for it, not called cut.
    let huge = format!(
        "{{\"point\": {{\"bs\": \"4k\"}}, \"result\": {}}}",
        "9".repeat(400)
    );
    let e = records_of(&huge, Path::new("c")).unwrap_err().to_string();
    assert!(
        e.contains("number out of range") && !e.contains("cut short"),
        "{e}"
    );
}

/// A suite's summary line is held with each text cut to what iolab writes at most (a forged answer of
/// 4 MB made a 900 MB page).
#[test]
fn a_summarys_texts_are_cut() {
    let good = serde_json::json!({"point": {"n": "1"}, "result": {"spec": {}, "iops": 1.0}});
    let long = "<&".repeat(1 << 20);
    let sum = serde_json::json!({"summary": {"suite": "s", "answers": [{"text": long, "question": "q"}]}});
    let f = super::stream::read_text(&format!("{good}\n{sum}\n"), Path::new("s")).unwrap();
    let text = f.summaries[0]["answers"][0]["text"].as_str().unwrap();
    assert!(
        text.len() < 17 << 10 && text.starts_with("<&<&"),
        "{}",
        text.len()
    );
    assert!(text.ends_with("(cut: longer than any text iolab writes)"));
    assert_eq!(f.summaries[0]["answers"][0]["question"], "q");
}
