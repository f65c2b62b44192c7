//! Suites: the seed experiments as checked-in TOML files (suites/*.toml, built into the binary), each a
//! list of steps; a step is a spec (over the suite's defaults) and optional `vary` lists, run as points of
//! the same loop and record file as `iolab sweep` (series::run_jobs), then shown as the table the seed
//! published. `--quick` applies the suite's `[quick]` keys (smaller amounts) and a step's `quick-vary`.
//!
//! A step may say `needs = "offload"` (a method this build may not have) or `needs = "zram"` (a device
//! that may not be makeable here): when missing, its points are recorded as "not available ..." with the
//! reason, never faked. `workload = "lines"` runs the kernel-vs-user note's decimal lines (crate::lines)
//! and `workload = "clock"` records the cost of the clock that times every op.
//!
//! The command line can set a spec key on every point over all the file says (`iolab suite --profile`:
//! [`SuiteFile::set_on_every_point`]); such a key is in each point, so `--resume` never takes a point
//! recorded without it as done. When points carry profiles, the table is followed by where their time
//! went: the share of samples copying to/from user space (the storage paper's Figure 4) and the top
//! kernel function of each point. A suite's `[[question]]`s and `[[published-figure]]`s are answered and
//! checked after the table (`answers/`).

use crate::series::{self, Job, Work};
use crate::series_check;
use iolab_engine::error::{Error, Result};
use iolab_engine::spec::{MethodKind, RawSpec};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The checked-in suites, in the order `--list` shows them.
pub const BUILTIN: &[(&str, &str)] = &[
    ("writes", include_str!("../../../suites/writes.toml")),
    ("blocksize", include_str!("../../../suites/blocksize.toml")),
    ("uring", include_str!("../../../suites/uring.toml")),
    (
        "shared-ring",
        include_str!("../../../suites/shared-ring.toml"),
    ),
    (
        "kernel-user",
        include_str!("../../../suites/kernel-user.toml"),
    ),
    ("offload", include_str!("../../../suites/offload.toml")),
    ("nowait", include_str!("../../../suites/nowait.toml")),
];

/// How a suite's results are tabled (after the seed's own tables).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKind {
    /// User, sys, total seconds, user %, sys % (the Pi thesis's Figures 18 and 20).
    Cpu,
    /// MiB/s and kernel CPU % per block size (the storage paper's Figures 2 and 3).
    Throughput,
    /// Runtime, average latency, IOPS, MiB/s, syscalls (the course report's Tables 1-3).
    Latency,
    /// IOPS and io_uring batch statistics (the course report's Tables 4-6).
    Batches,
    /// The distribution of run times (first write until fsync returned) per method (the kernel-vs-user note).
    Lines,
    /// NOP round trips in ns and cycles (the offload thesis).
    Nop,
    /// Ops that would have blocked (RWF_NOWAIT) beside io_uring's io-wq punts.
    Nowait,
    /// The kernel's count of every system call over the same ops, like `strace -c` without its cost in
    /// the timed pass (the course report's Table 3).
    Syscalls,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SuiteFile {
    pub name: String,
    /// One line, for `--list`.
    pub about: String,
    /// The seed document and the tables or figures this suite reproduces.
    pub reproduces: String,
    pub table: TableKind,
    /// Where and why the setup differs from the seed's.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The seed's published figures, printed under iolab's table for comparison.
    #[serde(default)]
    pub published: Option<String>,
    /// Spec keys every step starts from.
    #[serde(default)]
    pub defaults: toml::Table,
    /// Spec keys that replace any other under `--quick` (smaller amounts).
    #[serde(default)]
    pub quick: toml::Table,
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
    /// What the profile table reproduces, when the points carry profiles (`--profile`).
    #[serde(default)]
    pub profile_figure: Option<String>,
    /// The seed's open questions, answered after the table (`answers.rs`).
    #[serde(default, rename = "question")]
    pub questions: Vec<crate::answers::Question>,
    /// The seed's published throughputs, checked against this machine's memory copy rate.
    #[serde(default, rename = "published-figure")]
    pub published_figures: Vec<crate::answers::PublishedFigure>,
    /// Spec keys set on every point over everything the file says (from the command line).
    #[serde(skip)]
    pub overrides: toml::Table,
    /// `--repeat N`: every point runs N times, in rounds (0 or 1: once).
    #[serde(skip)]
    pub repeat: u32,
    /// The file this suite was read from ("suites/NAME.toml" for a built-in one), named in errors.
    #[serde(skip)]
    pub origin: String,
}

