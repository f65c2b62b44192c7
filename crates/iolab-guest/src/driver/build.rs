//! Building the sink driver out of tree: write the embedded sources into a work directory and run the
//! kernel's Kbuild on them (`make -C HEADERS M=WORK modules`).

use iolab_engine::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The driver's source files (name, text), from `kmod/` at build time.
pub const SOURCES: &[(&str, &str)] = &[
    ("Kbuild", include_str!("../../../../kmod/Kbuild")),
    (
        "iolab_sink.c",
        include_str!("../../../../kmod/iolab_sink.c"),
    ),
    (
        "iolab_sink.h",
        include_str!("../../../../kmod/iolab_sink.h"),
    ),
    (
        "iolab_sink_trace.h",
        include_str!("../../../../kmod/iolab_sink_trace.h"),
    ),
];

/// The module file Kbuild produces.
pub const MODULE_FILE: &str = "iolab_sink.ko";

/// Builds the module against the kernel headers in `headers` (a directory with the kernel's top Makefile,
/// such as `/lib/modules/$(uname -r)/build`), in `work` (created if missing; the sources are written there).
/// Returns the path of the built `.ko`. The error names what is missing and make's last lines.
pub fn build_module(headers: &Path, work: &Path) -> Result<PathBuf> {
    if !headers.join("Makefile").is_file() {
        return Err(Error::Runtime(format!(
            "no kernel headers at {} (no Makefile there): install the headers of the target kernel, \
             or name their directory",
            headers.display()
        )));
    }
    std::fs::create_dir_all(work)
        .map_err(|e| Error::Runtime(format!("cannot create {}: {e}", work.display())))?;
    for (name, text) in SOURCES {
        let p = work.join(name);
        std::fs::write(&p, text)
            .map_err(|e| Error::Runtime(format!("cannot write {}: {e}", p.display())))?;
    }
    let mut make = Command::new("make");
    make.arg("-C")
        .arg(headers)
        .arg(format!("M={}", work.display()));
    // A kernel that gives its modules BTF (6.12) runs pahole on each: without pahole the module is built
    // without BTF (it matters only to BPF programs that name the module's types), not refused.
    if Command::new("pahole").arg("--version").output().is_err() {
        make.arg("CONFIG_DEBUG_INFO_BTF_MODULES=");
    }
    let out = make
        .arg("modules")
        .output()
        .map_err(|e| Error::Runtime(format!("cannot run make (is it installed?): {e}")))?;
    let ko = work.join(MODULE_FILE);
    if !out.status.success() || !ko.is_file() {
        let text = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(Error::Runtime(format!(
            "building the sink driver against {} failed ({}):\n{}",
            headers.display(),
            out.status,
            tail.join("\n")
        )));
    }
    Ok(ko)
}
