//! How the survey times its synchronous methods' ops. Ranked by time per op, a method whose op costs a
//! few clock reads would be ranked largely by the clock: stdio's 4 B writes take about 5 ns, a clock
//! read about 11 ns on a VM. So each table (a target and block size) is probed first, a short run of each
//! of its synchronous methods, and where the cheapest of them took less than [`CLOCK_READS`] clock reads
//! per op, every synchronous method of that table times one op in [`SAMPLE_EVERY`] on its own
//! (`--latency-sample`): its time per op then comes from each run's span, and all the table's methods are
//! timed alike. `survey --latency-sample N` sets N for every synchronous method instead, and 0 for the
//! queued ones too (io_uring, aio, uring_cmd: no request timed).

use crate::survey_run::Cell;
use iolab_engine::measure::clock::ClockInfo;
use serde::{Deserialize, Serialize};

/// One op in this many is timed on its own in a table of cheap ops.
pub const SAMPLE_EVERY: u64 = 64;
/// A table whose cheapest synchronous op costs less than this many clock reads is sampled.
pub const CLOCK_READS: f64 = 10.0;
/// Ops of each probing run (a few hundred microseconds for the cheapest ops).
const PROBE_OPS: u64 = 2_000;

/// How one table's synchronous methods were timed, in the survey's JSON (`timing`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableTiming {
    pub target: String,
    pub bs: u64,
    /// One op in this many timed on its own (0: none; 1: every op).
    pub latency_sample: u64,
    /// `--latency-sample N` as given, or "iolab's choice".
    pub chosen: String,
    /// The cheapest synchronous method of the probe and its time per op, ns (absent where the choice was
    /// given, or no probe ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cheapest: Option<(String, f64)>,
}

/// The timing of each table of `cells`: `asked` (`--latency-sample`) for all, else probed (see the
/// module's doc). The cells' specs are not changed: [`apply`] does.
pub fn choose(cells: &[Cell], asked: Option<u64>, clock: &ClockInfo) -> Vec<TableTiming> {
    let mut tables: Vec<(String, u64)> = Vec::new();
    for c in cells {
        if !tables.iter().any(|t| t.0 == c.target && t.1 == c.bs) {
            tables.push((c.target.clone(), c.bs));
        }
    }
    tables
        .into_iter()
        .map(|(target, bs)| {
            let mine = cells.iter().filter(|c| c.target == target && c.bs == bs);
            let (latency_sample, chosen, cheapest) = match asked {
                Some(n) => (n, format!("--latency-sample {n}"), None),
                None => {
                    let cheapest = cheapest(mine, clock);
                    let cheap = cheapest
                        .as_ref()
                        .is_some_and(|c| c.1 < CLOCK_READS * clock.overhead_ns);
                    let n = if cheap { SAMPLE_EVERY } else { 1 };
                    (n, "iolab's choice".to_string(), cheapest)
                }
            };
            TableTiming {
                target,
                bs,
                latency_sample,
                chosen,
                cheapest,
            }
        })
        .collect()
}

/// The cheapest synchronous method of `cells` that moves data by a short run of each, and its time per op (a run that
/// fails is left out: the rounds say why).
fn cheapest<'a>(cells: impl Iterator<Item = &'a Cell>, clock: &ClockInfo) -> Option<(String, f64)> {
    cells
        // nop moves no data: it is the table's floor, not an op the clock would weigh on.
        .filter(|c| c.method.info().synchronous() && !c.method.info().no_data)
        .filter_map(|c| {
            let mut spec = c.spec.clone();
            spec.ops = Some(spec.ops.map_or(PROBE_OPS, |n| n.min(PROBE_OPS)));
            let r = crate::run::run(&spec, clock).ok()?;
            (r.ops > 0).then(|| (c.method.name().to_string(), r.ns_per_op))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// `raw` with the latency sampling `timing` chose for its table, where its method takes it: one op in N
/// for a synchronous method; none (0) for a queued one too (io_uring, aio: no request timed, as
/// t/io_uring times none); a method run as a process of its own is timed from outside.
pub fn sampled(
    raw: iolab_engine::spec::RawSpec,
    method: iolab_engine::method::MethodKind,
    every: u64,
) -> iolab_engine::spec::RawSpec {
    use iolab_engine::method::Exec;
    let takes = match (every, method.info().exec) {
        (1, _) | (_, Exec::OutOfProcess) => false,
        (0, _) | (_, Exec::Sync) => true,
        (_, Exec::Queued) => false,
    };
    match takes {
        true => raw.with("latency-sample", every),
        false => raw,
    }
}

/// The tables of `timing` whose synchronous methods were not timed op by op.
pub fn sampled_tables(timing: &[TableTiming]) -> impl Iterator<Item = &TableTiming> {
    timing.iter().filter(|t| t.latency_sample != 1)
}
