//! Chart what varies: each key figure of the runs (throughput, IOPS, p99 latency, CPU, syscalls per op,
//! and the share of profile samples copying to/from user space) against each key the records vary (bs,
//! qd, threads, batch, method), one series per combination of the other keys that vary, and small
//! multiples: a panel per suite step (or per target), split further while a panel would hold too many
//! series. Also the grouping the other charts share (`split`), and the runs' coordinates (`keys_of`).

use super::axis::{self, Axis};
use super::charts::{self, BarChart, BarRow, BarSection, Figure, Mark, Marks, Panel};
use super::coords::NONE;
use super::flame;
use super::model::{self, kv, shared_spec, uninformative, Figures, Out, Run};
use crate::fields::{self, Field};
use serde_json::Value;

/// Series one panel holds at most (more are split into panels of their own).
pub(super) const MAX_SERIES: usize = 8;
/// Bars per method one section of a ranked chart holds at most.
const MAX_PARTS: usize = 4;

/// The spec keys a run is placed by when its point does not name them (a `run --json` document has no
/// point; a sweep's point names only what it varied).
const SPEC_KEYS: [(&str, Field); 9] = [
    ("method", fields::SPEC_METHOD),
    ("op", fields::SPEC_OP),
    ("pattern", fields::SPEC_PATTERN),
    ("bs", fields::SPEC_BS),
    ("threads", fields::SPEC_THREADS),
    ("qd", fields::SPEC_QD),
    ("batch", fields::SPEC_BATCH),
    ("direct", fields::SPEC_DIRECT),
    ("target", fields::SPEC_TARGET),
];

/// A run's coordinates: its point's keys in the record's order (without `quick`; block sizes in binary
/// units), the spec keys the point does not name, and `file` when the report tells files apart.
pub(super) fn keys_of(rec: &Value, r: &Value, file: Option<&str>) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = iolab_lab::series::record_point(rec)
        .into_iter()
        .filter(|(k, _)| k != "quick")
        .collect();
    keys.sort_by_key(|(k, _)| k != "step");
    for (k, f) in SPEC_KEYS {
        let v = match (k, f.num(r)) {
            ("bs", Some(b)) => axis::bytes(b),
            _ => f.text(r),
        };
        match keys.iter_mut().find(|(x, _)| x == k) {
            // The point's "4k" and a spec's 4096 are one size.
            Some(kv) if k == "bs" && !v.is_empty() => kv.1 = v,
            Some(_) => {}
            None if !v.is_empty() => keys.push((k.to_string(), v)),
            None => {}
        }
    }
    if let Some(f) = file {
        keys.push(("file".into(), f.into()));
    }
    keys
}

/// The value of `key` in a run ("" when it has none).
pub(super) fn val<'r>(x: &'r Run, key: &str) -> &'r str {
    let v = x.coords.names.id(key).map_or(NONE, |k| at(x, k));
    x.coords.values.text(v)
}

/// The value number of key number `k` in a run ([`NONE`] when it has none).
fn at(x: &Run, k: u32) -> u32 {
    x.keys.iter().find(|(a, _)| *a == k).map_or(NONE, |p| p.1)
}

/// The key numbers of `keys` (a key no run has is left out: it varies in none).
fn key_ids(runs: &[&Run], keys: &[impl AsRef<str>]) -> Vec<u32> {
    let Some(x) = runs.first() else {
        return Vec::new();
    };
    keys.iter()
        .filter_map(|k| x.coords.names.id(k.as_ref()))
        .collect()
}

/// A run's values of the keys `ks` (its series, where `ks` tell the series apart).
fn values_at(x: &Run, ks: &[u32]) -> Vec<u32> {
    ks.iter().map(|k| at(x, *k)).collect()
}

/// How many distinct combinations of the keys `ks` `runs` hold.
fn combinations(runs: &[&Run], ks: &[u32]) -> usize {
    let seen: std::collections::HashSet<Vec<u32>> = runs.iter().map(|x| values_at(x, ks)).collect();
    seen.len()
}

