//! What limited a run, in one line with the figure that decides it: holes (a sparse file's, read as
//! zeros the kernel makes up), the page cache (reads the storage
//! layer never saw), the depth (fewer requests in flight than asked), the CPU (its threads on the CPU
//! or runnable and waiting for one, most of the time), io-wq (requests handed to kernel workers), or else
//! the device (the threads slept: what the device took; "waiting" where no device is behind the target).
//! The rules are tried in that order; each names its figure.

use iolab_engine::result::RunResult;
use iolab_engine::spec::OpKind;
use iolab_engine::target::TargetKind;
use serde::{Deserialize, Serialize};

/// A run's verdict: its kind ("holes", "page-cache", "partly-cached", "depth-limited", "cpu-bound", "punted",
/// "waiting", "undecided", "device-bound")
/// and the sentence with its figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub kind: String,
    pub text: String,
}

/// A buffered read that took less than this share of its bytes from the device was served mostly by the
/// page cache.
const CACHED: f64 = 0.5;
/// A buffered read that took at least this share of its bytes from the device is a device figure; between
/// the two it is partly cached.
pub const FROM_DEVICE: f64 = 0.9;
/// Threads on the CPU for at least this share of the run's wall time are CPU-bound.
const BUSY: f64 = 0.8;
/// Fewer than this share of the requests asked in flight is depth-limited.
const SHALLOW: f64 = 0.8;

fn verdict(kind: &str, text: String) -> Verdict {
    Verdict {
        kind: kind.into(),
        text,
    }
}

/// A run's result as a JSON document, with its verdict as `verdict` ({kind, text}) beside the engine's
/// figures: what a record of the run carries.
pub fn result_value(r: &RunResult) -> iolab_engine::error::Result<serde_json::Value> {
    let mut v = serde_json::to_value(r)
        .map_err(|e| iolab_engine::error::Error::Runtime(format!("result JSON: {e}")))?;
    if let (Some(o), Ok(verdict)) = (v.as_object_mut(), serde_json::to_value(of(r))) {
        o.insert("verdict".into(), verdict);
    }
    iolab_engine::json::positive_zero(&mut v);
    Ok(v)
}

/// The verdict of one run.
pub fn of(r: &RunResult) -> Verdict {
    let s = &r.spec;
    if let Some(v) = holes(r) {
        return v;
    }
    if let Some(v) = page_cache(r) {
        return v;
    }
    if let Some(v) = by_layers(r) {
        return v;
    }
    if let Some(u) = r.uring.as_ref().filter(|_| s.qd > 1) {
        let reached = u.inflight_all_rings(s.threads);
        let asked = f64::from(s.qd * s.threads);
        if reached < SHALLOW * asked {
            return verdict(
                "depth-limited",
                format!(
                    "depth-limited: {reached:.1} requests in flight on average of the {asked:.0} asked \
                     (counted after each submission)"
                ),
            );
        }
    }
    if let Some(t) = iolab_engine::units::cpu_span_too_short(r.wall_s) {
        return short_span(r, &t);
    }
    // The runqueue wait is summed over the process's tasks: shown as at most the rest of the run.
    let busy = cpu_share(r);
    let queued = share(r, r.cpu.runqueue_wait_s.unwrap_or(0.0)).min(1.0 - busy);
    if busy >= BUSY {
        return verdict(
            "cpu-bound",
            format!(
                "CPU-bound: its threads were on a CPU {:.0}% of the run (user and system time over wall \
                 time x threads)",
                busy * 100.0
            ),
        );
    }
    // Runnable but waiting for a CPU (more threads than CPUs, or a loaded machine): still the CPU.
    if busy + queued >= BUSY {
        return verdict(
            "cpu-bound",
            format!(
                "CPU-bound: its threads were on a CPU {:.0}% of the run and waited for one {:.0}% (its tasks' \
                 runqueue waits, at most the rest of the run)",
                busy * 100.0,
                queued * 100.0
            ),
        );
    }
    if let Some(p) = r.derived.punted_fraction.filter(|p| *p >= 0.5) {
        return verdict(
            "punted",
            format!(
                "punted: {:.0}% of its requests were handed to io-wq kernel workers",
                p * 100.0
            ),
        );
    }
    if !matches!(r.target.kind, TargetKind::File | TargetKind::BlockDevice) {
        return verdict(
            "waiting",
            format!(
                "waiting: its threads were on a CPU {:.0}% of the run and waited for one {:.0}%; the rest \
                 they slept (no device behind this target)",
                busy * 100.0,
                queued * 100.0
            ),
        );
    }
    let per_request = request_ns(r);
    if per_request < DEVICE_NS {
        return verdict(
            "undecided",
            format!(
                "undecided: a request took {} on average, quicker than a device answers, yet its threads were \
                 on a CPU only {:.0}% of the run (the machine's load, or steal, took the rest)",
                iolab_engine::units::fmt_ns(per_request),
                busy * 100.0
            ),
        );
    }
    verdict(
        "device-bound",
        format!(
            "device-bound: its threads were on a CPU {:.0}% of the run and waited the rest, for the device \
             (or, buffered, for writeback)",
            busy * 100.0
        ),
    )
}

