//! `iolab run --fio JOBFILE`: a fio job file's jobs, each mapped to iolab's options and run one after the
//! other (or, with `--across-methods`, each once per method that can do it), then a table of them all.

use crate::output::{errln, out, target_file};
use crate::progress::run_bar;
use crate::run_args::{FioArgs, RunArgs};
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use iolab_engine::method::kind::MethodKind;
use iolab_engine::result::RunResult;
use iolab_engine::spec::method_kind::Exec;
use iolab_engine::spec::{RawSpec, Spec};
use iolab_engine::target::{per_thread, TargetKind};
use iolab_engine::units::fmt_ns;
use iolab_lab::fio_job::{self, Mapped};
use iolab_report::export::{Document, Outputs};
use std::path::Path;

/// One run of the file: its label, the spec, and what the mapping says of it.
struct Planned {
    job: String,
    label: String,
    spec: Spec,
    said: Vec<String>,
}

pub(crate) fn cmd_run_fio(a: &RunArgs, f: &FioArgs) -> Result<i32, Error> {
    let path = f.fio.as_deref().expect("only called with --fio");
    let jobs = load(f)?;
    if f.across_methods {
        check_across_flags(a)?;
    }
    let plan = plan(a, f, &jobs)?;
    let outputs = checks(a, f, &plan)?;
    // fio's log files (write_bw_log ...): checked before any job runs, written after each run.
    let logs_of = |job: &str| jobs.iter().find(|j| j.name == job)?.logs.as_ref();
    check_logs(a, f, &plan, &logs_of)?;
    let mut logs_written = Vec::new();
    let mut logs_incomplete = Vec::new();
    let mut wrote: Vec<String> = Vec::new();
    iolab_engine::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    let mut done: Vec<(String, RunResult)> = Vec::new();
    // --fio-json: how fio reports each run's job (group_reporting, its group); one job's runs under
    // --across-methods are no group of fio's.
    let (reporting, mut reported) = (
        iolab_report::fio_json::reporting(path, f.fio_section.as_deref()),
        Vec::new(),
    );
    // Each job whose --verify found blocks unlike what it checks them against, said.
    let mut mismatches: Vec<String> = Vec::new();
    let mut failed: Vec<(String, Error)> = Vec::new();
    let (mut after_failure, mut logs_failed) = (false, Vec::new());
    let compact = plan.len() > 1 && !a.verbose;
    let mut said_for = String::new();
    // The files earlier jobs made and kept (--keep): a later job of the file writes into them, as fio's
    // jobs share a file by its name.
    let mut made: Vec<(&str, &_)> = Vec::new();
    for p in &plan {
        // What the mapping says of a job, once (not again for each method of --across-methods).
        if said_for != p.job {
            for line in said_before(p, a.verbose) {
                say(&outputs, &line)?;
            }
            said_for = p.job.clone();
        }
        let maker = made.iter().find(|m| *m.1 == p.spec.target).map(|m| m.0);
        let (r, relaid) = run_job(&p.spec, maker.is_some(), &clk);
        let mut r = match r {
            Ok(r) => r,
            // A method the target refuses at run time (epoll on a file): the others still run.
            Err(e) if f.across_methods => {
                errln(&format!("iolab: fio job {}: cannot run: {e}", p.label));
                continue;
            }
            // As fio does, the other jobs still run (and what ran is written); the exit status is 1.
            Err(e) if plan.len() > 1 => {
                errln(&format!("iolab: fio job {}: failed: {e}", p.label));
                failed.push((p.label.clone(), e));
                // fio would join the next job to this one's entry, which iolab has not: not to the
                // one before.
                after_failure = true;
                continue;
            }
            Err(e) => return Err(e),
        };
        r.notes
            .extend(p.said.iter().map(|s| format!("fio job '{}': {s}", p.job)));
        // A null-engine job touches no file.
        if let Some(m) = maker.filter(|_| !p.spec.method.info().no_data) {
            r.notes.push(shared_note(&p.job, m, &p.spec));
        }
        r.notes
            .extend(relaid.iter().map(|s| format!("fio job '{}': {s}", p.job)));
        if r.target.created && r.target.kept {
            made.push((p.job.as_str(), &p.spec.target));
        }
        if let Some(l) = logs_of(&p.job) {
            match write_logs(l, &mut r, &mut logs_written) {
                Ok((notes, complete)) => {
                    wrote = notes;
                    if !complete {
                        logs_incomplete.push(p.label.clone());
                    }
                }
                // The run's result is kept and the other jobs still run; the exit status is 1.
                Err(e) => {
                    errln(&format!("iolab: fio job {}: its logs: {e}", p.label));
                    logs_failed.push(p.label.clone());
                }
            }
        }
        if compact {
            // Many runs: each one's first two lines, then the table; -v shows every run whole.
            let text = iolab_report::TableExporter.run_text(&r);
            let two: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("iolab run") || l.starts_with("throughput"))
                .collect();
            out(&(two.join("\n") + "\n"))?;
        } else {
            outputs.write(&Document::Run {
                result: &r,
                verbose: a.verbose,
            })?;
        }
        if !a.verbose {
            // Files the user asked for: named on the first screen (-v has them in the notes).
            for line in wrote.drain(..) {
                say(&outputs, &line)?;
            }
        }
        mismatches.extend(mismatch(&p.label, &r));
        done.push((p.label.clone(), r));
        reported.push(reported_as(
            &reporting,
            &p.job,
            f.across_methods || after_failure,
        ));
        after_failure = false;
    }
    if done.is_empty() && !failed.is_empty() {
        // Every job failed: the first one's error is the command's.
        return Err(failed.swap_remove(0).1);
    }
    if done.is_empty() {
        // --across-methods where every method was refused: nothing asked for ran.
        return Err(Error::usage(
            "--across-methods",
            format!(
                "no method could run a job of {} (each refusal is above)",
                path.display()
            ),
        ));
    }
    if done.len() > 1 {
        out(&table(&done))?;
    }
    if let Some(p) = &f.fio_json {
        fio_json(p, &done, &reported)?;
    }
    let code = exit_status(&logs_incomplete, &logs_failed, &mismatches);
    if !failed.is_empty() {
        return Ok(failed_status(&failed, plan.len()));
    }
    Ok(code)
}