/// The keys whose values differ among `runs`, in the order they first appear, without `except`.
pub(super) fn varying(runs: &[&Run], except: &[&str]) -> Vec<String> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    let except = key_ids(runs, except);
    let mut out: Vec<String> = Vec::new();
    // Each key is looked at once over all the runs (linear in the runs, not quadratic).
    let mut checked = vec![false; first.coords.names.len()];
    for x in runs {
        for &(k, _) in &x.keys {
            if std::mem::replace(&mut checked[k as usize], true) || except.contains(&k) {
                continue;
            }
            let v = at(first, k);
            if runs.iter().any(|y| at(y, k) != v) {
                out.push(first.coords.names.text(k).to_string());
            }
        }
    }
    out
}

/// The keys that tell a chart's series apart: those that vary within some panel (a key that differs only
/// between panels is in their titles), so a series has the same name, and color, in every panel; in the
/// records' order, without those another of them determines (a suite step's target path).
pub(super) fn series_keys(panels: &[(String, Vec<&Run>)], except: &[&str]) -> Vec<String> {
    let all: Vec<&Run> = panels.iter().flat_map(|p| p.1.iter().copied()).collect();
    let within: Vec<String> = panels
        .iter()
        .flat_map(|(_, g)| varying(g, except))
        .collect();
    let keys: Vec<String> = varying(&all, except)
        .into_iter()
        .filter(|k| within.contains(k))
        .collect();
    // A key that moves with an excepted one (a QD sweep's batch = QD, beside its x axis qd) is no series.
    let head: Vec<String> = except.iter().map(|k| k.to_string()).collect();
    independent(&all, head.iter().cloned().chain(keys).collect())
        .into_iter()
        .filter(|k| !head.contains(k))
        .collect()
}

/// `keys` without each one whose value follows from the value of an earlier one among `runs`.
pub(super) fn independent(runs: &[&Run], keys: Vec<String>) -> Vec<String> {
    // Each key's value in each run as a small number (one pass per key): whether one key's value follows
    // from another's is then a pass over two arrays, not a string lookup per run and pair (64 keys over
    // 8,000 records took 46 s).
    let ids = |k: &str| -> (Vec<u32>, usize) {
        let k = key_ids(runs, &[k]).first().copied();
        let mut seen: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        let v = runs
            .iter()
            .map(|x| {
                let n = seen.len() as u32;
                *seen.entry(k.map_or(NONE, |k| at(x, k))).or_insert(n)
            })
            .collect();
        (v, seen.len())
    };
    let follows = |a: &(Vec<u32>, usize), b: &(Vec<u32>, usize)| {
        let mut seen = vec![u32::MAX; a.1];
        a.0.iter().zip(&b.0).all(|(x, y)| {
            let s = &mut seen[*x as usize];
            if *s == u32::MAX {
                *s = *y;
            }
            *s == *y
        })
    };
    let mut out: Vec<(String, (Vec<u32>, usize))> = Vec::new();
    for k in keys {
        let mine = ids(&k);
        if !out.iter().any(|(_, e)| follows(e, &mine)) {
            out.push((k, mine));
        }
        // A label of more keys is not read: the rest are left out.
        if out.len() == MAX_SERIES_KEYS {
            break;
        }
    }
    out.into_iter().map(|(k, _)| k).collect()
}

/// The most keys a series' label names.
const MAX_SERIES_KEYS: usize = 16;

/// A run's label made of its values of `keys` ("" when `keys` is empty).
pub(super) fn series_label(x: &Run, keys: &[String]) -> String {
    keys.iter()
        .map(|k| kv(k, val(x, k)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A run's name within a group whose runs differ in `keys`: those values, or its full label.
pub(super) fn label_in(x: &Run, keys: &[String]) -> String {
    let l = series_label(x, keys);
    if l.is_empty() {
        x.label.clone()
    } else {
        l
    }
}

/// Distinct values of `key` among `runs`, in order.
fn values_of<'r>(runs: &[&'r Run], key: &str) -> Vec<&'r str> {
    let Some(x) = runs.first() else {
        return Vec::new();
    };
    let k = key_ids(runs, &[key]).first().copied();
    // Seen through a set: linear in the runs however many values there are.
    let mut seen = std::collections::HashSet::new();
    let ids: Vec<u32> = runs
        .iter()
        .map(|y| k.map_or(NONE, |k| at(y, k)))
        .filter(|v| seen.insert(*v))
        .collect();
    let values = &x.coords.values;
    ids.into_iter().map(|v| values.text(v)).collect()
}

