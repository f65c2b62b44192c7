//! iolab's report: every rendering of results. The text tables of the terminal (`text/`, `run_text.rs`,
//! `survey.rs`, `series_view.rs`, `suite_view.rs`), the HTML/SVG report (`html.rs`, `html/`), CSV, Markdown
//! and JSON, all written through one export path (`export/`: a command's `Document`, its `Outputs`).

#[cfg(feature = "html")]
pub mod answers;
pub mod bench_view;
mod cells;
pub mod csv;
pub mod export;
mod fields;
pub use fields::result_paths;
pub mod findings_by_cause;
#[cfg(feature = "fio")]
pub mod fio_json;
#[cfg(feature = "fio")]
pub mod fio_log;
#[cfg(feature = "html")]
pub mod fleet;
#[cfg(feature = "html")]
pub mod html;
pub mod interval_csv;
#[cfg(feature = "kernels")]
pub mod kernels_view;
#[cfg(feature = "html")]
mod markup;
mod offload;
pub mod probe;
mod rounds_text;
mod run_text;
pub mod series_view;
mod sink;
pub mod suite_cols;
mod suite_nop;
pub mod suite_view;
pub mod summary_text;
mod survey;
mod survey_answer;
mod survey_compare;
mod survey_workload_view;
mod table;
pub mod text;

pub use export::{Document, Exporter, Outputs};
pub use run_text::TableExporter;
pub use table::kernel_text;
