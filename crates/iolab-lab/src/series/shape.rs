//! What a record holds: its point, and whether it can be one iolab wrote.

use iolab_engine::method::MethodKind;
use serde_json::Value;

/// The point of a record, as (key, value) pairs in the record's order.
pub fn record_point(rec: &Value) -> Vec<(String, String)> {
    match rec.get("point") {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
        Some(Value::String(packed)) => unpacked(packed),
        _ => Vec::new(),
    }
}

/// The value of `key` in a record's point.
pub fn point_get(rec: &Value, key: &str) -> Option<String> {
    record_point(rec)
        .into_iter()
        .find_map(|(k, v)| (k == key).then_some(v))
}

/// A record's point as an object of texts (None where it has none).
pub fn point_object(rec: &Value) -> Option<serde_json::Map<String, Value>> {
    rec.get("point")?;
    Some(
        record_point(rec)
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
    )
}

/// Removes `key` from a record's point, keeping the point's form (an object, or packed).
pub fn point_remove(rec: &mut Value, key: &str) {
    match rec.get_mut("point") {
        Some(Value::Object(m)) => {
            m.shift_remove(key);
        }
        Some(Value::String(p)) => {
            let mut pairs = unpacked(p);
            pairs.retain(|(k, _)| k != key);
            *p = packed_text(&pairs);
        }
        _ => {}
    }
}

/// A record read for what a reader shows holds its point packed into one text: as an object, each of
/// its up to 20 keys took an entry of 112 bytes beside its two texts (about 2.6 KB a point), and a 200
/// MB file of refused points of 14 keys each was reported in 928 MB. Only a reader makes it, after the
/// record was checked: a record whose point is a text in a file is refused as forged.
pub(super) fn pack_point(rec: &mut Value) {
    // An empty point is left as it is: packing it saves nothing.
    if let Some(p) = rec
        .get_mut("point")
        .filter(|p| !p.as_object().is_none_or(|m| m.is_empty()))
    {
        let pairs: Vec<(String, String)> = p
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect();
        *p = Value::String(packed_text(&pairs));
    }
}

/// Pairs as one text: each key and value as its length in bytes, a colon, and its text.
fn packed_text(pairs: &[(String, String)]) -> String {
    let mut s = String::new();
    for t in pairs.iter().flat_map(|(k, v)| [k, v]) {
        s.push_str(&t.len().to_string());
        s.push(':');
        s.push_str(t);
    }
    s
}

/// The pairs of [`packed_text`].
fn unpacked(mut s: &str) -> Vec<(String, String)> {
    let mut texts = Vec::new();
    while let Some((n, rest)) = s.split_once(':') {
        let Some(t) = n.parse::<usize>().ok().and_then(|n| rest.get(..n)) else {
            break;
        };
        texts.push(t.to_string());
        s = &rest[t.len()..];
    }
    let mut it = texts.into_iter();
    std::iter::from_fn(|| Some((it.next()?, it.next()?))).collect()
}

/// Why a record cannot be one iolab wrote: neither a result nor an error; a result that is not a run's
/// (no `spec`, `workload` or figure); or a figure no run can have measured (negative, or not a number
/// where the figure is given). A survey's run is checked by the run it holds.
/// The longest text of a run's `host` iolab writes: the kernel's release (64 bytes at most), the CPU's
/// model name (48), iolab's version, a guest's accelerator: far under this.
const HOST_TEXT_MAX: usize = 1024;

/// A text of the run's `host` longer than any iolab writes (a 30 MB CPU model name would be carried
/// into every page that shows it).
fn host_impossible(run: &Value) -> Option<String> {
    let host = run.get("host")?.as_object()?;
    host.iter().find_map(|(k, v)| {
        let t = v.as_str()?;
        (t.len() > HOST_TEXT_MAX).then(|| {
            format!(
                "host.{k} is {} bytes long, longer than iolab writes ({HOST_TEXT_MAX} at most)",
                iolab_engine::units::thousands_u64(t.len() as u64)
            )
        })
    })
}