/// Small multiples: `runs` in groups, each with a title naming the values its runs share. While a group
/// would hold more than `max` series (`count` counts a group's), it is split: first by the suite step
/// (else the target) when it varies, then by the key (not in `except`) with the fewest values.
pub(super) fn split<'a, 'b>(
    runs: Vec<&'b Run<'a>>,
    except: &[&str],
    max: usize,
    count: &dyn Fn(&[&Run]) -> usize,
) -> Vec<(String, Vec<&'b Run<'a>>)> {
    let mut todo: Vec<(Vec<String>, Vec<&Run>)> = vec![(Vec::new(), runs)];
    let vary = varying(&todo[0].1, except);
    let first = ["step", "target"]
        .iter()
        .find(|k| vary.iter().any(|v| v == *k));
    if let Some(first) = first.filter(|_| count(&todo[0].1) > max) {
        todo = by_key(todo, first);
    }
    todo.reverse();
    let mut done = Vec::new();
    while let Some((title, g)) = todo.pop() {
        // A group that fits is done: the keys are looked at only for one that must be split (a pass
        // per key over every group was most of a report's time where points name many keys).
        // Nor is a group split by MAX_SPLITS keys already: a title of more is not read, and each split is
        // a pass over every key (points that named a key of their own each were split 64 deep).
        if title.len() >= MAX_SPLITS || count(&g) <= max {
            done.push((title.join(" "), g));
            continue;
        }
        let keys = varying(&g, except);
        // Split by a key only while another is left to tell the series apart (a panel per value of
        // the only one would hold one series each).
        match keys.iter().min_by_key(|k| values_of(&g, k).len()) {
            Some(k) if keys.len() >= 2 => {
                let k = k.clone();
                todo.extend(by_key(vec![(title, g)], &k).into_iter().rev());
            }
            _ => done.push((title.join(" "), g)),
        }
    }
    done
}

/// The most keys small multiples split a figure's runs by (a panel's title names at most these).
const MAX_SPLITS: usize = 4;

/// Each group split by the values of `key`, in order, each title extended with it.
fn by_key<'a, 'b>(
    groups: Vec<(Vec<String>, Vec<&'b Run<'a>>)>,
    key: &str,
) -> Vec<(Vec<String>, Vec<&'b Run<'a>>)> {
    let mut out = Vec::new();
    for (title, g) in groups {
        let Some(first) = g.first().copied() else {
            continue;
        };
        let k = first.coords.names.id(key);
        // One pass over the group, each value's runs in their order, the values in first-seen order.
        let mut seen: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        let mut parts: Vec<(u32, Vec<&'b Run<'a>>)> = Vec::new();
        for x in g {
            let v = k.map_or(NONE, |k| at(x, k));
            let i = *seen.entry(v).or_insert_with(|| {
                parts.push((v, Vec::new()));
                parts.len() - 1
            });
            parts[i].1.push(x);
        }
        for (v, runs) in parts {
            let mut t = title.clone();
            t.push(kv(key, first.coords.values.text(v)));
            out.push((t, runs));
        }
    }
    out
}

/// The colors one figure tells apart (`charts::color`).
pub(super) const PALETTE: usize = 12;

/// A figure's panels: each a title and its runs.
pub(super) type Panels<'a, 'b> = Vec<(String, Vec<&'b Run<'a>>)>;

/// A part of a figure split so its legend fits the palette: what its title and file name add.
#[derive(Default)]
pub(super) struct Part {
    /// Empty, or " (method: sync, psync, stdio, 1 of 2)".
    pub(super) title: String,
    /// Empty, or "-1".
    pub(super) name: String,
}

