//! `nop`: no kernel call at all. The harness's own floor (like fio's null engine): the runner still plans
//! offsets, stamps the pattern into the buffer and times every op, so what remains is iolab's overhead.

use super::{Caps, Flush, Io, Method, ThreadCtx};
use crate::error::Result;

pub struct Nop;

impl Method for Nop {
    fn caps() -> Caps {
        Caps {
            synchronous: true,
            needs_rdwr: false,
            no_syscall_per_op: true,
        }
    }

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