/// The exit status where jobs `failed`, of `runs` planned: 1, said.
fn failed_status(failed: &[(String, Error)], runs: usize) -> i32 {
    let names: Vec<&str> = failed.iter().map(|(l, _)| l.as_str()).collect();
    let others = if runs > failed.len() {
        "; the others ran"
    } else {
        ""
    };
    errln(&format!(
        "iolab: fio job(s) {} failed (see above){others}: exit status 1",
        names.join(", ")
    ));
    1
}

/// The fio logs the jobs of `plan` write (`logs_of` a job), checked before any job runs.
fn check_logs<'a>(
    a: &RunArgs,
    f: &FioArgs,
    plan: &[Planned],
    logs_of: &dyn Fn(&str) -> Option<&'a fio_job::logs::LogPlan>,
) -> Result<(), Error> {
    let wanted: Vec<_> = plan
        .iter()
        .filter_map(|p| Some((logs_of(&p.job)?, p.spec.overwrite)))
        .collect();
    fio_job::logs::check_files(&wanted, &not_logs(a, f, plan), f.across_methods)
}

/// The runs `done` in the fio json+ document at `p`, each job reported as `reported` says.
fn fio_json(
    p: &Path,
    done: &[(String, RunResult)],
    reported: &[iolab_report::fio_json::Reporting],
) -> Result<(), Error> {
    let runs: Vec<(String, &RunResult, iolab_report::fio_json::Reporting)> = done
        .iter()
        .zip(reported)
        .map(|((l, r), g)| (l.trim_matches('\'').replace("' with ", " with "), r, *g))
        .collect();
    crate::cmd_run::write_fio_json(p, &runs)
}

/// Writes the fio logs `l` of run `r` (appending to those `written` before, as fio does): the notes
/// saying so (in the run's notes too) and whether the logs hold every op (else a warning is said and
/// kept in the notes). The op log is dropped from the result either way.
fn write_logs(
    l: &fio_job::logs::LogPlan,
    r: &mut RunResult,
    written: &mut Vec<iolab_report::fio_log::Made>,
) -> Result<(Vec<String>, bool), Error> {
    let w = iolab_report::fio_log::write(l, r, written);
    // In its files now (or failed): not held until the last job's run.
    r.op_log = None;
    let w = w?;
    r.notes.extend(w.notes.iter().cloned());
    // Said whatever -v: the logs asked for miss ops, and the run's exit status is 1.
    if let Some(warning) = &w.incomplete {
        errln(&format!("iolab: warning: {warning}"));
        r.notes.push(warning.clone());
    }
    Ok((w.notes, w.incomplete.is_none()))
}

