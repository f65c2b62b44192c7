//! Repeats of one configuration: the K records of a `run --repeat K --json` document (marked `"repeat":
//! {"run": i, "of": K}` by `series::records_of`) and the runs of a point of `suite --repeat K` (its
//! point's `repeat` key). The report shows each configuration as one run with its spread: the table a row with each figure's median and range, the charts one point or bar.
//!
//! The merged record keeps the K results under `repeats.runs`; its `result` is the median run (the
//! repeat with the median time per op, so its latency distribution is one that was measured) with its
//! throughput, IOPS, time per op, CPU times, system calls per op and wall time replaced by the medians
//! of the K repeats.

use crate::fields::{self, Field};
use serde_json::Value;

/// The scalar figures a merged run's result carries as medians of its repeats.
const MEDIANS: [Field; 7] = [
    fields::MIB_S,
    fields::IOPS,
    fields::NS_PER_OP,
    fields::CPU_USER_S,
    fields::CPU_SYS_S,
    fields::SYSCALLS_PER_OP,
    fields::WALL_S,
];

/// `(run, of)` of a record from a `--repeat` document.
fn marker(rec: &Value) -> Option<(u64, u64)> {
    let rec = &*iolab_lab::series::held_value(rec);
    let m = rec.get("repeat")?;
    Some((m.get("run")?.as_u64()?, m.get("of")?.as_u64()?))
}

/// The records of one file with the repeats of each configuration made one record: each complete group
/// of a `run --repeat` document (runs 1..K of K, in order), and the runs of a suite's point (`suite
/// --repeat`: points that differ only in their `repeat` key; decimal lines keep every run).
pub(super) fn group(recs: Vec<Value>) -> Vec<Value> {
    suite_points(documents(recs))
}

/// A suite point's coordinates without its `repeat` key, for a record of a repeated point that ran.
fn suite_key(rec: &Value) -> Option<String> {
    let rec = &*iolab_lab::series::held_value(rec);
    let mut p = iolab_lab::series::point_object(rec)?;
    p.remove("repeat")?;
    let r = fields::RESULT.at(rec)?;
    if fields::WORKLOAD.at(r).is_some() {
        return None;
    }
    Some(Value::Object(p).to_string())
}

/// The runs of each repeated suite point as one record, where the first of them was (the members of
/// each point found by one lookup, so that this stays linear in the records).
fn suite_points(recs: Vec<Value>) -> Vec<Value> {
    let keys: Vec<Option<String>> = recs.iter().map(suite_key).collect();
    let mut members: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, k) in keys.iter().enumerate() {
        if let Some(k) = k {
            members.entry(k.as_str()).or_default().push(i);
        }
    }
    let mut slots: Vec<Option<Value>> = recs.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(slots.len());
    for i in 0..slots.len() {
        // Taken already: a later member of a point whose first member came before.
        let Some(rec) = slots[i].take() else {
            continue;
        };
        let Some(k) = &keys[i] else {
            out.push(rec);
            continue;
        };
        // Merged as values (a record of JSON lines is held as its text).
        let mut g = vec![parsed(rec)];
        g.extend(
            members[k.as_str()][1..]
                .iter()
                .filter_map(|&j| slots[j].take())
                .map(parsed),
        );
        match merge(g) {
            Ok(m) => out.push(m),
            Err(g) => out.extend(g),
        }
    }
    out
}

/// A record as a value: one held as its JSON text parsed.
fn parsed(rec: Value) -> Value {
    match rec {
        Value::String(_) => iolab_lab::series::held_value(&rec).into_owned(),
        rec => rec,
    }
}

/// The records with each complete group of a `run --repeat` document made one record.
fn documents(recs: Vec<Value>) -> Vec<Value> {
    let marks: Vec<Option<(u64, u64)>> = recs.iter().map(marker).collect();
    let mut out = Vec::with_capacity(recs.len());
    let mut recs = recs.into_iter().enumerate();
    while let Some((i, rec)) = recs.next() {
        let k = match marks[i] {
            Some((1, k)) if k > 1 => k as usize,
            _ => 0,
        };
        let whole = k > 0
            && i + k <= marks.len()
            && (0..k).all(|j| marks[i + j] == Some((j as u64 + 1, k as u64)));
        if !whole {
            out.push(rec);
            continue;
        }
        // Merged as values (a document's runs are held as their texts).
        let mut g = vec![parsed(rec)];
        g.extend(recs.by_ref().take(k - 1).map(|(_, r)| parsed(r)));
        match merge(g) {
            Ok(m) => out.push(m),
            Err(g) => out.extend(g),
        }
    }
    out
}

