//! `iolab suite NAME --kernels host,6.1,6.12` and `sweep --kernels`: the command on each kernel, one
//! after the other (`host`: this machine's, as a child iolab; a release or package: Debian's kernel
//! booted under QEMU, as `iolab vm --kernel K` does), each kernel's `iolab probe` beside it; then their
//! records in one file, each point naming its kernel, and the kernels side by side
//! (`iolab_lab::kernels`).
//!
//! Each kernel's own files go to a directory of iolab's in the current directory (`.iolab-kernels-*`: a
//! guest writes into the current directory, which it shares), removed at the end and on Ctrl-C.

use crate::output::{errln, outln};
use iolab_engine::cleanup::Created;
use iolab_engine::error::Error;
use iolab_guest::vm;
use iolab_lab::kernels::{self, KernelRan};
use iolab_lab::suite::SuiteFile;
use iolab_report::export::{Document, Outputs};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What `suite --kernels` was asked for besides its kernels (the suite command's own flags).
pub(crate) struct SuiteArgs<'a> {
    pub(crate) name: &'a str,
    pub(crate) quick: bool,
    pub(crate) repeat: Option<&'a str>,
    pub(crate) profile: Option<&'a str>,
    pub(crate) disk_dir: &'a Path,
    pub(crate) tmpfs_dir: &'a Path,
    pub(crate) out: Option<&'a Path>,
    pub(crate) md: Option<&'a Path>,
    pub(crate) csv: Option<&'a Path>,
    pub(crate) csv_intervals: Option<&'a Path>,
}

/// One command run on each kernel: what it is called ("suite nowait", "sweep"), its arguments but for
/// its record file, the stem of the one file of all kernels' records, the settings that file records,
/// the point keys its CSV leads with, and where its outputs go.
pub(crate) struct Plan<'a> {
    pub(crate) what: String,
    pub(crate) args: Vec<OsString>,
    pub(crate) stem: String,
    pub(crate) fixed: BTreeMap<String, String>,
    pub(crate) keys: Vec<String>,
    pub(crate) out: Option<&'a Path>,
    pub(crate) md: Option<&'a Path>,
    pub(crate) csv: Option<&'a Path>,
    pub(crate) csv_intervals: Option<&'a Path>,
}

/// How long each guest may run its suite and probe.
const GUEST_TIMEOUT_S: u64 = 6 * 3600;

/// `--kernels LIST`: "host" or a kernel `iolab vm --kernel` takes, each once, two or more.
pub(crate) fn parse(list: &str) -> Result<Vec<String>, Error> {
    let asked: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
    if asked.iter().any(String::is_empty) {
        return Err(Error::usage(
            "--kernels",
            format!(
                "'{list}' has an empty name: give kernels separated by commas, e.g. host,6.1,6.12"
            ),
        ));
    }
    for (i, k) in asked.iter().enumerate() {
        if asked[..i].contains(k) {
            return Err(Error::usage("--kernels", format!("{k} is named twice")));
        }
        if k != "host" {
            vm::releases::check_form(k, vm::arch::Arch::Amd64).map_err(|e| {
                Error::usage("--kernels", e.to_string().replacen("--kernel: ", "", 1))
            })?;
        }
    }
    if asked.len() < 2 {
        return Err(Error::usage(
            "--kernels",
            format!(
                "'{list}' names one kernel: give two or more to set side by side (host, 6.1, 6.1-rt, 6.12, \
                 6.12-rt or a linux-image package), or run `iolab vm --kernel {list} -- suite ...` for one"
            ),
        ));
    }
    Ok(asked)
}

