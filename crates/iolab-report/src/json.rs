//! Results as pretty JSON: exactly the serde structs.

use crate::export::Exporter;
use iolab_engine::result::RunResult;
use iolab_lab::survey::SurveyResult;

/// Pretty JSON, exactly the serde structs.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn run(&self, r: &RunResult) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(r).expect("results serialize");
        v.push(b'\n');
        v
    }
    fn survey(&self, s: &SurveyResult) -> Vec<u8> {
        let mut v = serde_json::to_vec_pretty(s).expect("results serialize");
        v.push(b'\n');
        v
    }
}
