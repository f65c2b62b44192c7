//! `iolab survey --target PATH`: the user's own device and workload, every method at the same requests in
//! flight ([`iolab_lab::survey_workload`]).

use crate::survey_args::SurveyArgs;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use iolab_lab::survey::{OnRun, SurveyOptions};
use iolab_lab::survey_workload::{parse_kind, survey, Asked, WorkloadOptions};
use iolab_report::export::{Document, Outputs};
use std::path::Path;

/// Seconds per method and workload over the first rounds when not given (a workload survey runs many
/// more cells than the main job), and the seconds after which no further round starts.
const MAX_S: f64 = 0.6;
pub(crate) const MAX_TIME_S: f64 = 60.0;

pub(crate) fn cmd(
    a: &SurveyArgs,
    target: &Path,
    o: SurveyOptions,
    on_run: OnRun,
) -> Result<i32, Error> {
    let opts = WorkloadOptions {
        target: target.to_path_buf(),
        asked: asked(a)?,
        file_size: a
            .file_size
            .as_deref()
            .map(|s| iolab_engine::units::parse_size(s).map_err(|m| Error::usage("--file-size", m)))
            .transpose()?,
        overwrite: a.overwrite,
        allow_device_writes: a.allow_device_writes,
        ops: o.ops,
        max_s: if a.max_seconds.is_some() {
            o.max_s
        } else {
            MAX_S
        },
        rounds: o.rounds,
        max_time_s: o.max_time_s,
        latency_sample: o.latency_sample,
        on_run: Some(on_run),
        // Before the first run, what the survey will do; wrapped to the terminal as the answer is.
        on_plan: Some(Box::new(|line| {
            let width = iolab_report::text::width_for(1);
            let _ = crate::output::outln(
                iolab_report::text::wrap::wrap_hanging(&line, width, 2).trim_end(),
            );
        })),
    };
    if a.tmp_dir.is_some() {
        return Err(Error::usage(
            "--tmp-dir",
            "applies to the main job; with --target the files go where --target says",
        ));
    }
    let outputs = Outputs::from_flags(None, a.md.as_deref(), None, None, &[])?;
    let clk = clock::calibrate(20);
    let s = survey(&opts, &clk)?;
    if s.runs.iter().all(|r| r.result.is_none()) {
        return Err(nothing_ran(&s.runs));
    }
    let doc = Document::WorkloadSurvey {
        result: &s,
        verbose: a.verbose,
    };
    let dir = (!a.no_json).then_some(a.results_dir.as_path());
    crate::output::show_and_save(
        &outputs,
        &doc,
        dir,
        "survey-workload",
        s.host.started_unix_s,
    )?;
    // A run that failed at run time (no space, an I/O error, a replaced file) is a failure of the survey,
    // said above with its reason; a method that cannot do a workload is not.
    let failed = s.runs.iter().filter(|r| r.failed_at_run_time()).count();
    if failed > 0 {
        crate::output::errln(&format!(
            "iolab survey: {failed} of {} method-workload rows failed at run time (FAILED above)",
            s.runs.len()
        ));
        return Ok(1);
    }
    Ok(0)
}

/// Every row refused or failed: the survey did nothing it was asked, and says why as `run` would for the
/// same input, with the refusal of the baseline method (pread/pwrite can do every workload; what stopped
/// it stopped the target, not a method), the one most of its rows got.
fn nothing_ran(runs: &[iolab_lab::survey::SurveyRun]) -> Error {
    let why = |baseline: bool| {
        let mut seen: Vec<(&str, usize)> = Vec::new();
        let refusals = runs
            .iter()
            .filter(|r| !baseline || r.method.name() == iolab_lab::survey_workload::BASELINE)
            .filter_map(|r| r.unavailable.as_deref());
        for u in refusals {
            match seen.iter_mut().find(|(t, _)| *t == u) {
                Some((_, n)) => *n += 1,
                None => seen.push((u, 1)),
            }
        }
        // The most rows; of as many, the first.
        seen.iter()
            .rev()
            .max_by_key(|(_, n)| *n)
            .map(|(t, _)| t.to_string())
    };
    let Some(text) = why(true).or_else(|| why(false)) else {
        return Error::Runtime("survey: no method ran on this target".into());
    };
    // A refusal of the input is "--flag: why" (a usage error); anything else failed at run time.
    match text.split_once(": ") {
        Some((flag, msg)) if flag.starts_with("--") && !flag.contains(' ') => {
            Error::usage(flag, msg)
        }
        _ => Error::Runtime(format!("survey: no method ran on this target: {text}")),
    }
}

/// Each value once, in the order given (`--bs 4k,4096` is one block size).
fn dedup<T: PartialEq + Clone>(v: &mut Vec<T>) {
    let mut seen: Vec<T> = Vec::new();
    v.retain(|x| {
        let new = !seen.contains(x);
        if new {
            seen.push(x.clone());
        }
        new
    });
}

/// The workloads asked by the flags (each a comma list).
fn asked(a: &SurveyArgs) -> Result<Asked, Error> {
    let list = |v: &Option<String>| -> Vec<String> {
        v.as_deref()
            .map(|s| s.split(',').map(|x| x.trim().to_string()).collect())
            .unwrap_or_default()
    };
    let kinds = list(&a.workload)
        .iter()
        .map(|w| parse_kind(w).map_err(|m| Error::usage("--workload", m)))
        .collect::<Result<Vec<_>, _>>()?;
    let bs = list(&a.bs)
        .iter()
        .map(|b| match iolab_engine::units::parse_size(b) {
            Ok(0) => Err(Error::usage(
                "--bs",
                "0 is not accepted; expected 1 byte or more",
            )),
            Ok(n) => Ok(n),
            Err(m) => Err(Error::usage("--bs", m)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let inflight = list(&a.inflight)
        .iter()
        .map(|n| match iolab_engine::units::parse_count(n) {
            Ok(v) if (1..=1024).contains(&v) => Ok(v as u32),
            Ok(v) => Err(Error::usage(
                "--inflight",
                format!("{v} is not accepted; expected 1 to 1024 requests in flight"),
            )),
            Err(m) => Err(Error::usage("--inflight", m)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (mut kinds, mut bs, mut inflight) = (kinds, bs, inflight);
    dedup(&mut kinds);
    dedup(&mut bs);
    dedup(&mut inflight);
    let direct = match (a.direct, a.buffered) {
        (true, _) => vec![true],
        (_, true) => vec![false],
        _ => Vec::new(),
    };
    Ok(Asked {
        kinds,
        bs,
        inflight,
        direct,
    })
}
