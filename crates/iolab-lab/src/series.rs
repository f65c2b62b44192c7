//! Many runs of one workload or of a grid of workloads: `--repeat` statistics, `iolab sweep` points and
//! their JSON-lines record file (written after every point, so an interrupted sweep keeps what finished
//! and `--resume` continues it; locked while a sweep writes it, and each record carrying the sweep's
//! settings, so a resume with other ones is refused), CSV rows, and the figures `iolab compare` reads. Everything here reads result documents
//! as JSON values, so files written by earlier iolab versions or other commands compare the same way.
//! `iolab compare` itself lives in `crate::compare`; its names are re-exported here.

pub use crate::series_check::check_record_file;
use crate::series_check::{not_records, refuse_other_settings, resumable, resume_records};
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::spec::{RawSpec, Val};
use iolab_engine::stats::{stat, Stat};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use crate::compare::{
    compare, workload_key, workload_label, CompareRow, Verdict, MIN_NOISE_PCT,
};

/// A figure of a run result: its name, unit, place in the result document, and which way is better.
pub struct Figure {
    pub name: &'static str,
    pub unit: &'static str,
    pub path: &'static [&'static str],
    pub higher_is_better: bool,
}

/// The figures `--repeat` summarizes and `compare` sets side by side.
pub const FIGURES: &[Figure] = &[
    Figure {
        name: "iops",
        unit: "ops/s",
        path: &["iops"],
        higher_is_better: true,
    },
    Figure {
        name: "mib_s",
        unit: "MiB/s",
        path: &["mib_s"],
        higher_is_better: true,
    },
    Figure {
        name: "ns_per_op",
        unit: "ns (wall / ops)",
        path: &["ns_per_op"],
        higher_is_better: false,
    },
    Figure {
        name: "lat_p50",
        unit: "ns",
        path: &["latency", "p50_ns"],
        higher_is_better: false,
    },
    Figure {
        name: "lat_p99",
        unit: "ns",
        path: &["latency", "p99_ns"],
        higher_is_better: false,
    },
    Figure {
        name: "cpu_user",
        unit: "s (process)",
        path: &["cpu", "process", "user_s"],
        higher_is_better: false,
    },
    Figure {
        name: "cpu_sys",
        unit: "s (process)",
        path: &["cpu", "process", "sys_s"],
        higher_is_better: false,
    },
    Figure {
        name: "syscalls_per_op",
        unit: "calls/op (iolab's count)",
        path: &["syscalls", "method_per_op"],
        higher_is_better: false,
    },
];

/// Spread (max - min, over the median) above which `--repeat` warns that single comparisons are noise.
pub const WIDE_SPREAD_PCT: f64 = 10.0;

pub fn figure(result: &Value, f: &Figure) -> Option<f64> {
    num(result, f.path)
}

/// The value at `path` (object keys) inside a result document.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |x, k| x.get(k))
}

/// The number at `path`.
pub fn num(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path)?.as_f64()
}

/// A value as table text: strings bare, null and absent empty, anything else as JSON.
pub fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(o) => o.to_string(),
    }
}

/// What `--repeat N` reports beside the N results.
#[derive(Debug, Clone, Serialize)]
pub struct RepeatSummary {
    pub runs: usize,
    /// (figure, unit, statistics over the runs that have it).
    pub figures: Vec<(String, String, Stat)>,
    /// Set when the throughput spread is too wide to trust a comparison, saying how wide.
    pub spread_note: Option<String>,
}

pub fn summarize(results: &[Value]) -> RepeatSummary {
    let mut figures = Vec::new();
    for f in FIGURES {
        let xs: Vec<f64> = results.iter().filter_map(|r| figure(r, f)).collect();
        if let Some(s) = stat(&xs) {
            figures.push((f.name.to_string(), f.unit.to_string(), s));
        }
    }
    let spread_note = figures
        .iter()
        .find(|(n, _, _)| n == "iops")
        .filter(|(_, _, s)| s.n > 1 && s.spread_pct > WIDE_SPREAD_PCT)
        .map(|(_, _, s)| {
            format!(
                "throughput varied by {:.1}% over {} runs (max - min over the median; above {WIDE_SPREAD_PCT}%): \
                 differences smaller than that between two workloads are noise here",
                s.spread_pct, s.n
            )
        });
    RepeatSummary {
        runs: results.len(),
        figures,
        spread_note,
    }
}

