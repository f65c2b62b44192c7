//! iolab's engine: the workload spec and its option table, targets, the I/O methods (one file each, one
//! registry), the runner (it owns timing), measurement, and the result type (the JSON schema). It knows
//! nothing of findings, suites or rendering: those are the lab's and the report's.

pub mod access;
pub mod bs_split;
pub mod budget;
pub mod cleanup;
pub mod cpus;
pub mod disturbance;
pub mod emulation;
pub mod error;
pub mod fault;
pub mod host;
pub mod input;
pub mod json;
pub mod leftovers;
pub mod made_dirs;
pub mod measure;
pub mod mem;
pub mod memlimit;
pub mod memwatch;
pub mod method;
pub mod names;
pub mod offload;
pub mod paths;
pub mod pattern;
pub mod progress;
pub mod registry;
pub mod resolve;
pub mod result;
pub mod ring_ptrs;
pub mod rng;
pub mod run;
pub mod runner;
pub mod seq_skip;
pub mod shuffle;
pub mod sink_device;
pub mod skew;
pub mod spec;
pub mod stats;
pub mod target;
pub mod target_kind;
pub mod tcp_peer;
pub mod units;
pub mod unmeasured;
pub mod verify;
pub mod zoned;

pub use error::{Error, Result};