impl SuiteFile {
    /// Sets spec key `key` to `value` on every point (over the defaults, steps, vary lists and quick
    /// keys), and marks each point with it.
    pub fn set_on_every_point(&mut self, key: &str, value: &str) {
        self.overrides.insert(key.to_string(), toml_of(value));
    }

    /// Runs every point `n` times (`iolab suite --repeat N`): in `n` rounds over all the points, each
    /// round in the other order (as the survey's rounds), each run a point of its own (`repeat=K`).
    pub fn set_repeat(&mut self, n: u32) {
        self.repeat = n;
    }
}

/// The profile group of the kernel copying between user and kernel memory (the storage paper's Figure 4
/// is about it); `ProfileFigures::groups` names it so.
pub const COPY_GROUP: &str = "copy to/from user";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Step {
    pub label: String,
    #[serde(default)]
    pub spec: toml::Table,
    /// "KEY=V1,V2,..." lists, as `iolab sweep --vary`.
    #[serde(default)]
    pub vary: Vec<String>,
    /// Replaces `vary` under `--quick`.
    #[serde(default)]
    pub quick_vary: Option<Vec<String>>,
    /// Runs of each point (records with a `run` key).
    #[serde(default)]
    pub runs: Option<u32>,
    #[serde(default)]
    pub quick_runs: Option<u32>,
    /// "lines" or "clock"; absent: an iolab run.
    #[serde(default)]
    pub workload: Option<String>,
    /// "offload", "zram", "sink", "guest" (a guest of `iolab vm` can be built here) or "poll-queues" (the
    /// step's target is a block device with poll queues).
    #[serde(default)]
    pub needs: Option<String>,
    /// The step's own table, when it is not the suite's (`table = "syscalls"`: Table 3 beside Tables 1-2).
    #[serde(default)]
    pub table: Option<TableKind>,
}

/// Parses suite text; `origin` names it in errors (with the line and column of a TOML error).
pub fn parse(text: &str, origin: &str) -> Result<SuiteFile> {
    let mut s = toml::from_str::<SuiteFile>(text).map_err(|e| {
        Error::usage(
            "suite",
            format!(
                "{origin}: {}",
                iolab_engine::spec::options::toml_error(text, &e)
            ),
        )
    })?;
    s.origin = origin.to_string();
    crate::answers::check(&s).map_err(|m| Error::usage("suite", format!("{origin}: {m}")))?;
    Ok(s)
}

/// A built-in suite by name, or a suite file by path (anything ending in .toml).
pub fn load(name: &str) -> Result<SuiteFile> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) {
        return parse(text, &format!("suites/{name}.toml"));
    }
    if name.ends_with(".toml") {
        let text = std::fs::read_to_string(name)
            .map_err(|e| Error::usage("suite", format!("cannot read {name}: {e}")))?;
        return parse(&text, name);
    }
    Err(Error::usage(
        "suite",
        format!(
            "no suite '{name}'; built in: {} (or give a path to a suite .toml file; see iolab suite --list)",
            BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
        ),
    ))
}

/// Where a suite's files go: fresh directories iolab makes and removes, and a zram device when one can be
/// made.
pub struct Places {
    disk: tempfile::TempDir,
    tmpfs: tempfile::TempDir,
    _guards: Vec<iolab_engine::cleanup::Created>,
    zram: std::result::Result<Zram, String>,
}

impl Places {
    /// New directories under `disk_parent` and `tmpfs_parent`; a zram device only if `want_zram`.
    pub fn make(disk_parent: &Path, tmpfs_parent: &Path, want_zram: bool) -> Result<Places> {
        let mk = |parent: &Path, flag: &str| {
            tempfile::Builder::new()
                .prefix("iolab-suite-")
                .tempdir_in(parent)
                .map_err(|e| {
                    Error::usage(
                        flag,
                        format!("cannot create a directory in {}: {e}", parent.display()),
                    )
                })
        };
        let disk = mk(disk_parent, "--disk-dir")?;
        let tmpfs = mk(tmpfs_parent, "--tmpfs-dir")?;
        // Removed on Ctrl-C too; TempDir removes them on a normal exit.
        let guards = vec![
            iolab_engine::cleanup::Created::register(disk.path(), false),
            iolab_engine::cleanup::Created::register(tmpfs.path(), false),
        ];
        let zram = if want_zram {
            Zram::make(2 << 30)
        } else {
            Err("not needed".into())
        };
        Ok(Places {
            disk,
            tmpfs,
            _guards: guards,
            zram,
        })
    }

