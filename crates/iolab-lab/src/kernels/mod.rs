//! `iolab suite NAME --kernels host,6.1,6.12`: one suite run on several kernels (this machine's and
//! Debian's under QEMU), its records in one file, each point naming its kernel (`point.kernel`: the
//! label asked for; `result.host.kernel_release`: the release it ran on), and set side by side here:
//!
//! - [`KernelRan`]: each kernel, its release, whether its CPU was emulated, its preemption model and
//!   what `iolab probe` found it offers (tried, not guessed from the release number).
//! - [`Side`]: a table per figure with a column per kernel. What emulation preserves comes first: the
//!   kernel's own shares and counts per op (a NOWAIT attempt that would block, a punt to io-wq, context
//!   switches, system calls); time per op only where a suite has no such figure, each emulated column
//!   labelled, never ranked against the host's.
//! - [`punts_by_release`]: the nowait suite's question across kernels: which release stops punting
//!   buffered writes to io-wq, on which file system (or that none of these does, with the figures).
//!
//! Everything here reads records; the runs themselves are the command's (`cmd_suite_kernels.rs`).

use crate::answers::reply::{pct, Answer, Status};
use crate::findings_compare::{Fig, Row};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// One kernel a suite ran on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelRan {
    /// As asked: "host", "6.1", "6.12-rt", or a package name.
    pub label: String,
    /// `uname -r` of the kernel the points ran on (the guest's inside a guest).
    pub release: String,
    /// The CPU was emulated (QEMU TCG): its timings show behaviour, not speed.
    pub emulated: bool,
    /// The kernel's preemption model ("PREEMPT_RT", "PREEMPT_DYNAMIC" ...) where it says.
    pub preempt: Option<String>,
    /// What `iolab probe` found on it: each thing tried, and whether it works.
    #[serde(default)]
    pub features: BTreeMap<String, bool>,
}

impl KernelRan {
    /// The kernel as its records say it ran: the first record's `result.host`.
    pub fn of_records(label: &str, recs: &[Value]) -> Option<KernelRan> {
        let host = recs.iter().find_map(|r| r.pointer("/result/host"))?;
        Some(KernelRan {
            label: label.to_string(),
            release: host.get("kernel_release")?.as_str()?.to_string(),
            emulated: host.get("emulated").and_then(Value::as_bool) == Some(true),
            preempt: host
                .get("kernel_preempt")
                .and_then(Value::as_str)
                .map(str::to_string),
            features: BTreeMap::new(),
        })
    }

    /// "6.12 (6.12.57+deb12-amd64, PREEMPT_RT, emulated)".
    pub fn describe(&self) -> String {
        let mut parts = vec![self.release.clone()];
        parts.extend(self.preempt.iter().filter(|p| *p == "PREEMPT_RT").cloned());
        if self.emulated {
            parts.push("emulated: QEMU TCG".into());
        }
        format!("{} ({})", self.label, parts.join(", "))
    }
}

/// A figure of the side-by-side tables: a share (0-1) or a time.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub enum Unit {
    Share,
    Ns,
    /// A count per op.
    PerOp,
}

/// One workload's figures on each kernel: `values[k][f]`, kernel k's figure f (none: not run there).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KRow {
    pub label: String,
    pub values: Vec<Vec<Option<f64>>>,
}

/// A table of the kernels side by side: its title, the figures each cell holds (joined by " / "), rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KTable {
    pub title: String,
    pub figures: Vec<String>,
    pub unit: Unit,
    pub rows: Vec<KRow>,
}

/// The suite's kernels set side by side: what `suite --kernels` prints and records in its summary line
/// (`summary.kernels`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Side {
    pub kernels: Vec<KernelRan>,
    pub tables: Vec<KTable>,
    /// What the probe found on some kernels and not on others: (what was tried, per kernel).
    pub differ: Vec<(String, Vec<Option<bool>>)>,
    /// Kernels asked for that gave no result, and why (their columns are absent).
    #[serde(default)]
    pub failed: Vec<(String, String)>,
}

