//! `iolab sweep` and `iolab suite`: many points, each run once and recorded as it finishes. Both go
//! through one flow (`iolab_lab::series_flow`): open the record file, print what runs, run the points
//! with a progress bar, then write the CSV and say where the records are.

use crate::output::{errln, out, outln, target_file};
use crate::progress::Progress;
use crate::run_args::RunArgs;
use clap::Args;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use iolab_engine::spec::{RawSpec, RunsOn, Spec};
use iolab_lab::series::check as series_check;
use iolab_lab::series::{self, Job};
use iolab_lab::series_flow::Flow;
use iolab_report::export::{Document, Outputs};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct SweepArgs {
    /// KEY=V1,V2,...: a spec key (a run flag without dashes: method, bs, qd, threads, direct, ring,
    /// target ...) and its values; repeat for more keys. Points run in a stable order, the first --vary
    /// changing slowest.
    #[arg(long, value_name = "KEY=V1,V2", required = true)]
    pub(crate) vary: Vec<String>,
    /// The record file: one JSON line per point, written and synced as each point finishes [default: a new
    /// iolab-results/sweep-<UTC time>.jsonl]. An existing file is refused unless --resume.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Continue the sweep recorded in --out: points already there are not run again (refused when it was
    /// recorded with other flags or --vary lists).
    #[arg(long, requires = "out")]
    pub(crate) resume: bool,
    /// Run the sweep on each of these kernels, one after the other, and set them side by side, as
    /// `suite --kernels` does: host, 6.1, 6.1-rt, 6.12, 6.12-rt or a linux-image package, e.g.
    /// host,6.1,6.12 (the guests under QEMU; targets are paths in each, the current directory shared).
    #[arg(long, value_name = "LIST", conflicts_with = "resume")]
    pub(crate) kernels: Option<String>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Args)]
pub(crate) struct SuiteArgs {
    /// A built-in suite (see --list) or a path to a suite .toml file.
    #[arg(required_unless_present = "list")]
    pub(crate) name: Option<String>,
    /// The suites with one line each, and the seed each reproduces.
    #[arg(long)]
    pub(crate) list: bool,
    /// Scaled down to under a minute (the suite's [quick] amounts): a smoke test, not a measurement.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Run every point N times, in N rounds over all the points (each round in the other order); the
    /// tables show each point's median run and the range of its middle runs, and the findings say when a
    /// difference is within that noise [default: 1].
    #[arg(long, value_name = "N")]
    pub(crate) repeat: Option<String>,
    /// The record file: one JSON line per point, synced as each finishes [default: a new
    /// iolab-results/suite-NAME-<UTC time>.jsonl]. An existing file is refused unless --resume.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Continue the suite recorded in --out: points already there are not run again (refused when it was
    /// recorded with other settings).
    #[arg(long, requires = "out")]
    pub(crate) resume: bool,
    /// Write one CSV row per point to FILE (columns in the README). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// Write the tables, findings and answers as Markdown to FILE. An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) md: Option<PathBuf>,
    /// Write every point's time series to FILE: a row per interval (see run's --log-interval), after
    /// `point.KEY` columns naming the point (and its repeat). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv_intervals: Option<PathBuf>,
    /// Where the "disk" files go (a new directory inside it, removed at the end).
    #[arg(long, value_name = "DIR", default_value = "/var/tmp")]
    pub(crate) disk_dir: PathBuf,
    /// Where the tmpfs files go (a new directory inside it, removed at the end).
    #[arg(long, value_name = "DIR", default_value = "/dev/shm")]
    pub(crate) tmpfs_dir: PathBuf,
    /// Profile every point, as run's --profile: `separate` (the flag alone) samples a second, untimed
    /// pass of each point, `inline` the timed pass, `none` turns off the profiles a suite asks for. The
    /// table is then followed by where the time went (the blocksize suite: the storage paper's Figure 4).
    #[arg(
        long,
        value_name = "PASS",
        num_args = 0..=1,
        default_missing_value = "separate",
        value_parser = ["none", "separate", "inline"]
    )]
    pub(crate) profile: Option<String>,
    /// Run the whole suite inside a guest kernel, as `iolab vm -- suite NAME ...` does (Debian's kernel
    /// under QEMU, the sink driver loaded, /dev/nvme0n1 with poll queues; TCG-emulated unless the CPU
    /// offers KVM): the records come back to the current directory. The guest is killed after 6 hours;
    /// `iolab vm --timeout SECS -- suite ...` sets another limit.
    #[arg(long)]
    pub(crate) vm: bool,
    /// Run the suite on each of these kernels, one after the other, and set them side by side: host
    /// (this machine's), or a kernel `iolab vm --kernel` boots (6.1, 6.1-rt, 6.12, 6.12-rt, or a
    /// linux-image package), e.g. host,6.1,6.12. The records go into one file, each point naming its
    /// kernel; the tables show the kernel's own counts per op side by side, an emulated kernel's times
    /// labelled as such; `iolab compare --across kernel FILE` sets every figure side by side.
    #[arg(long, value_name = "LIST", conflicts_with_all = ["vm", "resume"])]
    pub(crate) kernels: Option<String>,
}

