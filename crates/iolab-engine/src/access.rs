//! How a random run's accesses spread over the blocks (the result's `access`): each thread's offset plan
//! replayed for the ops it completed, its hits counted per block, after the run (not timed).

use crate::measure::workload_figures::AccessFigures;
use crate::pattern::OpPlan;
use crate::spec::{Pattern, Spec};
use crate::target::PreparedTarget;
/// Runs with more ops than this are not replayed (8 bytes an op are sorted: 32 MiB at most).
const MAX_OPS: u64 = 4_000_000;

/// The spread of a random run's accesses; `None` for sequential plans and very long runs.
pub fn figures(spec: &Spec, target: &PreparedTarget, ops_done: &[u64]) -> Option<AccessFigures> {
    let total: u64 = ops_done.iter().sum();
    // A target that ignores offsets (/dev/null, /dev/zero) has no blocks to spread over.
    if spec.pattern != Pattern::Rand
        || total == 0
        || total > MAX_OPS
        || target.region_blocks == 0
        || !target.kind.keeps_data()
    {
        return None;
    }
    let mut blocks: Vec<u64> = Vec::with_capacity(total as usize);
    for (t, &done) in ops_done.iter().enumerate() {
        let t = t as u32;
        let mut plan = OpPlan::new(
            spec.pattern,
            spec.offset,
            spec.bs,
            // Each thread's own file: its blocks counted apart from the others'.
            if target.file_per_thread {
                u64::from(t) * target.region_blocks
            } else {
                target.region_first_block(t)
            },
            target.region_blocks,
            spec.seed,
            t,
        )
        .skewed(&spec.distribution)
        .sized(spec.bs_split.as_ref())
        .zoned(spec.zones);
        // With --bs-split, the block each op starts in.
        blocks.extend((0..done).map(|_| plan.next_op().block));
    }
    blocks.sort_unstable();
    let mut counts: Vec<u64> = blocks
        .chunk_by(|a, b| a == b)
        .map(|run| run.len() as u64)
        .collect();
    counts.sort_unstable();
    let tenth = (counts.len() - 1) / 10 + 1;
    let top: u64 = counts[counts.len() - tenth..].iter().sum();
    Some(AccessFigures {
        distribution: spec.distribution.name(),
        accesses: total,
        region_blocks: target.span_blocks(spec.threads),
        distinct_blocks: counts.len() as u64,
        hottest_tenth_share: top as f64 / total as f64,
    })
}
