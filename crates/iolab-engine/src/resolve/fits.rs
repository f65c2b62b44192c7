//! What a run needs of memory: per thread (its latency tables and buffers), checked against what the
//! machine has before anything starts.
use crate::error::{Error, Result};
use crate::mem::meminfo;
use crate::units::fmt_size;

/// Per-thread memory a run needs besides its I/O buffers: the two latency histograms of
/// [`crate::measure::hist::FastHist`] and the thread's stack (Rust's 2 MiB default).
pub(crate) const PER_THREAD: u64 = 2 * crate::measure::hist::FastHist::BYTES as u64 + (2 << 20);

/// Refuses (exit 2, before anything is created) a run whose buffers alone exceed this machine's memory
/// (MemTotal): threads x (requests in flight x --bs + --stdio-buffer), plus the threads' histograms and
/// stacks. Such a run could not be measured even where the kernel overcommits (every buffer is written),
/// and would end in the OOM killer. The message names the flag, its value and the most it can be here.
pub fn check_fits(spec: &crate::spec::Spec) -> Result<()> {
    match meminfo("MemTotal") {
        Some(total) => check_fits_in(spec, total),
        None => Ok(()),
    }
}

pub(crate) fn check_fits_in(spec: &crate::spec::Spec, total: u64) -> Result<()> {
    let info = spec.method.info();
    let slots = if info.synchronous() {
        1
    } else {
        spec.qd as u64
    };
    let threads = spec.threads as u64;
    let stdio = if info.user_buffered {
        threads.saturating_mul(spec.stdio_buffer)
    } else {
        0
    };
    // --log-interval: a third histogram per thread (the run's total while the loop's holds an interval).
    let log = crate::measure::hist::FastHist::BYTES as u64 * u64::from(spec.log_interval().0 > 0);
    let fixed = threads * (PER_THREAD + log);
    let buffers = threads.saturating_mul(slots).saturating_mul(spec.buf_len());
    let need = buffers.saturating_add(stdio).saturating_add(fixed);
    if need <= total {
        return Ok(());
    }
    let room = total.saturating_sub(fixed);
    let (flag, value, max) = if stdio > buffers {
        let max = room.saturating_sub(buffers) / threads;
        ("--stdio-buffer", spec.stdio_buffer, max)
    } else {
        let max = room.saturating_sub(stdio) / (threads * slots);
        (
            if spec.bs_split.is_some() {
                "--bs-split"
            } else {
                "--bs"
            },
            spec.buf_len(),
            max,
        )
    };
    let per = if slots > 1 {
        format!("{threads} thread(s) x --qd {slots}")
    } else {
        format!("{threads} thread(s)")
    };
    Err(Error::usage(
        flag,
        format!(
            "{} ({value} bytes) is more than this machine can hold: with {per}, the run's buffers would take {}, more \
             than its memory (MemTotal {}); the most {flag} can be here is {}: lower it{}",
            fmt_size(value),
            fmt_size(need),
            fmt_size(total),
            fmt_size(max),
            if threads > 1 || slots > 1 {
                " (or --threads/--qd)"
            } else {
                ""
            },
        ),
    ))
}