/// One record of the repeats `g`, whose results it takes (`g` back when fewer than two have results).
fn merge(mut g: Vec<Value>) -> Result<Value, Vec<Value>> {
    let results: Vec<&Value> = g.iter().filter_map(|r| fields::RESULT.at(r)).collect();
    if results.len() < 2 {
        return Err(g);
    }
    let mut by_time: Vec<(usize, f64)> = results
        .iter()
        .enumerate()
        .map(|(i, r)| (i, fields::NS_PER_OP.num(r).unwrap_or(f64::NAN)))
        .collect();
    by_time.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mid = by_time[(by_time.len() - 1) / 2].0;
    let mut rep = results[mid].clone();
    for f in MEDIANS {
        if let Some(s) = stat(&results, f) {
            set(&mut rep, f, s.median);
        }
    }
    let of = results.len();
    // The runs' results are moved into the record, not copied (a document of 10,000 runs was held twice).
    let results: Vec<Value> = g
        .iter_mut()
        .filter_map(|r| r.as_object_mut()?.remove("result"))
        .collect();
    let mut rec = g.swap_remove(0);
    drop(g);
    iolab_lab::series::point_remove(&mut rec, "repeat");
    if let Some(o) = rec.as_object_mut() {
        o.remove("repeat");
        o.insert("result".into(), rep);
        let mut repeats = serde_json::Map::new();
        repeats.insert("of".into(), of.into());
        repeats.insert("median_run".into(), (mid + 1).into());
        repeats.insert("runs".into(), Value::Array(results));
        o.insert("repeats".into(), Value::Object(repeats));
    }
    Ok(rec)
}

/// Sets the number at `f` in `r` (where `r` has it).
fn set(r: &mut Value, f: Field, v: f64) {
    if f.num(r).is_none() {
        return;
    }
    let mut at = r;
    for k in f.path() {
        match at.get_mut(*k) {
            Some(x) => at = x,
            None => return,
        }
    }
    *at = serde_json::json!(v);
}

/// The number of repeats a record stands for (None: a single run).
pub(super) fn count(rec: &Value) -> Option<usize> {
    Some(rec.get("repeats")?.get("of")?.as_u64()? as usize)
}

/// Statistics of figure `f` over results `rs`.
pub(super) fn stat(rs: &[&Value], f: Field) -> Option<iolab_engine::stats::Stat> {
    let xs: Vec<f64> = rs.iter().filter_map(|r| f.num(r)).collect();
    iolab_engine::stats::stat(&xs)
}

/// The results a merged record stands for (empty for a single run).
pub(super) fn runs(rec: &Value) -> Vec<&Value> {
    rec.get("repeats")
        .and_then(|r| r.get("runs"))
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(ns: f64) -> Value {
        json!({"spec": {"method": "psync", "bs": 4096, "op": "write"}, "ns_per_op": ns,
               "iops": 1e9 / ns, "mib_s": 1e9 / ns / 256.0, "wall_s": ns * 1e-6,
               "latency": {"p50_ns": ns, "p99_ns": 2.0 * ns}})
    }

    #[test]
    fn a_repeat_document_is_one_run_at_its_medians() {
        let recs: Vec<Value> = [300.0, 100.0, 200.0]
            .iter()
            .enumerate()
            .map(|(i, ns)| json!({"point": {}, "result": result(*ns), "repeat": {"run": i + 1, "of": 3}}))
            .collect();
        let mut with_single = vec![json!({"point": {}, "result": result(50.0)})];
        with_single.extend(recs);
        let g = group(with_single.clone());
        assert_eq!(g.len(), 2);
        assert_eq!(count(&g[0]), None);
        assert_eq!(count(&g[1]), Some(3));
        let r = &g[1]["result"];
        assert_eq!(r["ns_per_op"], 200.0);
        assert_eq!(r["iops"], 1e9 / 200.0);
        // The median run's latency, one that was measured.
        assert_eq!(r["latency"]["p99_ns"], 400.0);
        assert_eq!(runs(&g[1]).len(), 3);
        // An incomplete document (a run missing) is left as it is.
        let cut = group(with_single[..3].to_vec());
        assert_eq!(cut.len(), 3);
    }

    #[test]
    fn a_suite_points_repeats_are_one_run_and_errors_stay() {
        let p = |step: &str, k: u32, ns: f64| json!({"point": {"step": step, "repeat": k.to_string()}, "result": result(ns)});
        let recs = vec![
            p("a", 1, 10.0),
            p("b", 1, 20.0),
            p("b", 2, 22.0),
            p("a", 2, 12.0),
            p("a", 3, 11.0),
            json!({"point": {"step": "b", "repeat": "3"}, "error": "refused"}),
        ];
        let g = group(recs.clone());
        assert_eq!(g.len(), 3, "{g:?}");
        assert_eq!(g[0]["point"], json!({"step": "a"}));
        assert_eq!(count(&g[0]), Some(3));
        assert_eq!(g[0]["result"]["ns_per_op"], 11.0);
        assert_eq!(count(&g[1]), Some(2));
        assert_eq!(g[1]["result"]["ns_per_op"], 21.0);
        assert!(g[2].get("error").is_some());
    }
}