/// With a guest kernel asked for: a `--disk-dir` or `--tmpfs-dir` in the current directory is the 9p
/// share in the guest (whose statfs says the host's file system: its records would name the wrong one),
/// and a suite file outside it is not the guest's to read: refused before anything runs.
pub(crate) fn check_guest_places(
    asked: &[String],
    dirs: &[(&str, &Path)],
    suite_file: Option<&Path>,
) -> Result<(), Error> {
    if asked.iter().all(|k| k == "host") {
        return Ok(());
    }
    let here = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Error::Runtime(format!("cannot tell the current directory: {e}")))?;
    for (flag, d) in dirs {
        if std::fs::canonicalize(d).is_ok_and(|real| real.starts_with(&here)) {
            return Err(Error::usage(
                *flag,
                format!(
                    "{} is in the current directory, which a guest kernel sees as a 9p share, not as a \
                     disk or tmpfs: give a directory outside it (the default /var/tmp is the guest's disk)",
                    d.display()
                ),
            ));
        }
    }
    if let Some(f) = suite_file.filter(|f| f.extension().is_some_and(|e| e == "toml")) {
        let inside = std::fs::canonicalize(f).is_ok_and(|real| real.starts_with(&here));
        if !inside || f.is_absolute() {
            return Err(Error::usage(
                "suite",
                format!(
                    "{}: a guest reads a suite file only by a path relative to the current directory, \
                     which it shares: copy it here and name it so",
                    f.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The suite's arguments for each kernel's run (its record file added per kernel).
fn suite_args(a: &SuiteArgs) -> Vec<OsString> {
    let mut v: Vec<OsString> = vec!["suite".into(), a.name.into()];
    if a.quick {
        v.push("--quick".into());
    }
    if let Some(r) = a.repeat {
        v.extend(["--repeat".into(), r.into()]);
    }
    if let Some(p) = a.profile {
        v.push(format!("--profile={p}").into());
    }
    v.extend([
        "--disk-dir".into(),
        a.disk_dir.as_os_str().to_owned(),
        "--tmpfs-dir".into(),
        a.tmpfs_dir.as_os_str().to_owned(),
    ]);
    v
}

/// This sweep's arguments (`args`: the command line after the program's name) for each kernel's run:
/// all but `--kernels` and the outputs (`--out`, `--md`, `--csv`, `--csv-intervals`), which are the
/// one file's and the combined tables', given with their values (`--out F` or `--out=F`).
pub(crate) fn sweep_args(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    const DROPPED: &[&str] = &["--kernels", "--out", "--md", "--csv", "--csv-intervals"];
    let mut kept = Vec::new();
    let mut skip_value = false;
    let mut after_dashes = false;
    for w in args {
        let text = w.to_string_lossy();
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if !after_dashes && text == "--" {
            after_dashes = true;
        } else if !after_dashes && DROPPED.contains(&text.as_ref()) {
            skip_value = true;
            continue;
        } else if !after_dashes && DROPPED.iter().any(|d| text.starts_with(&format!("{d}="))) {
            continue;
        }
        kept.push(w);
    }
    kept
}

/// `suite NAME --kernels LIST` (checked by the caller as any suite is).
pub(crate) fn cmd(a: &SuiteArgs, suite: &SuiteFile, asked: &[String]) -> Result<i32, Error> {
    let plan = Plan {
        what: format!("suite {}", suite.name),
        args: suite_args(a),
        stem: format!(
            "suite-{}{}-kernels",
            suite.name,
            if a.quick { "-quick" } else { "" }
        ),
        fixed: BTreeMap::from([
            ("suite".to_string(), suite.name.clone()),
            ("disk_dir".to_string(), a.disk_dir.display().to_string()),
            ("tmpfs_dir".to_string(), a.tmpfs_dir.display().to_string()),
        ]),
        keys: vec!["kernel".to_string(), "step".into(), "target".into()],
        out: a.out,
        md: a.md,
        csv: a.csv,
        csv_intervals: a.csv_intervals,
    };
    let lead = format!(
        "iolab suite {}{}",
        suite.name,
        if a.quick { " --quick" } else { "" }
    );
    run_plan(&plan, &lead, asked)
}

/// Keeps what a guest says and prints, for when it fails.
#[derive(Default)]
struct Kept(Vec<u8>);

impl vm::Report for Kept {
    fn say(&mut self, line: &str) {
        self.0
            .extend_from_slice(format!("iolab vm: {line}\n").as_bytes());
    }
    fn out(&mut self, bytes: &[u8]) -> iolab_engine::error::Result<()> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }
    fn err(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

/// Runs the suite and the probe on kernel `k`; Err with its last lines where either failed.
fn run_on(k: &str, cmds: Vec<Vec<OsString>>) -> Result<(), Error> {
    let (ok, text) = if k == "host" {
        let exe = std::env::current_exe()
            .map_err(|e| Error::Runtime(format!("cannot find iolab's own binary: {e}")))?;
        let mut all = Vec::new();
        let mut ok = true;
        for c in cmds {
            let o = std::process::Command::new(&exe)
                .args(c)
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| Error::Runtime(format!("cannot start {}: {e}", exe.display())))?;
            all.extend_from_slice(&o.stdout);
            all.extend_from_slice(&o.stderr);
            ok &= o.status.success();
        }
        (ok, all)
    } else {
        let args = crate::vm_guest::VmArgs {
            arch: "x86_64".into(),
            machine: None,
            exe: None,
            kernel: Some(k.to_string()),
            cache: None,
            timeout: GUEST_TIMEOUT_S,
            script: None,
            ssh: None,
            args: Vec::new(),
        };
        let req = crate::vm_guest::request(&args, cmds)?;
        let mut kept = Kept::default();
        let statuses = vm::run(&req, &mut kept)?;
        (statuses.iter().all(|&s| s == 0), kept.0)
    };
    if ok {
        return Ok(());
    }
    // Its errors ("iolab: ..."), else its last lines (the probe runs after the command: its lines last).
    let text = String::from_utf8_lossy(&text);
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("iolab: "))
        .take(6)
        .collect();
    let shown: Vec<&str> = match errors.is_empty() {
        false => errors,
        true => {
            let tail: Vec<&str> = text.lines().rev().take(12).collect();
            tail.into_iter().rev().collect()
        }
    };
    Err(Error::Runtime(format!(
        "on kernel {k} it failed:\n{}",
        shown.join("\n")
    )))
}

/// One kernel's records (its points, each naming the kernel) and what its probe found.
fn read_part(k: &str, recs: &Path, probe: &Path) -> Result<(KernelRan, Vec<Value>), Error> {
    let f = iolab_lab::series::read_record_file(recs, "--kernels", iolab_lab::series::Keep::All)?;
    let mut points: Vec<Value> = f
        .records
        .into_iter()
        .filter(|r| r.get("point").is_some())
        .collect();
    for r in &mut points {
        if let Some(m) = r.as_object_mut() {
            m.remove("settings");
        }
        if let Some(p) = r.get_mut("point").and_then(Value::as_object_mut) {
            p.insert("kernel".into(), Value::String(k.to_string()));
        }
    }
    let mut ran = KernelRan::of_records(k, &points)
        .ok_or_else(|| Error::Runtime(format!("on kernel {k} nothing was recorded")))?;
    let text = iolab_engine::input::read_text(probe, "--kernels", "probe result", 1 << 24)?;
    let p: iolab_lab::probe::ProbeResult = serde_json::from_str(&text)
        .map_err(|e| Error::Runtime(format!("{}: {e}", probe.display())))?;
    ran.features = p.rows.into_iter().map(|r| (r.name, r.available)).collect();
    Ok((ran, points))
}

/// Runs `plan` on each kernel asked for, then writes the one file and prints the kernels side by side
/// after `lead` ("iolab suite nowait --quick").
pub(crate) fn run_plan(plan: &Plan, lead: &str, asked: &[String]) -> Result<i32, Error> {
    let outputs = Outputs::from_flags(
        None,
        plan.md,
        plan.csv,
        plan.csv_intervals,
        &[("--out", plan.out)],
    )?;
    iolab_engine::cleanup::install_signal_handler();
    // In the current directory itself, which a guest shares (not ./iolab-results, which may be a link
    // out of it).
    let parts = Created::temp_tree(Path::new("."), ".iolab-kernels-")?;
    let dir = parts.path().to_path_buf();
    fetch_all(&plan.what, asked)?;
    let mut each: Vec<(KernelRan, Vec<Value>)> = Vec::new();
    let mut failed: Vec<(String, Error)> = Vec::new();
    for (i, k) in asked.iter().enumerate() {
        let (recs, probe) = (
            dir.join(format!("{i}.jsonl")),
            dir.join(format!("{i}-probe.json")),
        );
        let t0 = std::time::Instant::now();
        errln(&format!("iolab {}: on kernel {k} ...", plan.what));
        let mut args = plan.args.clone();
        args.extend(["--out".into(), recs.clone().into_os_string()]);
        let probe_args = vec![
            "probe".into(),
            "--json".into(),
            probe.clone().into_os_string(),
        ];
        // A kernel that fails loses none of the others' runs: the rest go on, and what ran is kept.
        let part = run_on(k, vec![args, probe_args]).and_then(|()| read_part(k, &recs, &probe));
        match part {
            Ok((ran, points)) => {
                errln(&format!(
                    "iolab {}: {}: {} points in {:.0} s",
                    plan.what,
                    ran.describe(),
                    points.len(),
                    t0.elapsed().as_secs_f64()
                ));
                each.push((ran, points));
            }
            Err(e) => {
                errln(&format!("iolab {}: kernel {k}: {e}", plan.what));
                failed.push((k.clone(), e));
            }
        }
    }
    if each.is_empty() {
        let (k, e) = failed.swap_remove(0);
        return Err(Error::Runtime(format!("it ran on no kernel; on {k}: {e}")));
    }
    let failures: Vec<(String, String)> = failed
        .iter()
        .map(|(k, e)| (k.clone(), e.to_string()))
        .collect();
    let recorded = kernels_file(plan, &each, failures)?;
    drop(parts);
    let (path, recs, side, answers) = recorded;
    let lead = format!(
        "{lead} on {}: {}",
        match side.kernels.len() {
            1 => "1 kernel".to_string(),
            n => format!("{n} kernels"),
        },
        side.kernels
            .iter()
            .map(KernelRan::describe)
            .collect::<Vec<_>>()
            .join(", ")
    );
    outputs.write(&Document::Kernels {
        lead: &lead,
        side: &side,
        answers: &answers,
        records: &recs,
        keys: &plan.keys,
    })?;
    outln(&format!(
        "\nresult: {} ({} points); every figure side by side: iolab compare --across kernel {}",
        path.display(),
        recs.len(),
        path.display(),
    ))?;
    if !failed.is_empty() {
        let names: Vec<&str> = failed.iter().map(|(k, _)| k.as_str()).collect();
        errln(&format!(
            "iolab {}: no result from kernel {} (said above); the others' are in {}",
            plan.what,
            names.join(", "),
            path.display()
        ));
        return Ok(1);
    }
    Ok(0)
}

/// Every guest kernel's parts fetched (and its driver built) before anything runs: a release the
/// archive lacks, or a guest this machine cannot build, is said before the first kernel's run.
fn fetch_all(what: &str, asked: &[String]) -> Result<(), Error> {
    let cache = vm::default_cache()?;
    for k in asked.iter().filter(|k| *k != "host") {
        let mut say = |l: &str| errln(&format!("iolab vm: {l}"));
        let release = vm::fetch_parts(&cache, k, &mut say).map_err(|e| match e {
            // The archive has no such release: bad input, as `iolab vm --kernel` says it.
            Error::Usage { msg, .. } => Error::usage("--kernels", format!("{k}: {msg}")),
            e => Error::Runtime(format!("kernel {k}: {e}")),
        })?;
        errln(&format!(
            "iolab {what}: kernel {k} is {release}, its parts cached"
        ));
    }
    Ok(())
}

type Recorded = (
    PathBuf,
    Vec<Value>,
    kernels::Side,
    Vec<iolab_lab::answers::Answer>,
);

/// The kernels' records in one file (`--out`, or a new one under ./iolab-results), then the summary
/// line: the side-by-side tables and the answers, their cites naming lines of that file.
fn kernels_file(
    plan: &Plan,
    each: &[(KernelRan, Vec<Value>)],
    failed: Vec<(String, String)>,
) -> Result<Recorded, Error> {
    let ks: Vec<KernelRan> = each.iter().map(|(k, _)| k.clone()).collect();
    let recs: Vec<Value> = each.iter().flat_map(|(_, r)| r.iter().cloned()).collect();
    let points: Vec<Vec<(String, String)>> =
        recs.iter().map(iolab_lab::series::record_point).collect();
    let mut fixed = plan.fixed.clone();
    let labels: Vec<&str> = ks.iter().map(|k| k.label.as_str()).collect();
    fixed.insert("kernels".to_string(), labels.join(","));
    let settings = iolab_lab::series::settings(&fixed, &points);
    let mut rec =
        iolab_lab::series::Recorder::open(plan.out, false, &plan.stem, settings, &points, None)?;
    for r in &recs {
        rec.push(r.clone())?;
    }
    let lines: Vec<usize> = (1..=recs.len()).collect();
    let rows = kernels::rows_by_kernel(&ks, &recs, &lines);
    let (mut side, _) = iolab_lab::cite::collect(|| kernels::side(&ks, &rows));
    side.failed = failed;
    let answers = kernels::answers(&ks, &rows, &recs);
    let sum = iolab_lab::answers::Summary {
        suite: plan
            .what
            .strip_prefix("suite ")
            .unwrap_or(&plan.what)
            .to_string(),
        memory: iolab_engine::measure::memcopy::measured().clone(),
        findings: Vec::new(),
        published: Vec::new(),
        answers: answers.clone(),
    };
    let mut line = iolab_lab::answers::record(&sum);
    line["summary"]["kernels"] = serde_json::to_value(&side).unwrap_or(Value::Null);
    rec.push(line)?;
    Ok((rec.path.clone(), recs, side, answers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweeps_arguments_for_each_kernel_leave_out_its_kernels_and_outputs() {
        let words = |s: &str| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        let kept = sweep_args(
            words("sweep --vary bs=4k,8k --kernels host,6.1 --out a.jsonl --md=t.md --csv c.csv --ops 100")
                .into_iter(),
        );
        assert_eq!(kept, words("sweep --vary bs=4k,8k --ops 100"));
    }
}