/// No device answers a request quicker than this: a run whose requests took less on average did not
/// wait for one.
const DEVICE_NS: f64 = 1_000.0;

/// The mean time of a request: its measured latency where ops were timed one by one, else from the run's
/// throughput (the time per op of all threads together, times the threads and the requests each keeps in
/// flight), which overstates it where the threads did not overlap (each a few ops, started one by one).
fn request_ns(r: &RunResult) -> f64 {
    if r.latency.count > 0 && r.latency.mean_ns.is_finite() {
        return r.latency.mean_ns;
    }
    r.ns_per_op * f64::from(r.spec.threads.max(1)) * f64::from(r.spec.qd.max(1))
}

/// A run too short for a share of the CPU (CPU time is counted per tick): CPU-bound where its requests
/// were quicker than a device answers, else undecided.
fn short_span(r: &RunResult, too_short: &str) -> Verdict {
    let per_request = request_ns(r);
    let took = iolab_engine::units::fmt_ns(per_request);
    if per_request < DEVICE_NS {
        return verdict(
            "cpu-bound",
            format!(
                "CPU-bound: a request took {took} on average, quicker than a device answers (the run, {}, \
                 is too short for a share of the CPU)",
                too_short.trim_start_matches("too short: ")
            ),
        );
    }
    verdict(
        "undecided",
        format!(
            "undecided: the run is {too_short} for a share of the CPU, which decides between the CPU and \
             the device; a request took {took} on average (run it for a second or more)"
        ),
    )
}

/// A read of a file at least half of whose region is holes: the kernel made most of what was read up
/// as zeros, from neither the device nor the page cache (an O_DIRECT read of holes makes no request).
fn holes(r: &RunResult) -> Option<Verdict> {
    let sp = r.target.sparse.filter(|sp| sp.share() >= CACHED)?;
    Some(verdict(
        "holes",
        format!(
            "holes: {} of the {} region read are holes of a sparse file, zeros the kernel makes up without the \
             device (write the file first)",
            iolab_engine::units::pct1(sp.share()),
            iolab_engine::units::fmt_size(sp.bytes)
        ),
    ))
}