    pub fn disk(&self) -> &Path {
        self.disk.path()
    }

    pub fn tmpfs(&self) -> &Path {
        self.tmpfs.path()
    }

    /// "{disk}" and "{tmpfs}" and "{zram}" in a target, replaced.
    fn place(&self, s: &str) -> String {
        let mut s = s
            .replace("{disk}", &self.disk.path().display().to_string())
            .replace("{tmpfs}", &self.tmpfs.path().display().to_string());
        if let Ok(z) = &self.zram {
            s = s.replace("{zram}", &z.dev.display().to_string());
        }
        s
    }

    /// One line per place with its filesystem type, so a reader knows what "disk" was.
    pub fn describe(&self) -> String {
        let fs = |p: &Path| iolab_sys::fs_type_name(p).unwrap_or("unknown filesystem");
        let mut o = format!(
            "disk dir {} ({}), tmpfs dir {} ({})",
            self.disk().display(),
            fs(self.disk()),
            self.tmpfs().display(),
            fs(self.tmpfs())
        );
        if let Ok(z) = &self.zram {
            o.push_str(&format!(", zram {}", z.dev.display()));
        }
        o
    }
}

/// A zram block device iolab made (hot_add), reset and removed (hot_remove) when dropped, on Ctrl-C
/// (`cleanup::register_zram`) and, after a kill, by `iolab clean` (journaled).
struct Zram {
    id: u32,
    dev: PathBuf,
    journal: Option<u64>,
}

impl Zram {
    fn make(size: u64) -> std::result::Result<Zram, String> {
        let ctl = Path::new("/sys/class/zram-control");
        if !ctl.is_dir() {
            return Err(
                "no zram device can be made: /sys/class/zram-control is missing (the zram module is not \
                 loaded; this kernel has it neither built in nor loaded)"
                    .into(),
            );
        }
        let id: u32 = std::fs::read_to_string(ctl.join("hot_add"))
            .map_err(|e| format!("zram hot_add: {e}"))?
            .trim()
            .parse()
            .map_err(|e| format!("zram hot_add gave no device number: {e}"))?;
        iolab_engine::cleanup::register_zram(id);
        let mut z = Zram {
            id,
            dev: PathBuf::from(format!("/dev/zram{id}")),
            journal: None,
        };
        std::fs::write(format!("/sys/block/zram{id}/disksize"), size.to_string())
            .map_err(|e| format!("zram{id} disksize: {e}"))?;
        z.journal = iolab_engine::leftovers::record_zram(id, size);
        if !z.dev.exists() {
            return Err(format!("{} did not appear", z.dev.display()));
        }
        Ok(z)
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        // Unregistered first: a signal from now on must not reset a number that hot_remove may have
        // handed to another device (the journal still covers a kill in between).
        iolab_engine::cleanup::unregister_zram();
        let reset = std::fs::write(format!("/sys/block/zram{}/reset", self.id), "1");
        let removed = reset.as_ref().map_err(|e| e.to_string()).and_then(|()| {
            std::fs::write("/sys/class/zram-control/hot_remove", self.id.to_string())
                .map_err(|e| e.to_string())
        });
        match (&reset, removed, self.journal) {
            (Ok(()), Ok(()), Some(j)) => iolab_engine::leftovers::forget(j),
            (Err(e), _, _) => eprintln!(
                "iolab: warning: {} could not be reset ({e}); `iolab clean` tries again",
                self.dev.display()
            ),
            (Ok(()), Err(e), _) => eprintln!(
                "iolab: warning: {} was reset (its memory freed) but not removed (hot_remove: {e})",
                self.dev.display()
            ),
            _ => {}
        }
    }
}

/// Whether any step needs a zram device.
pub fn wants_zram(s: &SuiteFile) -> bool {
    s.steps.iter().any(|st| st.needs.as_deref() == Some("zram"))
}

fn merge(into: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        into.insert(k.clone(), v.clone());
    }
}

fn toml_of(v: &str) -> toml::Value {
    match v {
        "true" => toml::Value::Boolean(true),
        "false" => toml::Value::Boolean(false),
        _ => toml::Value::String(v.to_string()),
    }
}

