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