/// A buffered read most of whose bytes did not come from the device: page-cache bound. The device's
/// own count (`device_io`, the disk's sectors read over the span) decides where there is one; else the
/// process's storage reads (/proc/self/io read_bytes: this process's system calls and mmap faults, not an
/// offload client's, and nothing without CONFIG_TASK_IO_ACCOUNTING).
fn page_cache(r: &RunResult) -> Option<Verdict> {
    let s = &r.spec;
    let stored = matches!(r.target.kind, TargetKind::File | TargetKind::BlockDevice);
    if s.op != OpKind::Read || s.direct || r.bytes == 0 || !stored {
        return None;
    }
    let (from_device, whose) = match (&r.device_io, &r.syscalls.kernel_rw) {
        (Some(d), _) => (d.read_bytes, "the device (its own count)"),
        (None, Some(io)) => (io.read_bytes, "the storage layer (/proc/self/io)"),
        (None, None) => return None,
    };
    let share = from_device as f64 / r.bytes as f64;
    let pc = share * 100.0;
    if share < CACHED {
        return Some(verdict(
            "page-cache",
            format!("page-cache bound: {pc:.1}% of the bytes read came from {whose}, the rest from memory"),
        ));
    }
    (share < FROM_DEVICE).then(|| {
        verdict(
            "partly-cached",
            format!(
                "partly cached: {pc:.1}% of the bytes read came from {whose}, the rest from memory (neither a \
                 device figure nor the page cache's)"
            ),
        )
    })
}

/// Device time at least this share of an op's time (`--layers`) is device-bound.
const ON_DEVICE: f64 = 0.5;

/// With `--layers`, what the block layer's timestamps decide: reads no request served (page cache),
/// or ops most of whose time the device took.
fn by_layers(r: &RunResult) -> Option<Verdict> {
    let l = r.layers.as_ref().filter(|l| l.ops > 0)?;
    if r.spec.op == OpKind::Read && l.ops_without_request == l.ops {
        return Some(verdict(
            "page-cache",
            format!(
                "page-cache bound: none of the {} traced reads made a block request (no device time)",
                l.ops
            ),
        ));
    }
    let share = l.device_ns / l.pass_mean_ns;
    (l.pass_mean_ns > 0.0 && share >= ON_DEVICE).then(|| {
        verdict(
            "device-bound",
            format!(
                "device-bound: the device took {:.0}% of an op's time ({} of {}, block layer's timestamps)",
                share * 100.0,
                iolab_engine::units::fmt_ns(l.device_ns),
                iolab_engine::units::fmt_ns(l.pass_mean_ns)
            ),
        )
    })
}

/// The process's CPU time over the run's wall time times its worker threads (at most 1).
fn cpu_share(r: &RunResult) -> f64 {
    share(r, r.cpu.process.user_s + r.cpu.process.sys_s)
}

