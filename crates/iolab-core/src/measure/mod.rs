//! Measurement: the clock, latency histograms, CPU/task and kernel I/O accounting.

pub mod clock;
pub mod counters;
pub mod cpu;
pub mod hist;