fn str_val(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        o => o.to_string(),
    }
}

fn str_key(t: &toml::Table, k: &str) -> Option<String> {
    t.get(k).map(str_val)
}

/// Why a step's `needs` is not met here, if it is not (no `places`: only whether `needs` is known).
/// `target`: the step's target, placed.
fn unmet(
    needs: Option<&str>,
    places: Option<&Places>,
    target: Option<&str>,
) -> Result<Option<String>> {
    Ok(match needs {
        None => None,
        // A method as a need (`needs = "offload"`): met when the build has it; a kernel that refuses part
        // of it fails the run itself, which the record says.
        Some(name) if MethodKind::parse(name).is_some() => None,
        Some("zram") => places
            .and_then(|p| p.zram.as_ref().err())
            .map(|why| format!("on this machine: {why}")),
        // iolab's sink driver, /dev/iolab_sink (loaded here, or in `iolab vm`'s guest).
        Some("sink") => places
            .and_then(|_| iolab_engine::sink_device::absent_reason())
            .map(|why| format!("on this machine: {why}")),
        // A guest of `iolab vm` (the offload suite's partition rows): where this machine cannot build one.
        Some("guest") => places
            .and_then(|_| crate::vm::unsupported())
            .map(|why| format!("on this machine: {}: {why}", crate::vm::CANNOT_BUILD)),
        Some("poll-queues") => places.and_then(|_| {
            iolab_engine::measure::iopoll::poll_queues_unmet(Path::new(target.unwrap_or("")))
                .map(|why| format!("on this machine: {why}"))
        }),
        Some(other) => {
            return Err(Error::usage(
                "suite",
                format!(
                    "needs = '{other}' is not known; accepted: zram, sink, poll-queues, guest or a method ({})",
                    MethodKind::names()
                ),
            ))
        }
    })
}

/// Every point of every step as a job, in file order (a step's first `vary` changes slowest).
pub fn jobs(s: &SuiteFile, places: &Places, quick: bool) -> Result<Vec<Job>> {
    build(s, Some(places), quick)
}

/// Every point of every step, checked as [`jobs`] checks them (each step's vary lists: a key varied
/// twice, a value listed twice, a value no point can use), before any directory or device is made.
pub fn check(s: &SuiteFile, quick: bool) -> Result<Vec<Vec<(String, String)>>> {
    Ok(build(s, None, quick)?
        .into_iter()
        .map(|j| j.point)
        .collect())
}

/// [`jobs`]; without `places`, targets keep their `{disk}`, `{tmpfs}` and `{zram}` and every `needs` is
/// taken as met.
fn build(s: &SuiteFile, places: Option<&Places>, quick: bool) -> Result<Vec<Job>> {
    if s.repeat <= 1 {
        return build_round(s, places, quick, None);
    }
    // Round K runs every point once, forwards in odd rounds and backwards in even ones, so a slow drift
    // of the machine touches every point alike.
    let mut out = Vec::new();
    for k in 1..=s.repeat {
        let mut round = build_round(s, places, quick, Some(k))?;
        if k % 2 == 0 {
            round.reverse();
        }
        out.extend(round);
    }
    Ok(out)
}

