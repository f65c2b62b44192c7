//! `--skip BYTES` (fio's `rw=read:N`, `rw=write:N`): a sequential walk that adds N bytes to the end of
//! each op to find the next one, leaving holes of N bytes, or, with N negative, going backwards.
//!
//! The walk is fio's (`get_next_seq_offset` in its io_u.c), in bytes of a thread's region:
//! - the first op is at the region's start, and the add applies from the second op on;
//! - a position past the region's end goes back to its start (a positive add), or to the end plus the
//!   add (a negative one: `read:-8k` with 4 KiB blocks reads 0, then the region's end less 8 KiB, then
//!   4 KiB lower each op, to 0);
//! - fio ends a job by its size where the previous op ended at the region's end, or where the next would
//!   run past it ([`fio_ops`] counts the ops before that). iolab's plan goes on from the region's start
//!   there, as fio's time-based jobs do; a run by size stops where fio's does.

/// Where a `--skip` walk is: the add, the end of the previous op and the region's bytes.
#[derive(Debug, Clone)]
pub(crate) struct SkipWalk {
    add: i64,
    last: u64,
    region: u64,
}

impl SkipWalk {
    pub(crate) fn new(add: i64, region: u64) -> SkipWalk {
        SkipWalk {
            add,
            last: 0,
            region,
        }
    }

    /// The next op's byte in the region, or None where fio's job by size ends.
    fn fio_next(&mut self, bs: u64) -> Option<u64> {
        if self.last >= self.region {
            return None;
        }
        let mut pos = self.last;
        if pos != 0 {
            let p = i128::from(pos) + i128::from(self.add);
            pos = match p {
                p if p >= 0 && p < i128::from(self.region) => p as u64,
                _ if self.add > 0 => 0,
                _ => (i128::from(self.region) + i128::from(self.add)).max(0) as u64,
            };
        }
        if pos + bs > self.region {
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
            0
        })
    }
}

/// The ops fio's job by size makes with `--skip add` in a region of `region` bytes of `bs`-byte blocks,
/// at most `most`: where the walk ends before, fewer (fio's `read:512k` over 16 MiB of 1 MiB blocks: 11).
pub fn fio_ops(region: u64, bs: u64, add: i64, most: u64) -> u64 {
    let mut w = SkipWalk::new(add, region);
    let mut n = 0;
    while n < most && w.fio_next(bs).is_some() {
        n += 1;
    }
    n
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
        let holes = walk(512 * K as i64, 16 << 20, 1 << 20, 12);
        let fio: Vec<u64> = (0..11).map(|i| i * 1536).chain([0]).collect();
        assert_eq!(holes, fio, "then from the start again");
        assert_eq!(fio_ops(16 << 20, 1 << 20, 512 * 1024, 16), 11);
        let back = walk(-8 * K as i64, 1 << 20, 4096, 256);
        assert_eq!(back[..4], [0, 1016, 1012, 1008]);
        assert_eq!(back[253..], [8, 4, 0]);
        assert_eq!(fio_ops(1 << 20, 4096, -8192, 256), 256);
        // A hole that takes a position past the end starts over; an op that would run past it ends fio's job.
        assert_eq!(
            walk(1 << 20, 16 << 20, 1 << 20, 10),
            [0, 2048, 4096, 6144, 8192, 10240, 12288, 14336, 0, 2048]
        );
        assert_eq!(fio_ops(16 << 20, 1 << 20, 1 << 20, 16), 16);
        assert_eq!(fio_ops(16 << 20, 1 << 20, 1536 * 1024, 100), 7);
    }
}
