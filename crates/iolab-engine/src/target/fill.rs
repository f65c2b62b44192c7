//! What iolab writes into a file before a run, untimed: its blocks reserved (`--preallocate`), or its
//! region filled with the run's pattern so that a read run reads known data.

use crate::error::{Error, Result};
use crate::pattern;
use crate::spec::{OpKind, Spec};
use iolab_sys as sys;

/// --preallocate: the new file's blocks in [off, end) reserved before a write run (not timed), as fio's
/// fallocate=native does; a filesystem without fallocate leaves it sparse, said (fio falls back the same way).
pub(super) fn preallocate(fd: i32, off: u64, end: u64, shown: &str) -> Result<String> {
    let len = crate::units::fmt_size(end.saturating_sub(off));
    match sys::fallocate(fd, off, end.saturating_sub(off)) {
        Ok(()) => Ok(format!(
            "iolab reserved {len} of {shown} with fallocate(2) before the run (not timed, --preallocate): the \
             timed writes allocate no blocks"
        )),
        Err(e) if e.errno == libc::EOPNOTSUPP => Ok(format!(
            "--preallocate: the filesystem of {shown} has no fallocate(2) (EOPNOTSUPP): the file stays sparse and \
             the timed writes allocate its blocks"
        )),
        Err(e) => Err(Error::sys_on(e, shown)),
    }
}

/// Writes the pattern into [0, end) of a file iolab just created, so read runs read known data.
pub(super) fn prefill(fd: i32, spec: &Spec, end: u64, shown: &str) -> Result<()> {
    prefill_from(fd, spec, (spec.offset, end), shown)
}

/// Writes the pattern into the region's bytes in [from, end) (`from` at or past the region's start, within
/// a block where a file grows from an end inside one: that block's bytes from `from` on).
pub(super) fn prefill_from(
    fd: i32,
    spec: &Spec,
    (from, end): (u64, u64),
    shown: &str,
) -> Result<()> {
    let bs = spec.bs as usize;
    let per = (1usize << 20).div_ceil(bs).max(1);
    let what = "the chunk that fills a new file before a read run (at least one --bs block)";
    let mut chunk = crate::mem::zeroed::<u8>(bs * per, what, "lower --bs")?;
    for b in chunk.chunks_mut(bs) {
        pattern::fill_body(b, spec.seed);
    }
    debug_assert!(from >= spec.offset, "the fill starts in the region");
    // On the region's grid, the first block's bytes before `from` left as they are.
    let mut off = spec.offset + (from - spec.offset) / spec.bs * spec.bs;
    let mut skip = (from - off) as usize;
    while off < end {
        let first_block = (off - spec.offset) / spec.bs;
        let n = ((end - off) as usize).min(chunk.len());
        // A mixed run's file holds the stamps of another generation, so that --verify tells a block a
        // write reached from one it did not (the body is the same: reads leave the writes' buffers alone).
        let generation = if spec.op == OpKind::Mixed {
            pattern::PREFILL_GENERATION
        } else {
            0
        };
        for (i, b) in chunk[..n].chunks_mut(bs).enumerate() {
            pattern::stamp(b, spec.seed, (first_block + i as u64) | generation);
        }
        let w = sys::pwrite(fd, &chunk[skip..n], off + skip as u64)
            .map_err(|e| Error::sys_on(e, shown))?;
        off += (skip + w) as u64;
        skip = 0;
    }
    // On the device before the pass: an O_DIRECT read of a range still dirty writes it back first, which
    // would put the prefill's writeback inside the ops' latency.
    sys::fsync(fd).map_err(|e| Error::sys_on(e, shown))
}
