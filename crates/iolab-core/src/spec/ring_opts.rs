//! The io_uring ring options' values and the combinations the kernel (or a ring design) refuses.

use super::*;
use crate::method::Exec;

impl RawSpec {
    pub(super) fn ring_opts(
        &self,
        method: MethodKind,
        direct: bool,
        verify: bool,
        threads: u64,
    ) -> Result<RingOpts> {
        let small = |key: &str| -> Result<Option<u32>> {
            Ok(self.count(key)?.map(|n| n.min(u32::MAX as u64) as u32))
        };
        let ring = RingOpts {
            sqpoll: self.bool("sqpoll")?,
            sq_idle_ms: small("sq-idle-ms")?.unwrap_or(DEFAULT_SQ_IDLE_MS),
            sq_cpu: small("sq-cpu")?,
            iopoll: self.bool("iopoll")?,
            fixed_files: self.bool("fixed-files")?,
            fixed_bufs: self.bool("fixed-bufs")?,
            coop_taskrun: self.bool("coop-taskrun")?,
            single_issuer: self.bool("single-issuer")?,
            defer_taskrun: self.bool("defer-taskrun")?,
            registered_ring: self.bool("registered-ring")?,
            vectored: self.bool("vectored")?,
            nop_requests: self.bool("nop-requests")?,
            design: self.ring_design()?,
        };
        check_design(&ring, threads)?;
        if ring.nop_requests && verify {
            return Err(Error::usage(
                "--verify",
                "--nop-requests moves no data, so there is nothing to verify",
            ));
        }
        // The offload kernel path's SQ thread takes --sq-idle-ms/--sq-cpu without --sqpoll.
        let own_sq_thread = method.info().exec == Exec::OutOfProcess;
        if !ring.sqpoll && !own_sq_thread {
            if let Some(k) = ["sq-idle-ms", "sq-cpu"].into_iter().find(|k| self.has(k)) {
                return Err(Error::usage(format!("--{k}"), "applies to --sqpoll only"));
            }
        }
        check_sq_cpu(ring.sq_cpu)?;
        if ring.iopoll && !direct {
            return Err(Error::usage(
                "--iopoll",
                "needs --direct: polled completions exist only for O_DIRECT I/O",
            ));
        }
        check_flags(&ring)?;
        Ok(ring)
    }

    fn ring_design(&self) -> Result<RingDesign> {
        let Some(w) = self.text("ring")? else {
            return Ok(RingDesign::PerThread);
        };
        RingDesign::parse(&w).ok_or_else(|| {
            Error::usage(
                "--ring",
                format!("'{w}' is not accepted; expected per-thread, shared, shared-submitter or producer-consumer"),
            )
        })
    }
}

/// What a ring design cannot do.
fn check_design(ring: &RingOpts, threads: u64) -> Result<()> {
    if ring.design == RingDesign::ProducerConsumer && ring.defer_taskrun {
        return Err(Error::usage(
            "--defer-taskrun",
            "with --ring producer-consumer a consumer thread waits for completions, but DEFER_TASKRUN posts \
             them only to the submitting thread: drop --defer-taskrun or use --ring per-thread",
        ));
    }
    if ring.design == RingDesign::Shared && threads > 1 && ring.single_issuer {
        return Err(Error::usage(
            "--single-issuer",
            "every thread submits to a --ring shared ring, but SINGLE_ISSUER allows one submitting task: \
             use --ring shared-submitter (one submitting thread) or --ring per-thread",
        ));
    }
    Ok(())
}

fn check_sq_cpu(cpu: Option<u32>) -> Result<()> {
    let Some(c) = cpu else { return Ok(()) };
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as u32;
    if c >= n {
        return Err(Error::usage(
            "--sq-cpu",
            format!(
                "CPU {c} does not exist; this machine has CPUs 0 to {}",
                n - 1
            ),
        ));
    }
    Ok(())
}

/// Setup and registration flags the kernel refuses together.
fn check_flags(ring: &RingOpts) -> Result<()> {
    if ring.defer_taskrun && !ring.single_issuer {
        return Err(Error::usage(
            "--defer-taskrun",
            "needs --single-issuer (IORING_SETUP_DEFER_TASKRUN requires SINGLE_ISSUER)",
        ));
    }
    if ring.sqpoll && (ring.coop_taskrun || ring.defer_taskrun) {
        let flag = if ring.coop_taskrun {
            "--coop-taskrun"
        } else {
            "--defer-taskrun"
        };
        return Err(Error::usage(
            flag,
            "cannot be combined with --sqpoll (the kernel refuses task-run flags on SQPOLL rings)",
        ));
    }
    if ring.fixed_bufs && ring.vectored {
        return Err(Error::usage(
            "--fixed-bufs",
            "uses READ_FIXED/WRITE_FIXED, which are not vectored; drop --vectored",
        ));
    }
    Ok(())
}