/// The longest text of a run's `target` kind or file system iolab writes ("block device", "ext4",
/// "unknown filesystem"): far under this. Both name the workload in every label `compare` prints.
const TARGET_TEXT_MAX: usize = 64;

/// A `target.kind` or `target.fs` longer than any iolab writes (1 MB file system names took `compare`
/// to 5 times its input, each label held and printed whole), or a `host.emulated` that is not true or
/// false (the text "true" was taken for a native run and ranked against one).
fn target_impossible(run: &Value) -> Option<String> {
    let long = ["kind", "fs"].iter().find_map(|k| {
        let t = run.get("target")?.get(k)?.as_str()?;
        (t.len() > TARGET_TEXT_MAX).then(|| {
            format!(
                "target.{k} is {} bytes long, longer than iolab writes ({TARGET_TEXT_MAX} at most)",
                iolab_engine::units::thousands_u64(t.len() as u64)
            )
        })
    });
    long.or_else(|| match run.get("host")?.get("emulated")? {
        Value::Bool(_) | Value::Null => None,
        v => Some(format!("host.emulated is {v}, not true or false")),
    })
}

pub(super) fn impossible(rec: &Value) -> Option<String> {
    if let Some(why) = own_keys_impossible(rec) {
        return Some(why);
    }
    let Some(result) = rec.get("result") else {
        return rec
            .get("error")
            .is_none()
            .then(|| "it holds neither a result nor an error".to_string());
    };
    let survey_run = ["target", "method", "bs"]
        .iter()
        .all(|k| result.get(k).is_some())
        && result.get("spec").is_none();
    // A survey's row that did not run has a null result (or none: a reader drops nulls of its rows).
    let run = match result.get("result") {
        Some(Value::Null) | None if survey_run => return None,
        Some(r) if survey_run => r,
        _ => result,
    };
    let paths = super::figures::FIGURES.iter().map(|f| f.path);
    let more: [&[&str]; 4] = [&["wall_s"], &["ops"], &["bytes"], &["latency", "p99_ns"]];
    let figures = || paths.clone().chain(more);
    // Something a run's result has: its spec, its workload, or a figure.
    let a_run = ["spec", "workload"].iter().any(|k| run.get(*k).is_some())
        || figures().any(|p| super::figures::at(run, p).is_some());
    if !run.is_object() || !a_run {
        return Some("its result is not a run's (no spec, workload or figure)".into());
    }
    for p in figures() {
        match super::figures::at(run, p) {
            None | Some(Value::Null) => {}
            Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v >= 0.0 && v.is_finite()) => {}
            Some(v) => return Some(format!("{} is {v}", p.join("."))),
        }
    }
    if let Some(why) = spec_impossible(run)
        .or_else(|| point_not_spec(rec, run))
        .or_else(|| host_impossible(run))
        .or_else(|| target_impossible(run))
        .or_else(|| settings_impossible(run))
    {
        return Some(why);
    }
    let (ops, wall) = (super::figures::at(run, &["ops"]), run.get("wall_s"));
    if ops.and_then(Value::as_f64).is_some_and(|n| n > 0.0)
        && wall.and_then(Value::as_f64) == Some(0.0)
    {
        return Some("it ran ops in a wall time of 0 s".into());
    }
    percentiles_out_of_order(run).or_else(|| beyond_the_run(run))
}

/// The most a figure can be on any machine, by its unit, where the run's own span does not bound it: a
/// trillion ops a second (a no-op on 1,024 threads makes about 50 G), 2^50 MiB/s (writes to /dev/null
/// move no data: 1 GiB blocks at 9 M ops/s are 2^53), 2^50 ns (13 days) an op, a CPU busy for 2^32 s,
/// a million calls an op.
const MOST: [(&str, f64); 8] = [
    ("iops", 1e12),
    ("mib_s", 1_125_899_906_842_624.0),
    ("ns_per_op", 1_125_899_906_842_624.0),
    ("lat_p50", 1_125_899_906_842_624.0),
    ("lat_p99", 1_125_899_906_842_624.0),
    ("cpu_user", 4_294_967_296.0),
    ("cpu_sys", 4_294_967_296.0),
    ("syscalls_per_op", 1e6),
];

