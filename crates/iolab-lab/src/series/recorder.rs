//! Writing a record file as a sweep goes: the lock, a new or resumed file, and the default name.

use super::check::{new_out, not_records, resumable, scan_checked, SAME_SETTINGS};
use super::records::append_record;
use super::records::retried;
use super::shape::record_point;
use iolab_engine::cleanup::Created;
use iolab_engine::error::{Error, Result};
use iolab_engine::made_dirs::MadeDirs;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A record file of JSON lines, one per point, each appended and synced as its point finishes. The file
/// is locked (flock) for as long as the recorder lives: a second iolab on the same file is refused. Of
/// the records, each point's latest is held (what the sweep's table and a suite's answers read), not
/// every record the file holds: a file resumed many times holds a point's records many times over.
pub struct Recorder {
    pub path: PathBuf,
    file: std::fs::File,
    /// Each point's latest record, its line, and whether a record of it ran or was refused for good.
    points: Vec<Held>,
    /// Where each point (by [`point_key`]) is in `points`.
    at: HashMap<String, usize>,
    /// The points whose records `--resume` holds (the sweep's or suite's; a record of another point is
    /// counted as a line of the file and let go).
    wanted: std::collections::HashSet<String>,
    /// The record appended last (its index in `points`).
    last: Option<usize>,
    /// Lines the file holds.
    held: usize,
    /// Bytes of a cut-short last line dropped at `--resume` (a point killed while being written).
    pub dropped: usize,
    /// Whether that line was a suite's summary (written again at the end), not a point's record.
    pub dropped_summary: bool,
    /// What `--resume` found and did about it, for the user (a missing final newline added, records
    /// of an older iolab whose settings could not be checked).
    pub notes: Vec<String>,
    /// The settings of this file's records (see [`settings`]): written whole in its first record, and in
    /// each one after as [`SAME_SETTINGS`] (a sweep's --vary list of 20,000 values in every record made
    /// its file grow as the square of its points).
    settings: Value,
    /// Whether the file holds a record with the settings whole.
    settings_written: bool,
    /// What of each record is held ([`Recorder::hold_only`]; none: all of it).
    keep: Option<HeldPaths>,
    /// The file and the directories made for it, removed unless a record lands.
    made: Option<Created>,
    dirs: Option<MadeDirs>,
}

/// The paths of a run's result a recorder holds of each record (`Recorder::open`).
pub type HeldPaths = Vec<&'static [&'static str]>;

/// A point's latest record and the file's line holding it; `done` once any record of the point is not
/// one to run again (see [`retried`]).
struct Held {
    rec: Value,
    line: usize,
    done: bool,
}

/// A point as a key: its keys and values, sorted (a record's point is an object, in any order).
fn point_key(point: &[(String, String)]) -> String {
    let mut p = point.to_vec();
    p.sort();
    format!("{p:?}")
}

impl Recorder {
    /// Opens and locks the record file. `out` given: a new file, or with `resume` the existing one (its
    /// complete lines kept, a cut-short last line dropped, a missing final newline added; refused when
    /// its records carry other `settings`). `out` absent: a new `iolab-results/<stem>-<UTC>.jsonl`. An
    /// existing file is never appended to or replaced without `resume`, which holds the records of
    /// `points` only.
    pub fn open(
        out: Option<&Path>,
        resume: bool,
        stem: &str,
        settings: Value,
        points: &[Vec<(String, String)>],
        keep: Option<HeldPaths>,
    ) -> Result<Recorder> {
        let mut dirs = None;
        let path = match (out, resume) {
            (Some(p), true) => resumable(p)?,
            (Some(p), false) => new_out(p)?,
            (None, _) => {
                let (p, d) = default_out(stem)?;
                dirs = Some(d);
                p
            }
        };
        let (file, made) = if resume {
            (open_to_resume(&path)?, None)
        } else {
            // Made new, through its directory and never through a link; removed again if no record
            // lands in it (a failure before the first point ends leaves no empty file).
            let (fd, made) = Created::new_file(&path, libc::O_RDWR | libc::O_APPEND, 0o644, false)
                .map_err(|e| {
                    Error::Runtime(format!("cannot open --out {}: {e}", path.display()))
                })?;
            (std::fs::File::from(fd), Some(made))
        };
        lock(&file, &path)?;
        let mut rec = Recorder {
            path,
            file,
            made,
            dirs,
            points: Vec::new(),
            at: HashMap::new(),
            wanted: points.iter().map(|p| point_key(p)).collect(),
            last: None,
            held: 0,
            dropped: 0,
            dropped_summary: false,
            notes: Vec::new(),
            settings,
            settings_written: false,
            keep,
        };
        if resume {
            rec.resume()?;
        }
        Ok(rec)
    }

