//! What the sink driver counted in a pass, checked against what iolab knows it did.

use crate::method::info::SinkCalls;
use crate::result::RunResult;
use crate::sink_device::Personality;
use crate::sink_device::SinkCheck;
use crate::sink_device::SinkFigures;
use crate::spec::OpKind;
use iolab_sys::SinkCounters;

impl SinkFigures {
    /// Fills in the checks of a pass's counted figures against the result's own counts.
    pub fn check_against(&mut self, r: &RunResult) {
        let c = self.counted;
        let calls = c.write_calls + c.read_calls + c.cmd_calls;
        self.worker_share = (calls > 0).then(|| c.worker_calls as f64 / calls as f64);
        self.checks = expected(r, self.personality)
            .into_iter()
            .map(|(what, driver_of, iolab)| {
                let driver = driver_of(&c);
                SinkCheck {
                    what: what.into(),
                    driver,
                    iolab,
                    agrees: driver == iolab,
                }
            })
            .collect();
        if self.log {
            self.checks.push(SinkCheck {
                what: "log lines (one per write call)".into(),
                driver: c.log_lines,
                iolab: c.write_calls,
                agrees: c.log_lines == c.write_calls,
            });
        }
    }
}

pub(crate) type Expectation = (&'static str, fn(&SinkCounters) -> u64, u64);

/// What the driver should have counted, by what iolab knows it did: (what, the driver's counter, iolab's
/// figure).
pub(crate) fn expected(r: &RunResult, personality: Option<Personality>) -> Vec<Expectation> {
    let calls = r.spec.method.info().sink_calls;
    let write = r.spec.op == OpKind::Write;
    let mut v: Vec<Expectation> = Vec::new();
    match calls {
        SinkCalls::UringCmd => {
            v.push(("uring_cmd calls", |c| c.cmd_calls, r.ops));
            v.push(("uring_cmd bytes", |c| c.cmd_bytes, r.bytes));
        }
        SinkCalls::Mapped => {
            v.push((
                "write and read calls (mmap makes none)",
                |c| c.write_calls + c.read_calls,
                0,
            ));
            v.push((
                "mmap calls (one per thread)",
                |c| c.mmaps,
                r.spec.threads as u64,
            ));
        }
        SinkCalls::Nothing => {}
        _ if write => {
            v.push(("write bytes", |c| c.write_bytes, r.bytes));
            if let Some(n) = calls_per_op(r, calls, personality) {
                v.push(("write calls", |c| c.write_calls, n));
            }
        }
        _ => {
            v.push(("read bytes", |c| c.read_bytes, r.bytes));
            if let Some(n) = calls_per_op(r, calls, personality) {
                v.push(("read calls", |c| c.read_calls, n));
            }
        }
    }
    v
}

/// The driver calls iolab's ops make, where iolab knows them: one per op (one per iovec for vectored I/O
/// on the legacy personality, whose .write the kernel calls once per iovec); stdio's are glibc's choice.
pub(crate) fn calls_per_op(
    r: &RunResult,
    calls: SinkCalls,
    personality: Option<Personality>,
) -> Option<u64> {
    match calls {
        SinkCalls::BytesOnly => None,
        SinkCalls::PerRequest => r.syscalls.uring_requests.or(Some(r.ops)),
        SinkCalls::PerIovecOnLegacy if personality == Some(Personality::Legacy) => {
            Some(r.ops * r.spec.iovecs as u64)
        }
        _ => Some(r.ops),
    }
}