/// `s` seconds over the run's wall time times its worker threads (at most 1).
fn share(r: &RunResult, s: f64) -> f64 {
    let room = r.wall_s * f64::from(r.spec.threads.max(1));
    if room > 0.0 {
        (s / room).min(1.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_engine::spec::RawSpec;

    fn run(pairs: &[(&str, &str)]) -> RunResult {
        let mut raw = RawSpec::new().with("ops", 2000u64).with("count", "none");
        for (k, v) in pairs {
            raw = raw.with(k, *v);
        }
        let clock = iolab_engine::measure::clock::calibrate(1);
        crate::run::run(&raw.resolve().unwrap(), &clock).unwrap()
    }

    #[test]
    fn steal_is_a_share_of_the_cpus_it_was_summed_over_and_whole_ticks() {
        let mut r = run(&[("target", "/dev/null"), ("ops", "2000")]);
        // The run records how many CPUs its workers' steal was summed over: its one worker's.
        assert_eq!(
            r.cpu.steal_worker_cpus,
            r.cpu.steal_worker_cpus_s.map(|_| 1)
        );
        r.wall_s = 1.0;
        r.host.cpus_online = 2;
        // Over all CPUs: 0.6 s of two CPUs' second.
        (r.cpu.steal_all_cpus_s, r.cpu.steal_worker_cpus_s) = (0.6, None);
        assert_eq!(crate::findings::facts::steal_share(&r), Some(0.3));
        // Over the one worker's CPU.
        (r.cpu.steal_worker_cpus_s, r.cpu.steal_worker_cpus) = (Some(0.6), Some(1));
        assert_eq!(crate::findings::facts::steal_share(&r), Some(0.6));
        // Over the two CPUs an offload run's client and server were pinned to (one thread in its spec).
        r.cpu.steal_worker_cpus = Some(2);
        assert_eq!(crate::findings::facts::steal_share(&r), Some(0.3));
        // A record from before the count was kept: one CPU per thread.
        r.cpu.steal_worker_cpus = None;
        assert_eq!(crate::findings::facts::steal_share(&r), Some(0.6));
        // One 10 ms tick over a 14 ms run is rounding, not a 71% steal.
        (r.wall_s, r.cpu.steal_worker_cpus_s) = (0.014, Some(0.01));
        assert_eq!(crate::findings::facts::steal_share(&r), None);
        // Two ticks over a 3 ms run of eight threads (a --quick run once said "stole 692%").
        (r.wall_s, r.spec.threads, r.cpu.steal_worker_cpus_s) = (0.003, 8, Some(0.02));
        assert_eq!(crate::findings::facts::steal_share(&r), None);
        // Steal is read at the snapshots: over the span between them, and never more than all of it.
        (r.spec.threads, r.cpu.steal_worker_cpus) = (1, Some(1));
        (r.wall_s, r.cpu.sampled_span_s, r.cpu.steal_worker_cpus_s) = (0.1, Some(0.4), Some(0.2));
        assert_eq!(crate::findings::facts::steal_share(&r), Some(0.5));
        r.cpu.steal_worker_cpus_s = Some(0.8);
        assert_eq!(crate::findings::facts::steal_share(&r), Some(1.0));
    }

    /// A read of a sparse file: its holes counted as the kernel reports them (SEEK_HOLE), the verdict
    /// "holes" where they are at least half of the region, and the finding with their share either way.
    #[test]
    fn a_sparse_file_read_is_limited_by_its_holes() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.dat");
        let file = std::fs::File::create(&f).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, &[7u8; 64 << 10], 0).unwrap();
        file.set_len(1 << 20).unwrap();
        let f = f.to_str().unwrap();
        let r = run(&[("target", f), ("op", "read"), ("ops", "256")]);
        let sp = r.target.sparse.expect("holes counted");
        assert_eq!((sp.holes, sp.bytes), ((1 << 20) - (64 << 10), 1 << 20));
        let v = of(&r);
        assert_eq!(v.kind, "holes", "{v:?}");
        assert!(
            v.text
                .starts_with("holes: 93.8% of the 1 MiB region read are holes"),
            "{v:?}"
        );
        assert!(
            r.findings.iter().any(|x| x.rule == "sparse_read"),
            "{:?}",
            r.findings
        );
        // Sequential reads of the written first 64 KiB only: no hole among what they read.
        let r = run(&[("target", f), ("op", "read"), ("ops", "16")]);
        assert_eq!(r.target.sparse, None);
        assert!(!r.findings.iter().any(|x| x.rule == "sparse_read"));
        // Written but for a quarter: the finding says so; what limited the run is decided as ever.
        std::os::unix::fs::FileExt::write_all_at(&file, &vec![7u8; 3 << 18], 0).unwrap();
        let r = run(&[("target", f), ("op", "read"), ("ops", "256")]);
        assert_eq!(r.target.sparse.map(|s| s.holes), Some(1 << 18));
        assert_ne!(of(&r).kind, "holes");
        assert!(r.findings.iter().any(|x| x.rule == "sparse_read"));
    }

    #[test]
    fn each_rule_names_its_figure() {
        // A buffered read of a file iolab just wrote: every byte from the page cache.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("r.dat");
        let f = f.to_str().unwrap();
        let cached = run(&[
            ("target", f),
            ("op", "read"),
            ("pattern", "rand"),
            ("file-size", "1m"),
        ]);
        let v = of(&cached);
        assert_eq!(v.kind, "page-cache", "{v:?}");
        assert!(
            v.text.contains("% of the bytes read came from the "),
            "{v:?}"
        );
        // The device's own count decides where there is one: most bytes from it is no page-cache row,
        // less than half is.
        let mut cold = cached.clone();
        cold.device_io = Some(iolab_engine::measure::device_io::DeviceIo {
            read_bytes: cold.bytes,
            ..Default::default()
        });
        assert_ne!(of(&cold).kind, "page-cache", "{:?}", of(&cold));
        cold.device_io.as_mut().unwrap().read_bytes = cold.bytes * 2 / 5;
        let v = of(&cold);
        assert!(
            v.text
                .contains("40.0% of the bytes read came from the device"),
            "{v:?}"
        );
        // Writes to /dev/null: the CPU does all of it, though on a loaded machine a share of the wall time
        // is in neither the process's CPU time nor its runqueue wait (steal under the 5 ticks counted, the
        // wake-ups between slices), and the run then reads as waiting: never as the device's or the
        // page cache's. With every moment on a CPU, the verdict is the CPU's.
        let mut null = run(&[("target", "/dev/null"), ("ops", "200000")]);
        let v = of(&null);
        assert!(["cpu-bound", "waiting"].contains(&v.kind.as_str()), "{v:?}");
        null.cpu.process.user_s = null.wall_s * f64::from(null.spec.threads);
        assert_eq!(of(&null).kind, "cpu-bound", "{:?}", of(&null));
        // Made-up figures for the others.
        let mut r = cached.clone();
        // A second's run of 50 µs requests.
        (r.wall_s, r.ns_per_op) = (1.0, 50_000.0);
        // The requests' time from the throughput alone (none timed one by one).
        r.latency = Default::default();
        r.spec.op = OpKind::Write;
        r.cpu.process.user_s = 0.0;
        r.cpu.process.sys_s = 0.0;
        r.cpu.runqueue_wait_s = Some(0.0);
        assert_eq!(of(&r).kind, "device-bound");
        // Runnable but waiting for a CPU most of the run is the CPU's doing too.
        let mut queued = r.clone();
        queued.cpu.runqueue_wait_s = Some(queued.wall_s * f64::from(queued.spec.threads));
        assert!(
            of(&queued).text.contains("waited for one"),
            "{:?}",
            of(&queued)
        );
        // Requests quicker than a device answers, with the threads mostly off the CPU: not the device's.
        let mut quick = r.clone();
        quick.ns_per_op = 268.0;
        assert_eq!(of(&quick).kind, "undecided", "{:?}", of(&quick));
        // Over a span too short for a CPU share: the CPU's where requests are that quick, else undecided.
        quick.wall_s = 0.002;
        assert!(
            of(&quick)
                .text
                .starts_with("CPU-bound: a request took 268.0 ns"),
            "{:?}",
            of(&quick)
        );
        // Measured latency is the request's time: 16 threads of one op each, started one by one, took
        // 1 µs a request though the span per op, times 16 threads, is 60 µs.
        let mut few = quick.clone();
        (few.ns_per_op, few.spec.threads) = (3_800.0, 16);
        (few.latency.count, few.latency.mean_ns) = (16, 268.0);
        assert!(
            of(&few)
                .text
                .starts_with("CPU-bound: a request took 268.0 ns"),
            "{:?}",
            of(&few)
        );
        quick.ns_per_op = 50_000.0;
        assert!(
            of(&quick)
                .text
                .starts_with("undecided: the run is too short: 2"),
            "{:?}",
            of(&quick)
        );
        // The runqueue waits of several tasks never make the run more than whole.
        queued.cpu.process.user_s = 0.3;
        assert!(
            of(&queued)
                .text
                .contains("a CPU 30% of the run and waited for one 70%"),
            "{:?}",
            of(&queued)
        );
        r.derived.punted_fraction = Some(1.0);
        assert!(of(&r).text.starts_with("punted: 100%"), "{:?}", of(&r));
        r.spec.qd = 32;
        r.uring = Some(iolab_engine::result::UringFigures {
            mean_inflight: 3.0,
            mean_inflight_all_rings: Some(3.0),
            ..Default::default()
        });
        assert!(
            of(&r)
                .text
                .starts_with("depth-limited: 3.0 requests in flight on average of the 32"),
            "{:?}",
            of(&r)
        );
    }
}
