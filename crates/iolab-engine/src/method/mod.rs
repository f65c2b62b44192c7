//! I/O methods: one file per mechanism behind one small trait, like fio's `ioengine_ops`.
//!
//! A method declares a [`MethodInfo`] (what it targets, how it runs, what it calls) and implements `prepare` (open, map, set up rings), `submit` (perform one
//! operation, or queue it for asynchronous methods), `commit`/`reap` (asynchronous methods: pass queued
//! requests to the kernel, collect completions), `flush` (`--fsync`/`--msync` points) and `finish`.
//! Cleanup is `Drop`. The runner owns timing, accounting, the workload loop, buffers and verification: a
//! method never reads the clock. Adding a method is one file (its `INFO` and its `Method` impl), one
//! variant in [`MethodKind`] and one line in the registry (`crate::registry::METHODS`), its options in the
//! option table (`spec/options.rs`; an option of its own alone can be declared in its folder, see
//! `spec/method_opts.rs`), and its tests. This folder holds the methods only: the registry, which
//! ties each to the runner's loops, sits above both.

pub mod aio;
pub mod api;
pub mod epoll;
pub mod info;
pub mod io_uring;
pub mod kcopy;
pub mod kind;
pub mod mmap;
pub mod nop;
pub mod offload;
pub mod psync;
pub mod pv2;
pub mod stdio;
pub mod sync;
pub mod uring_cmd;
pub mod vectored;

pub use api::{Flush, Io, Method, MethodStats, SharedSlot, ThreadCtx};
pub use info::{Exec, Fit, MethodInfo, Targets};
pub use kind::MethodKind;
