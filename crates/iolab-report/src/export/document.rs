//! What a command produced, in one type the exporters read.

use crate::run_text::TableExporter;
use crate::text::Doc;
use iolab_engine::result::RunResult;
use iolab_lab::answers::Summary;
use iolab_lab::compare::Outcome;
use iolab_lab::probe::ProbeResult;
use iolab_lab::series::RepeatSummary;
use iolab_lab::suite::SuiteFile;
use iolab_lab::survey::SurveyResult;
use serde_json::Value;

/// What `compare_surveys::compare` finds of two surveys.
pub type SurveysCompared = (
    Vec<iolab_lab::compare_surveys::TableChange>,
    Vec<iolab_lab::compare_surveys::Moved>,
);

/// A command's result, as the exporters see it.
pub enum Document<'a> {
    /// `iolab run`: the figures and what explains them; with `verbose`, the whole account.
    Run {
        result: &'a RunResult,
        verbose: bool,
    },
    /// `iolab run --repeat N`: the first run's header line, the runs and their statistics.
    Repeat {
        header: &'a str,
        runs: &'a [Value],
        summary: &'a RepeatSummary,
    },
    /// `iolab survey`: the answer first; with `verbose`, every table and finding after it.
    Survey {
        result: &'a SurveyResult,
        verbose: bool,
    },
    /// `iolab survey --target PATH`: the answer first; with `verbose`, every workload's rows.
    WorkloadSurvey {
        result: &'a iolab_lab::survey_workload::WorkloadSurvey,
        verbose: bool,
    },
    /// `iolab sweep`: its lead line, the varied keys and the records in point order.
    Sweep {
        lead: &'a str,
        keys: &'a [String],
        records: &'a [&'a Value],
    },
    /// `iolab suite`: the suite, its records, the keys of its points, and its findings and answers.
    Suite {
        suite: &'a SuiteFile,
        records: &'a [Value],
        keys: &'a [String],
        summary: &'a Summary,
    },
    /// `iolab suite --kernels`: its lead, the kernels side by side, the answers across them, and the
    /// records (each point naming its kernel) with their point keys.
    #[cfg(feature = "kernels")]
    Kernels {
        lead: &'a str,
        side: &'a iolab_lab::kernels::Side,
        answers: &'a [iolab_lab::answers::Answer],
        records: &'a [Value],
        keys: &'a [String],
    },
    /// `iolab probe`.
    Probe(&'a ProbeResult),
    /// `iolab compare`; of two surveys, first what changed in their orders (`surveys`: the files and
    /// what `compare_surveys` found), every row's figures after it only with `verbose`.
    Compare {
        lead: &'a str,
        warning: Option<String>,
        outcome: &'a Outcome,
        surveys: Option<(&'a str, &'a str, &'a SurveysCompared)>,
        verbose: bool,
    },
}

impl Document<'_> {
    /// The tables as the terminal shows them.
    pub fn tables(&self) -> Doc {
        match self {
            Document::Run { result, verbose } => TableExporter.run_doc_for(result, *verbose),
            Document::Repeat {
                header, summary, ..
            } => crate::series_view::repeat_doc(header, &[], summary),
            Document::Survey { result, verbose } => crate::survey::answered_doc(result, *verbose),
            Document::WorkloadSurvey { result, verbose } => {
                crate::survey_workload_view::doc(result, *verbose)
            }
            Document::Sweep {
                lead,
                keys,
                records,
            } => crate::series_view::sweep_doc(lead, keys, records),
            Document::Suite {
                suite,
                records,
                summary,
                ..
            } => {
                let mut d = crate::suite_view::doc(suite, records);
                d.text(&crate::summary_text::render(summary));
                d
            }
            Document::Compare {
                lead,
                warning,
                outcome,
                surveys,
                verbose,
            } => {
                let rows = || crate::series_view::compare_doc(lead, warning.clone(), outcome);
                match surveys {
                    Some((a, b, (changes, moved))) => {
                        let mut d = crate::survey_compare::doc(a, b, changes, moved);
                        if *verbose {
                            d.blank();
                            d.append(rows());
                        }
                        d
                    }
                    None => rows(),
                }
            }
            Document::Probe(p) => Doc::from(crate::probe::render(p).as_str()),
            #[cfg(feature = "kernels")]
            Document::Kernels {
                lead,
                side,
                answers,
                ..
            } => crate::kernels_view::doc(lead, side, answers),
        }
    }

    /// The tables as a Markdown file has them: as on the terminal, and a repeat's every run.
    pub fn tables_for_file(&self) -> Doc {
        match self {
            Document::Repeat {
                header,
                runs,
                summary,
            } => crate::series_view::repeat_doc(header, runs, summary),
            Document::Survey { result, .. } => crate::survey::answered_doc(result, true),
            Document::WorkloadSurvey { result, .. } => {
                crate::survey_workload_view::doc(result, true)
            }
            Document::Run { result, .. } => TableExporter.run_doc(result),
            _ => self.tables(),
        }
    }

    /// The records a CSV has a row for (a run's, each repeat's, each point's), and the point keys that lead
    /// each row; `None` where the document has no such records.
    pub fn rows(&self) -> Option<(Vec<Value>, Vec<String>)> {
        let record = |v: &Value| iolab_lab::series::record(&[], Ok(v.clone()));
        match self {
            Document::Run { result, .. } => {
                Some((vec![record(&serde_json::to_value(result).ok()?)], vec![]))
            }
            Document::Repeat { runs, .. } => Some((runs.iter().map(record).collect(), vec![])),
            Document::Sweep { keys, records, .. } => Some((
                records.iter().map(|r| (*r).clone()).collect(),
                keys.to_vec(),
            )),
            Document::Suite { records, keys, .. } => Some((records.to_vec(), keys.to_vec())),
            #[cfg(feature = "kernels")]
            Document::Kernels { records, keys, .. } => Some((records.to_vec(), keys.to_vec())),
            Document::Survey { .. }
            | Document::WorkloadSurvey { .. }
            | Document::Compare { .. }
            | Document::Probe(_) => None,
        }
    }
}