/// The largest number a result holds outside its spec (a count of 64 bits): beyond it, none of iolab's.
const MOST_NUMBER: f64 = 18_446_744_073_709_551_616.0;

/// The first number of `v` above [`MOST_NUMBER`], by its path (a result's spec aside: its seed is a
/// 64-bit number too, and the spec is checked on its own).
fn number_beyond(v: &Value, path: &mut Vec<String>) -> Option<String> {
    match v {
        Value::Number(n) if n.as_f64().is_some_and(|x| x.abs() > MOST_NUMBER) => Some(format!(
            "{} is {}",
            path.join("."),
            iolab_engine::units::show_number(n.as_f64().unwrap_or_default())
        )),
        Value::Object(m) => m.iter().find_map(|(k, x)| {
            if path.is_empty() && k == "spec" {
                return None;
            }
            path.push(k.clone());
            let found = number_beyond(x, path);
            path.pop();
            found
        }),
        Value::Array(a) => a.iter().find_map(|x| number_beyond(x, path)),
        _ => None,
    }
}

/// The most threads a run has: CPU time beyond that many busy for the whole run is no run's.
const MOST_THREADS: f64 = 1024.0;

/// Why a run's figures cannot be of its own ops and time: a rate above what its ops (or bytes) over its
/// wall time give, an op's latency longer than the run, CPU time beyond 1,024 threads busy for all of
/// it (a second's slack each: a run's setup is counted in its process's CPU); or, whatever its span,
/// a figure beyond what any machine does ([`MOST`]).
fn beyond_the_run(run: &Value) -> Option<String> {
    use super::figures::{num, FIGURES};
    let of = |p: &[&str]| num(run, p).filter(|v| *v > 0.0);
    let wall = of(&["wall_s"]);
    let span = |name: &str| -> Option<f64> {
        let w = wall?;
        Some(match name {
            // No ops, no rate (a forged 6.34 M ops/s beside 0 ops).
            "iops" => num(run, &["ops"]).filter(|n| *n >= 0.0)? / w * 1.5,
            "mib_s" => of(&["bytes"])? / w / 1_048_576.0 * 1.5,
            "lat_p50" | "lat_p99" | "lat_max" => (w * 2.0 + 1.0) * 1e9,
            // No more CPUs than the machine had (a second's slack: setup is counted too).
            "cpu_user" | "cpu_sys" => (w + 1.0) * cpus(run).unwrap_or(MOST_THREADS),
            _ => return None,
        })
    };
    if let Some(why) = number_beyond(run, &mut Vec::new()) {
        return Some(format!("{why}, more than any count of iolab's"));
    }
    // The slowest op and the gaps too, not only the figures compared.
    let max: [(&str, &[&str]); 7] = [
        ("lat_max", &["latency", "p999_ns"]),
        ("lat_max", &["latency", "max_ns"]),
        ("lat_max", &["gap", "p50_ns"]),
        ("lat_max", &["gap", "p90_ns"]),
        ("lat_max", &["gap", "p99_ns"]),
        ("lat_max", &["gap", "p999_ns"]),
        ("lat_max", &["gap", "max_ns"]),
    ];
    let figures = FIGURES.iter().map(|f| (f.name, f.path)).chain(max);
    for (name, path) in figures {
        let Some(v) = num(run, path) else {
            continue;
        };
        let most = MOST.iter().find(|m| m.0 == name).map(|m| m.1);
        let bound = [span(name), most].into_iter().flatten().reduce(f64::min);
        if let Some(b) = bound.filter(|b| v > *b) {
            let what = match span(name) {
                Some(s) if s <= b => "more than its ops and wall time allow",
                _ => "more than any machine does",
            };
            return Some(format!(
                "{} is {}, {what}",
                path.join("."),
                iolab_engine::units::show_number(v)
            ));
        }
    }
    None
}