/// Every point of every step once; `round` (with `--repeat`) is marked in each point as `repeat=K`.
fn build_round(
    s: &SuiteFile,
    places: Option<&Places>,
    quick: bool,
    round: Option<u32>,
) -> Result<Vec<Job>> {
    let bad = |step: &Step, m: String| {
        Error::usage("suite", format!("{}, step '{}': {m}", s.origin, step.label))
    };
    let mut out = Vec::new();
    for step in &s.steps {
        let vary_src = match (&step.quick_vary, quick) {
            (Some(q), true) => q,
            _ => &step.vary,
        };
        let vary: Vec<series::Vary> = vary_src
            .iter()
            .map(|v| series::parse_vary_any(v))
            .collect::<Result<Vec<_>>>()
            .and_then(|v| series_check::check_lists(&v, "vary").map(|()| v))
            .map_err(|e| bad(step, e.to_string()))?;
        let first = out.len();
        let runs = match (step.quick_runs, quick) {
            (Some(q), true) => q,
            _ => step.runs.unwrap_or(1),
        }
        .max(1);
        let step_target = step
            .spec
            .get("target")
            .or(s.defaults.get("target"))
            .map(str_val);
        let step_target = match (step_target, places) {
            (Some(t), Some(pl)) => Some(pl.place(&t)),
            (t, _) => t,
        };
        let why_not = unmet(step.needs.as_deref(), places, step_target.as_deref())
            .map_err(|e| bad(step, e.to_string()))?;
        for p in series::points(&vary) {
            for run in 1..=runs {
                let mut point = vec![("step".to_string(), step.label.clone())];
                // A quick point is not the same point: `--resume` of a full run never takes it as done.
                if quick {
                    point.push(("quick".to_string(), "true".to_string()));
                }
                if let Some(k) = round {
                    point.push(("repeat".to_string(), k.to_string()));
                }
                if runs > 1 {
                    point.push(("run".to_string(), run.to_string()));
                }
                point.extend(p.iter().cloned());
                point.extend(s.overrides.iter().map(|(k, v)| (k.clone(), str_val(v))));
                let mut t = s.defaults.clone();
                merge(&mut t, &step.spec);
                for (k, v) in &p {
                    t.insert(k.clone(), toml_of(v));
                }
                if quick {
                    merge(&mut t, &s.quick);
                }
                merge(&mut t, &s.overrides);
                if let (Some(toml::Value::String(target)), Some(pl)) =
                    (t.get("target").cloned(), places)
                {
                    t.insert("target".into(), toml::Value::String(pl.place(&target)));
                }
                let work = if let Some(why) = &why_not {
                    Work::Unavailable(why.clone())
                } else {
                    match step.workload.as_deref() {
                        None => {
                            let raw = RawSpec::from_toml_table(t.clone())
                                .map_err(|m| bad(step, m.to_string()))?;
                            memory_allows(raw.resolve())
                        }
                        Some("lines") => {
                            // Each run and round its own file name.
                            let nth = (round.unwrap_or(1) - 1) * runs + run;
                            lines_work(&t, nth).map_err(|m| bad(step, m))?
                        }
                        Some("clock") => Work::Custom(Box::new(|clk| {
                            Ok(serde_json::json!({
                                "workload": "clock",
                                "spec": { "method": "clock" },
                                "clock": clk,
                            }))
                        })),
                        Some(other) => {
                            return Err(bad(
                                step,
                                format!("workload '{other}' is not known; accepted: lines, clock"),
                            ))
                        }
                    }
                };
                out.push(Job { point, work });
            }
        }
        let runs: Vec<_> = out[first..]
            .iter()
            .filter_map(|j| match &j.work {
                Work::Run(spec) => Some((j.point.as_slice(), spec.as_ref())),
                _ => None,
            })
            .collect();
        series_check::check_values(&vary, &runs).map_err(|e| bad(step, e.to_string()))?;
    }
    Ok(out)
}

/// A point whose buffers this machine's memory cannot hold (the storage paper's 512 and 768 MiB blocks
/// on a small machine) is not run, with the reason; any other spec runs (or is recorded with its error).
fn memory_allows(spec: Result<iolab_engine::spec::Spec>) -> Work {
    let spec = match spec {
        // Beyond MemTotal: refused by the spec's own check, which names the most --bs can be here.
        Err(Error::Usage { flag, msg }) if flag == "--bs" && msg.contains("MemTotal") => {
            return Work::Unavailable(format!("on this machine: {msg}"))
        }
        other => other,
    };
    if let (Ok(sp), Some(avail)) = (&spec, iolab_engine::mem::meminfo("MemAvailable")) {
        let slots = if sp.method.info().synchronous() {
            1
        } else {
            sp.qd as u64
        };
        let buffers = sp.bs * slots * sp.threads as u64;
        // The buffers, and as much again for the page cache the data passes through.
        if buffers.saturating_mul(2) > avail {
            return Work::Unavailable(format!(
                "on this machine: {} blocks need {} of buffers and as much again for the page cache the data \
                 passes through, more than the {} available (MemAvailable); a machine with more memory \
                 runs this point",
                iolab_engine::units::fmt_size(sp.bs),
                iolab_engine::units::fmt_size(buffers),
                iolab_engine::units::fmt_size(avail)
            ));
        }
    }
    Work::Run(Box::new(spec))
}

