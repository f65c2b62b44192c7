//! `iolab survey` (and `iolab` without a command): every method, 4 B and 4 KiB, /dev/null and a new file.

use crate::output::{check_dir_path, err_bytes, outln, write_new_in};
use clap::Args;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use iolab_report::export::{Document, Exporter, Json, Outputs};
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct SurveyArgs {
    /// Directory for the JSON result (created if missing; a new file is always made).
    #[arg(long, value_name = "DIR", default_value = "iolab-results")]
    pub(crate) results_dir: PathBuf,
    /// Where to create the temporary directory for the file runs [default: $TMPDIR or /tmp].
    #[arg(long, value_name = "DIR")]
    pub(crate) tmp_dir: Option<PathBuf>,
    /// Ops per method, target and block size, split over the rounds (each round's run also stops after its
    /// share of --max-seconds) [default: 200000].
    #[arg(long, value_name = "N")]
    pub(crate) ops: Option<String>,
    /// Time bound per method, target and block size in seconds, split over the rounds [default: 1].
    #[arg(long, value_name = "SECS")]
    pub(crate) max_seconds: Option<String>,
    /// Rounds: every method runs once per round, in alternating order; ranked by the median round, tied
    /// where the rounds overlap [default: 5].
    #[arg(long, value_name = "N")]
    pub(crate) rounds: Option<String>,
    /// Do not write the JSON result.
    #[arg(long)]
    pub(crate) no_json: bool,
    /// Write the tables as Markdown to FILE. An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) md: Option<PathBuf>,
}

pub(crate) fn cmd_survey(a: &SurveyArgs) -> Result<i32, Error> {
    iolab_engine::cleanup::install_signal_handler();
    let mut opts = options(a)?;
    let outputs = Outputs::from_flags(None, a.md.as_deref(), None, None, &[])?;
    if iolab_sys::isatty(2) {
        // One line, cut to the terminal's width so that it never wraps (a wrapped line is not cleared).
        let width = iolab_report::text::width_for(2)
            .unwrap_or(80)
            .saturating_sub(1);
        opts.on_run = Some(Box::new(move |i, n, c, round| {
            err_bytes(
                // The last run clears the status line: the table follows, not a stale "390/390".
                if i == n {
                    "\r\x1b[2K".to_string()
                } else {
                    let line = format!(
                        "iolab survey: run {i}/{n} (round {round}) {} {} B -> {}",
                        c.method.name(),
                        c.bs,
                        c.target
                    );
                    format!("\r\x1b[2K{}", line.chars().take(width).collect::<String>())
                }
                .as_bytes(),
            );
        }));
    }
    let clk = clock::calibrate(20);
    let s = iolab_lab::survey::survey(&opts, &clk)?;
    // The tables, the Markdown and the JSON file are all tried; then the first failure is the error.
    let doc = Document::Survey(&s);
    let shown = outputs.write(&doc);
    let saved = if a.no_json {
        None
    } else {
        let stamp = iolab_engine::units::utc_stamp(s.host.started_unix_s);
        let json = Json.export(&doc).expect("a survey has a JSON document");
        Some(write_new_in(&a.results_dir, "survey", &stamp, &json)?)
    };
    shown?;
    if let Some(p) = saved {
        outln(&format!("result: {}", p.display()))?;
    }
    Ok(0)
}

/// The survey's options from the flags.
fn options(a: &SurveyArgs) -> Result<iolab_lab::survey::SurveyOptions, Error> {
    let mut opts = iolab_lab::survey::SurveyOptions::default();
    if !a.no_json {
        check_dir_path("--results-dir", &a.results_dir)?;
    }
    // The files of the survey's file runs: --tmp-dir, else $TMPDIR (else /tmp), named when unusable.
    let tmp_flag = match (&a.tmp_dir, std::env::var_os("TMPDIR")) {
        (Some(_), _) => "--tmp-dir",
        (None, Some(_)) => "TMPDIR (the environment variable; or give --tmp-dir)",
        (None, None) => "--tmp-dir (the default /tmp)",
    };
    if let Some(d) = &a.tmp_dir {
        opts.tmp_parent = d.clone();
    }
    iolab_engine::paths::check_writable_dir(tmp_flag, &opts.tmp_parent)?;
    if let Some(n) = &a.ops {
        opts.ops = iolab_engine::units::parse_count(n).map_err(|m| Error::usage("--ops", m))?;
        if opts.ops == 0 {
            return Err(Error::usage(
                "--ops",
                "0 is not accepted; expected 1 or more operations",
            ));
        }
    }
    if let Some(s) = &a.max_seconds {
        opts.max_s =
            iolab_engine::units::parse_duration(s).map_err(|m| Error::usage("--max-seconds", m))?;
        if opts.max_s <= 0.0 {
            return Err(Error::usage(
                "--max-seconds",
                "expected a positive number of seconds",
            ));
        }
        let max = iolab_engine::spec::MAX_DURATION_S;
        if opts.max_s > max {
            return Err(Error::usage(
                "--max-seconds",
                format!("'{s}' is beyond the longest run iolab times: at most {max} s (365 days)"),
            ));
        }
    }
    if let Some(r) = &a.rounds {
        let n = iolab_engine::units::parse_count(r).map_err(|m| Error::usage("--rounds", m))?;
        if !(1..=100).contains(&n) {
            return Err(Error::usage(
                "--rounds",
                format!("{n} is not accepted; expected 1 to 100 rounds"),
            ));
        }
        opts.rounds = n as u32;
    }
    Ok(opts)
}
