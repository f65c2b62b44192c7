//! iolab's own sink driver (`kmod/` in the repository): its sources, carried inside the binary so that
//! `iolab driver build` and `iolab vm` can build it against any kernel's headers without the source tree
//! (build.rs); and loading and unloading it (module.rs). The in-kernel line writer of the kernel-user suite
//! is the lab's (`iolab_lab::kwrite`). /dev/iolab_sink as a target, its personalities and counters, is the engine's
//! (`iolab_engine::sink_device`).

pub mod build;
pub mod module;

pub use build::{build_module, MODULE_FILE, SOURCES};
