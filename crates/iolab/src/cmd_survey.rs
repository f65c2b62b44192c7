//! `iolab survey` (and `iolab` without a command): every method, 4 B and 4 KiB, /dev/null and a new file.

use crate::output::{check_dir_path, err_bytes, outln};
use crate::survey_args::SurveyArgs;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use iolab_report::export::{Document, Outputs};

pub(crate) fn cmd_survey(a: &SurveyArgs) -> Result<i32, Error> {
    iolab_engine::cleanup::install_signal_handler();
    let mut opts = options(a, true)?;
    if let Some(t) = &a.target {
        return crate::cmd_survey_workload::cmd(a, t, opts, progress());
    }
    let outputs = Outputs::from_flags(None, a.md.as_deref(), None, None, &[])?;
    opts.on_run = Some(progress());
    let clk = clock::calibrate(20);
    let s = iolab_lab::survey::survey(&opts, &clk)?;
    // The tables, the Markdown and the JSON file are all tried; then the first failure is the error.
    let doc = Document::Survey {
        result: &s,
        verbose: a.verbose,
    };
    let dir = (!a.no_json).then_some(a.results_dir.as_path());
    crate::output::show_and_save(&outputs, &doc, dir, "survey", s.host.started_unix_s)?;
    // A run that failed at run time (no space, an I/O error) is a failure of the survey, said above.
    let failed = s.runs.iter().filter(|r| r.failed_at_run_time()).count();
    if failed > 0 {
        crate::output::errln(&format!(
            "iolab survey: {failed} of {} runs failed at run time (their rows say why)",
            s.runs.len()
        ));
        return Ok(1);
    }
    Ok(0)
}

/// What the survey shows as it goes: on a terminal's stderr one status line (the run, the time spent and
/// an estimate of the time left), cleared before the answer; when stdout is not a terminal (`iolab > log`,
/// a pipe), a plain line there at every tenth of the runs, so that the log grows and says how far it got.
pub(crate) fn progress() -> iolab_lab::survey::OnRun {
    let status = iolab_sys::isatty(2);
    let log = !iolab_sys::isatty(1);
    // One line, cut to the terminal's width so that it never wraps (a wrapped line is not cleared).
    let width = iolab_report::text::width_for(2)
        .unwrap_or(80)
        .saturating_sub(1);
    let start = std::time::Instant::now();
    let logged = std::cell::Cell::new(0);
    // Where the current round began (its number, the runs and seconds before it).
    let began = std::cell::Cell::new((0u32, 0usize, 0.0f64));
    Box::new(move |i, n, c, round| {
        let spent = start.elapsed().as_secs_f64();
        if began.get().0 != round {
            began.set((round, i.saturating_sub(1), spent));
        }
        // The runs left at the rate this round's went once it has a few (the first round traces the block
        // layer and lays out files, so it is slower than the rest), else at the rate of all so far: an
        // estimate, said as one.
        let (_, i0, t0) = began.get();
        let rate = if round > 1 && i >= i0 + 5 {
            (spent - t0) / (i - i0) as f64
        } else {
            spent / i.max(1) as f64
        };
        let left = if i < n {
            format!(", about {:.0} s left", rate * (n - i) as f64)
        } else {
            String::new()
        };
        if status {
            // The last run clears the status line: the answer follows, not a stale "390/390".
            let text = if i == n {
                "\r\x1b[2K".to_string()
            } else {
                // The count and the time first: a narrow terminal cuts the run's target, not the ETA.
                let line = format!(
                    "iolab survey: run {i}/{n}, {spent:.0} s{left}: round {round}, {} {} -> {}",
                    c.method.name(),
                    iolab_engine::units::fmt_size(c.bs),
                    c.target
                );
                format!("\r\x1b[2K{}", cut_to(&line, width))
            };
            err_bytes(text.as_bytes());
        }
        if log && i * 10 / n > logged.get() {
            logged.set(i * 10 / n);
            // A closed or full stdout is told by the answer's write, at the end.
            let _ = outln(&format!("progress: run {i} of {n}, {spent:.0} s{left}"));
        }
    })
}

