//! Measurement: the clock, latency histograms, CPU/task and kernel I/O accounting, sampled
//! profiles.

pub mod blocktrace;
pub mod client_cycles;
pub mod clock;
pub mod counters;
pub mod cpu;
pub mod device_io;
pub mod hist;
pub mod iopoll;
pub mod memcopy;
pub mod op_log;
pub mod profile;
pub mod tp_format;
pub mod workload_figures;
