//! `iolab probe`: every method and option tried (`iolab_lab::probe_dirs`), printed as a table
//! (`iolab_report::probe`) and optionally as JSON.

use crate::output::{check_json_path, doc, write_json};
use clap::Args;
use iolab_engine::error::Error;
use iolab_engine::measure::clock;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ProbeArgs {
    /// Write the probe result (JSON) to FILE ("-" for stdout). An existing FILE is not replaced.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
}

pub(crate) fn cmd_probe(a: &ProbeArgs) -> Result<i32, Error> {
    if let Some(j) = &a.json {
        check_json_path(j)?;
    }
    iolab_engine::cleanup::install_signal_handler();
    let clk = clock::calibrate(20);
    let p = iolab_lab::probe_dirs::probe_here(&clk)?;
    // The table and the --json file are both tried; then the first failure is the error.
    let shown = doc(
        a.json.as_deref(),
        &iolab_report::text::Doc::from(iolab_report::probe::render(&p).as_str()),
    );
    if let Some(j) = &a.json {
        let v = iolab_report::probe::json(&p)
            .map_err(|e| Error::Runtime(format!("probe JSON: {e}")))?;
        write_json(j, &v)?;
    }
    shown?;
    Ok(0)
}
