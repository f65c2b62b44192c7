//! The jobs of a sweep or suite, run one after the other with their records written as each ends.

use super::points::point_label;
use super::recorder::Recorder;
use super::records::record;
use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use serde_json::Value;

/// A workload of its own: given the calibrated clock, returns its result document.
pub type CustomWork = Box<dyn FnOnce(&ClockInfo) -> Result<Value>>;

/// What one point of a sweep or suite does.
pub enum Work {
    /// An iolab run of the spec (or the reason the spec does not apply: recorded as not run).
    Run(Box<Result<iolab_engine::spec::Spec>>),
    /// Not run, with the reason (a method or device this build or machine does not have).
    Unavailable(String),
    /// A workload of its own (suites' decimal lines, the clock's cost) returning its result document.
    Custom(CustomWork),
}

pub struct Job {
    pub point: Vec<(String, String)>,
    pub work: Work,
}

/// What the loop tells its caller, for printing and progress.
pub enum Event<'a> {
    /// Point `i` (0-based) of `n` starts.
    Start { i: usize, n: usize, label: &'a str },
    /// Point `i` finished; its record (with "result", or "error" and "exit_code").
    Done {
        i: usize,
        n: usize,
        label: &'a str,
        rec: &'a Value,
    },
    /// Point `i` was recorded before (`--resume`) and is not run again.
    Skipped { i: usize, n: usize },
}

/// Runs every job whose point the recorder does not hold yet, appending one record per job as it
/// finishes, and telling `board` (a progress display's) what each run does. Returns how many did not run
/// (an error, not applicable or not available). Ctrl-C never returns here: the handler removes iolab's
/// files and exits; what was recorded is already synced.
pub fn run_jobs(
    jobs: Vec<Job>,
    rec: &mut Recorder,
    clk: &ClockInfo,
    board: Option<&iolab_engine::progress::Board>,
    on: &mut dyn FnMut(Event),
) -> Result<usize> {
    let n = jobs.len();
    let mut failed = 0;
    for (i, job) in jobs.into_iter().enumerate() {
        if rec.has(&job.point) {
            on(Event::Skipped { i, n });
            continue;
        }
        let label = point_label(&job.point);
        if let Some(b) = board {
            b.begin(iolab_engine::progress::Stage::Other, None);
        }
        on(Event::Start {
            i,
            n,
            label: &label,
        });
        let outcome = match job.work {
            Work::Run(spec) => (*spec)
                .map_err(|e| Error::usage("--vary", format!("{e}")))
                .and_then(|s| crate::run::run_with(&s, clk, board))
                .and_then(|r| crate::verdict::result_value(&r)),
            Work::Unavailable(why) => Err(Error::Unavailable(why)),
            Work::Custom(f) => f(clk),
        };
        let outcome = outcome.map_err(|e| {
            failed += 1;
            (e.exit_code(), e.to_string())
        });
        let r = record(&job.point, outcome);
        rec.push(r)?;
        let r = rec.last().expect("just pushed");
        on(Event::Done {
            i,
            n,
            label: &label,
            rec: r,
        });
    }
    Ok(failed)
}
