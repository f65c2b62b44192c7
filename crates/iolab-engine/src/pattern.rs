//! The data iolab writes, and the order of offsets it visits.
//!
//! # Block content (what `--verify` checks)
//! Block `b` is the `b`-th `bs`-sized block counted from `--offset` in the target. Its bytes are:
//! - body: byte `i` is byte `i % 8` (little endian) of `mix64(seed + i / 8)`, the same in every block;
//! - stamps: at the start of every 512-byte sector `s` of the block (`s = 0, 1, ...`), the first
//!   `min(8, bytes left)` bytes are replaced by the little-endian bytes of
//!   `mix64(seed ^ ((b << 22) | s))`.
//!
//! `mix64` is the SplitMix64 finaliser, a bijection, so distinct (block, sector) pairs below 2^42 blocks
//! get distinct stamps. Stamps make every sector of every block different, so a lost,
//! torn or misplaced write is detected; the body makes zeros or stale data fail. Stamping costs a few
//! nanoseconds per op (one 8-byte store per 512 bytes) and is done for every write, verified or not, so
//! `--verify` does not change what is measured.

use serde::{Deserialize, Serialize};

/// The order of a thread's offsets: sequential, or uniform over its region (replayable from the seed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Seq,
    Rand,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Seq => "seq",
            Pattern::Rand => "rand",
        }
    }
}

pub use crate::rng::mix64;
use crate::rng::xorshift;

/// The stamp of sector `s` of block `b`.
#[inline(always)]
pub fn stamp_word(seed: u64, block: u64, sector: u64) -> u64 {
    mix64(seed ^ ((block << 22) | sector))
}

/// Fills `buf` with the body pattern (done once per buffer, outside the timed loop).
pub fn fill_body(buf: &mut [u8], seed: u64) {
    for (j, chunk) in buf.chunks_mut(8).enumerate() {
        let w = mix64(seed.wrapping_add(j as u64)).to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
}

/// Writes the stamps of block `block` into a buffer already holding the body.
#[inline(always)]
pub fn stamp(buf: &mut [u8], seed: u64, block: u64) {
    let len = buf.len();
    if len < 8 {
        // Blocks under 8 bytes (the seed thesis's 4-byte writes): byte by byte, no memmove call.
        let w = stamp_word(seed, block, 0).to_le_bytes();
        for (d, s) in buf.iter_mut().zip(w) {
            *d = s;
        }
        return;
    }
    let mut off = 0usize;
    let mut sector = 0u64;
    while off + 8 <= len {
        let w = stamp_word(seed, block, sector).to_le_bytes();
        buf[off..off + 8].copy_from_slice(&w);
        off += 512;
        sector += 1;
    }
    if off < len {
        let w = stamp_word(seed, block, sector).to_le_bytes();
        for (d, s) in buf[off..].iter_mut().zip(w) {
            *d = s;
        }
    }
}

/// The whole expected content of block `block` (for verification).
pub fn expected_block(bs: usize, seed: u64, block: u64) -> Vec<u8> {
    let mut v = vec![0u8; bs];
    fill_body(&mut v, seed);
    stamp(&mut v, seed, block);
    v
}

/// One planned operation: the block index (relative to `--offset`), its absolute byte offset, and
/// whether it writes (the run's direction, or drawn per op for `--op mixed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedOp {
    pub block: u64,
    pub offset: u64,
    pub write: bool,
    /// Bytes: the block size, or drawn per op (`--bs-split`).
    pub len: usize,
}

/// The stamps of a block that a mixed run's file holds before the run: another generation of the
/// block's stamps (its index with this bit set), so `--verify` tells a block a write reached from one it
/// did not, whose body is the same.
pub const PREFILL_GENERATION: u64 = 1 << 41;

