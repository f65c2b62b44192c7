//! A suite's points as the jobs of `series::run_jobs`: each step's spec over the suite's defaults, its
//! `vary` lists (a key `qd+batch` sets both keys to each value together: [`untie`]), `--quick` and
//! `--repeat`, and what a step needs that this machine may not have.

use super::file::{toml_of, Step, SuiteFile};
use super::places::Places;
use crate::series::check as series_check;
use crate::series::{self, Job, Work};
use iolab_engine::error::{Error, Result};
use iolab_engine::spec::{MethodKind, RawSpec};
use std::path::{Path, PathBuf};

fn merge(into: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        into.insert(k.clone(), v.clone());
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
            .and_then(|p| p.zram_missing())
            .map(|why| format!("on this machine: {why}")),
        // iolab's sink driver, /dev/iolab_sink (loaded here, or in `iolab vm`'s guest).
        Some("sink") => places
            .and_then(|_| iolab_engine::sink_device::absent_reason())
            .map(|why| format!("on this machine: {why}")),
        // A guest of `iolab vm` (the offload suite's partition rows): where this machine cannot build one.
        Some("guest") => places
            .and_then(|_| iolab_guest::vm::unsupported())
            .map(|why| format!("on this machine: {}: {why}", iolab_guest::vm::CANNOT_BUILD)),
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
    check_total(s, quick)?;
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

/// Where a suite may write over a file or onto a device: only where iolab made the target for the run.
const OWN: &str = "a suite file may set it only for a point whose target iolab makes for the run \
                   ({disk}/..., {tmpfs}/..., {zram})";

/// A key of `options::FLAG_ONLY` a point's merged spec `t` sets for a target iolab does not make for the
/// run (new directories, or the zram device it makes), if any.
fn flag_only(t: &toml::Table) -> Option<&'static str> {
    let target = t.get("target").and_then(|v| v.as_str()).unwrap_or("");
    let own =
        (target == "{zram}" || target.starts_with("{disk}/") || target.starts_with("{tmpfs}/"))
            && !target.split('/').any(|c| c == "..");
    iolab_engine::spec::options::FLAG_ONLY
        .iter()
        .copied()
        .find(|k| !own && t.contains_key(*k))
}

/// The most points a suite runs, its steps and `--repeat` rounds together (the largest suite iolab ships
/// has 180 points, so 1,000 rounds of it fit): each point is resolved before the first runs.
pub const MAX_SUITE_POINTS: u64 = 200_000;

/// Refuses a suite of more than [`MAX_SUITE_POINTS`] points, counted from its lists before any is made.
fn check_total(s: &SuiteFile, quick: bool) -> Result<()> {
    let mut total = 0u64;
    for step in &s.steps {
        let (lists, runs) = (step.vary_lists(quick), step.runs_of_each(quick));
        // A list that does not parse is refused with its step when the step is built.
        let points = lists.iter().try_fold(u64::from(runs), |n, v| {
            let values = series::parse_vary_any(v).map_or(1, |v| v.values.len() as u64);
            n.checked_mul(values)
        });
        total = points
            .and_then(|p| total.checked_add(p))
            .unwrap_or(u64::MAX);
    }
    let total = total.saturating_mul(u64::from(s.repeat.max(1)));
    if total > MAX_SUITE_POINTS {
        return Err(Error::usage(
            "suite",
            format!(
                "{}: {} points (its steps{}) are more than the {} one suite runs: split it, or vary fewer values",
                s.origin,
                if total == u64::MAX { "more than 2^64".into() } else { iolab_engine::units::thousands_u64(total) },
                if s.repeat > 1 { format!(" x {} rounds", s.repeat) } else { String::new() },
                iolab_engine::units::thousands_u64(MAX_SUITE_POINTS)
            ),
        ));
    }
    Ok(())
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
        let vary: Vec<series::Vary> = step
            .vary_lists(quick)
            .iter()
            .map(|v| series::parse_vary_any(v))
            .collect::<Result<Vec<_>>>()
            .and_then(|v| series_check::check_lists(&v, "vary").map(|()| v))
            .and_then(|v| keys_once(&v).map(|()| v))
            .map_err(|e| bad(step, e.to_string()))?;
        let first = out.len();
        let runs = step.runs_of_each(quick);
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
        for p in series::points(&vary).into_iter().map(untie) {
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
                // Asked of the point as it runs (defaults, quick, vary and overrides merged): a file
                // may not grant what only the command line gives.
                if let Some(k) = flag_only(&t) {
                    return Err(bad(
                        step,
                        iolab_engine::spec::options::flag_only_why(k, OWN),
                    ));
                }
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
                                "host": iolab_engine::result::Host::current(),
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
        series_check::check_values(&untied(&vary), &runs).map_err(|e| bad(step, e.to_string()))?;
        let mut fixed = s.defaults.clone();
        merge(&mut fixed, &step.spec);
        if quick {
            merge(&mut fixed, &s.quick);
        }
        merge(&mut fixed, &s.overrides);
        if let Some(e) = fixed_refused(&runs, &fixed, &untied(&vary)) {
            return Err(bad(step, e));
        }
    }
    Ok(out)
}

