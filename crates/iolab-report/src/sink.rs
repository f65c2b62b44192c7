//! The sink driver's lines of a run's table: its personality and what it counted over the timed pass (the
//! checks against iolab's own counts are among the table's cross-checks).

use iolab_engine::result::RunResult;
use iolab_engine::units::thousands_u64;
use iolab_engine::units::{fmt_ns, fmt_size};
use std::fmt::Write;

/// "sink driver  personality legacy ...", when the target was iolab's sink driver.
pub(crate) fn sink_text(r: &RunResult, o: &mut String) {
    let Some(s) = &r.sink else {
        return;
    };
    let c = &s.counted;
    let _ = writeln!(
        o,
        "sink driver  personality {}{}, buffer {}: write {} calls {} B, read {} calls {} B, uring_cmd {} calls {} B, \
         mmap {}",
        s.personality.map(|p| p.name()).unwrap_or("?"),
        if s.log { ", a log line and tracepoint per write" } else { "" },
        fmt_size(s.buffer_bytes),
        thousands_u64(c.write_calls),
        thousands_u64(c.write_bytes),
        thousands_u64(c.read_calls),
        thousands_u64(c.read_bytes),
        thousands_u64(c.cmd_calls),
        thousands_u64(c.cmd_bytes),
        c.mmaps
    );
    let calls = c.write_calls + c.read_calls + c.cmd_calls;
    if calls > 0 {
        let _ = writeln!(
            o,
            "             {} of its {} calls ({:.0}%) made by io_uring's io-wq workers; {} with IOCB_NOWAIT{}",
            thousands_u64(c.worker_calls),
            thousands_u64(calls),
            s.worker_share.unwrap_or(0.0) * 100.0,
            thousands_u64(c.nowait_calls),
            if s.log {
                format!("; {} log lines", thousands_u64(c.log_lines))
            } else {
                String::new()
            }
        );
    }
    if let Some(g) = &s.driver_gaps {
        let _ = writeln!(
            o,
            "             time between writes as the driver saw them (its log line's ktime): p50 {}, p99 {}, \
             p99.9 {}, max {}, mean {} over {} gaps",
            fmt_ns(g.p50_ns),
            fmt_ns(g.p99_ns),
            fmt_ns(g.p999_ns),
            fmt_ns(g.max_ns),
            fmt_ns(g.mean_ns),
            thousands_u64(g.count)
        );
    }
}
