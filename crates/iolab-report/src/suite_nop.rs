//! The offload suite's NOP table (`table = "nop"`): each row per NOP and per round trip, in ns and cycles,
//! the client's own cycles for the offloaded rows, the server's wake-ups per NOP, and the thesis's figures
//! beside the rows they compare with (Figure 4.3 with user_data, Figure 4.1's rdtsc beside the clock).

use crate::suite_cols::txt;
use crate::text::Align;
use iolab_engine::offload::{SEED_NATIVE_CYCLES, SEED_OFFLOADED_CYCLES};
use iolab_engine::offload::{SEED_RDTSC_APP_CYCLES, SEED_RDTSC_INMATE_CYCLES};
use iolab_engine::units::fmt_ns;
use iolab_lab::series::num;
use serde_json::Value;

use Align::{Left as L, Right as R};

pub(crate) const COLUMNS: &[(&str, Align)] = &[
    ("point", L),
    ("NOPs/trip", R),
    ("time/NOP", R),
    ("cycles/NOP", R),
    ("p50 cyc/NOP", R),
    ("trip p50 cyc", R),
    ("trip p99 cyc", R),
    ("trip mean cyc", R),
    ("wake-ups/NOP", R),
    ("thesis cyc", R),
];

/// "1,234" of a cycle count, "-" when there is none.
fn cyc(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| iolab_engine::units::thousands(x.round()))
        .unwrap_or_else(|| "-".into())
}

/// The thesis's figure a row compares with: Figure 4.3 at batch 1 (native for in-process io_uring and the
/// unsandboxed client, offloaded for the sandboxed paths).
fn thesis(batch: f64, path: &str, method: &str) -> String {
    if batch != 1.0 {
        return "-".into();
    }
    use iolab_engine::method::{io_uring, offload};
    let c = if method == io_uring::INFO.name || path == "native" {
        SEED_NATIVE_CYCLES
    } else if method == offload::INFO.name {
        SEED_OFFLOADED_CYCLES
    } else {
        return "-".into();
    };
    cyc(Some(c as f64))
}

/// The clock's row: one read's cost in cycles beside the thesis's rdtsc (Figure 4.1), and its description.
fn clock_row(r: &Value) -> (Vec<String>, Option<String>) {
    let c = &r["clock"];
    let tsc = txt(c, &["kind"]).to_ascii_lowercase().contains("tsc");
    let ticks = num(c, &["overhead_ticks_mean"]);
    let mut cells = vec![
        "clock read (mean)".to_string(),
        "-".into(),
        fmt_ns(num(c, &["overhead_ns"]).unwrap_or(f64::NAN)),
        if tsc {
            ticks.map_or("-".into(), |t| format!("{t:.1}"))
        } else {
            "-".into()
        },
    ];
    cells.extend(["-", "-", "-", "-", "-"].map(String::from));
    cells.push(format!(
        "{SEED_RDTSC_APP_CYCLES} / {SEED_RDTSC_INMATE_CYCLES}"
    ));
    let note = format!(
        "one clock read: {}; the thesis's rdtsc (Figure 4.1): {SEED_RDTSC_APP_CYCLES} cycles in the \
         application, {SEED_RDTSC_INMATE_CYCLES} in the inmate",
        txt(c, &["description"])
    );
    (cells, Some(note))
}

/// A row of the NOP table: a run (per NOP and per round trip of the row's batch), or the clock's cost.
pub(crate) fn nop_row(rest: String, r: &Value) -> (Vec<String>, Option<String>) {
    if r.get("workload").and_then(|w| w.as_str()) == Some("clock") {
        return clock_row(r);
    }
    let f = |p: &[&str]| num(r, p);
    let ns = f(&["ns_per_op"]).unwrap_or(f64::NAN);
    let tsc = txt(&r["clock"], &["kind"])
        .to_ascii_lowercase()
        .contains("tsc");
    let ghz = f(&["clock", "hz"]).filter(|_| tsc).map(|h| h * 1e-9);
    let method = txt(r, &["spec", "method"]);
    let path = txt(r, &["offload", "path"]);
    let batch = f(&["offload", "batch"])
        .or(f(&["spec", "batch"]))
        .unwrap_or(1.0);
    let own = |k: &[&str]| {
        let mut p = vec!["offload", "client_cycles"];
        p.extend_from_slice(k);
        num(r, &p)
    };
    // Offloaded rows: the client's own cycles. In-process rows: iolab's clock (ns x GHz); a request's
    // latency there spans its submission round, which is the round trip.
    let (per_nop, p50, p99, mean) = if own(&["batch"]).is_some() {
        (
            own(&["per_request_cycles"]),
            own(&["round_trips", "p50_cycles"]),
            own(&["round_trips", "p99_cycles"]),
            own(&["round_trips", "mean_cycles"]),
        )
    } else {
        let g = |v: Option<f64>| v.zip(ghz).map(|(a, b)| a * b);
        (
            g(Some(ns)),
            g(f(&["latency", "p50_ns"])),
            g(f(&["latency", "p99_ns"])),
            g(Some(ns * batch)),
        )
    };
    let ops = f(&["ops"]).unwrap_or(0.0);
    let wakes = f(&["offload", "server_sleeps"])
        .filter(|_| ops > 0.0)
        .map_or("-".to_string(), |s| format!("{:.2}", s / ops));
    let cells = vec![
        rest,
        format!("{batch:.0}"),
        fmt_ns(ns),
        cyc(per_nop),
        cyc(p50.map(|v| v / batch)),
        cyc(p50),
        cyc(p99),
        cyc(mean),
        wakes,
        thesis(batch, &path, &method),
    ];
    (cells, None)
}
