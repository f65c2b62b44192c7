//! A sweep's record file, one JSON line per point: making, reading and matching records, and the settings
//! each carries so that a resume with other settings is refused.

use super::figures::text;
use super::points::Vary;
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
    let mut line = serde_json::to_vec(rec).map_err(|e| Error::Runtime(format!("record: {e}")))?;
    line.push(b'\n');
    f.write_all(&line)
        .and_then(|_| f.sync_data())
        .map_err(|e| Error::Runtime(format!("cannot write the sweep's record file: {e}")))
}

/// The point of a record, as (key, value) pairs in the record's order.
pub fn record_point(rec: &Value) -> Vec<(String, String)> {
    rec.get("point")
        .and_then(|p| p.as_object())
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a record was made for `point` (keys in any order: a record's keys come back sorted).
pub fn is_point(rec: &Value, point: &[(String, String)]) -> bool {
    let mut a = record_point(rec);
    let mut b = point.to_vec();
    a.sort();
    b.sort();
    a == b
}

/// The 1-based line of `text` (JSON lines) holding each of `recs`, 0 for one no line holds: the line
/// written from it (its serialization) or read into it (its parse).
pub fn record_lines(text: &str, recs: &[Value]) -> Vec<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut parsed: Option<Vec<Option<Value>>> = None;
    recs.iter()
        .map(|rec| {
            let written = serde_json::to_string(rec).unwrap_or_default();
            let found = lines.iter().position(|l| *l == written).or_else(|| {
                // Read from the file: compared as parsed (each line parsed once, when first needed).
                let all = parsed.get_or_insert_with(|| {
                    lines.iter().map(|l| serde_json::from_str(l).ok()).collect()
                });
                all.iter().position(|v| v.as_ref() == Some(rec))
            });
            found.map_or(0, |i| i + 1)
        })
        .collect()
}

/// Reads a file of results: a sweep's JSON lines, a `run --json` document, or a `run --repeat --json`
/// document; returns the records (each `{"point", "result"}` or `{"point", "error"}`), and how many
/// trailing bytes were ignored (a line cut short when a sweep was killed mid-write). A record of a point
/// that did not run is left out when a later record of the same point follows it (the point was run
/// again at `--resume`, see [`retried`]).
pub fn read_records(path: &Path, flag: &str) -> Result<(Vec<Value>, usize)> {
    let text = read_records_text(path, flag)?;
    records_of(&text, path)
}

/// The text of a file of records given by `flag`: a regular file of at most
/// [`iolab_engine::input::RECORDS_INPUT`] bytes.
pub fn read_records_text(path: &Path, flag: &str) -> Result<String> {
    iolab_engine::input::read_text(
        path,
        flag,
        "file of records",
        iolab_engine::input::RECORDS_INPUT,
    )
}

/// [`read_records`] of a file's text: refused when it holds no records, or a figure no run measures (a
/// negative, or not a number where one belongs: a forged or damaged file).
pub fn records_of(text: &str, path: &Path) -> Result<(Vec<Value>, usize)> {
    let (recs, cut) = parse_records(text, path)?;
    if recs.is_empty() {
        return Err(Error::Runtime(format!(
            "{}: holds no records (an empty file, or summaries only)",
            path.display()
        )));
    }
    for (i, r) in recs.iter().enumerate() {
        if let Some(why) = impossible_figure(r) {
            return Err(Error::Runtime(format!(
                "{}: record {}: {why}; not a record iolab wrote (damaged or forged)",
                path.display(),
                i + 1
            )));
        }
    }
    Ok((recs, cut))
}

/// A figure of a record's result that no run can have measured: negative, or a value that is not a
/// number where the figure is given.
fn impossible_figure(rec: &Value) -> Option<String> {
    let result = rec.get("result")?;
    let paths = super::figures::FIGURES.iter().map(|f| f.path);
    let more: [&[&str]; 4] = [&["wall_s"], &["ops"], &["bytes"], &["latency", "p99_ns"]];
    for p in paths.chain(more) {
        match super::figures::at(result, p) {
            None | Some(Value::Null) => {}
            Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v >= 0.0 && v.is_finite()) => {}
            Some(v) => return Some(format!("{} is {v}", p.join("."))),
        }
    }
    None
}

fn parse_records(text: &str, path: &Path) -> Result<(Vec<Value>, usize)> {
    let bad = |what: String| Error::Runtime(format!("{}: {what}", path.display()));
    // A whole-file JSON document first (run --json, run --repeat --json).
    if let Ok(doc) = serde_json::from_str::<Value>(text) {
        if let Some(runs) = doc.get("runs").and_then(|r| r.as_array()) {
            // A `run --repeat` document ({"repeat", "runs"}; a survey's has no "repeat"): each run is
            // marked as one of the repeats of one configuration (`iolab report` shows them as one run
            // with its spread).
            let of = runs.len();
            let repeated = doc.get("repeat").is_some();
            return Ok((
                runs.iter()
                    .enumerate()
                    .map(|(i, r)| match repeated {
                        true => serde_json::json!({
                            "point": {}, "result": r, "repeat": {"run": i + 1, "of": of}
                        }),
                        false => serde_json::json!({ "point": {}, "result": r }),
                    })
                    .collect(),
                0,
            ));
        }
        if doc.get("point").is_some() {
            return Ok((vec![doc], 0));
        }
        if doc.get("spec").is_some() {
            return Ok((vec![serde_json::json!({ "point": {}, "result": doc })], 0));
        }
        return Err(bad("not an iolab result (no spec, runs or point)".into()));
    }
    let mut out: Vec<Option<Value>> = Vec::new();
    // The records of points that did not run, by point: where each is in `out` (a lookup per record,
    // so reading stays linear in the records).
    let mut not_run: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut ignored = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, l) in lines.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(l) {
            // A suite's findings and answers (`answers::record`): not a point.
            Ok(v) if v.get("summary").is_some() => {}
            Ok(v) if v.get("point").is_some() => {
                // A point run again at --resume: its later record replaces the one that did not run.
                let mut point = record_point(&v);
                point.sort();
                let key = format!("{point:?}");
                if let Some(j) = not_run.remove(&key) {
                    out[j] = None;
                }
                if v.get("error").is_some() {
                    not_run.insert(key, out.len());
                }
                out.push(Some(v))
            }
            Ok(_) => return Err(bad(format!("line {} is not a sweep record", i + 1))),
            // Only the last line may be cut short (a write interrupted by a kill).
            Err(_) if i + 1 == lines.len() && !l.ends_with('\n') => ignored = l.len(),
            Err(e) => return Err(bad(format!("line {}: {e}", i + 1))),
        }
    }
    Ok((out.into_iter().flatten().collect(), ignored))
}

/// What a point of a sweep or suite is refused with when its target file exists (most often a file an
/// interrupted iolab left behind).
pub use iolab_engine::target::{TARGET_EXISTS, TARGET_LEFT};

/// Whether a record of a point is run again at `--resume` rather than taken as done: the point did not
/// run because its target file existed (a leftover of an interrupted iolab, which may be gone now; if it
/// is still there, the point is refused again and recorded so).
pub fn retried(rec: &Value) -> bool {
    rec.get("error").and_then(|e| e.as_str()).is_some_and(|e| {
        e.starts_with("--overwrite:") && (e.contains(TARGET_EXISTS) || e.contains(TARGET_LEFT))
    })
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