/// A figure's panels, made by `panels` from `runs`, as one figure, or where its legend would hold more
/// series than the palette has colors, as several (small multiples): the runs parted by the values of the
/// key with the most values (the methods, mostly), in the fewest near-equal runs of values whose legends
/// each fit the palette.
pub(super) fn palette_parts<'a, 'b>(
    runs: Vec<&'b Run<'a>>,
    except: &[&str],
    panels: &dyn Fn(Vec<&'b Run<'a>>) -> Panels<'a, 'b>,
) -> Vec<(Part, Panels<'a, 'b>)> {
    let whole = panels(runs.clone());
    let keys = series_keys(&whole, except);
    let key = keys.iter().max_by_key(|k| values_of(&runs, k).len());
    let (Some(key), true) = (key, legend_len(&whole, except) > PALETTE) else {
        return vec![(Part::default(), whole)];
    };
    let vals = values_of(&runs, key);
    // The runs in `n` parts of near-equal runs of values, each part's panels.
    let part = |n: usize| {
        let size = vals.len().div_ceil(n);
        // Each run to its value's part, in one pass (a pass per part was quadratic in a fleet's hosts).
        let values = &runs[0].coords.values;
        let part_of: std::collections::HashMap<u32, usize> = vals
            .iter()
            .enumerate()
            .filter_map(|(i, v)| Some((values.id(v)?, i / size)))
            .collect();
        let k = key_ids(&runs, &[key]).first().copied();
        let mut mine: Vec<Vec<&Run>> = vec![Vec::new(); vals.len().div_ceil(size)];
        for r in runs.iter().copied() {
            if let Some(&i) = part_of.get(&k.map_or(NONE, |k| at(r, k))) {
                mine[i].push(r);
            }
        }
        vals.chunks(size)
            .zip(mine)
            .map(|(c, mine)| (c.join(", "), panels(mine)))
            .collect::<Vec<_>>()
    };
    let fits = |p: &[(String, Panels)]| p.iter().all(|p| legend_len(&p.1, except) <= PALETTE);
    // No fewer parts than the palette needs for the whole legend (each part holds about its share of
    // the series). From there the number of parts doubles until each part's legend fits, then a binary
    // search finds the fewest that do: a pass over the runs per number tried was quadratic where a key
    // has a value per run (4,200 records took 69 s).
    let most = vals.len().max(2);
    let mut lo = legend_len(&whole, except).div_ceil(PALETTE).clamp(2, most);
    let mut parted = part(lo);
    if !fits(&parted) {
        let mut hi = lo;
        let mut found = None;
        while hi < most {
            lo = hi;
            hi = (hi * 2).min(most);
            let p = part(hi);
            if fits(&p) {
                found = Some(p);
                break;
            }
            parted = p;
        }
        // `lo` parts do not fit; `hi` parts do (or are the most there can be).
        if let Some(mut best) = found {
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                let p = part(mid);
                if fits(&p) {
                    (hi, best) = (mid, p);
                } else {
                    lo = mid;
                }
            }
            parted = best;
        }
    }
    let n = parted.len();
    parted
        .into_iter()
        .enumerate()
        .map(|(i, (span, p))| {
            let part = Part {
                title: format!(" ({key}: {span}, {} of {n})", i + 1),
                name: format!("-{}", i + 1),
            };
            (part, p)
        })
        .collect()
}

/// The series a figure of these panels names in its legend.
fn legend_len(panels: &[(String, Vec<&Run>)], except: &[&str]) -> usize {
    let all: Vec<&Run> = panels.iter().flat_map(|p| p.1.iter().copied()).collect();
    combinations(&all, &key_ids(&all, &series_keys(panels, except)))
}

/// Distinct series labels in order: the legend (and where each is, so a lookup is not a scan: a run
/// per series was quadratic).
#[derive(Default)]
pub(super) struct Legend(
    pub(super) Vec<String>,
    std::collections::HashMap<String, usize>,
);

impl Legend {
    /// The index of `name`, added when new.
    pub(super) fn index(&mut self, name: &str) -> usize {
        if let Some(&i) = self.1.get(name) {
            return i;
        }
        self.0.push(name.to_string());
        self.1.insert(name.to_string(), self.0.len() - 1);
        self.0.len() - 1
    }
}

/// A key figure: its chart name, title, value in a run, axis, and which way is better (for ranking).
struct Fig {
    /// Its place in [`FIGS`].
    at: usize,
    name: &'static str,
    title: &'static str,
    value: fn(&Value) -> Option<f64>,
    axis: fn(&[f64]) -> Axis,
    higher_is_better: bool,
    about: &'static str,
}

