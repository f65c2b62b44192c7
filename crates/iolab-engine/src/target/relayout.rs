//! fio's lay-out-again: a later job of a fio job file that works a file an earlier job made and kept,
//! past that file's end, finds it laid out to its region (fio's `extend_file`: the file made again to
//! the new size, filled where the job reads, before the jobs write). iolab grows the file before the job
//! runs, keeping what the earlier job wrote as fio's file keeps it, and fills what the job reads past the
//! old end. It does so only to a file this process made ([`super::pin`]), through the descriptor it looked
//! up, and says so.

use super::fill::{preallocate, prefill_from};
use super::per_thread::{path_of, template};
use super::pin::{made_here, Pin};
use crate::error::{Error, Result};
use crate::spec::Spec;
use iolab_sys as sys;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Grows, before `spec` runs, each file of its target that this process made and that ends before the
/// run's region does; the notes say what was done. Other files, and files long enough, are left alone.
pub fn lay_out_again(spec: &Spec) -> Result<Vec<String>> {
    // fio's null engine lays out no file, nor does iolab's nop.
    if spec.method.info().no_data {
        return Ok(Vec::new());
    }
    let end = spec.offset.saturating_add(spec.file_size.unwrap_or(0));
    let paths = match template(&spec.target) {
        Some(t) => (0..spec.threads).map(|i| path_of(t, i)).collect(),
        None => vec![spec.target.clone()],
    };
    let mut notes = Vec::new();
    for path in paths {
        let Some(pin) = Pin::lookup(&path, &mut Vec::new())? else {
            continue;
        };
        if made_here(&pin) && (pin.st.st_size as u64) < end {
            notes.extend(grow(spec, &pin, end, &path)?);
        }
    }
    Ok(notes)
}

/// Makes the file `end` bytes long: for a write run with `--preallocate` the region reserved, for one
/// that reads the region's bytes past the old end filled with the run's pattern (as a file iolab creates
/// is; a gap before the region stays a hole), the file extended as the fill goes, so that an interrupted
/// fill leaves no hole inside what it wrote.
fn grow(spec: &Spec, pin: &Pin, end: u64, path: &Path) -> Result<Vec<String>> {
    let shown = crate::units::show_path(path);
    let fd = pin.open(libc::O_RDWR)?;
    let was = pin.st.st_size as u64;
    let size = crate::units::fmt_size;
    let mut notes = vec![String::new()];
    let filled = if spec.op.reads() {
        let from = was.max(spec.offset);
        prefill_from(fd.as_raw_fd(), spec, (from, end), &shown)?;
        format!(
            " and filled its region's {} past the old end with iolab's pattern",
            size(end - from)
        )
    } else {
        String::new()
    };
    sys::ftruncate(fd.as_raw_fd(), end).map_err(|e| Error::sys_on(e, &shown))?;
    if spec.preallocate && !spec.op.reads() {
        notes.push(preallocate(fd.as_raw_fd(), spec.offset, end, &shown)?);
    }
    notes[0] = format!(
        "{shown}, which iolab made for an earlier job and kept, held {}, short of this job's region (to byte \
         {end}): iolab made it {} long{filled} before the run (not timed), as fio lays out a file too small \
         for a job; what the earlier job wrote stays",
        size(was),
        size(end)
    );
    Ok(notes)
}
