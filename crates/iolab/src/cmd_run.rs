//! `iolab run`: one workload, or with `--repeat N` N runs of it and the statistics of every figure.

use crate::output::{err_bytes, errln, out, target_file};
use crate::progress::{run_bar, Progress};
use crate::run_args::RunArgs;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use iolab_engine::spec::{RawSpec, RunsOn, Spec};
use iolab_lab::series;
use iolab_report::export::{Document, Outputs};
use iolab_report::TableExporter;

pub(crate) fn cmd_run(a: &RunArgs, fio_json: Option<&std::path::Path>) -> Result<i32, Error> {
    let spec = resolve(a, RunsOn::Here)?;
    let mut others: Vec<_> = target_file(&spec).into_iter().collect();
    others.push(("--fio-json", fio_json));
    let outputs = a.outputs(&others)?;
    let repeat = repeat_count(a)?;
    if let Some(p) = fio_json {
        check_fio_json(p, repeat)?;
    }
    iolab_engine::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    if repeat > 1 {
        return run_repeated(&outputs, &spec, &clk, repeat);
    }
    let bar = if outputs.text_to_stderr() {
        None
    } else {
        run_bar()
    };
    let r = iolab_lab::run::run_with(&spec, &clk, bar.as_ref().map(|l| &l.board));
    if let Some(l) = bar {
        l.stop();
    }
    let r = r?;
    outputs.write(&Document::Run {
        result: &r,
        verbose: a.verbose,
    })?;
    #[cfg(feature = "fio-jobs")]
    if let Some(p) = fio_json {
        write_fio_json(p, &[("iolab".to_string(), &r)])?;
    }
    if let Some(v) = &r.verify {
        if v.mismatches > 0 {
            errln(&format!(
                "iolab: verify: {} of {} blocks {} (first at byte offset {})",
                v.mismatches,
                v.blocks_checked,
                mismatched(&r.spec),
                v.first_mismatch_offsets.first().copied().unwrap_or(0)
            ));
            return Ok(1);
        }
    }
    Ok(0)
}

/// The run's spec (its `--spec` file, then its flags) resolved for a run `at` this machine or another
/// (`iolab vm` and `iolab fleet` check the run the guest or each host will make), and the time series it
/// asks for checked against it.
pub(crate) fn resolve(a: &RunArgs, at: RunsOn) -> Result<Spec, Error> {
    let file = match &a.spec {
        Some(p) => RawSpec::from_toml_file(p)?,
        None => RawSpec::default(),
    };
    let spec = file.merge(a.raw()).resolve_on(at)?;
    check_intervals_can_be_written(a, &spec)?;
    Ok(spec)
}

/// `--fio-json`: a new file, for one run (a --repeat's runs are one workload's statistics). Called
/// before any run: the runs then keep their whole latency histogram (`Summary::hist_ns`, as a fleet's
/// runs do), which fio's bins are counted from.
pub(crate) fn check_fio_json(p: &std::path::Path, repeat: usize) -> Result<(), Error> {
    if cfg!(not(feature = "fio-jobs")) {
        return Err(Error::usage(
            "--fio-json",
            "this iolab is a board's build, without fio's formats (3 MiB budget): run with a host build \
             of iolab to write fio's json+",
        ));
    }
    if repeat > 1 {
        return Err(Error::usage(
            "--fio-json",
            "writes runs as fio's jobs; --repeat makes statistics of one workload: drop one of them",
        ));
    }
    if p == std::path::Path::new("-") {
        return Err(Error::usage(
            "--fio-json",
            "give a file name: stdout carries the run's text (--json - gives iolab's JSON there)",
        ));
    }
    iolab_engine::paths::check_new_path("--fio-json", p)?;
    iolab_engine::measure::hist::keep_whole_histograms();
    Ok(())
}

/// The runs as fio's json+ document, in a new file: each run as (job name, result), or (job name,
/// result, how fio reports the job).
#[cfg(feature = "fio-jobs")]
pub(crate) fn write_fio_json<'a, R>(p: &std::path::Path, runs: &'a [R]) -> Result<(), Error>
where
    &'a R: Into<iolab_report::fio_json::FioRun<'a>>,
{
    let runs: Vec<iolab_report::fio_json::FioRun> = runs.iter().map(Into::into).collect();
    let doc = iolab_report::fio_json::document(&runs);
    let bytes =
        serde_json::to_vec_pretty(&doc).map_err(|e| Error::Output(format!("--fio-json: {e}")))?;
    crate::output::write_new("--fio-json", p, &bytes)
}