    /// Reads what the (locked) file holds as a stream, refusing other settings, then drops a cut-short
    /// last line or ends a last line that has no newline, in place. Each point's latest record is held
    /// whole; of the others only whether they ran is kept.
    fn resume(&mut self) -> Result<()> {
        let p = self.path.clone();
        let reader = self
            .file
            .try_clone()
            .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", p.display())))?;
        let settings = self.settings.clone();
        let wanted = std::mem::take(&mut self.wanted);
        // The point (and whether it ran) of the record asked for whole, between the two calls.
        let latest = std::cell::RefCell::new(None);
        let scan = scan_checked(
            reader,
            &p,
            &settings,
            &mut |v| {
                let key = point_key(&record_point(v));
                let want = wanted.contains(&key);
                if want {
                    *latest.borrow_mut() = Some((key, !retried(v)));
                }
                want
            },
            &mut |v, line| {
                if let Some((key, done)) = latest.borrow_mut().take() {
                    self.hold(key, v, line, done);
                }
            },
        );
        self.wanted = wanted;
        let (scanned, unchecked, whole) = scan?;
        self.settings_written = whole;
        self.unchecked_note(unchecked);
        self.end_cleanly(&scanned)?;
        self.held = scanned.lines;
        self.dropped = scanned.cut;
        self.dropped_summary = scanned.cut_summary;
        Ok(())
    }

    /// Drops a cut-short last line in place (the lock stays on this file, the next record is appended
    /// after it) or ends a last line that has no newline; refused when the file is not the size it was
    /// read at (another process wrote to it while it was read, past iolab's lock).
    fn end_cleanly(&mut self, s: &super::stream::Scanned) -> Result<()> {
        let p = &self.path;
        let size = self
            .file
            .metadata()
            .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", p.display())))?
            .len();
        if size != s.whole + s.cut as u64 {
            return Err(Error::Runtime(format!(
                "{} changed while iolab read it ({} bytes read, {size} now): another process writes to it; \
                 nothing was changed or appended",
                p.display(),
                s.whole + s.cut as u64
            )));
        }
        let fail =
            |e: std::io::Error| Error::Runtime(format!("cannot rewrite {}: {e}", p.display()));
        if s.cut > 0 {
            self.file
                .set_len(s.whole)
                .and_then(|_| self.file.sync_data())
                .map_err(fail)?;
        } else if !s.ends_line {
            self.file
                .write_all(b"\n")
                .and_then(|_| self.file.sync_data())
                .map_err(fail)?;
            self.notes.push(
                "its last line had no newline at the end; one was added, so the next record starts a line of its own"
                    .into(),
            );
        }
        Ok(())
    }

    /// Notes records without settings (written by an older iolab).
    fn unchecked_note(&mut self, unchecked: usize) {
        if unchecked > 0 {
            self.notes.push(format!(
                "{unchecked} of its records carry no settings (written by an older iolab): they are taken as done \
                 without checking that they were made with these flags and --vary lists"
            ));
        }
    }

    /// Holds `rec`, the record on `line`, as the latest of its point `key`; `done` when it is not one to
    /// run again (see [`retried`]).
    fn hold(&mut self, key: String, mut rec: Value, line: usize, done: bool) {
        // Held without its settings: they are the file's, not the record's.
        if let Some(m) = rec.as_object_mut() {
            m.remove("settings");
        }
        // Of a run's result only what its reader shows (a sweep's held record was 56 KB a point).
        if let Some(paths) = &self.keep {
            rec = super::prune::kept(rec, super::prune::Keep::Paths(paths));
        }
        let i = *self.at.entry(key).or_insert_with(|| {
            self.points.push(Held {
                rec: Value::Null,
                line: 0,
                done: false,
            });
            self.points.len() - 1
        });
        let h = &mut self.points[i];
        (h.rec, h.line, h.done) = (rec, line, h.done || done);
        self.last = Some(i);
    }