/// The sequence of blocks one thread visits in its region.
///
/// Sequential: the region's blocks in order, wrapping at the end. Random: uniformly chosen blocks of the
/// region (with replacement) from an xorshift64* generator seeded by the run seed and the thread number,
/// reduced without division (Lemire's multiply-shift), or each block once a pass (`--distribution once`,
/// see `shuffle.rs`), so the plan can be replayed exactly by `--verify`.
#[derive(Debug, Clone)]
pub struct OpPlan {
    pattern: Pattern,
    /// Absolute byte offset of the block with index `first_block`.
    base: u64,
    bs: u64,
    first_block: u64,
    nblocks: u64,
    next_seq: u64,
    rng: u64,
    /// `--distribution` other than uniform: random blocks drawn from it.
    skew: Option<crate::skew::Skew>,
    /// `--distribution once`: random blocks each once a pass.
    shuffle: Option<crate::shuffle::Shuffle>,
    /// The direction of every op, unless `mix` draws it.
    write: bool,
    /// `--op mixed`: an op reads when a draw of this generator (its state) is below the limit, the read
    /// share of 2^64.
    mix: Option<(u64, u128)>,
    /// `--zone-size` or `--skip`: the ops walk the region zone by zone, or with holes.
    walk: Option<Walk>,
    /// `--walk-per-direction`: a mixed sequential plan's reads and writes each walk the region from its
    /// start (the direction drawn first).
    per_direction: bool,
}

/// A walk over the region other than block after block or uniform draws.
#[derive(Debug, Clone)]
enum Walk {
    Zone(ZoneWalk),
    Skip(crate::seq_skip::SkipWalk),
    /// `--bs-split`: ops of drawn lengths.
    Sized(crate::bs_split::SizedWalk),
    /// `--walk-per-direction` (ops of one length): the next block of reads (0) and of writes (1).
    TwoWay([u64; 2]),
}

/// `--zone-size`, `--zone-range`, `--zone-skip` (fio's zonemode=strided), in bytes: the ops stay in a
/// zone of `range` bytes until `size` bytes have been moved there (a zone smaller than `size` is gone
/// over again), then the next zone starts `range + skip` bytes after it, back at the region's start
/// once past its end. Each a multiple of the block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Zones {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

/// Where a plan is in its zones, in blocks of the region: the zone's first block, its width, the next
/// sequential block, and the ops done in the zone.
#[derive(Debug, Clone)]
struct ZoneWalk {
    ops: u64,
    range: u64,
    step: u64,
    start: u64,
    pos: u64,
    done: u64,
}

impl ZoneWalk {
    /// The next op's block (relative to the region) in `nblocks`, drawn from `rng` for random ops.
    #[inline(always)]
    fn next(&mut self, pattern: Pattern, rng: &mut u64, nblocks: u64) -> u64 {
        if self.done == self.ops {
            self.done = 0;
            self.start = self.start.saturating_add(self.step);
            if self.start >= nblocks {
                self.start = 0;
            }
            self.pos = self.start;
        }
        self.done += 1;
        // A zone that runs past the region's end ends there.
        let width = self.range.min(nblocks - self.start);
        match pattern {
            Pattern::Seq => {
                if self.pos >= self.start + width {
                    self.pos = self.start;
                }
                self.pos += 1;
                self.pos - 1
            }
            Pattern::Rand => {
                let r = xorshift(rng);
                self.start + ((r as u128 * width as u128) >> 64) as u64
            }
        }
    }
}

impl OpPlan {
    /// A plan over `nblocks` blocks starting at block index `first_block` (absolute offset
    /// `spec_offset + first_block * bs`).
    pub fn new(
        pattern: Pattern,
        spec_offset: u64,
        bs: u64,
        first_block: u64,
        nblocks: u64,
        seed: u64,
        thread: u32,
    ) -> OpPlan {
        assert!(nblocks > 0, "a region holds at least one block");
        OpPlan {
            pattern,
            base: spec_offset + first_block * bs,
            bs,
            first_block,
            nblocks,
            next_seq: 0,
            rng: mix64(seed ^ 0x7EAD_0000_0000 ^ u64::from(thread)) | 1,
            skew: None,
            shuffle: None,
            write: true,
            mix: None,
            walk: None,
            per_direction: false,
        }
    }

