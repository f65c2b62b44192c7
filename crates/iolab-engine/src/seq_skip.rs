//! `--skip BYTES` (fio's `rw=read:N`, `rw=write:N`): a sequential walk that adds N bytes to the end of
//! each op to find the next one, leaving holes of N bytes, or, with N negative, going backwards.
//!
//! The walk is fio's (`get_next_seq_offset` in its io_u.c), in bytes of a thread's region:
//! - the first op is at the region's start, and the add applies from the second op on;
//! - a position past the region's end goes back to its start (a positive add), or to the end plus the
//!   add (a negative one: `read:-8k` with 4 KiB blocks reads 0, then the region's end less 8 KiB, then
//!   4 KiB lower each op, to 0);
//! - fio ends a job by its size where the previous op ended at the file's end, where the next would start
//!   past the region or run past the file, or where going back would land before the start ([`fio_ops`]
//!   counts the ops before that, and `--fio` runs that many). iolab's plan goes on from the region's
//!   start there, as fio's time-based jobs do: `--ops` and `--size` make as many ops as they say, and the
//!   target's setup notes where the walk starts over.

/// Where a `--skip` walk is: the add, the end of the previous op, the region's bytes and the file's (fio
/// wraps at the file's end, which is past the region where an existing file is larger).
#[derive(Debug, Clone)]
pub(crate) struct SkipWalk {
    add: i64,
    last: u64,
    region: u64,
    file: u64,
}

impl SkipWalk {
    pub(crate) fn new(add: i64, region: u64) -> SkipWalk {
        SkipWalk {
            add,
            last: 0,
            region,
            file: region,
        }
    }

    /// The next op's byte in the region, or None where fio's job by size ends.
    fn fio_next(&mut self, bs: u64) -> Option<u64> {
        if self.last >= self.file {
            return None;
        }
        let mut pos = self.last;
        if pos != 0 {
            let p = i128::from(pos) + i128::from(self.add);
            let file = i128::from(self.file);
            pos = match p {
                p if p >= 0 && p < file => p as u64,
                _ if self.add > 0 => 0,
                // Back from the region's end; before the start, fio's unsigned position is past the
                // file, and its job ends.
                _ => u64::try_from(i128::from(self.region) + i128::from(self.add)).ok()?,
            };
        }
        if pos >= self.region || pos + bs > self.file {
            return None;
        }
        self.last = pos + bs;
        Some(pos)
    }

    /// The next op's byte in the region: fio's, or the region's start where fio's job by size ends.
    #[inline]
    pub(crate) fn next(&mut self, bs: u64) -> u64 {
        self.fio_next(bs).unwrap_or_else(|| {
            self.last = 0;
            // The region holds a block: from its start, the walk's first op is there.
            self.fio_next(bs).unwrap_or(0)
        })
    }
}

/// The ops fio's job by size makes with `--skip add` in a region of `region` bytes of `bs`-byte blocks at
/// the start of a file of `file` bytes, at most `most`: where the walk ends before, fewer (fio's
/// `read:512k` over 16 MiB of 1 MiB blocks: 11).
pub fn fio_ops(region: u64, file: u64, bs: u64, add: i64, most: u64) -> u64 {
    let mut w = SkipWalk {
        file: file.max(region),
        ..SkipWalk::new(add, region)
    };
    let mut n = 0;
    while n < most && w.fio_next(bs).is_some() {
        n += 1;
    }
    n
}

/// A thread's `--skip` walk over its region of `region` bytes of `bs`-byte blocks, `ops` ops of it (where
/// the run counts them): refused where going back lands before the region's start (fio ends its job
/// after the first op: every later op would be at the start), and said where the ops go past the walk's
/// end and start over.
pub(crate) fn region_note(
    skip: i64,
    bs: u64,
    ops: Option<u64>,
    region: u64,
) -> crate::error::Result<Option<String>> {
    if skip == 0 {
        return Ok(None);
    }
    if skip < 0 && skip.unsigned_abs() > region {
        return Err(crate::error::Error::usage(
            "--skip",
            format!(
                "going back {} from the end of a region of {} lands before its start (fio ends its job \
                 there, after the first op): give a smaller --skip or a larger region",
                crate::units::fmt_size(skip.unsigned_abs()),
                crate::units::fmt_size(region)
            ),
        ));
    }
    let Some(ops) = ops else {
        return Ok(None);
    };
    let walk = fio_ops(region, region, bs, skip, ops);
    Ok((walk < ops).then(|| {
        format!(
            "--skip: each thread's walk reaches its region's end after {walk} ops and starts over at the \
             region's start for the rest of its {ops} (fio's job by size ends there; a larger --file-size \
             holds more of the walk)"
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    fn walk(add: i64, region: u64, bs: u64, n: usize) -> Vec<u64> {
        let mut w = SkipWalk::new(add, region);
        (0..n).map(|_| w.next(bs) / K).collect()
    }

    /// fio 3.33's I/O logs of `rw=read:512k bs=1m size=16m` (11 reads: 0, 1.5 MiB, ... 15 MiB) and of
    /// `rw=read:-8k bs=4k size=1m` (0, then 1016 KiB down by 4 KiB to 0: 256 reads).
    #[test]
    fn holes_and_backwards_walks_are_fios() {
        let holes = walk(512 * K as i64, 16 << 20, 1 << 20, 22);
        let fio: Vec<u64> = (0..11).map(|i| i * 1536).collect();
        assert_eq!(holes[..11], fio);
        assert_eq!(holes[11..], fio, "then from the start again, the same walk");
        assert_eq!(fio_ops(16 << 20, 16 << 20, 1 << 20, 512 * 1024, 16), 11);
        let back = walk(-8 * K as i64, 1 << 20, 4096, 256);
        assert_eq!(back[..4], [0, 1016, 1012, 1008]);
        assert_eq!(back[253..], [8, 4, 0]);
        assert_eq!(fio_ops(1 << 20, 1 << 20, 4096, -8192, 256), 256);
        // A hole that takes a position past the end starts over; an op that would run past it ends fio's job.
        assert_eq!(
            walk(1 << 20, 16 << 20, 1 << 20, 10),
            [0, 2048, 4096, 6144, 8192, 10240, 12288, 14336, 0, 2048]
        );
        assert_eq!(fio_ops(16 << 20, 16 << 20, 1 << 20, 1 << 20, 16), 16);
        assert_eq!(fio_ops(16 << 20, 16 << 20, 1 << 20, 1536 * 1024, 100), 7);
        // Going back past the start ends fio's job after its first op (read:-2m over 1 MiB).
        assert_eq!(fio_ops(1 << 20, 1 << 20, 4096, -(2 << 20), 256), 1);
        // An existing file larger than the region: fio wraps at the file's end, so a position past the
        // region ends the job (read:1m, bs=64k, size=1m on a 4 MiB file: one read).
        assert_eq!(fio_ops(1 << 20, 4 << 20, 64 << 10, 1 << 20, 16), 1);
        assert_eq!(fio_ops(1 << 20, 1 << 20, 64 << 10, 1 << 20, 16), 16);
    }
}
