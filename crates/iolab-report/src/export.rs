//! The one trait every output format implements: a result in, bytes out (hyperfine's `export/` shape).

use iolab_engine::result::RunResult;
use iolab_lab::survey::SurveyResult;

/// An output format of a run or a survey.
pub trait Exporter {
    fn run(&self, r: &RunResult) -> Vec<u8>;
    fn survey(&self, s: &SurveyResult) -> Vec<u8>;
}