    /// The plan walking its region zone by zone (`zones`, in bytes: multiples of the block size, as the
    /// spec checks); none changes nothing.
    pub fn zoned(mut self, zones: Option<Zones>) -> OpPlan {
        if zones.is_none() {
            return self;
        }
        self.walk = zones.map(|z| {
            Walk::Zone(ZoneWalk {
                ops: (z.size / self.bs).max(1),
                range: (z.range / self.bs).max(1),
                step: z.range.saturating_add(z.skip) / self.bs,
                start: 0,
                pos: 0,
                done: 0,
            })
        });
        self
    }

    /// The plan's sequential ops `skip` bytes apart (`--skip`, fio's `rw=read:N`; see `seq_skip.rs`); 0
    /// changes nothing.
    pub fn skipping(mut self, skip: i64) -> OpPlan {
        if skip != 0 && self.pattern == Pattern::Seq {
            let region = self.nblocks * self.bs;
            self.walk = Some(Walk::Skip(crate::seq_skip::SkipWalk::new(skip, region)));
        }
        self
    }

    /// The plan's ops of lengths drawn from `split` (`--bs-split`, whose smallest size is the plan's
    /// block; see `bs_split.rs`); none changes nothing. After [`OpPlan::skewed`]: `--distribution once`
    /// covers each block once a pass.
    pub fn sized(mut self, split: Option<&crate::bs_split::BsSplit>) -> OpPlan {
        if let Some(b) = split {
            let lens = b.lens(self.rng);
            let once = self.shuffle.is_some();
            self.walk = Some(Walk::Sized(crate::bs_split::SizedWalk::new(
                lens,
                self.nblocks,
                once,
            )));
        }
        self
    }

    /// The plan's ops write (`write`), or, with `read_pct` (`--op mixed`), each reads with that chance,
    /// drawn from the seed and the thread apart from the offsets (a mixed plan visits the same blocks).
    pub fn directed(mut self, write: bool, read_pct: Option<u32>) -> OpPlan {
        self.write = write;
        self.mix = read_pct.map(|pct| {
            let limit = (u128::from(pct.min(100)) << 64) / 100;
            (mix64(self.rng ^ 0x0D1E_C7ED) | 1, limit)
        });
        self
    }

    /// With `on` (`--walk-per-direction`), after [`OpPlan::sized`] and [`OpPlan::directed`]: a mixed
    /// sequential plan's reads and writes each walk the region from its start, as fio's rw=rw does (its
    /// last position kept per direction); anything else is left as it is.
    pub fn per_direction(mut self, on: bool) -> OpPlan {
        if !(on && self.mix.is_some() && self.pattern == Pattern::Seq) {
            return self;
        }
        self.per_direction = true;
        if self.walk.is_none() {
            self.walk = Some(Walk::TwoWay([0; 2]));
        }
        self
    }

    /// The plan with its random blocks drawn from `d` (a uniform `d` changes nothing); the same seed
    /// and thread replay the same blocks.
    pub fn skewed(mut self, d: &crate::skew::Distribution) -> OpPlan {
        let seed = self.rng;
        let scatter = (mix64(seed ^ 0x5C_A77E), mix64(seed ^ 0xADD));
        self.skew = crate::skew::Skew::new(d, self.nblocks, self.bs, scatter);
        self.shuffle = (*d == crate::skew::Distribution::Once)
            .then(|| crate::shuffle::Shuffle::new(self.nblocks, mix64(seed ^ 0x5_4FF1E)));
        self
    }

    pub fn nblocks(&self) -> u64 {
        self.nblocks
    }

    pub fn first_block(&self) -> u64 {
        self.first_block
    }