/// How long `suite --vm` lets its guest run.
#[cfg(feature = "vm")]
const SUITE_VM_TIMEOUT_S: u64 = 6 * 3600;

// ---------------------------------------------------------------------------------------------------
// The flow both share.

/// Opens the record file of `jobs` with the settings `fixed`, warning when `--resume` dropped a cut-short
/// last line (`why` says more about it, or is empty) and saying what else it found.
fn open_flow(
    jobs: Vec<Job>,
    (out, resume): (Option<&Path>, bool),
    (stem, why): (&str, &str),
    fixed: &BTreeMap<String, String>,
    held: Option<series::HeldPaths>,
) -> Result<Flow, Error> {
    let flow = Flow::open(jobs, (out, resume), stem, fixed, held)?;
    for note in &flow.rec.notes {
        eprintln!("iolab: {}: {note}", flow.rec.path.display());
    }
    if flow.rec.dropped > 0 {
        let then = match flow.rec.dropped_summary {
            true => "it was the suite's summary, written again at the end",
            false => "that point runs again",
        };
        errln(&format!(
            "iolab: {}: the last line was cut short ({} bytes{why}); {then}",
            flow.rec.path.display(),
            flow.rec.dropped
        ));
    }
    Ok(flow)
}

/// Prints `lead` and where the records go, then runs the points not recorded yet, a line each and a
/// progress bar named `what`. Returns how many did not run, and the first write to stdout that failed
/// while they ran (they all run and are recorded even so; the caller ends with it). A stdout that
/// cannot take the first line is an error before any point runs.
fn run_flow(flow: &mut Flow, what: &str, lead: &str) -> Result<(usize, Option<Error>), Error> {
    iolab_engine::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    let skipped = flow.skipped();
    if let Some(e) = iolab_engine::result::Host::current().emulated_line() {
        outln(&format!("emulated: {e}"))?;
    }
    outln(&format!(
        "{lead}records in {}{}",
        flow.rec.path.display(),
        if skipped > 0 {
            format!("; {skipped} already recorded, not run again")
        } else {
            String::new()
        }
    ))?;
    let mut progress = Progress::new(what, flow.points.len() - skipped);
    let board = progress.board();
    let failed = flow.run(&clk, board.as_ref(), &mut |ev| progress.event(&ev))?;
    progress.finish();
    Ok((failed, progress.take_failure()))
}

// ---------------------------------------------------------------------------------------------------
// Sweep.

/// A sweep's --vary lists, its fixed flags (the `--spec` file, then the flags) and every point.
pub(crate) struct SweepPoints {
    vary: Vec<series::Vary>,
    base: RawSpec,
    points: Vec<Vec<(String, String)>>,
    /// Each point's spec, or why it does not apply.
    resolved: Vec<Result<Spec, Error>>,
}

