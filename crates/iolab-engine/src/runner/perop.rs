//! What the loops hand over per op when a run asks for more than its histograms: the direction of each
//! op (`--op mixed`) and each op's start, end and offset (the traced pass of `--layers`). One call out
//! of line per op, made only when one of them is on: the loops are compiled once per method and clock.

use super::mixed::MixOut;
use crate::error::Result;
use crate::measure::blocktrace::OpRec;

pub(super) struct PerOp {
    pub(super) mix: Option<MixOut>,
    /// The ops logged, up to the capacity reserved before the loop (never grown inside it).
    pub(super) log: Option<Vec<OpRec>>,
}

impl PerOp {
    /// For a worker: `None` unless the run is mixed or logs its ops (at most `log_ops` of them).
    pub(super) fn for_worker(mixed: bool, log_ops: u64) -> Result<Option<PerOp>> {
        if !mixed && log_ops == 0 {
            return Ok(None);
        }
        Ok(Some(PerOp {
            mix: mixed.then(MixOut::try_new).transpose()?,
            log: (log_ops > 0).then(|| Vec::with_capacity(log_ops as usize)),
        }))
    }

    /// One op done: its direction, its offset, and its (start, end) ticks where the loop timed it.
    #[inline(never)]
    pub(super) fn op(&mut self, write: bool, offset: u64, timed: Option<(u64, u64)>) {
        if let Some(m) = self.mix.as_mut() {
            m.op(write, timed.map(|(s, e)| e.saturating_sub(s)));
        }
        if let (Some(log), Some((start, end))) = (self.log.as_mut(), timed) {
            if log.len() < log.capacity() {
                log.push(OpRec {
                    write,
                    start,
                    end,
                    offset,
                });
            }
        }
    }
}