    /// The next operation (the plan never ends; the runner bounds it).
    #[inline(always)]
    pub fn next_op(&mut self) -> PlannedOp {
        if let Some(w) = &mut self.walk {
            return match w {
                Walk::Zone(z) => {
                    let rel = z.next(self.pattern, &mut self.rng, self.nblocks);
                    self.op_at(rel)
                }
                Walk::Skip(k) => {
                    let pos = k.next(self.bs);
                    self.op_at_byte(pos)
                }
                Walk::Sized(_) => self.sized_op(),
                Walk::TwoWay(_) => self.two_way_op(),
            };
        }
        let rel = match self.pattern {
            Pattern::Seq => {
                let r = self.next_seq;
                self.next_seq += 1;
                if self.next_seq == self.nblocks {
                    self.next_seq = 0;
                }
                r
            }
            Pattern::Rand => match &self.skew {
                None => match &mut self.shuffle {
                    None => {
                        let r = xorshift(&mut self.rng);
                        ((r as u128 * self.nblocks as u128) >> 64) as u64
                    }
                    Some(s) => s.next_block(),
                },
                Some(s) => {
                    let rng = &mut self.rng;
                    s.block(|| (xorshift(rng) >> 11) as f64 / (1u64 << 53) as f64)
                }
            },
        };
        self.op_at(rel)
    }

    /// The next op of a `--bs-split` plan: its start and drawn length (out of line, so that each loop the
    /// plan is inlined into does not carry its own copy).
    #[inline(never)]
    fn sized_op(&mut self) -> PlannedOp {
        // The direction first where each has its walk.
        let write = self.per_direction.then(|| self.direction());
        let Some(Walk::Sized(w)) = &mut self.walk else {
            unreachable!("called for a --bs-split plan only")
        };
        if let Some(write) = write {
            let (pos, len) = w.next_seq(self.nblocks, self.bs, write as usize);
            return PlannedOp {
                block: self.first_block + pos / self.bs,
                offset: self.base + pos,
                write,
                len: len as usize,
            };
        }
        let (pos, len) = match self.pattern {
            Pattern::Seq => w.next_seq(self.nblocks, self.bs, 0),
            Pattern::Rand => loop {
                let b = match &mut self.shuffle {
                    Some(s) => s.next_block(),
                    None => {
                        let r = xorshift(&mut self.rng);
                        ((r as u128 * self.nblocks as u128) >> 64) as u64
                    }
                };
                if let Some(x) = w.next_rand(b, self.nblocks, self.bs) {
                    break x;
                }
            },
        };
        let mut op = self.op_at_byte(pos);
        op.len = len as usize;
        op
    }

    /// The next op of a `--walk-per-direction` plan: its direction drawn, then that direction's next
    /// block (out of line, as [`OpPlan::sized_op`]).
    #[inline(never)]
    fn two_way_op(&mut self) -> PlannedOp {
        let write = self.direction();
        let Some(Walk::TwoWay(next)) = &mut self.walk else {
            unreachable!("called for a --walk-per-direction plan only")
        };
        let rel = next[write as usize];
        next[write as usize] = (rel + 1) % self.nblocks;
        PlannedOp {
            block: self.first_block + rel,
            offset: self.base + rel * self.bs,
            write,
            len: self.bs as usize,
        }
    }

    /// The op at block `rel` of the region, its direction drawn where mixed.
    #[inline(always)]
    fn op_at(&mut self, rel: u64) -> PlannedOp {
        PlannedOp {
            block: self.first_block + rel,
            offset: self.base + rel * self.bs,
            write: self.direction(),
            len: self.bs as usize,
        }
    }

    /// The op at byte `pos` of the region (`--skip`: its block is the one it starts in).
    #[inline(always)]
    fn op_at_byte(&mut self, pos: u64) -> PlannedOp {
        PlannedOp {
            block: self.first_block + pos / self.bs,
            offset: self.base + pos,
            write: self.direction(),
            len: self.bs as usize,
        }
    }