/// Each kernel's rows (one per point, repeats as their median run), cites naming lines of the one file.
pub fn rows_by_kernel(kernels: &[KernelRan], recs: &[Value], lines: &[usize]) -> Vec<Vec<Row>> {
    kernels
        .iter()
        .map(|k| {
            let (mine, at): (Vec<Value>, Vec<usize>) = recs
                .iter()
                .zip(lines)
                .filter(|(r, _)| crate::series::point_get(r, "kernel").as_deref() == Some(&k.label))
                .map(|(r, l)| (r.clone(), *l))
                .unzip();
            crate::suite_rows::rows_at(&mine, &at)
        })
        .collect()
}

/// The side-by-side view of `rows` (each kernel's, in the order of `kernels`).
pub fn side(kernels: &[KernelRan], rows: &[Vec<Row>]) -> Side {
    let mut tables: Vec<KTable> = [nowait_table(rows), gaps_table(rows)]
        .into_iter()
        .filter(|t| !t.rows.is_empty())
        .collect();
    if tables.is_empty() {
        tables.push(counts_table(rows));
    }
    Side {
        kernels: kernels.to_vec(),
        tables,
        differ: differ(kernels),
        failed: Vec::new(),
    }
}

/// A row's short label in a table of kernels: "4 KiB writes to nowait-w.dat (tmpfs)", "4 B writes to
/// /dev/iolab_sink (legacy, logged)".
fn short(r: &Row) -> String {
    let name = match &r.fs {
        Some(fs) => {
            let file = r.place.rsplit('/').next().unwrap_or(&r.place);
            format!("{file} ({fs})")
        }
        None => r.target.clone(),
    };
    let op = match (r.facts.write, r.facts.direct) {
        (true, false) => "writes to",
        (true, true) => "O_DIRECT writes to",
        (false, false) => "reads from",
        (false, true) => "O_DIRECT reads from",
    };
    format!("{} {op} {name}", iolab_engine::units::fmt_size(r.facts.bs))
}

/// The short labels of `rows`, where no two of them are alike; else their whole workloads and ways.
fn labels(rows: &[&Row], way: bool) -> Vec<String> {
    let short: Vec<String> = rows
        .iter()
        .map(|r| match way {
            true => format!("{} {}", r.method().map_or("?", |m| m.name()), short(r)),
            false => short(r),
        })
        .collect();
    let unique = short
        .iter()
        .enumerate()
        .all(|(i, l)| !short[..i].contains(l));
    match (unique, way) {
        (true, _) => short,
        (false, true) => rows
            .iter()
            .map(|r| format!("{}, {}", r.way, label(r)))
            .collect(),
        (false, false) => rows.iter().map(|r| label(r)).collect(),
    }
}

/// A row's label: its workload, with its file system where it has one.
fn label(r: &Row) -> String {
    let w = r.workload();
    match &r.fs {
        Some(fs) if !r.target.contains(fs.as_str()) => match w.strip_suffix(" (O_DIRECT)") {
            Some(w) => format!("{w} ({fs}, O_DIRECT)"),
            None => format!("{w} ({fs})"),
        },
        _ => w,
    }
}

/// Two kernels' rows of one point: the suite's point but for its kernel (step, target as the suite
/// names it, `{disk}/w.dat`, whose path differs from one run to the next, and every varied key), on the
/// same file system, the same way; rows without a record by their step, target and workload.
fn same_point(a: &Row, b: &Row) -> bool {
    let point = |r: &Row| {
        let mut p = crate::series::point_object(r.record.as_ref()?)?;
        // A point's row is its median repeat, whichever that was on each kernel.
        p.remove("kernel");
        p.remove("repeat");
        Some(p)
    };
    let same = match (point(a), point(b)) {
        (Some(x), Some(y)) => x == y,
        _ => {
            let (f, g) = (&a.facts, &b.facts);
            a.step == b.step
                && a.target == b.target
                && (f.bs, f.write, f.direct) == (g.bs, g.write, g.direct)
                && (a.pattern == b.pattern && a.threads == b.threads && a.logged() == b.logged())
        }
    };
    same && a.fs == b.fs && a.way == b.way
}