/// The CPUs a run's machine had, where its record says.
fn cpus(run: &Value) -> Option<f64> {
    super::figures::num(run, &["host", "cpus_online"]).filter(|n| *n >= 1.0)
}

/// The most CPUs a machine has (Linux's NR_CPUS is at most 8,192).
const MOST_CPUS: f64 = 8192.0;

/// Why a run's settings or its machine's facts cannot be a run's: a block size, depth, batch or thread
/// count of 0 or beyond what iolab accepts, a machine of no CPUs or more than Linux has, a share of the
/// span outside 0..1 (steal, CPU pressure), or more waiting tasks or other work than it had.
fn settings_impossible(run: &Value) -> Option<String> {
    let of = |p: &[&str]| super::figures::num(run, p);
    let newest = f64::from(iolab_engine::result::SCHEMA_VERSION);
    if let Some(v) = of(&["schema_version"]).filter(|v| *v > newest) {
        return Some(format!(
            "schema_version is {v}, which no iolab up to this one (schema {newest}) writes"
        ));
    }
    let threads = of(&["spec", "threads"]).unwrap_or(1.0);
    let cpus = cpus(run).unwrap_or(MOST_CPUS);
    // A block of at most 1 GiB, at most 4,096 requests in flight or in a batch (what a spec takes).
    let bounds: [(&[&str], f64, f64); 9] = [
        (&["spec", "bs"], 1.0, 1_073_741_824.0),
        (&["spec", "qd"], 1.0, 4096.0),
        (&["spec", "batch"], 1.0, 4096.0),
        (&["spec", "threads"], 1.0, MOST_THREADS),
        (&["host", "cpus_online"], 1.0, MOST_CPUS),
        (&["disturbance", "steal_share"], 0.0, 1.0),
        (&["disturbance", "psi_some"], 0.0, 1.0),
        // Every task of the run waiting all the time: its threads and iolab's own (the main thread, a
        // submitter, a stream peer's, the samplers: fewer than 16).
        (&["disturbance", "runqueue_share"], 0.0, threads + 16.0),
        (&["disturbance", "others_cpus"], 0.0, cpus),
    ];
    bounds.iter().find_map(|(p, lo, hi)| {
        let v = run.pointer(&format!("/{}", p.join("/")))?;
        // A text or null is another schema's (an older iolab's, another tool's): not judged here.
        if !v.is_number() {
            return None;
        }
        // 10% slack above: a share read from counters updated at their own times can pass 1 a little.
        let ok = v.as_f64().is_some_and(|x| x >= *lo && x <= hi * 1.1);
        (!ok).then(|| {
            let range = match *hi == f64::MAX {
                true => format!("at least {lo}"),
                false => format!("{lo} to {}", iolab_engine::units::show_number(*hi)),
            };
            let shown = v.as_f64().map(iolab_engine::units::show_number);
            format!(
                "{} is {}, where a run's is {range}",
                p.join("."),
                shown.unwrap_or_default()
            )
        })
    })
}

/// The longest text iolab writes as a point's key or value, or a spec's text (a path: PATH_MAX).
const MOST_TEXT: usize = 4096;

/// The most keys a record's point holds, and the points of one file name in all: the keys a sweep or
/// suite step varies and iolab's own (step, quick, repeat, run, profile, kernel).
pub const MAX_POINT_KEYS: usize = 20;

