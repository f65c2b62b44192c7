//! `nop`: no kernel call at all. The harness's own floor (like fio's null engine): the runner still plans
//! offsets, stamps the pattern into the buffer and times every op, so what remains is iolab's overhead.

use super::api::{Flush, Io, Method, ThreadCtx};
use super::info::MethodInfo;
use super::info::SinkCalls;
use super::kind::MethodKind;
use crate::error::Result;

/// The `nop` method, as the registry (`registry::METHODS`) lists it.
pub const INFO: MethodInfo = MethodInfo {
    kind: MethodKind::Nop,
    name: "nop",
    fio_engine: Some("null"),
    help: "no kernel call, the harness's floor",
    no_data: true,
    syscall_note: "nop makes no kernel call",
    gap: |_, _, _| "nop: the harness's own floor between ops".into(),
    sink_calls: SinkCalls::Nothing,
    // Nothing moves either way, so an op may as well read as write: fio's null engine takes rw=randrw.
    mixed: true,
    drawn_lengths: true,
    ..MethodInfo::PLAIN
};

pub struct Nop;

impl Method for Nop {
    fn prepare(_ctx: &ThreadCtx) -> Result<Self> {
        Ok(Nop)
    }

    #[inline(always)]
    fn submit(&mut self, io: &Io) -> Result<usize> {
        // Keep the optimiser from deleting the buffer work the other methods pay for.
        std::hint::black_box(io.buf);
        Ok(io.len)
    }

    fn flush(&mut self, _what: Flush) -> Result<()> {
        Ok(())
    }

    fn syscalls(&self, _ops: u64) -> Option<u64> {
        Some(0)
    }
}