/// The rows of every kernel, one per point, in the order first met.
fn workloads(rows: &[Vec<Row>], keep: impl Fn(&Row) -> bool) -> Vec<&Row> {
    let mut seen: Vec<&Row> = Vec::new();
    for r in rows.iter().flatten().filter(|r| keep(r)) {
        if !seen.iter().any(|s| same_point(s, r)) {
            seen.push(r);
        }
    }
    seen
}

/// On one kernel's rows: the row of `w`'s point, and the io_uring row of the same workload beside it
/// (within one run, rows of one workload share their path).
fn point_of<'a>(mine: &'a [Row], w: &Row) -> Option<&'a Row> {
    mine.iter().find(|r| same_point(r, w))
}

fn uring_beside<'a>(mine: &'a [Row], p: &Row) -> Option<&'a Row> {
    mine.iter().find(|r| is_uring(r) && r.same_workload(p))
}

/// The nowait suite's view: per workload, the share of RWF_NOWAIT calls that would have blocked and the
/// share of io_uring's requests punted to io-wq, on each kernel.
fn nowait_table(rows: &[Vec<Row>]) -> KTable {
    let probes = workloads(rows, |r| r.would_block.is_some());
    let krows = probes
        .iter()
        .zip(labels(&probes, false))
        .map(|(p, label)| KRow {
            label,
            values: rows
                .iter()
                .map(|mine| {
                    let mp = point_of(mine, p);
                    let wb = mp.and_then(|r| r.cited_opt(Fig::WouldBlock));
                    let pu = mp
                        .and_then(|r| uring_beside(mine, r))
                        .and_then(|r| r.cited_opt(Fig::Punted));
                    vec![wb, pu]
                })
                .collect(),
        })
        .collect();
    KTable {
        title:
            "% of RWF_NOWAIT calls that would have blocked / of io_uring's requests punted to io-wq, \
             per kernel (the kernel's own counts: emulation keeps them)"
                .into(),
        figures: vec!["would block".into(), "punted".into()],
        unit: Unit::Share,
        rows: krows,
    }
}

/// The sink driver's own clock between logged writes (p99, p99.9, max), per kernel: the latency tail a
/// real-time kernel is chosen for.
fn gaps_table(rows: &[Vec<Row>]) -> KTable {
    let logged = workloads(rows, |r| gaps(r).is_some());
    let krows = logged
        .iter()
        .zip(labels(&logged, true))
        .map(|(w, label)| KRow {
            label,
            values: rows
                .iter()
                .map(|mine| match point_of(mine, w).and_then(gaps) {
                    Some(g) => vec![Some(g.p999_ns), Some(g.max_ns)],
                    None => vec![None; 2],
                })
                .collect(),
        })
        .collect();
    KTable {
        title:
            "Time between logged writes as the sink driver saw them, p99.9 / max, per kernel (an \
                emulated CPU's times: behaviour, not speed)"
                .into(),
        figures: vec!["p99.9".into(), "max".into()],
        unit: Unit::Ns,
        rows: krows,
    }
}

/// A logged sink row's driver-side gaps.
fn gaps(r: &Row) -> Option<&iolab_engine::sink_device::DriverGaps> {
    r.facts.sink.as_ref()?.driver_gaps.as_ref()
}

/// The PREEMPT_RT kernel and the other of the same release (6.1.0-N-rt-amd64 beside 6.1.0-N-amd64).
fn rt_pairs(kernels: &[KernelRan]) -> Vec<(usize, usize)> {
    let rt = |k: &KernelRan| k.preempt.as_deref() == Some("PREEMPT_RT");
    let mut pairs = Vec::new();
    for (i, a) in kernels.iter().enumerate().filter(|(_, k)| rt(k)) {
        let twin = kernels
            .iter()
            .position(|b| !rt(b) && release_key(&b.release)[..] == release_key(&a.release)[..]);
        if let Some(j) = twin {
            pairs.push((j, i));
        }
    }
    pairs
}

