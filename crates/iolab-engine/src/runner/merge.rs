//! The workers' interval logs merged into the pass's figures over time (`--log-interval`).
use super::intervals::{halve, quantiles, Closed, IntervalLog, COUNT_BITS, C_LEN};

use super::work::WorkerOut;
use crate::result::IntervalFigures;
use crate::spec::{Spec, AUTO_LOG_MIN_S};

/// The threads' intervals added up by number, as the result gives them (empty when the spec asks for
/// none, or leaves them automatic and the pass took less than [`AUTO_LOG_MIN_S`]); without latencies
/// unless `timed` (the run timed its ops, all or a sample).
pub(super) fn merge(
    outs: &[WorkerOut],
    (spec, timed): (&Spec, bool),
    ns_per_tick: f64,
    moved_per_op: u64,
    wall_s: f64,
) -> Vec<IntervalFigures> {
    let (_, auto) = spec.log_interval();
    let logs: Vec<&IntervalLog> = outs
        .iter()
        .map(|o| &o.log)
        .filter(|l| l.every > 0 && !l.closed.is_empty())
        .collect();
    if logs.is_empty() || (auto && wall_s < AUTO_LOG_MIN_S) {
        return Vec::new();
    }
    // Threads that ended before the others doubled their interval are brought to the same one.
    let every = logs.iter().map(|l| l.every).max().unwrap_or(1);
    let mut all: Vec<Closed> = Vec::new();
    for l in &logs {
        let mut c = l.closed.clone();
        let mut e = l.every;
        while e < every {
            c = halve(c);
            e *= 2;
        }
        all.extend(c);
    }
    all.sort_by_key(|c| c.slot);
    let t0 = logs.iter().map(|l| l.first).min().unwrap_or(0);
    let s = |t: u64| t.saturating_sub(t0) as f64 * ns_per_tick * 1e-9;
    let mut dense = vec![0u64; C_LEN];
    all.chunk_by(|a, b| a.slot == b.slot)
        .map(|group| {
            let start = group.iter().map(|c| c.start).min().unwrap_or(t0);
            let end = group.iter().map(|c| c.end).max().unwrap_or(t0);
            let ops: u64 = group.iter().map(|c| c.ops).sum();
            let split = spec.bs_split.is_some();
            let bytes: u64 = group
                .iter()
                .map(|c| super::drawn::interval_bytes(c, split, moved_per_op))
                .sum();
            for p in group.iter().flat_map(|c| &c.hist) {
                dense[(p >> COUNT_BITS) as usize] += p & ((1 << COUNT_BITS) - 1);
            }
            let q = quantiles(&mut dense, ops, &[0.5, 0.9, 0.99]);
            let span = s(end) - s(start);
            let per_s = |x: f64| if span > 0.0 { x / span } else { 0.0 };
            let max = group.iter().map(|c| c.max).max().unwrap_or(0);
            IntervalFigures {
                start_s: s(start),
                end_s: s(end),
                ops,
                bytes,
                iops: per_s(ops as f64),
                mib_s: per_s(bytes as f64 / (1 << 20) as f64),
                lat_p50_ns: timed.then_some(q[0] * ns_per_tick),
                lat_p90_ns: timed.then_some(q[1] * ns_per_tick),
                lat_p99_ns: timed.then_some(q[2] * ns_per_tick),
                lat_max_ns: timed.then_some(max as f64 * ns_per_tick),
            }
        })
        .collect()
}
