//! The file formats, each an [`Exporter`]: the document in it, or nothing where the format does not apply
//! to that kind of document.

use super::document::Document;

/// One output format.
pub trait Exporter {
    /// The flag that asks for it, named in messages.
    fn flag(&self) -> &'static str;
    /// The document in this format; `None` when it has nothing to say in it.
    fn export(&self, d: &Document) -> Option<Vec<u8>>;
}

/// `--md`: the tables as Markdown.
pub struct Markdown;

impl Exporter for Markdown {
    fn flag(&self) -> &'static str {
        "--md"
    }
    fn export(&self, d: &Document) -> Option<Vec<u8>> {
        Some(d.tables_for_file().markdown().into_bytes())
    }
}

/// `--json`: the result document, exactly the serde structs (a repeat: its statistics and every run).
pub struct Json;

impl Exporter for Json {
    fn flag(&self) -> &'static str {
        "--json"
    }
    fn export(&self, d: &Document) -> Option<Vec<u8>> {
        // Each document as a Value first, then printed: one serializer of the result structs serves every
        // document (a board binary's size budget: each serializer is a copy of their code).
        let pretty = |v: serde_json::Result<serde_json::Value>| {
            v.and_then(|mut v| {
                iolab_engine::json::positive_zero(&mut v);
                serde_json::to_vec_pretty(&v)
            })
        };
        let v = match d {
            // The run's figures with its verdict, as a sweep or suite record's `result` has them.
            Document::Run { result, .. } => iolab_lab::verdict::result_value(result)
                .ok()
                .and_then(|v| serde_json::to_vec_pretty(&v).ok())
                .ok_or_else(|| serde::ser::Error::custom("the run's JSON")),
            Document::Repeat { runs, summary, .. } => pretty(serde_json::to_value(
                serde_json::json!({ "repeat": summary, "runs": runs }),
            )),
            Document::Survey { result, .. } => pretty(serde_json::to_value(result)),
            Document::WorkloadSurvey { result, .. } => pretty(serde_json::to_value(result)),
            Document::Probe(p) => return crate::probe::json(p).ok(),
            _ => return None,
        };
        let mut v = v.expect("results serialize");
        v.push(b'\n');
        Some(v)
    }
}

/// `--csv`: a row per run or point (columns in docs/output.md).
pub struct Csv;

impl Exporter for Csv {
    fn flag(&self) -> &'static str {
        "--csv"
    }
    fn export(&self, d: &Document) -> Option<Vec<u8>> {
        let (records, keys) = d.rows()?;
        Some(crate::csv::of_records(&records, &keys).into_bytes())
    }
}

/// `--csv-intervals`: a row per interval of each run's time series, after the columns naming its run or
/// point.
pub struct IntervalCsv;

impl Exporter for IntervalCsv {
    fn flag(&self) -> &'static str {
        "--csv-intervals"
    }
    fn export(&self, d: &Document) -> Option<Vec<u8>> {
        use crate::interval_csv::{header, of_records, rows};
        let text = match d {
            Document::Run { result, .. } => {
                header(&[]) + &rows(&[], &serde_json::to_value(result).ok()?)
            }
            Document::Repeat { runs, .. } => {
                let mut t = header(&["run".to_string()]);
                for (i, r) in runs.iter().enumerate() {
                    t += &rows(&[(i + 1).to_string()], r);
                }
                t
            }
            Document::Sweep { keys, records, .. } => of_records(records, keys),
            Document::Suite { records, keys, .. } => {
                of_records(&records.iter().collect::<Vec<_>>(), keys)
            }
            #[cfg(feature = "kernels")]
            Document::Kernels { records, keys, .. } => {
                of_records(&records.iter().collect::<Vec<_>>(), keys)
            }
            Document::Survey { .. }
            | Document::WorkloadSurvey { .. }
            | Document::Compare { .. }
            | Document::Probe(_) => return None,
        };
        Some(text.into_bytes())
    }
}
