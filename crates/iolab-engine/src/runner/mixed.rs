//! `--op mixed`: each worker's reads and writes counted and timed apart, and the pass's figures for each
//! direction (the result's `mixed`).

use crate::error::{Error, Result};
use crate::measure::hist::{new_hist, summarize, FastHist};
use crate::result::{DirFigures, MixedFigures};

/// One worker's ops and latencies by direction: index 0 reads, 1 writes.
pub(super) struct MixOut {
    pub(super) lat: [FastHist; 2],
    pub(super) ops: [u64; 2],
}

impl MixOut {
    pub(super) fn try_new() -> Result<MixOut> {
        Ok(MixOut {
            lat: [FastHist::try_new()?, FastHist::try_new()?],
            ops: [0, 0],
        })
    }

    /// One op done; its latency in ticks where the loop timed it (through `PerOp::op`).
    pub(super) fn op(&mut self, write: bool, lat: Option<u64>) {
        let d = usize::from(write);
        self.ops[d] += 1;
        if let Some(v) = lat {
            self.lat[d].record(v);
        }
    }
}

/// The pass's reads and writes, each over the pass's wall time (`None` unless the run was mixed): ops of
/// `bs`, or with `--bs-split` the bytes `moved` read and written.
pub(super) fn figures(
    mixes: &[&MixOut],
    read_pct: Option<u32>,
    (bs, moved): (u64, Option<[u64; 2]>),
    ns_per_tick: f64,
    wall_s: f64,
) -> Result<Option<MixedFigures>> {
    let Some(read_pct) = read_pct else {
        return Ok(None);
    };
    let total: u64 = mixes.iter().map(|m| m.ops[0] + m.ops[1]).sum();
    let dir = |d: usize| -> Result<DirFigures> {
        let mut h = new_hist();
        let mut ops = 0;
        for m in mixes {
            ops += m.ops[d];
            h.add(m.lat[d].into_hdr())
                .map_err(|e| Error::Runtime(format!("histogram merge: {e}")))?;
        }
        let per_s = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
        let bytes = moved.map_or(ops * bs, |m| m[d]);
        Ok(DirFigures {
            ops,
            bytes,
            share: if total > 0 {
                ops as f64 / total as f64
            } else {
                0.0
            },
            iops: per_s(ops as f64),
            mib_s: per_s(bytes as f64 / (1u64 << 20) as f64),
            latency: summarize(&h, ns_per_tick),
        })
    };
    Ok(Some(MixedFigures {
        read_pct,
        reads: dir(0)?,
        writes: dir(1)?,
    }))
}
