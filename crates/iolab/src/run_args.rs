//! The arguments of `iolab run` and `iolab sweep`: the result files, and a run's spec, whose flags come
//! from the option table (spec_args.rs).

use crate::spec_args::SpecArgs;
use clap::Args;
use iolab_engine::error::Error;
use iolab_engine::spec::RawSpec;
use iolab_report::export::Outputs;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct RunArgs {
    /// TOML spec file; keys are the flag names without dashes (bs = "4k", file-size = "64m", qd = 8).
    #[arg(long, value_name = "FILE")]
    pub(crate) spec: Option<PathBuf>,
    /// Write the result document (JSON) to FILE ("-" for stdout). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
    /// Run the workload N times; report each figure's median, min, max and standard deviation, and say
    /// when the spread is too wide to trust a comparison [default: 1].
    // "-1" is a value the count check refuses naming --repeat, not an unknown flag "-1".
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub(crate) repeat: Option<String>,
    /// Write one CSV row per run to FILE (columns in the README). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// Write the table as Markdown to FILE. An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) md: Option<PathBuf>,
    /// Write the time series (--log-interval) to FILE: one CSV row per interval of each run (columns in
    /// the README). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv_intervals: Option<PathBuf>,
    /// The whole account after the figures: the clock, the scheduler and steal, the kernel's counters and
    /// tracepoints, every note, and what was timed and excluded (the default shows the figures and what
    /// explains them).
    #[arg(short, long)]
    pub(crate) verbose: bool,
    #[command(flatten)]
    pub(crate) opts: SpecArgs,
}

/// `iolab run`: a workload's arguments, and a fio job file's.
#[derive(Args)]
pub(crate) struct RunCmd {
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) fio: FioArgs,
}

/// `iolab run --fio FILE`: a fio job file's jobs as iolab runs.
#[derive(Args)]
pub(crate) struct FioArgs {
    /// Run a fio job file's jobs, one after the other, each option in fio's meaning.
    #[arg(long, value_name = "JOBFILE", conflicts_with_all = ["spec", "repeat"])]
    pub(crate) fio: Option<PathBuf>,
    /// With --fio: run only the job of this [section].
    #[arg(long, value_name = "NAME", requires = "fio")]
    pub(crate) fio_section: Option<String>,
    /// With --fio: run jobs with options iolab does not honour, listing them.
    #[arg(long, requires = "fio")]
    pub(crate) fio_lenient: bool,
    /// With --fio: run each job by every method that can, at its requests in flight.
    #[arg(long, requires = "fio")]
    pub(crate) across_methods: bool,
    /// Also write the runs as fio's json+ (for fio_jsonplus_clat2csv, fio-plot). Never replaces FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) fio_json: Option<PathBuf>,
}

impl RunArgs {
    /// The spec keys given as flags.
    pub(crate) fn raw(&self) -> RawSpec {
        self.opts.0.clone()
    }

    /// The outputs its flags ask for, each checked before anything runs (none of them one of `others`'
    /// files, such as the target).
    pub(crate) fn outputs(&self, others: &[(&str, Option<&Path>)]) -> Result<Outputs, Error> {
        Outputs::from_flags(
            self.json.as_deref(),
            self.md.as_deref(),
            self.csv.as_deref(),
            self.csv_intervals.as_deref(),
            others,
        )
    }
}