    /// Whether `point` is recorded and not to be run again (see [`retried`]).
    pub fn has(&self, point: &[(String, String)]) -> bool {
        self.at
            .get(&point_key(point))
            .is_some_and(|&i| self.points[i].done)
    }

    /// The latest record of `point`, if any.
    pub fn latest(&self, point: &[(String, String)]) -> Option<&Value> {
        self.at.get(&point_key(point)).map(|&i| &self.points[i].rec)
    }

    /// The record appended last, if any.
    pub fn last(&self) -> Option<&Value> {
        self.last.map(|i| &self.points[i].rec)
    }

    /// Appends a record (with this file's `settings`) and syncs it before returning. A suite's summary
    /// is appended and not held.
    pub fn push(&mut self, mut rec: Value) -> Result<()> {
        let point = rec.get("summary").is_none();
        if let (Some(m), true) = (rec.as_object_mut(), point) {
            let s = match self.settings_written {
                true => Value::String(SAME_SETTINGS.into()),
                false => self.settings.clone(),
            };
            m.insert("settings".into(), s);
        }
        append_record(&mut self.file, &rec)?;
        self.settings_written |= point;
        if let Some(m) = self.made.take() {
            m.keep_for_good();
        }
        if let Some(d) = self.dirs.take() {
            d.keep();
        }
        self.held += 1;
        if rec.get("summary").is_none() {
            let done = !retried(&rec);
            self.hold(point_key(&record_point(&rec)), rec, self.held, done);
        }
        Ok(())
    }

    /// The line of the file holding `rec`, a record [`Recorder::latest`] gave (0 for another value).
    pub fn line_of(&self, rec: &Value) -> usize {
        self.points
            .iter()
            .find(|h| std::ptr::eq(&h.rec, rec))
            .map_or(0, |h| h.line)
    }
}

/// The record file to continue, opened without following a symbolic link and without blocking on a FIFO
/// put in its place since it was checked: a regular file within the bound every record reader keeps.
fn open_to_resume(path: &Path) -> Result<std::fs::File> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // O_NOFOLLOW's answer for a symbolic link.
            Some(libc::ELOOP) => Error::usage(
                "--resume",
                format!(
                    "{} is a symbolic link; iolab never writes through one: give --out the file itself",
                    path.display()
                ),
            ),
            _ => Error::usage("--resume", format!("cannot open {}: {e}", path.display())),
        })?;
    let m = f
        .metadata()
        .map_err(|e| Error::Runtime(format!("cannot read {}: {e}", path.display())))?;
    let limit = iolab_engine::input::RECORDS_INPUT;
    if !m.is_file() || m.size() > limit {
        return Err(not_records(
            path,
            format!(
                "not a regular file of at most {} (it changed since iolab checked it)",
                iolab_engine::units::fmt_size(limit)
            ),
        ));
    }
    Ok(f)
}

/// Takes the record file's lock, or refuses: another iolab is writing it.
pub(super) fn lock(file: &std::fs::File, path: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    match iolab_sys::flock_exclusive_nb(file.as_raw_fd()) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::usage(
            "--out",
            format!(
                "another iolab holds {} (a sweep or suite recording into it now); wait for it to end, or choose \
                 another --out",
                path.display()
            ),
        )),
        Err(e) => Err(Error::sys_on(e, path.display().to_string())),
    }
}

/// No `--out`: a new `iolab-results/<stem>-<UTC>.jsonl` (`-2`, `-3` ... when taken), and the
/// directories made for it.
pub(super) fn default_out(stem: &str) -> Result<(PathBuf, MadeDirs)> {
    let dir = Path::new("iolab-results");
    if dir.exists() && !dir.is_dir() {
        return Err(Error::usage(
            "--out",
            "./iolab-results, where records go without --out, is not a directory: give --out FILE",
        ));
    }
    let dirs = MadeDirs::make(dir)?;
    let stamp = iolab_engine::units::utc_stamp(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    );
    let mut p = dir.join(format!("{stem}-{stamp}.jsonl"));
    let mut k = 1;
    while p.exists() {
        k += 1;
        p = dir.join(format!("{stem}-{stamp}-{k}.jsonl"));
    }
    Ok((p, dirs))
}