// ---------------------------------------------------------------------------------------------------
// Sweeps.

/// One `--vary KEY=V1,V2,...`.
#[derive(Debug, Clone)]
pub struct Vary {
    pub key: String,
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...`; the key must be a spec key (checked by building a spec with its first value).
pub fn parse_vary(s: &str) -> Result<Vary> {
    let v = parse_vary_any(s)?;
    point_raw(&[(v.key.clone(), v.values[0].clone())])?;
    Ok(v)
}

/// Parses `KEY=V1,V2,...` for any key (suite workloads of their own have keys of their own).
pub fn parse_vary_any(s: &str) -> Result<Vary> {
    let (k, vs) = s.split_once('=').ok_or_else(|| {
        Error::usage(
            "--vary",
            format!("'{s}' is not KEY=V1,V2,... (for example --vary bs=4k,64k,1m)"),
        )
    })?;
    let key = k.trim().trim_start_matches("--").to_string();
    let values: Vec<String> = vs
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(Error::usage(
            "--vary",
            format!("'{s}' gives no values for {key}"),
        ));
    }
    Ok(Vary { key, values })
}

/// The cartesian product in a stable order: the first `--vary` changes slowest.
pub fn points(vs: &[Vary]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for v in vs {
        let mut next = Vec::with_capacity(out.len() * v.values.len());
        for p in &out {
            for val in &v.values {
                let mut q = p.clone();
                q.push((v.key.clone(), val.clone()));
                next.push(q);
            }
        }
        out = next;
    }
    out
}

/// The spec keys of one point as a RawSpec (to be merged over the base spec).
pub fn point_raw(point: &[(String, String)]) -> Result<RawSpec> {
    let mut raw = RawSpec::new();
    for (k, v) in point {
        let val = match v.as_str() {
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            _ => Val::Str(v.clone()),
        };
        raw.set(k, val).map_err(|m| Error::usage("--vary", m))?;
    }
    Ok(raw)
}

pub fn point_label(point: &[(String, String)]) -> String {
    point
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One line of a sweep's record file.
pub fn record(
    point: &[(String, String)],
    outcome: std::result::Result<Value, (i32, String)>,
) -> Value {
    let p: serde_json::Map<String, Value> = point
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    match outcome {
        Ok(r) => serde_json::json!({ "point": p, "result": r }),
        Err((code, msg)) => serde_json::json!({ "point": p, "error": msg, "exit_code": code }),
    }
}

/// Appends one record as a line and flushes it to the file system before returning, so a sweep killed
/// after this point keeps it.
pub fn append_record(f: &mut std::fs::File, rec: &Value) -> Result<()> {
    let mut line = serde_json::to_vec(rec).map_err(|e| Error::Runtime(format!("record: {e}")))?;
    line.push(b'\n');
    f.write_all(&line)
        .and_then(|_| f.sync_data())
        .map_err(|e| Error::Runtime(format!("cannot write the sweep's record file: {e}")))
}

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

/// Whether a record was made for `point` (keys in any order: a record's keys come back sorted).
pub fn is_point(rec: &Value, point: &[(String, String)]) -> bool {
    let mut a = record_point(rec);
    let mut b = point.to_vec();
    a.sort();
    b.sort();
    a == b
}

/// Reads a file of results: a sweep's JSON lines, a `run --json` document, or a `run --repeat --json`
/// document; returns the records (each `{"point", "result"}` or `{"point", "error"}`), and how many
/// trailing bytes were ignored (a line cut short when a sweep was killed mid-write). A record of a point
/// that did not run is left out when a later record of the same point follows it (the point was run
/// again at `--resume`, see [`retried`]).
pub fn read_records(path: &Path) -> Result<(Vec<Value>, usize)> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", path.display())))?;
    records_of(&text, path)
}

/// [`read_records`] of a file's text.
pub(crate) fn records_of(text: &str, path: &Path) -> Result<(Vec<Value>, usize)> {
    let bad = |what: String| Error::Runtime(format!("{}: {what}", path.display()));
    // A whole-file JSON document first (run --json, run --repeat --json).
    if let Ok(doc) = serde_json::from_str::<Value>(text) {
        if let Some(runs) = doc.get("runs").and_then(|r| r.as_array()) {
            // A `run --repeat` document ({"repeat", "runs"}; a survey's has no "repeat"): each run is
            // marked as one of the repeats of one configuration (`iolab report` shows them as one run
            // with its spread).
            let of = runs.len();
            let repeated = doc.get("repeat").is_some();
            return Ok((
                runs.iter()
                    .enumerate()
                    .map(|(i, r)| match repeated {
                        true => serde_json::json!({
                            "point": {}, "result": r, "repeat": {"run": i + 1, "of": of}
                        }),
                        false => serde_json::json!({ "point": {}, "result": r }),
                    })
                    .collect(),
                0,
            ));
        }
        if doc.get("point").is_some() {
            return Ok((vec![doc], 0));
        }
        if doc.get("spec").is_some() {
            return Ok((vec![serde_json::json!({ "point": {}, "result": doc })], 0));
        }
        return Err(bad("not an iolab result (no spec, runs or point)".into()));
    }
    let mut out: Vec<Value> = Vec::new();
    let mut ignored = 0;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, l) in lines.iter().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(l) {
            // A suite's findings and answers (`answers::record`): not a point.
            Ok(v) if v.get("summary").is_some() => {}
            Ok(v) if v.get("point").is_some() => {
                // A point run again at --resume: its later record replaces the one that did not run.
                out.retain(|r| !(r.get("error").is_some() && same_point(r, &v)));
                out.push(v)
            }
            Ok(_) => return Err(bad(format!("line {} is not a sweep record", i + 1))),
            // Only the last line may be cut short (a write interrupted by a kill).
            Err(_) if i + 1 == lines.len() && !l.ends_with('\n') => ignored = l.len(),
            Err(e) => return Err(bad(format!("line {}: {e}", i + 1))),
        }
    }
    Ok((out, ignored))
}

fn same_point(a: &Value, b: &Value) -> bool {
    is_point(a, &record_point(b))
}

/// What a point of a sweep or suite is refused with when its target file exists (`target.rs`: "... exists
/// and iolab did not create it; add --overwrite ..."): most often a file an interrupted iolab left behind.
pub const TARGET_EXISTS: &str = "exists and iolab did not create it";

/// Whether a record of a point is run again at `--resume` rather than taken as done: the point did not
/// run because its target file existed (a leftover of an interrupted iolab, which may be gone now; if it
/// is still there, the point is refused again and recorded so).
pub fn retried(rec: &Value) -> bool {
    rec.get("error")
        .and_then(|e| e.as_str())
        .is_some_and(|e| e.starts_with("--overwrite:") && e.contains(TARGET_EXISTS))
}

// ---------------------------------------------------------------------------------------------------
// The record file and the loop over points, shared by `iolab sweep` and `iolab suite`.

/// What a sweep or suite records in each point's record as `"settings"`, so `--resume` runs only with
/// the same ones: `fixed`, the settings every point shares (for a sweep the spec keys given by `--spec`
/// and flags, without the varied ones), and `vary`, each point key with its values in the order first
/// seen (for a sweep, its `--vary` lists).
pub fn settings(
    fixed: &std::collections::BTreeMap<String, String>,
    points: &[Vec<(String, String)>],
) -> Value {
    let mut vary = serde_json::Map::new();
    for (k, v) in points.iter().flatten() {
        let vals = vary
            .entry(k.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(a) = vals {
            if !a.iter().any(|x| x == v) {
                a.push(Value::String(v.clone()));
            }
        }
    }
    serde_json::json!({ "fixed": fixed, "vary": vary })
}

/// A sweep's fixed settings: the spec keys `base` gives (from `--spec` and flags) that no `--vary` sets.
pub fn fixed_spec(base: &RawSpec, vary: &[Vary]) -> std::collections::BTreeMap<String, String> {
    base.given()
        .filter(|o| !vary.iter().any(|v| v.key == o.key))
        .filter_map(|o| Some((o.key.to_string(), base.get(o.key)?.text())))
        .collect()
}

/// The keys on which two `settings` differ, each as "KEY (recorded X, now Y)" (`vary KEY` for a list).
pub(crate) fn settings_diff(was: &Value, now: &Value) -> Vec<String> {
    let shown = |v: Option<&Value>| match v {
        None | Some(Value::Null) => "not given".to_string(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| text(Some(x)))
            .collect::<Vec<_>>()
            .join(","),
        v => text(v),
    };
    let mut out = Vec::new();
    for (part, prefix) in [("fixed", ""), ("vary", "vary ")] {
        let (a, b) = (was.get(part), now.get(part));
        let mut keys: Vec<&String> = a
            .and_then(|m| m.as_object())
            .into_iter()
            .chain(b.and_then(|m| m.as_object()))
            .flat_map(|m| m.keys())
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let (x, y) = (a.and_then(|m| m.get(k)), b.and_then(|m| m.get(k)));
            if x != y {
                out.push(format!(
                    "{prefix}{k} (recorded {}, now {})",
                    shown(x),
                    shown(y)
                ));
            }
        }
    }
    out
}

/// A record file of JSON lines, one per point, each appended and synced as its point finishes. The file
/// is locked (flock) for as long as the recorder lives: a second iolab on the same file is refused.
pub struct Recorder {
    pub path: PathBuf,
    file: std::fs::File,
    /// The records in the file (those found at `--resume`, then those appended).
    pub done: Vec<Value>,
    /// Bytes of a cut-short last line dropped at `--resume` (a point killed while being written).
    pub dropped: usize,
    /// What `--resume` found and did about it, for the user (a missing final newline added, records
    /// of an older iolab whose settings could not be checked).
    pub notes: Vec<String>,
    /// What every record of this file carries as `"settings"` (see [`settings`]).
    settings: Value,
}

impl Recorder {
    /// Opens and locks the record file. `out` given: a new file, or with `resume` the existing one (its
    /// complete lines kept, a cut-short last line dropped, a missing final newline added; refused when
    /// its records carry other `settings`). `out` absent: a new `iolab-results/<stem>-<UTC>.jsonl`. An
    /// existing file is never appended to or replaced without `resume`.
    pub fn open(out: Option<&Path>, resume: bool, stem: &str, settings: Value) -> Result<Recorder> {
        let path = match (out, resume) {
            (Some(p), true) => resumable(p)?,
            (Some(p), false) => new_out(p)?,
            (None, _) => default_out(stem)?,
        };
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).append(true);
        if !resume {
            opts.create_new(true);
        }
        let file = opts.open(&path).map_err(|e| {
            let what = if resume { "read" } else { "open --out" };
            Error::Runtime(format!("cannot {what} {}: {e}", path.display()))
        })?;
        lock(&file, &path)?;
        let mut rec = Recorder {
            path,
            file,
            done: Vec::new(),
            dropped: 0,
            notes: Vec::new(),
            settings,
        };
        if resume {
            rec.resume()?;
        }
        Ok(rec)
    }

    /// Reads what the (locked) file holds, refuses other settings, then drops a cut-short last line or
    /// ends a last line that has no newline, in place.
    fn resume(&mut self) -> Result<()> {
        use std::io::Read;
        let p = self.path.clone();
        let mut bytes = Vec::new();
        (&self.file)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", p.display())))?;
        let text =
            String::from_utf8(bytes).map_err(|_| not_records(&p, "not UTF-8 text".into()))?;
        let (recs, cut) = resume_records(&text, &p)?;
        self.check_settings(&recs)?;
        let fail =
            |e: std::io::Error| Error::Runtime(format!("cannot rewrite {}: {e}", p.display()));
        if cut > 0 {
            // Drop the cut-short line in place (the lock stays on this file), then append after it.
            self.file
                .set_len((text.len() - cut) as u64)
                .and_then(|_| self.file.sync_data())
                .map_err(fail)?;
        } else if !text.is_empty() && !text.ends_with('\n') {
            self.file
                .write_all(b"\n")
                .and_then(|_| self.file.sync_data())
                .map_err(fail)?;
            self.notes.push(
                "its last line had no newline at the end; one was added, so the next record starts a line of its own"
                    .into(),
            );
        }
        self.done = recs;
        self.dropped = cut;
        Ok(())
    }

    /// Refuses records made with other settings (naming the keys that differ); notes records without any.
    fn check_settings(&mut self, recs: &[Value]) -> Result<()> {
        let unchecked = refuse_other_settings(&self.path, recs, &self.settings)?;
        if unchecked > 0 {
            self.notes.push(format!(
                "{unchecked} of its records carry no settings (written by an older iolab): they are taken as done \
                 without checking that they were made with these flags and --vary lists"
            ));
        }
        Ok(())
    }

    /// Whether `point` is recorded and not to be run again (see [`retried`]).
    pub fn has(&self, point: &[(String, String)]) -> bool {
        self.done.iter().any(|r| is_point(r, point) && !retried(r))
    }

    /// The latest record of `point`, if any.
    pub fn latest(&self, point: &[(String, String)]) -> Option<&Value> {
        self.done.iter().rev().find(|r| is_point(r, point))
    }

    /// Appends a record (with this file's `settings`) and syncs it before returning.
    pub fn push(&mut self, mut rec: Value) -> Result<()> {
        if let Some(m) = rec.as_object_mut() {
            m.insert("settings".into(), self.settings.clone());
        }
        append_record(&mut self.file, &rec)?;
        self.done.push(rec);
        Ok(())
    }
}

/// Takes the record file's lock, or refuses: another iolab is writing it.
fn lock(file: &std::fs::File, path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    match iolab_sys::flock_exclusive_nb(file.as_raw_fd()) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::usage(
            "--out",
            format!(
                "another iolab holds {} (a sweep or suite recording into it now); wait for it to end, or choose \
                 another --out",
                path.display()
            ),
        )),
        Err(e) => Err(Error::sys_on(e, path.display().to_string())),
    }
}

/// `--out` without `--resume`: a new file in an existing directory.
pub(crate) fn new_out(p: &Path) -> Result<PathBuf> {
    if p.exists() {
        return Err(Error::usage(
            "--out",
            format!(
                "{} exists; iolab does not replace files: add --resume to continue what it recorded, or choose a new name",
                p.display()
            ),
        ));
    }
    if let Some(d) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !d.is_dir() {
            return Err(Error::usage(
                "--out",
                format!("the directory {} does not exist", d.display()),
            ));
        }
    }
    Ok(p.to_path_buf())
}

/// No `--out`: a new `iolab-results/<stem>-<UTC>.jsonl` (`-2`, `-3` ... when taken).
fn default_out(stem: &str) -> Result<PathBuf> {
    let dir = Path::new("iolab-results");
    if dir.exists() && !dir.is_dir() {
        return Err(Error::usage(
            "--out",
            "./iolab-results, where records go without --out, is not a directory: give --out FILE",
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::Runtime(format!("cannot create {}: {e}", dir.display())))?;
    let stamp = iolab_engine::units::utc_stamp(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    );
    let mut p = dir.join(format!("{stem}-{stamp}.jsonl"));
    let mut k = 1;
    while p.exists() {
        k += 1;
        p = dir.join(format!("{stem}-{stamp}-{k}.jsonl"));
    }
    Ok(p)
}

/// A workload of its own: given the calibrated clock, returns its result document.
pub type CustomWork = Box<dyn FnOnce(&ClockInfo) -> Result<Value>>;

/// What one point of a sweep or suite does.
pub enum Work {
    /// An iolab run of the spec (or the reason the spec does not apply: recorded as not run).
    Run(Box<Result<iolab_engine::spec::Spec>>),
    /// Not run, with the reason (a method or device this build or machine does not have).
    Unavailable(String),
    /// A workload of its own (suites' decimal lines, the clock's cost) returning its result document.
    Custom(CustomWork),
}

pub struct Job {
    pub point: Vec<(String, String)>,
    pub work: Work,
}

/// What the loop tells its caller, for printing and progress.
pub enum Event<'a> {
    /// Point `i` (0-based) of `n` starts.
    Start { i: usize, n: usize, label: &'a str },
    /// Point `i` finished; its record (with "result", or "error" and "exit_code").
    Done {
        i: usize,
        n: usize,
        label: &'a str,
        rec: &'a Value,
    },
    /// Point `i` was recorded before (`--resume`) and is not run again.
    Skipped { i: usize, n: usize },
}

/// Runs every job whose point the recorder does not hold yet, appending one record per job as it
/// finishes, and telling `board` (a progress display's) what each run does. Returns how many did not run
/// (an error, not applicable or not available). Ctrl-C never returns here: the handler removes iolab's
/// files and exits; what was recorded is already synced.
pub fn run_jobs(
    jobs: Vec<Job>,
    rec: &mut Recorder,
    clk: &ClockInfo,
    board: Option<&iolab_engine::progress::Board>,
    on: &mut dyn FnMut(Event),
) -> Result<usize> {
    let n = jobs.len();
    let mut failed = 0;
    for (i, job) in jobs.into_iter().enumerate() {
        if rec.has(&job.point) {
            on(Event::Skipped { i, n });
            continue;
        }
        let label = point_label(&job.point);
        if let Some(b) = board {
            b.begin(iolab_engine::progress::Stage::Other, None);
        }
        on(Event::Start {
            i,
            n,
            label: &label,
        });
        let outcome = match job.work {
            Work::Run(spec) => (*spec)
                .map_err(|e| Error::usage("--vary", format!("{e}")))
                .and_then(|s| crate::run::run_with(&s, clk, board))
                .and_then(|r| {
                    serde_json::to_value(&r)
                        .map_err(|e| Error::Runtime(format!("result JSON: {e}")))
                }),
            Work::Unavailable(why) => Err(Error::Unavailable(why)),
            Work::Custom(f) => f(clk),
        };
        let outcome = outcome.map_err(|e| {
            failed += 1;
            (e.exit_code(), e.to_string())
        });
        let r = record(&job.point, outcome);
        rec.push(r)?;
        let r = rec.done.last().expect("just pushed");
        on(Event::Done {
            i,
            n,
            label: &label,
            rec: r,
        });
    }
    Ok(failed)
}

// ---------------------------------------------------------------------------------------------------
// CSV.

/// The CSV columns after the point's keys (one row per run; documented in the README).
pub const CSV_COLUMNS: &[&str] = &[
    "method",
    "op",
    "bs",
    "pattern",
    "target",
    "threads",
    "qd",
    "batch",
    "direct",
    "ops",
    "bytes",
    "wall_s",
    "iops",
    "mib_s",
    "ns_per_op",
    "lat_p50_ns",
    "lat_p99_ns",
    "cpu_user_s",
    "cpu_sys_s",
    "syscalls_per_op",
    "error",
];

pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn csv_header(point_keys: &[String]) -> String {
    let mut cols: Vec<String> = point_keys.iter().map(|k| format!("point.{k}")).collect();
    cols.extend(CSV_COLUMNS.iter().map(|c| c.to_string()));
    cols.iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",")
        + "\n"
}

/// The values a record's point gives `keys`, in their order ("" where the point has no such key).
pub fn point_cells(rec: &Value, keys: &[String]) -> Vec<String> {
    let point = record_point(rec);
    keys.iter()
        .map(|k| {
            point
                .iter()
                .find(|(pk, _)| pk == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        })
        .collect()
}

pub fn csv_row(rec: &Value, point_keys: &[String]) -> String {
    let mut cells = point_cells(rec, point_keys);
    let r = rec.get("result");
    let txt = |path: &[&str]| text(r.and_then(|r| at(r, path)));
    for c in CSV_COLUMNS {
        cells.push(match *c {
            "method" | "op" | "bs" | "pattern" | "threads" | "qd" | "batch" | "direct" => {
                txt(&["spec", c])
            }
            "target" => txt(&["spec", "target"]),
            "lat_p50_ns" => txt(&["latency", "p50_ns"]),
            "lat_p99_ns" => txt(&["latency", "p99_ns"]),
            "cpu_user_s" => txt(&["cpu", "process", "user_s"]),
            "cpu_sys_s" => txt(&["cpu", "process", "sys_s"]),
            "syscalls_per_op" => txt(&["syscalls", "method_per_op"]),
            "error" => rec
                .get("error")
                .and_then(|e| e.as_str())
                .unwrap_or_default()
                .to_string(),
            other => txt(&[other]),
        });
    }
    cells
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_exact() {
        let s = stat(&[3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (4, 2.5, 1.0, 10.0));
        assert!((s.spread_pct - 360.0).abs() < 1e-9);
        // Mean 4, squared deviations 1 + 9 + 4 + 36 = 50, population variance 12.5.
        assert!((s.stdev - 12.5f64.sqrt()).abs() < 1e-12);
        let one = stat(&[5.0]).unwrap();
        assert_eq!((one.stdev, one.spread_pct), (0.0, 0.0));
        assert!(stat(&[]).is_none());
    }

    #[test]
    fn points_are_the_product_in_flag_order() {
        let v = vec![
            parse_vary("method=psync,io_uring").unwrap(),
            parse_vary("bs=4k,64k,1m").unwrap(),
        ];
        let p = points(&v);
        assert_eq!(p.len(), 6);
        assert_eq!(point_label(&p[0]), "method=psync bs=4k");
        assert_eq!(point_label(&p[1]), "method=psync bs=64k");
        assert_eq!(point_label(&p[5]), "method=io_uring bs=1m");
        let e = parse_vary("colour=red").unwrap_err().to_string();
        assert!(e.contains("--vary") && e.contains("colour"), "{e}");
        assert!(parse_vary("bs")
            .unwrap_err()
            .to_string()
            .contains("KEY=V1,V2"));
        assert!(point_raw(&[("direct".into(), "true".into())]).is_ok());
    }

    #[test]
    fn settings_name_what_differs_and_later_records_replace_refusals() {
        let fixed =
            |ops: &str| std::collections::BTreeMap::from([("ops".to_string(), ops.to_string())]);
        let pts = |vals: &[&str]| -> Vec<Vec<(String, String)>> {
            vals.iter()
                .map(|v| vec![("bs".to_string(), v.to_string())])
                .collect()
        };
        let a = settings(&fixed("100"), &pts(&["4k", "64k"]));
        assert!(settings_diff(&a, &a.clone()).is_empty());
        let b = settings(&fixed("200"), &pts(&["4k", "1m"]));
        assert_eq!(
            settings_diff(&a, &b),
            vec![
                "ops (recorded 100, now 200)".to_string(),
                "vary bs (recorded 4k,64k, now 4k,1m)".to_string()
            ]
        );
        let p = vec![("bs".to_string(), "4k".to_string())];
        let refused = record(
            &p,
            Err((
                2,
                format!("--overwrite: /x {TARGET_EXISTS}; add --overwrite"),
            )),
        );
        assert!(retried(&refused));
        assert!(!retried(&record(
            &p,
            Err((2, "--qd: psync has none".into()))
        )));
        let ran = record(&p, Ok(serde_json::json!({"spec": {}})));
        let text = format!("{refused}\n{ran}\n");
        let (recs, cut) = records_of(&text, Path::new("x")).unwrap();
        assert_eq!((recs, cut), (vec![ran], 0));
    }
}