/// How fio reports `job` (of `reporting`, the file's jobs); `apart`: its run joins no entry before it
/// (under --across-methods a job's runs are no group of fio's; after a job that failed, fio would join it
/// to that job's entry, which iolab has not).
fn reported_as(
    reporting: &[(String, iolab_report::fio_json::Reporting)],
    job: &str,
    apart: bool,
) -> iolab_report::fio_json::Reporting {
    let mut how = reporting
        .iter()
        .find(|(name, _)| name == job)
        .map_or_else(Default::default, |(_, r)| *r);
    how.merge &= !apart;
    how
}

/// Runs a job, with its progress bar. On a file an earlier job made and kept (`shared`) it writes into it,
/// and first grows it where it ends before the job's region does, as fio lays it out: the notes say so.
fn run_job(
    spec: &Spec,
    shared: bool,
    clk: &clock::ClockInfo,
) -> (Result<RunResult, Error>, Vec<String>) {
    let bar = run_bar();
    let spec = Spec {
        overwrite: spec.overwrite || shared,
        ..spec.clone()
    };
    let grown = match shared {
        true => iolab_engine::target::lay_out_again(&spec),
        false => Ok(Vec::new()),
    };
    let r = match grown {
        Ok(notes) => (
            iolab_lab::run::run_with(&spec, clk, bar.as_ref().map(|l| &l.board)),
            notes,
        ),
        Err(e) => (Err(e), Vec::new()),
    };
    if let Some(l) = bar {
        l.stop();
    }
    r
}

/// A job that used the file an earlier job made and kept, said.
fn shared_note(job: &str, maker: &str, spec: &Spec) -> String {
    // A mix of 100% or 0% reads goes one way only.
    let (op, pct) = (spec.op, spec.read_pct);
    let did = match (
        op.reads() && pct != Some(0),
        op.writes() && pct != Some(100),
    ) {
        (true, true) => "read and wrote into",
        (false, _) => "wrote into",
        (true, false) => "read",
    };
    format!(
        "fio job '{job}': {did} the file job '{maker}' made and kept (--keep), as fio's jobs share a file by \
         its name"
    )
}

/// What a job's --verify found unlike what it checks the blocks against, said with the job.
fn mismatch(label: &str, r: &iolab_engine::result::RunResult) -> Option<String> {
    let v = r.verify.as_ref().filter(|v| v.mismatches > 0)?;
    Some(format!(
        "job {label}: {} of {} blocks {}",
        v.mismatches,
        v.blocks_checked,
        super::cmd_run::mismatched(&r.spec)
    ))
}

/// 1, said, where logs miss ops or could not be written, or verify found blocks unlike what was
/// written; 0 otherwise.
fn exit_status(logs_incomplete: &[String], logs_failed: &[String], mismatches: &[String]) -> i32 {
    if !logs_incomplete.is_empty() {
        errln(&format!(
            "iolab: the fio logs of {} miss ops (see the warning above): exit status 1",
            logs_incomplete.join(", ")
        ));
    }
    if !logs_failed.is_empty() {
        errln(&format!(
            "iolab: the fio logs of {} could not be written (see above; their runs completed and \
             are reported): exit status 1",
            logs_failed.join(", ")
        ));
    }
    for m in mismatches {
        errln(&format!("iolab: verify: {m}"));
    }
    i32::from(!logs_incomplete.is_empty() || !logs_failed.is_empty() || !mismatches.is_empty())
}

/// The files no log may be: every job's data file (each thread's, with a file per thread) and the
/// results' outputs, each with what it is.
fn not_logs(a: &RunArgs, f: &FioArgs, plan: &[Planned]) -> Vec<(String, std::path::PathBuf)> {
    let mut others: Vec<(String, std::path::PathBuf)> = [
        ("--json", &a.json),
        ("--csv", &a.csv),
        ("--md", &a.md),
        ("--csv-intervals", &a.csv_intervals),
        ("--fio-json", &f.fio_json),
    ]
    .into_iter()
    .filter_map(|(k, p)| Some((format!("the {k} file"), p.clone()?)))
    .filter(|(_, p)| p != Path::new("-"))
    .collect();
    // An I/O log appends to a file that exists, as fio's does: never to the job file itself.
    others.extend(f.fio.clone().map(|p| ("the job file".to_string(), p)));
    for p in plan
        .iter()
        .filter(|p| TargetKind::stream_named(&p.spec.target).is_none())
    {
        let data = |t| (format!("the data file of job '{}'", p.job), t);
        match per_thread::template(&p.spec.target) {
            Some(t) => others.extend((0..p.spec.threads).map(|i| data(per_thread::path_of(t, i)))),
            None => others.push(data(p.spec.target.clone())),
        }
    }
    others
}

