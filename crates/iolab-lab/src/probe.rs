//! `iolab probe`: every method and option, available or not, with the reason found by actually trying.
//!
//! Each method and io_uring option is tried with a tiny real run through the same runner that `iolab run`
//! uses, so a refusal here is word for word the error such a run fails with at start. Machine facts that
//! decide what works (the io_uring sysctl, O_DIRECT per filesystem, RLIMIT_MEMLOCK, perf counter access,
//! tracefs, the TSC) are read or tried directly.

use iolab_engine::error::{Error, Result};
use iolab_engine::measure::clock::ClockInfo;
use iolab_engine::measure::counters::{CounterSet, Family};
use iolab_engine::method::Fit;
use iolab_engine::method::{io_uring::INFO as URING, psync, pv2, sync, uring_cmd};
use iolab_engine::spec::{MethodKind, RawSpec};
use iolab_sys as sys;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProbeRow {
    /// What was tried ("method io_uring", "io_uring --sqpoll", "O_DIRECT on tmpfs" ...).
    pub name: String,
    pub available: bool,
    /// The figure that showed it works, or the reason it does not.
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeResult {
    pub host: iolab_engine::result::Host,
    /// Where the file tries ran, and their filesystems.
    pub dirs: Vec<(String, String)>,
    pub rows: Vec<ProbeRow>,
    /// Every method of the registry, in its order, with the targets it is made for: the list a script
    /// (or a test) iterates, never one kept by hand. Absent in results of versions before it.
    #[serde(default)]
    pub methods: Vec<MethodEntry>,
}

/// One method of the registry as `probe --json` lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MethodEntry {
    /// The `--method` word.
    pub name: String,
    /// "sync" (each op completes in its call), "queued" (--qd, --batch) or "out_of_process" (a client
    /// process of its own, timed from outside).
    pub exec: String,
    /// Takes a regular file as its target.
    pub files: bool,
    /// Takes a pipe or a socket as its target.
    pub streams: bool,
}

impl MethodEntry {
    /// Every method of the registry.
    pub fn all() -> Vec<MethodEntry> {
        use iolab_engine::method::{Exec, Fit};
        iolab_engine::method::MethodKind::all()
            .map(|m| {
                let info = m.info();
                MethodEntry {
                    name: info.name.to_string(),
                    exec: match info.exec {
                        Exec::Sync => "sync",
                        Exec::Queued => "queued",
                        Exec::OutOfProcess => "out_of_process",
                    }
                    .to_string(),
                    files: info.targets.file == Fit::Yes,
                    streams: info.targets.stream == Fit::Yes,
                }
            })
            .collect()
    }
}

fn attempt(
    name: &str,
    pairs: &[(&str, &str)],
    target: &Path,
    clock: &ClockInfo,
) -> Result<ProbeRow> {
    attempt_told(name, pairs, target, clock, |_| String::new())
}

/// [`attempt`], with `told` adding what the run's record says beyond its speed (the opcode that ran).
fn attempt_told(
    name: &str,
    pairs: &[(&str, &str)],
    target: &Path,
    clock: &ClockInfo,
    told: impl Fn(&iolab_engine::result::RunResult) -> String,
) -> Result<ProbeRow> {
    let mut raw = RawSpec::new()
        .with("target", target.display().to_string())
        .with("ops", 16u64)
        .with("count", "none")
        .with("file-size", "256k");
    for (k, v) in pairs {
        raw.set(k, *v)
            .map_err(|m| Error::Runtime(format!("probe spec for {name}: {m}")))?;
    }
    let row = match raw.resolve().and_then(|s| crate::run::run(&s, clock)) {
        Ok(r) if r.ops == 16 => ProbeRow {
            name: name.into(),
            available: true,
            detail: format!("ok: 16 ops, {:.1} µs per op{}", r.ns_per_op / 1e3, told(&r)),
        },
        Ok(r) => ProbeRow {
            name: name.into(),
            available: false,
            detail: format!("only {} of 16 ops completed", r.ops),
        },
        Err(e) => ProbeRow {
            name: name.into(),
            available: false,
            detail: e.to_string(),
        },
    };
    Ok(row)
}

/// The clock: the counter iolab reads, or why it fell back to another.
fn clock_row(clock: &ClockInfo) -> ProbeRow {
    ProbeRow {
        name: if cfg!(target_arch = "x86_64") {
            "clock: invariant TSC".into()
        } else {
            format!("clock: {}", iolab_engine::measure::clock::counter_name())
        },
        available: clock.fallback_reason.is_none(),
        detail: match &clock.fallback_reason {
            None => format!(
                "{}; {:.1} ns per read",
                clock.description, clock.overhead_ns
            ),
            Some(r) => format!(
                "{r}; using {} ({:.1} ns per read)",
                clock.description, clock.overhead_ns
            ),
        },
    }
}