/// `line` in at most `width` characters: whole, or cut at a space with "..." after it (never mid-word).
fn cut_to(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let room: String = line.chars().take(width.saturating_sub(3)).collect();
    // Cut after a whole word: where the next character is a space, all of the room is whole words.
    let next = line[room.len()..].chars().next();
    let at = match next {
        Some(' ') => room.len(),
        _ => room.rfind(' ').unwrap_or(room.len()),
    };
    format!("{}...", room[..at].trim_end_matches([',', ':']))
}

/// The survey's options from the flags.
/// What a survey of another machine (a fleet's host, a guest) would refuse of `a`, refused here first:
/// all but its places, which are the other machine's.
#[cfg(any(feature = "vm", feature = "fleet"))]
pub(crate) fn check_elsewhere(a: &SurveyArgs) -> Result<(), Error> {
    options(a, false).map(|_| ())
}

/// The survey's options from its flags; with `here`, its places checked on this machine.
fn options(a: &SurveyArgs, here: bool) -> Result<iolab_lab::survey::SurveyOptions, Error> {
    let mut opts = iolab_lab::survey::SurveyOptions::default();
    if !a.no_json && here {
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
    if here {
        iolab_engine::paths::check_writable_dir(tmp_flag, &opts.tmp_parent)?;
    }
    if let Some(n) = &a.ops {
        opts.ops = iolab_engine::units::parse_count(n).map_err(|m| Error::usage("--ops", m))?;
        if opts.ops == 0 {
            return Err(Error::usage(
                "--ops",
                "0 is not accepted; expected 1 or more operations",
            ));
        }
        let most = iolab_engine::spec::MAX_OPS;
        if opts.ops > most {
            return Err(Error::usage(
                "--ops",
                format!("{n} is beyond the longest run iolab times: at most {most} ops (an op a nanosecond for 365 days)"),
            ));
        }
    }
    if let Some(n) = &a.latency_sample {
        opts.latency_sample = Some(latency_sample(n)?);
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
    if let Some(t) = &a.max_time {
        opts.max_time_s =
            iolab_engine::units::parse_duration(t).map_err(|m| Error::usage("--max-time", m))?;
        if !(0.0..=iolab_engine::spec::MAX_DURATION_S).contains(&opts.max_time_s) {
            return Err(Error::usage(
                "--max-time",
                format!("'{t}' is not accepted; expected 0 to 365 days of seconds"),
            ));
        }
    } else if a.target.is_some() {
        opts.max_time_s = crate::cmd_survey_workload::MAX_TIME_S;
    }
    Ok(opts)
}

/// `--latency-sample N`: 0 (no op timed) to the most ops a run lets pass between clock reads.
fn latency_sample(n: &str) -> Result<u64, Error> {
    let flag = "--latency-sample";
    let v = iolab_engine::units::parse_count(n).map_err(|m| Error::usage(flag, m))?;
    let most = iolab_engine::spec::MAX_CLOCK_EVERY;
    if v > most {
        return Err(Error::usage(
            flag,
            format!(
                "one op in {v}: give 0 (none), 1 (every op) or up to {}",
                iolab_engine::units::thousands_u64(most)
            ),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    /// The status line fits the terminal, cut between words, the count and the time left kept.
    #[test]
    fn the_status_line_is_cut_between_words_keeping_the_time_left() {
        let line = "iolab survey: run 12/390, 35 s, about 80 s left: round 1, psync 4 KiB -> /var/tmp/a-long-dir/f.dat";
        let cut = super::cut_to(line, 79);
        assert!(cut.chars().count() <= 79, "{cut}");
        assert!(
            cut.starts_with("iolab survey: run 12/390, 35 s, about 80 s left"),
            "{cut}"
        );
        assert!(cut.ends_with("..."), "{cut}");
        assert_eq!(super::cut_to("short line", 79), "short line");
        let narrow = super::cut_to(line, 40);
        assert_eq!(narrow, "iolab survey: run 12/390, 35 s, about...");
    }
}