/// A line of text about a job: on stdout, or on stderr where JSON goes to stdout.
fn say(outputs: &Outputs, line: &str) -> Result<(), Error> {
    if outputs.text_to_stderr() {
        errln(line);
        Ok(())
    } else {
        out(&format!("{line}\n"))
    }
}

/// What is printed of a job before its first run: what --fio-lenient ignored, and how many notes the
/// mapping made. With -v nothing: the run's notes, printed whole, hold them all.
fn said_before(p: &Planned, verbose: bool) -> Vec<String> {
    if verbose {
        return Vec::new();
    }
    let (ignored, notes): (Vec<&String>, Vec<&String>) =
        p.said.iter().partition(|s| s.starts_with(IGNORED));
    let mut lines: Vec<String> = ignored
        .iter()
        .map(|s| format!("fio job '{}': {s}", p.job))
        .collect();
    if !notes.is_empty() {
        lines.push(format!(
            "fio job '{}': {} note{} on where iolab runs it otherwise than fio, or what it adds (-v prints \
             them; the result's notes keep them)",
            p.job,
            notes.len(),
            if notes.len() == 1 { "" } else { "s" }
        ));
    }
    lines
}

/// How the options --fio-lenient ignored are listed.
const IGNORED: &str = "ignored (--fio-lenient): ";

/// Every run the file asks for, resolved before any runs: a job that cannot run refuses the file; with
/// --across-methods a method that cannot do a job is skipped, with its reason printed.
/// What a guest would refuse of `--fio` (a job file it reads as this machine does: see
/// `command_line::same_file`), refused here before anything is fetched or booted: a file iolab cannot
/// read or parse (its syntax, its includes and their bounds, a `--fio-section` it lacks). Its options
/// are mapped in the guest: the mapping reads the size and kind of the targets, which are the guest's.
pub(crate) fn check_elsewhere(f: &FioArgs) -> Result<(), Error> {
    let path = f.fio.as_deref().expect("only called with --fio");
    fio_job::check_file(path, f.fio_section.as_deref())
        .map_err(|e| Error::usage("--fio", e.strip_prefix("--fio: ").unwrap_or(&e)))
}

/// The job file's jobs, mapped (a file iolab cannot read or map: refused naming --fio).
fn load(f: &FioArgs) -> Result<Vec<Mapped>, Error> {
    let path = f.fio.as_deref().expect("only called with --fio");
    fio_job::load(path, f.fio_section.as_deref(), f.fio_lenient).map_err(|e| {
        Error::usage(
            "--fio",
            e.strip_prefix("--fio: ")
                .map(String::from)
                .unwrap_or(e.clone()),
        )
    })
}

fn plan(a: &RunArgs, f: &FioArgs, jobs: &[Mapped]) -> Result<Vec<Planned>, Error> {
    let mut plan = Vec::new();
    for j in jobs {
        check_log_flags(a, j)?;
        let mut said: Vec<String> = j.notes.clone();
        if !j.ignored.is_empty() {
            said.push(format!("{IGNORED}{}", j.ignored.join(", ")));
        }
        if !f.across_methods {
            let (spec, note) = resolve(j.raw.clone(), a).map_err(|e| in_job(e, &j.name))?;
            said.extend(note);
            plan.push(Planned {
                job: j.name.clone(),
                label: format!("'{}'", j.name),
                spec,
                said,
            });
            continue;
        }
        let mut cannot = Vec::new();
        for (m, raw) in fio_job::across_methods(j) {
            match resolve(raw, a) {
                Ok((spec, note)) => plan.push(Planned {
                    job: j.name.clone(),
                    label: format!("'{}' with {}", j.name, m.name()),
                    spec,
                    said: said.iter().cloned().chain(note).collect(),
                }),
                Err(e) if a.verbose => {
                    errln(&format!(
                        "iolab: fio job '{}': not with {}: {e}",
                        j.name,
                        m.name()
                    ));
                }
                Err(_) => cannot.push(m.name()),
            }
        }
        if !cannot.is_empty() {
            errln(&format!(
                "iolab: fio job '{}': not with {} (each one's reason with -v)",
                j.name,
                cannot.join(", ")
            ));
        }
    }
    Ok(plan)
}