/// Every point of a sweep resolved for a run `at` this machine or another (`iolab vm` and `iolab fleet`
/// check the sweep the guest or each host will make), before anything runs. A value no point can use is
/// bad input (a typo), and so are the flags a sweep refuses; a point whose combination does not apply
/// (--qd with psync) is recorded as not run, with the reason.
pub(crate) fn sweep_points(a: &SweepArgs, at: RunsOn) -> Result<SweepPoints, Error> {
    let vary: Vec<series::Vary> = a
        .vary
        .iter()
        .map(|v| series::parse_vary(v))
        .collect::<Result<_, _>>()?;
    series_check::check_lists(&vary, "--vary")?;
    if let Some(r) = &a.run.repeat {
        return Err(Error::usage(
            "--repeat",
            format!("'{r}' is for `run`; a sweep runs each point once (add a --vary seed=1,2,3 for repeats)"),
        ));
    }
    let base = match &a.run.spec {
        Some(p) => RawSpec::from_toml_file(p)?,
        None => RawSpec::default(),
    }
    .merge(a.run.raw());
    let points = series::points(&vary);
    let mut resolved = Vec::with_capacity(points.len());
    for p in &points {
        resolved.push(base.clone().merge(series::point_raw(p)?).resolve_on(at));
    }
    check_values(&vary, &points, &resolved)?;
    if let Some(j) = &a.run.json {
        return Err(Error::usage(
            "--json",
            format!(
                "{}: a sweep writes its results to --out (one JSON line per point)",
                j.display()
            ),
        ));
    }
    Ok(SweepPoints {
        vary,
        base,
        points,
        resolved,
    })
}

