//! `iolab run`: one workload, or with `--repeat N` N runs of it and the statistics of every figure.

use crate::output::{
    check_apart, check_json_path, check_new_path, doc, err_bytes, errln, json_to_stdout, out,
    target_file, write_json, write_md, write_new,
};
use crate::progress::{run_bar, Progress};
use crate::run_args::RunArgs;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use iolab_engine::spec::{RawSpec, Spec};
use iolab_lab::series;
use iolab_report::{Exporter, JsonExporter, TableExporter};

pub(crate) fn cmd_run(a: &RunArgs) -> Result<i32, Error> {
    let file = match &a.spec {
        Some(p) => RawSpec::from_toml_file(p)?,
        None => RawSpec::default(),
    };
    let spec = file.merge(a.raw()).resolve()?;
    if let Some(j) = &a.json {
        check_json_path(j)?;
    }
    if let Some(c) = &a.csv {
        check_new_path("--csv", c)?;
    }
    if let Some(m) = &a.md {
        check_new_path("--md", m)?;
    }
    if let Some(c) = &a.csv_intervals {
        check_new_path("--csv-intervals", c)?;
    }
    let mut files: Vec<_> = target_file(&spec).into_iter().collect();
    files.extend([
        ("--json", a.json.as_deref()),
        ("--csv", a.csv.as_deref()),
        ("--md", a.md.as_deref()),
        ("--csv-intervals", a.csv_intervals.as_deref()),
    ]);
    check_apart(&files)?;
    let repeat = repeat_count(a)?;
    iolab_engine::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    if repeat > 1 {
        return run_repeated(a, &spec, &clk, repeat);
    }
    let bar = if json_to_stdout(a.json.as_deref()) {
        None
    } else {
        run_bar()
    };
    let r = iolab_lab::run::run_with(&spec, &clk, bar.as_ref().map(|l| &l.board));
    if let Some(l) = bar {
        l.stop();
    }
    let r = r?;
    if let Some(c) = &a.csv {
        let rec = series::record(&[], Ok(to_value(&r)?));
        write_new(
            "--csv",
            c,
            (series::csv_header(&[]) + &series::csv_row(&rec, &[])).as_bytes(),
        )?;
    }
    write_intervals(a, &[to_value(&r)?], false)?;
    // With --json -, stdout stays machine-readable: the table goes to stderr.
    // A table that cannot be shown does not cost the --json file: both are tried, then the first
    // failure is the error.
    let table = TableExporter.run_doc(&r);
    let shown = doc(a.json.as_deref(), &table);
    if let Some(j) = &a.json {
        write_json(j, &JsonExporter.run(&r))?;
    }
    write_md(a.md.as_deref(), &table)?;
    shown?;
    if let Some(v) = &r.verify {
        if v.mismatches > 0 {
            errln(&format!(
                "iolab: verify: {} of {} blocks differ from what was written (first at byte offset {})",
                v.mismatches,
                v.blocks_checked,
                v.first_mismatch_offsets.first().copied().unwrap_or(0)
            ));
            return Ok(1);
        }
    }
    Ok(0)
}

/// `--csv-intervals`: a row per interval of each run (with a `run` column after `--repeat`), and a
/// warning when no run recorded any.
fn write_intervals(a: &RunArgs, runs: &[serde_json::Value], numbered: bool) -> Result<(), Error> {
    let Some(c) = &a.csv_intervals else {
        return Ok(());
    };
    let lead = if numbered {
        vec!["run".to_string()]
    } else {
        vec![]
    };
    let mut text = iolab_report::interval_csv::header(&lead);
    let mut any = false;
    for (i, r) in runs.iter().enumerate() {
        let cells = if numbered {
            vec![(i + 1).to_string()]
        } else {
            vec![]
        };
        let rows = iolab_report::interval_csv::rows(&cells, r);
        any |= !rows.is_empty();
        text += &rows;
    }
    write_new("--csv-intervals", c, text.as_bytes())?;
    if !any {
        errln(&format!(
            "iolab: --csv-intervals: {} holds the header only: no run recorded intervals (by default they are \
             kept for timed passes of 2 s or more; --log-interval MS asks for them)",
            c.display()
        ));
    }
    Ok(())
}

/// `--repeat N` (1 without it).
fn repeat_count(a: &RunArgs) -> Result<usize, Error> {
    match &a.repeat {
        None => Ok(1),
        Some(n) => match iolab_engine::units::parse_count(n) {
            Ok(0) => Err(Error::usage(
                "--repeat",
                "0 is not accepted; expected 1 or more runs",
            )),
            Ok(k) => Ok(k as usize),
            Err(m) => Err(Error::usage("--repeat", m)),
        },
    }
}

fn to_value(r: &iolab_engine::result::RunResult) -> Result<serde_json::Value, Error> {
    serde_json::to_value(r).map_err(|e| Error::Runtime(format!("result JSON: {e}")))
}

/// `run --repeat N`: N runs of one workload, each printed as one line, then the statistics of every figure.
fn run_repeated(a: &RunArgs, spec: &Spec, clk: &clock::ClockInfo, n: usize) -> Result<i32, Error> {
    let to_stderr = json_to_stdout(a.json.as_deref());
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
        say(crate::views::repeat_line(i, n, &v) + "\n")?;
        progress.release();
        mismatches += r.verify.as_ref().map_or(0, |v| v.mismatches);
        runs.push(v);
    }
    progress.finish();
    let summary = series::summarize(&runs);
    let tables = crate::views::repeat_doc(&header, &[], &summary);
    doc(a.json.as_deref(), &tables)?;
    write_md(
        a.md.as_deref(),
        &crate::views::repeat_doc(&header, &runs, &summary),
    )?;
    write_repeated(a, &summary, &runs)?;
    if mismatches > 0 {
        errln(&format!(
            "iolab: verify: {mismatches} blocks differ from what was written"
        ));
        return Ok(1);
    }
    Ok(0)
}

/// `--repeat`'s CSV (a row per run) and JSON document (the summary and the runs).
fn write_repeated(
    a: &RunArgs,
    summary: &series::RepeatSummary,
    runs: &[serde_json::Value],
) -> Result<(), Error> {
    if let Some(c) = &a.csv {
        let mut text = series::csv_header(&[]);
        for r in runs {
            text += &series::csv_row(&series::record(&[], Ok(r.clone())), &[]);
        }
        write_new("--csv", c, text.as_bytes())?;
    }
    write_intervals(a, runs, true)?;
    if let Some(j) = &a.json {
        let mut v =
            serde_json::to_vec_pretty(&serde_json::json!({ "repeat": summary, "runs": runs }))
                .map_err(|e| Error::Runtime(format!("result JSON: {e}")))?;
        v.push(b'\n');
        write_json(j, &v)?;
    }
    Ok(())
}
