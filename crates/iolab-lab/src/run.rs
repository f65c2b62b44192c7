//! Running one spec, as every command does: the engine's runner (or, for `--offload-partition vm`, the
//! client in a guest partition), then the derived figures and the findings that read the result.

use crate::findings;
use iolab_engine::error::Result;
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::progress::Board;
use iolab_engine::registry::Run;
use iolab_engine::result::RunResult;
use iolab_engine::spec::{Partition, Spec};

/// Runs `spec` with an already calibrated clock and adds what the lab knows of the result.
pub fn run(spec: &Spec, clock: &ClockInfo) -> Result<RunResult> {
    run_with(spec, clock, None)
}

/// [`run`], telling `board` (a progress display's) how the run goes.
pub fn run_with(spec: &Spec, clock: &ClockInfo, board: Option<&Board>) -> Result<RunResult> {
    let out_of_process = matches!(spec.method.run(), Run::Process(_));
    let mut r = if spec.offload.partition == Partition::Vm {
        iolab_guest::partition::run(spec, clock)?
    } else {
        iolab_engine::run::run_with(spec, clock, board)?
    };
    if !out_of_process {
        r.derived = findings::derive(&r);
    } else {
        // The kernel's counts are another process's; the CPU per op is the client's own.
        let mut d = std::mem::take(&mut r.derived);
        findings::cpu_figures(&r, &mut d);
        r.derived = d;
    }
    r.findings = findings::findings(&r);
    r.say_why_absent();
    Ok(r)
}