    /// Whether the next op writes: the run's direction, or drawn where mixed.
    #[inline(always)]
    fn direction(&mut self) -> bool {
        match &mut self.mix {
            None => self.write,
            Some((state, limit)) => u128::from(xorshift(state)) >= *limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_differ_per_block_and_sector() {
        let a = expected_block(4096, 7, 0);
        let b = expected_block(4096, 7, 1);
        assert_ne!(a, b);
        assert_ne!(a[0..8], a[512..520]);
        // The body between stamps is shared.
        assert_eq!(a[8..512], b[8..512]);
        // A 4-byte block holds the first 4 stamp bytes.
        let t = expected_block(4, 7, 3);
        assert_eq!(t, stamp_word(7, 3, 0).to_le_bytes()[..4].to_vec());
    }

    #[test]
    fn a_mixed_plan_reads_its_share_visits_the_same_blocks_and_replays() {
        let plan = || OpPlan::new(Pattern::Rand, 0, 4096, 0, 1000, 3, 0);
        let mut one_way = plan();
        let mut mixed = plan().directed(true, Some(70));
        let ops: Vec<PlannedOp> = (0..100_000).map(|_| mixed.next_op()).collect();
        let reads = ops.iter().filter(|o| !o.write).count();
        assert!(
            (69_000..71_000).contains(&reads),
            "{reads} reads of 100,000 at 70%"
        );
        assert!(ops.iter().all(|o| o.block == one_way.next_op().block));
        let mut again = plan().directed(true, Some(70));
        assert!(ops.iter().all(|o| *o == again.next_op()));
        for (pct, reads) in [(0, 0), (100, 1000)] {
            let mut p = plan().directed(true, Some(pct));
            assert_eq!((0..1000).filter(|_| !p.next_op().write).count(), reads);
        }
        let mut r = plan().directed(false, None);
        assert!((0..100).all(|_| !r.next_op().write));
    }

    /// fio's rw=rw: reads and writes each walk from the region's start (its iolog of a 16-block job:
    /// reads 0..9, writes 0..5), each wrapping at the end; the directions drawn as in a shared walk.
    #[test]
    fn a_mixed_walk_per_direction_starts_each_direction_at_the_region() {
        let plan = || OpPlan::new(Pattern::Seq, 0, 4096, 3, 16, 5, 0).directed(true, Some(50));
        let mut two = plan().per_direction(true);
        let ops: Vec<PlannedOp> = (0..64).map(|_| two.next_op()).collect();
        let mut shared = plan();
        assert!(ops.iter().all(|o| o.write == shared.next_op().write));
        for write in [false, true] {
            let blocks: Vec<u64> = ops
                .iter()
                .filter(|o| o.write == write)
                .map(|o| o.block)
                .collect();
            assert!(blocks.len() > 16, "{write}: {}", blocks.len());
            for (i, b) in blocks.iter().enumerate() {
                assert_eq!(*b, 3 + i as u64 % 16, "{write}: op {i}");
            }
        }
        // One direction, or random offsets: no other walk.
        let mut one = OpPlan::new(Pattern::Seq, 0, 4096, 3, 16, 5, 0).per_direction(true);
        assert!((0..32).all(|i| one.next_op().block == 3 + i % 16));
        let split = crate::bs_split::BsSplit::parse("4k-16k").unwrap();
        let mut sized = plan().sized(Some(&split)).per_direction(true);
        let mut at = [0u64; 2];
        for _ in 0..200 {
            let o = sized.next_op();
            let w = o.write as usize;
            let rel = o.offset - 3 * 4096;
            assert!(rel == at[w] || rel == 0, "{rel} after {}", at[w]);
            at[w] = rel + o.len as u64;
        }
    }

    #[test]
    fn seq_plan_wraps_and_rand_stays_in_region() {
        let mut p = OpPlan::new(Pattern::Seq, 100, 10, 5, 3, 1, 0);
        let v: Vec<_> = (0..4).map(|_| p.next_op()).collect();
        assert_eq!(
            v[0],
            PlannedOp {
                block: 5,
                offset: 150,
                write: true,
                len: 10
            }
        );
        assert_eq!(v[2].block, 7);
        assert_eq!(v[3].block, 5);
        let mut r = OpPlan::new(Pattern::Rand, 0, 4096, 10, 1000, 9, 1);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let o = r.next_op();
            assert!((10..1010).contains(&o.block));
            assert_eq!(o.offset, o.block * 4096);
            seen.insert(o.block);
        }
        assert!(
            seen.len() > 990,
            "random plan covers the region: {}",
            seen.len()
        );
        // Replays are identical.
        let mut r1 = OpPlan::new(Pattern::Rand, 0, 4096, 10, 1000, 9, 1);
        let mut r2 = r1.clone();
        assert!((0..100).all(|_| r1.next_op() == r2.next_op()));
    }
}

#[cfg(test)]
mod zone_tests {
    use super::*;

