//! Running one spec as its method's registry line says: in iolab's worker threads by the runner, or as a
//! process of the method's own (offload's sandboxed client), timed from outside.

use crate::error::{Error, Result};
use crate::measure::clock::ClockInfo;
use crate::progress::{Board, Goal, Stage};
use crate::registry::Run;
use crate::result::RunResult;
use crate::runner;
use crate::spec::{ProfileMode, Spec};

/// Runs `spec` with an already calibrated clock (no board to tell).
pub fn run(spec: &Spec, clock: &ClockInfo) -> Result<RunResult> {
    run_with(spec, clock, None)
}

/// Runs `spec`, telling `board` (a progress display's) how it goes.
pub fn run_with(spec: &Spec, clock: &ClockInfo, board: Option<&Board>) -> Result<RunResult> {
    match spec.method.run() {
        Run::Threads { drive, .. } => runner::run_with(spec, clock, board, drive),
        Run::Process(run) => {
            if spec.profile != ProfileMode::None {
                return Err(Error::usage(
                    "--profile",
                    format!(
                        "--method {} runs its client as a process of its own, which iolab does not sample \
                         yet: drop --profile",
                        spec.method.name()
                    ),
                ));
            }
            // A client process of its own, timed from outside (see offload/mod.rs); it does not report
            // its ops, so the display shows the time only.
            if let Some(b) = board {
                b.begin(Stage::Timed, Some(Goal::of_spec(spec)));
                b.started(0, 0.0);
            }
            run(spec, clock)
        }
    }
}