/// User + system CPU time of the process per op, in ns (every thread of it, the kernel's helpers aside).
fn cpu_ns_per_op(r: &Value) -> Option<f64> {
    let w = fields::WALL_S.num(r).filter(|w| *w > 0.0)?;
    // No figure over a span shorter than the CPU accounting can resolve, nor where its CPUs could not
    // have spent that CPU time in the span (as the record's `derived.cpu_ns_per_op` is withheld).
    if iolab_engine::units::cpu_span_too_short(w).is_some()
        || iolab_lab::series::cpu_withheld(r).is_some()
    {
        return None;
    }
    let ops = fields::OPS.num(r).filter(|n| *n > 0.0)?;
    let cpu = fields::CPU_USER_S.num(r)? + fields::CPU_SYS_S.num(r)?;
    (cpu > 0.0).then_some(cpu / ops * 1e9)
}

const FIGS: [Fig; model::FIGURES] = [
    Fig {
        at: 0,
        name: "throughput",
        title: "Throughput",
        value: |r| fields::MIB_S.num(r).filter(|v| *v > 0.0),
        axis: Axis::throughput,
        higher_is_better: true,
        about: "bytes moved per second of the timed loop's wall time (MiB = 2^20 bytes)",
    },
    Fig {
        at: 1,
        name: "iops",
        title: "IOPS",
        value: |r| fields::IOPS.num(r),
        axis: Axis::iops,
        higher_is_better: true,
        about: "ops per second of the timed loop's wall time",
    },
    Fig {
        at: 2,
        name: "p99-latency",
        title: "p99 latency",
        value: |r| fields::LATENCY_P99.num(r).filter(|v| *v > 0.0),
        axis: |v| Axis::time("p99 latency", v),
        higher_is_better: false,
        about: "the 99th percentile of per-op latency (synchronous methods: completion to completion, \
                asynchronous: queued to completion seen)",
    },
    Fig {
        at: 3,
        name: "cpu-per-op",
        title: "CPU per op",
        value: cpu_ns_per_op,
        axis: |v| Axis::time("CPU time per op, user + system", v),
        higher_is_better: false,
        about: "the process's user + system CPU time (getrusage, all its threads) over the timed loop, per \
                op: what an op cost in CPU, whichever thread spent it",
    },
    Fig {
        at: 4,
        name: "syscalls-per-op",
        title: "System calls per op",
        value: |r| fields::SYSCALLS_PER_OP.num(r),
        axis: |v| Axis::amount("system calls per op", "calls/op", v),
        higher_is_better: false,
        about: "the method's own system calls per op, counted by iolab (io_uring: io_uring_enter calls)",
    },
    Fig {
        at: 5,
        name: "copy-share",
        title: "Copying to and from user space",
        value: |r| flame::copy_share(r).map(|s| s * 100.0),
        axis: |v| Axis::amount("profile samples copying to/from user", "%", v),
        higher_is_better: false,
        about: "the share of each run's profile samples in the \"copy to/from user\" group (the kernel \
                copying between user and kernel memory: copy_to_user, copy_from_user and the string \
                routines under them); the storage paper's Figure 4",
    },
];

/// A key the records may vary: its name, the axis's name and unit; None for the method (ranked bars).
struct XKey {
    /// Its place in [`XKEYS`].
    at: usize,
    key: &'static str,
    field: Field,
    axis: Option<(&'static str, &'static str)>,
}

const XKEYS: [XKey; model::X_KEYS] = [
    XKey {
        at: 0,
        key: "bs",
        field: fields::SPEC_BS,
        axis: Some(("block size", "bytes per op")),
    },
    XKey {
        at: 1,
        key: "qd",
        field: fields::SPEC_QD,
        axis: Some(("queue depth", "requests in flight")),
    },
    XKey {
        at: 2,
        key: "threads",
        field: fields::SPEC_THREADS,
        axis: Some(("threads", "count")),
    },
    XKey {
        at: 3,
        key: "batch",
        field: fields::SPEC_BATCH,
        axis: Some(("batch", "requests per submission")),
    },
    XKey {
        at: 4,
        key: "method",
        field: fields::SPEC_METHOD,
        axis: None,
    },
];

/// The key figures of the result `r`.
pub(super) fn figures_of(r: &Value) -> Figures {
    Figures {
        y: FIGS.each_ref().map(|f| (f.value)(r).unwrap_or(f64::NAN)),
        x: XKEYS.each_ref().map(|k| k.field.num(r).unwrap_or(f64::NAN)),
        named: XKEYS.each_ref().map(|k| !k.field.text(r).is_empty()),
    }
}