/// The latency tail of the sink driver on a release's PREEMPT_RT kernel against its other kernel: the
/// driver-side gaps' p99.9 and max per logged row. Emulated kernels' times are indicative only.
pub fn rt_tail(kernels: &[KernelRan], rows: &[Vec<Row>]) -> Option<Answer> {
    let (text, cites) = crate::cite::collect(|| rt_text(kernels, rows));
    let text = text?;
    let emulated = kernels.iter().any(|k| k.emulated);
    Some(Answer {
        id: "rt-tail".into(),
        question: "Does the PREEMPT_RT kernel shorten the sink driver's latency tail (p99.9 and max of the \
                   time between writes, as the driver saw it)?"
            .into(),
        source: "the embedded boards' question, asked of a release's two kernels".into(),
        status: if emulated { Status::Indicative } else { Status::Answered },
        text,
        needs: emulated.then(|| {
            "both kernels on a machine that runs them natively: these are an emulated CPU's times (QEMU \
             TCG), whose tail is the emulator's as much as the kernel's"
                .into()
        }),
        cites,
        seed: BTreeMap::new(),
    })
}

fn rt_text(kernels: &[KernelRan], rows: &[Vec<Row>]) -> Option<String> {
    let mut parts = Vec::new();
    for (plain, rt) in rt_pairs(kernels) {
        for w in workloads(&rows[rt..=rt], |r| gaps(r).is_some()) {
            let Some(p) = point_of(&rows[plain], w).filter(|r| gaps(r).is_some()) else {
                continue;
            };
            let (gr, gp) = (gaps(w)?, gaps(p)?);
            let fields = ["sink.driver_gaps.p999_ns", "sink.driver_gaps.max_ns"];
            w.cite_paths(&fields);
            p.cite_paths(&fields);
            parts.push(format!(
                "{}, {}: p99.9 {} on {} against {} on {}, max {} against {} ({}).",
                w.way,
                label(w),
                crate::answers::reply::ns(gr.p999_ns),
                kernels[rt].label,
                crate::answers::reply::ns(gp.p999_ns),
                kernels[plain].label,
                crate::answers::reply::ns(gr.max_ns),
                crate::answers::reply::ns(gp.max_ns),
                match (gr.p999_ns < gp.p999_ns, gr.max_ns < gp.max_ns) {
                    (true, true) => "the RT kernel's tail is shorter",
                    (false, false) => "the RT kernel's tail is not shorter",
                    _ => "shorter by one measure, not the other",
                }
            ));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The answers across kernels that these rows and records (every kernel's, each point naming its
/// kernel) carry figures for.
pub fn answers(kernels: &[KernelRan], rows: &[Vec<Row>], recs: &[Value]) -> Vec<Answer> {
    [
        punts_by_release(kernels, rows),
        rt_tail(kernels, rows),
        not_everywhere(kernels, recs),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A record's point as text, but for its kernel: "step=...; target=...".
fn point_text(rec: &Value) -> Option<String> {
    let p = crate::series::point_object(rec)?;
    let parts: Vec<String> = p
        .iter()
        .filter(|(k, _)| !["kernel", "quick", "repeat"].contains(&k.as_str()))
        .map(|(k, v)| match (k.as_str(), v.as_str()) {
            ("step", Some(s)) => s.to_string(),
            (_, Some(s)) => format!("{k}={s}"),
            _ => format!("{k}={v}"),
        })
        .collect();
    Some(parts.join(", "))
}

/// Whether a point ran on a kernel, or why not (its record's error).
type Ran = Result<(), String>;

/// What ran on some kernels and not on others (the kernel lacked an interface: the point's record says
/// why), per point: the interfaces each release has, as tried, not as its number suggests.
pub fn not_everywhere(kernels: &[KernelRan], recs: &[Value]) -> Option<Answer> {
    let mut points: Vec<(String, Vec<Option<Ran>>)> = Vec::new();
    for r in recs {
        let (Some(text), Some(k)) = (point_text(r), crate::series::point_get(r, "kernel")) else {
            continue;
        };
        let Some(ki) = kernels.iter().position(|x| x.label == k) else {
            continue;
        };
        let at = match points.iter().position(|(t, _)| *t == text) {
            Some(i) => i,
            None => {
                points.push((text, vec![None; kernels.len()]));
                points.len() - 1
            }
        };
        let ran = match (r.get("result").filter(|v| !v.is_null()), r.get("error")) {
            (Some(_), _) => Ok(()),
            (None, Some(e)) => Err(e.as_str().unwrap_or("not run").to_string()),
            (None, None) => continue,
        };
        points[at].1[ki].get_or_insert(ran);
    }
    let mut parts = Vec::new();
    for (text, each) in &points {
        let on = |ok: bool| -> Vec<&str> {
            each.iter()
                .zip(kernels)
                .filter(|(r, _)| r.as_ref().is_some_and(|r| r.is_ok() == ok))
                .map(|(_, k)| k.label.as_str())
                .collect()
        };
        let (yes, no) = (on(true), on(false));
        if yes.is_empty() || no.is_empty() {
            continue;
        }
        let why = each
            .iter()
            .flatten()
            .find_map(|r| r.as_ref().err())
            .map(|e| clip(e));
        parts.push(format!(
            "{text}: ran on {}, not on {} ({})",
            yes.join(", "),
            no.join(", "),
            why.unwrap_or_default()
        ));
    }
    (!parts.is_empty()).then(|| Answer {
        id: "not-everywhere".into(),
        question: "Which of these points ran on some kernels and not on others, and why?".into(),
        source: "each kernel's records: what it offers, as tried".into(),
        status: Status::Answered,
        text: parts.join(". ") + ".",
        needs: None,
        cites: Vec::new(),
        seed: BTreeMap::new(),
    })
}

/// A reason cut to its first clause, at most 140 characters.
fn clip(e: &str) -> String {
    let first = e.split("; ").next().unwrap_or(e);
    match first.char_indices().nth(140) {
        Some((at, _)) => format!("{}...", &first[..at]),
        None => first.to_string(),
    }
}

fn is_uring(r: &Row) -> bool {
    r.method() == Some(iolab_engine::method::io_uring::INFO.kind)
}

/// Any other suite: the kernel's own counts per op of each point on each kernel (system calls, context
/// switches), which emulation keeps; times are compare's and the report's, labelled there.
fn counts_table(rows: &[Vec<Row>]) -> KTable {
    let all = workloads(rows, |_| true);
    let krows = all
        .iter()
        .zip(labels(&all, true))
        .map(|(w, label)| KRow {
            label,
            values: rows
                .iter()
                .map(|mine| match point_of(mine, w) {
                    Some(r) => vec![
                        r.cited_opt(Fig::SyscallsPerOp),
                        r.cited_opt(Fig::CtxSwitchesPerOp),
                    ],
                    None => vec![None, None],
                })
                .collect(),
        })
        .collect();
    KTable {
        title: "System calls / context switches per op, per kernel (the kernel's own counts: emulation keeps \
                them; times: iolab compare --across kernel)"
            .into(),
        figures: vec!["syscalls/op".into(), "ctx switches/op".into()],
        unit: Unit::PerOp,
        rows: krows,
    }
}

/// What the probe found on some kernels and not on others.
fn differ(kernels: &[KernelRan]) -> Vec<(String, Vec<Option<bool>>)> {
    let names: std::collections::BTreeSet<&String> =
        kernels.iter().flat_map(|k| k.features.keys()).collect();
    names
        .into_iter()
        .filter(|n| !of_the_machine(n))
        .filter_map(|n| {
            let each: Vec<Option<bool>> =
                kernels.iter().map(|k| k.features.get(n).copied()).collect();
            let seen: Vec<bool> = each.iter().flatten().copied().collect();
            (seen.contains(&true) && seen.contains(&false)).then(|| (n.clone(), each))
        })
        .collect()
}

/// A probe row that tells the machine, not the kernel: a device a guest has and the host may not (the
/// sink driver, the NVMe disk), or the CPU's clock (emulated in a guest). Left out of the differences.
fn of_the_machine(name: &str) -> bool {
    ["iolab_sink", "nvme", "clock:"]
        .iter()
        .any(|w| name.contains(w))
}

/// The nowait suite's question across kernels: on each file system with buffered writes, which of these
/// releases stops punting them to io-wq (or that none does), from the punted shares of [`nowait_table`],
/// cited through `rows`.
pub fn punts_by_release(kernels: &[KernelRan], rows: &[Vec<Row>]) -> Option<Answer> {
    let (text, cites) = crate::cite::collect(|| punts_text(kernels, rows));
    let mut text = text?;
    if kernels.iter().any(|k| k.emulated) {
        text.push_str(
            " The shares are the kernel's own counts, which emulation keeps; no emulated time is compared.",
        );
    }
    Some(Answer {
        id: "punts-by-release".into(),
        question:
            "Which kernel release stops punting buffered writes to io-wq, and on which file system?"
                .into(),
        source: "Thiessen §5, asked of each kernel".into(),
        status: Status::Answered,
        text,
        needs: None,
        cites,
        seed: BTreeMap::new(),
    })
}

fn punts_text(kernels: &[KernelRan], rows: &[Vec<Row>]) -> Option<String> {
    // Kernels in release order, oldest first (the host's may sit between Debian's).
    let mut order: Vec<usize> = (0..kernels.len()).collect();
    order.sort_by_key(|&i| release_key(&kernels[i].release));
    let writes = workloads(rows, |r| {
        is_uring(r) && r.facts.write && !r.facts.direct && r.fs.is_some()
    });
    let mut parts = Vec::new();
    for (w, name) in writes.iter().zip(labels(&writes, true)) {
        let shares: Vec<(usize, f64)> = order
            .iter()
            .filter_map(|&k| Some((k, point_of(&rows[k], w)?.cited_opt(Fig::Punted)?)))
            .collect();
        if shares.len() < 2 {
            continue;
        }
        let each: Vec<String> = shares
            .iter()
            .map(|(k, s)| format!("{} {}", kernels[*k].label, pct(*s)))
            .collect();
        let stops = shares
            .windows(2)
            .find(|p| p[0].1 >= 0.5 && p[1].1 < 0.5)
            .map(|p| p[1].0);
        let verdict = match stops {
            Some(k)
                if shares
                    .iter()
                    .skip_while(|(i, _)| *i != k)
                    .all(|(_, s)| *s < 0.5) =>
            {
                format!("{} stops punting them", kernels[k].describe())
            }
            Some(_) => "the share goes down and up again across releases".to_string(),
            None if shares.iter().all(|(_, s)| *s >= 0.5) => {
                "none of these releases stops punting them".to_string()
            }
            None if shares.iter().all(|(_, s)| *s < 0.5) => {
                "none of these releases punts most of them".to_string()
            }
            None => "the oldest punts fewer than a newer one".to_string(),
        };
        parts.push(format!("{name}: {verdict} (punted: {}).", each.join(", ")));
    }
    if parts.is_empty() {
        return None;
    }
    // The releases compared, once, oldest first.
    let releases: Vec<String> = order
        .iter()
        .map(|&k| format!("{} is {}", kernels[k].label, kernels[k].release))
        .collect();
    Some(format!(
        "Releases: {}. {}",
        releases.join(", "),
        parts.join(" ")
    ))
}

/// A release's place in release order: its leading numbers ("6.12.57+deb12" -> [6, 12, 57]).
pub fn release_key(release: &str) -> Vec<u64> {
    release
        .split(|c: char| !c.is_ascii_digit())
        .take_while(|s| !s.is_empty())
        .take(3)
        .filter_map(|s| s.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests;
