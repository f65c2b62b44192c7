//! The course report's shared ring (He and Han §9-11, Tables 4-6): per-thread rings against one ring
//! behind a mutex (`shared`, the report's design) and iolab's lock-free alternative (`shared-submitter`),
//! the batches each run's own ring carried (Table 6), and what the report's kernel counters, cumulative
//! over all its runs, can say of one run.
//!
//! iolab's counts are per run: each run sets up its own ring (a shared one in the run's shared slot), and
//! its `result.uring` figures (`enters`, `requests`, `mean_batch`, `big_batches`, `lock_contended`,
//! `doorbells`, `worker_sleeps`) count that ring's calls only.

use super::reply::{faster, is, ns, thousands, x, Ctx, Reply};
use crate::findings_compare::{noise, within_noise, Fig, Row};
use iolab_engine::method::io_uring;
use iolab_engine::spec::RingDesign;

fn uring(r: &Row) -> bool {
    is(r, &io_uring::INFO)
}

/// A shared design (the mutex-shared ring or the shared submitter) against per-thread rings on one
/// workload: same step, threads, depth and batch.
struct Versus<'a> {
    per: &'a Row,
    other: &'a Row,
    /// The shared design's IOPS over per-thread rings'.
    ratio: f64,
}

impl Versus<'_> {
    fn submitter(&self) -> bool {
        self.other.design == Some(RingDesign::SharedSubmitter)
    }
}

fn inflight(r: &Row) -> f64 {
    r.cited_opt(Fig::Inflight).unwrap_or(0.0)
}

/// Figure `path` of a row's result (`uring.doorbells`) per op, cited; None for a row without a record.
fn per_op(r: &Row, path: &str) -> Option<f64> {
    let rec = r.record.as_ref()?;
    let v = path
        .split('.')
        .try_fold(&rec["result"], |v, k| v.get(k))?
        .as_f64()?;
    r.cite_paths(&[path, Fig::Ops.field()]);
    Some(v / r.ops.max(1) as f64)
}

/// Times a thread found the shared ring's mutex taken, per op (cited).
fn waits(r: &Row) -> f64 {
    r.cite_paths(&["result.uring.lock_contended", Fig::Ops.field()]);
    r.lock_contended.unwrap_or(0) as f64 / r.ops.max(1) as f64
}

/// Every shared design beside the per-thread rings of its step, threads, depth and batch, in file order.
fn versus<'a>(c: &'a Ctx) -> Vec<Versus<'a>> {
    let shared = |r: &Row| {
        matches!(
            r.design,
            Some(RingDesign::Shared | RingDesign::SharedSubmitter)
        )
    };
    let mut out = Vec::new();
    for other in c.rows_where(|r| uring(r) && shared(r)) {
        let Some(per) = c.row(|r| {
            uring(r)
                && r.design == Some(RingDesign::PerThread)
                && r.step == other.step
                && r.threads == other.threads
                && r.batch == other.batch
                && r.facts.qd == other.facts.qd
        }) else {
            continue;
        };
        out.push(Versus {
            per,
            other,
            ratio: other.iops() / per.iops().max(1e-9),
        });
    }
    out
}

/// "2.0 requests per submission, " (empty where the row has no mean batch).
fn batch_words(r: &Row) -> String {
    r.cited_opt(Fig::MeanBatch)
        .map(|b| format!("{b:.1} requests per submission, "))
        .unwrap_or_default()
}