    fn blocks(mut p: OpPlan, n: usize) -> Vec<u64> {
        (0..n).map(|_| p.next_op().block).collect()
    }

    fn zones(size: u64, range: u64, skip: u64) -> Option<Zones> {
        Some(Zones {
            size: size * 4096,
            range: range * 4096,
            skip: skip * 4096,
        })
    }

    /// As fio's zonemode=strided: `size` bytes in a zone, then the zone `range + skip` further on, back
    /// to the start past the end; a zone smaller than `size` is gone over again.
    #[test]
    fn sequential_ops_walk_zone_by_zone_as_fio_strides() {
        let seq = |first, z| OpPlan::new(Pattern::Seq, 0, 4096, first, 16, 1, 0).zoned(z);
        assert_eq!(blocks(seq(0, zones(2, 4, 4)), 6), [0, 1, 8, 9, 0, 1]);
        assert_eq!(
            blocks(seq(0, zones(6, 4, 0)), 14),
            [0, 1, 2, 3, 0, 1, 4, 5, 6, 7, 4, 5, 8, 9]
        );
        // zonerange defaults to zonesize: consecutive zones of `size`, skip apart.
        assert_eq!(blocks(seq(0, zones(3, 3, 5)), 7), [0, 1, 2, 8, 9, 10, 0]);
        // A thread's region starts elsewhere: the same walk, shifted; a zone past the end is cut there.
        assert_eq!(
            blocks(seq(100, zones(4, 4, 8)), 8),
            [100, 101, 102, 103, 112, 113, 114, 115]
        );
        assert_eq!(
            blocks(seq(0, zones(4, 6, 6)), 8),
            [0, 1, 2, 3, 12, 13, 14, 15]
        );
        assert_eq!(
            blocks(seq(0, zones(6, 6, 6)), 8),
            [0, 1, 2, 3, 4, 5, 12, 13]
        );
        // A step past every block (and past 2^64 bytes) comes back to the start.
        let far = Some(Zones {
            size: 8192,
            range: u64::MAX - 4095,
            skip: u64::MAX - 4095,
        });
        assert_eq!(blocks(seq(0, far), 6), [0, 1, 0, 1, 0, 1]);
        let no = OpPlan::new(Pattern::Seq, 0, 4096, 0, 16, 1, 0).zoned(None);
        assert_eq!(blocks(no, 3), [0, 1, 2]);
    }

    #[test]
    fn random_ops_stay_in_their_zone() {
        let p = OpPlan::new(Pattern::Rand, 0, 4096, 0, 64, 7, 0).zoned(zones(10, 8, 24));
        let b = blocks(p, 40);
        // Zones at 0, 32, 0 (64 is past the end), 32: ten ops each.
        for (i, z) in [0u64, 32, 0, 32].iter().enumerate() {
            let mine = &b[i * 10..i * 10 + 10];
            assert!(
                mine.iter().all(|x| (*z..z + 8).contains(x)),
                "{i}: {mine:?}"
            );
        }
        assert!(
            b[..10].iter().any(|x| *x != b[0]),
            "drawn, not fixed: {b:?}"
        );
    }
}
