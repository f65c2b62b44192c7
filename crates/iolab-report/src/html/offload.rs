//! The offload runs' own timing in the HTML report: the cycles each client measured around its requests
//! and round trips, per request and per round trip, and how often its server had to be woken.

use super::markup::esc;
use crate::fields;
use serde_json::Value;
use std::fmt::Write;

/// A table of the offload runs' client cycles; nothing when no record is an offload run.
pub(super) fn section(runs: &[super::model::Run], o: &mut String) {
    let rows: Vec<(std::borrow::Cow<Value>, &String)> = runs
        .iter()
        .filter(|x| x.has.offload)
        .map(|x| (x.r(), &x.label))
        .collect();
    if rows.is_empty() {
        return;
    }
    o.push_str(
        "<h2>Offload: the client's own cycles</h2>\n<p>Read by the client itself (RDTSC inside its seccomp \
         filter) around each request (from its round trip's start to its completion) and each round trip (a \
         batch, submit to all completions); per request = a round trip's mean / its batch. Server sleeps: \
         voluntary context switches of the SQPOLL or broker thread, each a wake-up a request had to wait \
         for.</p>\n<table><tr><th>run</th><th>path</th><th>batch</th><th>per request, cycles</th>\
         <th>per request, ns</th><th>request p50</th><th>request p99</th><th>round trip p50</th>\
         <th>round trip p99</th><th>round trip mean</th><th>requests timed</th><th>server sleeps / request</th>\
         <th>doorbells / request</th></tr>\n",
    );
    for (r, label) in rows {
        row(&r, label, o);
    }
    o.push_str("</table>\n");
}

fn row(r: &Value, label: &str, o: &mut String) {
    let f = |p: fields::Field, d: usize| {
        p.num(r)
            .map(|v| format!("{v:.d$}"))
            .unwrap_or_else(|| "-".into())
    };
    let count = fields::OFFLOAD_REQ_COUNT.num(r);
    let per_req = |p: fields::Field| match (p.num(r), count) {
        (Some(v), Some(n)) if n > 0.0 => format!("{:.2}", v / n),
        _ => "-".into(),
    };
    if fields::OFFLOAD_CYCLES.at(r).is_none_or(Value::is_null) {
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td colspan=\"10\">no client cycles (no cycle counter, \
             or a record from before iolab had them)</td></tr>",
            esc(label),
            esc(&fields::OFFLOAD_PATH.text(r)),
            f(fields::OFFLOAD_BATCH, 0)
        );
        return;
    }
    let _ = writeln!(
        o,
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
         <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(label),
        esc(&fields::OFFLOAD_PATH.text(r)),
        f(fields::OFFLOAD_BATCH, 0),
        f(fields::OFFLOAD_PER_REQ, 0),
        f(fields::OFFLOAD_PER_REQ_NS, 1),
        f(fields::OFFLOAD_REQ_P50, 0),
        f(fields::OFFLOAD_REQ_P99, 0),
        f(fields::OFFLOAD_TRIP_P50, 0),
        f(fields::OFFLOAD_TRIP_P99, 0),
        f(fields::OFFLOAD_TRIP_MEAN, 0),
        f(fields::OFFLOAD_REQ_COUNT, 0),
        per_req(fields::OFFLOAD_SERVER_SLEEPS),
        per_req(fields::OFFLOAD_DOORBELLS),
    );
}
