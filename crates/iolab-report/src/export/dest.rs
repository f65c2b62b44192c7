//! Where the commands write: new files (never an existing one, checked before any work is done) and
//! stdout and stderr. Every write here is fallible: a stdout or file that cannot be written is an error
//! (exit 1, `Error::Output`), never a panic and never lost silently; stderr that cannot be written is
//! ignored, since there is nowhere left to say so (the exit code still tells).

use crate::text::{self, Doc};
use iolab_engine::cleanup::Created;
use iolab_engine::error::Error;
use iolab_engine::made_dirs::MadeDirs;
use std::io::Write;
use std::path::{Path, PathBuf};

pub use iolab_engine::paths::{check_dir_path, check_new_path, check_writable_dir};

/// Where `p` is, however it is spelled: its directory resolved (symlinks, `.`, `..`) when it exists,
/// then its name.
fn resolved(p: &Path) -> PathBuf {
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match (std::fs::canonicalize(dir), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p.to_path_buf(),
    }
}

/// Refuses two of a command's files being one (`--json` and `--csv`, or either and the `--target` the
/// run writes into), checked before anything is created: entries are (flag, path), `None` when not
/// given; `-` (stdout) is no file. The later entry's flag is named.
pub fn check_apart(files: &[(&str, Option<&Path>)]) -> Result<(), Error> {
    // One document on stdout: two would run together into neither (`--json - --csv -`).
    let stdout: Vec<&str> = files
        .iter()
        .filter(|(_, p)| *p == Some(Path::new("-")))
        .map(|(f, _)| *f)
        .collect();
    if let [first, second, ..] = stdout[..] {
        return Err(Error::usage(
            second,
            format!("- (stdout) is also the {first} path; one document goes to stdout: give {second} a file"),
        ));
    }
    let given: Vec<(&str, &Path)> = files
        .iter()
        .filter_map(|(f, p)| Some((*f, (*p)?)))
        .filter(|(_, p)| *p != Path::new("-"))
        .collect();
    for (i, (flag, p)) in given.iter().enumerate() {
        let here = resolved(p);
        if let Some((other, _)) = given[..i]
            .iter()
            .find(|(f, q)| f != flag && resolved(q) == here)
        {
            return Err(Error::usage(
                *flag,
                format!(
                    "{} is also the {other} path; each needs a file of its own: give {flag} another name",
                    p.display()
                ),
            ));
        }
    }
    Ok(())
}

pub fn write_new(flag: &str, p: &Path, bytes: &[u8]) -> Result<(), Error> {
    if p == Path::new("-") {
        return out_bytes(bytes);
    }
    match try_write_new(flag, p, bytes)? {
        Some(()) => Ok(()),
        None => Err(Error::Output(format!(
            "cannot create {flag} {}: it exists (made since iolab checked); iolab does not replace files",
            p.display()
        ))),
    }
}

/// Writes `bytes` to the new file `p`; `Ok(None)` when the name is taken.
fn try_write_new(flag: &str, p: &Path, bytes: &[u8]) -> Result<Option<()>, Error> {
    Ok(write_made(flag, p, bytes)?.map(Created::keep_for_good))
}

/// Writes `bytes` to the new file `p`, still iolab's to remove (see [`Created::keep_for_good`]);
/// `Ok(None)` when the name is taken.
fn write_made(flag: &str, p: &Path, bytes: &[u8]) -> Result<Option<Created>, Error> {
    // O_EXCL and never through a symbolic link; journaled while it is written, so a file cut short by a
    // kill is `iolab clean`'s, and removed (only while its name is still it) when the write fails.
    let (fd, made) = match Created::new_file(p, libc::O_WRONLY, 0o644, false) {
        Ok(m) => m,
        Err(Error::Sys(f)) if f.err.errno == libc::EEXIST => return Ok(None),
        Err(e) => {
            return Err(Error::Output(format!(
                "cannot create {flag} {}: {e}",
                p.display()
            )))
        }
    };
    let mut f = std::fs::File::from(fd);
    // sync_all: a full disk may only say so when the data is written back. A file cut short is removed
    // (iolab made it just now): no half document is left to be read as a whole one.
    match f.write_all(bytes).and_then(|()| f.sync_all()) {
        Ok(()) => Ok(Some(made)),
        Err(e) => {
            drop(made);
            Err(Error::Output(format!(
                "cannot write {flag} {}: {e}; the partial file was removed",
                p.display()
            )))
        }
    }
}