/// `--csv-intervals` asks for a time series: refused where none can be recorded (`--log-interval 0`,
/// or a method whose client is a process of its own, which keeps no intervals).
pub(crate) fn check_intervals_can_be_written(a: &RunArgs, spec: &Spec) -> Result<(), Error> {
    if a.csv_intervals.is_none() {
        return Ok(());
    }
    let why = if spec.log_interval() == (0, false) {
        "--log-interval 0 turns the time series off: drop one of the two"
    } else if spec.method.info().exec == iolab_engine::method::Exec::OutOfProcess {
        "this method's client runs as a process of its own and keeps no time series"
    } else {
        return Ok(());
    };
    Err(Error::usage("--csv-intervals", why))
}

use iolab_lab::series::MAX_REPEAT;

/// `--repeat N` (1 without it).
pub(crate) fn repeat_count(a: &RunArgs) -> Result<usize, Error> {
    match &a.repeat {
        None => Ok(1),
        Some(n) => match iolab_engine::units::parse_count(n) {
            Ok(0) => Err(Error::usage(
                "--repeat",
                "0 is not accepted; expected 1 or more runs",
            )),
            Ok(k) if k > MAX_REPEAT => Err(Error::usage(
                "--repeat",
                format!(
                    "{n}: at most {} runs are accepted (each run's figures are kept for the statistics)",
                    iolab_engine::units::thousands_u64(MAX_REPEAT)
                ),
            )),
            Ok(k) => Ok(k as usize),
            Err(m) => Err(Error::usage("--repeat", m)),
        },
    }
}

/// The run's JSON document, its verdict included (what a suite's record carries too).
fn to_value(r: &iolab_engine::result::RunResult) -> Result<serde_json::Value, Error> {
    iolab_lab::verdict::result_value(r)
}

/// `run --repeat N`: N runs of one workload, each printed as one line, then the statistics of every figure.
/// What mismatching blocks differ from: a write run's own writes, or (a read run) the pattern of its seed.
pub(crate) fn mismatched(spec: &Spec) -> String {
    if spec.op == iolab_engine::spec::OpKind::Read {
        format!(
            "differ from iolab's pattern for seed {} (what a write run with that seed writes)",
            spec.seed_text
        )
    } else {
        "differ from what was written".to_string()
    }
}

fn run_repeated(
    outputs: &Outputs,
    spec: &Spec,
    clk: &clock::ClockInfo,
    n: usize,
) -> Result<i32, Error> {
    let to_stderr = outputs.text_to_stderr();
    let say = |t: String| -> Result<(), Error> {
        if to_stderr {
            let w = iolab_report::text::width_for(2);
            err_bytes(iolab_report::text::wrap_text(&t, w).as_bytes());
            Ok(())
        } else {
            out(&t)
        }
    };
    let mut runs = Vec::with_capacity(n);
    let mut header = String::new();
    let mut mismatches = 0u64;
    // The status line of each run is drawn by a helper process (see Progress), on hold while a run's
    // lines are printed.
    let mut progress = Progress::new("run --repeat", if to_stderr { 0 } else { n });
    for i in 0..n {
        progress.start("");
        let r = iolab_lab::run::run_with(spec, clk, progress.board().as_ref())?;
        // The status line is cleared while this run's lines are printed.
        progress.hold();
        let v = to_value(&r)?;
        if i == 0 {
            // The first run's header says what runs (the workload is the same for all).
            let text = TableExporter.run_text(&r);
            header = text.lines().next().unwrap_or_default().to_string();
            say(header.clone() + "\n")?;
        }
        say(iolab_report::series_view::repeat_line(i, n, &v) + "\n")?;
        progress.release();
        mismatches += r.verify.as_ref().map_or(0, |v| v.mismatches);
        runs.push(v);
    }
    progress.finish();
    let summary = series::summarize(&runs);
    outputs.write(&Document::Repeat {
        header: &header,
        runs: &runs,
        summary: &summary,
    })?;
    if mismatches > 0 {
        errln(&format!(
            "iolab: verify: {mismatches} blocks {}",
            mismatched(spec)
        ));
        return Ok(1);
    }
    Ok(0)
}
