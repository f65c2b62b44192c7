//! `--layers`: the traced pass (see `measure/blocktrace`): which disk the target's requests go to, the
//! pass's workload, and its figures from the ops the workers logged.

use super::work::WorkerOut;
use crate::measure::blocktrace::{self, BlockTrace, SectorMap, LAYERS_OPS};
use crate::measure::clock::ClockKind;
use crate::result::LayerFigures;
use crate::spec::Spec;
use crate::target::{PreparedTarget, TargetKind};

/// How a traced pass that could not split its ops says why, in its notes.
pub(super) const NOTE: &str = "layers: ";

/// Opens the tracer for a run, or says why there is none.
pub(super) fn tracer(spec: &Spec, clock: ClockKind) -> Result<BlockTrace, String> {
    if let Some(k) = TargetKind::stream_named(&spec.target) {
        return Err(format!(
            "a {k:?} target has no block layer under it (a file or a block device has)"
        ));
    }
    let disk = blocktrace::disk_of_path(&spec.target)?;
    BlockTrace::open(disk, clock)
}

/// The traced pass's workload: the counting pass's, at most [`LAYERS_OPS`] ops (four per request in
/// flight at least) and 1 s, with a clock read after every op.
pub(super) fn traced_spec(spec: &Spec) -> Spec {
    let mut s = spec.for_counting_pass();
    let floor = 4 * spec.qd.max(1) as u64 * spec.threads as u64;
    s.ops = Some(spec.ops.unwrap_or(LAYERS_OPS).min(LAYERS_OPS.max(floor)));
    s.duration_s = spec.duration_s.map(|d| d.min(1.0));
    s.clock_every = Some(1);
    s
}

/// The pass's figures: the target's offsets mapped to the disk, the workers' logged ops split.
pub(super) fn figures(
    t: &BlockTrace,
    spec: &Spec,
    target: &PreparedTarget,
    outs: &[WorkerOut],
) -> Result<LayerFigures, String> {
    let extents = match target.kind {
        TargetKind::BlockDevice => None,
        TargetKind::File => {
            let fd = target
                .reopen(libc::O_RDONLY)
                .map_err(|e| format!("reopening the target to map it: {e}"))?;
            let ext =
                iolab_sys::file_extents(std::os::fd::AsRawFd::as_raw_fd(&fd)).map_err(|e| {
                    format!(
                        "the filesystem cannot say where the file's blocks lie (FIEMAP: {})",
                        iolab_sys::errno_name(e.errno)
                    )
                })?;
            Some(ext)
        }
        _ => return Err("the target is no file or block device".into()),
    };
    let map = SectorMap {
        extents,
        start: t.disk.start,
    };
    let logs: Vec<&[blocktrace::OpRec]> = outs
        .iter()
        .filter_map(|o| o.perop.as_ref()?.log.as_deref())
        .collect();
    if logs.iter().all(|l| l.is_empty()) {
        return Err(
            "the traced pass timed no op on its own (one clock read per op is needed)".into(),
        );
    }
    t.figures(&logs, &map, spec.bs)
}
