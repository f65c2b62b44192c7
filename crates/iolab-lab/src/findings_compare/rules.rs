//! The comparing rules, in tables: over a pair of rows of one workload, and over every row of a table.

use super::cited::Fig;
use super::crossover::crossover;
use super::row::Row;
use super::why::{because, pct, why_faster, why_slower};
use crate::cite::{collect, Cite};
use iolab_engine::sink_device::Personality;
use iolab_engine::spec::{MethodKind, RingDesign};
use iolab_engine::units::fmt_ns;

/// A comparison that took at least this ratio of times is worth a sentence.
pub const RATIO: f64 = 1.5;

pub(super) type PairRule = (&'static str, fn(&Row, &Row) -> Option<String>);

/// Rules over a row `a` and another row `b` of the same table, in the order findings are printed.
pub const PAIR_RULES: &[PairRule] = &[
    ("slower_than_reference", |a, b| {
        let r = a.ns() / b.ns();
        let decided = !a.not_separated_from(b);
        (decided && b.reference && !a.floor && a.method() != b.method() && a.same_workload(b) && r >= RATIO).then(|| {
            format!(
                "{} took {r:.1}x {}'s time per op ({} vs {} per op): {}",
                a.way(),
                b.way(),
                fmt_ns(a.ns()),
                fmt_ns(b.ns()),
                because(
                    why_slower(a, b),
                    "no counter of this run explains it (run it alone with --count separate for the kernel's counts, \
                     or --profile for where the time went)"
                )
            )
        })
    }),
    ("faster_than_reference", |a, b| {
        let r = a.ns() / b.ns();
        (b.reference
            && !a.floor
            && !a.not_separated_from(b)
            && a.method() != b.method()
            && a.same_workload(b)
            && r <= 1.0 / RATIO)
            .then(|| {
                format!(
                    "{} took {r:.2}x {}'s time per op ({} vs {} per op): {}",
                    a.way(),
                    b.way(),
                    fmt_ns(a.ns()),
                    fmt_ns(b.ns()),
                    because(why_faster(a, b), "no counter of this run explains it")
                )
            })
    }),
    ("batched_vs_single", |a, b| {
        let (ma, mb) = (a.cited_opt(Fig::MeanBatch)?, b.cited_opt(Fig::MeanBatch)?);
        let r = a.ns() / b.ns();
        // The same way of queueing requests, at two batch sizes.
        let both = a.method().is_some() && a.method() == b.method();
        // At another queue depth the difference is the depth's, not the batch's.
        let same_depth = a.facts.qd == b.facts.qd;
        (both && same_depth && a.same_workload(b) && ma >= 4.0 * mb && mb <= 1.5 && !(1.0 / 1.2..1.2).contains(&r)).then(|| {
            let verdict = if r < 1.0 {
                match (a.cited_opt(Fig::SyscallsPerOp), b.cited_opt(Fig::SyscallsPerOp)) {
                    (Some(x), Some(y)) => format!("batching paid: {x:.2} syscalls per op against {y:.2}"),
                    // Without the kernel's counts (no counting pass) no syscall figure is made up.
                    _ => "batching paid (the kernel's syscall counts were not taken)".to_string(),
                }
            } else {
                "batching did not pay in this run: the time goes elsewhere than the submission calls".to_string()
            };
            format!(
                "{} ({ma:.1} requests per submission) took {r:.2}x the time of {} ({mb:.1} per submission): {verdict}",
                a.way(), b.way()
            )
        })
    }),
    ("shared_vs_own_ring", |a, b| {
        let shared = matches!(
            a.design,
            Some(RingDesign::Shared | RingDesign::SharedSubmitter)
        );
        let r = a.ns() / b.ns();
        (shared
            && b.design == Some(RingDesign::PerThread)
            && a.same_workload(b)
            && a.facts.qd == b.facts.qd
            && a.batch == b.batch
            && !(1.0 / 1.2..1.2).contains(&r))
        .then(|| {
            let mut w = Vec::new();
            if a.lock_contended.is_some() {
                a.cite_paths(&["result.uring.lock_contended", Fig::Ops.field()]);
            }
            match a.lock_contended {
                Some(0) => w.push("no thread ever found its mutex taken".to_string()),
                Some(n) => w.push(format!(
                    "threads found its mutex taken {n} times ({:.2} per op)",
                    n as f64 / a.ops.max(1) as f64
                )),
                None => {}
            }
            if let (Some(x), Some(y)) = (a.cited_opt(Fig::MeanBatch), b.cited_opt(Fig::MeanBatch)) {
                w.push(format!("{x:.1} requests per submission against {y:.1}"));
            }
            if let (Some(x), Some(y)) = (a.cited_opt(Fig::Inflight), b.cited_opt(Fig::Inflight)) {
                w.push(format!(
                    "{x:.1} requests in flight on average against {y:.1}"
                ));
            }
            format!(
                "{} took {r:.2}x the time of per-thread rings ({} vs {} per op): {}",
                a.way(),
                fmt_ns(a.ns()),
                fmt_ns(b.ns()),
                because(w, "no batch or lock figure recorded")
            )
        })
    }),
    ("sink_personalities", |a, b| {
        let (pa, pb) = (sink_of(a)?, sink_of(b)?);
        let r = a.ns() / b.ns();
        // The personality is the one difference: a logged row is set only beside a logged one.
        let same = a.way() == b.way()
            && base_place(a) == base_place(b)
            && a.logged() == b.logged()
            && (a.facts.write, a.facts.bs, a.threads) == (b.facts.write, b.facts.bs, b.threads);
        let (wa, wb) = (pa.1.unwrap_or(0.0), pb.1.unwrap_or(0.0));
        (same
            && pa.0 == Personality::Legacy
            && pb.0 == Personality::Nowait
            && (wa - wb >= 0.5 || !(1.0 / 1.2..1.2).contains(&r)))
        .then(|| {
            a.cite_paths(&["sink.worker_share"]);
            b.cite_paths(&["sink.worker_share"]);
            let why = if wa - wb >= 0.5 {
                "no write_iter/FMODE_NOWAIT: io_uring cannot complete its requests inline"
            } else {
                "no io-wq hand-off tells them apart: the two personalities' data paths differ (.write or \
                 .read against .write_iter or .read_iter)"
            };
            format!(
                "{}{} on the legacy sink took {r:.2}x its time on the nowait sink ({:.0} vs {:.0} ns/op): {} of the \
                 legacy driver's calls came from io-wq workers against {} ({why})",
                a.way(),
                if a.logged() { ", logged on both," } else { "" },
                a.ns(),
                b.ns(),
                pct(wa),
                pct(wb)
            )
        })
    }),
];

/// The sink driver's personality of a row, and the share of its calls io-wq workers made.
pub(super) fn sink_of(r: &Row) -> Option<(Personality, Option<f64>)> {
    let s = r.facts.sink.as_ref()?;
    Some((s.personality?, s.worker_share))
}

/// A row's target without the sink's personality ("/dev/iolab_sink (legacy)" -> "/dev/iolab_sink").
pub(super) fn base_place(r: &Row) -> &str {
    r.place.split(" (").next().unwrap_or(&r.place)
}

/// A rule over every row of a table at once: its name, what its findings are about, and the rule.
/// Each finding comes with the cites of the figures it read.
pub(super) type SetRule = (
    &'static str,
    &'static str,
    fn(&[&Row]) -> Vec<(String, Vec<Cite>)>,
);

/// Rules over every row of a table at once.
pub const SET_RULES: &[SetRule] = &[(
    "direct_crossover",
    "buffered against O_DIRECT over the block sizes",
    |rows| {
        let mut out = Vec::new();
        let mut seen: Vec<(String, bool, Option<MethodKind>, u32)> = Vec::new();
        for r in rows {
            let key = (r.place.clone(), r.facts.write, r.method(), r.threads);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            let family: Vec<&&Row> = rows
                .iter()
                .filter(|x| (x.place.clone(), x.facts.write, x.method(), x.threads) == key)
                .collect();
            // A crossover over the block sizes needs two of them, each measured both ways; on tmpfs
            // O_DIRECT takes the same path through the page cache as buffered I/O: nothing to cross.
            if sizes_both_ways(&family) < 2 || r.fs.as_deref() == Some("tmpfs") {
                continue;
            }
            if let (Some(s), cites) = collect(|| crossover(&family)) {
                let s = if r.step.is_empty() {
                    s
                } else {
                    format!("{}: {s}", r.step)
                };
                out.push((s, cites));
            }
        }
        out
    },
)];

/// How many block sizes a family of rows measured both buffered and with O_DIRECT.
fn sizes_both_ways(family: &[&&Row]) -> usize {
    let mut sizes: Vec<u64> = family
        .iter()
        .map(|r| r.facts.bs)
        .filter(|bs| {
            let way = |d: bool| {
                family
                    .iter()
                    .any(|r| r.facts.bs == *bs && r.facts.direct == d)
            };
            way(true) && way(false)
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes.len()
}
