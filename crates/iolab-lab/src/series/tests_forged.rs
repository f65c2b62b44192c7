//! Texts of a record's host and target longer than iolab writes, and flags of the wrong type: refused
//! by every reader, naming the field.

use super::records::records_of;
use std::path::Path;

/// A host text longer than iolab writes (a CPU model name of 30 MB would be carried into every page that
/// shows it) is refused naming the field; a real one is read.
#[test]
fn a_host_text_longer_than_iolab_writes_is_refused() {
    let rec = |model: &str| {
        serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 5.0,
            "host": {"cpu_model": model, "kernel_release": "6.18.44"}}})
    };
    let (recs, _) = records_of(&format!("{}\n", rec("Intel(R) Xeon(R)")), Path::new("h")).unwrap();
    assert_eq!(recs.len(), 1);
    let e = records_of(&format!("{}\n", rec(&"x".repeat(5000))), Path::new("h")).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("host.cpu_model is 5,000 bytes long"), "{e}");
}

/// A target's kind or file system longer than iolab writes (a 1 MB file system name took `compare` to
/// 5 times its input), and a `host.emulated` that is not true or false (the text "true" was ranked as a
/// native run), are refused by every reader, naming the field; real ones are read.
#[test]
fn a_long_target_text_and_an_emulated_flag_not_a_boolean_are_refused() {
    let rec = |target: serde_json::Value, emulated: serde_json::Value| {
        serde_json::json!({"point": {}, "result": {"spec": {}, "iops": 5.0, "target": target,
            "host": {"kernel_release": "6.18.44", "emulated": emulated}}})
    };
    let compare: &[&[&str]] = &[&["iops"]];
    let read = |r: serde_json::Value| {
        let text = format!("{r}\n");
        [
            super::Keep::All,
            super::Keep::Paths(compare),
            super::Keep::Texts(compare),
        ]
        .map(|keep| {
            super::stream::read_from(text.as_bytes(), Path::new("t"), keep)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        })
    };
    let file = serde_json::json!({"kind": "file", "fs": "ext4"});
    for e in read(rec(file.clone(), true.into())) {
        assert_eq!(e, "");
    }
    let long = serde_json::json!({"kind": "file", "fs": "f".repeat(100)});
    for e in read(rec(long, false.into())) {
        assert!(e.contains("target.fs is 100 bytes long"), "{e}");
    }
    for e in read(rec(file, "true".into())) {
        assert!(
            e.contains("host.emulated is \"true\", not true or false"),
            "{e}"
        );
    }
}

/// A record of a run that logged many intervals is read whole by `--resume` (400 intervals of 10
/// figures were refused as "more than iolab writes"), and by the readers that keep parts of it.
#[test]
fn a_record_of_many_intervals_is_read_by_every_reader() {
    let interval = serde_json::json!({"start_s": 0.0, "end_s": 0.01, "ops": 20, "bytes": 10240,
        "iops": 2000.0, "mib_s": 0.97, "lat_p50_ns": 719.8, "lat_p90_ns": 1021.3, "lat_p99_ns": 1390.5,
        "lat_max_ns": 1400.7});
    let rec = serde_json::json!({"point": {"bs": "4k"}, "result": {"spec": {}, "iops": 2000.0,
        "intervals": vec![interval; 2000]}});
    let text = format!("{rec}\n");
    let mut held = Vec::new();
    let scanned = super::stream::scan_records(
        text.as_bytes(),
        u64::MAX,
        &mut |_, _| Ok(true),
        &mut |v, _| held.push(v),
    );
    assert!(scanned.is_ok(), "{scanned:?}");
    assert_eq!(held.len(), 1);
    assert_eq!(
        held[0]["result"]["intervals"].as_array().map(Vec::len),
        Some(2000)
    );
    let kept: &[&[&str]] = &[&["intervals", "iops"]];
    for keep in [
        super::Keep::All,
        super::Keep::Paths(kept),
        super::Keep::Texts(kept),
    ] {
        let f = super::stream::read_from(text.as_bytes(), Path::new("i"), keep);
        assert_eq!(f.map(|f| f.records.len()).ok(), Some(1));
    }
}
