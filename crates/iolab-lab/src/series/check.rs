//! The checks a sweep or suite gets before anything runs or is created. Its `--vary` lists (a sweep's)
//! or `vary` lists (a suite step's): a key varied twice, a value listed twice (also when spelled two
//! ways, `4k` and `4096`), and a value no point can use (a typo, told apart from a combination that
//! does not apply to some points, which is recorded as not run). Its record file: `--out` without
//! `--resume` must be new; with it, an existing file of records made with the same settings.

use super::points::point_label;
use super::points::Vary;
use super::records::settings_diff;
use iolab_engine::error::{Error, Result};
use iolab_engine::spec::options::{option, Ty};
use iolab_engine::spec::Spec;
use iolab_engine::units::{parse_count, parse_duration, parse_size};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One value as its option reads it ("4k" and "4096" are one size, "1k" and "1000" one count), for
/// finding a value listed twice; a value the option cannot read stays as written (it is refused later).
fn canonical(key: &str, v: &str) -> String {
    let t = v.trim();
    let read = match option(key).map(|o| o.ty) {
        Some(Ty::Size) => parse_size(t).ok().map(|n| n.to_string()),
        Some(Ty::Count) => parse_count(t).ok().map(|n| n.to_string()),
        Some(Ty::Duration) => parse_duration(t).ok().map(|d| d.to_string()),
        _ => None,
    };
    read.unwrap_or_else(|| t.to_string())
}

/// Each key varied once, each value listed once; `flag` names where the lists came from (`--vary`).
/// The most points one sweep or suite step runs: a product beyond it is refused before anything is made.
pub const MAX_POINTS: u64 = 100_000;

/// The most keys one sweep or suite step varies: a record's point holds them and iolab's own (step,
/// quick, repeat, run, profile, kernel), at most [`super::shape::MAX_POINT_KEYS`] in all.
pub const MAX_VARY_KEYS: usize = 14;

pub fn check_lists(vary: &[Vary], flag: &str) -> Result<()> {
    if vary.len() > MAX_VARY_KEYS {
        return Err(Error::usage(
            flag,
            format!(
                "{} keys varied; a sweep or suite step varies at most {MAX_VARY_KEYS} (a record's point \
                 holds them, and a reader at most {} keys): split it into sweeps",
                vary.len(),
                super::shape::MAX_POINT_KEYS
            ),
        ));
    }
    let product = vary
        .iter()
        .try_fold(1u64, |n, v| n.checked_mul(v.values.len() as u64));
    if product.is_none_or(|n| n > MAX_POINTS) {
        let sizes: Vec<String> = vary.iter().map(|v| v.values.len().to_string()).collect();
        return Err(Error::usage(
            flag,
            format!(
                "{} points ({}) are more than the {} one sweep runs: split it into sweeps, or vary fewer \
                 values",
                product.map_or("more than 2^64".to_string(), iolab_engine::units::thousands_u64),
                sizes.join(" x "),
                iolab_engine::units::thousands_u64(MAX_POINTS)
            ),
        ));
    }
    for (i, v) in vary.iter().enumerate() {
        let key = &v.key;
        if let Some(first) = vary[..i].iter().find(|w| &w.key == key) {
            return Err(Error::usage(
                flag,
                format!(
                    "{key} is varied twice ({key}={} and {key}={}): give one list with every value",
                    first.values.join(","),
                    v.values.join(",")
                ),
            ));
        }
        // Each value's reading, looked up once (a list of 100,000 values was compared pair by pair).
        let mut seen = std::collections::HashMap::with_capacity(v.values.len());
        for x in &v.values {
            let Some(y) = seen.insert(canonical(key, x), x) else {
                continue;
            };
            let twice = if x == y {
                format!("'{x}' twice")
            } else {
                format!("'{y}' and '{x}', which are the same value")
            };
            return Err(Error::usage(
                flag,
                format!(
                    "{key}={} lists {twice}: give each value once",
                    v.values.join(",")
                ),
            ));
        }
    }
    Ok(())
}

/// A point (its keys and values) and its resolved spec.
pub type PointSpec<'a> = (&'a [(String, String)], &'a Result<Spec>);

