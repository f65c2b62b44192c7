//! How a run reads the clock: `--clock-every` and `--latency-sample`, checked as [`RawSpec::resolve`]
//! reads them.

use crate::error::{Error, Result};
use crate::method::info::Exec;
use crate::spec::*;

impl RawSpec {
    /// --clock-every: 1 to [`MAX_CLOCK_EVERY`], and only for methods that complete each op inside its call (the queued
    /// ones read the clock once per submission round, a client process of its own is timed from outside).
    pub(super) fn clock_every(&self, method: MethodKind) -> Result<Option<u64>> {
        let Some(n) = self.count("clock-every")? else {
            return Ok(None);
        };
        if n == 0 || n > MAX_CLOCK_EVERY {
            return Err(Error::usage(
                "--clock-every",
                format!(
                    "{n} ops per clock read: give 1 (a read after every op) to {} (the deadline, \
                     intervals and progress are looked at on those reads)",
                    crate::units::thousands_u64(MAX_CLOCK_EVERY)
                ),
            ));
        }
        if n > 1 && !method.info().synchronous() {
            return Err(Error::usage(
                "--clock-every",
                format!(
                    "--method {} does not read the clock per op ({}): --clock-every applies to methods that \
                     complete each op inside their call; drop it",
                    method.name(),
                    if method.info().exec == Exec::OutOfProcess {
                        "its client runs as a process of its own, timed from outside"
                    } else {
                        "it reads it once per submission round"
                    }
                ),
            ));
        }
        Ok(Some(n))
    }

    /// --latency-sample: 0 to [`MAX_CLOCK_EVERY`]; above 1 only for methods that complete each op inside
    /// their call, 0 for those and the queued ones; not with what needs every op timed.
    pub(super) fn latency_sample(&self, method: MethodKind) -> Result<Option<u64>> {
        let Some(n) = self.count("latency-sample")? else {
            return Ok(None);
        };
        let flag = "--latency-sample";
        if n > MAX_CLOCK_EVERY {
            return Err(Error::usage(
                flag,
                format!(
                    "one op in {n}: give 0 (none), 1 (every op) or up to {}",
                    crate::units::thousands_u64(MAX_CLOCK_EVERY)
                ),
            ));
        }
        let exec = method.info().exec;
        if exec == Exec::OutOfProcess && n != 1 {
            return Err(Error::usage(
                flag,
                format!(
                    "--method {}'s client runs as a process of its own, timed from outside: \
                     --latency-sample does not apply to it",
                    method.name()
                ),
            ));
        }
        if exec == Exec::Queued && n > 1 {
            return Err(Error::usage(
                flag,
                format!(
                    "--method {} times its requests by its submission rounds, not one op at a time: \
                     give 0 (no request timed) or 1 (every request, the default)",
                    method.name()
                ),
            ));
        }
        if self.has("clock-every") {
            return Err(Error::usage(
                flag,
                "--clock-every sets the clock reads itself: give one of the two",
            ));
        }
        let needs_every_op = [
            ("rate-iops", "times every op from when it was due"),
            ("rate", "times every op from when it was due"),
            ("op-log", "logs every op's start and end"),
            (
                "log-interval",
                "gives each interval's latency, which needs every op timed",
            ),
        ];
        if let Some((other, why)) = needs_every_op.iter().find(|(o, _)| self.has(o)) {
            if n != 1 {
                return Err(Error::usage(
                    flag,
                    format!("--{other} {why}: give one of the two"),
                ));
            }
        }
        Ok(Some(n))
    }
}