/// Runs every try. `tmpfs` and `disk` are directories iolab may create files in (removed again).
pub fn probe(tmpfs: &Path, disk: &Path, clock: &ClockInfo) -> Result<ProbeResult> {
    let mut rows = Vec::new();
    let fs = |d: &Path| {
        sys::fs_type_name(d)
            .unwrap_or("unknown filesystem")
            .to_string()
    };
    let dirs = vec![
        (tmpfs.display().to_string(), fs(tmpfs)),
        (disk.display().to_string(), fs(disk)),
    ];
    let mut n = 0;
    let mut file = |d: &Path| {
        n += 1;
        d.join(format!("iolab-probe-{}-{n}.dat", std::process::id()))
    };

    rows.push(clock_row(clock));

    // Every method, on a file on the disk filesystem (and /dev/null for the ones that take it).
    for m in MethodKind::all() {
        // A method made for streams only (epoll) is tried on a pipe.
        let (t, label) = if !m.info().targets.file.ok() && m.info().targets.stream.ok() {
            (
                PathBuf::from("pipe"),
                format!("method {} (on a pipe)", m.name()),
            )
        } else if !m.info().targets.file.ok() && m.info().targets.sink.ok() {
            // A method made for iolab's sink driver (uring_cmd) is tried on it: absent, it says why.
            let dev = iolab_engine::sink_device::DEVICE;
            (
                PathBuf::from(dev),
                format!("method {} (on {dev})", m.name()),
            )
        } else {
            (file(disk), format!("method {}", m.name()))
        };
        rows.push(attempt(&label, &[("method", m.name())], &t, clock)?);
    }
    // Stream targets, with a peer thread at the far end.
    for (t, label) in [
        ("pipe", "target pipe"),
        ("socketpair", "target socketpair (AF_UNIX)"),
        ("tcp", "target tcp (127.0.0.1)"),
    ] {
        rows.push(attempt(
            label,
            &[("method", sync::INFO.name)],
            Path::new(t),
            clock,
        )?);
        rows.push(attempt(
            &format!("{label}, io_uring"),
            &[("method", URING.name)],
            Path::new(t),
            clock,
        )?);
    }
    // The three ring designs, with two threads.
    for d in ["shared", "shared-submitter"] {
        let t = file(disk);
        rows.push(attempt(
            &format!("io_uring --ring {d} (2 threads)"),
            &[("method", URING.name), ("ring", d), ("threads", "2")],
            &t,
            clock,
        )?);
    }
    // The methods /dev/null refuses, to show the refusal.
    let refused = MethodKind::all().filter(|m| matches!(m.info().targets.dev_null, Fit::No(_)));
    for m in refused {
        rows.push(attempt(
            &format!("method {} on /dev/null", m.name()),
            &[("method", m.name())],
            Path::new("/dev/null"),
            clock,
        )?);
    }

    // RWF_NOWAIT: can this kernel and filesystem tell a write that would block?
    let t = file(disk);
    rows.push(attempt(
        "pv2 --rw-flags nowait (pwritev2 RWF_NOWAIT)",
        &[("method", pv2::INFO.name), ("rw-flags", "nowait")],
        &t,
        clock,
    )?);

    // O_DIRECT per filesystem.
    for (label, d) in [("tmpfs dir", tmpfs), ("disk dir", disk)] {
        let t = file(d);
        rows.push(attempt(
            &format!("O_DIRECT on {} ({})", label, fs(d)),
            &[("method", psync::INFO.name), ("direct", "true")],
            &t,
            clock,
        )?);
    }

    // io_uring options, one at a time.
    let uring: &[(&str, &[(&str, &str)])] = &[
        ("io_uring --sqpoll", &[("sqpoll", "true")]),
        ("io_uring --fixed-files", &[("fixed-files", "true")]),
        ("io_uring --fixed-bufs", &[("fixed-bufs", "true")]),
        ("io_uring --coop-taskrun", &[("coop-taskrun", "true")]),
        (
            "io_uring --single-issuer --defer-taskrun",
            &[("single-issuer", "true"), ("defer-taskrun", "true")],
        ),
        ("io_uring --registered-ring", &[("registered-ring", "true")]),
        ("io_uring --vectored", &[("vectored", "true")]),
        ("io_uring --nop-requests", &[("nop-requests", "true")]),
        (
            "io_uring --iopoll write (O_DIRECT)",
            &[("iopoll", "true"), ("direct", "true")],
        ),
        (
            "io_uring --iopoll read (O_DIRECT)",
            &[("iopoll", "true"), ("direct", "true"), ("op", "read")],
        ),
    ];
    for (name, opts) in uring {
        let mut pairs = vec![("method", URING.name)];
        pairs.extend_from_slice(opts);
        let t = file(disk);
        rows.push(attempt(name, &pairs, &t, clock)?);
    }
    rows.extend(recent_rows(&mut file, disk, clock)?);
    // The rows methods declare for options of their own.
    for p in iolab_engine::spec::method_opts::PROBES {
        rows.push(attempt(p.name, p.spec, &file(disk), clock)?);
    }
    rows.extend(limit_rows());
    rows.extend(counter_rows());
    Ok(ProbeResult {
        host: iolab_engine::result::Host::current(),
        dirs,
        rows,
        methods: MethodEntry::all(),
    })
}

