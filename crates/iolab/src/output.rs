//! The CLI's own output helpers: a run's target as a path for `check_apart`; every other destination
//! (new files, stdout, stderr) is the report's (`iolab_report::export::dest`).

use iolab_engine::error::Error;
use iolab_engine::spec::Spec;
use iolab_engine::target::TargetKind;
pub(crate) use iolab_report::export::dest::*;
use std::path::Path;

/// A run's target when it is a path (not a stream word), as a `check_apart` entry.
pub(crate) fn target_file(s: &Spec) -> Option<(&'static str, Option<&Path>)> {
    TargetKind::stream_named(&s.target)
        .is_none()
        .then_some(("--target", Some(s.target.as_path())))
}

/// A survey's answer shown (and its Markdown written), then, unless `results_dir` is None, its JSON in a
/// new file there named `stem`-`stamp`.json with a "result:" line; every output is tried, then the first
/// failure is the error.
pub(crate) fn show_and_save(
    outputs: &iolab_report::export::Outputs,
    doc: &iolab_report::export::Document,
    results_dir: Option<&Path>,
    stem: &str,
    started_unix_s: u64,
) -> Result<(), Error> {
    use iolab_report::export::{Exporter, Json};
    let shown = outputs.write(doc);
    let saved = match results_dir {
        None => None,
        Some(dir) => {
            let stamp = iolab_engine::units::utc_stamp(started_unix_s);
            let json = Json.export(doc).expect("a survey has a JSON document");
            Some(write_new_in(dir, stem, &stamp, &json)?)
        }
    };
    shown?;
    if let Some(p) = saved {
        outln(&format!("result: {}", p.display()))?;
    }
    Ok(())
}
