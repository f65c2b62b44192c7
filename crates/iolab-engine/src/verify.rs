//! `--verify`: read the target back and check every block the run wrote against its pattern
//! (see `pattern.rs`: the content depends only on the run seed and the block index).
//!
//! The blocks written are found by replaying each thread's offset plan for the number of ops the thread
//! completed (sequential: the first N blocks of its region, all of them once it wrapped; random, or the
//! writes of a mixed run: the replayed set), so blocks never written are not judged. A mixed run's file
//! was filled with another generation of stamps before the run, so a write that did not land shows.
//! A read run's blocks are found the same way (its plan's ops all read): each must hold the pattern an
//! iolab write run with the same seed, `--bs` and `--offset` put there (fio's read job with verify). The
//! bytes each read delivered are not what is checked: the blocks are read again. Reading is buffered
//! (page cache), in 1 MiB chunks, after the run's descriptors are closed.

use crate::error::{Error, Result};
use crate::pattern::{self, OpPlan};
use crate::result::VerifyFigures;
use crate::spec::{Pattern, Spec};
use crate::target::PreparedTarget;
use iolab_sys as sys;
use std::os::fd::AsRawFd;

/// A bitmap of written blocks in one region.
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: u64) -> Result<Bits> {
        crate::mem::zeroed(
            n.div_ceil(64) as usize,
            "the --verify bitmap of written blocks (one bit per block of a thread's region)",
            "lower --file-size or raise --bs",
        )
        .map(Bits)
    }
    fn set(&mut self, i: u64) {
        self.0[(i / 64) as usize] |= 1 << (i % 64);
    }
    fn get(&self, i: u64) -> bool {
        self.0[(i / 64) as usize] & (1 << (i % 64)) != 0
    }
}

/// Checks every block the threads wrote; `ops_done[t]` is thread t's completed op count.
pub fn verify(spec: &Spec, target: &PreparedTarget, ops_done: &[u64]) -> Result<VerifyFigures> {
    let bs = spec.bs as usize;
    let nblocks = target.region_blocks;
    let per_chunk = ((1usize << 20) / bs).max(1) as u64;
    // The pattern's body, the expected block and the read-back chunk (at least one block each).
    let what = "the --verify buffers (three of at least --bs each)";
    let buffer = |n: usize| crate::mem::zeroed::<u8>(n, what, "lower --bs");
    let mut body = buffer(bs)?;
    pattern::fill_body(&mut body, spec.seed);
    let mut expect = buffer(bs)?;
    let mut chunk = buffer(per_chunk as usize * bs)?;
    let mut out = VerifyFigures::default();
    let began = std::time::Instant::now();

    let mut bits = Bits::new(0)?;
    for (t, &done) in ops_done.iter().enumerate() {
        let first = target.region_first_block(t as u32);
        // Threads sharing one region (--share-region) write the same stamps to a block: their written
        // blocks are one set, checked once after the last thread's.
        if !target.shared || t == 0 {
            bits = Bits::new(nblocks)?;
        }
        let last = t + 1 == ops_done.len();
        let t = t as u32;
        // Through the target's handle (the thread's own file, with a file per thread): what iolab
        // wrote, never a file put in its place since.
        let own = target.for_thread(t);
        let fd = own.reopen(own.read_flags())?;
        match (spec.pattern, spec.read_pct, spec.zones) {
            // Sequential ops without zones: the first blocks, in a row.
            (Pattern::Seq, None, None) => {
                for b in 0..done.min(nblocks) {
                    bits.set(b);
                }
            }
            // Random offsets, zones, or a mixed run's writes: the plan replayed, the blocks its writes
            // reached (a plan directed one way marks every op: a read run's reads too).
            _ => {
                let mut plan = OpPlan::new(
                    spec.pattern,
                    spec.offset,
                    spec.bs,
                    first,
                    nblocks,
                    spec.seed,
                    t,
                )
                .skewed(&spec.distribution)
                .zoned(spec.zones)
                .skipping(spec.skip)
                .directed(true, spec.read_pct)
                .per_direction(spec.walk_per_direction);
                for _ in 0..done {
                    let op = plan.next_op();
                    if op.write {
                        bits.set(op.block - first);
                    }
                }
            }
        }
        if target.shared && !last {
            continue;
        }
        let mut c = 0u64;
        while c < nblocks {
            let n = per_chunk.min(nblocks - c);
            if !(c..c + n).any(|b| bits.get(b)) {
                c += n;
                continue;
            }
            let buf = &mut chunk[..n as usize * bs];
            let off = spec.offset + (first + c) * spec.bs;
            let mut got = 0usize;
            while got < buf.len() {
                let r = sys::pread(fd.as_raw_fd(), &mut buf[got..], off + got as u64)
                    .map_err(|e| Error::sys_on(e, own.path.display().to_string()))?;
                if r == 0 {
                    break;
                }
                got += r;
            }
            // Bytes past the end of the file read as missing (zeros), which the pattern never is.
            buf[got..].fill(0);
            for i in 0..n {
                if !bits.get(c + i) {
                    continue;
                }
                let block = first + c + i;
                expect.copy_from_slice(&body);
                pattern::stamp(&mut expect, spec.seed, block);
                let have = &buf[i as usize * bs..(i as usize + 1) * bs];
                out.blocks_checked += 1;
                out.bytes_checked += bs as u64;
                if have != expect.as_slice() {
                    out.mismatches += 1;
                    if out.first_mismatch_offsets.len() < 10 {
                        out.first_mismatch_offsets
                            .push(spec.offset + block * spec.bs);
                    }
                }
            }
            c += n;
        }
    }
    out.read_back_s = Some(began.elapsed().as_secs_f64());
    Ok(out)
}