/// Writes `files` (names and contents) as new files in `dir` (made if missing), all or none: when one
/// cannot be written, those already written are removed again (and `dir`, if iolab made it), so that
/// a rerun finds the place as it was.
pub fn write_new_set(flag: &str, dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), Error> {
    let dirs = MadeDirs::make(dir)?;
    let mut made = Vec::with_capacity(files.len());
    for (name, bytes) in files {
        let p = dir.join(name);
        match write_made(flag, &p, bytes)? {
            Some(m) => made.push(m),
            None => {
                return Err(Error::Output(format!(
                    "cannot create {flag} {}: it exists (made since iolab checked); none of the {} files \
                     is left",
                    p.display(),
                    files.len()
                )))
            }
        }
    }
    made.into_iter().for_each(Created::keep_for_good);
    dirs.keep();
    Ok(())
}

/// Whether `--json -` sends the document to stdout (the table then goes to stderr).
pub fn json_to_stdout(json: Option<&Path>) -> bool {
    json == Some(Path::new("-"))
}

/// A document to stdout, laid out for its width, or to stderr (for stderr's width) when stdout carries
/// the JSON document (`--json -`). See `crate::text` for the width.
pub fn doc(json: Option<&Path>, d: &Doc) -> Result<(), Error> {
    if json_to_stdout(json) {
        let r = d.render(text::width_for(2));
        err_bytes(iolab_engine::units::visible(&r).as_bytes());
        Ok(())
    } else {
        let r = d.render(text::width_for(1));
        out_bytes(iolab_engine::units::visible(&r).as_bytes())
    }
}

/// `--md FILE`: the document as Markdown, in a new file (refused before any work when it exists, see
/// [`check_new_path`]).
pub fn write_md(p: Option<&Path>, d: &Doc) -> Result<(), Error> {
    match p {
        Some(p) => write_new("--md", p, d.markdown().as_bytes()),
        None => Ok(()),
    }
}

/// Writes `bytes` to stdout and flushes them: an error when stdout cannot take them (a full disk, a
/// closed pipe).
pub fn out_bytes(bytes: &[u8]) -> Result<(), Error> {
    let mut o = std::io::stdout().lock();
    o.write_all(bytes)
        .and_then(|()| o.flush())
        .map_err(|e| Error::Output(format!("cannot write to stdout: {e}")))
}

/// Writes `text` to stdout (see `out_bytes`), each line wrapped to stdout's width (`crate::text`).
pub fn out(t: &str) -> Result<(), Error> {
    let t = iolab_engine::units::visible(t);
    out_bytes(text::wrap_text(&t, text::width_for(1)).as_bytes())
}

/// Writes `text` and a newline to stdout (see `out`).
pub fn outln(text: &str) -> Result<(), Error> {
    out(&format!("{text}\n"))
}

/// Writes `bytes` to stderr, ignoring a failure: stderr is where failures are told, so one there has
/// nowhere to go; the exit code still says what happened.
pub fn err_bytes(bytes: &[u8]) {
    let mut e = std::io::stderr().lock();
    let _ = e.write_all(bytes).and_then(|()| e.flush());
}

/// Writes `text` and a newline to stderr (see `err_bytes`), wrapped to stderr's width.
pub fn errln(t: &str) {
    let t = iolab_engine::units::visible(t);
    err_bytes(text::wrap_text(&format!("{t}\n"), text::width_for(2)).as_bytes());
}

/// Writes `bytes` to a new file `<dir>/<stem>-<stamp>[-N].json`, never replacing an existing file; `dir`
/// is made if missing, and removed again when the file could not be written (nothing empty is left).
pub fn write_new_in(dir: &Path, stem: &str, stamp: &str, bytes: &[u8]) -> Result<PathBuf, Error> {
    let dirs = MadeDirs::make(dir)?;
    for n in 0..1000 {
        let name = if n == 0 {
            format!("{stem}-{stamp}.json")
        } else {
            format!("{stem}-{stamp}-{n}.json")
        };
        let p = dir.join(name);
        if try_write_new("the results file", &p, bytes)?.is_some() {
            dirs.keep();
            return Ok(p);
        }
    }
    Err(Error::Runtime(format!(
        "too many result files named {stem}-{stamp}* in {}",
        dir.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_files_are_never_replaced() {
        let d = tempfile::tempdir().unwrap();
        let a = write_new_in(d.path(), "s", "x", b"one").unwrap();
        let b = write_new_in(d.path(), "s", "x", b"two").unwrap();
        assert_ne!(a, b);
        assert_eq!(std::fs::read(&a).unwrap(), b"one");
        assert_eq!(std::fs::read(&b).unwrap(), b"two");
    }
}
