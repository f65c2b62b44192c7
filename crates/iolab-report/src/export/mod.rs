//! One export path (hyperfine's `export/` and its ExportManager are the model): a command builds the
//! [`Document`] it produced, and [`Outputs`], made once from the command's output flags, writes it in
//! every format asked for: the text tables to the terminal, and each file through its [`Exporter`].

pub mod dest;
mod document;
mod formats;
mod outputs;

pub use document::Document;
pub use formats::{Csv, Exporter, IntervalCsv, Json, Markdown};
pub use outputs::Outputs;
