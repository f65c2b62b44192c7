//! The files the commands write: never an existing one, checked before any work is done.

use iolab_core::error::Error;
use std::io::Write;
use std::path::Path;

/// Refuses an existing --json file before the run, so nothing is overwritten and no run is wasted.
pub(crate) fn check_json_path(p: &Path) -> Result<(), Error> {
    check_new_path("--json", p)
}

pub(crate) fn check_new_path(flag: &str, p: &Path) -> Result<(), Error> {
    if p == Path::new("-") {
        return Ok(());
    }
    if p.exists() {
        return Err(Error::usage(
            flag,
            format!(
                "{} exists; iolab does not replace files: choose a new name or remove it",
                p.display()
            ),
        ));
    }
    match p.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) if !d.is_dir() => Err(Error::usage(
            flag,
            format!("the directory {} does not exist", d.display()),
        )),
        _ => Ok(()),
    }
}

pub(crate) fn write_new(flag: &str, p: &Path, bytes: &[u8]) -> Result<(), Error> {
    if p == Path::new("-") {
        std::io::stdout()
            .write_all(bytes)
            .map_err(|e| Error::Runtime(format!("stdout: {e}")))?;
        return Ok(());
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .map_err(|e| Error::Runtime(format!("cannot create {flag} {}: {e}", p.display())))?;
    f.write_all(bytes)
        .map_err(|e| Error::Runtime(format!("cannot write {flag} {}: {e}", p.display())))
}

pub(crate) fn write_json(p: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_new("--json", p, bytes)
}

/// Whether `--json -` sends the document to stdout (the table then goes to stderr).
pub(crate) fn json_to_stdout(json: Option<&Path>) -> bool {
    json == Some(Path::new("-"))
}

/// A table to stdout, or to stderr when stdout carries the JSON document (`--json -`).
pub(crate) fn table(json: Option<&Path>, text: &[u8]) {
    if json_to_stdout(json) {
        std::io::stderr().write_all(text).ok();
    } else {
        std::io::stdout().write_all(text).ok();
    }
}
