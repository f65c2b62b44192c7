//! iolab's library: the workload spec, targets, I/O methods, the runner, measurement and the result schema.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod answers;
pub mod bench;
pub mod cleanup;
pub mod compare;
pub mod compare_across;
pub mod driver;
pub mod emulation;
pub mod error;
pub mod fault;
pub mod findings;
pub mod findings_compare;
pub mod findings_crossover;
pub mod findings_partition;
pub mod interval_csv;
pub mod leftovers;
pub mod lines;
pub mod measure;
pub mod mem;
pub mod method;
pub mod offload;
pub mod pattern;
pub mod probe;
pub mod probe_dirs;
pub mod progress;
pub mod result;
pub mod runner;
pub mod series;
pub mod series_check;
pub mod series_flow;
pub mod spec;
pub mod stats;
pub mod suite;
pub mod suite_cols;
mod suite_nop;
pub mod suite_view;
pub mod survey;

pub mod target;
pub mod text;
pub mod units;
pub mod verify;
pub mod vm;

pub use error::{Error, Result};
