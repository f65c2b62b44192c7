//! What makes two runs one workload in `iolab compare`: a run's spec but for the fields that change
//! nothing of what it does, the kind of target and its file system ([`workload_key`]), its short label,
//! a survey's runs as records of their own, and a run's workload without one spec key
//! (`compare --across KEY`: [`without`]).

use serde_json::Value;
use std::collections::BTreeMap;

/// Spec fields that do not make two runs different workloads (seeds, file names, amounts, checking).
const NOT_WORKLOAD: &[&str] = &[
    "seed",
    "seed_text",
    "target",
    "ops",
    "duration_s",
    "file_size",
    "keep",
    "overwrite",
    "verify",
    "count",
    "breakdown",
    "profile",
    "profile_hz",
    "allow_device_writes",
    // --log-interval: how the run is recorded over time, not what it does.
    "log_interval_ms",
    // --op-log: the ops kept for fio's log files (a clock read per op, said in the run's notes).
    "op_log_ms",
    // How the depth was asked for: threads, qd and batch say what it became.
    "inflight",
    // --layers: an untimed pass traced at the block layer after the timed one. A survey traces its
    // first round, so which of a method's runs it keeps (the median) may or may not have it: two
    // surveys of the same workload were compared as having none in common.
    "layers",
];

/// A survey's runs as records of their own (`{"point": {target, method, bs}, "result"}`, those that ran),
/// so that two surveys compare per target, method and block size; other records as they are.
pub fn survey_runs_as_records(recs: Vec<Value>) -> Vec<Value> {
    recs.into_iter().filter_map(survey_run_as_record).collect()
}

/// [`survey_runs_as_records`] of one record (none: a survey's run that did not run).
pub fn survey_run_as_record(mut rec: Value) -> Option<Value> {
    let run = rec.get("result")?;
    let is_survey_run = ["target", "method", "bs"]
        .iter()
        .all(|k| run.get(k).is_some())
        && run.get("spec").is_none();
    if !is_survey_run {
        return Some(rec);
    }
    let point =
        serde_json::json!({"target": run["target"], "method": run["method"], "bs": run["bs"]});
    // The run's result moved into its record, not copied.
    let result = rec
        .get_mut("result")?
        .as_object_mut()?
        .remove("result")
        .filter(|r| !r.is_null())?;
    let mut m = serde_json::Map::new();
    m.insert("point".into(), point);
    m.insert("result".into(), result);
    Some(Value::Object(m))
}

/// The workload a result ran: its spec without the fields above, plus the kind of target.
pub fn workload_key(result: &Value) -> String {
    let mut m: BTreeMap<String, Value> = BTreeMap::new();
    if let Some(spec) = result.get("spec").and_then(|s| s.as_object()) {
        for (k, v) in spec {
            if !NOT_WORKLOAD.contains(&k.as_str()) {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(kind) = result.get("target").and_then(|t| t.get("kind")) {
        m.insert("target_kind".into(), kind.clone());
    }
    // A file on tmpfs and one on a disk's file system are two workloads (a suite has both).
    if let Some(fs) = result.get("target").and_then(|t| t.get("fs")) {
        m.insert("target_fs".into(), fs.clone());
    }
    // Counting or sampling inside the timed pass slows it: such a run is not a repeat of a plain one.
    for k in ["count", "profile"] {
        if let Some(v) = result
            .get("spec")
            .and_then(|s| s.get(k))
            .filter(|v| *v == "inline")
        {
            m.insert(k.into(), v.clone());
        }
    }
    serde_json::to_string(&m).unwrap_or_default()
}

/// A short label of a workload for tables.
pub fn workload_label(result: &Value) -> String {
    let s = |k: &str| {
        result
            .get("spec")
            .and_then(|x| x.get(k))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                o => o.to_string(),
            })
            .unwrap_or_default()
    };
    let kind = result
        .get("target")
        .and_then(|t| t.get("kind"))
        .and_then(|k| k.as_str())
        .unwrap_or("?");
    let rwf = match result.pointer("/spec/rw_flags").and_then(|v| v.as_u64()) {
        Some(f) if f != 0 => format!(" rwf=0x{f:x}"),
        _ => String::new(),
    };
    let inline: String = ["count", "profile"]
        .iter()
        .filter(|k| s(k) == "inline")
        .map(|k| format!(" {k}=inline"))
        .collect();
    // A method's own options (aio's --reap-at-most, io_uring's --provided-buffers): two runs that
    // differ only there are told apart.
    let own: String = result
        .pointer("/spec/method_opts")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match v {
            Value::Bool(true) => Some(format!(" {k}")),
            Value::Bool(false) | Value::Null => None,
            Value::String(t) => Some(format!(" {k}={t}")),
            o => Some(format!(" {k}={o}")),
        })
        .collect();
    // The block size in the unit every view uses ("bs=4 KiB", as the flame graphs say it).
    let bs = result
        .pointer("/spec/bs")
        .and_then(|v| v.as_u64())
        .map_or_else(|| s("bs"), iolab_engine::units::fmt_size);
    let direct = match result.pointer("/spec/direct").and_then(|v| v.as_bool()) {
        Some(true) => " O_DIRECT",
        _ => "",
    };
    let kind = match result.pointer("/target/fs").and_then(|v| v.as_str()) {
        Some(fs) => format!("{kind} on {fs}"),
        None => kind.to_string(),
    };
    format!(
        "{} {}{direct} bs={bs} {} thr={} qd={} batch={}{own}{rwf}{inline} -> {kind}",
        s("method"),
        s("op"),
        s("pattern"),
        s("threads"),
        s("qd"),
        s("batch")
    )
}

