//! A sweep's record file, one JSON line per point: making, reading and matching records, and the settings
//! each carries so that a resume with other settings is refused.

use super::figures::text;
use super::points::Vary;
use super::shape::record_point;
use super::stream::{Keep, RecordFile};
use iolab_engine::error::{Error, Result};
use iolab_engine::spec::RawSpec;
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// One line of a sweep's record file.
pub fn record(
    point: &[(String, String)],
    outcome: std::result::Result<Value, (i32, String)>,
) -> Value {
    let p: serde_json::Map<String, Value> = point
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    match outcome {
        Ok(r) => serde_json::json!({ "point": p, "result": r }),
        Err((code, msg)) => serde_json::json!({ "point": p, "error": msg, "exit_code": code }),
    }
}

/// Appends one record as a line and flushes it to the file system before returning, so a sweep killed
/// after this point keeps it.
pub fn append_record(f: &mut std::fs::File, rec: &Value) -> Result<()> {
    let mut rec = rec.clone();
    iolab_engine::json::positive_zero(&mut rec);
    let mut line = serde_json::to_vec(&rec).map_err(|e| Error::Runtime(format!("record: {e}")))?;
    line.push(b'\n');
    f.write_all(&line)
        .and_then(|_| f.sync_data())
        .map_err(|e| Error::Runtime(format!("cannot write the sweep's record file: {e}")))
}

/// Whether a record was made for `point` (keys in any order: a record's keys come back sorted).
pub fn is_point(rec: &Value, point: &[(String, String)]) -> bool {
    let mut a = record_point(rec);
    let mut b = point.to_vec();
    a.sort();
    b.sort();
    a == b
}

/// Reads a file of results: a sweep's JSON lines, a `run --json` document, or a `run --repeat --json`
/// document; returns the records (each `{"point", "result"}` or `{"point", "error"}`), and how many
/// trailing bytes were ignored (a line cut short when a sweep was killed mid-write). A record of a point
/// that did not run is left out when a later record of the same point follows it (the point was run
/// again at `--resume`, see [`retried`]).
pub fn read_records(path: &Path, flag: &str) -> Result<(Vec<Value>, usize)> {
    let f = read_record_file(path, flag, Keep::All)?;
    Ok((f.records, f.cut))
}

/// [`read_records`] for a reader that shows only part of each result (`report`, `compare`): read as a
/// stream (the file's text is never held whole), each record cut down to what `keep` keeps.
pub fn read_record_file(path: &Path, flag: &str, keep: Keep) -> Result<RecordFile> {
    let f = super::stream::read_file(path, flag, keep)?;
    not_empty(f, path).map_err(|e| Error::usage(flag, e.to_string()))
}

/// [`read_records`] of a file's text: refused when it holds no records, or a figure no run measures (a
/// negative, or not a number where one belongs: a forged or damaged file).
pub fn records_of(text: &str, path: &Path) -> Result<(Vec<Value>, usize)> {
    let f = super::stream::read_text(text, path)?;
    let f = not_empty(f, path)?;
    Ok((f.records, f.cut))
}

/// What a reader says of a file whose last line was cut short (`cut` bytes, left out): none when whole.
pub fn cut_note(path: &Path, cut: usize) -> Option<String> {
    (cut > 0).then(|| {
        format!(
            "iolab: {}: its last line was cut short ({} bytes: a run killed while writing it) and is left out",
            path.display(),
            iolab_engine::units::thousands_u64(cut as u64)
        )
    })
}

fn not_empty(f: RecordFile, path: &Path) -> Result<RecordFile> {
    if f.records.is_empty() && f.cut > 0 {
        return Err(Error::Runtime(format!(
            "{}: holds no whole record: its only line is cut short ({} bytes: a run killed while \
             writing it)",
            path.display(),
            iolab_engine::units::thousands_u64(f.cut as u64)
        )));
    }
    if f.records.is_empty() {
        return Err(Error::Runtime(format!(
            "{}: holds no records (an empty file, or summaries only)",
            path.display()
        )));
    }
    Ok(f)
}

