//! What a record holds: its point, and whether it can be one iolab wrote.

use serde_json::Value;

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

/// Why a record cannot be one iolab wrote: neither a result nor an error; a result that is not a run's
/// (no `spec`, `workload` or figure); or a figure no run can have measured (negative, or not a number
/// where the figure is given). A survey's run is checked by the run it holds.
pub(super) fn impossible(rec: &Value) -> Option<String> {
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
    let run = match result.get("result") {
        Some(Value::Null) if survey_run => return None,
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
    percentiles_out_of_order(run)
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
            return Some(format!("latency.{lower} ({w}) is above latency.{k} ({v})"));
        }
        below = Some((k, v));
    }
    None
}