/// Why a record's own keys cannot be iolab's: a point that is not an object of short texts, an error
/// that is not a text, an exit code that is not a number, a repeat that is not {run, of}, or the
/// `repeats` only a report makes.
fn own_keys_impossible(rec: &Value) -> Option<String> {
    let short_text = |v: &Value| v.as_str().is_some_and(|t| t.len() <= MOST_TEXT);
    let point_ok = rec.get("point").is_none_or(|p| {
        p.as_object().is_some_and(|p| {
            p.len() <= MAX_POINT_KEYS
                && p.iter().all(|(k, v)| k.len() <= MOST_TEXT && short_text(v))
        })
    });
    let why = if !point_ok {
        "its point is not an object of at most 20 texts of at most 4,096 bytes"
    } else if rec.get("error").is_some_and(|e| !e.is_string()) {
        "its error is not a text"
    } else if rec.get("exit_code").is_some_and(|c| !c.is_number()) {
        "its exit_code is not a number"
    } else if rec.get("repeat").is_some_and(|r| {
        !["run", "of"]
            .iter()
            .all(|k| r.get(k).is_some_and(Value::is_u64))
    }) {
        "its repeat is not {run, of}"
    } else if rec.get("repeats").is_some() {
        "it holds `repeats`, which only a report makes"
    } else {
        return None;
    };
    Some(why.into())
}

/// Where the record's point names a method, block size or thread count its result's spec did not run
/// with: a record of another point (a line swapped in), never one iolab wrote. (A depth is not compared:
/// an offload method's depth is its batch.)
fn point_not_spec(rec: &Value, run: &Value) -> Option<String> {
    let (point, spec) = (rec.get("point")?, run.get("spec")?);
    let said = |k: &str| point.get(k).and_then(Value::as_str);
    if let (Some(p), Some(r)) = (said("method"), spec.get("method").and_then(Value::as_str)) {
        if MethodKind::parse(p).is_some_and(|m| Some(m) != MethodKind::parse(r)) {
            return Some(format!(
                "its point names method {p}, but its result was run by {r}"
            ));
        }
    }
    ["bs", "threads"].into_iter().find_map(|k| {
        let p = said(k)?;
        let asked = iolab_engine::units::parse_size(p).ok()?;
        let ran = spec.get(k).and_then(Value::as_u64)?;
        (asked != ran).then(|| format!("its point names {k} {p}, but its result ran with {ran}"))
    })
}

/// Why a run's spec cannot be iolab's: a text in it longer than any iolab writes (a target's path).
fn spec_impossible(run: &Value) -> Option<String> {
    // The kind of target is one of iolab's words ("file", "dev_null" ...), shown in every label.
    let kind = run.pointer("/target/kind");
    if kind.is_some_and(|k| k.as_str().is_none_or(|k| k.len() > 64)) {
        return Some("target.kind is not a word of at most 64 bytes".into());
    }
    let spec = run.get("spec")?;
    let Some(spec) = spec.as_object() else {
        return Some("its spec is not an object of settings".into());
    };
    let (k, _) = spec
        .iter()
        .find(|(_, v)| v.as_str().is_some_and(|t| t.len() > MOST_TEXT))?;
    Some(format!("spec.{k} is longer than 4,096 bytes"))
}

/// Why a run's latency percentiles cannot be one distribution's: a lower one above a higher one (each
/// read from one histogram, p50 <= p90 <= p99 <= p99.9 <= max).
fn percentiles_out_of_order(run: &Value) -> Option<String> {
    let lat = run.get("latency")?;
    let mut below: Option<(&str, f64)> = None;
    for k in ["p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"] {
        let Some(v) = lat.get(k).and_then(Value::as_f64) else {
            continue;
        };
        if let Some((lower, w)) = below.filter(|(_, w)| *w > v * (1.0 + 1e-9)) {
            return Some(format!(
                "latency.{lower} ({}) is above latency.{k} ({})",
                iolab_engine::units::show_number(w),
                iolab_engine::units::show_number(v)
            ));
        }
        below = Some((k, v));
    }
    None
}