/// The interfaces of recent kernels, each tried with the kernel version that brought it: uncached buffered
/// I/O (RWF_DONTCACHE) through pwritev2 and io_uring, the vectored fixed-buffer opcodes (with the opcode
/// that ran: an older kernel runs WRITEV), and the minimum wait time of io_uring_enter.
fn recent_rows(
    file: &mut impl FnMut(&Path) -> PathBuf,
    disk: &Path,
    clock: &ClockInfo,
) -> Result<Vec<ProbeRow>> {
    let opcode = |r: &iolab_engine::result::RunResult| {
        r.uring
            .as_ref()
            .map(|u| format!(", opcode {}", u.opcode))
            .unwrap_or_default()
    };
    let tries: [(&str, &[(&str, &str)]); 6] = [
        (
            "pv2 --rw-flags dontcache (RWF_DONTCACHE, 6.14+)",
            &[("method", pv2::INFO.name), ("rw-flags", "dontcache")],
        ),
        (
            "io_uring --rw-flags dontcache (6.14+)",
            &[("method", URING.name), ("rw-flags", "dontcache")],
        ),
        (
            "io_uring --vectored --fixed-bufs (WRITEV_FIXED, 6.15+)",
            &[
                ("method", URING.name),
                ("vectored", "true"),
                ("fixed-bufs", "true"),
            ],
        ),
        (
            "io_uring --min-wait (min_wait_usec, 6.12+)",
            &[
                ("method", URING.name),
                ("min-wait", "50"),
                ("qd", "4"),
                ("batch", "4"),
            ],
        ),
        (
            "--memory-limit (a memory cgroup of the run's own)",
            &[("method", pv2::INFO.name), ("memory-limit", "64m")],
        ),
        (
            "io_uring --min-wait --wait-region (6.13+)",
            &[
                ("method", URING.name),
                ("min-wait", "50"),
                ("wait-region", "true"),
                ("qd", "4"),
                ("batch", "4"),
            ],
        ),
    ];
    let mut rows = Vec::new();
    rows.push(attempt_told(
        "io_uring --send-zc on tcp (SEND_ZC, 6.0+)",
        &[("method", URING.name), ("send-zc", "true")],
        Path::new("tcp"),
        clock,
        |r| {
            r.uring
                .as_ref()
                .map(|u| {
                    format!(
                        ", {} of {} sends copied anyway (loopback copies)",
                        u.zc_copied, u.zc_notifs
                    )
                })
                .unwrap_or_default()
        },
    )?);
    rows.push(passthrough_row(clock)?);
    for (name, pairs) in tries {
        let t = file(disk);
        let row = if name.contains("WRITEV_FIXED") {
            attempt_told(name, pairs, &t, clock, opcode)?
        } else {
            attempt(name, pairs, &t, clock)?
        };
        rows.push(row);
    }
    Ok(rows)
}

/// NVMe passthrough: 16 reads as NVMe commands on the first NVMe generic device (reads only: nothing is
/// written), or why there is none.
fn passthrough_row(clock: &ClockInfo) -> Result<ProbeRow> {
    let name = "uring_cmd NVMe passthrough on /dev/ngXnY (5.19+; polled 6.1+)";
    let mut found: Vec<PathBuf> = std::fs::read_dir("/dev")
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        std::fs::metadata(p).is_ok_and(|m| {
            m.file_type().is_char_device()
                && iolab_engine::target::nvme::generic_block(m.rdev()).is_some()
        })
    });
    found.sort();
    match found.first() {
        Some(dev) => attempt(
            &name.replace("/dev/ngXnY", &dev.display().to_string()),
            &[("method", uring_cmd::INFO.name), ("op", "read")],
            dev,
            clock,
        ),
        None => Ok(ProbeRow {
            name: name.into(),
            available: false,
            detail: "no NVMe generic device on this machine (no NVMe disk); the guest of `iolab vm` has \
                     /dev/ng0n1"
                .into(),
        }),
    }
}

