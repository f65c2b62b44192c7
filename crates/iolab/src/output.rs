//! What the commands write: the files (never an existing one, checked before any work is done) and
//! stdout and stderr. Every write here is fallible: a stdout or file that cannot be written is an error
//! (exit 1, `Error::Output`), never a panic and never lost silently; stderr that cannot be written is
//! ignored, since there is nowhere left to say so (the exit code still tells).

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
        return out_bytes(bytes);
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .map_err(|e| Error::Output(format!("cannot create {flag} {}: {e}", p.display())))?;
    // sync_all: a full disk may only say so when the data is written back. A file cut short is removed
    // (iolab made it just now): no half document is left to be read as a whole one.
    f.write_all(bytes).and_then(|()| f.sync_all()).map_err(|e| {
        let _ = std::fs::remove_file(p);
        Error::Output(format!(
            "cannot write {flag} {}: {e}; the partial file was removed",
            p.display()
        ))
    })
}

pub(crate) fn write_json(p: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_new("--json", p, bytes)
}

/// Whether `--json -` sends the document to stdout (the table then goes to stderr).
pub(crate) fn json_to_stdout(json: Option<&Path>) -> bool {
    json == Some(Path::new("-"))
}

/// A table to stdout, or to stderr when stdout carries the JSON document (`--json -`).
pub(crate) fn table(json: Option<&Path>, text: &[u8]) -> Result<(), Error> {
    if json_to_stdout(json) {
        err_bytes(text);
        Ok(())
    } else {
        out_bytes(text)
    }
}

/// Writes `bytes` to stdout and flushes them: an error when stdout cannot take them (a full disk, a
/// closed pipe).
pub(crate) fn out_bytes(bytes: &[u8]) -> Result<(), Error> {
    let mut o = std::io::stdout().lock();
    o.write_all(bytes)
        .and_then(|()| o.flush())
        .map_err(|e| Error::Output(format!("cannot write to stdout: {e}")))
}

/// Writes `text` to stdout (see `out_bytes`).
pub(crate) fn out(text: &str) -> Result<(), Error> {
    out_bytes(text.as_bytes())
}

/// Writes `text` and a newline to stdout (see `out_bytes`).
pub(crate) fn outln(text: &str) -> Result<(), Error> {
    out_bytes(format!("{text}\n").as_bytes())
}

/// Writes `bytes` to stderr, ignoring a failure: stderr is where failures are told, so one there has
/// nowhere to go; the exit code still says what happened.
pub(crate) fn err_bytes(bytes: &[u8]) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(bytes).and_then(|()| e.flush());
}

/// Writes `text` and a newline to stderr (see `err_bytes`).
pub(crate) fn errln(text: &str) {
    err_bytes(format!("{text}\n").as_bytes());
}