impl Fig {
    /// This figure of a run.
    fn of(&self, x: &Run) -> Option<f64> {
        Some(x.figures.y[self.at]).filter(|v| !v.is_nan())
    }
}

impl XKey {
    /// A run's number for this key.
    fn num(&self, x: &Run) -> Option<f64> {
        Some(x.figures.x[self.at]).filter(|v| !v.is_nan())
    }
}

/// Every key figure against every key the runs vary; returns the names of the figures drawn.
pub(super) fn figure_charts<'a, 'b>(io_runs: &[&'b Run<'a>], out: &mut Out) -> Vec<&'static str> {
    let mut drawn = Vec::new();
    for xk in &XKEYS {
        for fig in &FIGS {
            let runs: Vec<&Run> = io_runs
                .iter()
                .copied()
                .filter(|x| fig.of(x).is_some() && x.figures.named[xk.at])
                .collect();
            let panels = |rs: Vec<&'b Run<'a>>| -> Vec<(String, Vec<&'b Run<'a>>)> {
                split(rs, &[xk.key], max_of(xk), &|g| series_count(g, xk.key))
                    .into_iter()
                    .filter(|(_, g)| along(g, xk.key))
                    .collect()
            };
            // Bars color the few parts of a row (at most MAX_PARTS): only lines need the palette split.
            let parts = if xk.axis.is_some() {
                palette_parts(runs, &[xk.key], &panels)
            } else {
                vec![(Part::default(), panels(runs))]
            };
            for (part, panels) in parts {
                if !panels.is_empty() && figure_chart(fig, xk, &panels, &part, out) {
                    drawn.push(fig.name);
                }
            }
        }
    }
    drawn
}

fn max_of(xk: &XKey) -> usize {
    if xk.axis.is_some() {
        MAX_SERIES
    } else {
        MAX_PARTS
    }
}

/// Whether some series of a group (runs alike but for `x`) holds two or more values of `x`: else `x`
/// varies only with the keys that tell the series apart (each suite step its own settings), and a chart
/// against it would be isolated points.
fn along(g: &[&Run], x: &str) -> bool {
    let keys = key_ids(g, &independent(g, varying(g, &[x])));
    let Some(xk) = key_ids(g, &[x]).first().copied() else {
        return false;
    };
    // The first value of `x` seen in each series (linear in the runs).
    let mut first: std::collections::HashMap<Vec<u32>, u32> = std::collections::HashMap::new();
    g.iter().any(|a| {
        let v = at(a, xk);
        *first.entry(values_at(a, &keys)).or_insert(v) != v
    })
}

/// Series in a group: the combinations of the keys other than `x` that vary in it.
fn series_count(g: &[&Run], x: &str) -> usize {
    combinations(g, &key_ids(g, &varying(g, &[x])))
}

/// One figure against one key in `panels`; false when left out (its values are all the same).
fn figure_chart(
    fig: &Fig,
    xk: &XKey,
    panels: &[(String, Vec<&Run>)],
    part: &Part,
    out: &mut Out,
) -> bool {
    let all: Vec<&Run> = panels.iter().flat_map(|p| p.1.iter().copied()).collect();
    let ys: Vec<f64> = all.iter().filter_map(|x| fig.of(x)).collect();
    let y = (fig.axis)(&ys);
    let x_name = xk.axis.map_or("method", |a| a.0);
    let title = format!("{} against {x_name}{}", fig.title, part.title);
    if let Some(why) = uninformative(&ys, &|v| y.value_text(v)) {
        out.leave_out(&title, why);
        return false;
    }
    let name = format!("{}-vs-{}{}", fig.name, xk.key, part.name);
    let caption = format!(
        "{} ({}) against {x_name}{}, one {} per combination of the other keys that vary (the legend){}. \
         Shared spec: {}.",
        fig.title,
        fig.about,
        match (xk.axis.is_some(), fig.higher_is_better) {
            (true, _) => " (log axis, a tick at each value measured)",
            (false, true) => ", highest first",
            (false, false) => ", lowest first",
        },
        if xk.axis.is_some() { "line" } else { "bar" },
        if panels.len() > 1 {
            ", a panel per group of runs, named above it"
        } else {
            ""
        },
        shared_spec(&all)
    );
    let svg = match xk.axis {
        Some((n, unit)) => {
            let y = y.log_if_wide(&ys);
            charts::draw(
                &lines_figure(fig, xk, (n, unit), panels, y, &title),
                &mut out.palette,
            )
        }
        None => {
            // Bars from zero where the values are alike; on a log axis where they span a factor of 100
            // (a NOP beside a disk write would squash every other bar to a sliver).
            let y = y.linear_from_zero(&ys).log_if_wide(&ys);
            charts::series_bar_chart(&ranked_bars(fig, panels, y, &title), &mut out.palette)
        }
    };
    out.add(&name, &title, caption, svg);
    true
}

