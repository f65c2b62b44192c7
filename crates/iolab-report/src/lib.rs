//! Exporters behind one trait, each returning bytes (hyperfine's `export/` shape): a readable table for
//! stdout and the JSON document whose schema is `iolab_engine::result::RunResult` / `SurveyResult`.

pub mod answers;
mod cells;
mod export;
mod fields;
pub mod html;
pub mod interval_csv;
mod json;
mod offload;
pub mod probe;
mod run_text;
mod sink;
pub mod suite_cols;
mod suite_nop;
pub mod suite_view;
mod survey;
mod table;
pub mod text;

pub use export::Exporter;
pub use json::JsonExporter;
pub use run_text::TableExporter;
pub use table::kernel_text;