pub(crate) fn cmd_sweep(a: &SweepArgs) -> Result<i32, Error> {
    if let Some(list) = &a.kernels {
        return sweep_on_kernels(a, list);
    }
    let SweepPoints {
        vary,
        base,
        points,
        resolved,
    } = sweep_points(a, RunsOn::Here)?;
    // The record file, the CSVs, the Markdown and the points' targets: each its own file.
    let mut files: Vec<_> = resolved.iter().flatten().filter_map(target_file).collect();
    files.push(("--out", a.out.as_deref()));
    let outputs = a.run.outputs(&files)?;
    let jobs = points
        .iter()
        .cloned()
        .zip(resolved)
        .map(|(point, spec)| Job {
            point,
            work: series::Work::Run(Box::new(spec)),
        })
        .collect();
    // Of each point only what the table, the CSVs and the exit status read is held.
    let held = iolab_report::series_view::sweep_held(a.run.csv_intervals.is_some());
    let mut flow = open_flow(
        jobs,
        (a.out.as_deref(), a.resume),
        ("sweep", ", a point interrupted while being written"),
        &series::fixed_spec(&base, &vary),
        Some(held),
    )?;
    let n = points.len();
    let lead = format!(
        "iolab sweep: {n} points ({}), ",
        vary.iter()
            .map(|v| format!("{} x{}", v.key, v.values.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (failed, lost) = run_flow(&mut flow, "sweep", &lead)?;
    let keys: Vec<String> = vary.iter().map(|v| v.key.clone()).collect();
    // Every point, aligned now that all are known (the lines above came as each point finished).
    let records = flow.records();
    let lead = format!("{lead}in order:");
    let doc = Document::Sweep {
        lead: &lead,
        keys: &keys,
        records: &records,
    };
    write_all(&outputs, &doc, lost)?;
    outln(&format!(
        "result: {} ({n} points, {failed} without a result this time)",
        flow.rec.path.display()
    ))?;
    Ok(exit_of("sweep", &records))
}

/// `sweep --kernels LIST`: the sweep checked as each kernel's side would check it (this machine's where
/// `host` is asked, else as a guest's), then run on each (`cmd_kernels`).
fn sweep_on_kernels(a: &SweepArgs, list: &str) -> Result<i32, Error> {
    #[cfg(feature = "vm")]
    {
        let asked = crate::cmd_kernels::parse(list)?;
        let at = match asked.iter().any(|k| k == "host") {
            true => RunsOn::Here,
            false => RunsOn::Elsewhere,
        };
        let SweepPoints {
            vary, base, points, ..
        } = sweep_points(a, at)?;
        let fixed = series::fixed_spec(&base, &vary);
        Flow::check(&points, a.out.as_deref(), false, &fixed)?;
        let mut keys = vec!["kernel".to_string()];
        keys.extend(vary.iter().map(|v| v.key.clone()));
        let plan = crate::cmd_kernels::Plan {
            what: "sweep".into(),
            args: crate::cmd_kernels::sweep_args(std::env::args_os().skip(1)),
            stem: "sweep-kernels".into(),
            fixed,
            keys,
            out: a.out.as_deref(),
            md: a.run.md.as_deref(),
            csv: a.run.csv.as_deref(),
            csv_intervals: a.run.csv_intervals.as_deref(),
        };
        crate::cmd_kernels::run_plan(&plan, "iolab sweep", &asked)
    }
    #[cfg(not(feature = "vm"))]
    let _ = a;
    #[cfg(not(feature = "vm"))]
    Err(Error::usage(
        "--kernels",
        format!(
            "{list}: this iolab is built without `iolab vm`, as the board binaries are: run the sweep \
             on several kernels from an x86_64 host's iolab"
        ),
    ))
}

/// 1 where records were made this time and every one is a point that did not run (each refused: the
/// target immutable, a loop device's backing file ...; or failed: no space), said with the first reason;
/// else 0. A point this machine cannot run (not available) is not counted as refused.
fn nothing_ran(what: &str, records: &[&serde_json::Value]) -> i32 {
    let errors: Vec<&str> = records
        .iter()
        .map(|r| r.get("error").and_then(|e| e.as_str()))
        .collect::<Option<_>>()
        .unwrap_or_default();
    match errors.first() {
        Some(first) if !errors.iter().any(|e| e.starts_with("not available")) => {
            let how = match records.iter().any(|r| iolab_lab::suite::point_failed(r)) {
                true => "each failed or was refused",
                false => "each was refused",
            };
            errln(&format!(
                "iolab {what}: no point ran to its end ({how}); the first: {first}"
            ));
            1
        }
        _ => 0,
    }
}

/// A --vary value no point can use is bad input (`series_check::check_values`), and so is a fixed flag
/// that fails every point alike.
fn check_values(
    vary: &[series::Vary],
    points: &[Vec<(String, String)>],
    resolved: &[Result<Spec, Error>],
) -> Result<(), Error> {
    let pairs: Vec<_> = points.iter().map(Vec::as_slice).zip(resolved).collect();
    series_check::check_values(vary, &pairs)?;
    // A fixed flag that fails every point alike (`--ops -1`) is bad input too, not a sweep of points
    // that do not apply.
    let fixed = |e: &Error| {
        let t = e.to_string();
        t.starts_with("--") && !vary.iter().any(|v| t.starts_with(&format!("--{}:", v.key)))
    };
    if let Some(Err(first)) = resolved.first() {
        let same = resolved
            .iter()
            .all(|r| matches!(r, Err(e) if e.to_string() == first.to_string()));
        if same && fixed(first) {
            return Err(match first {
                Error::Usage { flag, msg } => Error::usage(flag.clone(), msg.clone()),
                e => Error::usage("--vary", e.to_string()),
            });
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------
// Suite.

pub(crate) fn cmd_suite(a: &SuiteArgs) -> Result<i32, Error> {
    if a.list {
        return list_suites();
    }
    let (suite, repeat) = load_suite(a)?;
    for (flag, d) in [("--disk-dir", &a.disk_dir), ("--tmpfs-dir", &a.tmpfs_dir)] {
        if !d.is_dir() {
            return Err(Error::usage(
                flag,
                format!("{} is not a directory", d.display()),
            ));
        }
    }
    let outputs = Outputs::from_flags(
        None,
        a.md.as_deref(),
        a.csv.as_deref(),
        a.csv_intervals.as_deref(),
        &[("--out", a.out.as_deref())],
    )?;
    // --quick and --profile are keys of every point already.
    let fixed = BTreeMap::from([
        ("suite".to_string(), suite.name.clone()),
        ("disk_dir".to_string(), a.disk_dir.display().to_string()),
        ("tmpfs_dir".to_string(), a.tmpfs_dir.display().to_string()),
    ]);
    // What can be refused is refused before the suite makes its directories (and a zram device).
    let points = iolab_lab::suite::check(&suite, a.quick)?;
    Flow::check(&points, a.out.as_deref(), a.resume, &fixed)?;
    if let Some(list) = &a.kernels {
        #[cfg(feature = "vm")]
        {
            let asked = crate::cmd_kernels::parse(list)?;
            check_places_elsewhere(a)?;
            crate::cmd_kernels::check_guest_places(
                &asked,
                &[("--disk-dir", &a.disk_dir), ("--tmpfs-dir", &a.tmpfs_dir)],
                a.name.as_deref().map(Path::new),
            )?;
            let asked_for = crate::cmd_kernels::SuiteArgs {
                name: a.name.as_deref().unwrap_or_default(),
                quick: a.quick,
                repeat: a.repeat.as_deref(),
                profile: a.profile.as_deref(),
                disk_dir: &a.disk_dir,
                tmpfs_dir: &a.tmpfs_dir,
                out: a.out.as_deref(),
                md: a.md.as_deref(),
                csv: a.csv.as_deref(),
                csv_intervals: a.csv_intervals.as_deref(),
            };
            return crate::cmd_kernels::cmd(&asked_for, &suite, &asked);
        }
        #[cfg(not(feature = "vm"))]
        return Err(Error::usage(
            "--kernels",
            format!(
                "{list}: this iolab is built without `iolab vm`, as the board binaries are: run the suite \
                 on several kernels from an x86_64 host's iolab"
            ),
        ));
    }
    if a.vm {
        // Checked here first (the current directory is the guest's too); then the same command in the
        // guest: this one's arguments without --vm.
        #[cfg(feature = "vm")]
        {
            let args: Vec<std::ffi::OsString> = std::env::args_os()
                .skip(1)
                .filter(|w| w.as_os_str() != "--vm")
                .collect();
            check_places_elsewhere(a)?;
            return crate::vm_guest::in_guest(args, SUITE_VM_TIMEOUT_S);
        }
        #[cfg(not(feature = "vm"))]
        return Err(Error::usage(
            "--vm",
            "this iolab is built without `iolab vm`, as the board binaries are: run the suite in a \
             guest from an x86_64 host's iolab",
        ));
    }
    iolab_engine::cleanup::install_signal_handler();
    let places = iolab_lab::suite::Places::make(
        &a.disk_dir,
        &a.tmpfs_dir,
        iolab_lab::suite::wants_zram(&suite),
    )?;
    let jobs = iolab_lab::suite::jobs(&suite, &places, a.quick)?;
    let quick = if a.quick { "-quick" } else { "" };
    let stem = format!("suite-{}{quick}", suite.name);
    // A suite's answers read whole records.
    let mut flow = open_flow(
        jobs,
        (a.out.as_deref(), a.resume),
        (&stem, ""),
        &fixed,
        None,
    )?;
    let n = flow.points.len();
    let lead = format!(
        "iolab suite {}{}{}: {n} points; reproduces {}\n{}; ",
        suite.name,
        if a.quick {
            " --quick (scaled down: a smoke test, not a measurement)"
        } else {
            ""
        },
        match a.profile.as_deref() {
            Some("none") => " --profile none (no point profiled)".to_string(),
            Some(pass) => format!(" --profile {pass} (every point sampled)"),
            None => String::new(),
        } + &if repeat > 1 {
            format!(
                " --repeat {repeat} (every point {repeat} times, in rounds of alternating order)"
            )
        } else {
            String::new()
        },
        suite.reproduces,
        places.describe(),
    );
    let (failed, lost) = run_flow(&mut flow, &format!("suite {}", suite.name), &lead)?;
    let held = flow.records();
    let lines: Vec<usize> = held.iter().map(|r| flow.rec.line_of(r)).collect();
    let mine: Vec<serde_json::Value> = held.into_iter().cloned().collect();
    // Findings and answers: the memory copy rate is measured here, after every point ran (never inside a
    // timed span), and the summary is recorded as a line of its own, its cites naming the lines above.
    let summary = iolab_lab::answers::summarize(
        &suite,
        &mine,
        &lines,
        iolab_engine::measure::memcopy::measured(),
    );
    let recorded = flow.rec.push(iolab_lab::answers::record(&summary));
    let keys = flow.keys();
    let doc = Document::Suite {
        suite: &suite,
        records: &mine,
        keys: &keys,
        summary: &summary,
    };
    write_all(&outputs, &doc, lost)?;
    recorded?;
    outln(&format!(
        "\nresult: {} ({n} points, {failed} without a result this time); charts: iolab report {} -o report.html",
        flow.rec.path.display(),
        flow.rec.path.display()
    ))?;
    Ok(exit_of("suite", &mine.iter().collect::<Vec<_>>()))
}

/// The exit status of a sweep or suite from the records it made this time: 1 where a point failed at
/// run time (a full filesystem, an I/O error: a failure of the whole, said with the first one's
/// reason; a point this machine cannot run is not one), or where none ran ([`nothing_ran`]); else 0.
fn exit_of(what: &str, records: &[&serde_json::Value]) -> i32 {
    let failures: Vec<&str> = records
        .iter()
        .filter(|r| iolab_lab::suite::point_failed(r))
        .filter_map(|r| r.get("error").and_then(|e| e.as_str()))
        .collect();
    match failures.first() {
        Some(first) if failures.len() < records.len() => {
            errln(&format!(
                "iolab {what}: {} of {} points failed (marked failed above); the first: {first}",
                failures.len(),
                records.len()
            ));
            1
        }
        _ if nothing_ran(what, records) != 0 => 1,
        _ => not_run_yet(what, records),
    }
}

/// Points refused for their target's state (a file an interrupted iolab left, a read-only filesystem):
/// not done, so not a success: exit 1 naming how many and the first, which `--resume` runs again once the
/// cause is gone. Points refused for their own flags, not available here, or refused by a kernel or
/// device that cannot do it (EOPNOTSUPP: IOPOLL without poll queues) are done.
fn not_run_yet(what: &str, records: &[&serde_json::Value]) -> i32 {
    let pending: Vec<&str> = records
        .iter()
        .filter(|r| iolab_lab::series::retried(r))
        .filter_map(|r| r.get("error").and_then(|e| e.as_str()))
        .filter(|e| !iolab_lab::suite::unsupported(e))
        .collect();
    let Some(first) = pending.first() else {
        return 0;
    };
    errln(&format!(
        "iolab {what}: {} of {} points were not run for their target's state; the first: {first}; \
         --resume runs them once that is put right",
        pending.len(),
        records.len()
    ));
    1
}

/// The suite `a` names, with its `--profile` and `--repeat` set on every point, and the repeat count.
fn load_suite(a: &SuiteArgs) -> Result<(iolab_lab::suite::SuiteFile, u32), Error> {
    let name = a.name.as_deref().unwrap_or_default();
    let mut suite = iolab_lab::answers::load(name)?;
    if let Some(pass) = &a.profile {
        suite.set_on_every_point("profile", pass);
    }
    let repeat = repeat_count(a.repeat.as_deref())?;
    suite.set_repeat(repeat);
    Ok((suite, repeat))
}

/// A suite another machine runs (`iolab vm -- suite`, a fleet's hosts), checked here as it would check
/// it before it makes anything: the suite (where `file` says this machine reads the file the other side
/// would, or it is built in), its `--repeat`, its points, and its places.
#[cfg(any(feature = "vm", feature = "fleet"))]
pub(crate) fn check_suite_elsewhere(a: &SuiteArgs, file: bool) -> Result<(), Error> {
    let name = a.name.as_deref().unwrap_or_default();
    if !a.list && (file || !name.ends_with(".toml")) {
        let (suite, _) = load_suite(a)?;
        iolab_lab::suite::check(&suite, a.quick)?;
    }
    check_places_elsewhere(a)
}

/// `--disk-dir` and `--tmpfs-dir` of a suite another machine runs (`suite --vm`, `iolab vm -- suite`, a
/// fleet's hosts): directories of that machine, but /proc and /sys are procfs and sysfs on every Linux
/// machine, where the suite cannot make its directory: refused here, before a guest is booted or a host
/// is given anything.
#[cfg(any(feature = "vm", feature = "fleet"))]
fn check_places_elsewhere(a: &SuiteArgs) -> Result<(), Error> {
    use std::path::Component;
    for (flag, d) in [("--disk-dir", &a.disk_dir), ("--tmpfs-dir", &a.tmpfs_dir)] {
        // The path as the other machine reads it, `..` taken back (no link is followed: its links are
        // its own).
        let mut names: Vec<&std::ffi::OsStr> = Vec::new();
        for c in d.components() {
            match c {
                Component::Normal(n) => names.push(n),
                Component::ParentDir => _ = names.pop(),
                _ => {}
            }
        }
        let fs = match names.first().and_then(|n| n.to_str()) {
            _ if !d.is_absolute() => continue,
            Some("proc") => "procfs",
            Some("sys") => "sysfs",
            _ => continue,
        };
        return Err(Error::usage(
            flag,
            format!(
                "{} is in {fs}, a kernel-interface filesystem (on every Linux machine): the suite cannot \
                 make its directory there; give a directory on a disk filesystem or tmpfs",
                d.display()
            ),
        ));
    }
    Ok(())
}

/// The tables and every file asked for; when the terminal was lost while the points ran, the files still,
/// then that error.
fn write_all(outputs: &Outputs, doc: &Document, lost: Option<Error>) -> Result<(), Error> {
    match lost {
        Some(e) => {
            outputs.write_files(doc)?;
            Err(e)
        }
        None => outputs.write(doc),
    }
}

/// `suite --repeat N` (1 without it).
fn repeat_count(n: Option<&str>) -> Result<u32, Error> {
    match n.map(iolab_engine::units::parse_count) {
        None => Ok(1),
        Some(Ok(0)) => Err(Error::usage(
            "--repeat",
            "0 is not accepted; expected 1 or more runs of every point",
        )),
        Some(Ok(k)) if k <= 1000 => Ok(k as u32),
        Some(Ok(k)) => Err(Error::usage(
            "--repeat",
            format!("{k} is more than the 1000 runs of every point accepted"),
        )),
        Some(Err(m)) => Err(Error::usage("--repeat", m)),
    }
}

/// `iolab suite --list`.
fn list_suites() -> Result<i32, Error> {
    let mut text =
        "iolab suites (run one with `iolab suite NAME`; --quick for a smoke test):\n\n".to_string();
    for (name, _) in iolab_lab::suite::BUILTIN {
        let s = iolab_lab::answers::load(name)?;
        text += &format!("  {name:<12} {}\n", s.about);
        text += &format!("  {:<12} reproduces: {}\n", "", s.reproduces);
    }
    out(&text)?;
    Ok(0)
}
