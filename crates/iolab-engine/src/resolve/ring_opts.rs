//! The io_uring ring options' values and the combinations the kernel (or a ring design) refuses.

use crate::error::{Error, Result};
use crate::method::info::Exec;
use crate::spec::*;

impl RawSpec {
    pub(super) fn ring_opts(
        &self,
        method: MethodKind,
        direct: bool,
        verify: bool,
        threads: u64,
        at: RunsOn,
    ) -> Result<RingOpts> {
        let mut ring = RingOpts {
            sqpoll: self.bool("sqpoll")?,
            sq_idle_ms: DEFAULT_SQ_IDLE_MS,
            sq_cpu: None,
            iopoll: self.bool("iopoll")?,
            fixed_files: self.bool("fixed-files")?,
            fixed_bufs: self.bool("fixed-bufs")?,
            coop_taskrun: self.bool("coop-taskrun")?,
            single_issuer: self.bool("single-issuer")?,
            defer_taskrun: self.bool("defer-taskrun")?,
            registered_ring: self.bool("registered-ring")?,
            vectored: self.bool("vectored")?,
            nop_requests: self.bool("nop-requests")?,
            send_zc: self.bool("send-zc")?,
            wait_region: self.bool("wait-region")?,
            design: self.ring_design()?,
            no_sqarray: false,
            recommended: Vec::new(),
            min_wait_usec: self.min_wait_usec()?,
            wait_nr: 0,
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
        ring.sq_idle_ms = self.sq_idle_ms()?;
        ring.sq_cpu = check_sq_cpu(self.count("sq-cpu")?, at)?;
        // uring_cmd takes no --direct: its commands never pass through the page cache.
        if ring.iopoll && !direct && method.info().no_direct.is_none() {
            return Err(Error::usage(
                "--iopoll",
                "needs --direct: polled completions exist only for O_DIRECT I/O",
            ));
        }
        check_flags(&ring)?;
        if ring.min_wait_usec > 0 && ring.iopoll {
            return Err(Error::usage(
                "--min-wait",
                "with --iopoll completions are polled for, never slept for: drop one of the two",
            ));
        }
        if self.ring_setup_recommended()? {
            ring.recommend(threads);
        }
        Ok(ring)
    }

    /// --min-wait: µs, 1 to u32::MAX (the kernel's min_wait_usec is a u32).
    fn min_wait_usec(&self) -> Result<u32> {
        let Some(us) = self.count("min-wait")? else {
            return Ok(0);
        };
        if us == 0 {
            return Err(Error::usage(
                "--min-wait",
                "expected 1 µs or more (leave it out for no minimum wait)",
            ));
        }
        u32::try_from(us).map_err(|_| {
            Error::usage(
                "--min-wait",
                format!("{us} µs is beyond what the kernel takes (min_wait_usec is 32 bits, at most {})", u32::MAX),
            )
        })
    }

    /// --ring-setup: recommended (the default) or plain.
    fn ring_setup_recommended(&self) -> Result<bool> {
        match self.text("ring-setup")?.as_deref() {
            None | Some("recommended") => Ok(true),
            Some("plain") => Ok(false),
            Some(w) => Err(Error::usage(
                "--ring-setup",
                format!("'{w}' is not accepted; expected recommended or plain"),
            )),
        }
    }

    /// --sq-idle-ms: the kernel's sq_thread_idle is a u32 of milliseconds.
    fn sq_idle_ms(&self) -> Result<u32> {
        match self.count("sq-idle-ms")? {
            None => Ok(DEFAULT_SQ_IDLE_MS),
            Some(ms) => u32::try_from(ms).map_err(|_| {
                Error::usage(
                    "--sq-idle-ms",
                    format!(
                        "{ms} ms is beyond what the kernel takes (sq_thread_idle is a 32-bit count of ms, at most {})",
                        u32::MAX
                    ),
                )
            }),
        }
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

/// One setup flag of a ring's options, to read or clear.
type FlagOf = fn(&mut RingOpts) -> &mut bool;

impl RingOpts {
    /// Adds the flags of the recommended ring that this design and these flags allow (what fio's
    /// t/io_uring and liburing's authors set): the task-run flags need one submitting task that also reaps
    /// (not SQPOLL, not a ring several threads submit to, not a consumer thread reaping another's ring).
    pub fn recommend(&mut self, threads: u64) {
        let one_task = match self.design {
            RingDesign::PerThread | RingDesign::SharedSubmitter => true,
            RingDesign::Shared => threads == 1,
            RingDesign::ProducerConsumer => false,
        };
        let added = &mut self.recommended;
        let mut add = |on: &mut bool, name: &str| {
            if !*on {
                *on = true;
                added.push(name.to_string());
            }
        };
        if !self.sqpoll {
            add(&mut self.coop_taskrun, "COOP_TASKRUN");
            if one_task {
                add(&mut self.single_issuer, "SINGLE_ISSUER");
                add(&mut self.defer_taskrun, "DEFER_TASKRUN");
            }
        }
        add(&mut self.no_sqarray, "NO_SQARRAY");
        add(&mut self.registered_ring, "REGISTER_RING_FDS");
    }

    /// Drops the newest recommended setup flag still set (the one an older kernel is likeliest to lack),
    /// with SINGLE_ISSUER going after DEFER_TASKRUN, which needs it; None when none is left to drop.
    pub fn drop_recommended_setup(&mut self) -> Option<&'static str> {
        let order: [(&'static str, FlagOf); 4] = [
            ("NO_SQARRAY", |o| &mut o.no_sqarray),
            ("DEFER_TASKRUN", |o| &mut o.defer_taskrun),
            ("SINGLE_ISSUER", |o| &mut o.single_issuer),
            ("COOP_TASKRUN", |o| &mut o.coop_taskrun),
        ];
        for (name, flag) in order {
            let pos = self.recommended.iter().position(|n| n == name);
            if let (Some(i), true) = (pos, *flag(self)) {
                *flag(self) = false;
                self.recommended.remove(i);
                return Some(name);
            }
        }
        None
    }
}

/// What a ring design cannot do.
fn check_design(ring: &RingOpts, threads: u64) -> Result<()> {
    if ring.wait_region && (ring.min_wait_usec == 0 || ring.design != RingDesign::PerThread) {
        return Err(Error::usage(
            "--wait-region",
            "registers the arguments of --min-wait's waits, on a ring set up disabled and enabled by the thread \
             that submits: give --min-wait, with --ring per-thread",
        ));
    }
    if ring.send_zc && ring.design != RingDesign::PerThread {
        return Err(Error::usage(
            "--send-zc",
            "a zero-copy send ends with a second completion (the notification) that only --ring per-thread \
             follows: use --ring per-thread",
        ));
    }
    if ring.send_zc && (ring.vectored || ring.nop_requests || ring.fixed_bufs) {
        return Err(Error::usage(
            "--send-zc",
            "IORING_OP_SEND_ZC is one buffer of the process's per send here (--fixed-bufs would send \
             WRITE_FIXED instead): drop --vectored, --fixed-bufs and --nop-requests",
        ));
    }
    if ring.min_wait_usec > 0 && ring.design == RingDesign::ProducerConsumer {
        return Err(Error::usage(
            "--min-wait",
            "with --ring producer-consumer a consumer thread takes each completion as it comes: use --ring \
             per-thread, shared or shared-submitter",
        ));
    }
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

/// --sq-cpu: a CPU of the machine that runs it (as given, never cut to 32 bits first); another machine
/// checks its own CPUs.
fn check_sq_cpu(cpu: Option<u64>, at: RunsOn) -> Result<Option<u32>> {
    let Some(c) = cpu else { return Ok(None) };
    if at == RunsOn::Elsewhere {
        return Ok(Some(u32::try_from(c).unwrap_or(u32::MAX)));
    }
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as u64;
    if c >= n {
        return Err(Error::usage(
            "--sq-cpu",
            format!(
                "CPU {c} does not exist; this machine has CPUs 0 to {}",
                n - 1
            ),
        ));
    }
    Ok(Some(c as u32))
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
    Ok(())
}

#[cfg(test)]
mod recommended_tests {
    use super::*;

    fn opts(design: RingDesign, sqpoll: bool) -> RingOpts {
        RingOpts {
            design,
            sqpoll,
            ..Default::default()
        }
    }

    #[test]
    fn the_recommended_ring_follows_the_design() {
        let mut o = opts(RingDesign::PerThread, false);
        o.recommend(4);
        assert!(
            o.coop_taskrun
                && o.single_issuer
                && o.defer_taskrun
                && o.no_sqarray
                && o.registered_ring
        );
        assert_eq!(o.recommended.len(), 5);
        let mut o = opts(RingDesign::Shared, false);
        o.recommend(2);
        assert!(o.coop_taskrun && !o.single_issuer && !o.defer_taskrun);
        let mut o = opts(RingDesign::Shared, false);
        o.recommend(1);
        assert!(o.single_issuer && o.defer_taskrun);
        let mut o = opts(RingDesign::ProducerConsumer, false);
        o.recommend(1);
        assert!(o.coop_taskrun && !o.single_issuer && !o.defer_taskrun);
        let mut o = opts(RingDesign::PerThread, true);
        o.recommend(1);
        assert!(!o.coop_taskrun && !o.single_issuer && !o.defer_taskrun && o.no_sqarray);
        // A flag asked for is not counted as recommended, so it is never dropped.
        let mut o = opts(RingDesign::PerThread, false);
        o.coop_taskrun = true;
        o.recommend(1);
        assert!(!o.recommended.contains(&"COOP_TASKRUN".to_string()));
    }

    #[test]
    fn refused_flags_go_newest_first_and_asked_ones_stay() {
        let mut o = opts(RingDesign::PerThread, false);
        o.coop_taskrun = true;
        o.recommend(1);
        let dropped: Vec<&str> = std::iter::from_fn(|| o.drop_recommended_setup()).collect();
        assert_eq!(dropped, ["NO_SQARRAY", "DEFER_TASKRUN", "SINGLE_ISSUER"]);
        assert!(o.coop_taskrun, "asked for, so kept");
        assert!(
            o.registered_ring,
            "not a setup flag: its fallback is at registration"
        );
    }
}