/// What a point of a sweep or suite is refused with when its target file exists (most often a file an
/// interrupted iolab left behind).
#[cfg(test)]
pub use iolab_engine::target::TARGET_EXISTS;

/// Whether a record of a point is run again at `--resume` rather than taken as done: the point has no
/// result for a cause that may be gone now: refused for its target's state (a file left by an
/// interrupted iolab, a read-only filesystem: `--target:` or `--overwrite:`), or failed at run time (no
/// space, an I/O error: exit 1); if the cause is still there, the point is refused or fails again and
/// is recorded so. A point refused for its own flags (the same at every run), or that this machine or
/// build cannot run (`not available`), is done.
pub fn retried(rec: &Value) -> bool {
    let Some(e) = rec.get("error").and_then(|e| e.as_str()) else {
        return false;
    };
    let failed = rec.get("exit_code").and_then(Value::as_i64) == Some(1);
    let target = ["--target:", "--overwrite:"]
        .iter()
        .any(|f| e.starts_with(f));
    !e.starts_with("not available") && (failed || target)
}

/// What a sweep or suite records in each point's record as `"settings"`, so `--resume` runs only with
/// the same ones: `fixed`, the settings every point shares (for a sweep the spec keys given by `--spec`
/// and flags, without the varied ones), and `vary`, each point key with its values in the order first
/// seen (for a sweep, its `--vary` lists).
pub fn settings(
    fixed: &std::collections::BTreeMap<String, String>,
    points: &[Vec<(String, String)>],
) -> Value {
    let mut vary = serde_json::Map::new();
    for (k, v) in points.iter().flatten() {
        let vals = vary
            .entry(k.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = vals {
            if !a.iter().any(|x| x == v) {
                a.push(Value::String(v.clone()));
            }
        }
    }
    serde_json::json!({ "fixed": fixed, "vary": vary })
}

/// A sweep's fixed settings: the spec keys `base` gives (from `--spec` and flags) that no `--vary` sets.
pub fn fixed_spec(base: &RawSpec, vary: &[Vary]) -> std::collections::BTreeMap<String, String> {
    base.given()
        .filter(|o| !vary.iter().any(|v| v.key == o.key))
        .filter_map(|o| Some((o.key.to_string(), base.get(o.key)?.text())))
        .collect()
}

/// The keys on which two `settings` differ, each as "KEY (recorded X, now Y)" (`vary KEY` for a list).
pub(crate) fn settings_diff(was: &Value, now: &Value) -> Vec<String> {
    let shown = |v: Option<&Value>| match v {
        None | Some(Value::Null) => "not given".to_string(),
        // A long list by its first values and its length (a 20,000-value list was 9 MB on one line).
        Some(Value::Array(a)) if a.len() > 12 => format!(
            "{},... ({} values)",
            a.iter()
                .take(8)
                .map(|x| text(Some(x)))
                .collect::<Vec<_>>()
                .join(","),
            a.len()
        ),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| text(Some(x)))
            .collect::<Vec<_>>()
            .join(","),
        v => text(v),
    };
    let mut out = Vec::new();
    for (part, prefix) in [("fixed", ""), ("vary", "vary ")] {
        let (a, b) = (was.get(part), now.get(part));
        let mut keys: Vec<&String> = a
            .and_then(|m| m.as_object())
            .into_iter()
            .chain(b.and_then(|m| m.as_object()))
            .flat_map(|m| m.keys())
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let (x, y) = (a.and_then(|m| m.get(k)), b.and_then(|m| m.get(k)));
            if x != y {
                out.push(format!(
                    "{prefix}{k} (recorded {}, now {})",
                    shown(x),
                    shown(y)
                ));
            }
        }
    }
    out
}