/// A job's spec with the flags given beside --fio over it: a flag that sets the amount, the pace or the
/// method replaces what the job set of the same (--ops drops the job's size; --method psync drops an
/// io_uring job's depth), and what it says of that where the job's meaning changes.
fn resolve(raw: RawSpec, a: &RunArgs) -> Result<(Spec, Option<String>), Error> {
    let flags = a.raw();
    let mut raw = raw;
    let mut note = None;
    // The job's random map (`once`, which fio's random I/O means) is its random draw: a --pattern given
    // drops it, and a method whose client draws its own offsets (offload's) draws with replacement.
    let mapped_once = raw.get("distribution").is_some_and(|d| d.text() == "once");
    if mapped_once && !flags.has("distribution") {
        let method = flags.get("method").or(raw.get("method"));
        let own_draw = method
            .and_then(|m| MethodKind::parse(&m.text()))
            .is_some_and(|m| m.info().exec == Exec::OutOfProcess);
        if own_draw {
            note = Some(
                "fio visits every block once per pass (its random map); this method's client draws \
                 its offsets with replacement, as fio does with norandommap=1"
                    .to_string(),
            );
        }
        let sequential = flags.get("pattern").is_some_and(|p| p.text() != "rand");
        if own_draw || sequential {
            raw = raw.without("distribution");
        }
    }
    let groups: [&[&str]; 3] = [
        &["ops", "size", "duration"],
        &["rate-iops", "rate"],
        &["method"],
    ];
    for g in groups {
        if g.iter().any(|k| flags.has(k)) {
            for k in g {
                raw = raw.without(k);
            }
        }
    }
    if let Some(m) = flags
        .get("method")
        .and_then(|m| MethodKind::parse(&m.text()))
    {
        use iolab_engine::spec::options::Applies;
        for (k, kind) in [
            ("qd", Applies::Depth),
            ("batch", Applies::Batch),
            ("reap-at-most", Applies::Reaping),
        ] {
            if !m.info().takes(kind) {
                raw = raw.without(k);
            }
        }
    }
    Ok((raw.merge(flags).resolve()?, note))
}

/// Flags beside --fio that would make a job's fio logs other than its options plan them: --op-log (the
/// log options decide what is kept), a --duration where every I/O is kept (its count must be known
/// before the run), --threads or --inflight (the logs are planned per clone of its numjobs), and
/// --target beside an I/O log (which names the job's file as fio does).
fn check_log_flags(a: &RunArgs, j: &Mapped) -> Result<(), Error> {
    let Some(l) = &j.logs else {
        return Ok(());
    };
    let flags = a.raw();
    let mut opts: Vec<&str> = l.logs.iter().map(|(k, _)| k.option()).collect();
    opts.dedup();
    let logs = opts.join(", ");
    let iolog = l
        .logs
        .iter()
        .any(|(k, _)| *k == fio_job::logs::LogKind::Iolog);
    let refuse = |flag: &str, why: String| {
        Err(Error::usage(
            format!("--{flag}"),
            format!("fio job '{}' writes {logs}: {why}", j.name),
        ))
    };
    if flags.has("op-log") {
        return refuse(
            "op-log",
            "its log options decide what the run keeps: drop --op-log".into(),
        );
    }
    if flags.has("duration") && l.avg_msec == 0 {
        return refuse(
            "duration",
            "every I/O is kept, its room reserved before the run from the I/O count, which a duration \
             leaves unknown: drop --duration, or give --ops or --size"
                .into(),
        );
    }
    for k in ["threads", "inflight"] {
        if flags.has(k) {
            return refuse(
                k,
                format!(
                    "its logs are planned for its {} clone(s) (numjobs): drop --{k}",
                    l.clones
                ),
            );
        }
    }
    if iolog && flags.has("target") {
        return refuse(
            "target",
            "the I/O log names the job's file as fio does: drop --target, or give the job's filename".into(),
        );
    }
    Ok(())
}

/// --across-methods runs every method at the job's requests in flight: a flag that sets the method or the
/// depth would make every row the same run, or another depth.
fn check_across_flags(a: &RunArgs) -> Result<(), Error> {
    let flags = a.raw();
    match ["method", "qd", "threads", "inflight", "batch"].iter().find(|k| flags.has(k)) {
        Some(k) => Err(Error::usage(
            format!("--{k}"),
            "does not go with --across-methods, which runs each method at the job's requests in flight",
        )),
        None => Ok(()),
    }
}

