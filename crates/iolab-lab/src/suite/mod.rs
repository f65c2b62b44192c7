//! Suites: the seed experiments as checked-in TOML files (suites/*.toml, built into the binary), each a
//! list of steps; a step is a spec (over the suite's defaults) and optional `vary` lists, run as points of
//! the same loop and record file as `iolab sweep` (series::run_jobs), then shown as the table the seed
//! published. `--quick` applies the suite's `[quick]` keys (smaller amounts) and a step's `quick-vary`.
//!
//! A step may say `needs = "offload"` (a method this build may not have) or `needs = "zram"` (a device
//! that may not be makeable here): when missing, its points are recorded as "not available ..." with the
//! reason, never faked. `workload = "lines"` runs the kernel-vs-user note's decimal lines (crate::lines)
//! and `workload = "clock"` records the cost of the clock that times every op.
//!
//! The command line can set a spec key on every point over all the file says (`iolab suite --profile`:
//! [`SuiteFile::set_on_every_point`]); such a key is in each point, so `--resume` never takes a point
//! recorded without it as done. When points carry profiles, the table is followed by where their time
//! went: the share of samples copying to/from user space (the storage paper's Figure 4) and the top
//! kernel function of each point. A suite's `[[question]]`s and `[[published-figure]]`s are answered and
//! checked after the table (`answers/`, which reads a suite file through
//! `answers::load`, the suite checked against its answer functions).

pub mod file;
mod jobs;
mod places;
pub mod question;

pub use file::{Step, SuiteFile, TableKind, BUILTIN, COPY_GROUP};
pub use jobs::{check, jobs};
pub use places::{wants_zram, Places};

use iolab_engine::error::{Error, Result};

/// Did the point of this record fail at run time (a kernel error such as a full filesystem or an I/O
/// error, a short transfer, data that did not verify)? A point this build or machine cannot run ("not
/// available ...", or an operation the kernel or filesystem does not support: EOPNOTSUPP, ENOSYS ...)
/// or whose combination does not apply (exit 2) did not fail: it was not run, with the reason.
pub fn point_failed(rec: &serde_json::Value) -> bool {
    let error = rec.get("error").and_then(|e| e.as_str());
    error.is_some_and(|e| !e.starts_with("not available") && !unsupported(e))
        && rec.get("exit_code").and_then(|c| c.as_i64()) == Some(1)
}

/// Whether a point's error is the kernel or the target refusing what it cannot do (EOPNOTSUPP, ENOSYS
/// ...: IOPOLL on a device without poll queues): no failure, and nothing a later run would change.
pub fn unsupported(e: &str) -> bool {
    const UNSUPPORTED: [&str; 5] = ["EOPNOTSUPP", "ENOTSUP", "ENOSYS", "ENOTTY", "ENODEV"];
    UNSUPPORTED.iter().any(|n| {
        e.match_indices(n).any(|(at, _)| {
            // The errno's name as a word (ENOTSUP is not EOPNOTSUPP's tail by accident).
            let after = e[at + n.len()..].chars().next();
            let before = e[..at].chars().next_back();
            !after.is_some_and(|c| c.is_ascii_alphanumeric())
                && !before.is_some_and(|c| c.is_ascii_alphanumeric())
        })
    })
}

/// Parses suite text and checks its questions' steps and ids and its published figures; `origin` names
/// it in errors. Whether each question names a known answer is `answers::parse`'s check.
pub fn parse(text: &str, origin: &str) -> Result<SuiteFile> {
    let s = file::parse_file(text, origin)?;
    file::check_questions(&s).map_err(|m| Error::usage("suite", format!("{origin}: {m}")))?;
    Ok(s)
}

/// A built-in suite by name, or a suite file by path (anything ending in .toml).
pub fn load(name: &str) -> Result<SuiteFile> {
    if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) {
        return parse(text, &format!("suites/{name}.toml"));
    }
    if name.ends_with(".toml") {
        let text = iolab_engine::input::read_text(
            std::path::Path::new(name),
            "suite",
            "suite file",
            iolab_engine::input::SMALL_INPUT,
        )?;
        return parse(&text, name);
    }
    Err(Error::usage(
        "suite",
        format!(
            "no suite '{name}'; built in: {} (or give a path to a suite .toml file; see iolab suite --list)",
            BUILTIN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests;