/// A figure's lines against a numeric key, in panels.
fn lines_figure(
    fig: &Fig,
    xk: &XKey,
    (name, unit): (&str, &str),
    panels: &[(String, Vec<&Run>)],
    y: Axis,
    title: &str,
) -> Figure {
    let xs: Vec<f64> = panels
        .iter()
        .flat_map(|p| p.1.iter().filter_map(|x| xk.num(x)))
        .collect();
    let x_axis = if xk.key == "bs" {
        Axis::block_sizes(&xs)
    } else {
        Axis::measured(name, unit, &xs, axis::num)
    };
    let mut legend = Legend::default();
    let mut out = Vec::new();
    let keys = series_keys(panels, &[xk.key]);
    for (ptitle, g) in panels {
        let mut lines: Vec<(usize, Vec<(f64, f64)>)> = Vec::new();
        for x in g {
            let (Some(a), Some(b)) = (xk.num(x), fig.of(x)) else {
                continue;
            };
            let i = legend.index(&series_label(x, &keys));
            match lines.iter_mut().find(|l| l.0 == i) {
                Some(l) => l.1.push((a, b)),
                None => lines.push((i, vec![(a, b)])),
            }
        }
        for l in &mut lines {
            l.1.sort_by(|p, q| p.0.total_cmp(&q.0));
        }
        out.push(Panel {
            title: ptitle.clone(),
            x: x_axis.clone(),
            y: y.clone(),
            marks: lines
                .into_iter()
                .map(|(series, p)| Mark {
                    series,
                    marks: Marks::Line(p),
                })
                .collect(),
        });
    }
    // One unnamed series: the panels and caption say what it is.
    if legend.0.len() == 1 && legend.0[0].is_empty() {
        legend.0.clear();
    }
    Figure {
        title: title.into(),
        legend: legend.0,
        panels: out,
    }
}

/// A figure per method as bars, ranked best first in each section (highest or lowest first), a bar per combination of the other
/// keys that vary.
fn ranked_bars(fig: &Fig, panels: &[(String, Vec<&Run>)], axis: Axis, title: &str) -> BarChart {
    let mut legend = Legend::default();
    let mut sections = Vec::new();
    let keys = series_keys(panels, &["method"]);
    for (ptitle, g) in panels {
        let mut rows: Vec<(String, Vec<(usize, f64)>)> = Vec::new();
        for x in g {
            let Some(v) = fig.of(x) else { continue };
            let i = legend.index(&series_label(x, &keys));
            let m = val(x, "method").to_string();
            match rows.iter_mut().find(|r| r.0 == m) {
                Some(r) => r.1.push((i, v)),
                None => rows.push((m, vec![(i, v)])),
            }
        }
        let mean = |r: &(String, Vec<(usize, f64)>)| {
            r.1.iter().map(|p| p.1).sum::<f64>() / r.1.len() as f64
        };
        rows.sort_by(|a, b| {
            let o = mean(a).total_cmp(&mean(b));
            if fig.higher_is_better {
                o.reverse()
            } else {
                o
            }
        });
        sections.push((ptitle.clone(), rows));
    }
    let parts = legend.0.len().max(1);
    BarChart {
        title: title.into(),
        axis,
        parts: if legend.0.len() == 1 && legend.0[0].is_empty() {
            Vec::new()
        } else {
            legend.0
        },
        stacked: false,
        sections: sections
            .into_iter()
            .map(|(title, rows)| BarSection {
                title,
                rows: rows
                    .into_iter()
                    .map(|(label, v)| {
                        let mut values = vec![f64::NAN; parts];
                        for (i, x) in v {
                            values[i] = x;
                        }
                        BarRow { label, values }
                    })
                    .collect(),
            })
            .collect(),
    }
}