/// A varied value is itself bad (a typo, not a combination that does not apply) when every point with
/// it fails naming its own flag. `points` pairs each point with its resolved spec.
pub fn check_values(vary: &[Vary], points: &[PointSpec]) -> Result<()> {
    for v in vary {
        let own = format!("--{}:", v.key);
        // Per value: its first point, and whether every point with it failed naming the key's own flag
        // (one pass over the points per key: linear in them).
        let mut by_value: std::collections::HashMap<&str, (&PointSpec, bool)> =
            std::collections::HashMap::new();
        for ps in points {
            let Some((_, val)) = ps.0.iter().find(|(k, _)| k == &v.key) else {
                continue;
            };
            let own_failure = matches!(ps.1, Err(e) if e.to_string().starts_with(&own));
            by_value
                .entry(val.as_str())
                .and_modify(|(_, all)| *all &= own_failure)
                .or_insert((ps, own_failure));
        }
        for val in &v.values {
            if let Some(((p, Err(e)), true)) = by_value.get(val.as_str()) {
                return Err(Error::usage("--vary", format!("{}: {e}", point_label(p))));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------
// The record file.

/// What [`crate::series::Recorder::open`] would refuse as bad input, asked before anything is made (a suite makes its
/// places first): the record file's records are read as a stream and none held.
pub fn check_record_file(out: Option<&Path>, resume: bool, settings: &Value) -> Result<()> {
    match (out, resume) {
        (Some(p), true) => {
            let path = resumable(p)?;
            let f = iolab_engine::input::open_regular(
                &path,
                "--out",
                "file of records",
                iolab_engine::input::RECORDS_INPUT,
            )?;
            scan_checked(f, &path, settings, &mut |_| false, &mut |_, _| ()).map(|_| ())
        }
        (Some(p), false) => new_out(p).map(|_| ()),
        // Without --out, records go to ./iolab-results/ (made if missing).
        (None, _) => iolab_engine::paths::check_dir_path("--out", Path::new("iolab-results")),
    }
}

/// `--out` with `--resume`: an existing regular file.
pub(crate) fn resumable(p: &Path) -> Result<PathBuf> {
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() => Ok(p.to_path_buf()),
        Ok(_) => Err(Error::usage(
            "--out",
            format!("{} is not a regular file; --resume continues a record file", p.display()),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::usage(
            "--resume",
            format!(
                "{} does not exist, so there is nothing to resume: drop --resume to record into a new file",
                p.display()
            ),
        )),
        // A loop of symbolic links, a directory on the way that is not one, no permission: the name given
        // is bad input, found before anything ran.
        Err(e) => Err(Error::usage(
            "--out",
            format!("cannot read {}: {e}", p.display()),
        )),
    }
}

/// A file `--resume` cannot continue (`what` says why): bad input naming the flag.
pub(crate) fn not_records(p: &Path, what: String) -> Error {
    Error::usage(
        "--resume",
        format!(
            "{}: {what}; it is not a sweep or suite record file iolab can continue: give the file it recorded, \
             or record into a new --out without --resume",
            p.display()
        ),
    )
}

/// A key of a record's point that the settings' `vary` does not name, said as what the point names (each
/// point's keys are among them: a suite's steps name different keys, every one of them in `vary`). A
/// value the lists do not hold is let be: records of other points made with the same settings are read
/// past (the scaling test's thousands are).
fn foreign_key(rec: &Value, settings: &Value) -> Option<String> {
    let vary = settings.get("vary")?.as_object()?;
    super::shape::record_point(rec)
        .into_iter()
        .map(|(k, _)| k)
        .find(|k| !vary.contains_key(k))
        .map(|k| format!("{k}, which this sweep does not vary"))
}

/// The records of the record file `f` (`path`) to `--resume`, read as a stream: JSON lines only (a `run
/// --json` document is a result, not a record file to append to), at least one record, each made with
/// `settings` (else refused, naming the keys that differ). `wanted` answers, from a record's point and
/// outcome, whether it is held: then `each` has it whole, with its line. Returns what the scan found and
/// how many records carry no settings (written by an older iolab).
pub(crate) fn scan_checked(
    f: impl std::io::Read,
    path: &Path,
    settings: &Value,
    wanted: &mut dyn FnMut(&Value) -> bool,
    each: &mut dyn FnMut(Value, usize),
) -> Result<(super::stream::Scanned, usize, bool)> {
    let (mut unchecked, mut found, mut other, mut whole) = (0, 0, None, false);
    let scanned = super::stream::scan_records(
        f,
        iolab_engine::input::RECORDS_INPUT,
        &mut |v, line| {
            let was = v.get("settings");
            // The settings of a record before it, checked already; where none is, the file lost the
            // record that held them (an older iolab never wrote this).
            let same = was.and_then(Value::as_str) == Some(SAME_SETTINGS);
            match was
                .filter(|_| !same)
                .map(|was| settings_diff(was, settings))
            {
                None if same && whole => {}
                None if same => {
                    return Err(format!(
                        "line {line}: its settings are \"{SAME_SETTINGS}\", but no record before it holds \
                         them: the file lost that record (damaged)"
                    ))
                }
                None => unchecked += 1,
                Some(diff) if !diff.is_empty() => {
                    other = Some(diff.join(", "));
                    return Err(String::new());
                }
                Some(_) => whole = true,
            }
            if let Some(k) = foreign_key(v, settings) {
                return Err(format!(
                    "line {line}: its point names {k}: a record of \
                     another sweep or suite"
                ));
            }
            found += 1;
            Ok(wanted(v))
        },
        each,
    );
    if let Some(diff) = other {
        return Err(Error::usage(
            "--resume",
            format!(
                "{} was recorded with other settings: {diff}; resume with the flags and --vary lists it was \
                 recorded with, or record into a new --out",
                path.display()
            ),
        ));
    }
    let scanned = scanned.map_err(|why| not_records(path, why))?;
    if found == 0 && scanned.cut > 0 {
        return Err(not_records(
            path,
            format!(
                "holds no whole record: its only line is cut short ({} bytes: a run killed while writing it)",
                iolab_engine::units::thousands_u64(scanned.cut as u64)
            ),
        ));
    }
    if found == 0 {
        return Err(not_records(
            path,
            "holds no records (an empty file, or summaries only)".into(),
        ));
    }
    Ok((scanned, unchecked, whole))
}

/// A record's `"settings"` after the file's first record: the same as that record's (written whole
/// once, not in every record).
pub(crate) const SAME_SETTINGS: &str = "as in the file's first record";

/// `--out` without `--resume`: a new file in an existing directory.
pub(crate) fn new_out(p: &Path) -> Result<PathBuf> {
    // A symbolic link is said to be one (iolab never writes through one, --resume or not).
    let link = std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    if p.exists() && !link {
        return Err(Error::usage(
            "--out",
            format!(
                "{} exists; iolab does not replace files: add --resume to continue what it recorded, or choose a new name",
                p.display()
            ),
        ));
    }
    iolab_engine::paths::check_new_path("--out", p)?;
    Ok(p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::parse_vary_any;

    fn lists(vs: &[&str]) -> std::result::Result<(), String> {
        let vary: Vec<Vary> = vs.iter().map(|v| parse_vary_any(v).unwrap()).collect();
        check_lists(&vary, "--vary").map_err(|e| e.to_string())
    }

    #[test]
    fn a_key_varied_twice_or_a_value_listed_twice_is_refused() {
        assert_eq!(lists(&["bs=4k,8k", "qd=1,2"]), Ok(()));
        let e = lists(&["bs=4k,8k", "--bs=16k"]).unwrap_err();
        assert_eq!(
            e,
            "--vary: bs is varied twice (bs=4k,8k and bs=16k): give one list with every value"
        );
        let e = lists(&["bs=4k,4k"]).unwrap_err();
        assert!(e.contains("bs=4k,4k lists '4k' twice"), "{e}");
        let e = lists(&["bs=4k,8k,4096"]).unwrap_err();
        assert!(
            e.contains("'4k' and '4096', which are the same value"),
            "{e}"
        );
        let e = lists(&["ops=1k,1000"]).unwrap_err();
        assert!(e.contains("'1k' and '1000'"), "{e}");
        let e = lists(&["duration=1s,1000ms"]).unwrap_err();
        assert!(e.contains("'1s' and '1000ms'"), "{e}");
        // More keys than a record's point holds beside iolab's own.
        let keys = [
            "bs",
            "qd",
            "threads",
            "ops",
            "seed",
            "method",
            "op",
            "direct",
            "file-size",
        ];
        let keys = keys
            .iter()
            .chain(&["offset", "batch", "warmup", "fsync", "duration", "rounds"]);
        let many: Vec<String> = keys.map(|k| format!("{k}=1")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let e = lists(&many).unwrap_err();
        assert!(
            e.contains("15 keys varied; a sweep or suite step varies at most 14"),
            "{e}"
        );
        assert_eq!(lists(&many[..14]), Ok(()));
        // Words and paths compare as written.
        assert_eq!(lists(&["method=psync,sync", "target=a,./a"]), Ok(()));
        assert!(lists(&["method=psync,psync"]).is_err());
    }
}