fn lines_work(t: &toml::Table, run: u32) -> std::result::Result<Work, String> {
    let method = str_key(t, "method").ok_or("a lines step needs a method")?;
    let kernel = method == crate::driver::kwrite::KERNEL_MODULE;
    if !kernel && !crate::lines::METHODS.contains(&method.as_str()) {
        return Err(format!(
            "'{method}' is not a lines method; accepted: {}, {}",
            crate::lines::METHODS.join(", "),
            crate::driver::kwrite::KERNEL_MODULE
        ));
    }
    let n = iolab_engine::units::parse_count(
        &str_key(t, "lines").ok_or("a lines step needs lines = N")?,
    )?;
    let target = PathBuf::from(str_key(t, "target").ok_or("a lines step needs a target")?);
    // Each run its own file name, so nothing of an earlier run is ever in the way.
    let path = target.with_file_name(format!(
        "{}-{method}-{run}.{}",
        target
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "lines".into()),
        target
            .extension()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "txt".into())
    ));
    if kernel {
        // The sink driver writes the file from inside the kernel, where it is loaded (never faked).
        if let Some(why) = crate::driver::kwrite::unavailable() {
            return Ok(Work::Unavailable(format!("on this machine: {why}")));
        }
        return Ok(Work::Custom(Box::new(move |_| {
            let r = crate::driver::kwrite::run(n, &path)?;
            serde_json::to_value(&r).map_err(|e| Error::Runtime(format!("result JSON: {e}")))
        })));
    }
    Ok(Work::Custom(Box::new(move |clk| {
        let r = crate::lines::run(&method, n, &path, clk)?;
        serde_json::to_value(&r).map_err(|e| Error::Runtime(format!("result JSON: {e}")))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_suite_parses_and_expands() {
        let d = tempfile::tempdir().unwrap();
        let places = Places::make(d.path(), d.path(), false).unwrap();
        for (name, _) in BUILTIN {
            let s = load(name).unwrap();
            assert_eq!(&s.name, name);
            assert!(!s.reproduces.is_empty() && !s.about.is_empty());
            for quick in [false, true] {
                let jobs = jobs(&s, &places, quick).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(!jobs.is_empty(), "{name}");
                // The check made before any directory exists gives the same points.
                let points = check(&s, quick).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(points.iter().eq(jobs.iter().map(|j| &j.point)), "{name}");
                for j in &jobs {
                    if let Work::Run(r) = &j.work {
                        if let Err(e) = r.as_ref() {
                            panic!("{name} {:?}: {e}", j.point);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn quick_replaces_amounts_and_vary() {
        let d = tempfile::tempdir().unwrap();
        let places = Places::make(d.path(), d.path(), false).unwrap();
        let s = load("blocksize").unwrap();
        let full = jobs(&s, &places, false).unwrap();
        let quick = jobs(&s, &places, true).unwrap();
        assert!(quick.len() < full.len());
        for j in &quick {
            if let Work::Run(r) = &j.work {
                let Ok(spec) = r.as_ref() else { continue };
                assert!(spec.bs <= 1 << 20, "{:?}", j.point);
                assert!(spec.target.starts_with(d.path()), "{:?}", spec.target);
            }
        }
    }

    #[test]
    fn a_key_set_on_every_point_wins_and_marks_the_point() {
        let d = tempfile::tempdir().unwrap();
        let places = Places::make(d.path(), d.path(), false).unwrap();
        let mut s = load("blocksize").unwrap();
        s.set_on_every_point("profile", "separate");
        for quick in [false, true] {
            let js = jobs(&s, &places, quick).unwrap();
            let runs: Vec<_> = js
                .iter()
                .filter_map(|j| match &j.work {
                    Work::Run(r) => Some((j, r.as_ref().as_ref().unwrap())),
                    _ => None,
                })
                .collect();
            assert!(!runs.is_empty());
            for (j, spec) in runs {
                assert_eq!(spec.profile, iolab_engine::spec::ProfileMode::Separate);
                assert!(j.point.contains(&("profile".into(), "separate".into())));
            }
        }
        // The writes suite profiles its io_uring and mmap steps itself, and `none` turns that off.
        let mut s = load("writes").unwrap();
        let profiled = |s: &SuiteFile| {
            jobs(s, &places, true)
                .unwrap()
                .iter()
                .filter_map(|j| match &j.work {
                    Work::Run(r) => r.as_ref().as_ref().ok().map(|r| r.profile),
                    _ => None,
                })
                .filter(|p| *p != iolab_engine::spec::ProfileMode::None)
                .count()
        };
        assert_eq!(profiled(&s), 10);
        s.set_on_every_point("profile", "none");
        assert_eq!(profiled(&s), 0);
    }

    #[test]
    fn a_missing_need_is_reported_not_faked() {
        let d = tempfile::tempdir().unwrap();
        // No zram made: the blocksize suite's zram steps say so instead of running elsewhere.
        let places = Places::make(d.path(), d.path(), false).unwrap();
        let s = load("blocksize").unwrap();
        let js = jobs(&s, &places, true).unwrap();
        assert!(js
            .iter()
            .any(|j| matches!(&j.work, Work::Unavailable(w) if w.contains("on this machine"))));
        // The offload method is built in: every offload step runs, but for the guest partition's, which
        // say why where no guest can be built here (off x86_64, under qemu-user, without apt).
        let s = load("offload").unwrap();
        let js = jobs(&s, &places, true).unwrap();
        let guest_unmet = crate::vm::unsupported().is_some();
        for j in &js {
            if let Work::Unavailable(w) = &j.work {
                assert!(
                    guest_unmet && w.contains(crate::vm::CANNOT_BUILD),
                    "an offload step is unavailable: {w}"
                );
            }
        }
    }

    #[test]
    fn repeat_runs_every_point_in_rounds_of_alternating_order() {
        let d = tempfile::tempdir().unwrap();
        let places = Places::make(d.path(), d.path(), false).unwrap();
        let mut s = load("nowait").unwrap();
        let once: Vec<_> = jobs(&s, &places, true)
            .unwrap()
            .into_iter()
            .map(|j| j.point)
            .collect();
        s.set_repeat(3);
        let js = jobs(&s, &places, true).unwrap();
        assert_eq!(js.len(), 3 * once.len());
        let without = |p: &[(String, String)]| -> Vec<(String, String)> {
            p.iter().filter(|(k, _)| k != "repeat").cloned().collect()
        };
        for (k, round) in js.chunks(once.len()).enumerate() {
            let mut points: Vec<_> = round.iter().map(|j| without(&j.point)).collect();
            assert!(round
                .iter()
                .all(|j| j.point.contains(&("repeat".into(), (k + 1).to_string()))));
            // The second round runs backwards.
            if k == 1 {
                points.reverse();
            }
            assert_eq!(points, once, "round {}", k + 1);
        }
        // The check made before anything exists gives the same points.
        let checked = check(&s, true).unwrap();
        assert!(checked.iter().eq(js.iter().map(|j| &j.point)));
    }

    #[test]
    fn a_point_this_machines_memory_cannot_hold_is_said_not_run() {
        let total = iolab_engine::mem::meminfo("MemTotal").unwrap();
        let qd = total / (1 << 30) + 2;
        let huge = RawSpec::new()
            .with("method", "io_uring")
            .with("bs", "1g")
            .with("qd", qd)
            .with("ops", 10u64)
            .resolve();
        match memory_allows(huge) {
            Work::Unavailable(why) => {
                assert!(
                    why.starts_with("on this machine:") && why.contains("MemTotal"),
                    "{why}"
                )
            }
            _ => panic!("a run beyond MemTotal ran"),
        }
        let small = RawSpec::new().with("bs", "4k").resolve();
        assert!(matches!(memory_allows(small), Work::Run(r) if r.is_ok()));
        // The full blocksize suite has the paper's largest blocks, run or said not run.
        let d = tempfile::tempdir().unwrap();
        let places = Places::make(d.path(), d.path(), false).unwrap();
        let js = jobs(&load("blocksize").unwrap(), &places, false).unwrap();
        for bs in ["512m", "768m"] {
            assert!(
                js.iter()
                    .any(|j| j.point.contains(&("bs".into(), bs.into()))),
                "{bs}"
            );
        }
    }

    #[test]
    fn unknown_suite_and_bad_keys_are_usage_errors() {
        let e = load("nope").unwrap_err().to_string();
        assert!(e.starts_with("suite:") && e.contains("writes"), "{e}");
        let e = parse(
            "name='x'\nabout='a'\nreproduces='r'\ntable='cpu'\n[[step]]\nlabel='s'\nspec={bz='4k'}\n",
            "x.toml",
        )
        .map(|s| {
            let d = tempfile::tempdir().unwrap();
            let p = Places::make(d.path(), d.path(), false).unwrap();
            jobs(&s, &p, false).err().map(|e| e.to_string())
        })
        .unwrap()
        .unwrap();
        assert!(e.contains("bz"), "{e}");
    }
}