/// Where a spec key sits in a result's `spec` (flag spelling: dashes; nested ring and offload options).
fn place(key: &str) -> Vec<&'static str> {
    let k = key.trim_start_matches("--");
    match k {
        "ring" => vec!["ring", "design"],
        "offload-path" => vec!["offload", "path"],
        "doorbell" => vec!["offload", "doorbell"],
        "offload-attack" => vec!["offload", "attacks"],
        "duration" => vec!["duration_s"],
        _ => Vec::new(),
    }
}

/// The value of `key` in a result's spec (as text), and the path it was found at; `kernel` is the
/// release the run ran on (`host.kernel_release`: the guest's inside a guest), in no spec.
fn value_at(result: &Value, key: &str) -> Option<(Vec<String>, String)> {
    if key.trim_start_matches("--") == "kernel" {
        let release = result.pointer("/host/kernel_release")?.as_str()?;
        return Some((vec!["kernel".into()], release.to_string()));
    }
    let spec = result.get("spec")?;
    let dashed = key.trim_start_matches("--");
    let k = dashed.replace('-', "_");
    let fixed = place(key);
    let paths: Vec<Vec<String>> = if fixed.is_empty() {
        vec![
            vec![k.clone()],
            vec!["ring".into(), k.clone()],
            vec!["offload".into(), k],
            vec!["method_opts".into(), dashed.into()],
        ]
    } else {
        vec![fixed.iter().map(|s| s.to_string()).collect()]
    };
    let found = paths.into_iter().find_map(|p| {
        let v = p.iter().try_fold(spec, |x, k| x.get(k))?;
        let text = match v {
            Value::String(s) => s.clone(),
            o => o.to_string(),
        };
        Some((p, text))
    });
    // A method's own option is written only when given: a run without it had a flag off, or none.
    found.or_else(|| {
        let own = iolab_engine::spec::options::METHOD_OPTIONS
            .iter()
            .find(|o| o.key == dashed)?;
        let absent = match own.ty {
            iolab_engine::spec::options::Ty::Bool { .. } => "false",
            _ => "none",
        };
        Some((vec!["method_opts".into(), dashed.into()], absent.into()))
    })
}

/// A result with `key` taken out of its spec (and, for `target`, the kind of target too): the workload
/// it shares with the runs that differ only in `key`.
pub fn without(result: &Value, key: &str) -> Option<(String, String)> {
    let (path, text) = value_at(result, key)?;
    let mut r = result.clone();
    if let Some((last, parents)) = path.split_last() {
        let spec = r.get_mut("spec")?;
        if let Some(parent) = parents.iter().try_fold(&mut *spec, |x, k| x.get_mut(k)) {
            parent.as_object_mut()?.remove(last);
        }
        // The methods' own options: a map left empty goes too, as a run that gave none has none.
        let empty = |v: &Value| v.as_object().is_some_and(|o| o.is_empty());
        if spec.get("method_opts").is_some_and(empty) {
            spec.as_object_mut()?.remove("method_opts");
        }
    }
    if key == "target" {
        r.get_mut("target")?.as_object_mut()?.remove("kind");
    }
    // Across kernels the kernel is what differs, not part of the workload (a guest's run has it there).
    if key.trim_start_matches("--") == "kernel" {
        r.as_object_mut()?.remove("host");
    }
    Some((workload_key(&r), text))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A method's own option is written only when given: a run without it has the option's absent value
    /// (a flag off, a number none), and the two runs share a workload across it.
    #[test]
    fn a_methods_own_option_left_out_is_off_or_none() {
        let run = |opts: Value| serde_json::json!({"spec": {"method": "aio", "qd": 4, "method_opts": opts}});
        let (given, left_out) = (
            run(serde_json::json!({"reap-at-most": 2})),
            run(serde_json::json!({})),
        );
        assert_eq!(value_at(&given, "reap-at-most").unwrap().1, "2");
        assert_eq!(value_at(&left_out, "reap-at-most").unwrap().1, "none");
        assert_eq!(value_at(&left_out, "provided-buffers").unwrap().1, "false");
        assert_eq!(value_at(&left_out, "qd").unwrap().1, "4");
        assert!(value_at(&left_out, "no-such-option").is_none());
        let (a, b) = (
            without(&given, "reap-at-most").unwrap(),
            without(&left_out, "reap-at-most").unwrap(),
        );
        assert_eq!(a.0, b.0, "the same workload");
        assert_eq!((a.1.as_str(), b.1.as_str()), ("2", "none"));
    }

    /// Two runs that differ only in a method's own option have labels that differ there (a report's
    /// legend and compare's rows); a flag is named when on, and an absent option adds nothing.
    #[test]
    fn a_methods_own_options_are_in_its_label() {
        let run = |method: &str, opts: Value| {
            serde_json::json!({"spec": {"method": method, "op": "write", "pattern": "seq", "bs": 4096,
                "threads": 1, "qd": 8, "batch": 1, "method_opts": opts}, "target": {"kind": "dev_null"}})
        };
        let reaping = workload_label(&run("aio", serde_json::json!({"reap-at-most": 4})));
        let own_look = workload_label(&run("aio", serde_json::json!({})));
        assert_eq!(
            reaping,
            "aio write bs=4 KiB seq thr=1 qd=8 batch=1 reap-at-most=4 -> dev_null"
        );
        assert_eq!(
            own_look,
            "aio write bs=4 KiB seq thr=1 qd=8 batch=1 -> dev_null"
        );
        let pbuf = |on| {
            workload_label(&run(
                "io_uring",
                serde_json::json!({"provided-buffers": on}),
            ))
        };
        assert!(
            pbuf(true).contains(" batch=1 provided-buffers -> "),
            "{}",
            pbuf(true)
        );
        assert!(!pbuf(false).contains("provided-buffers"), "{}", pbuf(false));
    }
}
