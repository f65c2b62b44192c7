//! `iolab report`: one HTML file (and optionally each chart as SVG) from result files.

use crate::output::{check_new_path, outln, write_new};
use clap::Args;
use iolab_core::error::Error;
use iolab_core::series;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct ReportArgs {
    /// Result files: sweep or suite records (.jsonl), `run --json` or `run --repeat --json` documents.
    #[arg(required = true, value_name = "RESULTS")]
    pub(crate) results: Vec<PathBuf>,
    /// The HTML file to write (an existing file is not replaced).
    #[arg(
        short = 'o',
        long = "out",
        value_name = "FILE",
        default_value = "report.html"
    )]
    pub(crate) out: PathBuf,
    /// Also write each chart alone as DIR/<name>.svg (DIR is created; existing files are not replaced).
    #[arg(long, value_name = "DIR")]
    pub(crate) svg: Option<PathBuf>,
}

pub(crate) fn cmd_report(a: &ReportArgs) -> Result<i32, Error> {
    check_new_path("--out", &a.out)?;
    let mut recs = Vec::new();
    let mut sums = Vec::new();
    for p in &a.results {
        let (r, _) = series::read_records(p).map_err(|e| Error::usage("report", e.to_string()))?;
        recs.extend(r);
        // A suite's findings and answers: the latest summary of each file.
        let text = std::fs::read_to_string(p).unwrap_or_default();
        sums.extend(iolab_core::answers::summaries_in(&text).pop());
    }
    let names: Vec<String> = a.results.iter().map(|p| p.display().to_string()).collect();
    let mut rep = iolab_report::html::build(&recs, &names);
    rep.html = iolab_report::answers::with_answers(&rep.html, &sums);
    if let Some(d) = &a.svg {
        std::fs::create_dir_all(d)
            .map_err(|e| Error::Runtime(format!("cannot create --svg {}: {e}", d.display())))?;
        for c in &rep.charts {
            write_new(
                "--svg",
                &d.join(format!("{}.svg", c.name)),
                c.svg.as_bytes(),
            )?;
        }
    }
    write_new("--out", &a.out, rep.html.as_bytes())?;
    outln(&format!(
        "report: {} ({} charts from {} records{})",
        a.out.display(),
        rep.charts.len(),
        recs.len(),
        a.svg
            .as_ref()
            .map(|d| format!("; each chart alone in {}", d.display()))
            .unwrap_or_default()
    ))?;
    Ok(0)
}
