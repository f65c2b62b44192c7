//! iolab's own sink driver (`kmod/` in the repository): its sources, carried inside the binary so that
//! `iolab driver build` and `iolab vm` can build it against any kernel's headers without the source tree.

pub mod build;

pub use build::{build_module, MODULE_FILE, SOURCES};