/// What a step fixes (a key of its spec, its suite's defaults or overrides, not one it varies and not its
/// target, which is this machine's) and every point of it refuses alike: bad input, refused before
/// anything runs as `sweep` refuses a fixed flag, not points recorded as not run.
fn fixed_refused(
    runs: &[series_check::PointSpec],
    fixed: &toml::Table,
    vary: &[series::Vary],
) -> Option<String> {
    let (_, Err(Error::Usage { flag, msg })) = runs.first()? else {
        return None;
    };
    let key = flag.strip_prefix("--")?;
    let alike = runs
        .iter()
        .all(|(_, r)| matches!(r, Err(Error::Usage { flag: f, msg: m }) if f == flag && m == msg));
    (alike && key != "target" && fixed.contains_key(key) && !vary.iter().any(|v| v.key == key))
        .then(|| format!("{key} = {}: {flag}: {msg}", fixed[key]))
}

/// A `vary` list whose key joins spec keys with `+` (`qd+batch=1,8,16`) sets each of them to the same
/// value at each point, together rather than as a product: qd=1 batch=1, qd=8 batch=8, qd=16 batch=16 (the
/// course report's QD sweep ran at batch = QD). The point names each key.
fn untie(point: Vec<(String, String)>) -> Vec<(String, String)> {
    point
        .into_iter()
        .flat_map(|(k, v)| {
            k.split('+')
                .map(|k| (k.trim().to_string(), v.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The lists with each tied key (`qd+batch`) as lists of its own keys, for the checks that read a point's
/// keys.
fn untied(vary: &[series::Vary]) -> Vec<series::Vary> {
    vary.iter()
        .flat_map(|v| {
            v.key.split('+').map(|k| series::Vary {
                key: k.trim().to_string(),
                values: v.values.clone(),
            })
        })
        .collect()
}

/// No spec key set by two lists, tied ones included (`qd+batch` beside `qd`), and no empty key in a tie.
fn keys_once(vary: &[series::Vary]) -> Result<()> {
    let keys = untied(vary);
    if let Some(v) = vary
        .iter()
        .find(|v| v.key.split('+').any(|k| k.trim().is_empty()))
    {
        return Err(Error::usage(
            "vary",
            format!(
                "'{}' names an empty key: join spec keys with + (qd+batch=1,8)",
                v.key
            ),
        ));
    }
    for v in vary.iter().filter(|v| v.key.contains('+')) {
        let ks: Vec<&str> = v.key.split('+').map(str::trim).collect();
        if let Some(k) = ks.iter().enumerate().find(|(i, k)| ks[..*i].contains(k)) {
            return Err(Error::usage(
                "vary",
                format!("'{}' ties {} to itself: name each key once", v.key, k.1),
            ));
        }
    }
    for (i, k) in keys.iter().enumerate() {
        if keys[..i].iter().any(|o| o.key == k.key) {
            return Err(Error::usage(
                "vary",
                format!("{} is set by two vary lists: give it in one", k.key),
            ));
        }
    }
    Ok(())
}

/// A point whose buffers this machine's memory cannot hold (the storage paper's 512 and 768 MiB blocks
/// on a small machine) is not run, with the reason; any other spec runs (or is recorded with its error).
pub(super) fn memory_allows(spec: Result<iolab_engine::spec::Spec>) -> Work {
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
        // The buffers, and as much again for the page cache the data passes through; a file on tmpfs or a
        // zram device is memory itself, all of it.
        let cache = buffers.max(in_memory(sp).then_some(sp.file_size).flatten().unwrap_or(0));
        if buffers.saturating_add(cache) > avail {
            return Work::Unavailable(format!(
                "on this machine: {} blocks need {} of buffers and {} of memory for the data they pass \
                 through, more than the {} available (MemAvailable); a machine with more memory runs this \
                 point",
                iolab_engine::units::fmt_size(sp.bs),
                iolab_engine::units::fmt_size(buffers),
                iolab_engine::units::fmt_size(cache),
                iolab_engine::units::fmt_size(avail)
            ));
        }
    }
    Work::Run(Box::new(spec))
}

/// Whether the target's data lives in memory (a file on tmpfs, or a zram device).
fn in_memory(sp: &iolab_engine::spec::Spec) -> bool {
    let t = &sp.target;
    if t.to_string_lossy().starts_with("/dev/zram") {
        return true;
    }
    let dir = t.parent().filter(|d| !d.as_os_str().is_empty());
    iolab_sys::fs_type_name(dir.unwrap_or(Path::new("."))) == Ok("tmpfs")
}

fn lines_work(t: &toml::Table, run: u32) -> std::result::Result<Work, String> {
    let method = str_key(t, "method").ok_or("a lines step needs a method")?;
    let kernel = method == crate::kwrite::KERNEL_MODULE;
    if !kernel && !crate::lines::METHODS.contains(&method.as_str()) {
        return Err(format!(
            "'{method}' is not a lines method; accepted: {}, {}",
            crate::lines::METHODS.join(", "),
            crate::kwrite::KERNEL_MODULE
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
        if let Some(why) = crate::kwrite::unavailable() {
            return Ok(Work::Unavailable(format!("on this machine: {why}")));
        }
        return Ok(Work::Custom(Box::new(move |_| {
            let r = crate::kwrite::run(n, &path)?;
            serde_json::to_value(&r).map_err(|e| Error::Runtime(format!("result JSON: {e}")))
        })));
    }
    Ok(Work::Custom(Box::new(move |clk| {
        let r = crate::lines::run(&method, n, &path, clk)?;
        serde_json::to_value(&r).map_err(|e| Error::Runtime(format!("result JSON: {e}")))
    })))
}