/// "Table 5: 8 threads, batch 8": a comparison's step, its threads where the step runs several thread
/// counts, and its batch (cited).
fn label(vs: &[Versus], r: &Row) -> String {
    let threads_vary = vs
        .iter()
        .any(|o| o.per.step == r.step && o.per.threads != r.threads);
    r.cited(Fig::Batch);
    let threads = if threads_vary {
        r.cited(Fig::Threads);
        format!(
            ", {} thread{}",
            r.threads,
            if r.threads == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    format!("{}{threads}, batch {}", r.step, r.batch)
}

/// "the shared ring 0.45x that (454,545 IOPS; 2.0 requests per submission, 0.50 mutex waits per op,
/// 20.0 in flight)", or the shared submitter with its doorbells and worker sleeps.
fn other_text(v: &Versus) -> String {
    let o = v.other;
    let own = if v.submitter() {
        match (
            per_op(o, "uring.doorbells"),
            per_op(o, "uring.worker_sleeps"),
        ) {
            (Some(d), Some(s)) => {
                format!("{d:.2} doorbells and {s:.2} worker sleeps per op, ")
            }
            _ => String::new(),
        }
    } else {
        format!("{:.2} mutex waits per op, ", waits(o))
    };
    format!(
        "{} {} that ({} IOPS; {}{own}{:.1} in flight){}",
        if v.submitter() {
            "the shared submitter"
        } else {
            "the shared ring"
        },
        x(v.ratio),
        thousands(o.iops()),
        batch_words(o),
        inflight(o),
        noise(o, v.per)
    )
}

/// Each per-thread row with the shared designs run beside it, one sentence: "Table 5: 8 threads, batch
/// 8: per-thread rings 1,000,000 IOPS (2.0 requests per submission, 60.0 in flight); the shared ring
/// 0.45x that (...); the shared submitter 0.90x that (...)."
fn groups(vs: &[Versus]) -> Vec<String> {
    let mut seen: Vec<*const Row> = Vec::new();
    let mut out = Vec::new();
    for v in vs {
        if seen.contains(&(v.per as *const Row)) {
            continue;
        }
        seen.push(v.per);
        let p = v.per;
        let others: Vec<String> = vs
            .iter()
            .filter(|o| std::ptr::eq(o.per, p))
            .map(other_text)
            .collect();
        out.push(format!(
            "{}: per-thread rings {} IOPS ({}{:.1} in flight); {}.",
            label(vs, p),
            thousands(p.iops()),
            batch_words(p),
            inflight(p),
            others.join("; ")
        ));
    }
    out
}

/// Where a shared design lost most beyond the noise, and why from its counters.
fn lost_most(vs: &[Versus]) -> String {
    let lost = vs
        .iter()
        .filter(|v| v.ratio < 0.83 && !within_noise(v.other, v.per))
        .min_by(|a, b| a.ratio.total_cmp(&b.ratio));
    let Some(w) = lost else {
        return "In this run no shared design made less than 0.83x per-thread rings' IOPS beyond the noise: \
                the submission path was not what set the pace."
            .into();
    };
    let mut why = Vec::new();
    let (o, p) = (w.other, w.per);
    if w.submitter() {
        if let (Some(d), Some(s)) = (
            per_op(o, "uring.doorbells"),
            per_op(o, "uring.worker_sleeps"),
        ) {
            if d + s >= 0.05 {
                why.push(format!(
                    "its workers slept {s:.2} times per op waiting for their completions and rang the \
                     submitter's doorbell {d:.2} times per op: every hand-off to a sleeping thread is a wake-up"
                ));
            }
        }
    } else if waits(o) >= 0.05 {
        why.push(format!(
            "its threads queued on the mutex ({:.2} waits per op): a thread holds it while it submits, reaps \
             and waits for its own completion, so the others can neither submit nor reap",
            waits(o)
        ));
    }
    if inflight(o) < 0.8 * inflight(p) {
        why.push(format!(
            "fewer requests were in flight ({:.1} against {:.1})",
            inflight(o),
            inflight(p)
        ));
    }
    format!(
        "{} lost most on {}: {}{}.",
        if w.submitter() {
            "The shared submitter"
        } else {
            "The shared ring"
        },
        label(vs, o),
        x(w.ratio),
        if why.is_empty() {
            String::new()
        } else {
            format!(": {}", why.join("; and "))
        }
    )
}

/// Where both shared designs ran beside the same per-thread rings: how often the lock-free submitter
/// made more IOPS than the mutex, naming where it did not.
fn submitter_vs_mutex(vs: &[Versus]) -> Option<String> {
    let pairs: Vec<(&Versus, &Versus)> = vs
        .iter()
        .filter(|v| v.submitter())
        .filter_map(|s| {
            let m = vs
                .iter()
                .find(|m| !m.submitter() && std::ptr::eq(m.per, s.per))?;
            Some((s, m))
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let won = pairs
        .iter()
        .filter(|(s, m)| faster(s.other, m.other) == Some(true))
        .count();
    let not: Vec<String> = pairs
        .iter()
        .filter(|(s, m)| faster(s.other, m.other) != Some(true))
        .map(|(s, m)| {
            format!(
                "{} ({} the mutex's IOPS)",
                label(vs, s.other),
                x(s.other.iops() / m.other.iops().max(1e-9))
            )
        })
        .collect();
    Some(format!(
        "The shared submitter (one thread owns the ring; workers hand it requests through lock-free queues) \
         made more IOPS than the mutex-shared ring in {won} of {} comparisons{}.",
        pairs.len(),
        if !not.is_empty() {
            format!("; not on {}", not.join(", "))
        } else {
            String::new()
        }
    ))
}

/// The report's requests in flight by Little's law (IOPS x mean latency), and the rows here that keep one
/// request in flight per thread beside the same threads at the full queue depth.
fn serialization(c: &Ctx) -> Option<String> {
    let little = |iops: &str, lat: &str| Some(c.seed(iops)? * c.seed(lat)? * 1e-6);
    let mut o = match (
        little("shared_1t_iops", "shared_1t_lat_us"),
        little("shared_8t_iops", "shared_8t_lat_us"),
        little("per_thread_1t_iops", "per_thread_1t_lat_us"),
        little("per_thread_8t_iops", "per_thread_8t_lat_us"),
    ) {
        (Some(s1), Some(s8), Some(p1), Some(p8)) => format!(
            "By Little's law (IOPS x mean latency) the report's shared ring kept {s1:.1} request in flight at 1 \
             thread and {s8:.1} at 8, its per-thread rings {p1:.0} and {p8:.0}: its mutex, held while a thread \
             waited for its own completion, let each thread have one request in flight, whatever the QD, which \
             is why its shared ring showed a lower latency and a lower IOPS at once."
        ),
        _ => String::new(),
    };
    let ones = c.rows_where(|r| uring(r) && r.facts.qd == 1 && !r.nop_requests);
    for one in ones
        .iter()
        .filter(|r| r.design == Some(RingDesign::PerThread))
    {
        let Some(deep) = c.row(|r| {
            uring(r)
                && r.facts.qd > 1
                && r.design == Some(RingDesign::PerThread)
                && r.threads == one.threads
                && !r.nop_requests
                && r.facts.direct == one.facts.direct
        }) else {
            continue;
        };
        o += &one_in_flight(one, deep);
    }
    (!o.is_empty()).then_some(o)
}

/// " In this run, 8 threads with one request in flight each: ... the report's shape." (or not its
/// shape, where the rows say otherwise).
fn one_in_flight(one: &Row, deep: &Row) -> String {
    let (lo, ld) = (one.cited(Fig::LatMeanNs), deep.cited(Fig::LatMeanNs));
    let shape = match (faster(deep, one) == Some(true), lo < ld) {
        (true, true) => "the report's shape",
        (false, _) => "not the report's shape: the deeper queue made no more IOPS",
        (true, false) => "not the report's shape: its latency was not lower",
    };
    if one.threads > 1 {
        one.cited(Fig::Threads);
    }
    format!(
        " In this run, {} thread{} with one request in flight each: {:.1} in flight, {} IOPS at {} mean latency, \
         against {:.0} in flight, {} IOPS at {} with QD {}: {} the IOPS at {} the latency, {}.",
        one.threads,
        if one.threads == 1 { "" } else { "s" },
        inflight(one),
        thousands(one.iops()),
        ns(lo),
        inflight(deep),
        thousands(deep.iops()),
        ns(ld),
        deep.cited(Fig::Qd),
        x(one.iops() / deep.iops().max(1e-9)),
        x(lo / ld.max(1e-9)),
        shape
    )
}

/// Batches of one request per call: what the report calls a collapse.
const ONE: f64 = 1.1;

/// Table 6 from this run's rows: each mutex-shared ring's requests per submission against per-thread
/// rings' at the same step, threads and batch (batch 1 apart: every submission carries one there), and
/// whether they collapsed to one, naming the rows where they did not.
fn batches(vs: &[Versus]) -> Option<String> {
    let rows: Vec<(&Versus, f64, f64)> = vs
        .iter()
        .filter(|v| !v.submitter() && v.other.batch > 1)
        .filter_map(|v| {
            let (s, p) = (v.other.mean_batch?, v.per.mean_batch?);
            Some((v, s, p))
        })
        .collect();
    let (first, ..) = rows.first()?;
    let name = |v: &Versus| label(vs, v.other);
    let each: Vec<String> = rows
        .iter()
        .map(|(v, ..)| {
            let (s, p) = (v.other.cited(Fig::MeanBatch), v.per.cited(Fig::MeanBatch));
            format!("{}: {s:.1} against {p:.1}", name(v))
        })
        .collect();
    let f = first.other;
    let counts = match (f.facts.uring_enters, f.facts.uring_requests) {
        (Some(e), Some(q)) => {
            f.cite_paths(&["uring.enters", "uring.requests"]);
            format!(
                ": the shared ring of {} made {} io_uring_enter calls, those that only waited for completions \
                 included, carrying {} requests for its {} ops",
                name(first),
                thousands(e as f64),
                thousands(q as f64),
                thousands(f.cited(Fig::Ops))
            )
        }
        _ => String::new(),
    };
    let mut o = format!(
        "Table 6 from this run's own counts (each run sets up its own ring and iolab counts every \
         io_uring_enter it makes, so every figure is that run's{counts}): requests per submission, the shared \
         ring against per-thread rings: {}.",
        each.join("; ")
    );
    let (ones, more): (Vec<&(&Versus, f64, f64)>, Vec<_>) =
        rows.iter().partition(|(_, s, _)| *s <= ONE);
    o += &match (ones.len(), more.len()) {
        (_, 0) => " The shared ring's batches were one request per call in every comparison: they collapsed to \
                   one here, as the report says."
            .to_string(),
        (0, _) => format!(
            " The shared ring's batches collapsed to one in none of them{}.",
            smaller(&rows)
        ),
        _ => format!(
            " The shared ring's batches were one request per call on {}, not on {}.",
            ones.iter().map(|(v, ..)| name(v)).collect::<Vec<_>>().join("; "),
            more.iter().map(|(v, ..)| name(v)).collect::<Vec<_>>().join("; ")
        ),
    };
    Some(o)
}

/// ": they were smaller than per-thread rings' in K of N (not on ...)", or that they never were.
fn smaller(rows: &[(&Versus, f64, f64)]) -> String {
    let below = rows.iter().filter(|(_, s, p)| *s < *p / ONE).count();
    match below {
        0 => ", nor were they smaller than per-thread rings': batch fragmentation did not cost it here".into(),
        n if n == rows.len() => ", though they were smaller than per-thread rings' in every one".into(),
        n => format!(
            ", and were smaller than per-thread rings' in {n} of {}",
            rows.len()
        ),
    }
}

/// The report's kernel counters: cumulative over every run its instrumented kernel counted, so its
/// avg_batch is no figure of one run; the one per-run figure its log gives is the difference of two of
/// its lines.
fn report_counters(c: &Ctx) -> Option<String> {
    let (sc, sr) = (c.seed("shared_calls")?, c.seed("shared_reqs")?);
    let (pc, pr) = (c.seed("per_thread_calls")?, c.seed("per_thread_reqs")?);
    let mut o = format!(
        "The report's kernel counters are cumulative over every run its instrumented kernel counted, not one \
         run's: {}its avg_batch is that running mean cut to an integer ({} / {} = {:.2} printed as {:.0} for the \
         shared ring, {} / {} = {:.2} printed as {:.0} for per-thread rings), so neither is a figure of one run, \
         nor are the two comparable as the designs' batches.",
        match c.seed("shared_8t_ops") {
            Some(ops) if sr > ops => format!(
                "its late shared-ring line counts {} requests where its eight-thread run made {} ops; ",
                thousands(sr),
                thousands(ops)
            ),
            _ => String::new(),
        },
        thousands(sr),
        thousands(sc),
        sr / sc,
        (sr / sc).floor(),
        thousands(pr),
        thousands(pc),
        pr / pc,
        (pr / pc).floor()
    );
    if let (Some(ec), Some(er)) = (c.seed("shared_calls_early"), c.seed("shared_reqs_early")) {
        if sc > ec {
            let b = (sr - er) / (sc - ec);
            o += &format!(
                " The one figure of a single run its log gives is the difference of two lines: from {} to {} \
                 calls the requests grew by {} for {} calls, {b:.2} per call{}, over a late window of what the \
                 report calls its eight-thread shared run; {}. Its early batches ({}, it says) are in no \
                 line it prints.",
                thousands(ec),
                thousands(sc),
                thousands(sr - er),
                thousands(sc - ec),
                match (c.seed("shared_big_batches_early"), c.seed("shared_big_batches")) {
                    (Some(a), Some(z)) if a == z => format!(", big batches unchanged at {}", thousands(z)),
                    _ => String::new(),
                },
                if b <= ONE {
                    "over that window its batches were one request per call"
                } else {
                    "over that window its batches were not one request per call"
                },
                c.seed("shared_batch_early")
                    .map_or("a larger average".into(), |e| format!("an average of about {e:.0} requests per call"))
            );
        }
    }
    Some(o)
}

/// Why did the shared ring lose (Tables 4-6)?
pub fn shared_ring_lost(c: &Ctx) -> Reply {
    let vs = versus(c);
    if vs.is_empty() {
        return Reply::not_here(
            "This run has no shared ring beside per-thread rings on the same workload.".into(),
            "the shared-ring suite's steps",
        );
    }
    let mut parts = groups(&vs);
    parts.push(lost_most(&vs));
    parts.extend(submitter_vs_mutex(&vs));
    let serial = serialization(c);
    parts.extend(serial.clone());
    parts.extend(batches(&vs));
    parts.extend(report_counters(c));
    let cpu_bound = c.rows.iter().any(|r| r.nop_requests || !r.facts.direct);
    match (cpu_bound, serial.is_some_and(|s| s.contains("In this run,"))) {
        (true, true) => Reply::answered(parts.join(" ")),
        _ => Reply::partly(
            parts.join(" "),
            "a CPU-bound target where contention can show (NOPs, page-cache hits) and a variant that keeps one \
             request in flight per thread (the shared-ring suite's steps)",
        ),
    }
}
