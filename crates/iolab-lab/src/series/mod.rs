//! Many runs of one workload or of a grid of workloads: `--repeat` statistics, `iolab sweep` points and
//! their JSON-lines record file (written after every point, so an interrupted sweep keeps what finished
//! and `--resume` continues it; locked while a sweep writes it, and each record carrying the sweep's
//! settings, so a resume with other ones is refused), and the figures `iolab compare` reads. Everything here reads result documents
//! as JSON values, so files written by earlier iolab versions or other commands compare the same way.
//! `iolab compare` itself lives in `crate::compare`.

pub mod check;
mod doc;
mod figures;
mod inputs;
mod jobs;
mod packed;
mod points;
mod prune;
mod recorder;
mod records;
mod repeat;
mod shape;
mod stream;

pub use check::check_record_file;
pub use figures::{
    at, cpu_withheld, figure, num, span_too_short, text, Figure, FIGURES, SPAN as FIGURE_SPAN,
    WIDE_SPREAD_PCT,
};
pub use inputs::{Inputs, Refused};
pub use jobs::{run_jobs, CustomWork, Event, Job, Work};
pub use packed::{item_pairs, items, unpack_all};
pub use points::{parse_vary, parse_vary_any, point_label, point_raw, points, shown, Vary};
#[cfg(test)]
pub use prune::field_names;
pub use prune::{kept, text_of};
pub use recorder::{HeldPaths, Recorder};
pub use records::{
    append_record, cut_note, fixed_spec, is_point, read_record_file, read_records, record,
    records_of, retried, settings,
};
pub use repeat::{summarize, RepeatSummary, MAX_REPEAT};
pub use shape::{point_get, point_object, point_remove, record_point, MAX_POINT_KEYS};
pub use stream::{held_value, read_open, value_of, Keep, RecordFile};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_forged;
#[cfg(test)]
mod tests_packed;
