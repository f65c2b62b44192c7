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

/// SplitMix64's finaliser: a bijective 64-bit mix.
#[inline(always)]
pub fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

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

/// The next xorshift64* draw of the generator whose state is `x`.
#[inline(always)]
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// One planned operation: the block index (relative to `--offset`), its absolute byte offset, and
/// whether it writes (the run's direction, or drawn per op for `--op mixed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedOp {
    pub block: u64,
    pub offset: u64,
    pub write: bool,
}

/// The stamps of a block that a mixed run's file holds before the run: another generation of the
/// block's stamps (its index with this bit set), so `--verify` tells a block a write reached from one it
/// did not, whose body is the same.
pub const PREFILL_GENERATION: u64 = 1 << 41;

/// The sequence of blocks one thread visits in its region.
///
/// Sequential: the region's blocks in order, wrapping at the end. Random: uniformly chosen blocks of the
/// region (with replacement) from an xorshift64* generator seeded by the run seed and the thread number,
/// reduced without division (Lemire's multiply-shift), so the plan can be replayed exactly by `--verify`.
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
    /// The direction of every op, unless `mix` draws it.
    write: bool,
    /// `--op mixed`: an op reads when a draw of this generator (its state) is below the limit, the read
    /// share of 2^64.
    mix: Option<(u64, u128)>,
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
            write: true,
            mix: None,
        }
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

    /// The plan with its random blocks drawn from `d` (a uniform `d` changes nothing); the same seed
    /// and thread replay the same blocks.
    pub fn skewed(mut self, d: crate::skew::Distribution) -> OpPlan {
        let seed = self.rng;
        let scatter = (mix64(seed ^ 0x5C_A77E), mix64(seed ^ 0xADD));
        self.skew = crate::skew::Skew::new(d, self.nblocks, scatter);
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
                None => {
                    let r = xorshift(&mut self.rng);
                    ((r as u128 * self.nblocks as u128) >> 64) as u64
                }
                Some(s) => {
                    let rng = &mut self.rng;
                    s.block(|| (xorshift(rng) >> 11) as f64 / (1u64 << 53) as f64)
                }
            },
        };
        let write = match &mut self.mix {
            None => self.write,
            Some((state, limit)) => u128::from(xorshift(state)) >= *limit,
        };
        PlannedOp {
            block: self.first_block + rel,
            offset: self.base + rel * self.bs,
            write,
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

    #[test]
    fn seq_plan_wraps_and_rand_stays_in_region() {
        let mut p = OpPlan::new(Pattern::Seq, 100, 10, 5, 3, 1, 0);
        let v: Vec<_> = (0..4).map(|_| p.next_op()).collect();
        assert_eq!(
            v[0],
            PlannedOp {
                block: 5,
                offset: 150,
                write: true
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
