//! The CLI's own output helpers: a run's target as a path for `check_apart`; every other destination
//! (new files, stdout, stderr) is the report's (`iolab_report::export::dest`).

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