/// The sysctl and rlimit that decide who may use io_uring and how much it may register.
fn limit_rows() -> Vec<ProbeRow> {
    let mut rows = Vec::new();
    let disabled =
        std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").map(|s| s.trim().to_string());
    rows.push(ProbeRow {
        name: "sysctl kernel.io_uring_disabled".into(),
        available: disabled.as_deref().map(|v| v == "0").unwrap_or(true),
        detail: match disabled {
            Ok(v) => format!(
                "{v} (0: io_uring for everyone, 1: only for the io_uring_group, 2: for nobody)"
            ),
            Err(_) => "not present on this kernel".into(),
        },
    });
    rows.push(ProbeRow {
        name: "RLIMIT_MEMLOCK (registered buffers)".into(),
        available: true,
        detail: match (sys::memlock_limit(), sys::geteuid() == 0) {
            (_, true) => "running as root: registered buffers are not limited".into(),
            (Some(l), false) => format!(
                "{}: --fixed-bufs needs --qd x --bs below it",
                iolab_engine::units::fmt_size(l)
            ),
            (None, false) => "unlimited".into(),
        },
    });
    rows
}

/// Every perf counter and tracepoint iolab counts: opened, or why not.
fn counter_rows() -> Vec<ProbeRow> {
    let mut rows = Vec::new();
    // Kernel counters.
    let mut set = CounterSet::default();
    set.add_software_and_hardware();
    set.add_tracepoints(None, true);
    let opened: Vec<_> = set.deltas(&Default::default(), &Default::default());
    for family in [Family::Software, Family::Hardware, Family::Tracepoint] {
        for c in opened.iter().filter(|c| c.family == family) {
            rows.push(ProbeRow {
                name: format!("perf counter {}", c.name),
                available: c.unavailable.is_none(),
                detail: c.unavailable.clone().unwrap_or_else(|| "opened".into()),
            });
        }
    }
    for n in set.notes.iter().filter(|n| !n.contains("breakdown off")) {
        rows.push(ProbeRow {
            name: "tracefs".into(),
            available: !n.contains("unavailable"),
            detail: n.clone(),
        });
    }
    rows.extend(profile_rows());
    rows
}

/// `--profile`: does sampling with call chains work (50 ms of stat(2) calls on this thread, sampled), and
/// do the sampled kernel addresses get names?
fn profile_rows() -> Vec<ProbeRow> {
    let hz = iolab_engine::spec::DEFAULT_PROFILE_HZ;
    let (sampling, symbols) = match iolab_engine::measure::profile::Sampler::open(hz) {
        Err(why) => (
            ProbeRow {
                name: "profile: sampling with call chains (--profile)".into(),
                available: false,
                detail: why.clone(),
            },
            (false, format!("not tried: {why}")),
        ),
        Ok(s) => {
            s.start();
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_millis(50) {
                let _ = std::fs::metadata("/");
            }
            s.stop();
            let p = s.finish("separate");
            let kernel = p.top_self.iter().any(|f| f.kernel);
            let named = p
                .top_self
                .iter()
                .any(|f| f.kernel && !f.name.starts_with('['));
            let frames = if kernel { "kernel and user" } else { "user" };
            (
                ProbeRow {
                    name: "profile: sampling with call chains (--profile)".into(),
                    available: p.samples > 0,
                    detail: format!(
                        "{} at {hz} Hz: {} samples in 50 ms of stat(2) calls, {frames} call chains",
                        p.event, p.samples
                    ),
                },
                match (kernel, named) {
                    (true, true) => (true, "kernel functions named from /proc/kallsyms".into()),
                    _ => (
                        false,
                        p.unsymbolized.first().cloned().unwrap_or_else(|| {
                            p.notes
                                .first()
                                .cloned()
                                .unwrap_or_else(|| "no kernel samples".into())
                        }),
                    ),
                },
            )
        }
    };
    vec![
        sampling,
        ProbeRow {
            name: "profile: kernel symbols".into(),
            available: symbols.0,
            detail: symbols.1,
        },
    ]
}
