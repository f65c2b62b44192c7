//! `iolab probe`: every method and option tried (`iolab_lab::probe_dirs`), printed as a table
//! (`iolab_report::probe`) and optionally as JSON.

use clap::Args;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use iolab_report::export::{Document, Outputs};
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ProbeArgs {
    /// Write the probe result (JSON) to FILE ("-" for stdout). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
}

pub(crate) fn cmd_probe(a: &ProbeArgs) -> Result<i32, Error> {
    let outputs = Outputs::from_flags(a.json.as_deref(), None, None, None, &[])?;
    iolab_engine::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    let p = iolab_lab::probe_dirs::probe_here(&clk)?;
    outputs.write(&Document::Probe(&p))?;
    Ok(0)
}