/// What is checked before any job runs: a method for the job, the outputs (one run's result each; the
/// fio JSON file apart from the others and the targets), the time series, and each job's target (an
/// existing file written only with --overwrite, a directory that exists).
fn checks(a: &RunArgs, f: &FioArgs, plan: &[Planned]) -> Result<Outputs, Error> {
    let Some(first) = plan.first() else {
        return Err(Error::usage(
            "--across-methods",
            "no method can run this job (-v gives each one's reason)",
        ));
    };
    let mut others: Vec<(&str, Option<&Path>)> =
        plan.iter().filter_map(|p| target_file(&p.spec)).collect();
    others.push(("--fio-json", f.fio_json.as_deref()));
    let outputs = a.outputs(&others)?;
    let given = [
        ("--json", &a.json),
        ("--csv", &a.csv),
        ("--md", &a.md),
        ("--csv-intervals", &a.csv_intervals),
    ];
    if let (true, Some((flag, _))) = (plan.len() > 1, given.iter().find(|(_, p)| p.is_some())) {
        return Err(Error::usage(
            *flag,
            format!(
                "writes one run's result; this job file makes {} runs: give --fio-section NAME for one job \
                 (the text shows every run; --fio-json holds them all)",
                plan.len()
            ),
        ));
    }
    crate::cmd_run::check_intervals_can_be_written(a, &first.spec)?;
    if let Some(p) = &f.fio_json {
        crate::cmd_run::check_fio_json(p, 1)?;
    }
    for p in plan {
        preflight(&p.spec).map_err(|e| in_job(e, &p.job))?;
    }
    Ok(outputs)
}

/// The target checks that would otherwise fail a later job after earlier ones ran: an existing regular
/// file written without --overwrite, a directory that does not exist. The target's own setup checks again.
fn preflight(s: &Spec) -> Result<(), Error> {
    if TargetKind::stream_named(&s.target).is_some() {
        return Ok(());
    }
    // A file per thread (fio's clones without a filename): each thread's file.
    if let Some(t) = per_thread::template(&s.target) {
        return (0..s.threads).try_for_each(|i| preflight_file(s, &per_thread::path_of(t, i)));
    }
    preflight_file(s, &s.target)
}

fn preflight_file(s: &Spec, target: &Path) -> Result<(), Error> {
    // A /proc or /sys file is no storage: refused as such, whatever --overwrite says; and a kind no
    // run takes (a directory, /dev/full).
    iolab_engine::target::check_kernel_interface(target)?;
    iolab_engine::target::check_kind(target)?;
    let shown = target.display();
    match std::fs::symlink_metadata(target) {
        Ok(md) if md.is_file() && s.op.writes() && !s.method.info().no_data && !s.overwrite => Err(Error::usage(
            "--overwrite",
            format!("{shown} exists; add --overwrite to write into it, or give the job another filename"),
        )),
        Ok(_) => Ok(()),
        Err(_) => match target.parent().filter(|d| !d.as_os_str().is_empty()) {
            Some(d) if !d.is_dir() => Err(Error::usage(
                "--target",
                match std::fs::metadata(d) {
                    Ok(_) => format!("{shown}: {} is not a directory", d.display()),
                    Err(_) => format!("{shown}: its directory {} does not exist", d.display()),
                },
            )),
            _ => Ok(()),
        },
    }
}

fn in_job(e: Error, job: &str) -> Error {
    match e {
        Error::Usage { flag, msg } => Error::Usage {
            flag: format!("--fio job '{job}': {flag}"),
            msg,
        },
        e => e,
    }
}

/// The runs side by side, fastest first by ops per second.
fn table(done: &[(String, RunResult)]) -> String {
    let mut rows: Vec<&(String, RunResult)> = done.iter().collect();
    rows.sort_unstable_by(|a, b| b.1.iops.total_cmp(&a.1.iops));
    let w = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0).max(3);
    let mut o = format!(
        "\n{:<w$}  {:>12}  {:>10}  {:>10}  {:>10}\n",
        "run", "ops/s", "MiB/s", "p50", "p99"
    );
    for (l, r) in rows {
        let lat = |v: f64| {
            if r.latency.count > 0 {
                fmt_ns(v)
            } else {
                "-".into()
            }
        };
        o.push_str(&format!(
            "{l:<w$}  {:>12.0}  {:>10.1}  {:>10}  {:>10}\n",
            r.iops,
            r.mib_s,
            lat(r.latency.p50_ns),
            lat(r.latency.p99_ns)
        ));
    }
    o.push_str(
        "fastest first; one run each, alone, one after the other (fio runs jobs without stonewall at once): \
         close rates may swap places on another run\n",
    );
    o
}
